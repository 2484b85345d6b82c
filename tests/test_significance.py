"""Paired tests of an FD difference: exact values on the full set, symmetry, and calibration under the null."""
import ir_measures
import numpy as np
import pandas as pd
import pyterrier as pt
import pytest

import pyterrier_frechet as pf
from pyterrier_frechet.significance import paired_test
from conftest import DictEncoder


def test_full_set_values_and_symmetry(toy):
    vectors, qrels, run = toy
    other = run.assign(score=-run.score)
    m = pf.FD(encoder=DictEncoder(vectors)) @ 3
    r = paired_test(run, other, qrels, m, n_samples=100, n_permutations=99, seed=1)
    expect = [ir_measures.calc_aggregate([m], pt.model.to_ir_measures(qrels), pt.model.to_ir_measures(x))[m] for x in (run, other)]
    assert r.fd_a == pytest.approx(expect[0], rel=1e-7) and r.fd_b == pytest.approx(expect[1], rel=1e-7)
    assert r.diff == pytest.approx(expect[0] - expect[1], rel=1e-7) and r.ci_low <= r.ci_high
    swapped = paired_test(other, run, qrels, m, n_samples=100, n_permutations=99, seed=1)
    assert swapped.diff == pytest.approx(-r.diff) and swapped.p_randomisation == pytest.approx(r.p_randomisation)
    same = paired_test(run, run, qrels, m, n_samples=50, n_permutations=49)
    assert same.diff == 0 and same.p_randomisation == 1.0


def _null_trial(seed):
    rng = np.random.default_rng(seed)
    vectors, qrels, runs = {}, [], {'A': [], 'B': []}
    for q in range(15):
        for j in range(3):
            d = f'q{q}r{j}'
            vectors[d] = rng.normal(size=4)
            qrels.append((f'q{q}', d, 1))
        for name in runs:  # both systems retrieve from one distribution
            for j in range(5):
                d = f'q{q}{name}{j}'
                vectors[d] = rng.normal(size=4) + 0.3
                runs[name].append((f'q{q}', d, float(5 - j)))
    frame = lambda rows: pd.DataFrame(rows, columns=['qid', 'docno', 'score'])
    m = pf.FD(encoder=DictEncoder(vectors)) @ 5
    return paired_test(frame(runs['A']), frame(runs['B']), pd.DataFrame(qrels, columns=['qid', 'docno', 'label']), m,
                       n_samples=20, n_permutations=99, seed=seed)


def test_randomisation_test_calibrated_under_the_null():
    p = np.array([_null_trial(seed).p_randomisation for seed in range(200)])
    rejected = float(np.mean(p < 0.05))
    assert rejected <= 0.08, rejected
    assert p.min() < 0.5 < p.max()  # the p-values do vary across trials
