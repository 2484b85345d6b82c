"""The finite-population correction (population= / --population N): the variance of every interval and of the
jackknife and normal tests times 1 − n/N, against hand computations, Cochran's variance of a sample mean drawn
without replacement, and a coverage simulation over draws from a known finite population."""
import math

import numpy as np
import pandas as pd
import pytest
import scipy.stats

import ir_measures
import pyterrier as pt
import pyterrier_frechet as pf
from pyterrier_frechet.analyses.significance import jackknife_p, normal_p
from pyterrier_frechet.core.intervals import finite_population_correction, interval
from conftest import DictEncoder

Z = scipy.stats.norm.ppf(0.975)


def test_the_correction_is_one_minus_n_over_n_and_refuses_a_population_smaller_than_the_draw():
    assert finite_population_correction(200, 225) == pytest.approx(25 / 225)
    assert finite_population_correction(43, 300) == pytest.approx(257 / 300)
    assert finite_population_correction(43, None) == 1.0
    assert finite_population_correction(225, 225) == 0.0
    for bad in (0, -3, 2.5, True, '225'):
        with pytest.raises(ValueError, match='--population'):
            finite_population_correction(10, bad)
    with pytest.raises(ValueError, match='smaller than the 43 evaluated queries'):
        finite_population_correction(43, 42)


def test_every_interval_scales_its_spread_by_the_root_of_the_correction():
    rng = np.random.default_rng(3)
    jack = 2.0 + 0.1 * rng.normal(size=30)
    boot = 2.1 + 0.3 * rng.normal(size=400)
    est, f = 2.05, 0.36
    n = len(jack)
    se = np.sqrt((n - 1) / n * np.sum((jack - jack.mean()) ** 2))  # the jackknife SE, written out
    T = scipy.stats.t.ppf(0.975, n - 1)  # every jackknife interval's reference: Student t on m − 1 = 29
    assert interval('jackknife', est, boot, jackknife=jack, fpc=f) == pytest.approx((est - T * 0.6 * se, est + T * 0.6 * se))
    centre = n * est - (n - 1) * jack.mean()
    assert interval('jackknife_bc', est, boot, jackknife=jack, fpc=f) == pytest.approx(
        (centre - T * 0.6 * se, centre + T * 0.6 * se))
    logs = np.log(jack)
    se_log = np.sqrt((n - 1) / n * np.sum((logs - logs.mean()) ** 2))
    assert interval('jackknife_log', est, boot, jackknife=jack, fpc=f) == pytest.approx(
        (est * np.exp(-T * 0.6 * se_log), est * np.exp(T * 0.6 * se_log)))
    q = np.quantile(boot, [0.025, 0.975])
    assert interval('percentile', est, boot, fpc=f) == pytest.approx(tuple(est + 0.6 * (q - est)))
    assert interval('shifted', est, boot, fpc=f) == pytest.approx(tuple(est + 0.6 * (q - boot.mean())))
    assert interval('basic', est, boot, fpc=f) == pytest.approx((est - 0.6 * (q[1] - est), est + 0.6 * (est - q[0])))
    # the default is no correction; all N queries drawn: no variance, the interval is the value itself
    assert interval('jackknife', est, boot, jackknife=jack) == pytest.approx((est - T * se, est + T * se))
    assert interval('jackknife', est, boot, jackknife=jack, df=math.inf) == pytest.approx((est - Z * se, est + Z * se))
    assert interval('jackknife_log', est, boot, jackknife=jack, fpc=0.0) == pytest.approx((est, est))
    with pytest.raises(ValueError, match='BCa'):
        interval('bca', est, boot, jackknife=jack, fpc=f)
    with pytest.raises(ValueError, match='fpc'):
        interval('jackknife', est, boot, jackknife=jack, fpc=1.5)


def test_a_mean_gets_cochrans_variance_of_a_draw_without_replacement():
    """For a sample mean the jackknife variance is s²/n exactly, so with the correction it is Cochran's unbiased
    variance of the mean of n drawn without replacement from N, (1 − n/N) s²/n (Cochran 1977, Thm 2.2)."""
    rng = np.random.default_rng(0)
    x = rng.gamma(2.0, size=40)
    n, big_n = len(x), 50
    jack = (x.sum() - x) / (n - 1)
    f = finite_population_correction(n, big_n)
    cochran = (1 - n / big_n) * x.var(ddof=1) / n
    low, high = interval('jackknife', x.mean(), np.array([]), jackknife=jack, fpc=f)
    assert (high - low) / (2 * scipy.stats.t.ppf(0.975, n - 1)) == pytest.approx(np.sqrt(cochran), rel=1e-12)
    assert jackknife_p(x.mean() - 1.9, jack - 1.9, fpc=f) == pytest.approx(
        2 * scipy.stats.t.sf(abs(x.mean() - 1.9) / np.sqrt(cochran), n - 1), rel=1e-10)
    draws = rng.normal(size=500)
    assert normal_p(0.1, draws, fpc=f) == pytest.approx(2 * scipy.stats.norm.sf(0.1 / (np.sqrt(f) * draws.std(ddof=1))))


def test_corrected_intervals_cover_a_finite_population_mean_at_their_level_and_uncorrected_ones_do_not():
    """40 of 50 queries drawn without replacement, 4000 times: the corrected jackknife interval covers the population
    mean at about 95%, the uncorrected one (2.2× too wide) almost always."""
    rng = np.random.default_rng(1)
    population = rng.normal(size=50)
    truth = population.mean()
    f = finite_population_correction(40, 50)
    hits = {1.0: 0, f: 0}
    trials = 4000
    for _ in range(trials):
        x = population[rng.choice(50, size=40, replace=False)]
        jack = (x.sum() - x) / 39
        for fpc in hits:
            low, high = interval('jackknife', x.mean(), np.array([]), jackknife=jack, fpc=fpc)
            hits[fpc] += low <= truth <= high
    assert 0.93 <= hits[f] / trials <= 0.97, hits[f] / trials  # binomial SE 0.0034
    assert hits[1.0] / trials > 0.999


@pytest.fixture
def twelve():
    """12 queries, 4 relevant documents and 6 retrieved per query per system, 5-d vectors; three systems."""
    rng = np.random.default_rng(7)
    vectors, qrels, runs = {}, [], {'a': [], 'b': [], 'c': []}
    for q in range(12):
        centre = rng.normal(size=5)
        for j in range(4):
            vectors[f'q{q}r{j}'] = centre + 0.5 * rng.normal(size=5)
            qrels.append((f'q{q}', f'q{q}r{j}', 1 + j % 2))
        for s, drift in (('a', 0.2), ('b', 0.8), ('c', 1.5)):
            for j in range(6):
                d = f'q{q}{s}{j}'
                vectors[d] = centre + drift + rng.normal(size=5)
                runs[s].append((f'q{q}', d, float(6 - j)))
            top = s == 'a' and q % 3 == 0 or s == 'b' and q % 4 == 0  # one relevant document retrieved, for nDCG
            runs[s][-1] = (f'q{q}', f'q{q}r0', 6.5 if top else 0.5)
    frames = {s: pd.DataFrame(r, columns=['qid', 'docno', 'score']) for s, r in runs.items()}
    return vectors, pd.DataFrame(qrels, columns=['qid', 'docno', 'label']), frames


def test_bootstrap_and_compare_carry_the_correction_and_name_it(twelve):
    from pyterrier_frechet.analyses.significance import compare_systems
    vectors, qrels, runs = twelve
    fd, ndcg = pf.FD(encoder=DictEncoder(vectors)) @ 6, ir_measures.nDCG @ 6
    plain = pf.bootstrap(runs, qrels, [fd, ndcg], n_samples=100, seed=2, verbose=False)
    finite = pf.bootstrap(runs, qrels, [fd, ndcg], n_samples=100, seed=2, verbose=False, population=20)
    root = np.sqrt(1 - 12 / 20)
    for (_, p), (_, f) in zip(plain.summary.iterrows(), finite.summary.iterrows()):
        assert f.value == p.value
        if p.measure == str(fd):  # jackknife_log: the log-scale half-widths shrink by √(1 − n/N)
            assert np.log(f.high / f.value) == pytest.approx(root * np.log(p.high / p.value), rel=1e-9)
            assert np.log(f.value / f.low) == pytest.approx(root * np.log(p.value / p.low), rel=1e-9)
        else:  # t: the half-width t·s/√n shrinks by √(1 − n/N), then both are kept within the per-query values
            values = 12 * p.value - 11 * plain.jackknife[p['name']][p.measure]  # a mean's pseudo-values: its values
            half = scipy.stats.t.ppf(0.975, 11) * scipy.stats.sem(values)
            assert (p.low, p.high) == pytest.approx((max(p.value - half, values.min()), min(p.value + half, values.max())))
            assert (f.low, f.high) == pytest.approx((max(f.value - root * half, values.min()),
                                                     min(f.value + root * half, values.max())))
        assert 'finite population: 12 of N=20 queries' in f.interval and 'N=' not in p.interval
        assert 'without replacement' in f.estimand
    assert finite.population == 20 and plain.population is None
    table = compare_systems(runs, qrels, [fd, ndcg], seed=2, verbose=False, boot=finite)
    row = table[(table.measure == str(fd)) & (table.a == 'a') & (table.b == 'b')].iloc[0]
    jd = finite.jackknife['a'][str(fd)] - finite.jackknife['b'][str(fd)]
    n = len(jd)
    se = np.sqrt((1 - 12 / 20) * (n - 1) / n * np.sum((jd - jd.mean()) ** 2))
    t = scipy.stats.t.ppf(0.975, n - 1)  # the jackknife's t reference on n − 1 degrees of freedom
    assert row.p_jackknife == pytest.approx(2 * scipy.stats.t.sf(abs(row['diff']) / se, n - 1), rel=1e-9)
    assert (row.ci_low, row.ci_high) == pytest.approx((row['diff'] - t * se, row['diff'] + t * se), rel=1e-9)
    assert 'N=20' in row.interval
    diffs = finite.samples['a']['nDCG@6'] - finite.samples['b']['nDCG@6']
    row = table[(table.measure == 'nDCG@6') & (table.a == 'a') & (table.b == 'b')].iloc[0]
    assert row.p_normal == pytest.approx(2 * scipy.stats.norm.sf(abs(row['diff']) / (np.sqrt(0.4) * diffs.std(ddof=1))))
    # nDCG's default, the paired t-test, from ir_measures' per-query values: its variance times 1 − n/N, t on n − 1 df
    qrels_ir = pt.model.to_ir_measures(qrels)
    per_q = [pd.Series({m.query_id: m.value for m in ir_measures.iter_calc([ndcg], qrels_ir, pt.model.to_ir_measures(runs[s]))})
             .reindex(sorted(qrels_ir.query_id.unique()), fill_value=0.0).to_numpy() for s in 'ab']
    d = per_q[0] - per_q[1]
    se_t = np.sqrt(0.4) * d.std(ddof=1) / np.sqrt(len(d))
    assert row.test == 't' and row['diff'] == pytest.approx(d.mean(), rel=1e-12)
    assert row.p_t == pytest.approx(2 * scipy.stats.t.sf(abs(d.mean()) / se_t, len(d) - 1), rel=1e-9)
    t975 = scipy.stats.t.ppf(0.975, len(d) - 1)
    assert (row.ci_low, row.ci_high) == pytest.approx((d.mean() - t975 * se_t, d.mean() + t975 * se_t), rel=1e-9)
    assert row.interval.startswith('paired t') and 'N=20' in row.interval


def test_a_population_smaller_than_the_queries_or_with_the_count_test_is_refused_before_work(twelve, monkeypatch, tmp_path):
    from pyterrier_frechet.analyses import bootstrap as bootstrap_module
    from pyterrier_frechet.analyses.significance import compare_systems
    vectors, qrels, runs = twelve
    fd = pf.FD(encoder=DictEncoder(vectors)) @ 6
    monkeypatch.setattr(bootstrap_module, 'draw_counts', lambda *a: pytest.fail('work began'))
    with pytest.raises(ValueError, match='--population.*smaller than the 12 evaluated queries'):
        pf.bootstrap(runs, qrels, [fd], n_samples=10, verbose=False, population=11)
    with pytest.raises(ValueError, match='BCa|bca'):
        pf.bootstrap(runs, qrels, [fd], n_samples=40, verbose=False, population=20, interval='bca')
    with pytest.raises(ValueError, match='--test jackknife'):
        compare_systems(runs, qrels, [fd], n_samples=2000, verbose=False, population=20, test='bootstrap')
    with pytest.raises(ValueError, match='--test jackknife'):
        pf.write_report(runs, qrels, [fd], tmp_path / 'report', verbose=False, population=20, test='bootstrap')
    assert not (tmp_path / 'report').exists()


def test_cli_population_flag(twelve, tmp_path, capsys):
    from pyterrier_frechet.cli import main
    vectors, qrels, runs = twelve
    (tmp_path / 'runs').mkdir()
    for s, run in runs.items():
        with open(tmp_path / 'runs' / f'run.{s}.txt', 'w') as f:
            for q, g in run.groupby('qid'):
                for rank, r in enumerate(g.sort_values('score', ascending=False).itertuples()):
                    f.write(f'{q} Q0 {r.docno} {rank + 1} {r.score} {s}\n')
    (tmp_path / 'qrels.txt').write_text(''.join(f'{r.qid} 0 {r.docno} {r.label}\n' for r in qrels.itertuples()))
    ids = sorted(vectors)
    np.save(tmp_path / 'vecs.npy', np.stack([vectors[i] for i in ids]))
    (tmp_path / 'vecs.ids.txt').write_text('\n'.join(ids) + '\n')
    data = ['--qrels', str(tmp_path / 'qrels.txt'), '--runs', str(tmp_path / 'runs'), '--vectors', str(tmp_path / 'vecs'),
            '--metrics', 'FD@6', 'nDCG@6', '--quiet', '--samples', '100']
    assert main(['bootstrap', *data, '--population', '20', '--format', 'csv']) == 0
    out = capsys.readouterr()
    table = pd.read_csv(pd.io.common.StringIO(out.out))
    assert table.interval.str.contains('N=20').all()
    assert '--population 20' in out.err and '1 - n/N = 0.4' in out.err
    assert main(['compare', *data, '--population', '11']) == 2
    assert '--population' in capsys.readouterr().err
    assert main(['compare', *data, '--population', '20', '--test', 'bootstrap', '--samples', '3000']) == 2
    assert '--population' in capsys.readouterr().err
    # the report: its bootstrap caption says the intervals are for draws from the N queries, and its tables carry N
    out = tmp_path / 'report'
    code = main(['report', *data, '--population', '20', '--per-query', '2', '--seeds', '0', '--out', str(out)])
    assert code == 0, capsys.readouterr().err
    text = (out / 'report.md').read_text()
    assert '**Finite population** (`population=20`)' in text and '1 − n/N = 0.4' in text
    assert pd.read_csv(out / 'bootstrap.csv').interval.str.contains('N=20').all()
    assert pd.read_csv(out / 'comparisons.csv').interval.str.contains('N=20').all()
