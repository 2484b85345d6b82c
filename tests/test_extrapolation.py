"""FD∞ (core/extrapolation.py): closer to the population FD on Gaussians with known parameters; the fit and its errors."""
import numpy as np
import pytest

from pyterrier_frechet.core.extrapolation import fd_infinity
from pyterrier_frechet.core.frechet import frechet_distance

def test_fd_infinity_is_closer_to_the_population_fd():
    # N(0, I) vs N(μ, s²I) in d = 8: population FD = ‖μ‖² + d(1 − s)².
    d, s = 8, 1.5
    mu = np.full(d, 0.3)
    population = float(mu @ mu + d * (1 - s) ** 2)
    rng = np.random.default_rng(2)
    plain, extrapolated = [], []
    for trial in range(20):
        x, y = rng.normal(size=(60, d)), mu + s * rng.normal(size=(40, d))
        plain.append(frechet_distance(x, y))
        extrapolated.append(fd_infinity(x, y, points=10, min_fraction=0.4, seed=trial).value)
    bias_plain = abs(np.mean(plain) - population)
    bias_inf = abs(np.mean(extrapolated) - population)
    assert np.mean(plain) > population  # FD is biased upward
    assert bias_inf < 0.5 * bias_plain


def test_fd_infinity_fit_and_errors():
    rng = np.random.default_rng(3)
    x, y = rng.normal(size=(50, 4)), rng.normal(size=(30, 4))
    ex = fd_infinity(x, y, points=5, min_fraction=0.5, seed=1)
    assert ex.inverse_fractions.tolist() == pytest.approx([1.0, 1.25, 1.5, 1.75, 2.0])
    assert ex.fds[0] == pytest.approx(frechet_distance(x, y), rel=1e-12)  # f = 1: the full sets
    slope, intercept = np.polyfit(ex.inverse_fractions, ex.fds, 1)
    assert (ex.value, ex.slope) == pytest.approx((intercept, slope), rel=1e-12)
    assert fd_infinity(x, y, seed=1).value == fd_infinity(x, y, seed=1).value
    with pytest.raises(ValueError, match='points'):
        fd_infinity(x, y, points=1)
    with pytest.raises(ValueError, match='min_fraction'):
        fd_infinity(x, y, min_fraction=1.0)
    with pytest.raises(ValueError, match='too small'):
        fd_infinity(x[:3], y, min_fraction=0.5)
