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
    and nothing is registered with pyplot's figure manager. Constrained layout keeps labels, titles and an outside
    legend inside the figure."""
    Figure = require('matplotlib.figure', 'plots', 'figures (pyterrier_frechet.plots)').Figure
    fig = Figure(figsize=figsize, layout='constrained')
    return fig, fig.subplots()


def check_available(what: str = 'figures') -> None:
    """Raise :class:`~pyterrier_frechet.extras.MissingExtra` now, before long work whose end is a figure, if
    matplotlib (the ``[plots]`` extra) is not installed."""
    require('matplotlib.figure', 'plots', what)


def save(fig, path) -> List[str]:
    """Write ``fig`` as ``path``.png (200 dpi) and ``path``.pdf; returns the two paths."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    out = []
    for ext in ('.png', '.pdf'):
        target = path.with_suffix(ext)
        fig.savefig(target, dpi=200, bbox_inches='tight')
        out.append(str(target))
    return out



#: Tick values tried on a log axis, per decade, coarsest first: powers of ten, 1-2-5, then finer.
_LOG_MANTISSAS = ((1.0,), (1.0, 2.0, 5.0), (1.0, 1.5, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0))


def log_ticks(lo: float, hi: float, min_gap: float = 0.12, max_ticks: int = 8) -> List[float]:
    """Major ticks for a log axis from ``lo`` to ``hi`` (both > 0): round values from the coarsest set that gives
    three ticks (powers of ten, else 1-2-5 per decade, else finer), powers of ten taken first, each tick at least
    ``min_gap`` of the axis width (in log units) from every other, so their labels never overlap however few or
    many decades the axis spans; at most ``max_ticks``."""
    span = max(np.log10(hi) - np.log10(lo), 1e-12)
    decades = range(int(np.floor(np.log10(lo))) - 1, int(np.ceil(np.log10(hi))) + 1)
    best: List[float] = []
    for mantissas in _LOG_MANTISSAS:
        candidates = [(i, float(f'{m * 10.0 ** k:.12g}')) for i, m in enumerate(mantissas) for k in decades]
        ticks: List[float] = []
        for _, c in sorted(candidates):  # by the mantissa's rank (1 first), then by value
            if lo <= c <= hi and all(abs(np.log10(c / t)) >= min_gap * span for t in ticks):
                ticks.append(c)
        if len(ticks) > max_ticks:
            break
        best = sorted(ticks)
        if len(best) >= 3:
            break
    if len(best) < 2:  # a very narrow range: its ends, rounded to 3 significant digits
        best = sorted({float(f'{lo:.3g}'), float(f'{hi:.3g}')})
    return best


def _log_cost_axis(ax, values) -> None:
    """A log x axis over ``values`` with a margin, round major ticks in plain numbers (:func:`log_ticks`) and no
    minor tick labels (matplotlib's minor labels are what overlapped)."""
    ticker = require('matplotlib.ticker', 'plots', 'figures (pyterrier_frechet.plots)')
    FixedLocator, FuncFormatter, NullFormatter, NullLocator = (ticker.FixedLocator, ticker.FuncFormatter,
                                                               ticker.NullFormatter, ticker.NullLocator)
    lo, hi = float(np.min(values)), float(np.max(values))
    pad = max((hi / lo) ** 0.08, 1.15)
    ax.set_xscale('log')
    ax.set_xlim(lo / pad, hi * pad)
    ax.xaxis.set_major_locator(FixedLocator(log_ticks(lo / pad, hi * pad)))
    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f'{v:g}'))
    ax.xaxis.set_minor_locator(NullLocator())
    ax.xaxis.set_minor_formatter(NullFormatter())


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
    return save(fig, path)


def bootstrap_intervals(summary: pd.DataFrame, measure: str, path) -> List[str]:
    """Each system's estimate and interval for one measure (rows of a bootstrap summary), best first; the
    full-query-set value is marked where the printed estimate differs from it (bias-corrected intervals)."""
    rows = summary[summary['measure'] == measure].sort_values('estimate', ascending=not higher_is_better(measure))
    if len(rows) == 0:
        raise ValueError(f'no bootstrap rows for {measure}')
    fig, ax = _figure((6, 0.25 * len(rows) + 1.2))
    ypos = np.arange(len(rows))
    method = ', '.join(sorted(set(rows['interval'])))
    # clipped at 0: a percentile interval may lie wholly on one side of its estimate (or round just past it)
    xerr = [np.maximum(rows['estimate'] - rows['low'], 0.0), np.maximum(rows['high'] - rows['estimate'], 0.0)]
    ax.errorbar(rows['estimate'], ypos, xerr=xerr, fmt='o',
                ms=3, capsize=2, label=f'estimate and {method} interval')
    if not np.allclose(rows['estimate'], rows['value'], equal_nan=True):
        ax.scatter(rows['value'], ypos, marker='x', color='tab:red', s=14, label='full query set', zorder=3)
    ax.set_yticks(ypos, rows['name'], fontsize=7)
    ax.invert_yaxis()
    ax.set_xlabel(f'{measure}: estimate and interval' + ('' if higher_is_better(measure) else ' (lower is better)'))
    ax.legend(fontsize=7)
    ax.grid(axis='x', alpha=0.3)
    return save(fig, path)


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
    return save(fig, path)


_MARKERS = ('o', 's', '^', 'D', 'v', 'P', 'X', '*')


def pareto_figure(table: pd.DataFrame, metric: str, cost: str = 'mrt', log_cost: bool = True):
    """The figure of :func:`pareto` (a ``matplotlib.figure.Figure``, not saved): one marker per system, named in the
    legend (outside the axes, one entry per system, in the table's order); systems on the Pareto frontier filled
    and joined by the frontier's line, dominated ones hollow. The cost axis is logarithmic when ``log_cost`` and
    every cost is positive, with round plain-number ticks that do not overlap (:func:`log_ticks`)."""
    from .cost import pareto_frontier
    marked = pareto_frontier(table, metric, cost)
    front = marked[marked['pareto']].sort_values(cost)
    names = (marked['name'] if 'name' in marked.columns else marked.index.to_series()).astype(str).tolist()
    fig, ax = _figure((7.5, 4.5))
    ax.step(front[cost], front[metric], where='post', color='tab:red', alpha=0.5, lw=1.2, zorder=1)
    for i, (name, xv, yv, on) in enumerate(zip(names, marked[cost], marked[metric], marked['pareto'])):
        color = f'C{i % 10}'
        ax.scatter([xv], [yv], s=40, marker=_MARKERS[i % len(_MARKERS)], label=name, zorder=3,
                   facecolors=color if on else 'none', edgecolors=color, linewidths=1.2)
    if log_cost and (marked[cost] > 0).all():
        _log_cost_axis(ax, marked[cost].to_numpy(dtype=np.float64))
    ax.set_xlabel(f'{cost} (lower is better' + (', ms per query)' if cost == 'mrt' else ')'))
    ax.set_ylabel(metric + (' (higher is better)' if higher_is_better(metric) else ' (lower is better)'))
    n_front = int(marked['pareto'].sum())
    ax.set_title(f'{metric} against {cost}: {n_front} of {len(marked)} systems on the Pareto frontier\n'
                 '(filled, joined by the line; hollow: dominated)', fontsize=9)
    fig.legend(loc='outside right upper', fontsize=7, title='system', title_fontsize=7,
               ncols=1 if len(names) <= 22 else 2)
    ax.grid(alpha=0.3)
    return fig


def pareto(table: pd.DataFrame, metric: str, path, cost: str = 'mrt', log_cost: bool = True) -> List[str]:
    """Quality against cost per system, the Pareto frontier drawn and its systems marked
    (:func:`~pyterrier_frechet.analyses.cost.pareto_frontier`; the figure: :func:`pareto_figure`), saved as
    ``path``.png and ``path``.pdf."""
    return save(pareto_figure(table, metric, cost, log_cost), path)


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
    return save(fig, path)
