"""Correlations, sparsification, encoder robustness, plots and their CLI subcommands."""
import numpy as np
import pandas as pd
import pytest
import scipy.stats
from ir_measures import P

import pyterrier_frechet as pf
from pyterrier_frechet import plots
from pyterrier_frechet.cli import main
from pyterrier_frechet.analyses.correlation import correlations, higher_is_better
from pyterrier_frechet.analyses.robustness import sparsify, summarise
from conftest import DictEncoder
from test_cli import files  # noqa: F401  (the toy files fixture, used by name)


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


def test_sparsify_hand_built_case():
    # q1 judges a (grade 2) and b (grade 1). System A ranks a first, B ranks b first, C ranks neither.
    qrels = pd.DataFrame({'qid': ['1', '1'], 'docno': ['a', 'b'], 'label': [2, 1]})
    run = lambda first: pd.DataFrame({'qid': ['1', '1'], 'docno': [first, 'z'], 'score': [2.0, 1.0]})
    runs = {'A': run('a'), 'B': run('b'), 'C': run('y')}
    # P@1 with full qrels: A=1, B=1, C=0; keeping 1 relevant per query keeps a (highest grade): A=1, B=0, C=0.
    # Kendall tau-b of [1,1,0] vs [1,0,0]: one concordant pair, one tie in each: (1-0)/sqrt(2*2) = 0.5
    result = sparsify(runs, qrels, [P @ 1], per_query=[1, 2], seeds=[0, 1])
    by_n = result.set_index(['per_query', 'seed'])['kendall_tau']
    assert by_n.loc[(1, 0)] == pytest.approx(0.5) and by_n.loc[(1, 1)] == pytest.approx(0.5)
    assert by_n.loc[(2, 0)] == pytest.approx(1.0)  # nothing removed
    s = summarise(result).set_index('per_query')
    assert s.loc[1, 'mean'] == pytest.approx(0.5) and s.loc[1, 'seeds'] == 2


def test_encoder_robustness(toy):
    vectors, qrels, run = toy
    runs = {'fwd': run, 'rev': run.assign(score=-run.score),
            'mid': run.assign(score=np.where(run.docno.str[1:].astype(int) % 2 == 0, run.score, -run.score))}
    doubled = DictEncoder({k: 2 * v for k, v in vectors.items()})  # FD scales by exactly 4: same ranking
    table, agreement = pf.encoder_robustness(runs, qrels, {'base': DictEncoder(vectors), 'x2': doubled}, pf.FD @ 3)
    assert list(table.columns) == ['name', 'FD@3 [base]', 'FD@3 [x2]']
    np.testing.assert_allclose(table['FD@3 [x2]'], 4 * table['FD@3 [base]'], rtol=1e-9)
    assert agreement.iloc[0].kendall_tau == pytest.approx(1.0)
    with pytest.raises(ValueError, match='at least two'):
        pf.encoder_robustness(runs, qrels, {'base': DictEncoder(vectors)})


def test_plots_write_png_and_pdf(tmp_path):
    table = pd.DataFrame({'name': ['a', 'b', 'c', 'd'], 'nDCG@10': [0.1, 0.3, 0.2, 0.5], 'FD@10': [0.9, 0.5, 0.7, 0.2]})
    written = plots.scatter(table, 'nDCG@10', 'FD@10', tmp_path / 'scatter')
    summary = pd.DataFrame({'name': ['a', 'b'], 'measure': ['FD@10'] * 2, 'value': [0.5, 0.6], 'estimate': [0.45, 0.55],
                            'interval': 'jackknife_bc', 'mean': [0.55, 0.65], 'low': [0.4, 0.5], 'high': [0.5, 0.6]})
    written += plots.bootstrap_intervals(summary, 'FD@10', tmp_path / 'boot')
    sparse = pd.DataFrame({'measure': ['FD@10'] * 3, 'per_query': [1, 5, 10], 'mean': [0.6, 0.8, 0.9], 'std': [0.1, 0.05, 0.0]})
    written += plots.sparsification(sparse, tmp_path / 'sparse')
    assert len(written) == 6
    for path in written:
        with open(path, 'rb') as f:
            head = f.read(8)
        assert head.startswith(b'\x89PNG') or head.startswith(b'%PDF')
    with pytest.raises(ValueError, match='no bootstrap rows'):
        plots.bootstrap_intervals(summary, 'nDCG@10', tmp_path / 'x')


def _data(files):
    return ['--qrels', str(files / 'qrels.txt'), '--runs', str(files / 'runs'), '--vectors', str(files / 'vecs'), '--quiet']


def test_cli_bootstrap_correlate_sparsify(files, tmp_path, capsys):
    assert main(['bootstrap', *_data(files), '--metrics', 'FD@3', 'nDCG@3', '--samples', '50', '--format', 'csv',
                 '--plot-dir', str(tmp_path / 'figs')]) == 0
    boot = pd.read_csv(pd.io.common.StringIO(capsys.readouterr().out))
    assert len(boot) == 6 and set(boot.measure) == {'FD@3', 'nDCG@3'} and (boot.low <= boot.high).all()
    assert (tmp_path / 'figs' / 'bootstrap_FD_3.png').exists() and (tmp_path / 'figs' / 'bootstrap_FD_3.pdf').exists()

    assert main(['eval', *_data(files), '--metrics', 'FD@3', 'nDCG@3', '--format', 'csv', '--output', str(tmp_path / 'r.csv')]) == 0
    capsys.readouterr()
    assert main(['correlate', '--table', str(tmp_path / 'r.csv'), '--metrics', 'FD@3', 'nDCG@3', '--format', 'csv']) == 0
    corr = pd.read_csv(pd.io.common.StringIO(capsys.readouterr().out))
    results = pd.read_csv(tmp_path / 'r.csv')
    assert corr.iloc[0].kendall_tau == pytest.approx(scipy.stats.kendalltau(-results['FD@3'], results['nDCG@3']).statistic)
    assert main(['correlate', '--table', str(tmp_path / 'none.csv')]) == 2

    assert main(['sparsify', *_data(files), '--metrics', 'FD@3', 'nDCG@3', '--per-query', '1', '2', '--seeds', '0', '1',
                 '--format', 'csv', '--plot-dir', str(tmp_path / 'figs')]) == 0
    sparse = pd.read_csv(pd.io.common.StringIO(capsys.readouterr().out))
    assert set(sparse.per_query) == {1, 2} and set(sparse.measure) == {'FD@3', 'nDCG@3'} and (sparse.seeds == 2).all()
    assert (tmp_path / 'figs' / 'sparsification.png').exists()


def test_cli_report(files, tmp_path, capsys):
    out = tmp_path / 'report'
    assert main(['report', *_data(files), '--metrics', 'FD@3', 'nDCG@3', 'HSA(bins=3)', 'KID@3', 'KNNRecall(k=2)@3',
                 '--samples', '120', '--per-query', '1', '--seeds', '0', '--baseline', 'fwd', '--out', str(out)]) == 0
    text = (out / 'report.md').read_text()
    for section in ('## Results', '## Correlations across systems', '## Bootstrap over queries', '## Discriminative power',
                    '## Paired comparisons', '## Sparsified judgments'):
        assert section in text
    for name in ('results', 'correlations', 'bootstrap', 'discriminative_power', 'asl', 'comparisons',
                 'comparisons_summary', 'sparsification'):
        assert (out / f'{name}.csv').exists()
    results = pd.read_csv(out / 'results.csv')
    assert {'HSA(bins=3)', 'KID@3', 'KNNRecall(k=2)@3'} <= set(results.columns)
    # KID and k-NN recall have no bootstrap fast path: results and correlations only; the rest is compared with fwd
    comparisons = pd.read_csv(out / 'comparisons.csv')
    assert set(comparisons.measure) == {'FD@3', 'nDCG@3', 'HSA(bins=3)'} and set(comparisons.a) == {'fwd'}
    assert 'Kendall tau(KID@3, nDCG@3) over 3 runs' in text  # set measures' tau against the first classical measure
    import re
    figures = re.findall(r'\(figures/([^)]+\.png)\)', text)
    assert len(figures) == 4 + 5 and all((out / 'figures' / f).exists() and (out / 'figures' / f).with_suffix('.pdf').exists()
                                         for f in figures)


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
    assert main(['agreement', *args[:-7], '--metrics', 'nDCG@3', 'FD@3', '--samples', '20']) == 2  # p ≥ 2/21 > 0.05
