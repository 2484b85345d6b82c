"""Discriminative power (Sakai, "Evaluating Evaluation Metrics based on the Bootstrap", SIGIR 2006): how many
pairs of systems a measure tells apart with a paired test at level α, and the achieved-significance-level (ASL)
curve — every pair's p-value, sorted — from which the share at any α can be read.

Every pair is tested on one :func:`~pyterrier_frechet.analyses.bootstrap.bootstrap` (the same query draws for every
system), with the tests of :func:`~pyterrier_frechet.analyses.significance.compare_systems` read through the same function
(:func:`~pyterrier_frechet.analyses.significance.paired`): ``test='jackknife'`` (the default, as ``compare``'s) is each measure's own test —
FD's and CFD's jackknife t-test, a per-query mean's paired t-test — which reads the leave-outs, so no FD is computed
per resample; ``'bootstrap'`` is Sakai's paired bootstrap test (the count of resampled differences beyond 0,
:func:`~pyterrier_frechet.analyses.significance.bootstrap_p`); ``'normal'`` its normal approximation. No multiple-comparison correction:
discriminative power compares measures with one another at one α, as Sakai does. The level and power of the tests
are measured by ``python -m pyterrier_frechet calibrate --level`` (pt_docs "Calibration").
"""
from typing import NamedTuple, Optional, Sequence

import numpy as np
import pandas as pd


class DiscriminativePower(NamedTuple):
    summary: pd.DataFrame  # one row per measure: measure, pairs, separated, share, alpha, test
    asl: pd.DataFrame  # the ASL curves: measure, rank (1 = smallest p), a, b, p, test


def discriminative_power(boot, measures: Optional[Sequence] = None, alpha: float = 0.05,
                         test: str = 'jackknife') -> DiscriminativePower:
    """The share of system pairs each measure separates at ``alpha`` and its ASL curve.

    Args:
        boot: a :class:`~pyterrier_frechet.analyses.bootstrap.BootstrapResult` of at least 2 systems.
        measures: the measures (objects, names or column labels of ``boot``; default: every measure of ``boot``).
        alpha: the level (default 0.05). With ``test='bootstrap'``, refused if no p-value of ``boot``'s sample count
            can fall below it.
        test: ``'jackknife'`` (default: each measure's own test, as :func:`~pyterrier_frechet.analyses.significance.compare_systems`),
            ``'normal'`` or ``'bootstrap'`` (Sakai's paired bootstrap; needs the measures computed on the resamples,
            ``bootstrap(..., resample='all')``). The ``test`` column of both frames names the test each p came from.
    """
    from ..core.intervals import finite_population_correction
    from ..measures.base import column_label
    from .options import TESTS, check_alpha, check_test_resolution
    from .significance import check_drawn, paired, point_values
    check_alpha(alpha)
    if test not in TESTS:
        raise ValueError(f'test must be one of {TESTS}, got {test!r}')
    systems = list(boot.samples)
    if len(systems) < 2:
        raise ValueError(f'discriminative power needs at least 2 systems, got {len(systems)}')
    labels = (list(dict.fromkeys(boot.summary['measure'])) if len(boot.summary)
              else list(dict.fromkeys(k for per in boot.samples.values() for k in per)))
    asked = labels if measures is None else [m if isinstance(m, str) else column_label(m) for m in measures]
    missing = [label for label in asked if label not in labels]
    if missing:
        raise ValueError(f'{missing} not bootstrapped (measures of this bootstrap: {labels})')
    check_drawn(boot, asked, test)
    if test == 'bootstrap':
        check_test_resolution(boot.n_samples, alpha)
    pairs = [(a, b) for i, a in enumerate(systems) for b in systems[i + 1:]]
    fpc = finite_population_correction(len(boot.queries), boot.population)
    values = point_values(boot)
    curves, rows = [], []
    for label in asked:
        tested = [paired(boot, label, a, b, fpc, values).p(test) for a, b in pairs]
        p = np.array([t[0] for t in tested])
        used = ', '.join(dict.fromkeys(t[1] for t in tested))
        order = np.argsort(p, kind='stable')
        curves.append(pd.DataFrame({'measure': label, 'rank': np.arange(1, len(pairs) + 1),
                                    'a': [pairs[i][0] for i in order], 'b': [pairs[i][1] for i in order], 'p': p[order],
                                    'test': [tested[i][1] for i in order]}))
        separated = int(np.sum(p < alpha))
        rows.append({'measure': label, 'pairs': len(pairs), 'separated': separated, 'share': separated / len(pairs),
                     'alpha': alpha, 'test': used})
    return DiscriminativePower(pd.DataFrame(rows), pd.concat(curves, ignore_index=True))


def agreement_table(boot, measures, ci: float = 0.95, alpha: float = 0.05,
                    power: Optional[DiscriminativePower] = None, test: str = 'jackknife') -> pd.DataFrame:
    """One row per measure: Kendall τ and τ_AP against the first per-query measure (the reference, e.g. nDCG@10),
    each with its percentile interval over the bootstrap samples
    (:func:`~pyterrier_frechet.analyses.correlation.tau_intervals`), and the number and share of system pairs the
    measure separates at ``alpha`` with ``test`` (:func:`discriminative_power`, or ``power`` when it was computed
    already). The reference's own row has no τ."""
    from ..measures.base import column_label
    from .correlation import tau_intervals
    labels = [column_label(m) for m in measures]
    power = (power or discriminative_power(boot, labels, alpha, test)).summary.set_index('measure')
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
