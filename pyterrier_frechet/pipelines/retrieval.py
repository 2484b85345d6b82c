"""Retrieval pipelines over a collection, each with its real library, built once and reused from disk.

- :func:`bm25`: pyterrier-pisa BM25.
- :func:`splade`: pyterrier-splade learned sparse retrieval (SPLADE doc encoder → PISA impact index).
- :func:`dense`: pyterrier-dr FlexIndex filled from an :class:`~pyterrier_frechet.Embedder`'s cached vectors
  (one encoding serves dense retrieval and FD), queried with the same model; :func:`dense_reranker` re-ranks
  a first stage with the same vectors.
- :func:`colbert`: ColBERT late interaction (:mod:`pyterrier_frechet.pipelines.late_interaction`), as a re-ranker of a first
  stage or as exhaustive MaxSim retrieval over a small collection.

Index directories are named from the collection and the model identity, so a second run reuses them.
"""
import contextlib
import ctypes
import logging
import os
import sys
from pathlib import Path
from typing import Callable, Optional

import pandas as pd
import pyterrier as pt

from ..data.bundled import Collection
from ..extras import require
from ..vectors.cache import identity_key
from ..vectors.embedder import Embedder, hash_dir, resolve_model_path
from ..vectors.retrieval_models import note_use

logger = logging.getLogger(__name__)

#: The usual hub name of a SPLADE checkpoint (cannot be downloaded on machines without hub access).
DEFAULT_SPLADE = 'naver/splade-cocondenser-ensembledistil'


@contextlib.contextmanager
def native_output_silenced():
    """Send the process's stdout/stderr file descriptors (which native code such as PISA writes to) to /dev/null."""
    sys.stdout.flush()
    sys.stderr.flush()
    saved = [os.dup(1), os.dup(2)]
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, 1)
        os.dup2(devnull, 2)
        yield
    finally:
        # flush what was buffered while silenced (Python's and C's stdio), so that it is not printed later
        sys.stdout.flush()
        sys.stderr.flush()
        try:
            ctypes.CDLL(None).fflush(None)
        except (OSError, AttributeError):  # pragma: no cover - platforms without a C library handle
            pass
        os.dup2(saved[0], 1)
        os.dup2(saved[1], 2)
        for fd in saved + [devnull]:
            os.close(fd)


def _warm(make_retriever: Callable[[], pt.Transformer], collection: Collection) -> pt.Transformer:
    # PISA builds its score index when a retriever is made or first used, printing progress lines as it goes.
    with native_output_silenced():
        retriever = make_retriever()
        retriever(collection.topics.iloc[:1])
    return retriever


def bm25(collection: Collection, work_dir, num_results: int = 100) -> pt.Transformer:
    """BM25 over ``collection`` with pyterrier-pisa (index built once under ``work_dir``)."""
    pyterrier_pisa = require('pyterrier_pisa', 'pipelines', 'pipelines.bm25')
    index = pyterrier_pisa.PisaIndex(str(Path(work_dir) / f'{collection.name}.pisa'), text_field='text')
    if not index.built():
        logger.info('indexing %d documents with PISA into %s', len(collection.texts), index.path)
        with native_output_silenced():
            index.index(collection.corpus_iter())
    return _warm(lambda: index.bm25(num_results=num_results), collection)


def splade(collection: Collection, work_dir, model: str = DEFAULT_SPLADE, num_results: int = 100,
           max_length: int = 256, verbose: bool = False) -> pt.Transformer:
    """SPLADE with pyterrier-splade: documents encoded to term weights, indexed by PISA, queried with the
    quantized scorer. ``model`` is a hub name or a local masked-LM checkpoint directory."""
    pyterrier_pisa = require('pyterrier_pisa', 'pipelines', 'pipelines.splade')
    pyterrier_splade = require('pyterrier_splade', 'pipelines', 'pipelines.splade')
    path = resolve_model_path(model)
    model_key = f'{os.path.basename(os.path.normpath(model))}-{hash_dir(path)[:16]}'
    from transformers import AutoConfig
    positions = getattr(AutoConfig.from_pretrained(path), 'max_position_embeddings', max_length)
    encoder = pyterrier_splade.Splade(path, max_length=min(max_length, positions))
    index = pyterrier_pisa.PisaIndex(str(Path(work_dir) / f'{collection.name}.splade.{model_key}.pisa'), stemmer='none')
    if not index.built():
        logger.info('encoding and indexing %d documents with SPLADE into %s', len(collection.texts), index.path)
        pipeline = encoder.doc_encoder(verbose=verbose) >> index.toks_indexer()
        with native_output_silenced():
            pipeline.index(collection.corpus_iter())
    return _warm(lambda: encoder.query_encoder() >> index.quantized(num_results=num_results), collection)


def _flex_index(collection: Collection, embedder: Embedder, work_dir, verbose: bool = False):
    pyterrier_dr = require('pyterrier_dr', 'pipelines', 'pipelines.dense and pipelines.dense_reranker')
    index = pyterrier_dr.FlexIndex(str(Path(work_dir) / f'{collection.name}.{identity_key(embedder.identity)}.flex'),
                                   verbose=verbose)
    if not index.built():
        docnos = pd.DataFrame({'docno': list(collection.texts)})
        frame = embedder(docnos.assign(text=docnos['docno'].map(collection.texts)))
        index.index(frame[['docno', 'doc_vec']].to_dict(orient='records'))
    return index


def dense(collection: Collection, embedder: Embedder, work_dir, num_results: int = 100, verbose: bool = False) -> pt.Transformer:
    """Dense retrieval with pyterrier-dr: a FlexIndex filled from ``embedder``'s (cached) vectors."""
    index = _flex_index(collection, embedder, work_dir, verbose)
    note_use(embedder.identity['hash'], embedder.name, 'pipelines.dense')
    return embedder.query_encoder() >> index.retriever(num_results=num_results)


def dense_reranker(collection: Collection, embedder: Embedder, work_dir, verbose: bool = False) -> pt.Transformer:
    """Re-ranks a first stage (``bm25(...) >> dense_reranker(...)``) by the dot product of ``embedder``'s query and
    document vectors, read from the same pyterrier-dr FlexIndex as :func:`dense`."""
    index = _flex_index(collection, embedder, work_dir, verbose)
    note_use(embedder.identity['hash'], embedder.name, 'pipelines.dense_reranker')
    return embedder.query_encoder() >> index.scorer()


def colbert(collection: Collection, model: str = None, first_stage: Optional[pt.Transformer] = None,
            num_results: int = 100, verbose: bool = False) -> pt.Transformer:
    """ColBERT: re-ranks ``first_stage`` (text looked up from the collection) or, without one, retrieves
    by exhaustive MaxSim over the collection's token vectors (feasible on CPU for small collections)."""
    from .late_interaction import DEFAULT_COLBERT, ColBERT
    return _maxsim(ColBERT(model or DEFAULT_COLBERT), collection, first_stage, num_results, verbose)


def token_maxsim(collection: Collection, model: str = 'all-MiniLM-L6-v2', first_stage: Optional[pt.Transformer] = None,
                     num_results: int = 100, verbose: bool = False) -> pt.Transformer:
    """Late interaction (MaxSim) over a trained encoder's contextual token vectors — not ColBERT, which needs a
    checkpoint trained for it (:class:`~.late_interaction.TokenMaxSim`); re-ranks ``first_stage`` or, without one,
    retrieves exhaustively."""
    from .late_interaction import TokenMaxSim
    encoder = TokenMaxSim(model)
    note_use(hash_dir(encoder.path), model, 'pipelines.token_maxsim')
    return _maxsim(encoder, collection, first_stage, num_results, verbose)


def _maxsim(encoder, collection: Collection, first_stage, num_results: int, verbose: bool) -> pt.Transformer:
    from .late_interaction import ColBERTIndex
    from ..vectors.text import TextLookup
    if first_stage is None:
        return ColBERTIndex(encoder, collection.texts, num_results=num_results, verbose=verbose)
    return first_stage >> TextLookup(collection.texts, name=collection.name) >> encoder.scorer(verbose=verbose)
