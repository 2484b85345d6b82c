"""KID, FD∞ and k-NN precision/recall: closed forms, brute-force references, and Gaussians with known parameters."""
import numpy as np
import pytest

from pyterrier_frechet.core.extrapolation import fd_infinity
from pyterrier_frechet.core.frechet import frechet_distance
from pyterrier_frechet.core.kid import kernel_distance
from pyterrier_frechet.core.knn import knn_precision_recall


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


def test_knn_precision_recall_by_hand():
    # relevant on a line at 0, 1, 2, 3 (k = 1: every radius is 1); retrieved at 0.5, 2.9 and 10.
    rel = np.array([[0.0], [1.0], [2.0], [3.0]])
    ret = np.array([[0.5], [2.9], [10.0]])
    # precision: 0.5 and 2.9 lie within 1 of a relevant point, 10 does not → 2/3.
    # retrieved radii (k = 1): 0.5 → 2.4, 2.9 → 2.4, 10 → 7.1. recall: 0 (0.5 from 0.5), 1, 2, 3 all covered → 1.
    pr = knn_precision_recall(rel, ret, k=1)
    assert pr.precision == pytest.approx(2 / 3) and pr.recall == 1.0
    # k = 2: relevant radii 2, 1, 1, 2 (to the 2nd neighbour); 10 is 7 from 3 → still outside: precision 2/3.
    # retrieved radii: 0.5 → 9.5 (to 10), 2.9 → 7.1, 10 → 9.5: everything covered → recall 1.
    assert knn_precision_recall(rel, ret, k=2) == pytest.approx((2 / 3, 1.0))


def test_knn_precision_recall_against_brute_force():
    rng = np.random.default_rng(4)
    rel, ret = rng.normal(size=(40, 3)), rng.normal(loc=0.7, size=(25, 3))
    k = 3

    def radius(s, i):
        return sorted(np.linalg.norm(s[i] - s[j]) for j in range(len(s)) if j != i)[k - 1]

    rr = [radius(rel, i) for i in range(len(rel))]
    gr = [radius(ret, i) for i in range(len(ret))]
    precision = np.mean([any(np.linalg.norm(g - rel[i]) <= rr[i] for i in range(len(rel))) for g in ret])
    recall = np.mean([any(np.linalg.norm(r - ret[i]) <= gr[i] for i in range(len(ret))) for r in rel])
    assert knn_precision_recall(rel, ret, k=k) == pytest.approx((precision, recall), abs=1e-15)
    with pytest.raises(ValueError, match='k = 25'):
        knn_precision_recall(rel, ret, k=25)
