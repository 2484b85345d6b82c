"""Fresh query sets evaluated with the package's public defaults (bootstrap + compare_systems)."""
import sys, os, tempfile, warnings, numpy as np, pandas as pd
sys.path.insert(0, 'benchmarks/unseen_world')
warnings.filterwarnings('ignore')
import pyterrier_frechet as pf
from pyterrier_frechet import FD
from ir_measures import nDCG
from worlds import World, draw_set, own_measures, SYSTEMS
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
    vecs, ids, qr, runs = [], [], [], {s: [] for s in SYSTEMS}
    for qi, (rel, out) in enumerate(qs):
        for j, v in enumerate(rel):
            ids.append(f'q{qi}r{j}'); vecs.append(v); qr.append((f'q{qi}', f'q{qi}r{j}', 1))
        for s, (vec, lab, idx) in out.items():
            for rank in range(10):
                if lab[rank]:
                    doc = f'q{qi}r{idx[rank]}'
                else:
                    doc = f'q{qi}{s}n{rank}'; ids.append(doc); vecs.append(vec[rank])
                runs[s].append((f'q{qi}', doc, 100.0 - rank))
    np.save(prefix + '.npy', np.array(vecs)); open(prefix + '.ids.txt', 'w').write('\n'.join(ids) + '\n')
    qrels = pd.DataFrame(qr, columns=['query_id', 'doc_id', 'relevance'])
    # a doc retrieved twice in one ranking (same rel doc sampled twice) -> keep first; pad is not needed for FD
    runs = {s: pd.DataFrame(v, columns=['query_id', 'doc_id', 'score']).drop_duplicates(['query_id', 'doc_id'])
            for s, v in runs.items()}
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
