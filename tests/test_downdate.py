"""Leave-out FDs by downdating one congruence (core/downdate.py) against two references: FD written here from its
definition over the vectors left in (weighted mean, unbiased weighted covariance, the nuclear norm of the two sides'
rows), and the congruence route it replaces (``relevant_leave_outs(..., downdate=False)``) — over full-rank and
rank-deficient relevant sides, document and query weighting, single queries and groups of them, a query with no
retrieved vectors, held and streamed cross-products. The cases of the route assert that it was taken for some groups
(none can pass by falling back everywhere); the cases of the fall-back assert that it was not taken; the property
test compares the two routes wherever each applies, and both with FD of the vectors."""
import numpy as np
import pytest
import scipy.linalg
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from pyterrier_frechet.core import downdate
from pyterrier_frechet.core.weighted import (QueryStats, _downdated, leave_out_fds, per_query_weighted,
                                             relevant_leave_outs)


def _own_fd(rel, rel_q, ret, ret_q, keep, query_weighting=False):
    """FD of the two sides over the queries in ``keep`` (each document weighing 1, or 1/n_q under query weighting):
    Σ u (x − μ)(x − μ)ᵀ / (V₁ − V₂/V₁) = AᵀA and Tr((Σ₁^½Σ₂Σ₁^½)^½) = ‖A₁A₂ᵀ‖_*."""
    def rows(x, q):
        x, q = x[keep[q]], q[keep[q]]
        u = 1.0 / np.bincount(q)[q] if query_weighting else np.ones(len(q))
        v1, v2 = u.sum(), (u ** 2).sum()
        mu = u @ x / v1
        return mu, (x - mu) * np.sqrt(u / (v1 - v2 / v1))[:, None]
    (m1, a1), (m2, a2) = rows(rel, rel_q), rows(ret, ret_q)
    return float((m1 - m2) @ (m1 - m2) + (a1 ** 2).sum() + (a2 ** 2).sum()
                 - 2 * scipy.linalg.svdvals(a1 @ a2.T).sum())


def _world(seed, d, n_queries, k, rel_rank=None, empty=None):
    """Relevant vectors (1–8 a query; of rank ``rel_rank`` if given) and k retrieved a query (none for ``empty``)."""
    rng = np.random.default_rng(seed)
    rel_q = np.repeat(np.arange(n_queries), rng.integers(1, 9, n_queries))
    basis = rng.normal(size=(rel_rank or d, d))
    rel = rng.normal(size=(len(rel_q), rel_rank or d)) @ basis / np.sqrt(d) + 0.3
    per = np.full(n_queries, k)
    if empty is not None:
        per[empty] = 0
    ret_q = np.repeat(np.arange(n_queries), per)
    ret = rng.normal(0.0, 0.8, size=(len(ret_q), d)) + rel[rng.integers(0, len(rel), len(ret_q))] * 0.4
    return rel, rel_q, ret, ret_q


def _sides(rel, rel_q, ret, ret_q, n_queries, query_weighting, max_bytes=None):
    universe = n_queries + 1  # one slot more, no unit (as the measures' statistics have it)
    shift = rel.mean(axis=0)
    rs = QueryStats(rel_q, rel, universe, shift, max_bytes=max_bytes)
    ts = QueryStats(ret_q, ret, universe, shift, max_bytes=max_bytes)
    if query_weighting:
        rs, ts = per_query_weighted(rs), per_query_weighted(ts)
    units = np.append(np.ones(n_queries, dtype=bool), False)
    return rs, ts, shift, units


def _both_routes(rs, ts, shift, units, groups, n_groups):
    """(downdate route, congruence route, groups the downdate route took)."""
    shared = relevant_leave_outs(rs, units, groups, n_groups, shift)
    plain = relevant_leave_outs(rs, units, groups, n_groups, shift, downdate=False)
    assert plain.downdates is None
    taken = ~np.isnan(_downdated(ts, np.asarray(units, dtype=np.float64), shift, shared))
    return (leave_out_fds(rs, ts, units, groups, n_groups, shift, relevant=shared),
            leave_out_fds(rs, ts, units, groups, n_groups, shift, relevant=plain), taken)


@pytest.mark.parametrize('d, n_queries, k, rel_rank, query_weighting, grouped', [
    (24, 30, 6, None, False, False),
    (24, 30, 6, None, True, False),
    (48, 30, 4, None, False, True),    # groups of two queries
    (40, 25, 2, 28, False, False),     # a relevant side of rank 28 in 40 dimensions: the factor is 40 × 28
    (40, 40, 3, None, True, True),
])
def test_the_downdated_leave_outs_are_fd_of_the_vectors_left_in(d, n_queries, k, rel_rank, query_weighting, grouped):
    rel, rel_q, ret, ret_q = _world(d * n_queries + k, d, n_queries, k, rel_rank)
    rs, ts, shift, units = _sides(rel, rel_q, ret, ret_q, n_queries, query_weighting)
    n_groups = n_queries // 2 if grouped else n_queries
    groups = np.append(np.arange(n_queries) % n_groups, -1)
    new, old, taken = _both_routes(rs, ts, shift, units, groups, n_groups)
    assert taken.sum() >= n_groups // 2
    for g in range(n_groups):
        keep = groups[:n_queries] != g
        want = _own_fd(rel, rel_q, ret, ret_q, keep, query_weighting)
        assert new[g] == pytest.approx(want, rel=1e-9), g
    np.testing.assert_allclose(new, old, rtol=1e-10)


def test_a_query_without_retrieved_vectors_and_streamed_statistics_take_the_same_values():
    d, n_queries = 20, 24
    rel, rel_q, ret, ret_q = _world(5, d, n_queries, 5, empty=3)
    held = _sides(rel, rel_q, ret, ret_q, n_queries, False)
    streamed = _sides(rel, rel_q, ret, ret_q, n_queries, False, max_bytes=0)
    assert streamed[1].streamed and not held[1].streamed
    groups = np.append(np.arange(n_queries), -1)
    new, old, taken = _both_routes(*held, groups, n_queries)
    assert taken.sum() >= n_queries // 2
    np.testing.assert_allclose(new, old, rtol=1e-10)
    np.testing.assert_allclose(_both_routes(*streamed, groups, n_queries)[0], new, rtol=1e-12)
    keep = np.arange(n_queries) != 3  # query 3 left out: only its relevant vectors leave
    assert new[3] == pytest.approx(_own_fd(rel, rel_q, ret, ret_q, keep), rel=1e-9)


def test_large_groups_take_the_congruence_route():
    """A group whose rank updates would cost more than the congruence is left to it (NaN from the downdate route)."""
    d, n_queries = 12, 20
    rel, rel_q, ret, ret_q = _world(9, d, n_queries, 4)
    rs, ts, shift, units = _sides(rel, rel_q, ret, ret_q, n_queries, False)
    groups = np.append(np.arange(n_queries) % 2, -1)  # two groups of 10 queries: 40 retrieved vectors each
    shared = relevant_leave_outs(rs, units, groups, 2, shift)
    assert shared.downdates is None or all(b is None for b in shared.downdates.bases)
    assert np.isnan(_downdated(ts, units.astype(float), shift, shared)).all()
    # groups of 3 queries: the relevant side's updates are small (one vector a query here), the retrieved side's 25
    # columns are not (rank 24): the run is decided from the counts and every group takes the congruence route
    d, n_queries = 24, 18
    rel, rel_q, ret, ret_q = _world(4, d, n_queries, 8)
    keep = np.r_[True, rel_q[1:] != rel_q[:-1]]  # each query's first relevant vector only
    rel, rel_q = rel[keep], rel_q[keep]
    rs, ts, shift, units = _sides(rel, rel_q, ret, ret_q, n_queries, False)
    groups = np.append(np.arange(n_queries) % 6, -1)
    shared = relevant_leave_outs(rs, units, groups, 6, shift)
    assert all(b is not None for b in shared.downdates.bases)
    assert np.isnan(_downdated(ts, units.astype(float), shift, shared)).all()
    got = leave_out_fds(rs, ts, units, groups, 6, shift, relevant=shared)
    want = [_own_fd(rel, rel_q, ret, ret_q, groups[:n_queries] != g) for g in range(6)]
    np.testing.assert_allclose(got, want, rtol=1e-9)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
# found by this test: a relevant side of rank 2 in 8 dimensions whose units' total was formed from the vectors while
# its leave-outs subtracted per-query products: round-off the pivoted Cholesky read as a third dimension, 3.4e-9 off
@example(seed=0, d=8, n_queries=32, k=1, query_weighting=False, low_rank=True)
@example(seed=985, d=8, n_queries=14, k=1, query_weighting=False, low_rank=True)  # pstrf's tolerance (test below)
@given(seed=st.integers(0, 2 ** 16), d=st.integers(8, 32), n_queries=st.integers(12, 40), k=st.integers(1, 6),
       query_weighting=st.booleans(), low_rank=st.booleans())
def test_property_the_downdate_route_equals_the_congruence_route(seed, d, n_queries, k, query_weighting, low_rank):
    rel, rel_q, ret, ret_q = _world(seed, d, n_queries, k, rel_rank=max(2, d // 3) if low_rank else None)
    rs, ts, shift, units = _sides(rel, rel_q, ret, ret_q, n_queries, query_weighting)
    groups = np.append(np.arange(n_queries), -1)
    new, old, _ = _both_routes(rs, ts, shift, units, groups, n_queries)
    np.testing.assert_array_equal(np.isnan(new), np.isnan(old))
    np.testing.assert_allclose(new, old, rtol=1e-9, atol=1e-12 * np.nanmax(np.abs(old)))
    own = [_own_fd(rel, rel_q, ret, ret_q, np.arange(n_queries) != g, query_weighting) for g in range(n_queries)]
    np.testing.assert_allclose(new, own, rtol=1e-9, atol=1e-12 * np.max(np.abs(own)))


def test_a_downdated_rank_deficient_covariance_keeps_its_rank():
    """Found by the property test above: a relevant side of rank 2 in 8 dimensions, each leave-out's covariance the
    totals less one query's products. pstrf's default tolerance (d·ε·max diagonal) took a round-off pivot of 2 of the
    14 leave-outs as a third dimension, 4e-9 off FD of the vectors (40-digit mpmath agreed with _own_fd to 1e-16); the
    tolerance is now d·ε times the second moments the covariance was formed from."""
    n_queries = 14
    rel, rel_q, ret, ret_q = _world(985, 8, n_queries, 1, rel_rank=2)
    rs, ts, shift, units = _sides(rel, rel_q, ret, ret_q, n_queries, False)
    groups = np.append(np.arange(n_queries), -1)
    shared = relevant_leave_outs(rs, units, groups, n_queries, shift, downdate=False)
    assert shared.ranks.tolist() == [2] * n_queries
    got = leave_out_fds(rs, ts, units, groups, n_queries, shift, relevant=shared)
    own = [_own_fd(rel, rel_q, ret, ret_q, np.arange(n_queries) != g) for g in range(n_queries)]
    np.testing.assert_allclose(got, own, rtol=1e-12)


def test_the_rank_updates_are_the_downdated_congruence():
    """T(K − ṼṼᵀ)T of the module docstring has the eigenvalues of L'ᵀΣ₂'L' for the downdated relevant factor L'."""
    rng = np.random.default_rng(3)
    d, p1, p2 = 10, 3, 2
    a = rng.normal(size=(40, d))
    s1, s2 = a.T @ a / 39, np.cov(rng.normal(size=(30, d)).T)
    u, v = rng.normal(size=(d, p1)) * 0.1, rng.normal(size=(d, p2)) * 0.1
    lower = np.linalg.cholesky(s1)
    z = np.linalg.solve(lower, u)
    basis, sv, _ = np.linalg.svd(z, full_matrices=False)
    relevant = downdate.RelevantDowndates(downdate.padded_factor(lower), d, np.arange(d), None, 1.0, [basis],
                                          [np.sqrt(1 - sv ** 2) - 1], np.ones(1))
    base = np.asfortranarray(lower.T @ s2 @ lower)
    got = downdate._downdated_trace_sqrt(relevant, base, 0, v, 1.0, 1.0)
    s1_down, s2_down = s1 - u @ u.T, s2 - v @ v.T
    root = scipy.linalg.sqrtm(s1_down)
    want = np.trace(scipy.linalg.sqrtm(root @ s2_down @ root)).real
    assert got == pytest.approx(want, rel=1e-10)


# --- near-degenerate worlds against arbitrary precision (issue 64 item 4; the round-seven world) ---------------------

def _degenerate_world(seed, d, n_queries, offset, eps):
    """Relevant vectors c + t·u + eps·noise (c of norm ``offset``, t ~ N(0, 1): a near one-dimensional side), runs of
    near-copies of each query's relevant documents (noise eps/10): FD a tiny fraction of ‖c‖²."""
    rng = np.random.default_rng(seed)
    c = rng.normal(size=d)
    c *= offset / max(np.linalg.norm(c), 1e-300)
    u = rng.normal(size=d)
    u /= np.linalg.norm(u)
    n_rel = rng.integers(3, 7, n_queries)
    rel_q = np.repeat(np.arange(n_queries), n_rel)
    rel = c + rng.normal(size=len(rel_q))[:, None] * u + eps * rng.normal(size=(len(rel_q), d))
    ret_q = np.repeat(np.arange(n_queries), 6)
    ret = np.concatenate([rel[rel_q == q][np.arange(6) % n_rel[q]] for q in range(n_queries)])
    ret = ret + eps / 10 * rng.normal(size=ret.shape)
    return rel, rel_q, ret, ret_q


def _mp_fd(x, y):
    """FD of two vector sets in 50-digit arithmetic from the float64 values themselves (mpmath): sample means and
    covariances, Tr((S₁^½S₂S₁^½)^½) from two symmetric eigen-decompositions."""
    import mpmath
    mpmath.mp.dps = 50

    def moments(a):
        rows = [[mpmath.mpf(float(v)) for v in r] for r in a]
        n, dim = len(rows), len(rows[0])
        mean = [mpmath.fsum(r[j] for r in rows) / n for j in range(dim)]
        cov = mpmath.matrix(dim, dim)
        for i in range(dim):
            for j in range(i, dim):
                cov[i, j] = cov[j, i] = mpmath.fsum((r[i] - mean[i]) * (r[j] - mean[j]) for r in rows) / (n - 1)
        return mean, cov
    m1, s1 = moments(x)
    m2, s2 = moments(y)
    lam, vec = mpmath.eigsy(s1)
    root = vec * mpmath.diag([mpmath.sqrt(max(v, 0)) for v in lam]) * vec.T
    inner, _ = mpmath.eigsy(root * s2 * root)
    trace = sum(s1[i, i] + s2[i, i] for i in range(len(m1)))
    return float(mpmath.fsum((a - b) ** 2 for a, b in zip(m1, m2)) + trace
                 - 2 * mpmath.fsum(mpmath.sqrt(max(v, 0)) for v in inner))


@pytest.mark.parametrize('offset, eps', [(1e3, 1e-2), (1e3, 1e-4), (1e4, 1e-3), (0.0, 1e-4)])
def test_every_leave_out_route_is_as_precise_as_the_full_set_in_near_degenerate_worlds(offset, eps):
    """A set far from the origin (‖c‖ = 1e3) with a small spread (1e-2): the tolerances were measured against the
    moments about the origin, not the shifted frame the statistics are summed in, and the congruence route's
    fallback gave the retrieved covariance's pivoted Cholesky the product of two scales — small directions were taken
    for round-off and the leave-outs came out 31× FD too large (the full set stayed right to 1e-12). Every route
    (general, congruence, downdate, and the bootstrap samples' weighted FD) against 50-digit FD of the vectors left
    in: as precise as the full set."""
    from pyterrier_frechet.core.weighted import relevant_leave_outs, weighted_fds
    d, n_queries = 5, 9
    rel, rel_q, ret, ret_q = _degenerate_world(7, d, n_queries, offset, eps)
    shift = rel.mean(axis=0)
    rs, ts = QueryStats(rel_q, rel, n_queries, shift), QueryStats(ret_q, ret, n_queries, shift)
    units = np.ones(n_queries)
    groups = np.arange(n_queries)
    full_ref = _mp_fd(rel, ret)
    full = weighted_fds(rs, units[None], [ts], [units[None]], shift)[0]
    full_err = abs(full - full_ref) / full_ref
    assert full_err < 1e-9
    refs = np.array([_mp_fd(rel[rel_q != q], ret[ret_q != q]) for q in range(n_queries)])
    routes = {'general': leave_out_fds(rs, ts, units, groups, n_queries, shift),
              'congruence': leave_out_fds(rs, ts, units, groups, n_queries, shift,
                                          relevant=relevant_leave_outs(rs, units, groups, n_queries, shift,
                                                                       downdate=False)),
              'downdate': leave_out_fds(rs, ts, units, groups, n_queries, shift,
                                        relevant=relevant_leave_outs(rs, units, groups, n_queries, shift)),
              'weighted': weighted_fds(rs, 1.0 - np.eye(n_queries), [ts], [1.0 - np.eye(n_queries)], shift)}
    for name, got in routes.items():
        err = np.abs(got - refs) / refs
        assert err.max() < max(1e-9, 100 * full_err), (name, err.max(), full_err)
