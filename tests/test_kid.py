"""KID (core/kid.py): the unbiased MMD² against plain loops over pairs, a hand-computed case, one and two distributions."""
import numpy as np
import pytest

from pyterrier_frechet.core.kid import kernel_distance


def _kid_loops(x, y, degree=3):
    """The unbiased MMD² written as plain loops over pairs."""
    d = x.shape[1]
    k = lambda a, b: (float(np.dot(a, b)) / d + 1) ** degree
    m, n = len(x), len(y)
    kxx = sum(k(x[i], x[j]) for i in range(m) for j in range(m) if i != j) / (m * (m - 1))
    kyy = sum(k(y[i], y[j]) for i in range(n) for j in range(n) if i != j) / (n * (n - 1))
    kxy = sum(k(x[i], y[j]) for i in range(m) for j in range(n)) / (m * n)
    return kxx + kyy - 2 * kxy


def test_kid_equals_the_pairwise_loops():
    rng = np.random.default_rng(0)
    x, y = rng.normal(size=(7, 3)), rng.normal(loc=0.5, size=(5, 3))
    assert kernel_distance(x, y) == pytest.approx(_kid_loops(x, y), rel=1e-12)
    assert kernel_distance(x, y, degree=1) == pytest.approx(_kid_loops(x, y, 1), rel=1e-12)


def test_kid_by_hand():
    # 1-d, degree 1: k(a, b) = ab + 1. x = {0, 2}, y = {1, 3}: Kxx = 1, Kyy = 4, mean Kxy = (1 + 1 + 3 + 7)/4 = 3
    # → KID = 1 + 4 − 6 = −1 (the unbiased estimate can be negative).
    assert kernel_distance([[0.0], [2.0]], [[1.0], [3.0]], degree=1) == pytest.approx(-1.0, abs=1e-15)


def test_kid_is_near_zero_for_one_distribution_and_positive_for_two():
    rng = np.random.default_rng(1)
    same = [kernel_distance(rng.normal(size=(150, 8)), rng.normal(size=(60, 8))) for _ in range(30)]
    other = [kernel_distance(rng.normal(size=(150, 8)), rng.normal(loc=0.4, size=(60, 8))) for _ in range(30)]
    # unbiased: the mean over draws is within 3 standard errors of 0, and well below the shifted case
    assert abs(np.mean(same)) < 3 * np.std(same) / np.sqrt(len(same))
    assert np.mean(other) > 10 * np.std(same) / np.sqrt(len(same)) and min(other) > 0
