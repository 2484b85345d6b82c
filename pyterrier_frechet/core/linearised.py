"""A statistic's bootstrap resamples from its leave-outs (pure numpy): linearised, and anchored on a few exact draws.

τ's percentile interval between FD and a classical measure (:func:`~pyterrier_frechet.tau_intervals`) reads FD on
every one of its resamples — one eigenvalue solve each, per run and FD measure. The jackknife's leave-outs already
give each query's influence on FD; the first-order expansion of FD in the queries' weights turns any resample's
counts into a value at the cost of a dot product (:func:`linearised_resamples`). That expansion keeps the
resamples' spread and drops their second-order shift (a resampled FD sits above FD̂, as FD over fewer distinct
queries does, by an amount that differs between runs), which moved τ's interval off its truth in a world built independently of the package
(pt_docs "Calibration", 114 of 123); :func:`anchored_resamples` adds back each run's shift, estimated from FD computed
exactly on the first few draws.
"""
from typing import Optional

import numpy as np


def linearised_resamples(estimate: float, jackknife, counts, groups: Optional[np.ndarray] = None,
                         block: int = 256) -> np.ndarray:
    """A statistic's bootstrap resamples linearised from its leave-outs (the jackknife's estimate of each query's
    influence; Efron 1982, §6.4 and ch. 10): no statistic is recomputed on a resample.

    With ``n`` unit queries left out in groups (one query each, the delete-a-group jackknife's groups or the cluster
    jackknife's), ``m_g`` queries in group g, the leave-outs θ₍g₎ and ``c_bg`` how often resample b draws g's queries,

        θ*_b = θ̂ + (1/N_b) Σ_g (c_bg − m_g) · (n − m_g)/m_g · (θ̂ − θ̂₍g₎),   N_b = Σ_g c_bg,

    the first-order expansion of the statistic in the queries' weights whose influence values are the jackknife's:
    (n − m_g)(θ̂ − θ̂₍g₎) is group g's summed influence. For a mean of per-query values it is the resampled mean
    exactly; for FD it keeps the jackknife's variance and drops the resamples' second-order shift.

    Args:
        estimate: θ̂ on the full set.
        jackknife: the leave-out values θ₍g₎, one per group; one undefined (NaN) makes every resample NaN, as it
            leaves the jackknife's own interval empty.
        counts: (resamples × queries) how often each query is drawn (any integer or float dtype).
        groups: the leave-out group of each query of ``counts``' columns (0…G−1, −1: not left out, ignored);
            default: column i is leave-out i.
        block: resamples converted to float64 at a time (bounds the memory at many queries).

    Returns the B resamples (float64; NaN where a resample draws no unit query).
    """
    jack = np.asarray(jackknife, dtype=np.float64)
    counts = np.asarray(counts)
    if groups is None:
        if counts.shape[1] != len(jack):
            raise ValueError(f'counts has {counts.shape[1]} queries for {len(jack)} leave-outs; pass groups=')
        groups = np.arange(len(jack))
    groups = np.asarray(groups, dtype=np.int64)
    if groups.shape != (counts.shape[1],) or (len(groups) and groups.max() >= len(jack)):
        raise ValueError(f'groups must give each of the {counts.shape[1]} queries a leave-out 0…{len(jack) - 1} or −1')
    if not np.isfinite(jack).all() or not np.isfinite(estimate):
        return np.full(len(counts), np.nan)
    units = groups >= 0
    sizes = np.bincount(groups[units], minlength=len(jack)).astype(np.float64)
    n = sizes.sum()
    held = sizes > 0
    influence = np.zeros(len(jack))
    influence[held] = (n - sizes[held]) / sizes[held] * (float(estimate) - jack[held])
    # a sparse-free sum over each group's columns: the queries ordered by group, summed between the group starts
    order = np.argsort(groups[units], kind='stable')
    columns = np.flatnonzero(units)[order]
    starts = np.searchsorted(groups[units][order], np.arange(len(jack)))
    out = np.empty(len(counts))
    for b0 in range(0, len(counts), block):
        part = counts[b0:b0 + block][:, columns].astype(np.float64)
        per_group = np.add.reduceat(part, starts, axis=1) if part.shape[1] else np.zeros((len(part), len(jack)))
        per_group[:, sizes == 0] = 0.0   # reduceat repeats a column at an empty group's start
        total = per_group.sum(axis=1)
        with np.errstate(invalid='ignore', divide='ignore'):
            out[b0:b0 + block] = float(estimate) + ((per_group - sizes) @ influence) / total
    return out


def anchored_resamples(estimate: float, jackknife, counts, exact, groups: Optional[np.ndarray] = None) -> np.ndarray:
    """The linearised resamples (:func:`linearised_resamples`) shifted by the mean of (exact − linearised) over the
    first ``len(exact)`` draws, whose exact values are ``exact``: the expansion's spread with the resampled
    statistic's own location. With K exact draws the shift's error is the sd of (exact − linearised) over √K —
    small beside the resamples' spread where the expansion holds (DL19 at d = 384: pt_docs "Calibration").

    Args:
        estimate, jackknife, counts, groups: as :func:`linearised_resamples` (``counts`` holds every draw).
        exact: the statistic computed on the first K rows of ``counts`` (K ≤ len(counts)); NaN where undefined.

    Returns the resamples of every row of ``counts`` (float64); all NaN where no draw has both values.
    """
    exact = np.asarray(exact, dtype=np.float64)
    if exact.ndim != 1 or len(exact) > len(counts):
        raise ValueError(f'exact holds {exact.shape} values for {len(counts)} draws; pass the first K ≤ {len(counts)}')
    lin = linearised_resamples(estimate, jackknife, counts, groups)
    gap = exact - lin[:len(exact)]
    gap = gap[np.isfinite(gap)]
    if not len(gap):
        return np.full(len(counts), np.nan)
    return lin + gap.mean()
