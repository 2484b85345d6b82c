"""Leave-out FDs by downdating one congruence (pure numpy/scipy): the exact leave-one-query-out trace term at one
symmetric eigenvalue solve and O(r²·p) more, where the congruence route pays a second O(d³) (``sygst``) per leave-out.

With Σ₁ = LLᵀ the relevant side's covariance over every unit (pivoted Cholesky, r its rank) and K = LᵀΣ₂L a run's
congruence (one per run), leaving group g out removes its vectors from both sides' scatters:

    α₁'Σ₁' = α₁LLᵀ − UUᵀ = α₁L(I − ZZᵀ)Lᵀ,   Z = L⁻¹U/√α₁ (r × p₁),
    α₂'Σ₂' = α₂Σ₂ − VVᵀ,

where α = V₁ − V₂/V₁ is each side's normaliser (n − 1 for unit weights) and the columns of U (of V) are g's
deviations from the side's mean, √u (x − μ), and √V₁'(μ' − μ) for the mean's move (the downdate of a scatter).
With I − ZZᵀ = T², T = I + Q·diag(√(1 − s²) − 1)·Qᵀ (Z = QSWᵀ), Σ₁'^½Σ₂'Σ₁'^½ has the non-zero eigenvalues of

    (α₁/α₁')(α₂/α₂') · T (K − ṼṼᵀ) T,   Ṽ = LᵀV/√α₂,

whose r × r matrix is K less a rank-p₂ product and plus a rank-2p₁ one (BLAS ``syrk``, ``symm``, ``syr2k``). The
relevant side's Q, s and scale are made once per evaluation (:func:`relevant_downdates`) and serve every run and
measure, as the congruence route's factors do (:class:`~.weighted.SharedRelevant`). A group is taken here where
p₁ + p₂ ≤ r (:data:`MAX_UPDATE_FRACTION`) and where the eigenvalues' error bound allows
(:func:`~.kernel.sqrt_sum_error`); every other group takes the congruence route, so the values are the same to
round-off (``tests/test_downdate.py``: to 1e-9 of FD of the vectors left in, to 1e-10 of the congruence route; on
four DL19 runs both routes equal the loop over the vectors to 9e-14, ``tests/test_leave_one_out.py``).
"""
from typing import List, NamedTuple, Optional

import numpy as np
import scipy.linalg
from scipy.linalg import blas, lapack

from .kernel import WeightedSide, fd_value, moment_scale, padded_factor, pivoted_cholesky, sqrt_sum_if_exact
from .threads import lapack_threads

#: A group is downdated where its two rank updates together have at most this fraction of the factor's rank columns.
#: Each column costs about 4r² flops (``symm`` and ``syr2k``), so at r columns the updates cost about what the solve
#: does; below, less than the congruence route (``sygst`` 2.7–2.9 ms, the packed downdate and gather ~1.5 ms a leave-out at
#: d = 384 here, cProfile).
#: On DL19 (rel=2) every query qualifies, the largest with 219 relevant passages: FD@10's rows over 6 runs took 2.37 s
#: (cProfile) against 2.57 s at half the rank, where 4 queries took the congruence route, and 3.96 s before this
#: route existed.
MAX_UPDATE_FRACTION = 1.0


class GroupRows(NamedTuple):
    """Each group's rows of one side's vectors: ``rows[starts[g]:starts[g + 1]]`` index :class:`~.weighted.QueryStats`'
    sorted vectors, ``weight`` each row's weight u = w·doc_weight of its query."""
    rows: np.ndarray
    starts: np.ndarray
    weight: np.ndarray


def group_rows(stats, w: np.ndarray, groups: np.ndarray, n_groups: int) -> GroupRows:
    """The rows of each group's queries of positive weight in ``stats`` (a :class:`~.weighted.QueryStats`)."""
    u = w * stats.doc_weight
    queries = np.flatnonzero((groups >= 0) & (u > 0) & (stats.n > 0))
    queries = queries[np.argsort(groups[queries], kind='stable')]
    lengths = stats.n[queries].astype(np.int64)
    rows = stats.rows_of(queries)
    per_group = np.bincount(groups[queries], weights=lengths, minlength=n_groups).astype(np.int64)
    return GroupRows(rows, np.concatenate([[0], np.cumsum(per_group)]), np.repeat(u[queries], lengths))


class LeaveOutSide(NamedTuple):
    """One side over every unit (its :class:`~.kernel.WeightedSide`), its scatter's trace Σ u‖x̃ − μ̃‖², and its
    :class:`~.weighted.SideTotals`, whose :meth:`~.weighted.SideTotals.without` gives each leave-out's side by the
    same rule as the congruence route's."""
    whole: WeightedSide
    scatter_trace: float
    totals: tuple  # a weighted.SideTotals (weighted imports this module, not the other way)


def leave_out_side(totals, cross_trace: float) -> Optional[LeaveOutSide]:
    """:class:`LeaveOutSide` from a side's :class:`~.weighted.SideTotals` and the trace of the units' cross-product;
    None where the side has no Gaussian (:func:`~.kernel.weighted_side`)."""
    whole = totals.whole()
    if whole is None:
        return None
    return LeaveOutSide(whole, float(cross_trace - whole.v1 * whole.mean @ whole.mean), totals)


def covariance(s: LeaveOutSide, cross: np.ndarray, gather: np.ndarray) -> np.ndarray:
    """The side's covariance (Σ u P − V₁μ̃μ̃ᵀ)/α from the units' packed cross-product, read out by ``gather`` (a d × d
    index into the packing: the full matrix, or in a factor's pivoted order)."""
    whole = s.whole
    i, j = np.triu_indices(len(whole.mean))
    return ((cross - whole.v1 * whole.mean[i] * whole.mean[j]) / whole.alpha)[gather]


def deviations(stats, rows: GroupRows, g: int, s: LeaveOutSide, shift: np.ndarray) -> Optional[tuple]:
    """(D, the side left, :class:`~.kernel.WeightedSide`) for group g left out of one side: D (d × (m + 1)) with
    α'Σ' = αΣ − DDᵀ, its columns √u (x − μ) for g's m rows and √V₁'(μ' − μ); None where the side left has no
    Gaussian."""
    left = s.totals.without(g)
    if left is None:
        return None
    mine = rows.rows[rows.starts[g]:rows.starts[g + 1]]
    dev = np.empty((len(mine) + 1, len(shift)))
    np.subtract(stats.vectors[mine], shift + s.whole.mean, out=dev[:-1])
    dev[:-1] *= np.sqrt(rows.weight[rows.starts[g]:rows.starts[g + 1]])[:, None]
    dev[-1] = np.sqrt(left.v1) * (left.mean - s.whole.mean)
    return dev.T, left


class RelevantDowndates(NamedTuple):
    """The relevant side's part of :func:`downdated_fds`, made once per evaluation and grouping: the units' factor
    (padded d × d, pivoted, Fortran order: :func:`~.kernel.padded_factor`), its rank, pivot order, gather index of a
    packed covariance into that order, and the side's scale; per group (None where not downdated) Q (r × p₁), the
    diagonal √(1 − s²) − 1 and α₁/α₁'."""
    factor: np.ndarray
    rank: int
    perm: np.ndarray
    gather: np.ndarray
    scale: float
    bases: List[Optional[np.ndarray]]
    shrink: List[Optional[np.ndarray]]
    ratios: np.ndarray


def relevant_downdates(rel, w: np.ndarray, groups: np.ndarray, n_groups: int, shift: np.ndarray, totals,
                       cross: np.ndarray, packed_index: np.ndarray) -> Optional[RelevantDowndates]:
    """:class:`RelevantDowndates` of the relevant side ``rel`` (a :class:`~.weighted.QueryStats`) over the units of
    weight ``w``, from its :class:`~.weighted.SideTotals` and the units' packed cross-product ``cross``;
    None where the side has no factor (fewer than 2 vectors, or refused by the pivoted Cholesky)."""
    s = leave_out_side(totals, float(cross[np.diagonal(packed_index)].sum()))
    if s is None:
        return None
    full = covariance(s, cross, packed_index)
    scale = moment_scale(s.whole.mean, full)  # the shifted frame the covariance was formed in
    with lapack_threads():
        got = pivoted_cholesky(full, scale)
    if got is None or got[0].shape[1] == 0:
        return None
    lower, perm = got
    rank = lower.shape[1]
    rows = group_rows(rel, w, groups, n_groups)
    bases, shrink, ratios = [None] * n_groups, [None] * n_groups, np.zeros(n_groups)
    with lapack_threads():
        for g in range(n_groups):
            size = rows.starts[g + 1] - rows.starts[g] + 1
            if size > MAX_UPDATE_FRACTION * rank:
                continue
            got = deviations(rel, rows, g, s, shift)
            if got is None:
                continue
            dev, left = got
            z = scipy.linalg.solve_triangular(lower[:rank], dev[perm[:rank]], lower=True, check_finite=False)
            basis, sv, _ = np.linalg.svd(z / np.sqrt(s.whole.alpha), full_matrices=False)
            bases[g] = np.asfortranarray(basis)
            shrink[g] = np.sqrt(np.clip(1.0 - sv ** 2, 0.0, None)) - 1.0
            ratios[g] = s.whole.alpha / left.alpha
    return RelevantDowndates(padded_factor(lower), rank, perm, packed_index[np.ix_(perm, perm)], scale, bases,
                             shrink, ratios)


def downdated_fds(relevant: RelevantDowndates, shared, ret, w: np.ndarray, shift: np.ndarray, totals,
                  cross: np.ndarray, small: np.ndarray) -> np.ndarray:
    """FD with each group left out (NaN where not taken here: the caller's route) for one run's retrieved side ``ret``
    over the units of weight ``w`` (its totals and the units' packed cross-product ``cross``), against the relevant
    side's leave-outs ``shared`` (a :class:`~.weighted.SharedRelevant`: their means, traces and ranks) and
    :func:`relevant_downdates`. Taken for the groups whose rank updates are ``small`` (p₁ + p₂ ≤
    :data:`MAX_UPDATE_FRACTION` · r, decided by the caller from the counts) where the retrieved leave-out keeps at
    least the relevant leave-out's rank plus one vectors (else the caller's route of fewer rows is cheaper)."""
    groups, n_groups = shared.groups, shared.n_groups
    out = np.full(n_groups, np.nan)
    rank = relevant.rank
    s = leave_out_side(totals, float(cross[np.diagonal(relevant.gather)].sum()))
    if s is None:
        return out
    keeps = totals.n - totals.group_n  # each leave-out's count of retrieved vectors
    cov_perm = covariance(s, cross, relevant.gather)
    scale = relevant.scale * moment_scale(s.whole.mean, cov_perm)
    rows = group_rows(ret, w, groups, n_groups)
    with lapack_threads():
        inner, info = lapack.dsygst(np.asfortranarray(cov_perm), relevant.factor, itype=2, lower=1)
        if info != 0:  # pragma: no cover - sygst only fails on bad arguments
            return out
        base = np.asfortranarray(inner[:rank, :rank])
        for g in np.flatnonzero(small):
            if shared.gaussians[g] is None or keeps[g] - 1 < shared.ranks[g]:
                continue
            got = deviations(ret, rows, g, s, shift)
            if got is None:
                continue
            dev, left = got
            tr_sqrt = _downdated_trace_sqrt(relevant, base, g, dev, s.whole.alpha, scale)
            if tr_sqrt is None:
                continue
            tr_sqrt *= np.sqrt(relevant.ratios[g] * s.whole.alpha / left.alpha)
            diff = shared.gaussians[g].mean_shifted - left.mean
            trace = (s.scatter_trace - float(np.einsum('ij,ij->', dev, dev))) / left.alpha
            out[g] = fd_value(float(diff @ diff), shared.traces[g], trace, tr_sqrt)
    return out


def _downdated_trace_sqrt(relevant: RelevantDowndates, base: np.ndarray, g: int, dev: np.ndarray, alpha: float,
                          scale: float) -> Optional[float]:
    """Σ√λ over the eigenvalues of T(K − ṼṼᵀ)T for group g (module docstring), or None where the error bound refuses
    it (eigenvalues at the round-off floor: the congruence route's exact fall-back takes it)."""
    rank = relevant.rank
    projected = blas.dtrmm(1.0, relevant.factor, np.asfortranarray(dev[relevant.perm]), lower=1, trans_a=1)[:rank]
    projected /= np.sqrt(alpha)
    inner = blas.dsyrk(-1.0, projected, beta=1.0, c=base, trans=0, lower=1, overwrite_c=0)
    basis, shrink = relevant.bases[g], relevant.shrink[g]
    y = blas.dsymm(1.0, inner, basis, side=0, lower=1)  # K̃Q (K̃'s lower triangle)
    p = basis * shrink
    half = y + 0.5 * (p @ (basis.T @ y))  # T K̃ T = K̃ + P Wᵀ + W Pᵀ with P = QD, W = K̃Q + ½P QᵀK̃Q
    inner = blas.dsyr2k(1.0, p, half, beta=1.0, c=inner, trans=0, lower=1, overwrite_c=1)
    evals = scipy.linalg.eigh(inner, lower=True, eigvals_only=True, driver='evd', check_finite=False,
                              overwrite_a=True)
    return sqrt_sum_if_exact(evals, scale)
