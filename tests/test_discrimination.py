"""Discriminative power and the agreement table (analyses/discrimination.py): constructed samples with known
p-values, and `agreement` against tau_intervals and discriminative_power on one bootstrap."""
import numpy as np
import pandas as pd
import pytest

import pyterrier_frechet as pf
from pyterrier_frechet.cli import main
from test_analyses import _data
from test_cli import files  # noqa: F401  (the toy files fixture, used by name)


def test_discriminative_power_counts_the_pairs_a_measure_separates():
    """Constructed samples with known p-values: A − B ≥ 0 in every sample (p = 2·1/(B+1) = 0.02), A − C and B − C
    balanced around 0 (p = 1): one of three pairs separated at 0.05; the ASL curve lists the pairs by p."""
    from pyterrier_frechet.analyses.bootstrap import BootstrapResult
    from pyterrier_frechet.analyses.discrimination import discriminative_power
    b = 99
    base = np.linspace(-1, 1, b)  # symmetric: 50 samples ≤ 0 and 50 ≥ 0 (the middle one is 0)
    samples = {'A': {'M': base + 5.0}, 'B': {'M': base + 5.0 - np.abs(base) - 0.1}, 'C': {'M': np.full(b, 5.0)}}
    # A − B = |base| + 0.1 > 0 everywhere; A − C = base; B − C = base − |base| − 0.1 < 0 everywhere
    boot = BootstrapResult(pd.DataFrame(), samples, ['q1'])
    power = discriminative_power(boot, alpha=0.05, test='bootstrap')
    row = power.summary.iloc[0]
    assert (row.measure, row.pairs, row.separated) == ('M', 3, 2) and row.share == pytest.approx(2 / 3)
    assert power.asl['p'].tolist() == pytest.approx([0.02, 0.02, 1.0])
    assert power.asl.iloc[-1][['a', 'b']].tolist() == ['A', 'C']
    with pytest.raises(ValueError, match='smallest bootstrap p-value'):
        discriminative_power(BootstrapResult(pd.DataFrame(), {k: {'M': v['M'][:9]} for k, v in samples.items()}, ['q1']),
                             test='bootstrap')


def test_cli_agreement_prints_tau_tau_ap_and_discriminative_power(files, tmp_path):
    """The `agreement` table: τ and τ_AP against the reference (the first per-query measure) equal tau_intervals' and
    the separated pairs equal discriminative_power's, from the same bootstrap; refusals before the work."""
    from pyterrier_frechet.analyses.correlation import tau_intervals
    from pyterrier_frechet.analyses.discrimination import discriminative_power
    out = tmp_path / 'agreement.csv'
    plots = tmp_path / 'plots'
    plots.mkdir()
    args = [*_data(files), '--metrics', 'nDCG@3', 'FD@3', 'CFD@3', '--samples', '120', '--seed', '4', '--quiet']
    assert main(['agreement', *args, '--format', 'csv', '--output', str(out), '--plot-dir', str(plots)]) == 0
    table = pd.read_csv(out).set_index('measure')
    assert list(table.index) == ['nDCG@3', 'FD@3', 'CFD@3'] and np.isnan(table.loc['nDCG@3', 'kendall_tau'])
    assert (plots / 'asl.png').exists() and (plots / 'asl.pdf').exists()
    data = pf.cli.load_data(pf.cli.build_parser().parse_args(['agreement', *args]))
    boot = pf.bootstrap(data.runs, data.qrels, data.measures, n_samples=120, seed=4, verbose=False, encoder=data.encoder)
    taus = tau_intervals(boot, data.measures).set_index('a')
    power = discriminative_power(boot).summary.set_index('measure')
    for m in ('FD@3', 'CFD@3'):
        assert table.loc[m, ['kendall_tau', 'tau_low', 'tau_high', 'tau_ap']].tolist() == pytest.approx(
            taus.loc[m, ['kendall_tau', 'tau_low', 'tau_high', 'tau_ap']].tolist())
    assert table['separated'].tolist() == power.loc[['nDCG@3', 'FD@3', 'CFD@3'], 'separated'].tolist()
    assert main(['agreement', *args[:-7], '--metrics', 'FD@3', '--samples', '120']) == 2  # no reference measure
    # the count test cannot go below 2/21 > 0.05 with 20 samples; the default test reads no resample count
    assert main(['agreement', *args[:-7], '--metrics', 'nDCG@3', 'FD@3', '--samples', '20', '--test', 'bootstrap']) == 2
    assert main(['agreement', *args[:-7], '--metrics', 'nDCG@3', 'FD@3', '--samples', '40', '--quiet']) == 0


def test_default_discriminative_power_counts_compares_own_tests_without_fd_on_every_draw():
    """The default test of discriminative power is compare_systems' (each measure's own test: FD's jackknife t-test,
    nDCG's paired t-test, as scipy's ttest_rel): its separated pairs are the uncorrected p < α of compare over every
    pair, on a bootstrap that computed FD on its first 200 draws only (for τ); Sakai's count test on that bootstrap
    is refused before any work, naming the measure, and on a full bootstrap counts bootstrap_p of the drawn
    differences."""
    import scipy.stats
    from ir_measures import nDCG
    from pyterrier_frechet.analyses.discrimination import discriminative_power
    from pyterrier_frechet.analyses.significance import bootstrap_p, compare_systems
    from test_intervals import _tau_world
    encoder, qrels, runs = _tau_world(n_queries=15, n_runs=4, seed=1)
    fd, ndcg = pf.FD(encoder=encoder) @ 6, nDCG @ 6
    boot = pf.bootstrap(runs, qrels, [fd, ndcg], n_samples=300, seed=0, verbose=False, resample='needed')
    assert boot.drawn('s0', str(fd)) is None and len(boot.samples['s0'][str(fd)]) == 200 and boot.n_samples == 300
    power = discriminative_power(boot, alpha=0.2)
    pairs = compare_systems(runs, qrels, [fd, ndcg], boot=boot, verbose=False)
    for label, column in ((str(fd), 'p_jackknife'), ('nDCG@6', 'p_t')):
        rows = pairs[pairs.measure == label]
        row = power.summary.set_index('measure').loc[label]
        assert (row.pairs, row.separated) == (6, int((rows[column] < 0.2).sum()))
        asl = power.asl[power.asl.measure == label]
        np.testing.assert_allclose(asl.p, np.sort(rows[column]), rtol=1e-12)
    # nDCG's own test is scipy's paired t-test on the per-query values
    import ir_measures
    import pyterrier as pt
    queries = sorted(qrels.qid.unique())
    per_q = {}
    for name in ('s0', 's3'):
        got = {m.query_id: m.value for m in ir_measures.iter_calc([ndcg], pt.model.to_ir_measures(qrels),
                                                                 pt.model.to_ir_measures(runs[name]))}
        per_q[name] = [got[q] for q in queries]
    ref = scipy.stats.ttest_rel(per_q['s0'], per_q['s3'])
    got = power.asl[(power.asl.measure == 'nDCG@6') & (power.asl.a == 's0') & (power.asl.b == 's3')].p.iloc[0]
    assert got == pytest.approx(ref.pvalue, rel=1e-9)
    with pytest.raises(ValueError, match=r"FD\(.*resample='all'"):
        discriminative_power(boot, test='bootstrap')
    full = pf.bootstrap(runs, qrels, [fd, ndcg], n_samples=200, seed=0, verbose=False, resample='all')
    counted = discriminative_power(full, [fd], test='bootstrap').asl
    expect = sorted(bootstrap_p(full.samples[a][str(fd)] - full.samples[b][str(fd)])
                    for i, a in enumerate(runs) for b in list(runs)[i + 1:])
    np.testing.assert_allclose(counted.p, expect)
    assert (counted.test == 'bootstrap').all()


def test_anchored_draws_are_never_read_as_resampled_differences_even_when_they_are_every_draw():
    """With B ≤ TAU_DRAWS the anchored FD draws (resample='needed') are as many as the draws, but they are not FD's
    own resampled values: drawn() gives None for them, a test that reads resampled differences is refused before
    any work, and compare_systems' p_bootstrap is NaN for FD (its jackknife p is the same as on a full bootstrap)."""
    from ir_measures import nDCG
    from pyterrier_frechet.analyses.discrimination import discriminative_power
    from pyterrier_frechet.analyses.significance import compare_systems
    from test_intervals import _tau_world
    encoder, qrels, runs = _tau_world(n_queries=15, n_runs=4, seed=1)
    fd, ndcg = pf.FD(encoder=encoder) @ 6, nDCG @ 6
    lean = pf.bootstrap(runs, qrels, [fd, ndcg], n_samples=120, seed=0, verbose=False, resample='needed')
    full = pf.bootstrap(runs, qrels, [fd, ndcg], n_samples=120, seed=0, verbose=False)
    assert lean.is_anchored(str(fd)) and len(lean.samples['s0'][str(fd)]) == lean.n_samples == 120
    assert lean.drawn('s0', str(fd)) is None and not lean.on_every_draw(str(fd))
    assert lean.drawn('s0', 'nDCG@6') is not None and full.drawn('s0', str(fd)) is not None
    with pytest.raises(ValueError, match=r"FD\(.*resample='all'"):
        discriminative_power(lean, test='bootstrap')
    got = compare_systems(runs, qrels, [fd, ndcg], boot=lean, verbose=False).set_index(['a', 'b', 'measure'])
    ref = compare_systems(runs, qrels, [fd, ndcg], boot=full, verbose=False).set_index(['a', 'b', 'measure'])
    fd_rows = got.xs(str(fd), level='measure')
    assert fd_rows.p_bootstrap.isna().all()
    np.testing.assert_allclose(fd_rows.p_jackknife, ref.xs(str(fd), level='measure').p_jackknife, rtol=1e-12)
