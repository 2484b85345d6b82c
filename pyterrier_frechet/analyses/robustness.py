"""Robustness analyses: sparsified judgments (FD paper §5, Table 2, Fig. 2) and the choice of encoder (§7.2).

Sparsification: for each n in ``per_query`` and each seed, every system is evaluated with qrels reduced to at most n
relevant documents per query (highest grade first, random within a grade: :func:`balance_qrels`), and
each metric's ranking of the systems is compared with its ranking under the full qrels by Kendall τ-b.
"""
from typing import Dict, Optional, Sequence

import numpy as np
import pandas as pd
import pyterrier as pt
import scipy.stats

from ..evaluation.evaluate import evaluate, parse_measures
from ..evaluation.qrels import balance_qrels
from ..measures.base import column_label
from ..measures.definitions import FD
from .correlation import correlations


def sparsify(runs: Dict[str, pd.DataFrame], qrels: pd.DataFrame, measures, per_query: Sequence[int] = (1, 5, 10),
             seeds: Sequence[int] = (0, 1, 2, 3, 4), rel: int = 1, verbose: bool = True, encoder=None,
             full: Optional[pd.DataFrame] = None) -> pd.DataFrame:
    """τ(metric with full qrels, metric with qrels balanced to n relevant per query), per n and seed.

    ``rel`` is the label from which a judgment counts as relevant *for balancing* (default 1: every
    positive grade, as nDCG sees them), independent of the thresholds the measures use. ``encoder``: the vector
    source of vector measures that name none. ``full``: :func:`~pyterrier_frechet.evaluate` of these runs, qrels
    and measures when it was made already (the report's results), else it is made here.

    Returns a long frame: measure, per_query, seed, kendall_tau, kendall_p. :func:`summarise` gives the
    mean and spread over seeds.
    """
    measures = parse_measures(measures)
    if len(runs) < 3:
        raise ValueError(f'sparsification needs at least 3 systems, got {len(runs)}')
    # refused before any work, as --per-query and --seeds refuse them
    for n in per_query:
        if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
            raise ValueError(f'per_query must be a positive integer, got {n!r} (--per-query)')
    for seed in seeds:
        if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
            raise ValueError(f'seeds must be non-negative integers, got {seed!r} (--seeds)')
    if full is None:
        full = evaluate(runs, qrels, measures, encoder)
    rows = []
    for n in pt.tqdm(list(per_query), desc='sparsify', unit='n', disable=not verbose or len(per_query) * len(seeds) < 4):
        for seed in seeds:
            sparse = evaluate(runs, balance_qrels(qrels, n, rel=rel, seed=seed), measures, encoder)
            for m in measures:
                label = column_label(m)
                tau = scipy.stats.kendalltau(full[label], sparse[label])
                rows.append({'measure': label, 'per_query': n, 'seed': seed,
                             'kendall_tau': float(tau.statistic), 'kendall_p': float(tau.pvalue)})
    return pd.DataFrame(rows)


def summarise(result: pd.DataFrame) -> pd.DataFrame:
    """Mean, standard deviation, min and max of τ over seeds, per measure and n (the paper's Table 2)."""
    g = result.groupby(['measure', 'per_query'])['kendall_tau']
    return g.agg(mean='mean', std='std', min='min', max='max', seeds='count').reset_index()


def encoder_robustness(runs: Dict[str, pd.DataFrame], qrels: pd.DataFrame, encoders: Dict[str, object], measure=None) -> tuple:
    """The same FD measure under several encoders (models, poolings or vector files), and how they agree.

    Args:
        encoders: label → encoder (an Embedder, a VectorStore, a transformer adding doc_vec).
        measure: the FD measure (default ``FD@10``); its ``encoder`` is replaced by each of ``encoders``.

    Returns ``(table, agreement)``: systems × one column per encoder label, and the pairwise
    :func:`~pyterrier_frechet.analyses.correlation.correlations` of those columns (Kendall τ-b first).
    """
    measure = FD @ 10 if measure is None else measure
    if not isinstance(measure, type(FD)):
        raise ValueError(f'encoder robustness compares FD measures, got {measure}')
    if len(encoders) < 2:
        raise ValueError('name at least two encoders to compare')
    columns = []
    for label, encoder in encoders.items():
        m = measure(encoder=encoder)
        columns.append(evaluate(runs, qrels, [m]).set_index('name')[column_label(m)].rename(f'{column_label(measure(encoder=None))} [{label}]'))
    table = pd.concat(columns, axis=1).reset_index()
    return table, correlations(table)
