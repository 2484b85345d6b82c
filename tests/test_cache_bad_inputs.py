"""The cache's bad-input round (issue 52): a planted schema object (trigger, view, table, index) refused on opening,
a NaN/inf row named as the cache's, a read-only cache that serves reads, a symlink at the database path refused."""
import os
import sqlite3
import struct
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import pyterrier_frechet as pf
from pyterrier_frechet.pipelines.tiny import tiny_encoder
from pyterrier_frechet.vectors import cache as cache_mod
from pyterrier_frechet.vectors.cache import CacheError, EmbeddingCache
from pyterrier_frechet.vectors.sources import lookup_vectors

IDENTITY = {'name': 'fake', 'hash': 'abc'}
DOCNOS = [f'd{i}' for i in range(8)]


def _filled(root: Path) -> EmbeddingCache:
    cache = EmbeddingCache(root, IDENTITY)
    cache.put(DOCNOS, np.arange(8 * 16, dtype=np.float32).reshape(8, 16) + 1, [f'text {d}' for d in DOCNOS])
    return cache


def _db(cache: EmbeddingCache) -> Path:
    return cache.path / 'vectors.sqlite3'


# --- 1: the database must hold exactly the schema the package creates -------------------------------------------

def test_a_planted_trigger_is_refused_before_it_poisons_new_vectors(tmp_path):
    """The reproduction: half the rows deleted, a trigger zeroing every row inserted; opening is refused (before the
    fix, the missing half was stored as zeros and a later run read them)."""
    cache = _filled(tmp_path)
    cache.close()
    with sqlite3.connect(str(_db(cache))) as db:
        db.execute("DELETE FROM vectors WHERE docno IN ('d4', 'd5', 'd6', 'd7')")
        db.execute('CREATE TRIGGER t3 AFTER INSERT ON vectors BEGIN UPDATE vectors SET vector = zeroblob(64) '
                   'WHERE rowid = NEW.rowid; END')
    for open_it in (lambda: EmbeddingCache(tmp_path, IDENTITY), lambda: EmbeddingCache(cache.path)):
        with pytest.raises(CacheError, match=rf"{_db(cache)} is not an embedding cache of this package: .*objects it does "
                                             rf"not create: trigger 't3'.*Delete the folder {cache.path}"):
            open_it()
    with sqlite3.connect(str(_db(cache))) as db:  # nothing was written
        assert db.execute('SELECT COUNT(*) FROM vectors').fetchone()[0] == 4


_NAME = st.from_regex(r'[a-z][a-z0-9_]{0,8}', fullmatch=True).filter(
    lambda n: n not in {'meta', 'vectors'} and not n.startswith('sqlite'))  # names SQLite reserves or the package uses
_PLANTS = st.one_of(
    st.tuples(st.just('trigger'), _NAME, st.sampled_from(['BEFORE', 'AFTER']), st.sampled_from(['INSERT', 'UPDATE', 'DELETE']),
              st.sampled_from(['vectors', 'meta'])).map(
        lambda t: (t[0], t[1], f'CREATE TRIGGER "{t[1]}" {t[2]} {t[3]} ON {t[4]} BEGIN SELECT 1; END')),
    _NAME.map(lambda n: ('view', n, f'CREATE VIEW "{n}" AS SELECT docno FROM vectors')),
    _NAME.map(lambda n: ('table', n, f'CREATE TABLE "{n}" (x)')),
    st.tuples(_NAME, st.sampled_from(['vectors(docno)', 'vectors(vector)', 'meta(value)', 'vectors(text_sha, docno)'])).map(
        lambda t: ('index', t[0], f'CREATE INDEX "{t[0]}" ON {t[1]}')),
    st.just(('table', 'vectors', None)),  # the table itself redefined (an extra column)
)


@settings(max_examples=40, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
@given(plants=st.lists(_PLANTS, min_size=1, max_size=3, unique_by=lambda p: p[1]), by_folder=st.booleans())
def test_any_extra_schema_object_is_refused(tmp_path_factory, plants, by_folder):
    """Whatever object is planted (trigger, view, table, index, or a table redefined), opening is refused, naming the
    database; the cache as the package made it opens (the control)."""
    root = tmp_path_factory.mktemp('plant')
    cache = _filled(root)
    cache.close()
    EmbeddingCache(root, IDENTITY).close()  # the control: the untouched cache opens
    with sqlite3.connect(str(_db(cache))) as db:
        for kind, name, sql in plants:
            if sql is None:
                db.execute('ALTER TABLE vectors ADD COLUMN extra TEXT')
            else:
                db.execute(sql)
    with pytest.raises(CacheError, match=rf'{_db(cache)} is not an embedding cache of this package') as err:
        EmbeddingCache(cache.path) if by_folder else EmbeddingCache(root, IDENTITY)
    kind, name, sql = plants[0]
    assert (f"{kind} {name!r}" in str(err.value)) if sql is not None else ("table 'vectors'" in str(err.value))


def test_the_expected_schema_is_what_the_package_creates(tmp_path):
    cache = _filled(tmp_path)
    with sqlite3.connect(str(_db(cache))) as db:
        master = db.execute('SELECT type, name FROM sqlite_master ORDER BY type, name').fetchall()
    assert master == [('index', 'sqlite_autoindex_meta_1'), ('index', 'sqlite_autoindex_vectors_1'),
                      ('table', 'meta'), ('table', 'vectors')]


# --- 2: a NaN/inf row is the cache's damage, not the encoder's -------------------------------------------------

@pytest.mark.parametrize('value', [float('nan'), float('inf'), float('-inf')])
def test_a_non_finite_row_names_the_docno_and_the_cache_folder(tmp_path, value):
    cache = _filled(tmp_path)
    cache.close()
    with sqlite3.connect(str(_db(cache))) as db:
        db.execute("UPDATE vectors SET vector = ? WHERE docno = 'd3'", (struct.pack('<16f', *([1.0] * 15 + [value])),))
    reopened = EmbeddingCache(tmp_path, IDENTITY)
    with pytest.raises(CacheError, match=rf"the embedding cache at {reopened.path} holds a damaged row for 1 docno\(s\), "
                                         r"e.g. \['d3'\]: NaN or inf values.*delete that directory"):
        reopened.get(DOCNOS, [f'text {d}' for d in DOCNOS])
    with pytest.raises(CacheError, match=r"damaged row .*\['d3'\]"):  # as FD's encoder: named as the cache's, not the encoder's
        lookup_vectors(EmbeddingCache(reopened.path), ['d1', 'd3'])
    np.testing.assert_array_equal(reopened.get(['d2'])['d2'], np.arange(32, 48, dtype=np.float32) + 1)  # others fine


# --- 3: a cache that cannot be written serves reads -------------------------------------------------------------

class CountingEmbedder(pf.Embedder):
    calls = 0

    def encode(self, texts):
        CountingEmbedder.calls += len(texts)
        return super().encode(texts)


@pytest.fixture(scope='module')
def bert(tmp_path_factory):
    return tiny_encoder(tmp_path_factory.mktemp('ro') / 'tiny-bert', seed=0)


def _snapshot(folder: Path):
    return sorted((p.name, p.stat().st_size, p.stat().st_mtime_ns) for p in folder.iterdir())


@pytest.mark.parametrize('how', ['chmod', 'access', 'explicit'])
def test_a_read_only_cache_serves_hits_and_refuses_a_miss_before_encoding(bert, tmp_path, monkeypatch, how):
    """chmod: a folder and database without write permission (skipped as root, where chmod restricts nothing);
    access: os.access saying 'not writable', as it does on a read-only file system even for root; explicit:
    read_only=True, the code path the detection selects."""
    if how == 'chmod' and os.geteuid() == 0:
        pytest.skip('root writes through chmod; the access and explicit cases take the same path')
    texts = {d: f'wing lift {i}' for i, d in enumerate(DOCNOS)}
    filler = pf.Embedder(bert, texts=texts, cache_dir=tmp_path, verbose=False)
    expected, _ = filler.lookup(DOCNOS[:6])
    folder = filler.cache.path
    filler.cache.close()
    (folder / '.lock').unlink()
    before = _snapshot(folder)
    if how == 'chmod':
        os.chmod(folder / 'vectors.sqlite3', 0o444)
        os.chmod(folder, 0o555)
    elif how == 'access':
        real = os.access
        monkeypatch.setattr(cache_mod.os, 'access', lambda p, mode, **kw: False if mode & os.W_OK else real(p, mode, **kw))
    try:
        CountingEmbedder.calls = 0
        if how == 'explicit':
            emb = CountingEmbedder(bert, texts=texts, cache_dir=None, verbose=False)
            emb.cache = EmbeddingCache(tmp_path, filler.identity, read_only=True)
        else:
            emb = CountingEmbedder(bert, texts=texts, cache_dir=tmp_path, verbose=False)
        assert emb.cache.read_only
        vecs, found = emb.lookup(DOCNOS[:6])  # all hits
        assert found.all() and CountingEmbedder.calls == 0
        np.testing.assert_array_equal(vecs, expected)
        with pytest.raises(CacheError, match=rf"the embedding cache at {folder} is read-only .*2 document\(s\) are not in "
                                             r"it, e.g. \['d6', 'd7'\].*another cache_dir="):
            emb.lookup(DOCNOS)
        assert CountingEmbedder.calls == 0  # refused before encoding
        with pytest.raises(CacheError, match='is read-only'):
            emb.cache.put(['d6'], np.ones((1, 16)), ['x'])
        by_folder = EmbeddingCache(folder, **({'read_only': True} if how == 'explicit' else {}))
        assert by_folder.read_only
        np.testing.assert_array_equal(by_folder.lookup(['d2'])[0][0], expected[2])
        emb.cache.close()
        by_folder.close()
        assert _snapshot(folder) == before  # no lock file, no journal, nothing touched
    finally:
        os.chmod(folder, 0o755)
        os.chmod(folder / 'vectors.sqlite3', 0o644)


def test_a_read_only_folder_without_a_cache_is_a_clear_error(tmp_path, monkeypatch):
    folder = tmp_path / cache_mod.identity_key({**IDENTITY, 'cache_schema': cache_mod.SCHEMA})
    folder.mkdir()
    real = os.access
    monkeypatch.setattr(cache_mod.os, 'access', lambda p, mode, **kw: False if mode & os.W_OK else real(p, mode, **kw))
    with pytest.raises(CacheError, match=rf'{folder} cannot be written .*lacks encoder.json and vectors.sqlite3.*'
                                         'another cache_dir='):
        EmbeddingCache(tmp_path, IDENTITY)


# --- 4: the database path must be a regular file in the folder --------------------------------------------------

@pytest.mark.parametrize('dangling', [True, False])
def test_a_symlink_at_the_database_path_is_refused(tmp_path, dangling):
    cache = _filled(tmp_path / 'root')
    cache.close()
    elsewhere = tmp_path / 'elsewhere'
    elsewhere.mkdir()
    target = elsewhere / 'x.sqlite3'
    if not dangling:
        os.replace(_db(cache), target)
    else:
        _db(cache).unlink()
    os.symlink(target, _db(cache))
    for open_it in (lambda: EmbeddingCache(tmp_path / 'root', IDENTITY), lambda: EmbeddingCache(cache.path)):
        with pytest.raises(CacheError, match=rf"{_db(cache)} is a symlink to '{target}': the database of an embedding "
                                             r'cache must be a plain file inside its folder'):
            open_it()
    assert target.exists() != dangling  # a dangling link created nothing outside the folder
    assert list(elsewhere.iterdir()) == ([] if dangling else [target])


def test_a_symlink_at_a_journal_path_or_the_lock_is_refused(tmp_path):
    cache = _filled(tmp_path / 'root')
    cache.close()
    victim = tmp_path / 'victim.txt'
    victim.write_text('keep me')
    os.symlink(victim, cache.path / 'vectors.sqlite3-journal')
    with pytest.raises(CacheError, match=r"vectors.sqlite3-journal is a symlink"):
        EmbeddingCache(cache.path)
    (cache.path / 'vectors.sqlite3-journal').unlink()
    (cache.path / '.lock').unlink()
    os.symlink(victim, cache.path / '.lock')
    with pytest.raises(CacheError, match=r'could not be opened \(OSError'):
        EmbeddingCache(tmp_path / 'root', IDENTITY)
    assert victim.read_text() == 'keep me'  # not truncated through the planted lock
