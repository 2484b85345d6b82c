"""A grouped-query world for checking ``query_groups=`` (independent of benchmarks/worlds and calibrate_worlds).

Generative story (unit-norm vectors, as a sentence encoder such as MiniLM gives; d = 128 or 384):

* The embedding space is fixed (seed 12345, like one encoder): a shared mean direction ``m0`` (all documents of a
  sentence encoder have a positive cosine with one another) and anisotropic noise whose per-axis scale decays as a
  power law (a few directions carry most of the variance).
* A query set draws ``G`` topics (groups) i.i.d. from an infinite topic population. Topic t has
  - a size m_t (queries per topic): 50% singletons, 30% 2-4 queries, 20% 5-12 queries (mean 3.1);
  - a topic centre c_t and a *distractor sense* z_t (an ambiguous second meaning, partly aligned with c_t), shared by
    every query of the topic: the non-relevant documents that systems retrieve for the topic's queries crowd around
    the same z_t;
  - a difficulty h_t ~ N(0, 1), shared by its queries: it lowers every system's precision on all of them;
  - a relevance richness lam_t ~ Gamma(2, 3): how many relevant documents its queries have.
* Query q of topic t: intent u_q = normalise(c_t + 0.5 noise); R_q = clip(1 + Poisson(lam_t), 1, 20) relevant
  documents normalise(u_q + 0.8 noise).
* System s retrieves 10 documents for q: K ~ Binomial(10, sigmoid(alpha_s - h_t + 0.5 e_q)) of them relevant
  (capped at R_q, chosen uniformly among q's relevant documents), the rest non-relevant
  normalise((1 - w_s) u_q + w_s z_t + 0.8 noise). Scores: relevant N(b_s, 1), non-relevant N(0, 1); ranking by score.
* Systems A (best) > B > C = C2 (identical in law, independent draws) > D (worst).
"""
import numpy as np

from .core import World, from_queries, own_fd

SYSTEMS = {  # name: (alpha: precision logit, w: drift to the distractor sense, b: ranking boost of relevant docs)
    'A': (1.2, 0.25, 1.5),
    'B': (0.5, 0.40, 1.0),
    'C': (0.0, 0.50, 0.8),
    'C2': (0.0, 0.50, 0.8),
    'D': (-0.7, 0.65, 0.5),
}
LEVEL_PAIR = ('C', 'C2')
K = 10


class Space:
    def __init__(self, d, seed=12345):
        rng = np.random.default_rng(seed)
        self.d = d
        m0 = rng.standard_normal(d)
        self.m0 = m0 / np.linalg.norm(m0)
        # anisotropic noise: random rotation times power-law scales, E||noise||^2 = 1
        q, _ = np.linalg.qr(rng.standard_normal((d, d)))
        scales = (1.0 + np.arange(d)) ** -0.6
        scales /= np.sqrt(np.sum(scales ** 2))
        self.B = q * scales  # columns scaled

    def noise(self, rng, n):
        return rng.standard_normal((n, self.d)) @ self.B.T

    @staticmethod
    def unit(x):
        return x / np.linalg.norm(x, axis=-1, keepdims=True)


def draw_group_size(rng):
    u = rng.random()
    if u < 0.5:
        return 1
    if u < 0.8:
        return int(rng.integers(2, 5))
    return int(rng.integers(5, 13))


def draw_query_set(space, G, rng, systems=SYSTEMS, interaction=False):
    """interaction=True (world 'interact'): every system also has its own per-topic precision offset
    delta_{s,t} ~ N(0, 0.8^2) on the logit and its own per-topic distractor z_{s,t} = normalise(z_t + fresh sense),
    as IR's system x topic interaction: C and C2 stay identical in law but err on different topics.
    G topics with their queries. Returns a list of query dicts:
    qid, group, rel (R_q x d), ret[s] (10 x d, rank order), ret_isrel[s] (bool 10), ret_idx[s] (index into rel or -1),
    scores[s] (10, descending)."""
    return [q for g in range(G) for q in draw_topic(space, g, rng, systems, interaction)]


def draw_topic(space, g, rng, systems=SYSTEMS, interaction=False):
    """Topic ``g``'s queries (draw_query_set's loop body: G calls in turn consume ``rng`` as one call for G)."""
    queries = []
    m = draw_group_size(rng)
    c = space.unit(0.4 * space.m0 + space.noise(rng, 1)[0])
    z = space.unit(0.5 * c + 0.4 * space.m0 + space.noise(rng, 1)[0])
    h = rng.standard_normal()
    lam = rng.gamma(2.0, 3.0)
    if interaction:
        delta = {s: 0.8 * rng.standard_normal() for s in systems}
        zs = {s: space.unit(z + space.unit(0.4 * space.m0 + space.noise(rng, 1)[0])) for s in systems}
    else:
        delta = {s: 0.0 for s in systems}
        zs = {s: z for s in systems}
    for j in range(m):
        u = space.unit(c + 0.5 * space.noise(rng, 1)[0])
        R = int(np.clip(1 + rng.poisson(lam), 1, 20))
        rel = space.unit(u + 0.8 * space.noise(rng, R))
        e = rng.standard_normal()
        q = dict(qid=f'g{g}q{j}', group=f'g{g}', rel=rel, ret={}, ret_idx={}, scores={})
        for s, (alpha, w, b) in systems.items():
            p = 1.0 / (1.0 + np.exp(-(alpha + delta[s] - h + 0.5 * e)))
            k = min(int(rng.binomial(K, p)), R)
            idx = rng.choice(R, size=k, replace=False)
            nonrel = space.unit((1 - w) * u + w * zs[s] + 0.8 * space.noise(rng, K - k))
            sc = np.concatenate([rng.normal(b, 1.0, k), rng.normal(0.0, 1.0, K - k)])
            vecs = np.vstack([rel[idx], nonrel])
            ridx = np.concatenate([idx, -np.ones(K - k, dtype=int)])
            order = np.argsort(-sc)
            q['ret'][s] = vecs[order]
            q['ret_idx'][s] = ridx[order]
            q['scores'][s] = sc[order]
        queries.append(q)
    return queries


class GroupedWorld(World):
    """The common interface: topics drawn in turn until ``n`` queries (the last topic cut), as a QuerySample whose
    qids are ``t<topic>_q<i>`` (the harness's ``--query-groups topics`` reads the topic from them)."""
    k, systems, metric_order, max_queries, has_population = K, list(SYSTEMS), list(SYSTEMS), None, False
    equal_pairs = [LEVEL_PAIR]

    def __init__(self, d, seed=12345, interaction=False):
        self.space, self.d, self.interaction = Space(d, seed), d, interaction
        self.name = 'grouped-interact' if interaction else 'grouped'

    def draw(self, n_queries, rng):
        self._check_n(n_queries)
        qs, g = [], 0
        while len(qs) < n_queries:
            qs += draw_topic(self.space, g, rng, SYSTEMS, self.interaction)
            g += 1
        qs = qs[:n_queries]
        qids = [f"t{q['group'][1:]}_q{q['qid'].split('q')[-1]}" for q in qs]
        return from_queries(
            qids, [q['rel'] for q in qs], [np.ones(len(q['rel'])) for q in qs],
            [[f'{qid}_r{i}' for i in range(len(q['rel']))] for qid, q in zip(qids, qs)],
            {s: [q['ret'][s] for q in qs] for s in SYSTEMS}, {s: [q['ret_idx'][s] >= 0 for q in qs] for s in SYSTEMS},
            {s: [[f'{qid}_r{i}' if i >= 0 else f'{qid}_{s}_n{r}' for r, i in enumerate(q['ret_idx'][s])]
                 for qid, q in zip(qids, qs)] for s in SYSTEMS},
            {s: [q['scores'][s] for q in qs] for s in SYSTEMS})


def fd_all(queries, systems=SYSTEMS):
    rel = np.vstack([q['rel'] for q in queries])
    return {s: own_fd(rel, np.vstack([q['ret'][s] for q in queries])) for s in systems}


def ndcg10(q, s):
    R = q['rel'].shape[0]
    disc = 1.0 / np.log2(np.arange(2, K + 2))
    gains = (q['ret_idx'][s] >= 0).astype(float)
    return float(np.sum(gains * disc) / np.sum(disc[:min(R, K)]))


def ndcg_all(queries, systems=SYSTEMS):
    return {s: float(np.mean([ndcg10(q, s) for q in queries])) for s in systems}


def frames(queries, systems=SYSTEMS):
    """qrels, runs, vectors (docno -> vector) for the package. Every retrieved non-relevant document is judged 0
    (depth-10 pooling over the systems)."""
    import pandas as pd
    qr, vectors, runs = [], {}, {s: [] for s in systems}
    for q in queries:
        qid = q['qid']
        for i, v in enumerate(q['rel']):
            dn = f'{qid}_r{i}'
            vectors[dn] = v
            qr.append((qid, dn, 1))
        for s in systems:
            n = 0
            for v, ri, sc in zip(q['ret'][s], q['ret_idx'][s], q['scores'][s]):
                if ri >= 0:
                    dn = f'{qid}_r{ri}'
                else:
                    dn = f'{qid}_{s}_n{n}'
                    n += 1
                    vectors[dn] = v
                    qr.append((qid, dn, 0))
                runs[s].append((qid, dn, float(sc)))
    qrels = pd.DataFrame(qr, columns=['qid', 'docno', 'label'])
    runs = {s: pd.DataFrame(r, columns=['qid', 'docno', 'score']) for s, r in runs.items()}
    groups = {q['qid']: q['group'] for q in queries}
    return qrels, runs, vectors, groups



def DictEncoder(vectors):
    """docno → doc_vec from a dict (docnos it does not know are left out of its output): a pt.Transformer."""
    import pyterrier as pt

    class _DictEncoder(pt.Transformer):
        def transform(self, inp):
            known = inp[inp['docno'].isin(vectors.keys())]
            return known.assign(doc_vec=[vectors[d] for d in known['docno']])
    return _DictEncoder()
