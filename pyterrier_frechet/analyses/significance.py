"""Is system A's FD different from system B's on the same queries? Paired tests over queries.

FD is one number per query set, so pt.Experiment's per-query paired tests do not apply (see the README).
Two tests that do, both seeded and built on the per-query statistics of :mod:`pyterrier_frechet.analyses.bootstrap`:

- **paired bootstrap**: resample queries (the same draws for A and B), recompute FD_A − FD_B per sample for a
  two-sided bootstrap p-value (:func:`bootstrap_p`); the CI of the difference is the jackknife interval over the
  queries with relevant documents, for E[ΔFD̂ₙ] — the expected difference over query sets of this size — which it
  covers in the worlds of pt_docs "Calibration" (0.88–0.98), where the percentile interval does not. The default
  test is the jackknife t-test of the same difference (:func:`jackknife_p`, t on n − 1 degrees of freedom): it
  rejects exactly when that interval excludes 0.
- **randomisation test**: under the null hypothesis that A and B are exchangeable, swapping the two
  systems' retrieved sets for any subset of queries leaves the distribution of FD_A − FD_B unchanged.
  Each permutation swaps every query with probability ½; p = (1 + #{|Δ_perm| ≥ |Δ_obs|}) / (1 + n).

:func:`compare_systems` runs the paired bootstrap for every pair of many systems (or each against a baseline)
from one bootstrap, for every measure the bootstrap resamples (its :class:`~pyterrier_frechet.measures.resampling.Resampling`), with Holm's correction per measure. Its default
p-value is :func:`normal_p` (the normal approximation of the resampled differences: not quantised by the number of
resamples, so Holm's first step is resolved for any number of pairs; level and power: ``calibrate --level``,
docs/report-scale.md); ``test='bootstrap'`` gives the count p-value :func:`bootstrap_p`.

Every test selects documents and vectors as :func:`~pyterrier_frechet.evaluate` does
(:func:`~pyterrier_frechet.evaluation.vector_sets.select_vector_sets`).
"""
import dataclasses
import math
import warnings
from typing import Dict, NamedTuple, Optional, Tuple

import numpy as np
import pandas as pd
import pyterrier as pt

from ..core.intervals import (check_fpc, check_tail_samples, finite_population_correction, interval, jackknife_df,
                              jackknife_se)
from ..core.weighted import cluster_note, per_query_weighted
from ..evaluation.evaluate import parse_measures
from ..evaluation.frames import prepare_qrels, prepare_run, to_ir_measures
from ..evaluation.selection import Judgments
from ..evaluation.vector_sets import select_vector_sets
from ..evaluation.vector_statistics import VectorStatistics, pair_query_stats, query_stats
from ..measures.base import column_label, higher_is_better, registered_measures, resampling
from ..measures.resampling import LEAVE_OUT_TESTS, numpy_engine
from ..vectors.sources import using_encoder
from .bootstrap import bootstrap, check_bootstrappable, population_text, resample_counts
from .options import DEFAULT_TEST, FEW_SAMPLES, ResamplingOptions, query_clusters


def randomised(measure) -> bool:
    """Whether the randomisation test (and :func:`paired_test`) applies: the measure's resampling defines its
    statistic on swapped queries (:meth:`~..measures.resampling.Resampling.swapped`)."""
    res = resampling(measure)
    return res is not None and res.randomised()


def randomised_names() -> list:
    """The registered measures the randomisation test applies to, for messages."""
    return [m.NAME for m in registered_measures() if randomised(m)]


class PairedResult(NamedTuple):
    fd_a: float
    fd_b: float
    diff: float  # FD_A − FD_B on the full query set (negative: A is closer to the relevant documents)
    ci_low: float
    ci_high: float
    p_bootstrap: float
    p_randomisation: float
    n_queries: int


class _PairStats(NamedTuple):
    """Two runs' statistics of one measure over the same queries, with one relevant side and shift."""
    a: VectorStatistics
    b: VectorStatistics
    queries: list


def _pair_stats(run_a: pd.DataFrame, run_b: pd.DataFrame, qrels: pd.DataFrame, measure) -> _PairStats:
    """Both runs' retrieved sets and the relevant set of ``measure``, selected as ``evaluate`` selects them
    (:func:`~..evaluation.vector_sets.select_vector_sets`: the same documents, vectors and ``missing=`` policy), as
    the statistics its resampling re-weights."""
    if not randomised(measure):
        raise ValueError(f'{measure}: the paired FD tests re-weight the Gaussians of both runs; they are offered for '
                         f'{", ".join(randomised_names())} (with one balancing draw; FD without jackknife=True)')
    judgments = Judgments(prepare_qrels(to_ir_measures(qrels), 'qrels'))
    queries = judgments.query_names.tolist()
    sets = [select_vector_sets([measure], judgments, prepare_run(to_ir_measures(r), name))[measure]
            for r, name in ((run_a, 'run a'), (run_b, 'run b'))]
    rel, ret_a, shift = pair_query_stats(sets[0], len(queries))
    ret_b = query_stats(sets[1].retrieved, len(queries), shift)
    if measure.query_weighted():
        rel, ret_a, ret_b = (per_query_weighted(x) for x in (rel, ret_a, ret_b))
    units = rel.n > 0
    return _PairStats(VectorStatistics(rel, ret_a, shift, units), VectorStatistics(rel, ret_b, shift, units), queries)


def _randomisation_p(measure, ps: _PairStats, diff: float, n_permutations: int, seed: int) -> float:
    """Two-sided randomisation p-value of the observed difference: the measure's resampling's statistic with the
    systems' queries swapped at random (:meth:`~..measures.resampling.Resampling.swapped`)."""
    swap = np.random.default_rng(seed + 1).integers(0, 2, size=(n_permutations, len(ps.queries))).astype(np.float64)
    perm = resampling(measure).swapped(measure, ps.a, ps.b, swap, numpy_engine())
    perm = perm[np.isfinite(perm)]
    return float((1 + np.sum(np.abs(perm) >= abs(diff) - 1e-12 * abs(diff))) / (1 + len(perm)))


def bootstrap_p(diffs: np.ndarray) -> float:
    """Two-sided paired-bootstrap p-value of a difference from B resampled differences:
    ``min(1, 2 (1 + min(#{Δ* ≤ 0}, #{Δ* ≥ 0})) / (B + 1))``.

    The +1 counts the observed sample among the resamples (Davison & Hinkley 1997, eq. 4.11), so p is never
    below ``2 / (B + 1)``: five resamples cannot give p = 0 and call a winner."""
    diffs = np.asarray(diffs, dtype=np.float64)
    diffs = diffs[np.isfinite(diffs)]
    if len(diffs) == 0:
        return float('nan')
    tail = min(int(np.sum(diffs <= 0)), int(np.sum(diffs >= 0)))
    return float(min(1.0, 2 * (1 + tail) / (len(diffs) + 1)))


def normal_p(diff: float, diffs: np.ndarray, fpc: float = 1.0) -> float:
    """Two-sided p-value of a difference from the normal approximation of its paired bootstrap distribution:
    ``2 Φ(−|Δ̂| / sd(Δ*))``. Not quantised by the number of resamples (the count test :func:`bootstrap_p` cannot
    go below ``2/(B+1)``), so Holm's first step α/m can be resolved with the default 1000 resamples for any number
    of comparisons; its level and power are measured by ``calibrate --level`` (docs/report-scale.md).
    A difference every resample repeats exactly (sd 0) gets p = 1 when it is 0, else 0. ``fpc``: the
    finite-population correction 1 − n/N of the variance (as in :func:`jackknife_p`)."""
    from scipy.stats import norm
    fpc = check_fpc(fpc)
    diffs = np.asarray(diffs, dtype=np.float64)
    diffs = diffs[np.isfinite(diffs)]
    if len(diffs) < 2 or not np.isfinite(diff):
        return float('nan')
    sd = float(np.sqrt(fpc) * np.std(diffs, ddof=1))
    if sd <= 1e-15 * max(abs(diff), 1.0):
        return 1.0 if diff == 0 else 0.0
    return float(min(1.0, 2 * norm.sf(abs(diff) / sd)))


def jackknife_p(diff: float, jackknife: np.ndarray, fpc: float = 1.0, df: Optional[float] = None) -> float:
    """Two-sided p-value of a difference from its jackknife standard error over the n leave-one-query-out values
    (the test that matches the jackknife interval of the difference): ``2 T_{n−1}(−|Δ̂| / SE_J)``,
    ``SE_J² = fpc · (n−1)/n Σ(Δ₍ᵢ₎ − Δ̄₍·₎)²``. For a per-query mean this is the paired t-test. ``fpc``: the
    finite-population correction 1 − n/N when the queries are a draw without replacement from N
    (:func:`~pyterrier_frechet.core.intervals.finite_population_correction`); 1 for an infinite population. With
    it the test asks whether the systems differ on average over query sets drawn from *those N queries*. ``df``: the
    degrees of freedom of the t reference (default n − 1 over the n finite leave-out values,
    :func:`~pyterrier_frechet.core.intervals.jackknife_df`, as for the jackknife intervals; ``math.inf``: the normal
    reference, the z-test, an earlier default).
    NaN for fewer than 2 finite leave-outs or a non-finite Δ̂; 1 or 0 where SE_J vanishes (Δ̂ = 0 or not)."""
    from scipy.stats import norm, t as student_t
    fpc = check_fpc(fpc)
    jack = np.asarray(jackknife, dtype=np.float64)
    jack = jack[np.isfinite(jack)]
    if len(jack) < 2 or not np.isfinite(diff):
        return float('nan')
    se = jackknife_se(jack, fpc)
    if se <= 1e-15 * max(abs(diff), 1.0):
        return 1.0 if diff == 0 else 0.0
    dof = jackknife_df(jack) if df is None else df
    tail = norm.sf(abs(diff) / se) if dof == math.inf else student_t.sf(abs(diff) / se, dof)
    return float(min(1.0, 2 * tail))


def experiment_p(diff: float, jackknife: np.ndarray, n_rows: Optional[int] = None) -> float:
    """The p-value ``pt.Experiment(baseline=...)`` prints for FD or CFD: its paired t-test on the centred
    pseudo-values (:mod:`~pyterrier_frechet.evaluation.experiment_rows`) has the jackknife t statistic
    Δθ̂ / SE_J (:func:`jackknife_p`'s) on ``n_rows`` − 1 degrees of freedom (default: one row per leave-out):
    ``2 T_{n−1}(−|Δ̂| / SE_J)`` — with one row per leave-out, :func:`jackknife_p`'s p, which ``compare`` prints."""
    return jackknife_p(diff, jackknife, df=None if n_rows is None else n_rows - 1)


def paired_test(run_a: pd.DataFrame, run_b: pd.DataFrame, qrels: pd.DataFrame, measure, n_samples: int = 1000,
                n_permutations: int = 1000, seed: int = 0, ci: float = 0.95,
                population: Optional[int] = None, query_groups=None) -> PairedResult:
    """Paired bootstrap and randomisation test of FD_A − FD_B for one FD measure on the same queries.

    Vectors come from the measure's encoder (or the default one), with its ``missing=`` policy. ``population``: the
    N queries the qrels' n were drawn from without replacement (:func:`~pyterrier_frechet.analyses.bootstrap.bootstrap`);
    the CI's variance carries 1 − n/N (the count and randomisation p-values have no such form and are unchanged).
    ``query_groups``: queries that are not independent, in these groups (as the bootstrap's ``query_groups``): the
    bootstrap draws groups, the CI is the cluster jackknife's with a t reference on G − 1 degrees of freedom; the
    randomisation test still swaps per query (valid under its null for any dependence between queries).
    """
    ps = _pair_stats(run_a, run_b, qrels, measure)
    queries, res, engine = ps.queries, resampling(measure), numpy_engine()
    fpc = finite_population_correction(len(queries), population)
    clusters = None if query_groups is None else query_clusters(query_groups, queries)
    ones = np.ones((1, len(queries)))
    fd_a, fd_b = (float(res.samples(measure, st, ones, engine)[0]) for st in (ps.a, ps.b))
    diff = fd_a - fd_b

    counts = resample_counts(len(queries), n_samples, seed, clusters).astype(np.float64)
    boot = res.samples(measure, ps.a, counts, engine) - res.samples(measure, ps.b, counts, engine)
    boot = boot[np.isfinite(boot)]
    # the CI: the jackknife interval of ΔFD over the queries with relevant documents (measured coverage, pt_docs
    # Calibration), leave-outs by the resampling's downdating with compare's plan (each query alone up to 500, 200
    # groups above)
    units = ps.a.units
    groups, n_groups = res.jackknife_plan('auto', int(units.sum()), seed, clusters).assign(units)
    jack = (res.leave_out(measure, ps.a, groups, n_groups, engine)
            - res.leave_out(measure, ps.b, groups, n_groups, engine))
    # t on m − 1 degrees of freedom over the m finite leave-outs (jackknife_df, the interval's default): the same
    # count as the standard error's, also when a leave-out is undefined
    low, high = interval('jackknife', diff, boot, ci, jackknife=jack, fpc=fpc)
    p_rand = _randomisation_p(measure, ps, diff, n_permutations, seed)
    return PairedResult(fd_a, fd_b, diff, float(low), float(high), bootstrap_p(boot), p_rand, len(queries))


def holm(p_values) -> np.ndarray:
    """Holm's step-down adjustment of a family of p-values (controls the family-wise error rate); NaN stays NaN."""
    p = np.asarray(p_values, dtype=np.float64)
    out = np.full(len(p), np.nan)
    ok = np.flatnonzero(np.isfinite(p))
    m = len(ok)
    order = ok[np.argsort(p[ok], kind='stable')]
    running = 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (m - rank) * p[i]))
        out[i] = running
    return out


def compare_systems(runs: Dict[str, pd.DataFrame], qrels: pd.DataFrame, measures, *, baseline: Optional[str] = None,
                    n_samples: Optional[int] = None, seed: int = 0, ci: float = 0.95, alpha: float = 0.05,
                    n_permutations: int = 0, verbose: bool = True, boot=None, encoder=None,
                    test: str = DEFAULT_TEST, population: Optional[int] = None, query_groups=None) -> pd.DataFrame:
    """Paired comparisons of many systems, every pair (or each against ``baseline``), per measure, with Holm's
    correction over the comparisons of each measure.

    One :func:`~pyterrier_frechet.bootstrap` serves every pair: its samples use the same query draws for every
    system, so ``samples[a] − samples[b]`` is the paired bootstrap of the difference (for every measure
    with a resampling). ``test`` is how a pair's p-value is read: ``'jackknife'`` (default: each measure's own test
    from the leave-one-query-out values the bootstrap kept — :func:`jackknife_p` for FD and CFD, the paired t-test
    for per-query measures such as nDCG (``p_t``, equal to ``scipy.stats.ttest_rel`` on the per-query values) — else
    :func:`normal_p`, the normal approximation of the resampled differences; none is quantised by the resample
    count, so any number of pairs can be
    Holm-corrected with 1000 resamples; level and power measured by ``calibrate --level``), ``'normal'`` or
    ``'bootstrap'`` (:func:`bootstrap_p`, the count of resamples beyond 0: never below ``2/(B+1)``, so ``n_samples``
    must resolve Holm's first step α/m — refused before any work otherwise; without ``n_samples`` the smallest count
    that does, :func:`~pyterrier_frechet.analyses.options.samples_for_holm`). ``n_samples``: default
    :func:`~pyterrier_frechet.analyses.options.default_samples`. With ``n_permutations > 0``,
    FD pairs also get the randomisation test of :func:`paired_test` (one pass per pair; slower; its count must resolve
    Holm too).

    Returns one row per (measure, a, b): values, difference a − b with its CI (``interval``: ``jackknife`` for FD —
    the percentile interval of ΔFD under-covers at 43 queries, pt_docs "Calibration" —, ``paired t`` for per-query
    measures, else ``percentile``), ``p_bootstrap`` (the count p-value) and ``p_normal`` (NaN where the measure was
    not computed on the resamples: FD and CFD under the default test, whose bootstrap is made with
    ``resample='needed'``), ``p_jackknife`` and ``p_t`` (NaN where the measure's own test is the other one, or
    without leave-one-out values), ``test``
    (the p-value Holm-corrected in that row), ``p_holm``, optionally
    ``p_randomisation`` and ``p_randomisation_holm``, and ``better``: the better system (orientation-aware) where the
    Holm-adjusted p is below ``alpha``, else empty. ``boot``: a
    :class:`~pyterrier_frechet.analyses.bootstrap.BootstrapResult` of these runs and measures to reuse (it sets the
    samples, and its ``population`` is used when none is given). ``encoder``: the vector source of vector measures
    that name none. ``population``: the N queries the qrels' n were drawn from without replacement, when those N are
    the population the comparison is about (:func:`~pyterrier_frechet.analyses.bootstrap.bootstrap`): the CI and the
    jackknife and normal p-values carry the finite-population correction 1 − n/N; the count test
    (``test='bootstrap'``) has no such form and refuses it. ``query_groups``: queries that are not independent, in
    these groups (:func:`~pyterrier_frechet.analyses.bootstrap.bootstrap`'s ``query_groups``): the cluster bootstrap
    and the cluster jackknife, whose interval and p-value take a t reference on G − 1 degrees of freedom (``boot``'s
    groups when none are given).
    """
    if population is None and boot is not None:
        population = boot.population
    if boot is not None and query_groups is not None:
        given = query_clusters(query_groups, boot.queries)
        if boot.query_groups is None or not np.array_equal(given, boot.query_groups.to_numpy()):
            raise ValueError('query_groups differ from the groups boot was resampled with; pass boot=None, or the '
                             'same query_groups to bootstrap() and compare_systems()')
    if boot is not None:  # its groups and samples
        query_groups, n_samples = boot.query_groups, boot.n_samples
    options = ResamplingOptions(n_samples=n_samples, seed=seed, ci=ci, alpha=alpha, test=test, population=population,
                                query_groups=query_groups, baseline=baseline, n_permutations=n_permutations)
    check_bootstrappable(parse_measures(measures))  # before anything asks a measure for its resampling
    if boot is not None:
        check_drawn(boot, parse_measures(measures), test)
    # the baseline among the runs; the count test's resamples, and any permutations, able to pass Holm's first step
    options = options.for_runs(runs)
    with using_encoder(encoder):
        return compare_with(runs, qrels, measures, options, verbose, boot)


class PairedDifference(NamedTuple):
    """One measure's difference a − b on one bootstrap, with everything a paired test reads from it."""
    diff: float  # on the evaluated query set
    diffs: np.ndarray  # on each resample (empty where the measure was not computed on them)
    leave_outs: Optional[np.ndarray]  # the leave-outs' differences, where the measure's own test reads them
    df: float  # their t reference's degrees of freedom (NaN without)
    own: str  # the measure's own paired test (its resampling's)
    p_own: float  # its p-value where it reads leave-outs (NaN otherwise)
    p_bootstrap: float  # the count p-value (NaN where not drawn)
    p_normal: float  # the normal approximation's (NaN where not drawn)

    def p(self, test: str) -> Tuple[float, str]:
        """The p-value of ``test`` (:data:`~pyterrier_frechet.analyses.options.TESTS`) and the test that gave it: ``'jackknife'`` is the measure's own
        leave-out test where it has one, else the normal approximation."""
        used = test if test != 'jackknife' else self.own if np.isfinite(self.p_own) else 'normal'
        return {'bootstrap': self.p_bootstrap, 'normal': self.p_normal}.get(used, self.p_own), used


def point_values(boot) -> pd.Series:
    """``boot``'s value per (system, measure label), as :func:`paired` reads it (empty without a summary)."""
    return boot.summary.set_index(['name', 'measure'])['value'] if len(boot.summary) else pd.Series(dtype=np.float64)


def paired(boot, col: str, a: str, b: str, fpc: float = 1.0, values: Optional[pd.Series] = None) -> PairedDifference:
    """The paired difference of the measure of column label ``col`` between systems ``a`` and ``b`` of ``boot`` and
    its tests — the one reading of a pair that :func:`compare_systems` and
    :func:`~pyterrier_frechet.analyses.discrimination.discriminative_power` share. ``values``: :func:`point_values`
    of ``boot``, made once by a caller that reads many pairs."""
    values = point_values(boot) if values is None else values
    diff = float(values[a, col] - values[b, col]) if (a, col) in values.index and (b, col) in values.index else np.nan
    drawn_a, drawn_b = boot.drawn(a, col), boot.drawn(b, col)
    diffs = drawn_a - drawn_b if drawn_a is not None and drawn_b is not None else np.zeros(0)
    own = boot.own_test(col)
    jack = boot.jackknife or {}
    leave_outs, df, p_own = None, float('nan'), float('nan')
    if own in LEAVE_OUT_TESTS and col in jack.get(a, {}) and col in jack.get(b, {}):
        leave_outs = jack[a][col] - jack[b][col]
        # a t reference on m − 1 degrees of freedom over the m leave-outs (n queries, or G query groups)
        df = jackknife_df(leave_outs)
        p_own = jackknife_p(diff, leave_outs, fpc=fpc, df=df)
    drawn = len(diffs) > 0
    return PairedDifference(diff, diffs, leave_outs, df, own, p_own,
                            bootstrap_p(diffs) if drawn else float('nan'),
                            normal_p(diff, diffs, fpc) if drawn else float('nan'))


def resample_for(test: str) -> str:
    """What a bootstrap made for ``test`` computes on the resamples (:func:`~.bootstrap.bootstrap`'s ``resample``):
    only what reads them for the default test, every measure for the tests of the resampled differences."""
    return 'needed' if test == 'jackknife' else 'all'


def check_drawn(boot, measures, test: str) -> None:
    """ValueError before any work when ``test`` reads resampled differences ``boot`` did not compute (``measures``:
    objects or column labels)."""
    for m in measures:
        label = m if isinstance(m, str) else column_label(m)
        needs = test in ('bootstrap', 'normal') or boot.own_test(label) not in LEAVE_OUT_TESTS
        if needs and not boot.on_every_draw(label):
            raise ValueError(f"test={test!r} reads {label}'s resampled differences, which this bootstrap did not "
                             "compute (resample='needed'); bootstrap again with resample='all', or use the default "
                             "test='jackknife'")


def compare_with(runs, qrels, measures, options: ResamplingOptions, verbose: bool = True, boot=None) -> pd.DataFrame:
    """:func:`compare_systems` with its options made and checked (:meth:`ResamplingOptions.for_runs`): the paired
    comparisons on ``boot`` (None: one bootstrap made here)."""
    measures = parse_measures(measures)
    check_bootstrappable(measures)
    names, baseline, test = list(runs), options.baseline, options.test
    if test != 'bootstrap' and 0 < options.n_samples < FEW_SAMPLES:
        # the jackknife test and interval (FD's, CFD's) do not use the resamples; the normal test and the percentile
        # interval (the test='normal' choice, and the measures whose paired test is not the jackknife) do
        on_resamples = [str(m) for m in measures if test == 'normal' or resampling(m).paired_test not in LEAVE_OUT_TESTS]
        if on_resamples:
            warnings.warn(f'n_samples={options.n_samples}: the normal test and percentile interval of '
                          f'{", ".join(on_resamples[:3])}{" …" if len(on_resamples) > 3 else ""} estimate the spread of '
                          f'the differences from the resamples; fewer than {FEW_SAMPLES} make them move with the '
                          'seed', stacklevel=3)
    population, ci, alpha, n_permutations, seed = (options.population, options.ci, options.alpha,
                                                   options.n_permutations, options.seed)
    if len(names) < 2:
        raise ValueError(f'comparisons need at least 2 systems, got {len(names)}')
    if any(resampling(m).paired_test not in LEAVE_OUT_TESTS for m in measures):
        # a percentile interval of the resampled differences: enough resamples for its tails
        check_tail_samples(options.n_samples if boot is None else boot.n_samples, ci)
    pairs = ([(baseline, n) for n in names if n != baseline] if baseline is not None
             else [(a, b) for i, a in enumerate(names) for b in names[i + 1:]])
    if boot is None:
        # the measures' own interval methods: the comparisons read resamples and leave-outs, not printed intervals
        boot = bootstrap(runs, qrels, measures, options=dataclasses.replace(options, interval=None), verbose=verbose,
                         resample=resample_for(test))
    fpc = finite_population_correction(len(boot.queries), population)
    fpc_text = population_text(population, len(boot.queries))
    values = point_values(boot)
    frames = []
    for m in measures:
        col = column_label(m)
        rows = []
        for a, b in pairs:
            pair = paired(boot, col, a, b, fpc, values)
            if pair.leave_outs is not None:
                # FD's (and CFD's) difference: the jackknife interval for E[ΔFD̂ₙ] (covered in every world of
                # independent queries of pt_docs "Calibration"; where queries share topics only with query_groups=;
                # the population ΔFD is not, at d = 384); a per-query mean's: the paired t
                # interval for the population mean difference (its jackknife standard error is s/√n exactly)
                method = 'jackknife' if pair.own == 'jackknife' else 'paired t'
                if boot.query_groups is not None:
                    method = f'{method} ({cluster_note(int(pair.df) + 1)})'
                low, high = interval('jackknife', pair.diff, pair.diffs, ci, jackknife=pair.leave_outs, fpc=fpc,
                                     df=pair.df)
            else:
                method = 'percentile'
                low, high = interval(method, pair.diff, pair.diffs, ci, fpc=fpc)
            used = pair.p(test)[1]
            rows.append({'measure': col, 'a': a, 'b': b, 'value_a': float(values[a, col]), 'value_b': float(values[b, col]),
                         'diff': pair.diff, 'ci_low': low, 'ci_high': high,
                         'interval': f'{method} ({fpc_text})' if fpc_text else method,
                         'p_bootstrap': pair.p_bootstrap, 'p_normal': pair.p_normal,
                         'p_jackknife': pair.p_own if pair.own == 'jackknife' else float('nan'),
                         'p_t': pair.p_own if pair.own == 't' else float('nan'), 'test': used})
        frame = pd.DataFrame(rows)
        frame['p_holm'] = holm([row[f'p_{row.test}'] for _, row in frame.iterrows()])
        tests = ['p_holm']
        if n_permutations > 0 and randomised(m):
            frame['p_randomisation'] = [
                _randomisation_p(m, _pair_stats(runs[a], runs[b], qrels, m), d, n_permutations, seed)
                for a, b, d in pt.tqdm(list(zip(frame['a'], frame['b'], frame['diff'])), desc=f'randomisation {col}',
                                       unit='pair', disable=not verbose)]
            frame['p_randomisation_holm'] = holm(frame['p_randomisation'])
            tests.append('p_randomisation_holm')
        sign = 1.0 if higher_is_better(m) else -1.0
        significant = (frame[tests] < alpha).all(axis=1)
        frame['better'] = np.where(significant, np.where(sign * frame['diff'] > 0, frame['a'], frame['b']), '')
        frames.append(frame)
    return pd.concat(frames, ignore_index=True)
