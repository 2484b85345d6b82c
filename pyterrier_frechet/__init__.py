"""Fréchet Distance (FD) evaluation for information retrieval, as a PyTerrier / ir_measures plugin.

Importing the package registers its measures (:mod:`pyterrier_frechet.measures`, whose ``__all__`` is re-exported
here; ``measures.registered_measures()`` lists them) and their provider with ir_measures, so ``pt.Experiment``,
``ir_measures.calc_aggregate`` and ``ir_measures.parse_measure('FD@10')`` all know them. Everything else (the numeric cores, the Embedder, pipelines,
analyses) is loaded when first used, so the import stays cheap.

The layers, one folder each, and what each may import: the table in ``docs/CONTRIBUTING.md`` ("The layers"), which
``tests/test_architecture.py`` reads and holds.
"""
import importlib

__version__ = '0.1.0'

from . import measures as _measures  # noqa: E402
from .measures import *  # noqa: E402,F401,F403  (measures.__all__: every measure of the package)
from .evaluation.provider import SetMeasureProvider, register as _register_provider  # noqa: E402

_register_provider()

# public name -> (module, attribute or None for the module itself), imported on first access
_LAZY = {
    'models': ('vectors.models', None),
    'frechet_distance': ('core.frechet', 'frechet_distance'),
    'frechet_distance_from_stats': ('core.frechet', 'frechet_distance_from_stats'),
    'frechet_distance_weighted': ('core.frechet', 'frechet_distance_weighted'),
    'frechet_distance_reduced': ('core.frechet', 'frechet_distance_reduced'),
    'gaussian_stats': ('core.frechet', 'gaussian_stats'),
    'GaussianStats': ('core.frechet', 'GaussianStats'),
    'reduce_set': ('core.frechet', 'reduce_set'),
    'ReducedSet': ('core.frechet', 'ReducedSet'),
    'evaluate': ('evaluation.evaluate', 'evaluate'),
    'fd_sets': ('evaluation.vector_sets', 'fd_sets'),
    'answer_sets': ('evaluation.answers', 'answer_sets'),
    'balance_qrels': ('evaluation.qrels', 'balance_qrels'),
    'URRFilter': ('pipelines.urr', 'URRFilter'),
    'VectorStore': ('vectors.sources', 'VectorStore'),
    'default_encoder': ('vectors.sources', 'default_encoder'),
    'get_default_encoder': ('vectors.sources', 'get_default_encoder'),
    'set_default_encoder': ('vectors.sources', 'set_default_encoder'),
    'TextLookup': ('vectors.text', 'TextLookup'),
    'Embedder': ('vectors.embedder', 'Embedder'),
    'DEFAULT_MODEL': ('vectors.embedder', 'DEFAULT_MODEL'),
    'bootstrap': ('analyses.bootstrap', 'bootstrap'),
    'read_query_groups': ('data.listings', 'read_query_groups'),
    'topic_groups': ('analyses.topic_groups', 'topic_groups'),
    'correlations': ('analyses.correlation', 'correlations'),
    'tau_ap': ('analyses.correlation', 'tau_ap'),
    'tau_intervals': ('analyses.correlation', 'tau_intervals'),
    'discriminative_power': ('analyses.discrimination', 'discriminative_power'),
    'agreement_table': ('analyses.discrimination', 'agreement_table'),
    'sparsify': ('analyses.robustness', 'sparsify'),
    'encoder_robustness': ('analyses.robustness', 'encoder_robustness'),
    'paired_test': ('analyses.significance', 'paired_test'),
    'disagreements': ('analyses.disagreement', 'disagreements'),
    'fd_anatomy': ('analyses.anatomy', 'fd_anatomy'),
    'compare_systems': ('analyses.significance', 'compare_systems'),
    'interval_caveat': ('analyses.validity', 'interval_caveat'),
    'relevant_count_spread': ('analyses.validity', 'relevant_count_spread'),
    'shuffle_check': ('analyses.shuffle', 'shuffle_check'),
    'rotate_rankings': ('analyses.shuffle', 'rotate_rankings'),
    'simulate_pools': ('analyses.pooling', 'simulate_pools'),
    'write_report': ('analyses.report', 'write_report'),
    'paper_table': ('analyses.table', 'paper_table'),
    'PaperTable': ('analyses.table', 'PaperTable'),
    # modules, as pf.plots.pareto(...), pf.runs.run_pipelines(...), ...
    'bundled': ('data.bundled', None),
    'runs': ('data.runs', None),
    'cost': ('analyses.cost', None),
    'plots': ('analyses.plots', None),
    'distributed': ('vectors.distributed', None),
    'pipelines': ('pipelines', None),
    'tiny': ('pipelines.tiny', None),
}


def __getattr__(name):
    try:
        module, attr = _LAZY[name]
    except KeyError:
        raise AttributeError(f'module {__name__!r} has no attribute {name!r}') from None
    value = importlib.import_module(f'{__name__}.{module}')
    if attr is not None:
        value = getattr(value, attr)
    globals()[name] = value
    return value


def __dir__():
    return sorted(set(globals()) | set(_LAZY))


__all__ = [*_measures.__all__, 'SetMeasureProvider', *_LAZY]
