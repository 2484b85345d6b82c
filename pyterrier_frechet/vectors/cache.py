"""A persistent (docno, text) → vector cache for one encoder, so every text is embedded once per model, ever.

Storage is a pyterrier-caching ``Sqlite3KeyValueCache`` artifact (key ``(docno, text_sha)``, value
``doc_vec``, in its own pickle format, so ``pyterrier_caching.KeyValueCache(path)`` opens it too). On top
of it this module adds what evaluation needs:

- **keyed by what was embedded**: the key is the docno *and* a sha256 of the exact text that was encoded,
  so a docno whose text changed (another corpus file, another ``--text-fields``) is a miss and is
  embedded again — never served the vector of the old text. A side table lists the texts stored per
  docno, so a caller that has no text (vectors looked up by docno only) is served the one vector stored
  for that docno, and refused, naming the docnos, when the docno was embedded from several texts;
- **model identity**: each model gets its own directory, named from the model and a hash of its
  identity (weights, tokenizer and config files, pooling, normalisation, max length, and this cache's
  schema), with an ``encoder.json`` describing it. Opening a directory with another identity raises
  ``ValueError``, so a cache built with one model never serves vectors for another;
- **chunked, transactional writes**: vectors are committed in small chunks as they are encoded, in
  SQLite transactions, so a process killed mid-write loses at most the chunk in flight and never
  leaves a partial vector; ``INSERT OR IGNORE`` lets two processes fill the same cache;
- **batched reads** under SQLite's limit on query parameters, remembered in memory (up to ``memo_size``
  vectors per cache object), so an evaluation that asks for the same documents again — the relevant
  set of every run in a pt.Experiment — reads SQLite once;
- **one clear error** (:class:`CacheError`, a ``ValueError``) naming the directory and what to do when the
  cache is damaged (truncated or foreign SQLite file, unreadable row, broken ``encoder.json``) or cannot
  be written (read-only or missing permissions).
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
from contextlib import closing, contextmanager
from pathlib import Path
from typing import Dict, Optional, Sequence

import numpy as np

logger = logging.getLogger(__name__)

PICKLE_PROTOCOL = 4  # pyterrier-caching's key/value encoding
SCHEMA = 2  # 1: key docno only (served stale vectors when a text changed); 2: key (docno, text_sha)
NO_TEXT = ''  # the text_sha of vectors stored without their text (e.g. precomputed vectors)
_READ_CHUNK = 10_000


class CacheError(ValueError):
    """The embedding cache cannot be read or written; the message names its directory and the fix."""


def default_cache_root() -> Path:
    """``$PYTERRIER_FRECHET_CACHE`` if set, else ``~/.cache/pyterrier_frechet``."""
    return Path(os.environ.get('PYTERRIER_FRECHET_CACHE', Path.home() / '.cache' / 'pyterrier_frechet'))


def identity_key(identity: Dict[str, object]) -> str:
    """A short, filesystem-safe key for an encoder identity: ``<name>-<16 hex digits of its sha256>``."""
    digest = hashlib.sha256(json.dumps(identity, sort_keys=True).encode()).hexdigest()
    return f"{_slug(str(identity['name']))}-{digest[:16]}"


def text_sha(text: str) -> str:
    """The cache's fingerprint of a text: 32 hex digits of the sha256 of its UTF-8 bytes."""
    return hashlib.sha256(text.encode('utf-8', 'surrogatepass')).hexdigest()[:32]


def _slug(name: str) -> str:
    return re.sub(r'[^A-Za-z0-9._-]+', '_', name).strip('_')[:80] or 'model'


def _key(docno: str, sha: str) -> bytes:
    return pickle.dumps((docno, sha), protocol=PICKLE_PROTOCOL)


class EmbeddingCache:
    """Vectors of one encoder, keyed by (docno, text fingerprint), under ``root/<model>-<identity hash>/``."""

    def __init__(self, root, identity: Dict[str, object], memo_size: int = 200_000):
        self.memo_size = memo_size
        self._memo: Dict[tuple, np.ndarray] = {}
        self._shas: Dict[str, str] = {}  # text → text_sha of the texts seen (a text source hands the same str objects
        # out again, whose hash Python keeps: a later look-up costs a dict probe, not a sha256)
        self.identity = json.loads(json.dumps({**identity, 'cache_schema': SCHEMA}, sort_keys=True))  # as in encoder.json
        self.path = Path(root) / identity_key(self.identity)
        self.db = None
        with self._errors('opened'):
            self.path.mkdir(parents=True, exist_ok=True)
            from pyterrier_caching import Sqlite3KeyValueCache
            # Several processes may open a new cache at once: creation happens under an exclusive file lock.
            with open(self.path / '.lock', 'w') as lock:
                fcntl.flock(lock, fcntl.LOCK_EX)
                self._check_identity()
                # Creating (or reopening) the artifact through pyterrier-caching keeps its layout and metadata.
                Sqlite3KeyValueCache(str(self.path / 'kv'), key=('docno', 'text_sha'), value='doc_vec').close()
                self.db = sqlite3.connect(str(self.path / 'kv' / 'db.sqlite3'), timeout=60)
                with self.db:
                    self.db.execute('CREATE TABLE IF NOT EXISTS texts (docno TEXT NOT NULL, text_sha TEXT NOT NULL, '
                                    'PRIMARY KEY (docno, text_sha)) WITHOUT ROWID')
                    self.db.execute('SELECT COUNT(*) FROM cache').fetchone()  # a foreign or truncated file fails here

    @contextmanager
    def _errors(self, action: str):
        """Turn the many ways a cache directory can be broken into one :class:`CacheError`."""
        try:
            yield
        except CacheError:
            raise
        except (sqlite3.Error, OSError, pickle.UnpicklingError, EOFError, json.JSONDecodeError, UnicodeDecodeError,
                AttributeError, ImportError, IndexError, TypeError, KeyError, AssertionError) as ex:
            raise CacheError(f'the embedding cache at {self.path} could not be {action} ({type(ex).__name__}: {ex}); '
                             'if it is damaged, delete that directory (it is rebuilt on the next run); if it is not '
                             'writable, pass another cache_dir (CLI: --cache-dir) or set PYTERRIER_FRECHET_CACHE') from ex

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

    def get(self, docnos: Sequence[str], texts: Optional[Sequence[str]] = None) -> Dict[str, np.ndarray]:
        """The cached vectors among ``docnos`` (a dict docno → vector; absent docnos are misses).

        With ``texts`` (one per docno), a vector is served only if it was computed from exactly that text.
        Without, a docno is served the one vector stored for it; a docno stored with several texts raises
        :class:`ValueError` (which text is meant cannot be told)."""
        docnos = [str(d) for d in docnos]  # plain str keys, as pyterrier-caching writes them
        with self._errors('read'):
            if texts is None:
                shas = self._stored_shas(docnos)
            else:
                if len(texts) != len(docnos):
                    raise ValueError(f'{len(docnos)} docnos but {len(texts)} texts')
                shas = {d: self._text_sha(str(t)) for d, t in zip(docnos, texts)}
            wanted = [(d, shas[d]) for d in docnos if d in shas]
            found = {k: self._memo[k] for k in wanted if k in self._memo}
            todo = [k for k in wanted if k not in found]
            with closing(self.db.cursor()) as cursor:
                for start in range(0, len(todo), _READ_CHUNK):
                    keys = [_key(d, s) for d, s in todo[start:start + _READ_CHUNK]]
                    cursor.execute(f'SELECT key, value FROM cache WHERE key IN ({", ".join(["?"] * len(keys))})', keys)
                    for key, value in cursor.fetchall():
                        key, (vec,) = tuple(pickle.loads(key)), pickle.loads(value)
                        found[key] = vec
                        if len(self._memo) < self.memo_size:
                            self._memo[key] = vec
        return {d: vec for (d, _), vec in found.items()}

    def _text_sha(self, text: str) -> str:
        sha = self._shas.get(text)
        if sha is None:
            sha = text_sha(text)
            if len(self._shas) < self.memo_size:
                self._shas[text] = sha
        return sha

    def _stored_shas(self, docnos: Sequence[str]) -> Dict[str, str]:
        """docno → the one text fingerprint stored for it (docnos with none are left out)."""
        stored: Dict[str, set] = {}
        with closing(self.db.cursor()) as cursor:
            for start in range(0, len(docnos), _READ_CHUNK):
                chunk = docnos[start:start + _READ_CHUNK]
                cursor.execute(f'SELECT docno, text_sha FROM texts WHERE docno IN ({", ".join(["?"] * len(chunk))})', chunk)
                for docno, sha in cursor.fetchall():
                    stored.setdefault(docno, set()).add(sha)
        several = sorted(d for d, s in stored.items() if len(s) > 1)
        if several:
            raise ValueError(f'the embedding cache at {self.path} holds vectors of several different texts for '
                             f'{len(several)} docno(s), e.g. {several[:5]}, and no text was given to choose one; '
                             'give the texts (texts=, a text column, or --text) so the vector of the right text is served')
        return {d: s.pop() for d, s in stored.items()}

    def put(self, docnos: Sequence[str], vectors: np.ndarray, texts: Optional[Sequence[str]] = None) -> None:
        """Store ``vectors[i]`` for ``docnos[i]`` embedded from ``texts[i]`` in one transaction (existing
        entries are kept). Without ``texts`` the vectors are stored as of unknown text: they are served
        only to lookups by docno alone, never to a caller that gives a text."""
        docnos = [str(d) for d in docnos]
        shas = [NO_TEXT] * len(docnos) if texts is None else [self._text_sha(str(t)) for t in texts]
        rows = [(_key(d, s), pickle.dumps((np.asarray(v, dtype=np.float32),), protocol=PICKLE_PROTOCOL))
                for d, s, v in zip(docnos, shas, vectors)]
        with self._errors('written'), self.db:  # one transaction: committed whole or rolled back whole
            self.db.executemany('INSERT OR IGNORE INTO cache (key, value) VALUES (?, ?)', rows)
            self.db.executemany('INSERT OR IGNORE INTO texts (docno, text_sha) VALUES (?, ?)', list(zip(docnos, shas)))

    def __len__(self):
        with self._errors('read'), closing(self.db.cursor()) as cursor:
            return cursor.execute('SELECT COUNT(*) FROM cache').fetchone()[0]

    def close(self):
        if self.db is not None:
            self.db.close()
            self.db = None

    def __repr__(self):
        return f'EmbeddingCache({str(self.path)!r})'
