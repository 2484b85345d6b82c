"""Containers shared by all worlds: a drawn query set, its population quantities, nDCG@k, pooled moments, own FD."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Dict, List, Optional, Tuple

import numpy as np
import pandas as pd


@dataclass
class QuerySample:
    """One drawn query set (see README.md for the exact meaning of every field)."""
    qids: List[str]
    relevant: np.ndarray
    relevant_qid: np.ndarray
    relevant_label: np.ndarray
    retrieved: Dict[str, Tuple[np.ndarray, np.ndarray, np.ndarray]]
    retrieved_relevant: Dict[str, np.ndarray]
    #: docno of every relevant row and of every retrieved row; a retrieved relevant document has its qrels docno
    relevant_docno: Optional[np.ndarray] = None
    retrieved_docno: Optional[Dict[str, np.ndarray]] = None
    #: optional retrieval scores (higher is better); default k + 1 - rank
    retrieved_score: Optional[Dict[str, np.ndarray]] = None

    def to_frames(self):
        """(qrels, runs, vectors): qrels columns qid, docno, label (label 0 rows for every retrieved document
        that is not relevant); runs {system: DataFrame qid, docno, score, rank}; vectors {docno: float32 vector}."""
        rel_docno = self.relevant_docno
        if rel_docno is None:
            rel_docno = np.array([f'{q}/r{i}' for i, q in enumerate(self.relevant_qid)], dtype=object)
        qrows = [pd.DataFrame({'qid': self.relevant_qid.astype(str), 'docno': rel_docno.astype(str),
                               'label': self.relevant_label.astype(np.int64)})]
        vectors = dict(zip(rel_docno.astype(str).tolist(), self.relevant.astype(np.float32)))
        runs = {}
        for s, (vec, qid, rank) in self.retrieved.items():
            lab = self.retrieved_relevant[s]
            if self.retrieved_docno is not None:
                dn = self.retrieved_docno[s].astype(str)
            else:
                dn = np.array([f'{q}/{s}/{r}' for q, r in zip(qid, rank)], dtype=object).astype(str)
            score = (self.retrieved_score[s] if self.retrieved_score is not None
                     else (rank.max(initial=0) + 1 - rank).astype(np.float64))
            runs[s] = pd.DataFrame({'qid': qid.astype(str), 'docno': dn, 'score': score.astype(np.float64),
                                    'rank': rank.astype(np.int64)})
            nonrel = lab == 0
            qrows.append(pd.DataFrame({'qid': qid[nonrel].astype(str), 'docno': dn[nonrel],
                                       'label': np.zeros(int(nonrel.sum()), np.int64)}))
            for d_, v in zip(dn.tolist(), vec.astype(np.float32)):
                vectors.setdefault(d_, v)
        qrels = pd.concat(qrows, ignore_index=True).drop_duplicates(['qid', 'docno'], keep='first')
        return qrels.reset_index(drop=True), runs, vectors


def from_queries(qids, relevant, relevant_label, relevant_docno, retrieved, retrieved_label, retrieved_docno,
                 retrieved_score=None) -> QuerySample:
    """A QuerySample from per-query lists (one entry per qid): the relevant rows (R_q x d), their labels and docnos,
    and per system the retrieved rows in rank order (k_q x d), their labels (0: not relevant), docnos and scores."""
    def qid_of(parts):
        return np.repeat(np.array(qids, dtype=str), [len(p) for p in parts])
    cat = np.concatenate
    return QuerySample(
        qids=list(qids), relevant=np.vstack(relevant), relevant_qid=qid_of(relevant),
        relevant_label=cat(relevant_label).astype(np.int64), relevant_docno=cat(relevant_docno).astype(str),
        retrieved={s: (np.vstack(v), qid_of(v), cat([np.arange(1, len(x) + 1) for x in v])) for s, v in retrieved.items()},
        retrieved_relevant={s: cat(v).astype(np.int64) for s, v in retrieved_label.items()},
        retrieved_docno={s: cat(v).astype(str) for s, v in retrieved_docno.items()},
        retrieved_score=None if retrieved_score is None else {s: cat(v) for s, v in retrieved_score.items()})


@dataclass
class Population:
    """Exact (or documented Monte Carlo) population quantities of a world; see README.md."""
    relevant_mean: np.ndarray
    relevant_cov: np.ndarray
    retrieved_mean: Dict[str, np.ndarray]
    retrieved_cov: Dict[str, np.ndarray]
    per_query_metric_mean: Dict[str, float]
    #: how each quantity was obtained: 'closed form', 'exact (finite population)', 'monte carlo'
    method: Dict[str, str] = field(default_factory=dict)
    #: Monte Carlo standard errors, same keys/shapes as the quantities they belong to (absent = exact)
    se: Dict[str, object] = field(default_factory=dict)


class World:
    """Base class. Subclasses set name, d, k, systems, equal_pairs, max_queries, metric_order."""
    name: str
    d: int
    k: int
    systems: List[str]
    equal_pairs: List[Tuple[str, str]]
    max_queries: Optional[int]
    #: systems from best to worst population nDCG@k, as designed; systems in one equal pair are adjacent
    metric_order: List[str]
    #: False for the study worlds without population quantities (the harness then scores E[FD̂ₙ] truths only)
    has_population = True

    def draw(self, n_queries: int, rng: np.random.Generator) -> QuerySample:
        raise NotImplementedError

    def population(self) -> Population:
        raise NotImplementedError

    def _check_n(self, n_queries):
        if not isinstance(n_queries, (int, np.integer)) or n_queries < 1:
            raise ValueError(f'n_queries must be a positive integer, got {n_queries!r}')
        if self.max_queries is not None and n_queries > self.max_queries:
            raise ValueError(f'n_queries={n_queries} exceeds the finite population of world {self.name!r} '
                             f'({self.max_queries} queries); ask for at most {self.max_queries}')


def discounts(k: int) -> np.ndarray:
    return 1.0 / np.log2(np.arange(2, k + 2))


def ndcg_matrix(ret_labels: np.ndarray, rel_labels: np.ndarray, k: int) -> np.ndarray:
    """nDCG@k per row. ret_labels (Q, k): label at rank 1..k (0 = not relevant / no document);
    rel_labels (Q, L): labels of all the query's relevant documents, 0-padded. Linear gain = label,
    discount 1/log2(rank+1), ideal = the query's k largest labels."""
    disc = discounts(k)
    dcg = ret_labels[:, :k] @ disc[:ret_labels.shape[1]][:k]
    ideal = -np.sort(-rel_labels, axis=1)[:, :k]
    idcg = ideal @ disc[:ideal.shape[1]]
    out = np.zeros(len(dcg))
    np.divide(dcg, idcg, out=out, where=idcg > 0)
    return out


def per_query_ndcg(sample: QuerySample, system: str, k: int) -> Dict[str, float]:
    """nDCG@k of every drawn query for one system, from the sample's labels."""
    pos = {q: i for i, q in enumerate(sample.qids)}
    _, qid, rank = sample.retrieved[system]
    ret = np.zeros((len(pos), k))
    ret[[pos[q] for q in qid], rank - 1] = sample.retrieved_relevant[system]
    counts = pd.Series(sample.relevant_qid).value_counts()
    rel = np.zeros((len(pos), int(counts.max())))
    order = np.argsort([pos[q] for q in sample.relevant_qid], kind='stable')
    qi = np.array([pos[q] for q in sample.relevant_qid])[order]
    col = np.arange(len(qi)) - np.searchsorted(qi, qi)
    rel[qi, col] = sample.relevant_label[order]
    return dict(zip(sample.qids, ndcg_matrix(ret, rel, k)))


def own_fd(X, Y):
    """FD between the Gaussians (mean, unbiased covariance) of two (n x d) arrays, plain numpy (the studies' own)."""
    m1, m2 = X.mean(0), Y.mean(0)
    S1, S2 = np.cov(X, rowvar=False), np.cov(Y, rowvar=False)
    w, V = np.linalg.eigh(S1)
    sq = (V * np.sqrt(np.clip(w, 0, None))) @ V.T
    ev = np.linalg.eigvalsh(sq @ S2 @ sq)
    return float(((m1 - m2) ** 2).sum() + np.trace(S1) + np.trace(S2) - 2 * np.sqrt(np.clip(ev, 0, None)).sum())


def pooled_moments(x: np.ndarray, weights: Optional[np.ndarray] = None):
    """Mean and covariance (divisor = total weight, not n-1) of rows of x: the ratio form of README.md."""
    x = np.asarray(x, np.float64)
    w = np.ones(len(x)) if weights is None else np.asarray(weights, np.float64)
    m = w @ x / w.sum()
    xc = x - m
    return m, (xc * w[:, None]).T @ xc / w.sum()
