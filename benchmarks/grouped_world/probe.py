import numpy as np, time, warnings, sys
import pyterrier_frechet as pf
import pathlib, sys; sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2]))  # the repo root, run as a file
from benchmarks.worlds.grouped import DictEncoder, Space, draw_query_set, fd_all, frames, ndcg_all
d, G = int(sys.argv[1]), int(sys.argv[2])
sp = Space(d); qs = draw_query_set(sp, G, np.random.default_rng(7))
qrels, runs, vecs, groups = frames(qs)
print('n', len(qs), 'fd numpy', fd_all(qs), ndcg_all(qs))
m = pf.FD(encoder=DictEncoder(vecs)) @ 10
import pandas as pd; pd.set_option('display.width', 250); pd.set_option('display.max_columns', 30)
t = time.time()
res = pf.bootstrap(runs, qrels, [m, 'nDCG@10'], n_samples=200, seed=0, verbose=False, query_groups=groups)
t1 = time.time(); print('boot', t1 - t); print(res.summary)
cmp = pf.compare_systems(runs, qrels, [m], n_samples=200, seed=0, verbose=False, query_groups=groups)
t2 = time.time(); print('cmp', t2 - t1); print(cmp)
cmp2 = pf.compare_systems(runs, qrels, [m], n_samples=200, seed=0, verbose=False, query_groups=groups, boot=res)
t3 = time.time(); print('cmp boot', t3 - t2)
print((cmp.select_dtypes('number') - cmp2.select_dtypes('number')).abs().max())
