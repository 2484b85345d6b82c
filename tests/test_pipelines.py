"""SPLADE, ColBERT and dense pipelines end to end with tiny local models (no checkpoint can be downloaded)."""
import string

import numpy as np
import pandas as pd
import pyterrier as pt
import pytest
import torch

import pyterrier_frechet as pf
from pyterrier_frechet import pipelines
from pyterrier_frechet.data.bundled import Collection
from pyterrier_frechet.pipelines.late_interaction import ColBERT, maxsim

from pyterrier_frechet.pipelines.tiny import WORDS, tiny_colbert, tiny_encoder, tiny_masked_lm


@pytest.fixture(scope='module')
def tiny(tmp_path_factory):
    from safetensors.torch import load_file
    from transformers import BertConfig, BertModel
    root = tmp_path_factory.mktemp('pipeline-models')
    colbert = tiny_colbert(root / 'tiny-colbert')
    # the reference below rebuilds the encoder from the checkpoint file itself, not through the package
    tensors = load_file(f'{colbert}/model.safetensors')
    bert = BertModel(BertConfig.from_pretrained(colbert), add_pooling_layer=False).eval()
    bert.load_state_dict({k[len('bert.'):]: v for k, v in tensors.items() if k.startswith('bert.')})
    return {'splade': tiny_masked_lm(root / 'tiny-splade'), 'colbert': colbert, 'dense': tiny_encoder(root / 'tiny-dense'),
            'linear': tensors['linear.weight'], 'bert': bert}


@pytest.fixture(scope='module')
def collection():
    rng = np.random.default_rng(0)
    texts = {f'd{i}': ' '.join(rng.choice(WORDS, size=rng.integers(3, 9))) + (' .' if i % 3 == 0 else '') for i in range(40)}
    topics = pd.DataFrame({'qid': ['1', '2', '3'], 'query': ['shock wing', 'heat plate flow', 'mach number cone']})
    qrels = pd.DataFrame([('1', 'd1', 2), ('1', 'd5', 1), ('2', 'd7', 1), ('2', 'd9', 2), ('3', 'd11', 1), ('3', 'd30', 1), ('3', 'd2', 0)],
                         columns=['qid', 'docno', 'label'])
    return Collection('toy', topics, qrels, texts)


def _colbert_reference(tiny, query, text):
    """ColBERT scoring written out by hand: markers, [MASK] augmentation, punctuation skipping, MaxSim."""
    from transformers import BertTokenizer
    tok = BertTokenizer.from_pretrained(tiny['colbert'])
    vocab = tok.get_vocab()

    def enc(ids, mask):
        with torch.no_grad():
            h = tiny['bert'](input_ids=torch.tensor([ids]), attention_mask=torch.tensor([mask])).last_hidden_state[0]
            return torch.nn.functional.normalize(h @ tiny['linear'].T, dim=-1).numpy()
    q_ids = [vocab['[CLS]'], vocab['[unused0]']] + tok(query, add_special_tokens=False)['input_ids'][:5] + [vocab['[SEP]']]
    q_mask = [1] * len(q_ids) + [0] * (8 - len(q_ids))
    q_ids = q_ids + [vocab['[MASK]']] * (8 - len(q_ids))
    q = enc(q_ids, q_mask)  # all 8 positions
    d_ids = [vocab['[CLS]'], vocab['[unused1]']] + tok(text, add_special_tokens=False)['input_ids'][:9] + [vocab['[SEP]']]
    d = enc(d_ids, [1] * len(d_ids))
    punct = {vocab[c] for c in string.punctuation if c in vocab}
    d = d[[i for i, t in enumerate(d_ids) if t not in punct]]
    return sum(max(float(qi @ dj) for dj in d) for qi in q)


def test_colbert_scores_equal_hand_written_maxsim(tiny, collection):
    checkpoint = ColBERT(tiny['colbert'], device='cpu')
    assert checkpoint.config['query_maxlen'] == 8 and repr(checkpoint) == "ColBERT('tiny-colbert')"
    res = pd.DataFrame({'qid': ['1'] * 4, 'query': ['shock wing'] * 4, 'docno': ['d0', 'd1', 'd3', 'd4'], 'score': 0.0})
    res['text'] = res.docno.map(collection.texts)
    out = checkpoint.scorer()(res)
    for row in out.itertuples():
        assert row.score == pytest.approx(_colbert_reference(tiny, 'shock wing', collection.texts[row.docno]), rel=1e-5)
    assert out['rank'].tolist() == [0, 1, 2, 3] and out.score.is_monotonic_decreasing
    assert len(checkpoint.scorer()(res.iloc[:0])) == 0
    assert maxsim(np.ones((2, 3)), np.zeros((0, 3))) == 0.0


def test_colbert_first_stage_equals_reranking_everything(tiny, collection):
    full = pipelines.colbert(collection, tiny['colbert'], num_results=40)
    first = full(collection.topics)
    everything = pd.DataFrame([(q, t, d, 0.0) for q, t in collection.topics.itertuples(index=False) for d in collection.texts],
                              columns=['qid', 'query', 'docno', 'score'])
    everything['text'] = everything.docno.map(collection.texts)
    reranked = ColBERT(tiny['colbert']).scorer()(everything)
    merged = first.merge(reranked[['qid', 'docno', 'score']], on=['qid', 'docno'], suffixes=('', '_ref'))
    assert len(merged) == 120
    np.testing.assert_allclose(merged.score, merged.score_ref, rtol=1e-5)
    with pytest.raises(ValueError, match='not a ColBERT checkpoint'):
        ColBERT(tiny['splade'])  # a masked LM: no linear projection


def test_splade_pipeline_retrieves_by_sparse_dot_product(tiny, collection, tmp_path):
    import pyterrier_splade
    retriever = pipelines.splade(collection, tmp_path, tiny['splade'], num_results=40)
    res = retriever(collection.topics)
    assert set(res.qid) == {'1', '2', '3'}
    enc = pyterrier_splade.Splade(tiny['splade'])
    docs = list(collection.texts)
    d_reps = enc.encode([collection.texts[d] for d in docs], 'd', format='np')
    for qid, query in collection.topics.itertuples(index=False):
        q_rep = enc.encode([query], 'q', format='np')[0]
        exact = np.array([float(q_rep @ d) for d in d_reps])
        top = res[res.qid == qid].sort_values('rank').docno.iloc[0]
        # PISA scores quantized impacts: its top document is (near) the exact dot-product maximum
        assert exact[docs.index(top)] >= exact.max() * 0.95
    assert pipelines.splade(collection, tmp_path, tiny['splade'])(collection.topics).equals(
        pipelines.splade(collection, tmp_path, tiny['splade'])(collection.topics))  # index reused, same results


def test_four_pipelines_in_one_experiment(tiny, collection, tmp_path):
    embedder = pf.Embedder(tiny['dense'], texts=collection.texts, cache_dir=tmp_path / 'emb', verbose=False)
    bm25 = pipelines.bm25(collection, tmp_path)
    systems = [bm25,
               pipelines.splade(collection, tmp_path, tiny['splade']),
               pipelines.colbert(collection, tiny['colbert'], first_stage=bm25),
               pipelines.dense(collection, embedder, tmp_path)]
    assert embedder.n_encoded == 40
    table = pt.Experiment(systems, collection.topics, collection.qrels,
                          eval_metrics=[pf.FD(encoder=embedder) @ 5, pf.FD(encoder=embedder, urr=True) @ 5, 'ndcg_cut_10', 'mrt'],
                          names=['BM25', 'SPLADE', 'ColBERT', 'Dense'])
    fd = table[str(pf.FD(encoder=embedder) @ 5)]
    assert len(table) == 4 and np.isfinite(fd).all() and (fd >= 0).all()
    assert embedder.n_encoded == 40  # FD reused the vectors the dense index was built from


def test_four_pipelines_example_script(tmp_path):
    """examples/four_pipelines.py with local checkpoint paths (here: tiny random models, for the plumbing; the trained
    fallbacks are tested in test_models.py) prints the table, each row labelled with the checkpoint it used."""
    import subprocess
    import sys
    from pathlib import Path
    script = Path(__file__).resolve().parents[1] / 'examples' / 'four_pipelines.py'
    models = {k: f(tmp_path / k) for k, f in (('splade', tiny_masked_lm), ('colbert', tiny_colbert), ('dense', tiny_encoder))}
    out = subprocess.run([sys.executable, str(script), '--splade-model', models['splade'], '--colbert-model', models['colbert'],
                          '--dense-model', models['dense'], '--work-dir', str(tmp_path / 'work')],
                         capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr[-3000:]
    lines = out.stdout.splitlines()
    assert lines[0].split() == ['name', 'FD@1', 'FD@10', 'FD(urr=True)@10', 'nDCG@10', 'RR@10', 'mrt']
    assert [line.split()[0] for line in lines[1:5]] == ['BM25', 'SPLADE', 'ColBERT', 'Dense']
    assert '(splade)' in lines[2] and '(colbert)' in lines[3]  # the given paths were used
    assert 'documents it encoded in this run: 1400' in out.stdout


def test_colbert_index_repr_empty_frame_and_inspect(tiny, collection):
    index = pipelines.colbert(collection, tiny['colbert'], num_results=5)
    assert repr(index) == "ColBERTIndex(ColBERT('tiny-colbert'), <40 docs>, num_results=5)"
    empty = index(pd.DataFrame({'qid': [], 'query': []}))
    assert len(empty) == 0 and list(empty.columns) == ['qid', 'query', 'docno', 'score', 'rank']
    assert pt.inspect.transformer_outputs(index, ['qid', 'query']) == ['qid', 'query', 'docno', 'score', 'rank']
    res = index(collection.topics.iloc[:1])
    assert len(res) == 5 and res['rank'].tolist() == [0, 1, 2, 3, 4] and res.score.is_monotonic_decreasing
