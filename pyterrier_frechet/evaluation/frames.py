"""Qrels and runs as the frames the evaluation works on: ir_measures column names, str ids, checked once.

Any form ir_measures reads is accepted (DataFrames with PyTerrier or ir_measures names, dicts, namedtuples): a
DataFrame with PyTerrier's names (``qid``, ``docno``, ``label`` / ``score``) is renamed here, so this package's
measures read it through ``ir_measures.calc_aggregate`` too. ir_measures' own measures (nDCG, RR, ...) read only
ir_measures' names; :func:`pyterrier_names_hint` says so when a PyTerrier frame reaches them.
"""
import numpy as np
import pandas as pd
from ir_measures.util import QrelsConverter, RunConverter

from ..files import check_ids


QID, DOCNO, LABEL, SCORE = 'query_id', 'doc_id', 'relevance', 'score'

#: Largest relevance label accepted: pytrec_eval stores labels as C ints.
MAX_LABEL = 2 ** 31 - 1


def id_form_hint(run_qids, qrels_qids) -> str:
    """A sentence when query ids of the run that no qrels query has equal qrels ids written differently (``1.0``,
    ``01``, ``1e0`` vs ``1``; blanks, case, Unicode form — the loose form of
    :func:`~pyterrier_frechet.data.runs.check_run_queries`); '' otherwise. Ids are compared as text, so such a
    query is matched with nothing."""
    from ..files import id_form_pairs
    pairs = id_form_pairs(run_qids, qrels_qids)
    if not pairs:
        return ''
    examples = ', '.join(f'run {a!r} vs qrels {b!r}' for a, b in list(pairs.items())[:3])
    return (f'query ids are compared as text, and {len(pairs)} of the run\'s differ from qrels ids only in how they are '
            f'written ({examples}): write the run and the qrels ids alike')


def _as_str_ids(frame: pd.DataFrame) -> pd.DataFrame:
    """Query and document ids as Python str in object columns. pandas ≥ 3 makes ``astype(str)`` an Arrow-backed
    string column, whose rows ir_measures iterates (``as_dict_of_dict``) 2–3× slower than an object column's — the
    largest cost of evaluating nDCG or RR over many runs; the ids are the same strings either way."""
    return frame.assign(**{QID: _str_ids(frame[QID]), DOCNO: _str_ids(frame[DOCNO])})


def _str_ids(ids: pd.Series) -> pd.Series:
    if ids.dtype == object and pd.api.types.infer_dtype(ids, skipna=False) == 'string':
        return ids   # already str in an object column (a frame prepared before)
    return ids.astype(str).astype(object)


#: PyTerrier's column names → ir_measures' (what ``pt.model.to_ir_measures`` renames).
PYTERRIER_NAMES = {'qid': QID, 'docno': DOCNO, 'label': LABEL}


def has_pyterrier_names(frame) -> bool:
    """``frame`` is a DataFrame that names its columns as PyTerrier does (``qid``, ``docno``) and not as ir_measures."""
    return isinstance(frame, pd.DataFrame) and {'qid', 'docno'} <= set(frame.columns) and QID not in frame.columns


def _renamed(frame):
    """A PyTerrier-named DataFrame with ir_measures' names (a new frame; the caller's is untouched); else as is."""
    if not has_pyterrier_names(frame):
        return frame
    clash = [v for k, v in PYTERRIER_NAMES.items() if k in frame.columns and v in frame.columns]
    if clash:
        raise ValueError(f'the frame has both PyTerrier and ir_measures column names ({clash}); keep one of each')
    return frame.rename(columns=PYTERRIER_NAMES)


def pyterrier_names_hint(kind: str) -> str:
    """What to do when a PyTerrier-named frame reaches a measure of ir_measures (which reads only its own names)."""
    return (f'the {kind} frame has PyTerrier column names (qid, docno, label/score), which ir_measures\' own measures '
            f'(nDCG, RR, AP, ...) do not read: rename them with pt.model.to_ir_measures({kind}) (columns query_id, '
            f'doc_id, relevance/score), or use pyterrier_frechet.evaluate(...) or pt.Experiment, which take either')


def check_duplicates(frame: pd.DataFrame, qid: str, docno: str, what: str) -> None:
    """Raise ValueError if a (query, document) pair occurs twice: a run or qrels with such rows is ambiguous."""
    dup = frame.duplicated([qid, docno])
    if dup.any():
        first = frame.loc[dup, [qid, docno]].iloc[0].tolist()
        raise ValueError(f'{what} has {int(dup.sum())} duplicate ({qid}, {docno}) row(s), e.g. {first}')


def _require_columns(frame: pd.DataFrame, columns, subject: str, hint: str = '') -> None:
    """ValueError ``'<subject> column(s) [...] (found [...])<hint>'`` when ``frame`` lacks any of ``columns``."""
    missing = [c for c in columns if c not in frame.columns]
    if missing:
        raise ValueError(f'{subject} column(s) {missing} (found {list(frame.columns)}){hint}')


def prepare_qrels(qrels, what: str) -> pd.DataFrame:
    """Qrels in any form ir_measures reads (a DataFrame with PyTerrier or ir_measures column names, a dict of
    dicts, namedtuples), as a checked frame with str ids and integer labels."""
    qrels = _renamed(qrels)
    if isinstance(qrels, pd.DataFrame):
        _require_columns(qrels, (QID, DOCNO, LABEL), f'{what}: the qrels lack',
                         '; name them qid, docno, label (PyTerrier) or query_id, doc_id, relevance (ir_measures)')
    qrels = QrelsConverter(qrels).as_pd_dataframe()
    if len(qrels) == 0:
        raise ValueError(f'{what}: the qrels are empty')
    qrels = _as_str_ids(qrels[[QID, DOCNO, LABEL]])
    check_frame_ids(qrels, f'{what}: the qrels')
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
    """A run in any form ir_measures reads (a DataFrame with PyTerrier or ir_measures column names, a dict of
    dicts, namedtuples), as a checked frame with str ids."""
    run = _renamed(run)
    if isinstance(run, pd.DataFrame):
        _require_columns(run, (QID, DOCNO, SCORE), f'{what}: the run lacks',
                         '; name them qid, docno, score (PyTerrier) or query_id, doc_id, score (ir_measures)')
    run = RunConverter(run).as_pd_dataframe()
    _require_columns(run, (QID, DOCNO, SCORE), f'{what}: the run lacks')
    run = _as_str_ids(run)
    # ir_measures iterates every column of a run frame (itertuples): other string columns (PyTerrier's ``name``,
    # ``query``) in object columns too, for the reason _as_str_ids gives
    text = [c for c in run.columns if isinstance(run[c].dtype, pd.StringDtype)]
    if text:
        run = run.astype({c: object for c in text})
    check_frame_ids(run, f'{what}: the run')
    check_duplicates(run, QID, DOCNO, 'the run')
    return run


def check_frame_ids(frame: pd.DataFrame, what: str) -> None:
    """The query ids and docnos of a prepared frame by the one id rule of every input path
    (:func:`~pyterrier_frechet.files.check_ids`)."""
    check_ids(frame[QID].unique(), f'{what}\'s query ids')
    check_ids(frame[DOCNO].unique(), f'{what}\'s docnos')


def run_dict(run: pd.DataFrame):
    """A prepared run (:func:`prepare_run`) as ir_measures' dict of dicts, query → document → score: the form each of
    its providers (pytrec_eval, msmarco, ...) otherwise builds from a frame for itself, one namedtuple a row, on every
    call — made once here, nDCG@10 and RR@10 of the 19 DL19 runs took 0.50 s instead of 1.83 s in one process, the
    same values. The same pairs and scores in the frame's order (its pairs are unique: :func:`check_duplicates`); an
    empty run stays a frame."""
    if not len(run):
        return run
    out = {}
    for qid, docno, score in zip(run[QID].tolist(), run[DOCNO].tolist(), run[SCORE].tolist()):
        out.setdefault(qid, {})[docno] = score
    return out


def to_ir_measures(frame: pd.DataFrame) -> pd.DataFrame:
    """A PyTerrier frame (qid, docno, label | score) with ir_measures column names and str ids."""
    renamed = frame.rename(columns={'qid': QID, 'docno': DOCNO, 'label': LABEL})
    return _as_str_ids(renamed)
