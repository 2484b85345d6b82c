"""Conditional Fréchet distance given the query (pure numpy/scipy).

FD compares the pooled relevant set with the pooled retrieved set, so it cannot see which query a document was
retrieved for: handing every query's ranking to another query leaves it unchanged. The conditional Fréchet
distance (Soloveitchik, Diskin, Morin and Wiesel, "Conditional Frechet Inception Distance", arXiv:2103.11521,
2021) compares the distributions of x *given* a condition y instead, averaged over y. Conditioning on the query
identity q (a categorical y, with the saturated Gaussian model: per-query means, one covariance shared by all
queries) its closed form is

    CFD = (1/|Q|) Σ_q ‖m_q^rel − m_q^ret‖² + Tr(W_rel + W_ret − 2 (W_rel^½ W_ret W_rel^½)^½)

with m_q the mean of query q's relevant (retrieved) vectors, and W the pooled within-query covariance
Σ_q Σ_{i∈q} (x_i − m_q)(x_i − m_q)ᵀ / (N − |Q|) of each side. The average is over the queries that have both
relevant and retrieved vectors, each with weight 1. CFD is 0 when every query's retrieved documents are
distributed like its own relevant ones, and grows when a ranking serves another query (the first term).
The trace term takes the exact route of :mod:`.frechet` (nuclear norm of the product of two factors).

:func:`conditional_fds` computes the same from per-query statistics (:class:`~.weighted.QueryStats`) for many
query weightings at once — the bootstrap's fast path: a query drawn w times counts as w queries (its term w times
in the mean, its within-query scatter w times with w(n_q − 1) degrees of freedom), exactly as if its copies were
renamed ``q#1``, ``q#2``, ….
"""
from typing import NamedTuple, Tuple

import numpy as np

from .frechet import GaussianStats, at_most_d_rows, check_pair, fd_from_factors, frechet_distance_from_stats
from .weighted import QueryStats, group_cross_batches, sample_chunk, unpack, weighted_total_cross

__all__ = ['conditional_frechet_distance', 'conditional_fds', 'conditional_leave_out', 'point_conditional_distance']


def _within(x: np.ndarray, qids: np.ndarray, keep: np.ndarray, side: str = 'one') -> Tuple[np.ndarray, np.ndarray]:
    """Per-query means of the kept queries (in ``keep`` order) and a factor F with FᵀF = the pooled
    within-query covariance (at most d rows); ``side`` names the set in a refusal ('relevant', 'retrieved', …)."""
    index = {q: i for i, q in enumerate(keep)}
    rows = np.array([index.get(q, -1) for q in qids])
    x, rows = x[rows >= 0], rows[rows >= 0]
    counts = np.bincount(rows, minlength=len(keep)).astype(np.float64)
    means = np.zeros((len(keep), x.shape[1]))
    np.add.at(means, rows, x)
    means /= counts[:, None]
    dof = len(x) - len(keep)
    if dof < 1:
        raise ValueError(f'the pooled within-query covariance of the {side} side needs more vectors than queries ({len(x)} '
                         f'{side} vectors over {len(keep)} queries: one per query leaves no spread within a query); '
                         'give it queries with at least two vectors (a deeper cutoff, more judged documents), or use FD')
    return means, at_most_d_rows((x - means[rows]) / np.sqrt(dof))


def point_conditional_distance(reference, ref_qids, points, point_qids) -> float:
    """The conditional distance when each query has one point (a single answer, within-query covariance 0):
    mean over the queries with both of ‖m_q^ref − a_q‖², plus Tr(W_ref), the trace of the references' pooled
    within-query covariance."""
    reference, points = np.asarray(reference, dtype=np.float64), np.asarray(points, dtype=np.float64)
    ref_qids, point_qids = np.asarray(ref_qids), np.asarray(point_qids)
    keep = np.intersect1d(ref_qids, point_qids)
    if len(keep) == 0:
        raise ValueError('no query has both reference items and a point')
    means, factor = _within(reference, ref_qids, keep, 'reference')
    mine = np.isin(point_qids, keep)
    a = points[mine][np.argsort(point_qids[mine], kind='stable')]  # one point per kept query, in keep's sorted order
    return float(np.mean(np.sum((means - a) ** 2, axis=1))) + float(np.sum(factor ** 2))


def conditional_frechet_distance(relevant, rel_qids, retrieved, ret_qids) -> float:
    """CFD between the relevant and the retrieved vectors given their queries (see the module docstring).

    Args:
        relevant, retrieved: n×d vector sets.
        rel_qids, ret_qids: the query of each vector.

    Raises:
        ValueError: no query has both relevant and retrieved vectors, or a side has no more vectors than queries
            (its within-query covariance is undefined).
    """
    relevant, retrieved = check_pair(relevant, retrieved)
    rel_qids, ret_qids = np.asarray(rel_qids).astype(str), np.asarray(ret_qids).astype(str)
    if len(rel_qids) != len(relevant) or len(ret_qids) != len(retrieved):
        raise ValueError('one query id per vector is needed on each side')
    keep = np.intersect1d(rel_qids, ret_qids)
    if len(keep) == 0:
        raise ValueError('no query has both relevant and retrieved vectors')
    m_rel, f_rel = _within(relevant, rel_qids, keep, 'relevant')
    m_ret, f_ret = _within(retrieved, ret_qids, keep, 'retrieved')
    return fd_from_factors(float(np.mean(np.sum((m_rel - m_ret) ** 2, axis=1))), f_rel, f_ret)


class _Scatter(NamedTuple):
    """One side's within-query scatter Σ_q w_q S_q over the kept queries for a chunk of samples, kept packed
    (S_q = P_q − s_q s_qᵀ / n_q, which does not depend on the shift); unpacked one sample at a time."""
    packed: np.ndarray  # samples × d(d+1)/2: Σ_q w_q P_q
    s: np.ndarray  # kept queries × d: the per-query sums s_q
    scale: np.ndarray  # samples × kept queries: w_q / n_q
    dof: np.ndarray  # samples: Σ_q w_q (n_q − 1)

    def covariance(self, b: int) -> np.ndarray:
        """Sample b's pooled within-query covariance Σ_q w_q S_q / dof."""
        d = self.s.shape[1]
        return (unpack(self.packed[b], d) - (self.s * self.scale[b][:, None]).T @ self.s) / self.dof[b]


def _scatter(stats: QueryStats, weights: np.ndarray, keep: np.ndarray) -> _Scatter:
    w = weights[:, keep]
    return _Scatter(stats.weighted_cross(np.where(keep, weights, 0.0)), stats.s[keep], w / stats.n[keep],
                    w @ (stats.n[keep] - 1))


def conditional_fds(rel: QueryStats, ret: QueryStats, weights: np.ndarray, pbar=None) -> np.ndarray:
    """CFD per sample (row of ``weights``, samples × queries: how often each query is drawn) from per-query
    statistics of the relevant and retrieved sides; equals :func:`conditional_frechet_distance` for unit weights.
    NaN where a sample has no query with both sides or a side without within-query degrees of freedom."""
    weights = np.atleast_2d(np.asarray(weights))  # any numeric type; float64 a chunk of samples at a time, below
    if rel.s.shape != ret.s.shape or weights.shape[1] != len(rel.n):
        raise ValueError(f'per-query statistics over {len(rel.n)} and {len(ret.n)} queries and weights over '
                         f'{weights.shape[1]}: one query universe is needed')
    keep = (rel.n > 0) & (ret.n > 0)
    d = rel.s.shape[1]
    # shifts cancel in the difference of the per-query means (both sides share one)
    gap = np.sum((rel.s[keep] / rel.n[keep, None] - ret.s[keep] / ret.n[keep, None]) ** 2, axis=1)
    out = np.full(len(weights), np.nan)
    zero = np.zeros(d)
    chunk = sample_chunk(rel, ret)
    for start in range(0, len(weights), chunk):
        w = np.asarray(weights[start:start + chunk], dtype=np.float64)
        sides = [_scatter(stats, w, keep) for stats in (rel, ret)]
        n_kept = w[:, keep].sum(axis=1)
        for b in range(len(w)):
            if n_kept[b] > 0 and all(side.dof[b] >= 1 for side in sides):
                within = [GaussianStats(zero, side.covariance(b), int(side.dof[b]) + 1) for side in sides]
                out[start + b] = float(w[b, keep] @ gap) / n_kept[b] + frechet_distance_from_stats(*within)
        if pbar is not None:
            pbar.update(len(w))
    return out


def conditional_leave_out(rel: QueryStats, ret: QueryStats, units: np.ndarray, groups: np.ndarray, n_groups: int,
                          pbar=None) -> np.ndarray:
    """CFD with each group of unit queries left out (:func:`~.weighted.jackknife_groups`): equal to
    :func:`conditional_fds` with one row of weights per group (the units weighing 1, the group 0) to round-off, by
    downdating — each group's gap terms, degrees of freedom and within-query scatter Σ_q (P_q − s_q s_qᵀ/n_q)
    subtracted from the totals over the units, the scatter streamed in blocks of queries — in O(Q · d²) plus one FD
    per group. NaN where a leave-out has no query with both sides or a side without within-query degrees of
    freedom."""
    if rel.s.shape != ret.s.shape or len(units) != len(rel.n):
        raise ValueError(f'per-query statistics over {len(rel.n)} and {len(ret.n)} queries and units over '
                         f'{len(units)}: one query universe is needed')
    keep = (rel.n > 0) & (ret.n > 0)
    w = np.where(keep, np.asarray(units, dtype=np.float64), 0.0)  # the weight of each query in every leave-out
    d = rel.s.shape[1]
    gap = np.zeros(len(w))
    gap[keep] = np.sum((rel.s[keep] / rel.n[keep, None] - ret.s[keep] / ret.n[keep, None]) ** 2, axis=1)
    sel = groups >= 0

    def by_group(values):
        return float(values.sum()), np.bincount(groups[sel], weights=values[sel], minlength=n_groups)
    kept_t, kept_g = by_group(w)
    gap_t, gap_g = by_group(w * gap)
    dofs = [by_group(w * (stats.n - 1)) for stats in (rel, ret)]
    totals = [weighted_total_cross(stats, w, centred=True) for stats in (rel, ret)]
    out = np.full(n_groups, np.nan)
    zero = np.zeros(d)
    batches = [group_cross_batches(stats, w, groups, n_groups, centred=True) for stats in (rel, ret)]
    for (gids, scatter_rel), (_, scatter_ret) in zip(*batches):
        for g, c_rel, c_ret in zip(gids, scatter_rel, scatter_ret):
            n_kept = kept_t - kept_g[g]
            dof = [total - group[g] for total, group in dofs]
            if n_kept > 0 and all(x >= 1 for x in dof):
                within = [GaussianStats(zero, unpack(total - c, d) / x, int(x) + 1)
                          for total, c, x in zip(totals, (c_rel, c_ret), dof)]
                out[g] = (gap_t - gap_g[g]) / n_kept + frechet_distance_from_stats(*within)
        if pbar is not None:
            pbar.update(len(gids))
    return out
