"""Answer measures (AnswerFD, AnswerCFD): FD of a RAG pipeline's answers (qanswer) against the relevant documents or
the gold answers, beside FD@k of retrieval pipelines in one pt.Experiment. The references are computed here from
first principles: the two sets are assembled by hand from the texts, embedded by an independent word count, and
their FD computed in 30-digit arithmetic (conftest.reference_fd)."""
import warnings
from collections import Counter

import ir_measures
import numpy as np
import pandas as pd
import pyterrier as pt
import pytest

import pyterrier_frechet as pf
from pyterrier_frechet import AnswerCFD, AnswerFD, FD
from conftest import reference_fd

VOCAB = ['wing', 'flow', 'shock', 'heat', 'drag']

DOCS = {
    'd1': 'wing flow wing', 'd2': 'wing drag', 'd3': 'flow shock', 'd4': 'heat heat shock',
    'd5': 'shock drag drag', 'd6': 'heat flow', 'd7': 'wing wing heat', 'd8': 'drag flow shock heat',
    'd9': 'flow', 'd10': 'shock shock wing',
}
QRELS = pd.DataFrame([
    ('q1', 'd1', 2), ('q1', 'd2', 1), ('q1', 'd3', 0),
    ('q2', 'd4', 1), ('q2', 'd5', 2), ('q2', 'd6', 1),
    ('q3', 'd7', 1), ('q3', 'd8', 0),
    ('q4', 'd9', 0),  # no relevant document
], columns=['qid', 'docno', 'label'])
TOPICS = pd.DataFrame({'qid': ['q1', 'q2', 'q3', 'q4'], 'query': ['wing', 'heat shock', 'wing heat', 'flow']})
ANSWERS = pd.DataFrame({  # q2 has two answers (two rows); q4 has no relevant document: its answer is left out
    'qid': ['q1', 'q2', 'q2', 'q3', 'q4'],
    'query': ['wing', 'heat shock', 'heat shock', 'wing heat', 'flow'],
    'qanswer': ['the wing has lift and drag', 'heat in the shock layer', 'shock heat flow', 'wing wing flow', 'flow'],
})
RUN = pd.DataFrame([(q, d, 10.0 - r) for q, docs in (('q1', ['d1', 'd3', 'd5']), ('q2', ['d4', 'd9', 'd2']),
                                                     ('q3', ['d10', 'd7', 'd8']), ('q4', ['d9', 'd1', 'd2']))
                    for r, d in enumerate(docs)], columns=['qid', 'docno', 'score'])


def bag(text):
    """The independent embedding: counts of the vocabulary words among the text's white-space tokens."""
    counts = Counter(text.split())
    return np.array([counts[w] for w in VOCAB], dtype=np.float64)


class BagEncoder(pt.Transformer):
    """The encoder under test: docno (+ text) -> doc_vec, word counts over VOCAB (its own code, not ``bag``); documents
    by their docno from ``texts``, anything else from the frame's ``text``. Counts the texts it embeds."""

    def __init__(self, texts):
        self.texts = texts
        self.embedded = []

    def transform(self, inp):
        texts = inp['text'] if 'text' in inp.columns else inp['docno'].map(self.texts)
        known = inp[texts.notna()]
        texts = texts[texts.notna()]
        self.embedded.extend(texts)
        vecs = [np.array([t.split().count(w) for w in VOCAB], dtype=np.float32) for t in texts]
        return known.assign(doc_vec=vecs)

    def __repr__(self):
        return 'BagEncoder()'


@pytest.fixture
def enc():
    return BagEncoder(DOCS)


def _relevant_side(rel=1):
    rows = QRELS[QRELS.label >= rel]
    return np.stack([bag(DOCS[d]) for d in rows.docno]), rows.qid.to_numpy()


def _answer_side(frame=ANSWERS, queries=('q1', 'q2', 'q3')):
    rows = frame[frame.qid.isin(queries)]
    return np.stack([bag(t) for t in rows.qanswer]), rows.qid.to_numpy()


def _weights(qids):
    counts = Counter(qids)
    return np.array([1.0 / counts[q] for q in qids])


def _cfd_reference(x, xq, y, yq):
    """CFD from its definition: the mean over queries of ‖m_q^x − m_q^y‖², plus the trace term of the pooled
    within-query covariances W. The trace term is reference_fd (30 digits) of two zero-mean sets built so that their
    unbiased covariances are W: the within-query residuals R, scaled by c and mirrored ([cR; −cR] has mean 0 and
    covariance 2c²RᵀR/(2n − 1) = RᵀR/(n − |Q|) for c² = (2n − 1)/(2(n − |Q|)))."""
    queries = sorted(set(xq) & set(yq))

    def side(v, q):
        means = {k: v[q == k].mean(0) for k in queries}
        keep = np.isin(q, queries)
        resid = v[keep] - np.stack([means[k] for k in q[keep]])
        n = len(resid)
        if n == len(queries):  # one vector per query: a point mass, W = 0
            return means, np.zeros((2, v.shape[1]))
        c = np.sqrt((2 * n - 1) / (2 * (n - len(queries))))
        return means, np.vstack([c * resid, -c * resid])
    mx, rx = side(x, xq)
    my, ry = side(y, yq)
    mean_term = np.mean([np.sum((mx[k] - my[k]) ** 2) for k in queries])
    return float(mean_term + reference_fd(rx, ry))


def test_answer_fd_equals_an_independent_computation(enc):
    rel, _ = _relevant_side()
    ans, _ = _answer_side()
    expected = reference_fd(rel, ans)
    measure = AnswerFD(encoder=enc)
    got = ir_measures.calc_aggregate([measure], QRELS, ANSWERS.rename(columns={'qid': 'query_id'}))[measure]
    assert got == pytest.approx(expected, rel=1e-9, abs=1e-12)
    enc.embedded.clear()
    table = pt.Experiment([ANSWERS], TOPICS, QRELS, eval_metrics=[measure], names=['extract'])
    assert table[str(measure)].iloc[0] == pytest.approx(expected, rel=1e-9, abs=1e-12)
    # each distinct text embedded once per evaluation: 6 relevant documents, 5 answers (q4's is embedded, then left out)
    assert sorted(enc.embedded) == sorted([DOCS[d] for d in ('d1', 'd2', 'd4', 'd5', 'd6', 'd7')] + list(ANSWERS.qanswer))


def test_query_weighted_and_rel_and_conditional_forms(enc):
    rel, rq = _relevant_side(rel=2)
    ans, aq = _answer_side(queries=('q1', 'q2'))
    got = ir_measures.calc_aggregate([AnswerFD(encoder=enc, rel=2, weighting='query')], QRELS, ANSWERS)
    expected = reference_fd(rel, ans, x_weights=_weights(rq), y_weights=_weights(aq))
    assert list(got.values())[0] == pytest.approx(expected, rel=1e-9, abs=1e-12)
    # CFD: several answers for q2 give the answers a within-query covariance
    rel, rq = _relevant_side()
    ans, aq = _answer_side()
    got = ir_measures.calc_aggregate([AnswerCFD(encoder=enc)], QRELS, ANSWERS)
    assert list(got.values())[0] == pytest.approx(_cfd_reference(rel, rq, ans, aq), rel=1e-9, abs=1e-9)
    # one answer per query: each answer is a point mass, W_ans = 0: mean over queries of ‖m_q − a_q‖² + Tr(W_rel)
    one_each = ANSWERS.drop_duplicates('qid')
    ans, aq = _answer_side(one_each)
    means = {q: rel[rq == q].mean(0) for q in ('q1', 'q2', 'q3')}
    resid = np.stack([x - means[q] for x, q in zip(rel, rq)])
    expected = np.mean([np.sum((means[q] - a) ** 2) for a, q in zip(ans, aq)]) + np.sum(resid ** 2) / (len(rel) - 3)
    got = ir_measures.calc_aggregate([AnswerCFD(encoder=enc)], QRELS, one_each)
    assert list(got.values())[0] == pytest.approx(expected, rel=1e-12)
    assert _cfd_reference(rel, rq, ans, aq) == pytest.approx(expected, rel=1e-9)  # the same as W_ans = 0 in the formula


def test_a_list_of_answers_per_row_is_the_same_as_one_row_each(enc):
    listed = pd.DataFrame({'qid': ['q1', 'q2', 'q3'], 'qanswer': [['the wing has lift and drag'],
                                                                 ['heat in the shock layer', 'shock heat flow'],
                                                                 ['wing wing flow']]})
    measure = AnswerFD(encoder=enc)
    a = ir_measures.calc_aggregate([measure], QRELS, listed)[measure]
    b = ir_measures.calc_aggregate([measure], QRELS, ANSWERS)[measure]
    assert a == b


def test_a_ranking_carrying_its_answers_is_scored_by_both(enc):
    both = RUN.merge(ANSWERS[['qid', 'qanswer']].groupby('qid').head(1), on='qid')  # each query's answer on every row
    fd, afd = FD(encoder=enc) @ 2, AnswerFD(encoder=enc)
    got = ir_measures.calc_aggregate([fd, afd], pt.model.to_ir_measures(QRELS), pt.model.to_ir_measures(both))
    alone = ir_measures.calc_aggregate([fd], pt.model.to_ir_measures(QRELS), pt.model.to_ir_measures(RUN))[fd]
    assert got[fd] == pytest.approx(alone, rel=1e-12)  # the same vectors, summed in the merged frame's row order
    assert got[afd] == pytest.approx(reference_fd(_relevant_side()[0], _answer_side(ANSWERS.groupby('qid').head(1))[0]),
                                     rel=1e-9)


def test_retrieval_and_answer_pipelines_in_one_experiment(enc):
    retrieval = pt.Transformer.from_df(RUN)
    answerer = pt.apply.generic(lambda topics: ANSWERS[ANSWERS.qid.isin(topics.qid)].reset_index(drop=True))
    fd, afd = FD(encoder=enc) @ 2, AnswerFD(encoder=enc)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter('always')
        table = pt.Experiment([retrieval, answerer], TOPICS, QRELS, eval_metrics=[fd, afd], names=['BM25', 'RAG'],
                              validate='ignore')
    messages = [str(w.message) for w in caught if issubclass(w.category, UserWarning)]
    assert any('AnswerFD' in m and 'is a ranking' in m for m in messages)
    assert any('FD(' in m and 'is an answer frame' in m for m in messages)
    table = table.set_index('name')
    rel, _ = _relevant_side()
    top2 = RUN.groupby('qid').head(2)
    top2 = top2[top2.qid.isin(['q1', 'q2', 'q3'])]
    assert table.loc['BM25', str(fd)] == pytest.approx(reference_fd(rel, np.stack([bag(DOCS[d]) for d in top2.docno])), rel=1e-9)
    assert np.isnan(table.loc['BM25', str(afd)])
    assert np.isnan(table.loc['RAG', str(fd)])
    assert table.loc['RAG', str(afd)] == pytest.approx(reference_fd(rel, _answer_side()[0]), rel=1e-9)


def test_gold_answers_in_the_qrels(enc):
    # pyterrier-rag's get_answers(): one row per gold answer (qid, gold_answer); here beside the judgments
    gold = pd.DataFrame({'qid': ['q1', 'q1', 'q2', 'q3'],
                         'gold_answer': ['wing drag', 'wing flow', 'heat shock shock', 'wing heat heat']})
    expected = reference_fd(np.stack([bag(t) for t in gold.gold_answer]), _answer_side()[0])
    measure = AnswerFD(ref='gold', text_encoder=enc)
    assert ir_measures.calc_aggregate([measure], gold, ANSWERS)[measure] == pytest.approx(expected, rel=1e-9)
    combined = pd.concat([QRELS, gold], ignore_index=True)  # judgment rows and gold rows in one frame
    fd, afd = FD(encoder=enc) @ 2, AnswerFD(encoder=enc)
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')
        table = pt.Experiment([RUN, ANSWERS], TOPICS, combined, eval_metrics=[fd, afd, measure], names=['run', 'rag'],
                              validate='ignore').set_index('name')
    assert table.loc['rag', str(measure)] == pytest.approx(expected, rel=1e-9)
    assert table.loc['rag', str(afd)] == pytest.approx(reference_fd(_relevant_side()[0], _answer_side()[0]), rel=1e-9)
    alone = ir_measures.calc_aggregate([fd], pt.model.to_ir_measures(QRELS), pt.model.to_ir_measures(RUN))[fd]
    assert table.loc['run', str(fd)] == pytest.approx(alone, rel=1e-12)
    with pytest.raises(ValueError, match="gold_answer"):
        ir_measures.calc_aggregate([measure], QRELS, ANSWERS)


def test_answer_sets_assembles_the_two_sets(enc):
    sets = pf.answer_sets(AnswerFD(encoder=enc), QRELS, ANSWERS)
    rel, rq = _relevant_side()
    ans, aq = _answer_side()
    np.testing.assert_array_equal(sets.reference, rel)
    np.testing.assert_array_equal(sets.answers, ans)
    assert sets.ref_qids.tolist() == rq.tolist() and sets.ans_qids.tolist() == aq.tolist()


@pytest.mark.parametrize('answers, message', [
    (TOPICS, "no 'qanswer' column"),
    (ANSWERS.assign(qanswer=['a wing', '', 'flow', 'wing', 'flow']), r"empty or white space only, for queries \['q2'\]"),
    (ANSWERS.assign(qanswer=['a wing', None, 'flow', 'wing', 'flow']), r"missing \(NaN/None\), for queries \['q2'\]"),
    (ANSWERS.assign(qanswer=['a wing', np.nan, 'flow', 'wing', 'flow']), r"missing \(NaN/None\)"),
    (ANSWERS.assign(qanswer=['d1', 'd4', 'd5', 'd7', 'd9']), 'holds document ids, not answer text'),
    (ANSWERS.iloc[:0], 'answer frame is empty'),
])
def test_bad_answers_are_clear_errors(enc, answers, message):
    with pytest.raises(ValueError, match=message):
        ir_measures.calc_aggregate([AnswerFD(encoder=enc)], QRELS, answers)
    if not len(answers):  # pt.Experiment refuses an empty frame itself ('no results in dataframe')
        return
    with pytest.raises(ValueError, match=message):
        pt.Experiment([answers], TOPICS, QRELS, eval_metrics=[AnswerFD(encoder=enc)], validate='ignore')


def test_a_ranking_is_refused_by_answer_sets_and_nan_in_a_table(enc):
    with pytest.raises(ValueError, match="no 'qanswer' column.*It is a ranking"):
        pf.answer_sets(AnswerFD(encoder=enc), QRELS, RUN)
    with pytest.warns(UserWarning, match='is a ranking'):
        got = ir_measures.calc_aggregate([AnswerFD(encoder=enc)], QRELS, RUN.rename(columns={'qid': 'query_id', 'docno': 'doc_id'}))
    assert np.isnan(list(got.values())[0])


def test_encoder_errors_name_the_fix():
    store_like = type('Store', (), {'lookup': lambda self, d: (np.zeros((len(d), 5)), np.ones(len(d), bool))})()
    with pytest.raises(ValueError, match='text_encoder=pf.Embedder'):
        ir_measures.calc_aggregate([AnswerFD(encoder=store_like)], QRELS, ANSWERS)
    with pytest.raises(ValueError, match='no encoder is set'):
        ir_measures.calc_aggregate([AnswerFD], QRELS, ANSWERS)
    with pytest.raises(ValueError, match='pt.Experiment or ir_measures'):
        pf.evaluate({'rag': ANSWERS}, QRELS, [AnswerFD(encoder=BagEncoder(DOCS))])


def test_answers_share_the_embedder_cache_under_a_text_fingerprint(tmp_path):
    from pyterrier_frechet.pipelines.tiny import tiny_encoder
    from pyterrier_frechet.vectors.cache import text_sha
    path = tiny_encoder(tmp_path / 'tiny')
    texts = {d: t for d, t in DOCS.items()}
    embedder = pf.Embedder(path, texts=texts, cache_dir=tmp_path / 'cache', verbose=False)
    measure = AnswerFD(encoder=embedder)  # the Embedder serves both the documents and the answers
    first = ir_measures.calc_aggregate([measure], QRELS, ANSWERS)[measure]
    assert embedder.n_encoded == 6 + 5  # 6 relevant documents, 5 distinct answers
    again = pf.Embedder(path, texts=texts, cache_dir=tmp_path / 'cache', verbose=False)
    second = ir_measures.calc_aggregate([AnswerFD(encoder=again)], QRELS, ANSWERS)[AnswerFD(encoder=again)]
    assert again.n_encoded == 0 and second == first
    # stored under (fingerprint, text); a look-up by docno alone through an Embedder with texts= serves only docnos
    # of its own text source (issue 25 S2), so the cache is asked with the answer's text
    docno = pf.evaluation.answers.fingerprint(ANSWERS.qanswer[0])
    cached = again.cache.get([docno], [ANSWERS.qanswer[0]])
    assert list(cached) == [docno] and pf.evaluation.answers.fingerprint('x') == 'qanswer:' + text_sha('x')
    direct = again.encode([ANSWERS.qanswer[0]])
    np.testing.assert_allclose(cached[docno][None, :], direct, rtol=1e-6, atol=1e-7)


@pytest.mark.slow
def test_minilm_on_cranfield_orders_relevant_extracts_before_random_ones(tmp_path):
    """Real text, the default model: on 60 Cranfield queries, the first two sentences of a judged-relevant document
    are nearer their query's relevant documents (AnswerCFD) than those of a random unjudged document, and the
    retrieval pipeline's FD@10 and the answers' AnswerFD share one table."""
    import re
    collection = pf.bundled.cranfield()
    topics = collection.topics.iloc[:60]
    qrels = collection.qrels[collection.qrels.qid.isin(topics.qid)]
    texts = collection.texts
    first = lambda d: ' '.join(re.split(r'(?<=[.?!])\s+', texts[d].strip())[:2])
    best = qrels.sort_values(['qid', 'label', 'docno'], ascending=[True, False, True]).groupby('qid').head(1)
    rng = np.random.default_rng(0)
    judged = set(collection.qrels.docno)
    pool = sorted(d for d, t in texts.items() if t.strip() and d not in judged)
    relevant = pd.DataFrame({'qid': best.qid, 'qanswer': [first(d) for d in best.docno]})
    random = pd.DataFrame({'qid': topics.qid, 'qanswer': [first(d) for d in rng.choice(pool, len(topics))]})
    run = best.assign(score=1.0)[['qid', 'docno', 'score']]  # a one-document "ranking": each query's best document
    embedder = pf.Embedder(texts=texts, empty_text='embed', cache_dir=tmp_path / 'cache', verbose=False)
    cfd, fd = AnswerCFD(encoder=embedder), FD(encoder=embedder) @ 1
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')
        table = pt.Experiment([run, relevant, random], topics, qrels, eval_metrics=[fd, cfd],
                              names=['ranking', 'relevant', 'random'], validate='ignore').set_index('name')
    assert table.loc['relevant', str(cfd)] < table.loc['random', str(cfd)]
    assert np.isfinite(table.loc['ranking', str(fd)]) and np.isnan(table.loc['ranking', str(cfd)])
    assert np.isnan(table.loc['relevant', str(fd)])


def test_queries_left_unanswered_are_said_with_their_count(enc):
    # round seven: a system answering 2 of 5 queries scored a better AnswerCFD than one answering all 5 as well, with
    # nothing said; the measure is over the answered queries, so the count is said beside it (q1, q2, q3 have a
    # reference; dropping q3's answer leaves 1 of 3 unanswered)
    partial = ANSWERS[ANSWERS.qid != 'q3'].rename(columns={'qid': 'query_id'})
    for measure in (AnswerFD(encoder=enc), AnswerCFD(encoder=enc)):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter('always')
            value = ir_measures.calc_aggregate([measure], QRELS, partial)[measure]
        said = [str(w.message) for w in caught if 'have no answer' in str(w.message)]
        assert said == [f'{measure}: 1 of 3 queries with a reference have no answer; the measure is over the answered '
                        'queries only, so a system that answers fewer queries can score better — compare systems on '
                        'the queries every one answers, or report the number answered beside it']
        assert np.isfinite(value)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter('always')
            ir_measures.calc_aggregate([measure], QRELS, ANSWERS.rename(columns={'qid': 'query_id'}))
        assert not [w for w in caught if 'have no answer' in str(w.message)]
