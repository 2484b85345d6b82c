import sys, time, tempfile, os
import numpy as np, pandas as pd
import pathlib, sys; sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2]))  # the repo root, run as a file
from benchmarks.worlds.graded import WORLDS
from benchmarks.unseen_world2.own import own_values, to_package
import pyterrier_frechet as pf
from pyterrier_frechet import FD
from ir_measures import nDCG
pd.set_option("display.width", 250); pd.set_option("display.max_columns", 30)
wname, d = sys.argv[1], int(sys.argv[2])
W = WORLDS[wname](d)
rng = np.random.default_rng(123)
qs = [W.sample_query(rng, i) for i in range(43)]
print("rel sizes", [int((q['labels']>=2).sum()) for q in qs])
tmp = tempfile.mkdtemp(); prefix = os.path.join(tmp, "v")
qrels, runs = to_package(qs, prefix)
enc = pf.VectorStore(prefix)
meas = [FD(rel=2, encoder=enc) @ 10, FD(rel=2, per_query=5, seed=0, encoder=enc) @ 10, nDCG @ 10]
t = time.time(); ev = pf.evaluate(runs, qrels, meas); print("evaluate", time.time() - t); print(ev)
print(own_values(qs, np.random.default_rng(0)))
t = time.time(); b = pf.bootstrap(runs, qrels, meas, n_samples=200, seed=0, verbose=False).summary; print("boot", time.time() - t)
print(b.columns.tolist()); print(b)
t = time.time(); c = pf.compare_systems(runs, qrels, meas, n_samples=200, verbose=False); print("cmp", time.time() - t)
print(type(c)); print(c.columns.tolist()); print(c)
