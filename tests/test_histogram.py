"""DO and HSA (Krstovski et al. 2015): the numeric core on hand-built histograms with values worked out by hand,
and the measures end to end (ir_measures, pt.Experiment) on runs built to give those histograms."""
import logging
import math

import ir_measures
import numpy as np
import pandas as pd
import pyterrier as pt
import pytest

import pyterrier_frechet as pf
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


# --- the measures, end to end -------------------------------------------------------------------------------------

def _frames(per_query):
    """qrels and run (PyTerrier columns) from {qid: [(docno, score, label or None), ...]}."""
    run = pd.DataFrame([(q, d, s) for q, rows in per_query.items() for d, s, _ in rows], columns=['qid', 'docno', 'score'])
    qrels = pd.DataFrame([(q, d, lab) for q, rows in per_query.items() for d, _, lab in rows if lab is not None],
                         columns=['qid', 'docno', 'label'])
    return qrels, run


def _calc(measures, qrels, run):
    return ir_measures.calc_aggregate(measures, pt.model.to_ir_measures(qrels), pt.model.to_ir_measures(run))


@pytest.fixture
def two_bin_case():
    # Min-max per query. q1 spans [0, 10]: relevant at 0.1, 0.9, 1.0, 0.6; non-relevant at 0.0, 0.2, 0.3, 0.8;
    # one unjudged at 0.4. q2 spans [−5, 5]: relevant at 0.0, 0.7, 0.75; non-relevant at 0.1, 0.2, 0.55, 1.0.
    q1 = [('a', 1.0, 1), ('b', 9.0, 2), ('c', 10.0, 1), ('d', 6.0, 1), ('e', 0.0, 0), ('f', 2.0, 0), ('g', 3.0, 0),
          ('h', 8.0, 0), ('u', 4.0, None)]
    q2 = [('i', -5.0, 1), ('j', 2.0, 1), ('k', 2.5, 3), ('l', -4.0, 0), ('m', -3.0, 0), ('n', 0.5, 0), ('o', 5.0, 0)]
    return _frames({'q1': q1, 'q2': q2})


def test_measures_match_hand_counts(two_bin_case):
    # Relevant: q1 0.1 | 0.9 1.0 0.6; q2 0.0 | 0.7 0.75 → R = [2, 5]. Non-relevant: q1 0.0 0.2 0.3 | 0.8;
    # q2 0.1 0.2 | 0.55 1.0 → NR = [5, 3]. DO = log 2 + log 3; HSA = (log(5/3) − log(2/5)) / (1/2).
    qrels, run = two_bin_case
    values = _calc([pf.DO(bins=2), pf.HSA(bins=2)], qrels, run)
    assert values[pf.DO(bins=2)] == pytest.approx(math.log(6), rel=1e-14)
    assert values[pf.HSA(bins=2)] == pytest.approx(2 * (math.log(5 / 3) - math.log(2 / 5)), rel=1e-14)


def test_unjudged_as_nonrelevant(two_bin_case):
    # The unjudged document of q1 sits at 0.4: NR becomes [6, 3]; DO unchanged (min(2, 6) = 2), HSA's first log-ratio falls.
    qrels, run = two_bin_case
    m = pf.HSA(bins=2, unjudged='nonrel')
    assert _calc([m], qrels, run)[m] == pytest.approx(2 * (math.log(5 / 3) - math.log(2 / 6)), rel=1e-14)


def test_rank_normalisation_and_cutoff(two_bin_case):
    # norm='rank' with cutoff 5: q1's top 5 by score are c b h d u → ranks 1, .75, .5, .25, 0 → labels 1 2 0 1 (u skipped);
    # q2's top 5: o k j n m → 1 .75 .5 .25 0 → labels 0 3 1 0 0. R (bins=2): q1 c, b | d → bin 1: c(1), b(.75); bin 0: d(.25)
    # → R = [1, 2] + q2 k(.75), j(.5) → [1, 4]; NR: q1 h(.5) → bin 1; q2 o(1) bin 1, n(.25), m(0) bin 0 → NR = [2, 2].
    qrels, run = two_bin_case
    do, hsa = pf.DO(5, bins=2, norm='rank'), pf.HSA(5, bins=2, norm='rank')
    values = _calc([do, hsa], qrels, run)
    assert values[do] == pytest.approx(math.log(1) + math.log(2), rel=1e-14)
    assert values[hsa] == pytest.approx(2 * (math.log(4 / 2) - math.log(1 / 2)), rel=1e-14)


def test_constant_scores_are_left_out_with_a_count(two_bin_case, caplog):
    qrels, run = two_bin_case
    run = pd.concat([run, pd.DataFrame({'qid': 'q3', 'docno': ['x', 'y'], 'score': 1.0})])
    qrels = pd.concat([qrels, pd.DataFrame({'qid': 'q3', 'docno': ['x', 'y'], 'label': [1, 0]})])
    with caplog.at_level(logging.WARNING, logger='pyterrier_frechet'):
        values = _calc([pf.DO(bins=2)], qrels, run)
    assert values[pf.DO(bins=2)] == pytest.approx(math.log(6), rel=1e-14)  # as without q3
    assert 'left out 1 of 3 queries' in caplog.text and 'all scores equal' in caplog.text


def test_hsa_nan_is_warned():
    qrels, run = _frames({'q1': [('a', 1.0, 1), ('b', 0.0, 0), ('c', 0.9, 1)]})
    with pytest.warns(UserWarning, match='fewer than two bins'):
        value = _calc([pf.HSA], qrels, run)[pf.HSA]
    assert math.isnan(value)


def test_in_experiment_beside_ndcg(two_bin_case):
    qrels, run = two_bin_case
    topics = pd.DataFrame({'qid': ['q1', 'q2'], 'query': ''})
    table = pt.Experiment([pt.Transformer.from_df(run)], topics, qrels, eval_metrics=[pf.DO(bins=2), pf.HSA(bins=2), ir_measures.nDCG@10],
                          names=['sys'])
    assert table['DO(bins=2)'][0] == pytest.approx(math.log(6), rel=1e-14)
    assert table['HSA(bins=2)'][0] == pytest.approx(2 * (math.log(5 / 3) - math.log(2 / 5)), rel=1e-14)
    assert 0 < table['nDCG@10'][0] <= 1


def test_declarations():
    assert ir_measures.parse_measure('DO(bins=20)@100') == pf.DO(100, bins=20)
    assert repr(pf.HSA(norm='rank')) == "HSA(norm='rank')"
    assert pf.DO.HIGHER_IS_BETTER is False and pf.HSA.HIGHER_IS_BETTER is True
    from pyterrier_frechet.analyses.correlation import higher_is_better
    assert not higher_is_better('DO@100') and higher_is_better('HSA@100')


@pytest.mark.parametrize('measure,match', [
    (lambda: pf.DO(bins=1), 'bins'),
    (lambda: pf.HSA(norm='zscore'), 'norm'),
    (lambda: pf.DO(unjudged='maybe'), 'unjudged'),
])
def test_bad_parameters(two_bin_case, measure, match):
    qrels, run = two_bin_case
    with pytest.raises(ValueError, match=match):
        _calc([measure()], qrels, run)


def test_no_relevant_document_raises(two_bin_case):
    qrels, run = two_bin_case
    with pytest.raises(ValueError, match='no document with relevance >= 5'):
        _calc([pf.DO(rel=5)], qrels, run)
