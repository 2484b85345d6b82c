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
