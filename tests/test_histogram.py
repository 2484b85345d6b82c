"""DO and HSA (Krstovski et al. 2015), the numeric core (core/histogram.py): hand-built histograms with values
worked out by hand, binning and normalisation. The measures end to end on runs built to give those histograms are
tests/test_histograms.py."""
import math

import numpy as np
import pytest

from pyterrier_frechet.core.histogram import (Histograms, distributional_overlap, group_counts, histogram_slope,
                                              histograms, minmax_normalise, normalise_rankings, rank_normalise)


def _h(relevant, nonrelevant):
    bins = len(relevant)
    return Histograms(np.array(relevant), np.array(nonrelevant), (np.arange(bins) + 0.5) / bins)


def test_two_bins_by_hand():
    # R = [2, 6], NR = [6, 3]: DO = log 2 + log 3; log-ratios log(1/3), log 2 at centres 1/4, 3/4:
    # slope = (log 2 − log(1/3)) / (1/2) = 2 log 6.
    h = _h([2, 6], [6, 3])
    assert distributional_overlap(h) == pytest.approx(math.log(6), rel=1e-15)
    assert histogram_slope(h) == pytest.approx(2 * math.log(6), rel=1e-14)


def test_four_bins_with_an_unsupported_bin_by_hand():
    # R = [1, 2, 0, 4], NR = [4, 2, 3, 1]: bin 2 has no relevant score, so B' = {0, 1, 3}, centres 1/8, 3/8, 7/8,
    # log-ratios −log 4, 0, log 4. DO = log 1 + log 2 + log 1 = log 2. Slope: x̄ = 11/24, Σ(x−x̄)² = 7/24,
    # Σ(x−x̄)y = (1/3 + 5/12) log 4 = (3/4) log 4, so HSA = (18/7) log 4.
    h = _h([1, 2, 0, 4], [4, 2, 3, 1])
    assert list(h.supported) == [True, True, False, True]
    assert distributional_overlap(h) == pytest.approx(math.log(2), rel=1e-15)
    assert histogram_slope(h) == pytest.approx(18 / 7 * math.log(4), rel=1e-14)


def test_no_shared_bin():
    h = _h([0, 0, 3], [5, 1, 0])
    assert distributional_overlap(h) == 0.0  # perfectly separated: no overlap
    assert math.isnan(histogram_slope(h))  # no slope from fewer than two bins
    assert math.isnan(histogram_slope(_h([0, 1, 3], [5, 1, 0])))  # one shared bin


def test_better_separation_gives_lower_do_and_higher_hsa():
    good, bad = _h([1, 2, 8], [8, 2, 1]), _h([4, 4, 3], [4, 4, 3])
    assert distributional_overlap(good) < distributional_overlap(bad)
    assert histogram_slope(good) > 0 == pytest.approx(histogram_slope(bad), abs=1e-15)


def test_binning_edges():
    h = histograms([0.0, 0.5, 1.0], [0.2499, 0.25, 0.999], bins=4)
    assert h.relevant.tolist() == [1, 0, 1, 1]  # 0 → first bin; 0.5 opens bin 2; exactly 1 falls in the last bin
    assert h.nonrelevant.tolist() == [1, 1, 0, 1]
    assert h.centres.tolist() == [0.125, 0.375, 0.625, 0.875]


@pytest.mark.parametrize('bad,match', [
    (dict(relevant_scores=[1.2], nonrelevant_scores=[0.1]), r'\[0, 1\]'),
    (dict(relevant_scores=[np.nan], nonrelevant_scores=[0.1]), 'NaN'),
    (dict(relevant_scores=[0.2], nonrelevant_scores=[0.1], bins=1), 'bins'),
    (dict(relevant_scores=[0.2], nonrelevant_scores=[0.1], bins=2.5), 'bins'),
])
def test_bad_histogram_input(bad, match):
    with pytest.raises(ValueError, match=match):
        histograms(**bad)


def test_normalisations():
    x, ok = minmax_normalise([3.0, 1.0, 2.0])
    assert ok and x.tolist() == [1.0, 0.0, 0.5]
    assert not minmax_normalise([2.0, 2.0])[1]
    r, ok = rank_normalise(5)
    assert ok and r.tolist() == [1.0, 0.75, 0.5, 0.25, 0.0]
    assert not rank_normalise(1)[1]


def test_several_rankings_normalised_and_counted_at_once():
    # what DO/HSA run in production: three rankings in one array (rank order within each), normalised each on its own
    groups = np.array([0, 0, 0, 1, 1, 2])
    scores = np.array([9.0, 5.0, 1.0, 4.0, 4.0, 7.0])
    x = normalise_rankings(groups, scores, 'minmax')
    assert x[:3].tolist() == [1.0, 0.5, 0.0] and np.isnan(x[3:]).all()  # equal scores, one document: no scale
    r = normalise_rankings(groups, scores, 'rank')
    assert r[:5].tolist() == [1.0, 0.5, 0.0, 1.0, 0.0] and np.isnan(r[5])
    # per-ranking counts, bins of width 1/4: 1.0 in the last bin, 0.5 opens bin 2, 0.0 in the first
    counts = group_counts(groups[:5], r[:5], 3, 4)
    assert counts.tolist() == [[1, 0, 1, 1], [1, 0, 0, 1], [0, 0, 0, 0]]
    assert counts.sum(0).tolist() == histograms(r[:5], [], bins=4).relevant.tolist()
    with pytest.raises(ValueError, match='norm'):
        normalise_rankings(groups, scores, 'zscore')
