"""Correlation of metrics across systems (FD paper §7.1, Table 4): Kendall τ-b, Spearman ρ, Pearson r.

Orientation: a lower-is-better metric (FD, whose measure says ``HIGHER_IS_BETTER = False``, and ``mrt``) is
negated before correlating, so that a positive coefficient always means the two metrics *agree* on which
systems are better. The ``oriented`` column of the result says which metrics were flipped.
"""
from typing import Iterable, Optional, Sequence

import ir_measures
import numpy as np
import pandas as pd
import scipy.stats

_LOWER_IS_BETTER_NAMES = {'mrt'}


def higher_is_better(metric: str) -> bool:
    """Whether larger values of ``metric`` (a column name of a results table) are better."""
    if metric in _LOWER_IS_BETTER_NAMES:
        return False
    try:
        measure = ir_measures.parse_measure(metric)
    except (NameError, ValueError, SyntaxError):
        return True
    return bool(getattr(measure, 'HIGHER_IS_BETTER', True))


def correlations(table: pd.DataFrame, metrics: Optional[Sequence[str]] = None, pairs: Optional[Iterable] = None) -> pd.DataFrame:
    """Kendall τ-b, Spearman and Pearson (with p-values) for every pair of metric columns of ``table``
    (one row per system), lower-is-better metrics negated first (see the module docstring).

    Args:
        table: systems × metrics (a ``name`` column, if present, is ignored).
        metrics: the columns to correlate (default: every numeric column except ``name``).
        pairs: restrict to these (a, b) pairs.
    """
    if metrics is None:
        metrics = [c for c in table.columns if c != 'name' and pd.api.types.is_numeric_dtype(table[c])]
    if len(table) < 3:
        raise ValueError(f'correlations need at least 3 systems, got {len(table)}')
    missing = [m for m in metrics if m not in table.columns]
    if missing:
        raise ValueError(f'no such column(s) {missing} in the results table (columns: {list(table.columns)})')
    sign = {m: 1.0 if higher_is_better(m) else -1.0 for m in metrics}
    if pairs is None:
        pairs = [(a, b) for i, a in enumerate(metrics) for b in metrics[i + 1:]]
    rows = []
    for a, b in pairs:
        x = sign[a] * table[a].to_numpy(dtype=np.float64)
        y = sign[b] * table[b].to_numpy(dtype=np.float64)
        ok = np.isfinite(x) & np.isfinite(y)
        tau = scipy.stats.kendalltau(x[ok], y[ok])  # tau-b: ties handled
        rho = scipy.stats.spearmanr(x[ok], y[ok])
        r = scipy.stats.pearsonr(x[ok], y[ok])
        rows.append({'a': a, 'b': b, 'n': int(ok.sum()), 'kendall_tau': float(tau.statistic), 'kendall_p': float(tau.pvalue),
                     'spearman': float(rho.statistic), 'spearman_p': float(rho.pvalue),
                     'pearson': float(r.statistic), 'pearson_p': float(r.pvalue),
                     'oriented': ','.join(m for m in (a, b) if sign[m] < 0)})
    return pd.DataFrame(rows)
