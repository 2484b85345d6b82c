"""Measures of generated answers: FD and CFD between the embeddings of a RAG pipeline's answers and of references.

A RAG pipeline returns a frame with ``qid`` and ``qanswer`` (pyterrier-rag's convention); ``pt.Experiment`` hands it
to ir_measures as it is, so a measure can read ``qanswer`` where a ranking measure reads ``docno`` and ``score``.
The measures here compare the set of answers of a query set with a reference set of the same queries:

- ``ref='relevant'`` (default): the judged-relevant documents of the query set — FD's relevant side, selected exactly
  as FD selects it (``rel``, ``per_query``, ``seed``) and embedded by the same ``encoder``;
- ``ref='gold'``: the gold answers of the queries, read from the qrels' ``gold_answer`` column (pyterrier-rag's name;
  one answer per row, or a list per row).

Answers (and gold answers) are text: they are embedded by ``text_encoder`` — by default the ``Embedder`` that serves
``encoder`` — under a content fingerprint ``qanswer:<sha256 of the text>`` as their docno, so the Embedder's cache,
model identity and precision apply to them as to documents, and the same text is embedded once per model, ever.

Selecting and embedding the sets is :mod:`pyterrier_frechet.evaluation.answers`' work; what a measure does with a
frame of the other kind (a ranking given to an answer measure, an answer frame given to FD) is described there.
"""
import numpy as np
from ir_measures.measures.base import ParamInfo

from .base import ANSWERS, SetMeasure, register_measure

#: Parameters every answer measure shares.
ANSWER_PARAMS = {
    'ref': ParamInfo(dtype=str, choices=['relevant', 'gold'], default='relevant',
                     desc="reference set: the judged-relevant documents of the query set ('relevant', FD's relevant "
                          "side) or the gold answers of the qrels' gold_answer column ('gold')"),
    'rel': ParamInfo(dtype=int, default=1, desc="minimum relevance label of a reference document (ref='relevant')"),
    'per_query': ParamInfo(dtype=int, required=False, desc='keep at most this many relevant documents per query '
                           '(highest grade first, random within a grade)'),
    'seed': ParamInfo(dtype=int, default=0, desc='random seed of the per_query balancing'),
    'encoder': ParamInfo(default=None, desc="docno -> doc_vec of the relevant documents, as FD's encoder=; None: the "
                         'default encoder (pyterrier_frechet.set_default_encoder)'),
    'text_encoder': ParamInfo(default=None, desc='transformer adding doc_vec to a frame of docno and text (an Embedder), '
                              'for answers and gold answers; None: the Embedder that serves encoder'),
    'missing': ParamInfo(dtype=str, choices=['error', 'drop'], default='error',
                         desc='relevant documents without a vector: raise (error) or leave out with a counted log (drop)'),
}


class AnswerMeasure(SetMeasure):
    """A measure over the embeddings of the answers of a query set and of a reference set (relevant documents or
    gold answers). Implement ``statistic(reference, ref_qids, answers, ans_qids)``."""
    INPUT = ANSWERS
    SUPPORTED_PARAMS = ANSWER_PARAMS

    def statistic(self, reference, ref_qids, answers, ans_qids) -> float:
        """The value for the reference and answer vectors (n×d float64 each) and the query of each vector."""
        raise NotImplementedError(f'{type(self).__name__} does not define statistic()')


class _AnswerFD(AnswerMeasure):
    """
    Fréchet Distance between the embeddings of a RAG pipeline's answers (the run's ``qanswer``: one or several
    answers per query) and a reference set of the same queries: the judged-relevant documents of the query set
    (``ref='relevant'``, the paper's relevant side, selected and embedded as FD does) or the gold answers of the
    qrels' ``gold_answer`` column (``ref='gold'``). A Gaussian is fitted to each set (mean, unbiased covariance) and
    FD = ‖μ₁−μ₂‖² + Tr(Σ₁ + Σ₂ − 2(Σ₁Σ₂)^½); lower is better. Answers of queries without a reference are left out
    (logged), as FD leaves out the rankings of queries without a relevant document.

    ``weighting='query'``: every query has total weight 1 on each side (its n reference items 1/n each, its m answers
    1/m each), the weighted mean and covariance of ``numpy.cov(..., aweights=w)``.

    One number per query set, repeated on every query of the qrels (so a ``baseline=`` p-value on it is
    meaningless, and a warning says so); it sits in the same
    ``pt.Experiment`` as ``FD@10`` of retrieval pipelines. A ranking (a frame with docnos and no ``qanswer``) gets NaN
    with a warning, as FD gets NaN with a warning for an answer frame, so one table holds both kinds of pipeline.

    .. cite:: arabzadeh2024frechet
       Negar Arabzadeh and Charles L. A. Clarke. 2024. Fréchet Distance for Offline Evaluation of
       Information Retrieval Systems with Sparse Labels. In Proceedings of EACL 2024.
       https://aclanthology.org/2024.eacl-long.26
    """
    __name__ = 'AnswerFD'
    NAME = __name__
    PRETTY_NAME = 'Fréchet Distance of answers'
    SHORT_DESC = ('Distance between Gaussians fitted to the embeddings of the generated answers and of the relevant '
                  'documents (or gold answers) of a query set (lower is better).')
    HIGHER_IS_BETTER = False
    SUPPORTED_PARAMS = {
        **ANSWER_PARAMS,
        'weighting': ParamInfo(dtype=str, choices=['document', 'query'], default='document',
                               desc="'document': every answer and reference item weighs 1; 'query': every query weighs 1 "
                                    'on each side'),
    }

    def statistic(self, reference, ref_qids, answers, ans_qids) -> float:
        from ..core.frechet import frechet_distance, frechet_distance_weighted
        from ..core.weighted import query_weights
        if self['weighting'] == 'query':
            return frechet_distance_weighted(reference, query_weights(ref_qids), answers, query_weights(ans_qids))
        return frechet_distance(reference, answers)


class _AnswerCFD(AnswerMeasure):
    """
    Conditional Fréchet Distance of answers given the query: each query's answers are compared with *that query's*
    reference items (relevant documents, or gold answers with ``ref='gold'``), where AnswerFD compares pooled sets
    and cannot see which query an answer serves (see ``CFD``: per-query means m_q, pooled within-query covariances W):
    CFD = (1/|Q|) Σ_q ‖m_q^ref − m_q^ans‖² + Tr(W_ref + W_ans − 2(W_ref^½ W_ans W_ref^½)^½), over the queries with both.

    With one answer per query (the usual RAG output) the answers have no within-query scatter: each query's answer
    distribution is the point mass at its answer, W_ans = 0, and the value is the Fréchet distance between
    N(m_q^ref, W_ref) and that point, averaged: (1/|Q|) Σ_q ‖m_q^ref − a_q‖² + Tr(W_ref). The second term does not
    depend on the answers, so AnswerCFD then orders pipelines by the mean squared distance of each answer to its own
    query's references. With several answers for some query, W_ans is their pooled within-query covariance.

    .. cite:: soloveitchik2021cfid
       Michael Soloveitchik, Tzvi Diskin, Efrat Morin and Ami Wiesel. 2021. Conditional Frechet Inception
       Distance. arXiv:2103.11521.
    """
    __name__ = 'AnswerCFD'
    NAME = __name__
    PRETTY_NAME = 'Conditional Fréchet Distance of answers'
    SHORT_DESC = "Fréchet distance between each query's answers and its references, given the query (lower is better)."
    HIGHER_IS_BETTER = False

    def statistic(self, reference, ref_qids, answers, ans_qids) -> float:
        from ..core.conditional import conditional_frechet_distance, point_conditional_distance
        ans_qids = np.asarray(ans_qids).astype(str)
        if len(np.unique(ans_qids)) < len(ans_qids):  # some query has several answers: W_ans exists
            return conditional_frechet_distance(reference, ref_qids, answers, ans_qids)
        return point_conditional_distance(np.asarray(reference, dtype=np.float64), np.asarray(ref_qids).astype(str),
                                          np.asarray(answers, dtype=np.float64), ans_qids)


AnswerFD = register_measure(_AnswerFD())
AnswerCFD = register_measure(_AnswerCFD())
