"""Coverage of every interval and level/power of every test the package prints, in worlds it did not design.

The worlds come from :mod:`benchmarks.worlds` (built separately, without the package's statistics in view): independent
queries, queries that share topics, heavy-tailed / clustered embeddings, and Cranfield with real MiniLM vectors and
real runs as a finite population; and the one-off checks' worlds (``STUDY_WORLDS``: no population quantities, so only
their E[FD̂ₙ] / E[mean nDCG] rows are scored). For each (world, d, n queries) this script

1. draws ``--reference`` independent query sets of n queries and takes the mean FD̂ of each system: the estimand
   **E[FD̂ₙ]**, the expected FD over query sets of this size drawn from this population (and E[ΔFD̂ₙ] for pairs);
   the **population FD** comes from the world's pooled population moments (closed form, or the whole finite
   population); the population mean nDCG@k likewise;
2. draws ``--trials`` further query sets and computes on each, with the package's own code (the weighted
   statistics of :mod:`pyterrier_frechet.core.weighted`, the leave-one-query-out values the package computes, the
   intervals of :mod:`pyterrier_frechet.core.intervals`, the p-values of :mod:`pyterrier_frechet.analyses.significance`):
   FD̂ and every interval method, ΔFD̂ for each compared pair, the paired tests (jackknife, bootstrap,
   randomisation), mean nDCG@k with its bootstrap interval and paired t-test (pt.Experiment's), Kendall τ between FD
   and nDCG over the systems with its percentile interval;
3. prints coverage (share of trials whose interval holds the estimand), mean width, and rejection rates, and writes
   ``OUT.coverage.csv``, ``OUT.tests.csv``, ``OUT.context.csv`` and ``OUT.trials.csv.gz`` (every trial's estimate and
   interval with the truth it was scored against: re-score against another truth without re-running).

Run (one configuration; the docs' table is the concatenation of such runs, the commands are in
benchmarks/results/calibration-worlds/README.md)::

    python -m benchmarks.calibrate_worlds --world independent --dim 128 --queries 43 --trials 200 --reference 300 \
        --samples 200 --out results/independent-128-43.csv
"""
import argparse
import logging
import math
import sys
import time
from types import SimpleNamespace
from itertools import combinations
from typing import Dict, List, Optional

import numpy as np
import pandas as pd
import scipy.stats

from pyterrier_frechet.analyses.correlation import kendall_tau_b, rank_correlation_interval, tau_ap
from pyterrier_frechet.analyses.significance import bootstrap_p, jackknife_p
from pyterrier_frechet.core.frechet import GaussianStats, frechet_distance_from_stats
from pyterrier_frechet.core.intervals import interval
from pyterrier_frechet.core.linearised import anchored_resamples, linearised_resamples
from pyterrier_frechet.core.weighted import QueryStats, per_query_weighted, weighted_fds
from pyterrier_frechet.measures.resampling import PER_QUERY

from benchmarks.rescore import TRIAL_COLUMNS, rescore

logger = logging.getLogger(__name__)

FD_METHODS = ('jackknife', 'jackknife_log', 'jackknife_bc', 'percentile', 'shifted', 'basic')
#: the τ and τ_AP intervals scored: the package's (percentile) and the basic bootstrap interval on the same samples
TAU_METHODS = ('percentile', 'basic')


def _has_method(name: str) -> bool:
    from pyterrier_frechet.core.intervals import METHODS
    return name in METHODS


# ---------------------------------------------------------------------------------------------------- one query set
#: ``fd-per-query5``: FD(per_query=5) — at most 5 relevant documents per query, drawn by the package's own rule
#: (:func:`pyterrier_frechet.evaluation.qrels.balance_qrels`: highest grade first, random within a grade); one draw
#: per query set, its seed from the caller's generator, so E[FD̂ₙ] averages over the draw as well as the set.
PER_QUERY_CAP = {'fd-per-query5': 5}
#: FD's two terms (FD(term='mean'), FD(term='cov')): the mean term from the weighted sums, the covariance term FD less it
TERM_OF = {'fd-mean': 'mean', 'fd-cov': 'cov'}
STATISTICS = ('fd', 'fd-query') + tuple(PER_QUERY_CAP) + tuple(TERM_OF)


def balanced_rows(sample, per_query: int, seed: int) -> np.ndarray:
    """Indices of the relevant rows ``balance_qrels(qrels, per_query, seed=seed)`` keeps for this query set."""
    from pyterrier_frechet.evaluation.qrels import balance_qrels
    rows = len(sample.relevant_qid)
    width = len(str(rows))
    qrels = pd.DataFrame({'qid': np.asarray(sample.relevant_qid).astype(str),
                          'docno': [str(i).zfill(width) for i in range(rows)],
                          'label': np.asarray(sample.relevant_label, dtype=np.int64)})
    kept = balance_qrels(qrels, per_query, rel=int(qrels['label'].min()), seed=seed)
    return np.sort(kept['docno'].astype(int).to_numpy())


def set_stats(sample, statistic: str, balance_seed: int = 0):
    """QueryStats of the relevant side and of every system's retrieved side, and the shift (``balance_seed``: the
    seed of the relevant documents' draw for the ``PER_QUERY_CAP`` statistics)."""
    index = {q: i for i, q in enumerate(sample.qids)}
    n = len(sample.qids)
    relevant, relevant_qid = sample.relevant, sample.relevant_qid
    if statistic in PER_QUERY_CAP:
        keep = balanced_rows(sample, PER_QUERY_CAP[statistic], balance_seed)
        relevant, relevant_qid = relevant[keep], np.asarray(relevant_qid)[keep]
    shift = np.asarray(relevant, dtype=np.float64).mean(axis=0)
    rel = QueryStats(np.array([index[q] for q in relevant_qid]), relevant, n, shift)
    rets = {}
    for system, (vecs, qids, _rank) in sample.retrieved.items():
        rets[system] = QueryStats(np.array([index[q] for q in qids]), vecs, n, shift)
    if statistic == 'fd-query':
        rel = per_query_weighted(rel)
        rets = {s: per_query_weighted(r) for s, r in rets.items()}
    return rel, rets, shift


def set_fd(rel, ret, weights, shift, statistic: str = 'fd'):
    fd = weighted_fds(rel, weights, [ret], [weights], shift) if TERM_OF.get(statistic) != 'mean' else None
    if statistic not in TERM_OF:
        return fd
    from pyterrier_frechet.core.weighted import mean_terms
    mean = mean_terms(rel, weights, [ret], [weights])
    return mean if fd is None else fd - mean


def leave_one_out(rel, ret, shift, n: int, seed: int = 0, jackknife='auto', statistic: str = 'fd') -> np.ndarray:
    """FD with each query (or each group of queries) left out, as the package's bootstrap computes it for its
    jackknife: the plan of :func:`~pyterrier_frechet.core.weighted.jackknife_plan` (``'auto'``: every query
    alone up to 500 queries, 200 seeded groups above), the grouping of the same seed for every system (paired
    leave-out values), the totals minus each group's statistics (:func:`~pyterrier_frechet.core.weighted.leave_out_fds`)."""
    from pyterrier_frechet.core.weighted import jackknife_plan
    plan = jackknife_plan(jackknife, n, seed)
    if TERM_OF.get(statistic) == 'mean':  # no FD needed: the groups alone
        groups, n_groups = plan.assign(np.ones(n, dtype=bool))
        values = None
    else:
        values, groups, n_groups = _planned_leave_outs(plan, rel, ret, shift, n)
    if statistic not in TERM_OF:
        return values
    from pyterrier_frechet.core.weighted import mean_terms
    from pyterrier_frechet.measures.resampling import leave_out_weights
    w = leave_out_weights(np.ones(n, dtype=bool), groups, n_groups)
    mean = mean_terms(rel, w, [ret], [w])
    return mean if TERM_OF[statistic] == 'mean' else values - mean


def _planned_leave_outs(plan, rel, ret, shift, n: int):
    """FD with each of ``plan``'s groups of the n queries left out (totals minus the group's statistics,
    :func:`~pyterrier_frechet.core.weighted.leave_out_fds`) and the plan's groups."""
    from pyterrier_frechet.core.weighted import leave_out_fds
    units = np.ones(n, dtype=bool)
    groups, n_groups = plan.assign(units)
    return leave_out_fds(rel, ret, units, groups, n_groups, shift), groups, n_groups


def topic_clusters(qids) -> np.ndarray:
    """The query groups a user of the ``topics`` world would name: the topic of each query (qid ``t{topic}_q{i}``),
    as integer codes; in the other worlds each query is its own group."""
    labels = [q.split('_q', 1)[0] if q.startswith('t') and '_q' in q else q for q in qids]
    return pd.factorize(pd.Index(labels))[0].astype(np.int64)


def auto_clusters(sample, size: int = 5, seed: int = 0) -> np.ndarray:
    """Query groups found from the qrels alone, as ``--query-groups auto`` / ``pf.topic_groups`` finds them: the
    package's :func:`~pyterrier_frechet.analyses.topic_groups.cluster_centroids` of the queries' relevant centroids
    (every relevant document of the drawn set), as integer codes in the order of ``sample.qids``."""
    from pyterrier_frechet.analyses.topic_groups import cluster_centroids
    rel_q = np.asarray(sample.relevant_qid)
    rel = np.asarray(sample.relevant, dtype=np.float64)
    return cluster_centroids(np.stack([rel[rel_q == q].mean(0) for q in sample.qids]), size, seed)


def cluster_leave_outs(rel, ret, shift, clusters: np.ndarray) -> np.ndarray:
    """FD with each query group left out (the package's cluster jackknife plan); its intervals and tests take t on
    G − 1 degrees of freedom over the G finite leave-outs (``jackknife_df``, their default)."""
    from pyterrier_frechet.core.weighted import jackknife_plan
    plan = jackknife_plan('auto', len(clusters), 0, clusters)
    values, _groups, n_groups = _planned_leave_outs(plan, rel, ret, shift, len(clusters))
    return values


def ndcg_per_query(sample, system: str, k: int) -> np.ndarray:
    """nDCG@k per drawn query (linear gain, log2(rank + 1) discount, trec_eval's), from the world's labels."""
    _vecs, qids, ranks = sample.retrieved[system]
    labels = np.asarray(sample.retrieved_relevant[system], dtype=np.float64)
    discount = 1.0 / np.log2(np.arange(2, k + 2))
    out = np.zeros(len(sample.qids))
    rel_labels = pd.Series(np.asarray(sample.relevant_label, dtype=np.float64)).groupby(np.asarray(sample.relevant_qid))
    ideal = {q: np.sort(v.to_numpy())[::-1][:k] for q, v in rel_labels}
    frame = pd.DataFrame({'q': np.asarray(qids), 'r': np.asarray(ranks, dtype=int), 'l': labels})
    by_q = {q: g for q, g in frame.groupby('q')}
    for i, q in enumerate(sample.qids):
        best = ideal.get(q)
        if best is None or best.sum() == 0:
            continue
        idcg = float(best @ discount[:len(best)])
        g = by_q.get(q)
        dcg = 0.0 if g is None else float(np.sum(g['l'].to_numpy() * discount[np.clip(g['r'].to_numpy(), 1, k) - 1]))
        out[i] = dcg / idcg
    return out


def _draw_counts(rng, n_samples: int, n: int) -> np.ndarray:
    counts = np.zeros((n_samples, n))
    np.add.at(counts, (np.arange(n_samples)[:, None], rng.integers(0, n, size=(n_samples, n))), 1)
    return counts


# ---------------------------------------------------------------------------------------------------- truths
def population_values(world, statistic: str) -> Dict[str, float]:
    """Population FD per system from the world's pooled moments (document-pooled; for fd-query the same moments)."""
    pop = world.population()
    rel = GaussianStats(np.asarray(pop.relevant_mean, dtype=np.float64), np.asarray(pop.relevant_cov, dtype=np.float64), 0)
    return {s: float(frechet_distance_from_stats(rel, GaussianStats(np.asarray(pop.retrieved_mean[s], dtype=np.float64),
                                                                    np.asarray(pop.retrieved_cov[s], dtype=np.float64), 0)))
            for s in world.systems}


def reference(world, n: int, n_reference: int, seed: int, statistic: str) -> pd.DataFrame:
    """FD̂ and mean nDCG@k of every system on ``n_reference`` independent query sets of ``n`` queries."""
    rng = np.random.default_rng([seed, n, 11])
    balance = np.random.default_rng([seed, n, 13])
    rows = []
    for r in range(n_reference):
        sample = world.draw(n, rng)
        rel, rets, shift = set_stats(sample, statistic, int(balance.integers(2 ** 31)))
        ones = np.ones((1, n))
        for s in world.systems:
            rows.append({'draw': r, 'system': s, 'fd': float(set_fd(rel, rets[s], ones, shift, statistic)[0]),
                         'ndcg': float(ndcg_per_query(sample, s, world.k).mean())})
    return pd.DataFrame(rows)


def recorded_truths(prefix: str):
    """The truths a recorded run of a setting used, from its CSVs (``PREFIX.coverage.csv``, ``PREFIX.context.csv``):
    E[FD̂ₙ] per system, E[ΔFD̂ₙ] per pair, τ(E[FD̂ₙ], nDCG), the sd of FD̂ₙ and τ_AP(E[FD̂ₙ], nDCG) (NaN for a run
    recorded before it was). With them (``--truths PREFIX``) a run re-scores the same trials (their draws do not
    depend on the reference sets) against the recorded truths, without drawing the reference sets again: the way to
    add an interval's column to a setting whose reference count was not recorded; its recorded columns must come out
    unchanged (the check that the trials are the same)."""
    from benchmarks.calibration_table import read_results
    cov = read_results(f'{prefix}.coverage.csv')
    context = read_results(f'{prefix}.context.csv', index_col=0)
    e_fd = cov[cov.estimand == 'E[FD_n]'].groupby('who')['truth'].first()
    e_delta = cov[cov.estimand == 'E[ΔFD_n]'].groupby('who')['truth'].first()
    tau = cov[cov.estimand == 'τ of E[FD_n] and mean nDCG']['truth']
    tau_ap_ = cov[cov.estimand == 'τ_AP of E[FD_n] and mean nDCG']['truth']
    return (e_fd, e_delta, float(tau.iloc[0]) if len(tau) else float('nan'), context['sd FD_n'],
            float(tau_ap_.iloc[0]) if len(tau_ap_) else float('nan'))


# ---------------------------------------------------------------------------------------------------- trials
def compared_pairs(world) -> List[tuple]:
    """The pairs whose differences are tested: every equal-in-law pair (level) and every other pair (power)."""
    equal = {tuple(sorted(p)) for p in world.equal_pairs}
    pairs = [(a, b, tuple(sorted((a, b))) in equal) for a, b in combinations(world.systems, 2)]
    return pairs


def run(world, n: int, n_trials: int, n_reference: int, n_samples: int, n_permutations: int, seed: int,
        statistic: str = 'fd', ci: float = 0.95, alpha: float = 0.05, verbose: bool = True, jackknife='auto',
        checkpoint=None, query_groups=False, truths=None, fd_resamples: bool = True, exact_draws: int = 0):
    """Coverage, tests, context and trials frames; ``checkpoint(cov, tests, context, trials)`` is called after every
    trial with the frames over the trials done so far (so a run stopped early keeps what it measured, with its trial
    count). The trials frame holds every trial's interval (trial, statistic, method, estimand, who, estimate, low,
    high, truth), so coverage can be scored again against another truth without re-running; ``estimate`` is the
    statistic on the trial's set (FD̂, ΔFD̂, mean nDCG, τ̂), not the centre of the bias-corrected or basic intervals.
    ``query_groups``: also the cluster jackknife over the world's topics (:func:`topic_clusters`; the package's
    ``query_groups=``), its intervals and tests recorded as methods ``… groups`` on the same trials; ``'auto'``: over
    groups found from each trial's qrels instead (:func:`auto_clusters`, exploratory). ``truths``: a recorded run's
    (:func:`recorded_truths`) in place of ``n_reference`` new reference sets. ``fd_resamples=False``: FD is not
    computed on the ``n_samples`` resamples (their draws are still made, so the trials are the same); the methods that
    read FD's resamples are left out and τ's interval is the linearised one only (FD's resamples from its leave-outs,
    :func:`linearised_resamples`: a route studied and not offered, pt_docs "Calibration"). ``exact_draws`` K > 0 (with
    ``fd_resamples=False``): FD computed on the first K resamples only, and τ's interval also from the linearised
    resamples anchored on those (:func:`~pyterrier_frechet.core.linearised.anchored_resamples`, method
    ``anchored K``: the route of ``bootstrap(..., resample='needed')``)."""
    systems = list(world.systems)
    pairs = compared_pairs(world)
    if truths is None:
        ref = reference(world, n, n_reference, seed, statistic)
        e_fd = ref.groupby('system')['fd'].mean()
        e_ndcg = ref.groupby('system')['ndcg'].mean()
        sd_fd = ref.groupby('system')['fd'].std(ddof=1)
        wide = ref.pivot(index='draw', columns='system', values='fd')
        e_delta = {(a, b): float((wide[a] - wide[b]).mean()) for a, b, _ in pairs}
        tau_n = kendall_tau_b(-e_fd[systems].to_numpy(), e_ndcg[systems].to_numpy())
        tau_ap_n = tau_ap(-e_fd[systems].to_numpy(), e_ndcg[systems].to_numpy())
    else:
        e_fd, recorded_delta, tau_n, sd_fd, tau_ap_n = truths
        e_delta = {(a, b): float(recorded_delta[f'{a}-{b}']) for a, b, _ in pairs}
    # population values from the world's pooled moments (closed form, Monte Carlo, or exact over a finite population)
    # (a study world has none: its population rows are left out, as a truth that is not finite is)
    has_population = getattr(world, 'has_population', True)
    pop_fd = population_values(world, statistic) if statistic == 'fd' and has_population else {}
    pop_ndcg = dict(world.population().per_query_metric_mean) if has_population else dict.fromkeys(systems, np.nan)
    tau_pop = (kendall_tau_b(-np.array([pop_fd[s] for s in systems]), np.array([pop_ndcg[s] for s in systems]))
               if pop_fd else np.nan)
    # τ's estimand with the nDCG side exact: E[mean nDCG@kₙ] is the population mean (exact over a finite population,
    # Monte Carlo with its SE in the synthetic worlds) — not the mean over the reference sets, whose Monte Carlo error
    # moved the 19-run world's τ truth from 0.380 to 0.392 (stop 45)
    pop_ndcg_vector = np.array([pop_ndcg[s] for s in systems])
    tau_exact_ndcg = kendall_tau_b(-e_fd[systems].to_numpy(), pop_ndcg_vector) if has_population else np.nan
    tau_ap_exact_ndcg = tau_ap(-e_fd[systems].to_numpy(), pop_ndcg_vector) if has_population else np.nan
    rng = np.random.default_rng([seed, n, 12])
    balance = np.random.default_rng([seed, n, 14])   # the trials' own draws of balanced qrels (fd-per-query5)
    # a finite population (the real-data worlds): the same intervals and test with the finite-population correction
    # 1 − n/N (the package's population= / --population N), beside the uncorrected ones
    from pyterrier_frechet.core.intervals import finite_population_correction
    fpc = finite_population_correction(n, world.max_queries) if world.max_queries else None
    reject: Dict[tuple, list] = {}
    # every trial's interval with the truth it is scored against: the trials file, and the coverage table's source
    intervals: List[dict] = []
    trial = [0]

    def record(key, low, high, truth, estimate=np.nan):
        if not np.isfinite(truth):   # no truth to score against (τ_AP of a run recorded before it was): no row
            return
        intervals.append({'trial': trial[0], 'statistic': key[0], 'method': key[1], 'estimand': key[2], 'who': key[3],
                          'estimate': float(estimate), 'low': float(low), 'high': float(high), 'truth': float(truth)})

    def results(done: int):
        """The four frames over the first ``done`` trials; the coverage rows are :func:`~benchmarks.rescore.rescore`
        of the trials frame (one computation for the table and for re-scoring)."""
        trials = pd.DataFrame(intervals, columns=TRIAL_COLUMNS)
        scored = rescore(trials)
        coverage = pd.DataFrame({'world': world.name, 'd': world.d, 'n_queries': n, 'statistic': scored['statistic'],
                                 'method': scored['method'], 'estimand': scored['estimand'], 'who': scored['who'],
                                 'truth': scored['recorded_truth'], 'coverage': scored['coverage'],
                                 'undefined': (scored['trials'] - scored['defined']) / scored['trials'],
                                 'width': scored['width'], 'trials': done})
        tests = []
        for (stat, test, kind, who), r in reject.items():
            tests.append({'world': world.name, 'd': world.d, 'n_queries': n, 'statistic': stat, 'test': test,
                          'hypothesis': kind, 'pair': who, 'rejection_rate': float(np.mean(r)), 'trials': done,
                          'relative_difference': (abs(e_delta[tuple(who.split('-', 1))]) / np.mean([e_fd[x] for x in who.split('-', 1)])
                                                  if stat == 'FD' else np.nan)})
        context = pd.DataFrame({'E[FD_n]': e_fd, 'sd FD_n': sd_fd, 'population FD': pd.Series(pop_fd),
                                'mean nDCG': pd.Series(pop_ndcg)})
        return coverage, pd.DataFrame(tests), context, trials

    t0 = time.time()
    for t in range(n_trials):
        trial[0] = t
        sample = world.draw(n, rng)
        rel, rets, shift = set_stats(sample, statistic, int(balance.integers(2 ** 31)))
        ones = np.ones((1, n))
        counts = _draw_counts(rng, n_samples, n) if n_samples else None
        est = {s: float(set_fd(rel, rets[s], ones, shift, statistic)[0]) for s in systems}
        loo = {s: leave_one_out(rel, rets[s], shift, n, seed, jackknife, statistic) for s in systems}
        if query_groups:
            clusters = (auto_clusters(sample, seed=seed * 100003 + t) if query_groups == 'auto'
                        else topic_clusters(sample.qids))
            gloo = {s: cluster_leave_outs(rel, rets[s], shift, clusters) for s in systems}
        boot = {s: set_fd(rel, rets[s], counts, shift, statistic) for s in systems} if n_samples and fd_resamples else {}
        exact = ({s: set_fd(rel, rets[s], counts[:exact_draws], shift, statistic) for s in systems}
                 if n_samples and exact_draws and not boot else {})
        ndcg = {s: ndcg_per_query(sample, s, world.k) for s in systems}
        for s in systems:
            for method in FD_METHODS:
                if method not in ('jackknife', 'jackknife_bc', 'jackknife_log') and not boot:
                    continue
                if method == 'jackknife_log' and not _has_method('jackknife_log'):
                    continue
                low, high = interval(method, est[s], boot.get(s, np.array([])), ci, jackknife=loo[s], df=math.inf)
                record(('FD', method, 'E[FD_n]', s), low, high, e_fd[s], est[s])
                if s in pop_fd:
                    record(('FD', method, 'population FD', s), low, high, pop_fd[s], est[s])
                if method in ('jackknife', 'jackknife_log'):   # the same on t(m − 1), m leave-outs (the default since stop 42)
                    low, high = interval(method, est[s], np.array([]), ci, jackknife=loo[s])
                    record(('FD', f'{method} t', 'E[FD_n]', s), low, high, e_fd[s], est[s])
                if query_groups and method in ('jackknife', 'jackknife_log'):
                    low, high = interval(method, est[s], np.array([]), ci, jackknife=gloo[s])
                    record(('FD', f'{method} groups', 'E[FD_n]', s), low, high, e_fd[s], est[s])
                if fpc is not None and method in ('jackknife', 'jackknife_log', 'shifted'):
                    low, high = interval(method, est[s], boot.get(s, np.array([])), ci, jackknife=loo[s], fpc=fpc, df=math.inf)
                    record(('FD', f'{method} fpc', 'E[FD_n]', s), low, high, e_fd[s], est[s])
            m = ndcg[s].mean()
            se = ndcg[s].std(ddof=1) / np.sqrt(n)
            tq = scipy.stats.t.ppf(1 - (1 - ci) / 2, n - 1)
            record(('nDCG', 't', 'population mean', s), m - tq * se, m + tq * se, pop_ndcg[s], m)
            if query_groups:   # the cluster jackknife of the mean (cluster-robust standard error), t on G − 1
                # the package's leave-outs of a per-query mean (its PER_QUERY resampling), one per topic
                jk = PER_QUERY.leave_out(None, SimpleNamespace(values=ndcg[s]), clusters, int(clusters.max()) + 1, None)
                low, high = interval('jackknife', m, np.array([]), ci, jackknife=jk)
                record(('nDCG', 't groups', 'population mean', s), low, high, pop_ndcg[s], m)
            if fpc is not None:
                record(('nDCG', 't fpc', 'population mean', s), m - tq * se * np.sqrt(fpc), m + tq * se * np.sqrt(fpc),
                       pop_ndcg[s], m)
            if n_samples:
                low, high = interval('percentile', m, counts @ ndcg[s] / n, ci)
                record(('nDCG', 'percentile', 'population mean', s), low, high, pop_ndcg[s], m)
                if fpc is not None:
                    low, high = interval('percentile', m, counts @ ndcg[s] / n, ci, fpc=fpc)
                    record(('nDCG', 'percentile fpc', 'population mean', s), low, high, pop_ndcg[s], m)
        for a, b, equal in pairs:
            kind = 'null' if equal else 'alternative'
            delta = est[a] - est[b]
            jd = loo[a] - loo[b]
            for method in ('jackknife', 'jackknife_bc'):
                low, high = interval(method, delta, np.array([]), ci, jackknife=jd, df=math.inf)
                record(('ΔFD', method, 'E[ΔFD_n]', f'{a}-{b}'), low, high, e_delta[a, b], delta)
                if pop_fd:
                    record(('ΔFD', method, 'population ΔFD', f'{a}-{b}'), low, high, pop_fd[a] - pop_fd[b], delta)
            low, high = interval('jackknife', delta, np.array([]), ci, jackknife=jd)
            record(('ΔFD', 'jackknife t', 'E[ΔFD_n]', f'{a}-{b}'), low, high, e_delta[a, b], delta)
            if fpc is not None:
                low, high = interval('jackknife', delta, np.array([]), ci, jackknife=jd, fpc=fpc, df=math.inf)
                record(('ΔFD', 'jackknife fpc', 'E[ΔFD_n]', f'{a}-{b}'), low, high, e_delta[a, b], delta)
                reject.setdefault(('FD', 'jackknife z fpc', kind, f'{a}-{b}'), []).append(
                    jackknife_p(delta, jd, fpc=fpc, df=math.inf) < alpha)
            # the package's test (jackknife_p): on the normal reference and on t(m − 1) over the m leave-outs
            reject.setdefault(('FD', 'jackknife z', kind, f'{a}-{b}'), []).append(jackknife_p(delta, jd, df=math.inf) < alpha)
            reject.setdefault(('FD', 'jackknife t', kind, f'{a}-{b}'), []).append(jackknife_p(delta, jd) < alpha)
            if query_groups:
                gd = gloo[a] - gloo[b]
                low, high = interval('jackknife', delta, np.array([]), ci, jackknife=gd)
                record(('ΔFD', 'jackknife groups', 'E[ΔFD_n]', f'{a}-{b}'), low, high, e_delta[a, b], delta)
                reject.setdefault(('FD', 'jackknife groups', kind, f'{a}-{b}'), []).append(
                    jackknife_p(delta, gd) < alpha)
            if boot:
                diffs = boot[a] - boot[b]
                reject.setdefault(('FD', 'bootstrap', kind, f'{a}-{b}'), []).append(bootstrap_p(diffs) < alpha)
                sd_star = np.nanstd(diffs, ddof=1)
                p_normal = 2 * scipy.stats.norm.sf(abs(delta) / sd_star) if sd_star > 0 else 1.0
                reject.setdefault(('FD', 'bootstrap normal', kind, f'{a}-{b}'), []).append(p_normal < alpha)
                low, high = interval('percentile', delta, diffs, ci)
                record(('ΔFD', 'percentile', 'E[ΔFD_n]', f'{a}-{b}'), low, high, e_delta[a, b], delta)
            if n_permutations:
                p = _randomisation_p(rel, rets[a], rets[b], shift, delta, n_permutations, rng)
                reject.setdefault(('FD', 'randomisation', kind, f'{a}-{b}'), []).append(p < alpha)
            dn = ndcg[a] - ndcg[b]
            sd = dn.std(ddof=1)
            p_t = 2 * scipy.stats.t.sf(abs(dn.mean()) / (sd / np.sqrt(n)), n - 1) if sd > 0 else 1.0
            reject.setdefault(('nDCG', 'paired t', kind, f'{a}-{b}'), []).append(p_t < alpha)
            if fpc is not None:
                p_t = (2 * scipy.stats.t.sf(abs(dn.mean()) / (sd * np.sqrt(fpc) / np.sqrt(n)), n - 1)
                       if sd > 0 and fpc > 0 else float(dn.mean() == 0))
                reject.setdefault(('nDCG', 'paired t fpc', kind, f'{a}-{b}'), []).append(p_t < alpha)
        if n_samples:
            fd_star = np.stack([boot[s] for s in systems]) if boot else None
            nd_star = np.stack([counts @ ndcg[s] / n for s in systems])
            fd_hat = -np.array([est[s] for s in systems])
            nd_hat = np.array([ndcg[s].mean() for s in systems])
            # the package's interval (rank_correlation_interval, as tau_intervals prints it) and, for comparison,
            # the basic bootstrap interval 2·τ̂ − quantiles on the same samples
            taus = [(method, fd_star) for method in TAU_METHODS if boot]
            if all(len(loo[s]) == n for s in systems):
                # studied, not offered (pt_docs "Calibration"): FD's resamples linearised from its leave-outs
                taus.append(('linearised', np.stack([linearised_resamples(est[s], loo[s], counts) for s in systems])))
                if exact:
                    taus.append((f'anchored {exact_draws}', np.stack([
                        anchored_resamples(est[s], loo[s], counts, exact[s]) for s in systems])))
            for method, fd_star in taus:
                how = 'percentile' if method not in TAU_METHODS else method
                value, low, high = rank_correlation_interval(kendall_tau_b, fd_hat, nd_hat, -fd_star, nd_star, ci, how)
                record(('τ(FD, nDCG)', method, 'τ of E[FD_n] and mean nDCG', 'all'), low, high, tau_n, value)
                record(('τ(FD, nDCG)', method, 'τ of E[FD_n] and population mean nDCG', 'all'), low, high,
                       tau_exact_ndcg, value)
                if np.isfinite(tau_pop):
                    record(('τ(FD, nDCG)', method, 'population τ', 'all'), low, high, tau_pop, value)
                value, low, high = rank_correlation_interval(tau_ap, fd_hat, nd_hat, -fd_star, nd_star, ci, how)
                record(('τ_AP(FD, nDCG)', method, 'τ_AP of E[FD_n] and mean nDCG', 'all'), low, high, tau_ap_n, value)
                record(('τ_AP(FD, nDCG)', method, 'τ_AP of E[FD_n] and population mean nDCG', 'all'), low, high,
                       tau_ap_exact_ndcg, value)
        if checkpoint is not None:
            checkpoint(*results(t + 1))
        if verbose:
            logger.info('%s d=%d n=%d: %d/%d trials, %.0f s', world.name, world.d, n, t + 1, n_trials, time.time() - t0)
    return results(n_trials)


def _randomisation_p(rel, ret_a, ret_b, shift, diff, n_permutations, rng) -> float:
    swap = rng.integers(0, 2, size=(n_permutations, len(rel.n))).astype(np.float64)
    keep, full = 1.0 - swap, np.ones_like(swap)
    perm = (weighted_fds(rel, full, [ret_a, ret_b], [keep, swap], shift)
            - weighted_fds(rel, full, [ret_a, ret_b], [swap, keep], shift))
    perm = perm[np.isfinite(perm)]
    return float((1 + np.sum(np.abs(perm) >= abs(diff) - 1e-12 * abs(diff))) / (1 + len(perm)))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--world', required=True)
    parser.add_argument('--dim', type=int, required=True)
    parser.add_argument('--queries', type=int, required=True)
    parser.add_argument('--trials', type=int, default=100)
    parser.add_argument('--reference', type=int, default=300)
    parser.add_argument('--samples', type=int, default=0, help='bootstrap samples per trial (0: jackknife only)')
    parser.add_argument('--permutations', type=int, default=0)
    parser.add_argument('--no-fd-resamples', action='store_true',
                        help="draw the --samples resamples but do not compute FD on them: only τ's linearised interval "
                             '(from the leave-outs) reads them (fast; the trials are the same)')
    parser.add_argument('--exact-draws', type=int, default=0, metavar='K',
                        help="with --no-fd-resamples: FD on the first K resamples, and τ's interval also from the "
                             "linearised resamples anchored on them (method 'anchored K')")
    parser.add_argument('--statistic', default='fd', choices=STATISTICS)
    parser.add_argument('--seed', type=int, default=0)
    parser.add_argument('--world-seed', type=int, default=None,
                        help="the world's seed (default: --seed for the calibration worlds, a study world's own)")
    parser.add_argument('--systems', nargs='+', default=None,
                        help="a subset of the world's systems (fewer FDs per trial; keep an equal-in-law pair for the "
                             'level of the tests)')
    parser.add_argument('--jackknife', default='auto',
                        help="the package's jackknife plan: auto (leave-one-out up to 500 queries, 200 groups above), "
                             'exact, or a number of groups')
    parser.add_argument('--query-groups', nargs='?', const='topics', default=None, choices=('topics', 'auto'),
                        help="also the cluster jackknife over the world's topics (methods '… groups'); 'auto': over "
                             "groups of about 5 queries found by k-means of each set's relevant centroids (exploratory)")
    parser.add_argument('--truths', default=None, metavar='PREFIX',
                        help="a recorded run's CSV prefix: score the trials against its truths instead of drawing "
                             '--reference sets (recorded_truths)')
    parser.add_argument('--out', required=True, help='prefix of the CSV files written')
    args = parser.parse_args(argv)
    if args.statistic in TERM_OF and args.query_groups:
        parser.error(f'--statistic {args.statistic} takes no --query-groups (the cluster leave-outs here are of FD)')
    from benchmarks.worlds import make_world
    logging.basicConfig(level=logging.INFO, format='%(asctime)s %(message)s')
    from benchmarks.worlds import STUDY_WORLDS
    world_seed = args.world_seed if args.world_seed is not None or args.world in STUDY_WORLDS else args.seed
    world = make_world(args.world, d=args.dim, seed=world_seed)
    if args.systems:
        unknown = [s for s in args.systems if s not in world.systems]
        if unknown:
            parser.error(f'--systems: {unknown} are not systems of {args.world}: {world.systems}')
        world.systems = [s for s in world.systems if s in args.systems]
    n = min(args.queries, world.max_queries) if world.max_queries else args.queries
    t0 = time.time()
    jackknife = int(args.jackknife) if args.jackknife.isdigit() else args.jackknife
    from pyterrier_frechet.core.weighted import jackknife_plan

    def write(cov, tests, context, trials):
        for frame in (cov, tests):
            frame['statistic_kind'] = args.statistic
            frame['seconds'] = time.time() - t0
            frame['jackknife'] = jackknife_plan(jackknife, n, args.seed).describe(n)
            frame['population'] = world.max_queries or ''
            frame['systems'] = ' '.join(world.systems)
            frame['query_groups'] = args.query_groups or ''
        cov.to_csv(f'{args.out}.coverage.csv', index=False)
        tests.to_csv(f'{args.out}.tests.csv', index=False)
        context.to_csv(f'{args.out}.context.csv')
        trials.to_csv(f'{args.out}.trials.csv.gz', index=False)

    cov, tests, context, trials = run(world, n, args.trials, args.reference, args.samples, args.permutations, args.seed,
                              args.statistic, jackknife=jackknife, checkpoint=write, query_groups=args.query_groups,
                              truths=recorded_truths(args.truths) if args.truths else None,
                              fd_resamples=not args.no_fd_resamples, exact_draws=args.exact_draws)
    elapsed = time.time() - t0
    write(cov, tests, context, trials)
    summary = cov.groupby(['statistic', 'method', 'estimand'])['coverage'].agg(['min', 'mean', 'max'])
    print(summary.to_string())
    print(tests.groupby(['statistic', 'test', 'hypothesis'])['rejection_rate'].agg(['min', 'mean', 'max']).to_string())
    print(context.to_string())
    print(f'{elapsed:.0f} s')


if __name__ == '__main__':
    sys.exit(main())
