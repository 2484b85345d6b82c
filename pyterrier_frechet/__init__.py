"""Fréchet Distance (FD) evaluation for information retrieval, as a PyTerrier / ir_measures plugin.

Importing the package registers the ``FD``, ``FDInf``, ``KID``, ``KNNPrecision``, ``KNNRecall``, ``DO`` and ``HSA``
measures with ir_measures, so ``pt.Experiment``,
``ir_measures.calc_aggregate`` and ``ir_measures.parse_measure('FD@10')`` all know it.
"""
__version__ = '0.1.0'

from .frechet import (GaussianStats, ReducedSet, frechet_distance, frechet_distance_from_stats, frechet_distance_reduced,
                      gaussian_stats, reduce_set)
from .measure import DO, FD, FDInf, HSA, KID, KNNPrecision, KNNRecall
from .provider import FrechetProvider, fd_sets, register as _register_provider
from .histogram_provider import HistogramProvider, register as _register_histogram_provider
from .qrels import balance_qrels
from .urr import URRFilter
from .vectors import VectorStore, default_encoder, get_default_encoder, set_default_encoder
from .text import TextLookup
from .embedder import Embedder, DEFAULT_MODEL
from . import bundled, cost, distributed, plots, runs
from .bootstrap import bootstrap
from .correlation import correlations
from .robustness import encoder_robustness, sparsify
from .significance import compare_systems, paired_test
from .pooling import simulate_pools

_register_provider()
_register_histogram_provider()

__all__ = [
    'FD', 'FDInf', 'KID', 'KNNPrecision', 'KNNRecall', 'DO', 'HSA', 'Embedder', 'DEFAULT_MODEL', 'TextLookup', 'VectorStore', 'URRFilter',
    'frechet_distance', 'frechet_distance_from_stats', 'gaussian_stats', 'GaussianStats',
    'reduce_set', 'frechet_distance_reduced', 'ReducedSet',
    'balance_qrels', 'fd_sets', 'set_default_encoder', 'get_default_encoder', 'default_encoder', 'FrechetProvider', 'HistogramProvider',
    'bootstrap', 'correlations', 'sparsify', 'encoder_robustness', 'paired_test', 'compare_systems', 'simulate_pools',
]
