"""Independent-query worlds with lognormal relevant-set sizes (the unseen-world check, benchmarks/unseen_world):
``sphere``, ``clustered``, ``hub_lognorm``; four systems A = B (equal in law) > C > D; own FD and nDCG@10 (no package
internals used)."""
import numpy as np

from .core import World as _World, from_queries, own_fd as fd

SYSTEMS = {'A': 0.6, 'B': 0.6, 'C': 0.45, 'D': 0.3}   # A and B identical in law


def _unit(x):
    return x / np.linalg.norm(x, axis=-1, keepdims=True)


class LognormalWorld(_World):
    """``kind``: sphere, clustered or hub_lognorm; a suffix ``-s<σ>`` (added later, e.g. ``sphere-s0.9``) sets the sd
    of the log relevant-set size (default 1.1), to place a world between the lead's covered and uncovered ones."""
    def __init__(self, kind, d, seed=12345):
        kind, _, sigma = kind.partition('-s')
        self.kind, self.d, self.sigma = kind, d, float(sigma) if sigma else 1.1
        self.name, self.k, self.systems, self.metric_order = f'lognormal-{kind}', 10, list(SYSTEMS), list(SYSTEMS)
        self.equal_pairs, self.max_queries, self.has_population = [('A', 'B')], None, False
        r = np.random.default_rng(seed)
        self.mean_dir = _unit(r.normal(size=d))
        self.spec = (np.arange(1, d + 1) ** -0.8)          # power-law noise spectrum
        self.spec *= d / self.spec.sum()
        self.basis = np.linalg.qr(r.normal(size=(d, d)))[0]
        self.centres = _unit(0.4 * self.mean_dir + r.normal(size=(30, d)) / np.sqrt(d))  # clusters
        self.hubs = _unit(r.normal(size=(3, d)))

    def noise(self, r, m, scale):
        z = r.normal(size=(m, self.d)) * np.sqrt(self.spec) / np.sqrt(self.d)
        return scale * z @ self.basis.T

    def n_rel(self, r):
        return int(np.clip(np.round(np.exp(r.normal(np.log(10), self.sigma))), 1, 200))

    def query(self, r):
        """returns rel vectors (R x d), and per system (vectors 10 x d, labels 10, rel index or -1)"""
        d, k = self.d, self.kind
        if k == 'clustered':
            cl = r.integers(30)
            centre = _unit(self.centres[cl] + self.noise(r, 1, 0.5)[0])
        else:
            centre = _unit(0.5 * self.mean_dir + self.noise(r, 1, 1.0)[0])
        R = self.n_rel(r)
        rel = centre + self.noise(r, R, 0.8)
        if k == 'hub_lognorm':
            rel = rel + 0.3 * (r.normal(size=(R, 3)) @ self.hubs)
        rel = _unit(rel)
        if k == 'hub_lognorm':
            rel = rel * np.exp(r.normal(0, 0.35, size=(R, 1)))
        out = {}
        qual = r.beta(1.0, 1.0) if k == 'hub_lognorm' else 0.5   # query difficulty, shared by systems
        for s, p in SYSTEMS.items():
            ps = p if k != 'hub_lognorm' else np.clip(p + 0.8 * (qual - 0.5), 0.02, 0.98)
            isrel = r.random(10) < ps
            pos = np.flatnonzero(isrel)
            isrel[pos[R:]] = False                         # distinct relevant documents only
            idx = np.full(10, -1)
            idx[isrel] = r.permutation(R)[:isrel.sum()]
            vec = np.empty((10, d))
            vec[isrel] = rel[idx[isrel]]
            m = int((~isrel).sum())
            if m:
                if k == 'clustered':
                    wrong = r.random(m) < (1 - p)           # worse systems drift to other clusters more
                    base = np.where(wrong[:, None], self.centres[r.integers(30, size=m)], centre)
                    nr = _unit(base + self.noise(r, m, 0.9))
                elif k == 'hub_lognorm':
                    nr = _unit(0.6 * centre + self.noise(r, m, 1.1) + 0.5 * (r.normal(size=(m, 3)) @ self.hubs))
                    nr = nr * np.exp(r.normal(0, 0.35, size=(m, 1)))
                else:
                    nr = _unit(0.6 * centre + self.noise(r, m, 1.1))
                vec[~isrel] = nr
            out[s] = (vec, isrel.astype(int), idx)
        return rel, out


    def draw(self, n_queries, rng):
        """The common interface: ``draw_set(self, rng, n)`` as a QuerySample (docnos as ``write_set`` names them)."""
        self._check_n(n_queries)
        return as_sample(draw_set(self, rng, int(n_queries)))


def as_sample(qs):
    """A drawn query set (list of ``World.query`` results) as a QuerySample; labels are 1 (relevant) or 0."""
    qids = [f'q{qi}' for qi in range(len(qs))]
    return from_queries(
        qids, [rel for rel, _ in qs], [np.ones(len(rel)) for rel, _ in qs],
        [[f'{q}r{j}' for j in range(len(rel))] for q, (rel, _) in zip(qids, qs)],
        {s: [out[s][0] for _, out in qs] for s in SYSTEMS}, {s: [out[s][1] for _, out in qs] for s in SYSTEMS},
        {s: [[f'{q}r{i}' if lab else f'{q}{s}n{r}' for r, (lab, i) in enumerate(zip(out[s][1], out[s][2]))]
             for q, (_, out) in zip(qids, qs)] for s in SYSTEMS})


#: the study scripts' name for the world
World = LognormalWorld


def ndcg10(labels, R):
    g = (labels / np.log2(np.arange(2, 12))).sum()
    ideal = (1 / np.log2(np.arange(2, 2 + min(R, 10)))).sum()
    return g / ideal


def draw_set(world, r, n):
    qs = [world.query(r) for _ in range(n)]
    return qs


def own_measures(qs):
    rel = np.vstack([q[0] for q in qs])
    res = {}
    for s in SYSTEMS:
        ret = np.vstack([q[1][s][0] for q in qs])
        res[s] = (fd(rel, ret), np.mean([ndcg10(q[1][s][1], len(q[0])) for q in qs]))
    return res


def write_set(qs, prefix):
    """A drawn query set as the package reads it: vectors at PREFIX.npy / PREFIX.ids.txt; returns (qrels, runs)."""
    import pandas as pd
    vecs, ids, qr, runs = [], [], [], {s: [] for s in SYSTEMS}
    for qi, (rel, out) in enumerate(qs):
        for j, v in enumerate(rel):
            ids.append(f'q{qi}r{j}'); vecs.append(v); qr.append((f'q{qi}', f'q{qi}r{j}', 1))
        for s, (vec, lab, idx) in out.items():
            for rank in range(10):
                if lab[rank]:
                    doc = f'q{qi}r{idx[rank]}'
                else:
                    doc = f'q{qi}{s}n{rank}'; ids.append(doc); vecs.append(vec[rank])
                runs[s].append((f'q{qi}', doc, 100.0 - rank))
    np.save(prefix + '.npy', np.array(vecs)); open(prefix + '.ids.txt', 'w').write('\n'.join(ids) + '\n')
    qrels = pd.DataFrame(qr, columns=['query_id', 'doc_id', 'relevance'])
    # a doc retrieved twice in one ranking (same rel doc sampled twice) -> keep first; pad is not needed for FD
    runs = {s: pd.DataFrame(v, columns=['query_id', 'doc_id', 'score']).drop_duplicates(['query_id', 'doc_id'])
            for s, v in runs.items()}
    return qrels, runs
