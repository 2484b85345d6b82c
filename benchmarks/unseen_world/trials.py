"""Fresh query sets evaluated with the package's public defaults (bootstrap + compare_systems)."""
import sys, os, tempfile, warnings, numpy as np, pandas as pd
warnings.filterwarnings('ignore')
import pyterrier_frechet as pf
from pyterrier_frechet import FD
from ir_measures import nDCG
import pathlib, sys; sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2]))  # the repo root, run as a file
from benchmarks.worlds.lognormal import World, draw_set, own_measures, write_set, SYSTEMS
kind, d, n, T = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
# optional START (added later): trials 0..START-1 are drawn but not evaluated, their rows kept from the existing CSVs
start = int(sys.argv[5]) if len(sys.argv) > 5 else 0
w = World(kind, d); r = np.random.default_rng(2024 + d + n)
tmp = tempfile.mkdtemp(); prefix = tmp + '/v'
tag = f'{kind}_d{d}_n{n}'
brows, crows = [], []
if start:
    for part, rows in (('intervals', brows), ('pairs', crows)):
        old = pd.read_csv(f'benchmarks/unseen_world/results/trials_{tag}_{part}.csv')
        assert old.trial.nunique() >= start, f'{tag}: only {old.trial.nunique()} trials to keep, START={start}'
        rows += old[old.trial < start].to_dict('records')
for t in range(T):
    qs = draw_set(w, r, n)
    if t < start:
        continue
    qrels, runs = write_set(qs, prefix)
    meas = [FD(encoder=pf.VectorStore(prefix)) @ 10, nDCG @ 10]
    b = pf.bootstrap(runs, qrels, meas, n_samples=200, seed=t, verbose=False).summary
    c = pf.compare_systems(runs, qrels, meas, n_samples=200, verbose=False)
    own = own_measures(qs)
    for _, row in b.iterrows():
        m = 'FD' if row['measure'].startswith('FD') else 'nDCG'
        brows.append(dict(trial=t, system=row['name'], measure=m, value=row['value'], low=row['low'],
                          high=row['high'], interval=row['interval'], own_fd=own[row['name']][0]))
    for _, row in c.iterrows():
        m = 'FD' if row['measure'].startswith('FD') else 'nDCG'
        pcol = {'jackknife': 'p_jackknife', 'normal': 'p_normal', 'bootstrap': 'p_bootstrap'}.get(row['test'], 'p_normal')
        crows.append(dict(trial=t, a=row['a'], b=row['b'], measure=m, diff=row['diff'], low=row['ci_low'],
                          high=row['ci_high'], interval=row['interval'], test=row['test'], p=row[pcol],
                          p_holm=row['p_holm']))
    print(t, flush=True)
pd.DataFrame(brows).to_csv(f'benchmarks/unseen_world/results/trials_{tag}_intervals.csv', index=False)
pd.DataFrame(crows).to_csv(f'benchmarks/unseen_world/results/trials_{tag}_pairs.csv', index=False)
