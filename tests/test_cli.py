"""python -m pyterrier_frechet eval: outputs and every bad input, on toy files (and DL19 in ../shared)."""
import errno
import json
import os
from pathlib import Path

import ir_measures
import numpy as np
import pandas as pd
import pyterrier as pt
import pytest

import pyterrier_frechet as pf
from pyterrier_frechet.cli import main
from conftest import SHARED, DictEncoder, needs_shared, reference_fd, write_trec_files


@pytest.fixture
def files(toy, tmp_path):
    vectors, qrels, run = toy
    runs = {'toy.fwd': run, 'toy.rev': run.assign(score=-run.score),
            'toy.mid': run.assign(score=np.where(run.docno.str[1:].astype(int) % 2 == 0, run.score, -run.score))}
    return write_trec_files(tmp_path, qrels, runs, vectors, vector_dtype=np.float32)


def _eval(files, *extra, metrics=('FD@3', 'nDCG@3')):
    return main(['eval', '--qrels', str(files / 'qrels.txt'), '--runs', str(files / 'runs'),
                 '--vectors', str(files / 'vecs'), '--metrics', *metrics, '--quiet', *extra])


def test_csv_output_equals_ir_measures(files, toy, capsys):
    vectors, qrels, run = toy
    assert _eval(files, '--format', 'csv', metrics=('FD@3', 'FD(urr=True)@3', 'nDCG@3', 'RR(rel=2)@3')) == 0
    captured = capsys.readouterr()
    table = pd.read_csv(pd.io.common.StringIO(captured.out)).set_index('name')
    assert list(table.index) == ['fwd', 'mid', 'rev']  # file names without the shared 'run.toy.' prefix
    assert list(table.columns) == ['FD@3', 'FD(urr=True)@3', 'nDCG@3', 'RR(rel=2)@3', 'no_vector_relevant', 'no_vector_retrieved']
    enc = DictEncoder(vectors)
    measures = [pf.FD(encoder=enc) @ 3, pf.FD(encoder=enc, urr=True) @ 3, ir_measures.nDCG @ 3, ir_measures.RR(rel=2) @ 3]
    for name, scores in (('fwd', run), ('rev', run.assign(score=-run.score))):
        expected = ir_measures.calc_aggregate(measures, pt.model.to_ir_measures(qrels), pt.model.to_ir_measures(scores))
        for m, col in zip(measures, table.columns):
            assert table.loc[name, col] == pytest.approx(expected[m], rel=1e-6), (name, col)
    assert (table.no_vector_relevant == 0).all() and (table.no_vector_retrieved == 0).all()
    # the note is oriented like pf.correlations: FD negated, so positive means agreement with nDCG
    import scipy.stats
    tau = scipy.stats.kendalltau(-table['FD@3'], table['nDCG@3']).statistic
    assert f'Kendall tau(FD@3, nDCG@3) over 3 runs = {tau:.3f}' in captured.err
    assert 'FD@3 negated (lower is better), so positive tau means agreement' in captured.err


def test_markdown_latex_and_output_file(files, capsys):
    assert _eval(files, metrics=('FD@3', 'nDCG@3')) == 0
    out = capsys.readouterr().out
    assert out.startswith('| name ') and '| fwd ' in out and 'Kendall tau(FD@3, nDCG@3)' in out
    assert _eval(files, '--format', 'latex', '--output', str(files / 't.tex')) == 0
    tex = (files / 't.tex').read_text()
    assert '\\begin{tabular}' in tex and 'fwd' in tex
    assert 'wrote' in capsys.readouterr().out


def test_rel_and_per_query_apply_to_measures(files, toy, capsys):
    vectors, qrels, run = toy
    assert _eval(files, '--rel', '2', '--format', 'csv', metrics=('FD@3', 'RR@3', 'nDCG@3')) == 0
    table = pd.read_csv(pd.io.common.StringIO(capsys.readouterr().out)).set_index('name')
    assert list(table.columns[:3]) == ['FD(rel=2)@3', 'RR(rel=2)@3', 'nDCG@3']
    vec = lambda *ds: np.stack([vectors[d] for d in ds])
    assert table.loc['fwd', 'FD(rel=2)@3'] == pytest.approx(reference_fd(vec('d0', 'd3', 'd11'), vec('d0', 'd1', 'd2', 'd10', 'd11', 'd12')), rel=1e-6)
    # --per-query 1: every measure sees qrels with at most one relevant document per query
    assert _eval(files, '--per-query', '1', '--seed', '3', '--format', 'csv', metrics=('FD@3', 'nDCG@3')) == 0
    table = pd.read_csv(pd.io.common.StringIO(capsys.readouterr().out)).set_index('name')
    small = pf.balance_qrels(qrels, 1, seed=3)
    expected = ir_measures.calc_aggregate([ir_measures.nDCG @ 3], pt.model.to_ir_measures(small), pt.model.to_ir_measures(run))
    assert table.loc['fwd', 'nDCG@3'] == pytest.approx(expected[ir_measures.nDCG @ 3], rel=1e-6)


def test_missing_vectors_error_then_drop_with_counts(files, toy, capsys):
    # d1 is relevant (q1, label 1) and in fwd's top 3; d2 is judged non-relevant and in fwd's top 3
    vectors, qrels, run = toy
    ids = (files / 'vecs.ids.txt').read_text().split()
    keep = [i for i, d in enumerate(ids) if d not in ('d1', 'd2')]
    np.save(files / 'vecs.npy', np.load(files / 'vecs.npy')[keep])
    (files / 'vecs.ids.txt').write_text('\n'.join(ids[i] for i in keep) + '\n')
    assert _eval(files) == 2
    err = capsys.readouterr().err
    assert "error: run 'fwd'" in err and "relevant document(s) have no vector, e.g. ['d1']" in err
    assert _eval(files, '--missing', 'drop', '--format', 'csv') == 0
    captured = capsys.readouterr()
    table = pd.read_csv(pd.io.common.StringIO(captured.out)).set_index('name')
    # both sides counted: the relevant d1 for every run, the retrieved d1 and d2 for fwd only (rev's top 3 are d9 d8 d7, ...)
    assert table.loc['fwd', 'no_vector_relevant'] == 1 and table.loc['fwd', 'no_vector_retrieved'] == 2
    assert table.loc['rev', 'no_vector_relevant'] == 1 and table.loc['rev', 'no_vector_retrieved'] == 0
    assert list(table.columns[:1]) == ['FD@3']  # the policy is not part of the column name
    assert 'documents without a vector were left out: 1 relevant' in captured.err
    vec = lambda *ds: np.stack([vectors[d] for d in ds])
    expected = reference_fd(vec('d0', 'd3', 'd10', 'd11', 'd12'), vec('d0', 'd10', 'd11', 'd12'))
    assert table.loc['fwd', 'FD@3'] == pytest.approx(expected, rel=1e-5)  # float32 vectors on file


@pytest.mark.parametrize('setup,args,message', [
    (lambda f: (f / 'runs' / 'run.toy.bad.txt').write_text('q1 Q0 d1 1 oops tag\n'), (), 'run.toy.bad.txt:1: rank (4th column) must be an integer and score (5th) a number'),
    (lambda f: (f / 'runs' / 'run.toy.bad.txt').write_text('q1 Q0 d1 1\n'), (), 'run.toy.bad.txt:1: expected 6 columns'),
    (lambda f: None, ('--metrics', 'NotAMeasure@10'), "unknown metric 'NotAMeasure@10'"),
    (lambda f: None, ('--rel', '5'), 'no document is judged relevant at the threshold (label >= 5)'),
    (lambda f: (f / 'runs' / 'run.toy.other.txt').write_text('zz Q0 d1 1 1.0 tag\n'), (), "run 'other' shares no query with the qrels"),
    (lambda f: (f / 'qrels.txt').write_text(''), (), 'the qrels file is empty'),
    (lambda f: None, ('--vectors', 'nope'), 'does not exist'),
    (lambda f: None, ('--runs', 'nowhere'), "'nowhere' does not exist"),
])
def test_bad_input_exits_non_zero_and_writes_nothing(files, capsys, setup, args, message):
    setup(files)
    (files / 'out.md').write_text('previous content')
    options = {'--qrels': str(files / 'qrels.txt'), '--runs': str(files / 'runs'), '--vectors': str(files / 'vecs'),
               '--metrics': 'FD@3', '--output': str(files / 'out.md')}
    options.update(zip(args[::2], args[1::2]))
    argv = ['eval', '--quiet'] + [x for kv in options.items() for x in kv]
    assert main(argv) == 2
    assert message in capsys.readouterr().err
    assert (files / 'out.md').read_text() == 'previous content'  # never a half-written output
    assert [p.name for p in files.iterdir() if p.name.startswith(('.out.md', '.rep.out.md'))] == []


def test_fd_without_vector_source(files, capsys):
    assert main(['eval', '--qrels', str(files / 'qrels.txt'), '--runs', str(files / 'runs'), '--metrics', 'FD@3']) == 2
    assert '--vectors PREFIX or --text JSONL' in capsys.readouterr().err
    assert main(['eval', '--qrels', str(files / 'qrels.txt'), '--runs', str(files / 'runs'), '--metrics', 'nDCG@3', '--quiet']) == 0


def test_text_mode_embeds_through_the_cached_embedder(files, toy, tmp_path, capsys):
    from test_embedder import WORDS, _tiny_bert
    model = _tiny_bert(tmp_path / 'tiny-bert')
    texts = {f'd{i}': ' '.join(WORDS[(i * 5 + j) % len(WORDS)] for j in range(1 + i % 5)) for i in range(60)}
    with open(files / 'corpus.jsonl', 'w') as f:
        for d, t in texts.items():
            f.write(json.dumps({'docno': d, 'text': t}) + '\n')
    argv = ['eval', '--qrels', str(files / 'qrels.txt'), '--runs', str(files / 'runs'), '--text', str(files / 'corpus.jsonl'),
            '--model', model, '--metrics', 'FD@3', '--format', 'csv', '--quiet']
    assert main(argv) == 0
    table = pd.read_csv(pd.io.common.StringIO(capsys.readouterr().out)).set_index('name')
    emb = pf.Embedder(model, verbose=False)  # same cache ($PYTERRIER_FRECHET_CACHE): nothing to encode
    vec = lambda *ds: emb(pd.DataFrame({'docno': list(ds)})).pipe(lambda o: np.stack(o.doc_vec))
    expected = reference_fd(vec('d0', 'd1', 'd3', 'd10', 'd11', 'd12'), vec('d0', 'd1', 'd2', 'd10', 'd11', 'd12'))
    assert emb.n_encoded == 0
    assert table.loc['fwd', 'FD@3'] == pytest.approx(expected, rel=1e-6)


@pytest.mark.slow  # needs openvino (the [slow] extra: the fast set runs without it)
def test_text_mode_with_the_openvino_backend(files, tmp_path, capsys):
    # --backend openvino gives torch's FD (fp32: the same vectors up to float32 round-off) from its own cache;
    # a precision the torch backend does not offer is a usage error before any work
    from test_embedder import WORDS, _tiny_bert
    model = _tiny_bert(tmp_path / 'tiny-bert')
    with open(files / 'corpus.jsonl', 'w') as f:
        for i in range(60):
            f.write(json.dumps({'docno': f'd{i}', 'text': ' '.join(WORDS[(i * 5 + j) % len(WORDS)] for j in range(1 + i % 5))}) + '\n')
    argv = ['eval', '--qrels', str(files / 'qrels.txt'), '--runs', str(files / 'runs'), '--text', str(files / 'corpus.jsonl'),
            '--model', model, '--metrics', 'FD@3', '--format', 'csv', '--quiet']
    tables = []
    for backend in ('torch', 'openvino'):
        assert main(argv + ['--backend', backend]) == 0
        tables.append(pd.read_csv(pd.io.common.StringIO(capsys.readouterr().out)).set_index('name')['FD@3'])
    pd.testing.assert_series_equal(tables[0], tables[1], rtol=1e-4)
    assert main(argv + ['--precision', 'bf16']) == 2
    assert "precision='bf16' is offered by backend='openvino'" in capsys.readouterr().err


@needs_shared()
@pytest.mark.shared
def test_dl19_runs_with_precomputed_vectors(capsys):
    data = SHARED / 'data' / 'msmarco-passage'
    argv = ['eval', '--qrels', str(data / 'qrels.dl19-passage.txt'), '--runs', str(data / 'runs'),
            '--vectors', str(SHARED / 'embeddings' / 'msmarco-passage.dl19-dl20.minilm'),
            '--metrics', 'FD@1', 'FD@10', 'FD(urr=True)@10', 'nDCG@10', '--missing', 'drop', '--format', 'csv', '--quiet']
    assert main(argv) == 0
    captured = capsys.readouterr()
    table = pd.read_csv(pd.io.common.StringIO(captured.out)).set_index('name')
    assert len(table) == 19
    # nDCG@10 as listed in ../shared/data/msmarco-passage/README.md
    for name, ndcg in {'bm25.top100': 0.5058, 'tasb.top100': 0.7210, 'splade-pp-ed.top100': 0.7308, 'colbertv2.top500': 0.7320}.items():
        assert table.loc[name, 'nDCG@10'] == pytest.approx(ndcg, abs=5e-5)
    # rank1-7b: 29 of its 430 top-10 passages have no vector (../shared/embeddings/README.md); URR adds deeper ones
    assert table.loc['bm25.rank1-7b.top100', 'no_vector_retrieved'] >= 29
    assert table.loc['bm25.top100', 'no_vector_retrieved'] == 0
    assert (table['no_vector_relevant'] == table['no_vector_relevant'].iloc[0]).all()  # one qrels: the same for every run
    assert 'Kendall tau(FD@10, nDCG@10) over 19 runs' in captured.err


def test_run_pipelines_score_a_directory_in_one_experiment(files, toy):
    vectors, qrels, run = toy
    systems = pf.runs.run_pipelines([files / 'runs'])
    assert list(systems) == ['fwd', 'mid', 'rev']
    topics = pd.DataFrame({'qid': ['q1', 'q2', 'q3'], 'query': ''})
    with pf.default_encoder(DictEncoder(vectors)):
        table = pt.Experiment(list(systems.values()), topics, qrels, eval_metrics=[pf.FD @ 3, ir_measures.nDCG @ 3],
                              names=list(systems)).set_index('name')
    direct = ir_measures.calc_aggregate([pf.FD(encoder=DictEncoder(vectors)) @ 3, ir_measures.nDCG @ 3],
                                        pt.model.to_ir_measures(qrels), pt.model.to_ir_measures(run))
    assert table.loc['fwd', 'FD@3'] == pytest.approx(direct[pf.FD(encoder=DictEncoder(vectors)) @ 3], rel=1e-6)
    assert table.loc['fwd', 'nDCG@3'] == pytest.approx(direct[ir_measures.nDCG @ 3], rel=1e-6)
    assert table.loc['rev', 'FD@3'] != table.loc['fwd', 'FD@3']


@needs_shared()
@pytest.mark.shared
def test_pool_sim_on_dl19_is_reproducible_and_split_by_type(capsys, tmp_path):
    data = SHARED / 'data' / 'msmarco-passage'
    groups = Path(__file__).resolve().parents[1] / 'docs' / 'dl19-run-groups.tsv'
    argv = ['pool-sim', '--qrels', str(data / 'qrels.dl19-passage.txt'), '--runs', str(data / 'runs'),
            '--vectors', str(SHARED / 'embeddings' / 'msmarco-passage.dl19-dl20.minilm'), '--metrics', 'nDCG@10', 'FD@10',
            '--rel', '2', '--missing', 'drop', '--groups', str(groups), '--pool-type', 'traditional', 'neural',
            '--repeats', '2', '--format', 'csv', '--quiet', '--pools-output', str(tmp_path / 'pools.csv')]
    assert main(argv) == 0
    first = capsys.readouterr()
    table = pd.read_csv(pd.io.common.StringIO(first.out))
    assert set(table.pool_type) == {'traditional', 'neural'} and set(table.measure) == {'nDCG@10', 'FD(rel=2)@10'}
    assert set(table.test_type) == {'traditional', 'neural', 'all'}
    pools = pd.read_csv(tmp_path / 'pools.csv')
    trad = pools[pools.pool_type == 'traditional']
    assert set(trad.groups) <= {'bm25', 'bm25-rm3'} and (trad.pooled_runs == 1).all()
    # traditional pools leave 17 neural test systems (every run but the two lexical ones); a neural pool holds
    # the 5 RankVicuna runs together whenever it holds one of them
    neural_rows = table[(table.pool_type == 'traditional') & (table.test_type == 'neural')]
    assert (neural_rows.n_systems == 17).all()
    for row in pools[pools.pool_type == 'neural'].itertuples():
        assert row.pooled_runs == len(row.groups.split()) + (4 if 'rankvicuna-7b' in row.groups.split() else 0)
    assert main(argv) == 0
    assert capsys.readouterr().out == first.out  # seeded: the same numbers again


def test_compare_subcommand_equals_compare_systems(files, capsys):
    argv = ['compare', '--qrels', str(files / 'qrels.txt'), '--runs', str(files / 'runs'), '--vectors', str(files / 'vecs'),
            '--metrics', 'FD@3', 'nDCG@3', 'DO(bins=4)', '--baseline', 'fwd', '--samples', '100', '--format', 'csv', '--quiet']
    assert main(argv) == 0
    table = pd.read_csv(pd.io.common.StringIO(capsys.readouterr().out))
    qrels = pt.io.read_qrels(str(files / 'qrels.txt'))
    runs = {n: pt.io.read_results(str(files / 'runs' / f'run.toy.{n}.txt')) for n in ('fwd', 'mid', 'rev')}
    expected = pf.compare_systems(runs, qrels, [pf.FD(encoder=pf.VectorStore(str(files / 'vecs'))) @ 3, ir_measures.nDCG @ 3,
                                                pf.DO(bins=4)], baseline='fwd', n_samples=100, verbose=False)
    assert table.measure.tolist() == ['FD@3', 'FD@3', 'nDCG@3', 'nDCG@3', 'DO(bins=4)', 'DO(bins=4)']
    np.testing.assert_allclose(table[['diff', 'p_bootstrap', 'p_holm']].to_numpy(float),
                               expected[['diff', 'p_bootstrap', 'p_holm']].to_numpy(float), rtol=1e-6)
    assert main(argv[:-7] + ['--baseline', 'nope', '--quiet']) == 2
    assert 'is not one of the runs' in capsys.readouterr().err


@pytest.fixture
def many_runs(tmp_path):
    """9 small synthetic runs (8 queries, 16 documents each, 12 of them judged (graded), 4-d vectors): 36 pairs, whose Holm
    first step α/36 = 0.0014 no count p-value of 1000 resamples (≥ 2/1001 = 0.002) can pass."""
    rng = np.random.default_rng(11)
    (tmp_path / 'runs').mkdir()
    qrels, ids, vecs = [], [], []
    for q in range(8):
        centre = rng.normal(size=4)
        for i in range(16):  # the last 4 unjudged (URR)
            label = int(rng.integers(0, 3)) if i < 12 else 0
            if i < 12:
                qrels.append(f'q{q} 0 q{q}d{i} {label}\n')
            ids.append(f'q{q}d{i}')
            vecs.append(centre * (label > 0) + rng.normal(size=4))
    (tmp_path / 'qrels.txt').write_text(''.join(qrels))
    np.save(tmp_path / 'vecs.npy', np.array(vecs))
    (tmp_path / 'vecs.ids.txt').write_text('\n'.join(ids) + '\n')
    for r in range(9):
        with open(tmp_path / 'runs' / f'run.s{r}.txt', 'w') as f:
            for q in range(8):
                scores = rng.normal(size=16)
                for rank, i in enumerate(np.argsort(-scores)):
                    f.write(f'q{q} Q0 q{q}d{i} {rank + 1} {scores[i]:.6f} s{r}\n')
    return tmp_path


def test_compare_and_report_finish_on_their_defaults_for_nine_runs(many_runs, capsys):
    """Issue 26 item 2: no --samples on a directory of 9 runs (36 pairs) — the count test would need 1440
    resamples; the default jackknife/normal test resolves Holm with 1000 and says so. A user-given count that cannot resolve
    Holm for the count test is still refused before any work."""
    data = ['--qrels', str(many_runs / 'qrels.txt'), '--runs', str(many_runs / 'runs'), '--vectors', str(many_runs / 'vecs'),
            '--quiet']
    assert main(['compare', *data, '--metrics', 'FD@5', 'nDCG@5', '--format', 'csv']) == 0
    out = capsys.readouterr()
    table = pd.read_csv(pd.io.common.StringIO(out.out))
    assert len(table) == 2 * 36
    # the default test: each measure's own, from the leave-outs: the jackknife p for FD, the paired t-test for nDCG
    assert (table[table.measure == 'FD@5'].test == 'jackknife').all() and (table[table.measure == 'nDCG@5'].test == 't').all()
    holm = pf.analyses.significance.holm
    np.testing.assert_allclose(table[table.measure == 'FD@5'].p_holm, holm(table[table.measure == 'FD@5'].p_jackknife))
    np.testing.assert_allclose(table[table.measure == 'nDCG@5'].p_holm, holm(table[table.measure == 'nDCG@5'].p_t))
    assert '1000 paired bootstrap samples (the default' in out.err
    # the sample count and test left at their defaults (fewer metrics and sparsified qrels only to keep it short)
    assert main(['report', *data, '--metrics', 'FD@5', 'nDCG@5', '--per-query', '2', '--seeds', '0',
                 '--out', str(many_runs / 'report')]) == 0
    out = capsys.readouterr().out
    assert '1000 paired bootstrap samples (the default' in out
    pairs = pd.read_csv(many_runs / 'report' / 'comparisons.csv')
    assert len(pairs) == 36 * 2 and set(pairs.test) == {'jackknife', 't'}
    report_md = (many_runs / 'report' / 'report.md').read_text()
    assert '1000 samples (the default for the jackknife test)' in report_md
    # the text names each measure's own test, and no test no measure here uses
    assert 'jackknife t-test of the difference for FD@5 (`p_jackknife`); the paired t-test for nDCG@5 (`p_t`' in report_md
    assert 'normal approximation of the resampled differences for' not in report_md
    # the evaluated set placed on the coverage map: its relevant counts (label >= 1), counted here from the file
    labels = pd.read_csv(many_runs / 'qrels.txt', sep=' ', names=['q', 'i', 'd', 'label'])
    counts = labels[labels.label >= 1].groupby('q').size().to_numpy(float)
    assert f'{counts.min():.0f} to {counts.max():.0f} over 8 queries, sd of log count {np.log(counts).std():.2f}' in report_md
    # the count test: a given count that cannot pass Holm's first step is refused before any work
    assert main(['compare', *data, '--metrics', 'nDCG@5', '--test', 'bootstrap', '--samples', '1000']) == 2
    assert 'use at least 1440 samples' in capsys.readouterr().err
    assert main(['report', *data, '--test', 'bootstrap', '--samples', '1000', '--out', str(many_runs / 'r2')]) == 2
    assert 'use at least 1440 samples' in capsys.readouterr().err and not (many_runs / 'r2').exists()
    # ... and without --samples the count test gets the smallest count that can
    assert main(['compare', *data, '--metrics', 'nDCG@5', '--test', 'bootstrap', '--format', 'csv']) == 0
    out = capsys.readouterr()
    assert '1440 paired bootstrap samples (the default for --test bootstrap' in out.err


def _full_disk(*names):
    def fail(*args, **kwargs):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), *names)
    return fail


def test_a_full_disk_while_writing_the_report_is_one_line_naming_the_folder(files, tmp_path, capsys, monkeypatch):
    import pyterrier_frechet.analyses.report as report
    data = ['--qrels', str(files / 'qrels.txt'), '--runs', str(files / 'runs'), '--vectors', str(files / 'vecs')]
    out = tmp_path / 'report'
    # a write that names no file (a figure's or a table's stream): the --out folder is named
    monkeypatch.setattr(report, 'write_report', _full_disk())
    assert main(['report', *data, '--metrics', 'nDCG@3', '--quiet', '--out', str(out)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [f"error: writing --out {str(out)!r}: No space left on device (ENOSPC); free space on that disk "
                   "(or name a folder on another one) and run again"]
    # a write that names its file: that file is named
    monkeypatch.setattr(report, 'write_report', _full_disk(str(out / 'report.md')))
    assert main(['report', *data, '--metrics', 'nDCG@3', '--quiet', '--out', str(out)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith(f"error: {str(out / 'report.md')!r}: No space left on device (ENOSPC)")


def test_an_eval_output_on_a_full_disk_is_one_line_and_a_programming_oserror_stays_visible(files, capsys, monkeypatch):
    from pyterrier_frechet import cli
    monkeypatch.setattr(cli, '_write_atomically', _full_disk(str(files / 'out.md')))
    assert _eval(files, '--missing', 'drop', '--output', str(files / 'out.md')) == 2
    assert capsys.readouterr().err.strip().splitlines()[-1] == (
        f"error: {str(files / 'out.md')!r}: No space left on device (ENOSPC); free space on that disk (or name a folder "
        "on another one) and run again")

    def bug(*args, **kwargs):
        raise OSError('an OSError that names no file and is no refusal of the file system')
    monkeypatch.setattr(cli, '_write_atomically', bug)
    with pytest.raises(OSError, match='names no file'):
        _eval(files, '--missing', 'drop', '--output', str(files / 'out.md'))


@pytest.mark.skipif(__import__('shutil').which('perl') is None, reason='gdeval runs perl')
def test_a_failing_ir_measures_provider_is_one_line_naming_the_measure(files, capsys):
    assert _eval(files, '--missing', 'drop', metrics=('FD@3', "nDCG(dcg='exp-log2')@3")) == 2
    err = [line for line in capsys.readouterr().err.splitlines() if line.startswith(('error', 'Traceback'))]
    assert err == ["error: run 'fwd': measure nDCG(dcg='exp-log2')@3: ir_measures' gdeval provider failed (its program "
                   "perl exited with status 25) (gdeval reads TREC files and needs numeric query ids; 'q1' is not); "
                   "leave nDCG(dcg='exp-log2')@3 out, or give inputs its provider accepts"]


def test_run_ids_written_differently_are_said_once_on_the_command_line(files, caplog):
    import logging
    import warnings
    fwd = (files / 'runs' / 'run.toy.fwd.txt').read_text()
    for p in (files / 'runs').iterdir():
        p.unlink()
    (files / 'runs' / 'run.toy.fwd.txt').write_text(fwd.replace('q1 ', '1 ').replace('q2 ', '2.0 '))
    (files / 'qrels.txt').write_text((files / 'qrels.txt').read_text().replace('q1 ', '1 ').replace('q2 ', '2 '))
    with caplog.at_level(logging.WARNING, logger='pyterrier_frechet'), warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter('always')
        assert _eval(files, '--missing', 'drop', metrics=('nDCG@3',)) == 0
    said = caplog.text + ''.join(str(w.message) for w in caught)
    # the reading of the runs says it (logged once for all runs); evaluate's warning for library users is not repeated
    assert said.count('compared as text') == 1 and "run '2.0' vs qrels '2'" in said
