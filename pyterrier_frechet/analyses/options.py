"""The options every resampling analysis shares, as one validated object, and the checks behind it.

``bootstrap``'s intervals, ``compare_systems``' tests, ``discriminative_power``, ``paper_table`` and ``write_report``
(and the command line's ``bootstrap``, ``compare``, ``agreement`` and ``report``) read the same options: how many
resamples from which seed, the intervals' level and method, the paired test and its level, a finite query
population, query groups, the baseline, the permutations of the randomisation test. :class:`ResamplingOptions` holds
them. Each field is checked once, when the object is made, by its entry in :data:`CONSTRAINTS` (one check per field, in
the words every entry point uses, naming the argument and its command-line flag), together with the two rules that
join fields (the count test and query groups have no finite-population form); what needs the runs and the qrels — a
baseline among the runs, groups that cover the judged queries, a resample count that can pass Holm's first step over
the comparisons asked (the default count chosen to) — once, by :meth:`ResamplingOptions.for_runs`, before any work.
The entry points build it from their keyword arguments and pass it down whole.
"""
import dataclasses
import warnings
from dataclasses import dataclass
from typing import Any, Callable, Dict, Optional, Sequence

import numpy as np
import pandas as pd

from ..core.intervals import check_ci, check_population, check_tail_samples, interval_method
from ..evaluation.frames import prepare_qrels, to_ir_measures
from ..evaluation.selection import Judgments

#: The paired tests :func:`~pyterrier_frechet.analyses.significance.compare_systems` offers: ``'jackknife'``
#: (default: each measure's own test from the bootstrap's leave-one-query-out values — the jackknife t-test
#: :func:`~pyterrier_frechet.analyses.significance.jackknife_p` for FD and CFD; the paired t-test for a per-query mean
#: such as nDCG (the jackknife t on n − 1 degrees of freedom, which for a mean is ``ttest_rel``'s statistic) — else
#: :func:`~pyterrier_frechet.analyses.significance.normal_p`), ``'normal'`` (``normal_p`` everywhere) and
#: ``'bootstrap'`` (the count p-value :func:`~pyterrier_frechet.analyses.significance.bootstrap_p`, quantised: B must
#: resolve Holm's first step). Chosen by ``calibrate --level`` (docs/report-scale.md): at 43 queries the normal
#: approximation of FD's resampled differences rejects too rarely (power 0.04 against the count test's 0.24), the
#: jackknife test keeps the level (0.01) with power 0.20, and neither is quantised by the resample count.
TESTS = ('jackknife', 'normal', 'bootstrap')
DEFAULT_TEST = 'jackknife'
#: Each test in words, for notes and captions.
TEST_TEXT = {'jackknife': "each measure's own test (FD's jackknife t-test, the paired t-test of a per-query measure; "
                          'the normal approximation for the others)',
             'normal': 'the normal approximation of the resampled differences',
             'bootstrap': 'the paired bootstrap (the count of resampled differences beyond 0)'}

#: Fewer resamples than this draw a warning: the p-values and interval ends still move with the seed.
FEW_SAMPLES = 1000


def n_comparisons(n_systems: int, with_baseline: bool) -> int:
    """How many pairs :func:`~pyterrier_frechet.analyses.significance.compare_systems` tests per measure: each run against the baseline, or every pair."""
    return n_systems - 1 if with_baseline else n_systems * (n_systems - 1) // 2


def check_alpha(alpha: float) -> None:
    """The level of every test: in (0, 1), as ``--alpha`` takes it (alpha = 1 would call every difference)."""
    if isinstance(alpha, bool) or not isinstance(alpha, (int, float, np.integer, np.floating)) or not 0 < alpha < 1:
        raise ValueError(f'alpha must be in (0, 1), got {alpha!r} (--alpha)')


def check_baseline(baseline: Optional[str], runs) -> None:
    """A baseline must name one of the runs (None: every pair); one message for every entry point."""
    if baseline is not None and baseline not in runs:
        raise ValueError(f'baseline {baseline!r} (--baseline) is not one of the runs: {sorted(runs)[:10]}; name one of '
                         'them, or leave it out to compare every pair')


def check_test_resolution(n_samples: Optional[int], alpha: float, n_permutations: int = 0, n_comparisons: int = 1) -> None:
    """Refuse resample counts whose smallest attainable p-value cannot pass Holm's first step, α/m for m
    comparisons (no difference could ever be called: compare over all 171 pairs of 19 runs with 1000 samples
    reported "nothing significant" by construction, 171 · 2/1001 = 0.34); warn below :data:`FEW_SAMPLES`.
    Called before any work by :func:`~pyterrier_frechet.analyses.significance.compare_systems` and the report. ``n_samples=None``: the resamples give no
    count p-value (the ``'normal'`` test), only the permutations are checked."""
    check_alpha(alpha)
    level = alpha / max(int(n_comparisons), 1)
    what = f'alpha={alpha}' if n_comparisons <= 1 else f'alpha/m = {alpha}/{n_comparisons} = {level:.3g} (Holm, {n_comparisons} comparisons)'
    fewer = '' if n_comparisons <= 1 else '; or compare fewer pairs (--baseline NAME: each run against one)'
    floor = 2 / (n_samples + 1) if n_samples is not None else 0.0
    if floor >= level:
        raise ValueError(f'n_samples={n_samples} (--samples): the smallest bootstrap p-value it can give is '
                         f'2/(B+1) = {floor:.3g}, not below {what}; use at least {int(np.ceil(2 / level))} '
                         f'samples{fewer}')
    if n_permutations and 1 / (n_permutations + 1) >= level:
        raise ValueError(f'n_permutations={n_permutations} (--permutations): the smallest randomisation p-value it can '
                         f'give is 1/(P+1) = {1 / (n_permutations + 1):.3g}, not below {what}; use at least '
                         f'{int(np.ceil(1 / level))} permutations{fewer}')
    few = [f'{name}={n}' for name, n in (('n_samples', n_samples), ('n_permutations', n_permutations))
           if n is not None and 0 < n < FEW_SAMPLES]
    if few:
        warnings.warn(f'{", ".join(few)}: p-values from fewer than {FEW_SAMPLES} resamples are coarse '
                      f'(steps of 2/(B+1)) and move with the seed', stacklevel=3)


def samples_for_holm(alpha: float, n_comparisons: int, at_least: int = 1000) -> int:
    """The smallest resample count (and at least ``at_least``) whose count p-value :func:`~pyterrier_frechet.analyses.significance.bootstrap_p` can pass
    Holm's first step: ``2/(B+1) < alpha/m``."""
    b = max(int(at_least), int(np.floor(2 * max(int(n_comparisons), 1) / alpha)))
    while 2 / (b + 1) >= alpha / max(int(n_comparisons), 1):
        b += 1
    return b


def default_samples(test: str, alpha: float, n_comparisons: int) -> int:
    """The resample count used when none is given: 1000 for the ``'jackknife'`` and ``'normal'`` tests (their
    p-values are not quantised by the count), the smallest count that resolves Holm's first step for ``'bootstrap'`` (:func:`samples_for_holm`)."""
    check_test(test)
    return 1000 if test != 'bootstrap' else samples_for_holm(alpha, n_comparisons)


def check_test(test: str, population: Optional[int] = None) -> None:
    """Refuse an unknown ``test``, and the count test with a finite ``population`` (it has no corrected form)."""
    if test not in TESTS:
        raise ValueError(f'test must be one of {TESTS}, got {test!r}')
    if population is not None and test == 'bootstrap':
        raise ValueError("population= (--population) corrects the jackknife and normal tests; the count test "
                         "(test='bootstrap', --test bootstrap) has no finite-population form: choose --test jackknife")


def query_clusters(query_groups, queries: Sequence[str]) -> np.ndarray:
    """The group code (0…G−1) of every query of ``queries`` from ``query_groups``: a mapping or Series qid → group,
    or a frame with columns ``qid`` and ``group``. Every query must have a group (a query may be a group of its
    own); queries the groups list beyond ``queries`` are ignored. ValueError naming the missing queries."""
    if isinstance(query_groups, pd.DataFrame):
        missing = {'qid', 'group'} - set(query_groups.columns)
        if missing:
            raise ValueError(f'query_groups: a frame of query groups needs columns qid and group, missing {sorted(missing)}')
        if query_groups['qid'].astype(str).duplicated().any():
            dup = query_groups.loc[query_groups['qid'].astype(str).duplicated(), 'qid'].astype(str).unique()[:5].tolist()
            raise ValueError(f'query_groups: queries listed twice, e.g. {dup}; give each query one group')
        query_groups = dict(zip(query_groups['qid'].astype(str), query_groups['group']))
    elif isinstance(query_groups, pd.Series):
        query_groups = dict(zip(query_groups.index.astype(str), query_groups.to_numpy()))
    elif isinstance(query_groups, dict):
        query_groups = {str(q): g for q, g in query_groups.items()}
    else:
        raise ValueError(f'query_groups must be a dict or Series qid → group, or a frame with columns qid and group; '
                         f'got {type(query_groups).__name__}')
    absent = [q for q in queries if q not in query_groups or pd.isna(query_groups[q])]
    if absent:
        raise ValueError(f'query_groups gives no group for {len(absent)} of the {len(queries)} judged queries, e.g. '
                         f'{absent[:5]}; give every judged query a group (a query may be a group of its own)')
    labels = pd.Index([str(query_groups[q]) for q in queries])
    codes, uniques = pd.factorize(labels)
    if len(uniques) < 2:
        raise ValueError(f'query_groups puts all {len(queries)} judged queries in one group; the cluster jackknife and '
                         'bootstrap need at least 2 groups (and are only calibrated with many: pt_docs "Calibration")')
    return codes.astype(np.int64)


def check_groups_population(query_groups, population: Optional[int]) -> None:
    """Query groups and a finite population together are refused: the correction 1 − n/N is for queries drawn one by
    one, and with groups the draw is of groups, whose sampled fraction it is not."""
    if query_groups is not None and population is not None:
        raise ValueError('population= (--population) and query_groups= (--query-groups) together are not offered: the '
                         'finite-population correction 1 − n/N is for queries drawn one by one, not in groups; '
                         'leave one of them out')


def check_query_groups(query_groups, qrels: pd.DataFrame, population: Optional[int] = None) -> None:
    """:func:`query_clusters` of the qrels' judged queries and :func:`check_groups_population`, for a refusal before
    any work (None passes)."""
    check_groups_population(query_groups, population)
    if query_groups is not None:
        query_clusters(query_groups, Judgments(prepare_qrels(to_ir_measures(qrels), 'qrels')).query_names.tolist())


def check_samples(n_samples) -> None:
    """A bootstrap sample count is a positive integer (``--samples``): one check for every entry point."""
    if isinstance(n_samples, bool) or not isinstance(n_samples, (int, np.integer)) or n_samples < 1:
        raise ValueError(f'n_samples must be positive, got {n_samples!r} (--samples: a positive integer)')


def check_seed(seed) -> None:
    """A seed is a non-negative integer (``--seed``)."""
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ValueError(f'seed (--seed) must be a non-negative integer, got {seed!r}')


def check_permutations(n_permutations) -> None:
    """The randomisation test's permutations: a non-negative integer (``--permutations``; 0: no randomisation test)."""
    if isinstance(n_permutations, bool) or not isinstance(n_permutations, (int, np.integer)) or n_permutations < 0:
        raise ValueError(f'n_permutations (--permutations) must be a non-negative integer, got {n_permutations!r}')


def _optional(check: Callable) -> Callable:
    return lambda value: None if value is None else check(value)


#: One check per field of :class:`ResamplingOptions` (each a ValueError naming the argument and its flag); fields
#: without one (``query_groups``, ``baseline``) are checked against the qrels and runs by
#: :meth:`ResamplingOptions.for_runs`.
CONSTRAINTS: Dict[str, Callable[[Any], Any]] = {
    'n_samples': _optional(check_samples),
    'seed': check_seed,
    'ci': check_ci,
    'alpha': check_alpha,
    'test': check_test,
    'interval': _optional(interval_method),
    'population': _optional(check_population),
    'n_permutations': check_permutations,
}


def check_system_names(runs) -> None:
    """ValueError, before any work, where a system's name is empty or blank: its row in a table could not be told
    apart or named (round seven: '' and ' ' printed as two blank rows)."""
    blank = [n for n in runs if not str(n).strip()]
    if blank:
        raise ValueError(f'system name(s) {blank} are empty or blank: give every system a name')


@dataclass(frozen=True)
class ResamplingOptions:
    """What every resampling analysis reads, checked when made (:data:`CONSTRAINTS`).

    ``n_samples``: bootstrap resamples (None: :func:`default_samples` for the test and the comparisons asked, chosen by
    :meth:`for_runs`, which then sets ``chosen``); ``seed``; ``ci``: the intervals' level; ``alpha``: the tests'
    level; ``test``: the paired test (:data:`TESTS`); ``interval``: every measure's interval method (None: each
    measure's own, :attr:`~pyterrier_frechet.measures.resampling.Resampling.interval`); ``population``: the N queries
    the judged ones were drawn from without replacement, where those N are the population of interest;
    ``query_groups``: queries that are not independent, in these groups; ``baseline``: the run every other is compared
    with (None: every pair); ``n_permutations``: the randomisation test's (0: none)."""
    n_samples: Optional[int] = None
    seed: int = 0
    ci: float = 0.95
    alpha: float = 0.05
    test: str = DEFAULT_TEST
    interval: Optional[str] = None
    population: Optional[int] = None
    query_groups: Any = None
    baseline: Optional[str] = None
    n_permutations: int = 0
    chosen: bool = dataclasses.field(default=False, compare=False)

    def __post_init__(self):
        for name, check in CONSTRAINTS.items():
            check(getattr(self, name))
        check_test(self.test, self.population)
        check_groups_population(self.query_groups, self.population)

    def comparisons(self, n_runs: int) -> int:
        """How many pairs each measure's paired tests run over (each run against the baseline, or every pair)."""
        return n_comparisons(n_runs, self.baseline is not None)

    def for_runs(self, runs, qrels=None, discrimination: bool = False,
                 tau_draws: Optional[int] = None) -> 'ResamplingOptions':
        """These options for ``runs`` (and ``qrels``), checked before any work: the baseline among the runs, the
        query groups over the judged queries, the count of resamples (chosen where None) able to pass Holm's first
        step over the comparisons — with ``discrimination``, discriminative power's uncorrected tests at α; with
        ``tau_draws``, τ's percentile interval over at most that many of the resamples, enough of them for its tails
        (:func:`~pyterrier_frechet.core.intervals.check_tail_samples`)."""
        check_system_names(runs)
        check_baseline(self.baseline, runs)
        if qrels is not None:
            check_query_groups(self.query_groups, qrels, self.population)
        m = self.comparisons(len(runs))
        n_samples = default_samples(self.test, self.alpha, m) if self.n_samples is None else self.n_samples
        if len(runs) >= 2:
            check_test_resolution(n_samples if self.test == 'bootstrap' else None, self.alpha, self.n_permutations, m)
        if discrimination and len(runs) >= 3 and self.test == 'bootstrap':
            check_test_resolution(n_samples, self.alpha)
        if tau_draws is not None and len(runs) >= 3:
            check_tail_samples(min(n_samples, tau_draws), self.ci)
        return dataclasses.replace(self, n_samples=n_samples, chosen=self.n_samples is None)
