"""Bootstrap over queries: the fast path equals the plain loop for the same seed."""
import numpy as np
import pandas as pd
import pytest
import scipy.stats
from ir_measures import nDCG, RR

import pyterrier_frechet as pf
from pyterrier_frechet.analyses.bootstrap import bootstrap, bootstrap_naive, draw_counts, draw_queries
from conftest import DictEncoder


def test_draws_are_seeded_and_consistent():
    counts = draw_counts(5, 20, seed=3)
    assert counts.shape == (20, 5) and (counts.sum(axis=1) == 5).all()
    drawn = draw_queries(list('abcde'), 20, seed=3)
    for row, names in zip(counts, drawn):
        assert row.tolist() == [names.count(q) for q in 'abcde']
    assert (draw_counts(5, 20, seed=3) == counts).all() and not (draw_counts(5, 20, seed=4) == counts).all()


@pytest.mark.parametrize('measure', [pf.FD @ 3, pf.FD(urr=True) @ 3, pf.FD(rel=2) @ 5, pf.FD(weighting='query') @ 3,
                                     pf.CFD @ 3, nDCG @ 3, RR @ 3, pf.DO(bins=4)])
def test_fast_bootstrap_equals_plain_loop(toy, measure):
    vectors, qrels, run = toy
    enc = DictEncoder(vectors)
    m = measure(encoder=enc) if measure.NAME in ('FD', 'CFD') else measure
    fast = bootstrap({'sys': run}, qrels, [m], n_samples=40, seed=7)
    naive = bootstrap_naive(run, qrels, m, n_samples=40, seed=7)
    got = fast.samples['sys'][str(m)]
    assert np.isfinite(naive).sum() >= 20
    np.testing.assert_array_equal(np.isfinite(got), np.isfinite(naive))
    np.testing.assert_allclose(got[np.isfinite(got)], naive[np.isfinite(naive)], rtol=1e-11, atol=1e-13)


def test_summary_columns_and_interval(toy):
    vectors, qrels, run = toy
    # @5, not @3: at @3 leaving q1 out leaves q2's three relevant documents against the same three retrieved ones,
    # an FD of exactly 0, where the log scale is undefined (that fallback: test_log_scale_interval_falls_back_...)
    m = pf.FD(encoder=DictEncoder(vectors)) @ 5
    res = bootstrap({'a': run, 'b': run.assign(score=-run.score)}, qrels, [m, nDCG @ 3], n_samples=200, seed=1)
    s = res.summary.set_index(['name', 'measure'])
    assert list(res.summary.columns) == ['name', 'measure', 'value', 'estimate', 'low', 'high', 'interval', 'method',
                                         'groups', 'notes', 'estimand', 'jackknife', 'mean', 'std', 'n_valid']
    # the method and its groups are for code; what is printed carries every word of them in `interval`
    from pyterrier_frechet.analyses.bootstrap import printed_summary
    assert 'method' not in printed_summary(res.summary) and (res.summary['method'] == ['jackknife_log', 't'] * 2).all()
    # FD: by default the full-set FD (the paper's) inside the jackknife interval of log FD, an interval for E[FD̂ₙ]
    # (test_intervals checks the interval by hand; here it is formed from the leave-one-out values the result keeps)
    row = s.loc[('a', str(m))]
    assert row.interval == 'jackknife_log' and row.estimate == row.value and row.low <= row.value <= row.high
    assert row.n_valid > 150 and row.estimand == 'E[FD̂ₙ] at this number of queries'
    logs = np.log(res.jackknife['a'][str(m)])
    se = np.sqrt((len(logs) - 1) / len(logs) * np.sum((logs - logs.mean()) ** 2))
    t = scipy.stats.t.ppf(0.975, len(logs) - 1)  # the t reference on n − 1 degrees of freedom (n leave-outs)
    assert (row.low, row.high) == pytest.approx((row.value * np.exp(-t * se), row.value * np.exp(t * se)), rel=1e-12)
    # nDCG: the Student t interval of the mean over the per-query values (scipy's, from ir_measures' own per-query nDCG)
    import ir_measures, pyterrier as pt
    row_n = s.loc[('a', 'nDCG@3')]
    per_query = [r.value for r in ir_measures.iter_calc([nDCG @ 3], pt.model.to_ir_measures(qrels),
                                                         pt.model.to_ir_measures(run))]
    assert row_n.interval == 't' and row_n.estimate == row_n.value == pytest.approx(np.mean(per_query))
    assert row_n.estimand == 'population mean' and row_n.jackknife == f'leave-one-out ({len(per_query)} queries)'
    low, high = scipy.stats.t.interval(0.95, len(per_query) - 1, loc=np.mean(per_query), scale=scipy.stats.sem(per_query))
    assert (row_n.low, row_n.high) == pytest.approx((max(low, min(per_query)), min(high, max(per_query))), rel=1e-12)
    # asked for, the percentile interval of the resampled means
    vals = res.samples['a']['nDCG@3']
    row_p = bootstrap({'a': run}, qrels, [nDCG @ 3], n_samples=200, seed=1, interval='percentile').summary.iloc[0]
    assert row_p.interval == 'percentile' and row_p.estimate == row_p.value
    assert row_p.low == pytest.approx(np.quantile(vals, 0.025)) and row_p.high == pytest.approx(np.quantile(vals, 0.975))
    pct = bootstrap({'a': run}, qrels, [m], n_samples=200, seed=1, interval='percentile').summary.iloc[0]
    valid = res.samples['a'][str(m)][np.isfinite(res.samples['a'][str(m)])]
    assert (pct.low, pct.high) == pytest.approx(tuple(np.quantile(valid, [0.025, 0.975])))
    # the full-set value is the measure's own
    assert row.value == pytest.approx(ir_measures.calc_aggregate([m], pt.model.to_ir_measures(qrels), pt.model.to_ir_measures(run))[m])
    with pytest.raises(ValueError, match='ci'):
        bootstrap({'a': run}, qrels, [m], ci=1.5)


def test_missing_vectors_follow_the_measure_policy(toy):
    vectors, qrels, run = toy
    partial = DictEncoder({k: v for k, v in vectors.items() if k != 'd2'})
    with pytest.raises(ValueError, match=r"have no vector, e.g. \['d2'\]"):
        bootstrap({'sys': run}, qrels, [pf.FD(encoder=partial) @ 3], n_samples=5)
    dropped = bootstrap({'sys': run}, qrels, [pf.FD(encoder=partial, missing='drop') @ 3], n_samples=20, seed=2)
    naive = bootstrap_naive(run, qrels, pf.FD(encoder=partial, missing='drop') @ 3, n_samples=20, seed=2)
    got = dropped.samples['sys'][str(pf.FD(encoder=partial) @ 3)]  # samples are keyed by the column label (no missing=)
    ok = np.isfinite(naive)
    np.testing.assert_array_equal(np.isfinite(got), ok)
    np.testing.assert_allclose(got[ok], naive[ok], rtol=1e-7, atol=1e-12)  # some samples have FD 0 (identical sets): round-off


@pytest.mark.parametrize('measure', [pf.DO(bins=5), pf.HSA(bins=5), pf.HSA(bins=4, norm='rank', unjudged='nonrel') @ 20])
def test_fast_histogram_bootstrap_equals_plain_loop(measure):
    # 12 queries × 30 scored documents with random grades (a third unjudged) and scores that favour higher grades
    rng = np.random.default_rng(5)
    run_rows, qrels_rows = [], []
    for q in range(12):
        for i in range(30):
            grade = int(rng.integers(-1, 3))
            run_rows.append((f'q{q}', f'q{q}d{i}', float(grade + rng.normal(scale=1.5))))
            if grade >= 0:
                qrels_rows.append((f'q{q}', f'q{q}d{i}', grade))
    run = pd.DataFrame(run_rows, columns=['qid', 'docno', 'score'])
    qrels = pd.DataFrame(qrels_rows, columns=['qid', 'docno', 'label'])
    fast = bootstrap({'sys': run}, qrels, [measure], n_samples=60, seed=3, verbose=False).samples['sys'][str(measure)]
    naive = bootstrap_naive(run, qrels, measure, n_samples=60, seed=3)
    assert np.isfinite(naive).all() and len(np.unique(naive)) > 30  # the samples differ, and every one has a value
    np.testing.assert_allclose(fast, naive, rtol=1e-12)


@pytest.mark.parametrize('d', [3, 40, 100])  # covariances: both definite / relevant singular / both singular
def test_torch_backend_equals_numpy(d):
    # issue 8: the optional torch backend (CPU here; a GPU when present) equals the numpy path to 1e-8
    rng = np.random.default_rng(d)
    queries = [f'q{i}' for i in range(30)]
    qrels = pd.DataFrame({'qid': np.repeat(queries, 2), 'docno': [f'r{i}' for i in range(60)], 'label': 1})
    run = pd.DataFrame({'qid': np.repeat(queries, 4), 'docno': [f'd{i}' for i in range(120)],
                        'score': np.tile([4.0, 3.0, 2.0, 1.0], 30)})
    m = pf.FD(encoder=DictEncoder({doc: rng.normal(size=d) for doc in [*qrels.docno, *run.docno]})) @ 4
    expected = bootstrap({'s': run}, qrels, [m], n_samples=100, seed=3, verbose=False).samples['s'][str(m)]
    got = bootstrap({'s': run}, qrels, [m], n_samples=100, seed=3, verbose=False, backend='torch', device='cpu').samples['s'][str(m)]
    assert np.isfinite(expected).all()
    np.testing.assert_allclose(got, expected, rtol=1e-8)
    with pytest.raises(ValueError, match='backend'):
        bootstrap({'s': run}, qrels, [m], backend='jax')


def test_torch_backend_on_tiny_ill_conditioned_sets(toy):
    # 2-6 vectors in 6-d, resampled with duplicates: covariances singular or nearly so, where any route from
    # covariances loses about half the digits (square roots of eigenvalues near 0). Both backends stay within
    # 1e-7 of the exact values from the vectors (the plain loop).
    vectors, qrels, run = toy
    m = pf.FD(encoder=DictEncoder(vectors)) @ 4
    got = bootstrap({'s': run}, qrels, [m], n_samples=60, seed=3, verbose=False, backend='torch', device='cpu').samples['s'][str(m)]
    naive = bootstrap_naive(run, qrels, m, n_samples=60, seed=3)
    assert np.isfinite(naive).sum() >= 30
    np.testing.assert_array_equal(np.isfinite(got), np.isfinite(naive))
    np.testing.assert_allclose(got[np.isfinite(got)], naive[np.isfinite(naive)], rtol=1e-7, atol=1e-12)


def test_streamed_cross_products_give_the_same_fds_as_held_ones(monkeypatch):
    """Past the memory budget the per-query cross-products are streamed block by block (issue 18): the same FD per
    sample as with them held, for document and query weighting and for CFD, to round-off."""
    from pyterrier_frechet.core.conditional import conditional_fds
    from pyterrier_frechet.core.weighted import QueryStats, per_query_weighted, weighted_fds
    rng = np.random.default_rng(0)
    nq, d = 300, 6  # more than one block of 256 queries, each in sub-blocks of 64
    rq, tq = rng.integers(0, nq, 700), np.repeat(np.arange(nq), 4)
    rel, ret = rng.normal(size=(700, d)), rng.normal(size=(len(tq), d)) + 0.2
    shift = rel.mean(axis=0)
    held = [QueryStats(rq, rel, nq, shift), QueryStats(tq, ret, nq, shift)]
    streamed = [QueryStats(rq, rel, nq, shift, max_bytes=0), QueryStats(tq, ret, nq, shift, max_bytes=0)]
    assert not held[0].streamed and streamed[0].streamed and streamed[1].streamed
    import pyterrier_frechet.core.weighted as weighted
    monkeypatch.setattr(weighted, 'STREAM_SUMS_BYTES', 2 * held[0].packed_size * 8 * 100)  # chunks of 100 samples
    counts = draw_counts(nq, 300, seed=1).astype(np.float64)  # three streamed passes
    for transform in (lambda s: s, per_query_weighted):
        a = weighted_fds(transform(held[0]), counts, [transform(held[1])], [counts], shift)
        b = weighted_fds(transform(streamed[0]), counts, [transform(streamed[1])], [counts], shift)
        np.testing.assert_allclose(b, a, rtol=1e-10)
    np.testing.assert_allclose(conditional_fds(*streamed, counts[:40]), conditional_fds(*held, counts[:40]), rtol=1e-10)
    np.testing.assert_allclose(streamed[1].p, held[1].p, rtol=1e-12)
    # the torch backend streams them on its device the same way (CPU here): the numpy held path's FDs, for
    # document and query weighting, over several streamed passes and inner chunks
    from pyterrier_frechet.analyses.torch_backend import weighted_fds_torch
    for transform in (lambda s: s, per_query_weighted):
        a = weighted_fds(transform(held[0]), counts, [transform(held[1])], [counts], shift)
        b = weighted_fds_torch(transform(streamed[0]), counts, [transform(streamed[1])], [counts], shift, device='cpu')
        np.testing.assert_allclose(b, a, rtol=1e-8)


def test_log_scale_interval_falls_back_to_the_plain_jackknife_and_says_so(caplog):
    """A leave-one-out FD of 0 (a query's two sets identical once the others are left out) makes the log scale
    undefined: the plain jackknife interval, FD̂ ± t·SE_J, for the same estimand, named in the interval column."""
    from pyterrier_frechet.analyses.bootstrap import IntervalNotes, _summary_row
    jack = np.array([0.0, 0.4, 0.5])
    with caplog.at_level('WARNING'):
        row = _summary_row('a', 'FD@3', 0.3, np.linspace(0.2, 0.6, 20), 0.95, 'jackknife_log', jack,
                           how=IntervalNotes('leave-one-out (3 queries)'))
    se = np.sqrt(2 / 3 * np.sum((jack - jack.mean()) ** 2))
    t2 = 0.95 * np.sqrt(2 / (4 * 0.975 * 0.025))   # Student t's 0.975 quantile on n − 1 = 2 df, in closed form
    assert (row['low'], row['high']) == pytest.approx((0.3 - t2 * se, 0.3 + t2 * se))
    assert row['interval'].startswith('jackknife (log scale undefined') and row['estimand'].startswith('E[θ̂ₙ]')
    assert 'log-scale interval is undefined' in caplog.text


def test_the_runs_of_one_bootstrap_share_the_relevant_side_and_equal_each_run_alone():
    """Issue 50: with several runs the bootstrap makes and factors the relevant side of each sample once for all of
    them (``Resampling.samples_of_runs``); every run's samples, leave-outs and intervals equal those of the same run
    bootstrapped alone (one run: nothing shared)."""
    from conftest import DictEncoder
    from test_experiment_rows import _subspace_data
    vectors, qrels, runs = _subspace_data(33)
    runs['c'] = runs['a'].assign(score=lambda f: f['score'][::-1].to_numpy())
    enc = DictEncoder(vectors)
    measures = [pf.FD(encoder=enc) @ 10, pf.FD(encoder=enc, weighting='query') @ 5]
    together = pf.bootstrap(runs, qrels, measures, n_samples=60, seed=3, verbose=False)
    for name, run in runs.items():
        alone = pf.bootstrap({name: run}, qrels, measures, n_samples=60, seed=3, verbose=False)
        for label, values in alone.samples[name].items():
            np.testing.assert_allclose(together.samples[name][label], values, rtol=1e-10)
        cols = ['value', 'low', 'high']
        np.testing.assert_allclose(together.summary.query('name == @name')[cols].to_numpy(dtype=float),
                                   alone.summary[cols].to_numpy(dtype=float), rtol=1e-10)


def test_one_set_of_options_passes_through_and_two_are_refused(toy):
    """Issue 65 item 4: report, paper_table and compare_systems pass their checked ResamplingOptions through;
    the same numbers as the keywords, and a call that gives both (or options without a sample count) is refused."""
    from pyterrier_frechet.analyses.options import ResamplingOptions
    vectors, qrels, run = toy
    m = pf.FD(encoder=DictEncoder(vectors)) @ 5
    runs = {'a': run, 'b': run.assign(score=-run.score)}
    by_keywords = bootstrap(runs, qrels, [m, nDCG @ 3], n_samples=120, seed=3, ci=0.9, verbose=False)
    by_options = bootstrap(runs, qrels, [m, nDCG @ 3], options=ResamplingOptions(n_samples=120, seed=3, ci=0.9),
                           verbose=False)
    pd.testing.assert_frame_equal(by_keywords.summary, by_options.summary)
    with pytest.raises(ValueError, match=r"give options= .* or \['seed'\] as keywords, not both"):
        bootstrap(runs, qrels, [m], options=ResamplingOptions(n_samples=120), seed=4, verbose=False)
    with pytest.raises(ValueError, match='give options= \\(with its n_samples set\\)'):
        bootstrap(runs, qrels, [m], options=ResamplingOptions(), verbose=False)


def test_each_measure_is_resolved_once_into_the_plan_the_summary_reads(toy):
    # issue 65: label, resampling and interval method resolved once per measure (measures.base.MeasurePlan); the
    # summary rows, the samples' keys and the paired test a comparison reads come from those plans
    from pyterrier_frechet.measures.base import column_label, measure_plan, resampling
    vectors, qrels, run = toy
    fd = pf.FD(encoder=DictEncoder(vectors), missing='drop') @ 5
    runs = {'a': run, 'b': run.assign(score=-run.score)}
    for interval in (None, 'percentile'):
        res = bootstrap(runs, qrels, [fd, nDCG @ 3], n_samples=60, seed=1, interval=interval)
        assert [p.label for p in res.plans] == [column_label(fd), 'nDCG@3'] and 'missing' not in column_label(fd)
        for p in res.plans:
            assert p.resampling is resampling(p.measure) and p.interval == (interval or p.resampling.interval)
            rows = res.summary[res.summary['measure'] == p.label]
            assert len(rows) == 2 and (rows['method'] == p.interval).all()
            assert (rows['estimand'] == (p.resampling.estimand if interval is None else p.method.estimand_label)).all()
            assert set(res.samples['a']) == {q.label for q in res.plans}
            assert res.own_test(p.label) == p.resampling.paired_test
    assert [p.interval for p in res.plans] == ['percentile', 'percentile']
    assert [measure_plan(fd).interval, measure_plan(nDCG @ 3).interval] == ['jackknife_log', 't']
    from ir_measures import NumRet
    with pytest.raises(ValueError, match=r'^NumRet: '):  # a sum over queries: no resampling, no plan
        measure_plan(NumRet)
