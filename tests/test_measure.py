"""The FD measure through ir_measures and pt.Experiment, against sets written out by hand."""
import logging
import re
import warnings

import ir_measures
import numpy as np
import pandas as pd
import pyterrier as pt
import pytest
from ir_measures import RR, nDCG

import pyterrier_frechet as pf
from pyterrier_frechet import FD
from conftest import DictEncoder, reference_fd

# The toy run in trec_eval order (see conftest): q1 = d0 d1 d2 d3 d5 d4 d6 d7 d8 d9 (d5 ties d4 and
# sorts first, docno descending); q2 = d10 … d19. q3 has no relevant document, q4 no judgment.
REL_1 = ['d0', 'd1', 'd3', 'd10', 'd11', 'd12']
REL_2 = ['d0', 'd3', 'd11']
TOP_3 = ['d0', 'd1', 'd2', 'd10', 'd11', 'd12']
Q1_ALL = ['d0', 'd1', 'd2', 'd3', 'd5', 'd4', 'd6', 'd7', 'd8', 'd9']
Q2_ALL = [f'd{i}' for i in range(10, 20)]
URR_3 = ['d5', 'd4', 'd6', 'd14', 'd15', 'd16']


def calc(measure, qrels, run, encoder):
    m = measure if measure['encoder'] is not None else measure(encoder=encoder)
    return ir_measures.calc_aggregate([m], pt.model.to_ir_measures(qrels), pt.model.to_ir_measures(run))[m]


@pytest.mark.parametrize('measure,relevant,retrieved', [
    (FD @ 3, REL_1, TOP_3),
    (FD(rel=2) @ 3, REL_2, TOP_3),
    (FD, REL_1, Q1_ALL + Q2_ALL),  # no cut-off: every retrieved document
    (FD(urr=True) @ 3, REL_1, URR_3),
    (FD @ 1, REL_1, ['d0', 'd10']),
])
def test_value_equals_hand_built_sets(toy, vec, measure, relevant, retrieved):
    vectors, qrels, run = toy
    expected = reference_fd(vec(*relevant), vec(*retrieved))
    assert calc(measure, qrels, run, DictEncoder(vectors)) == pytest.approx(expected, rel=1e-9)


def test_balanced_qrels(toy, vec):
    vectors, qrels, run = toy
    # per_query=1: q1 keeps one of its two grade-2 documents (d0, d3), q2 its only grade-2 one (d11).
    options = {d: reference_fd(vec(d, 'd11'), vec(*TOP_3)) for d in ('d0', 'd3')}
    seen = set()
    for seed in range(8):
        value = calc(FD(per_query=1, seed=seed) @ 3, qrels, run, DictEncoder(vectors))
        match = [d for d, v in options.items() if v == pytest.approx(value, rel=1e-9)]
        assert len(match) == 1
        seen.add(match[0])
        assert calc(FD(per_query=1, seed=seed) @ 3, qrels, run, DictEncoder(vectors)) == value  # deterministic
    assert seen == {'d0', 'd3'}  # the choice within a grade is random across seeds
    # per_query=2 keeps both grade-2 docs of q1 and d11 plus one grade-1 doc of q2 (d10 or d12).
    v2 = calc(FD(per_query=2) @ 3, qrels, run, DictEncoder(vectors))
    assert any(v2 == pytest.approx(reference_fd(vec('d0', 'd3', 'd11', d), vec(*TOP_3)), rel=1e-9) for d in ('d10', 'd12'))


def test_pt_experiment_shows_the_set_value(toy, vec):
    vectors, qrels, run = toy
    other = run.assign(score=-run.score)  # reversed rankings: a worse system
    previous = pf.set_default_encoder(DictEncoder(vectors))
    try:
        systems = [pt.Transformer.from_df(run), pt.Transformer.from_df(other)]
        topics = pd.DataFrame({'qid': ['q1', 'q2', 'q3', 'q4'], 'query': ['a', 'b', 'c', 'd']})
        table = pt.Experiment(systems, topics, qrels, eval_metrics=[FD @ 3, nDCG @ 3, RR @ 3], names=['fwd', 'rev'])
        perq = pt.Experiment(systems, topics, qrels, eval_metrics=[FD @ 3], names=['fwd', 'rev'], perquery=True)
    finally:
        pf.set_default_encoder(previous)
    fwd = reference_fd(vec(*REL_1), vec(*TOP_3))
    rev = reference_fd(vec(*REL_1), vec('d9', 'd8', 'd7', 'd19', 'd18', 'd17'))
    assert table.set_index('name').loc['fwd', 'FD@3'] == pytest.approx(fwd, rel=1e-9)
    assert table.set_index('name').loc['rev', 'FD@3'] == pytest.approx(rev, rel=1e-9)
    assert set(table.columns) == {'name', 'FD@3', 'nDCG@3', 'RR@3'}
    fwd_rows = perq[(perq.name == 'fwd') & perq.value.notna()]
    assert sorted(fwd_rows.qid) == ['q1', 'q2', 'q3']  # every query of the qrels has a row; their mean is the set value
    assert fwd_rows.value.mean() == pytest.approx(fwd, rel=1e-9)


def test_string_and_int_ids_match(toy, vec):
    vectors, qrels, run = toy
    num = lambda s: int(s[1:])
    qrels_int = qrels.assign(qid=qrels.qid.map(num))
    enc = DictEncoder(vectors)
    expected = reference_fd(vec(*REL_1), vec(*TOP_3))
    value = ir_measures.calc_aggregate([FD(encoder=enc) @ 3], pt.model.to_ir_measures(qrels_int),
                                       pt.model.to_ir_measures(run.assign(qid=run.qid.map(num))))[FD(encoder=enc) @ 3]
    assert value == pytest.approx(expected, rel=1e-9)


def test_missing_vectors_error_or_drop(toy, vec, caplog):
    vectors, qrels, run = toy
    partial = {k: v for k, v in vectors.items() if k != 'd2'}
    with pytest.raises(ValueError, match=r"1 of 6 retrieved document\(s\) have no vector, e\.g\. \['d2'\]"):
        calc(FD @ 3, qrels, run, DictEncoder(partial))
    with caplog.at_level(logging.WARNING, logger='pyterrier_frechet'):
        value = calc(FD(missing='drop') @ 3, qrels, run, DictEncoder(partial))
    assert value == pytest.approx(reference_fd(vec(*REL_1), vec('d0', 'd1', 'd10', 'd11', 'd12')), rel=1e-9)
    assert "left out 1 of 6 retrieved document(s) without a vector, e.g. ['d2']" in caplog.text


@pytest.mark.parametrize('mutate,message', [
    (lambda v, q, r: (v, q.iloc[:0], r), 'qrels are empty'),
    (lambda v, q, r: (v, q.assign(label=0), r), 'no document with relevance >= 1'),
    (lambda v, q, r: (v, q, r.assign(qid='zz' + r.qid)), 'retrieved set has 0'),
    (lambda v, q, r: (v, q, pd.concat([r, r.iloc[:1]])), 'duplicate'),
    (lambda v, q, r: (v, pd.concat([q, q.iloc[:1]]), r), 'duplicate'),
    (lambda v, q, r: ({**v, 'd1': np.full(6, np.nan)}, q, r), 'NaN/inf'),
    (lambda v, q, r: ({**v, 'd1': np.zeros(5)}, q, r), 'mixed shapes'),
])
def test_bad_input(toy, mutate, message):
    vectors, qrels, run = mutate(*toy)
    with pytest.raises(ValueError, match=message):
        calc(FD @ 3, qrels, run, DictEncoder(vectors))


def test_bad_parameters_and_no_encoder(toy):
    vectors, qrels, run = toy
    with pytest.raises(ValueError, match='positive integer'):
        calc(FD @ 0, qrels, run, DictEncoder(vectors))
    with pytest.raises(ValueError, match='positive integer'):
        calc(FD(per_query=0) @ 3, qrels, run, DictEncoder(vectors))
    with pytest.raises(ValueError, match='invalid param'):
        calc(FD(missing='ignore') @ 3, qrels, run, DictEncoder(vectors))
    with pytest.raises(ValueError, match='no encoder is set'):
        ir_measures.calc_aggregate([FD @ 3], pt.model.to_ir_measures(qrels), pt.model.to_ir_measures(run))
    mixed = run.assign(doc_vec=[np.zeros(6 if i % 2 else 5) for i in range(len(run))])
    with pytest.raises(ValueError, match='mixed shapes'):
        calc(FD @ 3, qrels, mixed, DictEncoder(vectors))


UNRETRIEVED = ('1 of 2 queries with relevant documents have nothing retrieved; their relevant documents are '
               'still in the relevant set')


@pytest.fixture
def unwarned(monkeypatch):
    """A process that has not yet warned about queries with nothing retrieved."""
    from pyterrier_frechet.evaluation import vector_sets
    monkeypatch.setattr(vector_sets, '_UNRETRIEVED_WARNED', set())


def test_query_with_relevant_documents_but_nothing_retrieved(toy, vec, unwarned):
    vectors, qrels, run = toy
    without_q2 = run[run.qid != 'q2']
    with pytest.warns(UserWarning, match=re.escape(r'FD(encoder=DictEncoder(60))@3: ' + UNRETRIEVED)) as record:
        # was: an INFO line only
        value = calc(FD @ 3, qrels, without_q2, DictEncoder(vectors))
    # q2's relevant documents stay in the relevant set; it adds nothing to the retrieved set
    assert value == pytest.approx(reference_fd(vec(*REL_1), vec('d0', 'd1', 'd2')), rel=1e-9)
    said = [str(w.message) for w in record if UNRETRIEVED[:40] in str(w.message)]
    assert len(said) == 1 and 'evaluate on the topics you ran (filter the qrels to them' in said[0]


def test_pt_experiment_without_filter_by_topics_warns_once_per_measure_and_count(toy, vec, unwarned):
    vectors, qrels, run = toy
    systems = [pt.Transformer.from_df(run), pt.Transformer.from_df(run.assign(score=-run.score))]
    topics = pd.DataFrame({'qid': ['q1'], 'query': ['a']})  # q2 has relevant documents but was not run
    previous = pf.set_default_encoder(DictEncoder(vectors))
    try:
        with warnings.catch_warnings(record=True) as record:
            warnings.simplefilter('always')  # every warning the package gives is recorded
            unfiltered = pt.Experiment(systems, topics, qrels, eval_metrics=[FD @ 3, FD @ 2], names=['fwd', 'rev'],
                                       filter_by_topics=False)
            pt.Experiment(systems, topics, qrels, eval_metrics=[FD @ 3], names=['fwd', 'rev'], filter_by_topics=False)
        with warnings.catch_warnings(record=True) as filtered_record:
            warnings.simplefilter('always')
            filtered = pt.Experiment(systems, topics, qrels, eval_metrics=[FD @ 3], names=['fwd', 'rev'])
    finally:
        pf.set_default_encoder(previous)
    said = sorted(str(w.message) for w in record if 'nothing retrieved' in str(w.message))
    assert len(said) == 2  # not one per run, per measure call or per pt.Experiment
    assert said[0].startswith('FD@2: ' + UNRETRIEVED) and said[1].startswith('FD@3: ' + UNRETRIEVED)
    assert not [w for w in filtered_record if 'nothing retrieved' in str(w.message)]
    # the numbers are unchanged: q2's relevant documents against q1's retrieved ones, unless the qrels are filtered
    assert unfiltered.set_index('name').loc['fwd', 'FD@3'] == pytest.approx(
        reference_fd(vec(*REL_1), vec('d0', 'd1', 'd2')), rel=1e-9)
    assert filtered.set_index('name').loc['fwd', 'FD@3'] == pytest.approx(
        reference_fd(vec('d0', 'd1', 'd3'), vec('d0', 'd1', 'd2')), rel=1e-9)


def test_query_retrieved_but_without_relevant_documents_is_left_out(toy, vec):
    vectors, qrels, run = toy
    # q3 is judged (d20: 0) but has no relevant document; q4 is not judged at all. Adding or removing
    # their rankings does not change FD: they are not in the query set.
    only_12 = run[run.qid.isin(['q1', 'q2'])]
    assert calc(FD @ 3, qrels, run, DictEncoder(vectors)) == calc(FD @ 3, qrels, only_12, DictEncoder(vectors))


def test_jackknife_pseudo_values_and_baseline_test(toy, vec):
    import scipy.stats
    vectors, qrels, run = toy
    enc = DictEncoder(vectors)
    m = FD(encoder=enc, jackknife=True) @ 3
    full = reference_fd(vec(*REL_1), vec(*TOP_3))
    # the units are the n = 2 queries with relevant documents; leaving q1 out leaves q2's sets, and the reverse;
    # q3 has no relevant document: it is no unit and gets no value (issue 15 S6)
    expected = {'q1': 2 * full - reference_fd(vec('d10', 'd11', 'd12'), vec('d10', 'd11', 'd12')),
                'q2': 2 * full - reference_fd(vec('d0', 'd1', 'd3'), vec('d0', 'd1', 'd2'))}
    rows = {r.query_id: r.value for r in ir_measures.iter_calc([m], pt.model.to_ir_measures(qrels), pt.model.to_ir_measures(run))}
    # every qrels query gets a row (issue 25 S1): q3 the mean p̄, a unit p̄ + c(p_q − p̄), c = √(M(M−1)/(n(n−1))) = √3
    mean = np.mean(list(expected.values()))
    assert rows.keys() == {'q1', 'q2', 'q3'} and rows['q3'] == pytest.approx(mean, rel=1e-9)
    for q in expected:
        assert rows[q] == pytest.approx(mean + np.sqrt(3) * (expected[q] - mean), rel=1e-9, abs=1e-12)
    agg = ir_measures.calc_aggregate([m], pt.model.to_ir_measures(qrels), pt.model.to_ir_measures(run))[m]
    assert agg == pytest.approx(np.mean(list(expected.values())), rel=1e-9)  # the jackknife bias-corrected FD
    # pt.Experiment's baseline= paired t-test now has per-query differences to test
    other = run.assign(score=np.where(run.docno.isin(['d2', 'd12']), -1.0, run.score))
    topics = pd.DataFrame({'qid': ['q1', 'q2', 'q3'], 'query': ''})  # the qrels' queries: the same universe as above
    table = pt.Experiment([pt.Transformer.from_df(run), pt.Transformer.from_df(other)], topics, qrels, eval_metrics=[m],
                          names=['a', 'b'], baseline=0)
    rows_b = {r.query_id: r.value for r in ir_measures.iter_calc([m], pt.model.to_ir_measures(qrels), pt.model.to_ir_measures(other))}
    # Tukey's t over the n = 2 units, on the M − 1 = 2 degrees of freedom of the 3 rows
    diff = np.array([rows[q] - rows_b[q] for q in ('q1', 'q2')]) / np.sqrt(3)  # the units' pseudo-value differences
    diff += np.mean([rows[q] - rows_b[q] for q in ('q1', 'q2', 'q3')]) * (1 - 1 / np.sqrt(3))
    t = diff.mean() / (diff.std(ddof=1) / np.sqrt(2))
    p = 2 * scipy.stats.t.sf(abs(t), 2)
    assert np.isfinite(table[f'{m} p-value'][1]) and table[f'{m} p-value'][1] == pytest.approx(p, rel=1e-9)


def test_jackknife_does_not_move_with_queries_without_relevant_documents(toy):
    # S6: FD(jackknife=True) used to drift (0.151 → −0.202) as judged queries without relevant documents were
    # added to the qrels, while plain FD stayed put: they counted as units and scaled the bias correction
    vectors, qrels, run = toy
    enc = DictEncoder(vectors)
    calc = lambda m, q: ir_measures.calc_aggregate([m], pt.model.to_ir_measures(q), pt.model.to_ir_measures(run))[m]
    more = pd.concat([qrels, pd.DataFrame({'qid': [f'x{i}' for i in range(20)], 'docno': 'd0', 'label': 0})])
    jk, fd = FD(encoder=enc, jackknife=True) @ 3, FD(encoder=enc) @ 3
    assert calc(fd, more) == calc(fd, qrels)
    assert calc(jk, more) == pytest.approx(calc(jk, qrels), rel=1e-12)


def test_the_private_names_read_on_the_stack_exist():
    # docs/state.md, "Stack inspection": the provider's two stack checks read private names of ir_measures and
    # PyTerrier and fail open (no error) if they move; this test fails instead when an upgrade renames them
    import inspect
    import os
    from ir_measures.providers.fallback_provider import FallbackEvaluator, FallbackProvider
    from pyterrier._evaluation import _execution
    assert 'orig_measures' in FallbackProvider._evaluator.__code__.co_varnames
    assert 'self.evaluators' in inspect.getsource(FallbackEvaluator._iter_calc)
    assert 'batch_size' in inspect.signature(_execution._run_and_evaluate).parameters
    assert f'{os.sep}pyterrier{os.sep}_evaluation{os.sep}' in _execution.__file__
    from pyterrier._evaluation import _experiment  # rows_are_read: the parameters of Experiment, in that folder
    assert {'baseline', 'perquery', 'save_dir'} <= set(inspect.signature(_experiment.Experiment).parameters)
    # warn_once_per_experiment: the renderer PyTerrier makes for each call
    assert 'renderer' in _experiment.Experiment.__code__.co_varnames
    assert pt.Experiment is _experiment.Experiment
    # caller().system: the position of the system being evaluated (a local sysid in both plans) and Experiment's names
    from pyterrier._evaluation import _exec_linear, _exec_tree
    assert 'sysid' in inspect.getsource(_exec_linear) and 'sysid' in inspect.getsource(_exec_tree)
    assert 'names' in inspect.signature(_experiment.Experiment).parameters
    assert f'{os.sep}pyterrier{os.sep}_evaluation{os.sep}' in _experiment.__file__


def test_a_drop_is_logged_once_for_every_measure_of_one_selection(toy, caplog):
    # FD, its terms and SpreadRatio on one selection leave out the same document: one line naming all of them (report
    # evaluates the terms beside FD); FD@2's top 2 hold no document without a vector: no line
    import pyterrier_frechet as pf
    vectors, qrels, run = toy
    enc = DictEncoder({k: v for k, v in vectors.items() if k != 'd2'})
    same = [FD(missing='drop', encoder=enc) @ 3, FD(missing='drop', encoder=enc, term='mean') @ 3,
            pf.SpreadRatio(missing='drop', encoder=enc) @ 3]
    with caplog.at_level(logging.WARNING, logger='pyterrier_frechet'):
        ir_measures.calc_aggregate(same + [FD(missing='drop', encoder=enc) @ 2], pt.model.to_ir_measures(qrels),
                                   pt.model.to_ir_measures(run))
    lines = [r.getMessage() for r in caplog.records if 'without a vector' in r.getMessage()]
    assert len(lines) == 1 and all(str(m) in lines[0] for m in same)
    assert lines[0].endswith("left out 1 of 6 retrieved document(s) without a vector, e.g. ['d2']")
