"""The numeric core against closed forms and an independent 50-digit reference (mpmath)."""
import numpy as np
import pytest
import scipy.stats

from conftest import reference_fd as mp_frechet
from pyterrier_frechet.core.frechet import (
    GaussianStats, choose_method, frechet_distance, frechet_distance_from_stats, gaussian_stats,
)

METHODS = ['cross', 'qr', 'gram', 'auto']


@pytest.mark.parametrize('n1,n2,d', [(5, 7, 3), (3, 4, 6), (10, 12, 4), (6, 9, 8), (2, 2, 5), (4, 30, 5), (40, 25, 3)])
@pytest.mark.parametrize('method', METHODS)
def test_matches_high_precision_reference(n1, n2, d, method):
    rng = np.random.default_rng(n1 * 100 + n2 * 10 + d)
    x = rng.normal(size=(n1, d)) * rng.uniform(0.5, 2, size=d)
    y = rng.normal(size=(n2, d)) @ rng.normal(size=(d, d)) * 0.7 + 0.3
    expected = mp_frechet(x, y, dps=50)
    assert frechet_distance(x, y, method=method) == pytest.approx(expected, rel=1e-10)


@pytest.mark.parametrize('method', METHODS)
def test_identical_sets_give_zero(method):
    x = np.random.default_rng(1).normal(size=(40, 16))
    assert frechet_distance(x, x.copy(), method=method) == pytest.approx(0.0, abs=1e-10)


@pytest.mark.parametrize('method', METHODS)
def test_shift_gives_squared_norm_of_shift(method):
    rng = np.random.default_rng(2)
    x = rng.normal(size=(25, 10))
    shift = rng.normal(size=10)
    assert frechet_distance(x, x + shift, method=method) == pytest.approx(float(shift @ shift), rel=1e-10)


@pytest.mark.parametrize('method', METHODS)
def test_diagonal_covariances_closed_form(method):
    # Axis-aligned sets with exactly known sample statistics: each column is ±s around its mean, so the
    # sample covariance is diagonal with variances s²·n/(n−1), and FD = ‖Δμ‖² + Σ(σ₁ᵢ − σ₂ᵢ)².
    n, d = 8, 4
    signs = np.array([[1, -1, 1, -1], [1, 1, -1, -1], [1, -1, -1, 1], [1, 1, 1, 1],
                      [-1, 1, -1, 1], [-1, -1, 1, 1], [-1, 1, 1, -1], [-1, -1, -1, -1]], dtype=float)
    assert np.allclose(signs.T @ signs, n * np.eye(d))  # orthogonal, zero-mean columns
    s1, s2 = np.array([1.0, 2.0, 0.5, 3.0]), np.array([2.0, 0.5, 0.5, 1.0])
    mu1, mu2 = np.array([0.0, 1.0, 2.0, -1.0]), np.array([1.0, 1.0, 0.0, 0.5])
    x, y = mu1 + signs * s1, mu2 + signs[::-1] * s2
    scale = np.sqrt(n / (n - 1))
    expected = float(((mu1 - mu2) ** 2).sum() + ((s1 * scale - s2 * scale) ** 2).sum())
    assert frechet_distance(x, y, method=method) == pytest.approx(expected, rel=1e-12)


@pytest.mark.parametrize('method', METHODS)
def test_invariant_under_shared_rotation(method):
    rng = np.random.default_rng(3)
    x, y = rng.normal(size=(30, 12)), rng.normal(size=(20, 12)) * 1.5 + 0.2
    q = scipy.stats.special_ortho_group.rvs(12, random_state=4)
    assert frechet_distance(x @ q, y @ q, method=method) == pytest.approx(frechet_distance(x, y, method=method), rel=1e-10)


def test_routes_agree_and_auto_picks_by_shape():
    assert choose_method(43, 430, 384) == 'cross'  # the usual IR case: fewer vectors than dimensions
    assert choose_method(5000, 5000, 384) == 'gram'
    assert choose_method(50, 5000, 768) == 'cross'
    rng = np.random.default_rng(5)
    x, y = rng.normal(size=(300, 20)), rng.normal(size=(200, 20)) + 0.1
    assert frechet_distance(x, y, 'cross') == pytest.approx(frechet_distance(x, y, 'qr'), rel=1e-12)
    assert frechet_distance(x, y, 'gram') == pytest.approx(frechet_distance(x, y, 'qr'), rel=1e-12)


@pytest.mark.parametrize('kind', ['duplicates', 'low_rank', 'ill_conditioned'])
def test_gram_route_falls_back_to_qr_where_cholesky_would_cost_digits(kind, monkeypatch):
    # n > d, but the Gram matrix X̃ᵀX̃ is singular (duplicated rows, low rank) or nearly so (one direction
    # 1e-7 times the others: condition 1e14). A Cholesky factor would lose digits there; the route
    # must notice and take the Householder QR, matching the 50-digit reference.
    rng = np.random.default_rng(6)
    if kind == 'duplicates':
        x = rng.normal(size=(4, 6))[rng.integers(0, 4, size=40)]
    elif kind == 'low_rank':
        x = rng.normal(size=(40, 2)) @ rng.normal(size=(2, 6))
    else:
        x = rng.normal(size=(40, 6)) * np.array([1, 1, 1, 1, 1, 1e-7])
    y = rng.normal(size=(30, 6)) * 0.8 + 0.2
    import numpy.linalg
    calls = []
    qr = numpy.linalg.qr
    monkeypatch.setattr(numpy.linalg, 'qr', lambda a, mode='reduced': calls.append(a.shape) or qr(a, mode=mode))
    fd = frechet_distance(x, y, 'gram')
    assert calls == [(40, 6)]  # the bad set went through QR; the well-conditioned one (30×6) did not
    assert fd == pytest.approx(mp_frechet(x, y, dps=50), rel=1e-10)


def test_symmetric_and_nonnegative():
    rng = np.random.default_rng(6)
    x, y = rng.normal(size=(9, 30)), rng.normal(size=(14, 30))
    assert frechet_distance(x, y) == pytest.approx(frechet_distance(y, x), rel=1e-12)
    assert frechet_distance(x, y) > 0


def test_from_stats_equals_from_vectors():
    rng = np.random.default_rng(7)
    x, y = rng.normal(size=(50, 6)), rng.normal(size=(60, 6)) * 2
    sx, sy = gaussian_stats(x), gaussian_stats(y)
    assert isinstance(sx, GaussianStats) and sx.n == 50
    np.testing.assert_allclose(sx.cov, np.cov(x, rowvar=False), rtol=1e-12)
    assert frechet_distance_from_stats(sx, sy) == pytest.approx(frechet_distance(x, y), rel=1e-10)


def test_float32_input_is_computed_in_float64():
    rng = np.random.default_rng(8)
    x, y = rng.normal(size=(20, 5)).astype(np.float32), rng.normal(size=(20, 5)).astype(np.float32)
    assert frechet_distance(x, y) == pytest.approx(mp_frechet(x.astype(np.float64), y.astype(np.float64)), rel=1e-10)


@pytest.mark.parametrize('x,y,message', [
    (np.zeros((1, 3)), np.zeros((5, 3)), 'at least 2 vectors'),
    (np.zeros((5, 3)), np.zeros((0, 3)), 'at least 2 vectors'),
    (np.zeros((5, 3)), np.zeros((5, 4)), 'dimension mismatch'),
    (np.array([[0.0, np.nan], [1.0, 2.0]]), np.zeros((3, 2)), 'NaN or inf'),
    (np.zeros((3, 2)), np.array([[0.0, np.inf], [1.0, 2.0]]), 'NaN or inf'),
    (np.zeros(5), np.zeros((5, 1)), '2-D'),
    (np.zeros((2, 2, 2)), np.zeros((5, 2)), '2-D'),
    (np.zeros((4, 0)), np.zeros((4, 0)), '0 dimensions'),
    ([['a', 'b'], ['c', 'd']], np.zeros((2, 2)), 'array of floats'),
])
def test_bad_input_raises_value_error(x, y, message):
    with pytest.raises(ValueError, match=message):
        frechet_distance(x, y)


def test_unknown_method():
    with pytest.raises(ValueError, match='method'):
        frechet_distance(np.eye(3), np.eye(3), method='sqrtm')


def test_from_stats_bad_input():
    good = GaussianStats(np.zeros(3), np.eye(3), 5)
    with pytest.raises(ValueError, match='does not match'):
        frechet_distance_from_stats(good, GaussianStats(np.zeros(3), np.eye(2), 5))
    with pytest.raises(ValueError, match='dimension mismatch'):
        frechet_distance_from_stats(good, GaussianStats(np.zeros(2), np.eye(2), 5))
    with pytest.raises(ValueError, match='NaN or inf'):
        frechet_distance_from_stats(good, GaussianStats(np.full(3, np.nan), np.eye(3), 5))


def test_from_stats_cholesky_and_singular_fallback():
    rng = np.random.default_rng(9)
    x, y = rng.normal(size=(40, 5)), rng.normal(size=(30, 5)) @ rng.normal(size=(5, 5))
    # Σ₁ positive definite: the Cholesky route
    assert frechet_distance_from_stats(gaussian_stats(x), gaussian_stats(y)) == pytest.approx(mp_frechet(x, y, dps=50), rel=1e-10)
    # Σ₁ singular (3 vectors in 5-d): Cholesky fails and the eigendecomposition route answers
    xs = x[:3]
    assert frechet_distance_from_stats(gaussian_stats(xs), gaussian_stats(y)) == pytest.approx(mp_frechet(xs, y, dps=50), rel=1e-8)


@pytest.mark.parametrize('n2', [5, 9, 40])
def test_an_ill_conditioned_large_set_goes_straight_to_singular_values(n2):
    # a large set whose covariance is singular (a coordinate repeated, as MiniLM's near-null directions) is flagged
    # when reduced; against a set with ≥ d rows the cross matrix is then singular and its singular values are taken
    # without the eigenvalue attempt; against a small set the fast path stays allowed. Same value as 50-digit arithmetic.
    rng = np.random.default_rng(n2)
    d = 6
    x = rng.normal(size=(40, d))
    x[:, -1] = x[:, 0]
    y = rng.normal(size=(n2, d)) + 0.3
    from pyterrier_frechet import frechet_distance_reduced, reduce_set
    a = reduce_set(x)
    assert a.ill_conditioned and a.factor.shape == (d, d)
    assert not reduce_set(y).ill_conditioned
    assert frechet_distance_reduced(a, reduce_set(y)) == pytest.approx(mp_frechet(x, y, dps=50), rel=1e-10, abs=1e-12)


@pytest.mark.parametrize('n1,n2,d', [(5, 7, 3), (40, 30, 6), (4, 30, 5), (12, 9, 20), (60, 8, 10)])
def test_reduced_sets_equal_the_direct_route(n1, n2, d):
    # a set reduced once (as the provider does for the relevant set) gives the same FD as the direct call,
    # including a rank-deficient large set (duplicated rows: the Gram factor falls back to QR)
    rng = np.random.default_rng(n1 + n2 + d)
    x = rng.normal(size=(max(2, n1 // 4), d))[rng.integers(0, max(2, n1 // 4), size=n1)] + 0.5
    y = rng.normal(size=(n2, d)) * rng.uniform(0.5, 2, size=d)
    from pyterrier_frechet import frechet_distance_reduced, reduce_set
    got = frechet_distance_reduced(reduce_set(x), reduce_set(y))
    assert got == pytest.approx(mp_frechet(x, y, dps=50), rel=1e-10, abs=1e-12)
    # deflated (n−1 rows) up to 5d/3 rows, else the d×d factor; flagged ill-conditioned when its Cholesky was refused
    reduced = reduce_set(x)
    assert reduced.factor.shape[0] == (n1 - 1 if n1 - 1 <= 5 * d / 3 else d)
    assert reduced.ill_conditioned == (reduced.factor.shape[0] == d and n1 - 1 > 5 * d / 3
                                       and np.linalg.matrix_rank(x - x.mean(0)) < d)
    with pytest.raises(ValueError, match='dimension mismatch'):
        frechet_distance_reduced(reduce_set(x), reduce_set(np.ones((3, d + 1)) * np.arange(3)[:, None]))


def _stats_cases():
    """(x, y) pairs of every rank pattern the bootstrap and the jackknife produce: both covariances singular (fewer
    distinct vectors than dimensions, rows repeated as a resample repeats a query), one singular, both positive
    definite, and positive definite but ill-conditioned (two nearly equal coordinates)."""
    rng = np.random.default_rng(21)
    for trial in range(4):
        d = 7
        yield rng.normal(size=(4, d)), rng.normal(size=(5, d)) + 0.5, 1e-12
        x = rng.normal(size=(3, d))
        yield np.vstack([x, x[:2], x[:1]]), rng.normal(size=(6, d)) * 2, 1e-12  # repeated rows: rank 2 from 6 rows
        yield rng.normal(size=(4, d)), rng.normal(size=(30, d)) @ rng.normal(size=(d, d)), 1e-12
        yield rng.normal(size=(25, d)), rng.normal(size=(4, d)), 1e-12
        yield rng.normal(size=(25, d)), rng.normal(size=(30, d)) + 1, 1e-12
        x = rng.normal(size=(20, d))
        x[:, 1] = x[:, 0] + 1e-7 * rng.normal(size=20)  # an eigenvalue ≈ 1e-14 × the largest
        yield x, rng.normal(size=(5, d)), 1e-12
        # against a full-rank Σ₂ that eigenvalue counts: its square root (1e-7) carries the covariance's own
        # round-off (ε / 1e-14 ≈ 2% of it), ~1e-10 of FD, however the trace term is then taken
        yield x, rng.normal(size=(40, d)), 1e-9


@pytest.mark.parametrize('case', range(28))
def test_from_stats_is_exact_for_every_rank_pattern(case):
    """Differential test against 40-digit arithmetic: FD from statistics to 1e-12 relative whether the covariances
    are singular, positive definite or ill-conditioned (1e-9 where the data's own round-off sets the limit). (Taking square roots of eigenvalues of a singular Σ costs
    about half the digits, ~1e-8; such cases go through the rank-revealing pivoted Cholesky, which does not.)"""
    x, y, rel = list(_stats_cases())[case]
    assert frechet_distance_from_stats(gaussian_stats(x), gaussian_stats(y)) == pytest.approx(mp_frechet(x, y, dps=40), rel=rel)
    assert frechet_distance_from_stats(gaussian_stats(y), gaussian_stats(x)) == pytest.approx(mp_frechet(x, y, dps=40), rel=rel)


def test_identical_singular_gaussians_are_at_distance_zero():
    # a leave-out whose relevant and retrieved sets are the same vectors: FD 0 to round-off of the traces, where the
    # eigendecomposition route left ≈ 1e-8 × the trace (enough to make a log-scale jackknife look defined)
    x = np.random.default_rng(3).normal(size=(3, 6))
    s = gaussian_stats(x)
    assert frechet_distance_from_stats(s, s) <= 1e-14 * np.trace(s.cov)


def test_pivoted_cholesky_reproduces_a_semidefinite_covariance_and_refuses_an_indefinite_one():
    from pyterrier_frechet.core.kernel import pivoted_cholesky, unpermuted
    x = np.random.default_rng(4).normal(size=(4, 9))
    cov = np.cov(x, rowvar=False)
    lower, perm = pivoted_cholesky(cov, float(np.abs(cov).max()))
    assert lower.shape == (9, 3) and np.all(np.triu(lower, 1) == 0)  # rank n − 1, lower trapezoidal
    np.testing.assert_allclose(lower @ lower.T, cov[np.ix_(perm, perm)], atol=1e-14 * np.abs(cov).max())
    f = unpermuted(lower, perm)
    np.testing.assert_allclose(f @ f.T, cov, atol=1e-14 * np.abs(cov).max())
    assert pivoted_cholesky(np.array([[1.0, 2.0], [2.0, 1.0]]), 2.0) is None  # eigenvalues 3 and −1
    assert pivoted_cholesky(np.array([[0.0, 1.0], [1.0, 0.0]]), 1.0) is None  # zero diagonal, eigenvalues ±1
    assert pivoted_cholesky(np.diag([4.0, 1.0, 0.0]), 4.0)[0].shape == (3, 2)
    with pytest.raises(ValueError, match='not positive semi-definite'):
        frechet_distance_from_stats(GaussianStats(np.zeros(2), np.array([[1.0, 2.0], [2.0, 1.0]]), 5),
                                    GaussianStats(np.zeros(2), np.array([[0.0, 1.0], [1.0, 0.0]]), 5))


def test_from_stats_with_zero_covariances_is_the_closed_form():
    # rank 0 (every vector the same): the pivoted factor has no column, Tr((Σ₁^½Σ₂Σ₁^½)^½) = 0 exactly
    rng = np.random.default_rng(8)
    mu1, mu2 = rng.normal(size=5), rng.normal(size=5)
    a = rng.normal(size=(5, 5))
    cov2 = a @ a.T
    zero = np.zeros((5, 5))
    assert frechet_distance_from_stats(GaussianStats(mu1, zero, 3), GaussianStats(mu2, zero, 3)) == pytest.approx(
        float((mu1 - mu2) @ (mu1 - mu2)), rel=1e-15)
    expected = float((mu1 - mu2) @ (mu1 - mu2) + np.trace(cov2))
    assert frechet_distance_from_stats(GaussianStats(mu1, zero, 3), GaussianStats(mu2, cov2, 9)) == pytest.approx(expected, rel=1e-14)
    assert frechet_distance_from_stats(GaussianStats(mu2, cov2, 9), GaussianStats(mu1, zero, 3)) == pytest.approx(expected, rel=1e-14)


def test_congruence_with_a_rank_deficient_factor_is_the_trace_term_or_refuses():
    """The eigenvalue route of the trace term (issue 50: one symmetric eigenvalue solve): with the pivoted factor L of
    a singular Σ₁ (d × r, r < d), the eigenvalues of LᵀΣ₂L give Tr((Σ₁^½Σ₂Σ₁^½)^½) against 40-digit arithmetic;
    where Σ₂ is singular inside Σ₁'s range (eigenvalues at the round-off floor, whose square roots cost half the
    digits) the route refuses (None), and the public function still gives the exact value (the factors' nuclear
    norm)."""
    from pyterrier_frechet.core.kernel import moment_scale, padded_factor, pivoted_cholesky, trace_sqrt_congruence
    rng = np.random.default_rng(5)
    d = 8
    basis = np.linalg.qr(rng.normal(size=(d, 6)))[0]  # both sets in one 6-dimensional subspace
    x = rng.normal(size=(30, 6)) @ basis.T
    y = rng.normal(size=(25, 6)) @ basis.T + 0.3
    sx, sy = gaussian_stats(x), gaussian_stats(y)
    lower, perm = pivoted_cholesky(sx.cov, moment_scale(sx.mean, sx.cov))
    assert lower.shape == (d, 6)
    tr = trace_sqrt_congruence(padded_factor(lower), sy.cov[np.ix_(perm, perm)], 6)
    want = (np.trace(sx.cov) + np.trace(sy.cov) + float((sx.mean - sy.mean) @ (sx.mean - sy.mean))
            - mp_frechet(x, y, dps=40)) / 2
    assert tr == pytest.approx(want, rel=1e-12)
    z = rng.normal(size=(3, 6)) @ basis.T  # rank 2 inside the 6-dimensional range
    thin = gaussian_stats(z)
    assert trace_sqrt_congruence(padded_factor(lower), thin.cov[np.ix_(perm, perm)], 6) is None
    assert frechet_distance_from_stats(sx, thin) == pytest.approx(mp_frechet(x, z, dps=40), rel=1e-12)


def test_total_variance_is_the_trace_of_numpys_covariance():
    from pyterrier_frechet.core.frechet import total_variance
    rng = np.random.default_rng(4)
    x = rng.normal(size=(30, 7)) * np.arange(1, 8)
    w = rng.random(30)
    assert total_variance(x) == pytest.approx(np.trace(np.cov(x.T)), rel=1e-13)
    assert total_variance(x, w) == pytest.approx(np.trace(np.cov(x.T, aweights=w)), rel=1e-13)
    with pytest.raises(ValueError, match='no spread'):
        total_variance(x, np.eye(30)[0])
