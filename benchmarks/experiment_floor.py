"""FD in ``pt.Experiment`` against nDCG@10 alone, and FD's per-query rows against the floor of their arithmetic.

Issue 50's paths, every figure measured in this one process on the TREC DL 2019 runs and MiniLM vectors of
``../shared`` (warm: each call is made once before it is timed, and the best of ``--repeat`` is kept):

1. ``pt.Experiment`` over the first 6 runs with ``FD(rel=2, missing='drop')@10`` and nDCG@10, ``baseline=0``, against
   the same call with nDCG@10 alone; and with ``rows='influence'`` (the rows from each query's first-order influence,
   one eigen-decomposition per run: ``core/influence.py``);
2. ``pt.Experiment`` over the 19 runs with FD@1, FD@10, FD(urr=True)@10 (``rel=2, missing='drop'``) and nDCG@10,
   against nDCG@10 alone;
3. FD's per-query rows: ``ir_measures.iter_calc`` (the value and the 43 leave-one-query-out FDs behind the rows) minus
   ``ir_measures.calc_aggregate`` (the value alone) over the 19 runs and three FD measures, against the floor: the
   bare symmetric eigenvalue solves those leave-outs need (``scipy.linalg.eigh(..., eigvals_only=True,
   driver='evd')`` of a 384 × 384 covariance of the same data, one per dense leave-out; FD@1's retrieved side has
   42 vectors, so its leave-outs are 41 × 41 solves, timed as such);
4. FD@10's rows over the 19 runs by the two exact routes, alternating in this process (each timing clears the
   evaluation memo and warms it on one run): the congruence route (each leave-out's retrieved covariance downdated
   and packed, one LAPACK ``sygst`` with the relevant leave-out's factor, one eigenvalue solve:
   ``relevant_leave_outs(..., downdate=False)``) and the downdate route, the default (each run's LᵀΣ₂L once with the
   factor over all queries, rank updates per leave-out, one eigenvalue solve: ``core/downdate.py``), against the
   bare solves of its 817 leave-outs.

    python benchmarks/experiment_floor.py [--shared ../shared] [--repeat 2] [--only-routes]
"""
import argparse
import logging
import sys
import time
import warnings
from pathlib import Path

import ir_measures
import numpy as np
import pyterrier as pt
import scipy.linalg
from ir_measures import nDCG

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # this checkout's package first

import pyterrier_frechet as pf  # noqa: E402
from pyterrier_frechet.core.threads import lapack_threads  # noqa: E402


def best(fn, repeat):
    fn()  # warm: the qrels memo, the vector store's pages, the relevant side's shared leave-outs
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument('--shared', default=str(Path(__file__).resolve().parents[2] / 'shared'))
    ap.add_argument('--repeat', type=int, default=2)
    ap.add_argument('--only-routes', action='store_true', help='only 4., the two routes of the leave-outs')
    args = ap.parse_args()
    logging.disable(logging.WARNING)
    warnings.simplefilter('ignore')
    ms = Path(args.shared) / 'data' / 'msmarco-passage'
    store = pf.VectorStore(str(Path(args.shared) / 'embeddings' / 'msmarco-passage.dl19-dl20.minilm'))
    topics = pt.io.read_topics(str(ms / 'topics.dl19-passage.txt'), format='singleline')
    qrels = pt.io.read_qrels(str(ms / 'qrels.dl19-passage.txt'))
    paths = sorted((ms / 'runs').glob('run.dl19.*'))
    names = [p.name[len('run.dl19.'):].split('.top')[0] for p in paths]
    runs = [pt.io.read_results(str(p)) for p in paths]
    systems = [pt.Transformer.from_df(r) for r in runs]

    def fd(**kw):
        return pf.FD(rel=2, encoder=store, missing='drop', **kw)

    def experiment(measures, k, baseline=None):
        return lambda: pt.Experiment(systems[:k], topics, qrels, eval_metrics=measures, names=names[:k],
                                     baseline=baseline)

    print(f'{len(runs)} DL19 runs; {len(topics)} topics; best of {args.repeat} warm calls\n')
    if args.only_routes:
        return routes(runs, qrels, store, args.repeat)
    n6 = best(experiment([nDCG @ 10], 6, 0), args.repeat)
    f6 = best(experiment([fd() @ 10, nDCG @ 10], 6, 0), args.repeat)
    i6 = best(experiment([fd(rows='influence') @ 10, nDCG @ 10], 6, 0), args.repeat)
    print(f'1. pt.Experiment, 6 runs, baseline=0: nDCG@10 {n6:.2f} s; + FD(rel=2)@10 {f6:.2f} s: {f6 / n6:.1f}x; '
          f"+ FD(rel=2, rows='influence')@10 {i6:.2f} s: {i6 / n6:.1f}x")
    three = [fd() @ 1, fd() @ 10, fd(urr=True) @ 10]
    n19 = best(experiment([nDCG @ 10], len(runs)), args.repeat)
    f19 = best(experiment(three + [nDCG @ 10], len(runs)), args.repeat)
    print(f'2. pt.Experiment, {len(runs)} runs: nDCG@10 {n19:.2f} s; + FD@1, FD@10, FD(urr)@10 {f19:.2f} s: '
          f'{f19 / n19:.1f}x')
    b19 = best(experiment([nDCG @ 10], len(runs), 0), args.repeat)
    g19 = best(experiment(three + [nDCG @ 10], len(runs), 0), args.repeat)
    i19 = best(experiment([fd(rows='influence') @ 1, fd(rows='influence') @ 10, fd(urr=True, rows='influence') @ 10,
                           nDCG @ 10], len(runs), 0), args.repeat)
    print(f'   the same with baseline=0 (the rows are read): nDCG@10 {b19:.2f} s; + the three FD {g19:.2f} s: '
          f"{g19 / b19:.1f}x; the three with rows='influence' {i19:.2f} s: {i19 / b19:.1f}x")

    qrels_ir = pt.model.to_ir_measures(qrels)
    runs_ir = [pt.model.to_ir_measures(r) for r in runs]
    value = best(lambda: [ir_measures.calc_aggregate(three, qrels_ir, r) for r in runs_ir], args.repeat)
    rows = best(lambda: [list(ir_measures.iter_calc(three, qrels_ir, r)) for r in runs_ir], args.repeat)
    units = int(qrels.loc[qrels['label'] >= 2, 'qid'].nunique())
    # the floor: one eigenvalue solve per leave-out, of the size the trace term needs
    vecs = store.lookup(qrels.loc[qrels['label'] >= 2, 'docno'].astype(str).unique()[:2000])[0]
    dense = np.cov(np.asarray(vecs, dtype=np.float64).T)
    small = np.cov(np.asarray(vecs[:units], dtype=np.float64).T[:units - 2])
    with lapack_threads():
        solve_dense = best(lambda: scipy.linalg.eigh(dense, eigvals_only=True, driver='evd', check_finite=False), 20)
        solve_small = best(lambda: scipy.linalg.eigh(small, eigvals_only=True, driver='evd', check_finite=False), 20)
    floor = len(runs) * units * (2 * solve_dense + solve_small)
    print(f'3. rows of FD@1, FD@10, FD(urr)@10 over {len(runs)} runs ({len(runs) * units * 3} leave-outs): iter_calc '
          f'{rows:.2f} s − calc_aggregate {value:.2f} s = {rows - value:.2f} s; floor {floor:.2f} s '
          f'({solve_dense * 1e3:.2f} ms a 384 × 384 solve, {solve_small * 1e3:.2f} ms a {units - 2} × {units - 2} one): '
          f'{(rows - value) / floor:.2f}x the floor')
    routes(runs, qrels, store, args.repeat)


def routes(runs, qrels, store, repeat):
    """4.: FD@10's rows by the congruence and the downdate route, alternating, against the floor."""
    import pyterrier_frechet.core.weighted as weighted
    measure = [pf.FD(rel=2, encoder=store, missing='drop') @ 10]
    qrels_ir = pt.model.to_ir_measures(qrels)
    runs_ir = [pt.model.to_ir_measures(r) for r in runs]
    memo = ir_measures.providers.registry['pyterrier_frechet'].qrels_memo
    made = weighted.relevant_leave_outs

    def rows(downdate):
        weighted.relevant_leave_outs = lambda *a, **k: made(*a, **k, downdate=downdate)
        try:
            memo.clear()
            list(ir_measures.iter_calc(measure, qrels_ir, runs_ir[0]))  # the memo: qrels, relevant leave-outs
            t0 = time.perf_counter()
            for r in runs_ir:
                list(ir_measures.iter_calc(measure, qrels_ir, r))
            t1 = time.perf_counter()
            for r in runs_ir:
                ir_measures.calc_aggregate(measure, qrels_ir, r)
            return (t1 - t0) - (time.perf_counter() - t1)
        finally:
            weighted.relevant_leave_outs = made
    units = int(qrels.loc[qrels['label'] >= 2, 'qid'].nunique())
    vecs = store.lookup(qrels.loc[qrels['label'] >= 2, 'docno'].astype(str).unique()[:2000])[0]
    dense = np.cov(np.asarray(vecs, dtype=np.float64).T)

    def floor():
        with lapack_threads():
            t0 = time.perf_counter()
            for _ in range(len(runs) * units):
                scipy.linalg.eigh(dense, eigvals_only=True, driver='evd', check_finite=False)
            return time.perf_counter() - t0
    got = {'floor': [], 'congruence': [], 'downdate': []}
    for _ in range(repeat):
        got['floor'].append(floor())
        got['congruence'].append(rows(False))
        got['downdate'].append(rows(True))
    f, c, d = (min(got[k]) for k in ('floor', 'congruence', 'downdate'))
    print(f'4. FD@10 rows over {len(runs)} runs ({len(runs) * units} leave-outs), alternating, best of {repeat}: '
          f'congruence route {c:.2f} s ({c / f:.2f}x the floor), downdate route {d:.2f} s ({d / f:.2f}x); '
          f'floor {f:.2f} s')


if __name__ == '__main__':
    main()
