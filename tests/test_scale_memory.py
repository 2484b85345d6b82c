"""The memory-lean paths of issue 26's 100,000-query target (docs/scale.md, "Where the memory went"): vectors kept
in their float32 source precision and promoted to float64 a block at a time (``QueryStats``), FD's point value
reduced in chunks of rows (``reduce_set``), the VectorStore look-up gathering into its output, the draws made a block
of samples at a time. Each is compared with a plain float64 numpy computation written here (or, for the draws,
the one-call formula it replaces) — to 1e-12 relative — with the chunk sizes forced small so that the chunked code
runs on a small case.
"""
import re

import numpy as np
import pandas as pd
import pytest

import pyterrier_frechet as pf
from conftest import needs_shared, reference_fd_eigh
from pyterrier_frechet.analyses import bootstrap as bs
from pyterrier_frechet.core import frechet
from pyterrier_frechet.core.weighted import QueryStats


def _rel(a, b):
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    return float(np.max(np.abs(a - b) / np.maximum(np.abs(b), 1e-300)))


# --- FD's point value: a large float32 set reduced in chunks -----------------------------------------------------

def test_streamed_reduce_set_equals_float64_numpy(monkeypatch):
    rng = np.random.default_rng(1)
    d = 6
    x = (rng.normal(size=(500, d)) @ rng.normal(size=(d, d))).astype(np.float32)
    y = (rng.normal(size=(700, d)) + 0.3).astype(np.float32)
    monkeypatch.setattr(frechet, 'STREAM_ELEMENTS', 64)  # chunks of 10 rows
    calls = []
    original = frechet._reduce_streamed
    monkeypatch.setattr(frechet, '_reduce_streamed', lambda a: calls.append(a.shape) or original(a))
    value = frechet.frechet_distance_reduced(frechet.reduce_set(x), frechet.reduce_set(y))
    assert calls == [x.shape, y.shape]  # both sets took the chunked route
    assert _rel(value, reference_fd_eigh(x.astype(np.float64), y.astype(np.float64))) < 1e-12
    # the reduced set's mean is the float64 mean of the float32 vectors
    assert _rel(frechet.reduce_set(x).mean, x.astype(np.float64).mean(axis=0)) < 1e-13


def test_streamed_reduce_set_ill_conditioned_takes_the_stacked_qr(monkeypatch):
    """A set whose Gram matrix is singular (two equal coordinates) is refused by the Cholesky route; the chunked
    route then stacks R ← qr([R; chunk]), and FD equals the whole-set Householder route on float64 vectors."""
    rng = np.random.default_rng(2)
    x = rng.normal(size=(400, 5))
    x[:, 4] = x[:, 3]
    y = rng.normal(size=(300, 5)) * 0.7
    expected = frechet.frechet_distance_reduced(frechet.reduce_set(x), frechet.reduce_set(y))  # not streamed
    assert frechet.reduce_set(x).ill_conditioned
    monkeypatch.setattr(frechet, 'STREAM_ELEMENTS', 35)  # chunks of 7 rows; float32 input is streamed
    rx, ry = frechet.reduce_set(x.astype(np.float32)), frechet.reduce_set(y.astype(np.float32))
    assert rx.ill_conditioned and rx.factor.shape == (5, 5)
    x32, y32 = x.astype(np.float32).astype(np.float64), y.astype(np.float32).astype(np.float64)
    exact32 = frechet.frechet_distance_reduced(frechet.reduce_set(x32), frechet.reduce_set(y32))
    assert _rel(frechet.frechet_distance_reduced(rx, ry), exact32) < 1e-12
    assert abs(exact32 - expected) < 1e-5 * abs(expected)  # float32 rounding of the inputs, nothing more


def test_streamed_reduce_set_refuses_nan_like_check_vectors(monkeypatch):
    monkeypatch.setattr(frechet, 'STREAM_ELEMENTS', 12)
    x = np.ones((50, 3), dtype=np.float32)
    x[17, 1] = np.nan
    with pytest.raises(ValueError, match=r'1 vector\(s\) contain NaN or inf \(first rows: \[17\]\)'):
        frechet.reduce_set(x)


# --- QueryStats: float32 vectors kept, statistics in float64 -------------------------------------------------------

def _reference_stats(q, x, n_queries, shift):
    """Per-query count, sum and full cross-product of the shifted float64 vectors, by a plain loop."""
    x = np.asarray(x, dtype=np.float64) - shift
    n = np.array([np.sum(q == i) for i in range(n_queries)], dtype=np.float64)
    s = np.array([x[q == i].sum(axis=0) for i in range(n_queries)])
    p = np.array([x[q == i].T @ x[q == i] for i in range(n_queries)])
    return n, s, p


@pytest.mark.parametrize('held', [True, False])
@pytest.mark.parametrize('presorted', [True, False])
def test_query_stats_of_float32_vectors_equal_float64_numpy(monkeypatch, held, presorted):
    rng = np.random.default_rng(3)
    n_queries, d = 40, 5
    q = np.repeat(np.arange(n_queries), rng.integers(0, 6, n_queries))
    if not presorted:
        q = rng.permutation(q)
    x = rng.normal(size=(len(q), d)).astype(np.float32)
    shift = x.astype(np.float64).mean(axis=0)
    monkeypatch.setattr(QueryStats, '_CHUNK_ROWS', 7)  # the per-query sums in chunks of a few queries
    stats = QueryStats(q, x, n_queries, shift, max_bytes=None if held else 0)
    assert stats.streamed is not held
    if presorted:
        assert np.shares_memory(stats._x, x)  # no copy, and no float64 copy
    assert stats._x.dtype == np.float32
    n, s, p = _reference_stats(q, x, n_queries, shift)
    assert np.array_equal(stats.n, n)
    assert _rel(stats.s[n > 0], s[n > 0]) < 1e-12 and not stats.s[n == 0].any()
    upper = np.triu_indices(d)
    w = rng.integers(0, 3, size=(4, n_queries)).astype(np.float64)
    expected = np.einsum('bq,qij->bij', w, p)[:, upper[0], upper[1]]
    assert _rel(stats.weighted_cross(w), expected) < 1e-12
    assert stats.rows().x.dtype == np.float64  # the torch backend's view: shifted float64
    assert np.array_equal(stats.rows().x, x[np.argsort(q, kind='stable')].astype(np.float64) - shift)


# --- the bootstrap end to end, chunked everywhere, against regathered float64 vectors ------------------------------

def _store(tmp_path, docnos, vecs):
    prefix = tmp_path / 'vecs'
    np.save(f'{prefix}.npy', vecs)
    (tmp_path / 'vecs.ids.txt').write_text('\n'.join(docnos) + '\n')
    return pf.VectorStore(str(prefix))


def test_bootstrap_with_every_chunked_path_equals_regathered_float64_numpy(tmp_path, monkeypatch):
    """Samples, leave-one-query-out values and the point value of FD@5 with float32 vectors, the cross-products
    streamed, the per-query sums, the point reduction and the look-up all in small chunks — against FD from first
    principles (np.cov, eigh) on float64 copies of the vectors each sample or leave-out gathers again."""
    rng = np.random.default_rng(4)
    n_queries, d, depth = 30, 4, 5
    qids = [f'q{i:02d}' for i in range(n_queries)]
    rows = []
    for i, q in enumerate(qids):
        for j in range(int(rng.integers(1, 4))):
            rows.append((q, f'r{i}_{j}', 1))
    qrels = pd.DataFrame(rows, columns=['qid', 'docno', 'label'])
    run_rows = []
    for i, q in enumerate(qids):
        docs = [f'd{i}_{k}' for k in range(depth)]
        docs[int(rng.integers(0, depth))] = f'r{i}_0'  # one relevant document retrieved per query
        run_rows += [(q, doc, float(depth - k)) for k, doc in enumerate(docs)]
    run = pd.DataFrame(run_rows, columns=['qid', 'docno', 'score'])
    docnos = sorted(set(qrels['docno']) | set(run['docno']))
    vecs = (rng.normal(size=(len(docnos), d)) * [1.0, 0.5, 2.0, 1.5] + 0.2).astype(np.float32)
    store = _store(tmp_path, docnos, vecs)
    lookup = {doc: vecs[i].astype(np.float64) for i, doc in enumerate(docnos)}

    monkeypatch.setattr(QueryStats, 'MATERIALIZE_BYTES', 0)  # stream the cross-products
    monkeypatch.setattr(QueryStats, '_CHUNK_ROWS', 8)
    monkeypatch.setattr(frechet, 'STREAM_ELEMENTS', 16)  # the point value of a 150-vector set in chunks
    measure = pf.FD(encoder=store) @ depth
    res = bs.bootstrap({'sys': run}, qrels, [measure], n_samples=12, seed=5, verbose=False, jackknife='exact')
    label = list(res.samples['sys'])[0]

    rel_of = {q: [lookup[d] for d in g['docno']] for q, g in qrels.groupby('qid')}
    ret_of = {q: [lookup[d] for d in g.sort_values('score', ascending=False)['docno'][:depth]] for q, g in run.groupby('qid')}

    def fd_of(weights):  # weights: how often each query is taken
        x = [v for q, w in zip(qids, weights) for _ in range(int(w)) for v in rel_of[q]]
        y = [v for q, w in zip(qids, weights) for _ in range(int(w)) for v in ret_of[q]]
        return reference_fd_eigh(np.array(x), np.array(y))

    counts = bs.draw_counts(n_queries, 12, 5)
    assert _rel(res.samples['sys'][label], [fd_of(c) for c in counts]) < 1e-12
    leave_out = [fd_of(np.arange(n_queries) != i) for i in range(n_queries)]
    assert _rel(res.jackknife['sys'][label], leave_out) < 1e-12
    assert _rel(res.point[label].iloc[0], fd_of(np.ones(n_queries))) < 1e-12


# --- the look-up and the draws ---------------------------------------------------------------------------------------

def test_vector_store_lookup_gathers_in_request_order(tmp_path):
    rng = np.random.default_rng(6)
    docnos = [f'doc{i}' for i in range(50)]
    vecs = rng.normal(size=(50, 3)).astype(np.float32)
    store = _store(tmp_path, docnos, vecs)
    ask = ['doc7', 'nope', 'doc3', 'doc7', 'doc49', 'doc0', 'gone']
    out, found = store.lookup(ask)
    assert found.tolist() == [True, False, True, True, True, True, False]
    assert out.dtype == np.float32
    for row, doc in zip(out, ask):
        if doc in docnos:
            assert np.array_equal(row, vecs[docnos.index(doc)])
        else:
            assert np.isnan(row).all()


def test_draw_counts_in_blocks_equal_one_call_of_the_generator():
    n_queries, n_samples, seed = (1 << 20) + 3, 7, 11  # blocks of 3 samples: 3 blocks
    draws = np.random.default_rng(seed).integers(0, n_queries, size=(n_samples, n_queries))
    expected = np.zeros((n_samples, n_queries), dtype=np.int64)
    np.add.at(expected, (np.arange(n_samples)[:, None], draws), 1)
    got = bs.draw_counts(n_queries, n_samples, seed, dtype=np.float64)
    assert got.dtype == np.float64 and np.array_equal(got, expected)


# --- examples/paper_scale.py at a small scale -----------------------------------------------------------------------

def _paper_scale():
    import importlib.util
    from pathlib import Path
    path = Path(__file__).resolve().parents[1] / 'examples' / 'paper_scale.py'
    spec = importlib.util.spec_from_file_location('paper_scale', path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _check_example(summary, qrels, prefix_dir, dim, seed):
    """FD@10 of each system from the written vectors by first principles, RR@10 by ir_measures itself."""
    import ir_measures
    example = _paper_scale()
    runs, _ = example.synthetic_runs_and_vectors(qrels, prefix_dir / 'again', dim=dim, seed=seed)
    vecs = np.load(prefix_dir / 'vectors.npy').astype(np.float64)
    row_of = {doc: i for i, doc in enumerate((prefix_dir / 'vectors.ids.txt').read_text().split())}
    rel = vecs[[row_of[d] for d in qrels.loc[qrels['label'] > 0, 'docno']]]
    fd = {}
    for name, run in runs.items():
        top = run.sort_values(['qid', 'score'], ascending=[True, False]).groupby('qid').head(10)
        fd[name] = reference_fd_eigh(rel, vecs[[row_of[d] for d in top['docno']]])
        got = summary[(summary['name'] == name) & (summary['measure'] == 'FD@10')].iloc[0]
        assert _rel(got['value'], fd[name]) < 1e-10
        assert got['low'] < got['value'] < got['high']
        rr = ir_measures.calc_aggregate([ir_measures.RR @ 10], qrels.rename(columns={'qid': 'query_id', 'docno': 'doc_id', 'label': 'relevance'}),
                                        run.rename(columns={'qid': 'query_id', 'docno': 'doc_id'}))[ir_measures.RR @ 10]
        assert _rel(summary[(summary['name'] == name) & (summary['measure'] == 'RR@10')]['value'].iloc[0], rr) < 1e-12
    assert fd['strong'] < fd['weak']  # by construction: the strong system's passages lie near each query's topic


def test_paper_scale_example_runs_small(tmp_path, capsys):
    rng = np.random.default_rng(8)
    lines = [f'{q} 0 p{q}_{k} 1' for q in range(1000, 1060) for k in range(1 + int(rng.random() < 0.2))]
    (tmp_path / 'qrels.txt').write_text('\n'.join(lines) + '\n')
    out = tmp_path / 'store'
    summary = _paper_scale().main(['--qrels', str(tmp_path / 'qrels.txt'), '--samples', '40', '--dim', '8',
                                   '--out', str(out), '--experiment'])
    printed = capsys.readouterr().out
    assert '60 queries' in printed and 'peak RSS' in printed and 'pf.bootstrap (40 samples' in printed
    # pt.Experiment with the exact and the influence rows: a finite FD p-value each, the store as default encoder
    for label in ('FD@10', "FD(rows='influence')@10"):
        line = next(x for x in printed.splitlines() if x.startswith(f'pt.Experiment, {label} + RR@10'))
        assert 0 <= float(re.search(r"@10 p-value['\"]: ([-+.e0-9]+)", line).group(1)) <= 1
    assert set(summary['name']) == {'strong', 'weak'} and len(summary) == 6
    # a stable label: the store is the call's encoder, so no path (the default --out is a new temporary folder)
    assert sorted(summary['measure'].unique()) == ['FD@10', 'RR@10', 'nDCG@10'] and 'VectorStore' not in printed
    assert (summary['n_valid'] == 40).all()
    _check_example(summary, pf.runs.read_qrels(tmp_path / 'qrels.txt'), out, 8, 0)


def test_paper_scale_quick_look_takes_fewer_samples(tmp_path, capsys):
    """--queries N is a quick look: 200 samples unless --samples (each sample is one FD per run, whatever N), the
    jackknife as pf.bootstrap chooses it unless --jackknife."""
    lines = [f'{q} 0 p{q}_0 1' for q in range(1000, 1060)]
    (tmp_path / 'qrels.txt').write_text('\n'.join(lines) + '\n')
    example = _paper_scale()
    summary = example.main(['--qrels', str(tmp_path / 'qrels.txt'), '--queries', '30', '--dim', '8'])
    printed = capsys.readouterr().out
    assert '30 queries' in printed and 'pf.bootstrap (200 samples' in printed and 'VectorStore' not in printed
    assert (summary['n_valid'] == 200).all() and (summary['jackknife'] == 'leave-one-out (30 queries)').all()
    fd = summary[summary['measure'] == 'FD@10']
    grouped = example.main(['--qrels', str(tmp_path / 'qrels.txt'), '--queries', '30', '--dim', '8', '--samples', '20',
                            '--jackknife', '10'])
    assert (grouped['n_valid'] == 20).all()
    assert (grouped.loc[grouped['measure'] == 'FD@10', 'interval'] == 'jackknife_log (delete-a-group jackknife, G=10)').all()
    assert grouped.loc[grouped['measure'] == 'FD@10', 'value'].tolist() == fd['value'].tolist()  # the same point values


@pytest.mark.shared
@needs_shared()
def test_paper_scale_example_on_msmarco_dev_qrels(tmp_path):
    example = _paper_scale()
    out = tmp_path / 'store'
    summary = example.main(['--queries', '150', '--samples', '40', '--dim', '16', '--out', str(out)])
    qrels = pf.runs.read_qrels(example.DEV_QRELS)
    qrels = qrels[qrels['qid'].isin(sorted(qrels['qid'].unique())[:150])]
    _check_example(summary, qrels, out, 16, 0)
