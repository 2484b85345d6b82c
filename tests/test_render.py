"""The renderer interface (analyses/render.py): the dialects' row loop, the blocks, sections and the report they make,
and the seam — the paper table and a report section write their rows through the same ``Dialect.table``."""
import numpy as np
import pandas as pd

from pyterrier_frechet.analyses import render
from pyterrier_frechet.analyses.bootstrap import BootstrapResult
from pyterrier_frechet.analyses.outputs import to_csv, to_markdown
from pyterrier_frechet.analyses.render import (LATEX, MARKDOWN, Bullets, Figure, Pipe, Report, Section, Table, Text,
                                               latex_name)
from pyterrier_frechet.analyses.table import PaperTable


def test_the_row_loop_writes_markdown_and_latex_lines():
    head, rows, extra = ['x', 'y'], [['a', '1'], ['b', '2']], [['τ', '3']]
    assert MARKDOWN.table(head, 'lr', rows, extra) == ['| x | y |', '|:--|--:|', '| a | 1 |', '| b | 2 |', '| τ | 3 |']
    assert LATEX.table(head, 'lr', rows, extra) == [
        '\\begin{tabular}{lr}', '\\toprule', 'x & y \\\\', '\\midrule', 'a & 1 \\\\', 'b & 2 \\\\', '\\midrule',
        'τ & 3 \\\\', '\\bottomrule', '\\end{tabular}']
    # an empty group adds no separator
    assert LATEX.table(head, 'lr', rows, []) == LATEX.table(head, 'lr', rows)
    assert '\\midrule' not in LATEX.table(head, 'lr', rows)[4:]


def test_dialect_cells():
    assert (MARKDOWN.number(-0.12345, 3), LATEX.number(-0.12345, 3)) == ('-0.123', '$-$0.123')
    assert (MARKDOWN.number(np.nan, 3), LATEX.number(np.inf, 3)) == ('–', '--')
    assert (MARKDOWN.bold('1'), LATEX.bold('1')) == ('**1**', '\\textbf{1}')
    assert (MARKDOWN.bracket('1, 2'), LATEX.bracket('1, 2')) == (' [1, 2]', ' {\\scriptsize [1, 2]}')
    assert (MARKDOWN.marks('ab', True), MARKDOWN.marks('▲', False)) == (' ᵃᵇ', ' ▲')
    assert (LATEX.marks('ab', True), LATEX.marks('▲', False), LATEX.marks('▼', False)) == (
        '$^{\\mathrm{ab}}$', '$^{\\blacktriangle}$', '$^{\\blacktriangledown}$')
    assert (MARKDOWN.left_out(3, True), LATEX.left_out(3, False)) == (' (−3‡)', ' {\\scriptsize ($-$3)}')
    assert (MARKDOWN.text('a|b_c'), LATEX.text('a|b_c'), LATEX.name('[x] y')) == ('a\\|b_c', 'a|b\\_c', '{}[x] y')  # a_b: no emphasis in GFM
    assert latex_name('n' * 70) == 'n' * 59 + '\\ldots{}'
    assert (LATEX.value(-2.5, '.2f'), LATEX.value(np.nan, '.2f'), LATEX.value('50%', '.2f'), LATEX.value(True, '.2f')) \
        == ('$-$2.50', '--', '50\\%', 'True')


FRAME = pd.DataFrame({'name': ['a|b', 'c_*d*', 'e'], 'FD@5': [1.23456, -0.5, np.nan], 'n': [3, 12, 7],
                      'ok': [True, False, True]})


def test_a_table_block_renders_as_the_report_always_wrote_its_tables():
    table = Table(FRAME, 'results')
    # Markdown: tabulate's padded pipe table, byte for byte what outputs.to_markdown writes
    assert table.to_markdown() == to_markdown(FRAME, floatfmt='.4g')
    assert Table(FRAME, floatfmt='.1f').to_markdown() == to_markdown(FRAME, floatfmt='.1f')
    assert table.to_markdown().split('\n') == ['| name     |    FD@5 |   n | ok    |',
                                             '|:---------|--------:|----:|:------|',
                                             '| a\\|b     |   1.235 |   3 | True  |',
                                             '| c\\_\\*d\\* |  -0.5   |  12 | False |',
                                             '| e        | nan     |   7 | True  |']
    assert table.to_csv() == to_csv(FRAME)
    assert table.to_latex() == ('\\begin{tabular}{lrrl}\n\\toprule\nname & FD@5 & n & ok \\\\\n\\midrule\n'
                                'a|b & 1.235 & 3 & True \\\\\nc\\_*d* & $-$0.5 & 12 & False \\\\\ne & -- & 7 & True \\\\\n'
                                '\\bottomrule\n\\end{tabular}\n')


def test_a_section_renders_its_blocks_in_order_and_lists_its_files():
    section = Section('Toy', (Text('Lead.'), Bullets(('one', 'two')), Table(FRAME, 'toy'), Bullets(()),
                              Figure('a plot', 'toy_plot'), Table(FRAME.head(1), floatfmt='.2f')),
                      data=(('toy_data', FRAME.head(2)),))
    assert section.to_markdown() == '\n'.join([
        '## Toy', '', 'Lead.', '', '- one\n- two', '', to_markdown(FRAME, floatfmt='.4g'), '',
        '',  # a block with no text leaves one blank line
        '![a plot](figures/toy_plot.png)', '', to_markdown(FRAME.head(1), floatfmt='.2f'), ''])
    assert section.files() == {'toy.csv': to_csv(FRAME), 'toy_data.csv': to_csv(FRAME.head(2))}
    assert section.to_latex() == Table(FRAME).to_latex() + '\n' + Table(FRAME.head(1), floatfmt='.2f').to_latex()
    assert Section('Title', (Text('x'),), level=1).to_markdown() == '# Title\n\nx\n'


class _Notice:
    """A block of a new kind: anything with to_markdown()."""

    def to_markdown(self) -> str:
        return '> toy notice'


class _Document(_Notice):
    def to_latex(self) -> str:
        return '\\toy\n'


def test_a_report_is_its_sections_rendered_and_written(tmp_path):
    report = Report((Section('Toy report', (Text('Intro.'),), level=1),
                     Section('Toy', (_Notice(), Table(FRAME, 'toy')), documents=(('doc', _Document()),))))
    assert report.to_markdown() == ('# Toy report\n\nIntro.\n\n## Toy\n\n> toy notice\n\n'
                                    + to_markdown(FRAME, floatfmt='.4g') + '\n')
    path = report.write(tmp_path)
    assert path == tmp_path / 'report.md' and path.read_text(encoding='utf-8') == report.to_markdown()
    assert sorted(p.name for p in tmp_path.iterdir()) == ['doc.md', 'doc.tex', 'report.md', 'toy.csv']
    assert (tmp_path / 'toy.csv').read_text(encoding='utf-8') == to_csv(FRAME)
    assert (tmp_path / 'doc.md').read_text() == '> toy notice' and (tmp_path / 'doc.tex').read_text() == '\\toy\n'


def _paper():
    summary = pd.DataFrame({'name': ['x', 'y'], 'measure': 'nDCG@5', 'value': [0.5, 0.25], 'low': [0.4, 0.1],
                            'high': [0.6, 0.3], 'interval': 'percentile', 'method': 'percentile', 'estimand': 'mean'})
    return PaperTable.from_results(BootstrapResult(summary, {'x': {}, 'y': {}}, ['q1', 'q2']), ['nDCG@5'])


def test_the_paper_table_and_a_report_section_write_rows_through_the_same_loop(monkeypatch):
    calls, loop, pipe = [], render.Dialect.table, render.Pipe.table

    def spy(original):
        def table(self, head, align, *groups):
            calls.append((type(self).__name__, [row for rows in groups for row in rows]))
            return original(self, head, align, *groups)
        return table
    monkeypatch.setattr(render.Dialect, 'table', spy(loop))
    monkeypatch.setattr(render.Pipe, 'table', spy(pipe))
    paper = _paper()
    markdown, latex = paper.to_markdown(), paper.to_latex()
    assert calls == [('_Markdown', [['x', '**0.500** [0.400, 0.600]'], ['y', '0.250 [0.100, 0.300]']]),
                     ('_LaTeX', [['x', '\\textbf{0.500} {\\scriptsize [0.400, 0.600]}'],
                                 ['y', '0.250 {\\scriptsize [0.100, 0.300]}']])]
    assert '| x | **0.500** [0.400, 0.600] |' in markdown and 'y & 0.250 {\\scriptsize [0.100, 0.300]} \\\\' in latex
    calls.clear()
    section = Section('Toy', (Table(FRAME.head(1), 'toy'), paper))
    text, tex = section.to_markdown(), section.to_latex()
    # the section's table and the paper table inside it: each row through Dialect.table
    assert [c[0] for c in calls] == ['Pipe', '_Markdown', '_LaTeX']
    assert calls[0][1] == [['a\\|b', 1.23456, 3, True]] and calls[2][1] == [['a|b', '1.235', '3', 'True']]
    assert to_markdown(FRAME.head(1), floatfmt='.4g') in text and markdown in text and tex.startswith('\\begin{tabular}{lrrl}')
    assert isinstance(Pipe(), render.Dialect) and Pipe('.1f').floatfmt == '.1f'
