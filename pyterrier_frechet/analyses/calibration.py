"""Measured coverage of the bootstrap intervals FD is printed with: a simulation with known truth.

A synthetic world of queries (:class:`World`): each query q has a topic centre c_q ~ N(0, τ²I) in d dimensions,
1 + Poisson(λ) judged-relevant documents c_q + N(0, σ²I) (so queries carry unequal numbers of judgments, as in
TREC), and each system retrieves k documents per query, each on-topic (drawn like a relevant document) with
probability p_s and otherwise off-topic: a·c_q + m + N(0, σ_off²I) (pulled towards the collection's centre and
shifted by m). Two systems differ only in p_s.

The statistic is FD (``statistic='fd'``), FD with every query weighing 1 on each side (``'fd-query'``: the same
population value, since a query's number of judgments does not depend on its topic) or CFD (``'cfd'``, the
conditional FD given the query, :mod:`pyterrier_frechet.core.conditional`). Two estimands, both known exactly or
to Monte Carlo precision:

- **population FD**: the FD between the Gaussians of the relevant and the retrieved documents of the whole
  query population (infinitely many queries), in closed form: relevant mean 0, covariance (τ² + σ²)I; retrieved
  mean (1−p)m, covariance p(τ²+σ²)I + (1−p)(a²τ² + σ_off²)I + p(1−p)mmᵀ (a two-component mixture). Its paired
  difference ΔFD between the two systems likewise. For CFD (:meth:`World.population_cfd`): the limit over
  infinitely many queries *at these per-query document counts* — a query's mean is estimated from its n_q
  relevant and k retrieved documents, and that noise (dσ²/n_q + tr W_ret/k per query) is part of what CFD measures:
  it does not shrink with more queries.
- **FD at this query-set size**: E[FD̂ₙ], the expected FD of n random queries — FD is biased upwards on a
  finite sample (a covariance fitted to few vectors is too narrow in most directions); estimated from
  ``n_reference`` independent query sets.

:func:`coverage` draws ``n_trials`` query sets of n queries, bootstraps each (the package's own weighted path,
:mod:`pyterrier_frechet.core.weighted`, with B resamples and the jackknife for BCa) and counts how often each
interval method (:mod:`pyterrier_frechet.core.intervals`; the jackknife ones on their default Student t reference
on n − 1 degrees of freedom, as the package prints them) covers each estimand, how wide it is, and how often it
contains the point estimate it is printed beside. :func:`rejection_rates` measures how often the paired bootstrap
test (:func:`~pyterrier_frechet.analyses.significance.bootstrap_p`) rejects when the two systems are the same
system (its level) and when they differ (its power). Seeded: the same arguments give the same table.
"""
from dataclasses import dataclass, replace
from typing import Dict, List, Sequence

import numpy as np
import pandas as pd
import pyterrier as pt

from ..core.conditional import conditional_fds
from ..core.frechet import GaussianStats, frechet_distance_from_stats
from ..core.intervals import INTERVAL_METHODS, check_ci, check_tail_samples, interval, printed_estimate
from ..core.weighted import QueryStats, jackknife_groups, per_query_weighted, weighted_fds
from ..measures.definitions import FD as FD_MEASURE

#: The statistics :func:`coverage` and :func:`rejection_rates` can calibrate (``'fd-mean'``, ``'fd-cov'``: FD's two
#: terms, ``FD(term='mean')`` and ``FD(term='cov')``).
STATISTICS = ('fd', 'fd-query', 'cfd', 'fd-mean', 'fd-cov')
#: The FD term each statistic reports ('fd': FD itself).
_TERM = {'fd-mean': 'mean', 'fd-cov': 'cov'}


@dataclass(frozen=True)
class World:
    """The generative model of queries, judgments and two systems (see the module docstring)."""
    d: int = 32
    tau: float = 1.0  # spread of topic centres
    sigma: float = 0.6  # spread of relevant documents around their topic
    mean_relevant: float = 9.0  # λ: 1 + Poisson(λ) relevant documents per query
    k: int = 10  # retrieved documents per query and system
    p_a: float = 0.7  # share of on-topic retrieved documents, system A
    p_b: float = 0.6  # system B
    pull: float = 0.5  # a: off-topic documents sit at a·c_q + m
    offset: float = 0.4  # |m| (along the first axis)
    sigma_off: float = 0.8  # spread of off-topic documents

    def population_fd(self, p: float) -> float:
        """FD between the population Gaussians of the relevant documents and a system with on-topic share p."""
        d, m = self.d, self._offset_vector()
        on = (self.tau ** 2 + self.sigma ** 2)
        off = (self.pull ** 2 * self.tau ** 2 + self.sigma_off ** 2)
        rel = GaussianStats(np.zeros(d), on * np.eye(d), 0)
        ret = GaussianStats((1 - p) * m, (p * on + (1 - p) * off) * np.eye(d) + p * (1 - p) * np.outer(m, m), 0)
        return frechet_distance_from_stats(rel, ret)

    def _offset_vector(self) -> np.ndarray:
        """m: the shift of off-topic documents, |m| = offset along the first axis."""
        m = np.zeros(self.d)
        m[0] = self.offset
        return m

    def population_cfd(self, p: float) -> float:
        """CFD of infinitely many queries at these per-query document counts (see the module docstring): the
        per-query mean gap (1−p)²((1−a)²τ²d + |m|²), the noise of each query's estimated means
        dσ² E[1/(1+Poisson(λ))] + tr W_ret / k, and the trace term of the within-query covariances
        W_rel = σ²I, W_ret = (pσ² + (1−p)σ_off²)I + p(1−p)((1−a)²τ²I + mmᵀ)."""
        d, m, lam = self.d, self._offset_vector(), self.mean_relevant
        w_rel = self.sigma ** 2 * np.eye(d)
        w_ret = ((p * self.sigma ** 2 + (1 - p) * self.sigma_off ** 2) * np.eye(d)
                 + p * (1 - p) * ((1 - self.pull) ** 2 * self.tau ** 2 * np.eye(d) + np.outer(m, m)))
        gap = (1 - p) ** 2 * ((1 - self.pull) ** 2 * self.tau ** 2 * d + m @ m)
        noise = d * self.sigma ** 2 * (1 - np.exp(-lam)) / lam + np.trace(w_ret) / self.k
        trace = frechet_distance_from_stats(GaussianStats(np.zeros(d), w_rel, 0), GaussianStats(np.zeros(d), w_ret, 0))
        return float(gap + noise + trace)

    def population_mean_term(self, p: float) -> float:
        """FD's mean term in the population: ‖(1−p)m‖² (the covariance term is :meth:`population_fd` less it)."""
        m = (1 - p) * self._offset_vector()
        return float(m @ m)

    def population(self, statistic: str, p: float) -> float:
        """The population value of ``statistic`` (:data:`STATISTICS`) for a system with on-topic share p."""
        if statistic == 'cfd':
            return self.population_cfd(p)
        if statistic == 'fd-mean':
            return self.population_mean_term(p)
        if statistic == 'fd-cov':
            return self.population_fd(p) - self.population_mean_term(p)
        return self.population_fd(p)

    def draw(self, n_queries: int, rng: np.random.Generator):
        """One query set: (relevant, retrieved by A, retrieved by B) as :class:`QueryStats`, and the shift."""
        rel, (ret_a, ret_b), _, shift = _draw_systems(self, [(self.p_a, self.offset), (self.p_b, self.offset)], n_queries, rng)
        return rel, ret_a, ret_b, shift


def _fds(rel, ret, weights, shift, statistic: str = 'fd') -> np.ndarray:
    """The statistic per row of per-query ``weights``, as the bootstrap computes it."""
    if statistic not in STATISTICS:
        raise ValueError(f'statistic must be one of {STATISTICS}, got {statistic!r}')
    if statistic == 'cfd':
        return conditional_fds(rel, ret, weights)
    if statistic == 'fd-query':
        rel, ret = per_query_weighted(rel), per_query_weighted(ret)
    if statistic in _TERM:  # through the term's own resampling, as the bootstrap takes it
        from ..evaluation.vector_statistics import VectorStatistics
        from ..measures.definitions import TERMS
        from ..measures.resampling import numpy_engine
        stats = VectorStatistics(rel, ret, shift, np.ones(len(rel.n), dtype=bool))
        return TERMS[_TERM[statistic]].samples(FD_MEASURE, stats, np.atleast_2d(weights), numpy_engine())
    return weighted_fds(rel, weights, [ret], [weights], shift)


def _leave_outs(rel, ret, shift, statistic: str = 'fd') -> np.ndarray:
    """The statistic with each query left out in turn, by its resampling's leave-outs (what the bootstrap's jackknife,
    ``compare`` and pt.Experiment's rows take: O(Q·d²) plus one FD per query, not a Q × Q matrix of 0/1 weights)."""
    from ..evaluation.vector_statistics import VectorStatistics
    from ..measures.definitions import CFD, FD
    from ..measures.resampling import numpy_engine
    units = np.ones(len(rel.n), dtype=bool)
    groups, n_groups = jackknife_groups(units)
    if statistic == 'fd-query':
        rel, ret = per_query_weighted(rel), per_query_weighted(ret)
    measure = (CFD if statistic == 'cfd' else FD(weighting='query') if statistic == 'fd-query'
               else FD(term=_TERM[statistic]) if statistic in _TERM else FD)
    return measure.resampling().leave_out(measure, VectorStatistics(rel, ret, shift, units), groups, n_groups,
                                          numpy_engine())


def expected_fd(world: World, n_queries: int, n_reference: int, seed: int, statistic: str = 'fd') -> Dict[str, float]:
    """E[FD̂ₙ] of A and B and E[ΔFD̂ₙ] from ``n_reference`` independent sets of ``n_queries`` queries (of
    ``statistic``, :data:`STATISTICS`)."""
    rng = np.random.default_rng([seed, n_queries, 1])
    values = np.empty((n_reference, 2))
    ones = np.ones((1, n_queries))
    for i in range(n_reference):
        rel, ret_a, ret_b, shift = world.draw(n_queries, rng)
        values[i] = _fds(rel, ret_a, ones, shift, statistic)[0], _fds(rel, ret_b, ones, shift, statistic)[0]
    return {'A': float(values[:, 0].mean()), 'delta': float((values[:, 0] - values[:, 1]).mean()),
            'A_se': float(values[:, 0].std(ddof=1) / np.sqrt(n_reference))}


def check_arguments(n_queries: Sequence[int] = (2,), n_trials: int = 1, n_samples: int = 1, seed: int = 0,
                    ci: float = None, n_reference: int = 1) -> None:
    """Refuse arguments that would print a meaningless table (coverage 0 of NaN intervals), before any work."""
    sizes = [n_queries] if np.isscalar(n_queries) else list(n_queries)
    small = [n for n in sizes if not (isinstance(n, (int, np.integer)) and n >= 2)]
    if not sizes or small:
        raise ValueError(f'n_queries (--queries) must be integers >= 2 (a bootstrap over queries needs at least 2 '
                         f'queries), got {list(sizes)}')
    for name, flag, value in (('n_trials', '--trials', n_trials), ('n_samples', '--samples', n_samples),
                              ('n_reference', '--reference', n_reference)):
        if not (isinstance(value, (int, np.integer)) and value >= 1):
            raise ValueError(f'{name} ({flag}) must be a positive integer, got {value!r}')
    if not (isinstance(seed, (int, np.integer)) and seed >= 0):
        raise ValueError(f'seed (--seed) must be a non-negative integer, got {seed!r}')
    if ci is None:
        return
    check_ci(ci)
    check_tail_samples(n_samples, ci)  # each tail of a percentile interval must hold at least one resample


def _draw_counts(rng: np.random.Generator, n_samples: int, n_queries: int) -> np.ndarray:
    """(n_samples × n_queries) how often each query is drawn in each bootstrap sample, from ``rng``."""
    counts = np.zeros((n_samples, n_queries))
    np.add.at(counts, (np.arange(n_samples)[:, None], rng.integers(0, n_queries, size=(n_samples, n_queries))), 1)
    return counts


def _mean(values) -> float:
    """Mean of the finite values (NaN: an undefined interval), NaN if there are none."""
    values = np.asarray(values, dtype=np.float64)
    values = values[np.isfinite(values)]
    return float(values.mean()) if len(values) else float('nan')


def coverage(world: World = World(), n_queries: Sequence[int] = (43, 200), n_trials: int = 200, n_samples: int = 500,
             ci: float = 0.95, n_reference: int = 2000, seed: int = 0, verbose: bool = True,
             statistic: str = 'fd') -> pd.DataFrame:
    """Coverage of every interval method for single-system FD and paired ΔFD (every method but the log-scale ones,
    :attr:`~pyterrier_frechet.core.intervals.IntervalMethod.positive_only`: a difference can be negative), against both estimands
    (``statistic``: ``'fd'``, ``'fd-query'`` or ``'cfd'``; the rows still say FD and ΔFD, the ``measure`` column which).
    Every jackknife interval is scored on the reference it is printed with (Student t on n − 1 degrees of freedom).

    Returns one row per (n_queries, statistic, method, estimand): ``coverage`` (share of trials whose interval
    contains the true value), ``width`` (mean), ``contains_estimate`` (share whose interval contains the point
    estimate printed beside it: FD̂, or the bias-corrected estimate for basic (2θ̂ − mean(θ*)) and jackknife_bc),
    ``undefined`` (share of trials where the method gives no interval, e.g. BCa with every resample above FD̂),
    and the truth itself (``true_value``)."""
    check_arguments(n_queries, n_trials, n_samples, seed, ci, n_reference)
    rows: List[dict] = []
    for n in n_queries:
        truth = {('FD', 'population'): world.population(statistic, world.p_a),
                 ('ΔFD', 'population'): world.population(statistic, world.p_a) - world.population(statistic, world.p_b)}
        expected = expected_fd(world, n, n_reference, seed, statistic)
        truth[('FD', f'E[FD] at {n} queries')] = expected['A']
        truth[('ΔFD', f'E[ΔFD] at {n} queries')] = expected['delta']
        # every registered method; a signed difference has no log-scale interval (positive_only): ΔFD on the others
        methods = {'FD': tuple(INTERVAL_METHODS),
                   'ΔFD': tuple(name for name, m in INTERVAL_METHODS.items() if not m.positive_only)}
        hits = {(stat, method, est): [] for stat, est in truth for method in methods[stat]}
        widths = {(stat, method): [] for stat in methods for method in methods[stat]}
        contains = {(stat, method): [] for stat in methods for method in methods[stat]}
        rng = np.random.default_rng([seed, n, 2])
        ones = np.ones((1, n))
        for _ in pt.tqdm(range(n_trials), desc=f'calibration, {n} queries', unit='trial', disable=not verbose):
            rel, ret_a, ret_b, shift = world.draw(n, rng)
            counts = _draw_counts(rng, n_samples, n)
            est_a, est_b = (_fds(rel, ret, ones, shift, statistic)[0] for ret in (ret_a, ret_b))
            boot_a, boot_b = (_fds(rel, ret, counts, shift, statistic) for ret in (ret_a, ret_b))
            jack_a, jack_b = (_leave_outs(rel, ret, shift, statistic) for ret in (ret_a, ret_b))
            for stat, est, boot, jack in (('FD', est_a, boot_a, jack_a), ('ΔFD', est_a - est_b, boot_a - boot_b, jack_a - jack_b)):
                for method in methods[stat]:
                    low, high = interval(method, est, boot, ci, jackknife=jack)
                    printed = printed_estimate(method, est, boot, jack)
                    widths[stat, method].append(high - low)
                    contains[stat, method].append(low <= printed <= high if np.isfinite(low) else np.nan)
                    for (s, est_name), value in truth.items():
                        if s == stat:
                            hits[stat, method, est_name].append(low <= value <= high if np.isfinite(low) else np.nan)
        for (stat, method, est_name), h in hits.items():
            h = np.asarray(h, dtype=np.float64)
            rows.append({'measure': statistic, 'n_queries': n, 'statistic': stat, 'method': method, 'estimand': est_name,
                         'true_value': truth[stat, est_name], 'coverage': _mean(h), 'width': _mean(widths[stat, method]),
                         'contains_estimate': _mean(contains[stat, method]),
                         'undefined': float(np.mean(~np.isfinite(h))), 'trials': n_trials, 'samples': n_samples})
    return pd.DataFrame(rows)


def _population_fd(world: World, p: float, offset: float) -> float:
    return replace(world, offset=offset).population_fd(p)


def _draw_systems(world: World, systems: Sequence[tuple], n_queries: int, rng: np.random.Generator):
    """One query set and several systems (p, offset) on it: the relevant QueryStats, each system's retrieved
    QueryStats, each system's per-query share of on-topic documents (a per-query precision), and the shift."""
    d, k = world.d, world.k
    centres = rng.normal(scale=world.tau, size=(n_queries, d))
    n_rel = 1 + rng.poisson(world.mean_relevant, size=n_queries)
    q_rel = np.repeat(np.arange(n_queries), n_rel)
    rel = centres[q_rel] + rng.normal(scale=world.sigma, size=(len(q_rel), d))
    shift = rel.mean(axis=0)
    q_ret = np.repeat(np.arange(n_queries), k)
    stats, shares = [], []
    for p, offset in systems:
        m = np.zeros(d)
        m[0] = offset
        on = rng.random(len(q_ret)) < p
        x = np.where(on[:, None], centres[q_ret] + rng.normal(scale=world.sigma, size=(len(q_ret), d)),
                     world.pull * centres[q_ret] + m + rng.normal(scale=world.sigma_off, size=(len(q_ret), d)))
        stats.append(QueryStats(q_ret, x, n_queries, shift))
        shares.append(on.reshape(n_queries, k).mean(axis=1))
    return QueryStats(q_rel, rel, n_queries, shift), stats, np.array(shares), shift


def tau_coverage(world: World = World(), systems: Sequence[tuple] = None, n_queries: Sequence[int] = (43, 200),
                 n_trials: int = 200, n_samples: int = 500, ci: float = 0.95, seed: int = 0,
                 verbose: bool = True) -> pd.DataFrame:
    """Coverage of the percentile interval of Kendall τ between FD and a per-query precision across systems.

    Each system is (p, offset): its share of on-topic retrieved documents and the shift of its off-topic ones, so
    FD and precision order the systems alike but not identically. The population τ is computed from the closed
    form population FDs and the p's; each trial bootstraps queries (the same draws for every system, as
    :func:`~pyterrier_frechet.analyses.bootstrap.bootstrap` does) and takes the percentile interval of τ*."""
    import scipy.stats
    check_arguments(n_queries, n_trials, n_samples, seed, ci)
    if systems is None:  # 8 systems: precision and off-topic shift traded against each other
        systems = [(0.55, 0.2), (0.58, 0.9), (0.61, 0.4), (0.64, 1.2), (0.67, 0.3), (0.70, 1.0), (0.73, 0.5), (0.76, 1.4)]
    fd_pop = np.array([_population_fd(world, p, off) for p, off in systems])
    prec_pop = np.array([p for p, _ in systems])
    tau_pop = float(scipy.stats.kendalltau(-fd_pop, prec_pop).statistic)
    rows = []
    for n in n_queries:
        rng = np.random.default_rng([seed, n, 3])
        ones = np.ones((1, n))
        hits, widths, estimates = [], [], []
        for _ in pt.tqdm(range(n_trials), desc=f'tau calibration, {n} queries', unit='trial', disable=not verbose):
            rel, rets, shares, shift = _draw_systems(world, systems, n, rng)
            counts = _draw_counts(rng, n_samples, n)
            fd_hat = np.array([_fds(rel, ret, ones, shift)[0] for ret in rets])
            fd_star = np.stack([_fds(rel, ret, counts, shift) for ret in rets])  # systems × samples
            prec_hat, prec_star = shares.mean(axis=1), shares @ counts.T / n
            estimates.append(scipy.stats.kendalltau(-fd_hat, prec_hat).statistic)
            taus = np.array([scipy.stats.kendalltau(-fd_star[:, b], prec_star[:, b]).statistic for b in range(n_samples)])
            low, high = interval('percentile', estimates[-1], taus, ci)
            hits.append(low <= tau_pop <= high)
            widths.append(high - low)
        rows.append({'n_queries': n, 'statistic': 'Kendall τ(FD, precision)', 'method': 'percentile',
                     'estimand': 'population τ', 'true_value': tau_pop, 'coverage': _mean(hits),
                     'width': _mean(widths), 'mean_estimate': _mean(estimates), 'trials': n_trials, 'samples': n_samples})
    return pd.DataFrame(rows)


#: The paired tests :func:`rejection_rates` measures.
LEVEL_TESTS = ('bootstrap', 'normal', 'jackknife', 'experiment', 'influence')
#: The statistics with a closed-form influence (``FD(rows='influence')``'s rows): the others have no ``'influence'`` test.
INFLUENCE_STATISTICS = ('fd', 'fd-query')


def level_tests(statistic: str) -> tuple:
    """The paired tests :func:`rejection_rates` measures for ``statistic``: every one of :data:`LEVEL_TESTS` the
    statistic has."""
    return tuple(t for t in LEVEL_TESTS if t != 'influence' or statistic in INFLUENCE_STATISTICS)


def _influence_leave_outs(rel, ret, shift, statistic: str = 'fd') -> np.ndarray:
    """θ̂ − ∂θ/∂w_q per query: the first-order leave-outs whose centred pseudo-values are ``FD(rows='influence')``'s
    rows (:func:`~..core.jackknife.influence_rows`), so :func:`~.significance.experiment_p` of them is the p-value
    ``pt.Experiment(baseline=...)`` prints for it."""
    from ..core.influence import fd_influence
    if statistic == 'fd-query':
        rel, ret = per_query_weighted(rel), per_query_weighted(ret)
    units = np.ones(len(rel.n))
    full = weighted_fds(rel, units[None], [ret], [units[None]], shift)[0]
    influence = fd_influence(rel, ret, units, shift)
    if influence is None:
        return np.full(len(units), np.nan)
    return full - influence


def rejection_rates(world: World = World(), n_queries: Sequence[int] = (43, 200), n_trials: int = 200,
                    n_samples: int = 1000, alpha: float = 0.05, seed: int = 0, verbose: bool = True,
                    statistic: str = 'fd', tests: Sequence[str] = ('bootstrap',)) -> pd.DataFrame:
    """How often the paired bootstrap test rejects at ``alpha``: under the null (system B is system A — the same
    on-topic share, its own independent draws) the rate is the test's level, which should not exceed ``alpha``;
    with B = ``world.p_b`` it is the power. The same for the per-query precision (share of on-topic documents in
    the top k), whose mean over queries stands for nDCG here. p = :func:`~.significance.bootstrap_p`.

    ``tests``: which p-values (:func:`~.significance.bootstrap_p` ``'bootstrap'``: the count of resamples beyond 0;
    ``'normal'``: :func:`~.significance.normal_p`, the normal approximation of the same resamples; ``'jackknife'``:
    :func:`~.significance.jackknife_p`, from the leave-one-query-out values; ``'experiment'``:
    :func:`~.significance.experiment_p`, what ``pt.Experiment(baseline=...)`` prints for FD/CFD — the paired t-test
    on the centred pseudo-values; ``'influence'``: the same for ``FD(rows='influence')``, whose rows come from each
    query's first-order influence, for the statistics of :data:`INFLUENCE_STATISTICS`).

    Returns one row per (n_queries, hypothesis, measure, test): ``rejection_rate`` and its binomial standard error."""
    from .options import check_test_resolution
    from .significance import bootstrap_p, experiment_p, jackknife_p, normal_p
    check_arguments(n_queries, n_trials, n_samples, seed)
    if 'bootstrap' in tests:
        check_test_resolution(n_samples, alpha)  # a test that can never reject would print rejection rate 0
    unknown = [t for t in tests if t not in level_tests(statistic)]
    if unknown:
        raise ValueError(f"tests for statistic {statistic!r} must be among {', '.join(map(repr, level_tests(statistic)))}, "
                         f'got {unknown}')
    rows = []
    for n in n_queries:
        rng = np.random.default_rng([seed, n, 4])
        for hypothesis, p_b in (('null (A = B)', world.p_a), (f'alternative (p_b = {world.p_b})', world.p_b)):
            systems = [(world.p_a, world.offset), (p_b, world.offset)]
            rejected = {(m, t): [] for m in (statistic, 'precision') for t in tests}
            ones = np.ones((1, n))
            for _ in pt.tqdm(range(n_trials), desc=f'level, {n} queries, {hypothesis}', unit='trial', disable=not verbose):
                rel, (ret_a, ret_b), shares, shift = _draw_systems(world, systems, n, rng)
                counts = _draw_counts(rng, n_samples, n)
                per_q = shares[0] - shares[1]
                # per measure: the difference under per-query weights, and with each query left out in turn
                sides = {statistic: (lambda w: _fds(rel, ret_a, w, shift, statistic) - _fds(rel, ret_b, w, shift, statistic),
                                     lambda: _leave_outs(rel, ret_a, shift, statistic) - _leave_outs(rel, ret_b, shift, statistic)),
                         'precision': (lambda w: w @ per_q / w.sum(axis=1), lambda: (per_q.sum() - per_q) / (n - 1))}
                # a mean's influence leave-outs are its leave-outs (its rows are the same either way)
                first_order = {statistic: lambda: (_influence_leave_outs(rel, ret_a, shift, statistic)
                                                   - _influence_leave_outs(rel, ret_b, shift, statistic)),
                               'precision': sides['precision'][1]}
                for measure, (values_of, leave_outs) in sides.items():
                    diffs, full = values_of(counts), float(values_of(ones)[0])
                    jack = leave_outs() if {'experiment', 'jackknife'} & set(tests) else None
                    first = first_order[measure]() if 'influence' in tests else None
                    for test in tests:
                        if test == 'bootstrap':
                            p = bootstrap_p(diffs)
                        elif test == 'normal':
                            p = normal_p(full, diffs)
                        elif test == 'experiment':
                            p = experiment_p(full, jack)
                        elif test == 'influence':
                            p = experiment_p(full, first)
                        else:
                            p = jackknife_p(full, jack)
                        rejected[measure, test].append(p < alpha)
            for (measure, test), r in rejected.items():
                rate = float(np.mean(r))
                rows.append({'n_queries': n, 'hypothesis': hypothesis, 'measure': measure, 'test': test, 'alpha': alpha,
                             'rejection_rate': rate, 'se': float(np.sqrt(rate * (1 - rate) / n_trials)),
                             'trials': n_trials, 'samples': n_samples})
    return pd.DataFrame(rows)


__all__ = ['INFLUENCE_STATISTICS', 'LEVEL_TESTS', 'STATISTICS', 'World', 'check_arguments', 'coverage', 'expected_fd', 'level_tests', 'rejection_rates', 'tau_coverage']
