"""Benchmark: Embedder throughput against raw sentence-transformers ``encode`` on the same texts, measured
side by side in one run (alternating, best of --rounds each), and the vectors compared.

The Embedder path is the whole transformer: a frame of (docno, text) in, ``doc_vec`` out, with an empty
persistent cache that it fills (SQLite, chunked commits); raw is ``SentenceTransformer.encode(texts)``
with the same batch size. Texts: the first --docs passages of ../shared's DL19/DL20 passage file.

Then the opt-in OpenVINO backends (issue 18): ``Embedder(backend='openvino')`` at fp32 and bf16, each timed on the
same texts as raw ``encode`` (alternating rounds, best of --rounds), with each passage's cosine to the torch fp32
vector; and, unless --no-fd, FD(rel=2)@10 of every DL19 run in ../shared with the bf16 (and fp32) vectors against
the same with the torch vectors (all needed passages encoded by each backend: a few minutes).

    python benchmarks/embedder_throughput.py [--shared ../shared] [--docs 600] [--rounds 2] [--no-fd]
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
    parser.add_argument('--no-fd', action='store_true', help='skip the FD agreement on DL19')
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
    openvino_backends(args, model, texts, raw)


BACKENDS = {'openvino fp32': dict(backend='openvino'), 'openvino bf16': dict(backend='openvino', precision='bf16')}


def cosines(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return (a * b).sum(1) / np.linalg.norm(a, axis=1) / np.linalg.norm(b, axis=1)


def openvino_backends(args, model, texts, raw):
    """Raw encode throughput of each backend against torch, in alternating rounds, and per-passage cosines."""
    print(f'\nopt-in backends: raw Embedder.encode on the same {len(texts)} passages, alternating with torch, '
          f'best of {args.rounds}')
    with tempfile.TemporaryDirectory() as store:
        encoders = {name: pf.Embedder(cache_dir=store, batch_size=args.batch_size, verbose=False, **kw)
                    for name, kw in BACKENDS.items()}
        for enc in encoders.values():
            enc.encode(texts[:64])  # conversion, compilation, warm-up
        times = {name: [] for name in ['torch', *encoders]}
        out = {}
        for _ in range(args.rounds):
            t0 = time.perf_counter()
            model.encode(texts, batch_size=args.batch_size, convert_to_numpy=True, show_progress_bar=False)
            times['torch'].append(time.perf_counter() - t0)
            for name, enc in encoders.items():
                t0 = time.perf_counter()
                out[name] = enc.encode(texts)
                times[name].append(time.perf_counter() - t0)
    t_torch = min(times['torch'])
    print('| backend | s | passages/s | × torch | min cosine to torch fp32 | mean cosine | max abs diff |')
    print('|---|---|---|---|---|---|---|')
    print(f'| torch fp32 (sentence-transformers encode) | {t_torch:.1f} | {len(texts) / t_torch:.1f} | 1.00 | — | — | — |')
    for name, vecs in out.items():
        t, cos = min(times[name]), cosines(vecs, raw)
        print(f'| {name} | {t:.1f} | {len(texts) / t:.1f} | {t_torch / t:.2f} | {cos.min():.6f} | {cos.mean():.6f} | '
              f'{np.abs(vecs - raw).max():.1e} |')
    print('targets: bf16 ≥ 2× torch, cosine ≥ 0.999 for every passage')
    if not args.no_fd:
        fd_agreement(args)


def fd_agreement(args):
    """FD(rel=2)@10 of every DL19 run with each backend's vectors against the torch vectors (same passages)."""
    import pyterrier as pt
    from pyterrier_frechet.data.runs import read_run
    data = Path(args.shared) / 'data' / 'msmarco-passage'
    qrels = pt.io.read_qrels(str(data / 'qrels.dl19-passage.txt'))
    runs = {p.name.removeprefix('run.dl19.').removesuffix('.gz').removesuffix('.txt'): read_run(str(p)) for p in sorted((data / 'runs').iterdir())}
    lookup = pf.TextLookup.from_jsonl(str(data / 'passages.dl19-dl20.jsonl.gz'))
    measure = [pf.FD(rel=2, missing='drop') @ 10]
    tables = {}
    with tempfile.TemporaryDirectory() as cache:
        for name, kw in {'torch fp32': {}, **BACKENDS}.items():
            enc = pf.Embedder(texts=lookup, cache_dir=cache, batch_size=args.batch_size, verbose=False, **kw)
            t0 = time.perf_counter()
            tables[name] = pf.evaluate(runs, qrels, measure, encoder=enc, verbose=False).set_index('name').iloc[:, 0]
            print(f'{name}: {enc.n_encoded} passages encoded for FD(rel=2)@10 of {len(runs)} runs in '
                  f'{time.perf_counter() - t0:.0f} s')
    base = tables['torch fp32']
    print('\n| run | FD(rel=2)@10 torch fp32 | ' + ' | '.join(f'{n} (rel. change)' for n in BACKENDS) + ' |')
    print('|---|---|' + '---|' * len(BACKENDS))
    for run in base.index:
        cells = [f'{tables[n][run]:.5f} ({(tables[n][run] - base[run]) / base[run]:+.2e})' for n in BACKENDS]
        print(f'| {run} | {base[run]:.5f} | ' + ' | '.join(cells) + ' |')
    for n in BACKENDS:
        rel = ((tables[n] - base) / base).abs()
        print(f'{n}: largest relative change of FD(rel=2)@10 over {len(base)} runs {rel.max():.2e} (target ≤ 1e-2); '
              f'Kendall τ with torch {base.corr(tables[n], method="kendall"):.3f}')


if __name__ == '__main__':
    main()
