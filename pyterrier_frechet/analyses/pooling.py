"""Pooling-bias simulation (Yilmaz et al., SIGIR 2020, §3): how well do judgments pooled from *some* systems
rank the others — per system type?

For each repeat, a random subset of run *groups* is drawn (a fraction of the groups that hold a run of the
pool type; every run of a drawn group goes into the pool, as the paper does for a team's several runs). The
depth-k pool of those runs — the union of their top ``depth`` documents per query, in trec_eval order — keeps
its judgments; judgments outside it become non-relevant (``unpooled='nonrel'``, default) or are removed
(``unpooled='unjudged'``, for measures that tell unjudged from non-relevant: Bpref, infAP, FD's URR). Every
run outside the pool is a test system, scored with the full qrels ("actual") and with the simulated ones
("estimated"); Kendall τ-b between the two rankings is reported per test-system type and over all test systems.
"""
import logging
from typing import Dict, NamedTuple, Optional, Sequence

import numpy as np
import pandas as pd
import pyterrier as pt
import scipy.stats

from ..evaluation.evaluate import evaluate, parse_measures
from ..evaluation.frames import DOCNO, QID, SCORE
from ..evaluation.selection import RankedRun
from ..measures.base import column_label

logger = logging.getLogger(__name__)

ALL = 'all'
MIN_SYSTEMS = 3  # fewer test systems of a type than this give τ = NaN (two systems always give ±1)


class PoolSimResult(NamedTuple):
    taus: pd.DataFrame  # one row per (pool_type, repeat, measure, test_type)
    summary: pd.DataFrame  # mean / std / min / max τ over repeats, per (pool_type, measure, test_type)
    pools: pd.DataFrame  # one row per (pool_type, repeat): the pooled groups, pool size, relevant documents found
    actual: pd.DataFrame  # every system × measure with the full qrels


def depth_pool(runs: Sequence[pd.DataFrame], depth: int) -> pd.MultiIndex:
    """The (qid, docno) pairs in the top ``depth`` (trec_eval's order) of any of ``runs``."""
    tops = []
    for run in runs:
        typed = pd.DataFrame({QID: run['qid'].astype(str).to_numpy(), DOCNO: run['docno'].astype(str).to_numpy(),
                              SCORE: run['score'].to_numpy()})
        ranked = RankedRun(typed)  # no qrels: every query, every row unjudged
        tops.append(typed.iloc[ranked.rows[ranked.select(depth, urr=False)]][[QID, DOCNO]])
    pairs = pd.concat(tops, ignore_index=True).drop_duplicates() if tops else pd.DataFrame({QID: [], DOCNO: []})
    return pd.MultiIndex.from_frame(pairs.rename(columns={QID: 'qid', DOCNO: 'docno'}))


def pooled_qrels(qrels: pd.DataFrame, pool: pd.MultiIndex, unpooled: str = 'nonrel') -> pd.DataFrame:
    """``qrels`` as if only ``pool`` had been judged: other judgments become label 0 (``'nonrel'``) or are removed
    (``'unjudged'``)."""
    if unpooled not in ('nonrel', 'unjudged'):
        raise ValueError(f"unpooled must be 'nonrel' or 'unjudged', got {unpooled!r}")
    keys = pd.MultiIndex.from_arrays([qrels['qid'].astype(str), qrels['docno'].astype(str)])
    inside = keys.isin(pool)
    if unpooled == 'unjudged':
        return qrels[inside].reset_index(drop=True)
    return qrels.assign(label=np.where(inside, qrels['label'], 0)).reset_index(drop=True)


def _check_labels(runs, groups: Dict[str, str], types: Dict[str, str]) -> None:
    for what, mapping in (('group', groups), ('type', types)):
        missing = sorted(set(runs) - set(mapping))
        if missing:
            raise ValueError(f'{len(missing)} run(s) have no {what}, e.g. {missing[:5]}')


def _tau(actual: pd.Series, estimated: pd.Series) -> float:
    if len(actual) < MIN_SYSTEMS:
        return float('nan')
    return float(scipy.stats.kendalltau(actual.to_numpy(dtype=float), estimated.to_numpy(dtype=float)).statistic)


def simulate_pools(runs: Dict[str, pd.DataFrame], qrels: pd.DataFrame, measures, groups: Dict[str, str],
                   types: Dict[str, str], *, pool_types: Sequence[Optional[str]] = (None,), fraction: float = 0.5,
                   depth: int = 10, repeats: int = 10, seed: int = 0, unpooled: str = 'nonrel',
                   verbose: bool = True, encoder=None) -> PoolSimResult:
    """Simulate depth-``depth`` pools from random halves of the run groups, ``repeats`` times per pool type.

    Args:
        runs: system name → result frame (qid, docno, score).
        qrels: the full judgments (qid, docno, label): the "actual" metric values.
        measures: ir_measures measures or names, FD included (with its encoder, or a default one set).
        groups: run → group (a team, or a family of variants; a group is pooled as a whole).
        types: run → system type (e.g. traditional / neural); τ is reported per type and over all.
        pool_types: for each, the candidate groups are those holding a run of that type (``None``: every group).
        fraction: share of the candidate groups drawn into each pool (at least one).
        depth: pool depth k.
        repeats: pools drawn per pool type; group draws come from ``numpy.random.default_rng(seed)`` (one
            stream per pool type, so adding a pool type does not change another's draws).
        unpooled: ``'nonrel'`` or ``'unjudged'`` (see the module docstring).
        encoder: the vector source of vector measures that name none.
    """
    measures = parse_measures(measures)
    if not 0 < fraction <= 1:
        raise ValueError(f'fraction must be in (0, 1], got {fraction}')
    if isinstance(depth, bool) or not isinstance(depth, (int, np.integer)) or depth < 1:
        raise ValueError(f'depth must be a positive integer, got {depth!r}')
    if repeats < 1:
        raise ValueError(f'repeats must be positive, got {repeats}')
    pooled_qrels(qrels.head(0), pd.MultiIndex.from_arrays([[], []]), unpooled)  # checks unpooled
    _check_labels(runs, groups, types)
    names = sorted(runs)
    group_names = sorted({groups[n] for n in names})
    actual = evaluate({n: runs[n] for n in names}, qrels, measures, encoder).set_index('name')
    n_relevant = int((qrels['label'] > 0).sum())
    tau_rows, pool_rows = [], []
    for p, pool_type in enumerate(pool_types):
        candidates = [g for g in group_names if pool_type is None or any(types[n] == pool_type for n in names if groups[n] == g)]
        if not candidates:
            raise ValueError(f'no group holds a run of type {pool_type!r} (types: {sorted(set(types.values()))})')
        n_pick = max(1, int(round(fraction * len(candidates))))
        rng = np.random.default_rng([seed, p])
        label = ALL if pool_type is None else pool_type
        for r in pt.tqdm(range(repeats), desc=f'pools ({label})', unit='pool', disable=not verbose):
            picked = sorted(rng.choice(candidates, size=n_pick, replace=False).tolist())
            pooled = [n for n in names if groups[n] in picked]
            tests = [n for n in names if groups[n] not in picked]
            if not tests:
                raise ValueError(f'the pool ({picked}) holds every run: nothing is left to test; lower fraction')
            pool = depth_pool([runs[n] for n in pooled], depth)
            sim = pooled_qrels(qrels, pool, unpooled)
            found = int((sim['label'] > 0).sum())
            pool_rows.append({'pool_type': label, 'repeat': r, 'groups': ' '.join(picked), 'pooled_runs': len(pooled),
                              'pool_size': len(pool), 'relevant_found': found, 'relevant_share': found / max(n_relevant, 1)})
            try:
                estimated = evaluate({n: runs[n] for n in tests}, sim, measures, encoder).set_index('name')
            except ValueError as ex:
                raise ValueError(f'pool {r} ({label}: {picked}): {ex}') from ex
            for m in measures:
                col = column_label(m)
                for test_type in sorted({types[n] for n in tests}) + [ALL]:
                    members = [n for n in tests if test_type == ALL or types[n] == test_type]
                    tau_rows.append({'pool_type': label, 'repeat': r, 'measure': col, 'test_type': test_type,
                                     'n_systems': len(members), 'kendall_tau': _tau(actual.loc[members, col], estimated.loc[members, col])})
    taus = pd.DataFrame(tau_rows)
    summary = (taus.groupby(['pool_type', 'measure', 'test_type'], sort=False)
               .agg(mean=('kendall_tau', 'mean'), std=('kendall_tau', 'std'), min=('kendall_tau', 'min'),
                    max=('kendall_tau', 'max'), n_systems=('n_systems', 'mean'), repeats=('kendall_tau', 'count'))
               .reset_index())
    return PoolSimResult(taus, summary, pd.DataFrame(pool_rows), actual.reset_index())
