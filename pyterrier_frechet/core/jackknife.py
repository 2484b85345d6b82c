"""Jackknife pseudo-values of FD over queries (pure numpy)."""
from typing import Dict, List

import numpy as np

from .frechet import frechet_distance


def jackknife_pseudo_values(relevant: np.ndarray, rel_qids: np.ndarray, retrieved: np.ndarray, ret_qids: np.ndarray,
                            queries: List[str]) -> Dict[str, float]:
    """Per-query jackknife pseudo-values of FD: n·FD − (n−1)·FD₋q, FD₋q leaving out query q's relevant and retrieved
    documents, over the query universe ``queries`` (n of them: every query of the qrels, as the bootstrap resamples;
    a query without documents in either set has FD₋q = FD, so its pseudo-value is FD). Their mean is the jackknife
    bias-corrected FD, and a paired t-test on two systems' pseudo-values is Tukey's jackknife test of the FD difference."""
    n = len(queries)
    full = frechet_distance(relevant, retrieved)
    out = {}
    for q in queries:
        r, t = relevant[rel_qids != q], retrieved[ret_qids != q]
        out[q] = n * full - (n - 1) * frechet_distance(r, t) if min(len(r), len(t)) >= 2 else float('nan')
    return out
