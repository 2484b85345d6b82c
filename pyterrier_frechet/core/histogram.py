"""Histogram analysis of retrieval scores (Krstovski, Smith & Kurtz, SIGIR 2015): the numeric core of DO and HSA.

Pure numpy. Scores of relevant and of non-relevant documents, already normalised to [0, 1], are counted
in ``bins`` equally spaced bins over [0, 1] (bin b is centred at (b + ½)/bins; a score of exactly 1 falls in
the last bin). ``B'`` is the set of bins where *both* histograms are non-zero. With natural logarithms:

* Distributional Overlap, Eq. 1: DO = Σ_{b ∈ B'} log min(h_R[b], h_NR[b]). Lower is better (less overlap).
  An empty B' gives 0 (no overlap at all). DO sums log *counts*, so it grows with the number of scored
  documents: compare systems on the same queries, qrels and depth only.
* Histogram Slope Analysis, Eq. 2: HSA = the least-squares slope of log(h_R[b] / h_NR[b]) against the bin
  centre over B'. Higher is better (relevant documents concentrate at high scores). Undefined (NaN) when
  fewer than two bins are supported.
"""
from typing import NamedTuple, Tuple

import numpy as np


class Histograms(NamedTuple):
    """Counts of relevant and non-relevant scores per bin, and the bin centres."""
    relevant: np.ndarray
    nonrelevant: np.ndarray
    centres: np.ndarray

    @property
    def supported(self) -> np.ndarray:
        """Mask of the bins B' where both histograms are non-zero."""
        return (self.relevant > 0) & (self.nonrelevant > 0)


def _check_bins(bins) -> int:
    if isinstance(bins, bool) or not isinstance(bins, (int, np.integer)) or bins < 2:
        raise ValueError(f'bins must be an integer >= 2, got {bins!r}')
    return int(bins)


def histograms(relevant_scores, nonrelevant_scores, bins: int = 10) -> Histograms:
    """Histograms of normalised scores (each in [0, 1]) over ``bins`` equal bins."""
    bins = _check_bins(bins)
    out = []
    for what, scores in (('relevant', relevant_scores), ('non-relevant', nonrelevant_scores)):
        scores = np.asarray(scores, dtype=np.float64).ravel()
        if not np.isfinite(scores).all():
            raise ValueError(f'{what} scores contain NaN or inf')
        if len(scores) and (scores.min() < 0 or scores.max() > 1):
            raise ValueError(f'{what} scores must be normalised to [0, 1], found [{scores.min():.4g}, {scores.max():.4g}]')
        index = np.minimum((scores * bins).astype(np.int64), bins - 1)
        out.append(np.bincount(index, minlength=bins).astype(np.int64))
    centres = (np.arange(bins, dtype=np.float64) + 0.5) / bins
    return Histograms(out[0], out[1], centres)


def distributional_overlap(h: Histograms) -> float:
    """DO (Eq. 1): Σ over bins with both counts > 0 of log(min(h_R, h_NR)); 0 when no bin is shared."""
    s = h.supported
    return float(np.log(np.minimum(h.relevant[s], h.nonrelevant[s]).astype(np.float64)).sum())


def histogram_slope(h: Histograms) -> float:
    """HSA (Eq. 2): least-squares slope of log(h_R / h_NR) on the bin centre over the shared bins; NaN if < 2."""
    s = h.supported
    if s.sum() < 2:
        return float('nan')
    x = h.centres[s]
    y = np.log(h.relevant[s].astype(np.float64)) - np.log(h.nonrelevant[s].astype(np.float64))
    xc = x - x.mean()
    return float(np.dot(xc, y - y.mean()) / np.dot(xc, xc))


def minmax_normalise(scores) -> Tuple[np.ndarray, bool]:
    """Scores of one ranking mapped to [0, 1] by (s − min)/(max − min); ``ok`` is False for constant scores."""
    scores = np.asarray(scores, dtype=np.float64)
    if len(scores) == 0:
        return scores, False
    lo, hi = scores.min(), scores.max()
    if not hi > lo:
        return np.full_like(scores, np.nan), False
    return (scores - lo) / (hi - lo), True


def rank_normalise(n: int) -> Tuple[np.ndarray, bool]:
    """Normalised ranks of a ranking of ``n`` documents in rank order: 1 for the first, 0 for the last."""
    if n < 2:
        return np.full(n, np.nan), False
    return 1.0 - np.arange(n, dtype=np.float64) / (n - 1), True
