import sys, numpy as np, pandas as pd
import pathlib, sys; sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2]))  # the repo root, run as a file
from benchmarks.worlds.lognormal import World, draw_set, own_measures, SYSTEMS
kind, d, n, reps = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
w = World(kind, d); r = np.random.default_rng(999)
rows = []
for t in range(reps):
    m = own_measures(draw_set(w, r, n))
    rows.append({**{f'FD_{s}': m[s][0] for s in SYSTEMS}, **{f'nDCG_{s}': m[s][1] for s in SYSTEMS}})
pd.DataFrame(rows).to_csv(f'benchmarks/unseen_world/results/truth_{kind}_d{d}_n{n}.csv', index=False)
