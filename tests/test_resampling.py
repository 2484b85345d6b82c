"""The measures' resamplings (measures/resampling.py, FD's and CFD's in measures/definitions.py) against plain
computations over the drawn queries: each bootstrap sample and each leave-out is the measure of the drawn queries'
documents gathered again, each query repeated as often as it was drawn (as its own query for CFD)."""
import ir_measures
import numpy as np
import pandas as pd
import pytest

import pyterrier_frechet as pf
from pyterrier_frechet.analyses.bootstrap import draw_counts
from pyterrier_frechet.core.conditional import conditional_frechet_distance
from pyterrier_frechet.measures.resampling import PER_QUERY, PerQueryMean, Resampling
from conftest import DictEncoder, reference_fd_eigh

N_QUERIES, K, D = 8, 5, 4


@pytest.fixture(scope='module')
def world():
    rng = np.random.default_rng(11)
    vectors, qrels, run = {}, [], []
    for q in range(N_QUERIES):
        centre = rng.normal(size=D)
        for i in range(6):
            vectors[f'r{q}_{i}'] = centre + rng.normal(size=D)
            qrels.append((f'q{q}', f'r{q}_{i}', 1 + i % 2))
        for i in range(10):
            vectors[f'x{q}_{i}'] = centre + 1.5 * rng.normal(size=D)
            run.append((f'q{q}', f'x{q}_{i}' if i % 3 else f'r{q}_{i // 3}', 10.0 - i + 0.1 * rng.normal()))
    return vectors, pd.DataFrame(qrels, columns=['qid', 'docno', 'label']), pd.DataFrame(run, columns=['qid', 'docno', 'score'])


def _sets(vectors, qrels, run, weights):
    """Relevant and top-K vectors, each query's repeated ``weights[q]`` times, with a query id per copy."""
    queries = sorted(qrels.qid.unique())
    top = run.sort_values(['qid', 'score'], ascending=[True, False]).groupby('qid').head(K)
    rel, rel_q, ret, ret_q = [], [], [], []
    for q, w in zip(queries, weights):
        for copy in range(int(w)):
            rel += [vectors[d] for d in qrels.docno[qrels.qid == q]]
            rel_q += [f'{q}#{copy}'] * int((qrels.qid == q).sum())
            ret += [vectors[d] for d in top.docno[top.qid == q]]
            ret_q += [f'{q}#{copy}'] * int((top.qid == q).sum())
    return np.array(rel), np.array(rel_q), np.array(ret), np.array(ret_q)


@pytest.mark.parametrize('name', ['FD', 'CFD'])
def test_vector_samples_and_leave_outs_are_the_measure_of_the_drawn_documents(world, name):
    vectors, qrels, run = world
    measure = getattr(pf, name) @ K
    with pf.default_encoder(DictEncoder(vectors)):
        boot = pf.bootstrap({'s': run}, qrels, [measure], n_samples=25, seed=2, verbose=False)

    def plain(weights):
        rel, rel_q, ret, ret_q = _sets(vectors, qrels, run, weights)
        return reference_fd_eigh(rel, ret) if name == 'FD' else conditional_frechet_distance(rel, rel_q, ret, ret_q)

    reference = [plain(c) for c in draw_counts(N_QUERIES, 25, 2)]
    np.testing.assert_allclose(boot.samples['s'][str(measure)], reference, rtol=1e-9)
    # the default interval (jackknife_log) keeps the leave-one-query-out values
    leave_outs = [plain(np.arange(N_QUERIES) != q) for q in range(N_QUERIES)]
    np.testing.assert_allclose(boot.jackknife['s'][str(measure)], leave_outs, rtol=1e-9)
    assert boot.summary.loc[0, 'interval'] == 'jackknife_log'


def test_per_query_samples_and_leave_outs_are_means_over_the_drawn_queries(world):
    vectors, qrels, run = world
    boot = pf.bootstrap({'s': run}, qrels, [ir_measures.nDCG @ K], n_samples=25, seed=2, verbose=False,
                        interval='jackknife')
    values = {r.query_id: r.value for r in ir_measures.iter_calc([ir_measures.nDCG @ K], qrels.rename(
        columns={'qid': 'query_id', 'docno': 'doc_id', 'label': 'relevance'}), run.rename(
        columns={'qid': 'query_id', 'docno': 'doc_id'}))}
    per_q = [values[q] for q in sorted(values)]
    drawn = [np.mean(np.repeat(per_q, c)) for c in draw_counts(N_QUERIES, 25, 2)]
    np.testing.assert_allclose(boot.samples['s']['nDCG@5'], drawn, rtol=1e-12)
    np.testing.assert_allclose(boot.jackknife['s']['nDCG@5'], [np.mean(np.delete(per_q, q)) for q in range(N_QUERIES)],
                               rtol=1e-12)


def test_the_default_leave_out_is_samples_with_the_group_left_out():
    class Recorder(Resampling):
        def samples(self, measure, stats, weights, engine, pbar=None):
            return weights.copy()

    class Stats:
        units = np.array([True, True, False, True])
    groups = np.array([0, 1, -1, 0])  # queries 0 and 3 in group 0, query 1 alone, query 2 no unit
    np.testing.assert_array_equal(Recorder().leave_out(None, Stats(), groups, 2, None),
                                  [[0, 1, 0, 0], [1, 0, 0, 1]])


def test_per_query_leave_out_of_groups_is_the_mean_of_the_rest():
    class Stats:
        values = np.array([0.2, 0.5, 0.1, 0.9, 0.4])
        units = np.ones(5, bool)
    groups = np.array([0, 1, 0, 2, 1])
    got = PerQueryMean().leave_out(None, Stats(), groups, 3, None)
    np.testing.assert_allclose(got, [np.mean([0.5, 0.9, 0.4]), np.mean([0.2, 0.1, 0.9]), np.mean([0.2, 0.5, 0.1, 0.4])],
                               rtol=1e-15)
    assert PER_QUERY.interval == 't' and PER_QUERY.paired_test == 't'
