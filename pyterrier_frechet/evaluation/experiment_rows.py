"""The per-query rows of a set measure under ir_measures and ``pt.Experiment``: centred jackknife pseudo-values.

ir_measures and ``pt.Experiment`` take per-query values, average them for the table, and (``baseline=``) run a
paired t-test on them. A set measure (FD: one number per query set) repeated on every row gives the right mean but a
test on constant differences — p = 0.0 for any non-zero difference, never evidence. Instead, a measure with a
resampling of vector statistics (FD with either weighting, CFD, any vector measure declaring such a
:class:`~..measures.resampling.Resampling`: :meth:`~..measures.base.SetMeasure.has_rows`) reports for unit query q
(a query with a relevant document) the centred pseudo-value r_q = θ̂ + c·(θ̄₋ − θ₋q)
(:func:`~..core.jackknife.centred_pseudo_values`), θ₋q from the measure's own
:meth:`~..measures.resampling.Resampling.leave_out` on the statistics the bootstrap re-weights
(:mod:`.vector_statistics`) — one leave-out computation for the bootstrap, ``compare`` and these rows:

- the mean over the rows is the measure's value θ̂, exactly as ``pf.evaluate`` and ``eval`` print it;
- a paired t-test of two systems' rows (what ``pt.Experiment(baseline=...)`` runs) has the jackknife t statistic
  Δθ̂ / SE_J of the difference — the statistic of ``compare``'s default jackknife t-test (t on n−1 degrees of
  freedom; the paired t-test here on M−1 for M qrels queries, the same where every qrels query is a unit — else
  ``pt.Experiment(baseline=...)`` warns, :func:`~.provider.warn_degrees_of_freedom`), with the
  same leave-outs: each query alone up to
  :data:`~..core.weighted.EXACT_MAX_UNITS` unit queries, above that :data:`~..core.weighted.DEFAULT_GROUPS` seeded
  groups (seed 0, as ``compare``'s default). Its level is measured by ``calibrate --level`` (test ``experiment``).

A measure that asks for it (``FD(rows='influence')``: :meth:`~..measures.base.VectorMeasure.rows_by_influence`) gets
the same kind of rows from each unit's first-order influence instead (:meth:`~..measures.resampling.Resampling.influence`,
:func:`~..core.jackknife.influence_rows`): one eigen-decomposition per run, not one leave-out per query; a more
conservative test than the jackknife's (its level and power: ``benchmarks/experiment_rows_level.py``).

The rows are not per-query effectiveness scores: a query's row says how much the set value leans on that query.
Measures without a leave-out path (FDInf, KID, k-NN, DO, HSA, AnswerFD, AnswerCFD) repeat their value on every row
and warn that a paired test on them is meaningless (DO and HSA have one in ``compare``; the others have none).
"""
import warnings
from typing import Dict, Optional

import numpy as np
import pandas as pd

from ..measures.resampling import numpy_engine


def experiment_rows(measure, sets, value: float, judgments) -> Optional[Dict[str, float]]:
    """The rows of the unit queries (centred pseudo-values, :func:`leave_out_rows`) of ``measure`` on its two sets
    (:class:`~.vector_sets.VectorSets` with query codes over the sorted query universe of ``judgments``, the
    evaluation, whose memo keeps the relevant side's leave-outs for every run and measure), or None — with a
    warning saying why — where they cannot be formed (fewer than 2 units, or a leave-out that leaves a side with
    fewer than 2 vectors)."""
    from .vector_statistics import vector_statistics  # the numeric cores load on first use (import stays light)
    if not np.isfinite(value):
        return None
    names = pd.Index(judgments.query_names)
    stats = vector_statistics(measure, sets, names, judgments)
    try:
        rows = measure_rows(measure, stats, value)
    except ValueError as ex:
        warn_constant_rows(measure, str(ex))
        return None
    return dict(zip(names[stats.units].tolist(), rows[stats.units].tolist()))


def measure_rows(measure, stats, value: float, seed: int = 0) -> np.ndarray:
    """The rows of ``measure`` per query of the universe (NaN for queries that are no unit): where the measure asks
    for them (:meth:`~..measures.base.VectorMeasure.rows_by_influence`, ``FD(rows='influence')``) and its resampling
    has a closed form, from each unit's influence (:meth:`~..measures.resampling.Resampling.influence`,
    :func:`~..core.jackknife.influence_rows`); else from its exact leave-outs (:func:`leave_out_rows`). ValueError:
    fewer than 2 units, or a leave-out undefined."""
    from ..core.jackknife import influence_rows
    influence = measure.resampling().influence(measure, stats) if measure.rows_by_influence() else None
    if influence is None:
        return leave_out_rows(measure, stats, value, seed)
    return influence_rows(value, np.where(stats.units, influence, np.nan))


def leave_out_rows(measure, stats, value: float, seed: int = 0) -> np.ndarray:
    """:func:`~..core.jackknife.centred_pseudo_values` of ``value`` from the measure's resampling's leave-outs
    (its :meth:`~..measures.resampling.Resampling.jackknife_plan` ``'auto'`` with ``seed``: each unit alone up to
    500 units, 200 seeded groups above, as the bootstrap's and ``compare``'s jackknife with the same seed), per query
    of the universe (NaN for queries that are no unit); ``stats``: the measure's
    :class:`~.vector_statistics.VectorStatistics`. ValueError: fewer than 2 units, or a leave-out undefined."""
    from ..core.jackknife import centred_pseudo_values
    n_units = int(np.sum(stats.units))
    if n_units < 2:
        raise ValueError(f'the jackknife needs at least 2 queries with documents, got {n_units}')
    res = measure.resampling()
    groups, n_groups = res.jackknife_plan('auto', n_units, seed).assign(stats.units)
    return centred_pseudo_values(value, res.leave_out(measure, stats, groups, n_groups, numpy_engine()), groups)


def warn_constant_rows(measure, why: str) -> None:
    """Warn that ``measure``'s per-query rows repeat its value, so a paired test on them is meaningless, and say
    where its paired test is: ``compare`` for a measure with a resampling (DO, HSA; FD where a leave-out is
    undefined), none for a measure without one (FDInf, KID, k-NN: the bootstrap has no exact path for them)."""
    where = ('compare systems with pf.compare_systems / `python -m pyterrier_frechet compare`'
             if measure.resampling() is not None else
             'this package has no paired test for it (the bootstrap, and so compare, has no exact path for it)')
    warnings.warn(f'{measure}: its per-query rows repeat its value ({why}), so a paired test on them '
                  f'(pt.Experiment(baseline=...)) is meaningless; {where}', stacklevel=2)
