"""The answer measures as defined (measures/answers.py; the namesake of the second answers.py, evaluation/answers.py
being tests/test_answers.py): their statistics on vectors given directly, against reference_fd (30 digits) and the
point-mass closed form, and their declarations."""
import ir_measures
import numpy as np
import pytest

from pyterrier_frechet import AnswerCFD, AnswerFD
from pyterrier_frechet.measures.answers import AnswerMeasure
from conftest import reference_fd
from test_answers import _cfd_reference

RNG = np.random.default_rng(11)
REF = RNG.normal(size=(9, 3))
REF_Q = np.array(['a'] * 4 + ['b'] * 3 + ['c'] * 2)
ANS = RNG.normal(size=(5, 3)) + 0.5
ANS_Q = np.array(['a', 'a', 'b', 'c', 'c'])


def _query_weights(qids):
    _, inverse, counts = np.unique(qids, return_inverse=True, return_counts=True)
    return 1.0 / counts[inverse]


def test_answer_fd_is_the_fd_of_the_two_sets_and_query_weighted_fd():
    assert AnswerFD.statistic(REF, REF_Q, ANS, ANS_Q) == pytest.approx(reference_fd(REF, ANS), rel=1e-10)
    weighted = AnswerFD(weighting='query')
    assert weighted.statistic(REF, REF_Q, ANS, ANS_Q) == pytest.approx(
        reference_fd(REF, ANS, x_weights=_query_weights(REF_Q), y_weights=_query_weights(ANS_Q)), rel=1e-10)


def test_answer_cfd_with_one_answer_per_query_is_the_point_mass_closed_form():
    one, one_q = ANS[[0, 2, 3]], ANS_Q[[0, 2, 3]]  # a, b, c: one answer each, W_ans = 0
    means = {q: REF[REF_Q == q].mean(0) for q in 'abc'}
    resid = np.stack([x - means[q] for x, q in zip(REF, REF_Q)])
    trace_w = np.sum(resid ** 2) / (len(REF) - 3)  # Tr of the pooled within-query covariance, n − |Q| dof
    expected = np.mean([np.sum((means[q] - a) ** 2) for a, q in zip(one, one_q)]) + trace_w
    assert AnswerCFD.statistic(REF, REF_Q, one, one_q) == pytest.approx(expected, rel=1e-12)


def test_answer_cfd_with_several_answers_for_a_query_is_the_conditional_distance():
    assert AnswerCFD.statistic(REF, REF_Q, ANS, ANS_Q) == pytest.approx(_cfd_reference(REF, REF_Q, ANS, ANS_Q), rel=1e-9)


def test_answer_measures_declare_their_parameters():
    assert ir_measures.parse_measure("AnswerFD(ref='gold',weighting='query')") == AnswerFD(ref='gold', weighting='query')
    assert AnswerFD.HIGHER_IS_BETTER is False and AnswerCFD.HIGHER_IS_BETTER is False
    assert AnswerFD['ref'] == 'relevant' and AnswerFD['rel'] == 1 and AnswerFD['missing'] == 'error'
    assert 'weighting' in AnswerFD.SUPPORTED_PARAMS and 'weighting' not in AnswerCFD.SUPPORTED_PARAMS

    class _Bare(AnswerMeasure):
        __name__ = 'BareAnswerToy'
        NAME = __name__
    with pytest.raises(NotImplementedError, match='_Bare does not define statistic'):
        _Bare().statistic(REF, REF_Q, ANS, ANS_Q)
