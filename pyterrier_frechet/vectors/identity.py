"""One identity for whatever gives document vectors: what columns are named after, what cache folders and memos are
keyed by.

The rule: two encoders that can give different vectors for some docno get different identities; two that always give
the same vectors get the same one. An identity is built from content, never from file metadata or ``id()``:

- an :class:`~pyterrier_frechet.Embedder`: the sha256 of its model folder's files (weights, tokenizer, configuration),
  the pooling, normalisation, maximum length, backend and precision (what names its cache folder), and the content
  fingerprint of its ``texts=`` source (every docno and text, hashed);
- a :class:`~pyterrier_frechet.VectorStore`: the sha256 of its ``.npy`` and ``.ids.txt`` files' bytes (hashed again
  whenever a file's inode, size, mtime or ctime moves: a file rewritten with its old size and mtime by ``cp -p``,
  ``rsync -t`` or tar still gets a new ctime);
- anything else: its type and ``repr`` (which is also how ir_measures tells two measures apart).

:func:`encoder_identity` is the one function the evaluation asks (its memo of relevant vectors, the memo of their
reduction); an Embedder's ``repr`` — so the column label of ``FD(encoder=...)`` — ends with a digest of it.
"""
import hashlib
import json
import os
from typing import Dict, Iterable, Tuple

_FILE_DIGESTS: Dict[tuple, str] = {}


def digest(value) -> str:
    """sha256 (hex) of a JSON-able value, keys sorted: the same value, the same digest, in every process."""
    return hashlib.sha256(json.dumps(value, sort_keys=True, default=str).encode('utf-8', 'surrogatepass')).hexdigest()


def mapping_fingerprint(items: Iterable[Tuple[str, str]]) -> str:
    """A content fingerprint of docno → text pairs (sha256 over the sorted pairs, each length-prefixed so no two
    different mappings hash the same bytes)."""
    h = hashlib.sha256()
    for key, value in sorted(items):
        for part in (key, value):
            raw = str(part).encode('utf-8', 'surrogatepass')
            h.update(len(raw).to_bytes(8, 'little'))
            h.update(raw)
    return h.hexdigest()


def _signature(path: str) -> tuple:
    st = os.stat(path)
    return (os.path.realpath(path), st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


def sha256_file(path) -> str:
    """sha256 (hex) of a file's bytes, read now in 1 MiB blocks (no memo: what checksums verify)."""
    h = hashlib.sha256()
    with open(path, 'rb') as fin:
        for block in iter(lambda: fin.read(1 << 20), b''):
            h.update(block)
    return h.hexdigest()


def file_digest(path: str) -> str:
    """sha256 of a file's bytes, remembered for as long as its inode, size, mtime and ctime stay (ctime cannot be set
    back by ``touch``, ``cp -p``, ``rsync -t`` or tar, so a rewritten file is hashed again)."""
    signature = _signature(path)
    known = _FILE_DIGESTS.get(signature)
    if known is None:
        known = sha256_file(path)
        if len(_FILE_DIGESTS) > 4096:
            _FILE_DIGESTS.clear()
        _FILE_DIGESTS[signature] = known
    return known


def encoder_identity(encoder) -> tuple:
    """The identity of ``encoder`` (None included), a tuple whose first item says what kind it is:

    - ``'identity'``: a content identity of vectors that cannot change under it (a VectorStore's files): its vectors
      may be remembered under it;
    - ``'live'``: a content identity of an encoder whose answers may still grow (an Embedder serving by docno from its
      cache): keys memos that re-check the vectors they are given;
    - ``'repr'``: any other encoder, by type and ``repr``;
    - ``('none',)``: no encoder."""
    if encoder is None:
        return ('none',)
    identity = getattr(encoder, 'vector_identity', None)
    if callable(identity):
        kind = 'identity' if getattr(encoder, 'vectors_fixed', True) else 'live'
        return (kind, type(encoder).__qualname__) + tuple(identity())
    return ('repr', type(encoder).__qualname__, repr(encoder))


def is_fixed(identity: tuple) -> bool:
    """Whether vectors may be remembered under ``identity`` (see :func:`encoder_identity`)."""
    return identity[0] == 'identity'
