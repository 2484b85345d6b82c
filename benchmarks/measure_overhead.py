"""Benchmark: FD@1 through ``ir_measures.calc_aggregate`` at DL19 scale against the kernel alone and against the
``scipy.linalg.sqrtm`` route, measured in one run (issue 18, item 2).

TREC DL 2019 passage qrels (rel = 2: 2,501 relevant passages of 43 queries), the BM25 run with every row's vector
in ``doc_vec`` (a dense pipeline's output), precomputed all-MiniLM-L6-v2 vectors (d = 384) from ../shared as the
encoder of the relevant side. FD@1 compares the 2,501 relevant vectors with the 43 top-1 vectors.

- calc_aggregate: ``ir_measures.calc_aggregate([FD(rel=2, encoder=store)@1], qrels, run)``, everything
  included (qrels and run checked, top-1 selected, vectors looked up, FD) — warm: the relevant set's reduction
  is remembered across calls as in a pt.Experiment over many systems;
- kernel: ``frechet_distance_reduced`` of the remembered relevant reduction and the 43 top-1 vectors;
- sqrtm: ``np.cov`` of both sets + ``scipy.linalg.sqrtm(Σ₁Σ₂)`` (pytorch-fid, frechet-ir), from the same vectors.

    python benchmarks/measure_overhead.py [--shared ../shared] [--reps 20]
"""
import argparse
import time
from pathlib import Path

import ir_measures
import numpy as np
import pyterrier as pt
import scipy.linalg

import pyterrier_frechet as pf
from pyterrier_frechet.core.frechet import frechet_distance_reduced, reduce_set


def best_of(f, reps):
    best, value = float('inf'), None
    for _ in range(reps):
        t0 = time.perf_counter()
        value = f()
        best = min(best, time.perf_counter() - t0)
    return value, best


def fd_sqrtm(x, y):
    m1, m2 = x.mean(0), y.mean(0)
    s1, s2 = np.cov(x, rowvar=False), np.cov(y, rowvar=False)
    covmean = scipy.linalg.sqrtm(s1 @ s2)
    return float(((m1 - m2) ** 2).sum() + np.trace(s1) + np.trace(s2) - 2 * np.trace(covmean).real)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--shared', default=str(Path(__file__).resolve().parents[2] / 'shared'))
    parser.add_argument('--reps', type=int, default=20, help='timing: best of this many calls')
    args = parser.parse_args()
    data = Path(args.shared) / 'data' / 'msmarco-passage'
    store = pf.VectorStore(str(Path(args.shared) / 'embeddings' / 'msmarco-passage.dl19-dl20.minilm'))
    qrels = pt.io.read_qrels(str(data / 'qrels.dl19-passage.txt'))
    run = pt.io.read_results(str(data / 'runs' / 'run.dl19.bm25.top100.txt'))
    vecs, found = store.lookup(run['docno'].astype(str).to_numpy())
    run = run[found].assign(doc_vec=list(vecs[found].astype(np.float32)))  # as a dense pipeline would give
    measure = pf.FD(rel=2, encoder=store) @ 1
    print(f'{len(qrels)} qrels rows, {len(run)} run rows with doc_vec, {run["qid"].nunique()} queries; {measure}')

    im_qrels = qrels.rename(columns={'qid': 'query_id', 'docno': 'doc_id', 'label': 'relevance'})
    im_run = run.rename(columns={'qid': 'query_id', 'docno': 'doc_id'})
    ours, t_ours = best_of(lambda: ir_measures.calc_aggregate([measure], im_qrels, im_run)[measure], args.reps)
    # the kernel's inputs: the same two sets
    rel_docnos = qrels[qrels['label'] >= 2]
    rel_docnos = rel_docnos[rel_docnos['docno'].isin(store._index)]['docno'].astype(str).to_numpy()
    relevant = store.lookup(rel_docnos)[0].astype(np.float64)
    top1 = run.sort_values(['qid', 'score', 'docno'], ascending=[True, False, False]).groupby('qid').head(1)
    top1 = top1[top1['qid'].isin(qrels[qrels['label'] >= 2]['qid'])]
    retrieved = np.stack(top1['doc_vec'].tolist()).astype(np.float64)
    rel_reduced = reduce_set(relevant)
    kernel, t_kernel = best_of(lambda: frechet_distance_reduced(rel_reduced, reduce_set(retrieved)), args.reps)
    sq, t_sqrtm = best_of(lambda: fd_sqrtm(relevant, retrieved), max(3, args.reps // 4))
    print(f'{len(relevant)} relevant and {len(retrieved)} retrieved vectors, d = {relevant.shape[1]}')
    print(f'calc_aggregate FD@1 (warm): {t_ours * 1e3:8.2f} ms  value {ours:.10f}')
    print(f'kernel alone:               {t_kernel * 1e3:8.2f} ms  value {kernel:.10f}')
    print(f'sqrtm route:                {t_sqrtm * 1e3:8.2f} ms  value {sq:.10f}')
    print(f'sqrtm / calc_aggregate = {t_sqrtm / t_ours:.1f}x (target >= 10x); '
          f'calc_aggregate / kernel = {t_ours / t_kernel:.1f}x; |calc_aggregate - kernel| = {abs(ours - kernel):.1e}')


if __name__ == '__main__':
    main()
