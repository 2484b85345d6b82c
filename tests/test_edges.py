"""Issue 27 item 6, the edges: PyTerrier frames through the package's entry points, "did you mean" for measure
names, --vectors PREFIX.npy, a run file given as qrels (and the reverse)."""
import ir_measures
import numpy as np
import pandas as pd
import pyterrier as pt
import pytest
from ir_measures import nDCG

import pyterrier_frechet as pf
from pyterrier_frechet.cli import main, vectors_prefix
from pyterrier_frechet.data.runs import WrongFileKind, looks_like, read_qrels, read_run
from pyterrier_frechet.evaluation.evaluate import parse_measures, suggest_measure
from conftest import DictEncoder, reference_fd
from test_cli import files  # noqa: F401 - the toy files fixture (qrels.txt, runs/, vecs.npy + vecs.ids.txt)


# --- 1. PyTerrier frames ---

@pytest.fixture
def two_queries(toy):
    """Qrels and a run over q1 and q2 only (both have relevant documents), PyTerrier column names."""
    vectors, qrels, run = toy
    qrels = qrels[qrels.qid.isin(['q1', 'q2'])].reset_index(drop=True)
    run = run[run.qid.isin(['q1', 'q2'])].reset_index(drop=True)
    return vectors, qrels, run


def test_calc_aggregate_reads_pyterrier_frames_for_fd(two_queries, vec):
    vectors, qrels, run = two_queries
    fd = pf.FD(encoder=DictEncoder(vectors)) @ 3
    got = ir_measures.calc_aggregate([fd], qrels, run)[fd]  # today: missing columns ['query_id', 'doc_id', 'relevance']
    # FD@3 from first principles: relevant (label >= 1) of q1, q2 against the top 3 of each query
    expected = reference_fd(vec('d0', 'd1', 'd3', 'd10', 'd11', 'd12'), vec('d0', 'd1', 'd2', 'd10', 'd11', 'd12'))
    assert got == pytest.approx(expected, rel=1e-9)
    # the same number through ir_measures' own column names, and the caller's frames are left as they were
    assert ir_measures.calc_aggregate([fd], pt.model.to_ir_measures(qrels), pt.model.to_ir_measures(run))[fd] == got
    assert list(qrels.columns) == ['qid', 'docno', 'label'] and list(run.columns) == ['qid', 'docno', 'score']


def test_pyterrier_frames_beside_ir_measures_own_measures(two_queries):
    vectors, qrels, run = two_queries
    fd = pf.FD(encoder=DictEncoder(vectors)) @ 3
    # ir_measures' nDCG cannot read PyTerrier names (the package cannot change that): a clear error, not theirs
    with pytest.raises(ValueError, match=r'qrels frame has PyTerrier column names.*pt\.model\.to_ir_measures\(qrels\)'):
        ir_measures.calc_aggregate([fd, nDCG @ 3], qrels, run)
    with pytest.raises(ValueError, match=r'run frame has PyTerrier column names.*pt\.model\.to_ir_measures\(run\)'):
        ir_measures.calc_aggregate([fd, nDCG @ 3], pt.model.to_ir_measures(qrels), run)
    # converted as the message says, both measures are computed, equal to each computed alone
    q, r = pt.model.to_ir_measures(qrels), pt.model.to_ir_measures(run)
    both = ir_measures.calc_aggregate([fd, nDCG @ 3], q, r)
    assert both[fd] == ir_measures.calc_aggregate([fd], qrels, run)[fd]
    assert both[nDCG @ 3] == ir_measures.calc_aggregate([nDCG @ 3], q, r)[nDCG @ 3]


def test_evaluate_takes_either_names_and_dicts(two_queries):
    vectors, qrels, run = two_queries
    enc = DictEncoder(vectors)
    measures = [pf.FD @ 3, 'nDCG@3', 'RR(rel=2)@3']
    pt_names = pf.evaluate({'a': run}, qrels, measures, encoder=enc)
    ir_names = pf.evaluate({'a': pt.model.to_ir_measures(run)}, pt.model.to_ir_measures(qrels), measures, encoder=enc)
    as_dict = {q: dict(zip(g.docno, g.label)) for q, g in qrels.groupby('qid')}
    dict_qrels = pf.evaluate({'a': run}, as_dict, measures, encoder=enc)
    pd.testing.assert_frame_equal(pt_names, ir_names)
    pd.testing.assert_frame_equal(pt_names, dict_qrels)
    direct = ir_measures.calc_aggregate([nDCG @ 3, ir_measures.RR(rel=2) @ 3], pt.model.to_ir_measures(qrels),
                                        pt.model.to_ir_measures(run))
    assert pt_names.loc[0, 'nDCG@3'] == direct[nDCG @ 3] and pt_names.loc[0, 'RR(rel=2)@3'] == direct[ir_measures.RR(rel=2) @ 3]


def test_frames_missing_columns_name_both_spellings(two_queries):
    vectors, qrels, run = two_queries
    with pytest.raises(ValueError, match=r"lack column\(s\) \['relevance'\].*qid, docno, label \(PyTerrier\)"):
        pf.evaluate({'a': run}, qrels.drop(columns='label'), ['nDCG@3'])
    with pytest.raises(ValueError, match=r"run 'a'.*lacks column\(s\) \['score'\].*qid, docno, score \(PyTerrier\)"):
        pf.evaluate({'a': run.drop(columns='score')}, qrels, ['nDCG@3'])
    with pytest.raises(ValueError, match='both PyTerrier and ir_measures column names'):
        pf.evaluate({'a': run}, qrels.assign(relevance=qrels.label), ['nDCG@3'])


# --- 2. "did you mean" ---

@pytest.mark.parametrize('name,suggestion,why', [
    ('nDGC@10', 'nDCG@10', None),
    ('fd@10', 'FD@10', 'case-sensitive'),
    ('ndcg@10', 'nDCG@10', 'case-sensitive'),
    ('ndcg_cut_10', 'nDCG@10', 'trec_eval'),
    ('ndcg_cut.10', 'nDCG@10', 'trec_eval'),
    ('recip_rank', 'RR', 'trec_eval'),
    ('map', 'AP', 'trec_eval'),
    ('P_10', 'P@10', 'trec_eval'),
    ('FD(urr=true)@10', 'FD(urr=True)@10', 'True/False'),
    ('FD(urr=false)', 'FD(urr=False)', 'True/False'),
    ('fd(urr=true)@10', 'FD(urr=True)@10', 'True/False'),
])
def test_did_you_mean(name, suggestion, why):
    hints, note = suggest_measure(name)
    assert hints == [suggestion]
    assert parse_measures([suggestion])  # what is suggested parses
    with pytest.raises(ValueError) as info:
        parse_measures([name])
    message = str(info.value)
    assert f"unknown measure {name!r}: did you mean {suggestion!r}?" in message
    if why:
        assert why in message


def test_no_suggestion_keeps_the_examples():
    assert suggest_measure('xyzzy') == ([], '')
    with pytest.raises(ValueError, match=r"unknown measure 'xyzzy' \(.*\); use ir_measures names such as nDCG@10"):
        parse_measures(['xyzzy'])
    assert parse_measures(['nDCG@10', 'FD(urr=True)@10']) == [nDCG @ 10, pf.FD(urr=True) @ 10]


@pytest.mark.parametrize('metric,expected', [
    ('nDGC@3', "--metrics: unknown metric 'nDGC@3': did you mean 'nDCG@3'?"),
    ('ndcg_cut_3', "--metrics: unknown metric 'ndcg_cut_3': did you mean 'nDCG@3'?"),
    ('FD(urr=true)@3', "--metrics: unknown metric 'FD(urr=true)@3': did you mean 'FD(urr=True)@3'?"),
])
def test_cli_metrics_did_you_mean(files, capsys, metric, expected):  # noqa: F811 - the imported fixture
    argv = ['eval', '--qrels', str(files / 'qrels.txt'), '--runs', str(files / 'runs'), '--vectors',
            str(files / 'vecs'), '--metrics', metric, '--quiet']
    assert main(argv) == 2
    assert expected in capsys.readouterr().err


# --- 3. files ---

def test_vectors_prefix_with_extension(files, capsys):  # noqa: F811
    def run(vectors):
        assert main(['eval', '--qrels', str(files / 'qrels.txt'), '--runs', str(files / 'runs'), '--vectors', vectors,
                     '--metrics', 'FD@3', 'nDCG@3', '--quiet', '--format', 'csv']) == 0
        return capsys.readouterr().out
    plain = run(str(files / 'vecs'))
    assert 'fwd' in plain
    assert run(str(files / 'vecs.npy')) == plain  # today: looks for vecs.npy.npy
    assert run(str(files / 'vecs.ids.txt')) == plain
    assert vectors_prefix('x/vecs.npy') == 'x/vecs' and vectors_prefix('x/vecs') == 'x/vecs'
    # a store really named PREFIX.npy (files PREFIX.npy.npy) keeps its name
    (files / 'odd.npy.npy').write_bytes(b'')
    assert vectors_prefix(str(files / 'odd.npy')) == str(files / 'odd.npy')


def test_run_file_given_as_qrels_and_the_reverse(files, capsys):  # noqa: F811
    run_file = files / 'runs' / 'run.toy.fwd.txt'
    assert looks_like(run_file.read_text()) == 'run' and looks_like((files / 'qrels.txt').read_text()) == 'qrels'
    with pytest.raises(WrongFileKind, match=r'run\.toy\.fwd\.txt:1: this looks like a run file') as info:
        read_qrels(run_file)  # today: "the relevance label (4th column) must be an integer"
    assert info.value.kind == 'run'
    with pytest.raises(WrongFileKind, match=r'qrels\.txt:1: expected 6 columns .* this looks like a qrels file'):
        read_run(files / 'qrels.txt')
    # blank lines before the first record: the line number is the record's
    (files / 'blank.txt').write_text('\n\n' + run_file.read_text())
    with pytest.raises(WrongFileKind, match=r'blank\.txt:3: this looks like a run file'):
        read_qrels(files / 'blank.txt')
    base = ['eval', '--vectors', str(files / 'vecs'), '--metrics', 'FD@3', '--quiet']
    assert main(base + ['--qrels', str(run_file), '--runs', str(files / 'runs')]) == 2
    err = capsys.readouterr().err
    assert '--qrels: ' in err and 'looks like a run file' in err and '--runs takes run files' in err
    assert main(base + ['--qrels', str(files / 'qrels.txt'), '--runs', str(files / 'qrels.txt')]) == 2
    err = capsys.readouterr().err
    assert '--runs: ' in err and 'looks like a qrels file' in err


def test_ordinary_files_still_read(files):  # noqa: F811
    qrels = read_qrels(files / 'qrels.txt')
    assert qrels.shape == (9, 3) and qrels.label.dtype == np.int64
    run = read_run(files / 'runs' / 'run.toy.fwd.txt')
    assert len(run) == 40 and run.score.dtype == np.float64
    # a qrels line with a non-integer label is still reported as before (not as a run file)
    (files / 'bad.txt').write_text('q1 0 d1 x\n')
    with pytest.raises(ValueError, match=r'relevance label \(4th column\) must be an integer'):
        read_qrels(files / 'bad.txt')
