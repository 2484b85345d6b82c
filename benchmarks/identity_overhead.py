"""Benchmark (issue 25): what the safe storage and the content identities cost, all measured in this run.

1. Reading vectors from the embedding cache: the schema-3 raw float32 rows, against the schema-2 way (a pickled key
   and a pickled value per row, re-created here in a table of its own) — n vectors of d = 384, a new cache object
   (nothing remembered), docno and text given.
2. The memo of reduced sets (Judgments.once, evaluation/vector_sets.py) checks a blake2b digest of the vectors'
   bytes instead of their float sum: the digest's time against the reduction it saves, per relevant-set size.
3. A VectorStore's content identity: sha256 of its files the first time, remembered (a stat) after.

    python benchmarks/identity_overhead.py [--n 20000] [--shared ../shared]
"""
import argparse
import pickle
import sqlite3
import tempfile
import time
from pathlib import Path

import numpy as np

from pyterrier_frechet.evaluation.vector_sets import array_digest
from pyterrier_frechet.core.frechet import reduce_set
from pyterrier_frechet.vectors.cache import EmbeddingCache
from pyterrier_frechet.vectors.identity import file_digest


def best(fn, repeat=3):
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument('--n', type=int, default=20000)
    parser.add_argument('--shared', default=str(Path(__file__).resolve().parents[2] / 'shared'))
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    n, d = args.n, 384
    docnos = [f'doc{i}' for i in range(n)]
    texts = [f'text of document {i}' for i in range(n)]
    vecs = rng.normal(size=(n, d)).astype(np.float32)
    with tempfile.TemporaryDirectory() as root:
        cache = EmbeddingCache(root, {'name': 'bench', 'hash': 'x'})
        cache.put(docnos, vecs, texts)
        path = cache.path
        cache.close()
        # the schema-2 layout: pickled (docno, sha) keys and pickled (vector,) values
        old = sqlite3.connect(str(Path(root) / 'old.sqlite3'))
        from pyterrier_frechet.vectors.cache import text_sha
        shas = [text_sha(t) for t in texts]
        with old:
            old.execute('CREATE TABLE cache (key BLOB PRIMARY KEY, value BLOB NOT NULL)')
            old.executemany('INSERT INTO cache VALUES (?, ?)', [(pickle.dumps((dn, s), protocol=4), pickle.dumps((v,), protocol=4))
                                                              for dn, s, v in zip(docnos, shas, vecs)])

        def read_new():
            c = EmbeddingCache(root, {'name': 'bench', 'hash': 'x'})
            got = c.get(docnos, texts)
            c.close()
            assert len(got) == n

        def read_old():  # as the schema-2 EmbeddingCache.get did: fingerprint each text, pickle each key, unpickle each row
            keys = [pickle.dumps((dn, text_sha(t)), protocol=4) for dn, t in zip(docnos, texts)]
            got = {}
            for start in range(0, n, 10000):
                chunk = keys[start:start + 10000]
                rows = old.execute(f'SELECT key, value FROM cache WHERE key IN ({", ".join(["?"] * len(chunk))})', chunk)
                for k, v in rows.fetchall():
                    got[pickle.loads(k)] = pickle.loads(v)[0]
            assert len(got) == n

        t_new, t_old = best(read_new), best(read_old)
        print(f'1. cache read of {n} x {d}: raw float32 rows {t_new:.3f} s ({n / t_new:,.0f} vectors/s), pickled rows '
              f'{t_old:.3f} s; new/old = {t_new / t_old:.2f}  [{path}]')
    for size in (500, 2000, 5000):  # below 5d/3 rows (640) the reduction is a deflation, cheaper than the digest (~1 ms)
        x = rng.normal(size=(size, d))
        t_digest, t_reduce = best(lambda: array_digest(x), 5), best(lambda: reduce_set(x), 2)
        print(f'2. relevant set {size} x {d}: digest {t_digest * 1e3:.1f} ms, reduction {t_reduce * 1e3:.1f} ms; a memo hit '
              f'costs {t_digest / t_reduce:.1%} of the reduction it saves')
    npy = Path(args.shared) / 'embeddings' / 'msmarco-passage.dl19-dl20.minilm.npy'
    if npy.exists():
        t = time.perf_counter()
        file_digest(str(npy))
        first = time.perf_counter() - t
        again = best(lambda: file_digest(str(npy)), 5)
        print(f'3. VectorStore content identity of {npy.name} ({npy.stat().st_size / 2**20:.0f} MiB): first {first * 1e3:.0f} ms '
              f'(once per file version per process), remembered {again * 1e6:.0f} us')


if __name__ == '__main__':
    main()
