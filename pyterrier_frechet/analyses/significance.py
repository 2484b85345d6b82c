"""Is system A's FD different from system B's on the same queries? Paired tests over queries.

FD is one number per query set, so pt.Experiment's per-query paired tests do not apply (see the README).
Two tests that do, both seeded and built on the per-query statistics of :mod:`pyterrier_frechet.analyses.bootstrap`:

- **paired bootstrap**: resample queries (the same draws for A and B), recompute FD_A − FD_B per sample for a
  two-sided bootstrap p-value (:func:`bootstrap_p`); the CI of the difference is the jackknife interval over the
  queries with relevant documents, which covers the population ΔFD where the percentile interval does not
  (README "Calibration").
- **randomisation test**: under the null hypothesis that A and B are exchangeable, swapping the two
  systems' retrieved sets for any subset of queries leaves the distribution of FD_A − FD_B unchanged.
  Each permutation swaps every query with probability ½; p = (1 + #{|Δ_perm| ≥ |Δ_obs|}) / (1 + n).

:func:`compare_systems` runs the paired bootstrap for every pair of many systems (or each against a baseline)
from one bootstrap, for FD, DO, HSA and per-query measures alike, with Holm's correction per measure.
"""
import warnings
from typing import Dict, NamedTuple, Optional

import numpy as np
import pandas as pd
import pyterrier as pt

from ..core.weighted import QueryStats, per_query_weighted
from ..evaluation.evaluate import parse_measures
from ..evaluation.frames import DOCNO, QID, to_ir_measures
from ..evaluation.vector_sets import fd_sets
from ..measures.base import GAUSSIAN, VECTOR_PATHS, bootstrap_path, column_label, higher_is_better
from ..vectors.sources import using_encoder
from ..core.intervals import interval
from .bootstrap import _jackknife_weights, _vectors_of, bootstrap, draw_counts, query_stats, weighted_fds


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
    rel: QueryStats
    ret_a: QueryStats
    ret_b: QueryStats
    shift: np.ndarray
    queries: list


def _pair_stats(run_a: pd.DataFrame, run_b: pd.DataFrame, qrels: pd.DataFrame, measure) -> _PairStats:
    if bootstrap_path(measure) != GAUSSIAN:
        raise ValueError(f'{measure}: the paired FD tests need a measure with the Gaussian fast path (FD without jackknife)')
    qrels_ir = to_ir_measures(qrels)
    runs = [to_ir_measures(r) for r in (run_a, run_b)]
    queries = sorted(qrels_ir[QID].unique())
    sets = [fd_sets(measure, qrels_ir, r) for r in runs]
    vec_cache: dict = {}
    vec_of = {}
    for s in sets:
        vec_of.update(_vectors_of(measure, s, vec_cache))
    rel_vecs = [vec_of[d] for d in sets[0].relevant[DOCNO] if d in vec_of]
    shift = np.mean(rel_vecs, axis=0)
    rel = query_stats(sets[0].relevant, vec_of, queries, shift)
    ret_a, ret_b = (query_stats(s.retrieved, vec_of, queries, shift) for s in sets)
    if measure.query_weighted():
        rel, ret_a, ret_b = (per_query_weighted(x) for x in (rel, ret_a, ret_b))
    return _PairStats(rel, ret_a, ret_b, shift, queries)


def _randomisation_p(ps: _PairStats, diff: float, n_permutations: int, seed: int) -> float:
    """Two-sided randomisation p-value of the observed FD_A − FD_B: swap the systems' retrieved sets per query."""
    swap = np.random.default_rng(seed + 1).integers(0, 2, size=(n_permutations, len(ps.queries))).astype(np.float64)
    keep = 1.0 - swap
    full = np.ones_like(swap)
    parts = [ps.ret_a, ps.ret_b]
    perm = (weighted_fds(ps.rel, full, parts, [keep, swap], ps.shift) - weighted_fds(ps.rel, full, parts, [swap, keep], ps.shift))
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


#: Fewer resamples than this draw a warning: the p-values and interval ends still move with the seed.
FEW_SAMPLES = 1000


def n_comparisons(n_systems: int, with_baseline: bool) -> int:
    """How many pairs :func:`compare_systems` tests per measure: each run against the baseline, or every pair."""
    return n_systems - 1 if with_baseline else n_systems * (n_systems - 1) // 2


def check_test_resolution(n_samples: int, alpha: float, n_permutations: int = 0, n_comparisons: int = 1) -> None:
    """Refuse resample counts whose smallest attainable p-value cannot pass Holm's first step, α/m for m
    comparisons (no difference could ever be called: compare over all 171 pairs of 19 runs with 1000 samples
    reported "nothing significant" by construction, 171 · 2/1001 = 0.34); warn below :data:`FEW_SAMPLES`.
    Called before any work by :func:`compare_systems` and the report."""
    if not 0 < alpha <= 1:
        raise ValueError(f'alpha must be in (0, 1], got {alpha}')
    level = alpha / max(int(n_comparisons), 1)
    what = f'alpha={alpha}' if n_comparisons <= 1 else f'alpha/m = {alpha}/{n_comparisons} = {level:.3g} (Holm, {n_comparisons} comparisons)'
    fewer = '' if n_comparisons <= 1 else '; or compare fewer pairs (--baseline NAME: each run against one)'
    floor = 2 / (n_samples + 1)
    if floor >= level:
        raise ValueError(f'n_samples={n_samples} (--samples): the smallest bootstrap p-value it can give is '
                         f'2/(B+1) = {floor:.3g}, not below {what}; use at least {int(np.ceil(2 / level))} '
                         f'samples{fewer}')
    if n_permutations and 1 / (n_permutations + 1) >= level:
        raise ValueError(f'n_permutations={n_permutations} (--permutations): the smallest randomisation p-value it can '
                         f'give is 1/(P+1) = {1 / (n_permutations + 1):.3g}, not below {what}; use at least '
                         f'{int(np.ceil(1 / level))} permutations{fewer}')
    few = [f'{name}={n}' for name, n in (('n_samples', n_samples), ('n_permutations', n_permutations))
           if 0 < n < FEW_SAMPLES]
    if few:
        warnings.warn(f'{", ".join(few)}: p-values from fewer than {FEW_SAMPLES} resamples are coarse '
                      f'(steps of 2/(B+1)) and move with the seed', stacklevel=3)


def paired_test(run_a: pd.DataFrame, run_b: pd.DataFrame, qrels: pd.DataFrame, measure, n_samples: int = 1000,
                n_permutations: int = 1000, seed: int = 0, ci: float = 0.95) -> PairedResult:
    """Paired bootstrap and randomisation test of FD_A − FD_B for one FD measure on the same queries.

    Vectors come from the measure's encoder (or the default one), with its ``missing=`` policy.
    """
    ps = _pair_stats(run_a, run_b, qrels, measure)
    rel, ret_a, ret_b, shift, queries = ps
    ones = np.ones((1, len(queries)))
    zeros = np.zeros((1, len(queries)))
    fd_a = float(weighted_fds(rel, ones, [ret_a, ret_b], [ones, zeros], shift)[0])
    fd_b = float(weighted_fds(rel, ones, [ret_a, ret_b], [zeros, ones], shift)[0])
    diff = fd_a - fd_b

    counts = draw_counts(len(queries), n_samples, seed).astype(np.float64)
    boot = (weighted_fds(rel, counts, [ret_a, ret_b], [counts, np.zeros_like(counts)], shift)
            - weighted_fds(rel, counts, [ret_a, ret_b], [np.zeros_like(counts), counts], shift))
    boot = boot[np.isfinite(boot)]
    # the CI: the jackknife interval of ΔFD over the queries with relevant documents (measured coverage, README)
    weights = _jackknife_weights(rel.n > 0)
    none = np.zeros_like(weights)
    jack = (weighted_fds(rel, weights, [ret_a, ret_b], [weights, none], shift)
            - weighted_fds(rel, weights, [ret_a, ret_b], [none, weights], shift))
    low, high = interval('jackknife', diff, boot, ci, jackknife=jack)
    p_rand = _randomisation_p(ps, diff, n_permutations, seed)
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


def compare_systems(runs: Dict[str, pd.DataFrame], qrels: pd.DataFrame, measures, baseline: Optional[str] = None,
                    n_samples: int = 1000, seed: int = 0, ci: float = 0.95, alpha: float = 0.05,
                    n_permutations: int = 0, verbose: bool = True, boot=None, encoder=None) -> pd.DataFrame:
    """Paired comparisons of many systems, every pair (or each against ``baseline``), per measure, with Holm's
    correction over the comparisons of each measure.

    One :func:`~pyterrier_frechet.bootstrap` serves every pair: its samples use the same query draws for every
    system, so ``samples[a] − samples[b]`` is the paired bootstrap of the difference (for FD, DO, HSA and any
    per-query measure). With ``n_permutations > 0``, FD pairs also get the randomisation test of
    :func:`paired_test` (one pass per pair; slower).

    Returns one row per (measure, a, b): values, difference a − b with its CI (``interval``: ``jackknife`` for FD —
    the percentile interval of ΔFD under-covers at 43 queries, README "Calibration" — else ``percentile``), ``p_bootstrap``,
    ``p_holm``, optionally ``p_randomisation`` and ``p_randomisation_holm``, and ``better``: the better system
    (orientation-aware) where the Holm-adjusted p is below ``alpha``, else empty. ``boot``: a
    :class:`~pyterrier_frechet.analyses.bootstrap.BootstrapResult` of these runs and measures to reuse (it sets the
    samples). ``encoder``: the vector source of vector measures that name none.
    """
    if boot is not None:  # its samples set B
        n_samples = len(next(iter(next(iter(boot.samples.values())).values())))
    check_test_resolution(n_samples, alpha, n_permutations, n_comparisons(len(runs), baseline is not None))
    with using_encoder(encoder):
        return _compare(runs, qrels, measures, baseline, n_samples, seed, ci, alpha, n_permutations, verbose, boot)


def _compare(runs, qrels, measures, baseline, n_samples, seed, ci, alpha, n_permutations, verbose, boot) -> pd.DataFrame:
    measures = parse_measures(measures)
    names = list(runs)
    if baseline is not None and baseline not in runs:
        raise ValueError(f'baseline {baseline!r} is not among the systems {names[:10]}')
    if len(names) < 2:
        raise ValueError(f'comparisons need at least 2 systems, got {len(names)}')
    pairs = ([(baseline, n) for n in names if n != baseline] if baseline is not None
             else [(a, b) for i, a in enumerate(names) for b in names[i + 1:]])
    if boot is None:
        boot = bootstrap(runs, qrels, measures, n_samples=n_samples, seed=seed, ci=ci, verbose=verbose)
    values = boot.summary.set_index(['name', 'measure'])['value']
    frames = []
    for m in measures:
        col = column_label(m)
        rows = []
        jack = boot.jackknife or {}
        for a, b in pairs:
            diffs = boot.samples[a][col] - boot.samples[b][col]
            diff = float(values[a, col] - values[b, col])
            if bootstrap_path(m) in VECTOR_PATHS and col in jack.get(a, {}) and col in jack.get(b, {}):
                # FD's (and CFD's) difference: the jackknife interval, which covers the population ΔFD at 43 and 200 queries (the
                # percentile interval does not at 43: README "Calibration")
                method = 'jackknife'
                low, high = interval(method, diff, diffs, ci, jackknife=jack[a][col] - jack[b][col])
            else:
                method = 'percentile'
                low, high = interval(method, diff, diffs, ci)
            rows.append({'measure': col, 'a': a, 'b': b, 'value_a': float(values[a, col]), 'value_b': float(values[b, col]),
                         'diff': diff, 'ci_low': low, 'ci_high': high, 'interval': method,
                         'p_bootstrap': bootstrap_p(diffs)})
        frame = pd.DataFrame(rows)
        frame['p_holm'] = holm(frame['p_bootstrap'])
        tests = ['p_holm']
        if n_permutations > 0 and bootstrap_path(m) == GAUSSIAN:
            frame['p_randomisation'] = [
                _randomisation_p(_pair_stats(runs[a], runs[b], qrels, m), d, n_permutations, seed)
                for a, b, d in pt.tqdm(list(zip(frame['a'], frame['b'], frame['diff'])), desc=f'randomisation {col}',
                                       unit='pair', disable=not verbose)]
            frame['p_randomisation_holm'] = holm(frame['p_randomisation'])
            tests.append('p_randomisation_holm')
        sign = 1.0 if higher_is_better(m) else -1.0
        significant = (frame[tests] < alpha).all(axis=1)
        frame['better'] = np.where(significant, np.where(sign * frame['diff'] > 0, frame['a'], frame['b']), '')
        frames.append(frame)
    return pd.concat(frames, ignore_index=True)
