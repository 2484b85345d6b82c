"""FD's two terms as measures (FD(term='mean'), FD(term='cov')): against the terms written here from the definition
(weighted mean; unbiased weighted covariance; Tr((Σ₁^½Σ₂Σ₁^½)^½) from scipy's sqrtm) on the sets every FD variant
selects (urr, per_query, weighting, rel), and through FD's resampling: in every bootstrap sample, leave-out,
randomisation swap and influence the two terms sum to FD's value, the mean term equals its definition, and the
per-query rows of pt.Experiment add up."""
from typing import NamedTuple, Optional

import ir_measures
import numpy as np
import pandas as pd
import pytest
import scipy.linalg

import pyterrier_frechet as pf
from pyterrier_frechet import FD
from pyterrier_frechet.core.influence import mean_term_influence
from pyterrier_frechet.core.weighted import QueryStats, mean_terms, per_query_weighted
from pyterrier_frechet.measures.definitions import GAUSSIAN, TERMS
from pyterrier_frechet.measures.resampling import numpy_engine


def _own_terms(rel, rel_q, ret, ret_q, w=None, query_weighting=False):
    """(mean term, covariance term) of the two sides, query q drawn w[q] times (its documents copied w[q] times, each
    weighing 1/n_q under query weighting): numpy.cov with those frequency weights (and reliability weights), and the
    trace of the square root by scipy's sqrtm (a reference the package never uses). Non-integer w: the mean term only
    (the covariance term is NaN)."""
    def gaussian(x, q):
        weights = np.ones(q.max() + 1) if w is None else np.asarray(w, dtype=np.float64)
        doc = 1.0 / np.bincount(q)[q] if query_weighting else np.ones(len(q))
        keep = weights[q] > 0
        mean = np.average(x[keep], axis=0, weights=(weights[q] * doc)[keep])
        if not np.array_equal(weights, np.round(weights)):
            return mean, np.full((x.shape[1], x.shape[1]), np.nan)
        return mean, np.cov(x[keep].T, fweights=weights[q][keep].astype(int), aweights=doc[keep])
    (m1, c1), (m2, c2) = gaussian(rel, rel_q), gaussian(ret, ret_q)
    if np.isnan(c1).any():
        return float((m1 - m2) @ (m1 - m2)), np.nan
    root = scipy.linalg.sqrtm(c1)
    tr_sqrt = float(np.trace(scipy.linalg.sqrtm(root @ c2 @ root)).real)
    return float((m1 - m2) @ (m1 - m2)), float(np.trace(c1) + np.trace(c2) - 2 * tr_sqrt)


class Stats(NamedTuple):  # what FD's resampling reads (evaluation.vector_statistics.VectorStatistics' fields)
    rel: QueryStats
    ret: QueryStats
    shift: np.ndarray
    units: np.ndarray
    shared: Optional[object] = None


def _world(seed=0, d=5, n_queries=9, k=4, query_weighting=False):
    rng = np.random.default_rng(seed)
    rel_q = np.repeat(np.arange(n_queries), rng.integers(2, 6, n_queries))
    rel = rng.normal(0.3, 1.0, size=(len(rel_q), d))
    ret_q = np.repeat(np.arange(n_queries), k)
    ret = rng.normal(0.0, 0.7, size=(len(ret_q), d)) + 0.5 * rel[rng.integers(0, len(rel), len(ret_q))]
    shift = rel.mean(axis=0)
    rs, ts = QueryStats(rel_q, rel, n_queries, shift), QueryStats(ret_q, ret, n_queries, shift)
    if query_weighting:
        rs, ts = per_query_weighted(rs), per_query_weighted(ts)
    return (rel, rel_q, ret, ret_q), Stats(rs, ts, shift, np.ones(n_queries, dtype=bool))


@pytest.mark.parametrize('query_weighting', [False, True])
def test_bootstrap_samples_of_the_terms_are_their_definitions_and_sum_to_fd(query_weighting):
    vectors, stats = _world(query_weighting=query_weighting)
    weights = np.random.default_rng(1).multinomial(9, np.full(9, 1 / 9), size=12).astype(np.float64)
    fd = GAUSSIAN.samples(FD, stats, weights, numpy_engine())
    mean = TERMS['mean'].samples(FD, stats, weights, numpy_engine())
    cov = TERMS['cov'].samples(FD, stats, weights, numpy_engine())
    np.testing.assert_allclose(mean + cov, fd, rtol=1e-13)
    for row, m, c in zip(weights, mean, cov):
        own = _own_terms(*vectors, w=row, query_weighting=query_weighting)
        assert m == pytest.approx(own[0], rel=1e-12)
        assert c == pytest.approx(own[1], rel=1e-8)  # sqrtm's own round-off at a singular covariance


def test_a_sample_without_a_gaussian_is_nan_in_both_terms():
    _, stats = _world()
    one_query = np.zeros((1, 9))
    one_query[0, 0] = 1.0  # query 0 alone: 4 retrieved, 2–5 relevant vectors (a Gaussian on each side)
    no_query = np.zeros((1, 9))
    assert np.isfinite(mean_terms(stats.rel, one_query, [stats.ret], [one_query])).all()
    assert np.isnan(mean_terms(stats.rel, no_query, [stats.ret], [no_query])).all()
    assert np.isnan(TERMS['cov'].samples(FD, stats, no_query, numpy_engine())).all()


def test_leave_outs_of_the_terms_are_the_terms_of_the_vectors_left_in():
    vectors, stats = _world(seed=3)
    groups = np.arange(9)
    fd = GAUSSIAN.leave_out(FD, stats, groups, 9, numpy_engine())
    mean = TERMS['mean'].leave_out(FD, stats, groups, 9, numpy_engine())
    cov = TERMS['cov'].leave_out(FD, stats, groups, 9, numpy_engine())
    np.testing.assert_allclose(mean + cov, fd, rtol=1e-13)
    for g in range(9):
        w = np.ones(9)
        w[g] = 0.0
        own = _own_terms(*vectors, w=w)
        assert mean[g] == pytest.approx(own[0], rel=1e-12)
        assert cov[g] == pytest.approx(own[1], rel=1e-8)


def test_swapped_terms_sum_to_fds_randomisation_statistic():
    (rel, rel_q, ret, ret_q), a = _world(seed=5)
    other = np.random.default_rng(6).normal(size=ret.shape)
    b = a._replace(ret=QueryStats(ret_q, other, 9, a.shift))
    swaps = (np.random.default_rng(7).random((6, 9)) < 0.5).astype(np.float64)
    fd = GAUSSIAN.swapped(FD, a, b, swaps, numpy_engine())
    mean = TERMS['mean'].swapped(FD, a, b, swaps, numpy_engine())
    cov = TERMS['cov'].swapped(FD, a, b, swaps, numpy_engine())
    np.testing.assert_allclose(mean + cov, fd, rtol=1e-12, atol=1e-13)
    # the mean term of the first permutation, by hand: A's retrieved vectors where kept, B's where swapped
    keep = swaps[0][ret_q] == 0
    mixed = np.where(keep[:, None], ret, other)
    opposite = np.where(keep[:, None], other, ret)
    own = _own_terms(rel, rel_q, mixed, ret_q)[0] - _own_terms(rel, rel_q, opposite, ret_q)[0]
    assert mean[0] == pytest.approx(own, rel=1e-12)


@pytest.mark.parametrize('query_weighting', [False, True])
def test_the_mean_terms_influence_is_its_derivative(query_weighting):
    vectors, stats = _world(seed=8, query_weighting=query_weighting)
    got = mean_term_influence(stats.rel, stats.ret, np.ones(9))
    eps = 1e-6
    for q in range(9):
        up, down = np.ones(9), np.ones(9)
        up[q] += eps
        down[q] -= eps
        want = (_own_terms(*vectors, w=up, query_weighting=query_weighting)[0]
                - _own_terms(*vectors, w=down, query_weighting=query_weighting)[0]) / (2 * eps)
        assert got[q] == pytest.approx(want, rel=1e-6, abs=1e-9)
    fd = GAUSSIAN.influence(FD, stats)
    np.testing.assert_allclose(TERMS['mean'].influence(FD, stats) + TERMS['cov'].influence(FD, stats), fd, rtol=1e-12)


# --- the measures, on the sets each FD variant selects -------------------------------------------------------------

@pytest.fixture(scope='module')
def toy(tmp_path_factory):
    rng = np.random.default_rng(11)
    docnos = [f'd{i}' for i in range(240)]
    prefix = tmp_path_factory.mktemp('terms') / 'vectors'
    vectors = rng.normal(size=(240, 6))
    np.save(f'{prefix}.npy', vectors)
    (prefix.parent / 'vectors.ids.txt').write_text('\n'.join(docnos) + '\n')
    queries = [f'q{i}' for i in range(10)]
    qrels = pd.DataFrame([(q, f'd{(17 * i + j) % 240}', 2 if j < 2 else (1 if j < 5 else 0))
                          for i, q in enumerate(queries) for j in range(7)], columns=['query_id', 'doc_id', 'relevance'])
    runs = {name: pd.DataFrame([(q, f'd{(17 * i + j + shift) % 240}', 20.0 - j) for i, q in enumerate(queries)
                                for j in range(15)], columns=['query_id', 'doc_id', 'score'])
            for name, shift in (('near', 1), ('far', 9))}
    return pf.VectorStore(str(prefix)), dict(zip(docnos, vectors)), qrels, runs


VARIANTS = [dict(), dict(rel=2), dict(urr=True), dict(per_query=3), dict(weighting='query'), dict(weighting='query', rel=2)]


@pytest.mark.parametrize('params', VARIANTS, ids=[str(p) or 'default' for p in VARIANTS])
def test_the_terms_of_every_variant_are_their_definitions_and_sum_to_fd(toy, params):
    store, vec, qrels, runs = toy
    measures = [FD(encoder=store, **{'rel': 1, **params}, term=term) @ 5 for term in ('fd', 'mean', 'cov')]
    table = pf.evaluate(runs, qrels, measures).set_index('name')
    for name, run in runs.items():
        sets = pf.fd_sets(measures[0], qrels, run)
        rel = np.array([vec[d] for d in sets.relevant.doc_id])
        ret = np.array([vec[d] for d in sets.retrieved.doc_id])
        codes = {q: i for i, q in enumerate(sorted(set(sets.relevant.query_id)))}
        own = _own_terms(rel, sets.relevant.query_id.map(codes).to_numpy(), ret,
                         sets.retrieved.query_id.map(codes).to_numpy(), query_weighting='weighting' in params)
        fd, mean, cov = (float(table.loc[name, str(m)]) for m in measures)
        assert mean == pytest.approx(own[0], rel=1e-12)
        assert cov == pytest.approx(own[1], rel=1e-8)
        assert mean + cov == pytest.approx(fd, rel=1e-14)


def test_the_rows_of_the_terms_add_up_to_fds_rows_and_average_to_their_values(toy):
    store, _, qrels, runs = toy
    measures = [FD(encoder=store, rel=1, term=term) @ 5 for term in ('fd', 'mean', 'cov')]
    rows = pd.DataFrame([(str(m.measure), m.query_id, m.value)
                         for m in ir_measures.iter_calc(measures, qrels, runs['far'])], columns=['m', 'q', 'v'])
    wide = rows.pivot(index='q', columns='m', values='v')
    fd, mean, cov = (wide[str(m)] for m in measures)
    np.testing.assert_allclose(mean + cov, fd, rtol=1e-12)
    values = pf.evaluate({'far': runs['far']}, qrels, measures).iloc[0]
    for m in measures:
        assert wide[str(m)].mean() == pytest.approx(float(values[str(m)]), rel=1e-12)
    assert wide[str(measures[1])].std() > 0  # centred pseudo-values, not the value repeated


def test_influence_rows_of_the_terms_add_up(toy):
    store, _, qrels, runs = toy
    measures = [FD(encoder=store, rel=1, term=term, rows='influence') @ 5 for term in ('fd', 'mean', 'cov')]
    rows = pd.DataFrame([(str(m.measure), m.query_id, m.value)
                         for m in ir_measures.iter_calc(measures, qrels, runs['near'])], columns=['m', 'q', 'v'])
    wide = rows.pivot(index='q', columns='m', values='v')
    np.testing.assert_allclose(wide[str(measures[1])] + wide[str(measures[2])], wide[str(measures[0])], rtol=1e-12)


def test_the_bootstrap_and_the_paired_test_take_the_terms(toy):
    store, _, qrels, runs = toy
    measures = [FD(encoder=store, rel=1, term=term) @ 5 for term in ('fd', 'mean', 'cov')]
    boot = pf.bootstrap(runs, qrels, measures, n_samples=60, verbose=False)
    summary = boot.summary.set_index(['name', 'measure'])
    for name in runs:
        point = [float(summary.loc[(name, str(m)), 'value']) for m in measures]
        assert point[1] + point[2] == pytest.approx(point[0], rel=1e-13)
    compared = pf.compare_systems(runs, qrels, measures, baseline='near', boot=boot, verbose=False, n_permutations=200)
    assert len(compared) == 3 and set(compared.test) == {'jackknife'}
    for column in ('p_jackknife', 'p_randomisation'):
        assert compared[column].between(0, 1).all()
    diff = compared.set_index('measure')['diff']
    assert diff[str(measures[1])] + diff[str(measures[2])] == pytest.approx(diff[str(measures[0])], rel=1e-12)


def test_term_refuses_a_bad_value_and_jackknife():
    with pytest.raises(ValueError, match='term'):
        (FD(term='trace') @ 10).validate_params()
    with pytest.raises(ValueError, match="jackknife=True is not available with term='mean'"):
        (FD(term='mean', jackknife=True) @ 10).validate_params()
    assert str(ir_measures.parse_measure("FD(term='cov')@10")) == "FD(term='cov')@10"
