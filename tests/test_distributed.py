"""vectors/distributed.py without starting Ray (the fast set): the worker actor's encoder is configured as the
driver's Embedder, and every refusal and the all-cached case happen before Ray is started. The run on a local
2-worker Ray is tests/test_embedder.py::test_ray_two_local_workers_equal_single_process_encoding (slow)."""
import numpy as np
import pandas as pd
import pytest

import pyterrier_frechet as pf
from pyterrier_frechet.pipelines.tiny import WORDS, tiny_encoder
from pyterrier_frechet.vectors.distributed import _EncodeBatch, encode_with_ray

TEXTS = [' '.join(WORDS[(i * 5 + j) % len(WORDS)] for j in range(2 + i % 6)) for i in range(12)]
DOCS = pd.DataFrame({'docno': [f'd{i}' for i in range(12)], 'text': TEXTS})


@pytest.fixture(scope='module')
def model(tmp_path_factory):
    return tiny_encoder(tmp_path_factory.mktemp('distributed') / 'tiny-bert')


def _config(emb):
    # what encode_with_ray hands each actor (device: CPU when no GPU is reserved)
    return {'model_name': emb.path, 'pooling': emb.pooling, 'normalize': emb.normalize, 'max_length': emb.max_length,
            'batch_size': emb.batch_size, 'device': 'cpu'}


def test_the_actor_encodes_as_the_drivers_embedder(model, tmp_path):
    emb = pf.Embedder(model, pooling='cls', normalize=True, max_length=6, cache_dir=tmp_path, verbose=False)
    out = _EncodeBatch(_config(emb))({'docno': DOCS.docno.to_numpy(), 'text': DOCS.text.to_numpy(dtype=object)})
    assert out['docno'].tolist() == DOCS.docno.tolist() and out['text'].tolist() == TEXTS
    expected = np.stack(emb(DOCS).doc_vec)  # the driver's own vectors, through its cache
    np.testing.assert_allclose(out['doc_vec'], expected, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(np.linalg.norm(out['doc_vec'], axis=1), 1.0, rtol=1e-5)  # normalize=True reached it
    # the settings matter here, so the equality above is not vacuous: the default pooling gives other vectors
    plain = pf.Embedder(model, cache_dir=None, verbose=False).encode(TEXTS)
    assert not np.allclose(plain, expected, atol=1e-3)


def _ray_not_started() -> bool:
    """Ray (an optional dependency: the [slow] extra installs it, the fast set runs without) never imported, or
    imported and not started."""
    import sys
    return 'ray' not in sys.modules or not sys.modules['ray'].is_initialized()


def test_refusals_come_before_ray_is_started(model, tmp_path):
    emb = pf.Embedder(model, cache_dir=tmp_path, verbose=False)
    with pytest.raises(ValueError, match='no cache'):
        encode_with_ray(pf.Embedder(model, cache_dir=None, verbose=False), DOCS)
    with pytest.raises(ValueError, match='num_workers and chunk_size must be positive'):
        encode_with_ray(emb, DOCS, num_workers=0)
    with pytest.raises(ValueError, match='num_workers and chunk_size must be positive'):
        encode_with_ray(emb, DOCS, chunk_size=0)
    with pytest.raises(ValueError, match=r'1 document\(s\) have no text'):
        encode_with_ray(emb, DOCS.assign(text=[None] + TEXTS[1:]))
    with pytest.raises(ValueError, match=r"empty or white-space-only text, e.g. \['d3'\]"):
        encode_with_ray(emb, DOCS.assign(text=TEXTS[:3] + ['  '] + TEXTS[4:]))
    assert _ray_not_started()


def test_nothing_left_to_encode_returns_zero_without_ray(model, tmp_path):
    emb = pf.Embedder(model, cache_dir=tmp_path, verbose=False)
    emb(DOCS)  # everything cached in this process
    assert emb.n_encoded == 12
    # repeated docnos are one document each; all are in the cache, so no Ray is started and nothing is counted
    assert encode_with_ray(emb, pd.concat([DOCS, DOCS.iloc[:3]]), verbose=False) == 0
    assert emb.n_encoded == 12 and _ray_not_started()


def test_a_missing_ray_is_named_after_the_refusals_and_the_cache(model, tmp_path, monkeypatch):
    import sys
    monkeypatch.setitem(sys.modules, 'ray', None)  # `import ray` raises ImportError, as where it is not installed
    emb = pf.Embedder(model, cache_dir=tmp_path, verbose=False)
    with pytest.raises(ValueError, match='num_workers and chunk_size must be positive'):  # refusals first
        encode_with_ray(emb, DOCS, num_workers=0)
    with pytest.raises(ValueError, match=r"encode_with_ray, to encode 12 document\(s\), needs ray\[data\] \(ray cannot be "
                                         r"imported\), which the \[ray\] extra installs: pip install -e '\.\[ray\]' .* or "
                                         r"pip install 'ray\[data\]'"):
        encode_with_ray(emb, DOCS)
    emb(DOCS)
    assert encode_with_ray(emb, DOCS) == 0  # nothing to encode: no Ray needed
