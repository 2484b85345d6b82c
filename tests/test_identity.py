"""Issue 25's one identity (S3, S6, U3): whatever can give different vectors gets a different identity and a different
column label; the same vectors, the same identity — drawn by hypothesis over encoders and sources."""
import os
import shutil
from functools import lru_cache

import ir_measures
import numpy as np
import pandas as pd
import pyterrier as pt
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import pyterrier_frechet as pf
from pyterrier_frechet.measures.base import column_label
from pyterrier_frechet.pipelines.tiny import WORDS, tiny_encoder
from pyterrier_frechet.vectors.identity import encoder_identity
from conftest import reference_fd

DOCNOS = [f'd{i}' for i in range(8)]
TEXTS = {d: ' '.join(WORDS[(i * 3 + j) % len(WORDS)] for j in range(2 + i % 3)) for i, d in enumerate(DOCNOS)}
EDITED = {**TEXTS, 'd3': TEXTS['d3'] + ' ' + WORDS[0]}


@pytest.fixture(scope='module')
def folders(tmp_path_factory):
    """Three model folders all named 'm': two with the same weights (a copy), one with other weights; and vector
    files: one, a byte-identical copy elsewhere, and one with one value changed."""
    root = tmp_path_factory.mktemp('identity')
    a = tiny_encoder(root / 'a' / 'm', seed=0)
    b = tiny_encoder(root / 'b' / 'm', seed=1)
    shutil.copytree(a, root / 'c' / 'm')
    rng = np.random.default_rng(0)
    vecs = rng.normal(size=(len(DOCNOS), 4)).astype(np.float32)
    stores = {}
    for name, v in (('s1', vecs), ('s2', vecs), ('s3', np.where(np.arange(4) == 2, vecs + 1, vecs).astype(np.float32))):
        (root / name).mkdir()
        np.save(root / name / 'v.npy', v)
        (root / name / 'v.ids.txt').write_text('\n'.join(DOCNOS) + '\n')
        stores[name] = str(root / name / 'v')
    return {'models': {'a': a, 'b': b, 'a-copy': str(root / 'c' / 'm')}, 'stores': stores}


EMBEDDERS = [('embedder', model, pooling, normalize, texts)
             for model in ('a', 'b', 'a-copy') for pooling in ('mean', 'cls') for normalize in (False, True)
             for texts in ('texts', 'texts-copy', 'edited')]
STORES = [('store', name) for name in ('s1', 's2', 's3')]


def _make(folders, config):
    if config[0] == 'store':
        return pf.VectorStore(folders['stores'][config[1]])
    _, model, pooling, normalize, texts = config
    source = {'texts': TEXTS, 'texts-copy': dict(TEXTS), 'edited': EDITED}[texts]
    return pf.Embedder(folders['models'][model], pooling=pooling, normalize=normalize, texts=source, cache_dir=None,
                       verbose=False)


@pytest.fixture(scope='module')
def made(folders):
    @lru_cache(maxsize=None)
    def get(config):
        enc = _make(folders, config)
        vecs, found = enc.lookup(DOCNOS)
        return enc, np.asarray(vecs, dtype=np.float32), found
    get.fresh = lambda config: _make(folders, config)
    return get


@settings(max_examples=150, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
@given(st.sampled_from(EMBEDDERS + STORES), st.sampled_from(EMBEDDERS + STORES))
def test_different_vectors_have_different_identities_and_columns(made, x, y):
    (ex, vx, fx), (ey, vy, fy) = made(x), made(y)
    same = fx.all() and fy.all() and vx.shape == vy.shape and np.array_equal(vx, vy)
    if same:
        assert encoder_identity(ex) == encoder_identity(ey)
    else:
        assert encoder_identity(ex) != encoder_identity(ey)
        assert column_label(pf.FD(encoder=ex) @ 10) != column_label(pf.FD(encoder=ey) @ 10)
        assert repr(ex) != repr(ey)
    # a fresh object of the same configuration: the same identity (never id())
    assert encoder_identity(made.fresh(x)) == encoder_identity(ex)


def test_the_draws_cover_both_sides(made):
    # the property above is not vacuous: the space holds equal vectors under different objects/paths, and different
    # vectors under equal names
    _, v1, _ = made(('embedder', 'a', 'mean', False, 'texts'))
    _, v2, _ = made(('embedder', 'a-copy', 'mean', False, 'texts-copy'))
    _, v3, _ = made(('embedder', 'b', 'mean', False, 'texts'))
    _, v4, _ = made(('embedder', 'a', 'mean', False, 'edited'))
    assert np.array_equal(v1, v2) and not np.array_equal(v1, v3)
    assert np.array_equal(v1[[0, 1, 2, 4]], v4[[0, 1, 2, 4]]) and not np.array_equal(v1[3], v4[3])
    assert np.array_equal(made(('store', 's1'))[1], made(('store', 's2'))[1])


def _toy_frames(docnos):
    qrels = pd.DataFrame([('q1', docnos[0], 1), ('q1', docnos[1], 1), ('q1', docnos[2], 1),
                          ('q2', docnos[4], 1), ('q2', docnos[5], 1), ('q2', docnos[6], 1)], columns=['qid', 'docno', 'label'])
    run = pd.DataFrame([(q, d, 10.0 - r) for q, ds in (('q1', docnos[:4]), ('q2', docnos[4:])) for r, d in enumerate(ds)],
                       columns=['qid', 'docno', 'score'])
    return qrels, run


def test_embedders_differing_only_in_texts_or_same_named_folders_are_two_columns(folders):
    """S3: texts= and model folders of one basename print differently and give separate columns."""
    qrels, run = _toy_frames(DOCNOS)
    a = pf.Embedder(folders['models']['a'], texts=TEXTS, cache_dir=None, verbose=False)
    edited = pf.Embedder(folders['models']['a'], texts=EDITED, cache_dir=None, verbose=False)
    b = pf.Embedder(folders['models']['b'], texts=TEXTS, cache_dir=None, verbose=False)
    measures = [pf.FD(encoder=e) @ 3 for e in (a, edited, b)]
    assert len({str(m) for m in measures}) == 3
    got = ir_measures.calc_aggregate(measures, pt.model.to_ir_measures(qrels), pt.model.to_ir_measures(run))
    assert len(got) == 3
    for m, e in zip(measures, (a, edited, b)):  # each column its own encoder's value (an independent reference)
        vec = lambda ds: e.lookup(ds)[0]  # noqa: E731
        expected = reference_fd(vec(['d0', 'd1', 'd2', 'd4', 'd5', 'd6']), vec(['d0', 'd1', 'd2', 'd4', 'd5', 'd6']))
        assert got[m] == pytest.approx(expected, abs=1e-9)
    # cutoff 3 retrieves d0 d1 d2 / d4 d5 d6, the relevant sets: FD 0 whatever the encoder. With d3 in the relevant
    # set, the edited text moves the value: the columns differ in value too
    qrels3 = pd.concat([qrels, pd.DataFrame([('q1', 'd3', 1)], columns=['qid', 'docno', 'label'])])
    res = pt.Experiment([pt.Transformer.from_df(run)], pd.DataFrame({'qid': ['q1', 'q2'], 'query': ['x', 'y']}), qrels3,
                        [pf.FD(encoder=a) @ 3, pf.FD(encoder=edited) @ 3])
    assert len([c for c in res.columns if c.startswith('FD')]) == 2
    for e in (a, edited):
        v = e.lookup(['d0', 'd1', 'd2', 'd3', 'd4', 'd5', 'd6'])[0]
        assert res[str(pf.FD(encoder=e) @ 3)].iloc[0] == pytest.approx(reference_fd(v, v[[0, 1, 2, 4, 5, 6]]), abs=1e-9)
    assert res[str(pf.FD(encoder=a) @ 3)].iloc[0] != res[str(pf.FD(encoder=edited) @ 3)].iloc[0]


def test_a_vector_file_rewritten_with_its_size_and_mtime_is_read_again(tmp_path):
    """S6: cp -p / rsync -t / tar keep size and mtime; the relevant-vector memo is keyed by content, not by them."""
    rng = np.random.default_rng(3)
    docnos = [f'd{i}' for i in range(8)]
    old, new = rng.normal(size=(8, 3)), rng.normal(size=(8, 3)) * 3 + 1
    prefix = tmp_path / 'v'
    np.save(f'{prefix}.npy', old)
    (tmp_path / 'v.ids.txt').write_text('\n'.join(docnos) + '\n')
    qrels, run = _toy_frames(docnos)
    qrels_ir, run_ir = pt.model.to_ir_measures(qrels), pt.model.to_ir_measures(run)
    store = pf.VectorStore(str(prefix))
    m = pf.FD(encoder=store) @ 2
    rel, ret = [0, 1, 2, 4, 5, 6], [0, 1, 4, 5]
    assert ir_measures.calc_aggregate([m], qrels_ir, run_ir)[m] == pytest.approx(reference_fd(old[rel], old[ret]), abs=1e-9)
    st = os.stat(f'{prefix}.npy')
    np.save(f'{prefix}.npy', new)
    os.utime(f'{prefix}.npy', ns=(st.st_atime_ns, st.st_mtime_ns))
    after = os.stat(f'{prefix}.npy')
    assert (after.st_size, after.st_mtime_ns) == (st.st_size, st.st_mtime_ns)
    expected = reference_fd(new[rel], new[ret])
    for enc in (store, pf.VectorStore(str(prefix))):  # the same object and a new one
        m = pf.FD(encoder=enc) @ 2
        assert ir_measures.calc_aggregate([m], qrels_ir, run_ir)[m] == pytest.approx(expected, abs=1e-9)
    # replaced by rename (rsync's way) with the old mtime: the object reads the new file, not its old map
    np.save(tmp_path / 'other.npy', old)
    os.replace(tmp_path / 'other.npy', f'{prefix}.npy')
    os.utime(f'{prefix}.npy', ns=(st.st_atime_ns, st.st_mtime_ns))
    m = pf.FD(encoder=store) @ 2
    assert ir_measures.calc_aggregate([m], qrels_ir, run_ir)[m] == pytest.approx(reference_fd(old[rel], old[ret]), abs=1e-9)


def test_unicode_normalisation_is_hinted(tmp_path, folders):
    """U3: NFC and NFD docnos print alike; the 'no vector' errors say when a normalised form would match."""
    import unicodedata
    nfc = unicodedata.normalize('NFC', 'caf\u00e9')
    nfd = unicodedata.normalize('NFD', nfc)
    assert nfc != nfd
    docnos = [nfc, 'b', 'c', 'd']
    np.save(tmp_path / 'v.npy', np.random.default_rng(0).normal(size=(4, 3)))
    (tmp_path / 'v.ids.txt').write_text('\n'.join(docnos) + '\n', encoding='utf-8')
    store = pf.VectorStore(str(tmp_path / 'v'))
    qrels = pd.DataFrame([('q1', nfd, 1), ('q1', 'b', 1), ('q1', 'c', 1)], columns=['qid', 'docno', 'label'])
    run = pd.DataFrame([('q1', 'b', 3.0), ('q1', 'c', 2.0), ('q1', 'd', 1.0)], columns=['qid', 'docno', 'score'])
    m = pf.FD(encoder=store) @ 3
    with pytest.raises(ValueError, match=r"have no vector, e.g. .*differ from known ones only in Unicode normalisation "
                                         r"\('cafe\\u0301' is 'caf\\xe9' in NFC\)"):
        ir_measures.calc_aggregate([m], pt.model.to_ir_measures(qrels), pt.model.to_ir_measures(run))
    with pytest.raises(ValueError, match='Unicode normalisation'):
        store(pd.DataFrame({'docno': [nfd]}))
    emb = pf.Embedder(folders['models']['a'], texts={nfc: 'the wing'}, cache_dir=None, verbose=False)
    with pytest.raises(ValueError, match=r"no text for 1 document.*Unicode normalisation \('cafe\\u0301' is"):
        emb(pd.DataFrame({'docno': [nfd]}))
    # an ASCII docno that is simply absent gets no such hint
    with pytest.raises(ValueError) as info:
        store(pd.DataFrame({'docno': ['zz']}))
    assert 'Unicode' not in str(info.value)
