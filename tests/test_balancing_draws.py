"""FD(per_query=N, draws=D): the mean over D qrels balancing draws, so the value (and its agreement with a classical
measure) does not hang on one random draw."""
import ir_measures
import numpy as np
import pandas as pd
import pytest

import pyterrier_frechet as pf
from pyterrier_frechet.evaluation.qrels import balance_qrels
from conftest import DictEncoder, reference_fd_eigh


def _world(seed=0, n_queries=12, d=5):
    rng = np.random.default_rng(seed)
    vectors, qrels, run = {}, [], []
    for q in range(n_queries):
        centre = rng.normal(size=d)
        for j in range(int(rng.integers(3, 9))):  # 3..8 relevant documents, graded 1 or 2
            doc = f'r{q}-{j}'
            vectors[doc] = centre + rng.normal(scale=0.5, size=d)
            qrels.append((f'q{q}', doc, int(rng.integers(1, 3))))
        for r in range(6):
            doc = f'x{q}-{r}'
            vectors[doc] = 0.5 * centre + rng.normal(size=d)
            run.append((f'q{q}', doc, 10.0 - r))
    return vectors, pd.DataFrame(qrels, columns=['qid', 'docno', 'label']), pd.DataFrame(run, columns=['qid', 'docno', 'score'])


def _fd_by_hand(vectors, qrels, run, per_query, seed, cutoff=5):
    """FD of the balanced relevant set and each query's top ``cutoff``, assembled without the package's selection."""
    kept = balance_qrels(qrels, per_query, rel=1, seed=seed)
    rel = np.stack([vectors[d] for d in kept[kept.label >= 1].docno])
    queries = set(kept.qid)
    top = run[run.qid.isin(queries)].sort_values(['qid', 'score'], ascending=[True, False]).groupby('qid').head(cutoff)
    return reference_fd_eigh(rel, np.stack([vectors[d] for d in top.docno]))


def test_draws_is_the_mean_of_the_single_draws():
    vectors, qrels, run = _world()
    enc = DictEncoder(vectors)
    measure = pf.FD(per_query=2, draws=4, seed=3, encoder=enc) @ 5
    got = ir_measures.calc_aggregate([measure], pf.evaluation.frames.to_ir_measures(qrels),
                                     pf.evaluation.frames.to_ir_measures(run))[measure]
    expected = np.mean([_fd_by_hand(vectors, qrels, run, 2, s) for s in (3, 4, 5, 6)])
    assert got == pytest.approx(expected, rel=1e-10)
    assert pf.evaluate({'r': run}, qrels, [measure]).iloc[0][str(measure)] == pytest.approx(expected, rel=1e-10)
    singles = [_fd_by_hand(vectors, qrels, run, 2, s) for s in (3, 4, 5, 6)]
    assert np.ptp(singles) > 0  # the draws differ, so the mean is not one of them by accident


def test_draws_one_is_the_plain_measure_and_draws_need_per_query():
    vectors, qrels, run = _world(1)
    enc = DictEncoder(vectors)
    one = pf.FD(per_query=3, draws=1, encoder=enc) @ 5
    assert str(one) == str(pf.FD(per_query=3, encoder=enc) @ 5)  # the default: one column, one meaning
    value = pf.evaluate({'r': run}, qrels, [one]).iloc[0, 1]
    assert value == pytest.approx(_fd_by_hand(vectors, qrels, run, 3, 0), rel=1e-10)
    with pytest.raises(ValueError, match='needs per_query'):
        pf.evaluate({'r': run}, qrels, [pf.FD(draws=3, encoder=enc) @ 5])


def test_draws_are_refused_where_one_pair_of_sets_is_needed():
    vectors, qrels, run = _world(2)
    measure = pf.FD(per_query=2, draws=3, encoder=DictEncoder(vectors)) @ 5
    with pytest.raises(ValueError, match='balancing draws'):
        pf.fd_sets(measure, pf.evaluation.frames.to_ir_measures(qrels), pf.evaluation.frames.to_ir_measures(run))
    with pytest.raises(ValueError, match='no fast path'):
        pf.bootstrap({'r': run}, qrels, [measure], n_samples=10)
