"""The main job: BM25 (pyterrier-pisa), BM25 re-ranked by MiniLM, and dense MiniLM retrieval (pyterrier-dr) on
the bundled Cranfield collection, scored with FD@1, FD@10, FD(urr=True)@10, nDCG@10, RR@10 and mrt in one
``pt.Experiment``; then the Pareto frontier of quality against mean response time (figures for FD@10 and nDCG@10,
written to ``WORK_DIR/figures`` by default, beside the indexes and the embedding cache, so the current directory is
left as it was: a new, empty or earlier-marked folder only)."""
import logging
import warnings
from pathlib import Path
from typing import Dict, List, NamedTuple, Optional, Union

import pandas as pd
import pyterrier as pt
from ir_measures import RR, nDCG

from .data.bundled import cranfield
from .extras import require
from .progress import quiet_progress
from . import pipelines
from .analyses import plots
from .analyses.cost import pareto_frontier
from .analyses.outputs import OutputFolder, named_paths
from .vectors.cache import default_cache_root
from .vectors.embedder import Embedder
from .measures.definitions import FD
from .vectors.sources import default_encoder

logger = logging.getLogger(__name__)

METRICS = [FD @ 1, FD @ 10, FD(urr=True) @ 10, nDCG @ 10, RR @ 10, 'mrt']


class DemoResult(NamedTuple):
    table: pd.DataFrame
    n_encoded: int  # documents run through the encoder by this call (0 on a warm cache)
    embedder: Embedder
    frontiers: Dict[str, List[str]]  # metric -> systems on its Pareto frontier against mrt
    figures: List[str]  # the Pareto plots written (PNG and PDF)


PARETO_METRICS = ['FD@10', 'nDCG@10']
#: Where the demo's figures go unless told: this folder of the work dir (``WORK_DIR/figures``), beside the indexes and
#: the embedding cache; nothing is written into the current directory.
DEFAULT_FIGURES = 'figures'


def figure_names() -> List[str]:
    """The files the demo writes into its figures folder."""
    return [f'pareto_{plots.slug(m)}_mrt{ext}' for m in PARETO_METRICS for ext in ('.png', '.pdf')]


def work_folder(work_dir=None) -> Path:
    """The demo's work dir: ``work_dir``, or the package's cache root (``$PYTERRIER_FRECHET_CACHE`` or
    ``~/.cache/pyterrier_frechet``)."""
    return Path(work_dir) if work_dir is not None else default_cache_root()


def check_requirements() -> None:
    """Raise :class:`~pyterrier_frechet.extras.MissingExtra` naming the ``[demo]`` extra (which installs all the
    demo needs) if PISA, pyterrier-dr or matplotlib cannot be imported: before any folder is made or any work."""
    for module in ('pyterrier_pisa', 'pyterrier_dr', 'matplotlib.figure'):
        require(module, 'demo', 'the demo')


def figures_folder(path=None, option: str = 'figures_dir', work_dir=None) -> OutputFolder:
    """The demo's figures folder, checked before any work (:class:`~.analyses.outputs.OutputFolder`: a new, empty
    or earlier-marked folder; ``path`` None: ``WORK_DIR/figures``, :func:`work_folder` of ``work_dir``, the work dir
    made first if it does not exist yet, as the demo would make it)."""
    if path is None:
        work = work_folder(work_dir)
        try:
            work.mkdir(parents=True, exist_ok=True)
        except OSError as ex:
            raise ValueError(f'the demo\'s work dir {str(work)!r} cannot be made: {ex}') from ex
        path = work / DEFAULT_FIGURES
    return OutputFolder(Path(path), option, named_paths(figure_names()))


def run_demo(model_name: Optional[str] = None, work_dir: Optional[str] = None, verbose: bool = True,
             figures_dir: Union[str, Path, OutputFolder, None] = None) -> DemoResult:
    """Index Cranfield (once), run BM25, BM25 re-ranked by the encoder and dense retrieval, evaluate them with FD and
    classical measures, and mark the Pareto frontier of FD@10 and nDCG@10 against mean response time.

    Args:
        model_name: the encoder for FD and for the dense retriever (default all-MiniLM-L6-v2).
        work_dir: where indexes and the embedding cache live (default: the package's cache root,
            ``$PYTERRIER_FRECHET_CACHE`` or ``~/.cache/pyterrier_frechet``, which is also :class:`Embedder`'s default
            cache root: one cache, one layout, the vectors embedded once per model for the demo and the Python API).
        verbose: progress bars.
        figures_dir: where the Pareto plots go (default ``WORK_DIR/figures``: the folder ``figures`` of the work dir,
            so nothing is written into the current directory): a new folder, an empty one, or one this package wrote
            into before; anything else is refused before any work (:func:`figures_folder`). The paths written are
            the result's ``figures``.
    """
    check_requirements()  # before any folder is made, any indexing or encoding
    work = work_folder(work_dir)
    folder = figures_dir if isinstance(figures_dir, OutputFolder) else figures_folder(figures_dir, work_dir=work)
    collection = cranfield()
    # the work dir is the Embedder's cache root, as pf.Embedder's default is: the README's next example (and the CLI's
    # --text) reads these vectors instead of encoding the collection again
    embedder = Embedder(model_name, texts=collection.texts, empty_text='embed', cache_dir=work, verbose=verbose)
    bm25 = pipelines.bm25(collection, work / 'demo')
    rerank = bm25 >> pipelines.dense_reranker(collection, embedder, work / 'demo', verbose=verbose)
    dense = pipelines.dense(collection, embedder, work / 'demo', verbose=verbose)
    with default_encoder(embedder), quiet_progress(not verbose), warnings.catch_warnings():
        # Cranfield's grades are 1-4 (4 best): every grade counts as relevant here, said in the legend (cli), not as
        # the note for qrels whose convention is unknown
        warnings.filterwarnings('ignore', message=r'graded qrels \(labels up to 4\)', category=UserWarning)
        # validate='ignore': pyterrier-dr's scorer cannot be inspected, and PyTerrier would warn that it is "unclear"
        table = pt.Experiment([bm25, rerank, dense], collection.topics, collection.qrels, eval_metrics=METRICS,
                              names=['BM25 (PISA)', f'BM25 >> {embedder.name}', f'Dense ({embedder.name})'], validate='ignore')
    frontiers = {}
    with folder.staging() as staging:
        for metric in PARETO_METRICS:
            marked = pareto_frontier(table, metric)
            frontiers[metric] = marked.loc[marked['pareto'], 'name'].tolist()
            plots.pareto(table, metric, staging / f'pareto_{plots.slug(metric)}_mrt')
        figures = folder.commit(staging, replace=False)
    return DemoResult(table, embedder.n_encoded, embedder, frontiers, sorted(figures))
