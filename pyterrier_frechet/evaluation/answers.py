"""The two sets of an answer measure (:mod:`pyterrier_frechet.measures.answers`) and their vectors.

**Answers**: a RAG pipeline's frame, as ``pt.Experiment`` hands it to ir_measures (``qid`` renamed ``query_id``),
with a ``qanswer`` column: one answer per row (pyterrier-rag's convention), several rows per query, or a list of
answers per row. A frame that has both ``docno`` and ``qanswer`` (a ranking carrying its query's answer on every row)
is scored by both kinds of measure: FD reads its ranking, an answer measure its distinct (query, answer) pairs. Every answer must be a non-empty string: a missing ``qanswer`` column, a NaN/None answer, an empty
or white-space-only answer, and a ``qanswer`` column holding the judged docnos of the qrels (a ranking's ids pasted in
place of text) are refused with a ValueError naming the queries.

**References**: the judged-relevant documents of the query set (``ref='relevant'``, selected as FD selects them and
looked up in the measure's ``encoder``), or the gold answers of the qrels' ``gold_answer`` column (``ref='gold'``).

**The other kind of pipeline**: in one ``pt.Experiment`` beside retrieval pipelines, an answer measure receives
rankings, and FD receives answer frames. Neither can be scored, and neither should stop the table: an answer measure
given a ranking (``docno`` and no ``qanswer``) reports NaN for every query with a :class:`UserWarning` naming the
measure, and FD-family measures given an answer frame (``qanswer`` and no ``docno``) do the same
(:func:`warn_other_kind`). Called directly (:func:`answer_sets`), a ranking is an error.

**Embedding**: an answer's docno is ``qanswer:`` + the sha256 fingerprint of its text (:func:`fingerprint`), so the
``text_encoder`` (an :class:`~pyterrier_frechet.Embedder`) caches it under the same model identity as documents and
embeds a text once per model, ever.
"""
import logging
import warnings
from typing import Dict, Iterator, List, NamedTuple, Optional, Tuple

import numpy as np
import pandas as pd
import pyterrier as pt
from ir_measures import Metric, providers
from ir_measures.util import QrelsConverter, RunConverter

from ..measures.base import is_answer_measure
from ..vectors.cache import text_sha
from ..vectors.sources import encoder_key, get_default_encoder, lookup_vectors, stack_vectors
from .frames import DOCNO, LABEL, QID, prepare_qrels
from .selection import Judgments

logger = logging.getLogger(__name__)

QANSWER = 'qanswer'
GOLD = 'gold_answer'
#: The docno prefix of an embedded answer (``qanswer:<32 hex digits>``).
ANSWER_PREFIX = 'qanswer:'


class AnswerSets(NamedTuple):
    """One answer measure's two sets: the vectors and the query of each row."""
    reference: np.ndarray
    ref_qids: np.ndarray
    answers: np.ndarray
    ans_qids: np.ndarray


def fingerprint(text: str) -> str:
    """The docno an answer text is embedded and cached under: ``qanswer:`` + 32 hex digits of its sha256."""
    return ANSWER_PREFIX + text_sha(text)


def _columns(frame) -> List[str]:
    return [str(c) for c in getattr(frame, 'columns', [])]


def is_ranking(run) -> bool:
    """A ranking: a frame with ``doc_id`` (or ``docno``) and no ``qanswer``, or any other form ir_measures reads
    as a run (dict of dicts, namedtuples)."""
    if isinstance(run, pd.DataFrame):
        cols = set(_columns(run))
        return QANSWER not in cols and bool(cols & {DOCNO, 'docno'})
    return True


def is_answer_frame(run) -> bool:
    """An answer frame: a frame with ``qanswer`` and no ``doc_id``/``docno`` (what FD cannot score)."""
    if not isinstance(run, pd.DataFrame):
        return False
    cols = set(_columns(run))
    return QANSWER in cols and not cols & {DOCNO, 'docno'}


def warn_other_kind(measures, run_kind: str, qids) -> Iterator[Metric]:
    """NaN for every (measure, query) with one warning naming the measures: how a table with both retrieval and
    answer pipelines shows a measure of one kind for a pipeline of the other (``run_kind``: 'ranking' or 'answers')."""
    names = ', '.join(sorted(str(m) for m in measures))
    if run_kind == 'ranking':
        message = (f'{names}: this run is a ranking (docno, score) with no qanswer column; answer measures score the '
                   'answers of a RAG pipeline (qid, qanswer), so they are NaN for it. Score rankings with FD@k.')
    else:
        message = (f'{names}: this run is an answer frame (qid, qanswer) with no docno column; ranking measures (FD and '
                   'its companions) are NaN for it. Score answers with AnswerFD / AnswerCFD.')
    warnings.warn(message, UserWarning, stacklevel=2)
    for measure in measures:
        for qid in qids:
            yield Metric(query_id=qid, measure=measure, value=float('nan'))


def _as_frame(run, what: str) -> pd.DataFrame:
    if isinstance(run, pd.DataFrame):
        frame = run
    else:
        frame = RunConverter(run, strict=False).as_pd_dataframe()
    frame = frame.rename(columns={'qid': QID, 'docno': DOCNO})
    if QID not in frame.columns:
        raise ValueError(f'{what}: the answers have no qid (query_id) column (found {_columns(frame)})')
    return frame


def _explode_texts(frame: pd.DataFrame, column: str, what: str) -> pd.DataFrame:
    """(query_id, text) rows: a list/tuple/array of texts in a cell becomes one row per text. ValueError for a
    missing (NaN/None), non-string, empty or white-space-only text, naming the queries."""
    values = frame[column].to_numpy(dtype=object)
    qids = frame[QID].astype(str).to_numpy()
    out_q, out_t, bad = [], [], {'missing': [], 'not text': [], 'empty': []}
    for qid, value in zip(qids, values):
        items = list(value) if isinstance(value, (list, tuple, np.ndarray)) else [value]
        if not items:
            bad['empty'].append(qid)
        for item in items:
            if item is None or (isinstance(item, float) and np.isnan(item)) or item is pd.NA:
                bad['missing'].append(qid)
            elif not isinstance(item, str):
                bad['not text'].append(qid)
            elif not item.strip():
                bad['empty'].append(qid)
            else:
                out_q.append(qid)
                out_t.append(item)
    for kind, said, fix in (
            ('missing', 'missing (NaN/None)', 'give every query a text, or drop the query'),
            ('not text', 'not strings', 'answers are text: convert them, or drop the rows'),
            ('empty', 'empty or white space only', 'an empty answer embeds like every other empty answer and would '
                                                     'silently shrink FD; drop it, or give the text the pipeline should '
                                                     'have produced')):
        if bad[kind]:
            raise ValueError(f'{what}: {len(bad[kind])} {column} value(s) are {said}, for queries '
                             f'{sorted(set(bad[kind]))[:5]}; {fix}')
    return pd.DataFrame({QID: out_q, 'text': out_t})


def answer_rows(run, what: str, judged_docnos=None) -> pd.DataFrame:
    """The answers of ``run`` as (query_id, text) rows, checked (see the module docstring). ``judged_docnos``: the
    docnos of the qrels, to refuse a ``qanswer`` column that holds document ids instead of text."""
    frame = _as_frame(run, what)
    if QANSWER not in frame.columns:
        hint = (' It is a ranking (docno, score): score it with FD@k; answer measures need the answers of a RAG pipeline.'
                if DOCNO in frame.columns else '')
        raise ValueError(f"{what}: the run has no 'qanswer' column (found {_columns(frame)}); an answer pipeline returns "
                         f'qid and qanswer (pyterrier-rag\'s convention).{hint}')
    if len(frame) == 0:
        raise ValueError(f'{what}: the answer frame is empty')
    rows = _explode_texts(frame, QANSWER, what)
    if DOCNO in frame.columns:  # a ranking that carries its query's answer on every row: each answer once
        rows = rows.drop_duplicates().reset_index(drop=True)
    if judged_docnos is not None and len(rows):
        judged = pd.Index(np.asarray(judged_docnos, dtype=str))
        stripped = rows['text'].str.strip()
        is_docno = judged.get_indexer(pd.Index(stripped)) >= 0
        if is_docno.all():
            raise ValueError(f'{what}: every qanswer is a judged docno of the qrels (e.g. {stripped.iloc[:3].tolist()}): '
                             'the column holds document ids, not answer text. Put the answer text in qanswer (e.g. the '
                             "text of the document: pt.text.get_text), or score the ranking with FD@k")
    return rows


def gold_rows(qrels: pd.DataFrame, what: str) -> pd.DataFrame:
    """The gold answers of the qrels' ``gold_answer`` column as distinct (query_id, text) rows (a text repeated for one
    query, e.g. on every judgment row, counts once)."""
    if GOLD not in qrels.columns:
        raise ValueError(f"{what}: ref='gold' needs gold answers in the qrels' {GOLD!r} column (pyterrier-rag's "
                         f'dataset.get_answers()); the qrels have {_columns(qrels)}')
    frame = qrels[qrels[GOLD].map(lambda v: not (v is None or (isinstance(v, float) and np.isnan(v))))]
    if len(frame) == 0:
        raise ValueError(f"{what}: the qrels' {GOLD!r} column has no answer")
    return _explode_texts(frame, GOLD, what + ' (gold answers)').drop_duplicates().reset_index(drop=True)


def split_qrels(qrels) -> Tuple[Optional[pd.DataFrame], Optional[pd.DataFrame]]:
    """(judgment rows with ir_measures names, or None; the whole frame when it has a ``gold_answer`` column, else
    None). Judgment rows are those with a docno and a label; a frame may hold judgments, gold answers or both."""
    if isinstance(qrels, pd.DataFrame):
        frame = pt.model.to_ir_measures(qrels) if 'qid' in qrels.columns else qrels
    else:
        frame = QrelsConverter(qrels).as_pd_dataframe()
    if QID not in frame.columns:
        raise ValueError(f'answer measures: the qrels have no qid (query_id) column (found {_columns(frame)})')
    frame = frame.assign(**{QID: frame[QID].astype(str)})
    gold = frame if GOLD in frame.columns else None
    judgments = None
    if DOCNO in frame.columns and LABEL in frame.columns:
        rows = frame[frame[DOCNO].notna() & frame[LABEL].notna()]
        judgments = rows[[QID, DOCNO, LABEL]] if len(rows) else None
    return judgments, gold


def default_text_encoder(measure, encoder):
    """``measure``'s ``text_encoder``, else what embeds text in ``encoder``: an Embedder, the last stage of a pipeline
    ending in one (``TextLookup(...) >> Embedder()``), or any other single transformer that adds ``doc_vec`` (it is
    given frames of docno and text). ValueError for a VectorStore or other lookup-only source, which cannot embed."""
    if measure['text_encoder'] is not None:
        return measure['text_encoder']
    from ..vectors.embedder import Embedder
    if isinstance(encoder, Embedder):
        return encoder
    stages = getattr(encoder, '_transformers', None)
    if stages and isinstance(stages[-1], Embedder):
        return stages[-1]
    if isinstance(encoder, pt.Transformer) and not stages and not hasattr(encoder, 'lookup'):
        return encoder
    raise ValueError(f'{measure}: answers are text and need a text encoder, and the encoder {encoder!r} cannot embed '
                     'text (a precomputed store, or a pipeline not ending in an Embedder). Pass '
                     'text_encoder=pf.Embedder(...) — the model that made the document vectors, so both sides share one space')


def embed_texts(text_encoder, texts: List[str], what: str) -> np.ndarray:
    """The vectors (float64, one row per text) of ``texts`` from ``text_encoder`` (a transformer adding ``doc_vec``
    to a frame of ``docno`` and ``text``), each distinct text embedded once under its :func:`fingerprint`."""
    unique = list(dict.fromkeys(texts))
    docnos = [fingerprint(t) for t in unique]
    if not isinstance(text_encoder, pt.Transformer):
        raise ValueError(f'{what}: text_encoder must be a pt.Transformer adding doc_vec to a frame of docno and text '
                         f'(e.g. pf.Embedder()); got {type(text_encoder).__name__}')
    out = text_encoder(pd.DataFrame({'docno': docnos, 'text': unique}))
    if 'doc_vec' not in out.columns or 'docno' not in out.columns:
        raise ValueError(f'{what}: text_encoder {text_encoder!r} must return docno and doc_vec columns, returned '
                         f'{_columns(out)}')
    out = out[out['doc_vec'].notna()].drop_duplicates('docno')
    pos = pd.Index(out['docno'].astype(str)).get_indexer(pd.Index(docnos))
    if (pos < 0).any():
        lost = [unique[i][:40] for i in np.flatnonzero(pos < 0)[:3]]
        raise ValueError(f'{what}: text_encoder {text_encoder!r} returned no vector for {int((pos < 0).sum())} text(s), '
                         f'e.g. {lost}')
    vecs = stack_vectors(out['doc_vec'].tolist(), f'{what}: text_encoder {text_encoder!r}')[pos]
    if not np.isfinite(vecs).all():
        raise ValueError(f'{what}: text_encoder {text_encoder!r} returned NaN/inf vectors')
    index = {t: i for i, t in enumerate(unique)}
    return vecs[[index[t] for t in texts]]


class _Relevant:
    """The relevant documents of the qrels (coded once) and their vectors per (encoder, relevant-set definition)."""

    def __init__(self, judgments: Judgments):
        self.judgments = judgments
        self._memo: Dict[tuple, Tuple[np.ndarray, np.ndarray]] = {}

    def sets(self, measure, encoder) -> Tuple[np.ndarray, np.ndarray]:
        j = self.judgments
        rows = j.relevant(measure)
        key = (encoder_key(encoder), measure['rel'], measure.positive_int('per_query'), measure['seed'], measure['missing'])
        if key not in self._memo:
            docnos = j.doc_names[j.dcode[rows]].astype(str)
            vecs, found = lookup_vectors(encoder, docnos)
            if not found.all():
                missing = np.unique(docnos[~found])
                if measure['missing'] == 'error':
                    raise ValueError(f'{measure}: {int((~found).sum())} of {len(docnos)} relevant document(s) have no '
                                     f'vector, e.g. {missing[:5].tolist()}. Provide vectors for them, or pass '
                                     "missing='drop' to leave them out (with a counted log).")
                logger.warning('%s: left out %d of %d relevant document(s) without a vector, e.g. %s', measure,
                               int((~found).sum()), len(docnos), missing[:5].tolist())
            self._memo[key] = (vecs[found], j.query_names[j.qcode[rows]][found])
        return self._memo[key]


def _encoder_of(measure):
    """The encoder of the relevant documents: the measure's own ``encoder=``, else the default one (as FD's)."""
    return measure['encoder'] if measure['encoder'] is not None else get_default_encoder()


def _restrict(measure, answers: pd.DataFrame, vecs: np.ndarray, ref_queries: np.ndarray) -> Tuple[np.ndarray, np.ndarray]:
    """The answers of the queries with a reference, and their queries (others left out with a log)."""
    keep = answers[QID].isin(set(ref_queries)).to_numpy()
    if not keep.all():
        logger.info('%s: left out the %d answer(s) of %d quer(ies) without a reference', measure, int((~keep).sum()),
                    answers[QID][~keep].nunique())
    n_without = len(set(ref_queries) - set(answers[QID][keep]))
    if n_without:
        # the Gaussian is over the answered queries only: a system that answers fewer queries is measured on fewer,
        # and can score better than one answering every query as well (round seven: 0.135 against 0.145)
        from .experiment_call import warn_once_per_experiment
        warn_once_per_experiment(
            f'{measure}: {n_without} of {len(set(ref_queries))} queries with a reference have no answer; the measure is '
            'over the answered queries only, so a system that answers fewer queries can score better — compare '
            'systems on the queries every one answers, or report the number answered beside it')
    if keep.sum() < 2:
        raise ValueError(f'{measure}: {int(keep.sum())} answer(s) belong to queries with a reference; a Gaussian needs '
                         f'at least 2 (answer queries e.g. {[str(q) for q in sorted(answers[QID].unique())[:3]]}, '
                         f'reference queries e.g. {[str(q) for q in sorted(set(ref_queries))[:3]]})')
    return vecs[keep], answers[QID].to_numpy(dtype=str)[keep]


class AnswerEvaluator(providers.Evaluator):
    """Evaluates answer measures on the answer frames of RAG pipelines; rankings get NaN with a warning."""

    def __init__(self, measures, qrels):
        measures = list(measures)
        judgments, gold = split_qrels(qrels)
        self.relevant = None
        self.gold = None
        names = ', '.join(sorted(str(m) for m in measures))
        if any(m['ref'] == 'relevant' for m in measures):
            if judgments is None:
                raise ValueError(f"{names}: ref='relevant' needs judgments (qid, docno, label) in the qrels; they have "
                                 "none. For gold answers only, use ref='gold'")
            self.relevant = _Relevant(Judgments(prepare_qrels(judgments, names)))
        if any(m['ref'] == 'gold' for m in measures):
            self.gold = gold_rows(gold if gold is not None else (judgments if judgments is not None else pd.DataFrame()),
                                  names)
        qids = set()
        if judgments is not None:
            qids |= set(judgments[QID])
        if gold is not None:
            qids |= set(gold[QID])
        super().__init__(measures, sorted(qids))
        self._judged = None if judgments is None else judgments[DOCNO].astype(str).unique()

    def iter_calc(self, run) -> Iterator[Metric]:
        # a set value for every query of the qrels (no DEFAULT filling, as SetEvaluator)
        yield from self._iter_calc(run)

    def _iter_calc(self, run) -> Iterator[Metric]:
        if is_ranking(run):
            yield from warn_other_kind(self.measures, 'ranking', self.qrel_qids)
            return
        from .experiment_call import rows_are_read
        from .experiment_rows import warn_constant_rows
        values = compute_answer_measures(self.measures, self, run)
        rows_read = rows_are_read()
        for measure, value in values.items():
            # no leave-one-query-out path: the value on every row, and a paired test on them (pt.Experiment's
            # baseline=) is meaningless (as FDInf's and KID's) — said where the rows are read, not where pt.Experiment
            # only averages them
            if rows_read:
                warn_constant_rows(measure, 'it has no leave-one-query-out path')
            for qid in self.qrel_qids:
                yield Metric(query_id=qid, measure=measure, value=value)

    def calc_aggregate(self, run):
        """Each measure's value (what its rows repeat), without the rows' warning."""
        if is_ranking(run):
            return super().calc_aggregate(run)
        return compute_answer_measures(self.measures, self, run)

    def sets(self, measure, answers: pd.DataFrame, text_vecs) -> AnswerSets:
        """``measure``'s reference and answer vectors for the (checked) ``answers`` rows."""
        encoder = _encoder_of(measure)
        if measure['text_encoder'] is None and encoder is None:
            raise ValueError(f'{measure}: no encoder is set. Pass AnswerFD(encoder=..., text_encoder=...) or call '
                             'pyterrier_frechet.set_default_encoder(pf.Embedder(...))')
        text_encoder = default_text_encoder(measure, encoder)
        if measure['ref'] == 'relevant':
            if encoder is None:
                raise ValueError(f'{measure}: no vectors for the relevant documents: no encoder is set. Pass '
                                 'AnswerFD(encoder=...) or call pyterrier_frechet.set_default_encoder(...)')
            reference, ref_qids = self.relevant.sets(measure, encoder)
        else:
            reference = text_vecs(text_encoder, self.gold['text'].tolist(), f'{measure} gold answers')
            ref_qids = self.gold[QID].to_numpy(dtype=str)
        if len(reference) < 2:
            raise ValueError(f'{measure}: the reference set has {len(reference)} item(s) with a vector; a Gaussian needs '
                             'at least 2')
        vecs = text_vecs(text_encoder, answers['text'].tolist(), f'{measure} answers')
        answers_vecs, ans_qids = _restrict(measure, answers, vecs, np.unique(ref_qids))
        if reference.shape[1] != answers_vecs.shape[1]:
            raise ValueError(f'{measure}: reference vectors are {reference.shape[1]}-d but answer vectors '
                             f'{answers_vecs.shape[1]}-d; encoder and text_encoder must be the same model')
        return AnswerSets(np.asarray(reference, dtype=np.float64), ref_qids, answers_vecs, ans_qids)


def compute_answer_measures(measures, evaluator: AnswerEvaluator, run) -> Dict[object, float]:
    """Each answer measure's value for ``run`` (an answer frame): answers checked once, each distinct text embedded
    once per text encoder."""
    what = ', '.join(sorted(str(m) for m in measures))
    answers = answer_rows(run, what, evaluator._judged)
    memo: Dict[tuple, np.ndarray] = {}

    def text_vecs(encoder, texts, label):
        key = (encoder_key(encoder), tuple(texts))
        if key not in memo:
            memo[key] = embed_texts(encoder, texts, label)
        return memo[key]

    out = {}
    for measure in sorted(measures, key=repr):
        s = evaluator.sets(measure, answers, text_vecs)
        try:
            out[measure] = float(measure.statistic(s.reference, s.ref_qids, s.answers, s.ans_qids))
        except ValueError as ex:
            raise ValueError(f'{measure}: {ex}') from ex
    return out


def answer_sets(measure, qrels, answers) -> AnswerSets:
    """The two sets ``measure`` (an answer measure) compares for ``answers`` (an answer frame, qid and qanswer) on
    ``qrels`` — the vectors and the query of each row. A ranking is refused (ValueError), not NaN."""
    if not is_answer_measure(measure):
        raise ValueError(f'{measure} is not an answer measure (AnswerFD, AnswerCFD)')
    measure.validate_params()
    evaluator = AnswerEvaluator([measure], qrels)
    rows = answer_rows(answers, str(measure), evaluator._judged)
    return evaluator.sets(measure, rows, lambda enc, texts, label: embed_texts(enc, texts, label))
