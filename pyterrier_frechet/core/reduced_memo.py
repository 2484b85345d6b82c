"""A small memo of :func:`~pyterrier_frechet.core.frechet.reduce_set` results, so that the relevant set every run
of one evaluation shares is reduced once (pure numpy).

The key is what the caller says the set *is* (the encoder's identity, :mod:`pyterrier_frechet.vectors.identity`, and
the relevant docnos); an entry is served only if the vectors' shape and a digest of their bytes (blake2b) match as
well, so a changed vector under the same key is recomputed, never served stale — or if they are the very read-only
array reduced before (which cannot have changed).
Least recently used entries leave first.
"""
import hashlib
from collections import OrderedDict
from typing import Tuple

import numpy as np

from .frechet import ReducedSet, reduce_set

MAX_ENTRIES = 16  # relevant sets remembered (a pt.Experiment over many systems reuses a handful)

_MEMO: 'OrderedDict[tuple, Tuple[bytes, np.ndarray, ReducedSet]]' = OrderedDict()


def _digest(arr: np.ndarray) -> bytes:
    """A digest of the array's dtype and bytes: equal only for the same values (a sum is equal for many)."""
    h = hashlib.blake2b(arr.dtype.str.encode(), digest_size=16)
    h.update(memoryview(arr).cast('B'))
    return h.digest()


def reduced(vectors: np.ndarray, key: tuple) -> ReducedSet:
    """:func:`reduce_set` of ``vectors``, remembered under ``key``."""
    arr = np.ascontiguousarray(vectors)
    key = tuple(key) + (arr.shape,)
    hit = _MEMO.get(key)
    if hit is not None and hit[1] is arr and not arr.flags.writeable:
        _MEMO.move_to_end(key)
        return hit[2]
    checksum = _digest(arr)
    if hit is not None and hit[0] == checksum:
        _MEMO.move_to_end(key)
        return hit[2]
    result = reduce_set(arr)
    _MEMO[key] = (checksum, arr if not arr.flags.writeable else None, result)
    _MEMO.move_to_end(key)
    if len(_MEMO) > MAX_ENTRIES:
        _MEMO.popitem(last=False)
    return result


def clear() -> None:
    """Forget every remembered reduction."""
    _MEMO.clear()
