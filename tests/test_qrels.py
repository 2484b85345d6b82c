"""Qrels balancing (evaluation/qrels.py) on hand-built cases."""
import pandas as pd
import pytest

from pyterrier_frechet import balance_qrels

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
