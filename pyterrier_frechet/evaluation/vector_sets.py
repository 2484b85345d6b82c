"""The two sets of a vector measure (FD and its companions) and their vectors.

:func:`fd_sets` selects, for one measure, the judged-relevant documents of the query set and the top-k (or the first
k unjudged) retrieved documents of each of its queries. :func:`compute_vector_measures` looks every encoder's vectors
up once for all measures of a run, applies each measure's ``missing=`` policy on both sides, and asks each measure
for its value; it reports how many documents each side lost, so no dropped document goes uncounted.
"""
import hashlib
import logging
from typing import Dict, List, NamedTuple, Optional, Union

import numpy as np
import pandas as pd

from ..measures.base import is_vector_measure
from ..vectors.sources import encoder_key, get_default_encoder, lookup_vectors, stack_vectors
from .frames import DOCNO, LABEL, QID, SCORE
from .qrels import balance_qrels
from .ranking import top_k

logger = logging.getLogger(__name__)

# Largest |Δ| tolerated between a run's doc_vec and the encoder's vector for the same document
# (float32 encodings of one text on two machines agree to ~1e-6 per coordinate).
DOC_VEC_TOLERANCE = 1e-4


class FDSets(NamedTuple):
    """The two document sets of one FD evaluation, as (query_id, doc_id[, doc_vec]) frames."""
    relevant: pd.DataFrame
    retrieved: pd.DataFrame
    queries: List[str]


class VectorOutcome(NamedTuple):
    """One vector measure's value for one run, and what its two sets held."""
    value: Union[float, Dict[str, float]]  # a dict of per-query values for measures that are not set-valued
    relevant: int  # relevant documents with a vector (used)
    retrieved: int  # retrieved (query, document) rows with a vector (used)
    dropped_relevant: np.ndarray  # distinct docnos of relevant documents left out for want of a vector (missing='drop')
    dropped_retrieved: np.ndarray  # the same for retrieved documents


def fd_sets(measure, qrels: pd.DataFrame, run: pd.DataFrame) -> FDSets:
    """Select the relevant and retrieved documents that ``measure`` (a vector measure) compares.

    ``qrels`` and ``run`` use ir_measures column names (query_id, doc_id, relevance / score) with str ids.
    """
    cutoff = measure.positive_int('cutoff')
    per_query = measure.positive_int('per_query')
    rel = measure['rel']
    relevant = qrels[qrels[LABEL] >= rel]
    if per_query is not None:
        relevant = balance_qrels(relevant, per_query, rel=rel, seed=measure['seed'], qid=QID, docno=DOCNO, label=LABEL)
    if len(relevant) == 0:
        raise ValueError(f'{measure}: the qrels have no document with relevance >= {rel}'
                         f' (labels found: {sorted(qrels[LABEL].unique().tolist())[:10]})')
    queries = sorted(relevant[QID].unique())
    run = run[run[QID].isin(queries)]
    exclude = qrels[[QID, DOCNO]] if measure['urr'] else None
    retrieved = top_k(run, cutoff, qid=QID, docno=DOCNO, score=SCORE, exclude=exclude)
    n_empty = len(queries) - retrieved[QID].nunique()
    if n_empty:
        logger.info('%s: %d of %d queries with relevant documents have no %s document in the run',
                    measure, n_empty, len(queries), 'unjudged' if measure['urr'] else 'retrieved')
    return FDSets(relevant[[QID, DOCNO]].reset_index(drop=True), retrieved.reset_index(drop=True), queries)


class _Vectors:
    """Vectors of every docno needed by a group of measures sharing one encoder, looked up once."""

    def __init__(self, encoder, docnos: np.ndarray):
        self.encoder = encoder
        self.docnos = np.unique(np.asarray(docnos, dtype=str))
        if encoder is None:
            self.vecs, self.found = np.zeros((len(self.docnos), 0)), np.zeros(len(self.docnos), dtype=bool)
        else:
            self.vecs, self.found = lookup_vectors(encoder, self.docnos)
        self._index = pd.Index(self.docnos)

    def get(self, docnos: np.ndarray):
        pos = self._index.get_indexer(pd.Index(np.asarray(docnos, dtype=str)))
        if (pos < 0).any():  # every docno asked for was looked up when this object was made
            raise KeyError(f'docnos not looked up: {np.asarray(docnos)[pos < 0][:5].tolist()}')
        return self.vecs[pos], self.found[pos]


class _Side(NamedTuple):
    vecs: np.ndarray
    qids: np.ndarray
    dropped: np.ndarray  # distinct docnos without a vector


def _set_vectors(measure, side: str, frame: pd.DataFrame, vectors: Optional[_Vectors]) -> _Side:
    """One side's vectors, applying the measure's missing= policy, the query of each row, and the count dropped."""
    docnos = frame[DOCNO].to_numpy(dtype=str)
    if 'doc_vec' in frame.columns:
        has = frame['doc_vec'].notna().to_numpy()
        vecs = stack_vectors(frame['doc_vec'][has].tolist(), f"{measure}: the run's doc_vec") if has.any() else None
        found = has
    else:
        if vectors is None or vectors.encoder is None:
            raise ValueError(f'{measure}: no vectors for the {side} documents: the run has no doc_vec column and no encoder is set. '
                             'Pass FD(encoder=...) or call pyterrier_frechet.set_default_encoder(...)')
        allvecs, found = vectors.get(docnos)
        vecs = allvecs[found] if found.any() else None
    n_missing = int((~found).sum())
    dropped = np.unique(docnos[~found])
    if n_missing:
        example = dropped[:5].tolist()
        if measure['missing'] == 'error':
            raise ValueError(f'{measure}: {n_missing} of {len(docnos)} {side} document(s) have no vector, e.g. {example}. '
                             "Provide vectors for them, or pass missing='drop' to leave them out (with a counted log).")
        logger.warning('%s: left out %d of %d %s document(s) without a vector, e.g. %s', measure, n_missing, len(docnos), side, example)
    if vecs is None or len(vecs) < 2:
        raise ValueError(f'{measure}: the {side} set has {0 if vecs is None else len(vecs)} document(s) with a vector; '
                         'a Gaussian needs at least 2')
    return _Side(vecs, frame[QID].to_numpy(dtype=str)[found], dropped)


def _check_run_vectors(measure, sets: FDSets, vectors: Optional[_Vectors]) -> None:
    """A run carrying doc_vec must agree with the encoder the relevant side uses, wherever both have a document."""
    if vectors is None or vectors.encoder is None:
        return
    both = sets.retrieved[sets.retrieved[DOCNO].isin(sets.relevant[DOCNO]) & sets.retrieved['doc_vec'].notna()]
    both = both.drop_duplicates(DOCNO)
    if len(both) == 0:
        logger.info("%s: no retrieved document is relevant, so the run's doc_vec cannot be checked against the encoder", measure)
        return
    enc, found = vectors.get(both[DOCNO].to_numpy(dtype=str))
    if not found.any():
        return
    run_vecs = stack_vectors(both['doc_vec'].tolist(), f"{measure}: the run's doc_vec")
    if run_vecs.shape[1] != enc.shape[1]:
        raise ValueError(f"{measure}: the run's doc_vec are {run_vecs.shape[1]}-d but the encoder gives {enc.shape[1]}-d vectors")
    err = float(np.max(np.abs(run_vecs[found] - enc[found])))
    if err > DOC_VEC_TOLERANCE:
        raise ValueError(f"{measure}: the run's doc_vec differ from the encoder's vectors for the same documents "
                         f'(max |Δ| = {err:.3g}); the pipeline and the measure must use the same model')


def measure_encoder(measure):
    """The encoder ``measure`` uses: its own ``encoder=``, else the default one (None if neither)."""
    return measure['encoder'] if measure['encoder'] is not None else get_default_encoder()


def compute_vector_measures(measures, qrels: pd.DataFrame, run: pd.DataFrame,
                            universe: Optional[List[str]] = None) -> Dict[object, VectorOutcome]:
    """The outcome of each vector measure in ``measures`` for ``run``, looking up each encoder's vectors once.

    ``universe``: restricts per-query values to these queries (default: every query with a relevant document)."""
    has_doc_vec = 'doc_vec' in run.columns
    # ir_measures hands measures over as a set; a fixed order gives pt.Experiment stable columns.
    measures = sorted(measures, key=lambda m: (bool(m['urr']), m.positive_int('cutoff') or float('inf'), repr(m)))
    plans = []
    needed: Dict[tuple, list] = {}
    encoders: Dict[tuple, object] = {}
    for measure in measures:
        if not is_vector_measure(measure):
            raise ValueError(f'{measure} is not a vector measure')
        encoder = measure_encoder(measure)
        sets = fd_sets(measure, qrels, run)
        docnos = [sets.relevant[DOCNO].to_numpy(dtype=str)]
        if not has_doc_vec:
            docnos.append(sets.retrieved[DOCNO].to_numpy(dtype=str))
        key = encoder_key(encoder)
        needed.setdefault(key, []).extend(docnos)
        encoders[key] = encoder
        plans.append((measure, key, sets))
    vectors = {key: _Vectors(encoders[key], np.concatenate(docnos)) for key, docnos in needed.items()}
    result = {}
    for measure, key, sets in plans:
        vecs = vectors[key]
        if has_doc_vec:
            _check_run_vectors(measure, sets, vecs)
        rel = _set_vectors(measure, 'relevant', sets.relevant, vecs)
        ret = _set_vectors(measure, 'retrieved', sets.retrieved, vecs)
        if rel.vecs.shape[1] != ret.vecs.shape[1]:
            raise ValueError(f'{measure}: relevant vectors are {rel.vecs.shape[1]}-d but retrieved vectors {ret.vecs.shape[1]}-d')
        try:
            if not measure.is_set_valued():
                # per-query values (the jackknife) are over the queries the sets are made of: those with
                # relevant documents. Qrels queries without any add no unit (they used to inflate n: S6).
                units = sets.queries if universe is None else [q for q in sets.queries if q in set(universe)]
                value = measure.per_query_values(rel.vecs, rel.qids, ret.vecs, ret.qids, units)
            elif measure.needs_query_ids():
                value = measure.query_statistic(rel.vecs, rel.qids, ret.vecs, ret.qids)
            else:
                relevant_key = key + (hashlib.sha1('\n'.join(sets.relevant[DOCNO]).encode()).hexdigest(),)
                value = measure.statistic(rel.vecs, ret.vecs, relevant_key)
        except ValueError as ex:
            raise ValueError(f'{measure}: {ex}') from ex
        result[measure] = VectorOutcome(value, len(rel.vecs), len(ret.vecs), rel.dropped, ret.dropped)
    return result
