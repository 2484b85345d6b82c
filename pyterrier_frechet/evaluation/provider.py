"""The ir_measures provider of this package's measures.

Registered into ``ir_measures.DefaultPipeline`` when :mod:`pyterrier_frechet` is imported, so
``ir_measures.calc_aggregate``, ``ir_measures.iter_calc``, ``ir_measures.evaluator`` and ``pt.Experiment`` compute
every :class:`~pyterrier_frechet.measures.base.SetMeasure` beside the classical measures. The provider supports a
measure because of what it *is* (a ``SetMeasure`` with valid parameters), not by name, so a newly defined and
registered measure needs no change here.
"""
from typing import Dict, Iterator, List

import ir_measures
import pandas as pd
from ir_measures import Metric, providers

from ..measures.base import HISTOGRAMS, VECTORS, SetMeasure
from .frames import DOCNO, QID, SCORE, prepare_qrels, prepare_run


def compute_set_measures(measures, qrels: pd.DataFrame, run: pd.DataFrame, universe: List[str]) -> Dict[object, object]:
    """Each measure's outcome for ``run``: a :class:`~.vector_sets.VectorOutcome` for vector measures, a float for
    histogram measures. ``qrels`` and ``run`` are prepared frames (:mod:`.frames`)."""
    from .histograms import compute_histogram_measures
    from .vector_sets import compute_vector_measures
    by_input = {VECTORS: [], HISTOGRAMS: []}
    for m in measures:
        by_input[m.INPUT].append(m)
    out = {}
    if by_input[VECTORS]:
        out.update(compute_vector_measures(by_input[VECTORS], qrels, run, universe))
    if by_input[HISTOGRAMS]:
        out.update(compute_histogram_measures(by_input[HISTOGRAMS], qrels, run))
    return out


def outcome_value(outcome):
    """The value (float, or per-query dict) of an outcome of :func:`compute_set_measures`."""
    return getattr(outcome, 'value', outcome)


class SetEvaluator(providers.Evaluator):
    """Evaluates set measures: each one's value is reported for every query of the qrels, so that the mean over
    queries (what pt.Experiment shows) is exactly that number; per-query values (FD's jackknife) as they are."""

    def __init__(self, measures, qrels):
        qrels = prepare_qrels(qrels, 'pyterrier_frechet')
        super().__init__(measures, sorted(qrels[QID].unique()))
        self.qrels = qrels

    def _iter_calc(self, run) -> Iterator[Metric]:
        run = prepare_run(run, 'pyterrier_frechet')
        outcomes = compute_set_measures(self.measures, self.qrels, run, self.qrel_qids)
        for measure, outcome in outcomes.items():
            value = outcome_value(outcome)
            if isinstance(value, dict):  # per-query values (FD's jackknife pseudo-values)
                for qid, v in value.items():
                    yield Metric(query_id=qid, measure=measure, value=v)
                continue
            for qid in self.qrel_qids:
                yield Metric(query_id=qid, measure=measure, value=value)


class SetMeasureProvider(providers.Provider):
    """Computes every measure of pyterrier_frechet (FD, FDInf, KID, KNNPrecision, KNNRecall, DO, HSA, and any
    :class:`~pyterrier_frechet.measures.base.SetMeasure` registered later)."""
    NAME = 'pyterrier_frechet'

    @property
    def SUPPORTED_MEASURES(self):  # what ir_measures lists in its docs/errors: the registered set measures
        return [m for m in ir_measures.measures.registry.values() if isinstance(m, SetMeasure)]

    def supports(self, measure) -> bool:
        if not isinstance(measure, SetMeasure):
            return False
        measure.validate_params()  # a bad parameter is a ValueError naming it, not "no provider"
        return True

    def _evaluator(self, measures, qrels) -> providers.Evaluator:
        measures = list(measures)
        for measure in measures:
            if not isinstance(measure, SetMeasure):
                raise ValueError(f'unsupported measure {measure}')
            measure.validate_params()
        return SetEvaluator(measures, qrels)

    def run_inputs(self, measures):
        return [QID, DOCNO, SCORE]

    @classmethod
    def install(cls) -> 'SetMeasureProvider':
        """Register the provider with ir_measures and put it first in the default pipeline (idempotent)."""
        if cls.NAME in providers.registry:
            provider = providers.registry[cls.NAME]
        else:
            provider = providers.register(cls())
        if provider not in ir_measures.DefaultPipeline.providers:
            ir_measures.DefaultPipeline.providers.insert(0, provider)
        return provider


def register() -> SetMeasureProvider:
    """Register the provider with ir_measures (idempotent); returns it."""
    return SetMeasureProvider.install()
