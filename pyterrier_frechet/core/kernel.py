"""The linear-algebra kernel every FD route shares (pure numpy/scipy, float64): factors, scales, the positive
semi-definite check, the trace of the square root from eigenvalues or singular values, and FD's two terms.

One tolerance each, and where it applies:

- :data:`FAST_MIN_RATIO` — :func:`nuclear_norm` takes the eigenvalues of the smaller Gram matrix instead of the
  singular values when λ_min ≥ this × λ_max (else, or with ``rtol``, by :func:`sqrt_sum_error`).
- :data:`CONGRUENCE_RTOL` — an eigenvalue route to Tr((Σ₁^½Σ₂Σ₁^½)^½) (:func:`trace_sqrt_congruence`, the leave-out
  downdates, the factored bootstrap) is accepted when :func:`sqrt_sum_error` is at most this fraction of the sum;
  otherwise the caller takes the nuclear norm of two factors.
- :data:`PIVOTED_RESIDUAL` — :func:`pivoted_cholesky` accepts a rank-revealing factor of a singular covariance when
  the trailing Schur complement is at most this × d·ε·scale.
- :data:`PSD_RTOL` — :func:`check_psd` refuses an eigenvalue below −this × the scale (not round-off).
- :func:`moment_scale` — the size of the second moments a covariance was formed from, the ε-multiple every one of
  the above is measured against.
- :func:`spread_normaliser` — the one refusal rule of a weighted side: V₁ − V₂/V₁ ≤ 0 (or V₁ ≤ 0, or fewer than 2
  vectors) leaves no covariance, so no Gaussian. :func:`weighted_side` applies it and is the one constructor of a
  side's :class:`WeightedSide` (count, V₁, V₂, weighted total, normaliser, mean) for every route: the full set, the
  congruence and downdate leave-outs, the influence rows.

:class:`FDTerms` splits FD into its mean term ‖μ₁ − μ₂‖² and its covariance term Tr Σ₁ + Tr Σ₂ − 2·Tr((Σ₁^½Σ₂Σ₁^½)^½)
(:func:`fd_terms`): every FD the package reports is ``FDTerms.fd``.
"""
from typing import NamedTuple, Optional

import numpy as np
import scipy.linalg

from .threads import lapack_threads

__all__ = ['CONGRUENCE_RTOL', 'FAST_MIN_RATIO', 'PIVOTED_RESIDUAL', 'PSD_RTOL', 'FDTerms', 'check_psd', 'fd_terms',
           'fd_value', 'moment_scale', 'nuclear_norm', 'padded_factor', 'pivoted_cholesky', 'spread_normaliser',
           'WeightedSide', 'weighted_side', 'sqrt_sum_error', 'sqrt_sum_if_exact', 'trace_sqrt_congruence', 'unpermuted']

FAST_MIN_RATIO = 1e-8  # λ_min/λ_max of MMᵀ below this: its eigenvalues cost digits, take M's singular values


class FDTerms(NamedTuple):
    """FD's two terms: ``mean`` = ‖μ₁ − μ₂‖², ``cov`` = Tr Σ₁ + Tr Σ₂ − 2·Tr((Σ₁^½Σ₂Σ₁^½)^½) (both ≥ 0 in exact
    arithmetic); ``fd`` is their sum, clipped at 0 against round-off."""
    mean: float
    cov: float

    @property
    def fd(self) -> float:
        # FD ≥ 0 holds exactly; only round-off (a few ulps of the traces) can make the sum negative
        return max(float(self.mean + self.cov), 0.0)


def fd_terms(mean_sq: float, tr1: float, tr2: float, tr_sqrt: float) -> FDTerms:
    """:class:`FDTerms` from ‖μ₁ − μ₂‖², Tr Σ₁, Tr Σ₂ and Tr((Σ₁^½Σ₂Σ₁^½)^½)."""
    return FDTerms(float(mean_sq), float(tr1 + tr2 - 2.0 * tr_sqrt))


def fd_value(mean_sq: float, tr1: float, tr2: float, tr_sqrt: float) -> float:
    """FD = ‖μ₁ − μ₂‖² + Tr Σ₁ + Tr Σ₂ − 2·Tr((Σ₁^½Σ₂Σ₁^½)^½), clipped at 0 against round-off (the only clipping): the
    sum of :func:`fd_terms`, in the same order of operations, so an FD and its two terms agree to the last bit."""
    return fd_terms(mean_sq, tr1, tr2, tr_sqrt).fd


def spread_normaliser(count: float, v1: float, v2: float) -> Optional[float]:
    """A weighted side's covariance normaliser α = V₁ − V₂/V₁ (n − 1 for unit weights; ``numpy.cov(aweights=)``'s),
    or None where the side has no Gaussian: fewer than 2 vectors, no weight, or no spread (α ≤ 0)."""
    if count < 2 or v1 <= 0:
        return None
    alpha = v1 - v2 / v1
    return alpha if alpha > 0 else None


class WeightedSide(NamedTuple):
    """One side of FD under weights u (one per vector): the count of vectors ``n``, V₁ = Σu, V₂ = Σu², the weighted
    ``total`` Σ u·x̃ of the (shifted) vectors, the covariance normaliser ``alpha`` = V₁ − V₂/V₁ and the ``mean``
    total / V₁ (in the same shifted frame). Built only by :func:`weighted_side`, so every route refuses a side by
    one rule."""
    n: float
    v1: float
    v2: float
    total: np.ndarray
    alpha: float
    mean: np.ndarray


def weighted_side(n: float, v1: float, v2: float, total: np.ndarray) -> Optional[WeightedSide]:
    """:class:`WeightedSide` from its count, V₁, V₂ and weighted total, or None where it has no Gaussian
    (:func:`spread_normaliser`)."""
    alpha = spread_normaliser(n, v1, v2)
    if alpha is None:
        return None
    return WeightedSide(n, v1, v2, total, alpha, total / v1)


#: The pivoted Cholesky factor L of a singular covariance Σ (d×d, scale s) is accepted when max |Σ − LLᵀ| is at most
#: this × d·ε·s: LAPACK's ``pstrf`` stops once every remaining pivot is below d·ε·max Σₖₖ, so for a positive
#: semi-definite Σ the residual (the trailing Schur complement) is that small, plus the round-off of LLᵀ; an indefinite
#: Σ leaves a residual of the size of its negative part and goes to the eigendecomposition route, which refuses it.
PIVOTED_RESIDUAL = 64.0
PSD_RTOL = 1e-8  # an eigenvalue below −this · the largest |eigenvalue| is not round-off: refuse



def moment_scale(mu: np.ndarray, cov: np.ndarray) -> float:
    """The size of the second moments a covariance was computed from: its round-off is ε times this (a set of
    one repeated vector has a covariance of pure round-off, of either sign, at ε·|x|²). ``mu``: the mean in the
    frame the moments were summed in — the shifted frame of :class:`~.weighted.QueryStats` (x − shift is exact to
    ε·|x − shift|), not the origin: a common offset of 1e3 the shift removed made the tolerances 1e6 times too
    large, and directions of variance 1e-10 were taken for round-off (tests/test_downdate.py)."""
    return max(float(np.abs(cov).max()) if cov.size else 0.0, float((mu ** 2).max()) if mu.size else 0.0,
               np.finfo(float).tiny)


def check_psd(evals: np.ndarray, what: str, scale: float) -> None:
    """Raise if eigenvalues (of a covariance, or of Σ₁^½Σ₂Σ₁^½) are negative beyond round-off of size ``scale``."""
    if len(evals) and evals.min() < -PSD_RTOL * max(scale, float(np.abs(evals).max())):
        raise ValueError(f'{what} is not positive semi-definite (eigenvalue {evals.min():.3g}, largest '
                         f'{np.abs(evals).max():.3g}); FD needs covariance matrices')


def nuclear_norm(m: np.ndarray, try_fast: bool = True, rtol: Optional[float] = None) -> float:
    """Sum of the singular values of ``m``.

    Fast path: the square roots of the eigenvalues of the smaller Gram matrix G = MMᵀ (or MᵀM), accepted
    when G's smallest computed eigenvalue is at least 1e-8 times its largest (eigenvalues carry absolute
    errors of about ε·λ_max, so this check is reliable): then no singular value is small enough to lose
    digits, and the relative error is at most about k·ε·cond(M)/2 ≤ k·1e-12 for k values (≈ 1e-15 on
    typical data). Otherwise — M singular or ill-conditioned (low-rank or duplicated data) — the singular
    values themselves (``gesdd``, accurate for the small ones too; ``gesvd`` on the rare non-convergence).
    ``try_fast=False`` goes straight to the singular values, when the caller knows M to be ill-conditioned (the
    fast path would be computed only to be rejected); the result is the same either way, up to round-off.
    ``rtol``: accept the fast path by its error bound instead (:func:`sqrt_sum_error` at most ``rtol`` of the sum,
    the rule of :func:`trace_sqrt_congruence`), which admits well-separated small singular values the ratio refuses.
    """
    small = m if m.shape[0] <= m.shape[1] else m.T
    if try_fast:
        gram = small @ small.T  # syrk, threaded (level 3)
        with lapack_threads():
            evals = scipy.linalg.eigvalsh(gram, check_finite=False, overwrite_a=True)
        if rtol is not None and evals[-1] > 0:
            total = float(np.sqrt(np.clip(evals, 0.0, None)).sum())
            if sqrt_sum_error(evals) <= rtol * total:
                return total
        elif evals[-1] > 0 and evals[0] >= FAST_MIN_RATIO * evals[-1]:
            return float(np.sqrt(evals).sum())
    with lapack_threads():
        try:
            s = scipy.linalg.svdvals(m, check_finite=False)
        except np.linalg.LinAlgError:  # pragma: no cover - LAPACK non-convergence is data dependent
            s = scipy.linalg.svd(m, compute_uv=False, lapack_driver='gesvd', check_finite=False)
    return float(s.sum())


def pivoted_cholesky(cov: np.ndarray, scale: float):
    """LAPACK's pivoted Cholesky (``pstrf``, tolerance d·ε·max(``scale``, max diagonal)) of a covariance: (L, perm) with L
    the d × r lower-trapezoidal factor of the permuted cov[perm][:, perm] = LLᵀ, r the numerical rank (r = d: cov is
    positive definite). None if cov is not positive semi-definite beyond round-off: the first r pivots exceed the
    tolerance, so LLᵀ reproduces cov everywhere but in the trailing (d − r)² block, which must then be the Schur
    complement's round-off (at most :data:`PIVOTED_RESIDUAL` × d·ε·scale) — checked in O((d − r)²·r)."""
    from scipy.linalg import lapack
    d = cov.shape[0]
    # pivots below d·ε times the second moments the covariance was formed from are its round-off: pstrf's default,
    # d·ε·max diagonal, took one such pivot of a downdated rank-2 covariance as a third dimension (4e-9 off FD;
    # tests/test_downdate.py::test_a_downdated_rank_deficient_covariance_keeps_its_rank)
    tol = d * np.finfo(float).eps * max(scale, float(np.abs(np.diagonal(cov)).max()) if d else 0.0)
    chol, piv, rank, info = lapack.dpstrf(cov, lower=1, tol=tol)
    if info < 0:  # pragma: no cover - pstrf only fails on bad arguments
        return None
    perm = piv - 1
    lower = np.tril(chol[:, :rank])
    if rank < d:
        tail = perm[rank:]
        schur = cov[np.ix_(tail, tail)] - lower[rank:] @ lower[rank:].T
        if float(np.abs(schur).max()) > PIVOTED_RESIDUAL * d * np.finfo(float).eps * scale:
            return None
    return lower, perm


def unpermuted(lower: np.ndarray, perm: np.ndarray) -> np.ndarray:
    """F with FFᵀ = cov from :func:`pivoted_cholesky`'s (L, perm): row k of L belongs to coordinate perm[k]."""
    out = np.empty_like(lower)
    out[perm] = lower
    return out


def trace_sqrt_congruence(lower: np.ndarray, cov: np.ndarray, rank: int, scale: float = 0.0):
    """Tr((Σ₁^½Σ₂Σ₁^½)^½) as Σ √λ over the eigenvalues λ of the r × r matrix LᵀΣL, where ``lower`` is the pivoted
    Cholesky factor of one covariance (:func:`pivoted_cholesky`: d × r, r = ``rank`` its numerical rank, padded with
    zero columns to a d × d lower-triangular matrix) and ``cov`` the other covariance in that factor's pivoted order:
    LᵀΣL and Σ^½LLᵀΣ^½ share their non-zero eigenvalues, so r need not be d. LAPACK ``sygst`` forms LᵀΣL
    (multiplications only, so the zero columns are harmless; about d³ flops, a quarter of two matrix products) and
    ``syevd`` takes its eigenvalues without vectors: one symmetric eigenvalue solve, the floor of an exact FD from
    covariances. None where the square roots would cost digits (the error bound :func:`sqrt_sum_error` above
    :data:`CONGRUENCE_RTOL` of the sum): eigenvalues near 0 carry round-off of ε × the largest, and their square
    roots lose about half the digits (≈ 1e-8 relative); those cases take the caller's exact route (the nuclear norm
    of the two factors' product, ≈ 1e-15).

    A factor is the same for every covariance it is paired with: the relevant side's factor of a leave-out serves
    every run (:func:`~.weighted.relevant_leave_outs`)."""
    from scipy.linalg import lapack
    if rank == 0:
        return 0.0
    with lapack_threads():
        # its lower triangle is read (a Fortran-ordered copy unless the caller hands one over)
        inner, info = lapack.dsygst(np.asfortranarray(cov), lower, itype=2, lower=1, overwrite_a=1)
        if info != 0:  # pragma: no cover - sygst only fails on bad arguments
            return None
        evals = scipy.linalg.eigh(inner[:rank, :rank], lower=True, eigvals_only=True, driver='evd',
                                  check_finite=False, overwrite_a=True)
    return sqrt_sum_if_exact(evals, scale)  # LᵀΣL is PSD when Σ is: a negative eigenvalue is Σ's


def sqrt_sum_if_exact(evals: np.ndarray, scale: float) -> Optional[float]:
    """Σ√λ over the eigenvalues of a congruence of two covariances (of round-off scale ``scale``), refusing a negative
    eigenvalue beyond round-off (:func:`check_psd`); None where the sum's error bound (:func:`sqrt_sum_error`) is above
    :data:`CONGRUENCE_RTOL` of it, or every eigenvalue is 0: the caller's exact route (a nuclear norm of factors)."""
    check_psd(evals, 'a covariance', scale)
    if not evals[-1] > 0:
        return None
    tr_sqrt = float(np.sqrt(np.clip(evals, 0.0, None)).sum())
    return tr_sqrt if sqrt_sum_error(evals) <= CONGRUENCE_RTOL * tr_sqrt else None


def padded_factor(lower: np.ndarray) -> np.ndarray:
    """A d × r pivoted Cholesky factor as the d × d lower-triangular Fortran-ordered matrix :func:`trace_sqrt_congruence`
    takes (zero columns beyond r)."""
    d, r = lower.shape
    out = np.zeros((d, d), order='F')
    out[:, :r] = lower
    return out


#: The eigenvalue route (:func:`trace_sqrt_congruence`) is taken when its error bound (:func:`sqrt_sum_error`) is at
#: most this fraction of the trace term; else the nuclear norm of the two factors' product. On the DL19 leave-outs the
#: bound stays below 1e-11 of FD (FD is about 1/10 of the trace term there) and the two routes differ by ≤ 1e-14 of FD.
CONGRUENCE_RTOL = 1e-11


def sqrt_sum_error(evals: np.ndarray) -> float:
    """A first-order bound on the error of Σ √λᵢ over eigenvalues from a backward-stable symmetric solver, whose
    every eigenvalue carries an absolute error of about δ = ε·λ_max: δ/√λ for an eigenvalue well above δ, √(2δ) for
    one within round-off of 0. Small where every eigenvalue is well above δ (λ_min ≥ 1e-8·λ_max bounds it by
    k·ε·1e4/2 relative), large where eigenvalues reach the round-off floor (singular directions), which the nuclear
    norm of the factors keeps exact."""
    delta = np.finfo(float).eps * float(evals[-1])
    lam = np.clip(evals, 0.0, None)
    near_zero = lam <= 2 * delta
    return float(np.sum(delta / np.sqrt(lam[~near_zero])) + np.sum(near_zero) * np.sqrt(2 * delta))
