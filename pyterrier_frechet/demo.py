"""The main job: BM25 (pyterrier-pisa) and dense MiniLM retrieval (pyterrier-dr) on the bundled Cranfield
collection, scored with FD@1, FD@10, FD(urr=True)@10, nDCG@10, RR@10 and mrt in one ``pt.Experiment``."""
import logging
from pathlib import Path
from typing import NamedTuple, Optional

import pandas as pd
import pyterrier as pt
from ir_measures import RR, nDCG

from .bundled import cranfield
from . import pipelines
from .cache import default_cache_root
from .embedder import Embedder
from .measure import FD
from .vectors import default_encoder

logger = logging.getLogger(__name__)

METRICS = [FD @ 1, FD @ 10, FD(urr=True) @ 10, nDCG @ 10, RR @ 10, 'mrt']


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
    work = Path(work_dir) if work_dir is not None else default_cache_root()
    collection = cranfield()
    embedder = Embedder(model_name, texts=collection.texts, cache_dir=work / 'embeddings', verbose=verbose)
    bm25 = pipelines.bm25(collection, work / 'demo')
    dense = pipelines.dense(collection, embedder, work / 'demo', verbose=verbose)
    with default_encoder(embedder):
        table = pt.Experiment([bm25, dense], collection.topics, collection.qrels, eval_metrics=METRICS,
                              names=['BM25 (PISA)', f'Dense ({embedder.name})'])
    return DemoResult(table, embedder.n_encoded, embedder)
