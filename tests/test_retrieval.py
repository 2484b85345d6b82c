"""The retrieval pipelines (pipelines/retrieval.py) end to end with tiny local models: SPLADE against the exact
sparse dot product, and BM25, SPLADE, ColBERT and dense in one pt.Experiment."""
import numpy as np
import pytest
import pyterrier as pt

import pyterrier_frechet as pf
from pyterrier_frechet import pipelines


def test_splade_pipeline_retrieves_by_sparse_dot_product(tiny, collection, tmp_path):
    import pyterrier_splade
    retriever = pipelines.splade(collection, tmp_path, tiny['splade'], num_results=40)
    res = retriever(collection.topics)
    assert set(res.qid) == {'1', '2', '3'}
    enc = pyterrier_splade.Splade(tiny['splade'])
    docs = list(collection.texts)
    d_reps = enc.encode([collection.texts[d] for d in docs], 'd', format='np')
    for qid, query in collection.topics.itertuples(index=False):
        q_rep = enc.encode([query], 'q', format='np')[0]
        exact = np.array([float(q_rep @ d) for d in d_reps])
        top = res[res.qid == qid].sort_values('rank').docno.iloc[0]
        # PISA scores quantized impacts: its top document is (near) the exact dot-product maximum
        assert exact[docs.index(top)] >= exact.max() * 0.95
    assert pipelines.splade(collection, tmp_path, tiny['splade'])(collection.topics).equals(
        pipelines.splade(collection, tmp_path, tiny['splade'])(collection.topics))  # index reused, same results


def test_four_pipelines_in_one_experiment(tiny, collection, tmp_path):
    embedder = pf.Embedder(tiny['dense'], texts=collection.texts, cache_dir=tmp_path / 'emb', verbose=False)
    bm25 = pipelines.bm25(collection, tmp_path)
    systems = [bm25,
               pipelines.splade(collection, tmp_path, tiny['splade']),
               pipelines.colbert(collection, tiny['colbert'], first_stage=bm25),
               pipelines.dense(collection, embedder, tmp_path)]
    assert embedder.n_encoded == 40
    # FD's encoder is the dense pipeline's own model: said once (not once per system or measure)
    with pytest.warns(UserWarning, match=r'its encoder \(tiny-dense\) is the model pipelines.dense retrieve\(s\) with') as caught:
        table = pt.Experiment(systems, collection.topics, collection.qrels,
                              eval_metrics=[pf.FD(encoder=embedder) @ 5, pf.FD(encoder=embedder, urr=True) @ 5,
                                            'ndcg_cut_10', 'mrt'],
                              names=['BM25', 'SPLADE', 'ColBERT', 'Dense'])
    assert sum('is the model pipelines.dense' in str(w.message) for w in caught) == 1
    fd = table[str(pf.FD(encoder=embedder) @ 5)]
    assert len(table) == 4 and np.isfinite(fd).all() and (fd >= 0).all()
    assert embedder.n_encoded == 40  # FD reused the vectors the dense index was built from
