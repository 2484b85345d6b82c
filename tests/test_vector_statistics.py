"""evaluation/vector_statistics.py: the per-query statistics the bootstrap and pt.Experiment's rows re-weight are
the counts and shifted sums of each query's vectors (checked against numpy), their units the queries with relevant
vectors, and re-weighted with all-one weights they give FD of the vectors (30-digit reference), per-query weighted
for FD(weighting='query') (the reference with document weights 1/n_q)."""
from types import SimpleNamespace

import numpy as np
import pytest

import pyterrier_frechet as pf
from conftest import reference_fd
from pyterrier_frechet.core.weighted import weighted_fds
from pyterrier_frechet.evaluation.vector_statistics import vector_statistics

QUERIES = ['q1', 'q2', 'q3', 'q4']  # q4: retrieved documents only (no unit)


def _sets(rng, d=3):
    rel_codes = np.array([0, 0, 0, 1, 1, 2, 2, 2, 2])
    ret_codes = np.array([0, 0, 1, 1, 1, 2, 3, 3])
    side = lambda codes: SimpleNamespace(vecs=rng.normal(size=(len(codes), d)).astype(np.float32), qcodes=codes)
    return SimpleNamespace(relevant=side(rel_codes), retrieved=side(ret_codes), queries=['q1', 'q2', 'q3'])


def test_counts_sums_shift_and_units_are_those_of_the_vectors():
    sets = _sets(np.random.default_rng(0))
    stats = vector_statistics(pf.FD @ 10, sets, QUERIES)
    rel64 = sets.relevant.vecs.astype(np.float64)
    assert np.allclose(stats.shift, rel64.mean(axis=0), rtol=0, atol=1e-15)
    for side, got in ((sets.relevant, stats.rel), (sets.retrieved, stats.ret)):
        x = side.vecs.astype(np.float64) - stats.shift
        assert np.array_equal(got.n, np.bincount(side.qcodes, minlength=4))
        want = np.stack([x[side.qcodes == q].sum(axis=0) for q in range(4)])
        assert np.allclose(got.s, want, rtol=0, atol=1e-12)
    assert stats.units.tolist() == [True, True, True, False]


@pytest.mark.parametrize('weighting', ['document', 'query'])
def test_all_one_weights_give_fd_of_the_vectors(weighting):
    sets = _sets(np.random.default_rng(1))
    measure = pf.FD(weighting=weighting) @ 10
    stats = vector_statistics(measure, sets, QUERIES)
    ones = np.ones((1, len(QUERIES)))
    got = float(weighted_fds(stats.rel, ones, [stats.ret], [ones], stats.shift)[0])
    x, y = sets.relevant.vecs, sets.retrieved.vecs
    if weighting == 'query':
        per_doc = lambda codes: 1.0 / np.bincount(codes)[codes]
        want = reference_fd(x, y, x_weights=per_doc(sets.relevant.qcodes), y_weights=per_doc(sets.retrieved.qcodes))
        assert np.allclose(stats.rel.doc_weight[:3], [1 / 3, 1 / 2, 1 / 4])
    else:
        want = reference_fd(x, y)
    assert got == pytest.approx(want, rel=1e-10)
