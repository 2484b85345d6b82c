"""evaluation/relevance.py: the note on which label counts as relevant, given where qrels are graded and a measure
leaves ``rel`` unset, and only there (names or measures; PyTerrier's or ir_measures' column names)."""
import warnings

import pandas as pd

import pyterrier_frechet as pf
from pyterrier_frechet.evaluation.relevance import graded_threshold_note, warn_graded_threshold

GRADED = pd.DataFrame({'qid': ['1', '1', '2'], 'docno': ['a', 'b', 'c'], 'label': [3, 1, 0]})


def test_the_note_names_the_measures_that_leave_rel_unset():
    note = graded_threshold_note(GRADED, ['FD@10', 'FD(rel=2)@10', 'RR@10', 'nDCG@10', pf.FD(urr=True) @ 5])
    assert note == ("graded qrels (labels up to 3): FD@10, RR@10, FD(urr=True)@5 count label >= 1 as relevant "
                    "(ir_measures' default); for TREC DL's convention (label >= 2, as trec_eval -l 2) pass rel=2 "
                    "(--rel 2)")
    ir_names = GRADED.rename(columns={'qid': 'query_id', 'docno': 'doc_id', 'label': 'relevance'})
    assert graded_threshold_note(ir_names, ['FD@10']).startswith('graded qrels (labels up to 3): FD@10 count')


def test_no_note_for_binary_qrels_set_thresholds_or_measures_without_rel():
    assert graded_threshold_note(GRADED.assign(label=[1, 1, 0]), ['FD@10']) == ''
    assert graded_threshold_note(GRADED, ['FD(rel=1)@10', 'nDCG@10']) == ''
    assert graded_threshold_note(GRADED.iloc[:0], ['FD@10']) == ''
    with warnings.catch_warnings():
        warnings.simplefilter('error')
        warn_graded_threshold(GRADED, ['nDCG@10'])  # nothing to say: no warning
