"""benchmarks/calibrate_worlds.py, the harness behind pt_docs Calibration: its leave-out values are the FDs of the
query sets with one query removed (recomputed here from the vectors with numpy), and a whole trial with every
interval and test runs through (the harness reaches into the package, so a renamed package function breaks it here,
not in a two-hour calibration run). Also the class of that breakage: benchmarks/ and examples/ import no private
names of the package."""
import ast
from pathlib import Path

import math

import numpy as np
import pytest
import scipy.linalg
import scipy.stats

from benchmarks import calibrate_worlds as cw
from benchmarks.worlds import make_world

ROOT = Path(__file__).resolve().parents[1]


def fd_numpy(x: np.ndarray, y: np.ndarray) -> float:
    """FD of two row sets written out: means, unbiased covariances (the paper's), sqrtm by scipy."""
    mu, nu = x.mean(0), y.mean(0)
    a, b = np.cov(x.T), np.cov(y.T)
    root = scipy.linalg.sqrtm(a @ b).real
    return float(np.sum((mu - nu) ** 2) + np.trace(a + b - 2 * root))


def test_leave_one_out_is_fd_without_that_query():
    world = make_world('independent', d=4, seed=3)
    sample = world.draw(12, np.random.default_rng(5))
    rel, rets, shift = cw.set_stats(sample, 'fd')
    system = world.systems[0]
    loo = cw.leave_one_out(rel, rets[system], shift, len(sample.qids))
    vecs, qids, _ = sample.retrieved[system]
    rel_vecs, rel_qids = np.asarray(sample.relevant, float), np.asarray(sample.relevant_qid)
    for i, q in enumerate(sample.qids):
        keep_rel, keep_ret = rel_qids != q, np.asarray(qids) != q
        assert np.isclose(loo[i], fd_numpy(rel_vecs[keep_rel], np.asarray(vecs, float)[keep_ret]), rtol=1e-9)


def test_a_trial_with_every_interval_and_test_runs(tmp_path):
    world = make_world('independent', d=4, seed=0)
    cov, tests, context, trials = cw.run(world, 15, n_trials=2, n_reference=4, n_samples=30, n_permutations=20,
                                         seed=0, verbose=False)
    methods = set(cov.method)
    assert {'jackknife', 'jackknife_log', 'percentile', 'shifted'} <= methods
    assert {'jackknife z', 'bootstrap', 'bootstrap normal', 'randomisation'} <= set(tests.test)
    assert cov.coverage.between(0, 1).all() and (cov.trials == 2).all()
    assert 'τ(FD, nDCG)' in set(cov.statistic)
    assert sorted(context.index) == sorted(world.systems)
    # the trials file: one interval per trial and row of the coverage table, from which coverage, width and truth
    # come back exactly (so a run can be scored again against another truth)
    keys = ['statistic', 'method', 'estimand', 'who']
    assert (trials.groupby(keys).size() == 2).all() and len(trials) == 2 * len(cov)
    assert sorted(trials.trial.unique()) == [0, 1]
    inside = (trials.low <= trials.truth) & (trials.truth <= trials.high + 1e-12)
    rescored = trials.assign(covered=inside.where(np.isfinite(trials.low)).astype(float), width=trials.high - trials.low)
    again = rescored.groupby(keys).agg(coverage=('covered', 'mean'), width=('width', 'mean'), truth=('truth', 'first'))
    merged = cov.set_index(keys)[['coverage', 'width', 'truth']].join(again, rsuffix='_trials')
    for column in ('coverage', 'width', 'truth'):
        assert np.allclose(merged[column], merged[f'{column}_trials'], rtol=1e-12, equal_nan=True)
    # each trial's FD estimate is the same for every FD interval of a system, and lies inside the default one
    fd = trials[(trials.statistic == 'FD') & (trials.estimand == 'E[FD_n]')]
    assert (fd.groupby(['trial', 'who']).estimate.nunique() == 1).all()
    default = fd[fd.method == 'jackknife_log t']
    assert ((default.low < default.estimate) & (default.estimate < default.high)).all()
    # τ's exact-nDCG truth: scipy's τ-b of the systems' E[FD̂ₙ] (negated: lower is better) and population mean nDCG
    exact = cov[cov.estimand == 'τ of E[FD_n] and population mean nDCG']
    assert set(exact.method) == {*cw.TAU_METHODS, "linearised"}  # the linearised route: studied, not offered
    expected = scipy.stats.kendalltau(-context['E[FD_n]'], context['mean nDCG']).statistic
    assert np.allclose(exact.truth, expected, rtol=1e-12)
    # ... and the reference-set one is scipy's with the reference sets' nDCG means: here they differ (the population
    # ties mid_a and mid_b, four reference sets do not), so neither truth can stand in for the other
    ref = cw.reference(world, 15, 4, 0, 'fd')
    from_reference = scipy.stats.kendalltau(-context['E[FD_n]'],
                                            ref.groupby('system')['ndcg'].mean()[context.index]).statistic
    old = cov[cov.estimand == 'τ of E[FD_n] and mean nDCG']
    assert np.allclose(old.truth, from_reference, rtol=1e-12) and not np.isclose(from_reference, expected)


def test_cluster_leave_outs_are_fd_without_each_topic():
    """--query-groups: the topics world's groups are its topics, and each leave-out is FD without that topic's queries."""
    world = make_world('topics', d=4, seed=1)
    sample = world.draw(14, np.random.default_rng(2))
    clusters = cw.topic_clusters(sample.qids)
    topics = [q.split('_q')[0] for q in sample.qids]
    assert len(set(clusters)) == len(set(topics)) >= 2
    assert all((clusters[i] == clusters[j]) == (topics[i] == topics[j]) for i in range(14) for j in range(14))
    rel, rets, shift = cw.set_stats(sample, 'fd')
    system = world.systems[0]
    out = cw.cluster_leave_outs(rel, rets[system], shift, clusters)
    assert len(out) == len(set(topics)) and np.isfinite(out).all()     # t on G − 1 (jackknife_df) downstream
    vecs, qids, _ = sample.retrieved[system]
    rel_vecs, rel_qids = np.asarray(sample.relevant, float), np.asarray(sample.relevant_qid)
    for g in range(len(set(topics))):
        gone = {q for q, c in zip(sample.qids, clusters) if c == g}
        keep_rel = ~np.isin(rel_qids, list(gone))
        keep_ret = ~np.isin(np.asarray(qids), list(gone))
        assert np.isclose(out[g], fd_numpy(rel_vecs[keep_rel], np.asarray(vecs, float)[keep_ret]), rtol=1e-9)
    cov, tests, _, _ = cw.run(world, 14, n_trials=2, n_reference=4, n_samples=0, n_permutations=0, seed=0, verbose=False,
                           query_groups=True)
    assert {'jackknife_log groups', 'jackknife groups', 't groups'} <= set(cov.method)
    assert 'jackknife groups' in set(tests.test)


def _private_package_imports(path: Path):
    tree = ast.parse(path.read_text(encoding='utf-8'))
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and (node.module or '').startswith('pyterrier_frechet'):
            for alias in node.names:
                if alias.name.startswith('_'):
                    yield f'{path.relative_to(ROOT)}:{node.lineno} {node.module}.{alias.name}'


def test_benchmarks_and_examples_import_no_private_package_names():
    found = [hit for folder in ('benchmarks', 'examples') for path in sorted((ROOT / folder).rglob('*.py'))
             for hit in _private_package_imports(path)]
    assert not found, f'private names change without notice; make them public or use the public API: {found}'


def test_interval_alternatives_are_the_package_interval_on_both_references():
    """benchmarks/interval_alternatives.py scores alternatives beside the default: its 'log t(n-1) (default)' must be
    the package's jackknife_log interval and its 'log z (normal)' the same on ``df=math.inf`` (else the comparison is
    with something else), t wider than z by the quantile ratio, and a symmetric set (no skewness) leaves the
    Cornish-Fisher interval where the normal one is."""
    from benchmarks.interval_alternatives import log_intervals
    from pyterrier_frechet.core.intervals import interval
    rng = np.random.default_rng(4)
    loos = np.exp(rng.normal(1.0, 0.05, size=(3, 2, 25)))
    est = np.exp(rng.normal(1.0, 0.05, size=(3, 2)))
    got, kurtosis = log_intervals(est, loos)
    low, high = got['log z (normal)']
    t_low, t_high = got['log t(n-1) (default)']
    for t in range(3):
        for j in range(2):
            for (lo, hi), df in (((low, high), math.inf), ((t_low, t_high), None)):
                ref_low, ref_high = interval('jackknife_log', est[t, j], np.array([]), 0.95, jackknife=loos[t, j], df=df)
                assert np.isclose(np.exp(lo[t, j]), ref_low, rtol=1e-12) and np.isclose(np.exp(hi[t, j]), ref_high, rtol=1e-12)
    ratio = scipy.stats.t.ppf(0.975, 24) / scipy.stats.norm.ppf(0.975)
    assert np.allclose(t_high - t_low, ratio * (high - low), rtol=1e-12)
    symmetric = np.exp(np.concatenate([1 + np.linspace(-0.1, 0.1, 13), [1.0]]))[None, None, :]
    cf_low, cf_high = log_intervals(np.exp(np.ones((1, 1))), symmetric)[0]['log Cornish-Fisher']
    z_low, z_high = log_intervals(np.exp(np.ones((1, 1))), symmetric)[0]['log z (normal)']
    assert np.isclose(cf_low, z_low, atol=1e-12) and np.isclose(cf_high, z_high, atol=1e-12)


def test_per_query5_keeps_the_top_graded_five_per_query_and_fd_is_of_those_rows():
    """--statistic fd-per-query5 (FD(per_query=5)): each query keeps min(R_q, 5) relevant rows, no kept row of a
    lower grade than a dropped one of its query, the draw fixed by the seed; FD̂ is the FD of exactly those rows."""
    world = make_world('cranfield', d=16) if (ROOT.parent / 'shared').exists() else make_world('heavy', d=8, seed=2)
    sample = world.draw(20, np.random.default_rng(4))
    qid, label = np.asarray(sample.relevant_qid), np.asarray(sample.relevant_label)
    assert len(set(label)) > 1 and max(np.unique(qid, return_counts=True)[1]) > 5   # the rule has work to do
    keep = cw.balanced_rows(sample, 5, seed=11)
    for q in set(qid):
        mine = np.flatnonzero(qid == q)
        kept, dropped = np.intersect1d(mine, keep), np.setdiff1d(mine, keep)
        assert len(kept) == min(len(mine), 5)
        if len(dropped):
            assert label[dropped].max() <= label[kept].min()
    assert np.array_equal(keep, cw.balanced_rows(sample, 5, seed=11))
    assert not np.array_equal(keep, cw.balanced_rows(sample, 5, seed=12))
    rel, rets, shift = cw.set_stats(sample, 'fd-per-query5', balance_seed=11)
    system = world.systems[0]
    vecs = np.asarray(sample.retrieved[system][0], float)
    fd = cw.set_fd(rel, rets[system], np.ones((1, len(sample.qids))), shift)[0]
    assert np.isclose(fd, fd_numpy(np.asarray(sample.relevant, float)[keep], vecs), rtol=1e-9)


def test_calibration_table_keeps_a_variants_runs_apart(tmp_path, capsys):
    """A --statistic fd-per-query5 run of the same world, d and n is a row of its own (named by the variant), not
    merged into FD's coverage range."""
    import pandas as pd
    from benchmarks import calibration_table
    base = dict(world='w', d=16, n_queries=43, statistic='FD', method='jackknife_log t', estimand='E[FD_n]',
                who='a', truth=1.0, undefined=0.0, width=0.1, trials=10)
    for name, kind, cov in (('plain', 'fd', 0.5), ('pq5', 'fd-per-query5', 0.9)):
        pd.DataFrame([dict(base, coverage=cov, statistic_kind=kind)]).to_csv(tmp_path / f'{name}.coverage.csv',
                                                                             index=False)
        pd.DataFrame([dict(world='w', d=16, n_queries=43, statistic='FD', test='jackknife z', hypothesis='null',
                           pair='a-b', rejection_rate=cov / 10, trials=10, relative_difference=0.0,
                           statistic_kind=kind)]).to_csv(tmp_path / f'{name}.tests.csv', index=False)
    calibration_table.main([str(tmp_path)])
    rows = [line for line in capsys.readouterr().out.splitlines() if line.startswith(('| w |', '| w · '))]
    coverage = {r.split(' | ')[0]: r.split(' | ')[6] for r in rows if 'jackknife z' not in r}
    assert coverage == {'| w': '0.50', '| w · FD(per_query=5)': '0.90'}


def test_rescoring_against_recorded_truths_reproduces_the_recorded_run(tmp_path):
    """--truths PREFIX (recorded_truths): the trials do not depend on the reference sets, so a run scored against a
    recorded run's truths (here drawn with another --reference count) gives that run's every row back; a run that
    draws its own reference sets does not (the truths move)."""
    import pandas as pd
    from benchmarks import rerun_check
    from benchmarks.calibration_table import read_results
    args = ['--world', 'topics', '--dim', '4', '--queries', '10', '--trials', '3']
    cw.main(args + ['--reference', '5', '--out', str(tmp_path / 'recorded')])
    cw.main(args + ['--reference', '2', '--truths', str(tmp_path / 'recorded'), '--out', str(tmp_path / 'again')])
    cw.main(args + ['--reference', '2', '--out', str(tmp_path / 'other')])
    for kind in ('coverage', 'tests'):
        recorded, again, other = (read_results(tmp_path / f'{p}.{kind}.csv').drop(columns='seconds')
                                  for p in ('recorded', 'again', 'other'))
        pd.testing.assert_frame_equal(again, recorded)
        if kind == 'tests':                        # the level rows are read as rows, not as missing hypotheses
            assert set(recorded.hypothesis) == {'null', 'alternative'}
        if kind == 'coverage':
            assert not np.allclose(other.truth, recorded.truth)

    # benchmarks/rerun_check: the re-scored run passes, the one with new truths does not; --replace keeps the recorded
    # world label and the level rows
    recorded, again, other = (str(tmp_path / p) for p in ('recorded', 'again', 'other'))
    assert rerun_check.main([recorded, other, '--replace']) == 1
    cov = read_results(f'{recorded}.coverage.csv')
    cov['world'] = 'topics (relabelled)'
    cov.to_csv(f'{recorded}.coverage.csv', index=False)
    assert rerun_check.main([recorded, again, '--replace']) == 0
    assert set(read_results(f'{recorded}.coverage.csv').world) == {'topics (relabelled)'}
    assert set(read_results(f'{recorded}.tests.csv').hypothesis) == {'null', 'alternative'}


def test_rescore_counts_the_intervals_that_hold_another_truth(tmp_path, capsys):
    """benchmarks/rescore.py: coverage of the recorded truth and of another one, by hand on four intervals (one
    undefined, left out as the coverage table leaves it out), and its command line on a written trials file."""
    import pandas as pd
    from benchmarks.rescore import main, rescore
    trials = pd.DataFrame({'trial': [0, 1, 2, 3], 'statistic': 'τ(FD, nDCG)', 'method': 'percentile',
                           'estimand': 'τ of E[FD_n] and mean nDCG', 'who': 'all', 'estimate': [0.5, 1.2, np.nan, 2.4],
                           'low': [0.0, 0.5, np.nan, 2.0], 'high': [1.0, 2.0, np.nan, 3.0], 'truth': 2.5})
    row = rescore(trials, truth=1.0).iloc[0]
    assert row.trials == 4 and row.defined == 3 and row.coverage == 1 / 3 and row.coverage_of_truth == 2 / 3
    assert np.isclose(row.width, (1.0 + 1.5 + 1.0) / 3) and np.isclose(row.se, np.sqrt(2 / 9 / 3))
    assert rescore(trials, truth=2.0).iloc[0].coverage_of_truth == 2 / 3      # both ends count as inside
    trials.to_csv(tmp_path / 'run.trials.csv.gz', index=False)
    assert main([str(tmp_path / 'run'), '--estimand', 'τ of E[FD_n] and mean nDCG', '--truth', '1.0']) == 0
    assert '0.666667' in capsys.readouterr().out
    two = pd.concat([trials, trials.assign(who='other')])      # one --truth for two systems is refused
    two.to_csv(tmp_path / 'two.trials.csv.gz', index=False)
    with pytest.raises(SystemExit):
        main([str(tmp_path / 'two'), '--estimand', 'τ of E[FD_n] and mean nDCG', '--truth', '1.0'])
    assert '--who' in capsys.readouterr().err


def test_the_calibration_tables_in_the_docs_are_those_of_the_recorded_runs(capsys):
    """benchmarks/results/calibration-worlds/tables.md and the pt_docs include are calibration_table's rendering of the CSVs beside
    them: a run added or replaced (rerun_check --replace) without regenerating them fails here."""
    from benchmarks import calibration_table
    folder = ROOT / 'benchmarks' / 'results' / 'calibration-worlds'
    for args, path in (([], folder / 'tables.md'),
                       (['--rst'], ROOT / 'pyterrier_frechet' / 'pt_docs' / 'calibration-worlds-tables.inc')):
        calibration_table.main([str(folder)] + args)
        assert capsys.readouterr().out.strip() == path.read_text(encoding='utf-8').strip(), (
            f'{path.name} is stale: python -m benchmarks.calibration_table benchmarks/results/calibration-worlds {" ".join(args)} > {path}')


def test_an_estimand_without_a_truth_gets_no_row(tmp_path):
    """Scoring against a run recorded before τ_AP was (its τ_AP truth NaN) gives no τ_AP row for that truth, rather
    than a coverage of 0 against NaN; the τ_AP with the exact population nDCG is still scored."""
    args = ['--world', 'independent', '--dim', '4', '--queries', '12', '--trials', '2', '--samples', '20']
    cw.main(args + ['--reference', '3', '--out', str(tmp_path / 'recorded')])
    e_fd, e_delta, tau, sd, _ = cw.recorded_truths(str(tmp_path / 'recorded'))
    world = make_world('independent', d=4, seed=0)
    cov, _, _, trials = cw.run(world, 12, n_trials=2, n_reference=0, n_samples=20, n_permutations=0, seed=0,
                               verbose=False, truths=(e_fd, e_delta, tau, sd, float('nan')))
    assert 'τ_AP of E[FD_n] and mean nDCG' not in set(cov.estimand) | set(trials.estimand)
    assert {'τ of E[FD_n] and mean nDCG', 'τ_AP of E[FD_n] and population mean nDCG'} <= set(cov.estimand)
    assert np.isfinite(cov.truth).all() and np.isfinite(trials.truth).all()


def test_an_interval_ending_at_scipys_perfect_tau_holds_a_truth_of_exactly_one():
    """scipy's Kendall τ of two identical rankings is 0.9999999999999999; a population τ with tied systems comes out
    exactly 1.0. The harness's covers() holds it (it missed it: a coverage of 0.00 in sphere and heavy, d = 128),
    and still misses a truth one part in 1e9 outside."""
    perfect = cw.kendall_tau_b(np.arange(5.0), np.arange(5.0))
    assert perfect < 1.0 and scipy.stats.kendalltau([1, 2, 2, 3], [1, 2, 2, 3]).statistic == 1.0
    from benchmarks.rescore import covers
    assert covers(0.8, perfect, 1.0) and not covers(0.8, 1.0 - 1e-9, 1.0)
    assert covers(np.array([0.1, 0.5]), np.array([0.2, 0.6]), 0.2).tolist() == [True, False]


def test_rerun_check_tolerance_is_relative_with_an_absolute_floor(tmp_path):
    """rerun_check compares as numpy.isclose(rtol=1e-9, atol=1e-10): a near-zero truth (a difference of two close
    population FDs, as in Cranfield at d = 384: -7.930231465569e-4 recorded, -7.930231271711e-4 re-run, 1.9e-11
    apart) is reproduced; a relative 1e-8 on a value of order 1, or 1e-9 absolute on a near-zero one, is not, nor a
    narrow interval width 2e-4 of itself off."""
    import pandas as pd
    from benchmarks import rerun_check

    def write(prefix, truths, widths=(0.1, 1e-3)):
        pd.DataFrame({'world': 'w', 'd': 4, 'n_queries': 10, 'statistic': ['FD', 'ΔFD'], 'method': 'jackknife',
                      'estimand': ['E[FD_n]', 'population ΔFD'], 'who': ['a', 'a-b'], 'truth': truths,
                      'coverage': 0.95, 'undefined': 0.0, 'width': list(widths), 'trials': 20, 'seconds': 1.0}
                     ).to_csv(tmp_path / f'{prefix}.coverage.csv', index=False)
        pd.DataFrame({'world': ['w'], 'statistic': ['FD'], 'test': ['jackknife t'], 'hypothesis': ['null'],
                      'pair': ['a-b'], 'rejection_rate': [0.05], 'trials': [20]}).to_csv(
                          tmp_path / f'{prefix}.tests.csv', index=False)
        (tmp_path / f'{prefix}.context.csv').write_text(',E[FD_n]\na,1.0\n')

    recorded = [0.0338, -7.930231465569371e-4]
    write('recorded', recorded)
    for name, truths, ok in (('blas', [0.0338, -7.930231271711108e-4], True),
                             ('relative', [0.0338 * (1 + 1e-8), recorded[1]], False),
                             ('absolute', [0.0338, recorded[1] + 1e-9], False)):
        write(name, truths)
        assert rerun_check.check(str(tmp_path / 'recorded'), str(tmp_path / name)) is ok, name
    # widths keep their own relative 1e-4 (the floor is absolute, 1e-10, for them too): a narrow width 2e-4 off fails
    write('width', recorded, widths=(0.1, 1e-3 * (1 + 2e-4)))
    assert rerun_check.check(str(tmp_path / 'recorded'), str(tmp_path / 'width')) is False



def test_the_anchored_tau_route_of_the_harness_is_the_packages_on_the_same_draws():
    """--no-fd-resamples --exact-draws K: the trials (query sets and draws) are those of a run with FD on every
    draw — every FD and nDCG estimate equal — and τ is recorded with the linearised and the 'anchored K' intervals
    (the package's anchored_resamples, tested in test_linearised) and without the methods that read FD's draws."""
    world = make_world('independent', d=4, seed=0)
    kw = dict(n_trials=2, n_reference=4, n_samples=30, n_permutations=0, seed=0, verbose=False)
    cov_full, _, _, trials_full = cw.run(world, 15, **kw)
    cov, _, _, trials = cw.run(world, 15, fd_resamples=False, exact_draws=10, **kw)
    tau = cov[cov.statistic == 'τ(FD, nDCG)']
    assert {'linearised', 'anchored 10'} <= set(tau.method) and not set(cw.TAU_METHODS) & set(tau.method)
    keys = ['trial', 'statistic', 'method', 'estimand', 'who']
    same = trials_full.merge(trials, on=keys, suffixes=('_full', ''))
    fd = same[same.statistic.isin(['FD', 'nDCG'])]
    assert len(fd) and np.allclose(fd.estimate_full, fd.estimate, rtol=1e-12)
    anchored = trials[(trials.method == 'anchored 10') & (trials.statistic == 'τ(FD, nDCG)')]
    assert len(anchored) and (anchored.low <= anchored.high).all() and anchored.low.between(-1, 1).all()
