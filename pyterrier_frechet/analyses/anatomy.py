"""What moves FD: per system and FD measure, its two terms (``FD(term='mean')``: how far the retrieved set's centre
is from the relevant set's; ``FD(term='cov')``: how differently the two sets spread) and the spread of the retrieved
set against the relevant set (``SpreadRatio``: Tr Σ_retrieved / Tr Σ_relevant), with — against a baseline — which
term moved FD, said in words::

    Dense MiniLM: FD@10 +0.036 vs BM25 (mean term +0.021, covariance term +0.015); retrieved set narrower (0.86× the
    relevant set's variance)

``report`` writes it (``anatomy.csv`` and its section) and the paper table's long caption carries the sentences
(:func:`~pyterrier_frechet.paper_table`). Every number is a measure of the package evaluated on the same selection as
FD (:func:`~pyterrier_frechet.evaluate`): no statistic is computed here.
"""
from typing import Dict, List, Optional, Tuple

import numpy as np
import pandas as pd

from ..evaluation.evaluate import evaluate, parse_measures
from ..measures.base import column_label

#: A retrieved set whose total variance is below this share of the relevant set's is called narrower; above
#: :data:`BROADER`, broader; in between, "about as spread as" the relevant set.
NARROWER = 0.95
BROADER = 1.05

#: The columns of :func:`fd_anatomy`'s frame.
COLUMNS = ('name', 'measure', 'fd', 'mean_term', 'cov_term', 'spread', 'spread_within', 'baseline', 'fd_change',
           'mean_change', 'cov_change', 'moved_by', 'note')


def parts(measure) -> Optional[Tuple[object, object, object, object]]:
    """(mean term, covariance term, spread ratio, spread ratio within queries) measures of ``measure``, as it declares them
    (:meth:`~pyterrier_frechet.measures.base.VectorMeasure.decomposition`: FD with any parameters but ``term`` and
    ``jackknife=True``); None for any other measure."""
    decomposition = getattr(measure, 'decomposition', None)
    return decomposition() if decomposition is not None else None


def spread_words(ratio: float, subject: str = 'retrieved set') -> str:
    """'retrieved set narrower (0.86× the relevant set's variance)', '… broader (…)' or '… about as spread as the
    relevant set (…)'; ``subject`` '' for the words alone."""
    if not np.isfinite(ratio):
        return 'spread not defined'
    what = 'narrower' if ratio < NARROWER else 'broader' if ratio > BROADER else 'about as spread as the relevant set'
    return f'{subject + " " if subject else ""}{what} ({ratio:.2f}× the relevant set\'s variance)'


def extra_measures(measures) -> list:
    """What :func:`fd_anatomy` evaluates beside ``measures``: each FD measure's mean term and spread ratios (its
    covariance term is FD less the mean term — ``FD(term='cov')`` to rounding, 3e-15 on DL19 — so it costs no second
    FD). An
    evaluation of ``measures + extra_measures(measures)`` in one pass (one ranking, one vector look-up) serves both
    the results and :func:`fd_anatomy` (its ``point``)."""
    out = []
    for m in parse_measures(measures):
        decomposition = parts(m)
        if decomposition is not None:
            out += [decomposition[0], decomposition[2], decomposition[3]]
    return list(dict.fromkeys(out))


def fd_anatomy(runs: Dict[str, pd.DataFrame], qrels: pd.DataFrame, measures, baseline: Optional[str] = None,
               point: Optional[pd.DataFrame] = None, verbose: bool = False) -> pd.DataFrame:
    """Per system and FD measure of ``measures`` (FD with any parameters; the others are skipped), FD, its mean and
    covariance terms and the spread ratio, one row each (:data:`COLUMNS`); against ``baseline`` (a system name) the
    changes of FD and of each term, the term that moved FD more (``moved_by``), and ``note``: the sentence.
    ``point``: an :func:`~pyterrier_frechet.evaluate` table already computed; what it lacks of the FD measures and
    their :func:`extra_measures` is evaluated here (nothing, where it was evaluated with them)."""
    fds = [m for m in parse_measures(measures) if parts(m) is not None]
    if not fds:
        return pd.DataFrame(columns=list(COLUMNS))
    if baseline is not None and baseline not in runs:
        raise ValueError(f'baseline {baseline!r} is not one of the systems {list(runs)[:10]}')
    have = set(point.columns) if point is not None else set()
    wanted = [m for m in list(dict.fromkeys(fds + extra_measures(fds))) if column_label(m) not in have]
    table = point.set_index('name') if point is not None else pd.DataFrame(index=pd.Index(list(runs), name='name'))
    if wanted:
        table = table.join(evaluate(runs, qrels, wanted, verbose=verbose).set_index('name')
                           [[column_label(m) for m in wanted]], how='outer')
    rows = []
    for m in fds:
        label = column_label(m)
        mean, _, spread, within = (column_label(p) for p in parts(m))
        for name in runs:
            r = table.loc[name]
            fd, mean_term = float(r[label]), float(r[mean])
            row = {'name': name, 'measure': label, 'fd': fd, 'mean_term': mean_term, 'cov_term': fd - mean_term,
                   'spread': float(r[spread]), 'spread_within': float(r[within]), 'baseline': baseline}
            if baseline is not None:
                b = table.loc[baseline]
                base_fd, base_mean = float(b[label]), float(b[mean])
                row.update(fd_change=fd - base_fd, mean_change=mean_term - base_mean,
                           cov_change=(fd - mean_term) - (base_fd - base_mean))
                row['moved_by'] = ('' if name == baseline else
                                   'mean term' if abs(row['mean_change']) > abs(row['cov_change']) else 'covariance term')
            row['note'] = _sentence(row)
            rows.append(row)
    return pd.DataFrame(rows).reindex(columns=list(COLUMNS))


def _sentence(row) -> str:
    name, label = row['name'], row['measure']
    if row.get('baseline') is None or name == row.get('baseline'):
        head = (f'{name}: {label} {row["fd"]:.4g} = mean term {row["mean_term"]:.4g} + covariance term '
                f'{row["cov_term"]:.4g}')
        if name == row.get('baseline'):
            head += ' (the baseline)'
    else:
        head = (f'{name}: {label} {row["fd_change"]:+.3g} vs {row["baseline"]} (mean term {row["mean_change"]:+.3g}, '
                f'covariance term {row["cov_change"]:+.3g})')
    within = row.get('spread_within', float('nan'))
    per_query = '' if not np.isfinite(within) else f'; within queries {spread_words(within, subject="")}'
    return f'{head}; {spread_words(row["spread"])}{per_query}'


def notes(frame: pd.DataFrame) -> List[str]:
    """The sentences of :func:`fd_anatomy`'s frame, in order."""
    return [str(n) for n in frame['note']]


__all__ = ['BROADER', 'COLUMNS', 'NARROWER', 'extra_measures', 'fd_anatomy', 'notes', 'parts', 'spread_words']
