"""The two sets of vector measures, selected on integer codes: qrels coded once per evaluation, each run ranked once.

:class:`Judgments` turns the (prepared) qrels into query codes (in sorted query order), document codes and labels,
and remembers each distinct relevant-set definition (``rel``, ``per_query``, ``seed``). :class:`RankedRun` puts a
run's rows of the judged queries in trec_eval's order with one ``lexsort`` and gives every row two ranks within its
query: among all rows, and among the rows with no judgment for that query (URR, the FD paper §6). Every measure's
retrieved set is then a boolean mask — ``rank < k`` (or ``unjudged rank < k``) among the queries with a relevant
document — so the selection of all measures of a run costs one sort, with no per-row Python and no string
comparison after the codes are made.
"""
from typing import Dict, Optional, Tuple

import numpy as np
import pandas as pd

from .frames import DOCNO, LABEL, QID, SCORE
from .qrels import balance_qrels
from .ranking import numeric_scores, trec_eval_order

_ROW = '__row__'  # a qrels row's position, carried through balance_qrels


def group_ranks(groups: np.ndarray, member: Optional[np.ndarray] = None) -> np.ndarray:
    """The 0-based position of each row within its group (rows of a group are contiguous), counting only the rows
    where ``member`` is True (the value at other rows is meaningless)."""
    n = len(groups)
    if n == 0:
        return np.zeros(0, dtype=np.int64)
    starts = np.flatnonzero(np.r_[True, groups[1:] != groups[:-1]])
    sizes = np.diff(np.r_[starts, n])
    counts = np.ones(n, dtype=np.int64) if member is None else member.astype(np.int64)
    running = np.cumsum(counts)
    before = np.repeat((running - counts)[starts], sizes)  # members of the group's earlier rows: none at its start
    return running - before - 1


class Judgments:
    """Qrels (a frame prepared by :func:`~.frames.prepare_qrels`) as integer codes, made once per evaluation.

    ``queries``: the distinct query ids, sorted (a query's code is its position); ``docs``: the distinct judged
    docnos (code = position); per row: ``qcode``, ``dcode``, ``labels``.
    """

    def __init__(self, qrels: pd.DataFrame):
        self.frame = qrels
        qcode, queries = pd.factorize(qrels[QID], sort=True)
        dcode, docs = pd.factorize(qrels[DOCNO])
        self.qcode, self.dcode = qcode.astype(np.int64), dcode.astype(np.int64)
        self.queries, self.docs = pd.Index(queries), pd.Index(docs)
        self.query_names = np.asarray(self.queries, dtype=str)
        self.doc_names = np.asarray(self.docs, dtype=object)
        self.labels = qrels[LABEL].to_numpy(dtype=np.int64)
        # every judged (query, document), sorted (prepared qrels have no duplicate pair)
        self.pairs = np.sort(self.qcode * len(self.docs) + self.dcode)
        self._relevant: Dict[Tuple, np.ndarray] = {}

    def relevant(self, measure) -> np.ndarray:
        """Positions of the qrels rows in ``measure``'s relevant set: judged ``>= rel``, at most ``per_query`` per
        query when given (:func:`~.qrels.balance_qrels`: highest grade first, random within a grade by ``seed``).
        In qrels order, or (query, docno) order when balanced. ValueError if there is none."""
        rel, per_query = measure['rel'], measure.positive_int('per_query')
        key = (rel, per_query, measure['seed'] if per_query is not None else None)
        if key not in self._relevant:
            rows = np.flatnonzero(self.labels >= rel)
            if len(rows) == 0:
                raise ValueError(f'{measure}: the qrels have no document with relevance >= {rel}'
                                 f' (labels found: {sorted(np.unique(self.labels).tolist())[:10]})')
            if per_query is not None:
                frame = self.frame.iloc[rows].assign(**{_ROW: rows})
                kept = balance_qrels(frame, per_query, rel=rel, seed=measure['seed'], qid=QID, docno=DOCNO, label=LABEL)
                rows = kept[_ROW].to_numpy(dtype=np.int64)
            self._relevant[key] = rows
        return self._relevant[key]

    def query_mask(self, rows: np.ndarray) -> np.ndarray:
        """A boolean per query code: whether the query has a row among ``rows``."""
        mask = np.zeros(len(self.queries), dtype=bool)
        mask[self.qcode[rows]] = True
        return mask


class RankedRun:
    """A run's rows of the judged queries, ordered once as trec_eval orders them (query, score descending, ties by
    docno descending), each with its rank within its query among all rows (``rank``) and among its unjudged rows
    (``unjudged_rank``, valid where ``unjudged``).

    ``rows``: the positions in the run frame, in this order; ``qcode``: each row's query code (a
    :class:`Judgments` code); ``code``: each row's document code in a vocabulary that extends the judgments'
    docnos with the run's unjudged ones (``vocabulary``), so both sides' documents share one code space.
    """

    def __init__(self, run: pd.DataFrame, judgments: Judgments):
        self.judgments = judgments
        qcode = judgments.queries.get_indexer(run[QID])
        rows = np.flatnonzero(qcode >= 0)  # rows of queries absent from the qrels count for no vector measure
        scores = numeric_scores(run[SCORE].iloc[rows], SCORE)
        docnos = run[DOCNO].iloc[rows]
        order = trec_eval_order(qcode[rows], scores, docnos)  # query codes follow the sorted query ids
        self.rows = rows[order]
        self.qcode = qcode[self.rows].astype(np.int64)
        judged_code = judgments.docs.get_indexer(docnos)[order]
        extra_code, extra = pd.factorize(docnos.iloc[order][judged_code < 0])
        code = judged_code.astype(np.int64)
        code[judged_code < 0] = len(judgments.docs) + extra_code
        self.code = code
        self.vocabulary = np.concatenate([judgments.doc_names, np.asarray(extra, dtype=object)])  # of Python str
        keys = self.qcode * len(judgments.docs) + judged_code
        pos = np.searchsorted(judgments.pairs, keys)
        hit = (judged_code >= 0) & (pos < len(judgments.pairs))
        hit[hit] = judgments.pairs[pos[hit]] == keys[hit]
        self.unjudged = ~hit
        self.rank = group_ranks(self.qcode)
        self.unjudged_rank = group_ranks(self.qcode, self.unjudged)

    def select(self, cutoff: Optional[int], urr: bool, queries: np.ndarray) -> np.ndarray:
        """Positions (in this order) of the first ``cutoff`` rows — with ``urr``, the first ``cutoff`` unjudged rows —
        of each query whose code is True in ``queries`` (all rows if ``cutoff`` is None)."""
        keep = queries[self.qcode]
        if urr:
            keep &= self.unjudged
        if cutoff is not None:
            keep &= (self.unjudged_rank if urr else self.rank) < cutoff
        return np.flatnonzero(keep)
