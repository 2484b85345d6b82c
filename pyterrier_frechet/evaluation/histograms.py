"""The inputs of the histogram measures (:data:`~pyterrier_frechet.DO`, :data:`~pyterrier_frechet.HSA`).

Per query, the (cut) ranking is normalised to [0, 1] and its judged documents are counted into relevant and
non-relevant histograms (:func:`query_histograms`); the set's histograms are the sums over queries, from
which :mod:`pyterrier_frechet.core.histogram` computes DO and HSA. The per-query counts also serve the bootstrap,
where a sample's histograms are the counts weighted by how often each query was drawn.
"""
import logging
import warnings
from typing import Dict, List, NamedTuple, Optional, Union

import numpy as np
import pandas as pd

from ..core.histogram import Histograms, bin_centres, group_counts, normalise_rankings
from ..measures.base import HISTOGRAM_PARAMS
from .selection import Judgments, RankedRun

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


def query_histograms(measure, qrels: Union[Judgments, pd.DataFrame], run: pd.DataFrame,
                     ranked: Optional[RankedRun] = None) -> QueryHistograms:
    """Per-query histograms of the normalised scores of the judged documents a run scored (see ``DO``'s docstring).

    ``qrels``: the qrels coded once (:class:`~.selection.Judgments`) or a prepared frame; ``run``: a prepared frame
    (:mod:`.frames`), or ``ranked``, the run already in trec_eval's order (:class:`~.selection.RankedRun`). The
    queries are those of the qrels with at least one document judged ``>= rel``, in sorted order. The selection is
    :mod:`.selection`'s, the normalisation and binning :mod:`pyterrier_frechet.core.histogram`'s.
    """
    cutoff = measure.positive_int('cutoff')
    bins = measure.positive_int('bins')
    if bins is None or bins < 2:
        raise ValueError(f'{measure}: bins must be an integer >= 2, got {measure["bins"]!r}')
    judgments = qrels if isinstance(qrels, Judgments) else Judgments(qrels)
    rel = measure['rel']
    queries = judgments.query_mask(np.flatnonzero(judgments.labels >= rel))
    names = judgments.query_names[queries].tolist()
    if not names:
        raise ValueError(f'{measure}: the qrels have no document with relevance >= {rel}'
                         f' (labels found: {sorted(np.unique(judgments.labels).tolist())[:10]})')
    ranked = RankedRun(run, judgments) if ranked is None else ranked
    selected = ranked.select(cutoff, False, queries)
    scores = ranked.scores[selected]
    if not np.isfinite(scores).all():
        raise ValueError(f'{measure}: the run has {int((~np.isfinite(scores)).sum())} NaN or infinite score(s)')
    qcode = ranked.qcode[selected]
    normalised = normalise_rankings(qcode, scores, measure['norm'])
    usable = ~np.isnan(normalised)
    dropped = judgments.query_names[np.unique(qcode[~usable])].tolist()
    if dropped:
        logger.warning('%s: left out %d of %d queries whose ranking cannot be normalised (%s), e.g. %s', measure, len(dropped),
                       len(names), 'one document' if measure['norm'] == 'rank' else 'all scores equal', dropped[:5])
    labels = ranked.labels()[selected]
    relevant = usable & (labels >= rel)
    nonrelevant = usable & ((labels < rel) | (np.isnan(labels) if measure['unjudged'] == 'nonrel' else False))
    row = (np.cumsum(queries) - 1)[qcode]  # the position of each row's query among the measure's queries
    counts = [group_counts(row[mask], normalised[mask], len(names), bins) for mask in (relevant, nonrelevant)]
    n_no_rel = int((counts[0].sum(1) == 0).sum())
    n_no_nonrel = int((counts[1].sum(1) == 0).sum())
    if n_no_rel or n_no_nonrel:
        logger.info('%s: of %d queries, %d have no relevant and %d no non-relevant scored document', measure, len(names),
                    n_no_rel, n_no_nonrel)
    return QueryHistograms(names, counts[0], counts[1], bin_centres(bins))


def compute_histogram_measures(measures, qrels: Union[Judgments, pd.DataFrame], run: pd.DataFrame) -> Dict[object, float]:
    """DO / HSA of ``run`` for each measure: the run is ranked once, the histograms are built once per distinct
    parameter set. ``qrels``: :class:`~.selection.Judgments` (coded once per evaluation) or a prepared frame."""
    judgments = qrels if isinstance(qrels, Judgments) else Judgments(qrels)
    ranked = RankedRun(run, judgments)
    result, built = {}, {}
    for measure in sorted(measures, key=repr):
        key = tuple(measure[p] for p in HISTOGRAM_PARAMS)  # measures differing in no input parameter share histograms
        if key not in built:
            built[key] = query_histograms(measure, judgments, run, ranked).total()
        value = measure.statistic(built[key])
        if np.isnan(value):
            warnings.warn(f'{measure} is NaN: fewer than two bins hold both relevant and non-relevant scores '
                          f'(relevant per bin {built[key].relevant.tolist()}, non-relevant {built[key].nonrelevant.tolist()})')
        result[measure] = value
    return result
