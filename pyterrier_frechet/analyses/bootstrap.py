"""Bootstrap over queries (FD paper §4): confidence intervals for FD and any ir_measures measure.

Each sample draws |Q| queries with replacement (``numpy.random.default_rng(seed)``; the same draws for
every system and measure, so samples are paired across systems). A query drawn k times contributes
its relevant and retrieved documents k times.

Each measure says how it is resampled (:func:`~pyterrier_frechet.measures.base.bootstrap_path`):

- ``'gaussian'`` (FD): per-query counts, sums and cross-products re-weighted by the draws
  (:mod:`pyterrier_frechet.core.weighted`), so no vector is gathered again;
- ``'conditional'`` (CFD): the same per-query statistics, as within-query scatter and per-query means
  (:func:`pyterrier_frechet.core.conditional.conditional_fds`);
- ``'histogram'`` (DO, HSA): per-query bin counts summed with the same weights, then the measure's statistic;
- ``'per_query'`` (nDCG, RR, any measure of another package): per-query values averaged with the same counts;
- ``None`` (FDInf, KID, k-NN, FD's jackknife): refused with a ValueError before any work.

:func:`bootstrap_naive` is the plain loop (resample queries, rebuild the frames, gather vectors,
recompute through ir_measures), kept as the reference the fast path is tested and benchmarked against.
"""
import functools
import logging
from typing import Dict, List, NamedTuple, Optional, Sequence

import ir_measures
import numpy as np
import pandas as pd
import pyterrier as pt

from ..core import intervals
from ..core.conditional import conditional_fds, conditional_leave_out
from ..core.histogram import Histograms
from ..core.weighted import (DEFAULT_GROUPS, EXACT_MAX_UNITS, QueryStats, jackknife_groups, leave_out_fds,
                             per_query_weighted, weighted_fds as _weighted_fds_numpy)
from ..evaluation.evaluate import check_labels_distinct, evaluate, parse_measures
from ..evaluation.frames import prepare_qrels, prepare_run, to_ir_measures
from ..evaluation.histograms import query_histograms
from ..evaluation.selection import Judgments
from ..evaluation.vector_sets import VectorSets, select_vector_sets
from ..measures.base import CONDITIONAL, GAUSSIAN, HISTOGRAM, PER_QUERY, VECTOR_PATHS, bootstrap_path, column_label
from ..vectors.sources import using_encoder

logger = logging.getLogger(__name__)


class BootstrapResult(NamedTuple):
    summary: pd.DataFrame  # one row per (system, measure): value, estimate, low, high, interval, mean, std, n_valid
    samples: Dict[str, Dict[str, np.ndarray]]  # system -> measure -> sample values
    queries: List[str]  # the query universe that was resampled
    jackknife: Optional[Dict[str, Dict[str, np.ndarray]]] = None  # system -> measure -> leave-one-query-out values
    # the point values as :func:`~pyterrier_frechet.evaluate` gives them (one row per system), with its counts of
    # documents left out for want of a vector (no_vector_relevant, no_vector_retrieved)
    point: Optional[pd.DataFrame] = None


def draw_counts(n_queries: int, n_samples: int, seed: int, dtype=np.int64) -> np.ndarray:
    """(n_samples × n_queries) how often each query is drawn in each sample, as ``dtype`` — or, with ``dtype=None``,
    the smallest unsigned integer type that holds them (uint8 unless a query is drawn 256 times in one sample),
    100 MB at 100,000 queries × 1000 samples where float64 takes 800 MB. The draws are made a block of samples at a
    time (the same stream as one ``rng.integers(0, n_queries, size=(n_samples, n_queries))``), so no samples × queries
    array of draws is held beside the counts."""
    if n_samples < 1:
        raise ValueError(f'n_samples must be positive, got {n_samples}')
    rng = np.random.default_rng(seed)
    counts = np.zeros((n_samples, n_queries), dtype=np.uint8 if dtype is None else dtype)
    block = max(1, (1 << 22) // max(n_queries, 1))
    for start in range(0, n_samples, block):
        rows = min(block, n_samples - start)
        draws = rng.integers(0, n_queries, size=(rows, n_queries))
        draws += (np.arange(rows) * n_queries)[:, None]  # one bincount for the block: offset each sample's draws
        got = np.bincount(draws.ravel(), minlength=rows * n_queries).reshape(rows, n_queries)
        if dtype is None and len(got) and got.max() > np.iinfo(counts.dtype).max:
            counts = counts.astype(np.min_scalar_type(int(got.max())))
        counts[start:start + rows] = got
    return counts


def _draw_means(counts: np.ndarray, per_q: np.ndarray) -> np.ndarray:
    """``counts @ per_q / n`` (a per-query measure's mean in each sample), the counts (any numeric type) as float64
    a block of samples at a time."""
    step = max(1, (1 << 22) // max(counts.shape[1], 1))
    return np.concatenate([np.asarray(counts[i:i + step], dtype=np.float64) @ per_q
                           for i in range(0, len(counts), step)]) / counts.shape[1]


def draw_queries(queries: Sequence[str], n_samples: int, seed: int) -> List[List[str]]:
    """The same draws as :func:`draw_counts`, as lists of (repeated) query ids — for the naive loop."""
    rng = np.random.default_rng(seed)
    draws = rng.integers(0, len(queries), size=(n_samples, len(queries)))
    return [[queries[i] for i in row] for row in draws]


def query_stats(side, n_queries: int, shift: np.ndarray) -> QueryStats:
    """:class:`~pyterrier_frechet.core.weighted.QueryStats` of one side of a measure's
    :class:`~pyterrier_frechet.evaluation.vector_sets.VectorSets` (the vectors ``evaluate`` computes with, after the
    ``missing=`` policy), over the query universe of its :class:`~pyterrier_frechet.evaluation.selection.Judgments`
    (``n_queries`` queries in sorted order: a row's query code is its position)."""
    return QueryStats(side.qcodes, side.vecs, n_queries, shift)


def pair_query_stats(sets: VectorSets, n_queries: int):
    """(relevant, retrieved) :class:`QueryStats` and the shift (the mean relevant vector) of one measure's sets,
    per-query weighted for ``weighting='query'``."""
    shift = sets.relevant.vecs.mean(axis=0, dtype=np.float64)
    rel, ret = query_stats(sets.relevant, n_queries, shift), query_stats(sets.retrieved, n_queries, shift)
    return rel, ret, shift


def weighted_fds(rel: QueryStats, rel_weights: np.ndarray, ret_parts: Sequence[QueryStats],
                 ret_weights: Sequence[np.ndarray], shift: np.ndarray, pbar=None, backend: str = 'numpy',
                 device: Optional[str] = None) -> np.ndarray:
    """FD per sample (row of the weights) between the weighted relevant set and the weighted retrieved parts
    (:func:`pyterrier_frechet.core.weighted.weighted_fds`); ``backend='torch'`` computes the same on ``device``
    (:mod:`.torch_backend`)."""
    if backend == 'torch':
        from .torch_backend import weighted_fds_torch
        return weighted_fds_torch(rel, rel_weights, ret_parts, ret_weights, shift, device=device, pbar=pbar)
    return _weighted_fds_numpy(rel, rel_weights, ret_parts, ret_weights, shift, pbar=pbar)


def _jackknife_weights(units: np.ndarray) -> np.ndarray:
    """One row per unit query (a boolean mask over the universe): weight 1 everywhere but 0 on that unit and on
    every query that is no unit (the jackknife leaves one unit out at a time; non-units carry no documents)."""
    rows = np.flatnonzero(units)
    weights = np.tile(units.astype(np.float64), (len(rows), 1))
    weights[np.arange(len(rows)), rows] = 0.0
    return weights


class JackknifePlan(NamedTuple):
    """How the bootstrap's jackknife leaves queries out: each unit query alone (``groups`` None) or in ``groups``
    seeded groups (the delete-a-group jackknife)."""
    groups: Optional[int]
    seed: int

    def describe(self, n_units: int) -> str:
        if self.groups is None or self.groups >= n_units:
            return f'leave-one-out ({n_units} queries)'
        return f'delete-a-group (G={self.groups} groups of {n_units} queries, seed {self.seed})'


def jackknife_plan(jackknife, n_units: int, seed: int) -> JackknifePlan:
    """The plan for ``jackknife`` (``'auto'``: leave-one-out up to :data:`~pyterrier_frechet.core.weighted.EXACT_MAX_UNITS`
    unit queries, above that :data:`~pyterrier_frechet.core.weighted.DEFAULT_GROUPS` groups; ``'exact'``; or a number
    of groups G ≥ 2)."""
    if jackknife == 'auto':
        return JackknifePlan(None if n_units <= EXACT_MAX_UNITS else DEFAULT_GROUPS, seed)
    if jackknife == 'exact':
        return JackknifePlan(None, seed)
    if isinstance(jackknife, (int, np.integer)) and not isinstance(jackknife, bool) and jackknife >= 2:
        return JackknifePlan(int(jackknife), seed)
    raise ValueError(f"jackknife must be 'auto', 'exact' or a number of groups >= 2, got {jackknife!r}")


def _group_seed(seed: int) -> list:
    # the grouping's own stream, apart from the resampling draws of the same seed
    return [int(seed), 0x6A4B]


def _leave_out_values(measure, rel: QueryStats, ret: QueryStats, units: np.ndarray, shift: np.ndarray,
                      plan: JackknifePlan, backend: str, device: Optional[str], verbose: bool) -> np.ndarray:
    """FD (or CFD) with each unit query, or each group of them, left out: the totals over the units minus each
    group's statistics (:func:`~pyterrier_frechet.core.weighted.leave_out_fds`), O(Q·d²) plus one FD per group,
    never a units × queries weight matrix."""
    groups, n_groups = jackknife_groups(units, plan.groups, _group_seed(plan.seed))
    with pt.tqdm(total=n_groups, desc=f'jackknife {measure}', unit='leave-out', leave=False,
                 disable=not verbose or n_groups < 200) as pbar:
        if bootstrap_path(measure) == CONDITIONAL:
            return conditional_leave_out(rel, ret, units, groups, n_groups, pbar)
        fd_batch = None
        if backend == 'torch':
            from .torch_backend import fd_pairs_torch
            fd_batch = functools.partial(fd_pairs_torch, device=device)
        return leave_out_fds(rel, ret, units, groups, n_groups, shift, fd_batch=fd_batch, pbar=pbar)


def _vector_samples(measure, sets: VectorSets, queries, counts, verbose: bool = True,
                    backend: str = 'numpy', device: Optional[str] = None, jackknife=None, seed: int = 0):
    """FD (or CFD) per bootstrap sample from the measure's two sets as ``evaluate`` selects them
    (:func:`~..evaluation.vector_sets.select_vector_sets`), and (with ``jackknife``: see :func:`jackknife_plan`) per
    left-out query (or group of queries) with relevant documents, with the text saying which."""
    rel, ret, shift = pair_query_stats(sets, len(queries))
    if measure.query_weighted():
        rel, ret = per_query_weighted(rel), per_query_weighted(ret)
    if bootstrap_path(measure) == CONDITIONAL:
        if backend != 'numpy':
            raise ValueError(f"{measure}: the conditional path has the numpy backend only; pass backend='numpy'")

        def values_of(weights, pbar=None):
            return conditional_fds(rel, ret, weights, pbar)
    else:
        def values_of(weights, pbar=None):
            return weighted_fds(rel, weights, [ret], [weights], shift, pbar, backend=backend, device=device)
    with pt.tqdm(total=len(counts), desc=f'bootstrap {measure}', unit='sample', leave=False, disable=not verbose or len(counts) < 200) as pbar:
        values = values_of(counts, pbar)
    if jackknife is None:
        return values, None, ''
    units = pd.Index(queries).isin(sets.queries)
    plan = jackknife_plan(jackknife, int(units.sum()), seed)
    jack = _leave_out_values(measure, rel, ret, units, shift, plan, backend, device, verbose)
    return values, jack, plan.describe(int(units.sum()))


def _histogram_leave_one_out(measure, qrels_ir, run_ir, queries) -> np.ndarray:
    """DO / HSA with each query of the universe left out: the pooled bin counts minus that query's (O(Q · bins));
    a query without histograms leaves the value unchanged."""
    qh = query_histograms(measure, qrels_ir, run_ir)
    rel_total, nonrel_total = qh.relevant.sum(axis=0), qh.nonrelevant.sum(axis=0)
    full = measure.statistic(Histograms(rel_total, nonrel_total, qh.centres)) if len(qh.queries) else np.nan
    out = np.full(len(queries), full, dtype=np.float64)
    for i, pos in enumerate(pd.Index(queries).get_indexer(qh.queries)):
        drew = len(qh.queries) > 1  # leaving out the only query leaves no histogram
        out[pos] = (measure.statistic(Histograms(rel_total - qh.relevant[i], nonrel_total - qh.nonrelevant[i], qh.centres))
                    if drew else np.nan)
    return out


def _histogram_samples(measure, qrels_ir, run_ir, queries, counts) -> np.ndarray:
    """DO / HSA per sample: each query's bin counts weighted by how often the sample drew it."""
    qh = query_histograms(measure, qrels_ir, run_ir)
    # the measure's queries are a subset of the universe; float64 as the counts were before they were compact
    weights = counts[:, pd.Index(queries).get_indexer(qh.queries)].astype(np.float64)
    rel, nonrel = weights @ qh.relevant, weights @ qh.nonrelevant
    # a sample that drew no query with a relevant document has no value (the measure raises on such qrels)
    return np.array([measure.statistic(Histograms(r, n, qh.centres)) if drew else np.nan
                     for r, n, drew in zip(rel, nonrel, weights.sum(axis=1) > 0)])


def _summary_row(system, measure, value, samples, ci, method: str, jackknife=None, jackknife_text: str = '') -> dict:
    valid = samples[np.isfinite(samples)]
    if jackknife is not None and not np.isfinite(jackknife).all():
        # a leave-out with a side of fewer than 2 vectors: the jackknife over the rest would have the wrong n
        logger.warning('%s, %s: %d of %d jackknife leave-outs are undefined (a set keeps fewer than 2 vectors); '
                       'its %s interval is left empty (NaN)', system, measure, int((~np.isfinite(jackknife)).sum()),
                       len(jackknife), method)
        low = high = np.nan
        estimate = np.nan if method == 'jackknife_bc' else value
    else:
        low, high = intervals.interval(method, value, samples, ci, jackknife=jackknife)
        estimate = intervals.printed_estimate(method, value, samples, jackknife)
        if method == 'jackknife_log' and not np.isfinite(low) and len(jackknife) > 1:
            # a leave-out (or the value) is 0 — e.g. a query whose sets are identical once the others are left out —
            # so the log scale is undefined: the plain jackknife interval, for the same estimand, and it says so
            logger.warning('%s, %s: a leave-one-out value is not positive, so the log-scale interval is undefined; '
                           'the plain jackknife interval is printed instead', system, measure)
            low, high = intervals.interval('jackknife', value, samples, ci, jackknife=jackknife)
            method = 'jackknife (log scale undefined: a leave-out value is 0)'
    estimand = ESTIMAND_LABELS.get(method.split(' ')[0], '')
    if jackknife_text.startswith('delete-a-group') and method in intervals.NEEDS_JACKKNIFE:
        # the method names its groups wherever it is printed: 'jackknife_bc (delete-a-group jackknife, G=200)'
        method = f'{method} (delete-a-group jackknife, {jackknife_text.split("(")[1].split(" groups")[0]})'
    return {'name': system, 'measure': measure, 'value': value, 'estimate': estimate, 'low': low, 'high': high,
            'interval': method, 'estimand': estimand, 'jackknife': jackknife_text, 'mean': float(np.mean(valid)) if len(valid) else np.nan,
            'std': float(np.std(valid, ddof=1)) if len(valid) > 1 else np.nan, 'n_valid': int(len(valid))}


#: The interval each kind of measure is printed with, chosen by measured coverage (pt_docs "Calibration", made by
#: ``benchmarks/calibrate_worlds.py`` in worlds the package did not design): FD and CFD beside their full-set value,
#: with the jackknife interval of log FD for E[FD̂ₙ] — the expected value over query sets of this size from the same
#: query population. FD over n queries is biased upwards (10–400× the population FD in those worlds), and no
#: interval for the population FD reached its nominal coverage at d = 384; per-query means are unbiased, so their
#: percentile interval is for the population mean.
DEFAULT_INTERVAL = {GAUSSIAN: 'jackknife_log', CONDITIONAL: 'jackknife_log', HISTOGRAM: 'percentile', PER_QUERY: 'percentile'}

#: What each printed interval is for, in a table cell (the summary's ``estimand`` column).
ESTIMAND_LABELS = {
    'jackknife_log': 'E[FD̂ₙ] at this number of queries',
    'jackknife': 'E[θ̂ₙ] at this number of queries',
    'shifted': 'E[θ̂ₙ] at this number of queries',
    'jackknife_bc': 'population value (not calibrated for FD at d/n > 1)',
    'basic': 'population value (not calibrated for FD at d/n > 1)',
    'bca': 'population value',
    'percentile': 'population mean',
}

#: The same in one sentence each (tables' captions, the CLI's notes).
ESTIMANDS = {
    'jackknife_log': 'E[FD̂ₙ], the expected value of the measure over query sets of this size drawn from the same '
                     'query population (the full-set value is its estimate; jackknife over queries, log scale)',
    'jackknife': 'E[θ̂ₙ] at this number of queries (jackknife over queries)',
    'shifted': 'E[θ̂ₙ] at this number of queries (bootstrap spread centred on the full-set value)',
    'jackknife_bc': 'the population value (jackknife bias-corrected; not calibrated for FD at d/n > 1)',
    'basic': 'the population value (bootstrap bias-corrected; not calibrated for FD at d/n > 1)',
    'percentile': 'the population mean of a per-query measure (percentile bootstrap over queries)',
    'bca': 'the population value (BCa; undefined for FD when every resample lies above the full-set value)',
}


def check_bootstrappable(measures) -> None:
    """ValueError naming every measure the bootstrap cannot resample exactly — raised before any work."""
    unsupported = [str(m) for m in measures if bootstrap_path(m) is None]
    if unsupported:
        raise ValueError(f'the bootstrap has no fast path for {unsupported}: it supports FD, DO, HSA and per-query measures '
                         '(bootstrap_naive resamples any measure, slowly); leave these out of the bootstrap')


def bootstrappable(measures) -> list:
    """The measures the bootstrap can resample (the others are left to the point estimates)."""
    return [m for m in measures if bootstrap_path(m) is not None]


def bootstrap(runs: Dict[str, pd.DataFrame], qrels: pd.DataFrame, measures, n_samples: int = 1000, seed: int = 0,
              ci: float = 0.95, verbose: bool = True, backend: str = 'numpy', device: Optional[str] = None,
              encoder=None, interval: Optional[str] = None, jackknife='auto') -> BootstrapResult:
    """Bootstrap confidence intervals over queries for every (run, measure).

    Args:
        runs: system name → result frame (qid, docno, score), e.g. from :func:`pyterrier_frechet.data.runs.read_run`.
        qrels: qid, docno, label. The resampled universe is the qrels' queries.
        measures: ir_measures measures (objects or names); FD, DO and HSA use the fast paths; FD takes vectors
            from their encoder (or the default one), or the run's ``doc_vec`` column, and their ``missing=`` policy,
            selected exactly as :func:`~pyterrier_frechet.evaluate` selects them (the same documents, vectors and
            drop counts: ``point``).
        n_samples: bootstrap samples (default 1000, as in the paper).
        seed: the draws are ``numpy.random.default_rng(seed)``; the same draws serve every system.
        ci: confidence level of the percentile interval (default 0.95).
        verbose: progress bars.
        backend: ``'numpy'`` or ``'torch'`` (FD's per-sample statistics batched on ``device``; equal to numpy
            to 1e-8 relative).
        device: for ``backend='torch'``: ``'cuda'``, ``'cpu'``, …; default: CUDA when available.
        encoder: the vector source of vector measures that name none (default: the one set by
            :func:`~pyterrier_frechet.set_default_encoder`).
        interval: the interval method of every measure (:mod:`pyterrier_frechet.core.intervals`: ``'percentile'``,
            ``'shifted'``, ``'basic'``, ``'bca'``, ``'jackknife'``, ``'jackknife_bc'``); default: per kind of measure,
            :data:`DEFAULT_INTERVAL`, chosen by measured coverage. ``summary`` gives each interval's ``estimate`` —
            the point it is printed beside (the bias-corrected value for ``basic`` and ``jackknife_bc``).
        jackknife: how the leave-out values of ``bca``, ``jackknife`` and ``jackknife_bc`` are formed for FD and CFD
            (downdated totals, O(Q·d²) plus one FD per leave-out; docs/scale.md): ``'exact'`` leaves each query
            with relevant documents out; an integer G ≥ 2 is the delete-a-group jackknife (those queries dealt into G
            groups by ``numpy.random.default_rng([seed, 27211])``; standard error ((G−1)/G Σ(θ₍g₎−θ̄)²)^½, bias
            correction Gθ̂ − (G−1)θ̄); ``'auto'`` (default): exact up to
            :data:`~pyterrier_frechet.core.weighted.EXACT_MAX_UNITS` (500) such queries, G =
            :data:`~pyterrier_frechet.core.weighted.DEFAULT_GROUPS` (200) above. ``summary['jackknife']`` says which
            was used, and a grouped interval's ``interval`` text names G. DO and HSA always leave single queries out
            (cheap: their bin counts are downdated).
    """
    with using_encoder(encoder):
        return _bootstrap(runs, qrels, measures, n_samples, seed, ci, verbose, backend, device, interval, jackknife)


def _bootstrap(runs, qrels, measures, n_samples, seed, ci, verbose, backend, device, interval=None,
               jackknife='auto') -> BootstrapResult:
    if not 0 < ci < 1:
        raise ValueError(f'ci must be in (0, 1), got {ci}')
    if interval is not None and interval not in intervals.METHODS:
        raise ValueError(f'interval must be one of {intervals.METHODS}, got {interval!r}')
    if backend not in ('numpy', 'torch'):
        raise ValueError(f"backend must be 'numpy' or 'torch', got {backend!r}")
    if backend == 'torch':
        from ..vectors.devices import check_torch_device
        check_torch_device(device)
    jackknife_plan(jackknife, 0, seed)  # a bad value is refused before any work
    measures = parse_measures(measures)
    check_bootstrappable(measures)
    check_labels_distinct(measures)
    # the qrels and runs prepared and coded as evaluate() prepares them: one selection path for every entry point
    qrels_ir = prepare_qrels(to_ir_measures(qrels), 'qrels')
    judgments = Judgments(qrels_ir)
    queries = judgments.query_names.tolist()  # sorted: a query's code in the judgments is its position here
    # compact counts (uint8): every consumer converts a chunk of samples to float64 (exact) where it computes
    counts = draw_counts(len(queries), n_samples, seed, dtype=None)
    rows, samples, jackknives = [], {}, {}
    classical = [m for m in measures if bootstrap_path(m) == PER_QUERY]
    vector_measures = [m for m in measures if bootstrap_path(m) in VECTOR_PATHS]
    # the point estimates of every run, as every entry point computes them, with the counts of dropped documents
    point_table = evaluate(runs, qrels, measures)
    point = point_table.set_index('name')
    for name, run in pt.tqdm(list(runs.items()), desc='bootstrap', unit='run', disable=not verbose or len(runs) < 2):
        run_ir = prepare_run(to_ir_measures(run), f'run {name!r}')
        vector_sets = select_vector_sets(vector_measures, judgments, run_ir) if vector_measures else {}
        samples[name], jackknives[name] = {}, {}
        full = point.loc[name]
        if classical:
            per_query = pd.DataFrame([(m.query_id, str(m.measure), m.value) for m in ir_measures.iter_calc(classical, qrels_ir, run_ir)],
                                     columns=['qid', 'measure', 'value']).pivot(index='qid', columns='measure', values='value')
            per_query = per_query.reindex(queries)
        for m in measures:
            path = bootstrap_path(m)
            method = interval or DEFAULT_INTERVAL[path]
            jack, jack_text = None, ''
            needs_jack = method in intervals.NEEDS_JACKKNIFE
            if path in VECTOR_PATHS:
                values, jack, jack_text = _vector_samples(m, vector_sets[m], queries, counts, verbose, backend, device,
                                                          jackknife if needs_jack else None, seed)
            elif path == HISTOGRAM:
                values = _histogram_samples(m, qrels_ir, run_ir, queries, counts)
                if needs_jack:
                    jack = _histogram_leave_one_out(m, qrels_ir, run_ir, queries)
                    jack_text = f'leave-one-out ({len(queries)} queries)'
            else:
                per_q = per_query[str(m)].to_numpy(dtype=np.float64)
                values = _draw_means(counts, per_q)  # len(queries) columns
                if needs_jack:
                    jack = (per_q.sum() - per_q) / (len(queries) - 1)
                    jack_text = f'leave-one-out ({len(queries)} queries)'
            samples[name][column_label(m)] = values
            if jack is not None:
                jackknives[name][column_label(m)] = jack
            rows.append(_summary_row(name, column_label(m), float(full[column_label(m)]), values, ci, method, jack,
                                     jack_text))
    return BootstrapResult(pd.DataFrame(rows), samples, queries, jackknives, point_table)


def bootstrap_naive(run: pd.DataFrame, qrels: pd.DataFrame, measure, n_samples: int = 1000, seed: int = 0) -> np.ndarray:
    """The plain loop, for reference: per sample, rebuild qrels and run with each drawn query renamed
    ``qid#k`` (its k-th draw), then evaluate through ir_measures (FD re-gathers every vector)."""
    qrels = qrels.astype({'qid': str, 'docno': str})
    run = run.astype({'qid': str, 'docno': str})
    queries = sorted(qrels['qid'].unique())
    qrels_by_q = dict(tuple(qrels.groupby('qid')))
    run_by_q = dict(tuple(run.groupby('qid')))
    out = np.full(n_samples, np.nan)
    for b, drawn in enumerate(draw_queries(queries, n_samples, seed)):
        q_parts, r_parts = [], []
        for k, q in enumerate(drawn):
            q_parts.append(qrels_by_q[q].assign(qid=f'{q}#{k}'))
            if q in run_by_q:
                r_parts.append(run_by_q[q].assign(qid=f'{q}#{k}'))
        sample_qrels = pt.model.to_ir_measures(pd.concat(q_parts, ignore_index=True))
        sample_run = pt.model.to_ir_measures(pd.concat(r_parts, ignore_index=True))
        try:
            out[b] = ir_measures.calc_aggregate([measure], sample_qrels, sample_run)[measure]
        except ValueError:  # a side with fewer than 2 vectors
            pass
    return out
