"""Where an FD measure and a classical measure contradict each other: both paired tests reject for the same pair of
systems, in opposite directions (FD calls the system significantly worse than the baseline, nDCG@10 significantly
better, or the reverse).

That is not an error of either measure: FD compares the *distribution* of the retrieved documents with the relevant
documents' (their centre and their spread), nDCG counts relevant documents near the top. A retriever that returns a
tight neighbourhood of the query — more relevant documents, less varied than the relevant set — can gain nDCG and
lose FD (pt_docs "When FD and nDCG disagree"). A reader must be shown such a pair, not left to find
it: the paper table marks the FD cell :data:`MARK`, ``report`` writes ``disagreements.csv`` and lists them, and
:func:`disagreements` reads them from ``compare_systems``' frame or from ``pt.Experiment(baseline=...)``'s.
"""
import re
import warnings
from typing import Dict, Optional

import ir_measures
import numpy as np
import pandas as pd

from ..evaluation.evaluate import parse_measures
from ..measures.base import column_label, higher_is_better, is_set_measure, is_vector_measure


#: The mark of an FD cell whose paired test contradicts a classical measure's (both significant, opposite directions).
MARK = '⇄'

#: The columns of :func:`disagreements`' frame.
COLUMNS = ('system', 'baseline', 'fd_measure', 'classical_measure', 'fd_system', 'fd_baseline', 'fd_p',
           'fd_direction', 'classical_system', 'classical_baseline', 'classical_p', 'classical_direction')


def _measure(label: str, known: Optional[Dict[str, object]] = None):
    """The measure a column label names: from ``known`` (column label → measure object, for labels the parser cannot
    read back, such as an encoder's repr), else parsed, and where that fails the registered measure of its name (before
    ``(`` or ``@``); None for a column that names no measure."""
    measure = (known or {}).get(label)
    if measure is None:
        try:
            measure = parse_measures([label])[0]
        except (ValueError, NameError, SyntaxError, KeyError, TypeError):
            measure = ir_measures.measures.registry.get(re.split(r'[(@]', label, maxsplit=1)[0])
    return measure


def _kind(measure) -> Optional[str]:
    """'fd' for a measure over the embeddings of FD's two sets that has a direction (FD with any parameters, its terms,
    CFD, KID, ...), 'classical' for a per-query measure (nDCG, RR, P, ...), None for anything else (histogram measures,
    SpreadRatio, columns that name no measure)."""
    if measure is None:
        return None
    if is_set_measure(measure):  # a measure over the embeddings of FD's two sets with a direction (not SpreadRatio)
        return 'fd' if is_vector_measure(measure) and measure.ORIENTED else None
    return 'classical'


def _pairs(calls: pd.DataFrame, known=None) -> pd.DataFrame:
    """Contradicting pairs from one frame of calls: per (system, baseline, measure) the two values, the p-value used,
    and the direction of a significant call ('better' / 'worse' for the system against the baseline; '' where the test
    did not reject)."""
    kinds = {m: _kind(_measure(m, known)) for m in calls['measure'].unique()}
    fd = calls[calls['measure'].map(kinds) == 'fd']
    classical = calls[calls['measure'].map(kinds) == 'classical']
    rows = []
    for (system, baseline), group in fd.groupby(['system', 'baseline'], sort=False):
        others = classical[(classical['system'] == system) & (classical['baseline'] == baseline)]
        for f in group[group['direction'] != ''].itertuples():
            for c in others[(others['direction'] != '') & (others['direction'] != f.direction)].itertuples():
                rows.append((system, baseline, f.measure, c.measure, f.value_system, f.value_baseline, f.p,
                             f.direction, c.value_system, c.value_baseline, c.p, c.direction))
    return pd.DataFrame(rows, columns=list(COLUMNS))


def _from_comparisons(frame: pd.DataFrame) -> pd.DataFrame:
    """The calls of :func:`~pyterrier_frechet.compare_systems`' frame (``a`` the first system of each pair — the
    baseline, where one was given — ``b`` the second; ``better`` the Holm-corrected call)."""
    direction = np.where(frame['better'] == frame['b'], 'better', np.where(frame['better'] == frame['a'], 'worse', ''))
    return pd.DataFrame({'system': frame['b'], 'baseline': frame['a'], 'measure': frame['measure'],
                         'value_system': frame['value_b'], 'value_baseline': frame['value_a'],
                         'p': frame['p_holm'], 'direction': direction})


def _from_experiment(frame: pd.DataFrame, alpha: float, known=None) -> pd.DataFrame:
    """The calls of ``pt.Experiment(baseline=...)``'s table: per measure column ``m``, ``m p-value`` (and, with
    ``correction=``, ``m reject`` and ``m p-value corrected``, which are read instead); the baseline is the row whose
    p-values are all NaN."""
    measures = [c[:-len(' p-value')] for c in frame.columns if c.endswith(' p-value')]
    if not measures:
        raise ValueError('this pt.Experiment table has no p-value columns: run pt.Experiment with baseline=')
    p_cols = [f'{m} p-value' for m in measures]
    base = frame[frame[p_cols].isna().all(axis=1)]
    if len(base) != 1:
        raise ValueError(f'cannot tell the baseline row of this pt.Experiment table ({len(base)} rows without p-values)')
    base = base.iloc[0]
    rows = []
    for _, r in frame.drop(index=base.name).iterrows():
        for m in measures:
            corrected = f'{m} p-value corrected'
            p = float(r[corrected] if corrected in frame.columns else r[f'{m} p-value'])
            reject = bool(r[f'{m} reject']) if f'{m} reject' in frame.columns else p < alpha
            measure = _measure(m, known)
            sign = 1.0 if measure is None or higher_is_better(measure) else -1.0
            delta = sign * (float(r[m]) - float(base[m]))
            direction = ('better' if delta > 0 else 'worse') if reject and delta != 0 else ''
            rows.append((r['name'], base['name'], m, float(r[m]), float(base[m]), p, direction))
    return pd.DataFrame(rows, columns=['system', 'baseline', 'measure', 'value_system', 'value_baseline', 'p',
                                       'direction'])


def disagreements(results: pd.DataFrame, alpha: float = 0.05, warn: bool = True, measures=None) -> pd.DataFrame:
    """The pairs where an FD measure (FD, its terms, CFD) and a classical per-query measure (nDCG, RR, …) both call a
    system significantly different from the same other system, in opposite directions.

    ``results``: :func:`~pyterrier_frechet.compare_systems`' frame (its Holm-corrected calls; ``a`` is the baseline
    where one was given) or the table of ``pt.Experiment(..., baseline=...)`` (its ``p-value`` columns at ``alpha``,
    or its ``reject`` columns where ``correction=`` was given). One row per contradiction (:data:`COLUMNS`): the
    system and the system it was compared with, the two measures, each one's values for both, its p-value and its
    direction ('better' / 'worse' for ``system``). ``warn``: a warning naming the pairs when there are any.
    ``measures``: the measure objects of the columns, where a label cannot be parsed back (an encoder's repr).

    Example::

        res = pt.Experiment([bm25, dense], topics, qrels, [FD@10, nDCG@10], baseline=0, names=['BM25', 'Dense'])
        pf.disagreements(res)   # warns: "Dense: FD@10 worse (p 0.009) but nDCG@10 better (p 0.0014) than BM25"
    """
    known = {column_label(m): m for m in parse_measures(measures)} if measures is not None else None
    if {'a', 'b', 'measure', 'better'} <= set(results.columns):
        calls = _from_comparisons(results)
    elif 'name' in results.columns:
        calls = _from_experiment(results, alpha, known)
    else:
        raise ValueError('results must be compare_systems\' frame (columns a, b, measure, better) or the table of '
                         f'pt.Experiment(..., baseline=...) (a name column and "<measure> p-value" columns); got columns '
                         f'{list(results.columns)[:8]}')
    out = _pairs(calls, known)
    if warn and len(out):
        warnings.warn(describe(out), UserWarning, stacklevel=2)
    return out


def pair_text(row) -> str:
    """One contradiction of :func:`disagreements`' frame in words: 'Dense: FD@10 worse (p 0.009) but nDCG@10 better
    (p 0.0014) than BM25'."""
    return (f'{row.system}: {row.fd_measure} {row.fd_direction} (p {row.fd_p:.2g}) but {row.classical_measure} '
            f'{row.classical_direction} (p {row.classical_p:.2g}) than {row.baseline}')


#: What a contradiction means, in one sentence (the warning, the report and the long caption end with it).
MEANING = ('FD compares where the retrieved documents lie and how they spread with the relevant documents; a system '
           'returning a tight neighbourhood of the query can gain nDCG and lose FD (FD(term=\'mean\') and '
           'FD(term=\'cov\') say which term moved; pt_docs "When FD and nDCG disagree")')


def describe(frame: pd.DataFrame, limit: int = 6) -> str:
    """One sentence naming the contradicting pairs of :func:`disagreements`' frame (at most ``limit``, then a count),
    and what they mean."""
    items = [pair_text(r) for r in frame.head(limit).itertuples()]
    more = f'; and {len(frame) - limit} more' if len(frame) > limit else ''
    return (f'FD and a classical measure contradict each other ({len(frame)} pair{"s" if len(frame) != 1 else ""}, '
            f'both significant, opposite directions): {"; ".join(items)}{more}. {MEANING}')


__all__ = ['COLUMNS', 'MARK', 'MEANING', 'describe', 'disagreements', 'pair_text']
