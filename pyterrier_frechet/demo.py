"""The main job: BM25 (pyterrier-pisa) and dense MiniLM retrieval (pyterrier-dr) on the bundled Cranfield
collection, scored with FD@1, FD@10, FD(urr=True)@10, nDCG@10, RR@10 and mrt in one ``pt.Experiment``."""
import contextlib
import logging
import os
import sys
from pathlib import Path
from typing import NamedTuple, Optional

import pandas as pd
import pyterrier as pt
from ir_measures import RR, nDCG

from .bundled import cranfield
from .cache import default_cache_root, identity_key
from .embedder import Embedder
from .measure import FD
from .vectors import set_default_encoder

logger = logging.getLogger(__name__)

METRICS = [FD @ 1, FD @ 10, FD(urr=True) @ 10, nDCG @ 10, RR @ 10, 'mrt']


@contextlib.contextmanager
def _native_output_silenced():
    """Send the process's stdout/stderr file descriptors (which native code writes to) to /dev/null."""
    sys.stdout.flush()
    sys.stderr.flush()
    saved = [os.dup(1), os.dup(2)]
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, 1)
        os.dup2(devnull, 2)
        yield
    finally:
        os.dup2(saved[0], 1)
        os.dup2(saved[1], 2)
        for fd in saved + [devnull]:
            os.close(fd)


class DemoResult(NamedTuple):
    table: pd.DataFrame
    n_encoded: int  # documents run through the encoder by this call (0 on a warm cache)
    embedder: Embedder


def run_demo(model_name: Optional[str] = None, work_dir: Optional[str] = None, verbose: bool = True) -> DemoResult:
    """Index Cranfield (once), run BM25 and dense retrieval, and evaluate both with FD and classical measures.

    Args:
        model_name: the encoder for FD and for the dense retriever (default all-MiniLM-L6-v2).
        work_dir: where indexes and the embedding cache live (default: the package's cache root,
            ``$PYTERRIER_FRECHET_CACHE`` or ``~/.cache/pyterrier_frechet``).
        verbose: progress bars.
    """
    import pyterrier_dr
    import pyterrier_pisa

    work = Path(work_dir) if work_dir is not None else default_cache_root()
    collection = cranfield()
    embedder = Embedder(model_name, texts=collection.texts, cache_dir=work / 'embeddings', verbose=verbose)

    pisa = pyterrier_pisa.PisaIndex(str(work / 'demo' / f'{collection.name}.pisa'), text_field='text')
    if not pisa.built():
        logger.info('indexing %d documents with PISA into %s', len(collection.texts), pisa.path)
        with _native_output_silenced():  # PISA's C++ indexer prints hundreds of progress lines
            pisa.index(collection.corpus_iter())
    flex = pyterrier_dr.FlexIndex(str(work / 'demo' / f'{collection.name}.{identity_key(embedder.identity)}.flex'),
                                  verbose=verbose)
    if not flex.built():
        # The dense index is built from the Embedder's cached vectors: one encoding serves retrieval and FD.
        docnos = pd.DataFrame({'docno': list(collection.texts)})
        flex.index(embedder(docnos)[['docno', 'doc_vec']].to_dict(orient='records'))

    bm25 = pisa.bm25(num_results=100)
    with _native_output_silenced():  # PISA builds its BM25 score index on first use, printing as it goes
        bm25(collection.topics.iloc[:1])
    dense = embedder.query_encoder() >> flex.retriever(num_results=100)
    previous = set_default_encoder(embedder)
    try:
        table = pt.Experiment([bm25, dense], collection.topics, collection.qrels, eval_metrics=METRICS,
                              names=['BM25 (PISA)', f'Dense ({embedder.name})'])
    finally:
        set_default_encoder(previous)
    return DemoResult(table, embedder.n_encoded, embedder)
