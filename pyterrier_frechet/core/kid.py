"""Kernel distance (KID; Bińkowski et al., ICLR 2018): the unbiased estimate of the squared maximum mean
discrepancy (MMD²) between two sets of vectors under the polynomial kernel k(x, y) = (xᵀy / d + 1)³.

Unlike FD, this estimator is unbiased: its expectation is the population MMD² whatever the set sizes, so
it is ≈ 0 for two samples of one distribution (and may then be slightly negative) and comparable across
query sets of different sizes. Pure numpy, float64.
"""
import numpy as np

from .frechet import check_pair

_BLOCK = 4096  # rows of a kernel block formed at once (bounds memory for large sets)


def _kernel_sum(x: np.ndarray, y: np.ndarray, degree: int, same: bool) -> float:
    """Σ k(xᵢ, yⱼ) over all pairs, excluding i = j when ``same`` (x is y)."""
    d = x.shape[1]
    total = 0.0
    for start in range(0, len(x), _BLOCK):
        block = (x[start:start + _BLOCK] @ y.T / d + 1.0) ** degree
        if same:
            idx = np.arange(start, min(start + _BLOCK, len(x)))
            block[idx - start, idx] = 0.0
        total += float(block.sum())
    return total


def kernel_distance(x, y, degree: int = 3) -> float:
    """Unbiased MMD² between the sets ``x`` (m×d) and ``y`` (n×d), polynomial kernel of ``degree``::

        KID = Σ_{i≠j} k(xᵢ,xⱼ) / (m(m−1)) + Σ_{i≠j} k(yᵢ,yⱼ) / (n(n−1)) − 2 Σ_{i,j} k(xᵢ,yⱼ) / (mn)
    """
    x, y = check_pair(x, y)
    if isinstance(degree, bool) or not isinstance(degree, (int, np.integer)) or degree < 1:
        raise ValueError(f'degree must be a positive integer, got {degree!r}')
    m, n = len(x), len(y)
    return (_kernel_sum(x, x, degree, True) / (m * (m - 1)) + _kernel_sum(y, y, degree, True) / (n * (n - 1))
            - 2.0 * _kernel_sum(x, y, degree, False) / (m * n))
