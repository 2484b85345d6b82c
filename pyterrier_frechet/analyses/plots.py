"""Paper-ready figures (matplotlib; each saved as PNG and PDF): FD vs a classical metric (Fig. 2),
bootstrap means with confidence intervals (Fig. 1), sparsification curves (Table 2 as a plot), and quality
against cost with the Pareto frontier."""
import logging
import re
from pathlib import Path
from typing import List

import numpy as np
import pandas as pd

from ..extras import require
from ..measures.base import higher_is_better
from .correlation import correlations

logger = logging.getLogger(__name__)


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


#: Directions tried first for a point's label (next to it): above right first, as before; farther rings try more
#: directions around the point (8 per ring, up to :data:`_LABEL_MAX_DIRECTIONS`), so labels of points at one place
#: fan out and their leader lines do not run through one another.
_LABEL_DIRECTIONS = ((1, 1), (-1, 1), (1, -1), (-1, -1), (1, 0), (-1, 0), (0, 1), (0, -1))
_LABEL_MAX_DIRECTIONS = 64
#: Rings of candidate places around a point, each one label height farther out (a leader line beyond the first).
_LABEL_RINGS = 40


def _ring_directions(ring: int) -> np.ndarray:
    """Unit steps (the larger coordinate ±1) of ring ``ring``'s candidate places: :data:`_LABEL_DIRECTIONS` on the
    first ring, then 8 × (ring + 1) (at most :data:`_LABEL_MAX_DIRECTIONS`) evenly spaced from above right."""
    if ring == 0:
        return np.array(_LABEL_DIRECTIONS, dtype=float)
    n = min(8 * (ring + 1), _LABEL_MAX_DIRECTIONS)
    k = np.arange(n)
    angles = np.pi / 4 + 2 * np.pi * np.where(k % 2 == 0, k // 2, n - (k + 1) // 2) / n  # alternately either way
    d = np.column_stack([np.cos(angles), np.sin(angles)])
    return d / np.abs(d).max(axis=1, keepdims=True)


def _renderer(fig):
    """A renderer for text extents, made without pyplot: the figure is laid out (constrained layout) and drawn by
    Agg; the figure's canvas becomes an Agg canvas (saving as PDF still works), no backend is chosen."""
    agg = require('matplotlib.backends.backend_agg', 'plots', 'figures (pyterrier_frechet.plots)')
    canvas = agg.FigureCanvasAgg(fig)
    canvas.draw()
    return canvas.get_renderer()


def _crosses(segment, box) -> bool:
    """Whether the segment ((x0, y0), (x1, y1)) meets the box (x0, y0, x1, y1) (Liang–Barsky clipping)."""
    (ax0, ay0), (ax1, ay1) = segment
    dx, dy = ax1 - ax0, ay1 - ay0
    lo, hi = 0.0, 1.0
    for p, q in ((-dx, ax0 - box[0]), (dx, box[2] - ax0), (-dy, ay0 - box[1]), (dy, box[3] - ay0)):
        if p == 0:
            if q < 0:
                return False
        elif p < 0:
            lo = max(lo, q / p)
        else:
            hi = min(hi, q / p)
        if lo > hi:
            return False
    return True


def _clusters(pts: np.ndarray, radius: float) -> List[List[int]]:
    """Points drawn on top of one another: groups (in order of first member) of points within ``radius`` of another
    point of the group, in display units."""
    parent = list(range(len(pts)))

    def root(i):
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i
    for i, j in zip(*np.nonzero(np.triu(np.hypot(*(pts[:, None, :] - pts[None, :, :]).transpose(2, 0, 1)) < radius, 1))):
        parent[root(j)] = root(i)
    groups: dict = {}
    for i in range(len(pts)):
        groups.setdefault(root(i), []).append(i)
    return sorted(groups.values())


def number_ranges(numbers: List[int], width: int = 18) -> str:
    """``[1, 2, 3, 5]`` as ``'1–3, 5'``, broken into lines of about ``width`` characters."""
    parts, start = [], None
    numbers = sorted(numbers)
    for k, n in enumerate(numbers):
        start = n if start is None else start
        if k + 1 == len(numbers) or numbers[k + 1] != n + 1:
            parts.append(str(n) if n == start else f'{start}–{n}' if n > start + 1 else f'{start}, {n}')
            start = None
    lines, line = [], ''
    for part in parts:
        if line and len(line) + len(part) + 2 > width:
            lines.append(line + ',')
            line = part
        else:
            line = f'{line}, {part}' if line else part
    return '\n'.join(lines + [line])


def place_labels(ax, names: List[str], xs, ys, fontsize: float = 6, pad: float = 1.5, force: bool = False,
                 join=None) -> bool:
    """Label each point (``xs[i]``, ``ys[i]``) with ``names[i]`` where the label's box overlaps no other label's
    and no point, and whose leader line crosses no other label: deterministic and greedy, in the given order, each
    label at the first free place on rings a label height apart (:data:`_LABEL_RINGS`, :func:`_ring_directions`),
    inside the axes, joined to its point by a thin leader line when it is not next to it. The axes must be laid out already (:func:`_renderer`);
    the labels take no part in the layout. Returns False, placing nothing, if some label has no free place (then
    :func:`scatter_figure` numbers the points instead); with ``force``, such a label goes next to its point anyway
    (overlapping), with a warning, and the result is True. Points drawn on top of one another (closer than a marker's
    width: near-equal scores) get one label, their names one per line, or ``join(names)``."""
    fig = ax.figure
    renderer = _renderer(fig)
    to_points = 72.0 / fig.dpi
    frame = ax.get_window_extent(renderer)
    pts = ax.transData.transform(np.column_stack([np.asarray(xs, dtype=float), np.asarray(ys, dtype=float)]))
    marker = 3.0 / to_points  # half a marker's width (s=18: ~4.2 pt across) and a little, in pixels
    obstacles = [(px - marker, py - marker, px + marker, py + marker) for px, py in pts]
    gap = pad / to_points
    placed, leaders, texts = [], [], []
    join = join or '\n'.join
    groups = _clusters(pts, 2 * marker)
    for members in groups:
        name = join([names[i] for i in members])
        px, py = pts[members].mean(axis=0)
        text = ax.text(0.5, 0.5, name, fontsize=fontsize, ha='center', va='center', transform=ax.transAxes)
        ext = text.get_window_extent(renderer)  # its size, wherever it is
        text.remove()
        w, h = ext.width, ext.height
        best = None
        blocks = np.array(placed + obstacles, dtype=float).reshape(-1, 4)
        for ring in range(_LABEL_RINGS):
            r = marker + gap + ring * (h + gap)
            d = _ring_directions(ring)
            cx, cy = px + d[:, 0] * (r + w / 2), py + d[:, 1] * (r + h / 2)
            boxes = np.column_stack([cx - w / 2, cy - h / 2, cx + w / 2, cy + h / 2])
            free = ((boxes[:, 0] >= frame.x0 + gap) & (boxes[:, 2] <= frame.x1 - gap)
                    & (boxes[:, 1] >= frame.y0 + gap) & (boxes[:, 3] <= frame.y1 - gap))
            free &= ~((boxes[:, None, 0] < blocks[None, :, 2] + gap) & (blocks[None, :, 0] < boxes[:, None, 2] + gap)
                      & (boxes[:, None, 1] < blocks[None, :, 3] + gap) & (blocks[None, :, 1] < boxes[:, None, 3] + gap)
                      ).any(axis=1)
            for i in np.flatnonzero(free):
                box = tuple(boxes[i])
                grown = (box[0] - gap, box[1] - gap, box[2] + gap, box[3] + gap)
                if any(_crosses(seg, grown) for seg in leaders) or (ring > 0 and any(
                        _crosses(((px, py), (cx[i], cy[i])), (o[0] - gap, o[1] - gap, o[2] + gap, o[3] + gap))
                        for o in placed)):
                    continue
                best = (float(cx[i]), float(cy[i]), box, ring)
                break
            if best is not None:
                break
        if best is None and not force:
            return False
        if best is None:
            logger.warning('figure label %r: no free place near its point; drawn over another', str(name))
            r = marker + gap  # above right of the point, or below / left of it where the axes end
            sx = -1 if px + r + w > frame.x1 else 1
            sy = -1 if py + r + h > frame.y1 else 1
            cx, cy = px + sx * (r + w / 2), py + sy * (r + h / 2)
            best = (cx, cy, (cx - w / 2, cy - h / 2, cx + w / 2, cy + h / 2), 0)
        placed.append(best[2])
        if best[3] > 0:
            leaders.append(((px, py), (best[0], best[1])))
        texts.append((name, px, py) + best)
    for name, px, py, cx, cy, _, ring in texts:
        xy = ax.transData.inverted().transform((px, py))
        ann = ax.annotate(name, xy, xytext=((cx - px) * to_points, (cy - py) * to_points),
                          textcoords='offset points', fontsize=fontsize, ha='center', va='center',
                          annotation_clip=False, arrowprops=None if ring == 0 else dict(
                              arrowstyle='-', lw=0.4, color='0.5', shrinkA=0, shrinkB=marker * to_points))
        ann.set_in_layout(False)  # placed for this layout: it must not move the axes
    return True


def scatter_figure(table: pd.DataFrame, x: str, y: str):
    """The figure of :func:`scatter` (a ``matplotlib.figure.Figure``, not saved): one point per system, y against x,
    Kendall τ-b (orientation-aware) in the title. Each point is labelled with its system's name where the labels can
    be placed without overlapping each other or a point (:func:`place_labels`: systems with near-equal scores get
    labels beside one another, joined to their points by leader lines); where they cannot, the points are numbered
    (1, 2, … in the table's order) and a key outside the axes names them."""
    corr = correlations(table, [x, y]).iloc[0]
    fig, ax = _figure((6, 4.5))
    ax.scatter(table[x], table[y], s=18, color='tab:blue', zorder=3)
    ax.margins(0.12)
    ax.set_xlabel(x + ('' if higher_is_better(x) else ' (lower is better)'))
    ax.set_ylabel(y + ('' if higher_is_better(y) else ' (lower is better)'))
    note = f' ({corr.oriented} negated)' if corr.oriented else ''
    ax.set_title(f'Kendall τ = {corr.kendall_tau:.3f} (p = {corr.kendall_p:.2g}){note}, {len(table)} systems', fontsize=9)
    ax.grid(alpha=0.3)
    names = [str(n) for n in table['name']]
    if not place_labels(ax, names, table[x], table[y]):
        # the key below the axes, the figure taller by its rows: the axes keep their width and the title its place
        Line2D = require('matplotlib.lines', 'plots', 'figures (pyterrier_frechet.plots)').Line2D
        ncols = 3 if max(len(n) for n in names) <= 24 else 2 if max(len(n) for n in names) <= 40 else 1
        rows = -(-len(names) // ncols)
        fig.set_size_inches(6, 4.5 + 0.14 * rows + 0.3)
        handles = [Line2D([], [], linestyle='none', marker=f'${i}$', color='tab:blue', markersize=6 if i < 10 else 8)
                   for i in range(1, len(names) + 1)]
        fig.legend(handles, [f'{n}' for n in names], loc='outside lower center', fontsize=6, ncols=ncols,
                   title='systems by number', title_fontsize=7, handletextpad=0.6, columnspacing=1.2)
        numbers = [str(i) for i in range(1, len(names) + 1)]
        place_labels(ax, numbers, table[x], table[y], fontsize=5.5, pad=0.8, force=True,
                     join=lambda ns: number_ranges([int(n) for n in ns]))
    return fig


def scatter(table: pd.DataFrame, x: str, y: str, path) -> List[str]:
    """One labelled point per system, y against x, Kendall τ-b (orientation-aware) in the title
    (:func:`scatter_figure`), saved as ``path``.png and ``path``.pdf."""
    return save(scatter_figure(table, x, y), path)


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
    tests = ', '.join(dict.fromkeys(asl['test'])) if 'test' in asl.columns else 'bootstrap'
    ax.set_ylabel(f'achieved significance level (p: {tests})')
    ax.set_ylim(0, min(1.0, max(0.2, 4 * alpha)))
    ax.legend(fontsize=7)
    ax.grid(alpha=0.3)
    return save(fig, path)
