"""The models the package's pipelines retrieve with (vectors/retrieval_models.py), and FD's note when its encoder is
one of them: found inside a composed encoder, said once per model and process, never for precomputed vectors."""
import warnings

import numpy as np
import pandas as pd
import pytest

import pyterrier_frechet as pf
from pyterrier_frechet.vectors import retrieval_models
from pyterrier_frechet.vectors.text import TextLookup


class Model:
    """Stands for an Embedder: what retrieval_models reads of one is its identity (name, weights hash)."""
    def __init__(self, name, digest):
        self.identity = {'name': name, 'hash': digest}


def test_the_model_is_found_in_an_embedder_and_inside_a_composed_encoder(tmp_path):
    np.save(tmp_path / 'v.npy', np.zeros((1, 2)))
    (tmp_path / 'v.ids.txt').write_text('d\n')
    model = Model('m', 'abc')
    assert retrieval_models.model_of(model) == ('abc', 'm')
    assert retrieval_models.model_of(TextLookup({'d': 'text'}) >> pf.VectorStore(str(tmp_path / 'v'))) is None
    composed = TextLookup({'d': 'text'}) >> pf.VectorStore(str(tmp_path / 'v'))
    composed._transformers = (*composed._transformers, model)  # a stage carrying a model, as an Embedder does
    assert retrieval_models.model_of(composed) == ('abc', 'm')


def test_the_note_names_the_pipelines_once_per_model():
    retrieval_models.note_use('abc', 'm', 'pipelines.dense')
    retrieval_models.note_use('abc', 'm', 'pipelines.dense_reranker')
    assert retrieval_models.uses_of(Model('m', 'abc')) == ['pipelines.dense', 'pipelines.dense_reranker']
    assert retrieval_models.own_encoder_note('FD@10', Model('other', 'xyz')) is None
    note = retrieval_models.own_encoder_note('FD@10', Model('m', 'abc'))
    assert note.startswith('FD@10: its encoder (m) is the model pipelines.dense, pipelines.dense_reranker retrieve(s)')
    assert retrieval_models.own_encoder_note('FD@10', Model('m', 'abc')) is None  # once


def test_an_evaluation_with_the_pipelines_own_model_warns_once(tiny, collection, tmp_path):
    from pyterrier_frechet import pipelines
    embedder = pf.Embedder(tiny['dense'], texts=collection.texts, cache_dir=tmp_path / 'emb', verbose=False)
    dense = pipelines.dense(collection, embedder, tmp_path)
    run = dense(collection.topics).rename(columns={'qid': 'query_id', 'docno': 'doc_id'})
    qrels = collection.qrels.rename(columns={'qid': 'query_id', 'docno': 'doc_id', 'label': 'relevance'})
    measures = [pf.FD(encoder=embedder, rel=1) @ 5, pf.FD(encoder=embedder, rel=1, urr=True) @ 5]
    with pytest.warns(UserWarning, match='is the model pipelines.dense retrieve') as caught:
        pf.evaluate({'dense': run, 'again': run}, qrels, measures)
    assert sum('is the model pipelines.dense' in str(w.message) for w in caught) == 1
    with warnings.catch_warnings():
        warnings.simplefilter('error')
        pf.evaluate({'dense': run}, qrels, measures)  # said already
    other = pf.Embedder(tiny['splade'], texts=collection.texts, cache_dir=tmp_path / 'emb2', verbose=False)
    assert retrieval_models.uses_of(other) == []
    assert isinstance(run, pd.DataFrame)
