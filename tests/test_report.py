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


def test_the_report_is_its_section_objects_rendered_and_a_new_section_is_one_object(files, tmp_path, monkeypatch):
    # the renderer seam: write_report computes Section objects, then renders them; a toy section added to the list
    # appears in report.md in its place with its CSV beside it, and nothing else is needed
    from pyterrier_frechet.analyses import report
    from pyterrier_frechet.analyses.outputs import to_csv
    from pyterrier_frechet.analyses.render import Section, Table, Text
    from pyterrier_frechet.analyses.table import PaperTable
    toy = Section('Toy section', (Text('Toy lead.'), Table(pd.DataFrame({'run': ['fwd'], 'score': [0.125]}), 'toy')))
    seen, compute = [], report._sections

    def with_toy(job, clock):
        sections = compute(job, clock)
        seen.extend(sections[:-1] + [toy] + sections[-1:])
        return seen
    monkeypatch.setattr(report, '_sections', with_toy)
    out = tmp_path / 'report'
    assert main(['report', *_data(files), '--metrics', 'FD@3', 'nDCG@3', '--rel', '1', '--samples', '120',
                 '--per-query', '1', '--seeds', '0', '--out', str(out)]) == 0
    assert [s.title for s in seen] == ['FD evaluation report', 'Results', 'Correlations across systems',
                                       'Bootstrap over queries', 'Discriminative power', 'Paired comparisons',
                                       'Where FD and the classical measures disagree', 'What moves FD',
                                       'The paper table', 'Sparsified judgments', 'Toy section', 'Time per section']
    text = (out / 'report.md').read_text(encoding='utf-8')
    assert text == '\n'.join(s.to_markdown() for s in seen)
    assert '## Toy section\n\nToy lead.\n\n| run   |   score |\n|:------|--------:|\n| fwd   |   0.125 |\n\n## Time' in text
    assert (out / 'toy.csv').read_text() == 'run,score\nfwd,0.125\n'
    # every table a section shows is written beside the report; the paper table is a block of its section and its
    # own files are its renderings
    for section in seen:
        for table in section.tables():
            if table.name:
                assert (out / f'{table.name}.csv').read_text() == to_csv(table.frame)
    paper = next(b for b in seen[8].blocks if isinstance(b, PaperTable))
    assert (out / 'table.md').read_text() == paper.to_markdown() and (out / 'table.tex').read_text() == paper.to_latex()
    assert paper.to_markdown() in text and (out / 'table.csv').read_text() == paper.to_csv()
