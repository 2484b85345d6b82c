"""A persistent docno → vector cache for one encoder, so every document is embedded once per model, ever.

Storage is a pyterrier-caching ``Sqlite3KeyValueCache`` artifact (key ``docno``, value ``doc_vec``, in
its own pickle format, so ``pyterrier_caching.KeyValueCache(path)`` opens it too). On top of it this
module adds what evaluation needs:

- **model identity**: each model gets its own directory, named from the model and a hash of its
  identity (weights, tokenizer and config files, pooling, normalisation, max length), with an
  ``encoder.json`` describing it. Opening a directory with another identity raises ``ValueError``,
  so a cache built with one model never serves vectors for another;
- **chunked, transactional writes**: vectors are committed in small chunks as they are encoded, in
  SQLite transactions, so a process killed mid-write loses at most the chunk in flight and never
  leaves a partial vector; ``INSERT OR IGNORE`` lets two processes fill the same cache;
- **batched reads** under SQLite's limit on query parameters, remembered in memory (up to ``memo_size``
  vectors per cache object), so an evaluation that asks for the same documents again — the relevant
  set of every run in a pt.Experiment — reads SQLite once. Only what was read back is remembered, so a
  vector another process stored first (``INSERT OR IGNORE`` keeps the first) is served as stored.
"""
import fcntl
import hashlib
import json
import logging
import os
import pickle
import re
import sqlite3
import tempfile
from contextlib import closing
from pathlib import Path
from typing import Dict, Sequence

import numpy as np

logger = logging.getLogger(__name__)

PICKLE_PROTOCOL = 4  # pyterrier-caching's key/value encoding
_READ_CHUNK = 10_000


def default_cache_root() -> Path:
    """``$PYTERRIER_FRECHET_CACHE`` if set, else ``~/.cache/pyterrier_frechet``."""
    return Path(os.environ.get('PYTERRIER_FRECHET_CACHE', Path.home() / '.cache' / 'pyterrier_frechet'))


def identity_key(identity: Dict[str, object]) -> str:
    """A short, filesystem-safe key for an encoder identity: ``<name>-<16 hex digits of its sha256>``."""
    digest = hashlib.sha256(json.dumps(identity, sort_keys=True).encode()).hexdigest()
    return f"{_slug(str(identity['name']))}-{digest[:16]}"


def _slug(name: str) -> str:
    return re.sub(r'[^A-Za-z0-9._-]+', '_', name).strip('_')[:80] or 'model'


class EmbeddingCache:
    """Vectors of one encoder, keyed by docno, under ``root/<model>-<identity hash>/``."""

    def __init__(self, root, identity: Dict[str, object], memo_size: int = 200_000):
        self.memo_size = memo_size
        self._memo: Dict[str, np.ndarray] = {}
        self.identity = json.loads(json.dumps(identity, sort_keys=True))  # as stored in encoder.json
        self.path = Path(root) / identity_key(self.identity)
        self.path.mkdir(parents=True, exist_ok=True)
        from pyterrier_caching import Sqlite3KeyValueCache
        # Several processes may open a new cache at once: creation happens under an exclusive file lock.
        with open(self.path / '.lock', 'w') as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            self._check_identity()
            # Creating (or reopening) the artifact through pyterrier-caching keeps its layout and metadata.
            Sqlite3KeyValueCache(str(self.path / 'kv'), key='docno', value='doc_vec').close()
        self.db = sqlite3.connect(str(self.path / 'kv' / 'db.sqlite3'), timeout=60)

    def _check_identity(self):
        meta = self.path / 'encoder.json'
        if meta.exists():
            with meta.open('rt') as fin:
                stored = json.load(fin)
            if stored != self.identity:
                raise ValueError(f'the embedding cache at {self.path} was built with another encoder '
                                 f'({stored}) than this one ({self.identity}); use another cache directory')
            return
        # Write-then-rename: a reader sees either no encoder.json or a complete one.
        fd, tmp = tempfile.mkstemp(dir=self.path, prefix='.encoder.', suffix='.json')
        with os.fdopen(fd, 'wt') as fout:
            json.dump(self.identity, fout, indent=2, sort_keys=True)
        os.replace(tmp, meta)

    def get(self, docnos: Sequence[str]) -> Dict[str, np.ndarray]:
        """The cached vectors among ``docnos`` (a dict; absent docnos are misses)."""
        docnos = [str(d) for d in docnos]  # plain str keys, as pyterrier-caching writes them
        found = {d: self._memo[d] for d in docnos if d in self._memo}
        docnos = [d for d in docnos if d not in found]
        with closing(self.db.cursor()) as cursor:
            for start in range(0, len(docnos), _READ_CHUNK):
                keys = [pickle.dumps((d,), protocol=PICKLE_PROTOCOL) for d in docnos[start:start + _READ_CHUNK]]
                placeholder = ', '.join(['?'] * len(keys))
                cursor.execute(f'SELECT key, value FROM cache WHERE key IN ({placeholder})', keys)
                for key, value in cursor.fetchall():
                    (docno,), (vec,) = pickle.loads(key), pickle.loads(value)
                    found[docno] = vec
                    if len(self._memo) < self.memo_size:
                        self._memo[docno] = vec
        return found

    def put(self, docnos: Sequence[str], vectors: np.ndarray) -> None:
        """Store ``vectors[i]`` for ``docnos[i]`` in one transaction (existing entries are kept)."""
        rows = [(pickle.dumps((str(d),), protocol=PICKLE_PROTOCOL), pickle.dumps((np.asarray(v, dtype=np.float32),), protocol=PICKLE_PROTOCOL))
                for d, v in zip(docnos, vectors)]
        with self.db:  # one transaction: committed whole or rolled back whole
            self.db.executemany('INSERT OR IGNORE INTO cache (key, value) VALUES (?, ?)', rows)

    def __len__(self):
        with closing(self.db.cursor()) as cursor:
            return cursor.execute('SELECT COUNT(*) FROM cache').fetchone()[0]

    def close(self):
        if self.db is not None:
            self.db.close()
            self.db = None

    def __repr__(self):
        return f'EmbeddingCache({str(self.path)!r})'
