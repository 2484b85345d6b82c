"""A small, tested ColBERT (late interaction, MaxSim) scorer that loads the standard checkpoint layout.

Why not an existing library: on this stack (torch 2.13, transformers 5, sentence-transformers 6)
``colbert-ai`` 0.2.22 and ``rerankers`` 0.10 install but cannot load a model under transformers 5
(``'…' object has no attribute 'all_tied_weights_keys'``), and ``pylate`` pins exact
sentence-transformers/transformers versions and pulls a 4 GB CUDA torch. Pinning transformers < 5 for
them would break sentence-transformers 6. ColBERT's scoring is small and well specified, so it is
implemented here on plain transformers and tested against a hand-written MaxSim.

The checkpoint layout is the one of ``colbert-ir/colbertv2.0`` (what ``colbert-ai`` writes): a BERT
encoder whose weights carry a ``bert.`` prefix, a ``linear.weight`` projection (dim × hidden) in the same
weights file, the tokenizer files, and ``artifact.metadata`` (JSON: ``query_maxlen``, ``doc_maxlen``,
``dim``, ``attend_to_mask_tokens``, ``mask_punctuation``, …). Encoding follows colbert-ai:

- query: ``[CLS] [unused0] tokens… [SEP]``, padded with ``[MASK]`` to ``query_maxlen`` (query
  augmentation); every position yields a vector; ``[MASK]`` positions are attended to only if
  ``attend_to_mask_tokens``;
- document: ``[CLS] [unused1] tokens… [SEP]``, truncated to ``doc_maxlen``; padding and (with
  ``mask_punctuation``) punctuation positions are dropped;
- vectors are L2-normalised projections; score(q, d) = Σ_i max_j ⟨q_i, d_j⟩.

No ColBERT checkpoint can be had without hub access. :class:`TokenMaxSim` is the honest stand-in: late
interaction (the same MaxSim, the same scorer and exhaustive index) over the L2-normalised contextual token vectors
of a trained encoder that was *not* trained for late interaction (by default all-MiniLM-L6-v2, which ships with the
package): ``[CLS] tokens… [SEP]`` without markers or query augmentation, padding and punctuation dropped. Its rows
are labelled as late interaction over that encoder, never as ColBERT.
"""
import os
import string
from typing import Dict, List, Optional

import numpy as np
import pandas as pd
import pyterrier as pt

from ..files import read_json

#: The usual hub name of the ColBERTv2 checkpoint (cannot be downloaded on machines without hub access).
DEFAULT_COLBERT = 'colbert-ir/colbertv2.0'


class ColBERT:
    """A ColBERT checkpoint: query and document encoders, and transformers that score with MaxSim."""

    def __init__(self, model_name: str = DEFAULT_COLBERT, device: Optional[str] = None, batch_size: int = 32):
        import torch
        from transformers import AutoTokenizer, BertModel
        from ..vectors.embedder import resolve_model_path
        self.model_name = model_name
        self.path = resolve_model_path(model_name)
        meta_path = os.path.join(self.path, 'artifact.metadata')
        self.config: Dict = {'query_maxlen': 32, 'doc_maxlen': 180, 'dim': 128, 'attend_to_mask_tokens': False,
                             'mask_punctuation': True}
        if os.path.exists(meta_path):
            config = read_json(meta_path, 'ColBERT artifact.metadata')
            if not isinstance(config, dict):
                raise ValueError(f'ColBERT artifact.metadata {meta_path!r} is not a JSON object; delete or replace it')
            self.config.update(config)
        self.device = torch.device(device or ('cuda' if torch.cuda.is_available() else 'cpu'))
        self.batch_size = batch_size
        self.tokenizer = AutoTokenizer.from_pretrained(self.path)
        from transformers.utils import logging as hf_logging
        verbosity = hf_logging.get_verbosity()
        hf_logging.set_verbosity_error()  # 'linear.weight' is expected to be left over: loaded below
        try:
            self.bert = BertModel.from_pretrained(self.path, add_pooling_layer=False).to(self.device).eval()
        finally:
            hf_logging.set_verbosity(verbosity)
        weight = _load_tensor(self.path, 'linear.weight')
        self.linear = torch.nn.Linear(weight.shape[1], weight.shape[0], bias=False)
        with torch.no_grad():
            self.linear.weight.copy_(weight)
        self.linear = self.linear.to(self.device).eval()
        vocab = self.tokenizer.get_vocab()
        self.q_marker = vocab.get('[unused0]', 1)
        self.d_marker = vocab.get('[unused1]', 2)
        self.skiplist = {vocab[c] for c in string.punctuation if c in vocab} if self.config['mask_punctuation'] else set()

    @property
    def name(self) -> str:
        return os.path.basename(os.path.normpath(self.model_name))

    def _ids(self, texts: List[str], marker: int, maxlen: int, augment: bool):
        tok = self.tokenizer
        rows = []
        for t in texts:
            ids = tok(str(t), add_special_tokens=False)['input_ids'][:maxlen - 3]
            rows.append([tok.cls_token_id, marker] + ids + [tok.sep_token_id])
        width = maxlen if augment else max(len(r) for r in rows)
        pad = tok.mask_token_id if augment else tok.pad_token_id
        ids = np.full((len(rows), width), pad, dtype=np.int64)
        mask = np.zeros((len(rows), width), dtype=np.int64)
        for i, r in enumerate(rows):
            ids[i, :len(r)] = r
            mask[i, :len(r)] = 1
        if augment and self.config['attend_to_mask_tokens']:
            mask[ids == tok.mask_token_id] = 1
        return ids, mask

    def _encode(self, ids: np.ndarray, mask: np.ndarray):
        import torch
        with torch.inference_mode():
            t_ids = torch.from_numpy(ids).to(self.device)
            t_mask = torch.from_numpy(mask).to(self.device)
            hidden = self.bert(input_ids=t_ids, attention_mask=t_mask).last_hidden_state
            return torch.nn.functional.normalize(self.linear(hidden), dim=-1).float().cpu().numpy()

    def encode_queries(self, texts: List[str]) -> List[np.ndarray]:
        """One (query_maxlen × dim) matrix per query (all positions, [MASK] augmentation included)."""
        out = []
        for start in range(0, len(texts), self.batch_size):
            ids, mask = self._ids(texts[start:start + self.batch_size], self.q_marker, self.config['query_maxlen'], augment=True)
            out.extend(self._encode(ids, mask))
        return out

    def encode_docs(self, texts: List[str]) -> List[np.ndarray]:
        """One (tokens × dim) matrix per document: padding and (optionally) punctuation dropped."""
        out = []
        for start in range(0, len(texts), self.batch_size):
            ids, mask = self._ids(texts[start:start + self.batch_size], self.d_marker, self.config['doc_maxlen'], augment=False)
            keep = mask.astype(bool) & ~np.isin(ids, list(self.skiplist))
            out.extend(vecs[k] for vecs, k in zip(self._encode(ids, mask), keep))
        return out

    def scorer(self, text_field: str = 'text', verbose: bool = False) -> 'ColBERTScorer':
        """A re-ranker: scores each (query, document text) of a result frame with MaxSim."""
        return ColBERTScorer(self, text_field, verbose)

    def __repr__(self):
        return f'ColBERT({self.name!r})'


class TokenMaxSim(ColBERT):
    """Late interaction over a trained encoder's contextual token vectors (see the module docstring): the encoder's
    last hidden states, L2-normalised, no projection; query and document encoded alike."""

    def __init__(self, model_name: str = 'sentence-transformers/all-MiniLM-L6-v2', device: Optional[str] = None,
                 batch_size: int = 32, query_maxlen: int = 32, doc_maxlen: int = 180, mask_punctuation: bool = True):
        import torch
        from transformers import AutoModel, AutoTokenizer
        from ..vectors.embedder import resolve_model_path
        self.model_name = model_name
        self.path = resolve_model_path(model_name)
        self.device = torch.device(device or ('cuda' if torch.cuda.is_available() else 'cpu'))
        self.batch_size = batch_size
        self.tokenizer = AutoTokenizer.from_pretrained(self.path)
        self.bert = AutoModel.from_pretrained(self.path).to(self.device).eval()
        self.config = {'query_maxlen': query_maxlen, 'doc_maxlen': doc_maxlen, 'dim': int(self.bert.config.hidden_size),
                       'attend_to_mask_tokens': False, 'mask_punctuation': mask_punctuation}
        vocab = self.tokenizer.get_vocab()
        self.skiplist = {vocab[c] for c in string.punctuation if c in vocab} if mask_punctuation else set()
        self.q_marker = self.d_marker = None  # no markers: the encoder was not trained with them

    def _ids(self, texts: List[str], marker: Optional[int], maxlen: int, augment: bool):
        enc = self.tokenizer([str(t) for t in texts], truncation=True, max_length=maxlen, padding=True, return_tensors='np')
        return enc['input_ids'].astype(np.int64), enc['attention_mask'].astype(np.int64)

    def _encode(self, ids: np.ndarray, mask: np.ndarray):
        import torch
        with torch.inference_mode():
            hidden = self.bert(input_ids=torch.from_numpy(ids).to(self.device),
                               attention_mask=torch.from_numpy(mask).to(self.device)).last_hidden_state
            return torch.nn.functional.normalize(hidden, dim=-1).float().cpu().numpy()

    def encode_queries(self, texts: List[str]) -> List[np.ndarray]:
        """One (tokens × dim) matrix per query: its real tokens ([CLS] and [SEP] included, padding dropped)."""
        out = []
        for start in range(0, len(texts), self.batch_size):
            ids, mask = self._ids(texts[start:start + self.batch_size], None, self.config['query_maxlen'], augment=False)
            out.extend(vecs[k] for vecs, k in zip(self._encode(ids, mask), mask.astype(bool)))
        return out

    def __repr__(self):
        return f'TokenMaxSim({self.name!r})'


def maxsim(q: np.ndarray, d: np.ndarray) -> float:
    """Σ_i max_j ⟨q_i, d_j⟩ (0 for a document with no token vector)."""
    if len(d) == 0:
        return 0.0
    return float((q @ d.T).max(axis=1).sum())


class ColBERTScorer(pt.Transformer):
    """Re-ranks a result frame (qid, query, docno, text) by ColBERT MaxSim; ranks from 0."""

    def __init__(self, colbert: ColBERT, text_field: str = 'text', verbose: bool = False):
        self.colbert = colbert
        self.text_field = text_field
        self.verbose = verbose

    def transform(self, inp: pd.DataFrame) -> pd.DataFrame:
        pt.validate.result_frame(inp, extra_columns=['query', self.text_field])
        if len(inp) == 0:
            return inp.assign(score=pd.Series([], dtype='float64'), rank=pd.Series([], dtype='int64'))
        queries = inp.drop_duplicates('qid')[['qid', 'query']]
        qvecs = dict(zip(queries.qid, self.colbert.encode_queries(queries['query'].astype(str).tolist())))
        texts = inp[self.text_field].astype(str).tolist()
        scores = []
        for start in pt.tqdm(range(0, len(inp), 256), desc=repr(self), unit='batch', disable=not self.verbose):
            dvecs = self.colbert.encode_docs(texts[start:start + 256])
            scores.extend(maxsim(qvecs[q], d) for q, d in zip(inp['qid'].iloc[start:start + 256], dvecs))
        out = inp.assign(score=scores)
        return pt.model.add_ranks(out.sort_values(['qid', 'score'], ascending=[True, False]))

    def __repr__(self):
        return f'{self.colbert!r}.scorer()'


class ColBERTIndex(pt.Transformer):
    """Exhaustive MaxSim retrieval over a small in-memory collection (a first stage that is feasible on
    CPU for thousands of documents, e.g. the bundled Cranfield: every document's token vectors are kept)."""

    def __init__(self, colbert: ColBERT, texts: Dict[str, str], num_results: int = 100, verbose: bool = False):
        self.colbert = colbert
        self.num_results = num_results
        self.docnos = np.array(list(texts), dtype=str)
        encoded = []
        for start in pt.tqdm(range(0, len(self.docnos), 256), desc=f'{colbert!r} indexing', unit='batch', disable=not verbose):
            encoded.extend(colbert.encode_docs([texts[d] for d in self.docnos[start:start + 256]]))
        lengths = np.array([len(e) for e in encoded], dtype=np.int64)
        if (lengths == 0).any():  # cannot happen: [CLS] and the marker are always kept
            raise ValueError(f'{colbert!r}: {int((lengths == 0).sum())} document(s) encoded to no token vector')
        self.starts = np.concatenate([[0], np.cumsum(lengths)[:-1]]).astype(np.int64)
        self.token_vecs = np.concatenate(encoded) if encoded else np.zeros((0, colbert.config['dim']), dtype=np.float32)

    def transform(self, inp: pd.DataFrame) -> pd.DataFrame:
        pt.validate.query_frame(inp, extra_columns=['query'])
        rows = []
        qvecs = self.colbert.encode_queries(inp['query'].astype(str).tolist()) if len(inp) else []
        for (qid, query), q in zip(inp[['qid', 'query']].itertuples(index=False), qvecs):
            sims = q @ self.token_vecs.T  # (query tokens × all document tokens, grouped by document)
            scores = np.maximum.reduceat(sims, self.starts, axis=1).sum(axis=0)  # MaxSim per document
            top = np.argsort(-scores, kind='stable')[:self.num_results]
            rows.extend((qid, query, self.docnos[j], float(scores[j])) for j in top)
        out = pd.DataFrame(rows, columns=['qid', 'query', 'docno', 'score'])
        return pt.model.add_ranks(out)

    def __repr__(self):
        return f'ColBERTIndex({self.colbert!r}, <{len(self.docnos)} docs>, num_results={self.num_results})'


def _load_tensor(path: str, key: str):
    """One tensor from a checkpoint's weights file (safetensors or pytorch_model.bin)."""
    import torch
    st = os.path.join(path, 'model.safetensors')
    if os.path.exists(st):
        from safetensors.torch import load_file
        tensors = load_file(st)
    else:
        bin_path = os.path.join(path, 'pytorch_model.bin')
        if not os.path.exists(bin_path):
            raise ValueError(f'ColBERT checkpoint {path!r} has no model.safetensors or pytorch_model.bin')
        tensors = torch.load(bin_path, map_location='cpu', weights_only=True)
    if key not in tensors:
        raise ValueError(f'ColBERT checkpoint {path!r} has no {key!r} tensor: not a ColBERT checkpoint')
    return tensors[key]
