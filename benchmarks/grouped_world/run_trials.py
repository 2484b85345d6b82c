"""Trials: a fresh query set of G topics per trial, frames for the package, pf.bootstrap and pf.compare_systems
with query_groups = the true topics and without. Appends to results/trials_d{d}_G{G}_{systems,pairs}.csv after
every trial (partial runs count) and results/warnings_d{d}_G{G}.csv.

    python -m benchmarks.grouped_world.run_trials --d 128 --G 14 --trials 100
"""
import argparse, csv, os, time, warnings, logging
import numpy as np
import pyterrier_frechet as pf
import pathlib, sys; sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2]))  # the repo root, run as a file
from benchmarks.worlds.grouped import DictEncoder, Space, SYSTEMS, draw_query_set, frames, fd_all, ndcg_all


class ListHandler(logging.Handler):
    def __init__(self):
        super().__init__()
        self.records = []

    def emit(self, record):
        self.records.append(f'{record.levelname}:{record.name}:{record.getMessage()}')


ap = argparse.ArgumentParser()
ap.add_argument('--d', type=int, required=True)
ap.add_argument('--G', type=int, required=True)
ap.add_argument('--trials', type=int, default=100)
ap.add_argument('--start', type=int, default=0)
ap.add_argument('--samples', type=int, default=200)
ap.add_argument('--world', choices=['shared', 'interact'], default='shared')
a = ap.parse_args()
WT = '' if a.world == 'shared' else '_interact'
res_dir = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'results')
tag = f'd{a.d}_G{a.G}{WT}'
paths = {k: os.path.join(res_dir, f'trials_{tag}_{k}.csv') for k in ('systems', 'pairs', 'warnings')}
heads = {
    'systems': ['trial', 'grouped', 'n', 'G', 'system', 'measure', 'value', 'low', 'high', 'interval', 'own_value',
                'seconds'],
    'pairs': ['trial', 'grouped', 'n', 'G', 'a', 'b', 'diff', 'ci_low', 'ci_high', 'interval', 'test', 'p_default',
              'p_jackknife', 'p_normal', 'p_bootstrap', 'own_diff'],
    'warnings': ['trial', 'grouped', 'call', 'message'],
}
for k, p in paths.items():
    if a.start == 0 or not os.path.exists(p):
        with open(p, 'w', newline='') as f:
            csv.writer(f).writerow(heads[k])

space = Space(a.d)
log = ListHandler()
logging.getLogger().addHandler(log)
logging.getLogger().setLevel(logging.WARNING)
t_all = time.time()
for trial in range(a.start, a.start + a.trials):
    qs = draw_query_set(space, a.G, np.random.default_rng([a.d, a.G, trial]), interaction=a.world == 'interact')
    qrels, runs, vecs, groups = frames(qs)
    own_fd, own_nd = fd_all(qs), ndcg_all(qs)
    m = pf.FD(encoder=DictEncoder(vecs)) @ 10
    rows_s, rows_p, rows_w = [], [], []
    for grouped in (1, 0):
        qg = groups if grouped else None
        for call in ('bootstrap', 'compare_systems'):
            t = time.time()
            log.records.clear()
            with warnings.catch_warnings(record=True) as wl:
                warnings.simplefilter('always')
                if call == 'bootstrap':
                    res = pf.bootstrap(runs, qrels, [m, 'nDCG@10'], n_samples=a.samples, seed=trial, verbose=False,
                                       query_groups=qg)
                else:
                    # boot=res: the same samples; checked equal to a fresh call with the same seed (probe.py)
                    cmp = pf.compare_systems(runs, qrels, [m], n_samples=a.samples, seed=trial, verbose=False,
                                             query_groups=qg, boot=res)
            secs = time.time() - t
            for msg in sorted({str(x.message) for x in wl} | set(log.records)):
                rows_w.append([trial, grouped, call, msg])
            if call == 'bootstrap':
                for _, r in res.summary.iterrows():
                    meas = 'nDCG@10' if str(r['measure']).startswith('nDCG') else 'FD@10'
                    own = own_fd[r['name']] if meas == 'FD@10' else own_nd[r['name']]
                    rows_s.append([trial, grouped, len(qs), a.G, r['name'], meas, r['value'], r['low'], r['high'],
                                   r['interval'], own, round(secs, 2)])
            else:
                for _, r in cmp.iterrows():
                    rows_p.append([trial, grouped, len(qs), a.G, r['a'], r['b'], r['diff'], r['ci_low'], r['ci_high'],
                                   r['interval'], r['test'], r[f"p_{r['test']}"], r['p_jackknife'], r['p_normal'],
                                   r['p_bootstrap'], own_fd[r['a']] - own_fd[r['b']]])
    for k, rows in (('systems', rows_s), ('pairs', rows_p), ('warnings', rows_w)):
        with open(paths[k], 'a', newline='') as f:
            csv.writer(f).writerows(rows)
    print(f'{tag} trial {trial} n={len(qs)} done, {time.time() - t_all:.0f}s elapsed', flush=True)
