"""Fidelity and coverage (Kynkäänniemi et al., NeurIPS 2019): k-NN precision and recall between two sets.

Each set approximates the support of its distribution by the union of balls around its vectors, each ball's
radius the (Euclidean) distance to the vector's k-th nearest neighbour in its own set. Precision is the share
of the *retrieved* vectors inside the relevant set's support (are the retrieved documents like relevant
ones?); recall is the share of the *relevant* vectors inside the retrieved set's support (does the system
cover every kind of relevant document?). Both lie in [0, 1]; higher is better. Pure numpy, float64.
"""
from typing import NamedTuple

import numpy as np

from .frechet import check_pair

_BLOCK = 2048


def _sq_distances(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    d = (a * a).sum(1)[:, None] + (b * b).sum(1)[None, :] - 2.0 * (a @ b.T)
    return np.maximum(d, 0.0)


def knn_radii(x: np.ndarray, k: int) -> np.ndarray:
    """Squared distance of each vector of ``x`` to its k-th nearest neighbour among the others."""
    out = np.empty(len(x))
    for start in range(0, len(x), _BLOCK):
        block = _sq_distances(x[start:start + _BLOCK], x)
        idx = np.arange(start, min(start + _BLOCK, len(x)))
        block[idx - start, idx] = np.inf  # not its own neighbour
        out[idx] = np.partition(block, k - 1, axis=1)[:, k - 1]
    return out


def _covered(points: np.ndarray, centres: np.ndarray, radii: np.ndarray) -> np.ndarray:
    """For each point: does some ball (centre, squared radius) contain it?"""
    out = np.zeros(len(points), dtype=bool)
    for start in range(0, len(points), _BLOCK):
        out[start:start + _BLOCK] = (_sq_distances(points[start:start + _BLOCK], centres) <= radii[None, :]).any(axis=1)
    return out


class PrecisionRecall(NamedTuple):
    precision: float
    recall: float


def knn_precision_recall(relevant, retrieved, k: int = 3) -> PrecisionRecall:
    """k-NN precision (retrieved inside the relevant support) and recall (relevant inside the retrieved support)."""
    relevant, retrieved = check_pair(relevant, retrieved)
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 1:
        raise ValueError(f'k must be a positive integer, got {k!r}')
    if k >= min(len(relevant), len(retrieved)):
        raise ValueError(f'k = {k} needs more than {k} vectors in each set, got {len(relevant)} relevant and {len(retrieved)} retrieved')
    precision = _covered(retrieved, relevant, knn_radii(relevant, k)).mean()
    recall = _covered(relevant, retrieved, knn_radii(retrieved, k)).mean()
    return PrecisionRecall(float(precision), float(recall))
