"""nDCG@10's cluster-bootstrap interval after the fix of the per-query mean (Σw·v/Σw): coverage of E[mean nDCG@10]
(from results/truth_d128_G*.csv) by pf.bootstrap(..., ['nDCG@10'], query_groups=...) on the trials' query sets
(the same seeds as run_trials.py), with and without the groups. nDCG needs no vectors, so this is fast.

    python -m benchmarks.grouped_world.ndcg_after_fix 128 14 100 > benchmarks/grouped_world/results/ndcg_after_fix_d128_G14.txt
"""
import sys, warnings
import numpy as np, pandas as pd
import pyterrier_frechet as pf
import pathlib, sys; sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2]))  # the repo root, run as a file
from benchmarks.worlds.grouped import Space, SYSTEMS, draw_query_set, frames

d, G, T = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
truth = pd.read_csv(pathlib.Path(__file__).parent / 'results' / f'truth_d{d}_G{G}.csv')[[f'ndcg_{s}' for s in SYSTEMS]].mean()
space = Space(d)
rows = []
for trial in range(T):
    qs = draw_query_set(space, G, np.random.default_rng([d, G, trial]))
    qrels, runs, _, groups = frames(qs)
    for grouped in (True, False):
        with warnings.catch_warnings():
            warnings.simplefilter('ignore')
            res = pf.bootstrap(runs, qrels, ['nDCG@10'], n_samples=200, seed=trial, verbose=False,
                               query_groups=groups if grouped else None)
        for r in res.summary.itertuples():
            t = truth[f'ndcg_{r.name}']
            rows.append({'trial': trial, 'groups': grouped, 'system': r.name, 'cover': r.low <= t <= r.high,
                         'width': r.high - r.low, 'above1': r.high > 1})
df = pd.DataFrame(rows)
print(f'd={d} G={G} trials={T}')
print(df.groupby('groups')[['cover', 'width', 'above1']].mean().round(3).to_string())
print(df.groupby(['groups', 'system'])['cover'].mean().unstack().round(2).to_string())
