"""FD(weighting='query'): every query weighs 1 on each side (issue 16, item 2)."""
import ir_measures
import numpy as np
import pandas as pd
import pyterrier as pt
import pytest
import scipy.linalg

import pyterrier_frechet as pf
from pyterrier_frechet.analyses.bootstrap import bootstrap, bootstrap_naive
from conftest import DictEncoder, reference_fd


def _reference(x, wx, y, wy):
    """The weighted FD from first principles in 30-digit arithmetic (conftest.reference_fd with aweights)."""
    return reference_fd(x, y, x_weights=wx, y_weights=wy)


def test_weighted_core_equals_numpy_cov_with_aweights():
    rng = np.random.default_rng(0)
    x, y = rng.normal(size=(30, 5)), rng.normal(size=(12, 5)) + 0.5
    wx, wy = rng.random(30), rng.random(12)
    assert pf.frechet_distance_weighted(x, wx, y, wy) == pytest.approx(_reference(x, wx, y, wy), rel=1e-10)
    # unit weights: the plain FD
    assert pf.frechet_distance_weighted(x, np.ones(30), y, np.ones(12)) == pytest.approx(pf.frechet_distance(x, y), rel=1e-12)
    # more vectors than dimensions on both sides (the QR-reduced route)
    x, y = rng.normal(size=(60, 4)), rng.normal(size=(40, 4)) * 2
    wx, wy = rng.random(60), rng.random(40)
    assert pf.frechet_distance_weighted(x, wx, y, wy) == pytest.approx(_reference(x, wx, y, wy), rel=1e-10)
    with pytest.raises(ValueError, match='weights must be 30 finite non-negative'):
        pf.frechet_distance_weighted(x[:30], -np.ones(30), y[:, :4], wy)


def test_fd_weighting_query_in_ir_measures(toy, vec):
    vectors, qrels, run = toy
    m = pf.FD(encoder=DictEncoder(vectors), weighting='query') @ 3
    value = ir_measures.calc_aggregate([m], pt.model.to_ir_measures(qrels), pt.model.to_ir_measures(run))[m]
    # q1: relevant d0, d1, d3 (3 → 1/3 each), top 3 d0 d1 d2; q2: relevant d10 d11 d12, top 3 d10 d11 d12
    rel, ret = vec('d0', 'd1', 'd3', 'd10', 'd11', 'd12'), vec('d0', 'd1', 'd2', 'd10', 'd11', 'd12')
    assert value == pytest.approx(_reference(rel, np.full(6, 1 / 3), ret, np.full(6, 1 / 3)), rel=1e-9)
    # unequal counts: at most 2 relevant for q1 (per_query), 3 for q2: weights 1/2 and 1/3
    m2 = pf.FD(encoder=DictEncoder(vectors), weighting='query', per_query=2) @ 3
    value2 = ir_measures.calc_aggregate([m2], pt.model.to_ir_measures(qrels), pt.model.to_ir_measures(run))[m2]
    kept = pf.balance_qrels(qrels[qrels.label >= 1], 2, seed=0)
    rel2 = vec(*kept.sort_values(['qid', 'docno']).docno)
    w2 = np.array([1 / 2 if q == 'q1' else 1 / len(kept[kept.qid == 'q2']) for q in kept.sort_values(['qid', 'docno']).qid])
    assert value2 == pytest.approx(_reference(rel2, w2, ret, np.full(6, 1 / 3)), rel=1e-9)
    assert "weighting='query'" in str(m)
    with pytest.raises(ValueError, match='weighting'):
        (pf.FD(weighting='topic') @ 3).validate_params()
    with pytest.raises(ValueError, match="jackknife=True is not available with weighting='query'"):
        (pf.FD(weighting='query', jackknife=True) @ 3).validate_params()


def test_bootstrap_fast_path_equals_plain_loop_with_query_weighting(toy):
    vectors, qrels, run = toy
    m = pf.FD(encoder=DictEncoder(vectors), weighting='query') @ 3
    fast = bootstrap({'sys': run}, qrels, [m], n_samples=40, seed=7, verbose=False).samples['sys'][str(m)]
    naive = bootstrap_naive(run, qrels, m, n_samples=40, seed=7)
    assert np.isfinite(naive).sum() >= 20
    np.testing.assert_array_equal(np.isfinite(fast), np.isfinite(naive))
    np.testing.assert_allclose(fast[np.isfinite(fast)], naive[np.isfinite(naive)], rtol=1e-7, atol=1e-12)
    torch = bootstrap({'sys': run}, qrels, [m], n_samples=40, seed=7, verbose=False, backend='torch', device='cpu')
    np.testing.assert_allclose(torch.samples['sys'][str(m)], fast, rtol=1e-8, atol=1e-12, equal_nan=True)
