"""Qrels balancing and the URRFilter transformer on hand-built cases."""
import pandas as pd
import pyterrier as pt
import pytest

from pyterrier_frechet import URRFilter, balance_qrels

QRELS = pd.DataFrame([
    ('1', 'a', 3), ('1', 'b', 2), ('1', 'c', 2), ('1', 'd', 2), ('1', 'e', 1), ('1', 'f', 0),
    ('2', 'g', 1), ('2', 'h', 0),
], columns=['qid', 'docno', 'label'])


def rel_docs(frame, qid):
    return set(frame[(frame.qid == qid) & (frame.label >= 1)].docno)


def test_balance_keeps_highest_grades_first():
    out = balance_qrels(QRELS, per_query=1)
    assert rel_docs(out, '1') == {'a'}  # the only grade-3 document
    assert rel_docs(out, '2') == {'g'}
    assert set(out[out.label == 0].docno) == {'f', 'h'}  # non-relevant judgments are kept
    out3 = balance_qrels(QRELS, per_query=3)
    docs = rel_docs(out3, '1')
    assert 'a' in docs and len(docs) == 3 and docs <= {'a', 'b', 'c', 'd'}  # two of the three grade-2 docs, never 'e'


def test_balance_random_within_grade_seeded_and_order_free():
    picks = [frozenset(rel_docs(balance_qrels(QRELS, 2, seed=s), '1') - {'a'}) for s in range(30)]
    assert set(picks) == {frozenset({'b'}), frozenset({'c'}), frozenset({'d'})}  # each grade-2 doc can be picked
    shuffled = QRELS.sample(frac=1, random_state=7)
    for s in range(5):
        pd.testing.assert_frame_equal(balance_qrels(QRELS, 2, seed=s), balance_qrels(shuffled, 2, seed=s))


def test_balance_rel_threshold_and_errors():
    out = balance_qrels(QRELS, per_query=1, rel=2)
    assert set(out[out.qid == '1'].docno) == {'a', 'e', 'f'}  # grade-1 'e' is below rel=2 and kept as judged
    for bad in (0, -1, 1.5, True):
        with pytest.raises(ValueError, match='per_query'):
            balance_qrels(QRELS, bad)
    with pytest.raises(ValueError, match='lack column'):
        balance_qrels(QRELS.rename(columns={'label': 'grade'}), 1)


RUN = pd.DataFrame([
    ('1', 'a', 9.0), ('1', 'x', 8.0), ('1', 'b', 7.0), ('1', 'y', 6.0), ('1', 'z', 6.0), ('1', 'w', 1.0),
    ('3', 'p', 2.0), ('3', 'q', 1.0),
], columns=['qid', 'docno', 'score'])


def test_urr_filter_keeps_first_k_unjudged_and_reranks():
    out = URRFilter(QRELS, k=2)(RUN)
    # q1: judged a, b dropped; unjudged in trec_eval order: x (8), z (6, ties y; docno descending), y, w.
    assert out[out.qid == '1'].docno.tolist() == ['x', 'z']
    assert out[out.qid == '1']['rank'].tolist() == [0, 1]
    assert out[out.qid == '3'].docno.tolist() == ['p', 'q']  # a query with no judgment keeps its ranking
    assert repr(URRFilter(QRELS, k=2)) == 'URRFilter(<8 judged pairs>, k=2)'


def test_urr_filter_empty_frame_and_validation():
    empty = URRFilter(QRELS, 3)(RUN.iloc[:0])
    assert len(empty) == 0 and {'qid', 'docno', 'score', 'rank'} <= set(empty.columns)
    with pytest.raises(pt.validate.InputValidationError):
        URRFilter(QRELS, 3)(pd.DataFrame({'qid': ['1']}))
    with pytest.raises(ValueError, match='positive integer'):
        URRFilter(QRELS, 0)
