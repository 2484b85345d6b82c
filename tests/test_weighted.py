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


# --- the relevant side's leave-outs made once and shared by every run (issue 50) ----------------------------------


def _subspace_world(seed, n_queries=24, d=40, rank=36, per_query=6, k=5):
    """Relevant and retrieved vectors in one rank-``rank`` affine subspace of d dimensions (as MiniLM's span 381 of
    384), so both covariances are singular, as in IR: the shared factor's rank is below d."""
    rng = np.random.default_rng(seed)
    basis = np.linalg.qr(rng.normal(size=(d, rank)))[0]
    rel_q = np.repeat(np.arange(n_queries), rng.integers(1, per_query + 1, n_queries))
    ret_q = np.repeat(np.arange(n_queries), k)
    rel = (rng.normal(size=(len(rel_q), rank)) * np.linspace(1, 0.05, rank)) @ basis.T
    ret = (rng.normal(size=(len(ret_q), rank)) * np.linspace(0.8, 0.1, rank) + 0.2) @ basis.T
    return rel, rel_q, ret, ret_q


@pytest.mark.parametrize('seed,k,n_groups,weighted', [(0, 5, None, False), (1, 1, None, False), (2, 5, 6, False),
                                                      (3, 5, None, True), (4, 2, None, False)])
def test_shared_relevant_leave_outs_equal_the_general_route_and_the_vectors(seed, k, n_groups, weighted):
    """The shared route (one factor per relevant leave-out, one congruence and eigenvalue solve per run) gives the
    leave-outs of the general route and of FD on the explicit vectors without each query: singular covariances on
    both sides, a retrieved side of lower rank than the relevant one (k = 1, 2: the factors' nuclear norm), groups,
    query weighting. Two runs share one relevant object."""
    from pyterrier_frechet.core.frechet import frechet_distance, frechet_distance_weighted
    from pyterrier_frechet.core.weighted import query_weights, relevant_leave_outs
    rel, rel_q, ret, ret_q = _subspace_world(seed, k=k)
    n = 24
    shift = rel.mean(axis=0)
    r = QueryStats(rel_q, rel, n, shift)
    units = np.ones(n, dtype=bool)
    groups, g = jackknife_groups(units, n_groups, seed=5)
    if weighted:
        r = per_query_weighted(r)
    shared = relevant_leave_outs(r, units, groups, g, shift)
    assert 0 < shared.ranks.min() and shared.ranks.max() <= 36  # singular: the factor's rank is the subspace's
    for run in range(2):
        y = ret + 0.05 * run
        t = QueryStats(ret_q, y, n, shift)
        if weighted:
            t = per_query_weighted(t)
        fast = leave_out_fds(r, t, units, groups, g, shift, relevant=shared)
        general = leave_out_fds(r, t, units, groups, g, shift)
        np.testing.assert_allclose(fast, general, rtol=1e-10)
        for grp in range(g):
            keep_r, keep_t = groups[rel_q] != grp, groups[ret_q] != grp
            if weighted:
                want = frechet_distance_weighted(rel[keep_r], query_weights(rel_q[keep_r]), y[keep_t],
                                                 query_weights(ret_q[keep_t]))
            else:
                want = frechet_distance(rel[keep_r], y[keep_t])
            np.testing.assert_allclose(fast[grp], want, rtol=1e-9)


def test_shared_relevant_leave_outs_refuse_another_grouping():
    from pyterrier_frechet.core.weighted import relevant_leave_outs
    rel, rel_q, ret, ret_q = _subspace_world(0)
    shift = rel.mean(axis=0)
    r, t = QueryStats(rel_q, rel, 24, shift), QueryStats(ret_q, ret, 24, shift)
    units = np.ones(24, dtype=bool)
    groups, g = jackknife_groups(units)
    shared = relevant_leave_outs(r, units, groups, g, shift)
    other, g2 = jackknife_groups(units, 6, seed=1)
    with pytest.raises(ValueError, match='another grouping'):
        leave_out_fds(r, t, units, other, g2, shift, relevant=shared)


def test_a_leave_out_with_one_vector_left_is_nan_on_the_shared_route():
    """A query holding all but one retrieved vector: its leave-out has no retrieved Gaussian (NaN), as on the
    general route."""
    from pyterrier_frechet.core.weighted import relevant_leave_outs
    rng = np.random.default_rng(0)
    rel_q = np.repeat(np.arange(4), 5)
    ret_q = np.array([0] * 10 + [1])  # leaving query 0 out keeps 1 retrieved vector: undefined
    rel, ret = rng.normal(size=(20, 3)), rng.normal(size=(11, 3))
    shift = rel.mean(axis=0)
    r, t = QueryStats(rel_q, rel, 4, shift), QueryStats(ret_q, ret, 4, shift)
    units = np.ones(4, dtype=bool)
    groups, g = jackknife_groups(units)
    fast = leave_out_fds(r, t, units, groups, g, shift, relevant=relevant_leave_outs(r, units, groups, g, shift))
    general = leave_out_fds(r, t, units, groups, g, shift)
    assert np.isnan(fast[0]) and np.isnan(general[0])
    np.testing.assert_allclose(fast[1:], general[1:], rtol=1e-10)


@pytest.mark.parametrize('weighted,streamed_rel', [(False, False), (True, False), (False, True)])
def test_shared_samples_of_several_runs_equal_each_run_alone(weighted, streamed_rel):
    """The bootstrap's samples with the relevant side of each sample factored once for every run
    (``shared_weighted_fds``) equal ``weighted_fds`` of each run alone: singular covariances, a run of lower rank
    than the relevant side (k = 1), query weighting, a streamed relevant side; the weights as the bootstrap's counts."""
    from pyterrier_frechet.core.weighted import shared_weighted_fds, streamed
    rel, rel_q, _, _ = _subspace_world(7)
    n, shift = 24, rel.mean(axis=0)
    r = QueryStats(rel_q, rel, n, shift, 0 if streamed_rel else None)
    sides = []
    for seed, k in ((8, 5), (9, 1), (10, 3)):
        _, _, ret, ret_q = _subspace_world(seed, k=k)
        sides.append(QueryStats(ret_q, ret, n, shift))
    if weighted:
        r, sides = per_query_weighted(r), [per_query_weighted(t) for t in sides]
    counts = np.random.default_rng(1).multinomial(n, np.ones(n) / n, size=40).astype(np.uint8)
    got = shared_weighted_fds(r, [streamed(t) for t in sides], counts, shift)
    for t, values in zip(sides, got):
        want = weighted_fds(r, counts, [t], [counts], shift)
        np.testing.assert_allclose(values, want, rtol=1e-10)
        assert np.isfinite(values).all()
