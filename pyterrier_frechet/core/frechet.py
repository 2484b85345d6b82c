"""The numeric core: Gaussian statistics of two sets of vectors and the Fréchet distance between them.

Pure numpy/scipy, float64 throughout, no pandas. Everything the rest of the package reports as FD
comes out of :func:`frechet_distance`.

For two sets of vectors X (n₁×d) and Y (n₂×d) with means μ₁, μ₂ and unbiased (n−1) covariances
Σ₁, Σ₂, the Fréchet distance between the Gaussians fitted to them is::

    FD = ‖μ₁ − μ₂‖² + Tr Σ₁ + Tr Σ₂ − 2 · Tr((Σ₁^½ Σ₂ Σ₁^½)^½)

The last term is computed without ``scipy.linalg.sqrtm(Σ₁Σ₂)`` (the route of pytorch-fid, clean-fid
and frechet-ir), which is slow, returns complex numbers for a real answer and loses digits when the
covariances are singular — as they always are in IR, where a query set gives fewer vectors than the
encoder has dimensions. Exact, symmetric routes are used instead:

``"cross"``
    Tr((Σ₁^½Σ₂Σ₁^½)^½) = ‖X̃ Ỹᵀ‖_* / √((n₁−1)(n₂−1)), the nuclear norm (sum of singular values)
    of the small n₁×n₂ cross matrix of the centred data X̃, Ỹ — each first reduced to n−1 rows by a
    Householder reflection, which removes the exact zero singular value that centring creates. The sum
    is taken from the eigenvalues of the cross matrix's smaller Gram matrix when that is well
    conditioned, else from the singular values themselves (accurate to full relative precision), so
    singular covariances cost no digits.
``"qr"``
    The same nuclear norm after replacing each set that has more vectors than dimensions by the d×d
    triangular factor R of its centred data (X̃ = QR, so X̃ᵀX̃ = RᵀR and ‖X̃Ỹᵀ‖_* = ‖R₁R₂ᵀ‖_*).
    Cheaper when the sets are large; equally exact (the nuclear norm is taken as for "cross").
``"gram"``
    The ``"qr"`` route with R from the Cholesky factor of the Gram matrix X̃ᵀX̃ (one ``syrk``, about
    half the flops of a Householder QR, and BLAS-3 throughout) whenever that Gram matrix is well
    conditioned (LAPACK ``pocon`` reciprocal condition ≥ 1e-8, which bounds the cost in digits to
    about √cond · ε ≤ 1e-12 relative); a set whose Gram matrix is singular or ill-conditioned
    (duplicated rows, low rank) takes the Householder QR instead, so the route is never less exact.

``method="auto"`` picks the cheaper route from the shapes (see :func:`choose_method`): ``"cross"``
in the usual IR case, where a set has fewer vectors than dimensions, ``"gram"`` when both sets are large.
"""
from __future__ import annotations

from typing import Literal, NamedTuple, Tuple

import numpy as np
import scipy.linalg

from .kernel import (CONGRUENCE_RTOL, PSD_RTOL, FDTerms, check_psd, fd_terms, fd_value, moment_scale, nuclear_norm,
                     padded_factor, pivoted_cholesky, trace_sqrt_congruence, unpermuted, weighted_side)
from .threads import lapack_threads, single_threaded

__all__ = [
    'GaussianStats',
    'gaussian_stats',
    'frechet_distance',
    'frechet_distance_from_stats',
    'choose_method',
    'check_vectors',
    'check_pair',
    'ReducedSet',
    'reduce_set',
    'frechet_distance_reduced',
    'frechet_distance_weighted',
    'frechet_terms_reduced',
    'frechet_terms_weighted',
    'total_variance',
    'query_total_variances',
]

Method = Literal['auto', 'cross', 'qr', 'gram']

_GRAM_MIN_RCOND = 1e-8  # below this the Cholesky factor of X̃ᵀX̃ costs digits: use Householder QR
# reduce_set keeps a set deflated (n−1 rows) up to this many rows per dimension: a Householder QR to d rows
# (2nd² − 2d³/3 flops) only pays once it saves more than the longer cross matrix costs its SVD (4(n−d)d²),
# i.e. beyond n ≈ 5d/3
_DEFLATED_MAX_ROWS = 5 / 3


class GaussianStats(NamedTuple):
    """Mean, unbiased covariance and count of a set of vectors (float64)."""
    mean: np.ndarray
    cov: np.ndarray
    n: int


def check_vectors(x, name: str = 'vectors') -> np.ndarray:
    """Return ``x`` as a float64 C-contiguous 2-D array, or raise :class:`ValueError` naming the problem.

    A set must be 2-D (n×d), hold at least 2 vectors (a covariance needs n−1 ≥ 1), have d ≥ 1 and
    contain only finite numbers.
    """
    try:
        arr = np.asarray(x, dtype=np.float64)
    except (TypeError, ValueError) as ex:
        raise ValueError(f'{name}: cannot be read as an array of floats ({ex})') from ex
    if arr.ndim != 2:
        raise ValueError(f'{name}: expected a 2-D array (n vectors × d dimensions), got {arr.ndim}-D with shape {arr.shape}')
    n, d = arr.shape
    if n < 2:
        raise ValueError(f'{name}: a Gaussian needs at least 2 vectors, got {n}')
    if d < 1:
        raise ValueError(f'{name}: vectors have 0 dimensions')
    finite = np.isfinite(arr)
    if not finite.all():
        bad_rows = np.flatnonzero(~finite.all(axis=1))
        raise ValueError(f'{name}: {len(bad_rows)} vector(s) contain NaN or inf (first rows: {bad_rows[:5].tolist()})')
    return np.ascontiguousarray(arr)


def check_pair(x, y) -> Tuple[np.ndarray, np.ndarray]:
    """Both sets checked by :func:`check_vectors`, and of the same dimension."""
    x = check_vectors(x, 'first set')
    y = check_vectors(y, 'second set')
    if x.shape[1] != y.shape[1]:
        raise ValueError(f'dimension mismatch: the first set has {x.shape[1]}-d vectors, the second {y.shape[1]}-d')
    return x, y


def gaussian_stats(x) -> GaussianStats:
    """Mean and unbiased (n−1) covariance of the rows of ``x``, in float64."""
    x = check_vectors(x)
    mean = x.mean(axis=0)
    xc = x - mean
    cov = (xc.T @ xc) / (x.shape[0] - 1)
    return GaussianStats(mean, cov, x.shape[0])


def choose_method(n1: int, n2: int, d: int) -> Literal['cross', 'gram']:
    """The cheaper exact route for sets of n₁ and n₂ vectors of dimension d (a flop-count estimate).

    ``cross`` costs about n₁n₂d (the cross matrix) + min(n₁,n₂)²·max(n₁,n₂) + 2·min(n₁,n₂)³ (its
    smaller Gram matrix and that one's eigenvalues);
    ``gram`` costs nᵢd² + d³/3 for each set reduced to its d×d factor (nᵢ > d: Gram matrix and
    Cholesky), then the same as ``cross`` for the reduced sizes mᵢ = min(nᵢ, d). Ties go to ``cross``.
    """
    def svd_cost(a, b, k):  # the cross matrix, its smaller Gram matrix, and that one's eigenvalues
        return a * b * k + min(a, b) ** 2 * max(a, b) + 2 * min(a, b) ** 3
    cost_cross = svd_cost(n1, n2, d)
    cost_gram = sum(n * d * d + d ** 3 / 3 for n in (n1, n2) if n > d) + svd_cost(min(n1, d), min(n2, d), d)
    return 'cross' if cost_cross <= cost_gram else 'gram'


def _deflate(xc: np.ndarray) -> np.ndarray:
    """(n−1)×d rows F with FᵀF = X̃ᵀX̃, for centred data X̃ (n×d).

    Centring leaves X̃ of rank at most n−1 (its rows sum to 0), which would put an exact zero among the
    singular values of the cross matrix. The Householder reflection P that maps the unit all-ones
    direction u = 1/√n to e₁ is orthogonal, so (PX̃)ᵀ(PX̃) = X̃ᵀX̃; the first row of PX̃ is uᵀX̃ = 0 (up to
    round-off) and the other n−1 rows are F. O(nd).
    """
    n = xc.shape[0]
    root = np.sqrt(n)
    # v = u − e₁, vᵀv = 2(1 − 1/√n); rows 2..n of PX̃ = X̃ − v·(2/vᵀv)·vᵀX̃ are X̃ᵢ − (1/√n)·(2/vᵀv)·vᵀX̃
    vtx = xc.sum(axis=0) / root - xc[0]
    return xc[1:] - vtx * (1.0 / (root * (1.0 - 1.0 / root)))


def _factor(xc: np.ndarray, gram: bool = False) -> Tuple[np.ndarray, bool]:
    """A matrix F with FᵀF = X̃ᵀX̃ and at most d rows: X̃ deflated to n−1 rows when n ≤ d, else a d×d triangular R —
    with ``gram``, the Cholesky factor of X̃ᵀX̃ if it is well conditioned, otherwise (and without
    ``gram``) the R of a Householder QR decomposition. Also whether X̃ᵀX̃ was found ill-conditioned (the
    Cholesky was refused): a hint that a d-row product with F is ill-conditioned too (not a guarantee)."""
    if xc.shape[0] <= xc.shape[1]:
        return _deflate(xc), False
    if gram:
        r = _gram_cholesky(xc.T @ xc)  # numpy computes AᵀA with syrk (threaded: level 3)
        if r is not None:
            return r, False
        with lapack_threads():
            return np.linalg.qr(xc, mode='r'), True  # the economic d×d R (scipy's mode='r' would return n×d)
    with lapack_threads():
        return np.linalg.qr(xc, mode='r'), False


def _gram_cholesky(g: np.ndarray):
    """The upper Cholesky factor R (RᵀR = g) of a Gram matrix if it is well conditioned (LAPACK ``pocon``
    reciprocal condition ≥ :data:`_GRAM_MIN_RCOND`), else None (the caller takes a Householder QR)."""
    from scipy.linalg import lapack
    with lapack_threads():
        r, info = lapack.dpotrf(g, lower=0, clean=1)
        if info == 0:
            rcond, info = lapack.dpocon(r, float(np.abs(g).sum(axis=0).max()), uplo='U')
            if info == 0 and rcond >= _GRAM_MIN_RCOND:
                return r
    return None


@single_threaded
def _sqrt_psd(cov: np.ndarray, scale: float = 0.0) -> np.ndarray:
    """A factor B with B Bᵀ = cov, namely V Λ^½, with round-off negative eigenvalues clipped to 0."""
    evals, evecs = scipy.linalg.eigh(cov, check_finite=False)
    check_psd(evals, 'a covariance', scale)
    return evecs * np.sqrt(np.clip(evals, 0.0, None))


@single_threaded
def _trace_sqrt_factored(cov1: np.ndarray, cov2: np.ndarray, scale1: float, scale2: float):
    """Tr((Σ₁^½Σ₂Σ₁^½)^½) from pivoted Cholesky factors (:func:`pivoted_cholesky`), Σᵢ = FᵢFᵢᵀ with Fᵢ of
    d × rᵢ, rᵢ = rank(Σᵢ): the eigenvalues of the rₛ × rₛ matrix LₛᵀΣₒLₛ, with Lₛ the factor of lower rank and Σₒ the
    other covariance (:func:`trace_sqrt_congruence`; its non-zero eigenvalues are those of Σ₁^½Σ₂Σ₁^½, singular or
    not), where that route's error bound allows; else ‖F₁ᵀF₂‖_* (its singular values are the square roots of the same
    eigenvalues), exact to ≈ 1e-15 where the eigenvalues would cost digits. None if a covariance is not positive
    semi-definite beyond round-off: the caller takes the eigendecomposition route, which says so."""
    first = pivoted_cholesky(cov1, scale1)
    second = None if first is None else pivoted_cholesky(cov2, scale2)
    if second is None:
        return None
    (l1, perm1), (l2, perm2) = first, second
    if l1.shape[1] == 0 or l2.shape[1] == 0:
        return 0.0  # a zero covariance: Σ₁^½Σ₂Σ₁^½ = 0
    (lower, perm), other = (first, cov2) if l1.shape[1] <= l2.shape[1] else (second, cov1)
    tr_sqrt = trace_sqrt_congruence(padded_factor(lower), other[np.ix_(perm, perm)], lower.shape[1], scale1 * scale2)
    if tr_sqrt is not None:
        return tr_sqrt
    return nuclear_norm(unpermuted(l1, perm1).T @ unpermuted(l2, perm2))


def _trace_sqrt_cov(cov1: np.ndarray, cov2: np.ndarray, scale1: float = 0.0, scale2: float = 0.0) -> float:
    # Σ₁ = B₁B₁ᵀ and Σ₂ = B₂B₂ᵀ; the eigenvalues of Σ₁^½Σ₂Σ₁^½ are the squared singular values of B₁ᵀB₂,
    # so Tr((Σ₁^½Σ₂Σ₁^½)^½) is the nuclear norm of B₁ᵀB₂ — a symmetric route with no matrix square root.
    return nuclear_norm(_sqrt_psd(cov1, scale1).T @ _sqrt_psd(cov2, scale2))


def frechet_distance(x, y, method: Method = 'auto') -> float:
    """Fréchet distance between the Gaussians fitted to the rows of ``x`` and of ``y``.

    Args:
        x: first set of vectors, shape (n₁, d), n₁ ≥ 2.
        y: second set of vectors, shape (n₂, d), n₂ ≥ 2.
        method: ``"cross"`` (singular values of the n₁×n₂ centred cross matrix), ``"qr"`` (the same
            after reducing large sets to their d×d QR factor), ``"gram"`` (the same with the factor from
            a Cholesky of the Gram matrix when it is well conditioned, else QR) or ``"auto"`` (the
            cheaper for these shapes; see :func:`choose_method`). All give the same number up to round-off.

    Returns:
        FD = ‖μ₁−μ₂‖² + Tr Σ₁ + Tr Σ₂ − 2·Tr((Σ₁^½Σ₂Σ₁^½)^½) with unbiased (n−1) covariances, as a
        Python float. The result is real and finite by construction. It is ≥ 0 in exact arithmetic;
        a negative value can only come from floating-point round-off (it is then within a few ulps
        of the traces) and is clipped to 0 — the only clipping done.

    Raises:
        ValueError: a set is not 2-D, has fewer than 2 vectors, contains NaN/inf, or the two sets
            have different dimensions; or ``method`` is unknown.
    """
    x, y = check_pair(x, y)
    if method == 'auto':
        method = choose_method(x.shape[0], y.shape[0], x.shape[1])
    if method not in ('cross', 'qr', 'gram'):
        raise ValueError(f"method must be 'auto', 'cross', 'qr' or 'gram', got {method!r}")
    if _same_rows(x, y):
        return 0.0  # the same Gaussian: exactly 0, not the round-off of the trace terms (≈ 1e-16)
    scale = _power_of_two_scale(x, y)
    if scale != 1.0:  # products of entries beyond ~1e±75 overflow or underflow: compute on x/s, y/s, exactly
        return frechet_distance(x / scale, y / scale, method) * scale * scale
    n1, n2 = x.shape[0], y.shape[0]
    mu1, mu2 = x.mean(axis=0), y.mean(axis=0)
    if method == 'cross':
        (xc, ill1), (yc, ill2) = (_deflate(x - mu1), False), (_deflate(y - mu2), False)
    else:
        (xc, ill1), (yc, ill2) = _factor(x - mu1, method == 'gram'), _factor(y - mu2, method == 'gram')
    return frechet_distance_reduced(ReducedSet(mu1, xc, n1, ill1), ReducedSet(mu2, yc, n2, ill2))


_SAFE_RANGE = (2.0 ** -200, 2.0 ** 200)  # the Gram matrix of a cross matrix holds 4th powers of entries


def _power_of_two_scale(x: np.ndarray, y: np.ndarray) -> float:
    """1.0 if the largest |entry| is within a range whose 4th powers are safe in float64, else the power of two
    nearest it (division by a power of two is exact, and FD(x/s, y/s)·s² = FD(x, y))."""
    top = max(float(np.abs(x).max()), float(np.abs(y).max()))
    if top == 0.0 or _SAFE_RANGE[0] <= top <= _SAFE_RANGE[1]:
        return 1.0
    return float(2.0 ** np.round(np.log2(top)))


def _same_rows(x: np.ndarray, y: np.ndarray) -> bool:
    """Whether x and y hold the same rows, in any order (then FD is exactly 0)."""
    if x.shape != y.shape:
        return False
    if np.array_equal(x, y):
        return True
    # the same rows in another order have the same sorted first column: a cheap test before sorting whole rows
    # (a lexsort over d keys costs ~100 ms for 5000 vectors of 384 dimensions)
    if x.size == 0 or not np.array_equal(np.sort(x[:, 0]), np.sort(y[:, 0])):
        return x.size == 0
    return bool(np.array_equal(x[np.lexsort(x.T[::-1])], y[np.lexsort(y.T[::-1])]))


class ReducedSet(NamedTuple):
    """A set of vectors reduced once for FD: its mean, a factor F with FᵀF = X̃ᵀX̃ (n−1 rows, or d rows for a large
    set reduced by :func:`reduce_set`), its size n, and whether X̃ᵀX̃ is known to be ill-conditioned (a hint that
    spares the nuclear norm a fast path bound to be refused; never changes the value beyond round-off)."""
    mean: np.ndarray
    factor: np.ndarray
    n: int
    ill_conditioned: bool = False


def reduce_set(x) -> ReducedSet:
    """Reduce a set of vectors (n×d) to what FD needs from it, to compare it with many other sets: the
    factor is X̃ deflated to n−1 rows when n ≤ 5d/3 (no factorisation: cheaper than one below that size), else
    the d×d ``"gram"`` factor (Cholesky of X̃ᵀX̃, or Householder QR when that is ill conditioned).
    ``frechet_distance_reduced(reduce_set(x), reduce_set(y))`` equals ``frechet_distance(x, y)`` up to round-off.

    A large set (more than :data:`STREAM_ELEMENTS` numbers) in another precision than float64 (float32 vectors of a
    VectorStore), or larger than twice that, is reduced in chunks of rows (:func:`_reduce_streamed`): its mean, Gram
    matrix (and, when that is ill-conditioned, its R by a QR of the stacked chunk factors) are accumulated in float64
    without a float64 or centred copy of the whole set (1M × 384 float32 vectors would need 6 GB for the two)."""
    arr = x if isinstance(x, np.ndarray) else None
    if (arr is not None and arr.ndim == 2 and np.issubdtype(arr.dtype, np.floating) and arr.shape[1] >= 1
            and arr.shape[0] - 1 > _DEFLATED_MAX_ROWS * arr.shape[1]
            and (arr.size > 2 * STREAM_ELEMENTS or (arr.size > STREAM_ELEMENTS and arr.dtype != np.float64))):
        return _reduce_streamed(arr)
    x = check_vectors(x)
    mean = x.mean(axis=0)
    if x.shape[0] - 1 <= _DEFLATED_MAX_ROWS * x.shape[1]:
        return ReducedSet(mean, _deflate(x - mean), x.shape[0])
    factor, ill_conditioned = _factor(x - mean, gram=True)
    return ReducedSet(mean, factor, x.shape[0], ill_conditioned)


#: Sets of more numbers than this (2²² = 4M: 11k vectors at d = 384) in a precision other than float64, or of more than
#: twice as many, are reduced in chunks of rows of about this many numbers (:func:`_reduce_streamed`).
STREAM_ELEMENTS = 1 << 22


def _row_chunks(x: np.ndarray):
    """Consecutive chunks of rows of ``x`` as float64 arrays of about :data:`STREAM_ELEMENTS` numbers."""
    rows = max(1, STREAM_ELEMENTS // x.shape[1])
    for start in range(0, x.shape[0], rows):
        yield start, np.array(x[start:start + rows], dtype=np.float64)


def _reduce_streamed(x: np.ndarray) -> ReducedSet:
    """:func:`reduce_set` of a large set (n − 1 > 5d/3 rows), one chunk of rows at a time in float64: the mean (sum of
    the chunks' sums / n), the Gram matrix Σ (c − μ)ᵀ(c − μ) and its Cholesky factor, or — when that Gram matrix is
    ill-conditioned — the R of a Householder QR of the centred rows, accumulated as R ← qr([R; c − μ]) (the same
    RᵀR). Equal to the unchunked route up to round-off; the same checks and messages as :func:`check_vectors`."""
    n, d = x.shape
    total = np.zeros(d)
    bad_rows = []
    for start, chunk in _row_chunks(x):
        finite = np.isfinite(chunk).all(axis=1)
        if not finite.all():
            bad_rows.extend((start + np.flatnonzero(~finite)).tolist())
        total += chunk.sum(axis=0)
    if bad_rows:
        raise ValueError(f'vectors: {len(bad_rows)} vector(s) contain NaN or inf (first rows: {bad_rows[:5]})')
    mean = total / n
    g = np.zeros((d, d))
    for _, chunk in _row_chunks(x):
        chunk -= mean
        g += chunk.T @ chunk
    r = _gram_cholesky(g)
    if r is not None:
        return ReducedSet(mean, r, n, False)
    r = None
    with lapack_threads():
        for _, chunk in _row_chunks(x):
            chunk -= mean
            r = np.linalg.qr(chunk if r is None else np.vstack([r, chunk]), mode='r')
    return ReducedSet(mean, r, n, True)


def frechet_distance_reduced(a: ReducedSet, b: ReducedSet) -> float:
    """Fréchet distance between two sets given as :class:`ReducedSet` (see :func:`reduce_set`)."""
    return frechet_terms_reduced(a, b).fd


def frechet_terms_reduced(a: ReducedSet, b: ReducedSet) -> FDTerms:
    """FD's two terms (:class:`~.kernel.FDTerms`: ‖μ₁ − μ₂‖² and Tr Σ₁ + Tr Σ₂ − 2·Tr((Σ₁^½Σ₂Σ₁^½)^½)) between two sets
    given as :class:`ReducedSet`; their ``fd`` is :func:`frechet_distance_reduced`."""
    if a.mean.shape != b.mean.shape:
        raise ValueError(f'dimension mismatch: the first set has {a.mean.shape[0]}-d vectors, the second {b.mean.shape[0]}-d')
    if a.n == b.n and np.array_equal(a.mean, b.mean) and np.array_equal(a.factor, b.factor):
        return FDTerms(0.0, 0.0)  # one set reduced twice: exactly 0
    diff = a.mean - b.mean
    # traces from the same factors as the cross term (FᵀF = X̃ᵀX̃), so that identical sets cancel exactly
    tr1 = float(np.einsum('ij,ij->', a.factor, a.factor)) / (a.n - 1)
    tr2 = float(np.einsum('ij,ij->', b.factor, b.factor)) / (b.n - 1)
    cross = a.factor @ b.factor.T
    # a d-row cross matrix with an ill-conditioned d×d factor is (almost always) ill-conditioned: straight to its
    # singular values, which are exact either way; only the eigenvalue attempt, bound to be refused, is skipped
    full = min(cross.shape) == a.mean.shape[0]
    # accepted by the eigenvalues' error bound (≤ 1e-11 of the sum), the rule of the leave-outs and resamples
    # (trace_sqrt_congruence): real embeddings' small singular values sit far above round-off but below the ratio
    # rule's 1e-8 of the largest, which sent every DL19 set value to a singular value decomposition
    tr_sqrt = nuclear_norm(cross, try_fast=not (full and (a.ill_conditioned or b.ill_conditioned)),
                           rtol=CONGRUENCE_RTOL)
    return fd_terms(float(diff @ diff), tr1, tr2, tr_sqrt / np.sqrt((a.n - 1) * (b.n - 1)))


@single_threaded
def at_most_d_rows(factor: np.ndarray) -> np.ndarray:
    """A factor with the same FᵀF and at most d rows: the R of a QR decomposition when F has more rows than columns."""
    return np.linalg.qr(factor, mode='r') if factor.shape[0] > factor.shape[1] else factor


def fd_from_factors(mean_sq: float, f1: np.ndarray, f2: np.ndarray) -> float:
    """FD from ‖μ₁−μ₂‖² and factors with Σᵢ = FᵢᵀFᵢ: Tr Σ₁ + Tr Σ₂ from the factors, Tr((Σ₁^½Σ₂Σ₁^½)^½) = ‖F₁F₂ᵀ‖_*."""
    return terms_from_factors(mean_sq, f1, f2).fd


def terms_from_factors(mean_sq: float, f1: np.ndarray, f2: np.ndarray) -> FDTerms:
    """:func:`fd_from_factors`' two terms (:class:`~.kernel.FDTerms`)."""
    tr1, tr2 = float(np.einsum('ij,ij->', f1, f1)), float(np.einsum('ij,ij->', f2, f2))
    return fd_terms(mean_sq, tr1, tr2, nuclear_norm(f1 @ f2.T))


def _weighted_moments(x: np.ndarray, w, name: str):
    """(weights as float64, the weighted mean, the normaliser α = V₁ − V₂/V₁ of ``numpy.cov(x.T, aweights=w)``), or
    ValueError naming ``name`` where the weights are not one finite non-negative number per vector or leave no spread."""
    w = np.asarray(w, dtype=np.float64)
    if w.shape != (x.shape[0],) or not np.isfinite(w).all() or (w < 0).any():
        raise ValueError(f'{name}: weights must be {x.shape[0]} finite non-negative numbers, one per vector')
    side = weighted_side(len(w), float(w.sum()), float((w ** 2).sum()), w @ x)
    if side is None:
        raise ValueError(f'{name}: the weights leave no spread (a Gaussian needs at least 2 vectors of positive weight)')
    return w, side.mean, side.alpha


def _weighted_factor(x: np.ndarray, w: np.ndarray, name: str):
    """Mean and a factor F with FᵀF = the covariance ``numpy.cov(x.T, aweights=w)``, reduced to at most d rows."""
    w, mean, alpha = _weighted_moments(x, w, name)
    return mean, at_most_d_rows(np.sqrt(w / alpha)[:, None] * (x - mean))


def frechet_distance_weighted(x, x_weights, y, y_weights) -> float:
    """Fréchet distance between Gaussians fitted with per-vector weights: the mean Σwᵢxᵢ/Σwᵢ and the covariance
    exactly as ``numpy.cov(x.T, aweights=w)`` — Σwᵢ(xᵢ−μ)(xᵢ−μ)ᵀ / (V₁ − V₂/V₁), V₁ = Σwᵢ, V₂ = Σwᵢ² — on each side.

    The same exact route as :func:`frechet_distance` (no matrix square root): with Fᵢ = √(wᵢ/(V₁−V₂/V₁))·(xᵢ − μ),
    Σ = FᵀF and Tr((Σ₁^½Σ₂Σ₁^½)^½) = ‖F₁F₂ᵀ‖_*. Equal weights give :func:`frechet_distance` (V₁ − V₂/V₁ = n − 1
    for unit weights). ``FD(weighting='query')`` uses it with weight 1/n_q for each of query q's n_q documents.
    """
    return frechet_terms_weighted(x, x_weights, y, y_weights).fd


def frechet_terms_weighted(x, x_weights, y, y_weights) -> FDTerms:
    """:func:`frechet_distance_weighted`'s two terms (:class:`~.kernel.FDTerms`)."""
    x, y = check_pair(x, y)
    scale = _power_of_two_scale(x, y)
    if scale != 1.0:
        terms = frechet_terms_weighted(x / scale, x_weights, y / scale, y_weights)
        return FDTerms(terms.mean * scale * scale, terms.cov * scale * scale)
    mu1, f1 = _weighted_factor(x, x_weights, 'first set')
    mu2, f2 = _weighted_factor(y, y_weights, 'second set')
    diff = mu1 - mu2
    return terms_from_factors(float(diff @ diff), f1, f2)


def total_variance(x, weights=None) -> float:
    """Tr Σ of the rows of ``x``: the unbiased covariance's trace, Σ‖xᵢ − μ‖²/(n − 1), or with per-vector ``weights``
    that of ``numpy.cov(x.T, aweights=weights)`` (the weighted side of :func:`frechet_distance_weighted`). ValueError as
    :func:`check_vectors`, or where the weights leave no spread."""
    x = check_vectors(x)
    w, mean, alpha = _weighted_moments(x, np.ones(len(x)) if weights is None else weights, 'vectors')
    centred = x - mean
    return float(w @ np.einsum('ij,ij->i', centred, centred)) / alpha  # O(nd): no factor


def query_total_variances(x, qids) -> Tuple[np.ndarray, np.ndarray]:
    """(the distinct query ids, Tr Σ_q of each query's rows of ``x``): the unbiased covariance's trace,
    Σ_{i∈q}‖xᵢ − μ_q‖²/(n_q − 1), NaN for a query with fewer than 2 rows. O(nd)."""
    keys, inverse, counts = np.unique(np.asarray(qids), return_inverse=True, return_counts=True)
    order = np.argsort(inverse.ravel(), kind='stable')  # the rows grouped by query: sums by reduceat, not add.at
    x = np.asarray(x, dtype=np.float64)[order]
    starts = np.concatenate([[0], np.cumsum(counts)[:-1]])
    x -= np.repeat(np.add.reduceat(x, starts, axis=0) / counts[:, None], counts, axis=0)  # centred on each query
    scatter = np.add.reduceat(np.einsum('ij,ij->i', x, x), starts)
    with np.errstate(invalid='ignore', divide='ignore'):
        return keys, np.where(counts >= 2, scatter / (counts - 1), np.nan)


def frechet_distance_from_stats(stats1: GaussianStats, stats2: GaussianStats) -> float:
    """Fréchet distance between two Gaussians given by their means and covariances.

    Use this when only the statistics are at hand (e.g. accumulated in one pass over a large set, or
    re-weighted per bootstrap sample). The covariances must be real symmetric positive semi-definite d×d
    matrices: a complex input (with non-zero imaginary parts), an asymmetric matrix or one with an eigenvalue
    negative beyond round-off raises ``ValueError`` (never a silent 0.0 or dropped imaginary parts). The
    trace term:

    - each covariance is factored, Σᵢ = FᵢFᵢᵀ, by a rank-revealing pivoted Cholesky (LAPACK ``pstrf``, which stops at
      the numerical rank: Fᵢ is d × rank(Σᵢ), d × d where Σᵢ is positive definite) — singular is the bootstrap's
      usual case at d = 384, where a resample holds fewer distinct vectors than dimensions on one side or both; the
      factor is accepted when Σᵢ − FᵢFᵢᵀ is round-off (:data:`PIVOTED_RESIDUAL`);
    - the eigenvalues of the r × r matrix LᵀΣL, with L the factor of lower rank r and Σ the other covariance
      (``sygst`` + ``syevd`` without vectors: one symmetric eigenvalue solve; :func:`trace_sqrt_congruence`), where
      the error bound of their square roots' sum allows (:func:`sqrt_sum_error`, at most
      :data:`CONGRUENCE_RTOL` of it);
    - otherwise: the nuclear norm ‖F₁ᵀF₂‖_* (whose singular values are the square roots of those eigenvalues), which
      keeps null directions exactly null — O(d²·rank) per pivoted factor instead of a full eigendecomposition
      (``benchmarks/stats_route.py`` prints the times);
    - a covariance that neither factor reproduces (not positive semi-definite beyond round-off): B₁ᵀB₂ with
      Bᵢ = VᵢΛᵢ^½ from symmetric eigendecompositions, which raises on an eigenvalue negative beyond round-off.

    A covariance carries round-off of ε times its scale in every direction, and where it is singular the trace
    term is not differentiable, so any route from covariances can lose about half the digits there (≈ 1e-9
    relative; the pivoted route is usually exact to ≈ 1e-15, as it drops the round-off directions): prefer
    :func:`frechet_distance` on the vectors themselves, which is exact to ≈ 1e-12 in every case.
    """
    mu1, cov1, s1 = _check_stats(stats1, 'first')
    mu2, cov2, s2 = _check_stats(stats2, 'second')
    if mu1.shape != mu2.shape:
        raise ValueError(f'dimension mismatch: {mu1.shape[0]}-d vs {mu2.shape[0]}-d Gaussians')
    diff = mu1 - mu2
    tr_sqrt = _trace_sqrt_factored(cov1, cov2, s1, s2)
    if tr_sqrt is None:
        tr_sqrt = _trace_sqrt_cov(cov1, cov2, s1, s2)
    return fd_value(float(diff @ diff), float(np.trace(cov1)), float(np.trace(cov2)), tr_sqrt)


_SYMMETRY_RTOL = 1e-8  # |Σ − Σᵀ| beyond this (relative to max |Σ|) is not round-off: refuse


def _check_stats(stats: GaussianStats, name: str):
    raw_mu, raw_cov = np.asarray(stats.mean), np.asarray(stats.cov)
    for what, arr in (('mean', raw_mu), ('covariance', raw_cov)):
        if np.iscomplexobj(arr) and np.any(np.imag(arr) != 0):
            raise ValueError(f'{name} Gaussian: the {what} is complex with non-zero imaginary parts; FD is defined '
                             'for real Gaussians (a complex covariance usually comes from scipy.linalg.sqrtm)')
    try:
        mu = np.asarray(np.real(raw_mu), dtype=np.float64)
        cov = np.asarray(np.real(raw_cov), dtype=np.float64)
    except (TypeError, ValueError) as ex:
        raise ValueError(f'{name} Gaussian: mean or covariance cannot be read as floats ({ex})') from ex
    if mu.ndim != 1 or cov.shape != (mu.shape[0], mu.shape[0]):
        raise ValueError(f'{name} Gaussian: mean of shape {mu.shape} does not match covariance of shape {cov.shape}')
    if not (np.isfinite(mu).all() and np.isfinite(cov).all()):
        raise ValueError(f'{name} Gaussian: mean or covariance contains NaN or inf')
    asym = float(np.abs(cov - cov.T).max()) if cov.size else 0.0
    if asym > _SYMMETRY_RTOL * float(np.abs(cov).max()):
        raise ValueError(f'{name} Gaussian: the covariance is not symmetric (max |Σ − Σᵀ| = {asym:.3g}); '
                         'a covariance matrix must be symmetric positive semi-definite')
    scale = moment_scale(mu, cov)
    if np.any(np.diag(cov) < -PSD_RTOL * scale):
        raise ValueError(f'{name} Gaussian: the covariance has negative variances on its diagonal; it is not '
                         'positive semi-definite')
    return mu, cov, scale


