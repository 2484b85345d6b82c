"""The tiny random checkpoints (pipelines/tiny.py): the layouts and sizes their docstrings state, loaded back with
transformers and safetensors directly (not through the package), and seeded."""
import json

import pytest
import torch

from pyterrier_frechet.pipelines.tiny import VOCAB, WORDS, tiny_colbert, tiny_encoder, tiny_masked_lm


def _weights(model):
    return torch.cat([p.detach().flatten() for p in model.parameters()])


def test_encoder_is_a_16_d_bert_or_distilbert_with_the_tiny_vocabulary(tmp_path):
    from transformers import AutoModel, AutoTokenizer
    bert = AutoModel.from_pretrained(tiny_encoder(tmp_path / 'b'))
    assert type(bert).__name__ == 'BertModel' and bert.config.hidden_size == 16 and bert.config.num_hidden_layers == 1
    distil = AutoModel.from_pretrained(tiny_encoder(tmp_path / 'd', kind='distilbert'))
    assert type(distil).__name__ == 'DistilBertModel' and distil.config.dim == 16 and distil.config.n_layers == 1
    tok = AutoTokenizer.from_pretrained(str(tmp_path / 'b'))
    assert tok.vocab_size == len(VOCAB) == 13 + len(WORDS)
    assert tok.convert_ids_to_tokens(tok('shock wing')['input_ids']) == ['[CLS]', 'shock', 'wing', '[SEP]']
    with torch.no_grad():
        out = bert(**tok(['shock wing'], return_tensors='pt')).last_hidden_state
    assert tuple(out.shape) == (1, 4, 16)
    with pytest.raises(ValueError, match="kind must be 'bert' or 'distilbert', got 'gpt'"):
        tiny_encoder(tmp_path / 'g', kind='gpt')


def test_weights_are_seeded(tmp_path):
    from transformers import AutoModel
    a, b, c = (_weights(AutoModel.from_pretrained(tiny_encoder(tmp_path / n, seed=s))) for n, s in (('a', 0), ('b', 0), ('c', 1)))
    assert torch.equal(a, b) and not torch.equal(a, c)


def test_masked_lm_predicts_over_the_tiny_vocabulary(tmp_path):
    from transformers import AutoModelForMaskedLM
    mlm = AutoModelForMaskedLM.from_pretrained(tiny_masked_lm(tmp_path / 'm'))
    assert type(mlm).__name__ == 'BertForMaskedLM'
    with torch.no_grad():
        logits = mlm(input_ids=torch.tensor([[4, 6, 5]])).logits
    assert tuple(logits.shape) == (1, 3, len(VOCAB))


def test_colbert_checkpoint_has_colbertv2_layout(tmp_path):
    from safetensors.torch import load_file
    from transformers import BertConfig
    path = tiny_colbert(tmp_path / 'c', dim=5, query_maxlen=7, doc_maxlen=11)
    tensors = load_file(f'{path}/model.safetensors')
    assert tuple(tensors['linear.weight'].shape) == (5, 16)
    assert all(k == 'linear.weight' or k.startswith('bert.') for k in tensors)
    assert 'bert.embeddings.word_embeddings.weight' in tensors and 'bert.pooler.dense.weight' not in tensors
    assert tuple(tensors['bert.embeddings.word_embeddings.weight'].shape) == (len(VOCAB), 16)
    assert BertConfig.from_pretrained(path).architectures == ['HF_ColBERT']
    meta = json.loads((tmp_path / 'c' / 'artifact.metadata').read_text())
    assert meta == {'query_maxlen': 7, 'doc_maxlen': 11, 'dim': 5, 'attend_to_mask_tokens': False, 'mask_punctuation': True}
