"""ColBERT's MaxSim (pipelines/late_interaction.py) with a tiny random checkpoint: scores equal a hand-written
MaxSim, first-stage retrieval equals reranking everything, the index's repr, empty frame and outputs."""
import string

import numpy as np
import pandas as pd
import pyterrier as pt
import pytest
import torch

from pyterrier_frechet import pipelines
from pyterrier_frechet.pipelines.late_interaction import ColBERT, maxsim


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


def test_colbert_index_repr_empty_frame_and_inspect(tiny, collection):
    index = pipelines.colbert(collection, tiny['colbert'], num_results=5)
    assert repr(index) == "ColBERTIndex(ColBERT('tiny-colbert'), <40 docs>, num_results=5)"
    empty = index(pd.DataFrame({'qid': [], 'query': []}))
    assert len(empty) == 0 and list(empty.columns) == ['qid', 'query', 'docno', 'score', 'rank']
    assert pt.inspect.transformer_outputs(index, ['qid', 'query']) == ['qid', 'query', 'docno', 'score', 'rank']
    res = index(collection.topics.iloc[:1])
    assert len(res) == 5 and res['rank'].tolist() == [0, 1, 2, 3, 4] and res.score.is_monotonic_decreasing
