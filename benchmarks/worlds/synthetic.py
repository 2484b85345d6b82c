"""Synthetic worlds (a) independent queries, (b) queries sharing topics, (c) heavy-tailed / unit-sphere embeddings.

Every world is one `SyntheticWorld` with different switches; README.md gives the generative model and the
population formulas. Geometry (mean, spectrum rotation, drift directions) is fixed by the world seed;
`draw` uses only the generator it is given.
"""
from __future__ import annotations

import zlib
from dataclasses import dataclass, astuple
from typing import Dict, List, Optional, Sequence, Tuple

import numpy as np

from .core import Population, QuerySample, World, ndcg_matrix

L_MAX = 40  # most relevant documents a query can have


@dataclass(frozen=True)
class SystemSpec:
    """A synthetic system. Rank i (1..k) holds a relevant document with probability
    min(1, h * p_top * decay**(i-1)) (h = topic difficulty, 1 outside world (b)), as long as the query has relevant
    documents left; the relevant documents are picked uniformly without replacement and, if sort_by_grade, put
    in grade order. Other ranks hold an off-topic document
    x = (1-lam) * t + lam * u + drift * sqrt(d) * e_dir + off_scale * A eta  (t = the query's topic, u = another topic)."""
    name: str
    p_top: float
    decay: float
    lam: float
    drift: float
    drift_dir: int
    off_scale: float
    sort_by_grade: bool

    def law(self):
        """Everything but the name: two systems with equal law() are identical in law."""
        return astuple(self)[1:]


DEFAULT_SYSTEMS = (
    SystemSpec('good', 0.95, 0.97, 0.3, 0.05, 0, 0.9, True),
    SystemSpec('mid_a', 0.75, 0.92, 0.5, 0.10, 1, 1.0, True),
    SystemSpec('mid_b', 0.75, 0.92, 0.5, 0.10, 1, 1.0, True),
    SystemSpec('weak', 0.50, 0.88, 0.7, 0.20, 2, 1.0, False),
    SystemSpec('poor', 0.20, 0.85, 0.9, 0.30, 3, 1.1, False),
)
DEFAULT_ORDER = ['good', 'mid_a', 'mid_b', 'weak', 'poor']


def nrel_pmf(median: float = 5.0, sigma: float = 0.9, n_max: int = L_MAX) -> np.ndarray:
    """P(a query has n relevant documents), n = 1..n_max: a discretised log-normal (skewed, like TREC qrels)."""
    n = np.arange(1, n_max + 1)
    w = np.exp(-(np.log(n) - np.log(median)) ** 2 / (2 * sigma ** 2)) / n
    return w / w.sum()


def _tnoise(rng, shape, nu):
    """Standard normal, or Student t with nu degrees of freedom scaled to unit variance (shared mixing per row)."""
    z = rng.standard_normal(shape)
    if nu is None:
        return z
    w = rng.chisquare(nu, size=shape[:-1] + (1,)) / nu
    return z / np.sqrt(w) * np.sqrt((nu - 2) / nu)


class SyntheticWorld(World):
    def __init__(self, name: str, d: int, seed: int, *, k: int = 10,
                 systems: Sequence[SystemSpec] = DEFAULT_SYSTEMS, metric_order: Sequence[str] = DEFAULT_ORDER,
                 tau: float = 1.0, mean_norm: float = 0.5,
                 grade_probs: Sequence[float] = (0.5, 0.35, 0.15), grade_scales: Sequence[float] = (0.8, 0.6, 0.45),
                 nrel: Optional[np.ndarray] = None, spectrum_decay: float = 0.0,
                 nu_topic: Optional[float] = None, nu_doc: Optional[float] = None, sphere: bool = False,
                 topic_share: float = 0.0, topic_sizes: Tuple[int, int] = (2, 8),
                 difficulty: Tuple[Sequence[float], Sequence[float]] = ((1.0,), (1.0,)),
                 mc_docs: int = 10 ** 6, mc_queries: int = 200_000):
        if d < 2:
            raise ValueError(f'd must be >= 2, got {d}')
        for v in (nu_topic, nu_doc):
            if v is not None and v <= 4:
                raise ValueError(f'degrees of freedom must be > 4 (finite fourth moments), got {v}')
        self.name, self.d, self.k, self.seed = name, int(d), int(k), int(seed)
        self.specs = {s.name: s for s in systems}
        self.systems = [s.name for s in systems]
        if len(self.systems) < 4:
            raise ValueError('a world needs at least 4 systems')
        laws = {}
        for s in systems:
            laws.setdefault(s.law(), []).append(s.name)
        self.equal_pairs = [(g[i], g[j]) for g in laws.values() for i in range(len(g)) for j in range(i + 1, len(g))]
        self.metric_order = list(metric_order)
        self.max_queries = None
        self.tau, self.grade_probs = float(tau), np.asarray(grade_probs, float)
        self.grade_scales = np.asarray(grade_scales, float)
        self.nrel = nrel_pmf() if nrel is None else np.asarray(nrel, float)
        self.nu_topic, self.nu_doc, self.sphere = nu_topic, nu_doc, bool(sphere)
        self.topic_share, self.topic_sizes = float(topic_share), tuple(topic_sizes)
        self.h_levels, self.h_probs = (np.asarray(v, float) for v in difficulty)
        self.mc_docs, self.mc_queries = int(mc_docs), int(mc_queries)
        g = np.random.default_rng([self.seed, zlib.crc32(name.encode()), self.d])
        # spectrum a_i^2 ∝ i^-decay, mean 1; rotation U (identity when flat)
        a2 = np.arange(1, self.d + 1, dtype=float) ** (-spectrum_decay)
        self.a = np.sqrt(a2 / a2.mean())
        self.U = (np.linalg.qr(g.standard_normal((self.d, self.d)))[0] if spectrum_decay > 0 else np.eye(self.d))
        unit = lambda v: v / np.linalg.norm(v)
        self.mu0 = mean_norm * np.sqrt(self.d) * unit(g.standard_normal(self.d))     # original basis
        ndirs = max(s.drift_dir for s in systems) + 1
        self.drift_dirs = np.array([unit(g.standard_normal(self.d)) for _ in range(ndirs)])
        self._pop = None

    # ---- geometry helpers (generation happens in the eigenbasis e = U' x, then rotated back) -------------
    def _drift(self, s: SystemSpec):
        return s.drift * np.sqrt(self.d) * self.drift_dirs[s.drift_dir]

    def _topics(self, m, rng, scale=1.0):
        """m topic vectors (eigenbasis, mean excluded): scale * tau * a * z."""
        return scale * self.tau * self.a * _tnoise(rng, (m, self.d), self.nu_topic)

    def _finish(self, e):
        """eigenbasis -> original basis (+ mean), then onto the unit sphere if the world says so."""
        x = e @ self.U.T + self.mu0
        if self.sphere:
            x /= np.linalg.norm(x, axis=1, keepdims=True)
        return x

    def _rel_noise(self, grades, rng):
        return self.grade_scales[grades - 1][:, None] * self.a * _tnoise(rng, (len(grades), self.d), self.nu_doc)

    def _off(self, t, u, s: SystemSpec, rng):
        """off-topic documents (eigenbasis, before _finish) for topics t and other topics u (both mean-free)."""
        drift_e = self.U.T @ self._drift(s)
        return ((1 - s.lam) * t + s.lam * u + drift_e
                + s.off_scale * self.a * _tnoise(rng, t.shape, self.nu_doc))

    # ---- labels -----------------------------------------------------------------------------------------
    def _picks(self, n, G, h, s: SystemSpec, rng):
        """(Q, k) index of the relevant document at each rank, -1 for an off-topic document."""
        Q, k = len(n), self.k
        p = np.clip(h[:, None] * s.p_top * s.decay ** np.arange(k), 0.0, 1.0)
        cum = np.cumsum(rng.random((Q, k)) < p, axis=1)
        marked = (np.diff(cum, axis=1, prepend=0) > 0) & (cum <= n[:, None])
        keys = rng.random((Q, G.shape[1]))
        keys[np.arange(G.shape[1])[None, :] >= n[:, None]] = np.inf
        chosen = np.argsort(keys, axis=1)[:, :k]
        if s.sort_by_grade:
            R = marked.sum(1)
            gk = -np.take_along_axis(G, chosen, 1).astype(float)
            gk[np.arange(k)[None, :] >= R[:, None]] = np.inf
            chosen = np.take_along_axis(chosen, np.argsort(gk, axis=1, kind='stable'), 1)
        slot = np.take_along_axis(chosen, np.clip(cum - 1, 0, k - 1), 1)
        return np.where(marked, slot, -1)

    def _query_labels(self, Q, rng):
        n = rng.choice(np.arange(1, len(self.nrel) + 1), size=Q, p=self.nrel)
        G = rng.choice(np.arange(1, len(self.grade_probs) + 1), size=(Q, len(self.nrel)), p=self.grade_probs)
        G[np.arange(G.shape[1])[None, :] >= n[:, None]] = 0
        return n, G

    # ---- draw ---------------------------------------------------------------------------------------------
    def draw(self, n_queries: int, rng: np.random.Generator) -> QuerySample:
        self._check_n(n_queries)
        Q, d, k = int(n_queries), self.d, self.k
        n, G = self._query_labels(Q, rng)
        if self.topic_share > 0:     # world (b): clusters of queries share a topic
            sizes = []
            while sum(sizes) < Q:
                sizes.append(int(rng.integers(self.topic_sizes[0], self.topic_sizes[1] + 1)))
            topic = np.repeat(np.arange(len(sizes)), sizes)[:Q]
            T = len(sizes)
            c = self._topics(T, rng, np.sqrt(self.topic_share))
            t = c[topic] + self._topics(Q, rng, np.sqrt(1 - self.topic_share))
            u_topic = self._topics(T, rng)                       # the topic's distractor (shared)
            h = rng.choice(self.h_levels, size=T, p=self.h_probs)[topic]
            within = np.concatenate([np.arange(s_) for s_ in sizes])[:Q]
            qids = [f't{a}_q{b}' for a, b in zip(topic, within)]
        else:
            t = self._topics(Q, rng)
            h = rng.choice(self.h_levels, size=Q, p=self.h_probs)
            qids = [f'q{i}' for i in range(Q)]
            topic = None
        qids_arr = np.array(qids, dtype=object)
        rows_q, rows_j = np.nonzero(G > 0)                     # row-major: grouped by query
        grades = G[rows_q, rows_j]
        rel_e = t[rows_q] + self._rel_noise(grades, rng)
        relevant = self._finish(rel_e)
        row_of = -np.ones((Q, G.shape[1]), dtype=np.int64)
        row_of[rows_q, rows_j] = np.arange(len(rows_q))
        rel_docno = np.array([f'{qids[q]}/r{j}' for q, j in zip(rows_q, rows_j)], dtype=object)
        retrieved, labels, docnos = {}, {}, {}
        for name in self.systems:
            s = self.specs[name]
            pick = self._picks(n, G, h, s, rng)
            qq, rr = np.nonzero(np.ones((Q, k), bool))
            pk = pick.ravel()
            vec = np.empty((Q * k, d))
            isrel = pk >= 0
            src = row_of[qq[isrel], pk[isrel]]
            vec[isrel] = relevant[src]
            off_q = qq[~isrel]
            u = u_topic[topic[off_q]] if topic is not None else self._topics(len(off_q), rng)
            vec[~isrel] = self._finish(self._off(t[off_q], u, s, rng))
            lab = np.zeros(Q * k, np.int64)
            lab[isrel] = grades[src]
            dn = np.array([f'{qids[q]}/{name}/n{r + 1}' for q, r in zip(qq, rr)], dtype=object)
            dn[isrel] = rel_docno[src]
            retrieved[name] = (vec, qids_arr[qq].astype(str), rr + 1)
            labels[name], docnos[name] = lab, dn.astype(str)
        return QuerySample(qids=qids, relevant=relevant, relevant_qid=qids_arr[rows_q].astype(str),
                           relevant_label=grades.astype(np.int64), retrieved=retrieved,
                           retrieved_relevant=labels, relevant_docno=rel_docno.astype(str), retrieved_docno=docnos)

    # ---- population ---------------------------------------------------------------------------------------
    def rho(self, s: SystemSpec) -> float:
        """E[number of relevant documents retrieved] / k, exactly (Poisson-binomial DP over ranks, n and h)."""
        nvals = np.arange(1, len(self.nrel) + 1)
        out = 0.0
        for h, ph in zip(self.h_levels, self.h_probs):
            p = np.clip(h * s.p_top * s.decay ** np.arange(self.k), 0, 1)
            pmf = np.array([1.0])
            for pi in p:
                pmf = np.concatenate([pmf * (1 - pi), [0.0]]) + np.concatenate([[0.0], pmf * pi])
            S = np.arange(self.k + 1)
            out += ph * float(self.nrel @ (np.minimum(S[None, :], nvals[:, None]) @ pmf))
        return out / self.k

    def _closed_form(self):
        SA = (self.U * self.a ** 2) @ self.U.T
        v_rel = self.tau ** 2 + float(self.grade_probs @ self.grade_scales ** 2)
        rel_m, rel_c = self.mu0.copy(), v_rel * SA
        ret_m, ret_c = {}, {}
        for name in self.systems:
            s = self.specs[name]
            rho = self.rho(s)
            dr = self._drift(s)
            off_c = (self.tau ** 2 * ((1 - s.lam) ** 2 + s.lam ** 2) + s.off_scale ** 2) * SA
            ret_m[name] = self.mu0 + (1 - rho) * dr
            ret_c[name] = rho * rel_c + (1 - rho) * off_c + rho * (1 - rho) * np.outer(dr, dr)
        return rel_m, rel_c, ret_m, ret_c

    def _mc_moments(self, gen, rng, batches=20):
        """mean, covariance and their batch-means standard errors of self.mc_docs documents from gen(m, rng)."""
        per = -(-self.mc_docs // batches)
        ms, cs = [], []
        for _ in range(batches):
            x = gen(per, rng)
            m = x.mean(0)
            ms.append(m)
            cs.append((x - m).T @ (x - m) / per)
        ms, cs = np.array(ms), np.array(cs)
        mean = ms.mean(0)
        # pooled covariance around the grand mean = mean of batch covs + spread of batch means
        cov = cs.mean(0) + (ms - mean).T @ (ms - mean) / batches
        return mean, cov, ms.std(0, ddof=1) / np.sqrt(batches), cs.std(0, ddof=1) / np.sqrt(batches)

    def _mc(self):
        def rel_gen(m, rng):
            grades = rng.choice(np.arange(1, len(self.grade_probs) + 1), size=m, p=self.grade_probs)
            return self._finish(self._topics(m, rng) + self._rel_noise(grades, rng))
        rng = np.random.default_rng([self.seed, 7, self.d])
        rel_m, rel_c, rel_sm, rel_sc = self._mc_moments(rel_gen, rng)
        ret_m, ret_c, se = {}, {}, {'relevant_mean': rel_sm, 'relevant_cov': rel_sc,
                                    'retrieved_mean': {}, 'retrieved_cov': {}}
        cache = {}
        for name in self.systems:
            s = self.specs[name]
            if s.law() not in cache:
                srng = np.random.default_rng([self.seed, 8, self.d, zlib.crc32(repr(s.law()).encode())])
                gen = lambda m, r, s=s: self._finish(self._off(self._topics(m, r), self._topics(m, r), s, r))
                cache[s.law()] = self._mc_moments(gen, srng)
            om, oc, osm, osc = cache[s.law()]
            rho = self.rho(s)
            m = rho * rel_m + (1 - rho) * om
            M2 = rho * (rel_c + np.outer(rel_m, rel_m)) + (1 - rho) * (oc + np.outer(om, om))
            ret_m[name], ret_c[name] = m, M2 - np.outer(m, m)
            se['retrieved_mean'][name] = np.sqrt(rho ** 2 * rel_sm ** 2 + (1 - rho) ** 2 * osm ** 2)
            se['retrieved_cov'][name] = np.sqrt(rho ** 2 * rel_sc ** 2 + (1 - rho) ** 2 * osc ** 2)
        return rel_m, rel_c, ret_m, ret_c, se

    def _ndcg_mc(self):
        """Population mean nDCG@k per system by Monte Carlo over mc_queries label-only queries (+ its SE);
        systems equal in law get the same random numbers, so their values are identical."""
        out, se, cache = {}, {}, {}
        for name in self.systems:
            s = self.specs[name]
            if s.law() in cache:
                out[name], se[name] = cache[s.law()]
                continue
            rng = np.random.default_rng([self.seed, 9, zlib.crc32(repr(s.law()).encode())])
            vals = []
            for start in range(0, self.mc_queries, 50_000):
                Q = min(50_000, self.mc_queries - start)
                n, G = self._query_labels(Q, rng)
                h = rng.choice(self.h_levels, size=Q, p=self.h_probs)
                pick = self._picks(n, G, h, s, rng)
                ret = np.where(pick >= 0, np.take_along_axis(G, np.clip(pick, 0, None), 1), 0)
                vals.append(ndcg_matrix(ret.astype(float), G.astype(float), self.k))
            v = np.concatenate(vals)
            out[name], se[name] = cache[s.law()] = float(v.mean()), float(v.std(ddof=1) / np.sqrt(len(v)))
        return out, se

    def population(self) -> Population:
        if self._pop is None:
            nd, nd_se = self._ndcg_mc()
            if self.sphere:
                rel_m, rel_c, ret_m, ret_c, se = self._mc()
                how = f'monte carlo ({self.mc_docs} documents per law, 20 batch means; SEs in .se)'
            else:
                rel_m, rel_c, ret_m, ret_c = self._closed_form()
                se, how = {}, 'closed form'
            se['per_query_metric_mean'] = nd_se
            self._pop = Population(rel_m, rel_c, ret_m, ret_c, nd,
                                   method={'moments': how,
                                           'per_query_metric_mean': f'monte carlo ({self.mc_queries} queries)'},
                                   se=se)
        return self._pop


# ---- the named worlds -----------------------------------------------------------------------------------------
def independent_world(d: int = 16, seed: int = 0, **kw) -> SyntheticWorld:
    """(a) iid queries, Gaussian, isotropic."""
    return SyntheticWorld('independent', d, seed, **kw)


def topics_world(d: int = 16, seed: int = 0, **kw) -> SyntheticWorld:
    """(b) clusters of 2-8 queries share a topic centre (70 % of the topic variance), a distractor topic and a
    difficulty; the sampling unit is the topic."""
    kw.setdefault('topic_share', 0.7)
    kw.setdefault('difficulty', ((0.5, 0.8, 1.0, 1.2), (0.2, 0.3, 0.3, 0.2)))
    return SyntheticWorld('topics', d, seed, **kw)


def heavy_world(d: int = 16, seed: int = 0, **kw) -> SyntheticWorld:
    """(c1) multivariate t (topics nu=5, documents nu=6), anisotropic spectrum a_i^2 ∝ i^-1; closed-form moments."""
    kw.setdefault('nu_topic', 5.0)
    kw.setdefault('nu_doc', 6.0)
    kw.setdefault('spectrum_decay', 1.0)
    return SyntheticWorld('heavy', d, seed, **kw)


def sphere_world(d: int = 16, seed: int = 0, **kw) -> SyntheticWorld:
    """(c2) as heavy_world, with a stronger common mean and a steeper spectrum, projected onto the unit sphere
    (like sentence embeddings); Monte Carlo moments."""
    kw.setdefault('nu_topic', 5.0)
    kw.setdefault('nu_doc', 6.0)
    kw.setdefault('spectrum_decay', 1.5)
    kw.setdefault('mean_norm', 0.8)
    kw.setdefault('sphere', True)
    return SyntheticWorld('sphere', d, seed, **kw)
