"""The measures as defined (measures/definitions.py): names, parsing, and what each declares (resampling,
orientation, set or vector measure)."""
import ir_measures

import pyterrier_frechet as pf
from pyterrier_frechet import FD
from conftest import DictEncoder


def test_names_and_parsing():
    assert str(FD @ 10) == 'FD@10' and str(FD(10)) == 'FD@10' and FD(10) == FD @ 10
    assert str(FD(rel=2) @ 10) == 'FD(rel=2)@10'
    assert str(FD(urr=True) @ 10) == 'FD(urr=True)@10'
    assert str(FD(per_query=5, seed=3) @ 10) == 'FD(per_query=5,seed=3)@10'
    assert ir_measures.parse_measure('FD@10') == FD @ 10
    assert ir_measures.parse_measure('FD(rel=2)@10') == FD(rel=2) @ 10
    assert ir_measures.parse_measure('FD(urr=True)@1') == FD(urr=True) @ 1
    assert FD.HIGHER_IS_BETTER is False
    assert FD(encoder=DictEncoder({})) != FD(encoder=pf.TextLookup({}, name='x'))


def test_measures_declare_their_capabilities():
    from pyterrier_frechet.measures import higher_is_better, is_set_measure, is_vector_measure, resampling
    from pyterrier_frechet.measures.definitions import CONDITIONAL, GAUSSIAN
    from pyterrier_frechet.measures.resampling import HISTOGRAM, PER_QUERY
    assert resampling(pf.FD @ 10) is GAUSSIAN and resampling(pf.FD(jackknife=True) @ 10) is None
    assert resampling(pf.CFD @ 10) is CONDITIONAL and resampling(pf.FD(per_query=1, draws=2) @ 10) is None
    assert resampling(pf.DO @ 10) is resampling(pf.HSA @ 10) is HISTOGRAM
    assert all(resampling(m) is None for m in (pf.KID @ 10, pf.FDInf @ 10, pf.KNNPrecision @ 10, pf.KNNRecall @ 10))
    assert resampling(ir_measures.nDCG @ 10) is PER_QUERY and not is_set_measure(ir_measures.nDCG @ 10)
    assert [(r.interval, r.paired_test, r.randomised()) for r in (GAUSSIAN, CONDITIONAL, HISTOGRAM, PER_QUERY)] == \
        [('jackknife_log', 'jackknife', True), ('jackknife_log', 'jackknife', False), ('percentile', 'normal', False),
         ('t', 't', False)]
    assert (HISTOGRAM.estimand, PER_QUERY.estimand) == ('population value', 'population mean')  # DO is not a mean
    assert is_vector_measure(pf.KID @ 10) and not is_vector_measure(pf.DO @ 10) and is_set_measure(pf.DO @ 10)
    assert (pf.FD @ 10).is_set_valued() and not (pf.FD(jackknife=True) @ 10).is_set_valued()
    assert [higher_is_better(m) for m in (pf.FD, pf.KID, pf.KNNPrecision, pf.DO, pf.HSA, ir_measures.nDCG)] == \
        [False, False, True, False, True, True]


def test_declarations():
    assert ir_measures.parse_measure('DO(bins=20)@100') == pf.DO(100, bins=20)
    assert repr(pf.HSA(norm='rank')) == "HSA(norm='rank')"
    assert pf.DO.HIGHER_IS_BETTER is False and pf.HSA.HIGHER_IS_BETTER is True
    from pyterrier_frechet.measures.base import higher_is_better
    assert not higher_is_better('DO@100') and higher_is_better('HSA@100')
