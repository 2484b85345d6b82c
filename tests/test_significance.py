"""Paired tests of an FD difference: exact values on the full set, symmetry, and calibration under the null."""
import math

import ir_measures
import numpy as np
import scipy.stats
import pandas as pd
import pyterrier as pt
import pytest
from hypothesis import given, settings, strategies as st

import pyterrier_frechet as pf
import pyterrier_frechet.analyses.significance
from pyterrier_frechet.analyses.significance import paired_test
from conftest import DictEncoder


def test_full_set_values_and_symmetry(toy):
    vectors, qrels, run = toy
    other = run.assign(score=-run.score)
    m = pf.FD(encoder=DictEncoder(vectors)) @ 3
    r = paired_test(run, other, qrels, m, n_samples=100, n_permutations=99, seed=1)
    expect = [ir_measures.calc_aggregate([m], pt.model.to_ir_measures(qrels), pt.model.to_ir_measures(x))[m] for x in (run, other)]
    assert r.fd_a == pytest.approx(expect[0], rel=1e-7) and r.fd_b == pytest.approx(expect[1], rel=1e-7)
    assert r.diff == pytest.approx(expect[0] - expect[1], rel=1e-7) and r.ci_low <= r.ci_high
    swapped = paired_test(other, run, qrels, m, n_samples=100, n_permutations=99, seed=1)
    assert swapped.diff == pytest.approx(-r.diff) and swapped.p_randomisation == pytest.approx(r.p_randomisation)
    same = paired_test(run, run, qrels, m, n_samples=50, n_permutations=49)
    assert same.diff == 0 and same.p_randomisation == 1.0


def _null_trial(seed):
    rng = np.random.default_rng(seed)
    vectors, qrels, runs = {}, [], {'A': [], 'B': []}
    for q in range(15):
        for j in range(3):
            d = f'q{q}r{j}'
            vectors[d] = rng.normal(size=4)
            qrels.append((f'q{q}', d, 1))
        for name in runs:  # both systems retrieve from one distribution
            for j in range(5):
                d = f'q{q}{name}{j}'
                vectors[d] = rng.normal(size=4) + 0.3
                runs[name].append((f'q{q}', d, float(5 - j)))
    frame = lambda rows: pd.DataFrame(rows, columns=['qid', 'docno', 'score'])
    m = pf.FD(encoder=DictEncoder(vectors)) @ 5
    return paired_test(frame(runs['A']), frame(runs['B']), pd.DataFrame(qrels, columns=['qid', 'docno', 'label']), m,
                       n_samples=20, n_permutations=99, seed=seed)


def test_randomisation_test_calibrated_under_the_null():
    p = np.array([_null_trial(seed).p_randomisation for seed in range(200)])
    rejected = float(np.mean(p < 0.05))
    assert rejected <= 0.08, rejected
    assert p.min() < 0.5 < p.max()  # the p-values do vary across trials


def test_holm_by_hand():
    from pyterrier_frechet.analyses.significance import holm
    # sorted: 0.005·4 = 0.02, 0.01·3 = 0.03, 0.03·2 = 0.06, 0.04·1 = 0.04 → raised to the running max 0.06
    np.testing.assert_allclose(holm([0.01, 0.04, 0.03, 0.005]), [0.03, 0.06, 0.06, 0.02])
    assert np.isnan(holm([0.2, np.nan])[1]) and holm([0.2, np.nan])[0] == 0.2  # NaN is not counted in the family
    assert holm([0.6, 0.7]).tolist() == [1.0, 1.0]  # capped at 1


def _systems(toy):
    vectors, qrels, run = toy
    rng = np.random.default_rng(0)
    noisy = run.assign(score=run.score + rng.normal(scale=3.0, size=len(run)))
    return vectors, qrels, {'fwd': run, 'rev': run.assign(score=-run.score), 'noisy': noisy}


def test_compare_systems_equals_paired_test_and_a_hand_bootstrap(toy):
    from pyterrier_frechet.analyses.bootstrap import draw_counts
    from pyterrier_frechet.analyses.significance import compare_systems
    vectors, qrels, runs = _systems(toy)
    fd = pf.FD(encoder=DictEncoder(vectors)) @ 3
    ndcg = ir_measures.nDCG @ 3
    table = compare_systems(runs, qrels, [fd, ndcg], n_samples=200, seed=4, n_permutations=99, verbose=False)
    assert len(table) == 2 * 3 and list(table.a[:3]) == ['fwd', 'fwd', 'rev'] and list(table.b[:3]) == ['rev', 'noisy', 'noisy']
    row = table[(table.measure == str(fd)) & (table.a == 'fwd') & (table.b == 'rev')].iloc[0]
    ref = paired_test(runs['fwd'], runs['rev'], qrels, fd, n_samples=200, n_permutations=99, seed=4)
    # the default test's bootstrap computes FD on the first 200 draws (all of them here): the same table
    assert row.test == 'jackknife'
    full = compare_systems(runs, qrels, [fd, ndcg], n_samples=200, seed=4, n_permutations=99, verbose=False,
                           boot=pf.bootstrap(runs, qrels, [fd, ndcg], n_samples=200, seed=4, verbose=False, resample='all'))
    pd.testing.assert_frame_equal(full, table, rtol=1e-12)
    # with more draws than τ reads, FD is not on every draw: no count or normal p for it, the rest unchanged
    more = compare_systems(runs, qrels, [fd, ndcg], n_samples=260, seed=4, verbose=False)
    more_full = compare_systems(runs, qrels, [fd, ndcg], n_samples=260, seed=4, verbose=False,
                                boot=pf.bootstrap(runs, qrels, [fd, ndcg], n_samples=260, seed=4, verbose=False))
    fd_more = more[more.measure == str(fd)]
    assert fd_more.p_bootstrap.isna().all() and fd_more.p_normal.isna().all()
    pd.testing.assert_frame_equal(more.drop(columns=['p_bootstrap', 'p_normal']),
                                  more_full.drop(columns=['p_bootstrap', 'p_normal']), rtol=1e-12)
    row = full[(full.measure == str(fd)) & (full.a == 'fwd') & (full.b == 'rev')].iloc[0]
    assert row['diff'] == pytest.approx(ref.diff, rel=1e-9) and row.p_bootstrap == ref.p_bootstrap
    assert (row.ci_low, row.ci_high) == pytest.approx((ref.ci_low, ref.ci_high), rel=1e-9)
    assert row.p_randomisation == ref.p_randomisation
    # nDCG: the paired bootstrap of a mean difference, written directly from per-query values and the same draws
    qrels_ir = pt.model.to_ir_measures(qrels)
    queries = sorted(qrels_ir.query_id.unique())
    per_q = {}
    for name in ('fwd', 'noisy'):
        values = {m.query_id: m.value for m in ir_measures.iter_calc([ndcg], qrels_ir, pt.model.to_ir_measures(runs[name]))}
        per_q[name] = np.array([values.get(q, 0.0) for q in queries])
    diffs = draw_counts(len(queries), 200, 4) @ (per_q['fwd'] - per_q['noisy']) / len(queries)
    row = table[(table.measure == 'nDCG@3') & (table.a == 'fwd') & (table.b == 'noisy')].iloc[0]
    assert row.p_bootstrap == pytest.approx(min(1.0, 2 * (1 + min(np.sum(diffs <= 0), np.sum(diffs >= 0))) / (len(diffs) + 1)))
    # p from the normal approximation of the same resampled differences
    assert row.p_normal == pytest.approx(2 * scipy.stats.norm.sf(abs(row['diff']) / np.std(diffs, ddof=1)), rel=1e-12)
    # the default test of a per-query mean: scipy's paired t-test on the per-query values, and its t interval
    ref = scipy.stats.ttest_rel(per_q['fwd'], per_q['noisy'])
    assert row.test == 't' and row.p_t == pytest.approx(ref.pvalue, rel=1e-10) and np.isnan(row.p_jackknife)
    assert row.interval == 'paired t'
    assert (row.ci_low, row.ci_high) == pytest.approx(tuple(ref.confidence_interval(0.95)), rel=1e-10)
    # nDCG: the paired t-test; FD: the jackknife p of its difference; Holm over each measure's own p
    assert (table[table.measure == 'nDCG@3'].test == 't').all() and (table[table.measure == str(fd)].test == 'jackknife').all()
    holm_expected = pf.analyses.significance.holm(table[table.measure == 'nDCG@3'].p_t)
    np.testing.assert_allclose(table[table.measure == 'nDCG@3'].p_holm, holm_expected)
    assert table[table.measure == str(fd)].p_t.isna().all()
    # test='normal': Holm over the normal p of the resampled differences, for nDCG too
    normal = compare_systems(runs, qrels, [ndcg], n_samples=200, seed=4, verbose=False, test='normal')
    assert (normal.test == 'normal').all()
    np.testing.assert_allclose(normal.p_holm, pf.analyses.significance.holm(normal.p_normal))
    fd_rows = table[table.measure == str(fd)]
    np.testing.assert_allclose(fd_rows.p_holm, pf.analyses.significance.holm(fd_rows.p_jackknife))
    # the jackknife p of FD_fwd − FD_rev, written from paired_test's own leave-one-out route: the same ± z·SE_J test
    # as its jackknife interval — 0 lies outside the 95% interval exactly when p < 0.05
    row = fd_rows[(fd_rows.a == 'fwd') & (fd_rows.b == 'rev')].iloc[0]
    assert (row.p_jackknife < 0.05) == (not row.ci_low <= 0 <= row.ci_high)
    counted = compare_systems(runs, qrels, [ndcg], n_samples=200, seed=4, verbose=False, test='bootstrap')
    np.testing.assert_allclose(counted.p_holm, pf.analyses.significance.holm(counted.p_bootstrap))


def test_compare_against_a_baseline_names_the_better_system(toy):
    from pyterrier_frechet.analyses.significance import compare_systems
    vectors, qrels, runs = _systems(toy)
    ndcg = ir_measures.nDCG @ 3
    table = compare_systems(runs, qrels, [ndcg, pf.FD(encoder=DictEncoder(vectors)) @ 3], baseline='rev', n_samples=300,
                            seed=0, alpha=0.999, verbose=False)  # alpha is in (0, 1), as --alpha takes it
    assert table.a.unique().tolist() == ['rev'] and sorted(table.b) == ['fwd', 'fwd', 'noisy', 'noisy']
    called = table[table.p_holm < 0.999]
    assert len(called) >= 3
    for row in called.itertuples():  # every comparison called names the better system by orientation
        lower_is_better = row.measure.startswith('FD')
        a_better = row.value_a < row.value_b if lower_is_better else row.value_a > row.value_b
        assert row.better == (row.a if a_better else row.b)
    with pytest.raises(ValueError, match='baseline'):
        compare_systems(runs, qrels, [ndcg], baseline='nope')


def test_few_resamples_warning_names_only_what_uses_the_resamples(toy):
    """FD's jackknife test and interval, and nDCG's paired t-test and interval, use the leave-outs, not the resamples:
    no "move with the seed" warning for them at 200 resamples. test='normal' uses the resamples, for either."""
    import warnings
    from pyterrier_frechet.analyses.significance import compare_systems
    vectors, qrels, runs = _systems(toy)
    fd, ndcg = pf.FD(encoder=DictEncoder(vectors)) @ 3, ir_measures.nDCG @ 3

    def seed_warnings(measures, test='jackknife'):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter('always')
            compare_systems(runs, qrels, measures, n_samples=200, seed=0, verbose=False, test=test)
        return [str(w.message) for w in caught if 'move with the seed' in str(w.message)]
    assert seed_warnings([fd]) == [] and seed_warnings([fd, ndcg]) == []
    assert len(got := seed_warnings([fd, ndcg], test='normal')) == 1 and 'nDCG@3' in got[0] and str(fd) in got[0]


def test_normal_and_jackknife_p_values_are_not_quantised_by_the_resample_count():
    """Closed forms (math.erfc, independent of scipy): p = erfc(|z|/√2) with z = Δ̂/sd(Δ*) for the normal test, and
    z = Δ̂/SE_J for the jackknife one with the normal reference; its default t reference on n − 1 degrees of freedom
    is, for a per-query mean (SE_J = s/√n), scipy's one-sample t-test of the per-query differences."""
    import math
    from pyterrier_frechet.analyses.options import samples_for_holm
    from pyterrier_frechet.analyses.significance import bootstrap_p, jackknife_p, normal_p
    diffs = np.tile([-1.0, 1.0], 500)
    sd = math.sqrt(1000 / 999)
    for diff in (0.0, 0.3, 2.5, 6.0):
        assert normal_p(diff, diffs) == pytest.approx(math.erfc(diff / sd / math.sqrt(2)), rel=1e-12)
    # far below the count p-value's floor 2/(B+1) for the same 1000 resamples: Holm over 171 pairs can be resolved
    assert normal_p(6.0, diffs) < 1e-8 < 2 / 1001 <= bootstrap_p(diffs + 6.0)
    assert normal_p(0.0, np.zeros(10)) == 1.0 and normal_p(0.5, np.full(10, 0.5)) == 0.0
    assert np.isnan(normal_p(0.5, [np.nan, 1.0]))
    x = np.random.default_rng(1).normal(0.2, 1.0, size=30)  # per-query differences
    jack = (x.sum() - x) / (len(x) - 1)
    se = x.std(ddof=1) / math.sqrt(len(x))
    assert jackknife_p(x.mean(), jack, df=math.inf) == pytest.approx(math.erfc(abs(x.mean()) / se / math.sqrt(2)),
                                                                   rel=1e-10)
    assert jackknife_p(x.mean(), jack) == pytest.approx(scipy.stats.ttest_1samp(x, 0.0).pvalue, rel=1e-10)
    # the count test's sample counts that resolve Holm's first step: 2/(B+1) < alpha/m
    assert samples_for_holm(0.05, 171) == 6840 and samples_for_holm(0.05, 36) == 1440 and samples_for_holm(0.05, 3) == 1000
    for m in (1, 7, 36, 55, 171):
        b = samples_for_holm(0.05, m, at_least=1)
        assert 2 / (b + 1) < 0.05 / m <= 2 / b + 1e-15  # and b − 1 does not


def test_compare_tests_a_per_query_measure_as_pt_experiment_does():
    """A per-query measure's default paired test is the one pt.Experiment(baseline=...) runs: the same p-value for
    every run against the baseline (pt.Experiment: scipy's paired t-test on ir_measures' per-query values)."""
    from pyterrier_frechet.analyses.significance import compare_systems
    rng = np.random.default_rng(11)
    qrels = pd.DataFrame([(f'q{q}', f'q{q}d{j}', int(rng.integers(1, 3) if j < 3 else rng.integers(0, 2)))
                          for q in range(25) for j in range(8)],
                         columns=['qid', 'docno', 'label'])
    runs = {name: pd.DataFrame([(f'q{q}', f'q{q}d{j}', float(rng.normal() + skill * (j < 3)))
                                for q in range(25) for j in range(8)], columns=['qid', 'docno', 'score'])
            for name, skill in (('base', 0.0), ('better', 1.5), ('same', 0.0))}
    ndcg, rr = ir_measures.nDCG @ 3, ir_measures.RR @ 3
    table = compare_systems(runs, qrels, [ndcg, rr], baseline='base', n_samples=200, seed=0, verbose=False)
    topics = pd.DataFrame({'qid': [f'q{q}' for q in range(25)], 'query': 'x'})
    names = list(runs)
    experiment = pt.Experiment([runs[n] for n in names], topics, qrels, [ndcg, rr], names=names, baseline=0)
    experiment = experiment.set_index('name')
    for measure in ('nDCG@3', 'RR@3'):
        for b in ('better', 'same'):
            row = table[(table.measure == measure) & (table.b == b)].iloc[0]
            assert row.test == 't' and row['diff'] == pytest.approx(experiment.loc['base', measure]
                                                                    - experiment.loc[b, measure], abs=1e-12)
            assert row.p_t == pytest.approx(experiment.loc[b, f'{measure} p-value'], rel=1e-9)
    assert table[table.b == "better"].p_t.max() < 0.01 < table[table.b == "same"].p_t.min()  # both kinds of pair


@settings(max_examples=300, deadline=None)
@given(st.integers(2, 60), st.floats(-3.0, 3.0), st.floats(0.01, 2.0), st.integers(0, 5), st.integers(0, 2 ** 32 - 1),
       st.sampled_from([None, math.inf, 3.0]), st.sampled_from([1.0, 0.36]), st.sampled_from([0.9, 0.95, 0.99]))
def test_every_jackknife_interval_and_test_share_one_reference(n, diff, spread, undefined, seed, df, fpc, ci):
    """One reference for the jackknife interval and the jackknife test, whatever the caller passes or leaves out
    (the class of defect where ``interval`` defaulted to the normal and ``jackknife_p`` to t): the (1 − α) interval
    of Δ̂ excludes 0 exactly when the test's p < α, and with ``df`` left out both are Student t on m − 1 over the m
    finite leave-outs (NaN leave-outs are not counted), written out with scipy."""
    from pyterrier_frechet.analyses.significance import jackknife_p
    from pyterrier_frechet.core.intervals import interval, jackknife_df
    rng = np.random.default_rng(seed)
    jack = diff + spread * rng.standard_normal(n)
    jack[rng.choice(n, size=min(undefined, n - 2), replace=False)] = np.nan
    finite = jack[np.isfinite(jack)]
    m = len(finite)
    assert jackknife_df(jack) == m - 1
    low, high = interval('jackknife', diff, np.array([]), ci, jackknife=jack, fpc=fpc, df=df)
    p = jackknife_p(diff, jack, fpc=fpc, df=df)
    se = math.sqrt(fpc * (m - 1) / m * np.sum((finite - finite.mean()) ** 2))
    q = scipy.stats.t.ppf(1 - (1 - ci) / 2, m - 1 if df is None else df)
    assert (high - low) / 2 == pytest.approx(q * se, rel=1e-10)
    assert p == pytest.approx(min(1.0, 2 * scipy.stats.t.sf(abs(diff) / se, m - 1 if df is None else df)), rel=1e-9)
    if abs(abs(diff) - q * se) > 1e-9 * max(1.0, abs(diff)):   # away from the boundary, duality holds exactly
        assert (not low <= 0.0 <= high) == (p < 1 - ci)


@pytest.mark.parametrize('n_samples', [100, 1000])
def test_a_measure_without_a_resampling_is_refused_whatever_the_samples(toy, n_samples):
    """FDInf has no resampling: compare_systems refused it at 1000 samples but, below 1000, asked it for its paired test
    first and died with an AttributeError. Every sample count gets the same clear refusal, before any work."""
    from pyterrier_frechet.analyses.significance import compare_systems
    vectors, qrels, runs = _systems(toy)
    with pytest.raises(ValueError, match=r"the bootstrap has no fast path for \['FDInf"):
        compare_systems(runs, qrels, [pf.FDInf(encoder=DictEncoder(vectors)) @ 3], n_samples=n_samples, verbose=False)
