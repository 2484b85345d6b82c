"""Re-weighted Gaussians and leave-one-query-out by downdating (core/weighted.py): equal to a plain numpy loop that
gathers every other query's vectors again, and to the units × queries weight-matrix path (``weighted_fds`` /
``conditional_fds`` with one row of 0/1 weights per left-out query), written here; seeded jackknife groups."""
import numpy as np
import pytest

from conftest import reference_fd_eigh
from pyterrier_frechet.core.conditional import conditional_fds, conditional_frechet_distance, conditional_leave_out
from pyterrier_frechet.core.weighted import (QueryStats, jackknife_groups, leave_out_fds, per_query_weighted,
                                             weighted_fds)


def _weights(units, groups, n_groups):
    """The old path's weights: one row per group, the units weighing 1 and the group 0."""
    w = np.tile(np.asarray(units, dtype=np.float64), (n_groups, 1))
    for g in range(n_groups):
        w[g, groups == g] = 0.0
    return w


def _synthetic(seed=0, n_queries=15, d=6):
    rng = np.random.default_rng(seed)
    rel_q = np.repeat(np.arange(n_queries), rng.integers(1, 7, n_queries))
    ret_q = np.repeat(np.arange(n_queries), 5)
    rel = rng.normal(size=(len(rel_q), d)) @ rng.normal(size=(d, d))
    ret = rng.normal(size=(len(ret_q), d)) + 0.4
    return rel, rel_q, ret, ret_q


def _loop_weighted_fd(x, qx, y, qy, keep):
    """FD(weighting='query') of the queries in ``keep`` from first principles: each query weighs 1 per side."""
    def stats(a, qa):
        a, qa = a[np.isin(qa, keep)], qa[np.isin(qa, keep)]
        _, inv, cnt = np.unique(qa, return_inverse=True, return_counts=True)
        w = 1.0 / cnt[inv]
        mu = w @ a / w.sum()
        return mu, np.cov(a, rowvar=False, aweights=w)
    (m1, s1), (m2, s2) = stats(x, qx), stats(y, qy)
    w, v = np.linalg.eigh(s1)
    root = (v * np.sqrt(np.clip(w, 0, None))) @ v.T
    lam = np.linalg.eigvalsh(root @ s2 @ root)
    return float((m1 - m2) @ (m1 - m2) + np.trace(s1) + np.trace(s2) - 2 * np.sqrt(np.clip(lam, 0, None)).sum())


@pytest.mark.parametrize('streamed', [False, True])
def test_leave_one_out_equals_a_plain_numpy_loop(streamed):
    rel, rel_q, ret, ret_q = _synthetic()
    n = 15
    shift = rel.mean(axis=0)
    max_bytes = 0 if streamed else None
    r, t = QueryStats(rel_q, rel, n, shift, max_bytes), QueryStats(ret_q, ret, n, shift, max_bytes)
    assert r.streamed == streamed
    units = np.ones(n, dtype=bool)
    groups, g = jackknife_groups(units)
    fd = leave_out_fds(r, t, units, groups, g, shift)
    loop = [reference_fd_eigh(rel[rel_q != q], ret[ret_q != q]) for q in range(n)]
    np.testing.assert_allclose(fd, loop, rtol=1e-10)
    fdq = leave_out_fds(per_query_weighted(r), per_query_weighted(t), units, groups, g, shift)
    loop_q = [_loop_weighted_fd(rel, rel_q, ret, ret_q, np.setdiff1d(np.arange(n), [q])) for q in range(n)]
    np.testing.assert_allclose(fdq, loop_q, rtol=1e-10)
    cfd = conditional_leave_out(r, t, units, groups, g)
    loop_c = [conditional_frechet_distance(rel[rel_q != q], rel_q[rel_q != q], ret[ret_q != q], ret_q[ret_q != q])
              for q in range(n)]
    np.testing.assert_allclose(cfd, loop_c, rtol=1e-10)


@pytest.mark.parametrize('streamed', [False, True])
@pytest.mark.parametrize('n_groups', [None, 4])
def test_downdating_equals_the_weight_matrix_path_with_non_units(streamed, n_groups):
    rel, rel_q, ret, ret_q = _synthetic(seed=3)
    n = 15
    shift = rel.mean(axis=0)
    keep = rel_q != 4  # query 4 has no relevant vector (no unit), but retrieved ones, which no leave-out counts
    rel, rel_q = rel[keep], rel_q[keep]
    max_bytes = 0 if streamed else None
    r, t = QueryStats(rel_q, rel, n, shift, max_bytes), QueryStats(ret_q, ret, n, shift, max_bytes)
    units = np.bincount(rel_q, minlength=n) > 0
    groups, g = jackknife_groups(units, n_groups, seed=7)
    assert g == (14 if n_groups is None else 4)
    sizes = np.bincount(groups[groups >= 0])
    assert sizes.max() - sizes.min() <= 1 and (groups[~units] == -1).all()
    w = _weights(units, groups, g)
    for a, b in ((r, t), (per_query_weighted(r), per_query_weighted(t))):
        np.testing.assert_allclose(leave_out_fds(a, b, units, groups, g, shift), weighted_fds(a, w, [b], [w], shift),
                                   rtol=1e-10)
    np.testing.assert_allclose(conditional_leave_out(r, t, units, groups, g), conditional_fds(r, t, w), rtol=1e-10)


def test_group_assignment_is_seeded_and_refuses_one_group():
    units = np.ones(50, dtype=bool)
    a, _ = jackknife_groups(units, 10, seed=1)
    b, _ = jackknife_groups(units, 10, seed=1)
    c, _ = jackknife_groups(units, 10, seed=2)
    assert (a == b).all() and (a != c).any()
    with pytest.raises(ValueError, match='at least 2 groups'):
        jackknife_groups(units, 1)
