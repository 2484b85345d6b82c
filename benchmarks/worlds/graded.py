"""Two new synthetic worlds for an independent check of pyterrier_frechet intervals.

Each world is a fixed object (global parameters drawn once from `world_seed`);
queries are drawn i.i.d. from it with `sample_query(rng, qi)`.  A query is a dict
with its judged documents (vectors, labels, ids) and, per system, a ranked list.

World "graded":  graded labels 0-3 (rel=2 threshold), label-1 "partially relevant"
  documents that systems retrieve, a shared pool of popular documents relevant to
  several queries (Zipf popularity), some queries with no label>=2 document, and
  some (query, system) pairs that return fewer than 10 documents.  Unit-sphere vectors.

World "aniso": anisotropic normalised embeddings (common mean direction + power-law
  spectrum in a random basis, like real sentence encoders), relevant-set sizes from a
  two-component mixture (many small sets, a few very large ones), a query-difficulty
  mixture (hard queries: relevant documents in a facet away from where systems look),
  and near-duplicate clusters inside relevant sets.
"""
import numpy as np

from .core import World, from_queries

SYSTEMS = ["A", "B", "C", "D"]


def _unit(X):
    X = np.atleast_2d(X)
    return X / np.linalg.norm(X, axis=1, keepdims=True)


class _Queries(World):
    """The common interface over ``sample_query``: n queries from one generator (as unseen_world2's run.py draws a
    set), as a QuerySample whose relevant side is label >= 2 (FD(rel=2), as the study measured) and whose
    retrieved labels are the grades >= 2 (0 below: nDCG on the relevant side's qrels, like the DL19 world). A query with
    no label >= 2 document (7 % in "graded") keeps its retrieved rows, which the package's FD(rel=2) leaves out."""
    k, systems, metric_order, equal_pairs, max_queries, has_population = 10, SYSTEMS, SYSTEMS, [("A", "B")], None, False

    def draw(self, n_queries, rng):
        self._check_n(n_queries)
        qs = [self.sample_query(rng, i) for i in range(int(n_queries))]
        rel = [np.where(q["labels"] >= 2)[0] for q in qs]
        docs = {s: [q["runs"][s][0] for q in qs] for s in SYSTEMS}
        label = {s: [np.where(q["labels"][i] >= 2, q["labels"][i], 0) for q, i in zip(qs, docs[s])] for s in SYSTEMS}
        return from_queries([f"q{i}" for i in range(len(qs))], [q["V"][i] for q, i in zip(qs, rel)],
                            [q["labels"][i] for q, i in zip(qs, rel)], [np.array(q["ids"])[i] for q, i in zip(qs, rel)],
                            {s: [q["V"][i] for q, i in zip(qs, docs[s])] for s in SYSTEMS}, label,
                            {s: [np.array(q["ids"])[i] for q, i in zip(qs, docs[s])] for s in SYSTEMS})


class GradedWorld(_Queries):
    name = "graded"
    # per system: (weight relevant, weight partial, weight non-relevant) for a slot
    SYS = {"A": (0.55, 0.20, 0.25), "B": (0.55, 0.20, 0.25),
           "C": (0.45, 0.22, 0.33), "D": (0.33, 0.25, 0.42)}

    def __init__(self, d, world_seed=0):
        self.d = d
        rng = np.random.default_rng(world_seed)
        self.n_pop = 60
        self.pop_vecs = _unit(rng.standard_normal((self.n_pop, d)))
        w = 1.0 / np.arange(1, self.n_pop + 1) ** 1.1
        self.pop_p = w / w.sum()

    def _near(self, rng, c, a, k):
        if k == 0:
            return np.zeros((0, self.d))
        g = rng.standard_normal((k, self.d)) / np.sqrt(self.d)
        return _unit(c[None, :] + a * g)

    def sample_query(self, rng, qi):
        d = self.d
        c = _unit(rng.standard_normal(d))[0]
        facet = _unit(rng.standard_normal(d))[0]
        no_rel = rng.random() < 0.07
        if no_rel:
            n3 = n2 = 0
            pops = np.array([], dtype=int)
        else:
            n3 = rng.poisson(1.2)
            n2 = 1 + rng.geometric(1 / 6.0) - 1  # mean ~6
            if rng.random() < 0.35:
                k = 1 + rng.binomial(2, 0.4)
                pops = np.unique(rng.choice(self.n_pop, size=k, p=self.pop_p))
            else:
                pops = np.array([], dtype=int)
        n1 = 1 + rng.poisson(4)
        n0 = rng.poisson(5)
        n_unj = 25
        V3 = self._near(rng, c, 0.8, n3)
        V2 = self._near(rng, c, 1.0, n2)
        V1 = self._near(rng, c + 0.6 * facet, 1.2, n1)
        V0 = self._near(rng, 0.5 * c + 0.5 * facet, 1.5, n0 + n_unj)
        Vp = self.pop_vecs[pops]
        ids = ([f"q{qi}_r3_{i}" for i in range(n3)] + [f"q{qi}_r2_{i}" for i in range(n2)]
               + [f"pop{p}" for p in pops] + [f"q{qi}_r1_{i}" for i in range(n1)]
               + [f"q{qi}_r0_{i}" for i in range(n0)] + [f"q{qi}_u_{i}" for i in range(n_unj)])
        V = np.vstack([V3, V2, Vp, V1, V0])
        labels = np.array([3] * n3 + [2] * (n2 + len(pops)) + [1] * n1 + [0] * n0 + [-1] * n_unj)
        diff = rng.beta(4, 2)  # per-query ease shared by systems
        runs = {}
        rel_idx = np.where(labels >= 2)[0]
        part_idx = np.where(labels == 1)[0]
        non_idx = np.where(labels <= 0)[0]
        for s in SYSTEMS:
            wr, wp, wn = self.SYS[s]
            wr = wr * (0.5 + diff)
            p = np.array([wr, wp, wn]); p = p / p.sum()
            k = 10 if rng.random() < 0.88 else int(rng.integers(2, 10))
            pools = [list(rng.permutation(rel_idx)), list(rng.permutation(part_idx)), list(rng.permutation(non_idx))]
            chosen, kinds = [], []
            while len(chosen) < k:
                t = rng.choice(3, p=p)
                if not pools[t]:
                    t = 2 if pools[2] else (1 if pools[1] else 0)
                chosen.append(pools[t].pop()); kinds.append(t)
            mu = np.array([2.0, 1.2, 0.5])[kinds]
            sc = mu + rng.standard_normal(k)
            order = np.argsort(-sc)
            runs[s] = (np.array(chosen)[order], sc[order])
        return dict(ids=ids, V=V, labels=labels, runs=runs)


class AnisoWorld(_Queries):
    name = "aniso"
    SYS = {"A": (0.60, 0.15), "B": (0.60, 0.15), "C": (0.50, 0.10), "D": (0.38, 0.06)}

    def __init__(self, d, world_seed=0):
        self.d = d
        rng = np.random.default_rng(world_seed + 1000)
        Q, _ = np.linalg.qr(rng.standard_normal((d, d)))
        lam = 1.0 / np.arange(1, d + 1) ** 1.0
        lam = lam / lam.sum()  # total variance 1
        self.L = Q * np.sqrt(lam)[None, :]   # x = L z has cov Q diag(lam) Q^T
        self.m = _unit(rng.standard_normal(d))[0] * 0.6  # common direction (anisotropy)

    def _g(self, rng, k):
        return rng.standard_normal((k, self.d)) @ self.L.T  # E||.||^2 = 1

    def sample_query(self, rng, qi):
        c = self.m + self._g(rng, 1)[0]
        facet = self._g(rng, 1)[0]
        hard = rng.random() < 0.3
        if rng.random() < 0.8:
            n_src = 1 + rng.poisson(2)
        else:
            n_src = int(np.clip(np.round(rng.lognormal(np.log(35), 0.6)), 8, 200))
        centre_rel = c + (1.0 * facet if hard else 0.0)
        src = centre_rel[None, :] + 0.7 * self._g(rng, n_src)
        rel = []
        for v in src:
            rel.append(v)
            if rng.random() < 0.3:   # near duplicates
                for _ in range(int(rng.integers(1, 5))):
                    rel.append(v + 0.05 * self._g(rng, 1)[0])
        Vr = _unit(np.array(rel)); nr = len(Vr)
        n1 = rng.poisson(1.5)
        V1 = _unit(centre_rel[None, :] + 1.0 * self._g(rng, n1)) if n1 else np.zeros((0, self.d))
        n0 = rng.poisson(6); n_unj = 30
        V0 = _unit(c[None, :] + 0.5 * facet[None, :] * (-1.0 if hard else 0.3) + 0.9 * self._g(rng, n0 + n_unj))
        ids = ([f"q{qi}_r_{i}" for i in range(nr)] + [f"q{qi}_p_{i}" for i in range(n1)]
               + [f"q{qi}_n_{i}" for i in range(n0)] + [f"q{qi}_u_{i}" for i in range(n_unj)])
        V = np.vstack([Vr, V1, V0])
        labels = np.array([2] * nr + [1] * n1 + [0] * n0 + [-1] * n_unj)
        rel_idx = np.where(labels >= 2)[0]; part_idx = np.where(labels == 1)[0]; non_idx = np.where(labels <= 0)[0]
        runs = {}
        for s in SYSTEMS:
            pe, ph = self.SYS[s]
            pr = ph if hard else pe
            p = np.array([pr, 0.1, 0.9 - pr])
            pools = [list(rng.permutation(rel_idx)), list(rng.permutation(part_idx)), list(rng.permutation(non_idx))]
            chosen, kinds = [], []
            while len(chosen) < 10:
                t = rng.choice(3, p=p)
                if not pools[t]:
                    t = 2 if pools[2] else (1 if pools[1] else 0)
                chosen.append(pools[t].pop()); kinds.append(t)
            mu = np.array([2.0, 1.2, 0.5])[kinds]
            sc = mu + rng.standard_normal(10)
            order = np.argsort(-sc)
            runs[s] = (np.array(chosen)[order], sc[order])
        return dict(ids=ids, V=V, labels=labels, runs=runs)


WORLDS = {"graded": GradedWorld, "aniso": AnisoWorld}
