"""One selection path: every subcommand and analysis gives the point values of ``pf.evaluate`` on the same inputs.

Synthetic graded qrels and runs with tied scores, documents without a vector on both sides (``missing='drop'``),
URR, FD(weighting='query'), CFD, ``rel=2``, a query with no document judged >= 2 and a run query absent from the
qrels. Each of ``eval``, ``bootstrap``, ``compare``, ``agreement``, ``shuffle`` and ``report`` (CLI), and
``pf.bootstrap``, ``pf.compare_systems``, ``pf.paired_test``, ``pf.agreement_table``, ``pf.shuffle_check`` (Python),
is checked against ``pf.evaluate``; the resampling path is checked against independent recomputations through
``pf.evaluate`` itself (leave-one-query-out values against evaluation without that query, bootstrap samples against
the plain loop that rebuilds the resampled qrels and runs). Every subcommand prints the same count of dropped
documents.
"""
import re

import ir_measures
import numpy as np
import pandas as pd
import pytest
import scipy.stats

import pyterrier_frechet as pf
from pyterrier_frechet.cli import main
from pyterrier_frechet.vectors.sources import using_encoder
from conftest import write_trec_files

D = 4
N_QUERIES = 10
N_DOCS = 30  # per query
RUNS = ('alpha', 'beta', 'gamma', 'delta')
METRICS = ('FD@5', 'FD(urr=True)@5', "FD(weighting='query')@5", 'CFD@5', 'nDCG@5', 'RR@5')
MISSING = ('q0-d1', 'q1-d0', 'q2-d3', 'q3-d6', 'q5-d9', 'q4-d7')  # relevant and retrieved documents without a vector


def _data(seed=7):
    rng = np.random.default_rng(seed)
    qrels, vectors, runs = [], {}, {name: [] for name in RUNS}
    for q in range(N_QUERIES):
        centre = rng.normal(size=D)
        for i in range(N_DOCS):
            doc = f'q{q}-d{i}'
            label = 0 if q == 9 and i >= 3 else int(rng.choice([3, 2, 1, 0, 0], p=[0.15, 0.2, 0.2, 0.25, 0.2]))
            if q == 9:  # a query with no document judged >= 2: no unit of the rel=2 measures
                label = min(label, 1)
            if i < 20:
                qrels.append((f'q{q}', doc, label))
            vectors[doc] = centre * (label > 0) + rng.normal(size=D)
        for k, name in enumerate(RUNS):
            scores = rng.normal(size=N_DOCS) + (k + 1) * 0.3 * np.array([lab for *_, lab in qrels[-20:]] + [0] * 10)
            scores = np.round(scores, 1)  # ties within a ranking
            runs[name] += [(f'q{q}', f'q{q}-d{i}', float(s)) for i, s in enumerate(scores)]
    for name in RUNS:  # a run query the qrels do not have
        runs[name] += [('q99', f'q0-d{i}', float(-i)) for i in range(5)]
    qrels = pd.DataFrame(qrels, columns=['qid', 'docno', 'label'])
    runs = {name: pd.DataFrame(rows, columns=['qid', 'docno', 'score']) for name, rows in runs.items()}
    for doc in MISSING:
        del vectors[doc]
    return qrels, runs, vectors


@pytest.fixture(scope='module')
def data(tmp_path_factory):
    qrels, runs, vectors = _data()
    folder = write_trec_files(tmp_path_factory.mktemp('differential'), qrels, runs, vectors, sort_by_score=False)
    store = pf.VectorStore(str(folder / 'vecs'))
    measures = _measures(store)
    with using_encoder(store):
        expected = pf.evaluate(runs, qrels, measures).set_index('name')
    return folder, qrels, runs, store, measures, expected


@pytest.fixture(autouse=True)
def _module_encoder(data):
    """The vector source of every measure in this module (the CLI's --vectors), set for each test and restored after
    it (conftest checks that no test leaves a default encoder set)."""
    with using_encoder(data[3]):
        yield


def _measures(store):
    ms = []
    for name in METRICS:
        (m,) = pf.evaluation.evaluate.parse_measures([name])
        if 'rel' in m.SUPPORTED_PARAMS and 'rel' not in m.params:
            m = m(rel=2)
        if pf.measures.base.is_vector_measure(m):
            m = m(missing='drop')
        ms.append(m)
    return ms


def _labels(measures):
    return [pf.measures.base.column_label(m) for m in measures]


def _cli(folder, command, *extra):
    return ['--qrels', str(folder / 'qrels.txt'), '--runs', str(folder / 'runs'), '--vectors', str(folder / 'vecs'),
            '--metrics', *METRICS, '--rel', '2', '--missing', 'drop', '--quiet', *extra]


def _run(capsys, command, folder, *extra):
    assert main([command] + _cli(folder, command, *extra)) == 0
    out = capsys.readouterr()
    return out.out, out.err


def _csv(text):
    return pd.read_csv(pd.io.common.StringIO(text), keep_default_na=False, na_values=[''])


def _drop_note(text):
    found = re.findall(r'documents without a vector were left out: \d+ relevant .*? and \d+ retrieved over all runs', text)
    assert len(found) == 1, text
    return found[0]


def test_the_inputs_have_what_the_test_is_about(data):
    folder, qrels, runs, store, measures, expected = data
    assert (expected['no_vector_relevant'] > 0).all() and (expected['no_vector_retrieved'] > 0).any()
    assert any(g.score.duplicated().any() for g in runs['alpha'].groupby('qid').__iter__() for g in [g[1]])
    assert expected[_labels(measures)].notna().all().all()


def test_eval_cli_equals_evaluate(data, capsys):
    folder, qrels, runs, store, measures, expected = data
    out, err = _run(capsys, 'eval', folder, '--format', 'csv')
    table = _csv(out).set_index('name').loc[list(RUNS)]
    for col in _labels(measures):
        np.testing.assert_allclose(table[col], expected[col], rtol=1e-12, atol=0, err_msg=col)
    assert table['no_vector_relevant'].tolist() == expected['no_vector_relevant'].tolist()
    assert table['no_vector_retrieved'].tolist() == expected['no_vector_retrieved'].tolist()
    assert _drop_note(err)


def _note_of(expected):
    return (f'documents without a vector were left out: {int(expected["no_vector_relevant"].max())} relevant (the same '
            f'qrels for every run) and {int(expected["no_vector_retrieved"].sum())} retrieved over all runs')


def test_bootstrap_resamples_the_sets_evaluate_selects(data):
    """pf.bootstrap: value = evaluate; each leave-one-query-out value = evaluate without that query; the first
    samples = the plain loop (resampled qrels and runs rebuilt and evaluated through the provider)."""
    folder, qrels, runs, store, measures, expected = data
    boot_ms = [m for m in measures]
    boot = pf.bootstrap(runs, qrels, boot_ms, n_samples=6, seed=3, verbose=False)
    summary = boot.summary.set_index(['name', 'measure'])
    for name in RUNS:
        for col in _labels(boot_ms):
            assert summary.loc[(name, col), 'value'] == expected.loc[name, col]
    assert boot.point.set_index('name')[['no_vector_relevant', 'no_vector_retrieved']].equals(
        expected[['no_vector_relevant', 'no_vector_retrieved']])
    # leave-one-query-out: the units are the queries with a document judged >= 2, in sorted order
    fd = [m for m in boot_ms if pf.measures.base.is_vector_measure(m)]
    units = sorted(qrels.loc[qrels.label >= 2, 'qid'].unique())
    name = 'beta'
    for i, q in enumerate(units[:4]):
        left_out = pf.evaluate({name: runs[name][runs[name].qid != q]}, qrels[qrels.qid != q], fd).set_index('name')
        for m in fd:
            col = pf.measures.base.column_label(m)
            if col in boot.jackknife[name]:
                assert boot.jackknife[name][col][i] == pytest.approx(left_out.loc[name, col], rel=1e-9, abs=1e-12), (q, col)
    # bootstrap samples: the plain loop on the same draws
    for m in [m for m in fd if pf.measures.base.resampling(m) is pf.measures.definitions.GAUSSIAN]:
        naive = pf.analyses.bootstrap.bootstrap_naive(runs[name], qrels, m, n_samples=3, seed=3)
        np.testing.assert_allclose(boot.samples[name][pf.measures.base.column_label(m)][:3], naive, rtol=1e-9)


def test_bootstrap_cli_values_and_drop_note(data, capsys):
    folder, qrels, runs, store, measures, expected = data
    out, err = _run(capsys, 'bootstrap', folder, '--samples', '20', '--format', 'csv')
    table = _csv(out).set_index(['name', 'measure'])
    for name in RUNS:
        for col in _labels(measures):
            assert table.loc[(name, col), 'value'] == pytest.approx(expected.loc[name, col], rel=1e-12, abs=0)
    assert _note_of(expected) in err


def test_compare_python_and_cli_values(data, capsys):
    folder, qrels, runs, store, measures, expected = data
    table = pf.compare_systems(runs, qrels, measures, n_samples=20, verbose=False)
    assert len(table) == len(measures) * 6
    for row in table.itertuples():
        assert row.value_a == expected.loc[row.a, row.measure] and row.value_b == expected.loc[row.b, row.measure]
        assert row.diff == expected.loc[row.a, row.measure] - expected.loc[row.b, row.measure]
    out, err = _run(capsys, 'compare', folder, '--samples', '20', '--format', 'csv')
    cli = _csv(out)
    for row in cli.itertuples():
        assert row.value_a == pytest.approx(expected.loc[row.a, row.measure], rel=1e-12, abs=0)
        assert row.diff == pytest.approx(expected.loc[row.a, row.measure] - expected.loc[row.b, row.measure], rel=1e-12, abs=1e-15)
    assert _note_of(expected) in err
    # the paired FD test of one pair selects the same sets
    fd = measures[0]
    pair = pf.paired_test(runs['alpha'], runs['gamma'], qrels, fd, n_samples=10, n_permutations=9)
    assert pair.fd_a == pytest.approx(expected.loc['alpha', 'FD(rel=2)@5'], rel=1e-12)
    assert pair.fd_b == pytest.approx(expected.loc['gamma', 'FD(rel=2)@5'], rel=1e-12)


def test_agreement_python_and_cli_tau_from_evaluate(data, capsys):
    folder, qrels, runs, store, measures, expected = data
    boot = pf.bootstrap(runs, qrels, measures, n_samples=50, verbose=False)
    table = pf.agreement_table(boot, measures).set_index('measure')
    ref = 'nDCG@5'
    for m in measures:
        col = pf.measures.base.column_label(m)
        if col == ref:
            continue
        sign = -1.0 if not pf.measures.base.higher_is_better(m) else 1.0
        tau = scipy.stats.kendalltau(sign * expected[col], expected[ref]).statistic
        assert table.loc[col, 'kendall_tau'] == pytest.approx(tau, abs=1e-12), col
    out, err = _run(capsys, 'agreement', folder, '--samples', '50', '--format', 'csv')
    cli = _csv(out).set_index('measure')
    np.testing.assert_allclose(cli['kendall_tau'].to_numpy(float), table['kendall_tau'].to_numpy(float), atol=1e-12)
    assert _note_of(expected) in err


def test_shuffle_python_and_cli(data, capsys):
    folder, qrels, runs, store, measures, expected = data
    table = pf.shuffle_check(runs, qrels, measures)
    for row in table.itertuples():
        assert row.value == expected.loc[row.name, row.measure]
        assert row.no_vector_relevant == expected.loc[row.name, 'no_vector_relevant']
    # FD pools each side over its query set: rotating the rankings among the queries with a document judged >= rel
    # (the measure's rel, here 2) moves no document in or out (issue 25 S8: it used to rotate over label > 0)
    fd = table[table.measure.isin(['FD(rel=2)@5', 'FD(rel=2,urr=True)@5'])]
    np.testing.assert_allclose(fd['change'], 0.0, atol=1e-12)
    rotated = pf.rotate_rankings(runs['alpha'], qrels, rel=2)
    got = table.set_index(['name', 'measure']).loc[('alpha', 'RR(rel=2)@5'), 'rotated']
    assert got == pf.evaluate({'alpha': rotated}, qrels, [ir_measures.RR(rel=2) @ 5]).iloc[0]['RR(rel=2)@5']
    out, err = _run(capsys, 'shuffle', folder, '--format', 'csv')
    cli = _csv(out)
    for row in cli.itertuples():
        assert row.value == pytest.approx(expected.loc[row.name, row.measure], rel=1e-12, abs=0)
    assert _note_of(expected) in err


def test_report_cli_every_section_from_the_same_values(data, capsys, tmp_path):
    folder, qrels, runs, store, measures, expected = data
    out = tmp_path / 'rep'
    stdout, err = _run(capsys, 'report', folder, '--samples', '50', '--per-query', '3', '--seeds', '0', '--out', str(out))
    assert _note_of(expected) in stdout
    results = pd.read_csv(out / 'results.csv').set_index('name')
    boot = pd.read_csv(out / 'bootstrap.csv').set_index(['name', 'measure'])
    pairs = pd.read_csv(out / 'comparisons.csv')
    for name in RUNS:
        for col in _labels(measures):
            assert results.loc[name, col] == pytest.approx(expected.loc[name, col], rel=1e-12, abs=0)
            assert boot.loc[(name, col), 'value'] == pytest.approx(expected.loc[name, col], rel=1e-12, abs=0)
    for row in pairs.itertuples():
        assert row.value_a == pytest.approx(expected.loc[row.a, row.measure], rel=1e-12, abs=0)
    assert 'Documents without a vector were left out' in (out / 'report.md').read_text()


def test_the_cli_names_its_flag_in_the_missing_vector_error(data, capsys):
    folder = data[0]
    for command in ('eval', 'bootstrap', 'compare', 'shuffle'):
        argv = [command] + [a for a in _cli(folder, command) if a not in ('--missing', 'drop')]
        if command in ('bootstrap', 'compare'):
            argv += ['--samples', '20']
        assert main(argv) == 2
        err = capsys.readouterr().err
        assert 'pass --missing drop' in err and "pass missing='drop'" not in err, (command, err)
