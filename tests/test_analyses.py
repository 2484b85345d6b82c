"""The analyses' CLI subcommands end to end (bootstrap, correlate, sparsify) and plots of their tables; each
analysis module's own tests are in its namesake file (test_correlation.py, test_robustness.py, test_report.py, ...)."""
import pandas as pd
import pytest
import scipy.stats

from pyterrier_frechet import plots
from pyterrier_frechet.cli import main
from test_cli import files  # noqa: F401  (the toy files fixture, used by name)


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
