"""Jackknife pseudo-values of FD over queries (pure numpy).

Each leave-one-query-out FD comes from the totals of both sets minus the left-out query's count, sum and
cross-product (:func:`~.weighted.leave_out_fds`): O(Q · d²) for the statistics and one FD (an O(d³)
eigendecomposition) per query, where gathering every other query's vectors again cost O(Q · N · d²).
"""
from typing import Callable, Dict, List, NamedTuple, Optional

import numpy as np

from .frechet import frechet_distance
from .weighted import QueryStats, leave_out_fds


class QuerySides(NamedTuple):
    """Both sides' per-query statistics over ``queries`` and one slot more (the documents of other queries, never left
    out), as a resampling's ``leave_out`` reads them (``rel``, ``ret``, ``shift``, ``units``)."""
    rel: QueryStats
    ret: QueryStats
    shift: np.ndarray
    units: np.ndarray


def query_sides(relevant: np.ndarray, rel_qids: np.ndarray, retrieved: np.ndarray, ret_qids: np.ndarray,
                queries: List[str]) -> QuerySides:
    """:class:`QuerySides` of two sets of vectors with their query ids, over ``queries`` (each a unit) plus one slot
    that is no unit for the documents of queries outside them."""
    relevant = np.asarray(relevant, dtype=np.float64)
    retrieved = np.asarray(retrieved, dtype=np.float64)
    n = len(queries)
    index = {q: i for i, q in enumerate(queries)}
    rel_idx = np.array([index.get(q, n) for q in np.asarray(rel_qids).tolist()], dtype=np.int64)
    ret_idx = np.array([index.get(q, n) for q in np.asarray(ret_qids).tolist()], dtype=np.int64)
    shift = relevant.mean(axis=0)
    units = np.append(np.ones(n, dtype=bool), False)
    return QuerySides(QueryStats(rel_idx, relevant, n + 1, shift), QueryStats(ret_idx, retrieved, n + 1, shift), shift,
                      units)


def _downdated(sides: QuerySides, groups: np.ndarray, n_groups: int) -> np.ndarray:
    return leave_out_fds(sides.rel, sides.ret, sides.units, groups, n_groups, sides.shift)


def leave_one_out_fds(relevant: np.ndarray, rel_qids: np.ndarray, retrieved: np.ndarray, ret_qids: np.ndarray,
                      queries: List[str], leave_out: Optional[Callable] = None) -> np.ndarray:
    """FD without each query of ``queries`` (its relevant and retrieved documents left out), by downdating the
    totals; NaN where a side keeps fewer than 2 vectors. Documents of queries outside ``queries`` stay in every
    leave-out (they are never left out). ``leave_out``: (sides, groups, n_groups) → values, the measure's resampling's
    leave-outs (default: :func:`~.weighted.leave_out_fds`, the routine FD's resampling calls)."""
    sides = query_sides(relevant, rel_qids, retrieved, ret_qids, queries)
    n = len(queries)
    return (leave_out or _downdated)(sides, np.append(np.arange(n), -1), n)


def jackknife_pseudo_values(relevant: np.ndarray, rel_qids: np.ndarray, retrieved: np.ndarray, ret_qids: np.ndarray,
                            queries: List[str], leave_out: Optional[Callable] = None) -> Dict[str, float]:
    """Per-query jackknife pseudo-values of FD: n·FD − (n−1)·FD₋q, FD₋q leaving out query q's relevant and retrieved
    documents. The units are the queries of ``queries`` that contribute a document to either set (n of them); a
    query with none is no unit and gets no value — counting it would scale the bias correction by the wrong n,
    so adding judged queries without relevant documents would move the estimate. Their mean is the
    jackknife bias-corrected FD, and a paired t-test on two systems' pseudo-values is Tukey's jackknife test of the
    FD difference (the units are the same for every system when ``queries`` are those with relevant documents).

    ``leave_out``: the measure's resampling's leave-outs (:func:`leave_one_out_fds`).

    Raises:
        ValueError: fewer than 2 units (the jackknife needs two), or leaving a unit out leaves a side with fewer
            than 2 vectors (FD₋q undefined) — never a silent NaN.
    """
    present = set(np.asarray(rel_qids).tolist()) | set(np.asarray(ret_qids).tolist())
    queries = [q for q in queries if q in present]
    n = len(queries)
    if n < 2:
        raise ValueError(f'the jackknife needs at least 2 queries with documents, got {n} ({queries}); '
                         'use FD without jackknife=True')
    full = frechet_distance(relevant, retrieved)
    loo = leave_one_out_fds(relevant, rel_qids, retrieved, ret_qids, queries, leave_out)
    undefined = [q for q, v in zip(queries, loo) if not np.isfinite(v)]
    if undefined:
        counts = {side: {q: int(np.sum(np.asarray(ids) == q)) for q in undefined[:3]}
                  for side, ids in (('relevant', rel_qids), ('retrieved', ret_qids))}
        raise ValueError(f'leaving out {len(undefined)} of {n} queries (e.g. {undefined[:3]}) leaves a set with fewer '
                         f'than 2 vectors ({len(relevant)} relevant, {len(retrieved)} retrieved in all; '
                         f'the left-out queries hold {counts}), so FD without them is undefined; '
                         'use FD without jackknife=True, or more queries')
    return {q: n * full - (n - 1) * v for q, v in zip(queries, loo)}


def centred_pseudo_values(full: float, leave_out: np.ndarray, groups: np.ndarray) -> np.ndarray:
    """Per-unit rows whose mean is the full-set value and whose paired t statistic is the jackknife test's.

    ``leave_out``: the statistic with each group of units left out (G groups, :func:`~.weighted.jackknife_groups`;
    one unit per group for the leave-one-out jackknife); ``groups``: the group of each query (−1: no unit). Unit q
    of group g gets r_q = θ̂ + c·(θ̄₋ − θ₋g), with θ̄₋ the mean of the leave-outs over the n units (each unit counts
    its group's value) and c = √((G−1)(n−1)); a query that is no unit gets NaN. So

    - the mean of the n rows is θ̂ exactly (the deviations sum to 0 over the units), and
    - for two systems with the same groups, the paired t statistic of their rows is Δθ̂ / SE_J with
      SE_J² = (G−1)/G · Σ_g (Δθ₋g − mean)², the (delete-a-group) jackknife standard error of Δθ̂ — exactly when
      G = n (c = n − 1: the rows are Tukey's pseudo-values re-centred on θ̂ instead of the bias-corrected p̄), and
      up to the groups' unequal sizes (⌊n/G⌋ or ⌈n/G⌉) otherwise.

    The statistic is linear in the leave-outs, so the rows of a difference are the difference of the rows.
    Raises ValueError when a leave-out is not finite (a side left with fewer than 2 vectors)."""
    leave_out = np.asarray(leave_out, dtype=np.float64)
    groups = np.asarray(groups)
    units = groups >= 0
    n, n_groups = int(units.sum()), len(leave_out)
    if n < 2 or n_groups < 2:
        raise ValueError(f'the jackknife needs at least 2 queries with documents, got {n}')
    if not np.all(np.isfinite(leave_out)):
        raise ValueError(f'{int(np.sum(~np.isfinite(leave_out)))} of {n_groups} leave-outs are undefined (a side left '
                         'with fewer than 2 vectors)')
    per_unit = leave_out[groups[units]]
    deviation = per_unit.mean() - per_unit
    deviation -= deviation.mean()  # exact zero sum after round-off
    rows = np.full(len(groups), np.nan)
    rows[units] = float(full) + np.sqrt((n_groups - 1) * (n - 1)) * deviation
    return rows


def influence_rows(full: float, influence: np.ndarray) -> np.ndarray:
    """Per-unit rows from each unit's influence g_q = ∂θ/∂w_q (the infinitesimal jackknife; NaN: no unit):
    r_q = θ̂ + (n − 1)·(g_q − ḡ), the rows :func:`centred_pseudo_values` gives for leave-one-out values θ₋q ≈ θ̂ − g_q
    (their first-order expansion). So the mean of the n rows is θ̂ exactly, and the paired t statistic of two systems'
    rows is Δθ̂ / SE_IJ with SE_IJ² = (n−1)/n · Σ_q (Δg_q − mean)², the infinitesimal-jackknife standard error of Δθ̂
    in the form of the jackknife's. Raises ValueError for fewer than 2 units or an influence that is not finite."""
    influence = np.asarray(influence, dtype=np.float64)
    units = ~np.isnan(influence)
    n = int(units.sum())
    if n < 2:
        raise ValueError(f'the jackknife needs at least 2 queries with documents, got {n}')
    if not np.all(np.isfinite(influence[units])):
        raise ValueError('an influence is not finite')
    deviation = influence[units] - influence[units].mean()
    deviation -= deviation.mean()  # exact zero sum after round-off
    rows = np.full(len(influence), np.nan)
    rows[units] = float(full) + (n - 1) * deviation
    return rows

