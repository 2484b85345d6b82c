"""pt.Experiment(baseline=...)'s p-value for every measure family, differentially (bad-input review of the rows).

A family whose rows are jackknife pseudo-values (FD, FD(weighting='query'), CFD, FD(jackknife=True), a registered
third-party measure with a resampling of vector statistics) must give the jackknife t-test on n − 1 degrees of
freedom over its n units (queries with a relevant document at the measure's ``rel``): PyTerrier's p against
``pf.compare_systems(test='jackknife')``'s and against ``scipy.stats.ttest_rel`` on pseudo-values computed here from
leave-one-query-out values of ``pf.evaluate`` on the qrels without each unit query. Where some judged queries have no
relevant document at ``rel`` (FD(rel=2) below: q6 and q7 are judged 1 at most) PyTerrier's rows cannot carry n − 1
degrees of freedom (provider.warn_degrees_of_freedom says why): the p-value is the jackknife t on M − 1, and a warning
says so. The families whose rows repeat their value (FDInf, KID, k-NN P/R, DO, HSA, AnswerFD, AnswerCFD, a registered
measure without such a resampling) must warn that the paired test on them is meaningless."""
import warnings

import numpy as np
import pandas as pd
import pyterrier as pt
import pytest
import scipy.stats

import pyterrier_frechet as pf
from conftest import INFORMATIVE_NOTES, DictEncoder
from pyterrier_frechet.measures.base import VECTOR_PARAMS, VectorMeasure, register_measure, unregister_measure
from pyterrier_frechet.measures.resampling import VECTOR_STATS, Resampling

M = 8  # judged queries
RUN_NAMES = ['a', 'b']


@pytest.fixture(scope='module')
def data():
    """8 judged queries: q0–q5 with three documents labelled 2, q6 and q7 with three labelled 1 (no relevant document
    at rel=2); every query has three more judged 0. Two runs of 12 documents per query, shifted by 3."""
    rng = np.random.default_rng(52)
    vectors = {f'd{i}': rng.normal(size=4) + (i % 3) for i in range(200)}
    qrels, runs = [], {'a': [], 'b': []}
    for k in range(M):
        docs = [f'd{20 * k + j}' for j in range(20)]
        for j, doc in enumerate(docs[:6]):
            qrels.append((f'q{k}', doc, (2 if k < 6 else 1) if j < 3 else 0))
        for name, shift in (('a', 0), ('b', 3)):
            for r, doc in enumerate(docs[shift:shift + 12]):
                runs[name].append((f'q{k}', doc, 100.0 - r))
    qrels = pd.DataFrame(qrels, columns=['qid', 'docno', 'label'])
    runs = {n: pd.DataFrame(v, columns=['qid', 'docno', 'score']) for n, v in runs.items()}
    topics = pd.DataFrame({'qid': [f'q{k}' for k in range(M)], 'query': 'x'})
    return vectors, qrels, runs, topics


def _experiment(data, measure, **kw):
    _, qrels, runs, topics = data
    systems = [pt.Transformer.from_df(runs[n]) for n in RUN_NAMES]
    return pt.Experiment(systems, topics, qrels, eval_metrics=[measure], names=RUN_NAMES, baseline=0,
                         **kw).set_index('name')


def _reference(data, measure, rel, tukey=False):
    """(t, p on n − 1, n) of scipy.stats.ttest_rel on pseudo-values made here from pf.evaluate with each unit query
    removed from the qrels: Tukey's n·θ̂ − (n−1)·θ̂₋q (``tukey``: FD(jackknife=True)'s test), else the same re-centred
    on θ̂ (centred pseudo-values: the t statistic Δθ̂ / SE_J of the jackknife test of the difference)."""
    _, qrels, runs, _ = data
    units = sorted(qrels[qrels.label >= rel].qid.unique())
    n = len(units)
    value_of = measure(jackknife=False) if tukey else measure
    full = pf.evaluate(runs, qrels, [value_of]).set_index('name').iloc[:, 0]
    pseudo = {name: [] for name in RUN_NAMES}
    for q in units:
        without = pf.evaluate(runs, qrels[qrels.qid != q], [value_of]).set_index('name').iloc[:, 0]
        for name in RUN_NAMES:
            pseudo[name].append(n * full[name] - (n - 1) * without[name])
    rows = {name: np.array(v) for name, v in pseudo.items()}
    if not tukey:
        rows = {name: v - v.mean() + full[name] for name, v in rows.items()}
    t, p = scipy.stats.ttest_rel(rows['b'], rows['a'])
    return float(t), float(p), n


def _compare_p(data, measure):
    _, qrels, runs, _ = data
    with warnings.catch_warnings():
        warnings.simplefilter('ignore', UserWarning)  # few resamples: only the jackknife p is read
        row = pf.compare_systems(runs, qrels, [measure], baseline='a', n_samples=50, test='jackknife',
                                 verbose=False).iloc[0]
    assert row.test == 'jackknife'
    return float(row.p_jackknife)


class MeanShiftResampling(Resampling):
    name = 'mean_shift_diff'
    statistics = VECTOR_STATS
    interval = 'jackknife'
    estimand = 'E[mean shift] at this number of queries'
    paired_test = 'jackknife'
    grouped_jackknife = True

    def samples(self, measure, stats, weights, engine, pbar=None):
        rel, ret = stats.rel, stats.ret
        with np.errstate(invalid='ignore', divide='ignore'):
            diff = (weights @ rel.s) / (weights @ rel.n)[:, None] - (weights @ ret.s) / (weights @ ret.n)[:, None]
        return np.einsum('ij,ij->i', diff, diff)


@pytest.fixture
def third_party():
    """A measure defined and registered outside the package (as tests/test_add_a_measure.py does), with a resampling
    of vector statistics (its rows are pseudo-values), and one without a resampling (its rows repeat its value)."""
    class _Shift(VectorMeasure):
        __name__ = 'MeanShiftDiffToy'
        NAME = __name__
        SHORT_DESC = 'Squared distance between the mean embeddings (lower is better).'
        HIGHER_IS_BETTER = False
        SUPPORTED_PARAMS = dict(VECTOR_PARAMS)
        RESAMPLING = MeanShiftResampling()

        def statistic(self, relevant, retrieved, relevant_key=None):
            diff = relevant.mean(axis=0) - retrieved.mean(axis=0)
            return float(diff @ diff)

    class _Plain(_Shift):
        __name__ = 'MeanShiftPlainToy'
        NAME = __name__
        RESAMPLING = None

    made = [register_measure(_Shift()), register_measure(_Plain())]
    yield made
    for m in made:
        unregister_measure(m)


def _families(vectors):
    enc = DictEncoder(vectors)
    return {
        'FD': pf.FD(encoder=enc) @ 10,
        "FD(weighting='query')": pf.FD(encoder=enc, weighting='query') @ 10,
        'CFD': pf.CFD(encoder=enc) @ 10,
    }


@pytest.mark.parametrize('family', ['FD', "FD(weighting='query')", 'CFD', 'third-party'])
def test_every_query_a_unit_pt_experiment_gives_the_jackknife_test_on_n_minus_1(data, family, third_party):
    """rel=1: all 8 judged queries are units (M = n): PyTerrier's p = compare's = ttest_rel on the pseudo-values."""
    vectors = data[0]
    measure = (third_party[0](encoder=DictEncoder(vectors)) @ 10 if family == 'third-party'
               else _families(vectors)[family])(rel=1)
    t, p_ref, n = _reference(data, measure, rel=1)
    assert n == M
    with warnings.catch_warnings():
        warnings.simplefilter('error', UserWarning)  # a valid test: no warning
        warnings.filterwarnings('ignore', message=INFORMATIVE_NOTES)  # what the rows and labels are, not a defect
        table = _experiment(data, measure)
    p_pt = table.loc['b', f'{measure} p-value']
    assert 0 < p_ref < 1
    assert p_pt == pytest.approx(p_ref, rel=1e-6)
    assert _compare_p(data, measure) == pytest.approx(p_ref, rel=1e-6)
    # the table's value is the measure's (the mean of the rows)
    evaluated = pf.evaluate(data[2], data[1], [measure]).set_index('name').iloc[:, 0]
    assert table.loc['b', str(measure)] == pytest.approx(evaluated['b'], rel=1e-9)


@pytest.mark.parametrize('family', ['FD', "FD(weighting='query')", 'CFD', 'third-party', 'FD(jackknife=True)'])
def test_judged_queries_without_a_relevant_document_are_no_units_and_the_df_gap_is_warned(data, family, third_party):
    """rel=2: q6 and q7 are judged but have no relevant document (n = 6 units of M = 8). compare's p is the
    jackknife test on n − 1 = 5 (= ttest_rel on the 6 pseudo-values); PyTerrier's rows are one per judged query
    (the non-units get the mean, the units' rows stretched): the same t statistic, on M − 1 = 7 degrees of freedom —
    a smaller p, which pt.Experiment now says in a warning."""
    vectors = data[0]
    tukey = family == 'FD(jackknife=True)'
    if family == 'third-party':
        measure = third_party[0](encoder=DictEncoder(vectors)) @ 10
    elif tukey:
        measure = pf.FD(encoder=DictEncoder(vectors), jackknife=True) @ 10
    else:
        measure = _families(vectors)[family]
    measure = measure(rel=2)
    t, p_ref, n = _reference(data, measure, rel=2, tukey=tukey)
    assert n == 6
    with pytest.warns(UserWarning, match=r'2 of the 8 qrels queries have no relevant document at rel=2, so the paired '
                                         r't-test .* has 7 degrees of freedom, not the 5 of its jackknife test'):
        table = _experiment(data, measure)
    p_pt = table.loc['b', f'{measure} p-value']
    assert p_pt == pytest.approx(2 * scipy.stats.t.sf(abs(t), M - 1), rel=1e-6)  # the same t, on M − 1
    assert p_pt < p_ref
    if not tukey:  # compare has no FD(jackknife=True) (its estimate is the bias-corrected p̄, not FD)
        assert _compare_p(data, measure) == pytest.approx(p_ref, rel=1e-6)
    # the rows of the non-units are the mean (not absent, not NaN); so the table's value is the measure's
    _, qrels, runs, topics = data
    per_query = pt.Experiment([pt.Transformer.from_df(runs[n]) for n in RUN_NAMES], topics, qrels,
                              eval_metrics=[measure], names=RUN_NAMES, perquery=True)
    rows = per_query[per_query.name == 'b'].set_index('qid')['value']
    assert len(rows) == M and np.isfinite(rows).all()
    assert rows['q6'] == rows['q7'] == pytest.approx(rows.mean(), rel=1e-12)
    # outside pt.Experiment(baseline=...) the rows are given without the warning
    with warnings.catch_warnings():
        warnings.simplefilter('error', UserWarning)
        warnings.filterwarnings('ignore', message=INFORMATIVE_NOTES)  # what the rows and labels are, not a defect
        pt.Experiment([pt.Transformer.from_df(runs[n]) for n in RUN_NAMES], topics, qrels, eval_metrics=[measure],
                      names=RUN_NAMES, perquery=True)


def test_the_warning_goes_away_when_the_non_units_leave_topics_and_qrels(data):
    """The remedy the warning names: with q6 and q7 left out, FD(rel=2)'s p is the jackknife test on n − 1."""
    vectors, qrels, runs, topics = data
    measure = pf.FD(encoder=DictEncoder(vectors), rel=2) @ 10
    _, p_ref, _ = _reference(data, measure, rel=2)
    keep = [f'q{k}' for k in range(6)]
    reduced = (vectors, qrels[qrels.qid.isin(keep)], runs, topics[topics.qid.isin(keep)])
    with warnings.catch_warnings():
        warnings.simplefilter('error', UserWarning)
        warnings.filterwarnings('ignore', message=INFORMATIVE_NOTES)  # what the rows and labels are, not a defect
        table = _experiment(reduced, measure)
    assert table.loc['b', f'{measure} p-value'] == pytest.approx(p_ref, rel=1e-6)


@pytest.mark.parametrize('family', ['FDInf', 'KID', 'KNNPrecision', 'KNNRecall', 'DO', 'HSA', 'third-party plain'])
def test_families_without_a_leave_out_warn_that_the_test_is_meaningless(data, family, third_party):
    vectors = data[0]
    enc = DictEncoder(vectors)
    measure = {
        'FDInf': lambda: pf.FDInf(encoder=enc) @ 10,
        'KID': lambda: pf.KID(encoder=enc) @ 10,
        'KNNPrecision': lambda: pf.KNNPrecision(encoder=enc) @ 10,
        'KNNRecall': lambda: pf.KNNRecall(encoder=enc) @ 10,
        'DO': lambda: pf.DO @ 10,
        'HSA': lambda: pf.HSA @ 10,
        'third-party plain': lambda: third_party[1](encoder=enc) @ 10,
    }[family]()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter('always')
        table = _experiment(data, measure)
    messages = [str(w.message) for w in caught if issubclass(w.category, UserWarning)]
    assert any(m.startswith(f'{measure}: its per-query rows repeat its value') and 'is meaningless' in m
               for m in messages), messages
    p = table.loc['b', f'{measure} p-value']
    assert np.isnan(p) or p in (0.0, 1.0) or p < 1e-10  # constant differences: no evidence either way


@pytest.mark.parametrize('kind', ['AnswerFD', 'AnswerCFD'])
def test_answer_measures_warn_that_the_test_is_meaningless(kind):
    """AnswerFD and AnswerCFD repeat their value on every row (no leave-one-query-out path): the same warning."""
    from test_answers import ANSWERS, QRELS, TOPICS, BagEncoder, DOCS
    enc = BagEncoder(DOCS)
    measure = getattr(pf, kind)(encoder=enc)
    other = ANSWERS.assign(qanswer=['wing drag', 'heat shock', 'flow flow heat', 'wing heat', 'shock'])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter('always')
        table = pt.Experiment([ANSWERS, other], TOPICS, QRELS, eval_metrics=[measure], names=['a', 'b'], baseline=0,
                              validate='ignore').set_index('name')
    messages = [str(w.message) for w in caught if issubclass(w.category, UserWarning)]
    assert any(m.startswith(f'{measure}: its per-query rows repeat its value') and 'is meaningless' in m
               for m in messages), messages
    assert np.isfinite(table.loc['b', str(measure)])
    with warnings.catch_warnings():  # calc_aggregate forms no rows: no warning
        warnings.simplefilter('error', UserWarning)
        warnings.filterwarnings('ignore', message=INFORMATIVE_NOTES)  # what the rows and labels are, not a defect
        import ir_measures
        ir_measures.calc_aggregate([measure], QRELS, ANSWERS.rename(columns={'qid': 'query_id'}))
