"""Level of nDCG@10's paired tests on systems A and B (equal in law) of the unseen worlds, many query sets.

Added after the independent check (its worlds, not its code paths): ``pf.compare_systems(runs, qrels, [nDCG@10])``
with the package's default test (the paired t-test on the per-query values, ``p_t``) beside the normal approximation
of the resampled differences (``p_normal``, the default before), the count test (``p_bootstrap``), and scipy's
``ttest_rel`` and ``wilcoxon`` on this script's own per-query nDCG@10 (``worlds.ndcg10``). nDCG@10's law does not
depend on d, so d = 16 keeps the draws cheap.

    python -m benchmarks.unseen_world.ndcg_level WORLD N TRIALS SAMPLES   # -> benchmarks/unseen_world/results/ndcg_level_WORLD_nN_bSAMPLES.csv
"""
import sys, warnings, numpy as np, pandas as pd, scipy.stats
warnings.filterwarnings('ignore')
import pyterrier_frechet as pf
from ir_measures import nDCG
import pathlib, sys; sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2]))  # the repo root, run as a file
from benchmarks.worlds.lognormal import World, ndcg10
kind, n, T, B = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
w = World(kind, 16); r = np.random.default_rng(7 + n)
rows = []
for t in range(T):
    qr, runs, own = [], {'A': [], 'B': []}, {'A': [], 'B': []}
    for qi in range(n):
        rel, out = w.query(r)
        qr += [(f'q{qi}', f'q{qi}r{j}', 1) for j in range(len(rel))]
        for s in 'AB':
            vec, lab, idx = out[s]
            own[s].append(ndcg10(lab, len(rel)))
            runs[s] += [(f'q{qi}', f'q{qi}r{idx[k]}' if lab[k] else f'q{qi}{s}n{k}', 100.0 - k) for k in range(10)]
    qrels = pd.DataFrame(qr, columns=['query_id', 'doc_id', 'relevance'])
    runs = {s: pd.DataFrame(v, columns=['query_id', 'doc_id', 'score']) for s, v in runs.items()}
    c = pf.compare_systems(runs, qrels, [nDCG @ 10], n_samples=B, seed=t, verbose=False).iloc[0]
    d = np.array(own['A']) - np.array(own['B'])
    rows.append(dict(trial=t, diff=c['diff'], own_diff=d.mean(), test=c['test'], p_default=c[f"p_{c['test']}"],
                     p_normal=c['p_normal'], p_bootstrap=c['p_bootstrap'],
                     p_ttest_rel=scipy.stats.ttest_rel(own['A'], own['B']).pvalue,
                     p_wilcoxon=scipy.stats.wilcoxon(d).pvalue if np.any(d) else 1.0))
df = pd.DataFrame(rows)
df.to_csv(f'benchmarks/unseen_world/results/ndcg_level_{kind}_n{n}_b{B}.csv', index=False)
print(f'{kind} n={n} trials={T} B={B} default test {sorted(df.test.unique())}; max |diff - own| '
      f'{(df["diff"] - df.own_diff).abs().max():.1e}; max |p_default - p_ttest_rel| '
      f'{(df.p_default - df.p_ttest_rel).abs().max():.1e}')
for col in ['p_default', 'p_normal', 'p_bootstrap', 'p_ttest_rel', 'p_wilcoxon']:
    k = int((df[col] < 0.05).sum())
    print(f'  {col}: {k}/{T} = {k / T:.3f} (SE {np.sqrt(max(k / T * (1 - k / T), 1 / T) / T):.3f})')
