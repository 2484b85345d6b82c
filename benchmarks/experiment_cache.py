"""Benchmark: pt.Experiment over the 19 TREC DL 2019 runs in ../shared with FD@1, FD@10, FD(urr=True)@10 and
nDCG@10, cold (empty embedding cache: every needed passage encoded with all-MiniLM-L6-v2) and warm (a new
Embedder over the filled cache, as in a later session), with the number of documents each run sent to the
encoder; then the peak memory (RSS) of the CLI's run-directory evaluation. All measured in this run.

    python benchmarks/experiment_cache.py [--shared ../shared] [--prefill]

``--prefill`` fills the cold cache from the precomputed vectors in ../shared/embeddings (the same model)
instead of encoding, for a quick warm measurement; the cold timing is then not an encoding timing.
"""
import argparse
import logging
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import ir_measures
import numpy as np
import pandas as pd
import pyterrier as pt

import pyterrier_frechet as pf
from pyterrier_frechet.data.runs import run_pipelines


def experiment(pipelines, topics, qrels, encoder, fd=True):
    measures = [pf.FD(encoder=encoder, missing='drop') @ 1, pf.FD(encoder=encoder, missing='drop') @ 10,
                pf.FD(encoder=encoder, missing='drop', urr=True) @ 10] if fd else []
    measures.append(ir_measures.nDCG @ 10)
    t0 = time.perf_counter()
    table = pt.Experiment(list(pipelines.values()), topics, qrels, eval_metrics=measures, names=list(pipelines))
    return table, time.perf_counter() - t0


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--shared', default=str(Path(__file__).resolve().parents[2] / 'shared'))
    parser.add_argument('--prefill', action='store_true')
    args = parser.parse_args()
    logging.basicConfig(level=logging.ERROR)
    data = Path(args.shared) / 'data' / 'msmarco-passage'
    vectors = Path(args.shared) / 'embeddings' / 'msmarco-passage.dl19-dl20.minilm'
    qrels = pt.io.read_qrels(str(data / 'qrels.dl19-passage.txt'))
    topics = pd.DataFrame({'qid': sorted(qrels['qid'].unique()), 'query': ''})
    pipelines = run_pipelines(sorted((data / 'runs').iterdir()))
    t0 = time.perf_counter()
    texts = pf.TextLookup.from_jsonl(str(data / 'passages.dl19-dl20.jsonl.gz'))
    print(f'{len(pipelines)} runs, {len(topics)} queries; passage text read in {time.perf_counter() - t0:.1f} s')

    with tempfile.TemporaryDirectory() as cache_dir:
        cold = pf.Embedder(texts=texts, cache_dir=cache_dir, verbose=False)
        if args.prefill:
            ids = Path(f'{vectors}.ids.txt').read_text().split()
            # stored with the passages' texts, so lookups that give the text are served these vectors
            cold.cache.put(np.asarray(ids), np.load(f'{vectors}.npy'), [texts.texts[i] for i in ids])
        table_cold, t_cold = experiment(pipelines, topics, qrels, cold)
        print(f'cold: {t_cold:7.1f} s, {cold.n_encoded} documents encoded'
              + (' (cache prefilled from the precomputed vectors)' if args.prefill else ''))

        warm = pf.Embedder(texts=texts, cache_dir=cache_dir, verbose=False)  # a new instance: nothing in memory
        table_warm, t_warm = experiment(pipelines, topics, qrels, warm)
        print(f'warm: {t_warm:7.1f} s, {warm.n_encoded} documents encoded (target ≤ 3 s, 0 encoded)')
        again = [experiment(pipelines, topics, qrels, warm)[1] for _ in range(3)]
        floor = [experiment(pipelines, topics, qrels, warm, fd=False)[1] for _ in range(3)]
        print(f'warm, same Embedder again: best of 3 {min(again):.2f} s (all: {", ".join(f"{t:.2f}" for t in again)})')
        print(f'nDCG@10 alone (pt.Experiment and ir_measures without FD), best of 3: {min(floor):.2f} s; '
              f'the three FD measures add {min(again) - min(floor):.2f} s ({min(again) / min(floor):.2f}x the nDCG-only time)')
        cols = [c for c in table_cold.columns if c not in ('name', 'mrt')]
        same = np.allclose(table_cold[cols].to_numpy(float), table_warm[cols].to_numpy(float), rtol=1e-12, atol=0)
        print(f'cold and warm tables equal: {same}')
        print(table_warm[['name', *cols]].to_string(index=False, float_format=lambda v: f'{v:.4f}'))

    # peak memory of the CLI over the run directory: VmHWM of the child's own address space, read at its end
    # (getrusage's ru_maxrss would include this large parent, which the child was forked from: Linux keeps
    # that maximum across exec)
    code = ('import re, sys; from pyterrier_frechet.cli import main; rc = main(sys.argv[1:]); '
            'print(re.search(r"VmHWM:\\s+(\\d+)", open("/proc/self/status").read()).group(1), file=sys.stderr); '
            'sys.exit(rc)')
    args_ = ['eval', '--qrels', str(data / 'qrels.dl19-passage.txt'), '--runs', str(data / 'runs'),
             '--vectors', str(vectors), '--metrics', 'FD@1', 'FD@10', 'FD(urr=True)@10', 'nDCG@10',
             '--missing', 'drop', '--quiet']
    t0 = time.perf_counter()
    out = subprocess.run([sys.executable, '-c', code, *args_], check=True, stdout=subprocess.DEVNULL,
                         stderr=subprocess.PIPE, text=True)
    peak = int(out.stderr.strip().splitlines()[-1]) / 1024
    print(f'CLI eval of the run directory: {time.perf_counter() - t0:.1f} s, peak RSS {peak:.0f} MiB')

if __name__ == '__main__':
    main()
