"""``embed`` / ``fill_store``: a vector store from texts, or a copy of a store with the documents it lacks added by the
model that made it — checked against the store's own vectors, never mixed — on tiny local models (no download)."""
import gzip
import json

import numpy as np
import pandas as pd
import pytest

import pyterrier_frechet as pf
from pyterrier_frechet.cli import main
from pyterrier_frechet.pipelines.tiny import tiny_encoder

TEXTS = {'a': 'the wing lift', 'b': 'shock layer heat flow', 'c': 'mach number', 'd': 'boundary layer transition',
         'e': 'heat transfer at the nose', 'f': 'lift and drag of a wing'}


@pytest.fixture(scope='module')
def models(tmp_path_factory):
    root = tmp_path_factory.mktemp('models')
    return {'one': tiny_encoder(root / 'one', seed=0), 'other': tiny_encoder(root / 'other', seed=2)}


@pytest.fixture
def texts(tmp_path):
    path = tmp_path / 'texts.jsonl.gz'
    with gzip.open(path, 'wt', encoding='utf-8') as f:
        for docno, text in TEXTS.items():
            f.write(json.dumps({'docno': docno, 'text': text}) + '\n')
    return path


def _reference(model, docnos):
    """The model's vectors of ``docnos`` through the Embedder's transformer path, no cache: another route than
    fill_store's cached lookup."""
    frame = pd.DataFrame({'docno': docnos, 'text': [TEXTS[d] for d in docnos]})
    return np.stack(pf.Embedder(model, cache_dir=None, verbose=False)(frame)['doc_vec']).astype(np.float32)


def _store(path, docnos, vectors):
    np.save(f'{path}.npy', vectors)
    with open(f'{path}.ids.txt', 'w') as f:
        f.write('\n'.join(docnos) + '\n')


def test_a_new_store_from_texts(models, texts, tmp_path, capsys):
    assert main(['embed', '--text', str(texts), '--model', models['one'], '--out', str(tmp_path / 'new'), '--quiet']) == 0
    assert 'wrote' in capsys.readouterr().out
    store = pf.VectorStore(str(tmp_path / 'new'))
    assert list(store._index) == list(TEXTS)
    np.testing.assert_allclose(np.asarray(store.vectors), _reference(models['one'], list(TEXTS)), atol=1e-5)


def test_a_copy_with_the_missing_documents_added_keeps_the_old_rows_bit_for_bit(models, texts, tmp_path, capsys):
    old = ['a', 'c', 'e']
    _store(tmp_path / 'old', old, _reference(models['one'], old))
    before = np.load(tmp_path / 'old.npy')
    assert main(['embed', '--text', str(texts), '--model', models['one'], '--from', str(tmp_path / 'old'),
                 '--out', str(tmp_path / 'filled'), '--quiet']) == 0
    printed = capsys.readouterr().out
    assert '3 vectors from' in printed and '3 embedded by' in printed and '3 of its documents embedded again agree' in printed
    store = pf.VectorStore(str(tmp_path / 'filled'))
    assert list(store._index) == old + ['b', 'd', 'f']
    assert np.array_equal(np.asarray(store.vectors)[:3], before)  # copied, not re-embedded
    np.testing.assert_allclose(np.asarray(store.vectors)[3:], _reference(models['one'], ['b', 'd', 'f']), atol=1e-5)
    assert np.array_equal(np.load(tmp_path / 'old.npy'), before)  # the source is only read


def test_another_model_is_refused_and_nothing_is_written(models, texts, tmp_path, capsys):
    old = ['a', 'c', 'e']
    _store(tmp_path / 'old', old, _reference(models['one'], old))
    assert main(['embed', '--text', str(texts), '--model', models['other'], '--from', str(tmp_path / 'old'),
                 '--out', str(tmp_path / 'mixed'), '--quiet']) == 2
    err = capsys.readouterr().err
    assert 'was not made by' in err and '3 of its documents embedded again differ by up to' in err
    assert 'never mixed' in err
    assert not (tmp_path / 'mixed.npy').exists() and not (tmp_path / 'mixed.ids.txt').exists()


def test_refusals_before_any_embedding(models, texts, tmp_path, capsys):
    _store(tmp_path / 'old', ['x', 'y'], np.ones((2, 4), np.float32))
    # none of the store's documents has a text: the model cannot be checked
    assert main(['embed', '--text', str(texts), '--model', models['one'], '--from', str(tmp_path / 'old'),
                 '--out', str(tmp_path / 'new'), '--quiet']) == 2
    assert 'the model cannot be checked' in capsys.readouterr().err
    # an existing output is never replaced
    (tmp_path / 'taken.ids.txt').write_text('mine\n')
    assert main(['embed', '--text', str(texts), '--model', models['one'], '--out', str(tmp_path / 'taken'), '--quiet']) == 2
    assert 'taken.ids.txt exists' in capsys.readouterr().err
    assert (tmp_path / 'taken.ids.txt').read_text() == 'mine\n'


def test_a_store_without_some_vectors_names_the_command(tmp_path):
    qrels = pd.DataFrame({'qid': ['1'] * 3, 'docno': ['a', 'b', 'c'], 'label': [1, 1, 1]})
    run = pd.DataFrame({'qid': ['1'] * 3, 'docno': ['a', 'b', 'z'], 'score': [3.0, 2.0, 1.0]})
    _store(tmp_path / 'v', ['a', 'b', 'c'], np.random.default_rng(0).normal(size=(3, 4)).astype(np.float32))
    with pytest.raises(ValueError, match=r'python -m pyterrier_frechet embed --text TEXTS\.jsonl --from .*v --out NEWPREFIX'):
        pf.evaluate({'r': run}, qrels, ['FD@3'], encoder=pf.VectorStore(str(tmp_path / 'v')))


def _cli_error(argv, capsys) -> str:
    assert main(argv) == 2
    return capsys.readouterr().err


def test_embed_refuses_what_its_python_counterpart_refuses_in_the_same_words(models, texts, tmp_path, capsys):
    """Issue 64: the new subcommand in the refusal comparison — a hostile docno in the corpus or in --docnos, a
    damaged --from store and an existing --out: `embed` exits 2 with the message fill_store / TextLookup raise."""
    from pyterrier_frechet.vectors.fill import fill_store
    model = models['one']
    hostile = tmp_path / 'hostile.jsonl'
    hostile.write_text(json.dumps({'docno': 'd\u202ex', 'text': 'wing'}) + '\n', encoding='utf-8')
    with pytest.raises(ValueError) as py:
        pf.TextLookup.from_jsonl(str(hostile))
    err = _cli_error(['embed', '--text', str(hostile), '--model', model, '--out', str(tmp_path / 'n1'), '--quiet'], capsys)
    assert str(py.value) in err and 'U+202E' in err

    listed = tmp_path / 'docnos.txt'
    listed.write_text('a\nb\x01c\n', encoding='utf-8')
    lookup = pf.TextLookup.from_jsonl(str(texts))
    emb = pf.Embedder(model, texts=lookup, verbose=False)
    with pytest.raises(ValueError) as py:
        fill_store(str(tmp_path / 'n2'), lookup, emb, docnos=['a', 'b\x01c'])
    err = _cli_error(['embed', '--text', str(texts), '--model', model, '--docnos', str(listed), '--out',
                      str(tmp_path / 'n2'), '--quiet'], capsys)
    assert str(py.value) in err and 'U+0001' in err

    vectors = _reference(model, ['a', 'b'])
    vectors[1, 0] = np.nan
    _store(tmp_path / 'damaged', ['a', 'b'], vectors)
    source = pf.VectorStore(str(tmp_path / 'damaged'))
    with pytest.raises(ValueError) as py:
        fill_store(str(tmp_path / 'n3'), lookup, emb, source=source)
    err = _cli_error(['embed', '--text', str(texts), '--model', model, '--from', str(tmp_path / 'damaged'), '--out',
                      str(tmp_path / 'n3'), '--quiet'], capsys)
    assert 'are not finite (NaN or inf)' in str(py.value) and str(py.value).split(': ', 1)[1] in err

    _store(tmp_path / 'exists', ['a'], _reference(model, ['a']))
    with pytest.raises(ValueError) as py:
        fill_store(str(tmp_path / 'exists'), lookup, emb)
    err = _cli_error(['embed', '--text', str(texts), '--model', model, '--out', str(tmp_path / 'exists'), '--quiet'],
                     capsys)
    assert str(py.value) in err
    assert not any((tmp_path / f'n{i}.npy').exists() for i in (1, 2, 3))


def test_a_shared_cache_gives_each_docno_the_vector_of_the_text_given(models, tmp_path, capsys):
    """Round seven: a cache shared between corpora holds docno 'a' with another corpus's text. fill_store embeds the
    texts it is given, whether the Embedder has no texts (it is given them) or the same ones; an Embedder reading
    other texts is refused naming a docno; `embed` on the same cache agrees. Reference: the model on the new text,
    no cache."""
    from pyterrier_frechet.vectors.fill import fill_store
    model, cache = models['one'], str(tmp_path / 'cache')
    old = {'a': 'an old text about volcanoes', 'b': TEXTS['b']}
    pf.Embedder(model, texts=old, cache_dir=cache, verbose=False)(pd.DataFrame({'docno': ['a', 'b']}))
    for many in (False, True):  # one text of 'a' in the cache, then two (no text given read as "which one?")
        if many:
            pf.Embedder(model, texts={'a': 'a third text'}, cache_dir=cache, verbose=False)(pd.DataFrame({'docno': ['a']}))
        path = tmp_path / f'corpus{many}.jsonl'
        path.write_text(''.join(json.dumps({'docno': d, 'text': TEXTS[d]}) + '\n' for d in 'ab'), encoding='utf-8')
        lookup = pf.TextLookup.from_jsonl(str(path))
        want = _reference(model, ['a', 'b'])
        for name, enc in (('bare', pf.Embedder(model, cache_dir=cache, verbose=False)),
                          ('same', pf.Embedder(model, texts=lookup, cache_dir=cache, verbose=False))):
            fill_store(str(tmp_path / f'{name}{many}'), lookup, enc)
            got = pf.VectorStore(str(tmp_path / f'{name}{many}'))
            np.testing.assert_allclose(got.lookup(['a', 'b'])[0], want, atol=1e-6)
    with pytest.raises(ValueError, match=r"reads other texts than .* for 1 document\(s\), e.g. 'a'"):
        fill_store(str(tmp_path / 'mixed'), lookup, pf.Embedder(model, texts=old, cache_dir=cache, verbose=False))
    assert not (tmp_path / 'mixed.npy').exists()


def test_a_prefix_that_names_a_folder_is_refused(models, texts, tmp_path, capsys):
    from pyterrier_frechet.vectors.fill import fill_store
    lookup = pf.TextLookup.from_jsonl(str(texts))
    folder = tmp_path / 'out'
    folder.mkdir()
    with pytest.raises(ValueError, match='names a folder, not a store') as py:
        fill_store(str(folder) + '/', lookup, pf.Embedder(models['one'], verbose=False))
    err = _cli_error(['embed', '--text', str(texts), '--model', models['one'], '--out', str(folder) + '/', '--quiet'],
                     capsys)
    assert str(py.value) in err and list(folder.iterdir()) == []
