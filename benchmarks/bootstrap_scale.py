"""Benchmark: the FD bootstrap at MS MARCO dev scale (6,980 queries × 10 retrieved, d = 384), synthetic
vectors, all measured in this run:

- the fast path (``pyterrier_frechet.analyses.bootstrap``: per-query packed cross-products re-weighted per chunk of
  samples by one matrix product) over --samples samples;
- the naive loop (``bootstrap_naive``: rebuild the frames, gather vectors, recompute) on the first
  --naive-samples of the same samples, with the largest relative difference on those samples;
- the floor of an exact method, per sample: one weighted d×d covariance update of the retrieved set
  (the cheaper of ``w @ P`` over packed per-query cross-products and ``(√w·X)ᵀ(√w·X)`` over the vectors)
  plus one d×d symmetric eigendecomposition (``scipy.linalg.eigh``);
- peak resident memory of the process;
- the same bootstrap with the per-query cross-products held in memory (the scheme before issue 18, forced with
  ``--hold``) in a second process, with its time, peak memory and the largest difference from the streamed run.

Relevant documents: one per query, a second for 7% of queries (MS MARCO dev has 1.07 on average).
Vectors: standard normal, L2-normalised rows (the geometry of a sentence encoder's output), seeded.

    python benchmarks/bootstrap_scale.py [--queries 6980] [--samples 1000] [--naive-samples 3]

Each variant runs in its own process (so that each peak is its own); the parent prints both side by side.
"""
import argparse
import json
import logging
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd
import scipy.linalg

import pyterrier_frechet as pf
from pyterrier_frechet.analyses.bootstrap import bootstrap, bootstrap_naive, draw_counts


def synthetic(n_queries: int, depth: int, d: int, seed: int):
    """qrels, run and a VectorStore prefix (in a temp dir) at the given scale."""
    rng = np.random.default_rng(seed)
    qids = np.array([f'q{i}' for i in range(n_queries)])
    n_rel = 1 + (rng.random(n_queries) < 0.07)
    rel_q = np.repeat(qids, n_rel)
    rel_docs = np.array([f'r{i}' for i in range(len(rel_q))])
    qrels = pd.DataFrame({'qid': rel_q, 'docno': rel_docs, 'label': 1})
    ret_q = np.repeat(qids, depth)
    ret_docs = np.array([f'd{i}' for i in range(len(ret_q))])
    # a retrieved list holds its query's first relevant document at a random rank for 40% of queries
    hit = np.flatnonzero(rng.random(n_queries) < 0.4)
    first_rel = np.concatenate([[0], np.cumsum(n_rel)[:-1]])
    ret_docs[hit * depth + rng.integers(0, depth, size=len(hit))] = rel_docs[first_rel[hit]]
    run = pd.DataFrame({'qid': ret_q, 'docno': ret_docs, 'score': np.tile(np.arange(depth, 0, -1.0), n_queries),
                        'rank': np.tile(np.arange(depth), n_queries)})
    docnos = np.unique(np.concatenate([rel_docs, ret_docs]))
    prefix = Path(tempfile.mkdtemp()) / 'synthetic'
    # written a block of rows at a time into the .npy file (the same stream of draws as one rng.normal call), so that
    # the benchmark's own vectors never cost a float64 copy (3.4 GB at 100,000 queries); returned memory-mapped
    vecs = np.lib.format.open_memmap(f'{prefix}.npy', mode='w+', dtype=np.float32, shape=(len(docnos), d))
    step = max(1, (1 << 22) // d)
    for start in range(0, len(docnos), step):
        block = rng.normal(size=(min(step, len(docnos) - start), d)).astype(np.float32)
        block /= np.linalg.norm(block, axis=1, keepdims=True)
        vecs[start:start + len(block)] = block
    vecs.flush()
    with open(f'{prefix}.ids.txt', 'w') as out:
        for start in range(0, len(docnos), 1 << 16):
            out.write('\n'.join(docnos[start:start + (1 << 16)]) + '\n')
    return qrels, run, str(prefix), np.load(f'{prefix}.npy', mmap_mode='r'), docnos


def floor_per_sample(run, qrels, vecs, docnos, d, seed, reps=3):
    """Best-of-reps seconds of one weighted covariance update of the retrieved set plus one d×d eigh."""
    index = pd.Index(docnos)
    queries = sorted(qrels['qid'].unique())
    w_query = draw_counts(len(queries), 1, seed)[0].astype(np.float64)
    x = vecs[index.get_indexer(run['docno'])].astype(np.float64)
    w_vec = w_query[pd.Index(queries).get_indexer(run['qid'])]
    upper = np.triu_indices(d)
    q_of = pd.Index(queries).get_indexer(run['qid'])
    packed = np.zeros((len(queries), len(upper[0])))
    order = np.argsort(q_of, kind='stable')
    bounds = np.searchsorted(q_of[order], np.arange(len(queries) + 1))
    for i in range(len(queries)):
        xi = x[order[bounds[i]:bounds[i + 1]]]
        packed[i] = (xi.T @ xi)[upper]

    def best(f):
        t = float('inf')
        for _ in range(reps):
            t0 = time.perf_counter()
            f()
            t = min(t, time.perf_counter() - t0)
        return t
    t_packed = best(lambda: w_query @ packed)
    t_vectors = best(lambda: (lambda xs: xs.T @ xs)(x * np.sqrt(w_vec)[:, None]))
    cov = np.cov(x[:5000], rowvar=False)
    t_eigh = best(lambda: scipy.linalg.eigh(cov))
    return t_packed, t_vectors, t_eigh


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--queries', type=int, default=6980)
    parser.add_argument('--depth', type=int, default=10)
    parser.add_argument('--dim', type=int, default=384)
    parser.add_argument('--samples', type=int, default=1000)
    parser.add_argument('--naive-samples', type=int, default=3)
    parser.add_argument('--seed', type=int, default=0)
    parser.add_argument('--hold', action='store_true', help='hold every per-query cross-product in memory (the old scheme)')
    parser.add_argument('--child', default=None, help=argparse.SUPPRESS)  # write samples and figures here (one variant)
    args = parser.parse_args()
    if args.child is None:
        return compare(args)
    if args.hold:
        from pyterrier_frechet.core.weighted import QueryStats
        QueryStats.MATERIALIZE_BYTES = 1 << 50
    logging.basicConfig(level=logging.ERROR)
    qrels, run, prefix, vecs, docnos = synthetic(args.queries, args.depth, args.dim, args.seed)
    measure = pf.FD(encoder=pf.VectorStore(prefix)) @ args.depth
    print(f'{args.queries} queries, {len(qrels)} relevant and {len(run)} retrieved rows, d = {args.dim}, '
          f'{args.samples} samples')

    t0 = time.perf_counter()
    # the samples alone (percentile interval): the default jackknife interval adds one FD per query with relevant
    # documents — 6,980 here, seven times the FDs of 1000 samples (not timed here)
    fast = bootstrap({'synthetic': run}, qrels, [measure], n_samples=args.samples, seed=args.seed, verbose=False,
                     interval='percentile')
    t_fast = time.perf_counter() - t0
    values = fast.samples['synthetic'][str(measure)]
    row = fast.summary.iloc[0]
    print(f'{measure}: {row["value"]:.6f}, bootstrap 95% CI [{row["low"]:.6f}, {row["high"]:.6f}]')
    print(f'fast path:   {t_fast:8.1f} s in all, {t_fast / args.samples * 1e3:8.1f} ms/sample (set-up included)')
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2 ** 20
    print(f'peak RSS after the fast path: {peak:.2f} GiB')
    np.save(f'{args.child}.npy', values)
    Path(f'{args.child}.json').write_text(json.dumps({'seconds': t_fast, 'peak_gib': peak}))
    if args.hold:
        return

    t0 = time.perf_counter()
    naive = bootstrap_naive(run, qrels, measure, n_samples=args.naive_samples, seed=args.seed)
    t_naive = (time.perf_counter() - t0) / args.naive_samples
    diff = np.max(np.abs(naive - values[:args.naive_samples]) / np.abs(naive))
    print(f'naive loop:  {t_naive * 1e3:8.1f} ms/sample ({args.naive_samples} samples); '
          f'speed-up {t_naive / (t_fast / args.samples):.1f}x; max relative difference {diff:.1e}')

    t_packed, t_vectors, t_eigh = floor_per_sample(run, qrels, vecs, docnos, args.dim, args.seed)
    floor = min(t_packed, t_vectors) + t_eigh
    print(f'floor: covariance update {min(t_packed, t_vectors) * 1e3:.1f} ms (w @ packed P {t_packed * 1e3:.1f} ms, '
          f'(√w·X)ᵀ(√w·X) {t_vectors * 1e3:.1f} ms) + eigh {t_eigh * 1e3:.1f} ms = {floor * 1e3:.1f} ms; '
          f'fast path / floor = {t_fast / args.samples / floor:.2f} (target ≤ 3)')


def compare(args):
    """Run the streamed and the held variant each in its own process and print them side by side."""
    out = Path(tempfile.mkdtemp())
    common = [sys.executable, __file__, '--queries', str(args.queries), '--depth', str(args.depth), '--dim', str(args.dim),
              '--samples', str(args.samples), '--naive-samples', str(args.naive_samples), '--seed', str(args.seed)]
    results = {}
    for name, extra in (('streamed', []), ('held', ['--hold'])):
        print(f'--- {name} ---', flush=True)
        subprocess.run(common + extra + ['--child', str(out / name)], check=True)
        results[name] = json.loads((out / f'{name}.json').read_text())
        results[name]['values'] = np.load(out / f'{name}.npy')
    s, h = results['streamed'], results['held']
    diff = np.nanmax(np.abs(s['values'] - h['values']) / np.abs(h['values']))
    print(f'\nstreamed: {s["seconds"]:.1f} s, peak {s["peak_gib"]:.2f} GiB; held: {h["seconds"]:.1f} s, peak '
          f'{h["peak_gib"]:.2f} GiB; time streamed/held = {s["seconds"] / h["seconds"]:.2f}, memory held/streamed = '
          f'{h["peak_gib"] / s["peak_gib"]:.1f}x; max relative difference {diff:.1e} (targets: ≤ 2 GiB, time ≤ held)')


if __name__ == '__main__':
    main()
