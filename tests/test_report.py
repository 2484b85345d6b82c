"""The report (analyses/report.py): every section, table and figure of `report` on the toy files."""
import re

import pandas as pd

from pyterrier_frechet.cli import main
from test_analyses import _data
from test_cli import files  # noqa: F401  (the toy files fixture, used by name)


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
    figures = re.findall(r'\(figures/([^)]+\.png)\)', text)
    assert len(figures) == 4 + 5 and all((out / 'figures' / f).exists() and (out / 'figures' / f).with_suffix('.pdf').exists()
                                         for f in figures)
