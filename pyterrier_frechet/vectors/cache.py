"""A persistent (docno, text) → vector cache for one encoder, so every text is embedded once per model, ever.

Storage is a plain SQLite table that can hold nothing but text and numbers: ``vectors(docno TEXT, text_sha TEXT,
vector BLOB)``, each vector the raw little-endian float32 bytes of one row, with the dtype (``<f4``), the dimension
and the schema recorded in a ``meta`` table and checked on every read (a row of the wrong byte length is a
:class:`CacheError` naming the directory). Nothing is ever unpickled, so a cache folder from anyone (a team share,
a tarball, a CI artefact) can give wrong numbers at worst, never run code (see ``docs/cache.md`` for the threat
model). Caches of the old pickled format (schema 2, a ``kv/`` folder written through pyterrier-caching) are refused
with one message naming the folder to delete; they are never read.

Each cache folder is a PyTerrier artifact of its own (``pt_meta.json``: type ``embedding_cache``, format
``sqlite3``; entry point ``pyterrier.artifact``), so ``pt.Artifact.load(folder)`` opens it, read by docno.

On top of the storage this module adds what evaluation needs:

- **keyed by what was embedded**: the key is the docno *and* a sha256 of the exact text that was encoded,
  so a docno whose text changed (another corpus file, another ``--text-fields``) is a miss and is
  embedded again — never served the vector of the old text. A caller that has no text (vectors looked up by
  docno only) is served the one vector stored for that docno, and refused, naming the docnos, when the docno
  was stored from several texts (or once without its text and once from a text);
- **model identity**: each model gets its own directory, named from the model and a hash of its
  identity (weights, tokenizer and config files, pooling, normalisation, max length, backend, precision and
  this cache's schema), with an ``encoder.json`` describing it. Opening a directory with another identity raises
  ``ValueError``, so a cache built with one model never serves vectors for another;
- **chunked, transactional writes**: vectors are committed in small chunks as they are encoded, in
  SQLite transactions, so a process killed mid-write loses at most the chunk in flight and never
  leaves a partial vector; ``INSERT OR IGNORE`` lets two processes fill the same cache;
- **checked writes**: :meth:`EmbeddingCache.put` refuses docnos, vectors and texts of different lengths, a
  vector of another dimension than the cache's, and NaN/inf, before writing anything;
- **batched reads** under SQLite's limit on query parameters, remembered in memory (up to ``memo_size``
  vectors per cache object), so an evaluation that asks for the same documents again — the relevant
  set of every run in a pt.Experiment — reads SQLite once;
- **exactly its own schema**: on opening, every object of the database (tables, indexes, triggers, views and their
  SQL, as ``sqlite_master`` lists them) must be the schema this module creates, nothing more or less; a planted
  trigger (which ``trusted_schema = OFF`` does not stop when it is pure SQL), view, table or index is refused before
  anything is read or written. The database path must be a regular file inside the folder (a symlink is refused);
- **read-only caches serve reads**: a folder or database that cannot be written (a team share mounted read-only, a
  cache baked into an image) is opened read-only (SQLite ``mode=ro``, no lock file): hits are served, and a miss that
  would need a write is refused before anything is encoded;
- **one clear error** (:class:`CacheError`, a ``ValueError``) naming the directory and what to do when the
  cache is damaged (truncated or foreign SQLite file, a row of the wrong size or of NaN/inf values, broken
  ``encoder.json``) or cannot be written (read-only or missing permissions).
"""
import fcntl
import hashlib
import json
import logging
import os
import re
import sqlite3
import stat
from contextlib import closing, contextmanager
from pathlib import Path
from typing import Dict, Optional, Sequence, Tuple

import numpy as np
import pyterrier as pt

from ..files import JSONFileError, read_json, temporary_file

logger = logging.getLogger(__name__)

# 1: key docno only (served stale vectors when a text changed); 2: key (docno, text_sha), values pickled through
# pyterrier-caching; 3: a plain table of raw little-endian float32 bytes, nothing unpickled
SCHEMA = 3
NO_TEXT = ''  # the text_sha of vectors stored without their text (e.g. precomputed vectors)
DTYPE = '<f4'  # how every vector is stored: little-endian float32, whatever the machine
DB_FILE = 'vectors.sqlite3'
ARTIFACT_TYPE, ARTIFACT_FORMAT = 'embedding_cache', 'sqlite3'
_READ_CHUNK = 10_000
# The whole schema this module creates; on opening, sqlite_master must hold exactly what these statements make.
_DDL = ('CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)',
        'CREATE TABLE IF NOT EXISTS vectors (docno TEXT NOT NULL, text_sha TEXT NOT NULL, '
        'vector BLOB NOT NULL, PRIMARY KEY (docno, text_sha))')
_MASTER = 'SELECT type, name, tbl_name, sql FROM sqlite_master ORDER BY type, name'
_DB_SIDE_FILES = ('', '-journal', '-wal', '-shm')  # the database and the files SQLite keeps beside it


class CacheError(ValueError):
    """The embedding cache cannot be read or written; the message names its directory and the fix."""


def default_cache_root() -> Path:
    """``$PYTERRIER_FRECHET_CACHE`` if set to a non-empty value, else ``~/.cache/pyterrier_frechet`` (an empty
    value is unset: it never means the current directory)."""
    value = os.environ.get('PYTERRIER_FRECHET_CACHE', '').strip()
    return Path(value).expanduser() if value else Path.home() / '.cache' / 'pyterrier_frechet'


def identity_key(identity: Dict[str, object]) -> str:
    """A short, filesystem-safe key for an encoder identity: ``<name>-<16 hex digits of its sha256>``."""
    digest = hashlib.sha256(json.dumps(identity, sort_keys=True).encode()).hexdigest()
    return f"{_slug(str(identity['name']))}-{digest[:16]}"


def text_sha(text: str) -> str:
    """The cache's fingerprint of a text: 32 hex digits of the sha256 of its UTF-8 bytes."""
    return hashlib.sha256(text.encode('utf-8', 'surrogatepass')).hexdigest()[:32]


def _expected_master() -> list:
    """``sqlite_master`` as the package's own statements leave it (SQLite's own normalisation of the SQL included)."""
    with closing(sqlite3.connect(':memory:')) as db:
        for statement in _DDL:
            db.execute(statement)
        return db.execute(_MASTER).fetchall()


def _cannot_write(folder: Path) -> bool:
    """Whether an existing cache ``folder`` (or its database) cannot be written: a read-only file system (which
    ``os.access`` reports even to root) or missing permissions."""
    if not folder.is_dir():
        return False
    db = folder / DB_FILE
    return not os.access(folder, os.W_OK) or (db.is_file() and not os.access(db, os.W_OK))


def _slug(name: str) -> str:
    return re.sub(r'[^A-Za-z0-9._-]+', '_', name).strip('_')[:80] or 'model'


def _old_format(folder: Path) -> bool:
    """Whether ``folder`` holds a cache of the pickled format (schema 1-2: a pyterrier-caching ``kv/`` folder)."""
    return (folder / 'kv').exists()


def _refuse_old(folder: Path) -> CacheError:
    return CacheError(f'{folder} is an embedding cache of an old format (schema 2 or older: vectors pickled through '
                      f'pyterrier-caching), which this version never reads, since unpickling a file can run code; delete '
                      f'that folder (rm -r {folder}) and the vectors are encoded again into the new format on the next run')


class EmbeddingCache(pt.Artifact):
    """Vectors of one encoder, keyed by (docno, text fingerprint), under ``root/<model>-<identity hash>/``.

    ``EmbeddingCache(root, identity)`` opens (or creates) the folder of ``identity`` under ``root``;
    ``EmbeddingCache(folder)`` (or ``pt.Artifact.load(folder)``) opens an existing cache folder, whose identity
    is read from its ``encoder.json``; such an object serves vectors by docno (:meth:`get`, :meth:`lookup`)."""

    ARTIFACT_TYPE = ARTIFACT_TYPE
    ARTIFACT_FORMAT = ARTIFACT_FORMAT

    def __init__(self, path, identity: Optional[Dict[str, object]] = None, memo_size: int = 200_000,
                 read_only: Optional[bool] = None):
        """``read_only``: None (default) opens read-only exactly when the folder or its database cannot be written;
        True opens read-only (reads served, writes refused) whatever the permissions."""
        self.memo_size = memo_size
        self._read_only_arg = read_only
        self.read_only = False
        self._memo: Dict[tuple, np.ndarray] = {}
        self._shas: Dict[str, str] = {}  # text → text_sha of the texts seen (a text source hands the same str objects
        # out again, whose hash Python keeps: a later look-up costs a dict probe, not a sha256)
        self.db = None
        self._dim: Optional[int] = None
        if identity is None:
            super().__init__(Path(path))
            self._open_existing()
            return
        self.identity = json.loads(json.dumps({**identity, 'cache_schema': SCHEMA}, sort_keys=True))  # as in encoder.json
        super().__init__(Path(path) / identity_key(self.identity))
        _warn_old_siblings(Path(path), str(self.identity['name']))
        with self._errors('opened'):
            if _old_format(self.path):
                raise _refuse_old(self.path)
            self.read_only = _cannot_write(self.path) if read_only is None else bool(read_only)
            if self.read_only:  # a complete cache that cannot be written: read it as it is, no lock, no write
                self._require_complete()
                self._check_identity()
                self._connect(create=False)
                return
            self.path.mkdir(parents=True, exist_ok=True)
            # Several processes may open a new cache at once: creation happens under an exclusive file lock
            # (opened without following a symlink planted at its name, and without truncating anything).
            lock = os.open(self.path / '.lock', os.O_WRONLY | os.O_CREAT | getattr(os, 'O_NOFOLLOW', 0), 0o644)
            with os.fdopen(lock, 'w') as lock:
                fcntl.flock(lock, fcntl.LOCK_EX)
                self._check_identity()
                self._connect(create=True)
                self._write_json('pt_meta.json', {'type': ARTIFACT_TYPE, 'format': ARTIFACT_FORMAT,
                                                  'package_hint': 'pyterrier-frechet', 'schema': SCHEMA}, keep=True)

    def _require_complete(self):
        """A folder opened read-only must already be a complete cache: nothing can be created in it."""
        lacking = [name for name in ('encoder.json', DB_FILE) if not (self.path / name).exists()]
        if lacking:
            raise CacheError(f'the embedding cache folder {self.path} cannot be written (read-only file system or '
                             f'missing permissions) and lacks {" and ".join(lacking)}, so it cannot be created there; '
                             'make it writable, or pass another cache_dir= (CLI: set PYTERRIER_FRECHET_CACHE)')

    def _open_existing(self):
        """Open a cache folder as it is (no identity given): refuse anything that is not a cache of this schema."""
        if not self.path.is_dir():
            raise CacheError(f'{self.path} is not an embedding cache folder (it {"is a file" if self.path.exists() else "does not exist"})')
        if _old_format(self.path):
            raise _refuse_old(self.path)
        with self._errors('opened'):
            self.identity = read_json(self.path / 'encoder.json', 'embedding cache identity')
            if not isinstance(self.identity, dict) or self.identity.get('cache_schema') != SCHEMA:
                schema = self.identity.get('cache_schema') if isinstance(self.identity, dict) else None
                raise CacheError(f'{self.path} is an embedding cache of schema {schema}, not {SCHEMA}; delete that folder '
                                 '(it is rebuilt on the next run)')
            self._refuse_special_files()
            self.read_only = _cannot_write(self.path) if self._read_only_arg is None else bool(self._read_only_arg)
            if not (self.path / DB_FILE).is_file():
                raise CacheError(f'{self.path} has no {DB_FILE}: it is not an embedding cache folder, or a damaged one; '
                                 'delete that folder (it is rebuilt on the next run)')
            self._connect(create=False)

    def _refuse_special_files(self):
        """The database (and its journal files) must be regular files in the folder: SQLite follows a symlink, so a
        dangling one would create a database wherever it points, and a live one would read and write a file outside."""
        for suffix in _DB_SIDE_FILES:
            target = self.path / (DB_FILE + suffix)
            try:
                mode = os.lstat(target).st_mode
            except FileNotFoundError:
                continue
            if not stat.S_ISREG(mode):
                what = f'a symlink to {os.readlink(target)!r}' if stat.S_ISLNK(mode) else 'not a regular file'
                raise CacheError(f'{target} is {what}: the database of an embedding cache must be a plain file inside '
                                 f'its folder; remove it (rm {target}), or delete the folder {self.path} (it is rebuilt '
                                 'on the next run)')

    def _connect(self, create: bool):
        self._refuse_special_files()
        db_path = self.path / DB_FILE
        if self.read_only:  # no journal, lock file or anything else is created; a write fails inside SQLite
            self.db = sqlite3.connect(db_path.absolute().as_uri() + '?mode=ro', uri=True, timeout=60)
        else:
            self.db = sqlite3.connect(str(db_path), timeout=60)
        # Views and triggers of a file from elsewhere may not call functions with side effects (SQLite >= 3.31); the
        # schema check below refuses any object the package does not create (pure-SQL triggers included).
        self.db.execute('PRAGMA trusted_schema = OFF')
        master = self.db.execute(_MASTER).fetchall()
        if create and not master:
            with self.db:
                for statement in _DDL:
                    self.db.execute(statement)
                self.db.executemany('INSERT OR IGNORE INTO meta (key, value) VALUES (?, ?)',
                                    [('schema', str(SCHEMA)), ('dtype', DTYPE)])
            master = self.db.execute(_MASTER).fetchall()
        expected = _expected_master()
        if master != expected:
            extra = [f'{kind} {name!r}' for kind, name, _, sql in master if (kind, name, _, sql) not in expected]
            missing = [f'{kind} {name!r}' for kind, name, _, sql in expected if (kind, name, _, sql) not in master]
            parts = ([f'objects it does not create: {", ".join(extra)}'] if extra else []) + \
                    ([f'without (or with another definition of) {", ".join(missing)}'] if missing else [])
            raise CacheError(f'{db_path} is not an embedding cache of this package: its schema is not exactly the one '
                             f'the package creates ({"; ".join(parts)}); nothing was read from it. Delete the folder '
                             f'{self.path} (it is rebuilt on the next run), and do not use cache folders from sources '
                             'you do not trust')
        meta = self._meta()
        if meta.get('schema') != str(SCHEMA) or meta.get('dtype') != DTYPE:
            raise CacheError(f'the embedding cache at {self.path} records schema {meta.get("schema")!r} and dtype '
                             f'{meta.get("dtype")!r}, not {SCHEMA} and {DTYPE!r}; delete that directory (it is rebuilt '
                             'on the next run)')
        self.db.execute('SELECT COUNT(*) FROM vectors').fetchone()  # a foreign or truncated file fails here

    def _meta(self) -> Dict[str, str]:
        rows = self.db.execute('SELECT key, value FROM meta').fetchall()
        if not all(isinstance(k, str) and isinstance(v, str) for k, v in rows):
            raise CacheError(f'the embedding cache at {self.path} has a damaged meta table; delete that directory')
        return dict(rows)

    @property
    def dim(self) -> Optional[int]:
        """The dimension of the vectors stored (None while the cache is empty)."""
        if self._dim is None:
            with self._errors('read'):
                value = self._meta().get('dim')
                if value is not None:
                    if not value.isdigit() or int(value) < 1:
                        raise CacheError(f'the embedding cache at {self.path} records dimension {value!r}; delete that directory')
                    self._dim = int(value)
        return self._dim

    @contextmanager
    def _errors(self, action: str):
        """Turn the many ways a cache directory can be broken into one :class:`CacheError`."""
        try:
            yield
        except CacheError:
            raise
        except (sqlite3.Error, OSError, EOFError, json.JSONDecodeError, JSONFileError, UnicodeDecodeError,
                AttributeError, IndexError, TypeError, KeyError) as ex:
            raise CacheError(f'the embedding cache at {self.path} could not be {action} ({type(ex).__name__}: {ex}); '
                             'if it is damaged, delete that directory (it is rebuilt on the next run); if it is not '
                             'writable, pass another cache_dir= or set PYTERRIER_FRECHET_CACHE (the CLI reads that variable)') from ex

    def _write_json(self, name: str, value, keep: bool = False):
        """Write-then-rename: a reader sees either no file or a complete one (``keep``: leave an existing one)."""
        target = self.path / name
        if keep and target.exists():
            return
        fd, tmp = temporary_file(self.path, f'.{name}.')
        with os.fdopen(fd, 'wt') as fout:
            json.dump(value, fout, indent=2, sort_keys=True)
        os.replace(tmp, target)

    def _check_identity(self):
        meta = self.path / 'encoder.json'
        if meta.exists():
            stored = read_json(meta, 'embedding cache identity')
            if stored != self.identity:
                raise ValueError(f'the embedding cache at {self.path} was built with another encoder '
                                 f'({stored}) than this one ({self.identity}); use another cache directory')
            return
        self._write_json('encoder.json', self.identity)

    def _decode(self, docno, blob) -> np.ndarray:
        """One stored row as a float32 vector: raw bytes of the recorded dtype and dimension, or a CacheError."""
        dim = self.dim
        if not isinstance(blob, bytes) or dim is None or len(blob) != 4 * dim:
            size = f'{len(blob)} bytes' if isinstance(blob, (bytes, str)) else f'a {type(blob).__name__}'
            raise CacheError(f'the embedding cache at {self.path} holds a damaged row for docno {docno!r}: {size}, not '
                             f'the {dim} float32 values ({4 * (dim or 0)} bytes) it records; delete that directory (it is '
                             'rebuilt on the next run), and do not use cache folders from sources you do not trust')
        return np.frombuffer(blob, dtype=DTYPE).astype(np.float32, copy=False)

    def get(self, docnos: Sequence[str], texts: Optional[Sequence[str]] = None) -> Dict[str, np.ndarray]:
        """The cached vectors among ``docnos`` (a dict docno → vector; absent docnos are misses).

        With ``texts`` (one per docno), a vector is served only if it was computed from exactly that text.
        Without, a docno is served the one vector stored for it; a docno stored with several texts, or once
        without its text and once from a text, raises :class:`ValueError` (which vector is meant cannot be told)."""
        docnos = [str(d) for d in docnos]
        if texts is not None and len(texts) != len(docnos):
            raise ValueError(f'{len(docnos)} docnos but {len(texts)} texts')
        with self._errors('read'):
            if texts is None:
                shas = self._stored_shas(docnos)
            else:
                shas = {}
                for d, t in zip(docnos, texts):
                    sha = self._text_sha(str(t))
                    if shas.setdefault(d, sha) != sha:
                        raise ValueError(f'docno {d!r} is given with two different texts in one call; each docno must '
                                         'name one document')
            found: Dict[str, np.ndarray] = {}
            todo = []
            for d, sha in shas.items():
                vec = self._memo.get((d, sha))
                if vec is None:
                    todo.append(d)
                else:
                    found[d] = vec
            nbytes = 4 * (self.dim or 0)
            with closing(self.db.cursor()) as cursor:
                for start in range(0, len(todo), _READ_CHUNK):
                    chunk = todo[start:start + _READ_CHUNK]
                    cursor.execute(f'SELECT docno, text_sha, vector FROM vectors WHERE docno IN '
                                   f'({", ".join(["?"] * len(chunk))})', chunk)
                    rows = []
                    for docno, sha, blob in cursor.fetchall():
                        if shas.get(docno) != sha:
                            continue  # the vector of another text of this docno
                        if type(blob) is not bytes or len(blob) != nbytes or not nbytes:
                            self._decode(docno, blob)  # raises, naming the folder
                        rows.append((docno, sha, blob))
                    if not rows:
                        continue
                    # one block per chunk: its values checked at once (put never stores NaN/inf, so such a row was
                    # planted or damaged in the file: named here, not blamed on the encoder downstream)
                    block = np.frombuffer(b''.join(blob for _, _, blob in rows), dtype=DTYPE).reshape(len(rows), -1)
                    finite = np.isfinite(block).all(axis=1)
                    if not finite.all():
                        self._refuse_non_finite([rows[i][0] for i in np.flatnonzero(~finite)])
                    for (docno, sha, _), vec in zip(rows, block):
                        found[docno] = vec
                        if len(self._memo) < self.memo_size:
                            self._memo[(docno, sha)] = vec
        return found

    def _refuse_non_finite(self, docnos):
        raise CacheError(f'the embedding cache at {self.path} holds a damaged row for {len(docnos)} docno(s), e.g. '
                         f'{docnos[:5]}: NaN or inf values, which the package never stores; delete that directory (it is '
                         'rebuilt on the next run), and do not use cache folders from sources you do not trust')

    def refuse_if_read_only(self, docnos: Sequence[str]) -> None:
        """Raise :class:`CacheError` when this cache was opened read-only and ``docnos`` (misses) would need storing:
        called before they are encoded, so no work is lost."""
        if self.read_only and len(docnos):
            docnos = [str(d) for d in docnos]
            raise CacheError(f'the embedding cache at {self.path} is read-only (its folder or {DB_FILE} cannot be '
                             f'written, or it was opened with read_only=True): it serves the vectors it holds, but '
                             f'{len(docnos)} document(s) are not in it, e.g. {docnos[:5]}, and their vectors could not '
                             'be stored; make the folder writable, or pass another cache_dir= (CLI: set '
                             'PYTERRIER_FRECHET_CACHE) to a writable folder, which is filled on the next run')

    def lookup(self, docnos) -> Tuple[np.ndarray, np.ndarray]:
        """Vectors of ``docnos`` by docno alone (float32 rows, NaN where none) and a found mask: the encoder
        protocol of the ``FD`` measure, so an opened cache folder can serve as ``FD(encoder=...)``."""
        names = [str(d) for d in docnos]
        vectors = self.get(sorted(set(names)))
        out = np.full((len(names), self.dim or 0), np.nan, dtype=np.float32)
        found = np.fromiter((d in vectors for d in names), dtype=bool, count=len(names))
        for i, d in enumerate(names):
            if found[i]:
                out[i] = vectors[d]
        return out, found

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
        uniq = sorted(set(docnos))
        with closing(self.db.cursor()) as cursor:
            for start in range(0, len(uniq), _READ_CHUNK):
                chunk = uniq[start:start + _READ_CHUNK]
                cursor.execute(f'SELECT docno, text_sha FROM vectors WHERE docno IN ({", ".join(["?"] * len(chunk))})', chunk)
                for docno, sha in cursor.fetchall():
                    stored.setdefault(docno, set()).add(sha)
        several = sorted(d for d, s in stored.items() if len(s) > 1)
        if several:
            mixed = [d for d in several if NO_TEXT in stored[d]]
            texts = [d for d in several if d not in set(mixed)]
            parts = []
            if mixed:
                parts.append(f'{len(mixed)} docno(s) stored once without their text (vectors put without texts, e.g. '
                             f'precomputed) and once embedded from a text, e.g. {mixed[:5]}')
            if texts:
                parts.append(f'vectors of several different texts for {len(texts)} docno(s), e.g. {texts[:5]}')
            raise ValueError(f'the embedding cache at {self.path} holds {" and ".join(parts)}, and no text was given to '
                             'choose one; give the texts (texts=, a text column, or --text) so the vector of the right '
                             'text is served')
        return {d: s.pop() for d, s in stored.items()}

    def put(self, docnos: Sequence[str], vectors, texts: Optional[Sequence[str]] = None) -> None:
        """Store ``vectors[i]`` for ``docnos[i]`` embedded from ``texts[i]`` in one transaction (existing
        entries are kept). Without ``texts`` the vectors are stored as of unknown text: they are served
        only to lookups by docno alone, never to a caller that gives a text.

        Raises ValueError, before writing anything, when docnos, vectors and texts differ in length, when the
        vectors are not one 2-D block of finite numbers, or when their dimension is not the cache's."""
        docnos = [str(d) for d in docnos]
        self.refuse_if_read_only(docnos)
        try:
            matrix = np.asarray(vectors, dtype=np.float64)
        except (TypeError, ValueError) as ex:
            raise ValueError(f'{self!r}.put: vectors must be an n x d array of numbers ({ex})') from ex
        if len(docnos) == 0 and matrix.size == 0 and not texts:
            return
        if matrix.ndim != 2 or len(matrix) != len(docnos) or (texts is not None and len(texts) != len(docnos)):
            raise ValueError(f'{self!r}.put: {len(docnos)} docnos, vectors of shape {matrix.shape}'
                             + ('' if texts is None else f' and {len(texts)} texts')
                             + ': give one vector (a row of an n x d array) and one text per docno')
        if not np.isfinite(matrix).all():
            raise ValueError(f'{self!r}.put: the vectors hold NaN or inf; nothing was stored')
        dim = matrix.shape[1]
        if dim < 1:
            raise ValueError(f'{self!r}.put: vectors of dimension 0')
        if self.dim is not None and dim != self.dim:
            raise ValueError(f'{self!r}.put: {dim}-d vectors, but this cache holds {self.dim}-d vectors of its encoder; '
                             'vectors of another model belong in another cache')
        shas = [NO_TEXT] * len(docnos) if texts is None else [self._text_sha(str(t)) for t in texts]
        blobs = np.ascontiguousarray(matrix, dtype=DTYPE)
        rows = [(d, s, blobs[i].tobytes()) for i, (d, s) in enumerate(zip(docnos, shas))]
        with self._errors('written'), self.db:  # one transaction: committed whole or rolled back whole
            self.db.execute("INSERT OR IGNORE INTO meta (key, value) VALUES ('dim', ?)", (str(dim),))
            stored = self.db.execute("SELECT value FROM meta WHERE key = 'dim'").fetchone()[0]
            if stored != str(dim):  # another process stored vectors of another dimension first
                raise ValueError(f'{self!r}.put: {dim}-d vectors, but this cache holds {stored}-d vectors')
            self.db.executemany('INSERT OR IGNORE INTO vectors (docno, text_sha, vector) VALUES (?, ?, ?)', rows)
        self._dim = dim

    def __len__(self):
        with self._errors('read'), closing(self.db.cursor()) as cursor:
            return cursor.execute('SELECT COUNT(*) FROM vectors').fetchone()[0]

    def close(self):
        if self.db is not None:
            self.db.close()
            self.db = None

    def __repr__(self):
        return f'EmbeddingCache({str(self.path)!r})'


_WARNED_OLD = set()


def _warn_old_siblings(root: Path, name: str) -> None:
    """Say once per folder that a cache of the old pickled format for this model sits unused under ``root``."""
    try:
        old = [p for p in root.glob(f'{_slug(name)}-*') if p.is_dir() and _old_format(p) and p not in _WARNED_OLD]
    except OSError:
        return
    for folder in old:
        _WARNED_OLD.add(folder)
        logger.warning('%s is an embedding cache of the old pickled format, which is no longer read (vectors are '
                       'encoded again into a new folder); delete it to free the space', folder)
