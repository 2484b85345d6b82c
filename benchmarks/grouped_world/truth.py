"""Truth by Monte Carlo: FD (own numpy code) and mean nDCG@10 of every system on many independent reference query
sets drawn exactly as the trials draw theirs (G topics). One row per reference set.

    python -m benchmarks.grouped_world.truth --d 128 --G 14 --sets 500
"""
import argparse, csv, os, time
import numpy as np
import pathlib, sys; sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2]))  # the repo root, run as a file
from benchmarks.worlds.grouped import Space, SYSTEMS, draw_query_set, fd_all, ndcg_all

ap = argparse.ArgumentParser()
ap.add_argument('--d', type=int, required=True)
ap.add_argument('--G', type=int, required=True)
ap.add_argument('--sets', type=int, default=500)
ap.add_argument('--world', choices=['shared', 'interact'], default='shared')
a = ap.parse_args()
WT = '' if a.world == 'shared' else '_interact'
out = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'results', f'truth_d{a.d}_G{a.G}{WT}.csv')
space = Space(a.d)
t0 = time.time()
with open(out, 'w', newline='') as f:
    w = csv.writer(f)
    w.writerow(['set', 'n'] + [f'fd_{s}' for s in SYSTEMS] + [f'ndcg_{s}' for s in SYSTEMS])
    for i in range(a.sets):
        qs = draw_query_set(space, a.G, np.random.default_rng([a.d, a.G, 777, i]), interaction=a.world == 'interact')
        fd, nd = fd_all(qs), ndcg_all(qs)
        w.writerow([i, len(qs)] + [fd[s] for s in SYSTEMS] + [nd[s] for s in SYSTEMS])
        f.flush()
print(f'truth d={a.d} G={a.G}: {a.sets} sets in {time.time() - t0:.0f}s -> {out}')
