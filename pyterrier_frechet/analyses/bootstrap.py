"""Bootstrap over queries (FD paper §4): confidence intervals for FD and any ir_measures measure.

Each sample draws |Q| queries with replacement (``numpy.random.default_rng(seed)``; the same draws for
every system and measure, so samples are paired across systems). A query drawn k times contributes
its relevant and retrieved documents k times.

Each measure says how it is resampled (its :class:`~pyterrier_frechet.measures.resampling.Resampling`,
:func:`~pyterrier_frechet.measures.base.resampling`): which per-query statistics are re-weighted (FD's and CFD's
per-query counts, sums and cross-products, DO's and HSA's per-query bin counts, the per-query values of nDCG, RR or
any measure of another package), how, and with which default interval. This module prepares those statistics from
the selection :func:`~pyterrier_frechet.evaluate` makes and hands them to the measure's resampling; a measure
without one is refused with a ValueError before any work, naming the registered measures that have one.

:func:`bootstrap_naive` is the plain loop (resample queries, rebuild the frames, gather vectors,
recompute through ir_measures), kept as the reference the fast path is tested and benchmarked against.
"""
import functools
import logging
from typing import Dict, List, NamedTuple, Optional, Sequence, Tuple

import ir_measures
import numpy as np
import pandas as pd
import pyterrier as pt

from ..core import intervals
from ..core.linearised import anchored_resamples
from ..core.weighted import QueryStats, jackknife_plan, weighted_fds as _weighted_fds_numpy
from ..evaluation.evaluate import check_labels_distinct, evaluate, measures_evaluator, parse_measures, provider_errors
from ..evaluation.frames import prepare_qrels, prepare_run, run_dict, to_ir_measures
from ..evaluation.histograms import QueryHistograms, query_histograms
from ..evaluation.selection import Judgments
from ..evaluation.vector_sets import VectorSets, select_vector_sets
from ..evaluation.vector_statistics import VectorStatistics, vector_statistics
from ..measures.base import (MeasurePlan, column_label, measure_plan, resampled_names, resampling,
                             unresampled_reason)
from ..measures.resampling import (HISTOGRAM_COUNTS, LEAVE_OUT_TESTS, PER_QUERY_VALUES, VECTOR_STATS, Engine,
                                   numpy_engine)
from ..vectors.sources import using_encoder
from .options import ResamplingOptions, check_samples, query_clusters
from .validity import interval_caveat

logger = logging.getLogger(__name__)


class BootstrapResult(NamedTuple):
    summary: pd.DataFrame  # one row per (system, measure): value, estimate, low, high, interval, mean, std, n_valid
    # system -> measure -> the measure on each resample: on all of them, or — ``resample='needed'`` and a measure
    # whose interval and test read only its leave-outs (:func:`drawn`) — on the first :data:`TAU_DRAWS`, which τ's
    # interval reads, computed or anchored on the first :data:`EXACT_DRAWS` (:attr:`anchored`; :meth:`drawn` gives
    # only the complete ones)
    samples: Dict[str, Dict[str, np.ndarray]]
    queries: List[str]  # the query universe that was resampled
    # system -> measure -> leave-one-query-out values (where the interval or the paired test reads them)
    jackknife: Optional[Dict[str, Dict[str, np.ndarray]]] = None
    # the point values as :func:`~pyterrier_frechet.evaluate` gives them (one row per system), with its counts of
    # documents left out for want of a vector (no_vector_relevant, no_vector_retrieved)
    point: Optional[pd.DataFrame] = None
    # the finite query population the evaluated queries were drawn from without replacement (None: infinite);
    # every interval's variance carries the correction 1 − n/N (core.intervals, ``fpc``)
    population: Optional[int] = None
    # the query groups resampled and left out whole (qid → group code 0…G−1; None: independent queries)
    query_groups: Optional[pd.Series] = None
    # where the evaluated set sits on the measured coverage map of FD's default interval: one sentence per relevance
    # threshold of an FD-like measure (:func:`~pyterrier_frechet.analyses.validity.interval_caveat`)
    caveats: Tuple[str, ...] = ()
    # B, the number of resamples drawn (:attr:`n_samples`)
    n_draws: Optional[int] = None
    # the measures resampled, as parsed (their column labels key ``samples`` and ``jackknife``)
    measures: Optional[list] = None
    # (system, measure label) whose draws after the first :data:`EXACT_DRAWS` are linearised from the leave-outs and
    # anchored on those (``resample='needed'``, :func:`anchorable`; :meth:`is_anchored`)
    anchored: Tuple[Tuple[str, str], ...] = ()
    # each measure resolved once, in the order of ``measures`` (:class:`~pyterrier_frechet.measures.base.MeasurePlan`:
    # label, resampling, interval method), as the bootstrap's loops and summary rows read them (:meth:`plan`)
    plans: Tuple[MeasurePlan, ...] = ()

    def plan(self, label: str) -> MeasurePlan:
        """The :class:`~pyterrier_frechet.measures.base.MeasurePlan` of column label ``label`` (KeyError naming the
        measures of this bootstrap); a result made by hand without plans gets the measure's, with its default
        interval."""
        for p in self.plans:
            if label in (p.label, str(p.measure)):
                return p
        return measure_plan(self.measure(label))

    def measure(self, label: str):
        """The measure of column label ``label`` (KeyError naming the measures of this bootstrap)."""
        for m in self.measures or ():
            if column_label(m) == label or str(m) == label:
                return m
        raise KeyError(f'{label} not bootstrapped (measures of this bootstrap: '
                       f'{[column_label(m) for m in self.measures or ()]})')

    @property
    def n_samples(self) -> int:
        """B, the number of resamples drawn."""
        if self.n_draws is not None:
            return self.n_draws
        return next((len(v) for per in self.samples.values() for v in per.values()), 0)

    def drawn(self, system: str, measure: str) -> Optional[np.ndarray]:
        """The values of ``measure`` (a column label) of ``system`` on every resample, or None where they were
        held on the first :data:`TAU_DRAWS` only, or anchored on the first :data:`EXACT_DRAWS` (``resample='needed'``:
        a measure whose interval and test read its leave-outs; anchored draws are not the measure's own, even where
        B ≤ :data:`TAU_DRAWS` makes them every draw) — what a test of resampled differences must not read."""
        values = self.samples.get(system, {}).get(measure)
        if values is None or len(values) != self.n_samples or (system, measure) in self.anchored:
            return None
        return values

    def is_anchored(self, measure: str) -> bool:
        """Whether ``measure``'s (a column label) draws are, for some system, FD on the first :data:`EXACT_DRAWS` and
        its anchored linearised resamples on the rest (:func:`anchorable`)."""
        return any(label == measure for _, label in self.anchored)

    def on_every_draw(self, measure: str) -> bool:
        """Whether ``measure`` (a column label) was computed on every draw (for every system: they are alike)."""
        systems = list(self.samples)
        return not systems or self.drawn(systems[0], measure) is not None

    def common_draws(self, measures=None) -> int:
        """The first draws every one of ``measures`` (objects or column labels; default: all) was computed on, for
        every system: what τ's interval reads."""
        labels = None if measures is None else {m if isinstance(m, str) else column_label(m) for m in measures}
        return min(len(v) for per in self.samples.values() for label, v in per.items()
                   if labels is None or label in labels)

    def own_test(self, measure: str) -> str:
        """The paired test ``measure`` (a column label) reads by default (its resampling's ``paired_test``);
        ``'normal'`` for a result built without its measures."""
        return self.plan(measure).resampling.paired_test if self.measures or self.plans else 'normal'

    @property
    def n_query_groups(self) -> Optional[int]:
        """G, the number of query groups resampled (None: independent queries)."""
        return None if self.query_groups is None else int(self.query_groups.max()) + 1


def draw_counts(n_queries: int, n_samples: int, seed: int, dtype=np.int64) -> np.ndarray:
    """(n_samples × n_queries) how often each query is drawn in each sample, as ``dtype`` — or, with ``dtype=None``,
    the smallest unsigned integer type that holds them (uint8 unless a query is drawn 256 times in one sample),
    100 MB at 100,000 queries × 1000 samples where float64 takes 800 MB. The draws are made a block of samples at a
    time (the same stream as one ``rng.integers(0, n_queries, size=(n_samples, n_queries))``), so no samples × queries
    array of draws is held beside the counts."""
    check_samples(n_samples)
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


def resample_counts(n_queries: int, n_samples: int, seed: int, clusters: Optional[np.ndarray] = None) -> np.ndarray:
    """How often each query is drawn in each sample (compact unsigned integers, :func:`draw_counts`): the queries
    drawn with replacement, or — ``clusters``, a group code 0…G−1 per query — the G groups drawn with replacement,
    each query counted as often as its group (the cluster bootstrap)."""
    if clusters is None:
        return draw_counts(n_queries, n_samples, seed, dtype=None)
    return draw_counts(int(clusters.max()) + 1, n_samples, seed, dtype=None)[:, clusters]


def draw_queries(queries: Sequence[str], n_samples: int, seed: int) -> List[List[str]]:
    """The same draws as :func:`draw_counts`, as lists of (repeated) query ids — for the naive loop."""
    rng = np.random.default_rng(seed)
    draws = rng.integers(0, len(queries), size=(n_samples, len(queries)))
    return [[queries[i] for i in row] for row in draws]


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


def engine(backend: str = 'numpy', device: Optional[str] = None) -> Engine:
    """The numpy routines, or the torch ones on ``device`` (:mod:`.torch_backend`)."""
    if backend != 'torch':
        return numpy_engine()
    from .torch_backend import fd_pairs_torch
    return Engine(backend, functools.partial(weighted_fds, backend=backend, device=device),
                  functools.partial(fd_pairs_torch, device=device))


# --- the per-query statistics a resampling re-weights, from the selection evaluate() makes -----------------------

class HistogramStatistics(NamedTuple):
    histograms: QueryHistograms
    positions: np.ndarray  # of the histograms' queries in the universe
    units: np.ndarray


class PerQueryStatistics(NamedTuple):
    values: np.ndarray  # per query of the universe
    units: np.ndarray


class RunInputs:
    """One run's selections, made once for all the measures that need them (every vector measure's sets in one
    pass, every per-query measure in one ``iter_calc`` of ``evaluator``: ir_measures' evaluator of those measures,
    made once for every run, which prepares the qrels once)."""

    def __init__(self, measures, judgments: Judgments, qrels_ir: pd.DataFrame, run_ir: pd.DataFrame, queries: list,
                 evaluator=None):
        self.measures, self.judgments, self.qrels, self.run, self.queries = measures, judgments, qrels_ir, run_ir, queries
        self.evaluator = evaluator

    def _of(self, kind: str) -> list:
        return [m for m in self.measures if resampling(m).statistics == kind]

    @functools.cached_property
    def vector_sets(self) -> Dict[object, VectorSets]:
        return select_vector_sets(self._of(VECTOR_STATS), self.judgments, self.run)

    @functools.cached_property
    def per_query(self) -> pd.DataFrame:
        measures = self._of(PER_QUERY_VALUES)
        with provider_errors(measures, self.qrels, self.run):
            evaluator = self.evaluator or measures_evaluator(measures, self.qrels)
            rows = [(m.query_id, str(m.measure), m.value) for m in evaluator.iter_calc(run_dict(self.run))]
        return (pd.DataFrame(rows, columns=['qid', 'measure', 'value'])
                .pivot(index='qid', columns='measure', values='value').reindex(self.queries))


def _vector_statistics(measure, inputs: RunInputs) -> VectorStatistics:
    return vector_statistics(measure, inputs.vector_sets[measure], inputs.queries, inputs.judgments)


def _histogram_statistics(measure, inputs: RunInputs) -> HistogramStatistics:
    qh = query_histograms(measure, inputs.qrels, inputs.run)
    # the measure's queries are a subset of the universe
    return HistogramStatistics(qh, pd.Index(inputs.queries).get_indexer(qh.queries), np.ones(len(inputs.queries), bool))


def _per_query_statistics(measure, inputs: RunInputs) -> PerQueryStatistics:
    return PerQueryStatistics(inputs.per_query[str(measure)].to_numpy(dtype=np.float64), np.ones(len(inputs.queries), bool))


#: How each kind of per-query statistics (:attr:`~pyterrier_frechet.measures.resampling.Resampling.statistics`) is
#: prepared for one measure and run.
STATISTICS = {VECTOR_STATS: _vector_statistics, HISTOGRAM_COUNTS: _histogram_statistics,
              PER_QUERY_VALUES: _per_query_statistics}


class _LeaveOuts(NamedTuple):
    """How the jackknife leaves queries out: ``jackknife`` as :func:`jackknife_plan` takes it, the ``seed`` of its
    grouping, and ``clusters`` (the cluster jackknife over those query groups) or None."""
    jackknife: object
    seed: int
    clusters: Optional[np.ndarray]


class _Held(NamedTuple):
    """Which resamples a measure is computed on: ``values`` already computed (None: none), ``draws`` (the first
    ``draws`` resamples only; None: all) and ``estimate`` (the measure on the full set: with ``draws`` and leave-outs,
    the first :data:`EXACT_DRAWS` are computed and the rest up to ``draws`` anchored on them, :func:`anchorable`;
    ``values`` may then hold those first draws only)."""
    values: Optional[np.ndarray] = None
    draws: Optional[int] = None
    estimate: Optional[float] = None


def _resampled(plan: MeasurePlan, stats, counts, eng: Engine, verbose: bool,
               leave_out: Optional[_LeaveOuts] = None, held: _Held = _Held()):
    """The measure (its plan) per bootstrap sample (row of ``counts``, on the resamples ``held`` says) and, with
    ``leave_out``, per left-out unit query (or group of them), with the text saying which. The t reference's degrees of freedom
    follow from the leave-outs themselves (:func:`~pyterrier_frechet.core.intervals.jackknife_df`: m − 1). Returns
    (values, leave-outs, their text, whether the draws are anchored, what an interval on these leave-outs adds to its
    name)."""
    values, draws, estimate = held
    measure, res = plan.measure, plan.resampling
    first = draws if estimate is None or leave_out is None else min(EXACT_DRAWS, draws)
    if values is None:
        with pt.tqdm(total=len(counts[:first]), desc=f'bootstrap {measure}', unit='sample', leave=False,
                     disable=not verbose or len(counts[:first]) < 200) as pbar:
            values = res.samples(measure, stats, counts[:first], eng, pbar)
    if leave_out is None:
        return values, None, '', False, ''
    n_units = int(np.sum(stats.units))
    grouping = res.jackknife_plan(leave_out.jackknife, n_units, leave_out.seed, leave_out.clusters)
    groups, n_groups = grouping.assign(stats.units)
    with pt.tqdm(total=n_groups, desc=f'jackknife {measure}', unit='leave-out', leave=False,
                 disable=not verbose or n_groups < 200) as pbar:
        jack = res.leave_out(measure, stats, groups, n_groups, eng, pbar)
    anchored = False
    if draws is not None and len(values) < len(counts[:draws]):
        if anchorable(stats.units, n_groups, jack, estimate):
            values, anchored = anchored_resamples(estimate, jack, counts[:draws], values, groups), True
        else:   # the rest computed: the route whose τ coverage was measured first
            values = np.concatenate([values, res.samples(measure, stats, counts[len(values):draws], eng, None)])
    return values, jack, grouping.describe(n_units, n_groups), anchored, grouping.interval_note(n_units, n_groups)


#: The resamples τ's interval reads (the count its coverage was measured with, pt_docs "Calibration": 0.968 over 62
#: real DL19 query sets, 121 of 123 in a world built independently): with ``resample='needed'`` a measure whose
#: interval and test read only its leave-outs is held on the first TAU_DRAWS draws and no more (computed on the
#: first :data:`EXACT_DRAWS` of them, and anchored on those where :func:`anchorable`).
TAU_DRAWS = 200


#: With ``resample='needed'``, the draws of those :data:`TAU_DRAWS` on which FD is computed exactly where its
#: leave-outs leave single queries out (:func:`anchorable`); the other draws are its linearised resamples anchored on
#: these (:func:`~pyterrier_frechet.core.linearised.anchored_resamples`; pt_docs "Calibration": τ's coverage with them).
EXACT_DRAWS = 20


def anchorable(units, n_groups: int, jackknife, estimate) -> bool:
    """Whether a measure's resamples may be anchored on its leave-outs: every judged query is a unit left out alone
    (no query without relevant documents, whose weight the leave-outs do not vary; no delete-a-group or cluster
    jackknife, whose τ coverage was not measured), and every leave-out and the estimate are defined."""
    units = np.asarray(units, dtype=bool)
    return (bool(units.all()) and n_groups == len(units) and jackknife is not None
            and bool(np.isfinite(jackknife).all()) and estimate is not None and bool(np.isfinite(estimate)))


def _leaves_out_alone(plan: MeasurePlan, stats, leave_out: _LeaveOuts) -> bool:
    """Whether the measure's leave-outs leave every judged query out alone (the run-independent half of
    :func:`anchorable`: the units and the jackknife's plan depend on the qrels and the measure, not on the run)."""
    units = np.asarray(stats.units, dtype=bool)
    _, n_groups = plan.resampling.jackknife_plan(leave_out.jackknife, int(units.sum()), leave_out.seed,
                                                 leave_out.clusters).assign(units)
    return bool(units.all()) and n_groups == len(units)


def drawn(plan: MeasurePlan, resample: str) -> bool:
    """Whether the bootstrap computes a measure (its :class:`~pyterrier_frechet.measures.base.MeasurePlan`) on every
    resample: always with ``resample='all'``; with
    ``'needed'``, not for a vector measure (one FD per resample) whose interval method and own paired test read
    only its leave-outs — FD's and CFD's jackknife interval and test; those are held on the first
    :data:`TAU_DRAWS`, for τ's interval (computed on :data:`EXACT_DRAWS` of them and anchored where
    :func:`anchorable`). Per-query measures cost one weighted mean a resample: always all."""
    res = plan.resampling
    return (resample == 'all' or res.statistics != VECTOR_STATS or not plan.method.from_jackknife
            or res.paired_test not in LEAVE_OUT_TESTS)


def population_text(population: Optional[int], n_queries: int) -> str:
    """How an interval's name says it carries the finite-population correction (empty for an infinite population)."""
    if population is None:
        return ''
    return f'finite population: {n_queries} of N={population} queries, variance × (1 − n/N) = {1 - n_queries / population:.3g}'


class IntervalNotes(NamedTuple):
    """What a summary row says about how its interval was made, beside the method: the leave-outs (``jackknife``, the
    summary's column of that name: 'leave-one-out (43 queries)'), what an interval on them adds to its name
    (``jackknife_note``), the query groups of a bootstrap interval (``groups_text``) and their number G (``n_groups``),
    and the finite-population correction (``fpc`` = 1 − n/N, ``fpc_text``)."""
    jackknife: str = ''
    jackknife_note: str = ''
    groups_text: str = ''
    n_groups: Optional[int] = None
    fpc: float = 1.0
    fpc_text: str = ''


def _summary_row(system, measure, value, samples, ci, method: str, jackknife=None, estimand: str = '',
                 how: IntervalNotes = IntervalNotes()) -> dict:
    """One row of the summary: the ``method`` interval (a name in
    :data:`~pyterrier_frechet.core.intervals.INTERVAL_METHODS`) with its name as printed (``interval``: the method and
    its notes — the jackknife's, the bootstrap's query groups, the population's, from ``how``), the method itself
    (``method``) and the query groups it was made over (``groups``: G, or None)."""
    valid = samples[np.isfinite(samples)]
    notes = []
    if jackknife is not None and not np.isfinite(jackknife).all():
        # a leave-out with a side of fewer than 2 vectors: the jackknife over the rest would have the wrong n
        logger.warning('%s, %s: %d of %d jackknife leave-outs are undefined (a set keeps fewer than 2 vectors); '
                       'its %s interval is left empty (NaN)', system, measure, int((~np.isfinite(jackknife)).sum()),
                       len(jackknife), method)
        low = high = np.nan
        estimate = np.nan if method == 'jackknife_bc' else value
    else:
        low, high = intervals.interval(method, value, samples, ci, jackknife=jackknife, fpc=how.fpc)
        estimate = intervals.printed_estimate(method, value, samples, jackknife)
        if method == 'jackknife_log' and not np.isfinite(low) and len(jackknife) > 1:
            # a leave-out (or the value) is 0 — e.g. a query whose sets are identical once the others are left out —
            # so the log scale is undefined: the plain jackknife interval, for the same estimand, and it says so
            logger.warning('%s, %s: a leave-one-out value is not positive, so the log-scale interval is undefined; '
                           'the plain jackknife interval is printed instead', system, measure)
            low, high = intervals.interval('jackknife', value, samples, ci, jackknife=jackknife, fpc=how.fpc)
            method, estimand = 'jackknife', ''
            notes.append('log scale undefined: a leave-out value is 0')
    kind = intervals.interval_method(method)
    estimand = estimand or kind.estimand_label
    groups = None
    if how.jackknife_note and kind.needs_jackknife:
        # the method names its leave-outs wherever it is printed: 'jackknife_bc (delete-a-group jackknife, G=200)',
        # 'jackknife_log (cluster jackknife over G=9 query groups, t reference)'
        notes.append(how.jackknife_note)
        groups = how.n_groups
    elif how.groups_text:
        # a bootstrap interval over query groups: 'percentile (cluster bootstrap over G=9 query groups)'
        notes.append(how.groups_text)
        groups = how.n_groups
    if how.fpc_text:
        # the interval says it is for draws from a finite population: 'jackknife_log (finite population: 43 of N=225 ...)'
        notes.append(how.fpc_text)
        estimand = f'{estimand}, over draws without replacement from the N queries' if estimand else estimand
    return {'name': system, 'measure': measure, 'value': value, 'estimate': estimate, 'low': low, 'high': high,
            'interval': method + ''.join(f' ({note})' for note in notes), 'method': method, 'groups': groups,
            'notes': ''.join(f' ({note})' for note in notes),
            'estimand': estimand, 'jackknife': how.jackknife, 'mean': float(np.mean(valid)) if len(valid) else np.nan,
            'std': float(np.std(valid, ddof=1)) if len(valid) > 1 else np.nan, 'n_valid': int(len(valid))}


#: The summary's columns for code, not for print (the interval method's name, its query groups and its notes as printed
#: after the name: every printed word of them is in ``interval``, which is their join); :func:`printed_summary` leaves
#: them out.
KEY_COLUMNS = ('method', 'groups', 'notes')


def printed_summary(summary: pd.DataFrame) -> pd.DataFrame:
    """The bootstrap summary as ``bootstrap`` and ``report`` print and write it (without :data:`KEY_COLUMNS`)."""
    return summary.drop(columns=[c for c in KEY_COLUMNS if c in summary.columns])


#: What :func:`bootstrap` computes on the resamples (``resample=``): every measure, or only what reads them.
RESAMPLE = ('all', 'needed')


def check_bootstrappable(measures) -> None:
    """ValueError naming every measure the bootstrap cannot resample exactly — raised before any work."""
    unsupported = [m for m in measures if resampling(m) is None]
    if unsupported:
        why = '; '.join(dict.fromkeys(f'{m}: {unresampled_reason(m)}' for m in unsupported))
        raise ValueError(f'the bootstrap has no fast path for {[str(m) for m in unsupported]} ({why}): it resamples '
                         f'{", ".join(resampled_names())} (with one balancing draw and, for FD, without jackknife=True) '
                         'and per-query measures averaged over queries (bootstrap_naive resamples any measure, slowly); '
                         'leave these out of the bootstrap')


def bootstrappable(measures) -> list:
    """The measures the bootstrap can resample (the others are left to the point estimates)."""
    return [m for m in measures if resampling(m) is not None]


def bootstrap(runs: Dict[str, pd.DataFrame], qrels: pd.DataFrame, measures, *, n_samples: int = 1000, seed: int = 0,
              ci: float = 0.95, verbose: bool = True, backend: str = 'numpy', device: Optional[str] = None,
              encoder=None, interval: Optional[str] = None, jackknife='auto',
              population: Optional[int] = None, query_groups=None, resample: str = 'all',
              options: Optional[ResamplingOptions] = None) -> BootstrapResult:
    """Bootstrap confidence intervals over queries for every (run, measure).

    Args:
        runs: system name → result frame (qid, docno, score), e.g. from :func:`pyterrier_frechet.data.runs.read_run`.
        qrels: qid, docno, label. The resampled universe is the qrels' queries.
        measures: ir_measures measures (objects or names), each with a resampling (:func:`check_bootstrappable`
            refuses the others); vector measures take vectors
            from their encoder (or the default one), or the run's ``doc_vec`` column, and their ``missing=`` policy,
            selected exactly as :func:`~pyterrier_frechet.evaluate` selects them (the same documents, vectors and
            drop counts: ``point``).
        n_samples: bootstrap samples (default 1000, as in the paper).
        seed: the draws are ``numpy.random.default_rng(seed)``; the same draws serve every system.
        ci: confidence level of the intervals (default 0.95).
        verbose: progress bars.
        backend: ``'numpy'`` or ``'torch'`` (FD's per-sample statistics batched on ``device``; equal to numpy
            to 1e-8 relative).
        device: for ``backend='torch'``: ``'cuda'``, ``'cpu'``, …; default: CUDA when available.
        encoder: the vector source of vector measures that name none (default: the one set by
            :func:`~pyterrier_frechet.set_default_encoder`).
        interval: the interval method of every measure (:mod:`pyterrier_frechet.core.intervals`: ``'percentile'``,
            ``'shifted'``, ``'basic'``, ``'bca'``, ``'jackknife'``, ``'jackknife_log'``, ``'jackknife_bc'``, ``'t'``);
            default: the measure's resampling's :attr:`~pyterrier_frechet.measures.resampling.Resampling.interval`,
            chosen by measured coverage (FD, CFD: ``jackknife_log``; per-query means: ``t``; DO, HSA: ``percentile``). ``summary`` gives each interval's ``estimate`` —
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
        population: the number N of queries the qrels' n queries were drawn from *without replacement*, when those N
            are the population the conclusions are about (e.g. the 225 Cranfield queries, of which a study judged or
            kept 200): every interval's variance is multiplied by the finite-population correction 1 − n/N
            (:mod:`pyterrier_frechet.core.intervals`; BCa refuses it). Default None: the queries are a sample from
            an unbounded query population (TREC's topics stand for all future queries) — leave it None then;
            the correction would make the intervals too narrow. It also assumes each run is a fixed function of
            the query: randomness inside a run (sampling, random tie-breaks) is not reduced by drawing more of the
            N queries, and the corrected intervals are too narrow for it. The interval text names N (pt_docs
            "Calibration").
        options: a checked :class:`~pyterrier_frechet.analyses.options.ResamplingOptions` (with its ``n_samples``
            set, as :meth:`~pyterrier_frechet.analyses.options.ResamplingOptions.for_runs` sets it) in place of
            ``n_samples``, ``seed``, ``ci``, ``interval``, ``population`` and ``query_groups`` — what ``report``,
            :func:`~pyterrier_frechet.paper_table` and :func:`~pyterrier_frechet.compare_systems` pass, one set of
            options from the call to the resamples.
        query_groups: the queries are not independent — several queries share a topic, a session or an information
            need — and these are the groups (a dict or Series qid → group, or a frame with columns qid and group;
            every judged query needs one, a query may be a group of its own). Each bootstrap sample then draws G
            groups with replacement (the cluster bootstrap) and the jackknife leaves each group out (the cluster
            jackknife, ``jackknife='auto'`` only), with a Student t reference on G − 1 degrees of freedom. Leaving
            topic-sharing queries ungrouped made the intervals too narrow (pt_docs "Calibration", world ``topics``).
        resample: ``'all'`` (default): every measure is computed on every resample (``samples``); ``'needed'``: FD
            and CFD with their default jackknife interval and test, which read only leave-outs, are held on the
            first :data:`TAU_DRAWS` (200) resamples only — what τ's percentile interval reads
            (:func:`~pyterrier_frechet.tau_intervals`, over the draws every measure has; its calibrated count) — so
            their ``mean``, ``std`` and ``n_valid`` are of those, and ``compare_systems``' ``p_bootstrap`` and
            ``p_normal`` for them are NaN. Of those 200, FD is computed on the first :data:`EXACT_DRAWS` (20); the
            other draws are its resamples linearised from its leave-one-query-out values and shifted by the mean gap
            to the computed ones (:func:`~pyterrier_frechet.core.linearised.anchored_resamples`) where every judged
            query is left out alone (:func:`anchorable`; ``BootstrapResult.anchored`` names them), and computed
            otherwise. τ's coverage with them: pt_docs "Calibration". What ``report``, ``paper_table``, ``compare``
            and ``agreement`` make with the default test.

    Returns a :class:`BootstrapResult`; its ``caveats`` state, beside the relevant documents per query and the sd of
    their logs, what was measured about FD's default interval (its coverage across the measured worlds, which no
    set's counts were found to predict: :func:`~pyterrier_frechet.interval_caveat`).
    """
    if options is None:
        # the options checked as every entry point checks them (the sample count, seed, level, interval method,
        # population and query groups), before any work
        options = ResamplingOptions(n_samples=n_samples, seed=seed, ci=ci, interval=interval, population=population,
                                    query_groups=query_groups)
    else:  # checked where it was made (report, paper_table, compare_systems): one set of options, passed through
        given = {k: v for k, v in (('n_samples', n_samples != 1000), ('seed', seed != 0), ('ci', ci != 0.95),
                                   ('interval', interval is not None), ('population', population is not None),
                                   ('query_groups', query_groups is not None)) if v}
        if given or options.n_samples is None:
            raise ValueError(f'bootstrap: give options= (with its n_samples set) or {sorted(given) or "n_samples"} '
                             'as keywords, not both')
    with using_encoder(encoder):
        return _bootstrap(runs, qrels, measures, options, verbose, backend, device, jackknife, resample)


def _bootstrap(runs, qrels, measures, options: ResamplingOptions, verbose: bool, backend: str, device,
               jackknife='auto', resample: str = 'all') -> BootstrapResult:
    n_samples, seed, ci, interval, population, query_groups = (options.n_samples, options.seed, options.ci,
                                                               options.interval, options.population,
                                                               options.query_groups)
    if backend not in ('numpy', 'torch'):
        raise ValueError(f"backend must be 'numpy' or 'torch', got {backend!r}")
    if resample not in RESAMPLE:
        raise ValueError(f'resample must be one of {RESAMPLE}, got {resample!r}')
    if backend == 'torch':
        from ..vectors.devices import check_torch_device
        check_torch_device(device)
    # a bad value is refused before any work
    jackknife_plan(jackknife, 0, seed, None if query_groups is None else np.zeros(0, dtype=np.int64))
    measures = parse_measures(measures)
    check_bootstrappable(measures)
    check_labels_distinct(measures)
    plans = [measure_plan(m, interval) for m in measures]  # each measure resolved once: label, resampling, interval
    for p in plans:
        if backend not in p.resampling.backends:
            raise ValueError(f"{p.measure}: its {p.resampling.name} resampling has the "
                             f"{' and '.join(p.resampling.backends)} backend only; pass backend='numpy'")
    if any(not p.method.from_jackknife for p in plans):
        intervals.check_tail_samples(n_samples, ci)  # an interval read from the resamples: enough of them for its tails
    eng = engine(backend, device)
    # the qrels and runs prepared and coded as evaluate() prepares them: one selection path for every entry point
    qrels_ir = prepare_qrels(to_ir_measures(qrels), 'qrels')
    judgments = Judgments(qrels_ir)
    queries = judgments.query_names.tolist()  # sorted: a query's code in the judgments is its position here
    # refused before any work: N below the number of judged queries, or a finite population with BCa
    fpc = intervals.finite_population_correction(len(queries), population)
    if fpc < 1 and interval == 'bca':
        raise ValueError('interval=bca (--interval bca) has no finite-population form; leave out population= '
                         '(--population) or choose another interval')
    fpc_text = population_text(population, len(queries))
    clusters = None if query_groups is None else query_clusters(query_groups, queries)
    n_clusters = None if clusters is None else int(clusters.max()) + 1
    groups_text = '' if clusters is None else f'cluster bootstrap over G={n_clusters} query groups'
    # compact counts (uint8): every consumer converts a chunk of samples to float64 (exact) where it computes
    counts = resample_counts(len(queries), n_samples, seed, clusters)
    leave_out = _LeaveOuts(jackknife, seed, clusters)
    rows, samples, jackknives, anchored = [], {}, {}, []
    # the point estimates of every run, as every entry point computes them, with the counts of dropped documents
    point_table = evaluate(runs, qrels, measures)
    point = point_table.set_index('name')
    evaluator = measures_evaluator([p.measure for p in plans if p.resampling.statistics == PER_QUERY_VALUES], qrels_ir)
    inputs = {name: RunInputs(measures, judgments, qrels_ir, prepare_run(to_ir_measures(run), f'run {name!r}'), queries,
                              evaluator)
              for name, run in runs.items()}
    # measures whose samples share work between runs (FD's relevant side of each sample): every run at once
    shared = {}
    for p in plans:
        m, res = p.measure, p.resampling
        if res.shares_samples and len(runs) > 1:
            makers = {name: functools.partial(STATISTICS[res.statistics], m, inputs[name]) for name in runs}
            # not drawn: the first EXACT_DRAWS where the leave-outs can anchor the rest (a run whose leave-outs turn
            # out undefined computes its rest in _resampled), else all TAU_DRAWS here, shared by every run
            draws = counts[:None if drawn(p, resample) else
                           EXACT_DRAWS if _leaves_out_alone(p, makers[next(iter(runs))](), leave_out)
                           else TAU_DRAWS]
            with pt.tqdm(total=len(draws) * len(runs), desc=f'bootstrap {m} ({len(runs)} runs)', unit='sample',
                         disable=not verbose or len(draws) < 200) as pbar:
                shared[m] = res.samples_of_runs(m, makers, draws, eng, pbar)
    for name in pt.tqdm(list(runs), desc='bootstrap', unit='run', disable=not verbose or len(runs) < 2):
        samples[name], jackknives[name] = {}, {}
        full = point.loc[name]
        for p in plans:
            m, res, label = p.measure, p.resampling, p.label
            stats = STATISTICS[res.statistics](m, inputs[name])
            # the leave-outs where the interval needs them, and always for a measure whose paired test reads them on
            # n − 1 degrees of freedom (a per-query mean's paired t-test, O(n)); the summary row only where it needs them
            needs = p.method.needs_jackknife
            every = drawn(p, resample)
            values, jack, jack_text, anchor, jack_note = _resampled(
                p, stats, counts, eng, verbose,
                leave_out if (needs or res.paired_test == 't') and jackknife is not None else None,
                _Held(shared[m][name] if m in shared else None, None if every else TAU_DRAWS,
                     None if every else float(full[label])))
            samples[name][label] = values
            if anchor:
                anchored.append((name, label))
            if jack is not None:
                jackknives[name][label] = jack
            if not needs:
                jack, jack_text, jack_note = None, '', ''
            how = IntervalNotes(jack_text, jack_note, groups_text,
                                None if clusters is None else len(jack) if needs else n_clusters, fpc, fpc_text)
            rows.append(_summary_row(name, label, float(full[label]), values, ci, p.interval, jack, p.estimand, how))
    groups = None if clusters is None else pd.Series(clusters, index=pd.Index(queries, name='qid'), name='group')
    return BootstrapResult(pd.DataFrame(rows), samples, queries, jackknives, point_table, population, groups,
                           tuple(interval_caveat(qrels_ir, measures)), int(len(counts)), list(measures), tuple(anchored),
                           tuple(plans))


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
