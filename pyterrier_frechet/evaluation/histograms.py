"""The inputs of the histogram measures (:data:`~pyterrier_frechet.DO`, :data:`~pyterrier_frechet.HSA`).

Per query, the (cut) ranking is normalised to [0, 1] and its judged documents are counted into relevant and
non-relevant histograms (:func:`query_histograms`); the set's histograms are the sums over queries, from
which :mod:`pyterrier_frechet.core.histogram` computes DO and HSA. The per-query counts also serve the bootstrap,
where a sample's histograms are the counts weighted by how often each query was drawn.
"""
import logging
import warnings
from typing import Dict, List, NamedTuple

import numpy as np
import pandas as pd

from ..core.histogram import Histograms
from ..measures.base import HISTOGRAM_PARAMS
from .frames import DOCNO, LABEL, QID, SCORE
from .ranking import top_k

logger = logging.getLogger(__name__)


class QueryHistograms(NamedTuple):
    """Relevant and non-relevant counts per query (rows follow ``queries``) and bin, and the bin centres."""
    queries: List[str]
    relevant: np.ndarray  # (queries, bins) int64
    nonrelevant: np.ndarray
    centres: np.ndarray

    def total(self, weights=None) -> Histograms:
        """The set's histograms: counts summed over queries (each weighted by ``weights`` if given)."""
        if weights is None:
            return Histograms(self.relevant.sum(0), self.nonrelevant.sum(0), self.centres)
        w = np.asarray(weights, dtype=np.float64)
        return Histograms(w @ self.relevant, w @ self.nonrelevant, self.centres)


def query_histograms(measure, qrels: pd.DataFrame, run: pd.DataFrame) -> QueryHistograms:
    """Per-query histograms of the normalised scores of the judged documents a run scored (see ``DO``'s docstring).

    ``qrels`` and ``run`` use ir_measures column names with str ids. The queries are those of the qrels with
    at least one document judged ``>= rel``, in sorted order.
    """
    cutoff = measure.positive_int('cutoff')
    bins = measure.positive_int('bins')
    if bins is None or bins < 2:
        raise ValueError(f'{measure}: bins must be an integer >= 2, got {measure["bins"]!r}')
    rel = measure['rel']
    queries = sorted(qrels.loc[qrels[LABEL] >= rel, QID].unique())
    if not queries:
        raise ValueError(f'{measure}: the qrels have no document with relevance >= {rel}'
                         f' (labels found: {sorted(qrels[LABEL].unique().tolist())[:10]})')
    ranked = top_k(run[run[QID].isin(queries)], cutoff, qid=QID, docno=DOCNO, score=SCORE)
    scores = pd.to_numeric(ranked[SCORE]).to_numpy(dtype=np.float64)
    if not np.isfinite(scores).all():
        raise ValueError(f'{measure}: the run has {int((~np.isfinite(scores)).sum())} NaN or infinite score(s)')
    group = ranked.groupby(QID, sort=False)
    if measure['norm'] == 'rank':
        position = group.cumcount().to_numpy(dtype=np.float64)
        span = group[SCORE].transform('size').to_numpy(dtype=np.float64) - 1
        normalised = np.divide(span - position, span, out=np.full(len(ranked), np.nan), where=span > 0)
    else:
        lo = group[SCORE].transform('min').to_numpy(dtype=np.float64)
        span = group[SCORE].transform('max').to_numpy(dtype=np.float64) - lo
        normalised = np.divide(scores - lo, span, out=np.full(len(ranked), np.nan), where=span > 0)
    usable = ~np.isnan(normalised)
    dropped = sorted(set(ranked[QID].to_numpy()[~usable]))
    if dropped:
        logger.warning('%s: left out %d of %d queries whose ranking cannot be normalised (%s), e.g. %s', measure, len(dropped),
                       len(queries), 'one document' if measure['norm'] == 'rank' else 'all scores equal', dropped[:5])
    labels = ranked[[QID, DOCNO]].merge(qrels[[QID, DOCNO, LABEL]], how='left', on=[QID, DOCNO])[LABEL].to_numpy(dtype=np.float64)
    relevant = usable & (labels >= rel)
    nonrelevant = usable & ((labels < rel) | (np.isnan(labels) if measure['unjudged'] == 'nonrel' else False))
    row = pd.Index(queries).get_indexer(ranked[QID])
    index = np.minimum((np.where(usable, normalised, 0) * bins).astype(np.int64), bins - 1)
    counts = []
    for mask in (relevant, nonrelevant):
        h = np.zeros((len(queries), bins), dtype=np.int64)
        np.add.at(h, (row[mask], index[mask]), 1)
        counts.append(h)
    n_no_rel = int((counts[0].sum(1) == 0).sum())
    n_no_nonrel = int((counts[1].sum(1) == 0).sum())
    if n_no_rel or n_no_nonrel:
        logger.info('%s: of %d queries, %d have no relevant and %d no non-relevant scored document', measure, len(queries),
                    n_no_rel, n_no_nonrel)
    return QueryHistograms(queries, counts[0], counts[1], (np.arange(bins, dtype=np.float64) + 0.5) / bins)


def compute_histogram_measures(measures, qrels: pd.DataFrame, run: pd.DataFrame) -> Dict[object, float]:
    """DO / HSA of ``run`` for each measure (the histograms are built once per distinct parameter set)."""
    result, built = {}, {}
    for measure in sorted(measures, key=repr):
        key = tuple(measure[p] for p in HISTOGRAM_PARAMS)  # measures differing in no input parameter share histograms
        if key not in built:
            built[key] = query_histograms(measure, qrels, run).total()
        value = measure.statistic(built[key])
        if np.isnan(value):
            warnings.warn(f'{measure} is NaN: fewer than two bins hold both relevant and non-relevant scores '
                          f'(relevant per bin {built[key].relevant.tolist()}, non-relevant {built[key].nonrelevant.tolist()})')
        result[measure] = value
    return result
