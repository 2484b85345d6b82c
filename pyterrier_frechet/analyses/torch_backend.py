"""The bootstrap's statistics on torch (a GPU when present, else the CPU): ``bootstrap(..., backend='torch')``.

The same computation as :func:`pyterrier_frechet.core.weighted.weighted_fds`, in float64, but batched: the
per-query statistics move to the device once; per chunk of samples, one matrix product re-weights them,
and the chunk's covariances go through one batched Cholesky, two batched products (LᵀΣ₂L) and one
batched ``eigvalsh``, instead of one LAPACK call per sample. Where the numpy path streams the per-query
cross-products (:class:`~pyterrier_frechet.core.weighted.QueryStats` beyond 256 MiB: MS MARCO dev would need
4.1 GB per side), so does this one, on the device: only the sorted vectors move there, and each pass over the
queries forms a block's cross-products by one batched product and adds them, weighted, into the sums of a chunk of
samples as large as the numpy path's (:func:`~pyterrier_frechet.core.weighted.sample_chunk`). The trace term
takes routes torch can batch: factor Σ₁ if it is positive definite, else Σ₂, else take the nuclear norm of B₁ᵀB₂
with Σᵢ = BᵢBᵢᵀ from eigendecompositions. (The numpy path, :func:`pyterrier_frechet.core.frechet.frechet_distance_from_stats`,
takes a rank-revealing pivoted Cholesky where a covariance is singular, which torch does not offer batched.)
Equal to the numpy path to 1e-8 relative where covariances are well conditioned; where they are singular, the
eigenvalue routes lose about half the digits, and the torch path stays within 1e-7 of the exact values
(``tests/test_bootstrap.py``).

The jackknife's leave-out Gaussians (:func:`~pyterrier_frechet.core.weighted.leave_out_fds`: totals minus each
group's statistics, streamed block by block on the CPU in O(Q·d²)) have their FDs computed here in batches
(:func:`fd_pairs_torch`: one batched Cholesky and ``eigvalsh`` per :data:`_CHUNK` leave-outs), which is where the
leave-out's cost lies (one O(d³) step per left-out query or group).

torch is imported only when this backend is used.
"""
from typing import NamedTuple, Optional, Sequence

import numpy as np

from ..core.weighted import sample_chunk

__all__ = ['weighted_fds_torch', 'fd_pairs_torch', 'default_device']

_CHUNK = 64  # samples per batched step


def default_device() -> str:
    """``'cuda'`` when torch sees a GPU, else ``'cpu'``."""
    import torch
    return 'cuda' if torch.cuda.is_available() else 'cpu'


class _Part(NamedTuple):
    """One side's per-query statistics on the device: counts, sums, document weights, and either the packed
    cross-products (held) or what they are formed from (streamed: sorted vectors, query, slot, first rows)."""
    n: object
    s: object
    doc_weight: object
    packed: object
    rows: Optional[tuple]


_SUB_BLOCK = 64  # queries per batched d×d product when streaming (as QueryStats)


def _to_device(part, device) -> _Part:
    import torch

    def tensor(a):
        return torch.as_tensor(np.asarray(a), dtype=torch.float64, device=device)
    if not part.streamed:
        return _Part(tensor(part.n), tensor(part.s), tensor(part.doc_weight), tensor(part.p), None)
    rows = part.rows()
    as_long = lambda a: torch.as_tensor(np.asarray(a, dtype=np.int64), device=device)  # noqa: E731
    return _Part(tensor(part.n), tensor(part.s), tensor(part.doc_weight), None,
                 (tensor(rows.x), as_long(rows.qidx), as_long(rows.slot), np.asarray(rows.starts), as_long(rows.upper),
                  np.asarray(part.n)))


def _packed_sums(part: _Part, w):
    """Σ_q w[b, q] · P_q (packed) for every row b of ``w`` (samples × queries, document weights applied)."""
    import torch
    if part.packed is not None:
        return w @ part.packed
    x, qidx, slot, starts, upper, n = part.rows
    d = x.shape[1]
    out = w.new_zeros((w.shape[0], len(upper)))
    for sub in range(0, len(n), _SUB_BLOCK):
        stop = min(sub + _SUB_BLOCK, len(n))
        width = int(n[sub:stop].max())
        if width == 0 or not bool(w[:, sub:stop].any()):
            continue
        rows = slice(int(starts[sub]), int(starts[stop]))
        padded = x.new_zeros((stop - sub, width, d))
        padded[qidx[rows] - sub, slot[rows]] = x[rows]
        cross = torch.bmm(padded.transpose(1, 2), padded).reshape(stop - sub, d * d)[:, upper]
        out.addmm_(w[:, sub:stop], cross)
    return out


def _weighted(parts, weights, packed, upper, d):
    """Valid mask, mean of the shifted vectors (B×d) and covariance (B×d×d) of each sample, by the rule of
    :func:`pyterrier_frechet.core.weighted.gaussians` (per-query document weights, aweights' V₁ − V₂/V₁), from the
    samples' packed weighted cross-products ``packed``; invalid rows (fewer than 2 vectors, no spread) get the
    identity, to be masked by the caller."""
    import torch
    count = sum(w @ p.n for p, w in zip(parts, weights))
    v1 = sum((w * p.doc_weight) @ p.n for p, w in zip(parts, weights))
    v2 = sum(w @ (p.n * p.doc_weight ** 2) for p, w in zip(parts, weights))
    s = sum((w * p.doc_weight) @ p.s for p, w in zip(parts, weights))
    cov = packed.new_zeros((len(count), d, d))
    cov[:, upper[0], upper[1]] = packed
    cov[:, upper[1], upper[0]] = packed
    safe_v1 = torch.where(v1 > 0, v1, torch.ones_like(v1))
    denom = v1 - v2 / safe_v1
    valid = (count >= 2) & (v1 > 0) & (denom > 0)
    safe_v1 = torch.where(valid, v1, torch.full_like(v1, 2.0))
    denom = torch.where(valid, denom, torch.ones_like(denom))
    mean = s / safe_v1[:, None]
    cov = (cov - safe_v1[:, None, None] * mean[:, :, None] * mean[:, None, :]) / denom[:, None, None]
    eye = torch.eye(d, dtype=cov.dtype, device=cov.device)
    cov = torch.where(valid[:, None, None], cov, eye)
    return valid, mean, cov


def _trace_sqrt(cov1, cov2):
    """Tr((Σ₁^½Σ₂Σ₁^½)^½) for a batch of covariance pairs."""
    import torch
    out = torch.empty(len(cov1), dtype=cov1.dtype, device=cov1.device)
    todo = torch.ones(len(cov1), dtype=torch.bool, device=cov1.device)
    for a, b in ((cov1, cov2), (cov2, cov1)):  # factor whichever is positive definite
        if not todo.any():
            break
        chol, info = torch.linalg.cholesky_ex(a[todo])
        ok = info == 0
        if ok.any():
            lower = chol[ok]
            inner = lower.transpose(1, 2) @ b[todo][ok] @ lower
            evals = torch.linalg.eigvalsh(inner)
            idx = torch.nonzero(todo).squeeze(1)[ok]
            out[idx] = evals.clamp(min=0).sqrt().sum(-1)
            todo[idx] = False
    if todo.any():  # both singular: Σ = BBᵀ with B = VΛ^½, nuclear norm of B₁ᵀB₂
        def factor(c):
            evals, evecs = torch.linalg.eigh(c)
            return evecs * evals.clamp(min=0).sqrt()[:, None, :]
        out[todo] = torch.linalg.svdvals(factor(cov1[todo]).transpose(1, 2) @ factor(cov2[todo])).sum(-1)
    return out


def weighted_fds_torch(rel, rel_weights: np.ndarray, ret_parts: Sequence, ret_weights: Sequence[np.ndarray],
                       shift: np.ndarray, device: Optional[str] = None, pbar=None) -> np.ndarray:
    """:func:`~pyterrier_frechet.core.weighted.weighted_fds` on torch: FD per sample (row of the weights);
    NaN where a side has fewer than 2 vectors."""
    import torch
    device = torch.device(device or default_device())
    d = len(shift)
    upper = torch.triu_indices(d, d, device=device)  # row-major, the packing of QueryStats.p

    rel_t = _to_device(rel, device)
    ret_t = [_to_device(p, device) for p in ret_parts]
    # one pass over the queries per outer chunk when streaming (as many samples as the numpy path takes), the
    # covariances in inner chunks of _CHUNK samples (held cross-products: sample_chunk is below _CHUNK)
    outer = max(_CHUNK, sample_chunk(rel, *ret_parts))
    out = np.full(len(rel_weights), np.nan)
    with torch.inference_mode():
        for first in range(0, len(rel_weights), outer):
            block = slice(first, first + outer)
            w_rel = torch.as_tensor(rel_weights[block], dtype=torch.float64, device=device)
            w_ret = [torch.as_tensor(w[block], dtype=torch.float64, device=device) for w in ret_weights]
            packed_rel = _packed_sums(rel_t, w_rel * rel_t.doc_weight)
            packed_ret = sum(_packed_sums(p, w * p.doc_weight) for p, w in zip(ret_t, w_ret))
            for start in range(0, len(w_rel), _CHUNK):
                sl = slice(start, start + _CHUNK)
                valid1, mean1, cov1 = _weighted([rel_t], [w_rel[sl]], packed_rel[sl], upper, d)
                valid2, mean2, cov2 = _weighted(ret_t, [w[sl] for w in w_ret], packed_ret[sl], upper, d)
                diff = mean1 - mean2
                fd = ((diff * diff).sum(-1) + cov1.diagonal(dim1=1, dim2=2).sum(-1)
                      + cov2.diagonal(dim1=1, dim2=2).sum(-1) - 2 * _trace_sqrt(cov1, cov2)).clamp(min=0)
                fd = torch.where(valid1 & valid2, fd, torch.full_like(fd, float('nan')))
                out[first + start:first + start + len(fd)] = fd.cpu().numpy()
                if pbar is not None:
                    pbar.update(len(fd))
    return out


def fd_pairs_torch(pairs, device: Optional[str] = None) -> np.ndarray:
    """FD of each (relevant, retrieved) pair of :class:`~pyterrier_frechet.core.frechet.GaussianStats`, batched on
    ``device`` by the rules of :func:`weighted_fds_torch` (the jackknife's leave-outs)."""
    import torch
    device = torch.device(device or default_device())
    out = np.empty(len(pairs))
    with torch.inference_mode():
        for start in range(0, len(pairs), _CHUNK):
            batch = pairs[start:start + _CHUNK]

            def stack(side, field):
                return torch.as_tensor(np.stack([getattr(pair[side], field) for pair in batch]), dtype=torch.float64,
                                       device=device)
            mean1, cov1, mean2, cov2 = stack(0, 'mean'), stack(0, 'cov'), stack(1, 'mean'), stack(1, 'cov')
            diff = mean1 - mean2
            fd = ((diff * diff).sum(-1) + cov1.diagonal(dim1=1, dim2=2).sum(-1)
                  + cov2.diagonal(dim1=1, dim2=2).sum(-1) - 2 * _trace_sqrt(cov1, cov2)).clamp(min=0)
            out[start:start + len(batch)] = fd.cpu().numpy()
    return out
