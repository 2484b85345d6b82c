"""A synthetic retrieval world for checking the coverage of pyterrier_frechet's tau intervals.

Everything here is the checker's own code (numpy only); it does not import pyterrier_frechet.

World (fixed by WORLD_SEED; see docs/unseen-tau-check.md for the rationale):

* d = 384 embeddings, unit-normalised, built as
      v = A_C * c + b_d * t_q + S_STYLE * z_d * u_style + SIG * eps_d        (then / ||v||)
  with c a corpus-wide common direction (sentence encoders are anisotropic: random pairs have cosine ~0.05-0.1),
  t_q the query's topic vector, u_style a "style" direction (length / format of a document), z_d ~ N(0,1) the
  document's style, and eps_d (and t_q) drawn from an anisotropic Gaussian (eigen-spectrum ~ k^-0.6 in a random
  basis; E||eps||^2 = 1).  b_d: topicality in the embedding: label 2 -> ~1.0, label 1 -> ~0.85, non-relevant ->
  0.8 * tau_d with tau_d ~ Beta(1.2, 2) (a few non-relevant "near misses" look as on-topic as relevant documents).
* An infinite query population: every query (its documents, labels, embeddings and every system's noise) is a
  deterministic function of (WORLD_SEED, stream, query index) only.
* Per query: R_q relevant documents, R_q = clip(round(exp(N(ln 12, 1))), 1, 100); each relevant document has label 2
  with probability p2_q ~ Beta(2, 3), else label 1; N_NONREL = 150 non-relevant candidates (label 0).
  Difficulty delta_q = exp(0.4 N(0,1)) multiplies every system's signal.
* Document features seen by the systems: g (label utility 0/1/1.5, only "understood" by rerankers), sem (semantic
  match: b_d plus shared semantic noise), lex (lexical match ~ N(0/0.7/1.0 by label, 1)), z (style).
  System score = delta_q * (w_rel*g + w_sem*sem + w_lex*lex) + w_sty*z + sigma*eps_{s,q,d}; eps drawn per (query,
  system, document), i.e. each system is a fixed function of the query plus its own noise.
  Rerankers re-order their parent's top CAND = 100 documents.
* Every system returns its top K = 10.  12 systems (SYSTEMS below).
"""
from __future__ import annotations

import numpy as np

from .core import World as _World, from_queries

D = 384
K = 10
N_NONREL = 150
CAND = 100
WORLD_SEED = 20261126
A_C = 0.35
S_STYLE = 0.5
SIG = 1.0
SEM_NOISE = 0.25

# name, parent (None = retrieves from the whole pool), w_rel, w_sem, w_lex, w_sty, sigma
SYSTEMS = [
    ("BM25",          None,   0.00, 0.30, 1.00, -0.20, 0.60),
    ("BM25_monoBERT", "BM25", 0.65, 0.90, 0.30,  0.00, 0.70),
    ("BM25_monoT5l",  "BM25", 0.75, 0.90, 0.25, -0.15, 0.70),
    ("BM25_MiniLMCE", "BM25", 0.65, 1.00, 0.20,  0.45, 0.70),
    ("BM25_ELECTRA",  "BM25", 0.72, 0.85, 0.30, -0.35, 0.70),
    ("BM25_duoT5",    "BM25", 0.80, 0.90, 0.25,  0.20, 0.70),
    ("TASB",          None,   0.30, 1.40, 0.10,  0.40, 0.60),
    ("ANCE",          None,   0.25, 1.30, 0.10,  0.60, 0.65),
    ("ColBERT",       None,   0.40, 1.30, 0.30,  0.15, 0.60),
    ("TASB_monoT5",   "TASB", 0.75, 0.90, 0.25,  0.30, 0.70),
    ("WeakLM",        None,   0.00, 0.10, 0.60,  0.30, 0.90),
    ("WeakDense",     None,   0.05, 0.70, 0.00,  0.80, 0.90),
]
# Dropped before any real run (to fit ~25 trials of 200 bootstrap samples into the time budget; the
# 16-system version was timed at ~95 s per trial on the shared 2-core machine):
DROPPED_SYSTEMS = [
    ("BM25_RM3",      None,   0.05, 0.40, 1.00, -0.20, 0.60),
    ("QLD",           None,   0.00, 0.25, 0.95,  0.25, 0.60),
    ("BM25_monoT5b",  "BM25", 0.70, 0.90, 0.25,  0.35, 0.70),
    ("Contriever",    None,   0.30, 1.40, 0.10, -0.10, 0.65),
]
NAMES = [s[0] for s in SYSTEMS]
G_OF_LABEL = np.array([0.0, 1.0, 1.5])
LEX_MU = np.array([0.0, 0.9, 1.2])


class World:
    def __init__(self, seed: int = WORLD_SEED, systems=SYSTEMS):
        self.seed = seed
        self.systems = systems
        rng = np.random.default_rng([seed, 0])
        basis, _ = np.linalg.qr(rng.standard_normal((D, D)))
        lam = np.arange(1, D + 1, dtype=float) ** -0.6
        lam /= lam.sum()
        self.B = basis * np.sqrt(lam)          # x = g @ B.T  ->  cov = basis diag(lam) basis^T, E||x||^2 = 1
        c = rng.standard_normal(D)
        self.c = c / np.linalg.norm(c)
        u = rng.standard_normal(D)
        u -= (u @ self.c) * self.c
        self.u_style = u / np.linalg.norm(u)
        self.idx = {s[0]: i for i, s in enumerate(systems)}

    def query(self, stream: int, qi: int):
        """One query of the population: dict with labels (n_docs,), retrieved (n_sys, K) doc indices,
        emb {doc index: vector} for relevant and retrieved documents (float32, unit norm)."""
        rng = np.random.default_rng([self.seed, stream, qi])
        R = int(np.clip(np.round(np.exp(rng.normal(np.log(12.0), 1.0))), 1, 100))
        p2 = rng.beta(2, 3)
        lab_rel = np.where(rng.random(R) < p2, 2, 1)
        labels = np.concatenate([lab_rel, np.zeros(N_NONREL, int)])
        n = labels.size
        delta = np.exp(0.4 * rng.normal())
        tau = rng.beta(1.2, 2.0, N_NONREL)
        b = np.concatenate([np.where(lab_rel == 2, 1.0, 0.85) * np.exp(0.1 * rng.normal(size=R)), 0.8 * tau])
        sem = b + SEM_NOISE * rng.normal(size=n)
        lex = LEX_MU[labels] + rng.normal(size=n)
        z = rng.normal(size=n)
        g = G_OF_LABEL[labels]
        # scores and rankings
        ranked = {}
        retrieved = np.empty((len(self.systems), K), dtype=int)
        eps = rng.normal(size=(len(self.systems), n))
        for si, (name, parent, w_rel, w_sem, w_lex, w_sty, sigma) in enumerate(self.systems):
            s = delta * (w_rel * g + w_sem * sem + w_lex * lex) + w_sty * z + sigma * eps[si]
            if parent is not None:
                cand = ranked[parent][:CAND]
                order = cand[np.argsort(-s[cand], kind="stable")]
            else:
                order = np.argsort(-s, kind="stable")
            ranked[name] = order
            retrieved[si] = order[:K]
        # embeddings of relevant + retrieved documents
        need = np.union1d(np.arange(R), np.unique(retrieved))
        topic = rng.normal(size=D) @ self.B.T
        erng = np.random.default_rng([self.seed, stream, qi, 1])
        eps_d = erng.normal(size=(need.size, D)) @ self.B.T
        V = (A_C * self.c[None, :] + b[need, None] * topic[None, :]
             + S_STYLE * z[need, None] * self.u_style[None, :] + SIG * eps_d)
        V /= np.linalg.norm(V, axis=1, keepdims=True)
        V = V.astype(np.float32)
        return dict(R=R, labels=labels, retrieved=retrieved, need=need, V=V)


class TauWorld(_World):
    """The common interface: ``draw(n, rng)`` is the QuerySet of n query indices drawn by ``rng`` from stream 4 (the
    study's scripts use streams 1-3 and index queries by position); labels 1, 2 relevant, 0 not."""
    name, d, k, systems, metric_order, equal_pairs, max_queries, has_population = (
        'tau12', D, K, NAMES, NAMES, [], None, False)
    STREAM = 4

    def __init__(self, seed: int = WORLD_SEED):
        self.world = World(seed)

    def draw(self, n_queries, rng):
        self._check_n(n_queries)
        qs = QuerySet(self.world, self.STREAM, rng.integers(2 ** 62, size=int(n_queries)))
        docno = lambda qi, js: [f"s{self.STREAM}q{qi}d{j}" for j in js]  # noqa: E731
        return from_queries(
            [f"q{qi}" for qi in qs.qidx], np.split(qs.rel_vectors(), np.cumsum([q["R"] for q in qs.queries])[:-1]),
            [q["labels"][:q["R"]] for q in qs.queries], [docno(qi, range(q["R"])) for qi, q in zip(qs.qidx, qs.queries)],
            {s: np.split(qs.ret_vectors(si), len(qs.queries)) for si, s in enumerate(NAMES)},
            {s: [q["labels"][q["retrieved"][si]] for q in qs.queries] for si, s in enumerate(NAMES)},
            {s: [docno(qi, q["retrieved"][si]) for qi, q in zip(qs.qidx, qs.queries)] for si, s in enumerate(NAMES)})


def ndcg10(labels: np.ndarray, retrieved_row: np.ndarray) -> float:
    disc = 1.0 / np.log2(np.arange(2, K + 2))
    dcg = float((labels[retrieved_row] * disc[: retrieved_row.size]).sum())
    ideal = np.sort(labels)[::-1][:K]
    idcg = float((ideal * disc[: ideal.size]).sum())
    return dcg / idcg if idcg > 0 else 0.0


class QuerySet:
    """n queries of the world: the relevant-document vectors, each system's retrieved vectors and nDCG@10s."""

    def __init__(self, world: World, stream: int, qidx):
        self.queries = [world.query(stream, int(q)) for q in qidx]
        self.qidx = list(qidx)
        self.n_sys = len(world.systems)

    def rel_vectors(self) -> np.ndarray:
        out = []
        for q in self.queries:
            pos = np.searchsorted(q["need"], np.arange(q["R"]))
            out.append(q["V"][pos])
        return np.concatenate(out)

    def ret_vectors(self, si: int) -> np.ndarray:
        out = []
        for q in self.queries:
            pos = np.searchsorted(q["need"], q["retrieved"][si])
            out.append(q["V"][pos])
        return np.concatenate(out)

    def ndcg(self) -> np.ndarray:
        """(n_sys, n_queries) nDCG@10."""
        return np.array([[ndcg10(q["labels"], q["retrieved"][si]) for q in self.queries]
                         for si in range(self.n_sys)])


# ---------------------------------------------------------------------------------------------------- own FD
def _moments(X: np.ndarray, ddof: int):
    X = X.astype(np.float64)
    mu = X.mean(0)
    Xc = X - mu
    return mu, Xc.T @ Xc / (X.shape[0] - ddof)


def _sqrtm_psd(S):
    w, U = np.linalg.eigh(S)
    w = np.clip(w, 0, None)
    return (U * np.sqrt(w)) @ U.T


def fd_many(rel: np.ndarray, rets, ddof: int = 1) -> np.ndarray:
    """FD between the Gaussian of `rel` and that of each matrix in `rets`:
    ||mu1-mu2||^2 + Tr(S1) + Tr(S2) - 2 Tr sqrtm(S1 S2); Tr sqrtm(S1 S2) = sum sqrt eig(A S2 A), A = S1^(1/2)."""
    mu1, S1 = _moments(rel, ddof)
    A = _sqrtm_psd(S1)
    out = []
    for X in rets:
        mu2, S2 = _moments(X, ddof)
        M = A @ S2 @ A
        ev = np.clip(np.linalg.eigvalsh((M + M.T) / 2), 0, None)
        out.append(float(((mu1 - mu2) ** 2).sum() + np.trace(S1) + np.trace(S2) - 2 * np.sqrt(ev).sum()))
    return np.array(out)


# ---------------------------------------------------------------------------------------------------- tau_AP
def tau_ap(ref: np.ndarray, other: np.ndarray, iterate_over: str = "other") -> float:
    """AP correlation (Yilmaz, Aslam & Robertson 2008), both arrays oriented 'higher = better'.
    `ref` is the reference ("true") ranking. iterate_over='other': walk down the ranking by `other` and count,
    for the item at rank i, the items above it (in `other`) that `ref` also puts above it (the paper's definition,
    list2 = the ranking being evaluated). iterate_over='ref': the same with the roles of the two lists swapped."""
    ref = np.asarray(ref, float)
    other = np.asarray(other, float)
    walk, judge = (other, ref) if iterate_over == "other" else (ref, other)
    order = np.argsort(-walk, kind="stable")
    N = order.size
    tot = 0.0
    for i in range(1, N):
        it = order[i]
        above = order[:i]
        tot += np.sum(judge[above] > judge[it]) / i
    return 2.0 * tot / (N - 1) - 1.0
