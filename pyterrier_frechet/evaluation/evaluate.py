"""The one evaluation path: runs + qrels + measures → a results table.

The Python API (:func:`pyterrier_frechet.evaluate`), every CLI subcommand, ``report``, ``sparsify``, ``pool-sim`` and
``encoder_robustness`` call :func:`evaluate`, so they share column labels (:func:`column_label`), the measures'
``missing=`` policy, orientation (the measures' ``HIGHER_IS_BETTER``) and the counts of documents left out for want
of a vector (``no_vector_relevant`` / ``no_vector_retrieved``, on both sides).

Set measures are computed by this package's provider code directly (which also yields the counts), every other
measure through ``ir_measures.calc_aggregate``; the values are those ``pt.Experiment`` shows for the same runs.
"""
import logging
from typing import Dict

import ir_measures
import numpy as np
import pandas as pd
import pyterrier as pt

from ..measures.base import column_label, is_answer_measure, is_set_measure, is_vector_measure
from ..vectors.sources import using_encoder
from .frames import QID, prepare_qrels, prepare_run
from .provider import compute_set_measures, outcome_value
from .selection import Judgments

logger = logging.getLogger(__name__)

#: Columns of :func:`evaluate` that count documents left out by the vector measures (``missing='drop'``).
NO_VECTOR_COLUMNS = ('no_vector_relevant', 'no_vector_retrieved')


_EXAMPLES = 'use ir_measures names such as nDCG@10, RR(rel=2)@10, AP, P@10, FD@10, FD(urr=True)@10'


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


def evaluate(runs: Dict[str, pd.DataFrame], qrels: pd.DataFrame, measures, encoder=None, verbose: bool = False) -> pd.DataFrame:
    """One row per run (``name`` first), one column per measure in the order given (:func:`column_label`), and,
    when a vector measure is asked for, ``no_vector_relevant`` and ``no_vector_retrieved``: how many distinct
    relevant and retrieved documents the run's vector measures left out for want of a vector (``missing='drop'``).

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
    judgments = Judgments(qrels_ir)  # coded once for every run
    universe = judgments.query_names.tolist()
    set_measures = [m for m in measures if is_set_measure(m)]
    others = [m for m in measures if not is_set_measure(m)]
    has_vectors = any(is_vector_measure(m) for m in measures)
    # ir_measures' evaluator of the other measures, made once: it prepares the qrels once for every run
    other_evaluator = ir_measures.evaluator(others, qrels_ir) if others else None
    rows = []
    with using_encoder(encoder):
        for name, run in pt.tqdm(list(runs.items()), desc='runs', unit='run', disable=not verbose):
            run_ir = prepare_run(run, f'run {name!r}')
            if not set(run_ir[QID].unique()) & set(universe):
                raise ValueError(f'run {name!r} shares no query with the qrels')
            try:
                outcomes = compute_set_measures(set_measures, judgments, run_ir, universe)
                values = dict(other_evaluator.calc_aggregate(run_ir)) if others else {}
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
                row['no_vector_relevant'] = len(set().union(*[o.dropped_relevant.tolist() for o in dropped]))
                row['no_vector_retrieved'] = len(set().union(*[o.dropped_retrieved.tolist() for o in dropped]))
                if row['no_vector_relevant'] or row['no_vector_retrieved']:
                    logger.info('run %r: left out %d relevant and %d retrieved document(s) without a vector', name,
                                row['no_vector_relevant'], row['no_vector_retrieved'])
            rows.append(row)
    columns = ['name'] + labels + (list(NO_VECTOR_COLUMNS) if has_vectors else [])
    return pd.DataFrame(rows, columns=columns)

