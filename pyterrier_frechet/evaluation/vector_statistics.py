"""The per-query statistics of a vector measure's two sets that its resampling re-weights
(:data:`~pyterrier_frechet.measures.resampling.VECTOR_STATS`): per query of the universe, the count, the shifted sum
and the cross-products of its relevant and of its retrieved vectors (:class:`~pyterrier_frechet.core.weighted.QueryStats`).

The bootstrap (:mod:`pyterrier_frechet.analyses.bootstrap`) and pt.Experiment's per-query rows
(:mod:`.experiment_rows`) prepare them here from the same :class:`~.vector_sets.VectorSets` ``evaluate`` computes with
(after the ``missing=`` policy), so both re-weight exactly what was evaluated.
"""
from typing import Callable, NamedTuple, Optional

import numpy as np
import pandas as pd

from ..core.weighted import QueryStats, per_query_weighted


class VectorStatistics(NamedTuple):
    rel: QueryStats
    ret: QueryStats
    shift: np.ndarray
    units: np.ndarray  # queries with relevant vectors
    #: ``shared(key, compute)``: ``compute()`` remembered for the evaluation under ``key`` and this relevant set (its
    #: encoder identity, docnos and weighting), so what depends only on the relevant side — its leave-outs
    #: (:func:`~pyterrier_frechet.core.weighted.relevant_leave_outs`) — is made once for every run and measure; None:
    #: computed each time
    shared: Optional[Callable] = None


def query_stats(side, n_queries: int, shift: np.ndarray) -> QueryStats:
    """:class:`~pyterrier_frechet.core.weighted.QueryStats` of one side of a measure's :class:`~.vector_sets.VectorSets`
    over the query universe of its :class:`~.selection.Judgments` (``n_queries`` queries in sorted order: a row's
    query code is its position)."""
    return QueryStats(side.qcodes, side.vecs, n_queries, shift)


def pair_query_stats(sets, n_queries: int):
    """(relevant, retrieved) :class:`QueryStats` and the shift (the mean relevant vector) of one measure's sets,
    every document weight 1."""
    shift, rel = _relevant_stats(sets, n_queries, weighted=False)
    return rel, query_stats(sets.retrieved, n_queries, shift), shift


def vector_statistics(measure, sets, queries, judgments=None) -> VectorStatistics:
    """The statistics of ``measure`` on its ``sets`` over the universe ``queries`` (sorted query ids), per-query
    weighted for a measure that weighs queries equally (``weighting='query'``); the units are the queries with
    relevant vectors. ``judgments``: the evaluation (:class:`~.selection.Judgments`, whose query universe
    ``queries`` is) whose memo keeps the relevant side's statistics and leave-outs for every run
    (:attr:`VectorStatistics.shared`); None: nothing is shared."""
    weighted = bool(measure.query_weighted())
    shared = None
    if judgments is not None:
        identity = ('relevant side', sets.relevant_identity(), weighted, len(queries))

        def shared(key, compute):
            return judgments.once(identity + tuple(key), compute)
        shift, rel = shared(('query stats',), lambda: _relevant_stats(sets, len(queries), weighted))
    else:
        shift, rel = _relevant_stats(sets, len(queries), weighted)
    ret = query_stats(sets.retrieved, len(queries), shift)
    if weighted:
        ret = per_query_weighted(ret)
    return VectorStatistics(rel, ret, shift, np.asarray(pd.Index(queries).isin(sets.queries)), shared)


def _relevant_stats(sets, n_queries: int, weighted: bool):
    """The shift (the mean relevant vector) and the relevant side's :class:`QueryStats` (per-query weighted)."""
    shift = sets.relevant.vecs.mean(axis=0, dtype=np.float64)
    rel = query_stats(sets.relevant, n_queries, shift)
    return shift, per_query_weighted(rel) if weighted else rel
