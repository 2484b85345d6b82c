"""Discriminative power (Sakai, "Evaluating Evaluation Metrics based on the Bootstrap", SIGIR 2006): how many
pairs of systems a measure tells apart with a paired test at level α, and the achieved-significance-level (ASL)
curve — every pair's p-value, sorted — from which the share at any α can be read.

The test of each pair is the paired bootstrap of :mod:`.significance` (:func:`~.significance.bootstrap_p`) on the
samples of one :func:`~pyterrier_frechet.analyses.bootstrap.bootstrap` (the same query draws for every system), so
every measure is tested on the same resampled query sets. No multiple-comparison correction: discriminative power
compares measures with one another at one α, as Sakai does. The level of the test (how often it rejects two equal
systems) is measured by ``python -m pyterrier_frechet calibrate --level`` (pt_docs "Calibration").
"""
from typing import NamedTuple, Optional, Sequence

import numpy as np
import pandas as pd

from .significance import bootstrap_p


class DiscriminativePower(NamedTuple):
    summary: pd.DataFrame  # one row per measure: measure, pairs, separated, share, alpha
    asl: pd.DataFrame  # the ASL curves: measure, rank (1 = smallest p), a, b, p


def discriminative_power(boot, measures: Optional[Sequence[str]] = None, alpha: float = 0.05) -> DiscriminativePower:
    """The share of system pairs each measure separates at ``alpha`` and its ASL curve.

    Args:
        boot: a :class:`~pyterrier_frechet.analyses.bootstrap.BootstrapResult` of at least 2 systems.
        measures: column labels of the measures (default: every measure of ``boot``).
        alpha: the level (default 0.05). Refused if no p-value of ``boot``'s sample count can fall below it.
    """
    from .significance import check_test_resolution
    systems = list(boot.samples)
    if len(systems) < 2:
        raise ValueError(f'discriminative power needs at least 2 systems, got {len(systems)}')
    if measures is None:
        measures = list(boot.samples[systems[0]])
    missing = [m for m in measures if m not in boot.samples[systems[0]]]
    if missing:
        raise ValueError(f'{missing} not bootstrapped (measures of this bootstrap: {list(boot.samples[systems[0]])})')
    check_test_resolution(len(boot.samples[systems[0]][measures[0]]), alpha)
    pairs = [(a, b) for i, a in enumerate(systems) for b in systems[i + 1:]]
    curves, rows = [], []
    for m in measures:
        p = np.array([bootstrap_p(boot.samples[a][m] - boot.samples[b][m]) for a, b in pairs])
        order = np.argsort(p, kind='stable')
        curves.append(pd.DataFrame({'measure': m, 'rank': np.arange(1, len(pairs) + 1),
                                    'a': [pairs[i][0] for i in order], 'b': [pairs[i][1] for i in order], 'p': p[order]}))
        separated = int(np.sum(p < alpha))
        rows.append({'measure': m, 'pairs': len(pairs), 'separated': separated, 'share': separated / len(pairs),
                     'alpha': alpha})
    return DiscriminativePower(pd.DataFrame(rows), pd.concat(curves, ignore_index=True))


def agreement_table(boot, measures, ci: float = 0.95, alpha: float = 0.05,
                    power: Optional[DiscriminativePower] = None) -> pd.DataFrame:
    """One row per measure: Kendall τ and τ_AP against the first per-query measure (the reference, e.g. nDCG@10),
    each with its percentile interval over the bootstrap samples
    (:func:`~pyterrier_frechet.analyses.correlation.tau_intervals`), and the number and share of system pairs the
    measure separates at ``alpha`` (:func:`discriminative_power`, or ``power`` when it was computed already). The
    reference's own row has no τ."""
    from ..measures.base import column_label
    from .correlation import tau_intervals
    labels = [column_label(m) for m in measures]
    power = (power or discriminative_power(boot, labels, alpha)).summary.set_index('measure')
    taus = tau_intervals(boot, measures, ci).set_index('a')
    rows = []
    for label in labels:
        row = {'measure': label}
        for col in ('b', 'kendall_tau', 'tau_low', 'tau_high', 'tau_ap', 'tau_ap_low', 'tau_ap_high'):
            row['reference' if col == 'b' else col] = taus.loc[label, col] if label in taus.index else np.nan
        row.update({k: power.loc[label, k] for k in ('pairs', 'separated', 'share')})
        rows.append(row)
    return pd.DataFrame(rows)


__all__ = ['DiscriminativePower', 'agreement_table', 'discriminative_power']
