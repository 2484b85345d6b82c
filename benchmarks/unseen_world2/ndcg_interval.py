"""nDCG@10's printed interval in the two worlds of this check: the percentile bootstrap (the default before stop 42)
against the Student t interval (the default since), on the same query sets (lead, stop 42).

The worlds are this folder's (the helper's, built without the package's method in view); nDCG@10 per query is the
helper's own (`own.ndcg10`, equal to ir_measures' to machine precision in the trials). The population mean nDCG@10
of each system is the mean over ``--population`` further independent queries (its SE is printed: ≤ 0.002 at 50,000).
Each trial draws 43 queries (the trials' own seeds, [world, d, 100000 + t]) and computes, with the package's
:func:`pyterrier_frechet.core.intervals.interval`:

- ``percentile``: 1000 bootstrap resamples of the queries, drawn by the package's own
  :func:`pyterrier_frechet.analyses.bootstrap.draw_counts` with ``seed=t`` (as ``pf.bootstrap(seed=t)`` draws them);
- ``t``: the mean ± t_{42}·SE_J from the leave-one-query-out means (`PER_QUERY.leave_out`, as ``pf.bootstrap``).

    python -m benchmarks.unseen_world2.ndcg_interval graded 128 1000     # ~2 min per world on 2 cores
"""
import os
import sys
import time
from types import SimpleNamespace

import numpy as np
import pandas as pd

HERE = os.path.dirname(os.path.abspath(__file__))
import pathlib, sys; sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2]))  # the repo root, run as a file
from benchmarks.worlds.graded import SYSTEMS, WORLDS  # noqa: E402
from benchmarks.unseen_world2.own import ndcg10  # noqa: E402

from pyterrier_frechet.analyses.bootstrap import draw_counts  # noqa: E402
from pyterrier_frechet.core.intervals import interval  # noqa: E402
from pyterrier_frechet.measures.resampling import PER_QUERY  # noqa: E402

N = 43
WID = {"graded": 1, "aniso": 2}


def per_query(W, rng, n):
    qs = [W.sample_query(rng, i) for i in range(n)]
    return np.array([[ndcg10(q, s) for s in SYSTEMS] for q in qs])  # queries × systems


def main(world, d, trials, population=50_000, samples=1000):
    W = WORLDS[world](d)
    t0 = time.time()
    pop = per_query(W, np.random.default_rng([WID[world], d, 7_000_000]), population)
    truth = pop.mean(axis=0)
    truth_se = pop.std(axis=0, ddof=1) / np.sqrt(population)
    rows = []
    for t in range(trials):
        v = per_query(W, np.random.default_rng([WID[world], d, 100000 + t]), N)
        counts = draw_counts(N, samples, seed=t)
        groups = np.arange(N)
        for j, s in enumerate(SYSTEMS):
            m = float(v[:, j].mean())
            jack = PER_QUERY.leave_out(None, SimpleNamespace(values=v[:, j]), groups, N, None)
            for method, boot in (('percentile', counts @ v[:, j] / N), ('t', np.array([]))):
                low, high = interval(method, m, boot, 0.95, jackknife=jack)
                rows.append(dict(trial=t, system=s, method=method, low=low, high=high, truth=truth[j]))
    frame = pd.DataFrame(rows)
    frame['covered'] = (frame.low <= frame.truth) & (frame.truth <= frame.high)
    frame['miss_above'] = frame.truth > frame.high
    print(f'{world}, d = {d}, {trials} sets of {N} queries, population mean over {population} queries '
          f'(SE ≤ {truth_se.max():.4f}); {time.time() - t0:.0f} s\n')
    print('| system | population nDCG@10 | percentile bootstrap | t interval | misses above (pct / t) |')
    print('|---|---|---|---|---|')
    for j, s in enumerate(SYSTEMS):
        f = frame[frame.system == s]
        c = f.groupby('method').covered.mean()
        a = f.groupby('method').miss_above.sum()
        print(f'| {s} | {truth[j]:.4f} | {c["percentile"]:.3f} | {c["t"]:.3f} | {a["percentile"]} / {a["t"]} |')
    c = frame.groupby('method').covered.mean()
    per_set = frame.groupby(['method', 'trial']).covered.mean()   # the four systems of a set share its queries
    se = per_set.groupby('method').std(ddof=1) / np.sqrt(trials)
    print(f'| all (SE over sets) | | {c["percentile"]:.3f} (SE {se["percentile"]:.3f}) | {c["t"]:.3f} (SE {se["t"]:.3f}) | |')
    out = os.path.join(HERE, 'results', f'ndcg_interval_{world}_d{d}.csv.gz')
    frame.to_csv(out, index=False)


if __name__ == '__main__':
    main(sys.argv[1], int(sys.argv[2]), int(sys.argv[3]))
