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


def bin_centres(bins: int) -> np.ndarray:
    """The centres (b + ½)/bins of the ``bins`` equal bins over [0, 1]."""
    return (np.arange(_check_bins(bins), dtype=np.float64) + 0.5) / bins


def bin_index(scores, bins: int, what: str = 'scores') -> np.ndarray:
    """The bin of each normalised score (in [0, 1]): ⌊score · bins⌋, a score of exactly 1 in the last bin."""
    bins = _check_bins(bins)
    scores = np.asarray(scores, dtype=np.float64).ravel()
    if not np.isfinite(scores).all():
        raise ValueError(f'{what} contain NaN or inf')
    if len(scores) and (scores.min() < 0 or scores.max() > 1):
        raise ValueError(f'{what} must be normalised to [0, 1], found [{scores.min():.4g}, {scores.max():.4g}]')
    return np.minimum((scores * bins).astype(np.int64), bins - 1)


def group_counts(groups, scores, n_groups: int, bins: int, what: str = 'scores') -> np.ndarray:
    """Per-group histograms: an (n_groups, bins) int64 matrix counting each normalised score of group ``groups[i]``
    (an integer in [0, n_groups)) in its bin (:func:`bin_index`)."""
    index = bin_index(scores, bins, what)
    groups = np.asarray(groups, dtype=np.int64).ravel()
    flat = np.bincount(groups * bins + index, minlength=n_groups * bins) if len(index) else np.zeros(n_groups * bins)
    return flat.astype(np.int64).reshape(n_groups, bins)


def histograms(relevant_scores, nonrelevant_scores, bins: int = 10) -> Histograms:
    """Histograms of normalised scores (each in [0, 1]) over ``bins`` equal bins."""
    bins = _check_bins(bins)
    out = [group_counts(np.zeros(np.size(scores), dtype=np.int64), scores, 1, bins, f'{what} scores')[0]
           for what, scores in (('relevant', relevant_scores), ('non-relevant', nonrelevant_scores))]
    return Histograms(out[0], out[1], bin_centres(bins))


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


def _runs(groups: np.ndarray):
    """Start and length of each run of equal consecutive values of ``groups``."""
    n = len(groups)
    starts = np.flatnonzero(np.r_[True, groups[1:] != groups[:-1]]) if n else np.zeros(0, dtype=np.int64)
    return starts, np.diff(np.r_[starts, n])


def normalise_rankings(groups, scores, norm: str = 'minmax') -> np.ndarray:
    """The scores of several rankings, each normalised to [0, 1] on its own; NaN for a ranking that cannot be.

    ``groups``: the ranking of each row (the rows of one ranking contiguous, in rank order); ``scores``: finite.
    ``'minmax'``: (s − min)/(max − min) within the ranking (NaN if its scores are all equal); ``'rank'``: the row
    at rank r (from 0) of a ranking of n gets (n − 1 − r)/(n − 1), 1 for the first, 0 for the last (NaN if n = 1).
    """
    if norm not in ('minmax', 'rank'):
        raise ValueError(f"norm must be 'minmax' or 'rank', got {norm!r}")
    groups = np.asarray(groups).ravel()
    scores = np.asarray(scores, dtype=np.float64).ravel()
    starts, sizes = _runs(groups)
    out = np.full(len(scores), np.nan)
    if not len(scores):
        return out
    if norm == 'rank':
        position = np.arange(len(scores), dtype=np.float64) - np.repeat(starts, sizes)
        span = np.repeat(sizes, sizes).astype(np.float64) - 1
        return np.divide(span - position, span, out=out, where=span > 0)
    lo = np.repeat(np.minimum.reduceat(scores, starts), sizes)
    span = np.repeat(np.maximum.reduceat(scores, starts), sizes) - lo
    return np.divide(scores - lo, span, out=out, where=span > 0)


def minmax_normalise(scores) -> Tuple[np.ndarray, bool]:
    """Scores of one ranking mapped to [0, 1] by (s − min)/(max − min); ``ok`` is False for constant scores."""
    scores = np.asarray(scores, dtype=np.float64)
    if len(scores) == 0:
        return scores, False
    out = normalise_rankings(np.zeros(len(scores), dtype=np.int64), scores, 'minmax')
    return out, not np.isnan(out).any()


def rank_normalise(n: int) -> Tuple[np.ndarray, bool]:
    """Normalised ranks of a ranking of ``n`` documents in rank order: 1 for the first, 0 for the last."""
    out = normalise_rankings(np.zeros(n, dtype=np.int64), np.zeros(n), 'rank')
    return out, n >= 2
