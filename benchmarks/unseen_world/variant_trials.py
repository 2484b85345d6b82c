"""An FD variant's default interval on the unseen worlds' query sets (the same sets as trials.py).

Why: in these worlds relevant-set sizes are lognormal (σ 1.1, 1–200 per query), so under FD's default 'document'
weighting a few queries hold most of the relevant side; the default FD interval under-covers E[FD̂ₙ] at d = 384
(0.86 / 0.89), and the sets that miss are those *without* a heavy query (mechanism.py). Two variants take that
dominance away, each stated as a hypothesis before running: its jackknife interval covers its own E[FD̂ₙ] near 0.95.

- ``weighting_query``: ``FD(weighting='query')@10``, every query weighs 1 on each side;
- ``per_query5``: ``FD(per_query=5, seed=t)@10``, at most 5 relevant documents per query (all labels are 1 here, so
  a uniform draw of 5 without replacement; the truth draws its own subsets: the same law, not the same subsets);
  ``per_query10`` likewise with at most 10 (added 2026-11-26: does a looser cap still hold?).

Truth: E[FD̂ₙ] of the variant over the 200 reference sets truth.py draws (rng 999), with this file's own FD (weighted
mean; ``numpy.cov(aweights=)``) — not the package's. Trials: the package through ``pf.bootstrap(...).summary``
defaults only (n_samples=20: the default FD interval is the jackknife's, the resamples do not enter it), on exactly
the query sets trials.py drew (same rng, same order).

    python -m benchmarks.unseen_world.variant_trials VARIANT WORLD D N TRIALS [pairs]
    # -> results/variant_{VARIANT}_{WORLD}_d{D}_n{N}.csv (and ..._pairs.csv: compare_systems' default test and
    #    ΔFD interval on every pair, against the difference of the truths)
"""
import os, sys, tempfile, warnings
import numpy as np, pandas as pd
warnings.filterwarnings('ignore')
import pyterrier_frechet as pf
from pyterrier_frechet import FD
import pathlib, sys; sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2]))  # the repo root, run as a file
from benchmarks.worlds.lognormal import World, draw_set, write_set, SYSTEMS


def fd_weighted(rel_sets, ret_sets, by_query):
    """Own FD; with ``by_query`` the documents of query q weigh 1/|set_q| on their side, else 1 each."""
    def moments(sets):
        X = np.vstack(sets)
        w = np.concatenate([np.full(len(s), 1.0 / len(s) if by_query else 1.0) for s in sets])
        return np.average(X, axis=0, weights=w), np.cov(X, rowvar=False, aweights=w)
    m1, S1 = moments(rel_sets)
    m2, S2 = moments(ret_sets)
    vals, vecs = np.linalg.eigh(S1)
    root = (vecs * np.sqrt(np.clip(vals, 0, None))) @ vecs.T
    ev = np.linalg.eigvalsh(root @ S2 @ root)
    return float(((m1 - m2) ** 2).sum() + np.trace(S1) + np.trace(S2) - 2 * np.sqrt(np.clip(ev, 0, None)).sum())


def cap(variant):
    """The per-query cap of a per_queryK variant (None for weighting_query)."""
    return int(variant[len('per_query'):]) if variant.startswith('per_query') else None


def own(qs, variant, rng):
    if variant == 'weighting_query':
        rel = [q[0] for q in qs]
    else:  # per_queryK: a uniform subset of at most K relevant documents per query
        rel = [q[0][rng.permutation(len(q[0]))[:cap(variant)]] for q in qs]
    return {s: fd_weighted(rel, [q[1][s][0] for q in qs], variant == 'weighting_query') for s in SYSTEMS}


VARIANTS = ('weighting_query', 'per_query5', 'per_query10')
variant, kind, d, n, T = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
assert variant in VARIANTS, f'VARIANT must be one of {VARIANTS}'
pairs = len(sys.argv) > 6 and sys.argv[6] == 'pairs'   # optional: compare_systems on every pair too
r_balance = np.random.default_rng(7)
w = World(kind, d)
tag = f'{kind}_d{d}_n{n}'
out = f'benchmarks/unseen_world/results/variant_{variant}_{tag}.csv'
r_truth = np.random.default_rng(999)
truth = pd.DataFrame([own(draw_set(w, r_truth, n), variant, r_balance) for _ in range(200)])
rows, prows = [], []
r = np.random.default_rng(2024 + d + n)      # trials.py's sets
tmp = tempfile.mkdtemp(); prefix = os.path.join(tmp, 'v')
for t in range(T):
    qs = draw_set(w, r, n)
    counts = np.array([len(q[0]) for q in qs], float)
    qrels, runs = write_set(qs, prefix)
    params = dict(weighting='query') if variant == 'weighting_query' else dict(per_query=cap(variant), seed=t)
    measure = FD(encoder=pf.VectorStore(prefix), **params) @ 10
    b = pf.bootstrap(runs, qrels, [measure], n_samples=20, seed=t, verbose=False).summary
    if pairs:  # the default paired test and ΔFD interval of every pair (the jackknife's: the resamples do not enter)
        for _, row in pf.compare_systems(runs, qrels, [measure], n_samples=20, seed=t, verbose=False).iterrows():
            prows.append(dict(trial=t, a=row['a'], b=row['b'], diff=row['diff'], low=row['ci_low'], high=row['ci_high'],
                              test=row['test'], p=row['p_' + row['test']],
                              truth=truth[row['a']].mean() - truth[row['b']].mean()))
    if variant == 'weighting_query':
        mine = own(qs, variant, r_balance)
    else:  # own FD on the subsets the package's balancing kept (a check of the value, not of the truth)
        kept = set(pf.balance_qrels(qrels, cap(variant), seed=t, qid='query_id', docno='doc_id', label='relevance').doc_id)
        rel = [np.array([v for j, v in enumerate(q[0]) if f'q{qi}r{j}' in kept]) for qi, q in enumerate(qs)]
        mine = {s: fd_weighted(rel, [q[1][s][0] for q in qs], False) for s in SYSTEMS}
    for _, row in b.iterrows():
        s = row['name']
        rows.append(dict(trial=t, system=s, value=row['value'], low=row['low'], high=row['high'],
                         interval=row['interval'], own_fd=mine[s], truth=truth[s].mean(),
                         truth_mc_se=truth[s].std() / np.sqrt(len(truth)),
                         kish=counts.sum() ** 2 / (counts ** 2).sum()))
    print(t, flush=True)
    pd.DataFrame(rows).to_csv(out, index=False)
    if pairs:
        pd.DataFrame(prows).to_csv(out.replace('.csv', '_pairs.csv'), index=False)
df = pd.DataFrame(rows)
cov = (df.low <= df.truth) & (df.truth <= df.high)
print(f'{variant} {tag}: coverage {cov.mean():.3f} over {T} trials; above {(df.truth > df.high).mean():.3f} '
      f'below {(df.truth < df.low).mean():.3f}; max |own-package|/package '
      f'{(np.abs(df.own_fd - df.value) / df.value).max():.2g}')
if pairs:
    pf_ = pd.DataFrame(prows)
    dcov = ((pf_.low <= pf_.truth) & (pf_.truth <= pf_.high)).mean()
    rate = {f'{a}-{bb}': (pf_[(pf_.a == a) & (pf_.b == bb)].p < 0.05).mean() for a, bb in
            [('A', 'B'), ('C', 'D'), ('A', 'D'), ('A', 'C')]}
    print(f'{variant} {tag}: ΔFD coverage {dcov:.3f}; rejection at 0.05 (A-B is the level, equal in law) {rate}')
