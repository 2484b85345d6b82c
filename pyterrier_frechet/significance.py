"""Is system A's FD different from system B's on the same queries? Paired tests over queries.

FD is one number per query set, so pt.Experiment's per-query paired tests do not apply (see the README).
Two tests that do, both seeded and built on the per-query statistics of :mod:`pyterrier_frechet.bootstrap`:

- **paired bootstrap**: resample queries (the same draws for A and B), recompute FD_A − FD_B per sample;
  report the percentile CI of the difference and a two-sided bootstrap p-value (twice the smaller share of
  samples on either side of 0).
- **randomisation test**: under the null hypothesis that A and B are exchangeable, swapping the two
  systems' retrieved sets for any subset of queries leaves the distribution of FD_A − FD_B unchanged.
  Each permutation swaps every query with probability ½; p = (1 + #{|Δ_perm| ≥ |Δ_obs|}) / (1 + n).
"""
from typing import NamedTuple

import numpy as np
import pandas as pd
import pyterrier as pt

from .bootstrap import _QueryStats, _vectors_of, draw_counts, weighted_fds
from .provider import QID, fd_sets


class PairedResult(NamedTuple):
    fd_a: float
    fd_b: float
    diff: float  # FD_A − FD_B on the full query set (negative: A is closer to the relevant documents)
    ci_low: float
    ci_high: float
    p_bootstrap: float
    p_randomisation: float
    n_queries: int


def paired_test(run_a: pd.DataFrame, run_b: pd.DataFrame, qrels: pd.DataFrame, measure, n_samples: int = 1000,
                n_permutations: int = 1000, seed: int = 0, ci: float = 0.95) -> PairedResult:
    """Paired bootstrap and randomisation test of FD_A − FD_B for one FD measure on the same queries.

    Vectors come from the measure's encoder (or the default one), with its ``missing=`` policy.
    """
    qrels_ir = pt.model.to_ir_measures(qrels.astype({'qid': str, 'docno': str}))
    runs = [pt.model.to_ir_measures(r.astype({'qid': str, 'docno': str})) for r in (run_a, run_b)]
    queries = sorted(qrels_ir[QID].unique())
    sets = [fd_sets(measure, qrels_ir, r) for r in runs]
    vec_cache: dict = {}
    vec_of = {}
    for s in sets:
        vec_of.update(_vectors_of(measure, s, vec_cache))
    rel_vecs = [vec_of[d] for d in sets[0].relevant['doc_id'] if d in vec_of]
    shift = np.mean(rel_vecs, axis=0)
    rel = _QueryStats(sets[0].relevant, vec_of, queries, shift)
    ret_a, ret_b = (_QueryStats(s.retrieved, vec_of, queries, shift) for s in sets)
    ones = np.ones((1, len(queries)))
    zeros = np.zeros((1, len(queries)))
    fd_a = float(weighted_fds(rel, ones, [ret_a, ret_b], [ones, zeros], shift)[0])
    fd_b = float(weighted_fds(rel, ones, [ret_a, ret_b], [zeros, ones], shift)[0])
    diff = fd_a - fd_b

    counts = draw_counts(len(queries), n_samples, seed).astype(np.float64)
    boot = (weighted_fds(rel, counts, [ret_a, ret_b], [counts, np.zeros_like(counts)], shift)
            - weighted_fds(rel, counts, [ret_a, ret_b], [np.zeros_like(counts), counts], shift))
    boot = boot[np.isfinite(boot)]
    alpha = (1 - ci) / 2
    low, high = np.quantile(boot, [alpha, 1 - alpha])
    p_boot = float(min(1.0, 2 * min(np.mean(boot <= 0), np.mean(boot >= 0))))

    swap = np.random.default_rng(seed + 1).integers(0, 2, size=(n_permutations, len(queries))).astype(np.float64)
    keep = 1.0 - swap
    full = np.ones_like(swap)
    perm = (weighted_fds(rel, full, [ret_a, ret_b], [keep, swap], shift) - weighted_fds(rel, full, [ret_a, ret_b], [swap, keep], shift))
    perm = perm[np.isfinite(perm)]
    p_rand = float((1 + np.sum(np.abs(perm) >= abs(diff) - 1e-12 * abs(diff))) / (1 + len(perm)))
    return PairedResult(fd_a, fd_b, diff, float(low), float(high), p_boot, p_rand, len(queries))
