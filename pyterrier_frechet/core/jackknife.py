"""Jackknife pseudo-values of FD over queries (pure numpy)."""
from typing import Dict, List

import numpy as np

from .frechet import frechet_distance


def jackknife_pseudo_values(relevant: np.ndarray, rel_qids: np.ndarray, retrieved: np.ndarray, ret_qids: np.ndarray,
                            queries: List[str]) -> Dict[str, float]:
    """Per-query jackknife pseudo-values of FD: n·FD − (n−1)·FD₋q, FD₋q leaving out query q's relevant and retrieved
    documents. The units are the queries of ``queries`` that contribute a document to either set (n of them); a
    query with none is no unit and gets no value — counting it would scale the bias correction by the wrong n,
    so adding judged queries without relevant documents would move the estimate (issue 15 S6). Their mean is the
    jackknife bias-corrected FD, and a paired t-test on two systems' pseudo-values is Tukey's jackknife test of the
    FD difference (the units are the same for every system when ``queries`` are those with relevant documents)."""
    present = set(np.asarray(rel_qids).tolist()) | set(np.asarray(ret_qids).tolist())
    queries = [q for q in queries if q in present]
    n = len(queries)
    full = frechet_distance(relevant, retrieved)
    out = {}
    for q in queries:
        r, t = relevant[rel_qids != q], retrieved[ret_qids != q]
        out[q] = n * full - (n - 1) * frechet_distance(r, t) if min(len(r), len(t)) >= 2 else float('nan')
    return out
