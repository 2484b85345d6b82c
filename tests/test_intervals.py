"""Bootstrap interval methods (core/intervals.py) against closed forms, and their calibration (analyses/calibration.py)."""
import numpy as np
import pandas as pd
import pytest
import scipy.stats

from pyterrier_frechet.core.intervals import bias_corrected, interval


def test_percentile_shifted_and_basic_against_hand_computation():
    samples = np.arange(1.0, 102.0)  # 1..101: the 2.5% and 97.5% quantiles are 3.5 and 98.5 (linear interpolation)
    assert interval('percentile', 10.0, samples, 0.95) == pytest.approx((3.5, 98.5))
    # basic reflects the quantiles about the estimate: 2·10 − 98.5, 2·10 − 3.5
    assert interval('basic', 10.0, samples, 0.95) == pytest.approx((-78.5, 16.5))
    # shifted moves the percentile interval by the bootstrap bias mean(θ*) − θ̂ = 51 − 10
    assert interval('shifted', 10.0, samples, 0.95) == pytest.approx((3.5 - 41, 98.5 - 41))
    assert bias_corrected(10.0, samples) == pytest.approx(2 * 10 - 51)
    assert interval('percentile', 1.0, [np.nan, np.inf], 0.95) == (pytest.approx(np.nan, nan_ok=True),) * 2


def test_bca_equals_scipy_bootstrap_bca():
    # scipy.stats.bootstrap's BCa on the mean of 30 values, with the same resamples: the same interval
    rng = np.random.default_rng(5)
    data = rng.exponential(size=30)
    res = scipy.stats.bootstrap((data,), np.mean, n_resamples=2000, method='BCa', random_state=np.random.default_rng(1),
                                confidence_level=0.9)
    boot = res.bootstrap_distribution
    jack = np.array([np.delete(data, i).mean() for i in range(len(data))])
    low, high = interval('bca', data.mean(), boot, 0.9, jackknife=jack)
    assert (low, high) == pytest.approx((res.confidence_interval.low, res.confidence_interval.high), rel=1e-3)


@pytest.mark.parametrize('n', [2, 5, 43, 300])
def test_t_interval_of_a_mean_is_scipys_t_interval_from_the_leave_one_out_means(n):
    # for a mean, the jackknife standard error over the leave-one-out means is s/√n exactly, so 't' is the textbook
    # Student t interval on n − 1 degrees of freedom — with or without resamples beside it
    data = np.random.default_rng(n).exponential(size=n)
    loo = np.array([np.delete(data, i).mean() for i in range(n)])
    low, high = scipy.stats.t.interval(0.9, n - 1, loc=data.mean(), scale=scipy.stats.sem(data))
    expected = max(low, data.min()), min(high, data.max())  # within the values (binds at n = 2 and 5 here)
    assert interval('t', data.mean(), np.array([]), 0.9, jackknife=loo) == pytest.approx(expected, rel=1e-12)
    assert interval('t', data.mean(), np.ones(7), 0.9, jackknife=loo) == pytest.approx(expected, rel=1e-12)
    # a finite population of N: the variance × (1 − n/N); an explicit df (the cluster jackknife's G − 1) is used as given
    half = scipy.stats.t.ppf(0.95, n - 1) * scipy.stats.sem(data) * np.sqrt(1 - n / 1000)
    assert interval('t', data.mean(), [], 0.9, jackknife=loo, fpc=1 - n / 1000) == pytest.approx(
        (max(data.mean() - half, data.min()), min(data.mean() + half, data.max())), rel=1e-12)
    half = scipy.stats.t.ppf(0.95, 1) * scipy.stats.sem(data)
    assert interval('t', data.mean(), [], 0.9, jackknife=loo, df=1) == pytest.approx(
        (max(data.mean() - half, data.min()), min(data.mean() + half, data.max())), rel=1e-12)
    with pytest.raises(ValueError, match='jackknife'):
        interval('t', data.mean(), np.ones(3), 0.9)


def test_t_interval_stays_within_the_per_query_values():
    # RR@10 near its ceiling (TREC DL 2019: 0.93–0.98 for 14 of 19 runs): the t interval would end above 1; clipped to
    # the range of the per-query values (a mean's jackknife pseudo-values) it ends at 1 exactly, its lower end is t's
    rr = np.array([1.0] * 40 + [0.5, 0.5, 0.25])
    loo = np.array([np.delete(rr, i).mean() for i in range(len(rr))])
    low, high = scipy.stats.t.interval(0.95, len(rr) - 1, loc=rr.mean(), scale=scipy.stats.sem(rr))
    assert high > 1 and interval('t', rr.mean(), [], 0.95, jackknife=loo) == pytest.approx((low, 1.0), rel=1e-12)
    values = np.array([0.0, 0.0, 0.0, 0.0, 1.0])  # and at 0 from below
    loo = np.array([np.delete(values, i).mean() for i in range(5)])
    assert interval('t', 0.2, [], 0.95, jackknife=loo)[0] == 0.0
    assert all(np.isnan(interval('t', 1.0, [], 0.9, jackknife=np.array([1.0]))))


def test_bca_is_undefined_when_every_resample_lies_on_one_side():
    # FD on DL19: all 1000 resamples above the estimate, so z0 = Φ⁻¹(0) = −∞
    assert all(np.isnan(interval('bca', 0.0, np.linspace(1, 2, 50), 0.95, jackknife=np.arange(5.0))))
    with pytest.raises(ValueError, match='jackknife'):
        interval('bca', 0.0, np.linspace(-1, 2, 50), 0.95)
    with pytest.raises(ValueError, match='method must be one of'):
        interval('student', 0.0, np.ones(3))


def test_cli_offers_every_interval_method():
    from pyterrier_frechet.cli import build_parser
    from pyterrier_frechet.core.intervals import METHODS
    sub = next(a for a in build_parser()._actions if a.dest == 'command' or getattr(a, 'choices', None) and 'bootstrap' in a.choices)
    interval = next(a for a in sub.choices['bootstrap']._actions if a.dest == 'interval')
    assert tuple(interval.choices) == METHODS


def test_bootstrap_jackknife_interval_equals_leave_one_query_out_by_hand(toy):
    # the jackknife values of the weighted path equal FD recomputed through ir_measures without each query
    import ir_measures
    import pyterrier as pt
    import pyterrier_frechet as pf
    from conftest import DictEncoder
    vectors, qrels, run = toy
    m = pf.FD(encoder=DictEncoder(vectors)) @ 3
    res = pf.bootstrap({'a': run}, qrels, [m], n_samples=100, seed=0, interval='jackknife', verbose=False)
    row = res.summary.iloc[0]
    units = ['q1', 'q2']  # the queries with relevant documents (q3 has none, q4 is not judged)
    full = ir_measures.calc_aggregate([m], pt.model.to_ir_measures(qrels), pt.model.to_ir_measures(run))[m]
    loo = []
    for q in units:
        keep_q, keep_r = qrels[qrels.qid != q], run[run.qid != q]
        rel = np.stack([vectors[d] for d in keep_q[keep_q.label >= 1].docno])
        top = keep_r.sort_values(['qid', 'score'], ascending=[True, False]).groupby('qid').head(3)
        top = top[top.qid.isin(keep_q[keep_q.label >= 1].qid)]
        loo.append(pf.frechet_distance(rel, np.stack([vectors[d] for d in top.docno])))
    n = len(units)
    se = np.sqrt((n - 1) / n * np.sum((np.array(loo) - np.mean(loo)) ** 2))
    z = scipy.stats.t.ppf(0.975, n - 1)  # the jackknife's t reference on n − 1 degrees of freedom
    assert row.value == pytest.approx(full, rel=1e-12) and row.estimate == row.value and row.interval == 'jackknife'
    assert (row.low, row.high) == pytest.approx((full - z * se, full + z * se), rel=1e-9)
    corrected = pf.bootstrap({'a': run}, qrels, [m], n_samples=100, seed=0, interval='jackknife_bc', verbose=False).summary.iloc[0]
    assert corrected.estimate == pytest.approx(n * full - (n - 1) * np.mean(loo), rel=1e-9)


@pytest.mark.slow  # a statistical calibration run; tests/test_calibration.py is its fast counterpart
def test_calibration_small_run_shows_which_intervals_cover():
    # the seeded small version of `calibrate` (the README table is the full run): at 43 queries the percentile
    # interval of FD never covers the population FD (FD's finite-sample bias puts every resample above it), the
    # jackknife bias-corrected interval does; population FD has a closed form, checked against a large sample
    from pyterrier_frechet.analyses.calibration import World, coverage, expected_fd
    world = World(d=8)
    table = coverage(world, n_queries=(43,), n_trials=40, n_samples=200, n_reference=200, seed=1, verbose=False)
    cov = table.set_index(['statistic', 'method', 'estimand'])['coverage']
    assert cov['FD', 'percentile', 'population'] <= 0.1
    assert cov['FD', 'jackknife_bc', 'population'] >= 0.85
    assert cov['ΔFD', 'percentile', 'population'] >= 0.85
    assert table.set_index(['statistic', 'method', 'estimand'])['undefined']['FD', 'percentile', 'population'] == 0
    # the closed-form population FD is what FD of very many queries converges to
    big = expected_fd(world, 3000, 3, seed=2)['A']
    assert big == pytest.approx(world.population_fd(world.p_a), rel=0.1)


def _tau_world(n_queries=12, n_runs=5, seed=0):
    """n_queries queries, each with 3 relevant documents near its own centre, and n_runs runs that retrieve 6 documents
    per query, drawn from the relevant ones and from off-topic ones in different shares (8-d vectors)."""
    import pandas as pd
    from conftest import DictEncoder
    rng = np.random.default_rng(seed)
    vectors, qrels, runs = {}, [], {f's{i}': [] for i in range(n_runs)}
    for q in range(n_queries):
        centre = rng.normal(size=8)
        for j in range(10):
            vectors[f'q{q}d{j}'] = centre + rng.normal(scale=0.7 if j < 3 else 1.5, size=8) + (0 if j < 3 else 1.0)
        qrels += [(f'q{q}', f'q{q}d{j}', 1) for j in range(3)] + [(f'q{q}', f'q{q}d9', 0)]
        for i, rows in enumerate(runs.values()):
            docs = rng.permutation(10)[:6] if rng.random() < 0.3 + 0.12 * i else np.r_[0:3, rng.permutation(np.arange(3, 10))[:3]]
            rows += [(f'q{q}', f'q{q}d{d}', float(6 - r)) for r, d in enumerate(docs)]
    frame = lambda rows: pd.DataFrame(rows, columns=['qid', 'docno', 'score'])
    return (DictEncoder(vectors), pd.DataFrame(qrels, columns=['qid', 'docno', 'label']),
            {name: frame(rows) for name, rows in runs.items()})


def test_tau_intervals_equal_a_hand_computation_over_the_bootstrap_samples(toy):
    import pyterrier_frechet as pf
    from ir_measures import nDCG
    from pyterrier_frechet.analyses.correlation import tau_intervals
    from conftest import DictEncoder
    vectors, qrels, run = toy
    rng = np.random.default_rng(0)
    runs = {f's{i}': run.assign(score=run.score + rng.normal(scale=3, size=len(run))) for i in range(4)}
    fd = pf.FD(encoder=DictEncoder(vectors)) @ 3
    boot = pf.bootstrap(runs, qrels, [fd, nDCG @ 3], n_samples=60, seed=2, verbose=False)
    row = tau_intervals(boot, [fd, nDCG @ 3]).iloc[0]
    names = list(runs)
    point = boot.summary.set_index(['name', 'measure'])['value']
    tau = scipy.stats.kendalltau([-point[n, str(fd)] for n in names], [point[n, 'nDCG@3'] for n in names]).statistic
    taus = [scipy.stats.kendalltau([-boot.samples[n][str(fd)][b] for n in names],
                                   [boot.samples[n]['nDCG@3'][b] for n in names]).statistic for b in range(60)]
    taus = np.array(taus)[np.all([np.isfinite(boot.samples[n][str(fd)]) for n in names], axis=0)]
    assert (row.a, row.b, row.n) == (str(fd), 'nDCG@3', 4) and row.kendall_tau == pytest.approx(tau)
    assert (row.tau_low, row.tau_high) == pytest.approx(tuple(np.quantile(taus[np.isfinite(taus)], [0.025, 0.975])))
    # τ_AP of FD's ranking against nDCG's, its interval likewise over the same samples
    from pyterrier_frechet.analyses.correlation import tau_ap
    aps = [tau_ap([-boot.samples[n][str(fd)][b] for n in names], [boot.samples[n]['nDCG@3'][b] for n in names])
           for b in range(60)]
    aps = np.array(aps)[np.all([np.isfinite(boot.samples[n][str(fd)]) for n in names], axis=0)]
    assert row.tau_ap == pytest.approx(tau_ap([-point[n, str(fd)] for n in names], [point[n, 'nDCG@3'] for n in names]))
    assert (row.tau_ap_low, row.tau_ap_high) == pytest.approx(tuple(np.quantile(aps, [0.025, 0.975])))


def test_tau_intervals_read_fd_anchored_on_its_first_exact_draws():
    """bootstrap(resample='needed') computes FD exactly on the first EXACT_DRAWS draws only (each equal to the full
    bootstrap's: the same draws, the first rows of the same stream) and gives the rest of the first TAU_DRAWS as its
    linearised resamples anchored on them (a hand computation from the full bootstrap's first exact draws and the
    leave-outs), nDCG on all; τ's interval is the percentile interval over those draws and says how many."""
    import pyterrier_frechet as pf
    from ir_measures import nDCG
    from pyterrier_frechet.analyses.bootstrap import EXACT_DRAWS, TAU_DRAWS, resample_counts
    from pyterrier_frechet.analyses.correlation import tau_ap, tau_intervals
    from pyterrier_frechet.core.linearised import anchored_resamples
    encoder, qrels, runs = _tau_world()
    fd, ndcg = pf.FD(encoder=encoder) @ 6, nDCG @ 6
    b = TAU_DRAWS + 60
    full = pf.bootstrap(runs, qrels, [fd, ndcg], n_samples=b, seed=2, verbose=False)
    lean = pf.bootstrap(runs, qrels, [fd, ndcg], n_samples=b, seed=2, verbose=False, resample='needed')
    names = list(runs)
    counts = resample_counts(len(full.queries), b, 2)[:TAU_DRAWS]
    point = full.summary.set_index(['name', 'measure'])['value']
    assert lean.is_anchored(str(fd)) and not lean.is_anchored('nDCG@6') and not full.is_anchored(str(fd))
    fd_star = []
    for name in names:
        assert len(lean.samples[name][str(fd)]) == TAU_DRAWS and lean.drawn(name, str(fd)) is None
        np.testing.assert_allclose(lean.jackknife[name][str(fd)], full.jackknife[name][str(fd)], rtol=1e-12)
        hand = anchored_resamples(point[name, str(fd)], full.jackknife[name][str(fd)], counts,
                                  full.samples[name][str(fd)][:EXACT_DRAWS])
        np.testing.assert_allclose(lean.samples[name][str(fd)], hand, rtol=1e-12)
        np.testing.assert_array_equal(lean.samples[name]['nDCG@6'], full.samples[name]['nDCG@6'])
        # the anchored draws keep the exact draws' location, and their spread is the exact draws' to a few per cent
        exact = full.samples[name][str(fd)][:TAU_DRAWS]
        assert np.std(hand) == pytest.approx(np.std(exact), rel=0.25)
        fd_star.append(-hand)
    # FD's interval and its leave-outs do not depend on the resamples
    pd.testing.assert_frame_equal(lean.summary[['name', 'measure', 'value', 'low', 'high', 'interval']],
                                  full.summary[['name', 'measure', 'value', 'low', 'high', 'interval']])
    row = tau_intervals(lean, [fd, ndcg]).iloc[0]
    fd_star = np.stack(fd_star)
    nd_star = np.stack([full.samples[n]['nDCG@6'][:TAU_DRAWS] for n in names])
    taus = [scipy.stats.kendalltau(fd_star[:, k], nd_star[:, k]).statistic for k in range(TAU_DRAWS)]
    aps = [tau_ap(fd_star[:, k], nd_star[:, k]) for k in range(TAU_DRAWS)]
    assert row.draws == TAU_DRAWS and tau_intervals(full, [fd, ndcg]).iloc[0].draws == b
    assert (row.tau_low, row.tau_high) == pytest.approx(tuple(np.quantile(taus, [0.025, 0.975])), abs=1e-12)
    assert (row.tau_ap_low, row.tau_ap_high) == pytest.approx(tuple(np.quantile(aps, [0.025, 0.975])), abs=1e-12)
    assert row.tau_low < row.kendall_tau < row.tau_high   # a real interval, not a point


@pytest.mark.parametrize('case', ['a judged query without relevant documents', 'delete-a-group jackknife'])
def test_fd_is_computed_on_every_tau_draw_where_its_leave_outs_cannot_anchor_them(case):
    """Where the leave-outs do not leave every judged query out alone — a judged query with no relevant document
    (its weight on the retrieved side is never varied by them) or the delete-a-group jackknife — the anchored route's
    τ coverage was not measured: FD is computed on every one of the first TAU_DRAWS, equal to the full bootstrap's."""
    import pyterrier_frechet as pf
    from ir_measures import nDCG
    from pyterrier_frechet.analyses.bootstrap import TAU_DRAWS
    encoder, qrels, runs = _tau_world()
    kwargs = {}
    if case.startswith('a judged'):
        qrels = qrels[~((qrels.qid == 'q3') & (qrels.label > 0))]
    else:
        kwargs = {'jackknife': 4}
    fd, ndcg = pf.FD(encoder=encoder) @ 6, nDCG @ 6
    b = TAU_DRAWS + 10
    full = pf.bootstrap(runs, qrels, [fd, ndcg], n_samples=b, seed=5, verbose=False, **kwargs)
    lean = pf.bootstrap(runs, qrels, [fd, ndcg], n_samples=b, seed=5, verbose=False, resample='needed', **kwargs)
    assert not lean.is_anchored(str(fd)) and lean.anchored == ()
    for name in runs:
        np.testing.assert_allclose(lean.samples[name][str(fd)], full.samples[name][str(fd)][:TAU_DRAWS], rtol=1e-12)


def test_tau_ap_weights_errors_at_the_top():
    """Yilmaz et al. 2008: one adjacent swap among 4 systems costs Kendall τ 1/3 wherever it is; τ_AP counts it more at
    the top. By hand: swap of the first two: C = (0, 2, 3) → 2/3 · (0 + 1 + 1) − 1 = 1/3; swap of the last two:
    C = (1, 2, 2) → 2/3 · (1 + 1 + 2/3) − 1 = 7/9."""
    from pyterrier_frechet.analyses.correlation import tau_ap
    x = [4, 3, 2, 1]
    assert tau_ap(x, [3, 4, 2, 1]) == pytest.approx(1 / 3)
    assert tau_ap(x, [4, 3, 1, 2]) == pytest.approx(7 / 9)
    assert tau_ap(x, x) == 1.0 and tau_ap(x, x[::-1]) == -1.0
    # a reference tie gets half credit: C = (½, 2, 3) → 2/3 · (½ + 1 + 1) − 1 = 2/3
    assert tau_ap(x, [4, 4, 2, 1]) == pytest.approx(2 / 3)
    # the mean over all rankings of 6 systems is 0 (random rankings)
    import itertools
    ref = np.arange(6, dtype=float)
    assert np.mean([tau_ap(np.array(p, dtype=float), ref) for p in itertools.permutations(range(6))]) == pytest.approx(0, abs=1e-12)


@pytest.mark.slow  # a statistical calibration run; tests/test_calibration.py is its fast counterpart
def test_tau_calibration_small_run():
    from pyterrier_frechet.analyses.calibration import World, tau_coverage
    table = tau_coverage(World(d=8), n_queries=(43,), n_trials=15, n_samples=60, seed=1, verbose=False)
    row = table.iloc[0]
    assert 0.6 <= row.coverage <= 1.0 and 0 < row.width < 2


def test_population_values_of_the_variants_are_what_many_queries_converge_to():
    """FD(weighting='query') has FD's population value in this world (a query's judgment count does not depend on its
    topic); CFD's closed form (per-query mean gap, per-query estimation noise, within-query trace term) is what CFD
    of 3000 queries converges to."""
    from pyterrier_frechet.analyses.calibration import World, expected_fd
    world = World(d=8)
    for statistic in ('fd-query', 'cfd'):
        big = expected_fd(world, 3000, 3, seed=2, statistic=statistic)
        assert big['A'] == pytest.approx(world.population(statistic, world.p_a), rel=0.1)
        assert big['delta'] == pytest.approx(world.population(statistic, world.p_a) - world.population(statistic, world.p_b),
                                             rel=0.15)
    with pytest.raises(ValueError, match='statistic must be one of'):
        expected_fd(world, 10, 1, seed=0, statistic='fid')


@pytest.mark.slow  # a statistical calibration run; tests/test_calibration.py is its fast counterpart
def test_cfd_calibration_small_run():
    from pyterrier_frechet.analyses.calibration import World, coverage
    table = coverage(World(d=8), n_queries=(43,), n_trials=30, n_samples=150, n_reference=100, seed=3, verbose=False,
                     statistic='cfd')
    cov = table.set_index(['statistic', 'method', 'estimand'])['coverage']
    assert (table['measure'] == 'cfd').all()
    assert cov['FD', 'jackknife_bc', 'population'] >= 0.8 and cov['ΔFD', 'jackknife', 'population'] >= 0.8


@pytest.mark.slow  # a statistical calibration run; tests/test_calibration.py is its fast counterpart
def test_paired_bootstrap_test_level_and_power_small_run():
    """Two copies of one system: the paired bootstrap test rejects at about α or less (binomial slack for 60
    trials); two different systems: more often."""
    from pyterrier_frechet.analyses.calibration import World, rejection_rates
    table = rejection_rates(World(d=8), n_queries=(43,), n_trials=60, n_samples=200, seed=5, verbose=False,
                            tests=('bootstrap', 'normal'))
    null = [h for h in table.hypothesis.unique() if h.startswith('null')][0]
    alt = [h for h in table.hypothesis.unique() if h.startswith('alternative')][0]
    for test in ('bootstrap', 'normal'):  # the count p-value, and compare's default (normal approximation)
        rate = table[table.test == test].set_index(['hypothesis', 'measure'])['rejection_rate']
        assert rate[null, 'fd'] <= 0.05 + 2.5 * np.sqrt(0.05 * 0.95 / 60) and rate[null, 'precision'] <= 0.15
        assert rate[alt, 'fd'] > rate[null, 'fd'] and rate[alt, 'precision'] > rate[null, 'precision']


def test_jackknife_log_interval_by_hand():
    """exp(log θ̂ ± q·SE_J(log θ₍ᵢ₎)), SE_J² = (n−1)/n Σ(log θ₍ᵢ₎ − mean)², written out for four values; q is
    Student t's on n − 1 = 3 degrees of freedom (3.1824463052837, tables), the normal's on ``df=math.inf``."""
    import math
    from pyterrier_frechet.core.intervals import interval
    jack = [1.0, 2.0, 4.0, 8.0]
    logs = [math.log(v) for v in jack]
    mean = sum(logs) / 4
    se = math.sqrt(3 / 4 * sum((v - mean) ** 2 for v in logs))  # = sqrt(3/4 · 5·ln2²) = ln2·sqrt(15/4)
    assert se == pytest.approx(math.log(2) * math.sqrt(15 / 4))
    t3, z = 3.1824463052837, 1.959963984540054
    low, high = interval('jackknife_log', 3.0, [], 0.95, jackknife=jack)
    assert low == pytest.approx(3.0 * math.exp(-t3 * se)) and high == pytest.approx(3.0 * math.exp(t3 * se))
    low, high = interval('jackknife_log', 3.0, [], 0.95, jackknife=jack, df=math.inf)
    assert low == pytest.approx(3.0 * math.exp(-z * se)) and high == pytest.approx(3.0 * math.exp(z * se))
    assert low * high == pytest.approx(9.0)  # symmetric on the log scale around θ̂
    assert math.isnan(interval('jackknife_log', 3.0, [], 0.95, jackknife=[1.0, 0.0, 2.0])[0])  # a value ≤ 0
