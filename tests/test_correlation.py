"""Correlations between measures across systems (analyses/correlation.py) against scipy, with orientation."""
import numpy as np
import pandas as pd
import pytest
import scipy.stats
from hypothesis import given, settings, strategies as st

from pyterrier_frechet.analyses.correlation import correlations
from pyterrier_frechet.measures.base import higher_is_better


def test_correlations_match_scipy_with_orientation():
    rng = np.random.default_rng(0)
    table = pd.DataFrame({'name': list('abcdefg'), 'nDCG@10': rng.random(7), 'FD@10': rng.random(7), 'mrt': rng.random(7)})
    out = correlations(table).set_index(['a', 'b'])
    row = out.loc[('nDCG@10', 'FD@10')]
    assert row.kendall_tau == pytest.approx(scipy.stats.kendalltau(table['nDCG@10'], -table['FD@10']).statistic)
    assert row.kendall_p == pytest.approx(scipy.stats.kendalltau(table['nDCG@10'], -table['FD@10']).pvalue)
    assert row.spearman == pytest.approx(scipy.stats.spearmanr(table['nDCG@10'], -table['FD@10']).statistic)
    assert row.pearson == pytest.approx(scipy.stats.pearsonr(table['nDCG@10'], -table['FD@10']).statistic)
    assert row.oriented == 'FD@10'
    assert out.loc[('FD@10', 'mrt')].kendall_tau == pytest.approx(scipy.stats.kendalltau(table['FD@10'], table['mrt']).statistic)
    # a perfectly agreeing pair (FD falls as nDCG rises) is +1 after orientation
    agree = pd.DataFrame({'nDCG@10': [0.1, 0.2, 0.3, 0.4], 'FD@10': [4.0, 3.0, 2.0, 1.0]})
    assert correlations(agree).iloc[0].kendall_tau == pytest.approx(1.0)
    assert not higher_is_better('FD(urr=True)@10') and higher_is_better('nDCG@10') and higher_is_better('my_column')
    # one answer for a column name and for the measure it names (tables, plots and correlations read the same one)
    import ir_measures
    import pyterrier_frechet as pf
    for name in ('FD(urr=True)@10', 'CFD@10', 'DO@100', 'HSA@100', 'nDCG@10', 'RR@10'):
        assert higher_is_better(name) == higher_is_better(ir_measures.parse_measure(name)), name
    assert not higher_is_better(pf.FD @ 10) and not higher_is_better('mrt') and higher_is_better(ir_measures.nDCG @ 10)
    with pytest.raises(ValueError, match='at least 3 systems'):
        correlations(agree.iloc[:2])
    with pytest.raises(ValueError, match='no such column'):
        correlations(agree, ['nDCG@10', 'RR@10'])


def test_rank_correlation_interval_is_tau_and_the_quantiles_of_tau_over_the_samples():
    """The interval tau_intervals prints and the calibration harness scores: τ-b of the point values and, over the
    samples (systems × samples, one column a resampled query set), the 2.5/97.5% quantiles of τ-b per column
    (percentile) or 2τ̂ minus them (basic); computed here with scipy column by column."""
    from pyterrier_frechet.analyses.correlation import kendall_tau_b, rank_correlation_interval, tau_ap
    rng = np.random.default_rng(4)
    x, y = rng.random(9), rng.random(9)
    xs, ys = x[:, None] + 0.3 * rng.standard_normal((9, 400)), y[:, None] + 0.3 * rng.standard_normal((9, 400))
    taus = np.array([scipy.stats.kendalltau(xs[:, b], ys[:, b]).statistic for b in range(400)])
    point = scipy.stats.kendalltau(x, y).statistic
    q = np.quantile(taus, [0.025, 0.975])
    got = rank_correlation_interval(kendall_tau_b, x, y, xs, ys, 0.95)
    assert got == pytest.approx((point, q[0], q[1]), abs=1e-12)
    got = rank_correlation_interval(kendall_tau_b, x, y, xs, ys, 0.95, 'basic')
    assert got == pytest.approx((point, 2 * point - q[1], 2 * point - q[0]), abs=1e-12)
    # a sample where one ranking is constant has no τ: it is left out, not counted as 0
    xs[:, 0] = 1.0
    q = np.quantile(taus[1:], [0.025, 0.975])
    assert rank_correlation_interval(kendall_tau_b, x, y, xs, ys)[1:] == pytest.approx(tuple(q), abs=1e-12)
    assert rank_correlation_interval(tau_ap, x, y, x[:, None], y[:, None])[0] == pytest.approx(tau_ap(x, y))


@settings(max_examples=60, deadline=None)
@given(st.integers(2, 12), st.integers(1, 8), st.integers(0, 2 ** 31 - 1), st.booleans())
def test_kendall_tau_b_columns_equals_scipy_per_column(n, b, seed, ties):
    """The vectorised τ-b over resamples (what τ's interval computes) equals scipy's kendalltau column by column —
    ties in either ranking and constant columns (NaN) included."""
    import scipy.stats
    from pyterrier_frechet.analyses.correlation import kendall_tau_b_columns
    rng = np.random.default_rng(seed)
    xs, ys = rng.normal(size=(n, b)), rng.normal(size=(n, b))
    if ties:
        xs, ys = np.round(xs), np.round(ys)
    got = kendall_tau_b_columns(xs, ys)
    for k in range(b):
        if np.ptp(xs[:, k]) == 0 or np.ptp(ys[:, k]) == 0:
            assert np.isnan(got[k])
        else:
            assert got[k] == pytest.approx(scipy.stats.kendalltau(xs[:, k], ys[:, k]).statistic, abs=1e-15)
