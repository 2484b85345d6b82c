"""The ir_measures provider that computes :data:`~pyterrier_frechet.FD`.

Registered into ``ir_measures.DefaultPipeline`` when :mod:`pyterrier_frechet` is imported, so
``ir_measures.calc_aggregate``, ``ir_measures.iter_calc``, ``ir_measures.evaluator`` and
``pt.Experiment`` all compute FD beside the classical measures.
"""
import hashlib
import logging
from collections import OrderedDict
from typing import Dict, Iterator, List, NamedTuple, Optional, Tuple

import ir_measures
import numpy as np
import pandas as pd
from ir_measures import Metric, providers
from ir_measures.providers.base import Any
from ir_measures.util import QrelsConverter, RunConverter

from .extrapolation import fd_infinity
from .frechet import ReducedSet, frechet_distance, frechet_distance_reduced, reduce_set
from .kid import kernel_distance
from .manifold import knn_precision_recall
from .measure import VECTOR_MEASURES, _FD, _FDInf, _KID, _KNNPrecision, _KNNRecall
from .qrels import balance_qrels
from .ranking import check_duplicates, top_k
from .vectors import get_default_encoder, lookup_vectors, stack_vectors

logger = logging.getLogger(__name__)

QID, DOCNO, LABEL, SCORE = 'query_id', 'doc_id', 'relevance', 'score'

# Largest |Δ| tolerated between a run's doc_vec and the encoder's vector for the same document
# (float32 encodings of one text on two machines agree to ~1e-6 per coordinate).
DOC_VEC_TOLERANCE = 1e-4


class FDSets(NamedTuple):
    """The two document sets of one FD evaluation, as (query_id, doc_id[, doc_vec]) frames."""
    relevant: pd.DataFrame
    retrieved: pd.DataFrame
    queries: List[str]


def _positive_int(measure, name: str) -> Optional[int]:
    value = measure[name]
    if value is ir_measures.measures.base._NOT_PROVIDED or value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        raise ValueError(f'{measure}: {name} must be a positive integer, got {value!r}')
    return int(value)


def fd_sets(measure, qrels: pd.DataFrame, run: pd.DataFrame) -> FDSets:
    """Select the relevant and retrieved documents that ``measure`` (an FD measure) compares.

    ``qrels`` and ``run`` use ir_measures column names (query_id, doc_id, relevance / score) with str ids.
    """
    cutoff = _positive_int(measure, 'cutoff')
    per_query = _positive_int(measure, 'per_query')
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
    """Vectors of every docno needed by a group of FD measures sharing one encoder, looked up once."""

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


def _set_vectors(measure, side: str, frame: pd.DataFrame, vectors: Optional[_Vectors]):
    """The matrix of one side's vectors, applying the measure's missing= policy, and the query of each row."""
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
    if n_missing:
        example = sorted(set(docnos[~found].tolist()))[:5]
        if measure['missing'] == 'error':
            raise ValueError(f'{measure}: {n_missing} of {len(docnos)} {side} document(s) have no vector, e.g. {example}. '
                             "Provide vectors for them, or pass missing='drop' to leave them out (with a logged count).")
        logger.warning('%s: left out %d of %d %s document(s) without a vector, e.g. %s', measure, n_missing, len(docnos), side, example)
    if vecs is None or len(vecs) < 2:
        raise ValueError(f'{measure}: the {side} set has {0 if vecs is None else len(vecs)} document(s) with a vector; '
                         'a Gaussian needs at least 2')
    return vecs, frame[QID].to_numpy(dtype=str)[found]


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


_REDUCED: 'OrderedDict[tuple, Tuple[float, ReducedSet]]' = OrderedDict()
_REDUCED_MAX = 16  # relevant sets remembered (a pt.Experiment over many systems reuses a handful)


def _reduced_relevant(vectors: np.ndarray, key: tuple) -> ReducedSet:
    """:func:`reduce_set` of ``vectors``, remembered under ``key`` (the encoder and the relevant docnos), least
    recently used first out. A remembered entry is served only if the vectors' shape and sum match too."""
    arr = np.ascontiguousarray(vectors)
    key = key + (arr.shape,)
    checksum = float(arr.sum(dtype=np.float64))
    hit = _REDUCED.get(key)
    if hit is not None and hit[0] == checksum:
        _REDUCED.move_to_end(key)
        return hit[1]
    reduced = reduce_set(arr)
    _REDUCED[key] = (checksum, reduced)
    _REDUCED.move_to_end(key)
    if len(_REDUCED) > _REDUCED_MAX:
        _REDUCED.popitem(last=False)
    return reduced


def set_statistic(measure, relevant: np.ndarray, retrieved: np.ndarray, relevant_key: Optional[tuple] = None) -> float:
    """The value of a vector measure (FD, FDInf, KID, KNNPrecision, KNNRecall) for the two sets of vectors.
    ``relevant_key`` names the relevant set (encoder and docnos) so FD can reuse its reduction across runs."""
    name = measure.NAME
    if name == _FD.NAME:
        # the relevant set is the same for every run evaluated on the same qrels: reduce it once
        rel = reduce_set(relevant) if relevant_key is None else _reduced_relevant(relevant, relevant_key)
        return frechet_distance_reduced(rel, reduce_set(retrieved))
    if name == _FDInf.NAME:
        return fd_infinity(relevant, retrieved, points=measure['points'], min_fraction=measure['min_fraction'],
                           seed=measure['seed']).value
    if name == _KID.NAME:
        return kernel_distance(relevant, retrieved, degree=measure['degree'])
    if name in (_KNNPrecision.NAME, _KNNRecall.NAME):
        pr = knn_precision_recall(relevant, retrieved, k=measure['k'])
        return pr.precision if name == _KNNPrecision.NAME else pr.recall
    raise ValueError(f'unsupported measure {measure}')


def compute_fd(measures, qrels: pd.DataFrame, run: pd.DataFrame) -> Dict[object, float]:
    """The value of each vector measure in ``measures`` (FD and its companions) for ``run``, looking up each
    encoder's vectors once."""
    has_doc_vec = 'doc_vec' in run.columns
    # ir_measures hands measures over as a set; a fixed order gives pt.Experiment stable columns.
    measures = sorted(measures, key=lambda m: (bool(m['urr']), _positive_int(m, 'cutoff') or float('inf'), repr(m)))
    plans = []
    needed: Dict[int, list] = {}
    encoders: Dict[int, object] = {}
    for measure in measures:
        encoder = measure['encoder'] if measure['encoder'] is not None else get_default_encoder()
        sets = fd_sets(measure, qrels, run)
        docnos = [sets.relevant[DOCNO].to_numpy(dtype=str)]
        if not has_doc_vec:
            docnos.append(sets.retrieved[DOCNO].to_numpy(dtype=str))
        needed.setdefault(id(encoder), []).extend(docnos)
        encoders[id(encoder)] = encoder
        plans.append((measure, encoder, sets))
    vectors = {key: _Vectors(encoders[key], np.concatenate(docnos)) for key, docnos in needed.items()}
    result = {}
    for measure, encoder, sets in plans:
        vecs = vectors[id(encoder)]
        if has_doc_vec:
            _check_run_vectors(measure, sets, vecs)
        rel_vecs, rel_qids = _set_vectors(measure, 'relevant', sets.relevant, vecs)
        ret_vecs, ret_qids = _set_vectors(measure, 'retrieved', sets.retrieved, vecs)
        if rel_vecs.shape[1] != ret_vecs.shape[1]:
            raise ValueError(f'{measure}: relevant vectors are {rel_vecs.shape[1]}-d but retrieved vectors {ret_vecs.shape[1]}-d')
        try:
            if measure.NAME == _FD.NAME and measure['jackknife']:
                result[measure] = jackknife_pseudo_values(rel_vecs, rel_qids, ret_vecs, ret_qids, sorted(qrels[QID].unique()))
                continue
            key = (id(encoder), hashlib.sha1('\n'.join(sets.relevant[DOCNO].astype(str)).encode()).hexdigest())
            result[measure] = set_statistic(measure, rel_vecs, ret_vecs, key)
        except ValueError as ex:
            raise ValueError(f'{measure}: {ex}') from ex
    return result


def _as_str_ids(frame: pd.DataFrame) -> pd.DataFrame:
    return frame.assign(**{QID: frame[QID].astype(str), DOCNO: frame[DOCNO].astype(str)})


def prepare_qrels(qrels, what: str) -> pd.DataFrame:
    """Qrels in any form ir_measures reads, as a checked frame with str ids and numeric labels."""
    qrels = QrelsConverter(qrels).as_pd_dataframe()
    if len(qrels) == 0:
        raise ValueError(f'{what}: the qrels are empty')
    qrels = _as_str_ids(qrels[[QID, DOCNO, LABEL]])
    check_duplicates(qrels, QID, DOCNO, 'the qrels')
    return qrels.assign(**{LABEL: pd.to_numeric(qrels[LABEL])})


def prepare_run(run, what: str) -> pd.DataFrame:
    """A run in any form ir_measures reads, as a checked frame with str ids."""
    run = RunConverter(run).as_pd_dataframe()
    missing = [c for c in (QID, DOCNO, SCORE) if c not in run.columns]
    if missing:
        raise ValueError(f'{what}: the run lacks column(s) {missing} (found {list(run.columns)})')
    run = _as_str_ids(run)
    check_duplicates(run, QID, DOCNO, 'the run')
    return run


class SetEvaluator(providers.Evaluator):
    """Evaluator of set measures: ``compute(measures, qrels, run)`` gives one value per measure, which is
    reported for every query of the qrels, so that the mean over queries (what pt.Experiment shows) is
    exactly that number — or a {query: value} dict, reported as it is."""
    WHAT = 'FD'

    def __init__(self, measures, qrels):
        qrels = prepare_qrels(qrels, self.WHAT)
        super().__init__(measures, sorted(qrels[QID].unique()))
        self.qrels = qrels

    def compute(self, measures, qrels: pd.DataFrame, run: pd.DataFrame) -> Dict[object, float]:
        """The values of ``measures`` for ``run``; each subclass computes its own measures."""
        raise NotImplementedError(f'{type(self).__name__} does not define compute()')

    def _iter_calc(self, run) -> Iterator[Metric]:
        values = self.compute(self.measures, self.qrels, prepare_run(run, self.WHAT))
        for measure, value in values.items():
            if isinstance(value, dict):  # per-query values (FD's jackknife pseudo-values)
                for qid, v in value.items():
                    yield Metric(query_id=qid, measure=measure, value=v)
                continue
            for qid in self.qrel_qids:
                yield Metric(query_id=qid, measure=measure, value=value)


class FrechetEvaluator(SetEvaluator):
    WHAT = 'FD'

    def compute(self, measures, qrels, run):
        return compute_fd(measures, qrels, run)


class SetProvider(providers.Provider):
    """An ir_measures provider of set measures: checks the measures it is given, evaluates them with
    ``EVALUATOR`` and registers itself (:meth:`install`) ahead of ir_measures' own providers."""
    MEASURE_NAMES: tuple = ()
    EVALUATOR = SetEvaluator

    def _evaluator(self, measures, qrels) -> providers.Evaluator:
        for measure in measures:
            if measure.NAME not in self.MEASURE_NAMES:
                raise ValueError(f'unsupported measure {measure}')
            measure.validate_params()
        return self.EVALUATOR(list(measures), qrels)

    def run_inputs(self, measures):
        return [QID, DOCNO, SCORE]

    @classmethod
    def install(cls) -> 'SetProvider':
        """Register the provider with ir_measures and put it first in the default pipeline (idempotent)."""
        if cls.NAME in providers.registry:
            provider = providers.registry[cls.NAME]
        else:
            provider = providers.register(cls())
        if provider not in ir_measures.DefaultPipeline.providers:
            ir_measures.DefaultPipeline.providers.insert(0, provider)
        return provider


class FrechetProvider(SetProvider):
    """Computes FD and the other measures over its two sets of embeddings (pyterrier_frechet)."""
    NAME = 'pyterrier_frechet'
    _SHARED = dict(cutoff=Any(), rel=Any(), urr=Any(), per_query=Any(), seed=Any(), encoder=Any(), missing=Any())
    SUPPORTED_MEASURES = [
        _FD(**_SHARED, jackknife=Any()),
        _FDInf(**_SHARED, points=Any(), min_fraction=Any()),
        _KID(**_SHARED, degree=Any()),
        _KNNPrecision(**_SHARED, k=Any()),
        _KNNRecall(**_SHARED, k=Any()),
    ]
    MEASURE_NAMES = tuple(VECTOR_MEASURES)
    EVALUATOR = FrechetEvaluator


def register() -> FrechetProvider:
    """Register the provider with ir_measures (idempotent); returns it."""
    return FrechetProvider.install()
