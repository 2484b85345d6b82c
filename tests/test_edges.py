"""Issue 27 item 6, the edges: PyTerrier frames through the package's entry points, "did you mean" for measure
names on the command line, --vectors PREFIX.npy. (evaluate()'s own did-you-mean: test_evaluate.py; frames' column
errors: test_frames.py; a run file given as qrels and the reverse: test_runs.py.)"""
import ir_measures
import pyterrier as pt
import pytest
from ir_measures import nDCG

import pyterrier_frechet as pf
from pyterrier_frechet.cli import main, vectors_prefix
from conftest import DictEncoder, reference_fd
from test_cli import files  # noqa: F401 - the toy files fixture (qrels.txt, runs/, vecs.npy + vecs.ids.txt)


# --- 1. PyTerrier frames ---

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
    # beside nDCG ir_measures averages FD's rows (centred pseudo-values, whose mean is FD to rounding: 1 ulp here)
    assert both[fd] == pytest.approx(ir_measures.calc_aggregate([fd], qrels, run)[fd], rel=1e-14)
    assert both[nDCG @ 3] == ir_measures.calc_aggregate([nDCG @ 3], q, r)[nDCG @ 3]


# --- 2. "did you mean" ---

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
