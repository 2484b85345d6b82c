"""CFD: the conditional Fréchet distance given the query (issue 16, item 3), and the shuffle check."""
import ir_measures
import numpy as np
import pyterrier as pt
import pytest
import scipy.linalg

import pyterrier_frechet as pf
from pyterrier_frechet.core.conditional import conditional_frechet_distance
from conftest import DictEncoder
from test_cli import files  # noqa: F401  (the toy files fixture, used by name)


def _reference(rel, rq, ret, tq):
    """By hand: per-query means, pooled within-query covariances, Tr((W₁^½W₂W₁^½)^½) by eigh (full-rank data)."""
    keep = sorted(set(rq) & set(tq))

    def side(x, q):
        x, q = x[np.isin(q, keep)], q[np.isin(q, keep)]
        means = {k: x[q == k].mean(axis=0) for k in keep}
        resid = np.stack([row - means[k] for row, k in zip(x, q)])
        return means, resid.T @ resid / (len(x) - len(keep))
    m1, w1 = side(rel, rq)
    m2, w2 = side(ret, tq)
    evals, evecs = scipy.linalg.eigh(w1)
    root = (evecs * np.sqrt(evals)) @ evecs.T
    inner = scipy.linalg.eigvalsh(root @ w2 @ root)
    return float(np.mean([np.sum((m1[k] - m2[k]) ** 2) for k in keep]) + np.trace(w1) + np.trace(w2) - 2 * np.sqrt(inner).sum())


def test_cfd_equals_the_hand_computation_and_sees_the_query():
    rng = np.random.default_rng(0)
    centres = rng.normal(size=(5, 3)) * 3
    rq = np.repeat([f'q{i}' for i in range(5)], 8)
    tq = np.repeat([f'q{i}' for i in range(5)], 10)
    rel = centres[np.repeat(np.arange(5), 8)] + rng.normal(size=(40, 3))
    ret = centres[np.repeat(np.arange(5), 10)] + rng.normal(size=(50, 3)) * 1.2
    value = conditional_frechet_distance(rel, rq, ret, tq)
    assert value == pytest.approx(_reference(rel, rq, ret, tq), rel=1e-10)
    # every ranking handed to the next query: FD of the pooled sets is unchanged, CFD grows
    rotated = np.roll(tq, 10)
    assert pf.frechet_distance(rel, ret) == pf.frechet_distance(rel, ret)  # the pooled sets do not change
    assert conditional_frechet_distance(rel, rq, ret, rotated) > value + 5
    assert conditional_frechet_distance(rel, rq, ret, rotated) == pytest.approx(_reference(rel, rq, ret, rotated), rel=1e-10)
    # each query's retrieved set equal to its relevant set: exactly 0
    assert conditional_frechet_distance(rel, rq, rel, rq) == 0.0
    # only queries on both sides count; a query missing on one side is left out of both
    assert conditional_frechet_distance(rel, rq, ret[:40], tq[:40]) == pytest.approx(
        _reference(rel, rq, ret[:40], tq[:40]), rel=1e-10)
    with pytest.raises(ValueError, match='no query has both'):
        conditional_frechet_distance(rel, rq, ret, np.array(['x'] * 50))


def test_cfd_in_ir_measures_and_the_shuffle_check(toy):
    vectors, qrels, run = toy
    enc = DictEncoder(vectors)
    m, fd = pf.CFD(encoder=enc) @ 5, pf.FD(encoder=enc) @ 5
    value = ir_measures.calc_aggregate([m], pt.model.to_ir_measures(qrels), pt.model.to_ir_measures(run))[m]
    rel = qrels[qrels.label >= 1]
    top = run.sort_values(['qid', 'score', 'docno'], ascending=[True, False, False]).groupby('qid').head(5)  # trec_eval ties
    top = top[top.qid.isin(rel.qid)]
    stack = lambda docs: np.stack([vectors[d] for d in docs])
    assert value == pytest.approx(conditional_frechet_distance(stack(rel.docno), rel.qid.to_numpy(), stack(top.docno),
                                                               top.qid.to_numpy()), rel=1e-12)
    table = pf.shuffle_check({'fwd': run}, qrels, [fd, m, ir_measures.nDCG @ 5])
    row = table.set_index('measure')
    assert list(table.columns) == ['name', 'measure', 'value', 'rotated', 'change', 'no_vector_relevant', 'no_vector_retrieved']
    # rotation over the queries with a relevant document (q1, q2; q3 has only a non-relevant judgment, q4 none):
    # q1's ranking goes to q2 and back — compare with a direct evaluation of the rotated run
    rotated = run.assign(qid=run.qid.map({'q1': 'q2', 'q2': 'q1'}).fillna(run.qid))
    assert pf.rotate_rankings(run, qrels).equals(rotated)
    expected = pf.evaluate({'r': rotated}, qrels, [fd, m, ir_measures.nDCG @ 5]).iloc[0]
    for measure in (fd, m, ir_measures.nDCG @ 5):
        assert row.loc[str(measure), 'rotated'] == pytest.approx(expected[str(measure)], rel=1e-12)
    assert row.loc[str(m), 'rotated'] > row.loc[str(m), 'value'] + 5  # q1's documents sit far from q2's topic
    assert row.loc['nDCG@5', 'rotated'] < row.loc['nDCG@5', 'value']
    assert row.loc[str(fd), 'rotated'] == pytest.approx(row.loc[str(fd), 'value'], rel=1e-12)  # same pooled sets


def test_reweighted_cfd_equals_the_hand_computation_on_renamed_copies():
    """The bootstrap's path: a query drawn w times is w queries (renamed copies), checked against the by-hand CFD."""
    from pyterrier_frechet.core.conditional import conditional_fds
    from pyterrier_frechet.core.weighted import QueryStats
    rng = np.random.default_rng(3)
    d, nq = 4, 6
    rq, tq = rng.integers(0, nq, 60), np.repeat(np.arange(nq), 5)
    rel, ret = rng.normal(size=(60, d)), rng.normal(size=(30, d)) + 0.5
    shift = rel.mean(axis=0)
    rel_stats, ret_stats = QueryStats(rq, rel, nq, shift), QueryStats(tq, ret, nq, shift)
    weights = np.array([[1, 1, 1, 1, 1, 1], [2, 0, 1, 3, 0, 0], [0, 0, 0, 0, 0, 0]], dtype=np.float64)
    got = conditional_fds(rel_stats, ret_stats, weights)
    for w, value in zip(weights[:2], got[:2]):
        copies = [(q, k) for q in range(nq) for k in range(int(w[q]))]
        r = np.vstack([rel[rq == q] for q, _ in copies])
        r_ids = np.concatenate([[f'{q}#{k}'] * int((rq == q).sum()) for q, k in copies])
        t = np.vstack([ret[tq == q] for q, _ in copies])
        t_ids = np.concatenate([[f'{q}#{k}'] * int((tq == q).sum()) for q, k in copies])
        assert value == pytest.approx(_reference(r, r_ids, t, t_ids), rel=1e-9)
    assert np.isnan(got[2])  # no query drawn: no value


def test_cfd_refuses_a_side_without_within_query_spread():
    """One relevant document per query leaves no degree of freedom for the within-query covariance: a clear
    refusal (and NaN in a bootstrap sample), never a number."""
    from pyterrier_frechet.core.conditional import conditional_fds
    from pyterrier_frechet.core.weighted import QueryStats
    rng = np.random.default_rng(1)
    rel, rq = rng.normal(size=(4, 3)), np.arange(4)
    ret, tq = rng.normal(size=(12, 3)), np.repeat(np.arange(4), 3)
    with pytest.raises(ValueError, match='more vectors than queries'):
        conditional_frechet_distance(rel, rq, ret, tq)
    shift = np.zeros(3)
    assert np.isnan(conditional_fds(QueryStats(rq, rel, 4, shift), QueryStats(tq, ret, 4, shift), np.ones((1, 4)))).all()


@pytest.mark.parametrize('side', ['relevant', 'retrieved'])
def test_a_side_with_one_vector_per_query_is_named_with_the_fix(side):
    # round seven: "needs more vectors than queries (6 vectors, 6 queries)" said neither which side nor what to do
    from pyterrier_frechet.core.conditional import conditional_frechet_distance
    rng = np.random.default_rng(0)
    one, many = rng.normal(size=(6, 3)), rng.normal(size=(18, 3))
    q_one, q_many = np.array([f'q{i}' for i in range(6)]), np.repeat([f'q{i}' for i in range(6)], 3)
    args = (one, q_one, many, q_many) if side == 'relevant' else (many, q_many, one, q_one)
    with pytest.raises(ValueError, match=rf'covariance of the {side} side needs more vectors than queries \(6 {side} '
                                         r'vectors over 6 queries: .*\); give it queries with at least two vectors'):
        conditional_frechet_distance(*args)
