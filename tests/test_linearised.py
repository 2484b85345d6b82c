"""core.linearised: a statistic's bootstrap resamples from its leave-outs, linearised and anchored on exact draws."""
import numpy as np
import pytest

from pyterrier_frechet.analyses.bootstrap import draw_counts
from pyterrier_frechet.core.linearised import anchored_resamples, linearised_resamples


def test_linearised_resamples_of_a_mean_are_its_resampled_means_and_keep_the_jackknife_variance():
    """Closed forms: for a mean of
    per-query values the linearisation is exact (single queries, and clusters drawn
    whole with unequal sizes, normalised by each draw's total); an undefined leave-out makes every resample NaN; for
    a nonlinear statistic the resamples' variance is (n−1)/n of the jackknife variance up to Monte Carlo error."""
    from pyterrier_frechet.core.intervals import jackknife_se
    rng = np.random.default_rng(3)
    x = rng.gamma(2.0, size=40)
    n = len(x)
    counts = draw_counts(n, 500, 1, dtype=None)
    leave = (x.sum() - x) / (n - 1)
    np.testing.assert_allclose(linearised_resamples(x.mean(), leave, counts), counts @ x / n, rtol=1e-13)
    clusters = np.repeat(np.arange(7), [2, 3, 9, 4, 8, 6, 8])
    drawn_groups = draw_counts(7, 500, 2)[:, clusters]
    leave_g = np.array([x[clusters != g].mean() for g in range(7)])
    np.testing.assert_allclose(linearised_resamples(x.mean(), leave_g, drawn_groups, clusters),
                               drawn_groups @ x / drawn_groups.sum(axis=1), rtol=1e-13)
    assert np.isnan(linearised_resamples(x.mean(), np.r_[leave[:-1], np.nan], counts)).all()
    # a ratio of means: nonlinear; its linearised resamples' spread is the jackknife's
    y = rng.gamma(3.0, size=n)
    ratio = x.mean() / y.mean()
    leave_r = np.array([np.delete(x, i).mean() / np.delete(y, i).mean() for i in range(n)])
    many = draw_counts(n, 20000, 5, dtype=None)
    lin = linearised_resamples(ratio, leave_r, many)
    assert lin.mean() == pytest.approx(ratio, abs=3 * lin.std() / np.sqrt(len(lin)) + 1e-12)
    assert lin.std(ddof=1) == pytest.approx(np.sqrt((n - 1) / n) * jackknife_se(leave_r), rel=0.03)
    with pytest.raises(ValueError, match='leave-outs'):
        linearised_resamples(x.mean(), leave[:-1], counts)


def _plug_in_variance(x):
    return np.mean((x - x.mean()) ** 2)


def test_anchored_resamples_have_the_bootstrap_mean_of_a_plug_in_variance_that_linearisation_drops():
    """Closed form: for the plug-in variance v̂ = mean((x − x̄)²) every bootstrap resample has E*[v*] = (n−1)/n · v̂
    exactly; the linearised resamples are centred on v̂ (they drop that second-order shift), the anchored ones — the
    shift estimated from 200 exact draws — on (n−1)/n · v̂, each within its Monte Carlo error over 4000 draws."""
    rng = np.random.default_rng(11)
    x = rng.normal(size=40)
    n = len(x)
    v = _plug_in_variance(x)
    leave = np.array([_plug_in_variance(np.delete(x, i)) for i in range(n)])
    counts = draw_counts(n, 4000, 4, dtype=None)
    exact = np.array([np.average((x - np.average(x, weights=c)) ** 2, weights=c) for c in counts[:200]])
    lin = linearised_resamples(v, leave, counts)
    anchored = anchored_resamples(v, leave, counts, exact)
    mc = 4 * lin.std() / np.sqrt(len(lin))
    assert abs(lin.mean() - v) < mc
    assert abs(anchored.mean() - (n - 1) / n * v) < mc + 4 * np.std(exact - lin[:200]) / np.sqrt(200)
    assert abs(lin.mean() - (n - 1) / n * v) > 2 * mc   # the shift is real at n = 40, and the anchoring removes it
    np.testing.assert_allclose(anchored - lin, np.mean(exact - lin[:200]), rtol=1e-12)   # one shift, all draws
    assert anchored.std() == pytest.approx(lin.std(), rel=1e-12)


def test_anchored_resamples_skip_undefined_exact_draws_and_refuse_more_exact_draws_than_resamples():
    x = np.arange(1.0, 11.0)
    n = len(x)
    leave = (x.sum() - x) / (n - 1)
    counts = draw_counts(n, 30, 0, dtype=None)
    means = counts @ x / n
    # a mean: linearisation is exact, so any exact draws give a zero shift; NaN exact draws are left out of it
    exact = np.r_[means[:5] + 0.5, np.nan, means[6:8] + 0.5]
    np.testing.assert_allclose(anchored_resamples(x.mean(), leave, counts, exact), means + 0.5, rtol=1e-13)
    assert np.isnan(anchored_resamples(x.mean(), leave, counts, np.full(4, np.nan))).all()
    with pytest.raises(ValueError, match='K ≤ 30'):
        anchored_resamples(x.mean(), leave, counts, np.zeros(31))
