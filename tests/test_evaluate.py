"""evaluate() and its measure parsing (evaluation/evaluate.py): either column names and dict qrels give
ir_measures' own values; "did you mean" for measure names."""
import re
import shutil

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


GDEVAL = "nDCG(dcg='exp-log2')@3"
GDEVAL_SAYS = (f"measure {GDEVAL}: ir_measures' gdeval provider failed (its program perl exited with status 25) "
               "(gdeval reads TREC files and needs numeric query ids; 'q1' is not)")
needs_perl = pytest.mark.skipif(shutil.which('perl') is None, reason='gdeval runs perl')


@needs_perl
def test_a_provider_failure_is_one_value_error_naming_the_measure(two_queries):
    vectors, qrels, run = two_queries
    # was: subprocess.CalledProcessError from inside ir_measures' gdeval provider
    with pytest.raises(ValueError) as info:
        pf.evaluate({'a': run}, qrels, [pf.FD @ 3, GDEVAL, 'nDCG@3'], encoder=DictEncoder(vectors))
    assert str(info.value) == f"run 'a': {GDEVAL_SAYS}; leave {GDEVAL} out, or give inputs its provider accepts"
    # numeric query ids: the same measure is computed
    numeric = {'a': run.assign(qid=run.qid.str[1:])}
    table = pf.evaluate(numeric, qrels.assign(qid=qrels.qid.str[1:]), [GDEVAL, 'nDCG@3'])
    assert 0 < table.loc[0, GDEVAL] <= 1


@needs_perl
def test_a_provider_failure_in_the_resampled_measures_names_the_measure(two_queries):
    vectors, qrels, run = two_queries
    with pytest.raises(ValueError, match=re.escape(GDEVAL_SAYS)):
        pf.paper_table({'a': run, 'b': run.assign(score=-run.score)}, qrels, [GDEVAL], n_samples=20, verbose=False)


def test_an_error_of_the_package_itself_passes_unchanged(two_queries, monkeypatch):
    from pyterrier_frechet.evaluation import evaluate as module
    vectors, qrels, run = two_queries
    monkeypatch.setattr(module, 'compute_set_measures', lambda *a: (_ for _ in ()).throw(KeyError('own bug')))
    with pytest.raises(KeyError, match='own bug'):
        pf.evaluate({'a': run}, qrels, [pf.FD @ 3, 'nDCG@3'], encoder=DictEncoder(vectors))


@needs_perl
def test_the_resampling_per_query_call_names_a_failing_measure_too(two_queries):
    # the resampled measures' own ir_measures.iter_calc (bootstrap.RunInputs), not only evaluate()'s calc_aggregate
    from pyterrier_frechet.analyses.bootstrap import RunInputs
    from pyterrier_frechet.evaluation.frames import prepare_qrels, prepare_run, to_ir_measures
    from pyterrier_frechet.evaluation.selection import Judgments
    vectors, qrels, run = two_queries
    qrels_ir = prepare_qrels(qrels, 'qrels')
    inputs = RunInputs(parse_measures([GDEVAL]), Judgments(qrels_ir), qrels_ir,
                       prepare_run(to_ir_measures(run), 'run'), ['q1', 'q2'])
    with pytest.raises(ValueError, match=re.escape(GDEVAL_SAYS)):
        inputs.per_query
