"""Ranking helpers shared by the ``FD`` measure and :class:`~pyterrier_frechet.URRFilter`.

Orders follow trec_eval (and so the classical measures in the same ``pt.Experiment`` table): score
descending, ties broken by docno descending. Column names are parameters so that the same code
serves PyTerrier frames (``qid``/``docno``) and ir_measures frames (``query_id``/``doc_id``).
"""
from typing import Optional

import numpy as np
import pandas as pd


def numeric_scores(scores: pd.Series, name: str = 'score') -> np.ndarray:
    """A run's scores as float64; ValueError if any is missing or not a number."""
    values = pd.to_numeric(scores, errors='coerce').to_numpy(dtype=np.float64)
    if np.isnan(values).any():
        raise ValueError(f'{int(np.isnan(values).sum())} row(s) of the run have a missing or non-numeric {name!r}')
    return values


def trec_eval_order(queries: np.ndarray, scores: np.ndarray, docnos: pd.Series) -> np.ndarray:
    """The permutation putting rows in trec_eval's order: by ``queries`` (codes or ids, ascending), score descending,
    ties by docno descending. The docnos are ranked (a string sort) only when some query has tied scores."""
    # np.lexsort sorts by the last key first; negated scores and reversed docno ranks give descending orders.
    order = np.lexsort((-scores, queries))
    q, s = queries[order], scores[order]
    if len(order) and ((q[1:] == q[:-1]) & (s[1:] == s[:-1])).any():
        docno_rank = pd.factorize(pd.Series(docnos).astype(str), sort=True)[0]  # dense rank in string order
        order = np.lexsort((-docno_rank, -scores, queries))
    return order


def ordered(run: pd.DataFrame, qid: str = 'qid', docno: str = 'docno', score: str = 'score') -> pd.DataFrame:
    """``run`` sorted by query, then score descending, ties by docno descending (trec_eval's order)."""
    if len(run) == 0:
        return run
    scores = numeric_scores(run[score], score)
    return run.iloc[trec_eval_order(run[qid].to_numpy(dtype=str), scores, run[docno])]


def check_duplicates(frame: pd.DataFrame, qid: str, docno: str, what: str) -> None:
    """Raise ValueError if a (query, document) pair occurs twice: a run or qrels with such rows is ambiguous."""
    dup = frame.duplicated([qid, docno])
    if dup.any():
        first = frame.loc[dup, [qid, docno]].iloc[0].tolist()
        raise ValueError(f'{what} has {int(dup.sum())} duplicate ({qid}, {docno}) row(s), e.g. {first}')


def top_k(run: pd.DataFrame, k: Optional[int], qid: str = 'qid', docno: str = 'docno', score: str = 'score',
          exclude: Optional[pd.DataFrame] = None) -> pd.DataFrame:
    """The first ``k`` rows of each query in trec_eval order (all rows if ``k`` is None).

    With ``exclude`` (a frame with ``qid`` and ``docno`` columns, e.g. every judged pair of the qrels),
    those (query, document) pairs are skipped first, so the result is the first ``k`` *unexcluded*
    documents of each ranking — the Unjudged Retrieved Results (URR) of the FD paper, §6.
    """
    if k is not None and k < 1:
        raise ValueError(f'cut-off must be a positive integer, got {k}')
    run = ordered(run, qid, docno, score)
    if exclude is not None and len(run):
        pairs = pd.MultiIndex.from_frame(exclude[[qid, docno]].astype(str))
        keys = pd.MultiIndex.from_arrays([run[qid].astype(str), run[docno].astype(str)])
        run = run[~keys.isin(pairs)]
    if k is not None:
        run = run.groupby(qid, sort=False).head(k)
    return run
