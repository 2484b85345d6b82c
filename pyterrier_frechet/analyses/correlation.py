"""Correlation of metrics across systems (FD paper §7.1, Table 4): Kendall τ-b, Spearman ρ, Pearson r, and the
top-weighted AP correlation τ_AP (Yilmaz, Aslam & Robertson 2008), which counts a swap among the best systems more
than one among the worst.

τ_AP is asymmetric; one convention everywhere (``correlate``, ``agreement``, ``report``, :func:`correlations`,
:func:`tau_intervals`): **the classical per-query measure (e.g. nDCG@10) is the reference ranking** and the other
measure (FD, ...) the ranking under test, whose top positions weigh most — as in Yilmaz et al., who score a
candidate ranking against the "true" one. Between two classical measures, or two set measures, the one named
first is the reference (``agreement``'s reference, the first per-query measure, follows from the same rule). The
``tau_ap_reference`` column names it.

Orientation: a lower-is-better metric (FD, whose measure says ``HIGHER_IS_BETTER = False``, and ``mrt``) is
negated before correlating, so that a positive coefficient always means the two metrics *agree* on which
systems are better. The ``oriented`` column of the result says which metrics were flipped.
"""
import warnings
from typing import Iterable, List, Optional, Sequence


import ir_measures
import numpy as np
import pandas as pd
import scipy.stats

from ..core.intervals import check_tail_samples
from ..evaluation.evaluate import NO_VECTOR_COLUMNS
from ..measures.base import LOWER_IS_BETTER_COLUMNS, column_label, higher_is_better, is_set_measure


def tau_ap(x, y) -> float:
    """AP correlation τ_AP of the ranking by ``x`` (the ranking under test) against the reference ranking by ``y``
    (higher = better in both):

        τ_AP = 2/(N−1) Σ_{i=2..N} C(i)/(i−1) − 1

    where, walking down the ranking by ``x``, C(i) counts the i−1 systems above the i-th that the reference also
    ranks above it (Yilmaz, Aslam and Robertson, "A New Rank Correlation Coefficient for Information Retrieval",
    SIGIR 2008, eq. 2). 1: the same ranking; −1: reversed; 0 in expectation for a random ranking. Asymmetric: an
    error at the top of the ``x`` ranking costs more. Ties (not defined in the paper) get half credit: a system
    above the i-th that either ranking ties with it counts ½ in C(i). NaN, like Kendall's τ-b, when either
    ranking is constant (it orders nothing: every pair would be a tie worth ½, a meaningless 0)."""
    x, y = np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)
    if x.shape != y.shape or x.ndim != 1:
        raise ValueError(f'tau_ap needs two equally long 1-D arrays, got shapes {x.shape} and {y.shape}')
    if len(x) < 2 or not (np.isfinite(x).all() and np.isfinite(y).all()) or np.ptp(x) == 0 or np.ptp(y) == 0:
        return float('nan')
    order = np.argsort(-x, kind='stable')
    total = 0.0
    for pos in range(1, len(x)):
        i, above = order[pos], order[:pos]
        credit = np.where(y[above] > y[i], 1.0, np.where(y[above] == y[i], 0.5, 0.0))
        credit[x[above] == x[i]] = 0.5
        total += credit.mean()
    return float(2.0 * total / (len(x) - 1) - 1.0)


def _classical(metric: str) -> bool:
    """A per-query measure of ir_measures (nDCG@10, RR, ...): not a set measure of this package, not ``mrt``."""
    if metric in LOWER_IS_BETTER_COLUMNS:
        return False
    try:
        return not is_set_measure(ir_measures.parse_measure(metric))
    except (NameError, ValueError, SyntaxError, KeyError, AttributeError):
        return False


def tau_ap_reference(a: str, b: str, order: Sequence[str] = ()) -> str:
    """Which of metrics ``a`` and ``b`` is τ_AP's reference ranking: the classical per-query measure; if both or
    neither are, the one earlier in ``order`` (else ``a``). See the module docstring."""
    ca, cb = _classical(a), _classical(b)
    if ca != cb:
        return a if ca else b
    pos = {m: i for i, m in reversed(list(enumerate(order)))}
    return b if pos.get(b, len(order)) < pos.get(a, len(order)) else a


def correlations(table: pd.DataFrame, metrics: Optional[Sequence[str]] = None, pairs: Optional[Iterable] = None) -> pd.DataFrame:
    """Kendall τ-b, Spearman and Pearson (with p-values) and τ_AP (:func:`tau_ap`, against the reference ranking
    :func:`tau_ap_reference` chooses — the classical measure — named in ``tau_ap_reference``) for every pair of
    metric columns of ``table`` (one row per system), lower-is-better metrics negated first (see the module
    docstring).

    Args:
        table: systems × metrics (a ``name`` column, if present, is ignored).
        metrics: the columns to correlate (default: every numeric column except ``name``).
        pairs: restrict to these (a, b) pairs.
    """
    if metrics is None:
        metrics = [c for c in table.columns
                   if c != 'name' and c not in NO_VECTOR_COLUMNS and pd.api.types.is_numeric_dtype(table[c])]
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
        row = {'a': a, 'b': b, 'n': int(ok.sum()), 'kendall_tau': np.nan, 'kendall_p': np.nan, 'spearman': np.nan,
               'spearman_p': np.nan, 'pearson': np.nan, 'pearson_p': np.nan, 'tau_ap': np.nan,
               'tau_ap_reference': tau_ap_reference(a, b, metrics), 'oriented': ','.join(m for m in (a, b) if sign[m] < 0)}
        constant = [m for m, v in ((a, x[ok]), (b, y[ok])) if len(v) and np.ptp(v) == 0]
        if ok.sum() < 3 or constant:
            # scipy would warn (ConstantInputWarning) and return NaN: say why instead, once, in our words
            warnings.warn(f'no correlation between {a} and {b}: '
                          + (f'{constant} constant across the systems' if constant else f'only {int(ok.sum())} systems with both values'),
                          stacklevel=2)
        else:
            tau = scipy.stats.kendalltau(x[ok], y[ok])  # tau-b: ties handled
            rho = scipy.stats.spearmanr(x[ok], y[ok])
            r = scipy.stats.pearsonr(x[ok], y[ok])
            row.update({'kendall_tau': float(tau.statistic), 'kendall_p': float(tau.pvalue), 'spearman': float(rho.statistic),
                        'spearman_p': float(rho.pvalue), 'pearson': float(r.statistic), 'pearson_p': float(r.pvalue),
                        'tau_ap': tau_ap(x[ok], y[ok]) if row['tau_ap_reference'] == b else tau_ap(y[ok], x[ok])})
        rows.append(row)
    return pd.DataFrame(rows)


def agreement_notes(table: pd.DataFrame, measures) -> List[str]:
    """Kendall τ-b of every set measure's column (FD, DO, HSA, ...) against the first other measure's column, across
    runs, oriented as :func:`correlations` does (lower-is-better metrics negated, positive = agreement); one line each."""
    set_cols = [column_label(m) for m in measures if is_set_measure(m)]
    ref = [column_label(m) for m in measures if not is_set_measure(m)]
    if len(table) < 3 or not set_cols or not ref:
        return []
    corr = correlations(table, [ref[0]] + set_cols, pairs=[(col, ref[0]) for col in set_cols])
    return [f'Kendall tau({row.a}, {row.b}) over {row.n} runs = {row.kendall_tau:.3f} (p = {row.kendall_p:.2g})'
            + (f'; {row.oriented} negated (lower is better), so positive tau means agreement' if row.oriented else '')
            for row in corr.itertuples()]


#: What the τ (and τ_AP) interval of :func:`tau_intervals` is for, as the paper table and the report say it.
TAU_ESTIMAND = ('Kendall tau-b across the systems of their expected values at this number of queries (E[FD̂ₙ], the '
                'mean of a per-query measure; lower-is-better measures negated)')


def kendall_tau_b(u, v) -> float:
    """Kendall τ-b; NaN without scipy's warning when either ranking is constant (the caller says so once)."""
    if np.ptp(u) == 0 or np.ptp(v) == 0:
        return float('nan')
    return float(scipy.stats.kendalltau(u, v).statistic)


def kendall_tau_b_columns(xs, ys) -> np.ndarray:
    """:func:`kendall_tau_b` of every column pair of ``xs`` and ``ys`` (systems × samples) at once: (C − D) over
    √(pairs not tied in x · pairs not tied in y) from the signs of every pair's differences, the counts scipy's
    τ-b divides the same way; NaN where a column is constant."""
    xs, ys = np.asarray(xs, dtype=np.float64), np.asarray(ys, dtype=np.float64)
    i, j = np.triu_indices(len(xs), 1)
    sx, sy = np.sign(xs[i] - xs[j]), np.sign(ys[i] - ys[j])
    con_minus_dis = np.sum(sx * sy, axis=0)
    untied_x, untied_y = np.sum(sx != 0, axis=0), np.sum(sy != 0, axis=0)
    with np.errstate(invalid='ignore', divide='ignore'):
        tau = con_minus_dis / np.sqrt(untied_x) / np.sqrt(untied_y)
    tau[(untied_x == 0) | (untied_y == 0)] = np.nan
    return np.clip(tau, -1.0, 1.0)


def rank_correlation_interval(fn, x, y, xs, ys, ci: float = 0.95, method: str = 'percentile'):
    """``(fn(x, y), low, high)``: a rank correlation (:func:`kendall_tau_b`, :func:`tau_ap`) of two measures across the
    systems (one value per system, higher = better) and its interval over the bootstrap samples ``xs``, ``ys``
    (systems × samples, the same query draws in a column): ``method`` of :func:`~pyterrier_frechet.core.intervals.interval`
    (the package prints ``'percentile'``). The one computation :func:`tau_intervals` and the calibration harness
    share."""
    from ..core.intervals import interval
    point = float(fn(x, y))
    if fn is kendall_tau_b:
        samples = kendall_tau_b_columns(xs, ys)
    else:
        samples = np.array([fn(xs[:, b], ys[:, b]) for b in range(xs.shape[1])], dtype=np.float64)
    low, high = interval(method, point, samples, ci)
    return point, low, high


def tau_intervals(boot, measures, ci: float = 0.95) -> pd.DataFrame:
    """Kendall τ-b and τ_AP (:func:`tau_ap`) of every other measure's column against the first per-query measure's
    column (e.g. nDCG@10, the reference ranking of τ_AP) across the bootstrapped systems, each with the percentile
    interval over the bootstrap's resamples (the same query draws for every system, so each resample is one
    resampled query set evaluated for all systems): over the first draws every measure was computed on — all of
    them, or the first :data:`~pyterrier_frechet.analyses.bootstrap.TAU_DRAWS` (200) where FD is held on those
    only (``bootstrap(..., resample='needed')``, what ``report`` and ``paper_table`` make: FD computed on the first
    :data:`~pyterrier_frechet.analyses.bootstrap.EXACT_DRAWS` and its linearised resamples anchored on them); the
    configuration whose coverage was measured (pt_docs "Calibration"). When the reference (or the
    measure) is constant across the systems, τ and τ_AP and their intervals are NaN, with a warning saying so;
    a bootstrap sample in which one is constant is left out of the interval.

    Returns one row per measure: ``a``, ``b`` (the reference), ``n`` (systems), ``kendall_tau``, ``tau_low``,
    ``tau_high``, ``tau_ap``, ``tau_ap_low``, ``tau_ap_high``, ``draws`` (the resamples the interval is over)."""
    columns = ['a', 'b', 'n', 'kendall_tau', 'tau_low', 'tau_high', 'tau_ap', 'tau_ap_low', 'tau_ap_high', 'draws']
    ref_ms = [m for m in measures if not is_set_measure(m)]
    systems = list(boot.samples)
    if len(systems) < 3 or not ref_ms or len(measures) < 2:
        return pd.DataFrame(columns=columns)
    ref = ref_ms[0]
    values = boot.summary.set_index(['name', 'measure'])['value']
    # the first draws every measure was computed on (all, or TAU_DRAWS where FD was computed on those only)
    draws = boot.common_draws(measures)
    check_tail_samples(draws, ci)  # the percentile interval's tails hold at least one draw each

    def oriented(m, sample=None):
        col = column_label(m)
        sign = 1.0 if higher_is_better(m) else -1.0
        if sample is None:
            return sign * np.array([values[s, col] for s in systems])
        return sign * np.stack([boot.samples[s][col][:draws] for s in systems])

    y, ys = oriented(ref), oriented(ref, True)
    rows = []
    for m in measures:
        if m is ref:
            continue
        x, xs = oriented(m), oriented(m, True)
        ok = [b for b in range(xs.shape[1]) if np.isfinite(xs[:, b]).all() and np.isfinite(ys[:, b]).all()]
        row = {'a': column_label(m), 'b': column_label(ref), 'n': len(systems), 'draws': draws}
        constant = [column_label(k) for k, v in ((ref, y), (m, x)) if np.isfinite(v).all() and np.ptp(v) == 0]
        if constant:
            warnings.warn(f'tau and tau_AP of {row["a"]} against {row["b"]} are undefined (NaN): {", ".join(constant)} '
                          f'{"is" if len(constant) == 1 else "are"} constant across the {len(systems)} systems, so '
                          f'{"it ranks" if len(constant) == 1 else "they rank"} nothing', stacklevel=2)
        for name, fn in (('kendall_tau', kendall_tau_b), ('tau_ap', tau_ap)):
            point, low, high = rank_correlation_interval(fn, x, y, xs[:, ok], ys[:, ok], ci)
            prefix = 'tau' if name == 'kendall_tau' else 'tau_ap'
            row.update({name: point, f'{prefix}_low': low, f'{prefix}_high': high})
        rows.append(row)
    return pd.DataFrame(rows, columns=columns)
