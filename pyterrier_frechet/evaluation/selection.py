"""The one selection engine — trec_eval's order, top k, Unjudged Retrieved Results — on integer codes: qrels coded
once per evaluation, each run ranked once. It serves the vector measures, the histogram measures (DO, HSA),
:class:`~pyterrier_frechet.URRFilter` and the depth pools of ``pool-sim``.

Orders follow trec_eval (and so the classical measures in the same ``pt.Experiment`` table): score descending, ties
broken by docno descending.

:class:`Judgments` turns the (prepared) qrels into query codes (in sorted query order), document codes and labels,
and remembers each distinct relevant-set definition (``rel``, ``per_query``, ``seed``). :class:`RankedRun` puts a
run's rows of the judged queries in trec_eval's order with one ``lexsort`` and gives every row two ranks within its
query: among all rows, and among the rows with no judgment for that query (URR, the FD paper §6). Every measure's
retrieved set is then a boolean mask — ``rank < k`` (or ``unjudged rank < k``) among the queries with a relevant
document — so the selection of all measures of a run costs one sort, with no per-row Python and no string
comparison after the codes are made.
"""
import hashlib
from collections import OrderedDict
from typing import Callable, Dict, Optional, Tuple

import numpy as np
import pandas as pd

from .frames import DOCNO, LABEL, QID, SCORE, prepare_qrels
from .qrels import balance_qrels

_ROW = '__row__'  # a qrels row's position, carried through balance_qrels


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
    """Qrels (a frame prepared by :func:`~.frames.prepare_qrels`) as integer codes, made once per evaluation — the
    evaluation's context: what every run of the evaluation shares is remembered here (:meth:`once`) and goes when
    the caller drops this object (``pf.evaluate`` and the CLI make one per call, the provider one per qrels).

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
        # every judged (query, document), sorted (prepared qrels have no duplicate pair), and the row of each
        keys = self.qcode * len(self.docs) + self.dcode
        self.pair_rows = np.argsort(keys, kind='stable')
        self.pairs = keys[self.pair_rows]
        self._relevant: Dict[Tuple, np.ndarray] = {}
        self._memo: Dict[Tuple, object] = {}

    def once(self, key: Tuple, compute: Callable[[], object]) -> object:
        """``compute()``, remembered under ``key`` for the life of this object: work that depends only on the qrels
        (and, for vectors, on an encoder's content identity), done for the first run of the evaluation and reused by
        the others — the relevant vectors of a fixed encoder, their reduction by FD."""
        if key not in self._memo:
            self._memo[key] = compute()
        return self._memo[key]

    @classmethod
    def none(cls) -> 'Judgments':
        """No judgment at all: the run side of a selection that needs no qrels (a depth pool)."""
        return cls(pd.DataFrame({QID: pd.Series([], dtype=str), DOCNO: pd.Series([], dtype=str),
                                 LABEL: pd.Series([], dtype=np.int64)}))


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
    """A run's rows, ordered once as trec_eval orders them (query, score descending, ties by docno descending), each
    with its rank within its query among all rows (``rank``) and among its unjudged rows (``unjudged_rank``, valid
    where ``unjudged``) — the one selection engine of every measure (vector and histogram), of
    :class:`~pyterrier_frechet.URRFilter` and of the depth pools of ``pool-sim``.

    ``rows``: the positions in the run frame, in this order; ``qcode``: each row's query code (a :class:`Judgments`
    code; -1 for a query the qrels lack); ``scores``: each row's score (float64); ``code``: each row's document code
    in a vocabulary that extends the judgments' docnos with the run's unjudged ones (``vocabulary``), so both sides'
    documents share one code space; ``judged_row``: the qrels row judging each row (-1 where ``unjudged``).

    ``run``: a frame with ir_measures' column names and str ids (:func:`~.frames.prepare_run`). Only the rows of
    the judged queries are kept unless ``every_query`` (then queries are ordered by id, judged or not); without
    ``judgments`` every row of every query is kept, all unjudged.
    """

    def __init__(self, run: pd.DataFrame, judgments: Optional[Judgments] = None, every_query: bool = False):
        if judgments is None:
            judgments, every_query = Judgments.none(), True
        self.judgments = judgments
        ids = run[QID]
        qcode = judgments.queries.get_indexer(ids)
        if every_query:
            rows = np.arange(len(run))
            universe = pd.Index(sorted(set(judgments.query_names.tolist()) | set(pd.unique(ids).tolist())))
            group = universe.get_indexer(ids)  # the queries in id order, judged or not
        else:
            rows = np.flatnonzero(qcode >= 0)  # rows of queries absent from the qrels count for no measure
            group = qcode
        scores = numeric_scores(run[SCORE].iloc[rows], SCORE)
        docnos = run[DOCNO].iloc[rows]
        order = trec_eval_order(group[rows], scores, docnos)  # query codes follow the sorted query ids
        self.rows = rows[order]
        self.qcode = qcode[self.rows].astype(np.int64)
        self.scores = scores[order]
        group = group[self.rows]
        judged_code = judgments.docs.get_indexer(docnos)[order]
        extra_code, extra = pd.factorize(docnos.iloc[order][judged_code < 0])
        code = judged_code.astype(np.int64)
        code[judged_code < 0] = len(judgments.docs) + extra_code
        self.code = code
        self.vocabulary = np.concatenate([judgments.doc_names, np.asarray(extra, dtype=object)])  # of Python str
        keys = self.qcode * len(judgments.docs) + judged_code
        pos = np.searchsorted(judgments.pairs, keys)
        hit = (judged_code >= 0) & (self.qcode >= 0) & (pos < len(judgments.pairs))
        hit[hit] = judgments.pairs[pos[hit]] == keys[hit]
        self.unjudged = ~hit
        self.judged_row = np.full(len(keys), -1, dtype=np.int64)
        self.judged_row[hit] = judgments.pair_rows[pos[hit]]
        self.rank = group_ranks(group)
        self.unjudged_rank = group_ranks(group, self.unjudged)

    def labels(self) -> np.ndarray:
        """Each row's relevance label (float64), NaN where unjudged."""
        out = np.full(len(self.rows), np.nan)
        judged = self.judged_row >= 0
        out[judged] = self.judgments.labels[self.judged_row[judged]]
        return out

    def select(self, cutoff: Optional[int], urr: bool, queries: Optional[np.ndarray] = None) -> np.ndarray:
        """Positions (in this order) of the first ``cutoff`` rows — with ``urr``, the first ``cutoff`` unjudged rows —
        of each query whose code is True in ``queries`` (of every query if None; all rows if ``cutoff`` is None)."""
        if cutoff is not None and (isinstance(cutoff, bool) or cutoff < 1):
            raise ValueError(f'cut-off must be a positive integer, got {cutoff!r}')
        if queries is None:
            keep = np.ones(len(self.rows), dtype=bool)
        elif len(queries) == 0:
            keep = np.zeros(len(self.rows), dtype=bool)
        else:
            keep = (self.qcode >= 0) & np.asarray(queries, dtype=bool)[np.maximum(self.qcode, 0)]
        if urr:
            keep &= self.unjudged
        if cutoff is not None:
            keep &= (self.unjudged_rank if urr else self.rank) < cutoff
        return np.flatnonzero(keep)


class QrelsMemo:
    """The qrels prepared and coded (:class:`Judgments`, which also holds what the runs of an evaluation
    share: relevant vectors, their reduction), by the content of the qrels frame, for the last ``size`` qrels.

    Owned by the provider, because ir_measures builds a new evaluator for every system of a ``pt.Experiment``
    (and PyTerrier hands each a new copy of the qrels frame), so nothing smaller lives across the systems of one
    experiment. The key is the frame's content — column names, dtypes and a 64-bit hash of every row
    (``pandas.util.hash_pandas_object``) — never ``id()``: an edited or new frame is a new entry, the same
    content is the same evaluation. Qrels in other forms (dicts, iterators) are prepared every time. The provider
    (:class:`~.provider.SetMeasureProvider`) holds one; see docs/state.md; :meth:`clear` empties it."""

    def __init__(self, size: int = 4):
        self.size = size
        self._entries: 'OrderedDict[bytes, Judgments]' = OrderedDict()

    @staticmethod
    def identity(qrels) -> Optional[bytes]:
        """The content identity of a qrels DataFrame; None for other forms (or cells pandas cannot hash)."""
        if not isinstance(qrels, pd.DataFrame):
            return None
        h = hashlib.blake2b(repr((list(map(str, qrels.columns)), list(map(str, qrels.dtypes)))).encode(), digest_size=16)
        try:
            h.update(pd.util.hash_pandas_object(qrels, index=False).to_numpy().tobytes())
        except TypeError:  # unhashable cells
            return None
        return h.digest()

    def judgments(self, qrels) -> Judgments:
        """The :class:`Judgments` of ``qrels`` (any form ir_measures reads), made once per content."""
        key = self.identity(qrels)
        hit = self._entries.get(key) if key is not None else None
        if hit is None:
            hit = Judgments(prepare_qrels(qrels, 'pyterrier_frechet'))
            if key is None:
                return hit
            self._entries[key] = hit
            if len(self._entries) > self.size:
                self._entries.popitem(last=False)
        self._entries.move_to_end(key)
        return hit

    def clear(self) -> None:
        """Forget every entry."""
        self._entries.clear()
