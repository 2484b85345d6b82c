"""FD@10's per-query rows (leave-one-query-out FDs) over the 19 TREC DL 2019 runs by the two exact routes, alternating
in one process, against the floor: the bare 384 × 384 symmetric eigenvalue solves those 817 leave-outs need.

- congruence: each leave-out's retrieved covariance downdated and packed, then one LAPACK ``sygst`` (LᵀΣ₂L with the
  relevant leave-out's own factor) and one eigenvalue solve (``relevant_leave_outs(..., downdate=False)``);
- downdate: each run's LᵀΣ₂L once with the factor over all queries, each leave-out rank updates of it for the
  query's vectors on both sides, then one eigenvalue solve (``core/downdate.py``, the default).

Each timing clears the evaluation memo, warms it on the first run, then times ``ir_measures.iter_calc`` over the 19
runs less ``calc_aggregate`` (the value alone). Best of ``--repeat``.

    python benchmarks/leave_out_routes.py [--shared ../shared] [--repeat 3]
"""
import argparse
import logging
import sys
import time
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # this checkout's package first
import ir_measures  # noqa: E402
import numpy as np  # noqa: E402
import pyterrier as pt  # noqa: E402
import scipy.linalg  # noqa: E402

import pyterrier_frechet as pf  # noqa: E402
import pyterrier_frechet.core.weighted as W  # noqa: E402
from pyterrier_frechet.core.threads import lapack_threads  # noqa: E402

ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
ap.add_argument('--shared', default=str(Path(__file__).resolve().parents[2] / 'shared'))
ap.add_argument('--repeat', type=int, default=3)
args = ap.parse_args()
logging.disable(logging.WARNING)
warnings.simplefilter('ignore')
ms = Path(args.shared) / 'data' / 'msmarco-passage'
store = pf.VectorStore(str(Path(args.shared) / 'embeddings' / 'msmarco-passage.dl19-dl20.minilm'))
qrels = pt.model.to_ir_measures(pt.io.read_qrels(str(ms/'qrels.dl19-passage.txt')))
runs = [pt.model.to_ir_measures(pt.io.read_results(str(p))) for p in sorted((ms/'runs').glob('run.dl19.*'))]
m = [pf.FD(rel=2, encoder=store, missing='drop')@10]
orig = W.relevant_leave_outs
memo = ir_measures.providers.registry['pyterrier_frechet'].qrels_memo
def rows(downdate):
    W.relevant_leave_outs = lambda *a, **k: orig(*a, **k, downdate=downdate)
    memo.clear()
    list(ir_measures.iter_calc(m, qrels, runs[0]))  # the evaluation's memo (qrels, relevant leave-outs) warm
    t = time.perf_counter()
    for r in runs: list(ir_measures.iter_calc(m, qrels, r))
    rows_t = time.perf_counter() - t
    t = time.perf_counter()
    for r in runs: ir_measures.calc_aggregate(m, qrels, r)
    return rows_t - (time.perf_counter() - t)
vecs = store.lookup(pt.io.read_qrels(str(ms/'qrels.dl19-passage.txt')).query('label >= 2').docno.astype(str).unique()[:2000])[0]
dense = np.cov(np.asarray(vecs, dtype=np.float64).T)
def floor():
    with lapack_threads():
        t = time.perf_counter()
        for _ in range(19 * 43): scipy.linalg.eigh(dense, eigvals_only=True, driver='evd', check_finite=False)
        return time.perf_counter() - t
res = {'congruence': [], 'downdate': [], 'floor': []}
for rep in range(args.repeat):
    res['floor'].append(floor())
    res['congruence'].append(rows(False))
    res['downdate'].append(rows(True))
for k, v in res.items(): print(k, ' '.join(f'{x:.2f}' for x in v), f'min {min(v):.2f} s')
print(f"FD@10 rows over 19 runs (817 leave-outs), one process, alternating: congruence route {min(res['congruence']):.2f} s "
      f"({min(res['congruence'])/min(res['floor']):.2f}x the floor), downdate route {min(res['downdate']):.2f} s "
      f"({min(res['downdate'])/min(res['floor']):.2f}x); floor {min(res['floor']):.2f} s")
