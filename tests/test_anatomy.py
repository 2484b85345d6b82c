"""What moves FD (analyses/anatomy.py): FD's two terms and the spread ratio per system, against the terms and the
total variances computed here from the vectors of the sets FD selects (numpy.cov, scipy's sqrtm), and the words
said of them."""
import numpy as np
import pytest
import scipy.linalg

import pyterrier_frechet as pf
from pyterrier_frechet import FD
from pyterrier_frechet.analyses.anatomy import fd_anatomy, spread_words
from test_disagreement import flip  # noqa: F401  (the flip world fixture, used by name)


def _own(store, measure, qrels, run):
    sets = pf.fd_sets(measure, qrels, run)
    vec = dict(zip(store.docnos, store.vectors))
    rel = np.array([vec[d] for d in sets.relevant.doc_id], dtype=np.float64)
    ret = np.array([vec[d] for d in sets.retrieved.doc_id], dtype=np.float64)
    c1, c2 = np.cov(rel.T), np.cov(ret.T)
    root = scipy.linalg.sqrtm(c1)
    cov_term = float(np.trace(c1) + np.trace(c2) - 2 * np.trace(scipy.linalg.sqrtm(root @ c2 @ root)).real)
    diff = rel.mean(0) - ret.mean(0)
    # within queries: each query's own covariance traces, over the queries with 2 or more vectors on both sides
    num = den = 0.0
    for q in sorted(set(sets.relevant.query_id)):
        r = rel[(sets.relevant.query_id == q).to_numpy()]
        t = ret[(sets.retrieved.query_id == q).to_numpy()]
        if len(r) >= 2 and len(t) >= 2:
            num, den = num + np.trace(np.cov(t.T)), den + np.trace(np.cov(r.T))
    return float(diff @ diff), cov_term, float(np.trace(c2) / np.trace(c1)), num / den


def test_the_anatomy_is_the_terms_and_traces_of_the_selected_sets(flip):  # noqa: F811
    store, qrels, runs = flip
    measures = [FD(encoder=store) @ 10, FD(encoder=store, per_query=2) @ 10, 'nDCG@10']
    got = fd_anatomy(runs, qrels, measures, baseline='broad')
    assert len(got) == 4 and set(got['measure']) == {str(m) for m in measures[:2]}
    for r in got.itertuples():
        m = measures[0] if r.measure == str(measures[0]) else measures[1]
        mean, cov, spread, within = _own(store, m, qrels, runs[r.name])
        assert r.mean_term == pytest.approx(mean, rel=1e-9, abs=1e-15)
        assert r.cov_term == pytest.approx(cov, rel=1e-7, abs=1e-12)
        assert r.spread == pytest.approx(spread, rel=1e-12)
        assert r.spread_within == pytest.approx(within, rel=1e-12)
        assert r.mean_term + r.cov_term == pytest.approx(r.fd, rel=1e-13, abs=1e-18)
    narrow = got[(got['name'] == 'narrow') & (got['measure'] == str(measures[0]))].iloc[0]
    base = got[(got['name'] == 'broad') & (got['measure'] == str(measures[0]))].iloc[0]
    assert narrow.fd_change == pytest.approx(narrow.fd - base.fd, rel=1e-14)
    assert narrow.moved_by == 'covariance term' and narrow.spread < 0.5
    assert narrow.note.startswith(f'narrow: {measures[0]} +') and 'vs broad (mean term +' in narrow.note
    assert 'retrieved set narrower' in narrow.note and narrow.note.endswith("within queries narrower (0.24× the relevant "
                                                                            "set's variance)")
    assert "(0.99× the relevant set's variance); within queries broader (1.22×" in base.note


def test_without_a_baseline_each_system_says_its_own_decomposition(flip):  # noqa: F811
    store, qrels, runs = flip
    got = fd_anatomy(runs, qrels, [FD(encoder=store, weighting='query') @ 10])
    assert got['baseline'].isna().all() and got['fd_change'].isna().all()
    r = got.iloc[1]
    assert r.note == (f'narrow: {r.measure} {r.fd:.4g} = mean term {r.mean_term:.4g} + covariance term '
                      f'{r.cov_term:.4g}; {spread_words(r.spread)}; within queries '
                      f'{spread_words(r.spread_within)[len("retrieved set "):]}')


def test_measures_without_terms_give_an_empty_frame_and_a_bad_baseline_is_refused(flip):  # noqa: F811
    store, qrels, runs = flip
    assert fd_anatomy(runs, qrels, ['nDCG@10', FD(encoder=store, term='cov') @ 10]).empty
    with pytest.raises(ValueError, match="baseline 'bm25' is not one of the systems"):
        fd_anatomy(runs, qrels, [FD(encoder=store) @ 10], baseline='bm25')


@pytest.mark.parametrize('ratio, words', [(0.5, 'narrower (0.50×'), (0.96, 'about as spread as the relevant set (0.96×'),
                                          (1.2, 'broader (1.20×'), (float('nan'), 'spread not defined')])
def test_spread_words(ratio, words):
    assert words in spread_words(ratio)


def test_spread_within_queries_refuses_query_weighting_and_is_nan_without_a_query_of_two():
    with pytest.raises(ValueError, match="scope='query' compares each query with itself"):
        (pf.SpreadRatio(scope='query', weighting='query') @ 10).validate_params()
    from pyterrier_frechet.core.frechet import query_total_variances
    keys, traces = query_total_variances(np.array([[0.0, 0.0], [2.0, 0.0], [5.0, 5.0]]), ['a', 'a', 'b'])
    assert keys.tolist() == ['a', 'b'] and traces[0] == pytest.approx(2.0, rel=1e-15) and np.isnan(traces[1])
