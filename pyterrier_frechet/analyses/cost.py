"""Cost next to quality: which systems are on the Pareto frontier of a quality
metric and a cost (by default ``mrt``, the mean response time in ms that ``pt.Experiment`` reports)?

A system is *dominated* when another is no more costly and no worse on the metric, and strictly better on one of
the two. The metric's orientation comes from the measure (FD and DO: lower is better), so FD works as it is.
"""
import numpy as np
import pandas as pd

from ..measures.base import higher_is_better


def pareto_frontier(table: pd.DataFrame, metric: str, cost: str = 'mrt') -> pd.DataFrame:
    """``table`` (one row per system) with a boolean ``pareto`` column: True for the non-dominated systems.

    Args:
        table: e.g. a ``pt.Experiment`` result with ``'mrt'`` among its metrics.
        metric: the quality column (any orientation, see :func:`~pyterrier_frechet.measures.base.higher_is_better`).
        cost: the cost column, lower is better (default ``mrt``).
    """
    missing = [c for c in (metric, cost) if c not in table.columns]
    if missing:
        raise ValueError(f'no column(s) {missing} in the table (columns: {list(table.columns)}); '
                         "for response times, add 'mrt' to pt.Experiment's eval_metrics")
    quality = table[metric].to_numpy(dtype=np.float64) * (1.0 if higher_is_better(metric) else -1.0)
    costs = table[cost].to_numpy(dtype=np.float64)
    bad = ~(np.isfinite(quality) & np.isfinite(costs))
    if bad.any():
        names = table['name'][bad].tolist() if 'name' in table.columns else np.flatnonzero(bad).tolist()
        raise ValueError(f'{int(bad.sum())} system(s) have no finite {metric} or {cost}: {names[:5]}')
    no_worse = (costs[:, None] <= costs[None, :]) & (quality[:, None] >= quality[None, :])  # [i, j]: i is no worse than j
    strictly = (costs[:, None] < costs[None, :]) | (quality[:, None] > quality[None, :])
    dominated = (no_worse & strictly).any(axis=0)
    return table.assign(pareto=~dominated)
