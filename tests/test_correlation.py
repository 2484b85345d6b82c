"""Correlations between measures across systems (analyses/correlation.py) against scipy, with orientation."""
import numpy as np
import pandas as pd
import pytest
import scipy.stats

from pyterrier_frechet.analyses.correlation import correlations, higher_is_better


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
    with pytest.raises(ValueError, match='at least 3 systems'):
        correlations(agree.iloc[:2])
    with pytest.raises(ValueError, match='no such column'):
        correlations(agree, ['nDCG@10', 'RR@10'])
