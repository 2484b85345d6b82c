"""Corpus-scale encoding on a Ray cluster, into an :class:`~pyterrier_frechet.Embedder`'s own cache.

For one machine, ``Embedder(devices=['cuda:0', 'cuda:1'])`` (sentence-transformers' multi-process pool)
is simpler. For many machines, :func:`encode_with_ray` spreads the documents the cache does not have yet
over Ray workers (``ray.data`` ``map_batches`` with one model per worker actor) and writes the vectors
into the Embedder's cache from the driver, chunk by chunk, so the cache has one writer, each chunk is
committed as it arrives, and an interrupted job resumes where it stopped. Evaluation then reads the
vectors from the cache as usual: every document encoded once per model, ever.

On a cluster (``ray start --head`` on one node, ``ray start --address=HEAD:6379`` on the others)::

    import ray, pyterrier_frechet as pf
    ray.init(address='auto')
    emb = pf.Embedder(cache_dir='/shared/cache')
    pf.distributed.encode_with_ray(emb, docs, num_workers=8, num_gpus_per_worker=1)

Without a running Ray, a local one is started (``ray.init()``). Ray is an optional dependency
(``pip install "ray[data]"``).
"""
import logging
import numpy as np
import pandas as pd
import pyterrier as pt

logger = logging.getLogger(__name__)

__all__ = ['encode_with_ray']


class _EncodeBatch:
    """A Ray actor holding one copy of the model; encodes batches of (docno, text)."""

    def __init__(self, config: dict):
        from .embedder import Embedder
        self.embedder = Embedder(**config, cache_dir=None, verbose=False)

    def __call__(self, batch: dict) -> dict:
        vecs = self.embedder.encode([str(t) for t in batch['text']])
        return {'docno': np.asarray(batch['docno'], dtype=str), 'text': np.asarray(batch['text'], dtype=object), 'doc_vec': vecs}


def encode_with_ray(embedder, docs: pd.DataFrame, num_workers: int = 2, chunk_size: int = 256,
                    num_gpus_per_worker: float = 0, verbose: bool = True) -> int:
    """Encode the documents of ``docs`` (columns ``docno``, ``text``) that ``embedder``'s cache lacks, on
    ``num_workers`` Ray actors, writing the vectors into that cache. Returns how many were encoded.

    Args:
        embedder: an :class:`~pyterrier_frechet.Embedder` with a cache (``cache_dir`` not None). Workers load
            the same model with the same pooling, normalisation and maximum length.
        docs: a frame with ``docno`` and the embedder's text column; repeated docnos are encoded once.
        num_workers: Ray actors, each with its own copy of the model.
        chunk_size: documents per Ray batch (and per cache commit).
        num_gpus_per_worker: GPUs each actor reserves (0: CPU).
        verbose: a progress bar over the documents.
    """
    if embedder.cache is None:
        raise ValueError(f'{embedder!r} has no cache (cache_dir=None): encode_with_ray writes into the cache')
    if num_workers < 1 or chunk_size < 1:
        raise ValueError(f'num_workers and chunk_size must be positive, got {num_workers} and {chunk_size}')
    pt.validate.columns(docs, includes=['docno', embedder.text_field])
    frame = docs[['docno', embedder.text_field]].astype({'docno': str}).drop_duplicates('docno')
    if frame[embedder.text_field].isna().any():
        raise ValueError(f'{int(frame[embedder.text_field].isna().sum())} document(s) have no text (NaN/None)')
    blank = frame.loc[~frame[embedder.text_field].astype(str).str.strip().astype(bool), 'docno']
    if len(blank):
        raise ValueError(f'{len(blank)} document(s) have an empty or white-space-only text, e.g. {blank.iloc[:5].tolist()}')
    frame[embedder.text_field] = frame[embedder.text_field].astype(str)
    cached = embedder.cache.get(frame['docno'].to_numpy(), frame[embedder.text_field].tolist())
    todo = frame[~frame['docno'].isin(cached.keys())].rename(columns={embedder.text_field: 'text'})
    logger.info('%r: %d of %d documents already cached; %d to encode on %d Ray worker(s)',
                embedder, len(frame) - len(todo), len(frame), len(todo), num_workers)
    if len(todo) == 0:
        return 0
    embedder.cache.refuse_if_read_only(todo['docno'].tolist())  # before Ray starts
    from ..extras import require
    # after the refusals and the cache: nothing to encode needs no Ray
    ray = require('ray', 'ray', f'encode_with_ray, to encode {len(todo)} document(s),')
    if not ray.is_initialized():
        ray.init(include_dashboard=False, log_to_driver=False)
    config = {'model_name': embedder.path, 'pooling': embedder.pooling, 'normalize': embedder.normalize,
              'max_length': embedder.max_length, 'batch_size': embedder.batch_size,
              'device': 'cuda' if num_gpus_per_worker else 'cpu'}
    dataset = ray.data.from_pandas(todo.reset_index(drop=True)).map_batches(
        _EncodeBatch, fn_constructor_kwargs={'config': config}, batch_size=chunk_size, batch_format='numpy',
        concurrency=num_workers, num_gpus=num_gpus_per_worker)
    done = 0
    with pt.tqdm(total=len(todo), desc=f'{embedder!r} on Ray', unit='doc', disable=not verbose) as pbar:
        for batch in dataset.iter_batches(batch_size=chunk_size, batch_format='numpy'):
            embedder.cache.put(batch['docno'], np.asarray(batch['doc_vec'], dtype=np.float32), [str(t) for t in batch['text']])
            done += len(batch['docno'])
            pbar.update(len(batch['docno']))
    embedder.n_encoded += done
    return done

