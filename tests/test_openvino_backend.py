"""The opt-in OpenVINO backend of the Embedder: the same vectors as torch (fp32), within the stated agreement
(bf16), its own cache identity, refusals before any work. Tiny random models built from a config, and the bundled
all-MiniLM-L6-v2 on Cranfield texts (no download)."""
import numpy as np
import pandas as pd
import pytest

import pyterrier_frechet as pf
from pyterrier_frechet.pipelines.tiny import tiny_encoder


DOCS = pd.DataFrame({'docno': ['d1', 'd2', 'd3', 'd4'],
                     'text': ['alpha beta gamma', 'a much longer text about retrieval and evaluation', 'delta',
                              '  padded with spaces  ']})


@pytest.fixture(scope='module')
def models(tmp_path_factory):
    root = tmp_path_factory.mktemp('models')
    bert = tiny_encoder(root / 'tiny-bert', seed=0, kind='bert')
    distil = tiny_encoder(root / 'tiny-distilbert', seed=1, kind='distilbert')  # no token_type_ids
    from sentence_transformers import SentenceTransformer, models as st_models
    out = {'bert': bert, 'distil': distil}
    for pooling in ('cls', 'mean', 'max'):
        word = st_models.Transformer(bert)
        st = SentenceTransformer(modules=[word, st_models.Pooling(word.get_embedding_dimension(), pooling),
                                          st_models.Normalize()])
        st.save(str(root / f'tiny-st-{pooling}'))
        out[f'st-{pooling}'] = str(root / f'tiny-st-{pooling}')
    word = st_models.Transformer(bert)
    dense = st_models.Dense(word.get_embedding_dimension(), 8)
    SentenceTransformer(modules=[word, st_models.Pooling(word.get_embedding_dimension(), 'mean'), dense]).save(
        str(root / 'tiny-st-dense'))
    out['st-dense'] = str(root / 'tiny-st-dense')
    return out


def _vectors(frame):
    return np.stack(frame.doc_vec)


@pytest.mark.slow  # needs openvino (the [slow] extra: the fast set runs without it)
@pytest.mark.parametrize('kind', ['bert', 'distil'])
@pytest.mark.parametrize('pooling,normalize', [('mean', False), ('cls', True)])
def test_plain_transformers_give_the_torch_vectors(models, tmp_path, kind, pooling, normalize):
    torch_emb = pf.Embedder(models[kind], pooling=pooling, normalize=normalize, cache_dir=None, verbose=False)
    ov_emb = pf.Embedder(models[kind], pooling=pooling, normalize=normalize, backend='openvino', cache_dir=tmp_path,
                         verbose=False)
    np.testing.assert_allclose(_vectors(ov_emb(DOCS)), _vectors(torch_emb(DOCS)), rtol=1e-4, atol=1e-5)


@pytest.mark.slow  # needs openvino (the [slow] extra: the fast set runs without it)
@pytest.mark.parametrize('pooling', ['cls', 'mean', 'max'])
def test_sentence_transformers_pipelines_give_the_torch_vectors(models, tmp_path, pooling):
    from sentence_transformers import SentenceTransformer
    expected = SentenceTransformer(models[f'st-{pooling}'], device='cpu').encode(DOCS.text.tolist())
    ov_emb = pf.Embedder(models[f'st-{pooling}'], backend='openvino', cache_dir=tmp_path, verbose=False)
    np.testing.assert_allclose(_vectors(ov_emb(DOCS)), expected, rtol=1e-4, atol=1e-5)


@pytest.mark.slow  # needs openvino (the [slow] extra: the fast set runs without it)
def test_the_default_model_in_fp32_and_bf16(tmp_path):
    # all-MiniLM-L6-v2 on 120 Cranfield abstracts: fp32 equals torch to float32 round-off; bf16 keeps every
    # document's cosine to the fp32 vector >= 0.999 (BENCHMARKS.md: >= 0.99997 on 600 DL19 passages)
    from pyterrier_frechet.data.bundled import cranfield
    texts = [t for t in cranfield().texts.values() if t.strip()][:120]
    reference = pf.Embedder(cache_dir=None, verbose=False).encode(texts)
    fp32 = pf.Embedder(backend='openvino', cache_dir=tmp_path, verbose=False).encode(texts)
    cos = (fp32 * reference).sum(1) / np.linalg.norm(fp32, axis=1) / np.linalg.norm(reference, axis=1)
    assert cos.min() > 0.99999 and np.abs(fp32 - reference).max() < 1e-5
    try:
        bf16 = pf.Embedder(backend='openvino', precision='bf16', cache_dir=tmp_path, verbose=False)
        vecs = bf16.encode(texts)
    except ValueError as ex:  # a CPU without bfloat16 instructions: the refusal says so
        assert 'bfloat16' in str(ex) and "precision='fp32'" in str(ex)
        return
    cos = (vecs * reference).sum(1) / np.linalg.norm(vecs, axis=1) / np.linalg.norm(reference, axis=1)
    assert cos.min() >= 0.999


@pytest.mark.slow  # needs openvino (the [slow] extra: the fast set runs without it)
def test_backends_never_share_cached_vectors(models, tmp_path):
    torch_emb = pf.Embedder(models['st-mean'], cache_dir=tmp_path, verbose=False)
    torch_emb(DOCS)
    ov_emb = pf.Embedder(models['st-mean'], backend='openvino', cache_dir=tmp_path, verbose=False)
    ov_emb(DOCS)
    assert torch_emb.n_encoded == 4 and ov_emb.n_encoded == 4  # nothing served across backends
    paths = {torch_emb.cache.path, ov_emb.cache.path,
             pf.Embedder(models['st-mean'], backend='openvino', precision='bf16', cache_dir=tmp_path).cache.path}
    assert len(paths) == 3
    assert ov_emb.identity['backend'] == 'openvino' and 'backend' not in torch_emb.identity  # torch caches unchanged
    again = pf.Embedder(models['st-mean'], backend='openvino', cache_dir=tmp_path, verbose=False)
    again(DOCS)
    assert again.n_encoded == 0
    assert repr(ov_emb) == f"Embedder('tiny-st-mean', backend='openvino', id={ov_emb.identity_digest})"
    bf16 = pf.Embedder(models['bert'], pooling='cls', backend='openvino', precision='bf16', cache_dir=None)
    assert repr(bf16) == f"Embedder('tiny-bert', pooling='cls', backend='openvino', precision='bf16', id={bf16.identity_digest})"


@pytest.mark.slow  # needs openvino (the [slow] extra: the fast set runs without it)
def test_the_converted_model_is_kept_and_reused(models, tmp_path, monkeypatch):
    from pyterrier_frechet.vectors import openvino_backend
    pf.Embedder(models['bert'], backend='openvino', cache_dir=tmp_path, verbose=False).encode(['one text'])
    assert len(list((tmp_path / 'openvino').glob('*/model.xml'))) == 1

    def no_conversion(self, openvino):
        raise AssertionError('converted again')
    monkeypatch.setattr(openvino_backend.OpenVINOEncoder, '_convert', no_conversion)
    vec = pf.Embedder(models['bert'], backend='openvino', cache_dir=tmp_path, verbose=False).encode(['one text'])
    assert vec.shape[0] == 1


@pytest.mark.slow  # needs openvino (the [slow] extra): its package check comes first
def test_openvino_refusals_come_before_any_work(models):
    with pytest.raises(ValueError, match='Dense'):
        pf.Embedder(models['st-dense'], backend='openvino', cache_dir=None)
    with pytest.raises(ValueError, match="encodes on this machine's CPU"):
        pf.Embedder(models['st-mean'], backend='openvino', devices=['cpu', 'cpu'], cache_dir=None)
    with pytest.raises(ValueError, match="precision must be"):
        pf.Embedder(models['bert'], backend='openvino', precision='int8', cache_dir=None)


def test_refusals_come_before_any_work(models):
    with pytest.raises(ValueError, match="precision='bf16' is offered by backend='openvino'"):
        pf.Embedder(models['bert'], precision='bf16', cache_dir=None)
    with pytest.raises(ValueError, match="backend must be 'torch' or 'openvino'"):
        pf.Embedder(models['bert'], backend='onnx', cache_dir=None)


def test_a_missing_openvino_package_is_named_before_any_work(models, monkeypatch):
    import importlib.util
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, 'find_spec', lambda name, *a: None if name == 'openvino' else real(name, *a))
    with pytest.raises(ValueError, match=r"needs the openvino package, which the \[openvino\] extra installs: "
                                         r"pip install -e '\.\[openvino\]' .* or pip install openvino$"):
        pf.Embedder(models['bert'], backend='openvino', cache_dir=None)
