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
