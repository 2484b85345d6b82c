"""Re-weighted Gaussian statistics (pure numpy): the bootstrap's and the paired tests' fast path.

Per query q, the count n_q, sum s_q and cross-product P_q = Σ (x−c)(x−c)ᵀ of its vectors (c a common shift, for
numerical stability) are computed once (:class:`QueryStats`). A sample with per-query weights w_q then has
N = Σ w_q n_q, mean c + Σ w_q s_q / N and covariance (Σ w_q P_q − N μ̃μ̃ᵀ)/(N − 1), so no vector is gathered again;
FD comes from these statistics (:func:`~.frechet.frechet_distance_from_stats`). Where the per-query
cross-products would not fit a memory budget they are streamed in blocks of queries, chunk by chunk of samples
(:class:`QueryStats`), so the bootstrap's memory stays bounded at MS MARCO scale.
"""
import copy
from typing import Iterator, NamedTuple, Optional, Sequence

import numpy as np

from .frechet import GaussianStats, frechet_distance_from_stats

CHUNK = 32  # samples whose weighted sums are formed in one matrix product (cross-products held in memory)
#: When the cross-products are streamed, each chunk of samples is one pass over the queries (forming every query's
#: cross-product again), so chunks are as large as this budget for the per-sample sums of both sides allows:
#: 507 samples at d = 384, two passes for 1000 samples.
STREAM_SUMS_BYTES = 600 << 20


class QueryRows(NamedTuple):
    """See :meth:`QueryStats.rows`."""
    x: np.ndarray
    qidx: np.ndarray
    slot: np.ndarray
    starts: np.ndarray
    upper: np.ndarray


class QueryStats:
    """Per-query count, sum and cross-product of one side's vectors (shifted by ``shift``). The symmetric
    cross-products are packed (upper triangle, d(d+1)/2 numbers) and formed by batched matrix products over blocks
    of queries (each padded with zero rows to the block's largest query), not one small product per query.

    They are held in memory only while that takes at most ``max_bytes`` (default :attr:`MATERIALIZE_BYTES`, 256 MiB:
    DL19's 43 queries at d = 384 take 25 MB); beyond, :meth:`weighted_cross` streams them block by block and keeps
    only the (sorted, shifted) vectors — MS MARCO dev's 6,980 queries at d = 384 would need 4.1 GB per side, their
    retrieved vectors take 214 MB. Both give the same sums to round-off.

    Args:
        qidx: the query (0..n_queries−1) of each vector.
        x: the vectors, one row each (float64), in any order.
        n_queries: size of the query universe.
        shift: the common shift c.
        max_bytes: hold the packed cross-products in memory up to this size (None: the default).
    """

    _BLOCK = 128  # queries per block when the cross-products are held, and per re-weighting product when streamed
    _SUB_BLOCK = 64  # queries per batched d×d product (bounds the temporary unpacked products: 75 MB at d = 384)
    MATERIALIZE_BYTES = 256 << 20

    def __init__(self, qidx: np.ndarray, x: np.ndarray, n_queries: int, shift: np.ndarray, max_bytes: Optional[int] = None):
        d = len(shift)
        self.doc_weight = np.ones(n_queries)  # each document of query q weighs doc_weight[q] (see per_query_weighted)
        self._upper = np.flatnonzero(np.triu(np.ones((d, d), dtype=bool)))  # packed positions in a flattened d×d
        self.n = np.zeros(n_queries)
        self.s = np.zeros((n_queries, d))
        qidx = np.asarray(qidx, dtype=np.int64)
        if (qidx < 0).any() or (qidx >= n_queries).any():
            raise ValueError(f'{int(((qidx < 0) | (qidx >= n_queries)).sum())} row(s) belong to queries outside the universe')
        order = np.argsort(qidx, kind='stable')
        self._qidx = qidx[order]
        self._x = np.asarray(x, dtype=np.float64).reshape(len(qidx), d)[order] - shift
        self.n[:] = np.bincount(self._qidx, minlength=n_queries)
        self._starts = np.concatenate([[0], np.cumsum(self.n, dtype=np.int64)])
        present = self.n > 0
        if len(self._qidx):
            self.s[present] = np.add.reduceat(self._x, self._starts[:-1][present], axis=0)  # rows are sorted by query
        self._slot = np.arange(len(self._qidx)) - self._starts[self._qidx]  # a row's position within its query
        limit = self.MATERIALIZE_BYTES if max_bytes is None else max_bytes
        self._p = self._all_blocks(self._BLOCK) if n_queries * len(self._upper) * 8 <= limit else None

    @property
    def packed_size(self) -> int:
        return len(self._upper)

    @property
    def streamed(self) -> bool:
        """Whether the cross-products are streamed (not held in memory)."""
        return self._p is None

    @property
    def p(self) -> np.ndarray:
        """The packed per-query cross-products (n_queries × d(d+1)/2), formed now if they are streamed."""
        return self._p if self._p is not None else self._all_blocks(self._BLOCK)

    def rows(self) -> 'QueryRows':
        """What the cross-products are formed from, for a backend that forms them itself (the torch bootstrap streams
        them on its device the same way): the shifted vectors sorted by query, each one's query and position in it,
        each query's first row, and the packed positions in a flattened d×d matrix."""
        return QueryRows(self._x, self._qidx, self._slot, self._starts, self._upper)

    def _blocks(self, size: int):
        """(query slice, packed cross-products of its queries) for consecutive blocks of ``size`` queries, each
        formed in sub-blocks of :attr:`_SUB_BLOCK` queries (bounding the temporary unpacked d×d products)."""
        d = self._x.shape[1]
        for b in range(0, len(self.n), size):
            block = slice(b, min(b + size, len(self.n)))
            cross = np.zeros((block.stop - block.start, len(self._upper)))
            for sub in range(block.start, block.stop, self._SUB_BLOCK):
                part = slice(sub, min(sub + self._SUB_BLOCK, block.stop))
                width = int(self.n[part].max())
                if width == 0:
                    continue
                rows = slice(self._starts[part.start], self._starts[part.stop])
                padded = np.zeros((part.stop - part.start, width, d))
                padded[self._qidx[rows] - sub, self._slot[rows]] = self._x[rows]
                cross[sub - b:part.stop - b] = (padded.transpose(0, 2, 1) @ padded).reshape(len(padded), d * d)[:, self._upper]
            yield block, cross

    def _all_blocks(self, size: int) -> np.ndarray:
        p = np.zeros((len(self.n), len(self._upper)))
        for block, cross in self._blocks(size):
            p[block] = cross
        return p

    def weighted_cross(self, weights: np.ndarray) -> np.ndarray:
        """Σ_q weights[b, q] · P_q for every row b of ``weights`` (samples × queries), packed."""
        weights = np.atleast_2d(weights)
        if self._p is not None:
            return weights @ self._p
        from scipy.linalg.blas import dgemm
        # out += W_block @ P_block in place (BLAS beta = 1; P_blockᵀ is Fortran-ordered, so nothing is copied)
        out = np.zeros((len(weights), len(self._upper)), order='F')
        for block, cross in self._blocks(self._BLOCK):
            w = np.ascontiguousarray(weights[:, block], dtype=np.float64)
            if w.any():
                out = dgemm(1.0, w, cross.T, beta=1.0, c=out, trans_b=True, overwrite_c=True)
        return out


def unpack(packed: np.ndarray, d: int) -> np.ndarray:
    """The symmetric d×d matrix whose row-major upper triangle is ``packed`` (the packing of :class:`QueryStats`)."""
    upper = np.triu_indices(d)
    out = np.empty((d, d))
    out[upper] = packed
    out.T[upper] = packed
    return out


def sample_chunk(*parts: QueryStats) -> int:
    """How many samples to re-weight at once: :data:`CHUNK` while every part holds its cross-products; when one
    streams them, as many as :data:`STREAM_SUMS_BYTES` allows for two sides' packed sums (each chunk is one pass)."""
    if not any(part.streamed for part in parts):
        return CHUNK
    return max(CHUNK, STREAM_SUMS_BYTES // (2 * parts[0].packed_size * 8))


def query_weights(qids) -> np.ndarray:
    """1/n_q for each of the n_q vectors of query q (one query id per vector): every query has total weight 1."""
    _, inverse, counts = np.unique(np.asarray(qids), return_inverse=True, return_counts=True)
    return 1.0 / counts[inverse]


def per_query_weighted(stats: QueryStats) -> QueryStats:
    """The same statistics with every query of total weight 1: each of query q's n_q documents weighs 1/n_q
    (``FD(weighting='query')``). Shares the vectors, sums and cross-products (no copy)."""
    out = copy.copy(stats)
    out.doc_weight = np.divide(1.0, stats.n, out=np.zeros_like(stats.n), where=stats.n > 0)
    return out


def gaussians(parts: Sequence[QueryStats], weights: Sequence[np.ndarray], shift: np.ndarray) -> Iterator[Optional[GaussianStats]]:
    """The Gaussian of each sample, one at a time: per-query statistics of ``parts`` summed with per-query
    ``weights`` (one samples × queries matrix per part, so queries can be drawn from different systems); None where
    a sample has fewer than 2 vectors."""
    d = len(shift)
    # A query drawn w times contributes w copies of each of its documents, each of weight doc_weight (1, or 1/n_q):
    # per query the weight u = w·doc_weight scales its sums; V₁ = Σ u n, V₂ = Σ w n doc_weight² (aweights' V₂).
    counts = sum(w @ part.n for part, w in zip(parts, weights))
    v1 = sum((w * part.doc_weight) @ part.n for part, w in zip(parts, weights))
    v2 = sum(w @ (part.n * part.doc_weight ** 2) for part, w in zip(parts, weights))
    sums = sum((w * part.doc_weight) @ part.s for part, w in zip(parts, weights))
    crosses = sum(part.weighted_cross(w * part.doc_weight) for part, w in zip(parts, weights))  # one product per chunk
    for n, a, b, total, cross in zip(counts, v1, v2, sums, crosses):
        if n < 2 or a <= 0 or a - b / a <= 0:
            yield None
            continue
        mean_shifted = total / a
        cov = unpack(cross, d)
        cov -= a * np.outer(mean_shifted, mean_shifted)
        cov /= a - b / a  # n − 1 for unit weights
        yield GaussianStats(mean_shifted + shift, cov, int(n))


def weighted_fds(rel: QueryStats, rel_weights: np.ndarray, ret_parts: Sequence[QueryStats],
                 ret_weights: Sequence[np.ndarray], shift: np.ndarray, pbar=None) -> np.ndarray:
    """FD per sample (row of the weights) between the weighted relevant set and the weighted retrieved
    parts, formed in chunks of samples; NaN where a side has fewer than 2 vectors. ``pbar``: anything with
    ``update(n)``."""
    out = np.full(len(rel_weights), np.nan)
    chunk = sample_chunk(rel, *ret_parts)
    for start in range(0, len(rel_weights), chunk):
        sl = slice(start, start + chunk)
        relevant = gaussians([rel], [rel_weights[sl]], shift)
        retrieved = gaussians(ret_parts, [w[sl] for w in ret_weights], shift)
        for b, (s1, s2) in enumerate(zip(relevant, retrieved), start):
            if s1 is not None and s2 is not None:
                out[b] = frechet_distance_from_stats(s1, s2)
        if pbar is not None:
            pbar.update(len(rel_weights[sl]))
    return out
