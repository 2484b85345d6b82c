"""Qrels manipulation: balancing (sparsifying) judgments to at most n relevant documents per query."""
import numpy as np
import pandas as pd


def balance_qrels(qrels: pd.DataFrame, per_query: int, rel: int = 1, seed: int = 0,
                  qid: str = 'qid', docno: str = 'docno', label: str = 'label') -> pd.DataFrame:
    """Keep at most ``per_query`` relevant documents (label ``>= rel``) per query.

    The highest grades are kept first; within a grade the choice is uniformly random, drawn from
    ``numpy.random.default_rng(seed)`` over the rows sorted by (query, docno), so the result depends
    only on the seed and the qrels' content, never on their row order (FD paper, §5). Judgments below
    ``rel`` (non-relevant ones) are kept unchanged.

    Returns the rows kept, in (query, docno) order, with the input's columns.
    """
    if not isinstance(per_query, (int, np.integer)) or isinstance(per_query, bool) or per_query < 1:
        raise ValueError(f'per_query must be a positive integer, got {per_query!r}')
    missing = [c for c in (qid, docno, label) if c not in qrels.columns]
    if missing:
        raise ValueError(f'qrels lack column(s) {missing} (found {list(qrels.columns)})')
    frame = qrels.assign(**{qid: qrels[qid].astype(str), docno: qrels[docno].astype(str)})
    frame = frame.sort_values([qid, docno], kind='stable').reset_index(drop=True)
    labels = pd.to_numeric(frame[label]).to_numpy(dtype=np.float64)
    is_rel = labels >= rel
    tiebreak = np.random.default_rng(seed).random(len(frame))
    # Order relevant rows by query, grade descending, random key; then take the first per_query of each query.
    order = np.lexsort((tiebreak, -labels, frame[qid].to_numpy(dtype=str)))
    ranked = frame.iloc[order]
    ranked_rel = ranked[is_rel[order]]
    keep_rel = ranked_rel.groupby(qid, sort=False).head(per_query).index
    keep = np.zeros(len(frame), dtype=bool)
    keep[keep_rel] = True
    keep |= ~is_rel
    return frame[keep].reset_index(drop=True)

