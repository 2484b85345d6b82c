"""Issue 25 X1 and the cache's storage: raw little-endian float32 bytes in a plain SQLite table, never unpickled; old
pickled caches refused; the cache folder is a PyTerrier artifact; put checks its input (S5); U2; K3."""
import configparser
import json
import pickle
import sqlite3
from importlib.metadata import EntryPoint
from pathlib import Path

import numpy as np
import pyterrier as pt
import pytest

from pyterrier_frechet.vectors import cache as cache_mod
from pyterrier_frechet.vectors.cache import CacheError, EmbeddingCache

ROOT = Path(__file__).resolve().parents[1]
IDENTITY = {'name': 'fake', 'hash': 'abc'}


class _Payload:
    """Unpickling this creates the file ``path``: the stand-in for arbitrary code in a planted cache row."""

    def __init__(self, path):
        self.path = str(path)

    def __reduce__(self):
        return (open, (self.path, 'w'))


def _payload(path) -> bytes:
    return pickle.dumps(_Payload(path), protocol=4)


def test_the_payload_is_live(tmp_path):
    # the control: unpickling the planted bytes does run code (so the tests below show something)
    marker = tmp_path / 'control'
    pickle.loads(_payload(marker)).close()
    assert marker.exists()


def test_vectors_are_raw_little_endian_float32_bytes(tmp_path):
    cache = EmbeddingCache(tmp_path, IDENTITY)
    vecs = np.array([[1.5, -2.0, 3.25], [0.1, 0.2, 0.3]])
    cache.put(['a', 'b'], vecs, ['text a', 'text b'])
    cache.put(['c'], vecs[:1])  # without its text
    with sqlite3.connect(str(cache.path / 'vectors.sqlite3')) as db:
        rows = db.execute('SELECT docno, text_sha, vector FROM vectors ORDER BY docno').fetchall()
        meta = dict(db.execute('SELECT key, value FROM meta').fetchall())
    assert meta == {'schema': '3', 'dtype': '<f4', 'dim': '3'}
    assert [(d, type(v)) for d, _, v in rows] == [('a', bytes), ('b', bytes), ('c', bytes)]
    # independent of the module: the text fingerprint is sha256 of the UTF-8 text, the bytes are struct-packed floats
    import hashlib
    import struct
    assert rows[0][1] == hashlib.sha256(b'text a').hexdigest()[:32] and rows[2][1] == ''
    assert rows[0][2] == struct.pack('<3f', 1.5, -2.0, 3.25)
    assert rows[1][2] == struct.pack('<3f', 0.1, 0.2, 0.3)
    got = cache.get(['a', 'b'], ['text a', 'text b'])
    np.testing.assert_array_equal(got['a'], np.float32([1.5, -2.0, 3.25]))
    assert got['b'].dtype == np.float32
    meta = json.loads((cache.path / 'pt_meta.json').read_text())
    assert meta['type'] == 'embedding_cache' and meta['format'] == 'sqlite3'


@pytest.mark.parametrize('padded', [False, True])
def test_a_planted_pickle_row_is_never_executed(tmp_path, padded):
    """X1: a row replaced by a pickle payload is refused (wrong byte length) or read as numbers, never unpickled."""
    cache = EmbeddingCache(tmp_path, IDENTITY)
    cache.put(['a', 'b'], np.ones((2, 8)))
    marker = tmp_path / 'pwned'
    payload = _payload(marker)
    assert len(payload) != 32
    if padded:  # the exact length of a vector row (8 float32): it can only be read as 8 numbers
        payload = (payload + b'\0' * 32)[:32] if len(payload) < 32 else payload[:32]
    with sqlite3.connect(str(cache.path / 'vectors.sqlite3')) as db:
        db.execute("UPDATE vectors SET vector = ? WHERE docno = 'a'", (payload,))
    cache.close()
    reopened = EmbeddingCache(tmp_path, IDENTITY)
    if padded:
        got = reopened.get(['a'])
        assert got['a'].shape == (8,) and got['a'].dtype == np.float32
    else:
        with pytest.raises(CacheError, match=rf"{reopened.path} holds a damaged row for docno 'a': {len(payload)} bytes, "
                                             r'not the 8 float32 values \(32 bytes\).*delete that directory'):
            reopened.get(['a', 'b'])
        with pytest.raises(CacheError, match='damaged row'):  # through the artifact, read by docno as an encoder
            EmbeddingCache(reopened.path).lookup(['a'])
    assert not marker.exists()


def _old_cache(folder: Path, marker: Path) -> None:
    """A schema-2 cache as the previous version wrote it: pyterrier-caching's kv/ folder, pickled keys and values
    (the values here a payload)."""
    from pyterrier_caching import Sqlite3KeyValueCache
    folder.mkdir(parents=True)
    (folder / 'encoder.json').write_text(json.dumps({**IDENTITY, 'cache_schema': 2}))
    Sqlite3KeyValueCache(str(folder / 'kv'), key=('docno', 'text_sha'), value='doc_vec').close()
    with sqlite3.connect(str(folder / 'kv' / 'db.sqlite3')) as db:
        db.execute('INSERT INTO cache (key, value) VALUES (?, ?)', (pickle.dumps(('a', ''), protocol=4), _payload(marker)))


def test_an_old_pickled_cache_is_refused_never_read(tmp_path, caplog):
    marker = tmp_path / 'pwned'
    old = tmp_path / 'root' / 'fake-0123456789abcdef'
    _old_cache(old, marker)
    with pytest.raises(CacheError, match=rf'{old} is an embedding cache of an old format \(schema 2.*delete that folder '
                                         rf'\(rm -r {old}\)'):
        EmbeddingCache(old)
    # planted under the very name a schema-3 identity gets: refused as well
    planted = tmp_path / 'root2' / cache_mod.identity_key({**IDENTITY, 'cache_schema': cache_mod.SCHEMA})
    _old_cache(planted, marker)
    with pytest.raises(CacheError, match='old format'):
        EmbeddingCache(tmp_path / 'root2', IDENTITY)
    # beside a new cache of the same model: not read, one warning naming it
    with caplog.at_level('WARNING'):
        fresh = EmbeddingCache(tmp_path / 'root', IDENTITY)
    assert fresh.get(['a']) == {} and str(old) in caplog.text
    assert not marker.exists()


def test_opening_a_folder_that_is_not_a_cache(tmp_path):
    with pytest.raises(CacheError, match='does not exist'):
        EmbeddingCache(tmp_path / 'nothing')
    (tmp_path / 'file').write_text('x')
    with pytest.raises(CacheError, match='is a file'):
        EmbeddingCache(tmp_path / 'file')
    cache = EmbeddingCache(tmp_path / 'root', IDENTITY)
    with sqlite3.connect(str(cache.path / 'vectors.sqlite3')) as db:
        db.execute("UPDATE meta SET value = '<f8' WHERE key = 'dtype'")
    with pytest.raises(CacheError, match=r"records schema '3' and dtype '<f8'"):
        EmbeddingCache(cache.path)
    with sqlite3.connect(str(cache.path / 'vectors.sqlite3')) as db:  # a view in place of the table
        db.execute('DROP TABLE vectors')
        db.execute("CREATE VIEW vectors AS SELECT 'a' AS docno, '' AS text_sha, x'00' AS vector")
    with pytest.raises(CacheError, match='not an embedding cache of this package'):
        EmbeddingCache(cache.path)


def _entry_point() -> EntryPoint:
    cfg = configparser.ConfigParser()
    cfg.read(ROOT / 'setup.cfg')
    lines = [line.strip() for line in cfg['options.entry_points']['pyterrier.artifact'].splitlines() if line.strip()]
    assert lines == ['embedding_cache.sqlite3 = pyterrier_frechet.vectors.cache:EmbeddingCache']
    name, value = (part.strip() for part in lines[0].split('='))
    return EntryPoint(name=name, value=value, group='pyterrier.artifact')


def test_the_cache_folder_is_a_pyterrier_artifact(tmp_path, monkeypatch):
    cache = EmbeddingCache(tmp_path, IDENTITY)
    cache.put(['a', 'b'], np.array([[1.0, 2.0], [3.0, 4.0]]))
    ep = _entry_point()
    assert ep.load() is EmbeddingCache
    assert pt.inspect.artifact_type_format(cache) == ('embedding_cache', 'sqlite3')
    # pt.Artifact.load finds the class through the entry point named by pt_meta.json's type.format (the installed
    # metadata of an editable install predates the entry point, so it is given here as setup.cfg declares it)
    real = pt.utils.entry_points
    monkeypatch.setattr(pt.utils, 'entry_points',
                        lambda group: (real(group) + (ep,)) if group == 'pyterrier.artifact' else real(group))
    loaded = pt.Artifact.load(str(cache.path))
    assert isinstance(loaded, EmbeddingCache) and loaded.identity == cache.identity
    vecs, found = loaded.lookup(['b', 'zz', 'a'])
    assert found.tolist() == [True, False, True]
    np.testing.assert_array_equal(vecs[[0, 2]], np.float32([[3, 4], [1, 2]]))
    assert np.isnan(vecs[1]).all()
    assert isinstance(EmbeddingCache.load(str(cache.path)), EmbeddingCache)


def test_put_checks_lengths_dimension_and_values(tmp_path):
    """S5: no silent truncation by zip, no vector of another dimension, nothing written when refused."""
    cache = EmbeddingCache(tmp_path, IDENTITY)
    with pytest.raises(ValueError, match=r'3 docnos, vectors of shape \(2, 4\)'):
        cache.put(['a', 'b', 'c'], np.ones((2, 4)))
    with pytest.raises(ValueError, match=r'2 docnos, vectors of shape \(2, 4\) and 1 texts'):
        cache.put(['a', 'b'], np.ones((2, 4)), ['x'])
    with pytest.raises(ValueError, match=r'vectors of shape \(4,\)'):
        cache.put(['a'], np.ones(4))
    with pytest.raises(ValueError, match='NaN or inf'):
        cache.put(['a', 'b'], np.array([[1.0, np.nan], [1.0, 2.0]]))
    with pytest.raises(ValueError, match='n x d array'):
        cache.put(['a', 'b'], [np.ones(3), np.ones(4)])
    assert len(cache) == 0
    cache.put(['a', 'b'], np.ones((2, 4)))
    with pytest.raises(ValueError, match=r'5-d vectors, but this cache holds 4-d'):
        cache.put(['c'], np.ones((1, 5)))
    with pytest.raises(ValueError, match=r'5-d vectors, but this cache holds 4-d'):  # another object, same folder
        EmbeddingCache(tmp_path, IDENTITY).put(['c'], np.ones((1, 5)))
    assert len(cache) == 2
    with pytest.raises(ValueError, match='2 docnos but 1 texts'):
        cache.get(['a', 'b'], ['x'])


def test_a_docno_stored_without_and_with_text_says_so(tmp_path):
    """U2: the message names the two kinds of entries instead of 'several different texts'."""
    cache = EmbeddingCache(tmp_path, IDENTITY)
    cache.put(['a', 'b'], np.ones((2, 3)))  # precomputed, no text
    cache.put(['a'], np.zeros((1, 3)), ['the text of a'])
    cache.put(['c', 'c'], np.ones((2, 3)), ['one text', 'another text'])
    with pytest.raises(ValueError, match=r"1 docno\(s\) stored once without their text .* e.g. \['a'\]"):
        cache.get(['a', 'b'])
    with pytest.raises(ValueError, match=r"without their text .*\['a'\] and vectors of several different texts for "
                                         r"1 docno\(s\), e.g. \['c'\]"):
        cache.get(['a', 'c'])
    np.testing.assert_array_equal(cache.get(['b'])['b'], np.ones(3, dtype=np.float32))
    np.testing.assert_array_equal(cache.get(['a'], ['the text of a'])['a'], np.zeros(3, dtype=np.float32))


@pytest.mark.parametrize('value', ['', '   '])
def test_an_empty_cache_variable_is_unset(monkeypatch, tmp_path, value):
    """K3: PYTERRIER_FRECHET_CACHE='' never means the current directory."""
    monkeypatch.setenv('PYTERRIER_FRECHET_CACHE', value)
    monkeypatch.setenv('HOME', str(tmp_path / 'home'))
    monkeypatch.chdir(tmp_path)
    assert cache_mod.default_cache_root() == tmp_path / 'home' / '.cache' / 'pyterrier_frechet'
    from pyterrier_frechet.vectors import models
    assert models.model_dir('splade-tiny') == tmp_path / 'home' / '.cache' / 'pyterrier_frechet' / 'models' / 'splade-tiny'


@pytest.mark.parametrize('umask', [0o022, 0o027])
def test_every_cache_file_follows_the_umask(tmp_path, umask):
    # round seven: encoder.json and pt_meta.json were written 0600 (tempfile.mkstemp) beside a 0644 database, so a
    # cache shared by a group could not be opened by its other members
    import os
    import stat
    old = os.umask(umask)
    try:
        cache = EmbeddingCache(tmp_path / 'c', IDENTITY)
        cache.put(['a'], np.ones((1, 4), dtype=np.float32))
    finally:
        os.umask(old)
    modes = {p.name: stat.S_IMODE(p.stat().st_mode) for p in cache.path.iterdir() if p.is_file()}
    assert {'encoder.json', 'pt_meta.json'} <= set(modes)
    assert all(mode == 0o666 & ~umask for mode in modes.values()), modes
