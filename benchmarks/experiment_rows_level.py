"""Level and power of pt.Experiment's paired t-test on FD@10's per-query rows: the exact rows (centred jackknife
pseudo-values from leave-one-query-out FDs, ``FD@10``) against the influence rows (the same from each query's
first-order influence, the infinitesimal jackknife, ``FD(rows='influence')@10``), on the same query sets.

Worlds: ``graded`` and ``aniso`` of ``benchmarks/worlds/graded.py`` (built by a helper for an independent check of
the intervals, before the influence rows existed; four systems, A and B the same law: the level, C and D worse: the
power), at d = 384 with 43 queries; and ``dl19``: the 43 real DL19 queries, their real relevant sets (label >= 2) and
MiniLM vectors as a finite population (``--n`` of them drawn per trial without replacement), with systems that draw 10
of a real run's top 100 per query, favouring the top (A and B: BM25, the same law; C: monoT5, D: SPLADE).
FD, its leave-outs and the influence are this script's own numpy code (eigen-decompositions of the covariances); the
first trial of each world also checks the influence against the package's ``core.influence.fd_influence`` (1e-8).
A trial's p-values are ``scipy.stats.ttest_rel`` of the two systems' rows, as ``pt.Experiment(baseline=...)`` runs it.

    OPENBLAS_NUM_THREADS=1 python benchmarks/experiment_rows_level.py graded --trials 200
    OPENBLAS_NUM_THREADS=1 python benchmarks/experiment_rows_level.py dl19 --trials 200 --n 30

Results: ``benchmarks/results/experiment_rows_level/<world>_n<n>_d<d>_s<seed>.csv`` (one row per trial and pair:
both p-values and the correlation of the two kinds of rows of the difference) and the summary printed.
"""
import sys, time, argparse
import numpy as np, scipy.stats
from pathlib import Path
HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))  # this checkout's package first
SHARED = HERE.parents[1] / 'shared'

def side_stats(Z, zq, units):
    N = len(Z); mu = Z.mean(0); Zc = Z - mu
    return mu, Zc, Zc.T @ Zc / (N - 1)

def factor(S, tol=1e-10):
    e, Q = np.linalg.eigh(S); keep = e > max(e[-1], 0) * tol
    return Q[:, keep] * np.sqrt(e[keep])

def loo_stats(Z, zq, q):
    keep = zq != q
    Zk = Z[keep]; mu = Zk.mean(0); Zc = Zk - mu
    return mu, Zc.T @ Zc / (len(Zk) - 1)

def exact_loo(Y, yq, Xs, units):
    """per system: array of FD with each unit left out."""
    out = np.zeros((len(Xs), len(units)))
    for k, q in enumerate(units):
        mu1, S1 = loo_stats(Y, yq, q); L = factor(S1); tr1 = np.trace(S1)
        for s, (X, xq) in enumerate(Xs):
            mu2, S2 = loo_stats(X, xq, q)
            ev = np.linalg.eigvalsh(L.T @ S2 @ L)
            out[s, k] = (mu1 - mu2) @ (mu1 - mu2) + tr1 + np.trace(S2) - 2 * np.sqrt(np.clip(ev, 0, None)).sum()
    return out

def full_fd(Y, X):
    mu1, mu2 = Y.mean(0), X.mean(0)
    S1 = np.cov(Y.T); S2 = np.cov(X.T); L = factor(S1)
    ev = np.linalg.eigvalsh(L.T @ S2 @ L)
    return (mu1 - mu2) @ (mu1 - mu2) + np.trace(S1) + np.trace(S2) - 2 * np.sqrt(np.clip(ev, 0, None)).sum()

def ij_grad(X, xq, Y, yq, units, L=None):
    n1, n2 = len(Y), len(X)
    mu1, mu2 = Y.mean(0), X.mean(0); Yc, Xc = Y - mu1, X - mu2
    S1 = Yc.T @ Yc / (n1 - 1); S2 = Xc.T @ Xc / (n2 - 1)
    if L is None:
        L = factor(S1)
    C = Xc @ L / np.sqrt(n2 - 1)
    _, s, Vt = np.linalg.svd(C, full_matrices=False)
    nz = s > s[0] * 1e-10; s, V = s[nz], Vt[nz].T
    T = s.sum()
    LV = L @ V
    qa = (((Xc @ LV) / np.sqrt(s)) ** 2).sum(1)
    qb = (((Yc @ (S2 @ LV)) / s ** 1.5) ** 2).sum(1)
    dm = mu1 - mu2; tr1, tr2 = np.trace(S1), np.trace(S2)
    g = np.empty(len(units))
    for k, q in enumerate(units):
        iy, ix = yq == q, xq == q; m, nq = iy.sum(), ix.sum()
        dmu1 = Yc[iy].sum(0) / n1; dmu2 = Xc[ix].sum(0) / n2
        g[k] = (2 * dm @ (dmu1 - dmu2) + ((Yc[iy] ** 2).sum() - m * tr1) / (n1 - 1)
                + ((Xc[ix] ** 2).sum() - nq * tr2) / (n2 - 1)
                - (qb[iy].sum() - m * T) / (n1 - 1) - (qa[ix].sum() - nq * T) / (n2 - 1))
    return g

def rows_exact(full, loo):
    n = len(loo); dev = loo.mean() - loo
    return full + (n - 1) * (dev - dev.mean())

def rows_ij(full, g):
    n = len(g)
    return full + (n - 1) * (g - g.mean())

def package_check(Y, yq, systems, units):
    """The influence here against the package's (core.influence.fd_influence over QueryStats)."""
    from pyterrier_frechet.core.influence import fd_influence
    from pyterrier_frechet.core.weighted import QueryStats
    index = {q: i for i, q in enumerate(units)}
    shift = Y.mean(0)
    rel = QueryStats(np.array([index[q] for q in yq]), Y, len(units), shift)
    for X, xq in systems:
        ret = QueryStats(np.array([index[q] for q in xq]), X, len(units), shift)
        np.testing.assert_allclose(fd_influence(rel, ret, np.ones(len(units)), shift), ij_grad(X, xq, Y, yq, units),
                                   rtol=1e-8, atol=1e-12)


def trial(Y, yq, systems, units, pairs):
    """p-values per pair for the exact and IJ rows."""
    Xs = systems
    loo = exact_loo(Y, yq, Xs, units)
    fulls = [full_fd(Y, X) for X, _ in Xs]
    L = factor(np.cov(Y.T))
    re = [rows_exact(f, l) for f, l in zip(fulls, loo)]
    ri = [rows_ij(f, ij_grad(X, xq, Y, yq, units, L)) for f, (X, xq) in zip(fulls, Xs)]
    out = {}
    for a, b in pairs:
        out[a, b] = (scipy.stats.ttest_rel(re[a], re[b]).pvalue, scipy.stats.ttest_rel(ri[a], ri[b]).pvalue,
                     np.corrcoef(re[a] - re[b], ri[a] - ri[b])[0, 1])
    return out

# ---- worlds
def synthetic(world_name, d, n, rng):
    from benchmarks.worlds.graded import GradedWorld, AnisoWorld, SYSTEMS
    W = {'graded': GradedWorld, 'aniso': AnisoWorld}[world_name](d, world_seed=0)
    qs = [W.sample_query(rng, i) for i in range(n)]
    Y, yq = [], []
    for i, q in enumerate(qs):
        idx = np.where(q['labels'] >= 2)[0]
        Y.append(q['V'][idx]); yq += [i] * len(idx)
    units = sorted(set(yq))
    systems = []
    for s in SYSTEMS:
        X, xq = [], []
        for i in units:
            docs = qs[i]['runs'][s][0][:10]; X.append(qs[i]['V'][docs]); xq += [i] * len(docs)
        systems.append((np.vstack(X), np.array(xq)))
    return np.vstack(Y), np.array(yq), systems, units

class DL19:
    """Real queries, real relevant sets (label >= 2) and real MiniLM vectors; systems sample 10 of a real run's
    top-100 per query by Plackett-Luce on rank (A and B: the same run and law; C, D: other runs)."""
    def __init__(self, runs=('bm25', 'bm25', 'bm25.monot5-3b', 'splade-pp-ed')):
        import pyterrier as pt, pyterrier_frechet as pf, logging, warnings
        logging.disable(logging.WARNING); warnings.simplefilter('ignore')
        ms = SHARED / 'data' / 'msmarco-passage'
        store = pf.VectorStore(str(SHARED / 'embeddings' / 'msmarco-passage.dl19-dl20.minilm'))
        qrels = pt.io.read_qrels(str(ms / 'qrels.dl19-passage.txt')); qrels['label'] = qrels.label.astype(int)
        rel = qrels[qrels.label >= 2]
        v, ok = store.lookup(rel.docno.astype(str).to_numpy())
        self.qids = sorted(set(rel.qid.astype(str)[ok]))
        self.rel = {q: v[ok][rel.qid.astype(str).to_numpy()[ok] == q].astype(np.float64) for q in self.qids}
        self.pools = []
        for r in runs:
            df = pt.io.read_results(str(ms / 'runs' / f'run.dl19.{r}.top100.txt'))
            df = df[df.qid.astype(str).isin(self.qids)].sort_values(['qid', 'score'], ascending=[True, False])
            pool = {}
            for q, g in df.groupby('qid'):
                vv, ok2 = store.lookup(g.docno.astype(str).to_numpy()[:100]); pool[str(q)] = vv[ok2].astype(np.float64)
            self.pools.append(pool)
    def draw(self, n, rng, temp=10.0):
        qs = sorted(rng.choice(len(self.qids), size=n, replace=False))
        Y, yq = [], []
        for i in qs:
            q = self.qids[i]; Y.append(self.rel[q]); yq += [i] * len(self.rel[q])
        systems = []
        for pool in self.pools:
            X, xq = [], []
            for i in qs:
                P = pool[self.qids[i]]; w = np.exp(-np.arange(len(P)) / temp); 
                pick = rng.choice(len(P), size=10, replace=False, p=w / w.sum())  # Plackett-Luce-like without replacement
                X.append(P[pick]); xq += [i] * 10
            systems.append((np.vstack(X), np.array(xq)))
        return np.vstack(Y), np.array(yq), systems, list(qs)

if __name__ == '__main__':
    ap = argparse.ArgumentParser(); ap.add_argument('world'); ap.add_argument('--trials', type=int, default=50)
    ap.add_argument('--n', type=int, default=43); ap.add_argument('--d', type=int, default=384); ap.add_argument('--seed', type=int, default=0)
    a = ap.parse_args()
    pairs = [(0, 1), (0, 2), (0, 3)]
    dl = DL19() if a.world == 'dl19' else None
    rec = []
    t0 = time.time()
    for t in range(a.trials):
        rng = np.random.default_rng([a.seed, t, 77])
        Y, yq, systems, units = dl.draw(a.n, rng) if dl else synthetic(a.world, a.d, a.n, rng)
        if t == 0:
            package_check(Y, yq, systems, units)
        res = trial(Y, yq, systems, units, pairs)
        for (x, y), (pe, pi, c) in res.items():
            rec.append((t, f'{"ABCD"[x]}{"ABCD"[y]}', pe, pi, c))
        if (t + 1) % 10 == 0:
            print(f'{a.world} trial {t+1} {time.time()-t0:.0f}s', file=sys.stderr, flush=True)
    import pandas as pd
    df = pd.DataFrame(rec, columns=['trial', 'pair', 'p_exact', 'p_ij', 'row_corr'])
    df.to_csv(HERE / 'results' / 'experiment_rows_level' / f'{a.world}_n{a.n}_d{a.d}_s{a.seed}.csv', index=False)
    for pair, g in df.groupby('pair'):
        print(f'{a.world} n={a.n} d={a.d} {pair}: trials {len(g)}  reject@.05 exact {np.mean(g.p_exact < .05):.3f}  IJ {np.mean(g.p_ij < .05):.3f}'
              f'  disagree {np.mean((g.p_exact < .05) != (g.p_ij < .05)):.3f}  median row corr {g.row_corr.median():.3f}')
