"""``pt.Experiment(baseline=...)`` with FD beside nDCG@10 and RR@10 on the 19 DL19 runs (issue 27, item 2), in one run.

FD's per-query rows are centred jackknife pseudo-values (``pyterrier_frechet.evaluation.experiment_rows``): the
table's FD column must equal ``pf.evaluate``'s FD, and the ``baseline=`` p-value must be the jackknife t-test of the
FD difference — since stop 42 exactly ``compare``'s default jackknife t-test (every DL19 query has a relevant passage
at grade 2, so both are on 42 degrees of freedom). This script prints, per run: FD, nDCG@10, the p-values
pt.Experiment prints, and ``compare_systems``' jackknife p-value beside them, with the time pt.Experiment took with
and without FD (the leave-outs' cost).

    python benchmarks/experiment_baseline.py                 # needs ../shared (DL19 runs and MiniLM vectors)
    python benchmarks/experiment_baseline.py --per-query 5   # the same with FD(per_query=5)@10, the measure for tests
"""
import argparse
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pyterrier as pt
from ir_measures import RR, nDCG

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # this checkout's package first

import pyterrier_frechet as pf  # noqa: E402
from pyterrier_frechet.analyses.significance import compare_systems  # noqa: E402

SHARED = Path(__file__).resolve().parents[2] / 'shared'
MSMARCO = SHARED / 'data' / 'msmarco-passage'
VECTORS = SHARED / 'embeddings' / 'msmarco-passage.dl19-dl20.minilm'


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument('--per-query', type=int, default=None, help='FD(per_query=K)@10 instead of FD@10')
    args = ap.parse_args()
    topics = pt.io.read_topics(str(MSMARCO / 'topics.dl19-passage.txt'), format='singleline')
    qrels = pt.io.read_qrels(str(MSMARCO / 'qrels.dl19-passage.txt'))
    paths = sorted((MSMARCO / 'runs').glob('run.dl19.*'))
    names = [p.name[len('run.dl19.'):].split('.top')[0] for p in paths]
    runs = {n: pt.io.read_results(str(p)) for n, p in zip(names, paths)}
    baseline = names.index('bm25')
    balance = {} if args.per_query is None else {'per_query': args.per_query}
    fd = pf.FD(rel=2, encoder=pf.VectorStore(str(VECTORS)), missing='drop', **balance) @ 10
    systems = [pt.Transformer.from_df(runs[n]) for n in names]
    t0 = time.perf_counter()
    plain = pt.Experiment(systems, topics, qrels, eval_metrics=[nDCG @ 10, RR @ 10], names=names, baseline=baseline)
    t1 = time.perf_counter()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter('always')
        table = pt.Experiment(systems, topics, qrels, eval_metrics=[fd, nDCG @ 10, RR @ 10], names=names,
                              baseline=baseline)
    t2 = time.perf_counter()
    evaluated = pf.evaluate(runs, qrels, [fd]).set_index('name')
    pairs = compare_systems(runs, qrels, [fd], baseline='bm25', n_samples=200, verbose=False)
    own = {row.b if row.a == 'bm25' else row.a: row.p_jackknife for row in pairs.itertuples()}
    table = table.set_index('name')
    out = pd.DataFrame({
        'FD': table[str(fd)],
        'pf.evaluate FD': evaluated.iloc[:, 0],
        'nDCG@10': table['nDCG@10'],
        'FD p (pt.Experiment, t)': table[f'{fd} p-value'],
        'FD p (compare, jackknife t)': pd.Series(own),
        'nDCG@10 p': table['nDCG@10 p-value'],
    })
    pd.set_option('display.width', 200)
    print(out.round(6).to_string())
    print(f'\nmax |pt.Experiment FD − pf.evaluate FD| / FD = '
          f'{float(np.max(np.abs(out["FD"] - out["pf.evaluate FD"]) / out["pf.evaluate FD"])):.2e}')
    other = out.drop(index='bm25')
    gap = float(np.max(np.abs(other["FD p (pt.Experiment, t)"] - other["FD p (compare, jackknife t)"])))
    print(f'max |pt.Experiment p − compare p| over the runs = {gap:.2e}; '
          f'FD p < 0.05 for {int((other["FD p (pt.Experiment, t)"] < 0.05).sum())} of {len(other)} runs (unadjusted), '
          f'nDCG@10 for {int((other["nDCG@10 p"] < 0.05).sum())}')
    print(f'warnings: {sorted({str(w.message)[:80] for w in caught}) or "none"}')
    print(f'pt.Experiment, 19 runs: nDCG@10 + RR@10 {t1 - t0:.1f} s; with {fd} {t2 - t1:.1f} s')


if __name__ == '__main__':
    main()
