"""Re-weighted Gaussian statistics (pure numpy): the bootstrap's and the paired tests' fast path.

Per query q, the count n_q, sum s_q and cross-product P_q = Σ (x−c)(x−c)ᵀ of its vectors (c a common shift, for
numerical stability) are computed once (:class:`QueryStats`). A sample with per-query weights w_q then has
N = Σ w_q n_q, mean c + Σ w_q s_q / N and covariance (Σ w_q P_q − N μ̃μ̃ᵀ)/(N − 1), so no vector is gathered again;
FD comes from these statistics (:func:`~.frechet.frechet_distance_from_stats`). Where the per-query
cross-products would not fit a memory budget they are streamed in blocks of queries, chunk by chunk of samples
(:class:`QueryStats`), so the bootstrap's memory stays bounded at MS MARCO scale.
"""
import copy
import functools
from typing import Iterator, NamedTuple, Optional, Sequence

import numpy as np

from .downdate import MAX_UPDATE_FRACTION, RelevantDowndates, downdated_fds, relevant_downdates
from .frechet import GaussianStats, frechet_distance_from_stats
from .kernel import (CONGRUENCE_RTOL, fd_value, moment_scale, nuclear_norm, padded_factor, pivoted_cholesky,
                     spread_normaliser, trace_sqrt_congruence, unpermuted, WeightedSide,
                     weighted_side)
from .threads import lapack_threads

CHUNK = 32  # samples whose weighted sums are formed in one matrix product (cross-products held in memory)
#: When the cross-products are streamed, each chunk of samples is one pass over the queries (forming every query's
#: cross-product again), so chunks are as large as this budget for the per-sample sums of both sides allows:
#: 507 samples at d = 384, two passes for 1000 samples.
STREAM_SUMS_BYTES = 600 << 20
#: ... and as this budget allows for one chunk's weights in float64 (samples × queries: the weights may be held in a
#: compact integer type, :func:`weighted_fds` converts a chunk at a time): 262 samples at 100,000 queries; it only
#: binds above ~52,000 queries at d = 384.
STREAM_WEIGHTS_BYTES = 200 << 20


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
    only the vectors — MS MARCO dev's 6,980 queries at d = 384 would need 4.1 GB per side, their retrieved vectors
    take 107 MB in float32. Both give the same sums to round-off.

    The vectors are kept as given — in their own precision (float32 from a VectorStore stays float32) and, when the
    rows are already sorted by query (as the selection gives them), without a copy; each block of them is promoted to
    float64 and shifted when its sums and cross-products are formed (float32 → float64 is exact, so the statistics
    are those of the float64 vectors: every sum and product is float64). At 100,000 queries × 10 retrieved at
    d = 384 that is 1.5 GB of float32 vectors instead of two float64 copies (6.1 GB).

    Args:
        qidx: the query (0..n_queries−1) of each vector.
        x: the vectors, one row each (any floating-point precision; float64 for other types), in any order.
        n_queries: size of the query universe.
        shift: the common shift c.
        max_bytes: hold the packed cross-products in memory up to this size (None: the default).
    """

    _BLOCK = 128  # queries per block when the cross-products are held, and per re-weighting product when streamed
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
        x = np.asarray(x)
        if not np.issubdtype(x.dtype, np.floating):
            x = x.astype(np.float64)
        x = x.reshape(len(qidx), d)
        self._shift = np.asarray(shift, dtype=np.float64)
        if len(qidx) > 1 and (qidx[1:] < qidx[:-1]).any():
            order = np.argsort(qidx, kind='stable')
            self._qidx, self._x = qidx[order], x[order]
        else:  # already sorted by query: the caller's vectors, not a copy (never written to)
            self._qidx, self._x = qidx, x
        self.n[:] = np.bincount(self._qidx, minlength=n_queries)
        self._starts = np.concatenate([[0], np.cumsum(self.n, dtype=np.int64)])
        for part in self._query_chunks():  # per-query sums of the shifted vectors, a chunk of queries at a time
            present = self.n[part] > 0
            if present.any():
                first = self._starts[part.start:part.stop][present]
                self.s[part][present] = np.add.reduceat(self._shifted(slice(self._starts[part.start], self._starts[part.stop])),
                                                        first - first[0], axis=0)  # rows are sorted by query
        self._slot = np.arange(len(self._qidx)) - self._starts[self._qidx]  # a row's position within its query
        limit = self.MATERIALIZE_BYTES if max_bytes is None else max_bytes
        # held: formed on first use (a caller that needs only the sums and vectors — the per-query rows' influence —
        # never forms them) and kept
        self._hold = n_queries * len(self._upper) * 8 <= limit
        self._held = None

    #: rows of vectors promoted to float64 at once when the per-query sums are formed (64 MB at d = 384)
    _CHUNK_ROWS = 1 << 15

    def _shifted(self, rows: slice) -> np.ndarray:
        """Rows of the vectors in float64, shifted by the common shift (a new array)."""
        out = np.array(self._x[rows], dtype=np.float64)
        out -= self._shift
        return out

    def _query_chunks(self):
        """Slices of consecutive queries holding at most :attr:`_CHUNK_ROWS` rows (or one query, if it has more)."""
        nq, q = len(self.n), 0
        while q < nq:
            stop = int(np.searchsorted(self._starts, self._starts[q] + self._CHUNK_ROWS, side='right')) - 1
            stop = min(max(stop, q + 1), nq)
            yield slice(q, stop)
            q = stop

    def projected_sums(self, mean_shifted: np.ndarray, project: Optional[np.ndarray] = None) -> np.ndarray:
        """Per query q: Σ_{i∈q} ‖(x_i − c − μ̃)ᵀP‖², the squared deviations of its vectors from a mean (``mean_shifted``,
        in the shifted frame) projected by ``project`` (d × k; None: the identity, so the squared distances), a chunk
        of rows at a time (no copy of all the vectors)."""
        out = np.zeros(len(self.n))
        for part in self._query_chunks():
            rows = slice(self._starts[part.start], self._starts[part.stop])
            if rows.stop == rows.start:
                continue
            dev = self._shifted(rows)
            dev -= mean_shifted
            if project is not None:
                dev = dev @ project
            out += np.bincount(self._qidx[rows], weights=np.einsum('ij,ij->i', dev, dev), minlength=len(self.n))
        return out

    @property
    def unit_doc_weights(self) -> bool:
        """Whether every document weighs 1 (plain FD): the weights need not be multiplied by :attr:`doc_weight`."""
        return bool(np.all(self.doc_weight == 1.0))

    @property
    def packed_size(self) -> int:
        return len(self._upper)

    @property
    def _p(self) -> Optional[np.ndarray]:
        """The held packed cross-products, formed on first use; None where they are streamed."""
        if self._hold and self._held is None:
            self._held = self._all_blocks(self._BLOCK)
        return self._held

    @property
    def streamed(self) -> bool:
        """Whether the cross-products are streamed (not held in memory)."""
        return not self._hold

    @property
    def vectors(self) -> np.ndarray:
        """The vectors in their own precision, sorted by query; never
        written to: they may be the caller's array."""
        return self._x

    @property
    def p(self) -> np.ndarray:
        """The packed per-query cross-products (n_queries × d(d+1)/2), formed now if they are streamed."""
        return self._p if self._p is not None else self._all_blocks(self._BLOCK)

    def rows(self) -> 'QueryRows':
        """What the cross-products are formed from, for a backend that forms them itself (the torch bootstrap streams
        them on its device the same way): the shifted vectors sorted by query, each one's query and position in it,
        each query's first row, and the packed positions in a flattened d×d matrix. The vectors are a float64 shifted
        copy, made now."""
        return QueryRows(self._shifted(slice(None)), self._qidx, self._slot, self._starts, self._upper)

    def _blocks(self, size: int):
        """(query slice, packed cross-products of its queries) for consecutive blocks of ``size`` queries: each query's
        XᵀX by one BLAS ``syrk`` into a d × d buffer (its lower triangle, in Fortran order, is the row-major upper
        triangle of the same memory read as C order) packed straight into the block's row. A batched product of the
        zero-padded queries (the route before) wrote every query's full d × d product first, then gathered it: on
        DL19's 43 queries × 10 vectors at d = 384, 17 ms here against 47–85 ms."""
        from scipy.linalg.blas import dsyrk
        d = self._x.shape[1]
        buffer = np.zeros((d, d), order='F')
        for b in range(0, len(self.n), size):
            block = slice(b, min(b + size, len(self.n)))
            cross = np.zeros((block.stop - block.start, len(self._upper)))
            rows = slice(self._starts[block.start], self._starts[block.stop])
            shifted = self._shifted(rows)
            offset = self._starts[block.start]
            # thin products (k = a query's few vectors): on one BLAS thread, as threads only contend here
            with lapack_threads():
                for q in range(block.start, block.stop):
                    if self.n[q] == 0:
                        continue
                    x = shifted[self._starts[q] - offset:self._starts[q + 1] - offset]
                    product = dsyrk(1.0, x, trans=1, lower=1, c=buffer, overwrite_c=1)
                    np.take(product.T.ravel(), self._upper, out=cross[q - b])
            yield block, cross

    def _all_blocks(self, size: int) -> np.ndarray:
        p = np.zeros((len(self.n), len(self._upper)))
        for block, cross in self._blocks(size):
            p[block] = cross
        return p

    def rows_of(self, queries: np.ndarray) -> np.ndarray:
        """Positions, in the sorted vectors, of every vector of these queries, query after query in the given order."""
        lengths = self.n[queries].astype(np.int64)
        offsets = np.cumsum(lengths) - lengths
        return np.repeat(self._starts[queries] - offsets, lengths) + np.arange(int(lengths.sum()), dtype=np.int64)

    def total_cross(self, weights: np.ndarray) -> np.ndarray:
        """Σ_q weights[q] · P_q, packed: from the held cross-products where they are formed already, else by BLAS
        ``syrk`` over the rows of the queries of positive weight, each scaled by √weight, a chunk of rows at a time —
        one product and one packing instead of every query's (on DL19's 430 retrieved vectors at d = 384, a few ms
        against 25 ms for forming the 43 packed products). Not for a total that per-query products are subtracted
        from: its round-off differs from theirs (:func:`weighted_total_cross`)."""
        weights = np.asarray(weights, dtype=np.float64)
        if self._held is not None or (weights < 0).any():
            return weights @ self.p if self._p is not None else self.weighted_cross(weights[None])[0]
        from scipy.linalg.blas import dsyrk
        d = self._x.shape[1]
        out = np.zeros((d, d), order='F')
        root = np.sqrt(weights)
        with lapack_threads():
            for part in self._query_chunks():
                rows = slice(self._starts[part.start], self._starts[part.stop])
                scale = root[self._qidx[rows]]
                keep = scale > 0
                if keep.any():
                    x = self._shifted(rows)[keep]
                    x *= scale[keep, None]
                    out = dsyrk(1.0, x, trans=1, lower=1, beta=1.0, c=out, overwrite_c=1)
        return np.take(out.T.ravel(), self._upper)  # the lower triangle in Fortran order: the row-major upper one

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


@functools.lru_cache(maxsize=4)
def _packed_index(d: int) -> np.ndarray:
    """Position of (i, j) in the row-major packed upper triangle of a d × d symmetric matrix, for every i, j."""
    idx = np.zeros((d, d), dtype=np.int64)
    iu = np.triu_indices(d)
    idx[iu] = np.arange(len(iu[0]))
    idx.T[iu] = idx[iu]
    idx.flags.writeable = False  # shared by every caller (cached)
    return idx


def unpack(packed: np.ndarray, d: int) -> np.ndarray:
    """The symmetric d×d matrix whose row-major upper triangle is ``packed`` (the packing of :class:`QueryStats`):
    one gather through :func:`_packed_index`."""
    return packed[_packed_index(d)]


def sample_chunk(*parts: QueryStats) -> int:
    """How many samples to re-weight at once: :data:`CHUNK` while every part holds its cross-products; when one
    streams them, as many as :data:`STREAM_SUMS_BYTES` allows for two sides' packed sums (each chunk is one pass)."""
    if not any(part.streamed for part in parts):
        return CHUNK
    return max(CHUNK, min(STREAM_SUMS_BYTES // (2 * parts[0].packed_size * 8),
                          STREAM_WEIGHTS_BYTES // (max(len(parts[0].n), 1) * 8)))


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


class PackedGaussian(NamedTuple):
    """A weighted Gaussian with its covariance packed as :class:`QueryStats` packs cross-products (the row-major upper
    triangle): the mean of the shifted vectors, the packed covariance, and the number of vectors."""
    mean_shifted: np.ndarray
    packed: np.ndarray
    n: float
    #: how many distinct vectors it holds (a query drawn twice counts once), which bounds its rank: n − 1 or less
    distinct: Optional[float] = None

    def unpacked(self) -> GaussianStats:
        """As :class:`~.frechet.GaussianStats` in the shifted frame the statistics were summed in (mean
        ``mean_shifted``), where every internal FD is computed: FD does not move with a common translation, but the
        round-off its tolerances are measured against does (:func:`~.kernel.moment_scale`) — in the caller's frame,
        two sets 1e3 from the origin with a spread of 1e-2 had their small directions taken for round-off (31× FD
        off in the leave-outs, tests/test_downdate.py)."""
        return GaussianStats(self.mean_shifted, unpack(self.packed, len(self.mean_shifted)), int(round(self.n)))


def _packed_gaussian(n, a, b, total, cross, distinct=None) -> Optional[PackedGaussian]:
    """One weighted Gaussian from its count n, V₁ = a, V₂ = b, shifted sum and packed cross-product (None where fewer
    than 2 vectors or no spread): mean = sum / V₁, covariance (Σ w P − V₁ μ̃μ̃ᵀ) / (V₁ − V₂/V₁), packed."""
    return _packed_from_side(weighted_side(n, a, b, total), cross, distinct)


def _packed_from_side(side: Optional[WeightedSide], cross: np.ndarray, distinct=None) -> Optional[PackedGaussian]:
    """The :class:`PackedGaussian` of a :class:`~.kernel.WeightedSide` (None stays None) and its packed
    cross-product."""
    if side is None:
        return None
    i, j = upper_pairs(len(side.total))
    packed = cross - side.v1 * (side.mean[i] * side.mean[j])
    packed /= side.alpha  # n − 1 for unit weights
    return PackedGaussian(side.mean, packed, side.n, distinct)


@functools.lru_cache(maxsize=4)
def upper_pairs(d: int):
    """(row, column) of each position of the row-major packed upper triangle (:class:`QueryStats`' packing); read-only
    (shared by every caller: cached)."""
    pairs = np.triu_indices(d)
    for a in pairs:
        a.flags.writeable = False
    return pairs


def packed_gaussians(parts: Sequence[QueryStats], weights: Sequence[np.ndarray],
                     shift: np.ndarray) -> Iterator[Optional[PackedGaussian]]:
    """The Gaussian of each sample, one at a time, its covariance packed: per-query statistics of ``parts`` summed
    with per-query ``weights`` (one samples × queries matrix per part, so queries can be drawn from different
    systems); None where a sample has fewer than 2 vectors."""
    counts, v1, v2, sums, distinct, u_parts = _moments(parts, weights)
    crosses = sum(part.weighted_cross(u) for part, u in zip(parts, u_parts))  # one product per chunk
    for n, a, b, total, cross, k in zip(counts, v1, v2, sums, crosses, distinct):
        yield _packed_gaussian(n, a, b, total, cross, k)


def _moments(parts: Sequence[QueryStats], weights: Sequence[np.ndarray]):
    """Per sample (row of the weights): the count, V₁, V₂, shifted sum and distinct vectors of the weighted parts,
    and each part's per-query weights u (see below)."""
    # A query drawn w times contributes w copies of each of its documents, each of weight doc_weight (1, or 1/n_q):
    # per query the weight u = w·doc_weight scales its sums; V₁ = Σ u n, V₂ = Σ w n doc_weight² (aweights' V₂).
    # (u is w itself for unit document weights: no samples × queries copy, 400 MB at 100,000 queries.)
    u_parts = [w if part.unit_doc_weights else w * part.doc_weight for part, w in zip(parts, weights)]  # u, per part
    counts = sum(w @ part.n for part, w in zip(parts, weights))
    v1 = sum(u @ part.n for part, u in zip(parts, u_parts))
    v2 = sum(w @ (part.n * part.doc_weight ** 2) for part, w in zip(parts, weights))
    sums = sum(u @ part.s for part, u in zip(parts, u_parts))
    distinct = sum((w > 0) @ part.n for part, w in zip(parts, weights))
    return counts, v1, v2, sums, distinct, u_parts


def weighted_rows(stats: QueryStats, weights: np.ndarray, mean_shifted: np.ndarray) -> np.ndarray:
    """F with FᵀF = the weighted covariance of :func:`gaussians` for one sample (``weights``: one per query; each
    document of query q weighs weights[q]·doc_weight[q]): one row per vector of a query of positive weight, its
    deviation from the weighted mean scaled by √(u / (V₁ − V₂/V₁)) — the covariance as a product of the vectors
    themselves, exact, at the cost of a few hundred rows where the d × d covariance is a d²/2 sum."""
    q = np.flatnonzero(weights > 0)
    rows = stats.rows_of(q)
    if len(rows) == 0:
        return np.zeros((0, len(mean_shifted)))
    per_row = stats._qidx[rows]
    u = (weights * stats.doc_weight)[per_row]
    a, b = float(u.sum()), float((weights * stats.doc_weight ** 2)[per_row].sum())
    x = np.ascontiguousarray(stats._x[rows])
    # a document retrieved for several queries is one vector of their summed weight (the same FᵀF): duplicated rows
    # would leave exact zeros among the singular values, refused by the eigenvalue route
    key = x.view(np.dtype((np.void, x.dtype.itemsize * x.shape[1]))).ravel()
    _, first, inverse = np.unique(key, return_index=True, return_inverse=True)
    if len(first) < len(x):
        u, x = np.bincount(inverse.ravel(), weights=u, minlength=len(first)), x[first]
    f = np.array(x, dtype=np.float64)
    f -= stats._shift
    f -= mean_shifted
    root = np.sqrt(u)
    f *= (root / np.sqrt(spread_normaliser(2, a, b) or np.nan))[:, None]  # callers form rows only for a side with spread
    return _deflate_weighted(f, root)


def _deflate_weighted(f: np.ndarray, root: np.ndarray) -> np.ndarray:
    """The rows F of :func:`weighted_rows` less the one direction they are bound to lack: centred on the weighted
    mean, √u ᵀF = 0 (u the rows' weights), which would put an exact zero among the singular values of any product
    with F (and cost the eigenvalue route its digits). The Householder reflection P mapping √u/‖√u‖ to e₁ is
    orthogonal, so (PF)ᵀ(PF) = FᵀF; the first row of PF is 0 (up to round-off) and the other m − 1 rows are returned
    (:func:`~.frechet._deflate` with unit weights)."""
    if len(f) < 2:
        return f
    unit = root / np.linalg.norm(root)
    vtf = unit @ f - f[0]  # v = unit − e₁: vᵀF
    return f[1:] - np.outer(unit[1:], vtf) * (1.0 / (1.0 - unit[0]))


def streamed(stats: QueryStats) -> QueryStats:
    """The same statistics with the cross-products streamed (formed block by block for each pass, not held): shares
    the vectors, counts, sums and document weights (no copy)."""
    out = copy.copy(stats)
    out._hold, out._held = False, None
    return out


def gaussians(parts: Sequence[QueryStats], weights: Sequence[np.ndarray], shift: np.ndarray) -> Iterator[Optional[GaussianStats]]:
    """:func:`packed_gaussians` as :class:`~.frechet.GaussianStats` (mean, d × d covariance, count) in the shifted
    frame (:meth:`PackedGaussian.unpacked`): what FD is computed from."""
    for g in packed_gaussians(parts, weights, shift):
        yield None if g is None else g.unpacked()


def weighted_fds(rel: QueryStats, rel_weights: np.ndarray, ret_parts: Sequence[QueryStats],
                 ret_weights: Sequence[np.ndarray], shift: np.ndarray, pbar=None) -> np.ndarray:
    """FD per sample (row of the weights) between the weighted relevant set and the weighted retrieved
    parts, formed in chunks of samples; NaN where a side has fewer than 2 vectors. ``pbar``: anything with
    ``update(n)``."""
    out = np.full(len(rel_weights), np.nan)
    for start, w_rel, w_ret in _weight_chunks(rel, rel_weights, ret_parts, ret_weights):
        relevant = gaussians([rel], [w_rel], shift)
        retrieved = gaussians(ret_parts, w_ret, shift)
        for b, (s1, s2) in enumerate(zip(relevant, retrieved), start):
            if s1 is not None and s2 is not None:
                out[b] = frechet_distance_from_stats(s1, s2)
        if pbar is not None:
            pbar.update(len(w_rel))
    return out


def _weight_chunks(rel: QueryStats, rel_weights: np.ndarray, ret_parts: Sequence[QueryStats],
                   ret_weights: Sequence[np.ndarray]):
    """(first row, relevant weights, each retrieved part's weights) a chunk of samples at a time (:func:`sample_chunk`):
    weights in any numeric type (the bootstrap's counts are uint8), as float64 a chunk at a time (no copy when they are
    float64); the relevant side's and a retrieved part's weights are often the same matrix."""
    chunk = sample_chunk(rel, *ret_parts)
    for start in range(0, len(rel_weights), chunk):
        sl = slice(start, start + chunk)
        w_rel = np.asarray(rel_weights[sl], dtype=np.float64)
        yield start, w_rel, [w_rel if w is rel_weights else np.asarray(w[sl], dtype=np.float64) for w in ret_weights]


def mean_terms(rel: QueryStats, rel_weights: np.ndarray, ret_parts: Sequence[QueryStats],
               ret_weights: Sequence[np.ndarray]) -> np.ndarray:
    """FD's mean term ‖μ₁ − μ₂‖² per sample (row of the weights), from the same weighted counts and sums as
    :func:`weighted_fds`' Gaussians (so ``weighted_fds − mean_terms`` is the covariance term of each sample); NaN where
    a side has no Gaussian (:func:`~.kernel.weighted_side`), as there. O(samples · queries · d), no d × d work."""
    out = np.full(len(rel_weights), np.nan)
    for start, w_rel, w_ret in _weight_chunks(rel, rel_weights, ret_parts, ret_weights):
        n1, a1, b1, s1, _, _ = _moments([rel], [w_rel])
        n2, a2, b2, s2, _, _ = _moments(ret_parts, w_ret)
        pairs = [(weighted_side(*one), weighted_side(*two))
                 for one, two in zip(zip(n1, a1, b1, s1), zip(n2, a2, b2, s2))]
        ok = np.array([one is not None and two is not None for one, two in pairs], dtype=bool)
        if ok.any():
            diff = np.array([one.mean - two.mean for one, two in pairs if one is not None and two is not None])
            out[start + np.flatnonzero(ok)] = np.einsum('ij,ij->i', diff, diff)
    return out


# --- leave-out statistics (the jackknife) -------------------------------------------------------------------------
#
# The jackknife leaves each unit query (or each group of unit queries) out in turn. Re-weighting with a
# units × queries matrix of 0/1 weights would cost O(units · Q · d²) time and O(units · Q) memory; instead the
# totals over the units are formed once and each group's own counts, sums and cross-products are subtracted from
# them (downdating): O(Q · d²) for the statistics, streamed in blocks of queries as the bootstrap streams them, plus
# one FD (one O(d³) eigendecomposition) per group.

#: Above this many unit queries the bootstrap's jackknife leaves out groups of queries, not single queries (each
#: leave-out costs one FD, an O(d³) eigendecomposition: 6,980 of them at MS MARCO dev scale against the bootstrap's
#: 1,000; measured in ``benchmarks/jackknife_scale.py``, docs/scale.md).
EXACT_MAX_UNITS = 500
#: Groups of the delete-a-group jackknife (``docs/scale.md``).
DEFAULT_GROUPS = 200


def group_seed(seed: int) -> list:
    """The seed of the delete-a-group jackknife's grouping for a call seeded ``seed``: its own stream, apart from the
    resampling draws of the same seed (so the bootstrap, the paired tests and pt.Experiment's rows group alike)."""
    return [int(seed), 0x6A4B]


def jackknife_groups(units: np.ndarray, n_groups: Optional[int] = None, seed: int = 0):
    """The group of each query for the jackknife (−1: no unit) and the number of groups.

    ``n_groups`` None (or at least the number of units): every unit is its own group (the exact leave-one-out
    jackknife). Otherwise the delete-a-group jackknife: the units are shuffled by ``numpy.random.default_rng(seed)``
    and dealt into ``n_groups`` groups of ⌊n/G⌋ or ⌈n/G⌉ queries. The assignment depends only on (units, G, seed), so
    two systems evaluated on the same queries get the same groups (paired leave-out values)."""
    units = np.asarray(units, dtype=bool)
    idx = np.flatnonzero(units)
    groups = np.full(len(units), -1, dtype=np.int64)
    if n_groups is None or n_groups >= len(idx):
        groups[idx] = np.arange(len(idx))
        return groups, len(idx)
    if n_groups < 2:
        raise ValueError(f'the delete-a-group jackknife needs at least 2 groups, got {n_groups}')
    order = np.random.default_rng(seed).permutation(len(idx))
    groups[idx[order]] = np.arange(len(idx)) % n_groups
    return groups, int(n_groups)


class JackknifePlan(NamedTuple):
    """How the jackknife leaves queries out: each unit query alone (``groups`` None), in ``groups`` seeded groups
    (the delete-a-group jackknife), or — ``clusters`` given — each user-named group of queries at once (the cluster
    jackknife, for queries that are not independent: several queries of one topic, session or information need).
    The bootstrap, the paired tests and pt.Experiment's rows all take their groups from a plan, so the same call
    groups alike everywhere."""
    groups: Optional[int]
    seed: int
    #: the cluster of every query of the universe (integer codes, −1: none), or None
    clusters: Optional[np.ndarray] = None

    def describe(self, n_units: int, n_groups: Optional[int] = None) -> str:
        """What the plan leaves out, for ``n_units`` unit queries (and, for the cluster jackknife, the ``n_groups``
        groups :meth:`assign` made of them; default: every cluster)."""
        if self.clusters is not None:
            g = len(np.unique(self.clusters[self.clusters >= 0])) if n_groups is None else n_groups
            return f'cluster jackknife (G={g} query groups of {n_units} queries)'
        if self.groups is None or self.groups >= n_units:
            return f'leave-one-out ({n_units} queries)'
        return f'delete-a-group (G={self.groups} groups of {n_units} queries, seed {self.seed})'

    def interval_note(self, n_units: int, n_groups: int) -> str:
        """What an interval built on these leave-outs adds to its name: '' for leave-one-out, 'delete-a-group
        jackknife, G=200', or 'cluster jackknife over G=9 query groups, t reference'."""
        if self.clusters is not None:
            return cluster_note(n_groups)
        if self.groups is None or self.groups >= n_units:
            return ''
        return f'delete-a-group jackknife, G={self.groups}'

    def assign(self, units: np.ndarray):
        """The group of each query (−1: no unit) and the number of groups (:func:`jackknife_groups`, seeded by
        :func:`group_seed`; with ``clusters``, the clusters that hold a unit query, numbered in order)."""
        if self.clusters is None:
            return jackknife_groups(units, self.groups, group_seed(self.seed))
        return cluster_groups(units, self.clusters)


def cluster_note(n_groups: int) -> str:
    """How an interval's name says it is the cluster jackknife's: 'cluster jackknife over G=9 query groups, t reference'."""
    return f'cluster jackknife over G={n_groups} query groups, t reference'


def cluster_groups(units: np.ndarray, clusters: np.ndarray):
    """The cluster jackknife's groups: each unit query's cluster, renumbered 0…G−1 over the clusters that hold a
    unit query (−1 for other queries), and G. A unit query without a cluster (−1) is a ValueError."""
    units = np.asarray(units, dtype=bool)
    clusters = np.asarray(clusters, dtype=np.int64)
    if clusters.shape != units.shape:
        raise ValueError(f'clusters has {clusters.shape} entries for {units.shape} queries')
    if np.any(clusters[units] < 0):
        raise ValueError(f'{int(np.sum(clusters[units] < 0))} queries with relevant documents have no query group')
    groups = np.full(len(units), -1, dtype=np.int64)
    present, codes = np.unique(clusters[units], return_inverse=True)
    groups[units] = codes
    return groups, int(len(present))


def jackknife_plan(jackknife, n_units: int, seed: int, clusters: Optional[np.ndarray] = None) -> JackknifePlan:
    """The plan for ``jackknife`` (``'auto'``: leave-one-out up to :data:`EXACT_MAX_UNITS` unit queries, above that
    :data:`DEFAULT_GROUPS` groups; ``'exact'``; or a number of groups G ≥ 2). ``clusters`` (a cluster code per
    query, as :meth:`JackknifePlan.assign` takes them): the cluster jackknife, with ``jackknife='auto'`` only."""
    if clusters is not None:
        if jackknife != 'auto':
            raise ValueError(f'query groups name the jackknife\'s groups; jackknife={jackknife!r} names them too: '
                             "leave jackknife at 'auto' with query groups")
        return JackknifePlan(None, seed, np.asarray(clusters, dtype=np.int64))
    if jackknife == 'auto':
        return JackknifePlan(None if n_units <= EXACT_MAX_UNITS else DEFAULT_GROUPS, seed)
    if jackknife == 'exact':
        return JackknifePlan(None, seed)
    if isinstance(jackknife, (int, np.integer)) and not isinstance(jackknife, bool) and jackknife >= 2:
        return JackknifePlan(int(jackknife), seed)
    raise ValueError(f"jackknife must be 'auto', 'exact' or a number of groups >= 2, got {jackknife!r}")


def _singletons(groups: np.ndarray) -> bool:
    g = groups[groups >= 0]
    return len(np.unique(g)) == len(g)


def _query_blocks(stats: QueryStats):
    """(query slice, packed cross-products of its queries) in blocks of :attr:`QueryStats._BLOCK` queries, from the
    held cross-products or formed now (streamed)."""
    if stats._p is not None:
        for b in range(0, len(stats.n), stats._BLOCK):
            block = slice(b, min(b + stats._BLOCK, len(stats.n)))
            yield block, stats._p[block]
    else:
        yield from stats._blocks(stats._BLOCK)


def _packed_outer(s: np.ndarray, scale: np.ndarray) -> np.ndarray:
    """scale_q · s_q s_qᵀ, packed, for every row q of ``s``."""
    i, j = upper_pairs(s.shape[1])
    return (s[:, i] * s[:, j]) * scale[:, None]


def group_cross_batches(stats: QueryStats, weight: np.ndarray, groups: np.ndarray, n_groups: int,
                        centred: bool = False):
    """Yield (group ids, packed Σ_{q∈g} weight_q · C_q for those groups) in batches, with C_q the cross-product P_q
    (or, ``centred``, the within-query scatter P_q − s_q s_qᵀ/n_q). Every group appears once. When every group is
    one query (the exact jackknife) each block of queries is one batch, so memory stays one block; otherwise the
    n_groups sums are accumulated in one pass (n_groups × d(d+1)/2 numbers) and yielded at the end."""
    single = _singletons(groups)
    acc = None if single else np.zeros((n_groups, stats.packed_size))
    for block, cross in _query_blocks(stats):
        g = groups[block]
        sel = (g >= 0) & (weight[block] != 0)
        if not sel.any():
            if single and (g >= 0).any():
                yield g[g >= 0], np.zeros(((g >= 0).sum(), stats.packed_size))
            continue
        part = cross[sel] * weight[block][sel, None]
        if centred:
            n = stats.n[block][sel]
            part = part - _packed_outer(stats.s[block][sel], weight[block][sel] / np.where(n > 0, n, 1))
        if single:
            out = np.zeros(((g >= 0).sum(), stats.packed_size))
            out[sel[g >= 0]] = part
            yield g[g >= 0], out
        else:
            for gid, row in zip(g[sel], part):
                acc[gid] += row
    if not single:
        yield np.arange(n_groups), acc


class SideTotals(NamedTuple):
    """One side's totals over the units — the count of vectors ``n``, V₁ = Σu, V₂ = Σu², the weighted ``total`` of
    the vectors — and each group's share of each (``group_n``, ``group_v1``, ``group_v2``, ``group_sums``): what a
    leave-out subtracts. Read by name wherever a leave-out route uses them (:func:`leave_out_gaussians`,
    :mod:`.downdate`)."""
    n: float
    v1: float
    v2: float
    total: np.ndarray
    group_n: np.ndarray
    group_v1: np.ndarray
    group_v2: np.ndarray
    group_sums: np.ndarray

    def whole(self) -> Optional[WeightedSide]:
        """The side over every unit (:func:`~.kernel.weighted_side`: None where it has no Gaussian)."""
        return weighted_side(self.n, self.v1, self.v2, self.total)

    def without(self, g: int) -> Optional[WeightedSide]:
        """The side with group ``g`` left out: every total less the group's share, refused by the same rule."""
        return weighted_side(self.n - self.group_n[g], self.v1 - self.group_v1[g], self.v2 - self.group_v2[g],
                             self.total - self.group_sums[g])


def _side_totals(stats: QueryStats, w: np.ndarray, groups: np.ndarray, n_groups: int) -> SideTotals:
    """:class:`SideTotals` of one side over the units of weight ``w`` (the rule of :func:`gaussians`: a query of
    weight w contributes w·doc_weight to its sums)."""
    u = w * stats.doc_weight
    parts = (w * stats.n, u * stats.n, w * stats.n * stats.doc_weight ** 2)
    sel = groups >= 0
    scalars = [(float(p.sum()), np.bincount(groups[sel], weights=p[sel], minlength=n_groups)) for p in parts]
    # Σ_q u_q s_q and each group's share, a chunk of queries at a time (no queries × d copies: 300 MB each at
    # 100,000 queries); the row-by-row order of the one-array sums, so the totals are the same to the last bit
    total = np.zeros(stats.s.shape[1])
    group_sums = np.zeros((n_groups, stats.s.shape[1]))
    for start in range(0, len(u), 1 << 13):
        part = slice(start, start + (1 << 13))
        sums = u[part, None] * stats.s[part]
        total = np.add.reduce(np.concatenate([total[None], sums]), axis=0)
        np.add.at(group_sums, groups[part][sel[part]], sums[sel[part]])
    (n, group_n), (v1, group_v1), (v2, group_v2) = scalars
    return SideTotals(n, v1, v2, total, group_n, group_v1, group_v2, group_sums)


def weighted_total_cross(stats: QueryStats, weight: np.ndarray, centred: bool = False) -> np.ndarray:
    """Σ_q weight_q · C_q over the per-query cross-products themselves (C_q: P_q, or ``centred`` the within-query
    scatter), so that a total less some queries' products is the sum of the others' to the same round-off: a
    rank-deficient side's leave-outs then keep its rank (a total formed another way, :meth:`QueryStats.total_cross`,
    left round-off the pivoted Cholesky read as one more dimension and moved FD by 3e-9 relative:
    tests/test_downdate.py)."""
    if not centred and stats._p is not None:
        return weight @ stats._p
    total = np.zeros(stats.packed_size)
    for block, cross in _query_blocks(stats):
        w = weight[block]
        if w.any():
            total += w @ cross
            if centred:
                n = stats.n[block]
                total -= (w / np.where(n > 0, n, 1)) @ _packed_outer(stats.s[block], np.ones(len(w)))
    return total


def leave_out_gaussians(sides: Sequence[QueryStats], units: np.ndarray, groups: np.ndarray, n_groups: int,
                        skip: Optional[np.ndarray] = None):
    """Yield (group ids, [per side: list of :class:`PackedGaussian` or None]) in batches: each side's Gaussian over
    the units with group g left out (:meth:`SideTotals.without`), by subtracting g's counts, sums and cross-products
    from the totals (never a groups × queries weight matrix; the cross-products streamed in blocks when
    :class:`QueryStats` streams them). ``skip``: groups whose Gaussians are not wanted (None in their place)."""
    w = np.asarray(units, dtype=np.float64)
    single = _singletons(groups)
    info, batches = [], []
    for stats in sides:
        u = w * stats.doc_weight
        if single:  # one pass for the totals, one yielding each block's queries
            info.append((_side_totals(stats, w, groups, n_groups), weighted_total_cross(stats, u), u))
            batches.append(group_cross_batches(stats, u, groups, n_groups))
        else:  # one pass: the groups' sums, whose total is the units' (non-units weigh 0 in u only if no group)
            gids, sums = next(group_cross_batches(stats, u * (groups >= 0), groups, n_groups))
            outside = np.where(groups < 0, u, 0.0)
            total = sums.sum(axis=0) + (weighted_total_cross(stats, outside) if outside.any() else 0.0)
            info.append((_side_totals(stats, w, groups, n_groups), total, u))
            batches.append(iter([(gids, sums)]))
    for parts in zip(*batches):
        gids = parts[0][0]
        out = []
        for (t, cross_total, _), (_, crosses) in zip(info, parts):
            got = [None if skip is not None and skip[g] else _packed_from_side(t.without(g), cross_total - c)
                   for g, c in zip(gids, crosses)]
            out.append(got)
        yield gids, out


class SharedRelevant(NamedTuple):
    """The relevant side of many FDs made once and paired with every run's retrieved side: its Gaussians with each
    group of queries left out (:func:`relevant_leave_outs`) or under each bootstrap sample of a chunk
    (:func:`shared_weighted_fds`), each factored once (pivoted Cholesky). They depend on the qrels, ``rel``, the
    encoder, the query universe and the grouping or draws, never on the run, so FD@1, FD@10 and FD(urr=True)@10 of
    every run share them. Per entry: the :class:`PackedGaussian` (None: fewer than 2 vectors), its trace, rank and
    scale, its factor padded to d × d (Fortran order, for LAPACK ``sygst``), the gather index that reads another
    packed covariance straight into the factor's pivoted order, and the pivot order (factor None where the pivoted
    Cholesky refuses the covariance: such entries take the general route)."""
    shift: np.ndarray
    gaussians: list  # PackedGaussian or None
    traces: np.ndarray
    ranks: np.ndarray  # −1 where there is no factor
    scales: np.ndarray
    factors: list
    gathers: list
    perms: list
    groups: Optional[np.ndarray] = None  # the leave-outs' grouping (None: bootstrap samples)
    n_groups: int = 0
    #: the leave-outs' downdates of the units' factor (:mod:`.downdate`; None: bootstrap samples, or none apply)
    downdates: Optional[RelevantDowndates] = None


def _factored(gaussians_: Sequence[Optional[PackedGaussian]], shift: np.ndarray, **grouping) -> SharedRelevant:
    """:class:`SharedRelevant` of these relevant Gaussians: each factored once."""
    d = len(shift)
    index = _packed_index(d)

    def factor(g):
        if g is None:
            return None
        scale = moment_scale(g.mean_shifted, g.packed)  # the shifted frame it was formed in (kernel.moment_scale)
        got = pivoted_cholesky(unpack(g.packed, d), scale)
        trace = float(g.packed[diagonal_positions(d)].sum())
        if got is None:
            return trace, -1, scale, None, None, None
        lower, perm = got
        return trace, lower.shape[1], scale, padded_factor(lower), index[np.ix_(perm, perm)].astype(np.int32), perm
    with lapack_threads():
        parts = [factor(g) for g in gaussians_]
    n = len(gaussians_)
    traces, ranks, scales = np.zeros(n), np.full(n, -1), np.zeros(n)
    factors, gathers, perms = [None] * n, [None] * n, [None] * n
    for k, part in enumerate(parts):
        if part is not None:
            traces[k], ranks[k], scales[k], factors[k], gathers[k], perms[k] = part
    return SharedRelevant(np.asarray(shift, dtype=np.float64), list(gaussians_), traces, ranks, scales, factors,
                          gathers, perms, **grouping)


def relevant_leave_outs(rel: QueryStats, units: np.ndarray, groups: np.ndarray, n_groups: int,
                        shift: np.ndarray, downdate: bool = True) -> SharedRelevant:
    """The relevant side's leave-out Gaussians with each group of unit queries left out (the downdating of
    :func:`leave_out_gaussians`), each factored once for :func:`leave_out_fds`; and, where some group is small
    enough (``downdate``), the units' factor and each small group's downdate of it (:mod:`.downdate`)."""
    entries = [None] * n_groups
    for gids, (got,) in leave_out_gaussians([rel], units, groups, n_groups):
        for g, x in zip(gids, got):
            entries[g] = x
    groups = np.asarray(groups)
    downdates = _downdates(rel, units, groups, n_groups, shift) if downdate else None
    return _factored(entries, shift, groups=groups, n_groups=int(n_groups), downdates=downdates)


def _group_sizes(stats: QueryStats, w: np.ndarray, groups: np.ndarray, n_groups: int) -> np.ndarray:
    """How many vectors of ``stats`` each group's queries of positive weight hold."""
    sel = (groups >= 0) & (w > 0)
    return np.bincount(groups[sel], weights=stats.n[sel], minlength=n_groups)


def _downdates(rel: QueryStats, units: np.ndarray, groups: np.ndarray, n_groups: int,
               shift: np.ndarray) -> Optional[RelevantDowndates]:
    w = np.asarray(units, dtype=np.float64)
    # some group's rank update can be small (the factor's rank is at most the dimension): otherwise nothing is formed
    if not (_group_sizes(rel, w, groups, n_groups) + 1 <= MAX_UPDATE_FRACTION * len(shift)).any():
        return None
    return relevant_downdates(rel, w, groups, n_groups, shift, _side_totals(rel, w, groups, n_groups),
                              weighted_total_cross(rel, w * rel.doc_weight), _packed_index(len(shift)))


def _shared_fd(shared: SharedRelevant, k: int, ret: PackedGaussian, rows: Optional[np.ndarray] = None) -> Optional[float]:
    """FD of entry k of the shared relevant side against a retrieved Gaussian, or None: the caller takes the general
    route. The factor's congruence (one ``sygst`` and one symmetric eigenvalue solve: :func:`~.kernel.trace_sqrt_congruence`)
    where the retrieved covariance can have at least the factor's rank (its distinct vectors less one bound that
    rank: a bootstrap sample that drew a third of the queries twice has fewer); else, and where
    that route's error bound refuses it, the nuclear norm of the two factors (:func:`_factor_nuclear_norm`).
    ``rows`` (a retrieved side of lower rank, given as :func:`weighted_rows` instead of a packed covariance): the
    nuclear norm of those rows times the factor, ‖F₂F₁‖_*, with no d × d work on the retrieved side at all."""
    rank = shared.ranks[k]
    if rank < 0:
        return None
    diff = shared.gaussians[k].mean_shifted - ret.mean_shifted
    if rows is not None:
        if rank == 0 or len(rows) == 0:
            tr_sqrt = 0.0
        else:  # F₁ = the relevant factor un-permuted (row i of the padded factor is coordinate perm[i]): F₂F₁
            tr_sqrt = nuclear_norm(rows[:, shared.perms[k]] @ shared.factors[k][:, :rank], rtol=CONGRUENCE_RTOL)
        return fd_value(float(diff @ diff), shared.traces[k], float(np.einsum('ij,ij->', rows, rows)), tr_sqrt)
    d = len(shared.shift)
    own = moment_scale(ret.mean_shifted, ret.packed)  # the retrieved covariance's round-off scale (shifted frame)
    scale = shared.scales[k] * own  # the congruence's: a product of the two covariances
    tr_sqrt = None
    if (ret.n if ret.distinct is None else ret.distinct) - 1 >= rank:
        cov_perm = ret.packed[shared.gathers[k]]
        # gathered from one packed triangle, cov_perm is exactly symmetric: its transpose is the Fortran-ordered
        # matrix LAPACK reads, without a copy
        tr_sqrt = trace_sqrt_congruence(shared.factors[k], cov_perm.T, rank, scale)
    if tr_sqrt is None:
        tr_sqrt = _factor_nuclear_norm(shared, k, ret.packed, own)
    if tr_sqrt is None:
        return None
    return fd_value(float(diff @ diff), shared.traces[k], float(ret.packed[diagonal_positions(d)].sum()), tr_sqrt)


def _paired_fds(shared: SharedRelevant, retrieved: Sequence[Optional[PackedGaussian]], rows=None) -> np.ndarray:
    """FD of every entry of ``shared`` against the retrieved Gaussian of the same index (NaN where either side has
    none): :func:`_shared_fd`, or the general route (:func:`~.frechet.frechet_distance_from_stats`) where it
    declines. ``rows``: entry → the retrieved side as :func:`weighted_rows`, where its covariance is not packed."""
    rows = rows or {}
    out = np.full(len(retrieved), np.nan)
    items = [k for k, r in enumerate(retrieved) if r is not None and shared.gaussians[k] is not None]
    with lapack_threads():
        values = [_shared_fd(shared, k, retrieved[k], rows.get(k)) for k in items]
    general = [k for k, v in zip(items, values) if v is None]
    for k, v in zip(items, values):
        if v is not None:
            out[k] = v
    for k in general:
        ret = retrieved[k]
        if ret.packed is None:
            ret = GaussianStats(ret.mean_shifted, rows[k].T @ rows[k], int(round(ret.n)))
        else:
            ret = ret.unpacked()
        out[k] = frechet_distance_from_stats(shared.gaussians[k].unpacked(), ret)
    return out


def shared_weighted_fds(rel: QueryStats, ret_sides: Sequence[QueryStats], weights: np.ndarray, shift: np.ndarray,
                        pbar=None) -> list:
    """:func:`weighted_fds` of one relevant side against each of several retrieved sides (the runs of a bootstrap,
    drawn with the same ``weights``), the relevant side of each sample made and factored once for all of them: per
    sample and run one congruence and one symmetric eigenvalue solve (:func:`_shared_fd`). Equal to
    :func:`weighted_fds` per side to round-off. A list of arrays, one per retrieved side; ``pbar`` counts samples
    × sides."""
    outs = [np.full(len(weights), np.nan) for _ in ret_sides]
    # each sample's factor, gather index and Gaussian take about 2.5·d² numbers: CHUNK samples at a time (74 MB at
    # d = 384), more where the relevant side is streamed (each chunk is one pass over its queries)
    d = len(shift)
    chunk = CHUNK if not rel.streamed else max(CHUNK, min(sample_chunk(rel), STREAM_SUMS_BYTES // (20 * d * d)))
    for start in range(0, len(weights), chunk):
        sl = slice(start, start + chunk)
        w = np.asarray(weights[sl], dtype=np.float64)
        shared = _factored(list(packed_gaussians([rel], [w], shift)), shift)
        for out, ret in zip(outs, ret_sides):
            out[sl] = _paired_fds(shared, *_retrieved_sample_side(ret, w, shared))
            if pbar is not None:
                pbar.update(len(w))
    return outs


def _retrieved_sample_side(ret: QueryStats, w: np.ndarray, shared: SharedRelevant):
    """The retrieved side of a chunk of samples for :func:`_paired_fds`: a :class:`PackedGaussian` per sample, its
    covariance packed where the sample holds at least as many distinct vectors as the relevant factor's rank (the
    congruence route), else left out and the sample given as :func:`weighted_rows` (a bootstrap sample of 43 DL19
    queries draws about 27 distinct ones: 270 retrieved vectors against a relevant rank of 381). Only the packed
    samples' cross-products are formed."""
    counts, v1, v2, sums, distinct, (u,) = _moments([ret], [w])
    low = [b for b in range(len(w)) if 0 <= shared.ranks[b] and distinct[b] - 1 < shared.ranks[b]]
    packed = sorted(set(range(len(w))) - set(low))
    retrieved, rows = [None] * len(w), {}
    if packed:
        crosses = ret.weighted_cross(u[packed])
        for b, cross in zip(packed, crosses):
            retrieved[b] = _packed_gaussian(counts[b], v1[b], v2[b], sums[b], cross, distinct[b])
    for b in low:
        side = weighted_side(counts[b], v1[b], v2[b], sums[b])
        if side is None:
            continue
        retrieved[b] = PackedGaussian(side.mean, None, counts[b], distinct[b])
        rows[b] = weighted_rows(ret, w[b], retrieved[b].mean_shifted)
    return retrieved, rows


def leave_out_fds(rel: QueryStats, ret: QueryStats, units: np.ndarray, groups: np.ndarray, n_groups: int,
                  shift: np.ndarray, fd_batch=None, pbar=None, relevant: Optional[SharedRelevant] = None) -> np.ndarray:
    """FD with each group of unit queries left out (:func:`jackknife_groups`), for one relevant and one retrieved
    side over the same query universe: equal to :func:`weighted_fds` with one row of weights per group (the units
    weighing 1, the group 0) to round-off, in O(Q · d²) for the statistics plus one FD per group. NaN where a side
    keeps fewer than 2 vectors. ``fd_batch``: a function from a list of (relevant, retrieved) Gaussian pairs to
    their FDs (default: :func:`~.frechet.frechet_distance_from_stats` one at a time; the torch backend batches
    them); ``pbar``: anything with ``update(n)``.

    ``relevant``: the relevant side's leave-outs made once for the evaluation (:func:`relevant_leave_outs` of the
    same ``rel``, units and groups), shared by every run and measure with that relevant set. Each leave-out's trace
    term is then one congruence and one symmetric eigenvalue solve (:func:`~.kernel.trace_sqrt_congruence`: LᵀΣ₂L
    with L the shared factor), the floor of an exact FD from covariances, where the retrieved side has at least the
    relevant factor's rank; elsewhere — and wherever that route's error bound says it would cost digits — the
    general route :func:`~.frechet.frechet_distance_from_stats`, so the values are the same to round-off."""
    if relevant is not None and fd_batch is None:
        return _leave_out_fds_shared(ret, units, groups, n_groups, shift, relevant, pbar)
    out = np.full(n_groups, np.nan)
    for gids, (g_rel, g_ret) in leave_out_gaussians([rel, ret], units, groups, n_groups):
        valid = [i for i, (a, b) in enumerate(zip(g_rel, g_ret)) if a is not None and b is not None]
        if valid:
            pairs = [(g_rel[i].unpacked(), g_ret[i].unpacked()) for i in valid]
            values = (fd_batch(pairs) if fd_batch is not None
                      else [frechet_distance_from_stats(a, b) for a, b in pairs])
            out[gids[valid]] = values
        if pbar is not None:
            pbar.update(len(gids))
    return out


def _leave_out_fds_shared(ret, units, groups, n_groups, shift, shared: SharedRelevant, pbar=None):
    if shared.groups is None or shared.n_groups != n_groups or not np.array_equal(shared.groups, groups) or \
            not np.array_equal(shared.shift, shift):
        raise ValueError('the shared relevant leave-outs were made for another grouping or shift')
    w = np.asarray(units, dtype=np.float64)
    out = _downdated(ret, w, shift, shared)
    done = ~np.isnan(out)
    if done.all():
        if pbar is not None:
            pbar.update(n_groups)
        return out
    if pbar is not None:
        pbar.update(int(done.sum()))
    for gids, (got,) in leave_out_gaussians([ret], units, groups, n_groups, skip=done):
        retrieved, rows = [None] * n_groups, {}
        for g, x in zip(gids, got):
            retrieved[g] = x
            if x is not None and 0 <= shared.ranks[g] and x.n - 1 < shared.ranks[g]:
                # fewer retrieved vectors than the relevant factor's rank (FD@1, a URR set thinned by missing
                # vectors): the rows themselves, no d × d work on this side
                rows[g] = weighted_rows(ret, np.where(groups == g, 0.0, w), x.mean_shifted)
        values = _paired_fds(shared, retrieved, rows)
        gids = gids[~done[gids]]
        out[gids] = values[gids]
        if pbar is not None:
            pbar.update(len(gids))
    return out


def _downdated(ret: QueryStats, w: np.ndarray, shift: np.ndarray, shared: SharedRelevant) -> np.ndarray:
    """:func:`~.downdate.downdated_fds` of one run where the shared relevant side has downdates and some group's two
    rank updates are small enough together; all NaN otherwise (every group takes the congruence route), decided from
    the counts before anything is formed (MS MARCO dev's 200 groups of 35 queries hold 350 retrieved vectors each)."""
    relevant = shared.downdates
    if relevant is None:
        return np.full(shared.n_groups, np.nan)
    sizes = _group_sizes(ret, w, shared.groups, shared.n_groups)
    updates = np.array([np.inf if b is None else b.shape[1] for b in relevant.bases]) + sizes + 1
    small = updates <= MAX_UPDATE_FRACTION * relevant.rank
    if not small.any():
        return np.full(shared.n_groups, np.nan)
    # the units' total straight from the vectors (no per-query products formed): the downdates subtract the left-out
    # vectors themselves, not per-query products, so the total need not be their sum
    return downdated_fds(relevant, shared, ret, w, shift, _side_totals(ret, w, shared.groups, shared.n_groups),
                         ret.total_cross(w * ret.doc_weight), small)


def _factor_nuclear_norm(shared: SharedRelevant, k: int, packed: np.ndarray, scale: float):
    """Tr((Σ₁^½Σ₂Σ₁^½)^½) = ‖F₁ᵀF₂‖_* from the shared factor of entry k and a pivoted Cholesky factor of the retrieved
    covariance (``packed``, of round-off scale ``scale``: its own, never the congruence's product of two — that
    product, 3.6e9 for two sets 1e3 from the origin, made pstrf drop directions of variance 1e-4 and moved the
    leave-outs by 31× FD: tests/test_downdate.py): the exact route of :func:`~.frechet.frechet_distance_from_stats`
    with the relevant factor made once. None where the retrieved covariance is refused (not PSD beyond round-off)."""
    d = len(shared.shift)
    factor = pivoted_cholesky(unpack(packed, d), scale)
    if factor is None:
        return None
    rank = shared.ranks[k]
    if rank == 0 or factor[0].shape[1] == 0:
        return 0.0
    # F₁ᵀF₂ with F₁ = the relevant factor un-permuted: row i of the padded factor belongs to coordinate perm[i]
    return nuclear_norm(shared.factors[k][:, :rank].T @ unpermuted(*factor)[shared.perms[k]], rtol=CONGRUENCE_RTOL)


@functools.lru_cache(maxsize=4)
def diagonal_positions(d: int) -> np.ndarray:
    """Positions of the diagonal in the row-major packed upper triangle of a d × d matrix; read-only (cached)."""
    out = _packed_index(d).diagonal().copy()
    out.flags.writeable = False
    return out
