"""What a measure of this package *is*, declared once on its definition, so that every other module asks the
measure instead of comparing names.

A measure of this package is a :class:`SetMeasure` (an ir_measures :class:`~ir_measures.measures.Measure`):

- ``INPUT`` — what it is computed from: ``'vectors'`` (the embeddings of FD's two sets: the judged-relevant
  documents of the query set and the top-k retrieved documents of each query; :class:`VectorMeasure`) or
  ``'histograms'`` (the normalised retrieval scores of judged documents; :class:`HistogramMeasure`);
- ``HIGHER_IS_BETTER`` — orientation (ir_measures' own attribute);
- :meth:`~SetMeasure.is_set_valued` — one number per query set (reported for every query of the qrels), or
  per-query values (FD's jackknife pseudo-values);
- ``RESAMPLING`` / :meth:`~SetMeasure.resampling` — how the bootstrap and the jackknife re-weight it exactly, its
  default interval and paired test (a :class:`~.resampling.Resampling`: :data:`~.definitions.GAUSSIAN` for FD,
  :data:`~.definitions.CONDITIONAL` for CFD, :data:`~.resampling.HISTOGRAM` for DO and HSA), or None (no exact
  path: the bootstrap refuses it, naming :func:`~pyterrier_frechet.analyses.bootstrap.bootstrap_naive`);
- :meth:`~VectorMeasure.statistic` — the value from the inputs, through a pure numpy core.

Measures of other packages (nDCG, RR, ...) are per-query measures: :func:`resampling` gives them
:data:`~.resampling.PER_QUERY`, :func:`is_set_measure` False. :func:`register_measure` makes a new definition known
to ir_measures' parser (``parse_measure``, ``pt.Experiment`` strings, the CLI) and to this package's provider;
:func:`unregister_measure` forgets it again. :func:`registered_measures` lists them (every list of measures in an
error, the CLI help or the docs comes from it).
"""
from typing import Dict, List, NamedTuple, Optional

import ir_measures
import numpy as np
from ir_measures import measures
from ir_measures.measures.base import Agg, MeanAgg, ParamInfo

from ..core.intervals import interval_method
from ..core.registry import check_name
from .resampling import HISTOGRAM, PAIRED_TESTS, PER_QUERY, VECTOR_STATS, Resampling

#: ``INPUT`` values.
VECTORS = 'vectors'
HISTOGRAMS = 'histograms'
ANSWERS = 'answers'  # the embeddings of a RAG pipeline's answers (``qanswer``) and of references (measures/answers.py)



class SetValueAgg(Agg):
    """Aggregates a set measure's per-query rows: they all carry the one set value, which is returned as is."""

    def __init__(self, name: str = 'FD'):
        self.name = name
        self.values = set()

    def add(self, value):
        self.values.add(value)

    def result(self):
        if not self.values:
            return float('nan')
        finite = {v for v in self.values if v == v}  # NaN != NaN: a NaN set value (e.g. HSA undefined) is one value
        if len(finite) > 1 or (finite and len(finite) < len(self.values)):
            raise ValueError(f'{self.name} rows of one evaluation carry different values {sorted(self.values)[:3]}: '
                             f'{self.name} is one number per query set and cannot be averaged over evaluations '
                             '(pt.Experiment with batch_size= evaluates each batch of queries on its own: drop batch_size)')
        return next(iter(self.values))


class SetMeasure(measures.Measure):
    """Base of this package's measures: ``M(10)`` is ``M@10``; unknown or bad parameters raise ValueError naming the
    measure and its parameters; set aggregation. Subclasses declare ``INPUT`` and implement ``statistic``."""

    INPUT: str = ''
    #: Whether one direction is better (``HIGHER_IS_BETTER`` means something): False for a descriptive measure such as
    #: ``SpreadRatio``, which no significance mark, contradiction or "best" should read as a verdict.
    ORIENTED: bool = True
    #: How the bootstrap and the jackknife re-weight it (see the module docstring); None: they refuse it.
    RESAMPLING: Optional[Resampling] = None

    def __call__(self, cutoff=None, **kwargs):
        """``M(10)`` is ``M@10``; keywords set the other parameters, e.g. ``FD(10, rel=2)``."""
        if cutoff is not None:
            kwargs['cutoff'] = cutoff
        unknown = sorted(set(kwargs) - set(self.SUPPORTED_PARAMS))
        if unknown:
            raise ValueError(f'{self.NAME} has no parameter(s) {unknown}; its parameters are {sorted(self.SUPPORTED_PARAMS)}')
        return super().__call__(**kwargs)

    def validate_params(self):
        """As ir_measures does, but a bad parameter raises ValueError (ir_measures uses assert)."""
        unknown = sorted(set(self.params) - set(self.SUPPORTED_PARAMS))
        if unknown:
            raise ValueError(f'{self.NAME} has no parameter(s) {unknown}; its parameters are {sorted(self.SUPPORTED_PARAMS)}')
        for name, value in self.params.items():  # bool is an int to isinstance: FD(rel=True) is not rel=1
            if isinstance(value, (bool, np.bool_)) and self.SUPPORTED_PARAMS[name].dtype not in (bool, None):
                raise ValueError(f'{self.NAME}: {name}={value!r} is a bool, but {name} takes '
                                 f'{getattr(self.SUPPORTED_PARAMS[name].dtype, "__name__", self.SUPPORTED_PARAMS[name].dtype)} values')
        try:
            super().validate_params()
        except AssertionError as ex:
            raise ValueError(f'{self}: {ex}') from ex

    def aggregator(self):
        # rows that vary (per-query values, centred pseudo-values) are averaged; a repeated set value is checked
        return SetValueAgg(self.NAME) if self.is_set_valued() and not self.has_rows() else MeanAgg()

    def has_rows(self) -> bool:
        """Whether the per-query rows ir_measures and pt.Experiment get are centred jackknife pseudo-values (their
        mean is the value, their paired t-test the jackknife test: :mod:`pyterrier_frechet.evaluation.experiment_rows`)
        rather than the value repeated: a set-valued measure each of whose balancing draws has a resampling of
        vector statistics (its leave-outs make the rows)."""
        return self.is_set_valued() and all(getattr(m.resampling(), 'statistics', None) == VECTOR_STATS
                                            for m in self.balancing_draws())

    def _param_repr(self, v):
        # encoders print as their own repr (e.g. VectorStore('...') or TextLookup(...) >> Embedder('...')), which
        # also keeps two FD measures with different encoders distinct (ir_measures compares measures by repr).
        return repr(v)

    # --- capabilities -------------------------------------------------------------------------------------
    def is_set_valued(self) -> bool:
        """One number per query set, reported for every query of the qrels (else one value per query)."""
        return True

    def resampling(self) -> Optional[Resampling]:
        """How the bootstrap re-weights this measure with these parameters (default ``RESAMPLING``), or None."""
        return self.RESAMPLING

    def balancing_draws(self) -> list:
        """The measures whose mean this one is: itself, or with ``per_query`` and ``draws=D`` > 1, the same measure
        with ``draws=1`` and the seeds ``seed, …, seed+D−1`` (ValueError for ``draws`` without ``per_query``)."""
        draws = self.positive_int('draws') if 'draws' in self.SUPPORTED_PARAMS else None
        if draws is None or draws == 1:
            return [self]
        if self.positive_int('per_query') is None:
            raise ValueError(f'{self}: draws={draws} averages over qrels balancing draws; it needs per_query=N')
        params = {k: v for k, v in self.params.items() if k != 'draws'}
        return [type(self)(**{**params, 'seed': self['seed'] + i}) for i in range(draws)]

    def positive_int(self, name: str) -> Optional[int]:
        """Parameter ``name`` as a positive int, None if not given; ValueError otherwise."""
        value = self[name]
        if value is measures.base._NOT_PROVIDED or value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
            raise ValueError(f'{self}: {name} must be a positive integer, got {value!r}')
        return int(value)


class VectorMeasure(SetMeasure):
    """A measure over the embeddings of FD's two sets. Implement ``statistic(relevant, retrieved)``."""
    INPUT = VECTORS
    #: True: :meth:`statistic` takes the vectors in their source precision (float32 from a VectorStore) and promotes
    #: them to float64 itself, a chunk at a time (FD), sparing a float64 copy of a large set; False: float64.
    SOURCE_PRECISION = False

    def statistic(self, relevant, retrieved: np.ndarray) -> float:
        """The value for the relevant and retrieved vectors (n×d float64 each, or in their source precision if
        :attr:`SOURCE_PRECISION`); ``relevant`` may also be what :meth:`reduce_relevant` made of the relevant vectors."""
        raise NotImplementedError(f'{type(self).__name__} does not define statistic()')

    def reduce_relevant(self, relevant: np.ndarray):
        """The part of :meth:`statistic`'s work that depends on the relevant vectors alone (not on the measure's
        parameters), which the evaluation does once for every run on the same qrels and passes to ``statistic``
        as ``relevant``. By default the vectors themselves (nothing to share)."""
        return relevant

    def per_query_values(self, relevant, rel_qids, retrieved, ret_qids, queries: List[str]) -> Dict[str, float]:
        """Per-query values, for measures whose :meth:`is_set_valued` is False."""
        raise NotImplementedError(f'{type(self).__name__} does not define per_query_values()')

    def query_weighted(self) -> bool:
        """Whether every query has total weight 1 on each side (each of its n documents weighing 1/n) instead of
        every document weight 1 — the bootstrap then re-weights per-query statistics accordingly."""
        return False

    def rows_by_influence(self) -> bool:
        """Whether its per-query rows under ir_measures and ``pt.Experiment`` come from its resampling's
        :meth:`~.resampling.Resampling.influence` (the infinitesimal jackknife) instead of exact leave-outs."""
        return False

    def decomposition(self) -> Optional[tuple]:
        """(its mean term, its covariance term, the spread ratio of its two sets, the same within queries) as measures,
        where its value is the FD of one pair of Gaussians (FD; :mod:`~pyterrier_frechet.analyses.anatomy` reads them);
        None for any other."""
        return None

    def needs_query_ids(self) -> bool:
        """Whether the value depends on which query each vector belongs to; such a measure implements
        :meth:`query_statistic`, which is called instead of :meth:`statistic`."""
        return self.query_weighted()

    def query_statistic(self, relevant, rel_qids, retrieved, ret_qids) -> float:
        """The value from the vectors and the query of each (for :meth:`needs_query_ids` measures)."""
        raise NotImplementedError(f'{type(self).__name__} does not define query_statistic()')


class HistogramMeasure(SetMeasure):
    """A measure over the score histograms of relevant and non-relevant judged documents: ``statistic(histograms)``
    calls its core function (a function of a ``core.histogram.Histograms``, imported inside the method)."""
    INPUT = HISTOGRAMS
    RESAMPLING = HISTOGRAM

    def statistic(self, histograms) -> float:
        raise NotImplementedError(f'{type(self).__name__} does not define statistic(histograms)')


#: Parameters every vector measure shares (FD's two sets and their vectors).
VECTOR_PARAMS = {
    'cutoff': ParamInfo(dtype=int, required=False, desc='ranking cutoff threshold (top-k per query); all retrieved documents if omitted'),
    'rel': ParamInfo(dtype=int, default=1, desc='minimum relevance label to be considered relevant (inclusive)'),
    'urr': ParamInfo(dtype=bool, default=False, desc='use the first cutoff unjudged documents of each ranking (Unjudged Retrieved Results)'),
    'per_query': ParamInfo(dtype=int, required=False, desc='keep at most this many relevant documents per query (highest grade first, random within a grade)'),
    'seed': ParamInfo(dtype=int, default=0, desc='random seed of the per_query balancing'),
    'draws': ParamInfo(dtype=int, default=1, desc='with per_query: the mean over this many balancing draws (seeds seed, '
                       'seed+1, ...), so the value does not hang on one random draw'),
    'encoder': ParamInfo(default=None, desc='transformer or VectorStore giving doc_vec for a docno; None: the run\'s doc_vec and the default encoder'),
    'missing': ParamInfo(dtype=str, choices=['error', 'drop'], default='error', desc='documents without a vector: raise (error) or leave out with a counted log (drop)'),
}

#: Parameters every histogram measure shares.
HISTOGRAM_PARAMS = {
    'cutoff': ParamInfo(dtype=int, required=False, desc='ranking cutoff threshold (top-k per query); all retrieved documents if omitted'),
    'rel': ParamInfo(dtype=int, default=1, desc='minimum relevance label to be considered relevant (inclusive)'),
    'bins': ParamInfo(dtype=int, default=10, desc='equally spaced bins over the normalised scores [0, 1]'),
    'norm': ParamInfo(dtype=str, choices=['minmax', 'rank'], default='minmax',
                      desc='per-query normalisation: min-max of the scores, or of the ranks (for runs whose scores are not comparable)'),
    'unjudged': ParamInfo(dtype=str, choices=['skip', 'nonrel'], default='skip',
                          desc='retrieved documents without a judgment: left out (skip) or counted as non-relevant (nonrel)'),
}


VectorMeasure.SUPPORTED_PARAMS = VECTOR_PARAMS  # a subclass adds its own: {**VECTOR_PARAMS, 'degree': ...}
HistogramMeasure.SUPPORTED_PARAMS = HISTOGRAM_PARAMS


def register_measure(measure: SetMeasure) -> SetMeasure:
    """Make ``measure`` (an instance of a :class:`SetMeasure` subclass) known to ir_measures' parser; this
    package's provider computes every :class:`SetMeasure`. Returns the measure, so
    ``MMD = register_measure(_MMD())``."""
    if not isinstance(measure, SetMeasure) or measure.INPUT not in (VECTORS, HISTOGRAMS, ANSWERS):
        raise ValueError(f'{measure!r} is not a VectorMeasure, HistogramMeasure or AnswerMeasure instance')
    check_name(getattr(measure, 'NAME', None), measures.registry, 'measure')  # ir_measures' own names included
    if not isinstance(getattr(measure, 'HIGHER_IS_BETTER', None), bool):
        raise ValueError(f'measure {measure.NAME}: HIGHER_IS_BETTER must be True or False, got '
                         f'{getattr(measure, "HIGHER_IS_BETTER", None)!r}')
    if not isinstance(measure.SUPPORTED_PARAMS, dict) or not all(isinstance(k, str) for k in measure.SUPPORTED_PARAMS):
        raise ValueError(f'measure {measure.NAME}: SUPPORTED_PARAMS must map parameter names to ParamInfo')
    measures.register(measure)
    return measure


def unregister_measure(measure: SetMeasure) -> None:
    """Forget a measure :func:`register_measure` made known (ValueError if it is not registered): its name no longer
    parses. For measures defined in tests and notebooks."""
    if measures.registry.get(measure.NAME) is not measure:
        raise ValueError(f'{measure.NAME} is not a registered measure; registered: {[str(m) for m in registered_measures()]}')
    del measures.registry[measure.NAME]


def registered_measures() -> List[SetMeasure]:
    """This package's registered measures (and any defined elsewhere through :func:`register_measure`), in
    registration order."""
    return list(dict.fromkeys(m for m in measures.registry.values() if isinstance(m, SetMeasure)))


def resampled_names() -> List[str]:
    """The names of the registered measures the bootstrap resamples (those that declare a resampling with their
    default parameters), for messages, help and docs."""
    return [m.NAME for m in registered_measures() if m.resampling() is not None]


def unresampled_names() -> List[str]:
    """The names of the registered measures the bootstrap refuses."""
    return [m.NAME for m in registered_measures() if m.resampling() is None]


# --- questions any code may ask of any measure (this package's or another's) ---------------------------------

def is_set_measure(measure) -> bool:
    """One of this package's measures (one value per query set, or FD's jackknife)."""
    return isinstance(measure, SetMeasure)


def is_vector_measure(measure) -> bool:
    return isinstance(measure, SetMeasure) and measure.INPUT == VECTORS


def is_answer_measure(measure) -> bool:
    """A measure of generated answers (reads the run's ``qanswer``, not its ranking)."""
    return isinstance(measure, SetMeasure) and measure.INPUT == ANSWERS


def resampling(measure) -> Optional[Resampling]:
    """How the bootstrap re-weights ``measure``: its own declaration (:meth:`SetMeasure.resampling`),
    :data:`~.resampling.PER_QUERY` for any measure with per-query values (e.g. nDCG), or None."""
    if isinstance(measure, SetMeasure):
        # a mean over balancing draws has no single pair of sets to re-weight
        return _checked_resampling(measure, measure.resampling()) if len(measure.balancing_draws()) == 1 else None
    # the per-query resampling re-weights a mean of per-query values: a measure aggregated otherwise (NumRet sums
    # over queries) would get a bootstrap and an interval of its mean beside its value, the sum
    return PER_QUERY if _mean_aggregated(measure) else None


class MeasurePlan(NamedTuple):
    """A measure resolved once for the resampling analyses (:func:`measure_plan`): its table label
    (:func:`column_label`), its :class:`~.resampling.Resampling`, the interval method's name — the one asked for, else
    the resampling's default — and that method (:class:`~pyterrier_frechet.core.intervals.IntervalMethod`). The
    bootstrap's loops and its summary rows read these fields, nothing resolves the measure again."""
    measure: object
    label: str
    resampling: Resampling
    interval: str
    method: object

    @property
    def estimand(self) -> str:
        """What the interval is for, where it is the resampling's own method (else the method's summary says it)."""
        return self.resampling.estimand if self.interval == self.resampling.interval else ''


def measure_plan(measure, interval: Optional[str] = None) -> MeasurePlan:
    """:class:`MeasurePlan` of a measure the bootstrap resamples (ValueError naming it where it has no resampling:
    :func:`resampling`), with ``interval`` (a name in :data:`~pyterrier_frechet.core.intervals.INTERVAL_METHODS`) or
    its resampling's default interval."""
    res = resampling(measure)
    if res is None:
        raise ValueError(f'{measure}: {unresampled_reason(measure)}')
    name = interval or res.interval
    return MeasurePlan(measure, column_label(measure), res, name, interval_method(name))


def _mean_aggregated(measure) -> bool:
    aggregator = getattr(measure, 'aggregator', None)
    return not callable(aggregator) or isinstance(aggregator(), MeanAgg)


def _checked_resampling(measure, declared) -> Optional[Resampling]:
    """What a measure declares as its resampling, checked before the bootstrap uses it (a third party's too): None, or a
    :class:`~.resampling.Resampling` whose default interval is a registered method and whose paired test is known."""
    if declared is None:
        return None
    if not isinstance(declared, Resampling):
        raise ValueError(f'{measure}: resampling() must return a Resampling (or None), got {type(declared).__name__}')
    interval_method(declared.interval)  # a ValueError naming the registered ones
    if declared.paired_test not in PAIRED_TESTS:
        raise ValueError(f"{measure}: its resampling's paired_test must be one of {PAIRED_TESTS}, got "
                         f'{declared.paired_test!r}')
    return declared


def unresampled_reason(measure) -> str:
    """Why the bootstrap gives ``measure`` no interval, in a few words for a table's caption ('' where it does)."""
    if resampling(measure) is not None:
        return ''
    if isinstance(measure, SetMeasure) and len(measure.balancing_draws()) > 1:
        return f'a mean over {len(measure.balancing_draws())} balancing draws, not one pair of sets to resample'
    if not isinstance(measure, SetMeasure) and not _mean_aggregated(measure):
        return f'{getattr(measure, "NAME", measure)} aggregates its per-query values otherwise than by their mean'
    return f'{getattr(measure, "NAME", measure)} declares no resampling'


#: Columns of a results table that name no measure and are better lower (pt.Experiment's mean response time).
LOWER_IS_BETTER_COLUMNS = frozenset({'mrt'})


def higher_is_better(measure) -> bool:
    """Whether larger values of ``measure`` are better: its ``HIGHER_IS_BETTER`` (ir_measures' own measures declare
    none: higher is better). ``measure`` may also be a column name of a results table ('FD(rel=2)@10', 'nDCG@10'):
    that of the measure it names; a column that names none is higher-is-better, except
    :data:`LOWER_IS_BETTER_COLUMNS`. The one answer for every table, plot and correlation."""
    if isinstance(measure, str):
        if measure in LOWER_IS_BETTER_COLUMNS:
            return False
        try:
            measure = ir_measures.parse_measure(measure)
        except (NameError, ValueError, SyntaxError, KeyError):
            return True
    return bool(getattr(measure, 'HIGHER_IS_BETTER', True))



def column_label(measure) -> str:
    """The name a results table gives ``measure``: its ``str``, without the ``missing=`` policy of a vector
    measure (the counts of dropped documents are reported in their own columns)."""
    if is_vector_measure(measure) and 'missing' in measure.params:
        return str(measure(missing='error'))
    return str(measure)
