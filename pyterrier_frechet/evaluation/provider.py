"""The ir_measures provider of this package's measures.

Registered into ``ir_measures.DefaultPipeline`` when :mod:`pyterrier_frechet` is imported, so
``ir_measures.calc_aggregate``, ``ir_measures.iter_calc``, ``ir_measures.evaluator`` and ``pt.Experiment`` compute
every :class:`~pyterrier_frechet.measures.base.SetMeasure` beside the classical measures. The provider supports a
measure because of what it *is* (a ``SetMeasure`` with valid parameters), not by name, so a newly defined and
registered measure needs no change here.
"""
from typing import Dict, Iterator, List, Optional

import ir_measures
import numpy as np
import pandas as pd
from ir_measures import Metric, providers
from ir_measures.util import RunConverter

from ..measures.base import ANSWERS, HISTOGRAMS, VECTORS, SetMeasure, is_answer_measure
from .experiment_call import Caller, caller, paired_test_is_run, rows_are_read, warn_once_per_experiment
from .experiment_rows import warn_constant_rows
from .frames import DOCNO, LABEL, QID, SCORE, has_pyterrier_names, prepare_qrels, prepare_run, pyterrier_names_hint
from .relevance import graded_threshold_note
from .selection import Judgments, QrelsMemo


def compute_set_measures(measures, judgments: Judgments, run: pd.DataFrame, universe: List[str],
                         rows: bool = False) -> Dict[object, object]:
    """Each measure's outcome for ``run``: a :class:`~.vector_sets.VectorOutcome` for vector measures, a float for
    histogram measures. ``judgments``: the qrels coded once (:class:`~.selection.Judgments` of a prepared frame);
    ``run``: a prepared frame (:mod:`.frames`); ``rows``: also form the per-query rows of :mod:`.experiment_rows`."""
    from .histograms import compute_histogram_measures
    from .vector_sets import compute_vector_measures
    by_input = {VECTORS: [], HISTOGRAMS: [], ANSWERS: []}
    for m in measures:
        by_input[m.INPUT].append(m)
    if by_input[ANSWERS]:
        raise ValueError(f'{", ".join(map(str, by_input[ANSWERS]))} score the answers of RAG pipelines (qid, qanswer): '
                         'evaluate them with pt.Experiment or ir_measures; this evaluation takes rankings')
    out = {}
    if by_input[VECTORS]:
        out.update(compute_vector_measures(by_input[VECTORS], judgments, run, universe, rows=rows))
    if by_input[HISTOGRAMS]:
        out.update(compute_histogram_measures(by_input[HISTOGRAMS], judgments, run))
    return out


def outcome_value(outcome):
    """The value (float, or per-query dict) of an outcome of :func:`compute_set_measures`."""
    return getattr(outcome, 'value', outcome)


def qrels_rows(values: Dict[str, float], qrels_queries: List[str]) -> Dict[str, float]:
    """Per-unit values (FD's jackknife pseudo-values p_q over its n units, the queries with relevant documents) as
    one row for every one of the M qrels queries, so that ir_measures never fills a row in (it fills 0 for a
    (measure, qrels query) no provider yielded, once any other provider's measure shares the call)
    and every row set a caller aggregates gives the same numbers:

    - a unit q gets p̄ + c·(p_q − p̄), a query that is no unit gets p̄, with p̄ the mean of the pseudo-values (the
      jackknife bias-corrected estimate) and c = √(M(M−1) / (n(n−1)));
    - so the mean over the M rows is p̄ exactly, and a paired t-test over the M rows of two systems (what
      ``pt.Experiment(baseline=...)`` runs) has Tukey's jackknife t statistic, Δp̄ / (s_Δ/√n), exactly: the M−n
      constant rows add nothing to the differences' sum of squares, c makes up for the divisor. Only its degrees of
      freedom are M−1 rather than n−1 (the same when every qrels query has a relevant document, c = 1), which
      ``pt.Experiment(baseline=...)`` says in a warning (:func:`warn_degrees_of_freedom`).

    Values of queries outside the qrels are dropped (they are no units of this qrels)."""
    rows = {q: values[q] for q in qrels_queries if q in values}
    n, m = len(rows), len(qrels_queries)
    if n == m:
        return rows
    if n == 0:
        return {q: float('nan') for q in qrels_queries}
    mean = float(sum(rows.values()) / n)
    scale = ((m * (m - 1)) / (n * (n - 1))) ** 0.5 if n > 1 else 0.0
    return {q: mean + scale * (rows[q] - mean) if q in rows else mean for q in qrels_queries}


class SetEvaluator(providers.Evaluator):
    """Evaluates set measures, one row for every query of the qrels, so that the mean over queries (what
    pt.Experiment shows) is exactly the measure's value and a paired test on the rows (``baseline=``) is a valid one
    or is warned against: FD and CFD give centred jackknife pseudo-values (:mod:`.experiment_rows`), FD(jackknife=True)
    its pseudo-values, both spread over every qrels query by :func:`qrels_rows` (so their mean and paired test do not
    depend on the other measures of the call); the other measures repeat their value, with a warning.
    :meth:`calc_aggregate` (``ir_measures.calc_aggregate`` with these measures only) forms no rows."""

    def __init__(self, measures, qrels, memo: Optional[QrelsMemo] = None):
        self.judgments = memo.judgments(qrels) if memo is not None else Judgments(prepare_qrels(qrels, 'pyterrier_frechet'))
        super().__init__(measures, self.judgments.query_names.tolist())
        self.qrels = self.judgments.frame
        # the path the README leads with says which label counts as relevant, as pf.evaluate does (issue 63)
        note = graded_threshold_note(self.qrels, measures)
        if note:
            warn_once_per_experiment(note)

    def _iter_calc(self, run) -> Iterator[Metric]:
        from .answers import is_answer_frame, warn_other_kind
        if is_answer_frame(run):  # an answer pipeline beside retrieval pipelines: NaN with a warning (evaluation/answers.py)
            yield from warn_other_kind(self.measures, 'answers', self.qrel_qids)
            return
        found = caller()  # the one walk of this call, read by every check below
        if has_pyterrier_names(run) and _beside_other_measures(found):
            raise ValueError(pyterrier_names_hint('run'))
        system = found.system
        paired = paired_test_is_run(found)
        try:
            run = prepare_run(run, 'pyterrier_frechet')
            rows_read = rows_are_read(found)
            outcomes = compute_set_measures(self.measures, self.judgments, run, self.qrel_qids, rows=rows_read)
        except ValueError as ex:
            if system is None:
                raise
            # pt.Experiment evaluates each system on its own: say which one (as pf.evaluate names the run)
            raise ValueError(f'pt.Experiment system {system}: {ex}') from ex
        # FD's and CFD's centred pseudo-values, and FD(jackknife=True)'s own (its value is the dict of them)
        with_rows = [m for m, o in outcomes.items()
                     if getattr(o, 'rows', None) is not None or isinstance(outcome_value(o), dict)]
        if with_rows and paired:
            warn_plus_minus(with_rows)
        for measure, outcome in outcomes.items():
            value = outcome_value(outcome)
            per_query = value if isinstance(value, dict) else getattr(outcome, 'rows', None)
            if per_query is not None:  # FD(jackknife=True)'s pseudo-values, or FD's and CFD's centred ones
                n_units = sum(q in per_query for q in self.qrel_qids)
                if 0 < n_units < len(self.qrel_qids) and paired:
                    warn_degrees_of_freedom(measure, n_units, len(self.qrel_qids))
                per_query = qrels_rows(per_query, self.qrel_qids)
                for qid in self.qrel_qids:
                    yield Metric(query_id=qid, measure=measure, value=per_query[qid])
                continue
            if not measure.has_rows() and rows_read:  # rows averaged into pt.Experiment's table say nothing wrong
                warn_constant_rows(measure, 'it has no leave-one-query-out path')
            for qid in self.qrel_qids:
                yield Metric(query_id=qid, measure=measure, value=value)

    def calc_aggregate(self, run):
        """Each measure's value (the mean of its rows), without forming the rows."""
        from .answers import is_answer_frame
        if is_answer_frame(run):
            return super().calc_aggregate(run)
        run = prepare_run(run, 'pyterrier_frechet')
        outcomes = compute_set_measures(self.measures, self.judgments, run, self.qrel_qids)
        result = {}
        for measure, outcome in outcomes.items():
            value = outcome_value(outcome)
            result[measure] = (float(np.mean(list(qrels_rows(value, self.qrel_qids).values())))
                               if isinstance(value, dict) else value)
        return result


def warn_plus_minus(measures) -> None:
    """Say what pt.Experiment(baseline=...)'s ``+``/``-`` columns of a set measure count: PyTerrier counts the queries
    whose row is above / below the baseline's, and a set measure's row is a query's jackknife pseudo-value, not the
    query's own score — so they are no per-query wins and losses (and for FD, lower is better, ``+`` leans worse).
    Once per ``pt.Experiment`` call (:func:`warn_once_per_experiment`)."""
    labels = ', '.join(str(m) for m in measures)
    warn_once_per_experiment(f'{labels} in pt.Experiment(baseline=...): each row is a query\'s jackknife pseudo-value '
                             '(the measure is one number per query set), so its "+" / "-" columns count queries whose '
                             'pseudo-value is above / below the baseline\'s, not per-query wins and losses (lower is '
                             'better for FD: "+" leans worse); read the measure\'s value and its p-value (Tukey\'s '
                             'jackknife t-test); pt_docs "FD inside pt.Experiment"')


def warn_degrees_of_freedom(measure, n_units: int, n_rows: int) -> None:
    """Warn that ``pt.Experiment(baseline=...)``'s paired t-test on ``measure``'s rows is not its jackknife test:
    ``n_rows − n_units`` qrels queries are no jackknife unit (no relevant document at the measure's ``rel``), so the
    :func:`qrels_rows` of all ``n_rows`` qrels queries give the jackknife t statistic on n_rows − 1 degrees of
    freedom instead of n_units − 1 — a p-value below the jackknife test's (``compare``'s). No rows can do better:
    PyTerrier averages every query's row of a measure (an absent row is a KeyError or ir_measures' 0, a NaN row a
    NaN mean) and its ``scipy.stats.ttest_rel`` counts every row, and no linear spread of a system's own rows maps
    the t statistic onto the other degrees of freedom for every pair of systems."""
    rel = measure['rel'] if 'rel' in measure.SUPPORTED_PARAMS else None
    where = f' at rel={rel}' if rel is not None else ''
    warn_once_per_experiment(f'{measure}: {n_rows - n_units} of the {n_rows} qrels queries have no relevant '
                             f'document{where}, so the paired t-test pt.Experiment(baseline=...) runs on its {n_rows} '
                             f'rows has {n_rows - 1} degrees of freedom, not the {n_units - 1} of its jackknife test '
                             f'over the {n_units} queries with one: its p-value is below the jackknife test\'s. For '
                             'that test compare systems with pf.compare_systems / `python -m pyterrier_frechet '
                             'compare`, or leave those queries out of the topics and qrels')


def refuse_batched_experiment(measures, found: Optional[Caller] = None) -> None:
    """Raise if called from ``pt.Experiment(..., batch_size=N)``.

    With ``batch_size`` PyTerrier evaluates each batch of N topics on its own, against the qrels of that batch
    only, and averages what comes back: a set measure would become the mean of per-batch values (FD 5.02 for
    1.70 on the toy data) without any sign. What the evaluator receives under batch_size — the qrels rows of the
    batch's queries, the batch's run — is exactly what an evaluation of that query subset receives, so it reads its
    caller instead (:func:`~.experiment_call.caller`: a PyTerrier evaluation frame with a non-None ``batch_size``).
    It fails open: if PyTerrier renames it, a set-valued measure is still refused when the batches' values differ
    (:class:`~..measures.base.SetValueAgg`), but not FD(jackknife=True) nor a batch with no relevant document, which
    then reads as bad qrels."""
    batch_size = (found or caller()).batch_size
    if batch_size is not None:
        names = ', '.join(str(m) for m in measures)
        raise ValueError(f'{names}: pt.Experiment(batch_size={batch_size}) evaluates each batch of '
                         'topics on its own, and a set measure (one number per query set) averaged over batches is '
                         'not the measure of the query set; drop batch_size, or save the runs (save_dir=) and '
                         'evaluate them with pf.evaluate / `python -m pyterrier_frechet eval`')


def _beside_other_measures(found: Caller) -> bool:
    """Whether ir_measures' FallbackProvider/FallbackEvaluator evaluates these measures together with measures of
    other providers (``calc_aggregate([FD@10, nDCG@10], ...)``): those read only ir_measures' column names, and would
    fail on a PyTerrier frame with ir_measures' own "missing columns" message after this provider accepted it. The
    evaluator is given only this provider's measures, so it reads its caller (:func:`~.experiment_call.caller`); it
    fails open (ir_measures then says "DataFrame missing columns: ['query_id', ...] (found ['qid', ...])")."""
    if found.fallback_measures is not None:
        return any(not isinstance(m, SetMeasure) for m in found.fallback_measures)
    return (found.fallback_evaluators or 0) > 1


class _Chained(providers.Evaluator):
    """The evaluators of a provider's ranking and answer measures, each given the run (no DEFAULT filling: see
    :meth:`SetEvaluator.iter_calc`)."""

    def __init__(self, measures, evaluators):
        super().__init__(measures, sorted(set().union(*(e.qrel_qids for e in evaluators))))
        self.evaluators = evaluators

    def iter_calc(self, run) -> Iterator[Metric]:
        for evaluator, teed in zip(self.evaluators, RunConverter(run, strict=False).tee(len(self.evaluators))):
            yield from evaluator.iter_calc(teed.run)

    def calc_aggregate(self, run):
        """Each evaluator's own aggregate (no rows formed, no rows' warnings)."""
        out = {}
        for evaluator, teed in zip(self.evaluators, RunConverter(run, strict=False).tee(len(self.evaluators))):
            out.update(evaluator.calc_aggregate(teed.run))
        return out


class SetMeasureProvider(providers.Provider):
    """Computes every measure of pyterrier_frechet (each :class:`~pyterrier_frechet.measures.base.SetMeasure` of the
    registry, :func:`~pyterrier_frechet.measures.base.registered_measures`, including any registered later)."""
    NAME = 'pyterrier_frechet'

    def __init__(self):
        super().__init__()
        self.qrels_memo = QrelsMemo()  # the evaluation context of each qrels, across a pt.Experiment's systems

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
        found = caller()
        refuse_batched_experiment(measures, found)
        if has_pyterrier_names(qrels) and _beside_other_measures(found):
            raise ValueError(pyterrier_names_hint('qrels'))
        answers = [m for m in measures if is_answer_measure(m)]
        if not answers:
            return SetEvaluator(measures, qrels, self.qrels_memo)
        from .answers import AnswerEvaluator, split_qrels
        evaluators = [AnswerEvaluator(answers, qrels)]
        ranking = [m for m in measures if not is_answer_measure(m)]
        if ranking:  # qrels may hold gold answers beside the judgments: rankings are scored on the judgments
            judgments = split_qrels(qrels)[0] if isinstance(qrels, pd.DataFrame) else qrels
            if judgments is None:
                raise ValueError(f'{", ".join(map(str, ranking))}: the qrels hold no judgments (qid, docno, label), only '
                                 'gold answers; rankings are scored against judgments')
            evaluators.insert(0, SetEvaluator(ranking, judgments, self.qrels_memo))
        return evaluators[0] if len(evaluators) == 1 else _Chained(measures, evaluators)

    def run_inputs(self, measures):
        measures = list(measures)
        inputs = [QID, 'qanswer'] if any(is_answer_measure(m) for m in measures) else []
        if not all(is_answer_measure(m) for m in measures):
            inputs += [DOCNO, SCORE]
        return list(dict.fromkeys([QID] + inputs))

    def qrel_inputs(self, measures):
        measures = list(measures)
        gold = [m for m in measures if is_answer_measure(m) and m['ref'] == 'gold']
        inputs = [QID, 'gold_answer'] if gold else [QID]
        if len(gold) < len(measures):
            inputs += [DOCNO, LABEL]
        return list(dict.fromkeys(inputs))

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
