"""Tiny randomly initialised models built from a config in a directory (no download), in the layouts the
package loads: a plain BERT / DistilBERT encoder, a masked LM (for SPLADE) and a ColBERT checkpoint.

They give meaningless vectors and rankings, but exercise every loading and scoring path offline: the
tests use them, and the examples fall back to them (with a warning) when a real checkpoint cannot be had.
"""
import json
from pathlib import Path
from typing import Union

WORDS = ['the', 'wing', 'flow', 'shock', 'heat', 'boundary', 'layer', 'plate', 'mach', 'number', 'lift', 'drag',
         'supersonic', 'pressure', 'cone', 'jet', 'of', 'a', 'in', 'and', 'is', 'for', 'on', 'at']
VOCAB = ['[PAD]', '[unused0]', '[unused1]', '[UNK]', '[CLS]', '[SEP]', '[MASK]', '.', ',', '?', '(', ')', '-'] + WORDS


def _tokenizer(path: Path) -> None:
    from transformers import BertTokenizer
    path.mkdir(parents=True, exist_ok=True)
    (path / 'vocab.txt').write_text('\n'.join(VOCAB) + '\n')
    BertTokenizer(str(path / 'vocab.txt')).save_pretrained(str(path))


def _bert_config():
    from transformers import BertConfig
    return BertConfig(vocab_size=len(VOCAB), hidden_size=16, num_hidden_layers=1, num_attention_heads=2,
                      intermediate_size=32, max_position_embeddings=64)


def tiny_encoder(path: Union[str, Path], seed: int = 0, kind: str = 'bert') -> str:
    """A 16-d BERT (``kind='bert'``) or DistilBERT (``'distilbert'``) encoder with its tokenizer; returns the path."""
    import torch
    from transformers import DistilBertConfig, DistilBertModel, BertModel
    path = Path(path)
    _tokenizer(path)
    torch.manual_seed(seed)
    if kind == 'bert':
        model = BertModel(_bert_config())
    elif kind == 'distilbert':
        model = DistilBertModel(DistilBertConfig(vocab_size=len(VOCAB), dim=16, n_layers=1, n_heads=2, hidden_dim=32,
                                                 max_position_embeddings=64))
    else:
        raise ValueError(f"kind must be 'bert' or 'distilbert', got {kind!r}")
    model.save_pretrained(str(path))
    return str(path)


def tiny_masked_lm(path: Union[str, Path], seed: int = 0) -> str:
    """A 16-d BERT masked LM with its tokenizer (the layout SPLADE checkpoints have); returns the path."""
    import torch
    from transformers import BertForMaskedLM
    path = Path(path)
    _tokenizer(path)
    torch.manual_seed(seed)
    BertForMaskedLM(_bert_config()).save_pretrained(str(path))
    return str(path)


def tiny_colbert(path: Union[str, Path], seed: int = 0, dim: int = 4, query_maxlen: int = 8, doc_maxlen: int = 12) -> str:
    """A ColBERT checkpoint in colbert-ir/colbertv2.0's layout: ``bert.``-prefixed encoder weights and
    ``linear.weight`` in one ``model.safetensors``, the tokenizer, and ``artifact.metadata``; returns the path."""
    import torch
    from safetensors.torch import save_file
    from transformers import BertModel
    path = Path(path)
    _tokenizer(path)
    torch.manual_seed(seed)
    bert = BertModel(_bert_config(), add_pooling_layer=False)
    bert.config.architectures = ['HF_ColBERT']
    bert.config.save_pretrained(str(path))
    tensors = {f'bert.{k}': v.contiguous() for k, v in bert.state_dict().items()}
    tensors['linear.weight'] = torch.randn(dim, bert.config.hidden_size)
    save_file(tensors, str(path / 'model.safetensors'))
    (path / 'artifact.metadata').write_text(json.dumps({
        'query_maxlen': query_maxlen, 'doc_maxlen': doc_maxlen, 'dim': dim,
        'attend_to_mask_tokens': False, 'mask_punctuation': True}))
    return str(path)
