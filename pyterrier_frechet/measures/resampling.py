"""How a measure is resampled, declared on the measure: its :class:`Resampling` (``RESAMPLING`` on the class).

The bootstrap over queries draws |Q| queries with replacement; a query drawn k times weighs k. The jackknife
leaves one query (or a group of queries) out: those weigh 0, the others 1. A resampling says how a measure's value
follows from such weights, exactly, without gathering a vector or rebuilding a frame again:

- :attr:`Resampling.statistics` — which per-query statistics it re-weights, prepared by
  :mod:`pyterrier_frechet.analyses.bootstrap` from the same selection :func:`~pyterrier_frechet.evaluate` makes
  (:data:`VECTOR_STATS`, :data:`HISTOGRAM_COUNTS` or :data:`PER_QUERY_VALUES`; each arrives as an object with the
  fields listed there, and a boolean ``units`` over the query universe: the queries the jackknife leaves out);
- :meth:`Resampling.samples` — the value under each row of a (samples × queries) weight matrix;
- :meth:`Resampling.leave_out` — the value with each group of unit queries left out (default: :meth:`samples`
  with one row of weights per group; a resampling may downdate totals instead);
- :attr:`Resampling.interval`, :attr:`Resampling.estimand` — the interval it is printed with by default (chosen by
  measured coverage, pt_docs "Calibration") and what that interval is for;
- :attr:`Resampling.paired_test` — the p-value ``compare`` and ``report`` read for a pair of systems by default
  (FD's jackknife t-test, a per-query mean's paired t-test);
- :meth:`Resampling.swapped` — the difference of two systems with the queries of each permutation swapped between
  them (the randomisation test's statistic; a resampling without it has no randomisation test);
- :attr:`Resampling.grouped_jackknife` (:meth:`Resampling.jackknife_plan`), :attr:`Resampling.backends`.

A resampling of :data:`VECTOR_STATS` also gives the measure its per-query rows under ir_measures and
``pt.Experiment`` (centred jackknife pseudo-values from :meth:`Resampling.leave_out`:
:mod:`pyterrier_frechet.evaluation.experiment_rows`), so a new vector measure with such a resampling gets a valid
``baseline=`` test with nothing more declared.

``bootstrap``, ``compare``, ``agreement`` and ``report`` ask :func:`~pyterrier_frechet.measures.base.resampling`
and branch on none of these names. The resamplings of FD and CFD (:data:`~.definitions.GAUSSIAN`,
:data:`~.definitions.CONDITIONAL`) are defined beside them; this module holds the base class and the two that
serve many measures: :data:`HISTOGRAM` (every :class:`~.base.HistogramMeasure`) and :data:`PER_QUERY` (any
per-query measure, e.g. nDCG). A measure without one (``RESAMPLING = None``) is refused by the bootstrap with a
message listing the registered measures that have one. The cores are imported inside the methods, so importing the
package stays cheap.
"""
from typing import Callable, NamedTuple, Optional, Sequence

import numpy as np

#: :attr:`Resampling.statistics` values. ``VECTOR_STATS``: ``rel``, ``ret`` (:class:`~pyterrier_frechet.core.weighted.QueryStats`
#: of the relevant and the retrieved vectors, per query: counts, shifted sums, cross-products; per-query weighted for
#: ``weighting='query'``), ``shift`` (the common shift, the mean relevant vector), ``units`` (queries with relevant
#: vectors).
VECTOR_STATS = 'vector_stats'
#: ``HISTOGRAM_COUNTS``: ``histograms`` (:class:`~pyterrier_frechet.evaluation.histograms.QueryHistograms`: per-query
#: bin counts of relevant and non-relevant documents, bin centres, the queries), ``positions`` (each of those queries'
#: position in the universe), ``units`` (every query).
HISTOGRAM_COUNTS = 'histogram_counts'
#: ``PER_QUERY_VALUES``: ``values`` (the measure per query, in universe order), ``units`` (every query).
PER_QUERY_VALUES = 'per_query_values'


class Engine(NamedTuple):
    """The batched routines a resampling may call: numpy (:func:`numpy_engine`) or the bootstrap's ``backend=``
    (:func:`pyterrier_frechet.analyses.bootstrap.engine`)."""
    name: str
    weighted_fds: Callable  # (rel, rel_weights, ret_parts, ret_weights, shift, pbar) -> FD per row of the weights
    fd_batch: Optional[Callable]  # list of (relevant, retrieved) Gaussians -> their FDs; None: one at a time


def numpy_engine() -> Engine:
    """The numpy routines (:func:`pyterrier_frechet.core.weighted.weighted_fds`; FDs one at a time)."""
    from ..core.weighted import weighted_fds
    return Engine('numpy', weighted_fds, None)


#: The paired tests (:attr:`Resampling.paired_test`) read from the bootstrap's leave-out values, not its resamples:
#: FD's jackknife t-test (``p_jackknife``), a per-query mean's paired t-test (``p_t``).
LEAVE_OUT_TESTS = ('jackknife', 't')
#: Every paired test a resampling may declare (:attr:`Resampling.paired_test`).
PAIRED_TESTS = LEAVE_OUT_TESTS + ('normal',)


def leave_out_weights(units, groups: np.ndarray, n_groups: int) -> np.ndarray:
    """The (groups × queries) weights of the leave-outs: 1 for each unit query, 0 for the queries of the group left
    out and for the queries that are no unit."""
    weights = np.tile(np.asarray(units, dtype=bool).astype(np.float64), (n_groups, 1))
    member = groups >= 0
    weights[groups[member], np.flatnonzero(member)] = 0.0
    return weights


class Resampling:
    """How the bootstrap and the jackknife re-weight one kind of measure (see the module docstring)."""

    #: Its name in the measure reference (pt_docs) and the docs.
    name: str = ''
    #: Which per-query statistics it re-weights (:data:`VECTOR_STATS`, :data:`HISTOGRAM_COUNTS`, :data:`PER_QUERY_VALUES`).
    statistics: str = ''
    #: The interval the bootstrap prints by default (a method of :mod:`pyterrier_frechet.core.intervals`).
    interval: str = 'percentile'
    #: What that interval is for, in a table cell (the bootstrap summary's ``estimand`` column).
    estimand: str = 'population mean'
    #: The p-value of a paired difference ``compare`` reads by default, and the interval of that difference:
    #: ``'jackknife'``: from the leave-out values of the difference (which the bootstrap keeps where :attr:`interval`
    #: needs them), t on m − 1 degrees of freedom over the m leave-outs (``p_jackknife``); ``'t'``: the same, kept by
    #: the bootstrap always — for a per-query mean the jackknife standard error is s/√n exactly, so this is the
    #: paired t-test (and its interval) that ``pt.Experiment`` and ``scipy.stats.ttest_rel`` give (``p_t``);
    #: ``'normal'``: from the normal approximation of the resampled differences.
    paired_test: str = 'normal'
    #: Leave-outs: the unit queries in seeded groups when there are many (``jackknife='auto'``), or always one by one.
    grouped_jackknife: bool = False
    #: The bootstrap backends it runs on (one that never calls ``engine`` runs on any).
    backends: Sequence[str] = ('numpy', 'torch')

    def samples(self, measure, stats, weights: np.ndarray, engine, pbar=None) -> np.ndarray:
        """The value of ``measure`` under each row of ``weights`` (samples × queries of the universe, float64).
        ``engine``: the backend's batched routines (``engine.weighted_fds``, ``engine.fd_batch``); ``pbar``: anything
        with ``update(n)``, or None."""
        raise NotImplementedError(f'{type(self).__name__} does not define samples()')

    #: Whether :meth:`samples_of_runs` shares work between runs (else the bootstrap takes one run at a time).
    shares_samples: bool = False

    def samples_of_runs(self, measure, stats: dict, weights: np.ndarray, engine, pbar=None) -> dict:
        """:meth:`samples` of every run under the same ``weights`` (``stats``: run name → a function making that
        run's statistics, called once), as a dict run name → values. Default: one run at a time; a resampling whose
        work per sample is shared by the runs (FD's relevant side: :attr:`shares_samples`) does that work once."""
        return {name: self.samples(measure, make(), weights, engine, pbar) for name, make in stats.items()}

    def leave_out(self, measure, stats, groups: np.ndarray, n_groups: int, engine, pbar=None) -> np.ndarray:
        """The value with each of the ``n_groups`` groups of unit queries left out (``groups``: each query's group,
        −1 for a query that is no unit; such queries weigh 0). Default: :meth:`samples` with one row per group."""
        weights = leave_out_weights(stats.units, groups, n_groups)
        return self.samples(measure, stats, weights, engine, pbar)

    def swapped(self, measure, stats_a, stats_b, swaps: np.ndarray, engine) -> Optional[np.ndarray]:
        """value(A) − value(B) with the queries of each row of ``swaps`` (permutations × queries of the universe, 1:
        swapped) taken from the other system: the randomisation test's statistic, under its null that the two
        systems are exchangeable per query. ``stats_a``, ``stats_b``: the two systems' statistics over the same
        queries (one relevant side). Default None: no randomisation test for this resampling."""
        return None

    def randomised(self) -> bool:
        """Whether it has a randomisation test (:meth:`swapped` is defined)."""
        return type(self).swapped is not Resampling.swapped

    def influence(self, measure, stats) -> Optional[np.ndarray]:
        """The first-order change of the value when each unit query's weight rises (∂value/∂w_q at the units'
        weights, NaN for a query that is no unit): the infinitesimal jackknife, from which the per-query rows under
        ir_measures and ``pt.Experiment`` are built where it is defined
        (:mod:`~pyterrier_frechet.evaluation.experiment_rows`). Default None: no closed form, so the rows take the
        exact :meth:`leave_out` values."""
        return None

    def jackknife_plan(self, jackknife, n_units: int, seed: int, clusters: Optional[np.ndarray] = None):
        """How its leave-outs group the unit queries: :func:`~pyterrier_frechet.core.weighted.jackknife_plan` of
        ``jackknife`` where :attr:`grouped_jackknife`, else each unit alone; user-named query groups (``clusters``,
        a code per query of the universe) for every resampling (they say the queries are not independent)."""
        from ..core.weighted import JackknifePlan, jackknife_plan
        if clusters is not None or self.grouped_jackknife:
            return jackknife_plan(jackknife, n_units, seed, clusters)
        return JackknifePlan(None, seed)

    def __repr__(self):
        return f'{type(self).__name__}({self.name!r})'


class HistogramCounts(Resampling):
    """DO, HSA: each query's bin counts summed with the weights, then the measure's statistic; a sample that drew no
    query with a histogram has no value (NaN)."""
    name = 'histogram'
    statistics = HISTOGRAM_COUNTS
    estimand = 'population value'  # DO and HSA of the pooled histograms: not a mean over queries

    def samples(self, measure, stats, weights, engine, pbar=None):
        from ..core.histogram import Histograms
        qh = stats.histograms
        w = np.asarray(weights[:, stats.positions], dtype=np.float64)  # compact counts: float64 before the products
        rel, nonrel = w @ qh.relevant, w @ qh.nonrelevant
        return np.array([measure.statistic(Histograms(r, n, qh.centres)) if drew else np.nan
                         for r, n, drew in zip(rel, nonrel, w.sum(axis=1) > 0)])

    def leave_out(self, measure, stats, groups, n_groups, engine, pbar=None):
        """The pooled bin counts minus each group's (O(Q · bins)); a group without histograms leaves the value
        unchanged, one that holds every histogram leaves none (NaN)."""
        from ..core.histogram import Histograms
        qh = stats.histograms
        rel_total, nonrel_total = qh.relevant.sum(axis=0), qh.nonrelevant.sum(axis=0)
        full = measure.statistic(Histograms(rel_total, nonrel_total, qh.centres)) if len(qh.queries) else np.nan
        of = groups[stats.positions]
        rel_out, nonrel_out = np.zeros((n_groups, len(qh.centres))), np.zeros((n_groups, len(qh.centres)))
        np.add.at(rel_out, of, qh.relevant)
        np.add.at(nonrel_out, of, qh.nonrelevant)
        held = np.bincount(of, minlength=n_groups)
        return np.array([full if held[g] == 0 else np.nan if held[g] == len(qh.queries) else
                         measure.statistic(Histograms(rel_total - rel_out[g], nonrel_total - nonrel_out[g], qh.centres))
                         for g in range(n_groups)], dtype=np.float64)


class PerQueryMean(Resampling):
    """A per-query measure (nDCG, RR, any measure of another package): the per-query values averaged with the weights."""
    name = 'per_query'
    statistics = PER_QUERY_VALUES
    # the paired t-test: it held its level where the normal approximation of the resampled differences did not quite
    # (0.043–0.058 against 0.053–0.070 over 1000 query sets of 43 in each of three worlds, docs/unseen-world-check.md)
    paired_test = 't'
    # the t interval of the mean (s/√n on n − 1 degrees of freedom; the paired test's own reference): it covered the
    # population mean more often than the percentile bootstrap wherever both were measured (pt_docs "Calibration")
    interval = 't'

    def samples(self, measure, stats, weights, engine, pbar=None):
        # the weights in any numeric type (the bootstrap's compact counts): float64 a block of samples at a time.
        # The mean over the queries drawn: Σ w·v / Σ w (a cluster bootstrap draws a varying number of queries; the
        # query bootstrap always n, where this is Σ w·v / n exactly)
        step = max(1, (1 << 22) // max(weights.shape[1], 1))
        out = []
        for i in range(0, len(weights), step):
            w = np.asarray(weights[i:i + step], dtype=np.float64)
            total = w.sum(axis=1)
            with np.errstate(invalid='ignore', divide='ignore'):
                out.append(np.where(total > 0, (w @ stats.values) / total, np.nan))
        return np.concatenate(out)

    def leave_out(self, measure, stats, groups, n_groups, engine, pbar=None):
        values = stats.values
        left = np.bincount(groups[groups >= 0], weights=values[groups >= 0], minlength=n_groups)
        sizes = np.bincount(groups[groups >= 0], minlength=n_groups)
        return (values.sum() - left) / (len(values) - sizes)


HISTOGRAM = HistogramCounts()
PER_QUERY = PerQueryMean()
