"""Benchmark: 1000 bootstrap samples of FD@10 over the 43 TREC DL 2019 queries (rel=2, all relevant
documents, BM25 run, precomputed all-MiniLM-L6-v2 vectors from ../shared), all measured in this run:

- the fast path (per-query sums and cross-products re-weighted per sample) vs the naive loop (resample
  queries, rebuild the frames, gather vectors, recompute), the naive loop timed on the first
  --naive-samples samples, with the largest relative difference on those samples;
- the fast path's time per sample vs the floor of an exact method: one symmetric eigendecomposition
  (scipy.linalg.eigh) of size min(d, n), n the smaller set.

    python benchmarks/bootstrap_fd.py [--shared ../shared] [--samples 1000] [--naive-samples 50]
"""
import argparse
import logging
import time
from pathlib import Path

import numpy as np
import pyterrier as pt
import scipy.linalg

import pyterrier_frechet as pf
from pyterrier_frechet.analyses.bootstrap import bootstrap, bootstrap_naive
from pyterrier_frechet.measures.base import column_label


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--shared', default=str(Path(__file__).resolve().parents[2] / 'shared'))
    parser.add_argument('--samples', type=int, default=1000)
    parser.add_argument('--naive-samples', type=int, default=50)
    args = parser.parse_args()
    logging.basicConfig(level=logging.ERROR)
    data = Path(args.shared) / 'data' / 'msmarco-passage'
    qrels = pt.io.read_qrels(str(data / 'qrels.dl19-passage.txt'))
    run = pt.io.read_results(str(data / 'runs' / 'run.dl19.bm25.top100.txt'))
    store = pf.VectorStore(str(Path(args.shared) / 'embeddings' / 'msmarco-passage.dl19-dl20.minilm'))
    measure = pf.FD(rel=2, encoder=store, missing='drop') @ 10

    bootstrap({'bm25': run}, qrels, [measure], n_samples=2, seed=0)  # warm-up (imports, lookups)
    t0 = time.perf_counter()
    fast = bootstrap({'bm25': run}, qrels, [measure], n_samples=args.samples, seed=0)
    t_fast = (time.perf_counter() - t0) / args.samples

    t0 = time.perf_counter()
    naive = bootstrap_naive(run, qrels, measure, n_samples=args.naive_samples, seed=0)
    t_naive = (time.perf_counter() - t0) / args.naive_samples
    got = fast.samples['bm25'][column_label(measure)][:args.naive_samples]
    rel_diff = float(np.max(np.abs(got - naive) / np.abs(naive)))

    sets = pf.fd_sets(measure, pt.model.to_ir_measures(qrels), pt.model.to_ir_measures(run))
    n = min(len(sets.relevant), len(sets.retrieved))
    size = min(store.dim, n)
    cov = np.cov(np.random.default_rng(0).normal(size=(max(n, size + 1), size)), rowvar=False)
    scipy.linalg.eigh(cov)
    reps = 50
    t0 = time.perf_counter()
    for _ in range(reps):
        scipy.linalg.eigh(cov, check_finite=False)
    t_floor = (time.perf_counter() - t0) / reps

    row = fast.summary.iloc[0]
    print(f'FD(rel=2)@10 of BM25 on DL19: {row.value:.4f}, bootstrap mean {row["mean"]:.4f}, '
          f'95% CI [{row.low:.4f}, {row.high:.4f}] over {args.samples} samples')
    print(f'fast path:   {t_fast * 1e3:8.2f} ms/sample ({args.samples} samples, {t_fast * args.samples:.1f} s)')
    print(f'naive loop:  {t_naive * 1e3:8.2f} ms/sample ({args.naive_samples} samples)')
    print(f'speed-up over the naive loop: {t_naive / t_fast:.1f}x; max relative difference on the shared samples: {rel_diff:.1e}')
    print(f'floor (one {size}x{size} symmetric eigendecomposition): {t_floor * 1e3:.2f} ms; '
          f'fast path / floor = {t_fast / t_floor:.2f}')


if __name__ == '__main__':
    main()
