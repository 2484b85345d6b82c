"""evaluate() and its measure parsing (evaluation/evaluate.py): either column names and dict qrels give
ir_measures' own values; "did you mean" for measure names."""
import ir_measures
import pandas as pd
import pyterrier as pt
import pytest
from ir_measures import nDCG

import pyterrier_frechet as pf
from pyterrier_frechet.evaluation.evaluate import parse_measures, suggest_measure
from conftest import DictEncoder


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
