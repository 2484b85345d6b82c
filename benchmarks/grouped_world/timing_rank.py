"""Timing: pf.bootstrap of FD@10 at d = 384, one system, 40 queries x 10 retrieved (400 > d), with R relevant
documents per query: 40 R below or above d = 384 (a singular or a full-rank relevant covariance).

    python -m benchmarks.grouped_world.timing_rank
"""
import time, warnings
import numpy as np
import pandas as pd
import pyterrier_frechet as pf
import pathlib, sys; sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2]))  # the repo root, run as a file
from benchmarks.worlds.grouped import DictEncoder

warnings.simplefilter('ignore')


def frames(R, d=384, nq=40, seed=0):
    rng = np.random.default_rng(seed)
    unit = lambda x: x / np.linalg.norm(x, axis=-1, keepdims=True)
    qr, run, vec = [], [], {}
    for q in range(nq):
        for i in range(R):
            vec[f'q{q}r{i}'] = unit(rng.standard_normal(d)); qr.append((f'q{q}', f'q{q}r{i}', 1))
        for j in range(10):
            dn = f'q{q}r0' if j == 0 else f'q{q}n{j}'
            if j:
                vec[dn] = unit(rng.standard_normal(d)); qr.append((f'q{q}', dn, 0))
            run.append((f'q{q}', dn, 10.0 - j))
    return (pd.DataFrame(qr, columns=['qid', 'docno', 'label']),
            {'S': pd.DataFrame(run, columns=['qid', 'docno', 'score'])}, vec)


for R in (5, 9, 10, 12, 20):
    qrels, runs, vec = frames(R)
    m = pf.FD(encoder=DictEncoder(vec)) @ 10
    pf.bootstrap(runs, qrels, [m], n_samples=5, seed=0, verbose=False)  # warm-up
    t = time.perf_counter()
    pf.bootstrap(runs, qrels, [m], n_samples=100, seed=0, verbose=False)
    print(f'R={R:2d}: {40 * R:4d} relevant vectors (d=384): {time.perf_counter() - t:6.2f} s per bootstrap (100 samples)',
          flush=True)
