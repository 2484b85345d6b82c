"""The per-query rows a set measure gives pt.Experiment (evaluation/experiment_rows.py): centred jackknife
pseudo-values that average to the set value, against FDs of hand-built sets; constant rows said in a warning."""
import warnings

import ir_measures
import numpy as np
import pyterrier as pt
import pytest

import pyterrier_frechet as pf
from pyterrier_frechet import FD
from conftest import DictEncoder, reference_fd


def test_rows_for_every_query_average_to_the_set_value(toy, vec):
    # every qrels query gets a row; the rows are centred jackknife pseudo-values (evaluation/experiment_rows.py):
    # units q1, q2 get FD + c'(n−1)(mean₋ − FD₋q) with n = 2, c' = √(M(M−1)/(n(n−1))) = √3 for M = 3 rows; q3 (no
    # relevant document) gets FD; so their mean is FD
    vectors, qrels, run = toy
    m = FD(encoder=DictEncoder(vectors)) @ 3
    rows = {r.query_id: r.value for r in ir_measures.iter_calc([m], pt.model.to_ir_measures(qrels),
                                                                  pt.model.to_ir_measures(run))}
    assert sorted(rows) == ['q1', 'q2', 'q3']
    full = reference_fd(vec('d0', 'd1', 'd3', 'd10', 'd11', 'd12'), vec('d0', 'd1', 'd2', 'd10', 'd11', 'd12'))
    without = {'q1': reference_fd(vec('d10', 'd11', 'd12'), vec('d10', 'd11', 'd12')),
               'q2': reference_fd(vec('d0', 'd1', 'd3'), vec('d0', 'd1', 'd2'))}
    mean = (without['q1'] + without['q2']) / 2
    for q in ('q1', 'q2'):
        assert rows[q] == pytest.approx(full + np.sqrt(3) * (mean - without[q]), rel=1e-9)
    assert rows['q3'] == pytest.approx(full, rel=1e-12)
    assert np.mean(list(rows.values())) == pytest.approx(full, rel=1e-12)


def test_measures_without_a_leave_out_warn_that_their_rows_are_constant(toy):
    vectors, qrels, run = toy
    m = pf.KID(encoder=DictEncoder(vectors)) @ 3
    with pytest.warns(UserWarning, match=r'rows repeat its value .* meaningless; compare systems with pf.compare'):
        rows = list(ir_measures.iter_calc([m], pt.model.to_ir_measures(qrels), pt.model.to_ir_measures(run)))
    assert len({r.value for r in rows}) == 1
    with warnings.catch_warnings():
        warnings.simplefilter('error')  # calc_aggregate forms no rows and does not warn
        agg = ir_measures.calc_aggregate([m], pt.model.to_ir_measures(qrels), pt.model.to_ir_measures(run))[m]
    assert agg == pytest.approx(rows[0].value, rel=1e-12)
