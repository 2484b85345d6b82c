"""analyses/calibration.py in the fast set: tiny runs of coverage, tau_coverage and rejection_rates whose truths are
checked against the closed forms and whose tables have the documented shape. The statistical runs (enough trials
to say which intervals cover) are the slow tests in tests/test_intervals.py."""
from dataclasses import replace

import numpy as np
import pandas as pd
import pytest
import scipy.stats

from pyterrier_frechet.analyses.calibration import World, coverage, expected_fd, rejection_rates, tau_coverage
from pyterrier_frechet.core.intervals import METHODS, methods_where

WORLD = World(d=4)


def _fractions(values, trials):
    # a share of `trials` trials: k / trials for an integer k (NaN where a method gave no interval in any trial)
    values = np.asarray(values, dtype=np.float64)
    finite = values[np.isfinite(values)]
    return bool(np.all(np.abs(finite * trials - np.round(finite * trials)) < 1e-9) and np.all((finite >= 0) & (finite <= 1)))


def test_coverage_table_truths_and_determinism():
    table = coverage(WORLD, n_queries=(12,), n_trials=3, n_samples=40, n_reference=10, seed=1, verbose=False)
    # (FD, ΔFD) × methods × (population, E[·] at n); a difference has no log-scale interval
    assert len(table) == (2 * len(METHODS) - len(methods_where('positive_only'))) * 2
    assert set(table.method) == set(METHODS) and (table.measure == 'fd').all() and (table.n_queries == 12).all()
    assert set(table[table.statistic == 'ΔFD'].method) == set(METHODS) - {'jackknife_log'}
    truth = table.groupby(['statistic', 'estimand'])['true_value'].agg(['min', 'max'])
    assert (truth['min'] == truth['max']).all()  # one truth per (statistic, estimand), whatever the method
    truth = truth['min']
    pop_a, pop_b = WORLD.population_fd(WORLD.p_a), WORLD.population_fd(WORLD.p_b)
    assert truth['FD', 'population'] == pytest.approx(pop_a, rel=1e-12)
    assert truth['ΔFD', 'population'] == pytest.approx(pop_a - pop_b, rel=1e-12)
    expected = expected_fd(WORLD, 12, 10, seed=1)
    assert truth['FD', 'E[FD] at 12 queries'] == expected['A'] and truth['ΔFD', 'E[ΔFD] at 12 queries'] == expected['delta']
    assert _fractions(table.coverage, 3) and _fractions(table.contains_estimate, 3)
    assert ((table.width >= 0) | table.width.isna()).all() and ((table.undefined >= 0) & (table.undefined <= 1)).all()
    # FD's finite-sample bias is large at 12 queries: every resample of FD̂ lies above the population FD
    cov = table.set_index(['statistic', 'method', 'estimand'])['coverage']
    assert cov['FD', 'percentile', 'population'] == 0
    again = coverage(WORLD, n_queries=(12,), n_trials=3, n_samples=40, n_reference=10, seed=1, verbose=False)
    pd.testing.assert_frame_equal(table, again)  # seeded


def test_tau_coverage_truth_is_tau_of_the_closed_form_population_values():
    systems = [(0.55, 0.2), (0.6, 1.0), (0.7, 0.4), (0.8, 1.2)]
    table = tau_coverage(WORLD, systems=systems, n_queries=(12,), n_trials=2, n_samples=40, seed=0, verbose=False)
    pop_fd = [replace(WORLD, offset=off).population_fd(p) for p, off in systems]
    tau = scipy.stats.kendalltau(-np.array(pop_fd), [p for p, _ in systems]).statistic
    row = table.iloc[0]
    assert len(table) == 1 and row.true_value == pytest.approx(tau) and row.trials == 2 and row.samples == 40
    assert _fractions([row.coverage], 2) and -1 <= row.mean_estimate <= 1 and 0 <= row.width <= 2


def test_rejection_rates_table_and_binomial_standard_error():
    table = rejection_rates(WORLD, n_queries=(12,), n_trials=3, n_samples=40, seed=0, verbose=False,
                            tests=('normal', 'jackknife'))
    assert len(table) == 2 * 2 * 2  # (null, alternative) × (fd, precision) × tests
    assert set(table.test) == {'normal', 'jackknife'} and set(table.measure) == {'fd', 'precision'}
    assert {h.split(' ')[0] for h in table.hypothesis} == {'null', 'alternative'}
    assert _fractions(table.rejection_rate, 3)
    np.testing.assert_allclose(table.se, np.sqrt(table.rejection_rate * (1 - table.rejection_rate) / 3), rtol=1e-12)
    with pytest.raises(ValueError, match="tests for statistic 'fd' must be among"):
        rejection_rates(WORLD, n_queries=(12,), n_trials=1, n_samples=40, verbose=False, tests=('t',))
    with pytest.raises(ValueError, match="'cfd' must be among .* got \\['influence'\\]"):  # CFD has no closed form
        rejection_rates(WORLD, n_queries=(12,), n_trials=1, n_samples=40, verbose=False, statistic='cfd',
                        tests=('influence',))


@pytest.mark.parametrize('statistic', ['fd', 'fd-query'])
def test_the_influence_test_is_the_paired_t_test_on_the_influence_rows(statistic):
    """rejection_rates' 'influence' p-value is scipy's paired t-test on FD(rows='influence')'s rows of the two
    systems (core.jackknife.influence_rows of each one's influence), on n − 1 degrees of freedom."""
    from pyterrier_frechet.analyses.calibration import _draw_systems, _fds, _influence_leave_outs
    from pyterrier_frechet.analyses.significance import experiment_p
    from pyterrier_frechet.core.influence import fd_influence
    from pyterrier_frechet.core.jackknife import influence_rows
    from pyterrier_frechet.core.weighted import per_query_weighted
    rng = np.random.default_rng(4)
    n = 14
    rel, (ret_a, ret_b), _, shift = _draw_systems(WORLD, [(WORLD.p_a, WORLD.offset), (WORLD.p_b, WORLD.offset)], n, rng)
    ones = np.ones((1, n))
    full_a, full_b = _fds(rel, ret_a, ones, shift, statistic)[0], _fds(rel, ret_b, ones, shift, statistic)[0]
    p = experiment_p(full_a - full_b, _influence_leave_outs(rel, ret_a, shift, statistic)
                     - _influence_leave_outs(rel, ret_b, shift, statistic))
    sides = (rel, ret_a, ret_b) if statistic == 'fd' else tuple(per_query_weighted(x) for x in (rel, ret_a, ret_b))
    rows_a = influence_rows(full_a, fd_influence(sides[0], sides[1], ones[0], shift))
    rows_b = influence_rows(full_b, fd_influence(sides[0], sides[2], ones[0], shift))
    assert p == pytest.approx(scipy.stats.ttest_rel(rows_a, rows_b).pvalue, rel=1e-9)


@pytest.mark.parametrize('statistic', ['fd', 'fd-query', 'cfd'])
def test_leave_outs_equal_the_weight_matrix_they_replace(statistic):
    # coverage() and rejection_rates() take each query's leave-out by the package's downdating path; the Q × Q 0/1
    # weight matrix they used before gives the same values (an independent route through the re-weighted statistics)
    from pyterrier_frechet.analyses.calibration import _draw_systems, _fds, _leave_outs
    rng = np.random.default_rng(3)
    n = 15
    rel, (ret_a, _), _, shift = _draw_systems(WORLD, [(WORLD.p_a, WORLD.offset), (WORLD.p_b, WORLD.offset)], n, rng)
    np.testing.assert_allclose(_leave_outs(rel, ret_a, shift, statistic), _fds(rel, ret_a, 1.0 - np.eye(n), shift, statistic),
                               rtol=1e-10)


def test_fds_terms_are_calibrated_through_their_own_resampling():
    # the population terms split the closed-form population FD (the mean term ‖(1−p)m‖², by hand), and each trial's
    # terms sum to its FD: on the package's bootstrap draws and on its leave-outs
    from pyterrier_frechet.analyses.calibration import _fds, _leave_outs
    world = World(d=6)
    for p in (world.p_a, world.p_b):
        assert world.population('fd-mean', p) == pytest.approx((1 - p) ** 2 * world.offset ** 2, rel=1e-14)
        assert world.population('fd-mean', p) + world.population('fd-cov', p) == pytest.approx(
            world.population('fd', p), rel=1e-13)
    rel, ret, _, shift = world.draw(12, np.random.default_rng(3))
    weights = np.random.default_rng(4).multinomial(12, np.full(12, 1 / 12), size=5).astype(np.float64)
    np.testing.assert_allclose(_fds(rel, ret, weights, shift, 'fd-mean') + _fds(rel, ret, weights, shift, 'fd-cov'),
                               _fds(rel, ret, weights, shift, 'fd'), rtol=1e-12)
    np.testing.assert_allclose(_leave_outs(rel, ret, shift, 'fd-mean') + _leave_outs(rel, ret, shift, 'fd-cov'),
                               _leave_outs(rel, ret, shift, 'fd'), rtol=1e-12)
    table = coverage(world, n_queries=(12,), n_trials=3, n_samples=40, n_reference=10, verbose=False,
                     statistic='fd-cov')
    assert set(table['measure']) == {'fd-cov'} and table['coverage'].between(0, 1).all()
