"""Leave-one-query-out statistics end to end: FD(jackknife=True)'s contract with ir_measures and pt.Experiment
(issue 25 item 5, S1, S7, U6), the bootstrap's jackknife, and DL19 through every path. The downdating itself against a
plain numpy loop and the weight-matrix path is tests/test_weighted.py; the pseudo-values, tests/test_jackknife.py.
"""
import warnings

import ir_measures
import numpy as np
import pandas as pd
import pyterrier as pt
import pytest
import scipy.stats
from ir_measures import RR, P, nDCG

import pyterrier_frechet as pf
from conftest import INFORMATIVE_NOTES, SHARED, DictEncoder, needs_shared, reference_fd, reference_fd_eigh
from pyterrier_frechet.core.conditional import conditional_fds, conditional_frechet_distance, conditional_leave_out
from pyterrier_frechet.core.jackknife import leave_one_out_fds
from pyterrier_frechet.core.weighted import (jackknife_groups, leave_out_fds, per_query_weighted, relevant_leave_outs,
                                             weighted_fds)
from test_weighted import _weights


# --- FD(jackknife=True) beside other measures (issue 25 S1) -----------------------------------------------------

#: pt.Experiment(baseline=...)'s warning where some qrels queries are no jackknife unit (provider.warn_degrees_of_freedom)
DF_WARNING = r'.*2 of the 8 qrels queries have no relevant document at rel=1.*7 degrees of freedom, not the 5'


@pytest.fixture
def jk_data():
    """8 qrels queries, 6 with relevant documents (q6, q7 judged without one); two runs over them."""
    rng = np.random.default_rng(11)
    vectors = {f'd{i}': rng.normal(size=4) + (i % 3) for i in range(200)}
    qrels, runs = [], {'a': [], 'b': []}
    for k in range(8):
        docs = [f'd{20 * k + j}' for j in range(20)]
        for j, doc in enumerate(docs[:6]):
            qrels.append((f'q{k}', doc, (2 if j < 3 else 0) if k < 6 else 0))
        for name, shift in (('a', 0), ('b', 3)):
            for r, doc in enumerate(docs[shift:shift + 12]):
                runs[name].append((f'q{k}', doc, 100.0 - r))
    qrels = pd.DataFrame(qrels, columns=['qid', 'docno', 'label'])
    runs = {n: pd.DataFrame(v, columns=['qid', 'docno', 'score']) for n, v in runs.items()}
    return vectors, qrels, runs


def _numpy_pseudo_values(vectors, qrels, run, k=10):
    """Tukey's pseudo-values over the queries with relevant documents, from first principles."""
    rel = qrels[qrels.label >= 1]
    units = sorted(rel.qid.unique())
    top = run.sort_values(['qid', 'score', 'docno'], ascending=[True, False, False]).groupby('qid').head(k)
    top = top[top.qid.isin(units)]
    def sets(without=None):
        x = np.stack([vectors[d] for q, d in zip(rel.qid, rel.docno) if q != without])
        y = np.stack([vectors[d] for q, d in zip(top.qid, top.docno) if q != without])
        return x, y
    full = reference_fd_eigh(*sets())
    n = len(units)
    return {q: n * full - (n - 1) * reference_fd_eigh(*sets(q)) for q in units}


def test_jackknife_value_and_test_do_not_depend_on_the_other_measures(jk_data):
    vectors, qrels, runs = jk_data
    enc = DictEncoder(vectors)
    jk = pf.FD(encoder=enc, jackknife=True) @ 10
    plain = pf.FD(encoder=enc) @ 10
    pseudo = {name: _numpy_pseudo_values(vectors, qrels, run) for name, run in runs.items()}
    units = sorted(pseudo['a'])
    n, m = len(units), 8
    assert n == 6
    estimate = {name: float(np.mean(list(p.values()))) for name, p in pseudo.items()}
    diff = np.array([pseudo['a'][q] - pseudo['b'][q] for q in units])
    t_tukey = diff.mean() / (diff.std(ddof=1) / np.sqrt(n))
    p_expected = 2 * scipy.stats.t.sf(abs(t_tukey), m - 1)  # Tukey's t, on the M − 1 degrees of freedom of M rows
    qrels_ir = pt.model.to_ir_measures(qrels)
    topics = pd.DataFrame({'qid': [f'q{k}' for k in range(8)], 'query': ''})
    systems = [pt.Transformer.from_df(runs['a']), pt.Transformer.from_df(runs['b'])]
    neighbours = [[], [nDCG @ 10], [P @ 5], [RR], [plain], [nDCG @ 10, P @ 5, RR, plain]]
    for others in neighbours:
        measures = [jk] + others
        for name, run in runs.items():
            agg = ir_measures.calc_aggregate(measures, qrels_ir, pt.model.to_ir_measures(run))[jk]
            assert agg == pytest.approx(estimate[name], rel=1e-9), (others, name)
            rows = {r.query_id: r.value for r in ir_measures.iter_calc(measures, qrels_ir, pt.model.to_ir_measures(run))
                    if r.measure == jk}
            assert sorted(rows) == sorted(topics.qid) and np.mean(list(rows.values())) == pytest.approx(estimate[name], rel=1e-9)
        with warnings.catch_warnings():
            warnings.simplefilter('error', UserWarning)  # K7: no "topics not found in qrels"
            warnings.filterwarnings('ignore', message=INFORMATIVE_NOTES)  # what the rows and labels are, not a defect
            # q6, q7 have no relevant document: the paired test's M − 1 degrees of freedom are said (bad-inputs.md)
            warnings.filterwarnings('ignore', message=DF_WARNING)
            table = pt.Experiment(systems, topics, qrels, eval_metrics=measures, names=['a', 'b'], baseline=0)
        with pytest.warns(UserWarning, match=DF_WARNING):
            pt.Experiment(systems, topics, qrels, eval_metrics=measures, names=['a', 'b'], baseline=0)
        with warnings.catch_warnings():
            warnings.simplefilter('error', UserWarning)
            warnings.filterwarnings('ignore', message=INFORMATIVE_NOTES)  # what the rows and labels are, not a defect
            per_query = pt.Experiment(systems, topics, qrels, eval_metrics=measures, names=['a', 'b'], perquery=True)
        table = table.set_index('name')
        assert table.loc['a', str(jk)] == pytest.approx(estimate['a'], rel=1e-9), others
        assert table.loc['b', str(jk)] == pytest.approx(estimate['b'], rel=1e-9), others
        assert table.loc['b', f'{jk} p-value'] == pytest.approx(p_expected, rel=1e-7), others
        mine = per_query[per_query.measure == str(jk)].groupby('name')['value']
        assert mine.size().tolist() == [m, m] and mine.mean()['a'] == pytest.approx(estimate['a'], rel=1e-9)


def test_experiment_holm_correction_adjusts_fd_p_values_like_any_column(jk_data):
    """pt.Experiment(baseline=, correction='holm') adjusts FD's jackknife p-values as it adjusts nDCG's: the corrected
    column is statsmodels' Holm of the uncorrected FD p-values over the compared runs (three runs, two comparisons)."""
    from statsmodels.stats.multitest import multipletests
    vectors, qrels, runs = jk_data
    # a third run far from the relevant documents: unjudged documents d160–d199 on every query
    third = pd.DataFrame([(f'q{k}', f'd{160 + (5 * k + r) % 40}', 100.0 - r) for k in range(8) for r in range(12)],
                         columns=['qid', 'docno', 'score'])
    fd = pf.FD(encoder=DictEncoder(vectors)) @ 10
    topics = pd.DataFrame({'qid': [f'q{k}' for k in range(8)], 'query': ''})
    systems = [pt.Transformer.from_df(r) for r in (runs['a'], runs['b'], third)]
    table = pt.Experiment(systems, topics, qrels, eval_metrics=[fd, nDCG @ 10], names=['a', 'b', 'c'], baseline=0,
                          correction='holm').set_index('name')
    raw = table.loc[['b', 'c'], f'{fd} p-value'].to_numpy()
    assert np.isfinite(raw).all() and raw[0] != raw[1]
    reject, corrected, _, _ = multipletests(raw, alpha=0.05, method='holm')
    assert not np.allclose(corrected, raw)           # the correction changed them (0.263/0.408 → 0.526 both)
    assert np.allclose(table.loc[['b', 'c'], f'{fd} p-value corrected'].to_numpy(), corrected, rtol=1e-12)
    assert table.loc[['b', 'c'], f'{fd} reject'].tolist() == reject.tolist()


def _numpy_leave_outs(vectors, qrels, run, k=10, weighting='document'):
    """(FD, {unit query: FD without it}) from first principles: the sets gathered again for each left-out query."""
    rel = qrels[qrels.label >= 1]
    units = sorted(rel.qid.unique())
    top = run.sort_values(['qid', 'score', 'docno'], ascending=[True, False, False]).groupby('qid').head(k)
    top = top[top.qid.isin(units)]

    def fd(without=None):
        sides = []
        for frame in (rel, top):
            frame = frame[frame.qid != without]
            x = np.stack([vectors[d] for d in frame.docno])
            if weighting == 'query':  # every query weighs 1: its documents 1/n_q each (numpy.cov's aweights)
                w = 1.0 / frame.groupby('qid').docno.transform('size').to_numpy()
                mu = np.average(x, axis=0, weights=w)
                sides.append((mu, np.cov(x, rowvar=False, aweights=w)))
            else:
                sides.append((x.mean(axis=0), np.cov(x, rowvar=False)))
        (m1, c1), (m2, c2) = sides
        lam = np.linalg.eigvals(c1 @ c2).real
        return float((m1 - m2) @ (m1 - m2) + np.trace(c1) + np.trace(c2) - 2 * np.sqrt(np.clip(lam, 0, None)).sum())
    return fd(), {q: fd(q) for q in units}


@pytest.mark.parametrize('weighting', ['document', 'query'])
def test_experiment_baseline_test_of_plain_fd_is_the_jackknife_test(jk_data, weighting):
    # issue 27 item 2: FD's rows under pt.Experiment are centred pseudo-values: their mean is FD itself (the value
    # pf.evaluate prints) and the baseline= paired t-test is the jackknife t-test of the FD difference.
    vectors, qrels, runs = jk_data
    enc = DictEncoder(vectors)
    m = pf.FD(encoder=enc, weighting=weighting) @ 10
    full, loo = {}, {}
    for name, run in runs.items():
        full[name], loo[name] = _numpy_leave_outs(vectors, qrels, run, weighting=weighting)
    units = sorted(loo['a'])
    n, rows = len(units), 8  # 6 units among the 8 qrels queries
    delta = np.array([loo['a'][q] - loo['b'][q] for q in units])
    se = np.sqrt((n - 1) / n * np.sum((delta - delta.mean()) ** 2))
    t = (full['a'] - full['b']) / se
    p_expected = 2 * scipy.stats.t.sf(abs(t), rows - 1)
    topics = pd.DataFrame({'qid': [f'q{k}' for k in range(8)], 'query': ''})
    systems = [pt.Transformer.from_df(runs['a']), pt.Transformer.from_df(runs['b'])]
    for others in ([], [nDCG @ 10, RR]):
        with warnings.catch_warnings():
            warnings.simplefilter('error', UserWarning)
            warnings.filterwarnings('ignore', message=INFORMATIVE_NOTES)  # what the rows and labels are, not a defect
            warnings.filterwarnings('ignore', message=DF_WARNING)  # 2 of the 8 queries are no unit: M − 1 said
            table = pt.Experiment(systems, topics, qrels, eval_metrics=[m] + others, names=['a', 'b'], baseline=0)
        table = table.set_index('name')
        evaluated = pf.evaluate(runs, qrels, [m]).set_index('name')
        for name in runs:
            assert table.loc[name, str(m)] == pytest.approx(full[name], rel=1e-9)
            assert table.loc[name, str(m)] == pytest.approx(evaluated.loc[name].iloc[0], rel=1e-12)
        assert 0 < p_expected < 1
        assert table.loc['b', f'{m} p-value'] == pytest.approx(p_expected, rel=1e-6), others
    # compare's (and the paper table's) default test of the same difference: the same t statistic, on n − 1 degrees
    # of freedom over the n units (pt.Experiment's rows add the qrels queries without relevant documents to the df)
    with warnings.catch_warnings():
        warnings.simplefilter('ignore', UserWarning)  # few resamples: only the jackknife p is read here
        row = pf.compare_systems(runs, qrels, [m], n_samples=50, verbose=False).iloc[0]
    assert row.test == 'jackknife' and row.p_jackknife == pytest.approx(2 * scipy.stats.t.sf(abs(t), n - 1), rel=1e-6)


def test_experiment_baseline_test_of_cfd_is_its_jackknife_test(jk_data):
    vectors, qrels, runs = jk_data
    enc = DictEncoder(vectors)
    m = pf.CFD(encoder=enc) @ 10
    rel = qrels[qrels.label >= 1]
    units = sorted(rel.qid.unique())

    def cfd(run, without=None):
        top = run.sort_values(['qid', 'score', 'docno'], ascending=[True, False, False]).groupby('qid').head(10)
        keep = [q for q in units if q != without]
        x = [np.stack([vectors[d] for d in rel[rel.qid == q].docno]) for q in keep]
        y = [np.stack([vectors[d] for d in top[top.qid == q].docno]) for q in keep]
        return conditional_frechet_distance(np.concatenate(x), np.repeat(keep, [len(v) for v in x]),
                                            np.concatenate(y), np.repeat(keep, [len(v) for v in y]))
    full = {name: cfd(run) for name, run in runs.items()}
    delta = np.array([cfd(runs['a'], q) - cfd(runs['b'], q) for q in units])
    n = len(units)
    t = (full['a'] - full['b']) / np.sqrt((n - 1) / n * np.sum((delta - delta.mean()) ** 2))
    topics = pd.DataFrame({'qid': [f'q{k}' for k in range(8)], 'query': ''})
    table = pt.Experiment([pt.Transformer.from_df(runs['a']), pt.Transformer.from_df(runs['b'])], topics, qrels,
                          eval_metrics=[m, nDCG @ 10], names=['a', 'b'], baseline=0).set_index('name')
    assert table.loc['a', str(m)] == pytest.approx(full['a'], rel=1e-9)
    assert table.loc['b', f'{m} p-value'] == pytest.approx(2 * scipy.stats.t.sf(abs(t), 7), rel=1e-6)


def _pair_stats(m, qrels, run):
    """(rel, ret, shift, queries, sets) of one vector measure, selected as every entry point selects them."""
    from pyterrier_frechet.evaluation.frames import prepare_qrels, prepare_run, to_ir_measures
    from pyterrier_frechet.evaluation.selection import Judgments
    from pyterrier_frechet.evaluation.vector_sets import select_vector_sets
    from pyterrier_frechet.evaluation.vector_statistics import pair_query_stats
    judgments = Judgments(prepare_qrels(to_ir_measures(qrels), 'qrels'))
    queries = judgments.query_names.tolist()
    sets = select_vector_sets([m], judgments, prepare_run(to_ir_measures(run), 'run'))[m]
    rel, ret, shift = pair_query_stats(sets, len(queries))
    return rel, ret, shift, queries, sets


# --- DL19: every measure with a jackknife path equals the exact path it replaces ---------------------------------

MSMARCO = SHARED / 'data' / 'msmarco-passage'
VECTORS = SHARED / 'embeddings' / 'msmarco-passage.dl19-dl20.minilm'


@needs_shared()
@pytest.mark.shared
@pytest.mark.slow  # all 43 DL19 queries through every path; the toy tests above cover the same code fast
def test_dl19_leave_one_out_equals_the_exact_paths():
    from pyterrier_frechet.analyses import bootstrap as bs
    from pyterrier_frechet.core.frechet import frechet_distance
    from pyterrier_frechet.evaluation.frames import to_ir_measures
    from pyterrier_frechet.measures.base import column_label
    qrels = pt.io.read_qrels(str(MSMARCO / 'qrels.dl19-passage.txt'))
    run = pt.io.read_results(str(sorted((MSMARCO / 'runs').glob('run.dl19.*bm25*'))[0]))
    store = pf.VectorStore(str(VECTORS))
    qrels_ir, run_ir = to_ir_measures(qrels), to_ir_measures(run)
    queries = sorted(qrels_ir['query_id'].unique())
    worst = {}
    for m in (pf.FD(rel=2, encoder=store, missing='drop') @ 10, pf.FD(rel=2, encoder=store, missing='drop', weighting='query') @ 10,
              pf.CFD(rel=2, encoder=store, missing='drop') @ 10, pf.FD(rel=1, encoder=store, missing='drop') @ 10):
        rel, ret, shift, queries, sets = _pair_stats(m, qrels, run)
        if m.query_weighted():
            rel, ret = per_query_weighted(rel), per_query_weighted(ret)
        units = pd.Index(queries).isin(sets.queries)
        groups, g = jackknife_groups(units)
        w = _weights(units, groups, g)
        if m.NAME == 'CFD':
            new, old = conditional_leave_out(rel, ret, units, groups, g), conditional_fds(rel, ret, w)
        else:
            new, old = leave_out_fds(rel, ret, units, groups, g, shift), weighted_fds(rel, w, [ret], [w], shift)
        assert np.isfinite(old).all() and len(old) == units.sum() >= 43
        worst[str(m)] = float(np.max(np.abs(new - old) / np.abs(old)))
        assert worst[str(m)] <= 1e-11, m
        if m.NAME != 'CFD':  # the route pt.Experiment's rows take: the relevant side shared, each run's congruence
            for downdate in (True, False):  # downdated per leave-out (core/downdate.py), and the congruence route
                shared = relevant_leave_outs(rel, units, groups, g, shift, downdate=downdate)
                assert (shared.downdates is not None) == downdate
                got = leave_out_fds(rel, ret, units, groups, g, shift, relevant=shared)
                worst[f'{m} shared, downdate={downdate}'] = float(np.max(np.abs(got - old) / np.abs(old)))
                assert worst[f'{m} shared, downdate={downdate}'] <= 1e-11, (m, downdate)
        # the bootstrap's jackknife values are these (exact leave-one-out at DL19's size)
        res = pf.bootstrap({'bm25': run}, qrels, [m], n_samples=20, verbose=False)
        np.testing.assert_allclose(res.jackknife['bm25'][column_label(m)], old, rtol=1e-11)
        assert res.summary.iloc[0].jackknife == f'leave-one-out ({units.sum()} queries)'
    # DO and HSA: the pooled bin counts minus each query's, against the old weight-matrix path
    for m in (pf.DO @ 10, pf.HSA @ 10):
        ones = np.ones(len(queries), dtype=bool)
        res = pf.measures.resampling(m)
        stats = bs.STATISTICS[res.statistics](m, bs.RunInputs([m], None, qrels_ir, run_ir, queries))
        old = res.samples(m, stats, _weights(ones, *jackknife_groups(ones)), None)
        new = res.leave_out(m, stats, *jackknife_groups(ones), None)
        assert np.isfinite(old).all()
        worst[str(m)] = float(np.max(np.abs(new - old) / np.abs(old)))
        assert worst[str(m)] <= 1e-12, m
    # the provider's FD(jackknife=True): the pseudo-values of the plain loop over the vectors (the old core path)
    m = pf.FD(rel=2, encoder=store, missing='drop', jackknife=True) @ 10
    sets = _pair_stats(m, qrels, run)[4]
    rel_q, rel_x = np.asarray(sets.relevant.qids), sets.relevant.vecs
    ret_q, ret_x = np.asarray(sets.retrieved.qids), sets.retrieved.vecs
    loop = np.array([frechet_distance(rel_x[rel_q != q], ret_x[ret_q != q]) for q in sets.queries])
    new = leave_one_out_fds(rel_x, rel_q, ret_x, ret_q, sets.queries)
    worst['FD leave-one-out (vectors)'] = float(np.max(np.abs(new - loop) / np.abs(loop)))
    # from statistics, the leave-outs equal the plain loop over the vectors to round-off: the relevant side's covariance
    # is singular, and taking square roots of its eigenvalues cost ~1e-8 until the pivoted-Cholesky route
    assert worst['FD leave-one-out (vectors)'] <= 1e-12
    n, full = len(sets.queries), frechet_distance(rel_x, ret_x)
    got = {r.query_id: r.value for r in ir_measures.iter_calc([m], qrels_ir, run_ir)}
    got = np.array([got[q] for q in sets.queries])
    np.testing.assert_allclose(got, n * full - (n - 1) * new, rtol=1e-12, atol=1e-14)
    # a pseudo-value n·FD − (n−1)·FD₋q multiplies FD₋q's round-off by n − 1 and can lie near 0: absolute tolerance
    np.testing.assert_allclose(got, n * full - (n - 1) * loop, rtol=0, atol=(n - 1) * 1e-12 * full)
    worst['FD(jackknife=True) pseudo-values, absolute'] = float(np.max(np.abs(got - (n * full - (n - 1) * loop))))
    print('max relative difference', worst)


def test_bootstrap_summary_warns_and_leaves_the_interval_empty_on_an_undefined_leave_out(caplog):
    # S7 in the bootstrap: a NaN leave-out is counted in a warning, and the jackknife interval is not formed over
    # the rest (its n would be wrong)
    from pyterrier_frechet.analyses.bootstrap import IntervalNotes, _summary_row
    samples = np.linspace(1.0, 2.0, 50)
    with caplog.at_level('WARNING'):
        row = _summary_row('a', 'FD@10', 1.5, samples, 0.95, 'jackknife_bc', np.array([1.4, np.nan, 1.6]),
                           how=IntervalNotes('leave-one-out (3 queries)'))
    assert np.isnan(row['low']) and np.isnan(row['high']) and np.isnan(row['estimate'])
    assert '1 of 3 jackknife leave-outs are undefined' in caplog.text
    ok = _summary_row('a', 'FD@10', 1.5, samples, 0.95, 'jackknife', np.array([1.4, 1.5, 1.6]),
                      how=IntervalNotes('delete-a-group (G=3 groups of 9 queries, seed 0)', 'delete-a-group jackknife, G=3',
                                        n_groups=3))
    se = np.sqrt(2 / 3 * np.sum((np.array([1.4, 1.5, 1.6]) - 1.5) ** 2))  # the grouped jackknife's (G−1)/G formula
    t2 = 0.95 * np.sqrt(2 / (4 * 0.975 * 0.025))   # Student t's 0.975 quantile on G − 1 = 2 df, in closed form
    assert ok['low'] == pytest.approx(1.5 - t2 * se, rel=1e-12) and ok['high'] == pytest.approx(1.5 + t2 * se, rel=1e-12)
    assert ok['interval'] == 'jackknife (delete-a-group jackknife, G=3)' and ok['method'] == 'jackknife'


def test_bootstrap_grouped_jackknife_is_the_weight_matrix_path_over_seeded_groups(jk_data):
    from pyterrier_frechet.measures.base import column_label
    vectors, qrels, runs = jk_data
    m = pf.FD(encoder=DictEncoder(vectors)) @ 10
    with pytest.raises(ValueError, match="jackknife must be 'auto', 'exact' or a number of groups"):
        pf.bootstrap({'a': runs['a']}, qrels, [m], n_samples=10, jackknife=1, verbose=False)
    res = pf.bootstrap(runs, qrels, [m], n_samples=10, seed=4, jackknife=3, verbose=False)
    rel, ret, shift, queries, sets = _pair_stats(m, qrels, runs['a'])
    units = pd.Index(queries).isin(sets.queries)
    groups, g = jackknife_groups(units, 3, [4, 0x6A4B])
    w = _weights(units, groups, g)
    np.testing.assert_allclose(res.jackknife['a'][column_label(m)], weighted_fds(rel, w, [ret], [w], shift), rtol=1e-10)
    row = res.summary.set_index('name').loc['a']
    assert row.jackknife == 'delete-a-group (G=3 groups of 6 queries, seed 4)'
    assert row.interval == 'jackknife_log (delete-a-group jackknife, G=3)'
    exact = pf.bootstrap({'a': runs['a']}, qrels, [m], n_samples=10, seed=4, verbose=False).summary.iloc[0]
    assert exact.jackknife == 'leave-one-out (6 queries)' and exact.interval == 'jackknife_log'  # 'auto' below 500


def test_experiment_p_is_the_jackknife_t_test():
    from pyterrier_frechet.analyses.significance import experiment_p, jackknife_p
    jack = np.array([0.10, 0.12, 0.08, 0.11, 0.09])
    se = np.sqrt(4 / 5 * np.sum((jack - jack.mean()) ** 2))  # 0.01788…
    assert experiment_p(0.03, jack) == pytest.approx(2 * scipy.stats.t.sf(0.03 / se, 4), rel=1e-12)
    assert experiment_p(0.03, jack, n_rows=8) == pytest.approx(2 * scipy.stats.t.sf(0.03 / se, 7), rel=1e-12)
    # one row per leave-out: pt.Experiment's p is compare's (both t on n − 1), never below the normal reference's
    assert experiment_p(0.03, jack) == jackknife_p(0.03, jack) > jackknife_p(0.03, jack, df=np.inf)


@needs_shared()
@pytest.mark.shared
@pytest.mark.slow  # 30 resamples of DL19 bm25 through the plain loop over the vectors
def test_dl19_bootstrap_resamples_equal_the_plain_loop_over_the_vectors():
    """The bootstrap's FD per resample (from re-weighted statistics; at d = 384 both covariances of a resample are
    singular) equals FD recomputed from the resampled vectors themselves (``bootstrap_naive``, the exact cross-matrix
    route) to 1e-11: measured 6.4e-15 with the pivoted-Cholesky route, 2.6e-8 with the eigendecomposition route before."""
    from pyterrier_frechet.analyses.bootstrap import bootstrap_naive
    from pyterrier_frechet.measures.base import column_label
    qrels = pt.io.read_qrels(str(MSMARCO / 'qrels.dl19-passage.txt'))
    run = pt.io.read_results(str(sorted((MSMARCO / 'runs').glob('run.dl19.*bm25*'))[0]))
    m = pf.FD(rel=2, encoder=pf.VectorStore(str(VECTORS)), missing='drop') @ 10
    fast = pf.bootstrap({'bm25': run}, qrels, [m], n_samples=30, seed=0, verbose=False).samples['bm25'][column_label(m)]
    naive = bootstrap_naive(run, qrels, m, n_samples=30, seed=0)
    assert np.isfinite(naive).all() and len(np.unique(naive)) == 30
    np.testing.assert_allclose(fast, naive, rtol=1e-11)


def _near_degenerate(s, d, n_queries=8, seed=1):
    """A relevant side of one direction (rank 1 around a unit vector) and runs that retrieve near-copies of the
    relevant documents: FD is 1e-7 to 1e-12 of the vectors' squared norm (issue 64 item 4)."""
    rng = np.random.default_rng(seed)
    base = rng.normal(size=d)
    base /= np.linalg.norm(base)
    axis = rng.normal(size=d)
    axis /= np.linalg.norm(axis)
    vectors, qrels, run = {}, [], []
    for q in range(n_queries):
        for j in range(4):
            vectors[f'q{q}r{j}'] = base + s * rng.normal() * axis
            vectors[f'q{q}c{j}'] = vectors[f'q{q}r{j}'] + s * 1e-3 * rng.normal(size=d)
            qrels.append((f'q{q}', f'q{q}r{j}', 1))
            run.append((f'q{q}', f'q{q}c{j}', 10.0 - j))
    return vectors, pd.DataFrame(qrels, columns=['qid', 'docno', 'label']), pd.DataFrame(run, columns=['qid', 'docno', 'score'])


@pytest.mark.parametrize('s,d', [(1e-1, 8), (1e-3, 8), (1e-3, 24)])
def test_leave_outs_keep_the_full_sets_digits_where_fd_is_tiny(s, d):
    """Against 40-digit FDs of the vectors left in: the leave-one-query-out FDs (the bootstrap's jackknife, the
    route of the intervals and tests) are as accurate as the full set's FD, here ≤ 1e-9 relative where FD is 1e-7 to
    1e-12 of the vectors' squared norm. (Measured 2026-11-28: both 3e-12 to 6e-11, d = 8 and 64.)"""
    vectors, qrels, run = _near_degenerate(s, d)
    m = pf.FD(encoder=DictEncoder(vectors)) @ 4
    boot = pf.bootstrap({'r': run}, qrels, [m], n_samples=20, verbose=False)
    rel, ret = qrels.groupby('qid')['docno'].apply(list), run.groupby('qid')['docno'].apply(list)
    queries = sorted(rel.index)

    def fd_of(kept):
        return float(reference_fd(np.stack([vectors[x] for q in kept for x in rel[q]]),
                                  np.stack([vectors[x] for q in kept for x in ret[q]]), dps=40))
    full = fd_of(queries)
    assert full < 1e-6
    assert boot.point.set_index('name').loc['r', str(m)] == pytest.approx(full, rel=1e-9)
    jack = np.asarray(boot.jackknife['r'][str(m)], dtype=np.float64)
    for i in (0, 3, 7):
        assert jack[i] == pytest.approx(fd_of([q for q in queries if q != queries[i]]), rel=1e-9)
