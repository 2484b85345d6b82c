"""The per-query statistics of a vector measure's two sets that its resampling re-weights
(:data:`~pyterrier_frechet.measures.resampling.VECTOR_STATS`): per query of the universe, the count, the shifted sum
and the cross-products of its relevant and of its retrieved vectors (:class:`~pyterrier_frechet.core.weighted.QueryStats`).

The bootstrap (:mod:`pyterrier_frechet.analyses.bootstrap`) and pt.Experiment's per-query rows
(:mod:`.experiment_rows`) prepare them here from the same :class:`~.vector_sets.VectorSets` ``evaluate`` computes with
(after the ``missing=`` policy), so both re-weight exactly what was evaluated.
"""
from typing import NamedTuple

import numpy as np
import pandas as pd

from ..core.weighted import QueryStats, per_query_weighted


class VectorStatistics(NamedTuple):
    rel: QueryStats
    ret: QueryStats
    shift: np.ndarray
    units: np.ndarray  # queries with relevant vectors


def query_stats(side, n_queries: int, shift: np.ndarray) -> QueryStats:
    """:class:`~pyterrier_frechet.core.weighted.QueryStats` of one side of a measure's :class:`~.vector_sets.VectorSets`
    over the query universe of its :class:`~.selection.Judgments` (``n_queries`` queries in sorted order: a row's
    query code is its position)."""
    return QueryStats(side.qcodes, side.vecs, n_queries, shift)


def pair_query_stats(sets, n_queries: int):
    """(relevant, retrieved) :class:`QueryStats` and the shift (the mean relevant vector) of one measure's sets,
    every document weight 1."""
    shift = sets.relevant.vecs.mean(axis=0, dtype=np.float64)
    rel, ret = query_stats(sets.relevant, n_queries, shift), query_stats(sets.retrieved, n_queries, shift)
    return rel, ret, shift


def vector_statistics(measure, sets, queries) -> VectorStatistics:
    """The statistics of ``measure`` on its ``sets`` over the universe ``queries`` (sorted query ids), per-query
    weighted for a measure that weighs queries equally (``weighting='query'``); the units are the queries with
    relevant vectors."""
    rel, ret, shift = pair_query_stats(sets, len(queries))
    if measure.query_weighted():
        rel, ret = per_query_weighted(rel), per_query_weighted(ret)
    return VectorStatistics(rel, ret, shift, np.asarray(pd.Index(queries).isin(sets.queries)))
