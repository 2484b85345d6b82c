"""The influence of each query on FD (core/influence.py): ∂FD/∂w_q in closed form, against central finite differences
of an FD written here from the definition (weighted mean, unbiased weighted covariance, the nuclear norm of the two sides' rows) and of the
package's re-weighting (weighted_fds), on every route: full-rank and low-rank retrieved sides, document and query
weighting, held and streamed cross-products."""
import numpy as np
import pytest
import scipy.linalg

from pyterrier_frechet.core.influence import fd_influence, relevant_factor
from pyterrier_frechet.core.jackknife import influence_rows
from pyterrier_frechet.core.weighted import QueryStats, per_query_weighted, weighted_fds


def _own_fd(rel, rel_q, ret, ret_q, w, query_weighting=False):
    """FD of the two sides with query q's documents weighing w[q] (and 1/n_q each under query weighting): the
    weighted mean and the unbiased covariance with reliability weights, Σ u (x − μ)(x − μ)ᵀ / (V₁ − V₂/V₁) = AᵀA,
    and Tr((Σ₁^½Σ₂Σ₁^½)^½) as the nuclear norm ‖A₁A₂ᵀ‖_* (exact where a side has fewer vectors than dimensions)."""
    def rows(x, q):
        u = w[q] / (np.bincount(q, minlength=len(w))[q] if query_weighting else 1.0)
        v1, v2 = u.sum(), (u ** 2 / np.where(w[q] > 0, w[q], 1.0)).sum()  # V₂ linear in a query's weight
        mu = u @ x / v1
        return mu, (x - mu) * np.sqrt(u / (v1 - v2 / v1))[:, None]
    (m1, a1), (m2, a2) = rows(rel, rel_q), rows(ret, ret_q)
    cross = scipy.linalg.svdvals(a1 @ a2.T).sum()
    return float((m1 - m2) @ (m1 - m2) + (a1 ** 2).sum() + (a2 ** 2).sum() - 2 * cross)


def _world(seed, d, n_queries, per_query_retrieved):
    rng = np.random.default_rng(seed)
    rel_q = np.repeat(np.arange(n_queries), rng.integers(1, 9, n_queries))
    rel = rng.normal(0.3, 1.0, size=(len(rel_q), d))
    ret_q = np.repeat(np.arange(n_queries), per_query_retrieved)
    ret = rng.normal(0.0, 0.8, size=(len(ret_q), d)) + rel[rng.integers(0, len(rel), len(ret_q))] * 0.4
    return rel, rel_q, ret, ret_q


@pytest.mark.parametrize('d, n_queries, k, query_weighting', [(6, 12, 5, False), (6, 12, 5, True),
                                                               (20, 8, 2, False),  # 16 retrieved < rank 20
                                                               (12, 30, 3, True)])
def test_the_influence_is_the_derivative_of_fd_written_from_its_definition(d, n_queries, k, query_weighting):
    rel, rel_q, ret, ret_q = _world(d + n_queries, d, n_queries, k)
    universe = n_queries + 1  # one query of the universe with no documents: no unit, NaN
    units = np.ones(universe)
    units[-1] = 0.0
    shift = rel.mean(axis=0)
    rs, ts = QueryStats(rel_q, rel, universe, shift), QueryStats(ret_q, ret, universe, shift)
    if query_weighting:
        rs, ts = per_query_weighted(rs), per_query_weighted(ts)
    got = fd_influence(rs, ts, units, shift)
    assert np.isnan(got[-1])
    eps = 1e-5
    for q in range(n_queries):
        up, down = units[:n_queries].copy(), units[:n_queries].copy()
        up[q] += eps
        down[q] -= eps
        want = (_own_fd(rel, rel_q, ret, ret_q, up, query_weighting)
                - _own_fd(rel, rel_q, ret, ret_q, down, query_weighting)) / (2 * eps)
        assert got[q] == pytest.approx(want, rel=1e-5, abs=1e-7)


@pytest.mark.parametrize('held', [True, False])
def test_the_influence_agrees_with_the_packages_reweighting_on_held_and_streamed_statistics(held):
    """Central differences of weighted_fds (the bootstrap's re-weighting), with the cross-products held (the
    relevant side's quadratic forms from them) and streamed (from the vectors)."""
    rel, rel_q, ret, ret_q = _world(5, 10, 15, 4)
    shift = rel.mean(axis=0)
    max_bytes = None if held else 0
    rs, ts = QueryStats(rel_q, rel, 15, shift, max_bytes), QueryStats(ret_q, ret, 15, shift, max_bytes)
    units = np.ones(15)
    got = fd_influence(rs, ts, units, shift, relevant_factor(rs, units, shift))
    eps = 1e-5
    weights = np.repeat(units[None], 30, axis=0)
    weights[np.arange(15), np.arange(15)] += eps
    weights[15 + np.arange(15), np.arange(15)] -= eps
    values = weighted_fds(rs, weights, [ts], [weights], shift)
    np.testing.assert_allclose(got, (values[:15] - values[15:]) / (2 * eps), rtol=1e-6, atol=1e-8)


def test_no_influence_where_a_side_has_fewer_than_two_vectors():
    rel, rel_q, ret, ret_q = _world(1, 4, 3, 1)
    shift = rel.mean(axis=0)
    units = np.ones(3)
    lone = QueryStats(np.array([0]), ret[:1], 3, shift)
    assert fd_influence(QueryStats(rel_q, rel, 3, shift), lone, units, shift) is None


def test_influence_rows_average_to_the_value_and_give_the_infinitesimal_jackknife_t():
    """r_q = θ̂ + (n − 1)(g_q − ḡ): the mean is θ̂; the paired t statistic of two systems' rows is Δθ̂ / SE with
    SE² = (n − 1)/n · Σ(Δg − mean)²."""
    rng = np.random.default_rng(0)
    g_a, g_b = rng.normal(size=9), rng.normal(size=9)
    g_a[4] = g_b[4] = np.nan  # no unit
    rows_a, rows_b = influence_rows(0.7, g_a), influence_rows(0.5, g_b)
    units = ~np.isnan(g_a)
    assert np.isnan(rows_a[4]) and rows_a[units].mean() == pytest.approx(0.7, abs=1e-15)
    diff = (rows_a - rows_b)[units]
    t = diff.mean() / (diff.std(ddof=1) / np.sqrt(len(diff)))
    dg = (g_a - g_b)[units]
    se = np.sqrt((len(dg) - 1) / len(dg) * ((dg - dg.mean()) ** 2).sum())
    assert t == pytest.approx(0.2 / se, rel=1e-12)
    with pytest.raises(ValueError, match='at least 2'):
        influence_rows(0.7, np.array([0.1, np.nan]))
