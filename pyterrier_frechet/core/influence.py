"""The influence of each query on FD: the first-order change of FD when one query's weight rises (the infinitesimal
jackknife of Jaeckel 1972 and Efron 1982), in closed form.

FD over a query set is a smooth function of per-query weights w (every query of the set weighing 1): each side's
Gaussian is the weighted mean μ and covariance Σ = Σ_q w_q·u_q·Σ_{i∈q}(x_i − μ)(x_i − μ)ᵀ / D of :func:`~.weighted.gaussians`
(u_q: the query's document weight, D = V₁ − V₂/V₁). Its derivative in w_q is

    ∂FD/∂w_q = 2(μ₁ − μ₂)·(∂μ₁ − ∂μ₂) + Tr((I − B)∂Σ₁) + Tr((I − A)∂Σ₂),

with ∂μ = u_q(s_q − n_q μ)/V₁, ∂Σ = (u_q·Σ_{i∈q}(x_i − μ)(x_i − μ)ᵀ − ∂D·Σ)/D, and A, B the gradients of the trace
term T = Tr((Σ₁^½Σ₂Σ₁^½)^½): with Σ₁ = FFᵀ (a pivoted Cholesky factor, d × r) and FᵀΣ₂F = VS²Vᵀ (S > 0),
A = FVS⁻¹VᵀFᵀ and B = Σ₂FVS⁻³VᵀFᵀΣ₂ (the two are each other's inverse where both covariances have full rank; the
form holds on the covariances' ranges otherwise, which re-weighting never leaves). Tr(AΣ₂) = Tr(BΣ₁) = T, so each
query's terms are sums over its own vectors of squared projections: O(n·d·r) after one r × r eigen-decomposition
(with vectors), against one r × r eigenvalue solve per query for the exact leave-outs.

``pt.Experiment``'s per-query rows of FD are built from these (:mod:`~pyterrier_frechet.evaluation.experiment_rows`):
the exact leave-one-query-out FD is FD − ∂FD/∂w_q to first order, and the rows' paired t-test is then the infinitesimal
jackknife's. Its level and power against the exact jackknife's: ``benchmarks/experiment_rows_level.py``.
"""
from typing import NamedTuple, Optional

import numpy as np

from .kernel import WeightedSide, weighted_side
from .threads import lapack_threads
from .weighted import QueryStats, diagonal_positions, upper_pairs, packed_gaussians, unpack, weighted_rows

#: Directions of FᵀΣ₂F with eigenvalue below this fraction of the largest are its null space (round-off of a
#: retrieved side of lower rank than the relevant factor), not directions of the trace term.
NULL_RTOL = 1e-12


class InfluenceSide(NamedTuple):
    """One side's Gaussian under the query weights (its :class:`~.kernel.WeightedSide`: V₁, the denominator
    D = V₁ − V₂/V₁ and the shifted mean) with what its influence terms add: D's derivative per query, each query's
    Σ_{i∈q} u_q‖x_i − μ‖², and the covariance."""
    whole: WeightedSide
    d_denom: np.ndarray
    spread: np.ndarray
    cov: np.ndarray
    rows: Optional[np.ndarray] = None  # F with FᵀF = cov, where the covariance was formed from them


class RelevantFactor(NamedTuple):
    """The relevant side of :func:`fd_influence` with its pivoted Cholesky factor F (d × r, FFᵀ = Σ₁): the same for
    every run and FD measure with that relevant set (:func:`relevant_factor`), so made once per evaluation."""
    side: InfluenceSide
    factor: np.ndarray


def _weighted(stats: QueryStats, w: np.ndarray) -> Optional[WeightedSide]:
    """The :class:`~.kernel.WeightedSide` of ``stats`` under query weights ``w`` (a query of weight w contributes
    w·doc_weight to its sums, as in :func:`~.weighted.gaussians`)."""
    return weighted_side(float(w @ stats.n), float(w @ (stats.n * stats.doc_weight)),
                         float(w @ (stats.n * stats.doc_weight ** 2)), (w * stats.doc_weight) @ stats.s)


def _side(stats: QueryStats, w: np.ndarray, cov: Optional[np.ndarray] = None) -> Optional[InfluenceSide]:
    """:class:`InfluenceSide` of ``stats`` under weights ``w``; ``cov``: its covariance when the caller has it (else
    formed from the rows, :func:`~.weighted.weighted_rows`). None: fewer than 2 vectors, or no spread."""
    whole = _weighted(stats, w)
    if whole is None:
        return None
    a_q, b_q = stats.n * stats.doc_weight, stats.n * stats.doc_weight ** 2
    rows = None
    if cov is None:
        rows = weighted_rows(stats, w, whole.mean)
        cov = rows.T @ rows
    spread = stats.doc_weight * stats.projected_sums(whole.mean)
    return InfluenceSide(whole, a_q - (b_q * whole.v1 - whole.v2 * a_q) / whole.v1 ** 2, spread, cov, rows)


def relevant_factor(rel: QueryStats, units: np.ndarray, shift: np.ndarray) -> Optional[RelevantFactor]:
    """The relevant side of :func:`fd_influence` and its factor, or None (fewer than 2 vectors, no spread, or a
    covariance the pivoted Cholesky refuses)."""
    from .kernel import moment_scale, pivoted_cholesky, unpermuted
    w = np.asarray(units, dtype=np.float64)
    g = next(packed_gaussians([rel], [w[None]], shift))
    if g is None:
        return None
    side = _side(rel, w, unpack(g.packed, len(shift)))
    if side is None:
        return None
    with lapack_threads():
        factor = pivoted_cholesky(side.cov.copy(), moment_scale(side.whole.mean, side.cov))  # shifted frame
    if factor is None or factor[0].shape[1] == 0:
        return None
    return RelevantFactor(side, unpermuted(*factor))


def _quadratic_sums(stats: QueryStats, mean: np.ndarray, project: np.ndarray) -> np.ndarray:
    """Per query Σ_{i∈q} ‖(x_i − μ)ᵀR‖² = ⟨RRᵀ, C_q⟩ with C_q = P_q − s_qμᵀ − μs_qᵀ + n_qμμᵀ: from the held packed
    cross-products (one d × d product and one matrix-vector product, where the relevant side's are held for every
    run), else from the vectors (:meth:`~.weighted.QueryStats.projected_sums`)."""
    if stats.streamed:
        return stats.projected_sums(mean, project)
    d = len(mean)
    b = project @ project.T
    packed = 2.0 * b[upper_pairs(d)]  # each off-diagonal pair counted twice in ⟨B, C⟩, the diagonal once
    packed[diagonal_positions(d)] *= 0.5
    bm = b @ mean
    return stats.p @ packed - 2.0 * (stats.s @ bm) + stats.n * float(mean @ bm)


def fd_influence(rel: QueryStats, ret: QueryStats, units: np.ndarray, shift: np.ndarray,
                 relevant: Optional[RelevantFactor] = None) -> Optional[np.ndarray]:
    """∂FD/∂w_q for every query q of the universe at the weights ``units`` (1 for the units, the queries with relevant
    vectors; their derivative), NaN for the other queries; None where FD has no derivative to take here (a side with
    fewer than 2 vectors or no spread, or a covariance the pivoted Cholesky refuses): the caller then takes exact
    leave-outs. ``relevant``: :func:`relevant_factor` of the same ``rel``, ``units`` and ``shift``, made once for
    every run. Float64 throughout; equal to central finite differences of :func:`~.weighted.weighted_fds` to their
    truncation error (tests/test_influence.py)."""
    w = np.asarray(units, dtype=np.float64)
    relevant = relevant if relevant is not None else relevant_factor(rel, units, shift)
    if relevant is None:
        return None
    rel_side, f1 = relevant
    ret_side = _side(ret, w)
    if ret_side is None:
        return None
    r = f1.shape[1]
    with lapack_threads():
        c = ret_side.rows @ f1  # F₂F with F₂ᵀF₂ = Σ₂: CᵀC = FᵀΣ₂F
        if len(c) - 1 < r:  # the retrieved side has lower rank than the factor: the SVD of the thin C
            _, s, vt = np.linalg.svd(c, full_matrices=False)
            keep = s > s[0] * np.sqrt(NULL_RTOL) if len(s) and s[0] > 0 else np.zeros(len(s), dtype=bool)
            s, v = s[keep], vt[keep].T
        else:
            lam, v = np.linalg.eigh(c.T @ c)
            keep = lam > lam[-1] * NULL_RTOL if lam[-1] > 0 else np.zeros(len(lam), dtype=bool)
            s, v = np.sqrt(lam[keep]), v[:, keep]
    if len(s) == 0:
        return None
    trace_term = float(s.sum())
    fv = f1 @ v
    quad_ret = ret.doc_weight * ret.projected_sums(ret_side.whole.mean, fv / np.sqrt(s))  # (x − μ₂)ᵀA(x − μ₂)
    quad_rel = rel.doc_weight * _quadratic_sums(rel, rel_side.whole.mean, (ret_side.cov @ fv) / s ** 1.5)  # ..B..
    diff = rel_side.whole.mean - ret_side.whole.mean
    out = np.zeros(len(w))
    for sign, stats, side, quad in ((1.0, rel, rel_side, quad_rel), (-1.0, ret, ret_side, quad_ret)):
        # Tr((I − A)∂Σ) with ∂Σ = (u_q C_q − ∂D·Σ)/D, besides the mean term's 2(μ₁ − μ₂)·∂μ
        out += sign * _mean_move(stats, side.whole, diff)
        out += (side.spread - quad - side.d_denom * (float(np.trace(side.cov)) - trace_term)) / side.whole.alpha
    out[w <= 0] = np.nan
    return out


def _mean_move(stats: QueryStats, side: WeightedSide, diff: np.ndarray) -> np.ndarray:
    """Per query, 2·diff·∂μ/∂w_q for one side of mean μ (shifted) and total weight V₁: ∂μ = u_q(s_q − n_q μ)/V₁."""
    return 2 * stats.doc_weight * (stats.s @ diff - stats.n * float(side.mean @ diff)) / side.v1


def mean_term_influence(rel: QueryStats, ret: QueryStats, units: np.ndarray) -> Optional[np.ndarray]:
    """∂‖μ₁ − μ₂‖²/∂w_q, FD's mean term, for every query of the universe at the weights ``units`` (NaN for the queries
    that are no unit); None where a side has no Gaussian (:func:`~.kernel.weighted_side`). O(queries · d)."""
    w = np.asarray(units, dtype=np.float64)
    one, two = _weighted(rel, w), _weighted(ret, w)
    if one is None or two is None:
        return None
    diff = one.mean - two.mean
    out = _mean_move(rel, one, diff) - _mean_move(ret, two, diff)
    out[w <= 0] = np.nan
    return out


__all__ = ['NULL_RTOL', 'RelevantFactor', 'InfluenceSide', 'fd_influence', 'mean_term_influence', 'relevant_factor']
