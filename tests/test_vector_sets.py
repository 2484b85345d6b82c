"""The two sets of a vector measure and their vectors (evaluation/vector_sets.py): fd_sets selects the sets written
out by hand for the toy run (trec_eval order, cut-off, URR, rel), and one encoder call serves several measures."""
import ir_measures
import numpy as np
import pyterrier as pt
import pytest

from pyterrier_frechet import FD
from pyterrier_frechet.evaluation.vector_sets import fd_sets, float64_vectors
from conftest import DictEncoder
from test_measure import Q1_ALL, Q2_ALL, REL_1, REL_2, TOP_3, URR_3


def _sets(measure, toy):
    _, qrels, run = toy
    return fd_sets(measure, pt.model.to_ir_measures(qrels), pt.model.to_ir_measures(run))


@pytest.mark.parametrize('measure,relevant,retrieved', [
    (FD @ 3, REL_1, TOP_3),
    (FD(rel=2) @ 3, REL_2, TOP_3),
    (FD, REL_1, Q1_ALL + Q2_ALL),  # no cut-off: every retrieved document of the queries with a relevant one
    (FD(urr=True) @ 3, REL_1, URR_3),
    (FD @ 1, REL_1, ['d0', 'd10']),
])
def test_fd_sets_are_the_hand_built_sets(toy, measure, relevant, retrieved):
    sets = _sets(measure, toy)
    assert sorted(sets.relevant.doc_id) == sorted(relevant) and sets.retrieved.doc_id.tolist() == retrieved
    assert sets.queries == ['q1', 'q2']  # q3 has no relevant document, q4 no judgment: neither is in the query set
    assert list(sets.relevant.columns) == ['query_id', 'doc_id']
    assert sets.relevant.groupby('query_id').size().to_dict() == {
        'q1': sum(d in ('d0', 'd1', 'd2', 'd3') for d in relevant), 'q2': sum(d in ('d10', 'd11', 'd12') for d in relevant)}


def test_fd_sets_refuses_a_mean_over_balancing_draws(toy):
    with pytest.raises(ValueError, match=r'mean over 3 balancing draws, not one pair of sets'):
        _sets(FD(per_query=1, draws=3) @ 3, toy)


def test_vectors_are_float64_and_copied_only_when_they_are_not():
    x = np.arange(6, dtype=np.float32).reshape(2, 3) / 3
    out = float64_vectors(x)
    assert out.dtype == np.float64 and np.array_equal(out, x.astype(np.float64))
    y = np.ones((2, 3))
    assert float64_vectors(y) is y


def test_encoder_called_once_for_several_measures(toy):
    vectors, qrels, run = toy
    enc = DictEncoder(vectors)
    ms = [FD(encoder=enc) @ 1, FD(encoder=enc) @ 3, FD(encoder=enc, urr=True) @ 3]
    ir_measures.calc_aggregate(ms, pt.model.to_ir_measures(qrels), pt.model.to_ir_measures(run))
    assert enc.calls == 1
