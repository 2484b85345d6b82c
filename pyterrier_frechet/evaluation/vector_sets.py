"""The two sets of a vector measure (FD and its companions) and their vectors.

:func:`fd_sets` selects, for one measure, the judged-relevant documents of the query set and the top-k (or the first
k unjudged) retrieved documents of each of its queries. :func:`select_vector_sets` looks every encoder's vectors
up once for all measures of a run and applies each measure's ``missing=`` policy on both sides — the one selection
path of ``evaluate``, the bootstrap, the paired tests and the report; :func:`compute_vector_measures` asks each
measure for its value on those sets and reports how many documents each side lost, so no dropped document goes
uncounted.
"""
import hashlib
import logging
import warnings
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Dict, List, NamedTuple, Optional, Tuple, Union

import numpy as np
import pandas as pd

from ..measures.base import VectorMeasure, column_label, is_vector_measure
from ..vectors.retrieval_models import warn_own_encoder
from ..vectors.sources import encoder_key, get_default_encoder, lookup_vectors, stack_vectors
from .frames import DOCNO, QID, id_form_hint
from .selection import Judgments, RankedRun

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
    rows: Optional[Dict[str, float]] = None  # per-query rows for ir_measures (:mod:`.experiment_rows`), when asked
    missing_relevant: int = 0  # relevant (query, document) rows of the measure's set left out for want of a vector
    missing_retrieved: int = 0  # the same for its retrieved rows (the set had ``retrieved + missing_retrieved``)


def _retrieved_rows(measure, judgments: Judgments, ranked: RankedRun, relevant_rows: np.ndarray,
                    run_qids: Optional[np.ndarray] = None):
    """Positions (in ``ranked``'s order) of ``measure``'s retrieved set: its top-k (or first k unjudged) documents of
    each query with a relevant document. Queries with relevant documents and no row at all in the run are warned
    about (:func:`warn_unretrieved_queries`); those left with no unjudged document (``urr``) are logged."""
    queries = judgments.query_mask(relevant_rows)
    selected = ranked.select(measure.positive_int('cutoff'), bool(measure['urr']), queries)
    in_run = np.zeros(len(queries), dtype=bool)
    in_run[ranked.qcode[ranked.qcode >= 0]] = True
    n_unrun = int((queries & ~in_run).sum())
    if n_unrun:
        hint = id_form_hint(run_qids, judgments.query_names[queries & ~in_run]) if run_qids is not None else ''
        warn_unretrieved_queries(measure, n_unrun, int(queries.sum()), hint)
    n_empty = int(queries.sum()) - len(np.unique(ranked.qcode[selected])) - n_unrun
    if n_empty:
        logger.info('%s: %d of %d queries with relevant documents have no %s document in the run',
                    measure, n_empty, int(queries.sum()), 'unjudged' if measure['urr'] else 'retrieved')
    return selected


def unretrieved_note(measure, n_unrun: int, n_queries: int, hint: str = '') -> str:
    if hint:  # the likely cause first
        return (f'{column_label(measure)}: {n_unrun} of {n_queries} queries with relevant documents have nothing '
                f'retrieved: {hint}')
    return (f'{column_label(measure)}: {n_unrun} of {n_queries} queries with relevant documents have nothing '
            'retrieved; their relevant documents are still in the relevant set, against the retrieved documents of '
            'the others — evaluate on the topics you ran (filter the qrels to them; pt.Experiment does unless '
            'filter_by_topics=False)')


#: the (measure, count, queries) already warned about by :func:`warn_unretrieved_queries` in this process
_UNRETRIEVED_WARNED: set = set()


def warn_unretrieved_queries(measure, n_unrun: int, n_queries: int, hint: str = '') -> None:
    """Warn that ``n_unrun`` of the ``n_queries`` queries with relevant documents have no row in the run (the value
    is unchanged: FD compares the relevant set with what was retrieved). Once per process for each measure and
    count, not once per run, per batch or per resample: Python's own once-per-location filter does not hold here,
    since pt.Experiment changes the warning filters (which forgets what was shown)."""
    key = (column_label(measure), n_unrun, n_queries, hint)
    if key not in _UNRETRIEVED_WARNED:
        _UNRETRIEVED_WARNED.add(key)
        warnings.warn(unretrieved_note(measure, n_unrun, n_queries, hint), UserWarning, stacklevel=1)


def fd_sets(measure, qrels: pd.DataFrame, run: pd.DataFrame) -> FDSets:
    """Select the relevant and retrieved documents that ``measure`` (a vector measure) compares.

    ``qrels`` and ``run`` use ir_measures column names (query_id, doc_id, relevance / score) with str ids. The
    relevant frame has (query_id, doc_id); the retrieved frame has the run's columns, in trec_eval order.
    """
    if hasattr(measure, 'balancing_draws') and len(measure.balancing_draws()) > 1:
        raise ValueError(f'{measure} is a mean over {len(measure.balancing_draws())} balancing draws, not one pair of '
                         'sets; select the sets of each draw (measure.balancing_draws())')
    judgments = Judgments(qrels)
    ranked = RankedRun(run, judgments)
    relevant_rows = judgments.relevant(measure)
    selected = _retrieved_rows(measure, judgments, ranked, relevant_rows, pd.unique(run[QID]))
    queries = judgments.query_names[judgments.query_mask(relevant_rows)].tolist()
    relevant = qrels[[QID, DOCNO]].iloc[relevant_rows].reset_index(drop=True)
    return FDSets(relevant, run.iloc[ranked.rows[selected]].reset_index(drop=True), queries)


class _Vectors:
    """Vectors of the documents (codes of one vocabulary) needed by the measures sharing one encoder, looked up once."""

    def __init__(self, encoder, vocabulary: np.ndarray, codes: np.ndarray):
        self.encoder = encoder
        # in order of first appearance: a run's retrieved set, when no document repeats, is then these rows in this
        # order and :meth:`get` returns them without a copy (1.5 GB of float32 at 100,000 queries × 10, d = 384)
        codes = pd.unique(np.asarray(codes, dtype=np.int64))
        self._row = np.full(len(vocabulary), -1, dtype=np.int64)
        self._row[codes] = np.arange(len(codes))
        if encoder is None:
            self.vecs, self.found = np.zeros((len(codes), 0)), np.zeros(len(codes), dtype=bool)
        else:
            # in the encoder's precision (float32 stays float32): statistics promote to float64 block by block
            self.vecs, self.found = lookup_vectors(encoder, vocabulary[codes], dtype=None)

    def get(self, codes: np.ndarray):
        pos = self._row[codes]
        if (pos < 0).any():  # every code asked for was looked up when this object was made
            raise KeyError(f'document codes not looked up: {np.asarray(codes)[pos < 0][:5].tolist()}')
        if len(pos) == len(self.vecs) and (pos == np.arange(len(pos))).all():
            return self.vecs, self.found  # every row, in order: no copy
        return self.vecs[pos], self.found[pos]


class _RunVectors:
    """The run's own ``doc_vec`` of the rows some measure selected (positions in a :class:`RankedRun`'s order),
    stacked once."""

    def __init__(self, run: pd.DataFrame, ranked: RankedRun, positions: np.ndarray):
        column = run['doc_vec'].iloc[ranked.rows[positions]]
        self.has = column.notna().to_numpy()
        stacked = stack_vectors(column[self.has].tolist(), "the run's doc_vec") if self.has.any() else np.zeros((0, 0))
        self.vecs = np.full((len(positions), stacked.shape[1]), np.nan)
        self.vecs[self.has] = stacked
        self._row = np.full(len(ranked.rows), -1, dtype=np.int64)
        self._row[positions] = np.arange(len(positions))

    def get(self, positions: np.ndarray):
        row = self._row[positions]
        return self.vecs[row], self.has[row]


class _Side(NamedTuple):
    vecs: np.ndarray  # one row per document of the side that has a vector, in the encoder's precision (float32 or float64)
    qids: np.ndarray  # the query of each row (its id)
    dropped: np.ndarray  # distinct docnos without a vector
    qcodes: Optional[np.ndarray] = None  # the query of each row (its code in the Judgments: sorted query order)
    n_missing: int = 0  # rows of the side left out for want of a vector (missing='drop')


class VectorSets(NamedTuple):
    """One vector measure's two sets for one run, as every entry point computes with them (``evaluate``, the
    bootstrap, the paired tests): the vectors after the measure's ``missing=`` policy, the query of each row, and the
    distinct docnos left out on each side."""
    relevant: _Side
    retrieved: _Side
    relevant_key: tuple  # what the relevant set is (encoder identity and docnos): keys the evaluation's memos
    queries: List[str]  # the queries with a relevant document (the units of a leave-one-query-out)

    def relevant_identity(self) -> tuple:
        """What the relevant set is, to key the evaluation's memos (:meth:`~.selection.Judgments.once`): the
        encoder's content identity and the docnos (``relevant_key``), a digest of each vector's query, and — for an
        encoder without a content identity — a digest of the vectors themselves (the rule of :func:`relevant_input`)."""
        digest = None if _remembers(self.relevant_key[:-1]) else array_digest(self.relevant.vecs)
        # and the query of every relevant vector (the docnos alone do not say which query judged each)
        return self.relevant_key + (digest, array_digest(np.asarray(self.relevant.qcodes)))


def _set_vectors(measure, side: str, vecs: np.ndarray, found: np.ndarray, codes: np.ndarray, qcodes: np.ndarray,
                 vocabulary: np.ndarray, query_names: np.ndarray, drops: Dict[tuple, list]) -> _Side:
    """One side's vectors (``vecs``: a row per document of the side that has a vector, ``found`` which those are),
    applying the measure's missing= policy, with the query of each row and the distinct docnos dropped. A drop is
    recorded in ``drops`` (what was left out → the measures that left it out), logged once by the caller for every
    measure that shares the selection (FD and its terms, FD@10 and SpreadRatio@10, ...)."""
    n_missing = int((~found).sum())
    dropped = np.unique(vocabulary[codes[~found]]) if n_missing else np.zeros(0, dtype=str)
    if n_missing:
        example = dropped[:5].tolist()
        if measure['missing'] == 'error':
            hint = getattr(measure_encoder(measure), 'missing_hint', None)
            hint = hint(dropped[:1000].tolist()) if callable(hint) else ''
            raise ValueError(f'{measure}: {n_missing} of {len(codes)} {side} document(s) have no vector, e.g. {example}'
                             f"{hint}. Provide vectors for them, or pass missing='drop' to leave them out (with a counted log).")
        drops.setdefault((side, n_missing, len(codes), tuple(example)), []).append(str(measure))
    if len(vecs) < 2:
        raise ValueError(f'{measure}: the {side} set has {len(vecs)} document(s) with a vector; a Gaussian needs at least 2')
    return _Side(vecs, query_names[qcodes[found]], dropped, qcodes[found], n_missing)


def _with_vector(vecs: np.ndarray, found: np.ndarray) -> np.ndarray:
    """The rows of the documents with a vector, in their own floating-point precision (float32 vectors are not
    copied to float64 here: a float64 copy of 100,000 queries × 10 retrieved at d = 384 is 3 GB; every statistic
    promotes them to float64 — exactly — where it computes, :func:`float64_vectors`)."""
    out = vecs if found.all() else vecs[found]
    return out if np.issubdtype(out.dtype, np.floating) else out.astype(np.float64)


def float64_vectors(vecs: np.ndarray) -> np.ndarray:
    """``vecs`` as float64 (no copy when they are): what a measure's ``statistic`` receives unless it declares
    ``SOURCE_PRECISION`` (it promotes chunks itself)."""
    return np.asarray(vecs, dtype=np.float64)


def _remembers(key: tuple) -> bool:
    """Whether the relevant vectors of an encoder with identity ``key`` may be remembered (a content identity of
    vectors that cannot change under it: :func:`~pyterrier_frechet.vectors.identity.encoder_identity`)."""
    from ..vectors.identity import is_fixed
    return is_fixed(key)


def _relevant_vectors(judgments: Judgments, encoder, key: tuple, docnos: np.ndarray) -> Tuple[np.ndarray, np.ndarray]:
    """(the vectors of ``docnos`` that have one, in order; the found mask) from ``encoder``, remembered by the
    evaluation (``judgments``) under ``key`` (the encoder's content identity and the docnos' digest): every run
    evaluated on the same qrels needs the same ones."""
    def lookup():
        vecs, found = lookup_vectors(encoder, docnos, dtype=None)  # in the encoder's precision (float32 stays)
        hit = (np.ascontiguousarray(_with_vector(vecs, found)), found)
        for array in hit:
            array.flags.writeable = False  # shared by the runs of the evaluation
        return hit
    return judgments.once(('relevant vectors',) + key, lookup)


def array_digest(arr: np.ndarray) -> bytes:
    """A digest of the array's dtype, shape and bytes: equal only for the same values (a sum is equal for many)."""
    arr = np.ascontiguousarray(arr)
    h = hashlib.blake2b(f'{arr.dtype.str}{arr.shape}'.encode(), digest_size=16)
    h.update(memoryview(arr).cast('B'))
    return h.digest()


def relevant_input(measure, judgments: Judgments, sets: 'VectorSets'):
    """What ``measure.statistic`` takes as its relevant side: the vectors, or what the measure's
    :meth:`~..measures.base.VectorMeasure.reduce_relevant` makes of them, computed once per evaluation
    (``judgments``) and relevant set. The relevant vectors of an encoder without a content identity are looked up
    again for each run, so their reduction is reused only while a digest of their bytes matches."""
    if type(measure).reduce_relevant is VectorMeasure.reduce_relevant:
        return sets.relevant.vecs
    vecs = sets.relevant.vecs
    digest = None if _remembers(sets.relevant_key[:-1]) else array_digest(vecs)
    key = ('reduced', type(measure), sets.relevant_key, digest)
    return judgments.once(key, lambda: measure.reduce_relevant(vecs))


def _check_run_vectors(measure, relevant_codes: np.ndarray, selected: np.ndarray, ranked: RankedRun,
                       run_vectors: _RunVectors, vectors: Optional[_Vectors]) -> None:
    """A run carrying doc_vec must agree with the encoder the relevant side uses, wherever both have a document."""
    if vectors is None or vectors.encoder is None:
        return
    codes = ranked.code[selected]
    both = np.isin(codes, relevant_codes) & run_vectors.get(selected)[1]
    if not both.any():
        logger.info("%s: no retrieved document is relevant, so the run's doc_vec cannot be checked against the encoder", measure)
        return
    uniq, first = np.unique(codes[both], return_index=True)
    enc, found = vectors.get(uniq)
    if not found.any():
        return
    run_vecs = run_vectors.get(selected[both][first])[0]
    if run_vecs.shape[1] != enc.shape[1]:
        raise ValueError(f"{measure}: the run's doc_vec are {run_vecs.shape[1]}-d but the encoder gives {enc.shape[1]}-d vectors")
    err = float(np.max(np.abs(run_vecs[found] - enc[found])))
    if err > DOC_VEC_TOLERANCE:
        raise ValueError(f"{measure}: the run's doc_vec differ from the encoder's vectors for the same documents "
                         f'(max |Δ| = {err:.3g}); the pipeline and the measure must use the same model')


def measure_encoder(measure):
    """The encoder ``measure`` uses: its own ``encoder=``, else the default one (None if neither)."""
    return measure['encoder'] if measure['encoder'] is not None else get_default_encoder()


def compute_vector_measures(measures, judgments: Judgments, run: pd.DataFrame,
                            universe: Optional[List[str]] = None, rows: bool = False) -> Dict[object, VectorOutcome]:
    """The outcome of each vector measure in ``measures`` for ``run`` (a prepared frame), on the qrels coded in
    ``judgments``: the run is ranked once, each measure's two sets are masks over it, and each encoder's vectors are
    looked up once for all measures. A measure averaged over qrels balancing draws (``per_query=N, draws=D``) is
    the mean of its D draws' outcomes (:meth:`~..measures.base.SetMeasure.balancing_draws`).

    ``universe``: restricts per-query values to these queries (default: every query with a relevant document).
    ``rows``: also form each set-valued measure's per-query rows for ir_measures (:mod:`.experiment_rows`; those of
    a measure averaged over draws are the mean of its draws' rows, the rows of the averaged statistic)."""
    parts = {m: m.balancing_draws() if hasattr(m, 'balancing_draws') else [m] for m in measures}
    if all(len(p) == 1 for p in parts.values()):
        return _compute_vector_measures(measures, judgments, run, universe, rows)
    flat = list(dict.fromkeys(x for p in parts.values() for x in p))
    outcomes = _compute_vector_measures(flat, judgments, run, universe, rows)
    result = {}
    for measure, draws in parts.items():
        got = [outcomes[x] for x in draws]
        if len(got) == 1:
            result[measure] = got[0]
            continue
        if any(isinstance(o.value, dict) for o in got):
            raise ValueError(f'{measure}: draws= averages set values; it cannot be combined with jackknife=True')
        result[measure] = VectorOutcome(float(np.mean([o.value for o in got])), int(round(np.mean([o.relevant for o in got]))),
                                        got[0].retrieved, np.unique(np.concatenate([o.dropped_relevant for o in got])),
                                        got[0].dropped_retrieved, _mean_rows([o.rows for o in got]),
                                        int(round(np.mean([o.missing_relevant for o in got]))), got[0].missing_retrieved)
    return result


def select_vector_sets(measures, judgments: Judgments, run: pd.DataFrame) -> Dict[object, VectorSets]:
    """The two sets of each vector measure in ``measures`` for ``run`` (a prepared frame), on the qrels coded in
    ``judgments``, with their vectors — the one selection and look-up path of every entry point: the run is ranked
    once, each measure's two sets are masks over it, each encoder's vectors are looked up once for all measures,
    and each measure's ``missing=`` policy is applied on both sides (ValueError, or a counted drop). In the order the
    provider computes them."""
    has_doc_vec = 'doc_vec' in run.columns
    # ir_measures hands measures over as a set; a fixed order gives pt.Experiment stable columns.
    measures = sorted(measures, key=lambda m: (bool(m['urr']), m.positive_int('cutoff') or float('inf'), repr(m)))
    ranked = RankedRun(run, judgments)
    run_qids = pd.unique(run[QID])
    plans = []
    needed: Dict[tuple, list] = {}
    encoders: Dict[tuple, object] = {}
    for measure in measures:
        if not is_vector_measure(measure):
            raise ValueError(f'{measure} is not a vector measure')
        encoder = measure_encoder(measure)
        relevant_rows = judgments.relevant(measure)
        selected = _retrieved_rows(measure, judgments, ranked, relevant_rows, run_qids)
        key = encoder_key(encoder)
        if key not in encoders:  # once per encoder: is its model one a compared pipeline retrieves with? say so once
            warn_own_encoder(str(measure), encoder)
        rel_codes, ret_codes = judgments.dcode[relevant_rows], ranked.code[selected]
        # what the relevant set *is*: the encoder and its docnos in order (keys the memos of its vectors and reduction)
        relevant_key = key + (hashlib.sha1('\n'.join(ranked.vocabulary[rel_codes]).encode()).hexdigest(),)
        codes = needed.setdefault(key, [])
        if not _remembers(key):
            codes.append(rel_codes)
        if not has_doc_vec:
            codes.append(ret_codes)
        elif _remembers(key):  # the run's doc_vec are checked against the encoder's vectors of relevant documents
            codes.append(ret_codes[np.isin(ret_codes, rel_codes)])
        encoders[key] = encoder
        plans.append((measure, key, relevant_rows, selected, relevant_key))
    vectors = {key: _Vectors(encoders[key], ranked.vocabulary, np.concatenate(codes)) for key, codes in needed.items()}
    run_vectors = _RunVectors(run, ranked, np.unique(np.concatenate([p[3] for p in plans]))) if has_doc_vec else None
    names = judgments.query_names
    result = {}
    drops: Dict[tuple, list] = {}
    relevant: Dict[tuple, Tuple[np.ndarray, np.ndarray]] = {}
    for measure, key, relevant_rows, selected, relevant_key in plans:
        vecs = vectors[key]
        rel_codes, ret_codes = judgments.dcode[relevant_rows], ranked.code[selected]
        if has_doc_vec:
            _check_run_vectors(measure, rel_codes, selected, ranked, run_vectors, vecs)
            if vecs.encoder is None:
                raise ValueError(f'{measure}: no vectors for the relevant documents: no encoder is set. Pass FD(encoder=...) '
                                 'or call pyterrier_frechet.set_default_encoder(...)')
        elif vecs.encoder is None:
            raise ValueError(f'{measure}: no vectors for the relevant documents: the run has no doc_vec column and no '
                             'encoder is set. Pass FD(encoder=...) or call pyterrier_frechet.set_default_encoder(...)')
        if relevant_key not in relevant:  # measures with the same relevant set (rel, per_query, encoder) share it
            if _remembers(key):
                relevant[relevant_key] = _relevant_vectors(judgments, vecs.encoder, relevant_key, ranked.vocabulary[rel_codes])
            else:
                all_vecs, found = vecs.get(rel_codes)
                relevant[relevant_key] = (_with_vector(all_vecs, found), found)
        rel_vecs, rel_found = relevant[relevant_key]
        rel = _set_vectors(measure, 'relevant', rel_vecs, rel_found, rel_codes, judgments.qcode[relevant_rows],
                           ranked.vocabulary, names, drops)
        ret_vecs, ret_found = run_vectors.get(selected) if has_doc_vec else vecs.get(ret_codes)
        ret = _set_vectors(measure, 'retrieved', _with_vector(ret_vecs, ret_found), ret_found, ret_codes,
                           ranked.qcode[selected], ranked.vocabulary, names, drops)
        if rel.vecs.shape[1] != ret.vecs.shape[1]:
            raise ValueError(f'{measure}: relevant vectors are {rel.vecs.shape[1]}-d but retrieved vectors {ret.vecs.shape[1]}-d')
        result[measure] = VectorSets(rel, ret, relevant_key, names[judgments.query_mask(relevant_rows)].tolist())
    summary = _DROP_SUMMARY.get()
    for (side, n_missing, n, example), who in drops.items():  # once per selection, naming every measure it serves
        if summary is not None:  # a quiet caller says it once (one_drop_summary); each selection at DEBUG
            summary.append((side, n_missing))
        logger.log(logging.DEBUG if summary is not None else logging.WARNING,
                   '%s: left out %d of %d %s document(s) without a vector, e.g. %s', ', '.join(who), n_missing, n,
                   side, list(example))
    return result


#: The selections' drops, collected while a quiet caller runs (:func:`one_drop_summary`); None where each is logged.
_DROP_SUMMARY: ContextVar[Optional[list]] = ContextVar('pyterrier_frechet_drop_summary', default=None)


@contextmanager
def one_drop_summary(quiet: bool = True, where: str = 'the table'):
    """While ``quiet``, the documents each vector selection leaves out for want of a vector (``missing='drop'``)
    are logged at DEBUG, and one WARNING line sums them up at the end ('... left out in 48 selections ... counts per
    cell in ``where``'): what ``verbose=False`` / ``--quiet`` print (issue 63). Not quiet: one line per selection."""
    if not quiet:
        yield
        return
    collected: list = []
    token = _DROP_SUMMARY.set(collected)
    try:
        yield
    finally:
        _DROP_SUMMARY.reset(token)
    if collected:
        worst = {side: max((missing for s, missing in collected if s == side), default=0)
                 for side in ('relevant', 'retrieved')}
        logger.warning('documents without a vector were left out (missing=\'drop\'): at most %d relevant and %d '
                       'retrieved from one set; the counts per cell are in %s', worst['relevant'], worst['retrieved'],
                       where)


def _mean_rows(rows: List[Optional[Dict[str, float]]]) -> Optional[Dict[str, float]]:
    if any(r is None for r in rows) or len({tuple(r) for r in rows}) != 1:
        return None
    return {q: float(np.mean([r[q] for r in rows])) for q in rows[0]}


def _compute_vector_measures(measures, judgments: Judgments, run: pd.DataFrame,
                             universe: Optional[List[str]] = None, rows: bool = False) -> Dict[object, VectorOutcome]:
    from .experiment_rows import experiment_rows
    result = {}
    for measure, sets in select_vector_sets(measures, judgments, run).items():
        rel, ret = sets.relevant, sets.retrieved
        # the measures' contract is n×d float64; a measure whose statistic() promotes chunks itself (plain FD) gets
        # the vectors in their own precision
        if not (measure.is_set_valued() and not measure.needs_query_ids() and getattr(measure, 'SOURCE_PRECISION', False)):
            rel = rel._replace(vecs=float64_vectors(rel.vecs))
            ret = ret._replace(vecs=float64_vectors(ret.vecs))
        try:
            if not measure.is_set_valued():
                # per-query values (the jackknife) are over the queries the sets are made of: those with
                # relevant documents. Qrels queries without any add no unit (counting them would inflate n).
                units = list(sets.queries)
                if universe is not None:
                    allowed = set(universe)
                    units = [q for q in units if q in allowed]
                value = measure.per_query_values(rel.vecs, rel.qids, ret.vecs, ret.qids, units)
            elif measure.needs_query_ids():
                value = measure.query_statistic(rel.vecs, rel.qids, ret.vecs, ret.qids)
            else:
                value = measure.statistic(relevant_input(measure, judgments, sets), ret.vecs)
        except ValueError as ex:
            raise ValueError(f'{measure}: {ex}') from ex
        per_query = experiment_rows(measure, sets, value, judgments) if rows and measure.has_rows() else None
        result[measure] = VectorOutcome(value, len(rel.vecs), len(ret.vecs), rel.dropped, ret.dropped, per_query,
                                        rel.n_missing, ret.n_missing)
    return result
