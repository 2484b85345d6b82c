"""Bootstrap over queries (FD paper §4): confidence intervals for FD and any ir_measures measure.

Each sample draws |Q| queries with replacement (``numpy.random.default_rng(seed)``; the same draws for
every system and measure, so samples are paired across systems). A query drawn k times contributes
its relevant and retrieved documents k times.

Fast path for FD: per query, the count n_q, sum s_q and cross-product P_q = Σ (x−c)(x−c)ᵀ of its
vectors (c a common shift, for numerical stability) are computed once. A sample with counts w_q then
has N = Σ w_q n_q, mean c + Σ w_q s_q / N and covariance (Σ w_q P_q − N μ̃μ̃ᵀ)/(N − 1), so no vector
is gathered again; FD comes from these statistics (:func:`~pyterrier_frechet.frechet_distance_from_stats`).
Histogram measures (DO, HSA) sum per-query bin counts with the same weights, then apply Eq. 1 / Eq. 2.
Classical measures use their per-query values, averaged with the same counts.

:func:`bootstrap_naive` is the plain loop (resample queries, rebuild the frames, gather vectors,
recompute through ir_measures), kept as the reference the fast path is tested and benchmarked against.
"""
import logging
from typing import Dict, List, NamedTuple, Optional, Sequence

import ir_measures
import numpy as np
import pandas as pd
import pyterrier as pt

from .frechet import GaussianStats, frechet_distance_from_stats
from .histogram import Histograms
from .histogram_provider import histogram_value, query_histograms
from .measure import VECTOR_MEASURES, _DO, _FD, _HSA
from .provider import DOCNO, QID, fd_sets
from .vectors import get_default_encoder, lookup_vectors

logger = logging.getLogger(__name__)

_CHUNK = 32  # bootstrap samples whose weighted sums are formed in one matrix product


class BootstrapResult(NamedTuple):
    summary: pd.DataFrame  # one row per (system, measure): value, mean, std, low, high, n_valid
    samples: Dict[str, Dict[str, np.ndarray]]  # system -> measure -> sample values
    queries: List[str]  # the query universe that was resampled


def draw_counts(n_queries: int, n_samples: int, seed: int) -> np.ndarray:
    """(n_samples × n_queries) how often each query is drawn in each sample."""
    if n_samples < 1:
        raise ValueError(f'n_samples must be positive, got {n_samples}')
    rng = np.random.default_rng(seed)
    draws = rng.integers(0, n_queries, size=(n_samples, n_queries))
    counts = np.zeros((n_samples, n_queries), dtype=np.int64)
    np.add.at(counts, (np.arange(n_samples)[:, None], draws), 1)
    return counts


def draw_queries(queries: Sequence[str], n_samples: int, seed: int) -> List[List[str]]:
    """The same draws as :func:`draw_counts`, as lists of (repeated) query ids — for the naive loop."""
    rng = np.random.default_rng(seed)
    draws = rng.integers(0, len(queries), size=(n_samples, len(queries)))
    return [[queries[i] for i in row] for row in draws]


class _QueryStats:
    """Per-query count, sum and cross-product of one side's vectors (shifted by ``shift``); the symmetric
    cross-products are stored packed (upper triangle, d(d+1)/2 numbers), which halves memory and the flops
    of re-weighting — 4.1 GB for 6,980 queries at d = 384 (MS MARCO dev) instead of 8.2 GB. They are
    formed by batched matrix products over blocks of queries (each padded with zero rows to the block's
    largest query), not one small product per query."""

    _BLOCK = 256  # queries per batched product

    def __init__(self, frame: pd.DataFrame, vec_of: Dict[str, np.ndarray], queries: List[str], shift: np.ndarray):
        d = len(shift)
        upper = np.flatnonzero(np.triu(np.ones((d, d), dtype=bool)))  # packed positions in a flattened d×d
        self.n = np.zeros(len(queries))
        self.s = np.zeros((len(queries), d))
        self.p = np.zeros((len(queries), len(upper)))
        keep = frame[DOCNO].isin(vec_of.keys()).to_numpy() if len(frame) else np.zeros(0, dtype=bool)
        qidx = pd.Index(queries).get_indexer(frame[QID].to_numpy()[keep])
        if (qidx < 0).any():  # pragma: no cover - the callers' sets only hold queries of the universe
            raise ValueError(f'{int((qidx < 0).sum())} row(s) belong to queries outside the resampled ones')
        if not len(qidx):
            return
        order = np.argsort(qidx, kind='stable')
        qidx = qidx[order]
        x = np.asarray([vec_of[doc] for doc in frame[DOCNO].to_numpy()[keep][order]], dtype=np.float64) - shift
        self.n[:] = np.bincount(qidx, minlength=len(queries))
        starts = np.concatenate([[0], np.cumsum(self.n, dtype=np.int64)])
        present = self.n > 0
        self.s[present] = np.add.reduceat(x, starts[:-1][present], axis=0)  # rows are sorted by query
        slot = np.arange(len(qidx)) - starts[qidx]  # a row's position within its query
        for b in range(0, len(queries), self._BLOCK):
            block = slice(b, min(b + self._BLOCK, len(queries)))
            rows = slice(starts[block.start], starts[block.stop])
            width = int(self.n[block].max())
            if width == 0:
                continue
            padded = np.zeros((block.stop - block.start, width, d))
            padded[qidx[rows] - b, slot[rows]] = x[rows]
            self.p[block] = (padded.transpose(0, 2, 1) @ padded).reshape(len(padded), d * d)[:, upper]


def _gaussians(parts: Sequence[_QueryStats], weights: Sequence[np.ndarray], shift: np.ndarray) -> List[Optional[GaussianStats]]:
    """The Gaussian of each sample: per-query statistics of ``parts`` summed with per-query ``weights`` (one
    samples × queries matrix per part, so queries can be drawn from different systems); None where a sample
    has fewer than 2 vectors."""
    d = len(shift)
    upper = np.triu_indices(d)  # the packing of _QueryStats.p (row-major upper triangle)
    ns = sum(w @ part.n for part, w in zip(parts, weights))
    sums = sum(w @ part.s for part, w in zip(parts, weights))
    crosses = sum(w @ part.p for part, w in zip(parts, weights))  # one matrix product for a chunk of samples
    out = []
    for n, total, cross in zip(ns, sums, crosses):
        if n < 2:
            out.append(None)
            continue
        mean_shifted = total / n
        cov = np.empty((d, d))
        cov[upper] = cross
        cov.T[upper] = cross  # the packed upper triangle, mirrored
        cov -= n * np.outer(mean_shifted, mean_shifted)
        cov /= n - 1
        out.append(GaussianStats(mean_shifted + shift, cov, int(n)))
    return out


def weighted_fds(rel: _QueryStats, rel_weights: np.ndarray, ret_parts: Sequence[_QueryStats],
                 ret_weights: Sequence[np.ndarray], shift: np.ndarray, pbar=None, backend: str = 'numpy',
                 device: Optional[str] = None) -> np.ndarray:
    """FD per sample (row of the weights) between the weighted relevant set and the weighted retrieved
    parts, formed in chunks of samples; NaN where a side has fewer than 2 vectors. ``backend='torch'``
    computes the same on ``device`` (:mod:`pyterrier_frechet.torch_backend`)."""
    if backend == 'torch':
        from .torch_backend import weighted_fds_torch
        return weighted_fds_torch(rel, rel_weights, ret_parts, ret_weights, shift, device=device, pbar=pbar)
    out = np.full(len(rel_weights), np.nan)
    for start in range(0, len(rel_weights), _CHUNK):
        sl = slice(start, start + _CHUNK)
        relevant = _gaussians([rel], [rel_weights[sl]], shift)
        retrieved = _gaussians(ret_parts, [w[sl] for w in ret_weights], shift)
        for b, (s1, s2) in enumerate(zip(relevant, retrieved), start):
            if s1 is not None and s2 is not None:
                out[b] = frechet_distance_from_stats(s1, s2)
        if pbar is not None:
            pbar.update(len(relevant))
    return out


def _vectors_of(measure, sets, vec_cache: Dict) -> Dict[str, np.ndarray]:
    """docno -> vector for both sides of ``sets``, from the measure's encoder, applying its ``missing=`` policy.
    ``vec_cache`` (per encoder) remembers every lookup, including documents found to have no vector."""
    encoder = measure['encoder'] if measure['encoder'] is not None else get_default_encoder()
    if encoder is None:
        raise ValueError(f'{measure}: FD needs vectors: pass FD(encoder=...) or call pyterrier_frechet.set_default_encoder(...)')
    known = vec_cache.setdefault(id(encoder), {})  # docno -> vector, or None for a document without one
    docnos = sorted({d for frame in (sets.relevant, sets.retrieved) for d in frame[DOCNO]})
    unknown = [d for d in docnos if d not in known]
    if unknown:
        vecs, found = lookup_vectors(encoder, unknown)
        known.update((d, v if f else None) for d, v, f in zip(unknown, vecs, found))
    absent = [d for d in docnos if known[d] is None]
    if absent:
        if measure['missing'] == 'error':
            raise ValueError(f'{measure}: {len(absent)} document(s) have no vector, e.g. {absent[:5]}; '
                             "pass missing='drop' to leave them out")
        logger.warning('%s: leaves out %d document(s) without a vector', measure, len(absent))
    return {d: known[d] for d in docnos if known[d] is not None}


def _fd_samples(measure, qrels_ir, run_ir, queries, counts, vec_cache: Dict, verbose: bool = True,
                backend: str = 'numpy', device: Optional[str] = None) -> np.ndarray:
    sets = fd_sets(measure, qrels_ir, run_ir)
    vec_of = _vectors_of(measure, sets, vec_cache)
    all_vecs = [vec_of[d] for d in sets.relevant[DOCNO] if d in vec_of]
    if not all_vecs:
        raise ValueError(f'{measure}: no relevant document has a vector')
    shift = np.mean(all_vecs, axis=0)
    rel = _QueryStats(sets.relevant, vec_of, queries, shift)
    ret = _QueryStats(sets.retrieved, vec_of, queries, shift)
    with pt.tqdm(total=len(counts), desc=f'bootstrap {measure}', unit='sample', leave=False, disable=not verbose or len(counts) < 200) as pbar:
        return weighted_fds(rel, counts, [ret], [counts], shift, pbar, backend=backend, device=device)


def _histogram_samples(measure, qrels_ir, run_ir, queries, counts) -> np.ndarray:
    """DO / HSA per sample: each query's bin counts weighted by how often the sample drew it."""
    qh = query_histograms(measure, qrels_ir, run_ir)
    weights = counts[:, pd.Index(queries).get_indexer(qh.queries)]  # the measure's queries are a subset of the universe
    rel, nonrel = weights @ qh.relevant, weights @ qh.nonrelevant
    # a sample that drew no query with a relevant document has no value (the measure raises on such qrels)
    return np.array([histogram_value(measure, Histograms(r, n, qh.centres)) if drew else np.nan
                     for r, n, drew in zip(rel, nonrel, weights.sum(axis=1) > 0)])


_HISTOGRAM_NAMES = (_DO.NAME, _HSA.NAME)


def _summary_row(system, measure, value, samples, ci) -> dict:
    valid = samples[np.isfinite(samples)]
    alpha = (1 - ci) / 2
    low, high = (np.quantile(valid, [alpha, 1 - alpha]) if len(valid) else (np.nan, np.nan))
    return {'name': system, 'measure': measure, 'value': value, 'mean': float(np.mean(valid)) if len(valid) else np.nan,
            'std': float(np.std(valid, ddof=1)) if len(valid) > 1 else np.nan, 'low': float(low), 'high': float(high),
            'n_valid': int(len(valid))}


def bootstrap(runs: Dict[str, pd.DataFrame], qrels: pd.DataFrame, measures, n_samples: int = 1000, seed: int = 0,
              ci: float = 0.95, verbose: bool = True, backend: str = 'numpy', device: Optional[str] = None) -> BootstrapResult:
    """Bootstrap confidence intervals over queries for every (run, measure).

    Args:
        runs: system name → result frame (qid, docno, score), e.g. from :func:`pyterrier_frechet.runs.read_run`.
        qrels: qid, docno, label. The resampled universe is the qrels' queries.
        measures: ir_measures measures (objects or names); FD, DO and HSA use the fast paths; FD takes vectors
            from their encoder (or the default one; a run's ``doc_vec`` column is not used) and their
            ``missing=`` policy.
        n_samples: bootstrap samples (default 1000, as in the paper).
        seed: the draws are ``numpy.random.default_rng(seed)``; the same draws serve every system.
        ci: confidence level of the percentile interval (default 0.95).
        verbose: progress bars.
        backend: ``'numpy'`` or ``'torch'`` (FD's per-sample statistics batched on ``device``; equal to numpy
            to 1e-8 relative).
        device: for ``backend='torch'``: ``'cuda'``, ``'cpu'``, …; default: CUDA when available.
    """
    if not 0 < ci < 1:
        raise ValueError(f'ci must be in (0, 1), got {ci}')
    if backend not in ('numpy', 'torch'):
        raise ValueError(f"backend must be 'numpy' or 'torch', got {backend!r}")
    measures = [ir_measures.parse_measure(m) if isinstance(m, str) else m for m in measures]
    unsupported = [str(m) for m in measures if m.NAME in VECTOR_MEASURES and (m.NAME != _FD.NAME or m['jackknife'])]
    if unsupported:
        raise ValueError(f'the bootstrap has no fast path for {unsupported}: it supports FD, DO, HSA and per-query measures '
                         '(bootstrap_naive resamples any measure, slowly)')
    qrels_ir = pt.model.to_ir_measures(qrels.astype({'qid': str, 'docno': str}))
    queries = sorted(qrels_ir[QID].unique())
    counts = draw_counts(len(queries), n_samples, seed).astype(np.float64)
    rows, samples = [], {}
    vec_cache: Dict = {}
    classical = [m for m in measures if m.NAME != _FD.NAME and m.NAME not in _HISTOGRAM_NAMES]
    for name, run in pt.tqdm(list(runs.items()), desc='bootstrap', unit='run', disable=not verbose or len(runs) < 2):
        run_ir = pt.model.to_ir_measures(run.astype({'qid': str, 'docno': str}))
        samples[name] = {}
        full = ir_measures.calc_aggregate(measures, qrels_ir, run_ir)
        if classical:
            per_query = pd.DataFrame([(m.query_id, str(m.measure), m.value) for m in ir_measures.iter_calc(classical, qrels_ir, run_ir)],
                                     columns=['qid', 'measure', 'value']).pivot(index='qid', columns='measure', values='value')
            per_query = per_query.reindex(queries)
        for m in measures:
            if m.NAME == _FD.NAME:
                values = _fd_samples(m, qrels_ir, run_ir, queries, counts, vec_cache, verbose, backend, device)
            elif m.NAME in _HISTOGRAM_NAMES:
                values = _histogram_samples(m, qrels_ir, run_ir, queries, counts)
            else:
                values = counts @ per_query[str(m)].to_numpy(dtype=np.float64) / len(queries)
            samples[name][str(m)] = values
            rows.append(_summary_row(name, str(m), float(full[m]), values, ci))
    return BootstrapResult(pd.DataFrame(rows), samples, queries)


def bootstrap_naive(run: pd.DataFrame, qrels: pd.DataFrame, measure, n_samples: int = 1000, seed: int = 0) -> np.ndarray:
    """The plain loop, for reference: per sample, rebuild qrels and run with each drawn query renamed
    ``qid#k`` (its k-th draw), then evaluate through ir_measures (FD re-gathers every vector)."""
    qrels = qrels.astype({'qid': str, 'docno': str})
    run = run.astype({'qid': str, 'docno': str})
    queries = sorted(qrels['qid'].unique())
    qrels_by_q = dict(tuple(qrels.groupby('qid')))
    run_by_q = dict(tuple(run.groupby('qid')))
    out = np.full(n_samples, np.nan)
    for b, drawn in enumerate(draw_queries(queries, n_samples, seed)):
        q_parts, r_parts = [], []
        for k, q in enumerate(drawn):
            q_parts.append(qrels_by_q[q].assign(qid=f'{q}#{k}'))
            if q in run_by_q:
                r_parts.append(run_by_q[q].assign(qid=f'{q}#{k}'))
        sample_qrels = pt.model.to_ir_measures(pd.concat(q_parts, ignore_index=True))
        sample_run = pt.model.to_ir_measures(pd.concat(r_parts, ignore_index=True))
        try:
            out[b] = ir_measures.calc_aggregate([measure], sample_qrels, sample_run)[measure]
        except ValueError:  # a side with fewer than 2 vectors
            pass
    return out
