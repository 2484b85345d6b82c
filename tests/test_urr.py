"""The URRFilter transformer (pipelines/urr.py) on hand-built cases."""
import pandas as pd
import pyterrier as pt
import pytest

from pyterrier_frechet import URRFilter
from test_qrels import QRELS


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
