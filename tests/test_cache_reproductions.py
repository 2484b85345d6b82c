"""Issue 25's reproductions in the vectors layer, each a test: S2, S4, C5, C6, C7, K4, K5 (X1, S5, U2, K3 are in
test_cache.py; S3, S6, U3 in test_identity.py)."""
import hashlib
import json

import ir_measures
import numpy as np
import pandas as pd
import pyterrier as pt
import pytest
import torch

import pyterrier_frechet as pf
from pyterrier_frechet.cli import main
from pyterrier_frechet.pipelines.tiny import tiny_encoder
from pyterrier_frechet.vectors import models


@pytest.fixture(scope='module')
def bert(tmp_path_factory):
    return tiny_encoder(tmp_path_factory.mktemp('repro') / 'tiny-bert', seed=0)


def test_a_text_corpus_lacking_docnos_is_not_completed_from_the_cache(bert, tmp_path):
    """S2: a docno the given text source lacks has no vector, though another corpus left one in the cache."""
    full = {f'd{i}': f'wing lift {i}' for i in range(6)}
    partial = {d: t for d, t in full.items() if d not in ('d4', 'd5')}
    pf.Embedder(bert, texts=full, cache_dir=tmp_path, verbose=False).lookup(list(full))  # the other corpus, cached
    emb = pf.Embedder(bert, texts=partial, cache_dir=tmp_path, verbose=False)
    vecs, found = emb.lookup(list(full))
    assert found.tolist() == [True, True, True, True, False, False] and np.isnan(vecs[4:]).all()
    qrels = pd.DataFrame({'qid': 'q', 'docno': ['d0', 'd1', 'd4', 'd5'], 'label': 1})
    run = pd.DataFrame({'qid': 'q', 'docno': ['d0', 'd1', 'd2', 'd3'], 'score': [4.0, 3.0, 2.0, 1.0]})
    with pytest.raises(ValueError, match=r"2 of 4 relevant document\(s\) have no vector, e.g. \['d4', 'd5'\]"):
        ir_measures.calc_aggregate([pf.FD(encoder=emb) @ 4], pt.model.to_ir_measures(qrels), pt.model.to_ir_measures(run))
    with pytest.raises(ValueError, match=r"no text for 2 document\(s\) in texts=dict, e.g. \['d4', 'd5'\]"):
        emb(pd.DataFrame({'docno': ['d0', 'd4', 'd5']}))
    # without a text source the cache serves by docno, as before
    by_docno = pf.Embedder(bert, cache_dir=tmp_path, verbose=False).lookup(['d4'])
    assert by_docno[1].all()


def test_one_docno_with_two_texts_in_a_frame_is_refused(bert):
    """S4 (chosen: refuse): a docno names one document; two texts under it would get one vector silently."""
    emb = pf.Embedder(bert, cache_dir=None, verbose=False)
    frame = pd.DataFrame({'docno': ['a', 'b', 'a'], 'text': ['wing lift', 'heat flow', 'shock layer']})
    with pytest.raises(ValueError, match=r"1 docno\(s\) appear in several rows with different texts in column 'text', "
                                         r"e.g. \['a'\]"):
        emb(frame)
    assert emb.n_encoded == 0
    same = emb(frame.assign(text=['wing lift', 'heat flow', 'wing lift']))  # the same text twice: one vector, both rows
    np.testing.assert_array_equal(same.doc_vec[0], same.doc_vec[2])
    np.testing.assert_allclose(same.doc_vec[0], emb.encode(['wing lift'])[0], atol=1e-6)
    with pytest.raises(ValueError, match=r"no text \(NaN/None\).*\['a'\]"):
        emb(frame.assign(text=['wing lift', 'heat flow', None]))


@pytest.mark.parametrize('device', ['cuda', 'cuda:0', 'mps', 'bogus'])
def test_an_unusable_torch_device_is_a_clear_error(bert, device, toy):
    """C5: on a torch without CUDA/MPS, device='cuda'/'mps'/'bogus' is a ValueError before any work (not torch's
    AssertionError / NotImplementedError mid-computation)."""
    usable = {'cuda': torch.cuda.is_available(), 'cuda:0': torch.cuda.is_available(),
              'mps': getattr(torch.backends, 'mps', None) is not None and torch.backends.mps.is_available(),
              'bogus': False}[device]
    if usable:  # on a machine with that device, it is accepted
        pf.Embedder(bert, device=device, cache_dir=None)
        return
    with pytest.raises(ValueError, match=rf"device='{device}'"):
        pf.Embedder(bert, device=device, cache_dir=None)
    with pytest.raises(ValueError, match=rf"devices='{device}'"):
        pf.Embedder(bert, devices=['cpu', device], cache_dir=None)
    vectors, qrels, run = toy
    from conftest import DictEncoder
    with pytest.raises(ValueError, match=rf"device='{device}'"):
        pf.bootstrap({'r': run}, qrels, [pf.FD @ 5], n_samples=10, encoder=DictEncoder(vectors), backend='torch',
                     device=device, verbose=False)
    pf.Embedder(bert, device='cpu', cache_dir=None)  # and cpu is fine


def test_a_file_where_a_folder_is_needed(tmp_path, capsys):
    """C6: --cache-root FILE, or a model folder that is a file: a clear error, not NotADirectoryError."""
    file = tmp_path / 'file'
    file.write_text('x')
    with pytest.raises(models.ModelFetchError, match=rf'the cache root \(cache_root=, --cache-root\) {file} is a file'):
        models.fetch('splade-tiny', cache_root=file)
    assert main(['models', 'fetch', 'splade-tiny', '--cache-root', str(file)]) == 2
    assert 'is a file, not a folder' in capsys.readouterr().err
    assert main(['models', 'list', '--cache-root', str(file)]) == 2
    assert 'is a file, not a folder' in capsys.readouterr().err
    (tmp_path / 'root' / 'models').mkdir(parents=True)
    (tmp_path / 'root' / 'models' / 'splade-tiny').write_text('x')
    with pytest.raises(models.ModelFetchError, match="the folder of model 'splade-tiny' .* is a file"):
        models.fetch('splade-tiny', cache_root=tmp_path / 'root')
    assert (tmp_path / 'root' / 'models' / 'splade-tiny').read_text() == 'x'  # not deleted
    with pytest.raises(ValueError, match='is a file, not a model folder'):
        pf.Embedder(str(file))


@pytest.fixture
def toy_model(tmp_path, monkeypatch):
    """An offline model spec of one small file, fetched by hand as fetch() leaves a folder (no registry needed)."""
    content = b'{"architectures": ["Toy"]}'
    sha = hashlib.sha256(content).hexdigest()
    spec = models.OfflineModel(name='toy', hub_name='x/toy', kind='splade', description='a toy', prefix='m/',
                               wheels=(models.Wheel('toy==1', 'toy-1-py3-none-any.whl', '0' * 64),),
                               files={'config.json': sha})
    monkeypatch.setitem(models.MODELS, 'toy', spec)
    target = tmp_path / 'root' / 'models' / 'toy'
    target.mkdir(parents=True)
    (target / 'config.json').write_bytes(content)
    (target / models.MARKER).write_text(json.dumps({'name': 'toy', 'files': spec.files, 'sizes': {'config.json': len(content)}}))
    return tmp_path / 'root', target


def test_models_list_names_and_verify_flags_planted_files(toy_model, capsys):
    """K4: `models list a b` lists those (unknown names refused); a planted file makes a fetched model not fetched,
    and fetch --verify refuses it, naming the file, deleting nothing."""
    root, target = toy_model
    assert models.is_fetched('toy', root, verify=True)
    assert main(['models', 'list', 'toy', '--cache-root', str(root)]) == 0
    out = capsys.readouterr().out
    assert 'x/toy' in out and 'splade-tiny' not in out and 'True' in out
    assert main(['models', 'list', 'toy', 'nope', '--cache-root', str(root)]) == 2
    assert "no offline model ['nope']" in capsys.readouterr().err
    (target / 'modules.py').write_text('import os  # planted')
    assert not models.is_fetched('toy', root) and not models.is_fetched('toy', root, verify=True)
    assert main(['models', 'fetch', 'toy', '--verify', '--cache-root', str(root)]) == 2
    err = capsys.readouterr().err
    assert f"{target} holds 1 file(s) that are not part of the model, e.g. ['modules.py']" in err
    assert (target / 'modules.py').exists() and (target / 'config.json').exists()
    assert main(['models', 'list', 'toy', '--cache-root', str(root)]) == 0
    assert 'False' in capsys.readouterr().out


def test_eval_with_vectors_refuses_encoding_options(tmp_path, capsys):
    """K5: --backend/--precision/--model choose how --text is encoded; with --vectors they were silently ignored."""
    np.save(tmp_path / 'v.npy', np.random.default_rng(0).normal(size=(4, 3)))
    (tmp_path / 'v.ids.txt').write_text('a\nb\nc\nd\n')
    (tmp_path / 'qrels').write_text('q 0 a 1\nq 0 b 1\nq 0 c 1\n')
    (tmp_path / 'run').write_text('q Q0 a 1 3 r\nq Q0 b 2 2 r\nq Q0 d 3 1 r\n')
    base = ['eval', '--qrels', str(tmp_path / 'qrels'), '--runs', str(tmp_path / 'run'), '--vectors', str(tmp_path / 'v'),
            '--metrics', 'FD@3']
    for extra, flags in ((['--backend', 'openvino'], '--backend'), (['--precision', 'bf16'], '--precision'),
                         (['--model', 'x'], '--model'),
                         (['--backend', 'openvino', '--precision', 'bf16'], '--backend and --precision')):
        assert main(base + extra) == 2
        err = capsys.readouterr().err
        assert f'{flags} choose how --text is encoded; --vectors are precomputed' in err
    assert main(base) == 0
    capsys.readouterr()


@pytest.fixture(scope='module')
def openvino_model(tmp_path_factory):
    import openvino  # noqa: F401  (the [slow] extra installs it: a missing one fails, it is not skipped)
    return tiny_encoder(tmp_path_factory.mktemp('ov') / 'tiny-bert', seed=0)


@pytest.mark.slow  # needs openvino (the [slow] extra)
@pytest.mark.parametrize('damage', ['truncated_bin', 'altered_bin', 'garbage_xml', 'missing_manifest'])
def test_a_damaged_converted_openvino_model_names_its_folder(openvino_model, tmp_path, damage):
    """C7: a damaged converted model is a ValueError with its folder and the hint to delete it (not a raw
    RuntimeError, or silently wrong vectors from altered weights)."""
    docs = pd.DataFrame({'docno': ['a', 'b'], 'text': ['wing lift', 'heat flow']})
    pf.Embedder(openvino_model, backend='openvino', cache_dir=tmp_path, verbose=False)(docs)
    (folder,) = [p for p in (tmp_path / 'openvino').iterdir() if not p.name.startswith('.')]
    bin_file = folder / 'model.bin'
    if damage == 'truncated_bin':
        bin_file.write_bytes(bin_file.read_bytes()[:100])
    elif damage == 'altered_bin':
        raw = bytearray(bin_file.read_bytes())
        raw[len(raw) // 2] ^= 0xFF
        bin_file.write_bytes(bytes(raw))
    elif damage == 'garbage_xml':
        (folder / 'model.xml').write_text('<net>')
    else:
        (folder / 'manifest.json').unlink()
    emb = pf.Embedder(openvino_model, backend='openvino', cache_dir=tmp_path, verbose=False)
    with pytest.raises(ValueError, match=rf"the converted model in {folder} is damaged .*delete that folder"):
        emb(docs.assign(text=['other text', 'more text']))
