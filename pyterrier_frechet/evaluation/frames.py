"""Qrels and runs as the frames the evaluation works on: ir_measures column names, str ids, checked once.

Any form ir_measures reads is accepted (DataFrames with PyTerrier or ir_measures names, dicts, namedtuples).
"""
import numpy as np
import pandas as pd
from ir_measures.util import QrelsConverter, RunConverter

from .ranking import check_duplicates

QID, DOCNO, LABEL, SCORE = 'query_id', 'doc_id', 'relevance', 'score'

#: Largest relevance label accepted: pytrec_eval stores labels as C ints.
MAX_LABEL = 2 ** 31 - 1


def _as_str_ids(frame: pd.DataFrame) -> pd.DataFrame:
    return frame.assign(**{QID: frame[QID].astype(str), DOCNO: frame[DOCNO].astype(str)})


def prepare_qrels(qrels, what: str) -> pd.DataFrame:
    """Qrels in any form ir_measures reads, as a checked frame with str ids and integer labels."""
    qrels = QrelsConverter(qrels).as_pd_dataframe()
    if len(qrels) == 0:
        raise ValueError(f'{what}: the qrels are empty')
    qrels = _as_str_ids(qrels[[QID, DOCNO, LABEL]])
    check_duplicates(qrels, QID, DOCNO, 'the qrels')
    return qrels.assign(**{LABEL: check_labels(qrels[LABEL], what)})


def check_labels(labels: pd.Series, what: str) -> pd.Series:
    """Relevance labels as int64: ValueError for missing, non-numeric, fractional or out-of-range labels."""
    values = pd.to_numeric(labels, errors='coerce')
    bad = values.isna()
    if not bad.any():
        as_float = values.to_numpy(dtype=np.float64)
        bad = pd.Series((as_float != np.round(as_float)) | (np.abs(as_float) > MAX_LABEL), index=labels.index)
    if bad.any():
        examples = labels[bad].astype(str).unique().tolist()[:5]
        raise ValueError(f'{what}: {int(bad.sum())} relevance label(s) are missing, not integers or outside '
                         f'[-{MAX_LABEL}, {MAX_LABEL}], e.g. {examples}')
    return values.astype(np.int64)


def prepare_run(run, what: str) -> pd.DataFrame:
    """A run in any form ir_measures reads, as a checked frame with str ids."""
    run = RunConverter(run).as_pd_dataframe()
    missing = [c for c in (QID, DOCNO, SCORE) if c not in run.columns]
    if missing:
        raise ValueError(f'{what}: the run lacks column(s) {missing} (found {list(run.columns)})')
    run = _as_str_ids(run)
    check_duplicates(run, QID, DOCNO, 'the run')
    return run


def to_ir_measures(frame: pd.DataFrame) -> pd.DataFrame:
    """A PyTerrier frame (qid, docno, label | score) with ir_measures column names and str ids."""
    renamed = frame.rename(columns={'qid': QID, 'docno': DOCNO, 'label': LABEL})
    return _as_str_ids(renamed)
