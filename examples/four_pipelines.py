"""BM25, SPLADE, ColBERT and dense retrieval on the bundled Cranfield collection, in one pt.Experiment with
FD@1, FD@10, FD(urr=True)@10, nDCG@10, RR@10 and mean response time.

    python examples/four_pipelines.py [--splade-model PATH] [--colbert-model PATH] [--dense-model NAME_OR_PATH]
                                      [--colbert-first-stage] [--work-dir DIR]

Each pipeline uses its real library: pyterrier-pisa (BM25), pyterrier-splade + PISA (SPLADE),
pyterrier_frechet.pipelines.late_interaction (ColBERT MaxSim, re-ranking BM25's top 100, or exhaustive with
--colbert-first-stage), pyterrier-dr (dense, all-MiniLM-L6-v2 by default, which ships with the package).
SPLADE and ColBERT default to their usual hub checkpoints (naver/splade-cocondenser-ensembledistil,
colbert-ir/colbertv2.0). Where those cannot be downloaded (as on machines without hub access) and no
local path is given, a tiny *randomly initialised* stand-in is built instead, with a warning, and its
row is labelled so: the table then shows the plumbing, not SPLADE's or ColBERT's effectiveness.
"""
import argparse
import logging
from pathlib import Path

import pyterrier as pt
from ir_measures import RR, nDCG

import pyterrier_frechet as pf
from pyterrier_frechet import FD, pipelines, tiny
from pyterrier_frechet.vectors.cache import default_cache_root
from pyterrier_frechet.pipelines.late_interaction import DEFAULT_COLBERT

logger = logging.getLogger('four_pipelines')


def _with_fallback(build, model, label, make_tiny, tiny_dir):
    try:
        return build(model), label
    except ValueError as ex:  # the checkpoint could not be loaded (e.g. no hub access)
        logger.warning('%s: %s -- using a tiny randomly initialised stand-in; pass a local checkpoint path', label, ex)
        return build(make_tiny(tiny_dir)), f'{label} (tiny random stand-in)'


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--splade-model', default=pipelines.DEFAULT_SPLADE)
    parser.add_argument('--colbert-model', default=DEFAULT_COLBERT)
    parser.add_argument('--dense-model', default=None, help='default all-MiniLM-L6-v2 (also the FD encoder)')
    parser.add_argument('--colbert-first-stage', action='store_true', help='exhaustive ColBERT retrieval instead of re-ranking BM25')
    parser.add_argument('--work-dir', default=str(default_cache_root()))
    args = parser.parse_args()
    logging.basicConfig(level=logging.WARNING, format='%(levelname)s %(name)s: %(message)s')

    work = Path(args.work_dir)
    collection = pf.bundled.cranfield()
    embedder = pf.Embedder(args.dense_model, texts=collection.texts, empty_text='embed', cache_dir=work / 'embeddings')
    pf.set_default_encoder(embedder)  # FD@10 below embeds with it; each document once, ever

    bm25 = pipelines.bm25(collection, work / 'demo')
    splade, splade_name = _with_fallback(lambda m: pipelines.splade(collection, work / 'demo', m), args.splade_model,
                                         'SPLADE', tiny.tiny_masked_lm, work / 'tiny' / 'splade')
    first_stage = None if args.colbert_first_stage else bm25
    colbert, colbert_name = _with_fallback(lambda m: pipelines.colbert(collection, m, first_stage=first_stage), args.colbert_model,
                                           'ColBERT' if first_stage is None else 'BM25 >> ColBERT', tiny.tiny_colbert, work / 'tiny' / 'colbert')
    dense = pipelines.dense(collection, embedder, work / 'demo')

    table = pt.Experiment([bm25, splade, colbert, dense], collection.topics, collection.qrels,
                          eval_metrics=[FD @ 1, FD @ 10, FD(urr=True) @ 10, nDCG @ 10, RR @ 10, 'mrt'],
                          names=['BM25', splade_name, colbert_name, f'Dense ({embedder.name})'])
    print(table.to_string(index=False, float_format=lambda v: f'{v:.4g}'))
    print(f'\nFD: lower is better. FD encoder: {embedder!r}; documents it encoded in this run: {embedder.n_encoded}')


if __name__ == '__main__':
    main()
