"""Outputs that never destroy what the package did not write, tables that are safe to open, and the bad inputs of
issue 25 (outputs and CLI half) and issue 24 item 5 (one τ_AP convention): each reproduction is a test here."""
import html
import io
import json
import logging
import os
import re
import subprocess
import sys
import unicodedata
from typing import Optional

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings, strategies as st
from markdown_it import MarkdownIt

import pyterrier_frechet as pf
from pyterrier_frechet import cli
from pyterrier_frechet.cli import main
from pyterrier_frechet.analyses.outputs import (MARKER, STAGING_MARKER, OutputFolder, csv_cell, markdown_text,
                                            read_marker, report_paths)
from test_cli import files  # noqa: F401  (the toy files fixture, used by name)


def _data(files):
    return ['--qrels', str(files / 'qrels.txt'), '--runs', str(files / 'runs'), '--vectors', str(files / 'vecs'), '--quiet']


def _report(files, out, *extra):
    return main(['report', *_data(files), '--metrics', 'FD@3', 'nDCG@3', '--samples', '120', '--per-query', '1', '--seeds', '0',
                 '--baseline', 'fwd', '--out', str(out), *extra])


def _tree(folder):
    """Every path under ``folder`` with its content (files) — to show nothing changed."""
    out = {}
    for root, dirs, names in os.walk(folder):
        for n in dirs:
            out[os.path.relpath(os.path.join(root, n), folder)] = None
        for n in names:
            p = os.path.join(root, n)
            with open(p, 'rb') as f:
                out[os.path.relpath(p, folder)] = f.read()
    return out


@pytest.fixture
def no_work(monkeypatch):
    """Fail the test if the command reads its data (the refusal must come before any work)."""
    def refuse(args):
        raise AssertionError('load_data was called: the output path was not checked first')
    monkeypatch.setattr(cli, 'load_data', refuse)


# --- X2 / K2: report --out ---

def test_report_into_the_experiment_folder_is_refused_before_the_work_and_deletes_nothing(files, capsys, no_work):
    (files / 'notes.txt').write_text('my notes')
    before = _tree(files)
    assert _report(files, files) == 2
    err = capsys.readouterr().err
    assert '--out' in err and 'did not write' in err and 'nothing was deleted' in err
    assert _tree(files) == before


@pytest.mark.parametrize('given', ['.', 'x/..', 'runs/..'])
def test_report_out_dot_and_dotdot_are_resolved_and_refused(files, capsys, monkeypatch, no_work, given):
    (files / 'x').mkdir()
    monkeypatch.chdir(files)
    before = _tree(files)
    assert _report(files, given) == 2
    err = capsys.readouterr().err
    assert f"--out '{given}' ({files.resolve()})" in err and 'did not write' in err
    assert _tree(files) == before  # no ..old.* or .rep.* folder, nothing removed
    assert not [p for p in files.parent.iterdir() if p.name.startswith(('.rep.', '..'))]


def test_report_into_a_file_or_below_a_missing_folder_is_refused(files, capsys, no_work):
    assert _report(files, files / 'qrels.txt') == 2
    assert 'exists and is not a folder' in capsys.readouterr().err
    assert _report(files, files / 'nowhere' / 'report') == 2
    assert 'does not exist' in capsys.readouterr().err


def test_report_writes_a_marker_and_replaces_only_the_files_it_wrote(files, tmp_path, capsys):
    out = tmp_path / 'report'
    assert _report(files, out) == 0
    listed = read_marker(out)
    on_disk = sorted(k for k, v in _tree(out).items() if v is not None and k != MARKER)
    assert sorted(listed) == on_disk and 'report.md' in listed and 'results.csv' in listed
    assert any(f.startswith('figures/') for f in listed)
    # someone adds notes; an earlier report listed a figure the new one does not write
    (out / 'notes.txt').write_text('keep me')
    (out / 'figures' / 'scatter_old.png').write_bytes(b'old')
    marker = json.loads((out / MARKER).read_text())
    marker['files'].append('figures/scatter_old.png')
    (out / MARKER).write_text(json.dumps(marker))
    (out / 'report.md').write_text('stale')
    assert _report(files, out) == 0
    assert (out / 'notes.txt').read_text() == 'keep me'  # not written by the package: kept
    assert not (out / 'figures' / 'scatter_old.png').exists()  # listed by the marker: removed
    assert (out / 'report.md').read_text().startswith('# FD evaluation report')
    assert 'notes.txt' not in read_marker(out)
    assert not [p for p in list(tmp_path.iterdir()) + list(out.iterdir()) if p.name.startswith('.rep.')]


def test_a_marked_report_folder_with_a_foreign_file_where_the_report_writes_is_refused(files, tmp_path, capsys):
    out = tmp_path / 'report'
    assert _report(files, out) == 0
    (out / 'comparisons_extra.csv').write_text('mine')  # a CSV name the report family may use, not written by it
    before = _tree(out)
    assert _report(files, out) == 2
    err = capsys.readouterr().err
    # what would really happen: not overwritten (the report replaces only the files its marker lists), but mixed in
    assert 'comparisons_extra.csv' in err and 'neither replaced nor deleted' in err and 'would overwrite' not in err
    assert _tree(out) == before


def test_an_empty_folder_is_accepted_and_a_damaged_marker_refused(files, tmp_path, capsys):
    out = tmp_path / 'empty'
    out.mkdir()
    assert _report(files, out) == 0 and (out / 'report.md').exists()
    (out / MARKER).write_text(json.dumps({'package': 'pyterrier-frechet', 'files': ['../qrels.txt']}))
    before = _tree(tmp_path)
    assert _report(files, out) == 2
    assert 'not a marker this package wrote' in capsys.readouterr().err
    assert _tree(tmp_path) == before


def test_a_marked_folder_whose_figures_folder_is_a_link_is_refused(tmp_path):
    out = tmp_path / 'report'
    folder = OutputFolder(out, '--out', report_paths)
    with folder.staging() as work:
        (work / 'figures').mkdir()
        (work / 'figures' / 'a.png').write_bytes(b'x')
        folder.commit(work, replace=True)
    elsewhere = tmp_path / 'elsewhere'
    elsewhere.mkdir()
    (elsewhere / 'a.png').write_bytes(b'precious')
    (out / 'figures' / 'a.png').unlink()
    (out / 'figures').rmdir()
    (out / 'figures').symlink_to(elsewhere)
    with pytest.raises(ValueError, match='symbolic link'):
        OutputFolder(out, '--out', report_paths)
    assert (elsewhere / 'a.png').read_bytes() == b'precious'


def test_write_report_api_refuses_a_folder_it_did_not_write(files, tmp_path):
    (tmp_path / 'exp').mkdir()
    (tmp_path / 'exp' / 'qrels.txt').write_text('1 0 d1 1\n')
    with pytest.raises(ValueError, match='did not write'):
        pf.write_report({}, pd.DataFrame(), ['nDCG@3'], tmp_path / 'exp')
    assert (tmp_path / 'exp' / 'qrels.txt').read_text() == '1 0 d1 1\n'


def test_a_killed_write_leaves_a_staging_folder_that_the_next_run_cleans_and_nothing_else(files, tmp_path, capsys):
    out = tmp_path / 'report'
    script = ('import os, sys\nfrom pyterrier_frechet.analyses.outputs import OutputFolder, report_paths\n'
              'f = OutputFolder(sys.argv[1], "--out", report_paths)\n'
              'with f.staging() as work:\n'
              '    (work / "report.md").write_text("half")\n    (work / "figures").mkdir()\n'
              '    (work / "figures" / "a.png").write_bytes(b"x")\n    os._exit(3)\n')
    assert subprocess.run([sys.executable, '-c', script, str(out)], cwd=os.getcwd()).returncode == 3  # killed
    stale = [p for p in tmp_path.iterdir() if p.name.startswith('.rep.report.')]
    assert len(stale) == 1 and (stale[0] / STAGING_MARKER).exists()
    # a folder with the same prefix that this package did not mark, and one of a live process: never touched
    (tmp_path / '.rep.report.theirs').mkdir()
    (tmp_path / '.rep.report.theirs' / 'report.md').write_text('not ours')
    live = tmp_path / '.rep.report.live'
    live.mkdir()
    (live / STAGING_MARKER).write_text(json.dumps(
        {'package': 'pyterrier-frechet', 'pid': os.getpid(), 'created': 0, 'host': __import__('socket').gethostname(),
         'target': str(out.resolve())}))
    assert _report(files, out) == 0
    assert not stale[0].exists()
    assert (tmp_path / '.rep.report.theirs' / 'report.md').read_text() == 'not ours'
    assert live.exists()


def test_a_stale_staging_folder_keeps_files_the_package_did_not_write(tmp_path):
    out = tmp_path / 'report'
    stale = tmp_path / '.rep.report.abc'
    stale.mkdir()
    dead = subprocess.run([sys.executable, '-c', 'import os; print(os.getpid())'], capture_output=True, text=True)
    (stale / STAGING_MARKER).write_text(json.dumps({'package': 'pyterrier-frechet', 'pid': int(dead.stdout),
                                                    'created': 0, 'host': __import__('socket').gethostname(),
                                                    'target': str(out.resolve())}))
    (stale / 'report.md').write_text('ours')
    (stale / 'private.key').write_text('not ours')
    OutputFolder(out, '--out', report_paths)
    assert not (stale / 'report.md').exists() and (stale / 'private.key').read_text() == 'not ours'


# --- C1 and the other output paths ---

def test_agreement_plot_dir_new_is_made_and_a_foreign_plot_dir_refused_first(files, tmp_path, capsys, monkeypatch):
    args = ['agreement', *_data(files), '--metrics', 'nDCG@3', 'FD@3', '--samples', '120', '--format', 'csv']
    assert main(args + ['--plot-dir', str(tmp_path / 'new')]) == 0  # C1: crashed after the work
    assert sorted(read_marker(tmp_path / 'new')) == ['asl.csv', 'asl.pdf', 'asl.png']
    assert main(args + ['--plot-dir', str(tmp_path / 'new')]) == 0  # its own folder again: replaced
    capsys.readouterr()
    (tmp_path / 'mine').mkdir()
    (tmp_path / 'mine' / 'asl.png').write_bytes(b'my figure')
    monkeypatch.setattr(cli, 'load_data', lambda a: (_ for _ in ()).throw(AssertionError('work before the check')))
    assert main(args + ['--plot-dir', str(tmp_path / 'mine')]) == 2
    assert 'did not write' in capsys.readouterr().err
    assert (tmp_path / 'mine' / 'asl.png').read_bytes() == b'my figure'
    assert main(args + ['--plot-dir', str(tmp_path / 'no' / 'such')]) == 2
    assert 'does not exist' in capsys.readouterr().err


def test_bootstrap_and_sparsify_share_one_plot_dir(files, tmp_path, capsys):
    figs = tmp_path / 'figs'
    assert main(['bootstrap', *_data(files), '--metrics', 'FD@3', '--samples', '50', '--plot-dir', str(figs)]) == 0
    assert main(['sparsify', *_data(files), '--metrics', 'FD@3', 'nDCG@3', '--per-query', '1', '--seeds', '0',
                 '--plot-dir', str(figs)]) == 0
    assert sorted(read_marker(figs)) == ['bootstrap_FD_3.pdf', 'bootstrap_FD_3.png', 'sparsification.pdf',
                                         'sparsification.png']


@pytest.mark.parametrize('output', ['qrels.txt', 'vecs.npy', 'runs/run.toy.fwd.txt', 'runs/../qrels.txt'])
def test_output_naming_an_input_file_is_refused_before_the_work(files, capsys, no_work, output):
    before = _tree(files)
    assert main(['eval', *_data(files), '--metrics', 'nDCG@3', '--output', str(files / output)]) == 2
    err = capsys.readouterr().err
    assert 'is the file given to' in err and 'would be overwritten' in err
    assert _tree(files) == before


def test_pool_sim_output_and_pools_output_must_differ(files, tmp_path, capsys, no_work):
    same = str(tmp_path / 't.csv')
    assert main(['pool-sim', *_data(files), '--metrics', 'nDCG@3', '--output', same, '--pools-output', same]) == 2
    assert 'also another output' in capsys.readouterr().err


# --- K1: cells a spreadsheet would run, markdown that breaks ---

def test_csv_cells_are_neutralised_and_numbers_stay_numbers():
    assert csv_cell('=HYPERLINK("http://x","y")') == '\'=HYPERLINK("http://x","y")'
    for bad in ('+1+2', '-2+3', '@SUM(A1)', '\tcmd', '\rcmd'):
        assert csv_cell(bad) == "'" + bad
    for fine in ('-5', '+1.5e3', 'bm25', '', 'a=b', -3.0, 7):
        assert csv_cell(fine) == fine
    assert csv_cell(' =1+2') == "' =1+2" and csv_cell(' 5') == ' 5'


# --- issue 63 item 9: names as given in Markdown, checked by a CommonMark/GFM parser ---

_MD = MarkdownIt('commonmark').enable(['table', 'strikethrough'])
_HOSTILE_NAMES = ['bm25_base', 'A&B', 'BM25 >> MiniLM', '_it_', '*b*', '`c`', '[x](javascript:alert(1))',
                  'a|b<i>&x', '&amp;', '&#65;', '# h', '> q', '- l', '+ l', '1. x', '===', 'a\\b', 'a\\*b', 'x\\',
                  '~~s~~', '__init__', 'c<script>&', '![i](x.png)', '[r]: /u', 'a\nb', 'trail\\\nx', 'é_ü', 'sn_ake_',
                  '<http://a>', 'a\\|b', '$x$', '\\_', 'bell\x07\x1b[31m', 'rtl\u202eoverride']


def _as_given(name: str) -> str:
    """What a reader must see: the name, its line breaks as breaks, control and format characters as a space."""
    name = re.sub(r'\r\n|\r|\u2028|\u2029', '\n', name)
    return ''.join(ch if ch == '\n' or unicodedata.category(ch) not in ('Cc', 'Cf') else ' ' for ch in name)


def _rendered(markdown: str, tag: str) -> Optional[str]:
    found = re.search(rf'<{tag}>(.*?)</{tag}>', _MD.render(markdown), re.S)
    return None if found is None else html.unescape(found.group(1).replace('<br>', '\n'))


@pytest.mark.parametrize('name', _HOSTILE_NAMES)
def test_markdown_text_renders_as_given_in_a_cell_and_a_paragraph(name):
    text = markdown_text(name)
    assert _rendered(f'| h |\n|--|\n| {markdown_text(name, cell=True)} |\n', 'td') == _as_given(name).strip()
    assert _rendered(text + '\n', 'p') == _as_given(name).strip()
    assert '\n' not in text and '\x1b' not in text


def test_markdown_text_escapes_only_what_markdown_would_change():
    for plain in ('bm25_base', 'A&B', 'BM25 >> MiniLM', 'monoT5 (k=10)', 'rank1-7b', 'a < b', 'Q&A: 5%'):
        assert markdown_text(plain) == plain
    assert markdown_text('# runs', cell=True) == '# runs' and markdown_text('# runs') == '\\# runs'


@settings(max_examples=400, deadline=None)
@given(st.text(st.sampled_from(list('ab_*`~$[]()<>&#;!|\\-+=.:1 \n\té')), min_size=1, max_size=12))
def test_markdown_text_renders_as_given_property(name):
    want = _as_given(name).strip(' \t')
    assert _rendered(f'| h |\n|--|\n| {markdown_text(name, cell=True)} |\n', 'td') == want
    if want and not name[0].isspace():  # a paragraph opening with spaces is code, and one of spaces is none
        assert _rendered(markdown_text(name) + '\n', 'p') == want


def test_run_names_reach_csv_inert_and_markdown_escaped(files, tmp_path, capsys):
    runs = files / 'runs'
    fwd = (runs / 'run.toy.fwd.txt').read_text()
    (runs / 'run.toy.=HYPERLINK(1,2).txt').write_text(fwd)
    (runs / 'run.toy.a|b<i>&x.txt').write_text(fwd)
    assert main(['eval', *_data(files), '--metrics', 'nDCG@3', '--format', 'csv']) == 0
    table = pd.read_csv(io.StringIO(capsys.readouterr().out))
    assert "'=HYPERLINK(1,2)" in set(table['name']) and 'a|b<i>&x' in set(table['name'])
    assert table['nDCG@3'].dtype == np.float64  # numbers stay numbers
    assert main(['eval', *_data(files), '--metrics', 'nDCG@3']) == 0
    text = capsys.readouterr().out
    assert '| a\\|b\\<i>&x ' in text and '|b<i>' not in text
    rows = [line for line in text.splitlines() if line.startswith('|')]
    assert len({line.count('|') - line.count('\\|') for line in rows}) == 1  # every row has the same cells
    out = tmp_path / 'report'
    assert main(['report', *_data(files), '--metrics', 'FD@3', 'nDCG@3', '--samples', '200', '--per-query', '1', '--seeds', '0',
                 '--baseline', '=HYPERLINK(1,2)', '--out', str(out)]) == 0
    assert "'=HYPERLINK(1,2)" in set(pd.read_csv(out / 'results.csv')['name'])
    assert set(pd.read_csv(out / 'comparisons.csv')['a']) >= {"'=HYPERLINK(1,2)"}
    report = (out / 'report.md').read_text()
    assert 'a\\|b\\<i>&x' in report and '|b<i>' not in report


# --- issue 24 item 5: one τ_AP convention, checked by hand ---

def test_tau_ap_by_hand_and_the_same_direction_in_every_command():
    # Reference (nDCG, higher better): A > B > C > D. Under test (FD, lower better): C best, then A, B, D.
    # Walking down the ranking under test C, A, B, D — C(i) = systems above the i-th that the reference also puts above:
    #   i=2 A: above {C}; reference C > A? no             -> C(2) = 0, C(2)/1 = 0
    #   i=3 B: above {C, A}; C > B? no, A > B? yes        -> C(3) = 1, 1/2
    #   i=4 D: above {C, A, B}; all three above D         -> C(4) = 3, 3/3 = 1
    # τ_AP = 2/(N-1) · (0 + 1/2 + 1) - 1 = 2/3 · 3/2 - 1 = 0.
    # The other direction (FD's ranking the reference, nDCG's under test, walking A, B, C, D):
    #   B: FD puts A above B? yes -> 1/1;  C: A, B above C in FD? no, no -> 0/2;  D: all three above D in FD -> 3/3
    #   τ_AP = 2/3 · (1 + 0 + 1) - 1 = 1/3 — the direction the old `correlate` took when nDCG was named first.
    ndcg = np.array([0.4, 0.3, 0.2, 0.1])
    fd = np.array([2.0, 3.0, 1.0, 4.0])  # lower is better: C (1.0) best, then A, B, D
    assert pf.tau_ap(-fd, ndcg) == pytest.approx(0.0, abs=1e-15)
    assert pf.tau_ap(ndcg, -fd) == pytest.approx(1 / 3, abs=1e-15)
    table = pd.DataFrame({'name': list('ABCD'), 'FD@10': fd, 'nDCG@10': ndcg})
    for metrics in (['FD@10', 'nDCG@10'], ['nDCG@10', 'FD@10']):  # correlate: whatever the column order
        row = pf.correlations(table, metrics).iloc[0]
        assert row.tau_ap == pytest.approx(0.0, abs=1e-15) and row.tau_ap_reference == 'nDCG@10'
    # agreement / report: tau_intervals against the first per-query measure
    from pyterrier_frechet.analyses.bootstrap import BootstrapResult
    boot = BootstrapResult(pd.DataFrame([{'name': s, 'measure': m, 'value': v} for s, f, n in zip('ABCD', fd, ndcg)
                                         for m, v in (('FD@10', f), ('nDCG@10', n))]),
                           {s: {'FD@10': np.full(40, f), 'nDCG@10': np.full(40, n)} for s, f, n in zip('ABCD', fd, ndcg)},
                           ['q1'])
    import ir_measures
    for measures in ([pf.FD @ 10, ir_measures.nDCG @ 10], [ir_measures.nDCG @ 10, pf.FD @ 10]):
        row = pf.tau_intervals(boot, measures).iloc[0]
        assert row.b == 'nDCG@10' and row.tau_ap == pytest.approx(0.0, abs=1e-15)
        assert row.tau_ap_low == pytest.approx(0.0) and row.tau_ap_high == pytest.approx(0.0)
    # two classical measures: the one named first is the reference
    table2 = table.assign(**{'RR@10': [0.1, 0.2, 0.4, 0.3]})
    row = pf.correlations(table2, ['nDCG@10', 'RR@10']).iloc[0]
    assert row.tau_ap_reference == 'nDCG@10' and row.tau_ap == pytest.approx(pf.tau_ap(table2['RR@10'], ndcg))


def test_correlate_and_agreement_give_the_same_tau_ap(files, tmp_path, capsys):
    assert main(['eval', *_data(files), '--metrics', 'FD@3', 'nDCG@3', '--format', 'csv', '--output', str(tmp_path / 'r.csv')]) == 0
    capsys.readouterr()
    for order in (['FD@3', 'nDCG@3'], ['nDCG@3', 'FD@3']):
        assert main(['correlate', '--table', str(tmp_path / 'r.csv'), '--metrics', *order, '--format', 'csv']) == 0
        corr = pd.read_csv(io.StringIO(capsys.readouterr().out)).iloc[0]
        results = pd.read_csv(tmp_path / 'r.csv')
        assert corr.tau_ap == pytest.approx(pf.tau_ap(-results['FD@3'], results['nDCG@3']))
    assert main(['agreement', *_data(files), '--metrics', 'nDCG@3', 'FD@3', '--samples', '120', '--format', 'csv']) == 0
    agreement = pd.read_csv(io.StringIO(capsys.readouterr().out)).set_index('measure')
    assert agreement.loc['FD@3', 'tau_ap'] == pytest.approx(corr.tau_ap)


def test_constant_reference_gives_nan_tau_and_tau_ap_with_a_warning(files, capsys):
    # S9: a reference measure that is the same for every run ranks nothing (P(rel=5)@3, constant 0, is refused: no
    # label reaches 5)
    # P@1000 counts every document each run retrieved, and the three runs retrieve the same ones: constant too
    with pytest.warns(UserWarning, match=r'P@1000 is constant across the 3 systems'):
        assert main(['agreement', *_data(files), '--metrics', 'P@1000', 'FD@3', '--samples', '120',
                     '--format', 'csv']) == 0
    row = pd.read_csv(io.StringIO(capsys.readouterr().out)).set_index('measure').loc['FD@3']
    assert np.isnan(row[['kendall_tau', 'tau_low', 'tau_high', 'tau_ap', 'tau_ap_low', 'tau_ap_high']].to_numpy(float)).all()
    assert np.isnan(pf.tau_ap([1.0, 2.0, 3.0], [5.0, 5.0, 5.0]))
    # NumRet sums over queries: its bootstrap would resample a mean beside a sum (and its t interval came out with
    # its low end above the high one); refused, saying why (issue 64)
    assert main(['agreement', *_data(files), '--metrics', 'NumRet', 'FD@3', '--samples', '120']) == 2
    assert 'NumRet: NumRet aggregates its per-query values otherwise than by their mean' in capsys.readouterr().err


# --- S8: shuffle at the measure's rel ---

@pytest.fixture
def graded(files, toy):
    """q2 has relevant documents at label 1 only; q4 (in the run) gets one label-2 document."""
    with open(files / 'qrels.txt', 'w') as f:
        for q, d, label in [('q1', 'd0', 2), ('q1', 'd1', 1), ('q1', 'd3', 2), ('q2', 'd10', 1), ('q2', 'd11', 1),
                            ('q2', 'd12', 1), ('q3', 'd20', 0), ('q4', 'd30', 2)]:
            f.write(f'{q} 0 {d} {label}\n')
    return files


def test_shuffle_rotates_among_the_queries_relevant_at_the_measures_rel(graded, toy, capsys):
    vectors, _, run = toy
    qrels = pf.runs.read_qrels(graded / 'qrels.txt')
    rotated = pf.rotate_rankings(run, qrels, rel=2)
    # rel 2: q1 and q4 swap; q2 (label 1 only) and q3 keep their rankings
    assert rotated.loc[run.qid == 'q1', 'qid'].unique().tolist() == ['q4']
    assert (rotated.loc[run.qid.isin(['q2', 'q3']), 'qid'] == run.loc[run.qid.isin(['q2', 'q3']), 'qid']).all()
    assert main(['shuffle', *_data(graded), '--metrics', 'FD@3', 'nDCG@3', '--rel', '2', '--format', 'csv']) == 0
    table = pd.read_csv(io.StringIO(capsys.readouterr().out))
    fd = table[table.measure == 'FD(rel=2)@3']
    assert len(fd) == 3 and np.allclose(fd['change'], 0.0, atol=1e-9)  # the pooled sets are the same documents
    # and FD(rel=2) rotated over the label-1 queries would move: the old behaviour, shown independently
    from pyterrier_frechet.evaluation.evaluate import evaluate
    enc = pf.VectorStore(str(graded / 'vecs'))
    old = evaluate({'fwd': pf.rotate_rankings(run, qrels, rel=1)}, qrels, [pf.FD(rel=2, encoder=enc) @ 3])
    old_fd = float(old[[c for c in old.columns if c.startswith('FD')][0]].iloc[0])
    assert abs(old_fd - float(fd[fd.name == 'fwd']['value'].iloc[0])) > 1e-3


# --- U4: query ids written differently ---

def test_run_query_ids_that_match_no_qrels_query_are_warned_with_a_hint(files, capsys, caplog):
    fwd = (files / 'runs' / 'run.toy.fwd.txt').read_text()
    for p in (files / 'runs').iterdir():
        p.unlink()
    (files / 'runs' / 'run.toy.fwd.txt').write_text(fwd.replace('q', ''))  # qids 1 2 3 4
    qrels = (files / 'qrels.txt').read_text().replace('q1 ', '1.0 ').replace('q2 ', '2 ').replace('q3 ', '3 ')
    (files / 'qrels.txt').write_text(qrels)
    with caplog.at_level(logging.WARNING, logger='pyterrier_frechet'):
        assert main(['eval', *_data(files), '--metrics', 'nDCG@3', '--missing', 'drop']) == 0
    text = caplog.text
    assert "run 'run.toy.fwd': 2 of 4 queries match no qrels query" in text
    assert "run '1' vs qrels '1.0'" in text and 'compared as text' in text


def test_unjudged_run_queries_are_warned_without_a_false_hint(files, caplog):
    with caplog.at_level(logging.WARNING, logger='pyterrier_frechet'):
        assert main(['eval', *_data(files), '--metrics', 'nDCG@3']) == 0
    assert "1 of 4 queries match no qrels query, e.g. ['q4']" in caplog.text and 'written' not in caplog.text


# --- U5, K6: calibrate and compare say what is wrong or missing ---

@pytest.mark.parametrize('argv,flag', [(['--queries', '1'], '--queries'), (['--seed', '-5'], '--seed'),
                                       (['--trials', '0'], '--trials')])
def test_calibrate_bad_arguments_name_the_flag(capsys, argv, flag):
    with pytest.raises(SystemExit) as ex:
        main(['calibrate', '--quiet', *argv])
    assert ex.value.code == 2 and f'argument {flag}' in capsys.readouterr().err


def test_calibrate_level_with_too_few_samples_refuses_like_compare(capsys):
    assert main(['calibrate', '--level', '--samples', '10', '--trials', '2', '--quiet']) == 2
    err = capsys.readouterr().err
    assert '--samples' in err and '2/(B+1)' in err and '--ci' in err
    from pyterrier_frechet.analyses.calibration import coverage, rejection_rates
    with pytest.raises(ValueError, match='n_queries \\(--queries\\) must be integers >= 2'):
        coverage(n_queries=[1], n_trials=1)
    with pytest.raises(ValueError, match='seed \\(--seed\\)'):
        coverage(n_queries=[5], n_trials=1, seed=-5)
    with pytest.raises(ValueError, match='n_samples=10 \\(--samples\\)'):
        rejection_rates(n_queries=[5], n_trials=1, n_samples=10)
    for statistic in ('fd', 'tau'):  # coverage of an interval whose tails hold no resample: refused, not printed as 0
        assert main(['calibrate', '--statistic', statistic, '--samples', '10', '--trials', '2', '--quiet']) == 2
        assert 'a 95% interval needs at least 40 bootstrap samples' in capsys.readouterr().err


def test_every_seed_option_refuses_a_negative_seed(files, capsys):
    with pytest.raises(SystemExit):
        main(['bootstrap', *_data(files), '--seed', '-1'])
    assert 'argument --seed: expected a non-negative integer' in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(['sparsify', *_data(files), '--seeds', '0', '-1'])
    assert 'argument --seeds' in capsys.readouterr().err


def test_compare_permutations_says_why_cfd_has_no_randomisation_p(files, capsys):
    assert main(['compare', *_data(files), '--metrics', 'FD@3', 'CFD@3', 'nDCG@3', '--baseline', 'fwd',
                 '--samples', '200', '--permutations', '100', '--format', 'csv']) == 0
    captured = capsys.readouterr()
    table = pd.read_csv(io.StringIO(captured.out))
    assert table.loc[table.measure == 'CFD@3', 'p_randomisation'].isna().all()
    assert table.loc[table.measure == 'FD@3', 'p_randomisation'].notna().all()
    assert 'p_randomisation is empty for CFD@3, nDCG@3' in captured.err


def test_a_write_killed_while_replacing_leaves_a_marked_folder_the_next_run_completes(tmp_path):
    out = tmp_path / 'report'
    script = ('import os, sys\nfrom pyterrier_frechet.analyses.outputs import OutputFolder, report_paths\n'
              'def write(names):\n'
              '    f = OutputFolder(sys.argv[1], "--out", report_paths)\n'
              '    with f.staging() as work:\n'
              '        (work / "figures").mkdir()\n'
              '        for n in names:\n'
              '            (work / n).write_text("new " + n)\n'
              '        f.commit(work, replace=True)\n'
              'write(["report.md", "results.csv", "figures/old.png"])\n'
              'real = os.replace\n'
              'def dying(a, b):\n'
              '    real(a, b)\n'
              '    if not str(b).endswith(".json"):\n'
              '        os._exit(3)\n'
              'os.replace = dying\n'
              'write(["report.md", "bootstrap.csv"])\n')
    assert subprocess.run([sys.executable, '-c', script, str(out)], cwd=os.getcwd()).returncode == 3
    (out / 'notes.txt').write_text('mine')
    marker = json.loads((out / MARKER).read_text())
    assert marker['state'] == 'replacing'
    assert set(marker['files']) == {'report.md', 'results.csv', 'figures/old.png', 'bootstrap.csv'}
    staging = [p for p in out.iterdir() if p.name.startswith('.rep.')]
    assert len(staging) == 1  # inside the folder being replaced, with its marker
    folder = OutputFolder(out, '--out', report_paths)  # accepted: marked; the dead process's staging removed
    assert not staging[0].exists()
    with folder.staging() as work:
        (work / 'report.md').write_text('final')
        folder.commit(work, replace=True)
    assert sorted(p.name for p in out.iterdir()) == sorted([MARKER, 'notes.txt', 'report.md'])
    assert read_marker(out) == ['report.md'] and (out / 'notes.txt').read_text() == 'mine'


def test_a_killed_output_write_leaves_a_temporary_file_the_next_write_removes(files, tmp_path, capsys):
    import socket
    dead = int(subprocess.run([sys.executable, '-c', 'import os; print(os.getpid())'], capture_output=True, text=True).stdout)
    host = socket.gethostname()
    stale = tmp_path / f'.rep.out.csv.{host}-{dead}.abc123'
    live = tmp_path / f'.rep.out.csv.{host}-{os.getpid()}.def456'
    theirs = tmp_path / '.rep.out.csv.notes'
    for p in (stale, live, theirs):
        p.write_text('partial')
    assert main(['eval', *_data(files), '--metrics', 'nDCG@3', '--format', 'csv', '--output', str(tmp_path / 'out.csv')]) == 0
    assert not stale.exists() and live.exists() and theirs.exists()
    assert pd.read_csv(tmp_path / 'out.csv')['name'].tolist() == ['fwd', 'mid', 'rev']


@pytest.mark.parametrize('umask,mode', [(0o022, 0o755), (0o027, 0o750), (0o002, 0o775)])
def test_a_new_output_folder_gets_the_mode_mkdir_gives(tmp_path, umask, mode):
    # the staging folder is renamed into place: made by mkdtemp it was 0700 while its files were 0644
    old = os.umask(umask)
    try:
        out = tmp_path / 'report'
        folder = OutputFolder(out, '--out', report_paths)
        with folder.staging() as work:
            assert work.stat().st_mode & 0o777 == mode
            (work / 'report.md').write_text('x')
            folder.commit(work, replace=True)
        (tmp_path / 'by_mkdir').mkdir()
    finally:
        os.umask(old)
    assert out.stat().st_mode & 0o777 == mode == (tmp_path / 'by_mkdir').stat().st_mode & 0o777
    assert (out / 'report.md').read_text() == 'x'


from hypothesis import given, settings, strategies as st_csv  # noqa: E402


@settings(max_examples=150, deadline=None)
@given(st_csv.lists(st_csv.text(alphabet='ab,"\r\n =\t;', max_size=8), min_size=1, max_size=4))
def test_every_csv_reads_back_cell_for_cell_whatever_the_names_hold(names):
    """Round seven: a name with a lone carriage return was written unquoted and split its row. Every table the package
    writes (outputs.to_csv) reads back through the csv module with the cells csv_safe wrote, the same width on every
    row (here: names as cells, as a column name and as the index)."""
    import csv as csv_module
    from pyterrier_frechet.analyses.outputs import csv_cell, to_csv
    frame = pd.DataFrame({'name': names, 'FD@10': [0.5 + i for i in range(len(names))]})
    rows = list(csv_module.reader(io.StringIO(to_csv(frame), newline='')))
    assert rows == [['name', 'FD@10']] + [[csv_cell(n), repr(0.5 + i)] for i, n in enumerate(names)]
    wide = pd.DataFrame([[1.0] * len(names)], columns=[f'c{i}{n}' for i, n in enumerate(names)], index=[names[0]])
    rows = list(csv_module.reader(io.StringIO(to_csv(wide, index=True), newline='')))
    assert rows[0][1:] == [csv_cell(c) for c in wide.columns] and rows[1][0] == names[0]
