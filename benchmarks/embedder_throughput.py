"""Benchmark: Embedder throughput against raw sentence-transformers ``encode`` on the same texts, measured
side by side in one run (alternating, best of --rounds each), and the vectors compared.

The Embedder path is the whole transformer: a frame of (docno, text) in, ``doc_vec`` out, with an empty
persistent cache that it fills (SQLite, chunked commits); raw is ``SentenceTransformer.encode(texts)``
with the same batch size. Texts: the first --docs passages of ../shared's DL19/DL20 passage file.

    python benchmarks/embedder_throughput.py [--shared ../shared] [--docs 600] [--rounds 2]
"""
import argparse
import gzip
import json
import logging
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

import pyterrier_frechet as pf


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--shared', default=str(Path(__file__).resolve().parents[2] / 'shared'))
    parser.add_argument('--docs', type=int, default=600)
    parser.add_argument('--rounds', type=int, default=2)
    parser.add_argument('--batch-size', type=int, default=32)
    args = parser.parse_args()
    logging.basicConfig(level=logging.ERROR)
    rows = []
    with gzip.open(Path(args.shared) / 'data' / 'msmarco-passage' / 'passages.dl19-dl20.jsonl.gz', 'rt') as fin:
        for line in fin:
            rec = json.loads(line)
            rows.append((rec['pid'], rec['text']))
            if len(rows) == args.docs:
                break
    frame = pd.DataFrame(rows, columns=['docno', 'text'])
    texts = frame['text'].tolist()

    probe = pf.Embedder(cache_dir=None, batch_size=args.batch_size, verbose=False)
    probe._load()
    model = probe._model  # the same loaded SentenceTransformer for both paths
    model.encode(texts[:64], batch_size=args.batch_size)  # warm-up
    raw_times, emb_times = [], []
    for _ in range(args.rounds):
        t0 = time.perf_counter()
        raw = model.encode(texts, batch_size=args.batch_size, convert_to_numpy=True, show_progress_bar=False)
        raw_times.append(time.perf_counter() - t0)
        with tempfile.TemporaryDirectory() as cache_dir:
            emb = pf.Embedder(cache_dir=cache_dir, batch_size=args.batch_size, verbose=False)
            emb._model = model  # share the loaded weights: the comparison is of the paths, not of loading
            t0 = time.perf_counter()
            out = emb(frame)
            emb_times.append(time.perf_counter() - t0)
            assert emb.n_encoded == len(set(frame['docno']))
    vecs = np.stack(out['doc_vec'])
    t_raw, t_emb = min(raw_times), min(emb_times)
    print(f'{len(texts)} passages, batch size {args.batch_size}, best of {args.rounds}')
    print(f'raw sentence-transformers encode: {t_raw:6.1f} s ({len(texts) / t_raw:5.1f} passages/s)')
    print(f'Embedder (frame in, doc_vec out, cache filled): {t_emb:6.1f} s ({len(texts) / t_emb:5.1f} passages/s)')
    print(f'throughput ratio Embedder / raw: {t_raw / t_emb:.3f} (target ≥ 0.95); '
          f'max |difference| of the vectors: {np.abs(vecs - raw).max():.1e}')


if __name__ == '__main__':
    main()
