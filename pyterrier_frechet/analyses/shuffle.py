"""The shuffle check: does a measure see which query a ranking serves?

Every run is evaluated as it is and with its rankings rotated across queries — the ranking of the i-th query
(in sorted order of the queries the run and the qrels share that have a relevant document *at the measure's
relevance threshold* ``rel``) handed to the (i+1)-th, the last to the first. Measures with different thresholds
(``FD(rel=2)`` beside ``nDCG``) are each evaluated on the rotation among their own queries: FD pools only the
queries with a relevant document at its ``rel``, so rotating over others would change its retrieved set. A measure that judges rankings per query (nDCG, CFD) must get worse; FD, which
pools each side over the query set, does not move: the pooled retrieved set is the same documents.
"""
from typing import Dict

import pandas as pd

from ..evaluation.evaluate import NO_VECTOR_COLUMNS, evaluate, parse_measures
from ..evaluation.frames import LABEL, QID, prepare_qrels, to_ir_measures
from ..measures.base import column_label
from ..vectors.sources import using_encoder


def relevance_threshold(measure) -> int:
    """The label from which ``measure`` counts a document relevant: its ``rel`` (default 1)."""
    if 'rel' in getattr(measure, 'SUPPORTED_PARAMS', {}):
        value = measure['rel']
        return 1 if value is None else int(value)
    return 1


def rotate_rankings(run: pd.DataFrame, qrels: pd.DataFrame, rel: int = 1) -> pd.DataFrame:
    """``run`` with each ranking handed to the next query among those with a document of label >= ``rel`` (see the
    module docstring); other queries unchanged."""
    judged = prepare_qrels(to_ir_measures(qrels), 'shuffle_check')
    with_relevant = set(judged.loc[judged[LABEL] >= rel, QID])
    qids = run['qid'].astype(str)
    order = sorted(set(qids) & with_relevant)
    if len(order) < 2:
        raise ValueError(f'the shuffle check needs at least 2 queries with relevant documents (label >= {rel}) in the '
                         f'run, got {len(order)}')
    mapping = dict(zip(order, order[1:] + order[:1]))
    return run.assign(qid=qids.map(lambda q: mapping.get(q, q)).to_numpy())


def shuffle_check(runs: Dict[str, pd.DataFrame], qrels: pd.DataFrame, measures, encoder=None) -> pd.DataFrame:
    """Every measure on every run and on the run with its rankings rotated across queries.

    Returns one row per (run, measure): ``value``, ``rotated`` and ``change`` (rotated − value); with a vector
    measure, also the run's ``no_vector_relevant`` and ``no_vector_retrieved`` (documents left out for want of a
    vector, as :func:`~pyterrier_frechet.evaluate` counts them; rotating moves no document in or out)."""
    measures = parse_measures(measures)
    thresholds = sorted({relevance_threshold(m) for m in measures})
    after = {}
    with using_encoder(encoder):
        before = evaluate(runs, qrels, measures).set_index('name')
        for rel in thresholds:
            group = [m for m in measures if relevance_threshold(m) == rel]
            rotated = {name: rotate_rankings(run, qrels, rel) for name, run in runs.items()}
            table = evaluate(rotated, qrels, group).set_index('name')
            after.update({column_label(m): table[column_label(m)] for m in group})
    counts = [c for c in NO_VECTOR_COLUMNS if c in before.columns]
    rows = []
    for name in runs:
        for m in measures:
            col = column_label(m)
            value, rot = float(before.loc[name, col]), float(after[col].loc[name])
            rows.append({'name': name, 'measure': col, 'value': value, 'rotated': rot, 'change': rot - value,
                         **{c: int(before.loc[name, c]) for c in counts}})
    return pd.DataFrame(rows)


__all__ = ['relevance_threshold', 'rotate_rankings', 'shuffle_check']
