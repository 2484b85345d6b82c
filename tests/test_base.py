"""What every set measure inherits (measures/base.py): unknown parameters refused naming the parameters, a
histogram measure without a statistic refused."""
import ir_measures
import numpy as np
import pytest

import pyterrier_frechet as pf


def test_unknown_measure_parameter_is_a_value_error_naming_the_parameters():
    with pytest.raises(ValueError, match=r"FD has no parameter\(s\) \['bogus'\]; its parameters are \[.*'cutoff'"):
        pf.FD(bogus=1)
    with pytest.raises(ValueError, match="no parameter"):
        ir_measures.parse_measure('FD(bogus=1)@10')


def test_a_histogram_measure_without_statistic_is_refused_not_computed_as_hsa():
    from pyterrier_frechet.core.histogram import histograms
    from pyterrier_frechet.measures.base import HISTOGRAM_PARAMS, HistogramMeasure

    class _Third(HistogramMeasure):
        __name__ = 'ThirdHistogramToy'
        NAME = __name__
        SUPPORTED_PARAMS = dict(HISTOGRAM_PARAMS)
    with pytest.raises(NotImplementedError, match='_Third does not define statistic'):
        _Third().statistic(histograms([0.9, 0.8], [0.1, 0.2], bins=4))
    assert pf.HSA.statistic(histograms([0.9, 0.8, 0.1], [0.1, 0.2, 0.9], bins=2)) == pytest.approx(
        (np.log(2 / 1) - np.log(1 / 2)) / (0.75 - 0.25))  # slope of log(h_R/h_NR) over the two bin centres
