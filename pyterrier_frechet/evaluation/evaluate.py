"""The one evaluation path: runs + qrels + measures → a results table.

The Python API (:func:`pyterrier_frechet.evaluate`), every CLI subcommand, ``report``, ``sparsify``, ``pool-sim`` and
``encoder_robustness`` call :func:`evaluate`, so they share column labels (:func:`column_label`), the measures'
``missing=`` policy, orientation (the measures' ``HIGHER_IS_BETTER``) and the counts of documents left out for want
of a vector (``no_vector_relevant`` / ``no_vector_retrieved``, on both sides).

Set measures are computed by this package's provider code directly (which also yields the counts), every other
measure through ``ir_measures.calc_aggregate``; the values are those ``pt.Experiment`` shows for the same runs.
"""
import logging
import subprocess
import warnings
from contextlib import contextmanager
from typing import Dict, Optional

import ir_measures
import numpy as np
import pandas as pd
import pyterrier as pt

from ..measures.base import column_label, is_answer_measure, is_set_measure, is_vector_measure
from ..vectors.sources import using_encoder
from .frames import DOCNO, LABEL, QID, SCORE, id_form_hint, prepare_qrels, prepare_run, run_dict
from .provider import compute_set_measures, outcome_value
from .relevance import warn_graded_threshold
from .selection import Judgments

logger = logging.getLogger(__name__)

#: Columns of :func:`evaluate` that count documents left out by the vector measures (``missing='drop'``).
NO_VECTOR_COLUMNS = ('no_vector_relevant', 'no_vector_retrieved')
#: The key of :func:`evaluate`'s ``DataFrame.attrs`` holding, per run and vector measure, the size of each set and how
#: many of its rows were left out for want of a vector (:func:`no_vector_counts`).
NO_VECTOR_ATTR = 'no_vector'
_COUNT_COLUMNS = ['name', 'measure', 'relevant', 'missing_relevant', 'retrieved', 'missing_retrieved']


def no_vector_counts(table: pd.DataFrame) -> pd.DataFrame:
    """Per run and vector measure of an :func:`evaluate` table: ``relevant`` and ``retrieved`` — the rows (query,
    document) of the measure's two sets — and ``missing_relevant``, ``missing_retrieved`` — how many of them had no
    vector and were left out (``missing='drop'``). Empty when the table has no vector measure (or lost its
    ``attrs``)."""
    counts = table.attrs.get(NO_VECTOR_ATTR) if isinstance(table, pd.DataFrame) else None
    return pd.DataFrame(counts if counts is not None else [], columns=_COUNT_COLUMNS)


def with_options(measures, rel=None, missing=None) -> list:
    """``measures`` (measures or names) with ``rel`` given to every measure that has a ``rel`` parameter and does not
    set it, and ``missing`` to every vector measure that does not set it — the one meaning of ``--rel``/``rel=`` and
    ``--missing``/``missing=`` of ``report``, :func:`~pyterrier_frechet.paper_table` and every command."""
    if rel is not None and (isinstance(rel, bool) or not isinstance(rel, (int, np.integer)) or rel < 1):
        raise ValueError(f'rel must be a positive integer (the lowest label counted as relevant), got {rel!r}')
    if missing is not None and missing not in ('error', 'drop'):
        raise ValueError(f"missing must be 'error' or 'drop', got {missing!r}")
    out = []
    for m in parse_measures(measures):
        if rel is not None and 'rel' in m.SUPPORTED_PARAMS and 'rel' not in m.params:
            m = m(rel=int(rel))
        if missing is not None and is_vector_measure(m) and 'missing' not in m.params:
            m = m(missing=missing)
        out.append(m)
    return out


_EXAMPLES = 'use ir_measures names such as nDCG@10, RR(rel=2)@10, AP, P@10, FD@10, FD(urr=True)@10'


def check_relevant(labels, measures, name: str = 'qrels') -> None:
    """Refuse qrels in which some measure finds no relevant document at all: its threshold (``rel``, default 1; 1
    for measures without a ``rel``) above every label. One check for ``evaluate`` (so every analysis) and the
    command line (``name``: how the message names the qrels, e.g. ``--qrels PATH``), before any work."""
    labels = np.asarray(labels)
    top = labels.max() if len(labels) else None
    failing = {}
    for m in measures:
        rel = m['rel'] if 'rel' in getattr(m, 'SUPPORTED_PARAMS', {}) else 1
        if isinstance(rel, bool) or not isinstance(rel, (int, np.integer)):
            continue  # a rel that is not set and has no number (NumRet: every retrieved document): no threshold
        threshold = int(rel)
        if top is None or top < threshold:
            failing.setdefault(threshold, []).append(str(m))
    if failing:
        threshold = min(failing)
        found = sorted(np.unique(labels).tolist())[:10]
        raise ValueError(f'{name}: no document is judged relevant at the threshold (label >= {threshold}) of '
                         f'{", ".join(n for t in sorted(failing) for n in failing[t])} (labels found: {found}); use a '
                         'threshold (rel=, --rel) that some judgment reaches, or qrels with relevant documents')


def _parses(text: str) -> bool:
    try:
        ir_measures.parse_measure(text)
    except Exception:  # noqa: BLE001 - any parser failure means "not a name"
        return False
    return True


def suggest_measure(name: str) -> tuple:
    """ir_measures spellings a user may have meant by ``name``, and why: ``(suggestions, note)``, the first kind that
    parses of: Python booleans for ``true``/``false`` (``FD(urr=true)@10`` → ``FD(urr=True)@10``); trec_eval names
    as ir_measures maps them (``ndcg_cut_10``, ``ndcg_cut.10`` → ``nDCG@10``; ``map`` → ``AP``; ``recip_rank`` →
    ``RR``; ``P_10`` → ``P@10``); the measure name in another case (``fd@10`` → ``FD@10``); close names
    (``nDGC@10`` → ``nDCG@10``). ``([], '')`` if none parses."""
    import difflib
    import re
    text = name.strip()
    fixed = re.sub(r'(=\s*)(true|false)\b', lambda m: m.group(1) + m.group(2).capitalize(), text, flags=re.IGNORECASE)
    head = re.match(r'[^(@]+', fixed)
    base, rest = (head.group(0), fixed[head.end():]) if head else ('', fixed)
    by_lower = {}
    for n in ir_measures.measures.registry:
        by_lower.setdefault(n.lower(), n)
    cased = by_lower.get(base.lower(), base)
    if fixed != text:
        hints = [h for h in dict.fromkeys([fixed, cased + rest]) if _parses(h)]
        if hints:
            return hints[-1:], 'parameters are written as in Python: True/False with a capital letter'
    try:
        trec = [str(m) for m in ir_measures.parse_trec_measure(text)]
    except Exception:  # noqa: BLE001 - not a trec_eval name
        trec = []
    if trec:
        return [', '.join(trec)], "that is trec_eval's name; this package reads ir_measures' names"
    if cased != base and _parses(cased + rest):
        return [cased + rest], 'measure names are case-sensitive'
    close = [by_lower[c] + rest for c in difflib.get_close_matches(base.lower(), list(by_lower), n=2, cutoff=0.7)]
    return [c for c in close if c != text and _parses(c)], ''


def parse_measures(measures) -> list:
    """ir_measures measures from objects or names; ValueError naming an unknown one, with a "did you mean" for
    misspelt names and other tools' spellings (:func:`suggest_measure`)."""
    out = []
    for m in measures:
        if isinstance(m, str):
            try:
                m = ir_measures.parse_measure(m)
            except (NameError, ValueError, SyntaxError, KeyError, TypeError) as ex:
                raise ValueError(unknown_measure_message(m, ex)) from ex
        if is_set_measure(m):
            m.validate_params()
        out.append(m)
    return out


def unknown_measure_message(name: str, ex: Exception) -> str:
    """``unknown measure 'nDGC@10': did you mean 'nDCG@10'?``; ir_measures' own message when nothing is near."""
    hints, note = suggest_measure(name)
    if hints:
        return f'unknown measure {name!r}: did you mean {" or ".join(repr(h) for h in hints)}?' + (f' ({note})' if note else '')
    return f'unknown measure {name!r} ({ex}); {_EXAMPLES}'


def check_labels_distinct(measures) -> None:
    """ValueError if two measures would get one column (:func:`column_label`): repeated, or differing only in missing=."""
    labels = [column_label(m) for m in measures]
    dup = sorted({x for x in labels if labels.count(x) > 1})
    if dup:
        raise ValueError(f'measures {dup} would share one column: a measure is repeated, or two differ only in missing=')


def _serving_provider(measure):
    """The ir_measures provider that computes ``measure`` (the first available one that supports it), or None."""
    for provider in ir_measures.DefaultPipeline.providers:
        try:
            if provider.supports(measure) and provider.is_available():
                return provider
        except Exception:  # a provider that cannot even say: not the one
            continue
    return None


def _is_own(provider) -> bool:
    return provider is not None and type(provider).__module__.startswith('pyterrier_frechet')


def _failure_text(ex: Exception) -> str:
    if isinstance(ex, subprocess.CalledProcessError):
        program = ex.cmd[0] if isinstance(ex.cmd, (list, tuple)) and ex.cmd else ex.cmd
        return f'its program {program} exited with status {ex.returncode}'
    text = (str(ex).strip().splitlines() or [''])[0]
    return f'{type(ex).__name__}: {text}' if text else type(ex).__name__


def provider_failure(measures, qrels_ir: pd.DataFrame, run_ir: pd.DataFrame) -> Optional[ValueError]:
    """After a call of ir_measures on ``measures`` failed: each measure another package's provider computes, tried
    alone; a ValueError naming the first that fails, its provider and why, or None when none fails alone (the
    failure was this package's own: its error stands as it is)."""
    for measure in measures:
        provider = _serving_provider(measure)
        if _is_own(provider):
            continue
        try:
            ir_measures.evaluator([measure], qrels_ir).calc_aggregate(run_ir)
        except Exception as ex:  # any failure of a provider: a subprocess, a parser, a missing program
            name = getattr(provider, 'NAME', None) or 'its'
            hint = ''
            queries = pd.Series(pd.concat([qrels_ir[QID], run_ir[QID]]).astype(str).unique())
            odd = queries[~queries.str.fullmatch(r'\d+')]
            if name == 'gdeval' and len(odd):
                hint = f' (gdeval reads TREC files and needs numeric query ids; {odd.iloc[0]!r} is not)'
            return ValueError(f"measure {measure}: ir_measures' {name} provider failed ({_failure_text(ex)}){hint}; "
                              f'leave {measure} out, or give inputs its provider accepts')
    return None


@contextmanager
def provider_errors(measures, qrels_ir: pd.DataFrame, run_ir: pd.DataFrame):
    """Any failure inside an ir_measures call on ``measures`` (``calc_aggregate``, ``iter_calc``, ``evaluator``)
    that a measure of another provider causes becomes one ValueError naming that measure
    (:func:`provider_failure`); the package's own errors pass unchanged."""
    try:
        yield
    except Exception as ex:
        failure = provider_failure(measures, qrels_ir, run_ir)
        if failure is None:
            raise
        raise failure from ex


def measures_evaluator(measures, qrels_ir: pd.DataFrame):
    """ir_measures' evaluator of ``measures`` over prepared qrels (:func:`~.frames.prepare_qrels`), made once for every
    run it will score — it prepares the qrels once — with a provider's failure one ValueError naming the measure
    (:func:`provider_errors`); None without measures."""
    if not measures:
        return None
    with provider_errors(measures, qrels_ir, qrels_ir.assign(**{SCORE: 1.0})[[QID, DOCNO, SCORE]]):
        return ir_measures.evaluator(measures, qrels_ir)


def evaluate(runs: Dict[str, pd.DataFrame], qrels: pd.DataFrame, measures, encoder=None, verbose: bool = False) -> pd.DataFrame:
    """One row per run (``name`` first), one column per measure in the order given (:func:`column_label`), and,
    when a vector measure is asked for, ``no_vector_relevant`` and ``no_vector_retrieved``: how many distinct
    relevant and retrieved documents the run's vector measures left out for want of a vector (``missing='drop'``);
    per run and vector measure, the size of each set and how many of its rows were left out are in
    ``attrs['no_vector']`` (:func:`no_vector_counts`).

    Args:
        runs: system name → result frame (qid, docno, score[, doc_vec]), PyTerrier or ir_measures column names.
        qrels: qid, docno, label (PyTerrier or ir_measures names).
        measures: ir_measures measures or their names (FD@10, nDCG@10, ...).
        encoder: the vector source of vector measures that name none (default: the one set by
            :func:`~pyterrier_frechet.set_default_encoder`).
        verbose: a progress bar over runs.

    Raises ValueError naming the run for a run that shares no query with the qrels, and for any failure of a measure.
    """
    measures = parse_measures(measures)
    check_labels_distinct(measures)
    if any(is_answer_measure(m) for m in measures):  # before any run is read: they take answer frames, not rankings
        compute_set_measures([m for m in measures if is_answer_measure(m)], None, None, [])
    labels = [column_label(m) for m in measures]
    qrels_ir = prepare_qrels(qrels, 'qrels')
    check_relevant(qrels_ir[LABEL], measures)
    warn_graded_threshold(qrels_ir, measures)
    judgments = Judgments(qrels_ir)  # coded once for every run
    universe = judgments.query_names.tolist()
    set_measures = [m for m in measures if is_set_measure(m)]
    others = [m for m in measures if not is_set_measure(m)]
    has_vectors = any(is_vector_measure(m) for m in measures)
    other_evaluator = measures_evaluator(others, qrels_ir)
    rows, counts = [], []
    with using_encoder(encoder):
        for name, run in pt.tqdm(list(runs.items()), desc='runs', unit='run', disable=not verbose):
            run_ir = prepare_run(run, f'run {name!r}')
            run_qids = run_ir[QID].unique()
            hint = id_form_hint(run_qids, universe)
            if not set(run_qids) & set(universe):
                raise ValueError(f'run {name!r} shares no query with the qrels' + (f'; {hint}' if hint else ''))
            if hint:
                warnings.warn(f'run {name!r}: {hint}', UserWarning, stacklevel=2)
            try:
                outcomes = compute_set_measures(set_measures, judgments, run_ir, universe)
                with provider_errors(others, qrels_ir, run_ir):
                    values = dict(other_evaluator.calc_aggregate(run_dict(run_ir))) if others else {}
            except ValueError as ex:
                raise ValueError(f'run {name!r}: {ex}') from ex
            row = {'name': name}
            for m, label in zip(measures, labels):
                if m in outcomes:
                    value = outcome_value(outcomes[m])
                    row[label] = float(np.mean(list(value.values()))) if isinstance(value, dict) else float(value)
                else:
                    row[label] = float(values[m])
            if has_vectors:
                dropped = [o for o in outcomes.values() if hasattr(o, 'dropped_relevant')]
                counts += [{'name': name, 'measure': label, 'relevant': o.relevant + o.missing_relevant,
                            'missing_relevant': o.missing_relevant, 'retrieved': o.retrieved + o.missing_retrieved,
                            'missing_retrieved': o.missing_retrieved}
                           for m, label in zip(measures, labels)
                           for o in [outcomes.get(m)] if hasattr(o, 'missing_retrieved')]
                row['no_vector_relevant'] = len(set().union(*[o.dropped_relevant.tolist() for o in dropped]))
                row['no_vector_retrieved'] = len(set().union(*[o.dropped_retrieved.tolist() for o in dropped]))
                if row['no_vector_relevant'] or row['no_vector_retrieved']:
                    logger.info('run %r: left out %d relevant and %d retrieved document(s) without a vector', name,
                                row['no_vector_relevant'], row['no_vector_retrieved'])
            rows.append(row)
    columns = ['name'] + labels + (list(NO_VECTOR_COLUMNS) if has_vectors else [])
    table = pd.DataFrame(rows, columns=columns)
    if has_vectors:
        table.attrs[NO_VECTOR_ATTR] = counts
    return table

