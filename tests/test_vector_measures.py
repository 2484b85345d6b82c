"""FDInf, KID, KNNPrecision and KNNRecall through ir_measures and pt.Experiment: the same two sets as FD (written
out by hand), scored by independent references (pairwise loops, brute force) or the core with the same seed."""
import ir_measures
import numpy as np
import pandas as pd
import pyterrier as pt
import pytest
from ir_measures import nDCG

import pyterrier_frechet as pf
from pyterrier_frechet.core.extrapolation import fd_infinity
from conftest import DictEncoder
from test_measure import REL_1, TOP_3, URR_3, calc
from test_kid import _kid_loops


def _brute_pr(rel, ret, k):
    radius = lambda s, i: sorted(np.linalg.norm(s[i] - s[j]) for j in range(len(s)) if j != i)[k - 1]
    rr = [radius(rel, i) for i in range(len(rel))]
    gr = [radius(ret, i) for i in range(len(ret))]
    precision = np.mean([any(np.linalg.norm(g - rel[i]) <= rr[i] for i in range(len(rel))) for g in ret])
    recall = np.mean([any(np.linalg.norm(r - ret[i]) <= gr[i] for i in range(len(ret))) for r in rel])
    return precision, recall


@pytest.mark.parametrize('urr,retrieved', [(False, TOP_3), (True, URR_3)])
def test_values_on_hand_built_sets(toy, vec, urr, retrieved):
    vectors, qrels, run = toy
    enc = DictEncoder(vectors)
    rel, ret = vec(*REL_1), vec(*retrieved)
    assert calc(pf.KID(urr=urr) @ 3, qrels, run, enc) == pytest.approx(_kid_loops(rel, ret), rel=1e-12)
    assert calc(pf.KID(urr=urr, degree=2) @ 3, qrels, run, enc) == pytest.approx(_kid_loops(rel, ret, 2), rel=1e-12)
    precision, recall = _brute_pr(rel, ret, 2)
    assert calc(pf.KNNPrecision(urr=urr, k=2) @ 3, qrels, run, enc) == pytest.approx(precision, abs=1e-15)
    assert calc(pf.KNNRecall(urr=urr, k=2) @ 3, qrels, run, enc) == pytest.approx(recall, abs=1e-15)
    expected = fd_infinity(rel, ret, points=4, min_fraction=0.5, seed=7).value
    assert calc(pf.FDInf(urr=urr, points=4, seed=7) @ 3, qrels, run, enc) == pytest.approx(expected, rel=1e-12)


def test_knn_sets_of_different_kinds(toy, vec):
    # q2's relevant documents d10-d12 come from a cluster shifted by +1 from q1's (conftest), so a run retrieving only
    # q1-like documents has lower recall of the relevant set than one retrieving both clusters.
    vectors, qrels, run = toy
    enc = DictEncoder(vectors)
    both = calc(pf.KNNRecall(k=2) @ 3, qrels, run, enc)
    narrow = run[run.qid == 'q1']
    assert calc(pf.KNNRecall(k=2) @ 3, qrels, narrow, enc) == pytest.approx(_brute_pr(vec(*REL_1), vec('d0', 'd1', 'd2'), 2)[1])
    assert 0 <= calc(pf.KNNRecall(k=2) @ 3, qrels, narrow, enc) <= both <= 1


def test_in_experiment_and_parsing(toy):
    vectors, qrels, run = toy
    pf.set_default_encoder(DictEncoder(vectors))
    try:
        measures = [pf.FD @ 3, pf.KID @ 3, pf.FDInf(points=3) @ 3, pf.KNNPrecision(k=2) @ 3, pf.KNNRecall(k=2) @ 3, nDCG @ 3]
        table = pt.Experiment([pt.Transformer.from_df(run)], pd.DataFrame({'qid': ['q1', 'q2'], 'query': ''}), qrels,
                              eval_metrics=measures, names=['sys'])
        direct = ir_measures.calc_aggregate(measures, pt.model.to_ir_measures(qrels), pt.model.to_ir_measures(run))
    finally:
        pf.set_default_encoder(None)
    for m in measures[:-1]:  # set measures: the same value whichever queries are averaged (nDCG is not)
        assert table[str(m)][0] == pytest.approx(direct[m], rel=1e-12), m
    assert ir_measures.parse_measure('KID(degree=2)@10') == pf.KID(10, degree=2)
    assert ir_measures.parse_measure('FDInf(points=5,min_fraction=0.25)@10') == pf.FDInf(10, points=5, min_fraction=0.25)
    assert ir_measures.parse_measure('KNNRecall(k=5)@10') == pf.KNNRecall(10, k=5)
    assert [m.HIGHER_IS_BETTER for m in (pf.FDInf, pf.KID, pf.KNNPrecision, pf.KNNRecall)] == [False, False, True, True]


@pytest.mark.parametrize('measure,match', [
    (pf.KNNPrecision(k=6) @ 3, 'k = 6'),
    (pf.FDInf(min_fraction=0.1) @ 3, 'too small'),
    (pf.KID(degree=0) @ 3, 'degree'),
])
def test_bad_parameters_name_the_measure(toy, measure, match):
    vectors, qrels, run = toy
    with pytest.raises(ValueError, match=match) as info:
        calc(measure, qrels, run, DictEncoder(vectors))
    assert measure.NAME in str(info.value)


def test_bootstrap_refuses_measures_without_a_fast_path(toy):
    vectors, qrels, run = toy
    with pytest.raises(ValueError, match='no fast path'):
        pf.bootstrap({'a': run}, qrels, [pf.KID(encoder=DictEncoder(vectors)) @ 3], n_samples=5)


def test_bootstrap_refuses_jackknife_fd(toy):
    vectors, qrels, run = toy
    with pytest.raises(ValueError, match='no fast path'):
        pf.bootstrap({'a': run}, qrels, [pf.FD(encoder=DictEncoder(vectors), jackknife=True) @ 3], n_samples=5)
