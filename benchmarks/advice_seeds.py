"""Does the advice "which FD to report" survive the balancing seed? Kendall τ with nDCG@10 over the 19 DL19 runs
for FD(per_query=N, seed=s)@10, s = 0..S−1, and for the seed-averaged FD(per_query=N, draws=D)@10.

    python -m benchmarks.advice_seeds --seeds 10 --draws 10
"""
import argparse
import time
from pathlib import Path

import numpy as np
import pandas as pd
import scipy.stats

import pyterrier_frechet as pf
from pyterrier_frechet.data.runs import read_qrels, read_run, run_files, run_names

SHARED = Path(__file__).resolve().parents[1].parent / 'shared'


def main(argv=None):
    p = argparse.ArgumentParser()
    p.add_argument('--seeds', type=int, default=10)
    p.add_argument('--draws', type=int, default=0, help='also the seed-averaged form with this many draws (0: skip)')
    p.add_argument('--per-query', type=int, nargs='+', default=[1, 5])
    args = p.parse_args(argv)
    data = SHARED / 'data' / 'msmarco-passage'
    files = run_files([data / 'runs'])
    runs = {n: read_run(f) for n, f in zip(run_names(files), files)}
    qrels = read_qrels(data / 'qrels.dl19-passage.txt')
    store = pf.VectorStore(str(SHARED / 'embeddings' / 'msmarco-passage.dl19-dl20.minilm'))
    measures = ['nDCG@10', "FD(rel=2,missing='drop')@10", "FD(rel=2,missing='drop',weighting='query')@10"]
    for n in args.per_query:
        measures += [f"FD(rel=2,missing='drop',per_query={n},seed={s})@10" for s in range(args.seeds)]
        if args.draws:
            measures += [f"FD(rel=2,missing='drop',per_query={n},draws={args.draws},seed={s * args.draws})@10"
                         for s in range(args.seeds)]
    t0 = time.time()
    table = pf.evaluate(runs, qrels, measures, encoder=store).set_index('name')
    ndcg = table['nDCG@10'].to_numpy()
    rows = []
    for col in table.columns:
        if not col.startswith('FD'):
            continue
        tau = scipy.stats.kendalltau(-table[col].to_numpy(), ndcg).statistic
        rows.append({'measure': col, 'tau': tau})
    out = pd.DataFrame(rows)
    print(out.to_string(index=False))
    for n in args.per_query:
        for kind, pattern in (('single seed', rf'per_query={n}(,seed=\d+)?\)'), ('seed-averaged', rf'per_query={n},draws=')):
            taus = out[out.measure.str.contains(pattern, regex=True)]['tau']
            if len(taus):
                print(f'per_query={n} {kind}: τ mean {taus.mean():.3f}, sd {taus.std(ddof=1):.3f}, '
                      f'min {taus.min():.3f}, max {taus.max():.3f} over {len(taus)} seeds')
    print(f'{time.time() - t0:.0f} s')


if __name__ == '__main__':
    main()
