"""Bootstrap confidence intervals from an estimate and its resampled values (pure numpy/scipy).

Given the estimate θ̂ on the full query set, B bootstrap values θ*₁..θ*_B (queries resampled with replacement)
and, for BCa, the leave-one-query-out jackknife values θ₍ᵢ₎:

``percentile``
    [q_{α/2}, q_{1−α/2}] of θ*. Right when θ* − θ̂ has no bias; FD's does (a resample repeats queries, and
    repeated documents shrink the fitted covariance), so for FD it lies above θ̂ and misses.
``shifted``
    the percentile interval moved by the bootstrap bias b̂ = mean(θ*) − θ̂: [q_{α/2} − b̂, q_{1−α/2} − b̂]. The
    bootstrap's spread, centred on θ̂: an interval for E[θ̂ₙ], the value the statistic has on average at this
    number of queries, which θ̂ estimates without bias by definition.
``basic``
    [2θ̂ − q_{1−α/2}, 2θ̂ − q_{α/2}]: the distribution of θ* − θ̂ stands in for that of θ̂ − θ, which carries
    the estimator's bias over to the interval (Davison & Hinkley 1997, §5.2). It targets the population value
    θ and is centred near the bias-corrected estimate 2θ̂ − mean(θ*), which is what it should be printed beside.
``bca``
    bias-corrected and accelerated (Efron 1987): percentile levels moved by z₀ = Φ⁻¹(share of θ* < θ̂) and the
    jackknife acceleration a = Σ(θ̄₍·₎ − θ₍ᵢ₎)³ / (6 (Σ(θ̄₍·₎ − θ₍ᵢ₎)²)^{3/2}). Undefined (NaN) when every θ*
    lies on one side of θ̂ — which happens for FD on real data (all 1000 DL19 resamples above the estimate).

``jackknife``
    θ̂ ± z_{1−α/2}·SE_J with the jackknife standard error SE_J² = (n−1)/n Σ(θ₍ᵢ₎ − θ̄₍·₎)² over the n queries —
    an interval for E[θ̂ₙ] that, unlike the bootstrap, never duplicates a query (duplicated documents make the
    bootstrap's FD vary more than FD over fresh query sets does).
``jackknife_log``
    the jackknife interval of log θ̂, exponentiated: [θ̂·exp(−z·SE_J(log)), θ̂·exp(z·SE_J(log))] with SE_J(log) the
    jackknife standard error of the leave-one-out log θ₍ᵢ₎. For a positive, right-skewed statistic (FD of a good
    system lies near 0 and cannot go below it), an interval for E[θ̂ₙ] that is asymmetric as the statistic is, and
    never negative. NaN when θ̂ or a leave-one-out value is not positive.
``jackknife_bc``
    the jackknife bias-corrected estimate nθ̂ − (n−1)θ̄₍·₎ ± z·SE_J: removes the O(1/n) bias of FD, an interval
    for the population value.
``t``
    θ̂ ± t_{m−1, 1−α/2}·SE_J over the m leave-out values: for a per-query mean (nDCG, RR) SE_J = s/√n exactly, so
    this is the Student t interval for the population mean — the interval that matches the paired t-test of
    ``pt.Experiment`` and ``scipy.stats.ttest_rel`` — and, with one leave-out per query group (the cluster
    jackknife), the cluster-robust t interval on G − 1 degrees of freedom. It is clipped to the range of the
    jackknife pseudo-values m·θ̂ − (m−1)·θ₍ᵢ₎ — for a mean, the per-query values themselves —, so the interval of a
    bounded measure stays inside its bounds (RR@10 near 1 on TREC DL 2019 reached 1.02 unclipped); the population
    mean lies in that range unless every query falls on one side of it. The percentile bootstrap of a mean is
    narrower by √((n−1)/n)·z/t (0.96 at 43 queries) and under-covered wherever the two were measured (pt_docs
    "Calibration").

In every jackknife method z is the upper quantile of Student t on m − 1 degrees of freedom over the m finite
leave-out values (:func:`jackknife_df`; Tukey's t interval for the jackknife, the default of every interval and test);
``df`` overrides it (G − 1 for G query groups) and ``df=math.inf`` gives the normal reference, an earlier default,
which the calibration harness still records beside t.

**Finite populations** (``fpc``). Every method above treats the n queries as drawn independently from an infinite
population. When they are a draw *without replacement* of n from a finite population of N queries (the judged
queries of a collection *are* the population of interest), the variance of θ̂ₙ over such draws is smaller by the
finite-population correction 1 − n/N (n = N: no variance at all). ``fpc = 1 − n/N`` multiplies the variance each
interval is built from: the jackknife standard errors by √fpc; the bootstrap intervals' deviations from θ̂ by
√fpc (the rescaled with-replacement bootstrap). BCa has no such form and refuses ``fpc < 1``.

Which one a statistic should use is measured, not assumed: :mod:`pyterrier_frechet.analyses.calibration`
simulates query populations with known values and reports each method's coverage.
"""
import inspect
from typing import Callable, Dict, NamedTuple, Optional, Tuple

import numpy as np

from .registry import check_name, check_text


def _finite(samples) -> np.ndarray:
    samples = np.asarray(samples, dtype=np.float64)
    return samples[np.isfinite(samples)]


def bias_corrected(estimate: float, samples) -> float:
    """The bootstrap bias-corrected estimate 2θ̂ − mean(θ*) (NaN without finite samples)."""
    valid = _finite(samples)
    return float(2 * estimate - valid.mean()) if len(valid) else float('nan')


def jackknife_corrected(estimate: float, jackknife) -> float:
    """The jackknife bias-corrected estimate n·θ̂ − (n−1)·mean(θ₍ᵢ₎) over the n leave-one-out values."""
    jack = _finite(jackknife)
    return float(len(jack) * estimate - (len(jack) - 1) * jack.mean()) if len(jack) else float('nan')


def printed_estimate(method: str, estimate: float, samples, jackknife: Optional[np.ndarray] = None) -> float:
    """The point a ``method`` interval is centred for, to print beside it (:attr:`IntervalMethod.centre`): the
    bias-corrected estimate for ``basic`` and ``jackknife_bc``, else the estimate itself."""
    centre = interval_method(method).centre
    if centre == 'bootstrap':
        return bias_corrected(estimate, samples)
    if centre == 'jackknife':
        return jackknife_corrected(estimate, jackknife)
    return float(estimate)


def check_population(population) -> None:
    """A finite query population N is a positive number of queries (``--population N``)."""
    if isinstance(population, bool) or not isinstance(population, (int, np.integer)) or population < 1:
        raise ValueError(f'population must be a positive number of queries (--population N), got {population!r}')


def finite_population_correction(n: int, population: Optional[int]) -> float:
    """The variance factor 1 − n/N of a draw of ``n`` queries without replacement from a population of
    ``population`` = N queries (1.0 when ``population`` is None: an infinite population)."""
    if population is None:
        return 1.0
    check_population(population)
    if n > population:
        raise ValueError(f'population={population} (--population) is smaller than the {n} evaluated queries: it is '
                         'the number of queries the evaluated ones were drawn from, at least as many as were drawn')
    return 1.0 - n / population


def check_ci(ci) -> float:
    """The level of an interval, in (0, 1) (``--ci``): one check for every entry point."""
    if isinstance(ci, bool) or not isinstance(ci, (int, float, np.integer, np.floating)) or not 0 < ci < 1:
        raise ValueError(f'ci (--ci) must be in (0, 1), got {ci!r}')
    return float(ci)


def check_tail_samples(n_samples: int, ci: float) -> None:
    """Refuse an interval read from ``n_samples`` resampled values (a percentile-type bootstrap interval, τ's) whose
    tails at level ``ci`` hold less than one of them, (1 − ci)/2 · n < 1: its ends would be the extreme values, whatever
    the level says. The one check, before any work, of every entry point that prints such an interval."""
    if n_samples * (1 - ci) / 2 < 1:
        raise ValueError(f'n_samples={n_samples} (--samples): a {ci:.0%} interval needs at least '
                         f'{int(np.ceil(2 / (1 - ci) - 1e-9))} bootstrap samples (each tail holds (1 - ci)/2 of them)')


def check_fpc(fpc: float) -> float:
    fpc = float(fpc)
    if not 0 <= fpc <= 1:
        raise ValueError(f'fpc (the finite-population correction 1 − n/N) must be in [0, 1], got {fpc}')
    return fpc


def jackknife_se(values, fpc: float = 1.0) -> float:
    """The jackknife standard error over n leave-out values (one per query, or per group of the delete-a-group
    jackknife): ``SE_J = √(fpc · (n−1)/n · Σ(θ₍ᵢ₎ − θ̄₍·₎)²)``; ``values`` already finite, n ≥ 2."""
    values = np.asarray(values, dtype=np.float64)
    n = len(values)
    return float(np.sqrt(fpc) * np.sqrt((n - 1) / n * np.sum((values - values.mean()) ** 2)))


def jackknife_df(jackknife) -> float:
    """Degrees of freedom of the jackknife's Student t reference: m − 1 over the m finite leave-out values (n − 1
    for n queries, G − 1 for G query groups). The one default of every jackknife interval (:func:`interval`) and test
    (:func:`~pyterrier_frechet.analyses.significance.jackknife_p`)."""
    return float(np.isfinite(np.asarray(jackknife, dtype=np.float64)).sum() - 1)


def jackknife_quantile(alpha: float, df: float) -> float:
    """The upper ``alpha`` quantile of the jackknife intervals' and tests' reference: Student t on ``df`` degrees of
    freedom (:func:`jackknife_df`), the standard normal for ``df = math.inf``."""
    import scipy.stats
    if df == np.inf:
        return float(scipy.stats.norm.ppf(1 - alpha))
    if not df >= 1:
        raise ValueError(f'the t reference needs at least 1 degree of freedom (2 query groups), got {df}')
    return float(scipy.stats.t.ppf(1 - alpha, df))


def interval(method: str, estimate: float, samples, ci: float = 0.95,
             jackknife: Optional[np.ndarray] = None, fpc: float = 1.0, df: Optional[float] = None) -> Tuple[float, float]:
    """The ``method`` interval (a name in :data:`INTERVAL_METHODS`) at level ``ci``; (NaN, NaN) when it is undefined
    (no finite samples or jackknife values; for BCa, all samples on one side of the estimate or no jackknife spread).
    ``fpc``: the finite-population correction 1 − n/N multiplying the interval's variance (module docstring;
    :func:`finite_population_correction`); 1 (default) for an infinite query population. ``df``: the degrees of
    freedom of the jackknife methods' Student t reference (None: m − 1 over the m finite leave-out values,
    :func:`jackknife_df`; ``math.inf``: the normal reference)."""
    m = interval_method(method)
    check_ci(ci)
    fpc = check_fpc(fpc)
    if fpc < 1 and m.finite_population is None:
        raise ValueError(f'the {m.title} interval has no finite-population form; use a jackknife interval with a '
                         'population size (--interval jackknife_log), or leave the population out')
    valid = _finite(samples)
    if (len(valid) == 0 and not m.from_jackknife) or not np.isfinite(estimate):
        return float('nan'), float('nan')
    if m.needs_jackknife and jackknife is None:
        raise ValueError(f'the {m.name} interval needs the jackknife (leave-one-query-out) values')
    alpha = (1 - ci) / 2
    jack = None if jackknife is None else _finite(jackknife)
    low, high = _checked(m, *_pair(m, m.compute(estimate, valid, jack, alpha, fpc, df)))
    if fpc < 1 and m.finite_population == 'deviations':  # the bootstrap's deviations from θ̂, rescaled
        scale = float(np.sqrt(fpc))
        low, high = estimate + scale * (low - estimate), estimate + scale * (high - estimate)
    return float(low), float(high)


def _quantiles(valid, alpha):
    return np.quantile(valid, [alpha, 1 - alpha])


def _percentile(estimate, valid, jack, alpha, fpc, df):
    return _quantiles(valid, alpha)


def _shifted(estimate, valid, jack, alpha, fpc, df):
    return _quantiles(valid, alpha) - (valid.mean() - estimate)


def _basic(estimate, valid, jack, alpha, fpc, df):
    q_low, q_high = _quantiles(valid, alpha)
    return 2 * estimate - q_high, 2 * estimate - q_low


def _bca(estimate, valid, jack, alpha, fpc, df):
    levels = bca_levels(estimate, valid, jack, 1 - 2 * alpha)
    return (float('nan'), float('nan')) if levels is None else np.quantile(valid, levels)


def _z(alpha, jack, df):
    return jackknife_quantile(alpha, jackknife_df(jack) if df is None else df)


def _jackknife_log(estimate, valid, jack, alpha, fpc, df):
    if len(jack) < 2 or estimate <= 0 or np.any(jack <= 0):
        return float('nan'), float('nan')
    se = jackknife_se(np.log(jack), fpc)
    z = _z(alpha, jack, df)
    return estimate * np.exp(-z * se), estimate * np.exp(z * se)


def _jackknife_normal(centre):
    """θ̂ (or the bias-corrected estimate, ``centre='jackknife'``) ± z·SE_J."""
    def compute(estimate, valid, jack, alpha, fpc, df):
        if len(jack) < 2:
            return float('nan'), float('nan')
        mid = jackknife_corrected(estimate, jack) if centre == 'jackknife' else estimate
        half = _z(alpha, jack, df) * jackknife_se(jack, fpc)
        return mid - half, mid + half
    return compute


def _t(estimate, valid, jack, alpha, fpc, df):
    low, high = _jackknife_normal('value')(estimate, valid, jack, alpha, fpc, df)
    if len(jack) < 2:
        return low, high
    pseudo = len(jack) * estimate - (len(jack) - 1) * jack  # within the pseudo-values' range (a mean's: the per-query values')
    return max(low, float(pseudo.min())), min(high, float(pseudo.max()))


class IntervalMethod(NamedTuple):
    """One interval method: how it is computed, what it is an interval for, and how a table names it — said once,
    here; every summary, caption and command-line note reads it from :data:`INTERVAL_METHODS`.

    ``compute(estimate, samples, jackknife, alpha, fpc, df) -> (low, high)`` gets the finite resampled values, the
    finite leave-out values (None without them), the tail probability α = (1 − ci)/2, the finite-population
    correction and the t reference's degrees of freedom (None: m − 1). ``finite_population``: how ``fpc`` enters —
    ``'variance'`` (``compute`` uses it), ``'deviations'`` (the bootstrap's deviations from θ̂ are rescaled by √fpc
    after ``compute``) or None (no finite-population form: refused). ``centre``: the point it is centred for, printed
    beside it — ``'value'``, ``'bootstrap'`` (2θ̂ − mean θ*) or ``'jackknife'`` (n·θ̂ − (n−1)·mean θ₍ᵢ₎)."""
    name: str
    title: str                 # a caption's words: 'percentile bootstrap'
    estimand_label: str        # a table cell: what the interval is for
    estimand: str              # the same in one sentence
    compute: Callable
    needs_jackknife: bool = False
    from_jackknife: bool = False     # built from the leave-outs alone (no resamples)
    positive_only: bool = False      # on the log scale: for a positive statistic (FD), not a signed difference
    finite_population: Optional[str] = 'deviations'
    centre: str = 'value'


_NOT_CALIBRATED = 'not calibrated for FD at d/n > 1'

#: Every interval method by name. Adding one: an :class:`IntervalMethod` passed to :func:`register_interval_method`
#: and its calibration row (docs/CONTRIBUTING.md, "Adding an interval method"; tests/test_add_an_interval.py).
INTERVAL_METHODS: Dict[str, IntervalMethod] = {}


def register_interval_method(method: IntervalMethod) -> IntervalMethod:
    """Make ``method`` available to every entry point by its name (``interval=``, a resampling's default); a name
    already taken is a ValueError."""
    if not isinstance(method, IntervalMethod):
        raise ValueError(f'register an IntervalMethod(name, title, estimand_label, estimand, compute, ...), got '
                         f'{type(method).__name__}')
    check_name(method.name, INTERVAL_METHODS, 'interval method')
    for field in ('title', 'estimand_label', 'estimand'):
        check_text(getattr(method, field), field, f'interval method {method.name!r}')
    _check_compute(method)
    for flag in ('needs_jackknife', 'from_jackknife', 'positive_only'):
        if not isinstance(getattr(method, flag), bool):
            raise ValueError(f'interval method {method.name!r}: {flag} must be True or False, got {getattr(method, flag)!r}')
    if method.finite_population not in ('variance', 'deviations', None):
        raise ValueError(f"{method.name}: finite_population must be 'variance', 'deviations' or None, "
                         f"got {method.finite_population!r}")
    if method.centre not in ('value', 'bootstrap', 'jackknife'):
        raise ValueError(f"{method.name}: centre must be 'value', 'bootstrap' or 'jackknife', got {method.centre!r}")
    INTERVAL_METHODS[method.name] = method
    return method


def _check_compute(method: IntervalMethod) -> None:
    """``compute`` is callable with the six arguments :func:`interval` passes it."""
    if not callable(method.compute):
        raise ValueError(f'interval method {method.name!r}: compute must be callable (estimate, samples, jackknife, '
                         f'alpha, fpc, df) -> (low, high), got {type(method.compute).__name__}')
    try:
        inspect.signature(method.compute).bind(*range(6))
    except TypeError as ex:
        raise ValueError(f'interval method {method.name!r}: compute must take (estimate, samples, jackknife, alpha, '
                         f'fpc, df): {ex}') from None
    except ValueError:  # a builtin without a signature: taken as it is
        pass


def _pair(method: IntervalMethod, result) -> Tuple[object, object]:
    try:
        low, high = result
    except (TypeError, ValueError):
        raise ValueError(f'interval method {method.name!r} returned {result!r}, not (low, high)') from None
    return low, high


def _checked(method: IntervalMethod, low, high) -> Tuple[float, float]:
    """An interval as a method returned it, before anything prints it: (NaN, NaN) for undefined, or two finite ends
    with low ≤ high; anything else is the method's error, named."""
    try:
        low, high = float(low), float(high)
    except (TypeError, ValueError):
        raise ValueError(f'interval method {method.name!r} returned {(low, high)!r}, not two numbers') from None
    if np.isnan(low) and np.isnan(high):
        return low, high
    if not (np.isfinite(low) and np.isfinite(high)):
        raise ValueError(f'interval method {method.name!r} returned ({low}, {high}): an interval has two finite ends '
                         '(or (nan, nan) where it is undefined)')
    if low > high + 1e-12 * max(1.0, abs(low), abs(high)):
        raise ValueError(f'interval method {method.name!r} returned ({low}, {high}): its low end is above its high end')
    return low, max(low, high)  # equal ends apart by round-off: one point


def interval_method(name: str) -> IntervalMethod:
    """The registered method ``name``, or a ValueError listing the registered ones."""
    try:
        return INTERVAL_METHODS[name]
    except (KeyError, TypeError):
        raise ValueError(f'interval method must be one of {tuple(INTERVAL_METHODS)}, got {name!r}') from None


for _method in (
        IntervalMethod('percentile', 'percentile bootstrap', 'population value',
                       'the population value of the measure (percentile bootstrap over queries)', _percentile),
        IntervalMethod('shifted', 'shifted percentile bootstrap', 'E[θ̂ₙ] at this number of queries',
                       'E[θ̂ₙ] at this number of queries (bootstrap spread centred on the full-set value)', _shifted),
        IntervalMethod('basic', 'basic bootstrap', f'population value ({_NOT_CALIBRATED})',
                       f'the population value (bootstrap bias-corrected; {_NOT_CALIBRATED})', _basic,
                       centre='bootstrap'),
        IntervalMethod('bca', 'BCa bootstrap', 'population value',
                       'the population value (BCa; undefined for FD when every resample lies above the full-set value)',
                       _bca, needs_jackknife=True, finite_population=None),
        IntervalMethod('jackknife', 'jackknife', 'E[θ̂ₙ] at this number of queries',
                       'E[θ̂ₙ] at this number of queries (jackknife over queries)', _jackknife_normal('value'),
                       needs_jackknife=True, from_jackknife=True, finite_population='variance'),
        IntervalMethod('jackknife_log', 'log-scale jackknife', 'E[FD̂ₙ] at this number of queries',
                       'E[FD̂ₙ], the expected value of the measure over query sets of this size drawn from the same '
                       'query population (the full-set value is its estimate; jackknife over queries, log scale)',
                       _jackknife_log, needs_jackknife=True, from_jackknife=True, positive_only=True,
                       finite_population='variance'),
        IntervalMethod('jackknife_bc', 'bias-corrected jackknife', f'population value ({_NOT_CALIBRATED})',
                       f'the population value (jackknife bias-corrected; {_NOT_CALIBRATED})',
                       _jackknife_normal('jackknife'), needs_jackknife=True, from_jackknife=True,
                       finite_population='variance', centre='jackknife'),
        IntervalMethod('t', 'Student t', 'population mean',
                       'the population mean of a per-query measure (Student t: the mean ± t_{n−1}·s/√n over queries)',
                       _t, needs_jackknife=True, from_jackknife=True, finite_population='variance')):
    register_interval_method(_method)

#: The built-in methods' names (the registry may hold more: :data:`INTERVAL_METHODS`).
METHODS = tuple(INTERVAL_METHODS)


def methods_where(attribute: str) -> Tuple[str, ...]:
    """The registered methods whose ``attribute`` (``needs_jackknife``, ``from_jackknife``, ``positive_only``) holds."""
    return tuple(name for name, m in INTERVAL_METHODS.items() if getattr(m, attribute))


def bca_levels(estimate: float, samples: np.ndarray, jackknife: Optional[np.ndarray], ci: float):
    """The two quantile levels of the BCa interval, or None where BCa is undefined."""
    import scipy.stats
    if jackknife is None:
        raise ValueError('the BCa interval needs the jackknife (leave-one-query-out) values')
    jack = _finite(jackknife)
    below = (np.sum(samples < estimate) + 0.5 * np.sum(samples == estimate)) / len(samples)
    if not 0 < below < 1 or len(jack) < 3:
        return None
    z0 = scipy.stats.norm.ppf(below)
    dev = jack.mean() - jack
    denom = 6.0 * np.sum(dev ** 2) ** 1.5
    if denom == 0:
        return None
    accel = np.sum(dev ** 3) / denom
    alpha = (1 - ci) / 2
    levels = []
    for z in scipy.stats.norm.ppf([alpha, 1 - alpha]):
        shifted = z0 + (z0 + z) / (1 - accel * (z0 + z))
        levels.append(float(scipy.stats.norm.cdf(shifted)))
    return levels
