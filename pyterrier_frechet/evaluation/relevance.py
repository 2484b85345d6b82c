"""Which label counts as relevant: the note every evaluation path gives when the qrels are graded and a measure with a
``rel`` parameter leaves it unset (pf.evaluate, pt.Experiment, ir_measures, paper_table, report)."""
import warnings

import ir_measures
import numpy as np
import pandas as pd

from ..measures.base import column_label


def graded_threshold_note(qrels: pd.DataFrame, measures) -> str:
    """The sentence saying which label counts as relevant when the qrels are graded (a label above 1) and a measure
    with a ``rel`` parameter leaves it unset ('' otherwise): ir_measures' default, label ≥ 1, is used — never
    silently. TREC DL's binary measures count label ≥ 2 (``trec_eval -l 2``). ``measures``: measures or names."""
    labels = qrels['label'] if 'label' in qrels.columns else qrels.get('relevance')
    if labels is None or not len(labels) or float(np.nanmax(labels.to_numpy(dtype=np.float64))) <= 1:
        return ''
    parsed = [ir_measures.parse_measure(m) if isinstance(m, str) else m for m in measures]
    unset = [column_label(m) for m in parsed
             if 'rel' in getattr(m, 'SUPPORTED_PARAMS', {}) and 'rel' not in m.params]
    if not unset:
        return ''
    return (f'graded qrels (labels up to {int(np.nanmax(labels.to_numpy(dtype=np.float64)))}): {", ".join(unset)} '
            'count label >= 1 as relevant (ir_measures\' default); for TREC DL\'s convention (label >= 2, as '
            "trec_eval -l 2) pass rel=2 (--rel 2)")


def warn_graded_threshold(qrels: pd.DataFrame, measures) -> None:
    """Warn with :func:`graded_threshold_note`, once per process for the same qrels grades and measures (the
    warning's location is this function, so Python's default filter shows it once)."""
    note = graded_threshold_note(qrels, measures)
    if note:
        warnings.warn(note, UserWarning, stacklevel=1)
