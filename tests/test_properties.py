"""Property-based tests of the numeric core (hypothesis).

CI runs the seeded ``ci`` profile (150 derandomized cases per property). The thorough run, reported in
the README, is::

    HYPOTHESIS_PROFILE=thorough python -m pytest tests/test_properties.py -q --hypothesis-show-statistics

Shapes: n from 2 to 500 per set, d from 1 to 768 (both n < d and n > d), scales 1e-6 to 1e6,
rank-deficient sets and duplicated rows. Tolerance (documented in the README): an absolute error of at
most 1e-9 · (Tr Σ₁ + Tr Σ₂ + ‖μ₁ − μ₂‖²), the size of the terms FD is computed from.
"""
import os

import numpy as np
from hypothesis import HealthCheck, given, settings, strategies as st

from conftest import reference_fd
from pyterrier_frechet.core.frechet import frechet_distance, gaussian_stats

settings.register_profile('ci', max_examples=150, derandomize=True, deadline=None,
                          suppress_health_check=[HealthCheck.too_slow])
settings.register_profile('thorough', max_examples=10_000, deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile(os.environ.get('HYPOTHESIS_PROFILE', 'ci'))

SIZES = st.one_of(st.integers(2, 12), st.integers(13, 80), st.sampled_from([200, 500]))
DIMS = st.one_of(st.integers(1, 6), st.integers(7, 64), st.sampled_from([128, 384, 768]))


@st.composite
def vector_set(draw, n, d, seed):
    """n vectors in d dimensions at a drawn scale, optionally of low rank or with duplicated rows."""
    rng = np.random.default_rng(seed)
    scale = 10.0 ** draw(st.integers(-6, 6))
    kind = draw(st.sampled_from(['full', 'low_rank', 'duplicates']))
    if kind == 'low_rank':
        rank = draw(st.integers(1, max(1, min(n, d) - 1)))
        x = rng.normal(size=(n, rank)) @ rng.normal(size=(rank, d))
    elif kind == 'duplicates':
        base = rng.normal(size=(max(1, n // 3), d))
        x = base[rng.integers(0, len(base), size=n)]
    else:
        x = rng.normal(size=(n, d)) * rng.uniform(0.2, 3.0, size=d)
    return scale * (x + rng.normal(size=d))  # the mean is of the same order as the spread


@st.composite
def pair(draw):
    d = draw(DIMS)
    seed = draw(st.integers(0, 2 ** 32 - 1))
    x = draw(vector_set(draw(SIZES), d, seed))
    y = draw(vector_set(draw(SIZES), d, seed + 1))
    return x, y


def tolerance(x, y) -> float:
    s1, s2 = gaussian_stats(x), gaussian_stats(y)
    diff = s1.mean - s2.mean
    return 1e-9 * (np.trace(s1.cov) + np.trace(s2.cov) + diff @ diff) + 1e-300


@given(pair())
def test_finite_nonnegative_symmetric_and_routes_agree(xy):
    x, y = xy
    tol = tolerance(x, y)
    fd = frechet_distance(x, y)
    assert np.isfinite(fd) and fd >= 0
    assert abs(frechet_distance(y, x) - fd) <= tol
    assert abs(frechet_distance(x, y, 'cross') - frechet_distance(x, y, 'qr')) <= tol
    assert abs(frechet_distance(x, y, 'gram') - frechet_distance(x, y, 'qr')) <= tol


@given(pair())
def test_zero_for_identical_sets(xy):
    x, _ = xy
    assert frechet_distance(x, x.copy()) <= tolerance(x, x)


@given(st.integers(1, 6), st.integers(2, 40), st.integers(2, 40), st.integers(0, 2 ** 32 - 1), st.data())
def test_equals_high_precision_reference(d, n1, n2, seed, data):
    x = data.draw(vector_set(n1, d, seed))
    y = data.draw(vector_set(n2, d, seed + 1))
    assert abs(frechet_distance(x, y) - reference_fd(x, y, dps=40)) <= tolerance(x, y)
