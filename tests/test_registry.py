"""core/registry.py and the registries that use it (issue 64 item 3): interval methods and measures refuse, when they
are registered, a name that is not a string, empty, unparseable, or equal to a registered one up to case — the same
refusal from both; a compute that cannot be called; and what a method returns or a measure declares is checked
before anything prints or uses it."""
import numpy as np
import pytest

import pyterrier_frechet as pf
from pyterrier_frechet.core.intervals import INTERVAL_METHODS, IntervalMethod, interval, register_interval_method
from pyterrier_frechet.core.registry import check_name
from pyterrier_frechet.measures.base import VectorMeasure, register_measure, resampling, unregister_measure

HOSTILE = [(None, 'must be a string'), (3, 'must be a string'), ('', 'not a name that can be written'),
           ('two words', 'not a name that can be written'), ('FD@10', 'not a name that can be written'),
           ('é', 'not a name that can be written'), ('1st', 'not a name that can be written')]


def _compute(estimate, samples, jackknife, alpha, fpc, df):
    return float(np.quantile(samples, 0.25)), float(np.quantile(samples, 0.75))


class _Toy(VectorMeasure):
    NAME = 'ToyRegistered'
    __name__ = 'ToyRegistered'
    HIGHER_IS_BETTER = False


@pytest.mark.parametrize('name,why', HOSTILE)
def test_a_bad_name_is_refused_alike_by_every_registry(name, why):
    with pytest.raises(ValueError, match=why):
        register_interval_method(IntervalMethod(name, 't', 'e', 'e', _compute))
    toy = _Toy()
    toy.NAME = name
    with pytest.raises(ValueError, match=why):
        register_measure(toy)
    assert name not in INTERVAL_METHODS


@pytest.mark.parametrize('name', ['Percentile', 'JACKKNIFE_LOG', 'percentile'])
def test_a_name_equal_up_to_case_is_refused(name):
    with pytest.raises(ValueError, match=r"named '(percentile|jackknife_log)' is already registered"):
        register_interval_method(IntervalMethod(name, 't', 'e', 'e', _compute))
    toy = _Toy()
    toy.NAME = name.replace('percentile', 'fd').replace('Percentile', 'Fd').replace('JACKKNIFE_LOG', 'NDCG')
    with pytest.raises(ValueError, match=r'already registered'):  # FD (ours), nDCG (ir_measures')
        register_measure(toy)
    assert check_name('fresh_name', ['percentile'], 'interval method') == 'fresh_name'


def test_what_an_interval_method_is_made_of_is_checked_when_it_is_registered():
    with pytest.raises(ValueError, match='compute must be callable'):
        register_interval_method(IntervalMethod('toy_a', 't', 'e', 'e', 'not a function'))
    with pytest.raises(ValueError, match=r'compute must take \(estimate, samples, jackknife, alpha, fpc, df\)'):
        register_interval_method(IntervalMethod('toy_b', 't', 'e', 'e', lambda estimate, samples: (0, 1)))
    with pytest.raises(ValueError, match='title must be a non-empty one-line text'):
        register_interval_method(IntervalMethod('toy_c', '', 'e', 'e', _compute))
    with pytest.raises(ValueError, match='needs_jackknife must be True or False'):
        register_interval_method(IntervalMethod('toy_d', 't', 'e', 'e', _compute, needs_jackknife='yes'))
    with pytest.raises(ValueError, match='register an IntervalMethod'):
        register_interval_method({'name': 'toy_e', 'compute': _compute})
    assert not {'toy_a', 'toy_b', 'toy_c', 'toy_d', 'toy_e'} & set(INTERVAL_METHODS)


@pytest.mark.parametrize('returned,why', [((2.0, 1.0), 'its low end is above its high end'),
                                          ((0.0, np.inf), 'two finite ends'), ((np.nan, 1.0), 'two finite ends'),
                                          (('a', 'b'), 'not two numbers'), ((1.0,), r'not \(low, high\)')])
def test_what_a_method_returns_is_checked_before_anything_prints_it(returned, why):
    method = register_interval_method(IntervalMethod('toy_returns', 't', 'e', 'e', lambda *a: returned))
    try:
        with pytest.raises(ValueError, match=rf"interval method 'toy_returns' returned .*{why}"):
            interval('toy_returns', 1.0, np.arange(10.0), ci=0.9)
    finally:
        del INTERVAL_METHODS[method.name]


def test_undefined_and_round_off_reversed_intervals_pass():
    method = register_interval_method(IntervalMethod('toy_nan', 't', 'e', 'e', lambda *a: (np.nan, np.nan)))
    close = register_interval_method(IntervalMethod('toy_close', 't', 'e', 'e', lambda *a: (1.0 + 1e-15, 1.0)))
    try:
        assert all(np.isnan(interval('toy_nan', 1.0, np.arange(10.0), ci=0.9)))
        assert interval('toy_close', 1.0, np.arange(10.0), ci=0.9) == (1.0 + 1e-15, 1.0 + 1e-15)
    finally:
        del INTERVAL_METHODS[method.name], INTERVAL_METHODS[close.name]


def test_a_measures_declared_resampling_is_checked_before_the_bootstrap_uses_it():
    class _Declares(VectorMeasure):
        NAME = 'ToyDeclares'
        __name__ = 'ToyDeclares'
        declared = None

        def resampling(self):
            return self.declared

    m = _Declares()
    m.declared = 'jackknife'
    with pytest.raises(ValueError, match='resampling\\(\\) must return a Resampling'):
        resampling(m)
    m.declared = type(pf.FD.resampling())()
    m.declared.interval = 'no_such_method'
    with pytest.raises(ValueError, match=r"interval method must be one of \('percentile'"):
        resampling(m)
    m.declared = None
    assert resampling(m) is None
    made = register_measure(_Toy())
    unregister_measure(made)
