"""Qrels and runs as checked frames (evaluation/frames.py): what a malformed frame is told."""
import pytest

import pyterrier_frechet as pf


def test_frames_missing_columns_name_both_spellings(two_queries):
    vectors, qrels, run = two_queries
    with pytest.raises(ValueError, match=r"lack column\(s\) \['relevance'\].*qid, docno, label \(PyTerrier\)"):
        pf.evaluate({'a': run}, qrels.drop(columns='label'), ['nDCG@3'])
    with pytest.raises(ValueError, match=r"run 'a'.*lacks column\(s\) \['score'\].*qid, docno, score \(PyTerrier\)"):
        pf.evaluate({'a': run.drop(columns='score')}, qrels, ['nDCG@3'])
    with pytest.raises(ValueError, match='both PyTerrier and ir_measures column names'):
        pf.evaluate({'a': run}, qrels.assign(relevance=qrels.label), ['nDCG@3'])


def test_prepared_frames_hold_text_in_object_columns_for_ir_measures():
    """ir_measures iterates a frame's rows (itertuples) for every evaluation; pandas 3's Arrow-backed str columns
    make that 2-4x slower. Prepared qrels and runs hold their ids, and a run's other text columns (PyTerrier's name,
    query), as Python str in object columns — whatever dtype came in (Arrow str, ints, object) — and preparing a
    prepared frame again returns the same ids."""
    import pandas as pd
    from pyterrier_frechet.evaluation.frames import prepare_qrels, prepare_run
    run = pd.DataFrame({'qid': pd.Series(['1', '2'], dtype='str'), 'docno': [10, 11], 'score': [1.0, 0.5],
                        'name': pd.Series(['bm25', 'bm25'], dtype='str')})
    qrels = pd.DataFrame({'qid': [1, 2], 'docno': pd.Series(['10', '11'], dtype='str'), 'label': [1, 0]})
    r, q = prepare_run(run, 'run'), prepare_qrels(qrels, 'qrels')
    for frame, columns in ((r, ('query_id', 'doc_id', 'name')), (q, ('query_id', 'doc_id'))):
        for c in columns:
            assert frame[c].dtype == object and all(type(v) is str for v in frame[c]), c
    assert r['doc_id'].tolist() == ['10', '11'] and q['query_id'].tolist() == ['1', '2']
    again = prepare_run(r, 'run')
    assert again['query_id'].tolist() == r['query_id'].tolist() and again['query_id'].dtype == object


@pytest.mark.parametrize('scores', ['float', 'int with ties'])
def test_a_run_as_dict_of_dicts_gives_every_ir_measures_provider_the_values_of_the_frame(scores):
    """run_dict hands ir_measures the dict of dicts its providers would build from the frame, once: differential
    against ir_measures reading the frame itself, for measures of three providers (pytrec_eval: nDCG, AP, P; msmarco:
    RR; the fallback: Judged), scores with ties (tie-breaking is the providers' own, whatever the order), a query
    the qrels lack and a qrels query the run lacks."""
    import ir_measures
    import numpy as np
    import pandas as pd
    from pyterrier_frechet.evaluation.frames import prepare_qrels, prepare_run, run_dict
    rng = np.random.default_rng(3)
    qrels = pd.DataFrame([(f'q{q}', f'd{d}', int(rng.integers(0, 3))) for q in range(6) for d in range(12)],
                         columns=['qid', 'docno', 'label'])
    rows = [(f'q{q}', f'd{d}', float(rng.normal()) if scores == 'float' else float(rng.integers(0, 3)))
            for q in range(7) if q != 2 for d in rng.permutation(15)[:10]]
    run = pd.DataFrame(rows, columns=['qid', 'docno', 'score'])
    measures = [ir_measures.nDCG @ 5, ir_measures.AP, ir_measures.P @ 3, ir_measures.RR @ 10, ir_measures.Judged @ 5]
    q_ir, r_ir = prepare_qrels(qrels, 'qrels'), prepare_run(run, 'run')
    as_dict = run_dict(r_ir)
    assert sum(len(v) for v in as_dict.values()) == len(run) and list(as_dict) == list(dict.fromkeys(r_ir.query_id))
    evaluator = ir_measures.evaluator(measures, q_ir)
    assert dict(evaluator.calc_aggregate(as_dict)) == dict(ir_measures.calc_aggregate(measures, q_ir, r_ir))
    per_query = lambda got: sorted((m.query_id, str(m.measure), m.value) for m in got)
    assert per_query(evaluator.iter_calc(as_dict)) == per_query(ir_measures.iter_calc(measures, q_ir, r_ir))
    assert run_dict(r_ir.iloc[:0]) is not None and len(run_dict(r_ir.iloc[:0])) == 0
