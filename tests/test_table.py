"""The paper table (``pf.paper_table``, ``PaperTable``, ``report``'s table.md / table.tex / table.csv): its values
against ``pf.evaluate``, its intervals against a jackknife recomputed through ``pf.evaluate`` with each query left
out, its significance marks against Holm's step-down done by hand, the best marks in each measure's direction, the
LaTeX structure (booktabs rules, escaping of run names) and, where a LaTeX engine is installed, that it compiles."""
import re
import shutil
import subprocess

import numpy as np
import pandas as pd
import pytest
import scipy.stats

import pyterrier_frechet as pf
from pyterrier_frechet.analyses.bootstrap import BootstrapResult
from pyterrier_frechet.analyses.table import PaperTable, latex_text, letter
from pyterrier_frechet.cli import main
from pyterrier_frechet.measures.base import column_label

D = 5
N_QUERIES = 12
# run names with the characters LaTeX and Markdown treat specially
RUNS = ('bm25_base', 'dense 50%', 'A&B', 'rerank', 'late fusion')
METRICS = ('FD@5', 'nDCG@5', 'RR@5')


def _data(seed=11):
    """Graded qrels over N_QUERIES queries (each with relevant documents), runs of increasing quality, D-dim vectors."""
    rng = np.random.default_rng(seed)
    qrels, vectors, runs = [], {}, {name: [] for name in RUNS}
    for q in range(N_QUERIES):
        centre = rng.normal(size=D) * 2
        labels = [int(x) for x in rng.choice([2, 1, 0, 0], size=20)]
        labels[0] = 2
        for i, label in enumerate(labels):
            doc = f'q{q}-d{i}'
            qrels.append((f'q{q}', doc, label))
            vectors[doc] = centre * (label > 0) + rng.normal(size=D)
        for k, name in enumerate(RUNS):
            scores = rng.normal(size=20) + 0.8 * k * np.array(labels)
            runs[name] += [(f'q{q}', f'q{q}-d{i}', float(s)) for i, s in enumerate(scores)]
    qrels = pd.DataFrame(qrels, columns=['qid', 'docno', 'label'])
    runs = {name: pd.DataFrame(rows, columns=['qid', 'docno', 'score']) for name, rows in runs.items()}
    return qrels, runs, vectors


@pytest.fixture(scope='module')
def data(tmp_path_factory):
    qrels, runs, vectors = _data()
    folder = tmp_path_factory.mktemp('table')
    ids = sorted(vectors)
    np.save(folder / 'vecs.npy', np.stack([vectors[i] for i in ids]))
    (folder / 'vecs.ids.txt').write_text('\n'.join(ids) + '\n')
    store = pf.VectorStore(str(folder / 'vecs'))
    pairs = pf.paper_table(runs, qrels, METRICS, encoder=store, verbose=False)
    against = pf.paper_table(runs, qrels, METRICS, encoder=store, verbose=False, baseline='bm25_base')
    return folder, qrels, runs, store, pairs, against


def test_values_are_evaluate_values(data):
    folder, qrels, runs, store, table, _ = data
    expected = pf.evaluate(runs, qrels, list(METRICS), encoder=store).set_index('name')
    assert table.systems == RUNS and table.measures == METRICS
    for name in RUNS:
        for m in METRICS:
            assert table.cell(name, m)['value'] == expected.loc[name, m]  # exactly: the headline FD is evaluate's FD


def test_fd_interval_is_the_log_jackknife_over_queries_recomputed_through_evaluate(data):
    folder, qrels, runs, store, table, _ = data
    queries = sorted(qrels['qid'].unique())
    z = scipy.stats.t.ppf(0.975, len(queries) - 1)  # every query has relevant documents: n − 1 degrees of freedom
    for name in ('bm25_base', 'rerank'):
        full = pf.evaluate({name: runs[name]}, qrels, ['FD@5'], encoder=store)['FD@5'].iloc[0]
        loo = np.array([pf.evaluate({name: runs[name][runs[name].qid != q]}, qrels[qrels.qid != q], ['FD@5'],
                                    encoder=store)['FD@5'].iloc[0] for q in queries])
        logs = np.log(loo)
        se = np.sqrt((len(logs) - 1) / len(logs) * np.sum((logs - logs.mean()) ** 2))
        cell = table.cell(name, 'FD@5')
        assert cell['interval'] == 'jackknife_log'
        assert cell['low'] == pytest.approx(full * np.exp(-z * se), rel=1e-9)
        assert cell['high'] == pytest.approx(full * np.exp(z * se), rel=1e-9)
        assert cell['low'] < cell['value'] < cell['high'] and cell['inside']


def test_every_default_interval_holds_its_printed_value_and_no_outside_mark_is_printed(data):
    table = data[4]
    cells = table.cells
    assert ((cells['low'] <= cells['value']) & (cells['value'] <= cells['high'])).all()
    assert '†' not in table.to_markdown() and '\\dag' not in table.to_latex()


def test_per_query_intervals_are_the_bootstraps(data):
    folder, qrels, runs, store, table, _ = data
    boot = pf.bootstrap(runs, qrels, ['nDCG@5'], n_samples=1000, seed=0, verbose=False).summary.set_index('name')
    for name in RUNS:
        cell = table.cell(name, 'nDCG@5')
        assert (cell['low'], cell['high'], cell['interval']) == (boot.loc[name, 'low'], boot.loc[name, 'high'], 't')


def _holm_by_hand(p, alpha):
    """Holm's step-down: reject the k-th smallest p while p_(k) <= alpha / (m - k + 1), then stop."""
    order = np.argsort(p, kind='stable')
    reject = np.zeros(len(p), dtype=bool)
    for k, i in enumerate(order):
        if p[i] > alpha / (len(p) - k):
            break
        reject[i] = True
    return reject


def test_significance_marks_are_holm_over_the_raw_p_values(data):
    table = data[4]
    pairs = table.comparisons
    assert len(pairs) == 3 * 10  # every pair of 5 systems, per measure
    expected = {(n, m): set() for n in RUNS for m in METRICS}
    for m in METRICS:
        rows = pairs[pairs.measure == m]
        p = np.array([row[f'p_{row.test}'] for _, row in rows.iterrows()])
        for (_, row), sig in zip(rows.iterrows(), _holm_by_hand(p, 0.05)):
            if sig:
                lower_better = m.startswith('FD')
                a_wins = (row.value_a < row.value_b) if lower_better else (row.value_a > row.value_b)
                winner, loser = (row.a, row.b) if a_wins else (row.b, row.a)
                expected[winner, m].add(loser)
    assert any(expected.values())  # the data separate some pairs
    for (name, m), beaten in expected.items():
        cell = table.cell(name, m)
        assert set(cell['better_than']) == beaten
    # rendered: the letters of the beaten systems as superscripts
    tex = table.to_latex()
    best = max(expected, key=lambda k: len(expected[k]))
    letters = ''.join(letter(RUNS.index(s)) for s in RUNS if s in expected[best])
    row = next(line for line in tex.splitlines() if line.startswith(f'{letter(RUNS.index(best[0]))} & '))
    assert f'$^{{\\mathrm{{{letters}}}}}$' in row.split(' & ')[2 + METRICS.index(best[1])]


def test_marks_from_made_up_p_values_follow_holm(data):
    """compare_systems' frame with made-up p-values, its better column from Holm by hand: the table renders it."""
    boot_table = data[4]
    boot = BootstrapResult(boot_table.cells[['name', 'measure', 'value', 'low', 'high', 'interval', 'method', 'groups', 'estimand']],
                           {n: {} for n in RUNS}, [f'q{i}' for i in range(N_QUERIES)])
    # Holm at 0.05: 0.001 ≤ .05/6, 0.009 ≤ .05/5, 0.011 ≤ .05/4, then 0.02 > .05/3 stops (Bonferroni, .05/6 for
    # all, would keep only 0.001; uncorrected would take 0.02 and 0.04 too)
    p = np.array([0.001, 0.02, 0.011, 0.04, 0.009, 0.3])
    reject = _holm_by_hand(p, 0.05)
    assert reject.tolist() == [True, False, True, False, True, False]
    holm = pf.analyses.significance.holm(p)  # the adjusted p-values compare_systems' p_holm holds
    np.testing.assert_allclose(holm, [0.006, 0.06, 0.045, 0.08, 0.045, 0.3])
    assert ((holm < 0.05) == reject).all()
    pairs = [(a, b) for i, a in enumerate(RUNS) for b in RUNS[i + 1:]]
    values = boot_table.cells.set_index(['name', 'measure'])['value']
    rows = []
    for (a, b), pv, sig in zip(pairs, p, reject):
        va, vb = values[a, 'nDCG@5'], values[b, 'nDCG@5']
        rows.append({'measure': 'nDCG@5', 'a': a, 'b': b, 'value_a': va, 'value_b': vb, 'diff': va - vb,
                     'p_normal': pv, 'test': 'normal', 'p_holm': 0.0,
                     'better': (a if va > vb else b) if sig else ''})
    table = PaperTable.from_results(boot, ['nDCG@5'], comparisons=pd.DataFrame(rows), point=None)
    for name in RUNS:
        won = {(b if a == name else a) for (a, b), sig in zip(pairs, reject) if sig
               and name == (a if values[a, 'nDCG@5'] > values[b, 'nDCG@5'] else b)}
        assert set(table.cell(name, 'nDCG@5')['better_than']) == won
    assert "Holm's correction over the 6 comparisons of each measure, α = 0.05" in table.caption(long=True)


def test_baseline_marks_better_and_worse(data):
    table = data[5]
    pairs = table.comparisons
    assert set(pairs['a']) == {'bm25_base'} and len(pairs) == 3 * 4
    md = table.to_markdown()
    assert 'bm25\\_base (baseline)' in md or 'bm25_base (baseline)' in md
    for row in pairs.itertuples():
        cell = table.cell(row.b, row.measure)
        mark = '▲' if row.better == row.b else '▼' if row.better == row.a else ''
        assert ('bm25_base' in cell['better_than']) == (mark == '▲')
        assert ('bm25_base' in cell['worse_than']) == (mark == '▼')
    assert (pairs['better'] == pairs['b']).any()  # the better runs beat the baseline somewhere
    assert '\\blacktriangle' in table.to_latex() and 'amssymb' in table.to_latex()


def test_best_marks_follow_each_measures_direction(data):
    table = data[4]
    for m in METRICS:
        values = {n: round(table.cell(n, m)['value'], 3) for n in RUNS}
        want = min(values.values()) if m.startswith('FD') else max(values.values())
        assert {n for n in RUNS if table.cell(n, m)['best']} == {n for n, v in values.items() if v == want}
    # FD: lower is better (the measure says so), and the bold FD is the smallest
    assert table.higher_is_better == {'FD@5': False, 'nDCG@5': True, 'RR@5': True}
    tex_rows = {line.split(' & ')[1]: line.split(' & ') for line in table.to_latex().splitlines()
                if re.match(r'^[a-z] & ', line)}
    fd_bold = [name for name, cols in tex_rows.items() if cols[2].startswith('\\textbf{')]
    fd = {latex_text(n): table.cell(n, 'FD@5')['value'] for n in RUNS}
    assert fd_bold == [min(fd, key=fd.get)]


def test_latex_structure_booktabs_and_escaping(data):
    tex = data[4].to_latex(long_caption=True)
    lines = tex.splitlines()
    rules = [line for line in lines if line in ('\\toprule', '\\midrule', '\\bottomrule')]
    assert rules == ['\\toprule', '\\midrule', '\\midrule', '\\bottomrule']  # head, body, τ row, end
    assert '\\hline' not in tex and '|' not in tex.split('\\begin{tabular}')[1].split('}')[0]
    assert '\\begin{tabular}{clrrr}' in tex
    assert 'bm25\\_base' in tex and 'dense 50\\%' in tex and 'A\\&B' in tex
    assert 'bm25_base' not in tex and 'dense 50%' not in tex and 'A&B' not in tex
    body = tex.split('\\midrule')[1].split('\\bottomrule')[0].strip().splitlines()
    for line in body:  # every row has one cell per column: # & system & 3 measures
        assert len(re.findall(r'(?<!\\)&', line)) == 4 and line.endswith('\\\\')
    caption = re.search(r'\\caption\{(.*)\}\n\\label', tex, re.S).group(1)
    # no raw Unicode math left for pdflatex, and the caption names what the value and the interval are
    assert not re.search(r'[τα̂ₙ−—θ]', caption)
    assert 'Value: each measure on the full query set' in caption
    assert 'log-scale jackknife interval over queries for $\\mathrm{E}[\\widehat{\\mathrm{FD}}_n]$, the expected value at 12 queries' in caption
    assert caption.count('{') == caption.count('}')


def test_latex_text_escapes_every_special_character():
    assert latex_text('a_b%c&d$e#f{g}h~i^j\\k') == ('a\\_b\\%c\\&d\\$e\\#f\\{g\\}h\\textasciitilde{}i'
                                                  '\\textasciicircum{}j\\textbackslash{}k')
    assert latex_text('τ = 0.5 — α') == '$\\tau$ = 0.5 --- $\\alpha$'


def test_markdown_caption_names_value_and_interval(data):
    md = data[4].to_markdown(long_caption=True)
    assert md.splitlines()[0] == '| # | system | FD@5 ↓ | nDCG@5 ↑ | RR@5 ↑ |'
    assert '| a | bm25_base |' in md and '| c | A&B |' in md  # names as given: nothing here would render otherwise
    caption = md.strip().splitlines()[-1]
    assert 'Value: each measure on the full query set' in caption
    assert ('[low, high] of FD@5: 95% log-scale jackknife interval over queries for E[FD̂ₙ], the expected value '
            'at 12 queries (not the population FD), centred on the value on the log scale.') in caption
    assert ('[low, high] of nDCG@5, RR@5: 95% Student t (mean ± t·s/√n, n − 1 degrees of freedom, clipped to '
            'the range of the per-query values) interval for the population mean.') in caption
    assert 'Kendall τ with nDCG@5' in md and "Holm's correction over the 10 comparisons" in caption
    assert 'Superscripts: the systems (#) it is significantly better than (paired jackknife t-test for FD@5' in caption


def test_tau_row_is_tau_intervals(data):
    folder, qrels, runs, store, table, _ = data
    # the bootstrap the table makes (resample='needed': FD anchored on its first draws for τ)
    boot = pf.bootstrap(runs, qrels, list(METRICS), n_samples=1000, seed=0, verbose=False, encoder=store,
                        resample='needed')
    taus = pf.tau_intervals(boot, pf.evaluation.evaluate.parse_measures(list(METRICS))).set_index('a')
    frame = table.to_dataframe()
    tau_rows = frame[frame['row'] == 'kendall_tau'].set_index('measure')
    assert set(tau_rows.index) == {'FD@5', 'RR@5'} and table.reference() == 'nDCG@5'
    for m in tau_rows.index:
        assert tau_rows.loc[m, ['value', 'low', 'high']].tolist() == taus.loc[m, ['kendall_tau', 'tau_low', 'tau_high']].tolist()
    # τ itself against scipy on the evaluate values, FD negated
    values = pf.evaluate(runs, qrels, list(METRICS), encoder=store).set_index('name')
    assert tau_rows.loc['FD@5', 'value'] == pytest.approx(scipy.stats.kendalltau(-values['FD@5'], values['nDCG@5']).statistic)
    # what the interval is for, said once (correlation.TAU_ESTIMAND) and in the caption with the query count
    from pyterrier_frechet.analyses.correlation import TAU_ESTIMAND
    assert (tau_rows['estimand'] == TAU_ESTIMAND).all() and 'expected values' in TAU_ESTIMAND
    assert f"τ between the systems' expected values at {len(boot.queries)} queries" in table.caption(long=True)
    # to_csv: the long form as CSV, what report writes as table.csv
    from_csv = pd.read_csv(pd.io.common.StringIO(table.to_csv()))
    assert len(from_csv) == len(frame) and from_csv['value'].tolist() == pytest.approx(frame['value'].tolist())
    assert table.to_csv(folder / 'table.csv') is None and (folder / 'table.csv').read_text() == table.to_csv()


def test_a_value_outside_its_interval_is_marked_and_explained():
    summary = pd.DataFrame([
        {'name': 'x', 'measure': 'FD@5', 'value': 0.30, 'low': 0.09, 'high': 0.17, 'interval': 'jackknife_bc', 'method': 'jackknife_bc',
         'estimand': 'population value'},
        {'name': 'y', 'measure': 'FD@5', 'value': 0.20, 'low': 0.10, 'high': 0.25, 'interval': 'jackknife_bc', 'method': 'jackknife_bc',
         'estimand': 'population value'}])
    table = PaperTable.from_results(BootstrapResult(summary, {'x': {}, 'y': {}}, ['q1', 'q2']), ['FD@5'])
    assert table.cells['inside'].tolist() == [False, True]
    md, tex = table.to_markdown(), table.to_latex()
    assert '| x | 0.300† [0.090, 0.170] |' in md and '| y | **0.200** [0.100, 0.250] |' in md  # FD: lower is better
    assert '0.300\\textsuperscript{\\dag}' in tex
    assert 'outside its interval (1 cell; jackknife_bc)' in table.caption(long=True)
    assert 'bias-corrected' in table.caption(long=True)


def test_from_results_takes_agreement_tables_tau_and_measures_without_interval(data):
    folder, qrels, runs, store, _, _ = data
    boot = pf.bootstrap(runs, qrels, list(METRICS), n_samples=1000, seed=1, verbose=False, encoder=store)
    ms = pf.evaluation.evaluate.parse_measures(list(METRICS))
    agreement = pf.agreement_table(boot, ms)
    point = pf.evaluate(runs, qrels, list(METRICS) + ['P@5'], encoder=store)
    table = PaperTable.from_results(boot, list(METRICS) + ['P@5'], tau=agreement, point=point, seed=1)
    assert table.cell('rerank', 'P@5')['value'] == point.set_index('name').loc['rerank', 'P@5']
    assert np.isnan(table.cell('rerank', 'P@5')['low'])
    assert table.reference() == 'nDCG@5' and 'no interval' in table.caption(long=True)
    assert table.comparisons is None and 'Superscript' not in table.caption(long=True)


def test_paper_table_refuses_bad_input_before_work(data):
    folder, qrels, runs, store, _, _ = data
    with pytest.raises(ValueError, match=r"baseline 'nope' \(--baseline\) is not one of the runs"):
        pf.paper_table(runs, qrels, METRICS, encoder=store, baseline='nope')
    with pytest.raises(ValueError, match='test must be one of'):
        pf.paper_table(runs, qrels, METRICS, encoder=store, test='t')
    with pytest.raises(ValueError, match='runs must be a dict'):
        pf.paper_table(['runs/'], qrels, METRICS, encoder=store)
    with pytest.raises(ValueError, match='qrels must be a frame'):
        pf.paper_table(runs, 'qrels.txt', METRICS, encoder=store)
    with pytest.raises(ValueError, match='n_samples=10'):
        pf.paper_table(runs, qrels, METRICS, encoder=store, test='bootstrap', n_samples=10)


def _write_trec(folder, qrels, runs):
    (folder / 'runs').mkdir(exist_ok=True)
    for name, run in runs.items():
        with open(folder / 'runs' / f'run.{name.replace(" ", "-")}.txt', 'w') as f:
            for q, group in run.groupby('qid', sort=False):
                for rank, row in enumerate(group.sort_values('score', ascending=False).itertuples()):
                    f.write(f'{q} Q0 {row.docno} {rank + 1} {row.score!r} tag\n')
    with open(folder / 'qrels.txt', 'w') as f:
        for r in qrels.itertuples():
            f.write(f'{r.qid} 0 {r.docno} {r.label}\n')


def test_report_writes_the_table_and_the_python_call_on_files_agrees(data, tmp_path, capsys):
    folder, qrels, runs, store, _, _ = data
    _write_trec(tmp_path, qrels, runs)
    out = tmp_path / 'report'
    assert main(['report', '--qrels', str(tmp_path / 'qrels.txt'), '--runs', str(tmp_path / 'runs'),
                 '--vectors', str(folder / 'vecs'), '--metrics', *METRICS, '--per-query', '2', '--seeds', '0',
                 '--quiet', '--out', str(out)]) == 0
    printed = capsys.readouterr().out
    assert f'the paper table: {out / "table.md"}, {out / "table.tex"}, {out / "table.csv"}' in printed
    csv = pd.read_csv(out / 'table.csv')
    results = pd.read_csv(out / 'results.csv').set_index('name')
    cells = csv[csv['row'] == 'system']
    for r in cells.itertuples():
        assert r.value == pytest.approx(results.loc[r.name, r.measure], rel=1e-12, abs=1e-15)
    assert (out / 'table.tex').read_text().count('\\toprule') == 1
    assert '## The paper table' in (out / 'report.md').read_text()
    # the Python call on the same files, named as the CLI names them
    files = pf.runs.run_files([tmp_path / 'runs'])
    on_files = {name: pf.runs.read_run(f) for name, f in zip(pf.runs.run_names(files), files)}
    table = pf.paper_table(on_files, pf.runs.read_qrels(tmp_path / 'qrels.txt'), METRICS, encoder=store, verbose=False)
    assert (out / 'table.md').read_text() == table.to_markdown()
    # a second report into the same folder replaces the table (the marker lists it)
    assert main(['report', '--qrels', str(tmp_path / 'qrels.txt'), '--runs', str(tmp_path / 'runs'),
                 '--vectors', str(folder / 'vecs'), '--metrics', 'FD@5', 'nDCG@5', '--per-query', '2', '--seeds', '0',
                 '--quiet', '--out', str(out)]) == 0
    assert 'RR@5' not in (out / 'table.tex').read_text()


ENGINES = [e for e in ('pdflatex', 'lualatex') if shutil.which(e)]


@pytest.mark.skipif(not ENGINES, reason='no LaTeX engine (pdflatex/lualatex) installed: '
                    'apt-get install texlive-latex-base texlive-latex-recommended; the structure is checked above')
@pytest.mark.parametrize('which', ['pairs', 'baseline'])
def test_latex_compiles(data, tmp_path, which):
    table = data[4] if which == 'pairs' else data[5]
    (tmp_path / 'table.tex').write_text(table.to_latex(), encoding='utf-8')
    needs = re.match(r'% needs \\usepackage\{([a-z,]+)\}', table.to_latex()).group(1)  # what the table says it needs
    assert needs == ('booktabs,graphicx' if which == 'pairs' else 'booktabs,graphicx,amssymb')
    (tmp_path / 'doc.tex').write_text('\\documentclass{article}\n\\usepackage[T1]{fontenc}\n'
                                      f'\\usepackage{{{needs}}}\n\\begin{{document}}\n\\input{{table}}\n\\end{{document}}\n')
    result = subprocess.run([ENGINES[0], '-interaction=nonstopmode', '-halt-on-error', 'doc.tex'], cwd=tmp_path,
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout[-3000:]
    assert (tmp_path / 'doc.pdf').stat().st_size > 1000
    log = (tmp_path / 'doc.log').read_text(errors='replace')
    assert 'Missing character' not in log and 'Undefined control sequence' not in log
    assert 'Overfull \\hbox' not in log  # scaled to the line width


def test_an_undefined_interval_prints_a_dash_and_the_caption_says_so():
    summary = pd.DataFrame([
        {'name': 'x', 'measure': 'FD@5', 'value': 0.30, 'low': np.nan, 'high': np.nan, 'interval': 'jackknife_log', 'method': 'jackknife_log',
         'estimand': 'E[FD̂ₙ] at this number of queries'},
        {'name': 'y', 'measure': 'FD@5', 'value': -0.25, 'low': -0.5, 'high': 0.1, 'interval': 'jackknife', 'method': 'jackknife',
         'estimand': 'E[θ̂ₙ] at this number of queries'}])
    table = PaperTable.from_results(BootstrapResult(summary, {'x': {}, 'y': {}}, ['q1', 'q2']), ['FD@5'])
    md, tex = table.to_markdown(), table.to_latex()
    assert '| x | 0.300 [–] |' in md and '[–]: undefined.' in md
    assert '[–]: undefined there (1 cell' in table.caption(long=True)
    assert '0.300 {\\scriptsize [--]}' in tex
    assert '\\textbf{$-$0.250} {\\scriptsize [$-$0.500, 0.100]}' in tex  # LaTeX minus signs; lowest FD is bold


def test_small_values_keep_their_significant_figures():
    """FD at MS MARCO dev scale is ~0.009: three decimals would print 0.009 [0.009, 0.009] for both systems and mark
    both best. A column whose smallest entry is below 0.01 gets the decimals that show two significant figures (the
    best mark compares those); columns of ordinary size keep three."""
    from pyterrier_frechet.analyses.table import column_decimals
    assert column_decimals([0.25, 0.2, 0.31]) == 3 and column_decimals([0.05, 0.6]) == 3
    assert column_decimals([0.0087, 0.0124]) == 4 and column_decimals([0.00012]) == 5
    assert column_decimals([0.0, np.nan, 0.5]) == 3 and column_decimals([np.nan]) == 3 and column_decimals([250.0]) == 3
    summary = pd.DataFrame([
        {'name': 'strong', 'measure': 'FD@5', 'value': 0.008794, 'low': 0.008667, 'high': 0.008923,
         'interval': 'jackknife_log', 'method': 'jackknife_log', 'estimand': 'E[FD_n]'},
        {'name': 'weak', 'measure': 'FD@5', 'value': 0.012448, 'low': 0.012277, 'high': 0.012622,
         'interval': 'jackknife_log', 'method': 'jackknife_log', 'estimand': 'E[FD_n]'},
        {'name': 'strong', 'measure': 'nDCG@5', 'value': 0.264, 'low': 0.2577, 'high': 0.2699,
         'interval': 'percentile', 'method': 'percentile', 'estimand': 'population mean'},
        {'name': 'weak', 'measure': 'nDCG@5', 'value': 0.1296, 'low': 0.1244, 'high': 0.1348,
         'interval': 'percentile', 'method': 'percentile', 'estimand': 'population mean'}])
    table = PaperTable.from_results(BootstrapResult(summary, {'strong': {}, 'weak': {}}, ['q1', 'q2']),
                                    ['FD@5', 'nDCG@5'])
    md, tex = table.to_markdown(), table.to_latex()
    assert '| strong | **0.0088** [0.0087, 0.0089] | **0.264** [0.258, 0.270] |' in md
    assert '| weak | 0.0124 [0.0123, 0.0126] | 0.130 [0.124, 0.135] |' in md
    assert '\\textbf{0.0088} {\\scriptsize [0.0087, 0.0089]}' in tex
    assert table.cells.set_index(['name', 'measure'])['best'].to_dict() == {
        ('strong', 'FD@5'): True, ('weak', 'FD@5'): False, ('strong', 'nDCG@5'): True, ('weak', 'nDCG@5'): False}
    # two values equal to 3 decimals but not to 4: only the lower is best
    close = summary.iloc[:2].assign(value=[0.00871, 0.00879], low=np.nan, high=np.nan)
    t2 = PaperTable.from_results(BootstrapResult(close, {'strong': {}, 'weak': {}}, ['q1', 'q2']), ['FD@5'])
    assert t2.cells['best'].tolist() == [True, False]


# --- issue 51: the defaults complete on vectors with holes, and say what they left out ---

def _top(run, k):
    """The top-k docnos of each query of a run frame (score descending), an independent reference for the sets."""
    return run.sort_values(['qid', 'score'], ascending=[True, False]).groupby('qid').head(k)


@pytest.fixture(scope='module')
def holes(data, tmp_path_factory):
    """The data's vectors less every document 'rerank' ranks first (its FD@5 set loses 12 of 60, 20 %) and one
    other document: the defaults leave them out and count them."""
    folder, qrels, runs, store, _, _ = data
    vecs = np.load(folder / 'vecs.npy')
    ids = (folder / 'vecs.ids.txt').read_text().split()
    first = set(_top(runs['rerank'], 1)['docno'])
    gone = first | {'q3-d19'}
    keep = [i for i, d in enumerate(ids) if d not in gone]
    out = tmp_path_factory.mktemp('holes')
    np.save(out / 'vecs.npy', vecs[keep])
    (out / 'vecs.ids.txt').write_text('\n'.join(ids[i] for i in keep) + '\n')
    holed = pf.VectorStore(str(out / 'vecs'))
    table = pf.paper_table(runs, qrels, METRICS, encoder=holed, verbose=False, baseline='bm25_base', n_samples=200)
    return gone, holed, table


def test_the_default_drops_and_counts_each_cell_against_a_count_by_hand(data, holes):
    _, qrels, runs, _, _, _ = data
    gone, holed, table = holes
    relevant = qrels[qrels['label'] >= 1]
    relevant_share = relevant['docno'].isin(gone).mean()  # the relevant set: the same for every run
    frame = table.to_dataframe().set_index(['name', 'measure'])
    for name, run in runs.items():
        top = _top(run[run['qid'].isin(set(relevant['qid']))], 5)
        missing = int(top['docno'].isin(gone).sum())
        assert frame.loc[(name, 'FD@5'), 'missing_retrieved'] == missing
        assert frame.loc[(name, 'FD@5'), 'retrieved'] == len(top)
        assert frame.loc[(name, 'FD@5'), 'missing_relevant'] == int(relevant['docno'].isin(gone).sum())
        assert table.left_out(name, 'FD@5') == (missing, max(missing / len(top), relevant_share) > 0.10)
        assert np.isnan(frame.loc[(name, 'nDCG@5'), 'missing_retrieved'])  # not a vector measure
    assert table.left_out('rerank', 'FD@5') == (12, True)  # its first-ranked document of each of the 12 queries
    md = table.to_markdown()
    rerank = next(line for line in md.splitlines() if '| rerank |' in line)
    assert rerank.split(' | ')[1].endswith('(−12‡)')
    # the value is FD on what has a vector: evaluate with missing='drop' on the same store
    want = pf.evaluate(runs, qrels, [pf.FD(missing='drop') @ 5], encoder=holed).set_index('name')['FD@5']
    for name in runs:
        assert table.cell(name, 'FD@5')['value'] == want[name]
    tex = table.to_latex()
    assert '{\\scriptsize ($-$12\\ddag{})}' in tex


# --- issue 63 item 1: disclosures by construction ---

#: every vector measure family over a run's top-k (issue 63: adding FD(per_query=5, draws=10)@10 removed every count)
EVERY_VECTOR_VARIANT = ('FD@5', 'FD(per_query=3)@5', 'FD(per_query=3, draws=3)@5', "FD(term='mean')@5",
                        "FD(term='cov')@5", "FD(weighting='query')@5", 'CFD@5', 'SpreadRatio@5',
                        "SpreadRatio(scope='query')@5", 'FDInf@5', 'KID@5', 'KNNPrecision@5', 'KNNRecall@5')


@pytest.fixture(scope='module')
def partial_holes(data, tmp_path_factory):
    """The data's vectors less the non-relevant documents bm25_base ranks first (no relevant document lost): its cells
    lose a share of their retrieved sets past 10 % (‡), the others a few or none."""
    folder, qrels, runs, _, _, _ = data
    vecs = np.load(folder / 'vecs.npy')
    ids = (folder / 'vecs.ids.txt').read_text().split()
    labels = qrels.set_index('docno')['label']
    gone = {d for d in _top(runs['bm25_base'], 1)['docno'] if labels[d] == 0}
    gone |= {min(d for d in _top(runs['dense 50%'], 5)['docno'] if labels[d] == 0 and d not in gone)}  # one more
    keep = [i for i, d in enumerate(ids) if d not in gone]
    out = tmp_path_factory.mktemp('partial_holes')
    np.save(out / 'vecs.npy', vecs[keep])
    (out / 'vecs.ids.txt').write_text('\n'.join(ids[i] for i in keep) + '\n')
    return gone, pf.VectorStore(str(out / 'vecs'))


def test_every_vector_variant_keeps_its_drop_count_whatever_else_is_in_the_table(data, partial_holes):
    _, qrels, runs, _, _, _ = data
    gone, holed = partial_holes
    relevant = qrels[qrels['label'] >= 1]
    assert not relevant['docno'].isin(gone).any() and len(gone) >= 5
    table = pf.paper_table(runs, qrels, [*EVERY_VECTOR_VARIANT, 'nDCG@5'], encoder=holed, verbose=False,
                           baseline='late fusion', n_samples=50)
    frame = table.to_dataframe().set_index(['name', 'measure'])
    labels = [column_label(m) for m in pf.evaluation.evaluate.parse_measures(EVERY_VECTOR_VARIANT)]
    md = {line.split(' | ')[0].strip('| ').replace('\\', ''): line.split(' | ')[1:]
          for line in table.to_markdown().splitlines() if line.startswith('| ') and 'Kendall' not in line}
    for name, run in runs.items():
        top = _top(run[run['qid'].isin(set(relevant['qid']))], 5)  # the retrieved set: top 5 of judged queries
        missing = int(top['docno'].isin(gone).sum())
        over = missing / len(top) > 0.10
        row = md[name.replace('late fusion', 'late fusion (baseline)')]
        for j, label in enumerate(labels):
            assert frame.loc[(name, label), 'missing_retrieved'] == missing, (name, label)
            assert frame.loc[(name, label), 'retrieved'] == len(top), (name, label)
            assert frame.loc[(name, label), 'missing_relevant'] == 0, (name, label)
            assert table.left_out(name, label) == (missing, over)
            cell = row[j].rstrip(' |')
            if missing:
                assert cell.endswith(f'(−{missing}‡)' if over else f'(−{missing})'), (name, label, cell)
            if over:  # a cell the table distrusts is never bold and never marked against the baseline
                assert '**' not in cell and '▲' not in cell and '▼' not in cell and not table.cell(name, label)['best']
    assert any(table.left_out(n, 'FD@5')[1] for n in runs) and not all(table.left_out(n, 'FD@5')[1] for n in runs)
    # the best of each column is the best of the cells not distrusted, in the measure's direction
    for label in labels:
        col = table.cells[(table.cells['measure'] == label) & ~table.cells['distrusted']]
        want = col['value'].max() if table.higher_is_better[label] else col['value'].min()
        assert set(col.loc[col['best'], 'value']) == {want}, label
    # columns without an interval say why, in both captions
    short, long = table.caption(), table.caption(long=True)
    assert 'a mean over 3 balancing draws' in short and 'a mean over 3 balancing draws' in long
    for name in ('FDInf', 'KID', 'SpreadRatio', 'KNNPrecision'):
        assert f'{name} declares no resampling' in short, name
    assert 'over 10% of a set, unmarked' in short
    # the columns follow the order given
    assert table.measures == tuple(labels) + ('nDCG@5',)


def test_a_point_table_that_lost_its_counts_is_refused_not_silent(data, partial_holes):
    _, qrels, runs, _, _, _ = data
    _, holed = partial_holes
    boot = pf.bootstrap(runs, qrels, ["FD(missing='drop')@5"], encoder=holed, n_samples=20, verbose=False)
    other = boot.point[['name']].copy()
    other.attrs['source'] = 'elsewhere'
    merged = boot.point.merge(other, on='name')  # pandas keeps attrs through a merge only where both sides' are equal
    assert merged.attrs == {} and merged['no_vector_retrieved'].sum() > 0
    with pytest.raises(ValueError, match=r"carries no per-cell count for \['FD@5'\].*coverage="):
        PaperTable.from_results(boot, ["FD(missing='drop')@5"], point=merged)
    table = PaperTable.from_results(boot, ["FD(missing='drop')@5"], point=merged,
                                    coverage=pf.evaluation.evaluate.no_vector_counts(boot.point))
    assert table.left_out('bm25_base', 'FD@5')[0] > 0


def test_a_quiet_table_says_what_it_left_out_in_one_line_and_the_threshold_once(data, partial_holes, caplog, capsys):
    """Issue 63 item 9: verbose=False logs one line for the documents left out (not one per selection: 48 on DL19),
    prints no progress, and warns once about the relevance threshold of graded qrels (not once per evaluation)."""
    import logging
    import warnings
    _, qrels, runs, _, _, _ = data
    _, holed = partial_holes
    measures = ['FD@5', 'FD(per_query=3, draws=2)@5', 'nDCG@5']
    with caplog.at_level(logging.WARNING, logger='pyterrier_frechet'), warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter('always')
        pf.paper_table(runs, qrels, measures, encoder=holed, verbose=False, n_samples=50)
    lines = [r.getMessage() for r in caplog.records if 'without a vector' in r.getMessage()]
    assert len(lines) == 1 and "counts per cell are in the table's cells" in lines[0], lines
    assert sum('graded qrels' in str(w.message) for w in caught) == 1
    assert capsys.readouterr().err == ''
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger='pyterrier_frechet'), warnings.catch_warnings():
        warnings.simplefilter('ignore')
        pf.paper_table(runs, qrels, measures, encoder=holed, verbose=True, n_samples=50)
    assert sum('without a vector' in r.getMessage() for r in caplog.records) > 1  # verbose: each selection


def test_missing_error_still_stops_with_the_count(data, holes):
    _, qrels, runs, _, _, _ = data
    _, holed, _ = holes
    with pytest.raises(ValueError, match=r"have no vector.*missing='drop'"):
        pf.paper_table(runs, qrels, METRICS, encoder=holed, verbose=False, missing='error', n_samples=200)


def test_the_short_caption_has_at_most_60_words_and_the_long_one_the_details(holes):
    _, _, table = holes
    short, long = table.caption(), table.caption(long=True)
    assert len(short.split()) <= 60, short
    for what in ('(−n)', '‡', '▲/▼', 'τ', 'E[FD̂ₙ]', 'Student t'):
        assert what in short, what
    assert "n documents of that run's retrieved set had no vector" in long and 'table.csv' in long
    assert len(long.split()) > 60


def test_tau_is_not_printed_across_fewer_than_five_systems(data):
    _, qrels, runs, store, table, _ = data
    four = {name: runs[name] for name in RUNS[:4]}
    small = pf.paper_table(four, qrels, METRICS, encoder=store, verbose=False, n_samples=200)
    md = small.to_markdown()
    assert '| | Kendall τ with nDCG@5 | — |  | — |' in md.replace('|  | Kendall', '| | Kendall')
    assert 'τ not shown: fewer than 5 systems.' in small.caption()
    assert 'spans most of [−1, 1]' in small.caption(long=True)
    assert 'kendall_tau' not in set(small.to_dataframe()['row'])
    assert 'kendall_tau' in set(table.to_dataframe()['row'])  # five systems: printed


def test_rel_and_missing_are_the_reports_options(data):
    _, qrels, runs, store, _, _ = data
    table = pf.paper_table(runs, qrels, ['FD@5', 'RR@5', 'nDCG@5'], encoder=store, verbose=False, rel=2, n_samples=200)
    want = pf.evaluate(runs, qrels, [pf.FD(rel=2) @ 5, 'RR(rel=2)@5'], encoder=store).set_index('name')
    for name in runs:
        assert table.cell(name, 'FD(rel=2)@5')['value'] == want.loc[name, 'FD(rel=2)@5']
        assert table.cell(name, 'RR(rel=2)@5')['value'] == want.loc[name, 'RR(rel=2)@5']
    with pytest.raises(ValueError, match='rel must be a positive integer'):
        pf.paper_table(runs, qrels, METRICS, encoder=store, rel=0)
    with pytest.raises(ValueError, match="missing must be 'error' or 'drop'"):
        pf.paper_table(runs, qrels, METRICS, encoder=store, missing='skip')
    with pytest.raises(ValueError, match='not both'):
        pf.paper_table(runs, qrels, METRICS, encoder=store, text='passages.jsonl')


def test_graded_qrels_say_which_threshold_is_used(data):
    import warnings
    _, qrels, runs, store, _, _ = data
    from pyterrier_frechet.evaluation.relevance import graded_threshold_note
    note = graded_threshold_note(qrels, ['FD@5', 'RR@5', 'nDCG@5'])
    assert note.startswith('graded qrels (labels up to 2): FD@5, RR@5 count label >= 1 as relevant')
    assert 'rel=2' in note
    assert graded_threshold_note(qrels, ['FD(rel=2)@5', 'nDCG@5']) == ''  # set, or no rel parameter
    assert graded_threshold_note(qrels.assign(label=(qrels['label'] > 0).astype(int)), ['FD@5']) == ''  # binary
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter('always')
        pf.evaluate(runs, qrels, ['FD@5'], encoder=store)
    assert any('count label >= 1 as relevant' in str(w.message) for w in caught)


@pytest.mark.parametrize('digits', [-1, 13, 2.5, True, '3'])
def test_digits_out_of_range_is_refused_before_any_work(data, digits):
    _, qrels, runs, store, table, _ = data
    with pytest.raises(ValueError, match='digits must be an integer from 0 to 12'):
        pf.paper_table(runs, qrels, METRICS, encoder=store, digits=digits)
    boot = BootstrapResult(table.cells[['name', 'measure', 'value', 'low', 'high', 'interval', 'method', 'estimand']],
                           {n: {} for n in RUNS}, [f'q{i}' for i in range(N_QUERIES)])
    with pytest.raises(ValueError, match='digits must be an integer from 0 to 12'):
        PaperTable.from_results(boot, ['nDCG@5'], digits=digits)


def test_report_completes_without_missing_and_its_table_counts_what_was_left_out(data, holes, tmp_path, capsys):
    """The CLI report's default is missing='drop' (it completes where a store lacks vectors), its table counts the
    documents each cell lost exactly as pf.paper_table's, and report.md says which relevance threshold graded qrels
    got and gives the long caption as notes."""
    folder, qrels, runs, _, _, _ = data
    gone, holed, table = holes
    _write_trec(tmp_path, qrels, runs)
    out = tmp_path / 'report'
    assert main(['report', '--qrels', str(tmp_path / 'qrels.txt'), '--runs', str(tmp_path / 'runs'),
                 '--vectors', holed.prefix, '--metrics', *METRICS, '--per-query', '2', '--seeds', '0',
                 '--samples', '200', '--baseline', 'bm25_base', '--quiet', '--out', str(out)]) == 0
    assert 'documents without a vector were left out' in capsys.readouterr().out
    md = (out / 'table.md').read_text()
    assert '(−12‡)' in next(line for line in md.splitlines() if '| rerank |' in line)
    cells = pd.read_csv(out / 'table.csv')
    frame = table.to_dataframe()
    mine = cells[cells['row'] == 'system'].set_index(['name', 'measure'])['missing_retrieved']
    theirs = frame[frame['row'] == 'system'].assign(name=lambda f: f['name'].str.replace(' ', '-'))  # file names
    theirs = theirs.set_index(['name', 'measure'])['missing_retrieved']
    pd.testing.assert_series_equal(mine.sort_index(), theirs.sort_index(), check_dtype=False)
    report = (out / 'report.md').read_text()
    assert 'Graded qrels (labels up to 2): FD@5, RR@5 count label >= 1 as relevant' in report
    assert "**Notes** (the long caption):" in report and 'had no vector and were left out' in report


def test_one_system_is_one_system_in_both_captions():
    summary = pd.DataFrame([{'name': 'x', 'measure': 'nDCG@5', 'value': 0.5, 'low': 0.4, 'high': 0.6, 'interval': 't', 'method': 't',
                             'estimand': 'population mean'}])
    table = PaperTable.from_results(BootstrapResult(summary, {'x': {}}, ['q1', 'q2']), ['nDCG@5'])
    assert table.caption().startswith('1 system, 2 queries;')
    assert table.caption(long=True).startswith('1 system on 2 queries.')


@pytest.mark.skipif(not ENGINES, reason='no LaTeX engine (pdflatex/lualatex) installed: '
                    'apt-get install texlive-latex-base texlive-latex-recommended')
def test_any_system_names_give_a_latex_table_that_compiles_and_a_markdown_table_that_holds():
    """Names a user can give — control characters (BEL, ESC), line breaks, bidirectional overrides (U+202E), line and
    paragraph separators (U+2028/9), emoji and CJK, LaTeX's special characters, 3,000 characters — each yield a LaTeX
    table that compiles and a Markdown table whose rows keep their cells. Generated by hypothesis (seeded), plus
    the cases of the bad-input round."""
    import tempfile
    from hypothesis import given, settings, strategies as st, HealthCheck

    def check(names):
        summary = pd.DataFrame([{'name': n, 'measure': 'nDCG@5', 'value': 0.1 * (i + 1), 'low': 0.05 * (i + 1),
                                 'high': 0.15 * (i + 1), 'interval': 't', 'method': 't', 'estimand': 'population mean'}
                                for i, n in enumerate(names)])
        table = PaperTable.from_results(BootstrapResult(summary, {n: {} for n in names}, ['q1', 'q2']), ['nDCG@5'],
                                        baseline=names[0])
        md = table.to_markdown()
        rows = md.split('\n\n')[0].split('\n')
        assert len(rows) == 2 + len(names)
        for row in rows:  # | system | nDCG@5 |: three unescaped pipes per row, whatever the name
            assert len(re.findall(r'(?<!\\)\|', row)) == 3, row
        tex = table.to_latex()
        folder = tempfile.mkdtemp()
        with open(f'{folder}/table.tex', 'w', encoding='utf-8') as f:
            f.write(tex)
        with open(f'{folder}/doc.tex', 'w') as f:
            f.write('\\documentclass{article}\n\\usepackage[T1]{fontenc}\n\\usepackage{booktabs,graphicx,amssymb}\n'
                    '\\begin{document}\n\\input{table}\n\\end{document}\n')
        result = subprocess.run([ENGINES[0], '-interaction=nonstopmode', '-halt-on-error', 'doc.tex'], cwd=folder,
                                capture_output=True, text=True, timeout=300)
        assert result.returncode == 0, (names, result.stdout[-2000:])
        log = open(f'{folder}/doc.log', errors='replace').read()
        assert 'Missing character' not in log, names
        shutil.rmtree(folder)

    check(['bm25\x07bell', 'esc\x1b[31m', 'a\u202eb', 'line\u2028sep\u2029para', 'two\n\nlines', 'x' * 3000])
    check(['😀 中文', '&%$#_{}~^\\', 'é ü ß', 'tab\tcr\r'])  # a name of blanks only is refused (round seven)

    @settings(max_examples=6, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
    @given(st.lists(st.text(min_size=1, max_size=80).filter(str.strip), min_size=2, max_size=3, unique=True))
    def generated(names):
        check(names)

    generated()


def test_the_caption_names_the_queries_fds_jackknife_ran_over():
    """Six judged queries, four with a document at label 2: FD(rel=2)'s jackknife leaves out those four (its interval
    is for E[FD̂₄]), nDCG's all six — the captions said '6 queries' for both."""
    from conftest import DictEncoder
    rng = np.random.default_rng(0)
    rows, vectors, runs = [], {}, {'a': [], 'b': []}
    for i in range(6):
        for j in range(6):
            doc, label = f'q{i}d{j}', ((2 if j < 2 else 0) if i < 4 else (1 if j < 2 else 0))
            rows.append((f'q{i}', doc, label))
            vectors[doc] = rng.normal(size=4)
            for k, name in enumerate(runs):
                runs[name].append((f'q{i}', doc, float(rng.normal() + k * label)))
    qrels = pd.DataFrame(rows, columns=['qid', 'docno', 'label'])
    runs = {n: pd.DataFrame(r, columns=['qid', 'docno', 'score']) for n, r in runs.items()}
    boot = pf.bootstrap(runs, qrels, ['FD(rel=2)@3', 'nDCG@3'], n_samples=50, verbose=False, encoder=DictEncoder(vectors))
    assert len(boot.queries) == 6 and len(boot.jackknife['a']['FD(rel=2)@3']) == 4
    table = PaperTable.from_results(boot)
    assert table.jackknife_queries == {'FD(rel=2)@3': 4}
    assert 'FD(rel=2)@3: jackknife over the 4 queries with a relevant document, for E[FD̂ₙ]' in table.caption()
    assert 'the expected value at 4 queries (those with a relevant document at its rel' in table.caption(long=True)


def test_a_table_of_measures_none_of_which_is_resampled_names_every_resampled_family_before_any_work():
    """The refusal lists the registry's resampled measures (CFD among them), not a hand-written list."""
    from pyterrier_frechet.measures.base import resampled_names
    run = pd.DataFrame({'qid': ['1', '2'], 'docno': ['d1', 'd2'], 'score': [1.0, 1.0]})
    qrels = pd.DataFrame({'qid': ['1', '2'], 'docno': ['d1', 'd2'], 'label': [1, 1]})
    with pytest.raises(ValueError, match='can be bootstrapped') as got:
        pf.paper_table({'a': run}, qrels, ['KID@10', 'FDInf@10'])
    assert 'CFD' in resampled_names() and all(name in str(got.value) for name in resampled_names())


def test_a_latex_label_is_kept_as_given_so_ref_resolves(data):
    table = data[4]
    tex = table.to_latex(label='tab:fd_results')
    assert '\\label{tab:fd_results}' in tex and 'fd\\_results' not in tex.split('\\label')[1]
    for bad in ('', 'tab:{x}', 'a b', 'x%y', 'back\\slash', None):
        with pytest.raises(ValueError, match='a LaTeX label key'):
            table.to_latex(label=bad)


def test_names_that_print_alike_are_numbered_and_blank_names_refused_before_work(data, monkeypatch):
    """Round seven: 'new\\nline' and 'new line', a tab and a space, two long names shortened to one prefix printed as
    the same row label; '' and ' ' as blank rows. Each row label is now distinct in both dialects (numbered, with a
    sentence saying so), and a blank name is refused before the bootstrap."""
    import re
    folder, qrels, runs, store, _, _ = data
    base = runs['bm25_base']
    long_a, long_b = 'x' * 70 + 'A', 'x' * 70 + 'B'
    names = ['new\nline', 'new line', 'tab\there', 'tab here', long_a, long_b, 'alone']
    t = pf.paper_table({n: base for n in names}, qrels, ['nDCG@10'], verbose=False, n_samples=200)
    tex = t.to_latex()
    labels = [line.split(' & ')[1] for line in tex.splitlines() if re.match(r'^[a-z] & ', line)]  # after the letter
    assert len(labels) == len(set(labels)) == len(names)
    assert labels[:4] == ['new line [1]', 'new line [2]', 'tab here [1]', 'tab here [2]'] and labels[-1] == 'alone'
    assert 'Names that print alike are numbered [1], [2], \\ldots{} in table order' in tex
    md = t.to_markdown()
    md_labels = [row.split('|')[2].strip() for row in md.splitlines()[2:2 + len(names)]]
    assert len(set(md_labels)) == len(names) and 'print alike' not in md.split('\n\n')[0]
    one = pf.paper_table({'a': base, 'b': base}, qrels, ['nDCG@10'], verbose=False, n_samples=200)
    assert 'print alike' not in one.to_latex() + one.to_markdown()

    def no_work(*args, **kwargs):
        raise AssertionError('the bootstrap ran')
    import pyterrier_frechet.analyses.table as table_module
    monkeypatch.setattr(table_module, 'bootstrap', no_work, raising=False)
    for blank in ('', '  '):
        with pytest.raises(ValueError, match=re.escape(f"system name(s) ['{blank}'] are empty or blank")):
            pf.paper_table({'a': base, blank: base}, qrels, ['nDCG@10'], verbose=False, n_samples=200)
