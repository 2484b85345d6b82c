"""Paper-ready figures (matplotlib; each saved as PNG and PDF): FD vs a classical metric (Fig. 2),
bootstrap means with confidence intervals (Fig. 1), sparsification curves (Table 2 as a plot), and quality
against cost with the Pareto frontier."""
import re
from pathlib import Path
from typing import List

import numpy as np
import pandas as pd

from ..extras import require
from .correlation import correlations, higher_is_better


def slug(text: str) -> str:
    """A file-name-safe form of a metric name (``FD(urr=True)@10`` → ``FD_urr_True_10``)."""
    return re.sub(r'[^A-Za-z0-9]+', '_', text).strip('_')


def _figure(figsize):
    """A figure and its axes, made without pyplot: no backend is chosen or changed (a notebook's stays as it is),
    and nothing is registered with pyplot's figure manager."""
    Figure = require('matplotlib.figure', 'plots', 'figures (pyterrier_frechet.plots)').Figure
    fig = Figure(figsize=figsize)
    return fig, fig.subplots()


def check_available(what: str = 'figures') -> None:
    """Raise :class:`~pyterrier_frechet.extras.MissingExtra` now, before long work whose end is a figure, if
    matplotlib (the ``[plots]`` extra) is not installed."""
    require('matplotlib.figure', 'plots', what)


def _save(fig, path) -> List[str]:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    out = []
    for ext in ('.png', '.pdf'):
        target = path.with_suffix(ext)
        fig.savefig(target, dpi=200, bbox_inches='tight')
        out.append(str(target))
    return out


def scatter(table: pd.DataFrame, x: str, y: str, path) -> List[str]:
    """One labelled point per system, y against x, Kendall τ-b (orientation-aware) in the title."""
    corr = correlations(table, [x, y]).iloc[0]
    fig, ax = _figure((6, 4.5))
    ax.scatter(table[x], table[y], s=18, color='tab:blue')
    for name, xv, yv in zip(table['name'], table[x], table[y]):
        ax.annotate(str(name), (xv, yv), fontsize=6, xytext=(3, 2), textcoords='offset points')
    ax.set_xlabel(x + ('' if higher_is_better(x) else ' (lower is better)'))
    ax.set_ylabel(y + ('' if higher_is_better(y) else ' (lower is better)'))
    note = f' ({corr.oriented} negated)' if corr.oriented else ''
    ax.set_title(f'Kendall τ = {corr.kendall_tau:.3f} (p = {corr.kendall_p:.2g}){note}, {len(table)} systems', fontsize=9)
    ax.grid(alpha=0.3)
    return _save(fig, path)


def bootstrap_intervals(summary: pd.DataFrame, measure: str, path) -> List[str]:
    """Each system's estimate and interval for one measure (rows of a bootstrap summary), best first; the
    full-query-set value is marked where the printed estimate differs from it (bias-corrected intervals)."""
    rows = summary[summary['measure'] == measure].sort_values('estimate', ascending=not higher_is_better(measure))
    if len(rows) == 0:
        raise ValueError(f'no bootstrap rows for {measure}')
    fig, ax = _figure((6, 0.25 * len(rows) + 1.2))
    ypos = np.arange(len(rows))
    method = ', '.join(sorted(set(rows['interval'])))
    ax.errorbar(rows['estimate'], ypos, xerr=[rows['estimate'] - rows['low'], rows['high'] - rows['estimate']], fmt='o',
                ms=3, capsize=2, label=f'estimate and {method} interval')
    if not np.allclose(rows['estimate'], rows['value'], equal_nan=True):
        ax.scatter(rows['value'], ypos, marker='x', color='tab:red', s=14, label='full query set', zorder=3)
    ax.set_yticks(ypos, rows['name'], fontsize=7)
    ax.invert_yaxis()
    ax.set_xlabel(f'{measure}: estimate and interval' + ('' if higher_is_better(measure) else ' (lower is better)'))
    ax.legend(fontsize=7)
    ax.grid(axis='x', alpha=0.3)
    return _save(fig, path)


def sparsification(summary: pd.DataFrame, path) -> List[str]:
    """Kendall τ (full vs sparsified qrels) against the number of relevant documents kept per query."""
    fig, ax = _figure((5, 3.5))
    for measure, rows in summary.groupby('measure'):
        rows = rows.sort_values('per_query')
        ax.errorbar(rows['per_query'], rows['mean'], yerr=rows['std'].fillna(0), marker='o', capsize=3, label=measure)
    ax.set_xlabel('relevant documents kept per query')
    ax.set_ylabel('Kendall τ with full qrels')
    ax.set_xticks(sorted(summary['per_query'].unique()))
    ax.legend(fontsize=8)
    ax.grid(alpha=0.3)
    return _save(fig, path)


def pareto(table: pd.DataFrame, metric: str, path, cost: str = 'mrt', log_cost: bool = True) -> List[str]:
    """Quality against cost per system, the Pareto frontier drawn and its systems marked
    (:func:`~pyterrier_frechet.analyses.cost.pareto_frontier`)."""
    from .cost import pareto_frontier
    marked = pareto_frontier(table, metric, cost)
    front = marked[marked['pareto']].sort_values(cost)
    fig, ax = _figure((6, 4.5))
    ax.scatter(marked[cost], marked[metric], s=18, color='tab:gray', label='dominated')
    ax.scatter(front[cost], front[metric], s=30, color='tab:red', label='Pareto frontier', zorder=3)
    ax.step(front[cost], front[metric], where='post', color='tab:red', alpha=0.6)
    names = marked['name'] if 'name' in marked.columns else marked.index.astype(str)
    for name, xv, yv in zip(names, marked[cost], marked[metric]):
        ax.annotate(str(name), (xv, yv), fontsize=6, xytext=(3, 2), textcoords='offset points')
    if log_cost and (marked[cost] > 0).all():
        ax.set_xscale('log')
    ax.set_xlabel(f'{cost} (lower is better' + (', ms per query)' if cost == 'mrt' else ')'))
    ax.set_ylabel(metric + ('' if higher_is_better(metric) else ' (lower is better)'))
    ax.legend(fontsize=7)
    ax.grid(alpha=0.3)
    return _save(fig, path)


def asl_curves(asl: pd.DataFrame, path, alpha: float = 0.05) -> List[str]:
    """Sakai's achieved-significance-level curves: for each measure, the p-value of every system pair, sorted
    (rows of :func:`~pyterrier_frechet.analyses.discrimination.discriminative_power`'s ``asl``); the lower and the
    longer a curve stays under α (dashed), the more pairs the measure tells apart."""
    fig, ax = _figure((6, 4))
    for measure, rows in asl.groupby('measure', sort=False):
        ax.plot(rows['rank'], rows['p'], label=measure, lw=1.2)
    ax.axhline(alpha, color='grey', ls='--', lw=0.8)
    ax.set_xlabel('system pairs, sorted by p')
    ax.set_ylabel('achieved significance level (paired bootstrap p)')
    ax.set_ylim(0, min(1.0, max(0.2, 4 * alpha)))
    ax.legend(fontsize=7)
    ax.grid(alpha=0.3)
    return _save(fig, path)
