"""The shared linear-algebra kernel (core/kernel.py) against closed forms and independent references (scipy's SVD,
numpy.cov, the trace of scipy's sqrtm)."""
import numpy as np
import pytest
import scipy.linalg

from pyterrier_frechet.core import kernel


def test_fd_terms_of_diagonal_gaussians_are_the_closed_forms():
    # Σ₁ = diag(a), Σ₂ = diag(b): Tr(Σ₁ + Σ₂ − 2(Σ₁^½Σ₂Σ₁^½)^½) = Σ(√a − √b)²
    a, b = np.array([4.0, 1.0, 0.25]), np.array([1.0, 9.0, 0.25])
    mu1, mu2 = np.array([1.0, 2.0, 3.0]), np.array([0.0, 2.0, 5.0])
    tr_sqrt = float(np.sum(np.sqrt(a * b)))
    terms = kernel.fd_terms(float((mu1 - mu2) @ (mu1 - mu2)), a.sum(), b.sum(), tr_sqrt)
    assert terms.mean == 5.0
    assert terms.cov == pytest.approx(float(np.sum((np.sqrt(a) - np.sqrt(b)) ** 2)), rel=1e-15)  # 1 + 4 + 0
    assert terms.fd == pytest.approx(10.0, rel=1e-15)
    assert kernel.fd_value(5.0, a.sum(), b.sum(), tr_sqrt) == terms.fd


def test_fd_value_clips_round_off_only():
    assert kernel.fd_value(0.0, 1.0, 1.0, 1.0 + 1e-16) == 0.0
    assert kernel.FDTerms(0.0, -1e-17).fd == 0.0
    assert kernel.FDTerms(0.5, -1e-17).fd == 0.5 - 1e-17


@pytest.mark.parametrize('weights', [np.ones(7), np.array([1, 2, 0.5, 3, 1, 1, 4.0]), np.full(7, 1 / 7)])
def test_spread_normaliser_is_numpys_aweights_normaliser(weights):
    # numpy.cov(x, aweights=w) divides by V₁ − V₂/V₁: recover it from a covariance formed by hand
    rng = np.random.default_rng(0)
    x = rng.normal(size=(7, 3))
    v1, v2 = weights.sum(), (weights ** 2).sum()
    alpha = kernel.spread_normaliser(len(weights), v1, v2)
    mean = weights @ x / v1
    scatter = (weights[:, None] * (x - mean)).T @ (x - mean)
    np.testing.assert_allclose(scatter / alpha, np.cov(x.T, aweights=weights), rtol=1e-13)


def test_spread_normaliser_refuses_a_side_without_spread():
    assert kernel.spread_normaliser(5, 5.0, 5.0) == 4.0  # five unit weights: n − 1
    assert kernel.spread_normaliser(1, 1.0, 1.0) is None  # one vector
    assert kernel.spread_normaliser(3, 0.0, 0.0) is None  # no weight
    assert kernel.spread_normaliser(3, 2.0, 4.0) is None  # all the weight on one vector: V₁ − V₂/V₁ = 0


@pytest.mark.parametrize('rank', [6, 3])
def test_nuclear_norm_equals_the_singular_values_sum_on_both_paths(rank):
    rng = np.random.default_rng(rank)
    m = rng.normal(size=(6, rank)) @ rng.normal(size=(rank, 9))  # rank 3: the fast path is refused
    expected = float(np.linalg.svd(m, compute_uv=False).sum())
    assert kernel.nuclear_norm(m) == pytest.approx(expected, rel=1e-12)
    assert kernel.nuclear_norm(m, try_fast=False) == pytest.approx(expected, rel=1e-13)
    assert kernel.nuclear_norm(m, rtol=kernel.CONGRUENCE_RTOL) == pytest.approx(expected, rel=1e-11)


def test_trace_sqrt_congruence_equals_the_trace_of_sqrtm():
    rng = np.random.default_rng(3)
    a, b = rng.normal(size=(12, 5)), rng.normal(size=(9, 5))
    s1, s2 = np.cov(a.T), np.cov(b.T)
    root = scipy.linalg.sqrtm(s1)
    expected = float(np.trace(scipy.linalg.sqrtm(root @ s2 @ root)).real)
    lower, perm = kernel.pivoted_cholesky(s1, kernel.moment_scale(a.mean(0), s1))
    got = kernel.trace_sqrt_congruence(kernel.padded_factor(lower), s2[np.ix_(perm, perm)], lower.shape[1])
    assert got == pytest.approx(expected, rel=1e-10)
    np.testing.assert_allclose(kernel.unpermuted(lower, perm) @ kernel.unpermuted(lower, perm).T, s1, atol=1e-14)


def test_sqrt_sum_error_is_small_for_separated_and_large_for_null_eigenvalues():
    separated = np.array([0.5, 1.0, 2.0])
    assert kernel.sqrt_sum_error(separated) < 1e-14
    with_null = np.array([1e-18, 1.0, 2.0])  # an eigenvalue at round-off: its square root carries √(2ε·λ_max)
    assert kernel.sqrt_sum_error(with_null) == pytest.approx(np.sqrt(2 * np.finfo(float).eps * 2.0)
                                                               + np.finfo(float).eps * 2 * (1 + 1 / np.sqrt(2)), rel=1e-6)


def test_check_psd_refuses_beyond_round_off_only():
    kernel.check_psd(np.array([-1e-12, 1.0]), 'x', 1.0)
    with pytest.raises(ValueError, match='not positive semi-definite'):
        kernel.check_psd(np.array([-1e-3, 1.0]), 'a covariance', 1.0)


def test_moment_scale_is_the_largest_second_moment():
    assert kernel.moment_scale(np.array([3.0, -1.0]), np.array([[2.0, 0.1], [0.1, 1.0]])) == 9.0
    assert kernel.moment_scale(np.array([0.1]), np.array([[-5.0]])) == 5.0
    assert kernel.moment_scale(np.zeros(0), np.zeros((0, 0))) == np.finfo(float).tiny
