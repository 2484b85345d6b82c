"""FD's per-query jackknife pseudo-values (core/jackknife.py): refusals of what would be NaN, and centred
pseudo-values of groups that give the delete-a-group jackknife's t."""
import numpy as np
import pytest

from pyterrier_frechet.core.jackknife import centred_pseudo_values, jackknife_pseudo_values
from test_weighted import _synthetic


def test_pseudo_values_refuse_what_would_be_nan():
    rel, rel_q, ret, ret_q = _synthetic()
    qs = lambda a: np.array([f'q{i}' for i in a])  # noqa: E731
    with pytest.raises(ValueError, match='at least 2 queries'):  # one unit
        jackknife_pseudo_values(rel[rel_q == 0], qs(rel_q[rel_q == 0]), ret[ret_q == 0], qs(ret_q[ret_q == 0]), ['q0'])
    # two units, one holding all but one relevant vector: leaving it out leaves 1
    r = np.concatenate([rel[:1], rel[rel_q == 1]])
    rq = np.array(['a'] + ['b'] * int((rel_q == 1).sum()))
    with pytest.raises(ValueError, match="leaving out 1 of 2 queries .*'b'.*fewer than 2 vectors"):
        jackknife_pseudo_values(r, rq, ret[:10], np.array(['a'] * 5 + ['b'] * 5), ['a', 'b'])


def test_centred_pseudo_values_of_groups_give_the_delete_a_group_t():
    # 12 units in G = 4 equal groups (3 each), two systems: the rows' mean is the full value and their paired t
    # statistic is Δθ̂ / SE_G with SE_G² = (G−1)/G Σ_g (Δθ₋g − mean)², the delete-a-group jackknife's
    rng = np.random.default_rng(5)
    groups = np.array([0, 1, 2, 3] * 3 + [-1])  # the last query is no unit
    loo_a, loo_b = rng.normal(1.0, 0.1, 4), rng.normal(1.2, 0.1, 4)
    rows_a, rows_b = centred_pseudo_values(0.9, loo_a, groups), centred_pseudo_values(1.1, loo_b, groups)
    assert np.isnan(rows_a[-1]) and np.nanmean(rows_a) == pytest.approx(0.9, rel=1e-14)
    d = (rows_a - rows_b)[:-1]
    t_rows = d.mean() / (d.std(ddof=1) / np.sqrt(len(d)))
    delta = loo_a - loo_b
    se = np.sqrt(3 / 4 * np.sum((delta - delta.mean()) ** 2))
    assert t_rows == pytest.approx((0.9 - 1.1) / se, rel=1e-12)
    with pytest.raises(ValueError, match='leave-outs are undefined'):
        centred_pseudo_values(0.9, np.array([1.0, np.nan, 1.0, 1.0]), groups)
