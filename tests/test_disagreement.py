"""Contradictions between FD and the classical measures (analyses/disagreement.py): read from compare_systems' frame
and from pt.Experiment(baseline=...)'s table, marked ⇄ in the paper table, written by report; on a world built so that
they contradict (a system returning a tight neighbourhood of each query: more relevant documents at the top, a
narrower retrieved set) and on hand-made frames whose answer is known."""
import warnings

import numpy as np
import pandas as pd
import pytest

import pyterrier_frechet as pf
from ir_measures import nDCG

from pyterrier_frechet import FD
from pyterrier_frechet.analyses.disagreement import COLUMNS, MARK, disagreements


def flip_world(prefix, n_queries=20, d=4, seed=0):
    """'narrow' returns 2 relevant documents of its query, then 8 unjudged documents within 0.2 of the query's centre;
    'broad' returns relevant documents of other queries (nDCG 0, but spread like the relevant set). The relevant
    documents lie within 1 of their query's centre, the centres within 0.5 of each other: nDCG@10 calls 'narrow'
    better, FD@10 worse (its retrieved set is narrower than the relevant set)."""
    rng = np.random.default_rng(seed)
    centres = rng.normal(size=(n_queries, d)) * 0.5
    docs, vecs, qrels = [], [], []
    for q in range(n_queries):
        for i in range(5):
            docs.append(f'r{q}_{i}')
            vecs.append(centres[q] + rng.normal(size=d))
            qrels.append((f'q{q}', f'r{q}_{i}', 1))
        for i in range(10):
            docs.append(f'n{q}_{i}')
            vecs.append(centres[q] + 0.2 * rng.normal(size=d))
    np.save(f'{prefix}.npy', np.array(vecs))
    with open(f'{prefix}.ids.txt', 'w') as f:
        f.write('\n'.join(docs) + '\n')
    narrow, broad = [], []
    for q in range(n_queries):
        ranked = [f'r{q}_{(i * 7 + q) % 5}' for i in range(2)] + [f'n{q}_{i}' for i in range(8)]
        narrow += [(f'q{q}', doc, 10.0 - j) for j, doc in enumerate(ranked)]
        broad += [(f'q{q}', f'r{(q + 1 + j) % n_queries}_{j % 5}', 10.0 - j) for j in range(10)]
    cols = ['query_id', 'doc_id', 'score']
    return (pd.DataFrame(qrels, columns=['query_id', 'doc_id', 'relevance']),
            {'broad': pd.DataFrame(broad, columns=cols), 'narrow': pd.DataFrame(narrow, columns=cols)})


@pytest.fixture(scope='module')
def flip(tmp_path_factory):
    prefix = tmp_path_factory.mktemp('flip') / 'vectors'
    qrels, runs = flip_world(str(prefix))
    return pf.VectorStore(str(prefix)), qrels, runs


def _comparisons(rows):
    """compare_systems' columns for hand-made calls: (measure, a, b, value_a, value_b, p_holm, better)."""
    return pd.DataFrame(rows, columns=['measure', 'a', 'b', 'value_a', 'value_b', 'p_holm', 'better'])


def test_a_contradiction_is_two_significant_calls_in_opposite_directions():
    frame = _comparisons([
        ('FD@10', 'BM25', 'Dense', 0.08, 0.12, 0.01, 'BM25'),  # FD: Dense worse
        ('nDCG@10', 'BM25', 'Dense', 0.32, 0.42, 0.001, 'Dense'),  # nDCG: Dense better -> contradiction
        ('RR@10', 'BM25', 'Dense', 0.5, 0.6, 0.2, ''),  # RR: not significant -> none
        ('FD@10', 'BM25', 'Sparse', 0.08, 0.07, 0.03, 'Sparse'),  # FD: Sparse better
        ('nDCG@10', 'BM25', 'Sparse', 0.32, 0.36, 0.04, 'Sparse'),  # nDCG agrees -> none
        ('RR@10', 'BM25', 'Sparse', 0.5, 0.4, 0.01, 'BM25'),  # RR: Sparse worse -> contradiction
        ('DO@10', 'BM25', 'Sparse', 3.0, 5.0, 0.01, 'BM25'),  # a histogram measure: neither family
    ])
    with pytest.warns(UserWarning, match=r'2 pairs.*Dense: FD@10 worse \(p 0.01\) but nDCG@10 better \(p 0.001\) than '
                                         r'BM25; Sparse: FD@10 better \(p 0.03\) but RR@10 worse \(p 0.01\) than BM25'):
        got = disagreements(frame)
    assert list(got.columns) == list(COLUMNS)
    assert got[['system', 'fd_measure', 'classical_measure', 'fd_direction', 'classical_direction']].values.tolist() == [
        ['Dense', 'FD@10', 'nDCG@10', 'worse', 'better'], ['Sparse', 'FD@10', 'RR@10', 'better', 'worse']]
    assert got.loc[0, ['fd_system', 'fd_baseline', 'fd_p', 'classical_system', 'classical_p']].tolist() == [
        0.12, 0.08, 0.01, 0.42, 0.001]
    with warnings.catch_warnings():
        warnings.simplefilter('error')
        assert disagreements(frame.iloc[2:5]).empty  # none: no warning


def test_pt_experiment_tables_are_read_with_and_without_a_correction():
    table = pd.DataFrame({'name': ['BM25', 'Dense', 'Sparse'], 'FD@10': [0.08, 0.12, 0.079],
                          'nDCG@10': [0.32, 0.42, 0.30], 'FD@10 p-value': [np.nan, 0.009, 0.5],
                          'nDCG@10 p-value': [np.nan, 0.0014, 0.01]})
    got = disagreements(table, warn=False)
    assert got[['system', 'baseline', 'fd_direction', 'classical_direction', 'fd_p']].values.tolist() == [
        ['Dense', 'BM25', 'worse', 'better', 0.009]]
    corrected = table.assign(**{'FD@10 reject': [False, False, False], 'FD@10 p-value corrected': [np.nan, 0.06, 1.0],
                                'nDCG@10 reject': [False, True, True], 'nDCG@10 p-value corrected': [np.nan, .003, .02]})
    assert disagreements(corrected, warn=False).empty  # FD's corrected test does not reject
    with pytest.raises(ValueError, match='no p-value columns: run pt.Experiment with baseline='):
        disagreements(table[['name', 'FD@10', 'nDCG@10']])


def test_the_flip_world_in_pt_experiment(flip):
    import pyterrier as pt
    store, qrels, runs = flip
    topics = pd.DataFrame({'qid': sorted(qrels.query_id.unique()), 'query': 'x'})
    systems = [pt.Transformer.from_df(r.rename(columns={'query_id': 'qid', 'doc_id': 'docno'})) for r in runs.values()]
    measures = [FD(encoder=store) @ 10, nDCG @ 10]
    with warnings.catch_warnings():
        warnings.simplefilter('ignore', RuntimeWarning)  # scipy's t-test on nDCG's constant baseline rows
        res = pt.Experiment(systems, topics, qrels.rename(columns={'query_id': 'qid', 'doc_id': 'docno',
                                                                  'relevance': 'label'}),
                            measures, baseline=0, names=list(runs))
    with pytest.warns(UserWarning, match=r"narrow: FD\(encoder=VectorStore\('.*'\)\)@10 worse .* but nDCG@10 better"):
        got = disagreements(res)
    assert len(got) == 1 and got.loc[0, 'fd_direction'] == 'worse'


def test_the_paper_table_marks_the_contradicting_cells(flip):
    store, qrels, runs = flip
    measures = [FD(encoder=store) @ 10, 'nDCG@10']
    table = pf.paper_table(runs, qrels, measures, baseline='broad', n_samples=200, verbose=False)
    fd = str(FD(encoder=store) @ 10)
    assert table.contradicts('narrow', fd) and not table.contradicts('broad', fd)
    assert not table.contradicts('narrow', 'nDCG@10')
    md = table.to_markdown()
    narrow_row = next(line for line in md.splitlines() if line.startswith('| narrow'))
    assert narrow_row.count(MARK) == 1 and '▼ ⇄' in narrow_row
    assert f'{MARK}: FD and nDCG@10 disagree significantly, in opposite directions.' in table.caption()
    assert 'narrow: ' in table.caption(long=True) and 'worse' in table.caption(long=True)
    assert '$^{\\rightleftarrows}$' in table.to_latex() and 'amssymb' in table.to_latex()
    # the long caption also says which term moved FD and that the retrieved set is narrower
    assert 'retrieved set narrower' in table.caption(long=True)


def test_report_writes_disagreements_csv_and_lists_them(flip, tmp_path):
    store, qrels, runs = flip
    with pytest.warns(UserWarning, match='contradict each other'):
        path = pf.write_report(runs, qrels, [FD(encoder=store) @ 10, 'nDCG@10', 'RR@10'], tmp_path / 'report',
                               baseline='broad', n_samples=200, verbose=False)
    found = pd.read_csv(tmp_path / 'report' / 'disagreements.csv')
    assert found[['system', 'baseline', 'classical_measure', 'fd_direction', 'classical_direction']].values.tolist() == [
        ['narrow', 'broad', 'nDCG@10', 'worse', 'better'], ['narrow', 'broad', 'RR@10', 'worse', 'better']]
    text = path.read_text()
    assert '## Where FD and the classical measures disagree' in text and 'narrow: FD(encoder=' in text
    assert '## What moves FD' in text
    anatomy = pd.read_csv(tmp_path / 'report' / 'anatomy.csv').set_index('name')
    assert anatomy.loc['narrow', 'moved_by'] == 'covariance term' and anatomy.loc['narrow', 'spread'] < 0.5
    assert MARK in (tmp_path / 'report' / 'table.md').read_text()


def test_report_without_contradictions_writes_an_empty_file(flip, tmp_path):
    store, qrels, runs = flip
    same = {'broad': runs['broad'], 'again': runs['broad'].assign(score=lambda f: f.score + 1.0)}
    pf.write_report(same, qrels, [FD(encoder=store) @ 10, 'nDCG@10'], tmp_path / 'report', baseline='broad',
                    n_samples=200, verbose=False)
    found = pd.read_csv(tmp_path / 'report' / 'disagreements.csv')
    assert found.empty and list(found.columns) == list(COLUMNS)


def test_a_contradiction_on_a_cell_that_lost_vectors_says_so(flip, tmp_path):
    # 'narrow' loses 3 of its 10 retrieved documents per query for want of a vector (30 % > 10 %: ‡): the long caption
    # says the contradiction may be the missing vectors'
    store, qrels, runs = flip
    keep = [i for i, d in enumerate(store.docnos) if not (d.startswith('n') and d.split('_')[1] in ('0', '1', '2'))]
    np.save(tmp_path / 'partial.npy', store.vectors[keep])
    (tmp_path / 'partial.ids.txt').write_text('\n'.join(store.docnos[keep]) + '\n')
    partial = pf.VectorStore(str(tmp_path / 'partial'))
    table = pf.paper_table(runs, qrels, [FD(encoder=partial) @ 10, 'nDCG@10'], baseline='broad', n_samples=200,
                           verbose=False)
    fd = str(FD(encoder=partial) @ 10)  # the column label (missing= is not part of it)
    assert table.contradicts('narrow', fd) and table.left_out('narrow', fd) == (60, True)
    # the ‡ cell carries no mark: the long caption names what was withheld and why
    assert f"Marks withheld on ‡ cells (their value may be the missing vectors', not the system's): narrow {fd}: ▼, ⇄" \
        in table.caption(long=True)
    row = next(line for line in table.to_markdown().splitlines() if line.startswith('| narrow'))
    fd_cell = row.split(' | ')[1]  # the FD column's cell (nDCG@10's keeps its ▲)
    assert '⇄' not in fd_cell and '▼' not in fd_cell and fd_cell.endswith('(−60‡)')
    assert '⇄' not in table.caption()  # no cell shows it: the short caption does not explain it


def test_the_long_caption_sums_up_the_other_marked_cells_pooled_and_within_queries(flip):
    # a third system, 'neighbours', returns the unjudged documents close to *another* query's centre: nDCG@10 0 like
    # the baseline (no mark, no contradiction) but FD@10 significantly worse; its documents spread far less than the
    # relevant ones, pooled (0.22×) and within each query
    store, qrels, runs = flip
    n = 20
    neighbours = pd.DataFrame([(f'q{q}', f'n{(q + 1) % n}_{j}', 10.0 - j) for q in range(n) for j in range(10)],
                              columns=['query_id', 'doc_id', 'score'])
    table = pf.paper_table({**runs, 'neighbours': neighbours}, qrels, [FD(encoder=store) @ 10, 'nDCG@10'],
                           baseline='broad', n_samples=200, verbose=False)
    fd = str(FD(encoder=store) @ 10)
    row = table.anatomy[(table.anatomy['name'] == 'neighbours')].iloc[0]
    assert table._marks(table.cell('neighbours', fd))[0] == '▼' and not table.contradicts('neighbours', fd)
    assert row.spread < 0.95 and row.spread_within < 0.95
    assert ('Of the other 1 FD cells marked against broad, the covariance term moved FD more than the mean term in 1 '
            'and the mean term in 0; 1 of their retrieved sets are narrower than the relevant set (spread < 0.95), '
            '1 within queries') in table.caption(long=True)
