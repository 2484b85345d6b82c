"""The bootstrap's statistics on torch (a GPU when present, else the CPU): ``bootstrap(..., backend='torch')``.

The same computation as :func:`pyterrier_frechet.core.weighted.weighted_fds`, in float64, but batched: the
per-query statistics move to the device once; per chunk of samples, one matrix product re-weights them,
and the chunk's covariances go through one batched Cholesky, two batched products (LᵀΣ₂L) and one
batched ``eigvalsh``, instead of one LAPACK call per sample. The trace term follows the numpy path's
rules exactly (:func:`pyterrier_frechet.core.frechet.frechet_distance_from_stats`): factor Σ₁ if it is
positive definite, else Σ₂, else take the nuclear norm of B₁ᵀB₂ with Σᵢ = BᵢBᵢᵀ from eigendecompositions.
Equal to the numpy path to 1e-8 relative where covariances are well conditioned; on tiny sets whose
covariances are singular or nearly so, where any route from covariances loses about half the digits, both
stay within 1e-7 of the exact values (``tests/test_bootstrap.py``).

torch is imported only when this backend is used.
"""
from typing import Optional, Sequence

import numpy as np

__all__ = ['weighted_fds_torch', 'default_device']

_CHUNK = 64  # samples per batched step


def default_device() -> str:
    """``'cuda'`` when torch sees a GPU, else ``'cpu'``."""
    import torch
    return 'cuda' if torch.cuda.is_available() else 'cpu'


def _weighted(parts, weights, upper, d):
    """Valid mask, mean of the shifted vectors (B×d) and covariance (B×d×d) of each sample, by the rule of
    :func:`pyterrier_frechet.core.weighted.gaussians` (per-query document weights, aweights' V₁ − V₂/V₁);
    invalid rows (fewer than 2 vectors, no spread) get the identity, to be masked by the caller."""
    import torch
    count = sum(w @ p[0] for p, w in zip(parts, weights))
    v1 = sum((w * p[3]) @ p[0] for p, w in zip(parts, weights))
    v2 = sum(w @ (p[0] * p[3] ** 2) for p, w in zip(parts, weights))
    s = sum((w * p[3]) @ p[1] for p, w in zip(parts, weights))
    packed = sum((w * p[3]) @ p[2] for p, w in zip(parts, weights))
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

    def to_device(part):
        return tuple(torch.as_tensor(a, dtype=torch.float64, device=device)
                     for a in (part.n, part.s, part.p, part.doc_weight))
    rel_t = to_device(rel)
    ret_t = [to_device(p) for p in ret_parts]
    out = np.full(len(rel_weights), np.nan)
    with torch.inference_mode():
        for start in range(0, len(rel_weights), _CHUNK):
            sl = slice(start, start + _CHUNK)
            w_rel = torch.as_tensor(rel_weights[sl], dtype=torch.float64, device=device)
            w_ret = [torch.as_tensor(w[sl], dtype=torch.float64, device=device) for w in ret_weights]
            valid1, mean1, cov1 = _weighted([rel_t], [w_rel], upper, d)
            valid2, mean2, cov2 = _weighted(ret_t, w_ret, upper, d)
            diff = mean1 - mean2
            fd = ((diff * diff).sum(-1) + cov1.diagonal(dim1=1, dim2=2).sum(-1) + cov2.diagonal(dim1=1, dim2=2).sum(-1)
                  - 2 * _trace_sqrt(cov1, cov2)).clamp(min=0)
            fd = torch.where(valid1 & valid2, fd, torch.full_like(fd, float('nan')))
            out[sl] = fd.cpu().numpy()
            if pbar is not None:
                pbar.update(len(w_rel))
    return out
