"""Adding an interval method, as docs/CONTRIBUTING.md says: one :class:`IntervalMethod` registered (here inside a
fixture that removes it again) reaches every place that prints or reads an interval — the bootstrap's summary, the
paper table's captions, the report's notes, the calibration table — by its name, with its own computation, estimand
and caption words; nothing parses an interval's printed name back."""
import numpy as np
import pandas as pd
import pytest
from ir_measures import nDCG

import pyterrier_frechet as pf
from pyterrier_frechet.analyses.bootstrap import printed_summary
from pyterrier_frechet.analyses.calibration import World, coverage
from pyterrier_frechet.analyses.report import _interval_notes
from pyterrier_frechet.core import intervals
from pyterrier_frechet.core.intervals import INTERVAL_METHODS, IntervalMethod, interval, register_interval_method
from conftest import DictEncoder


def _middle_half(estimate, samples, jackknife, alpha, fpc, df):
    """A toy: the middle half of the resampled values, whatever the level."""
    return tuple(np.quantile(samples, [0.25, 0.75]))


@pytest.fixture
def middle_half():
    method = register_interval_method(IntervalMethod(
        'middle_half', 'interquartile bootstrap', 'middle of the resamples',
        'the middle half of the resampled values (a toy method for this test)', _middle_half))
    try:
        yield method
    finally:
        del INTERVAL_METHODS['middle_half']


@pytest.fixture(scope='module')
def world():
    rng = np.random.default_rng(3)
    docs = [f'd{i}' for i in range(300)]
    vectors = {d: rng.normal(size=8) for d in docs}
    qids = [f'q{i}' for i in range(12)]
    qrels = pd.DataFrame([{'qid': q, 'docno': docs[(i * 17 + j * 7) % 300], 'label': 1}
                          for i, q in enumerate(qids) for j in range(6)])

    def run(shift):
        return pd.DataFrame([{'qid': q, 'docno': docs[(i * 17 + j * 5 + shift) % 300], 'score': 10.0 - j}
                             for i, q in enumerate(qids) for j in range(8)])
    return vectors, qrels, {'a': run(0), 'b': run(3)}, qids


def test_a_registered_method_reaches_the_summary_the_table_and_the_notes(middle_half, world):
    vectors, qrels, runs, _ = world
    m = pf.FD(encoder=DictEncoder(vectors)) @ 5
    res = pf.bootstrap(runs, qrels, [m, nDCG @ 5], n_samples=200, seed=1, verbose=False, interval='middle_half')
    s = res.summary.set_index(['name', 'measure'])
    for name in runs:
        row = s.loc[(name, str(m))]
        # its own computation on the bootstrap's own resamples, its estimand in the cell, its name printed as is
        assert (row.low, row.high) == tuple(np.quantile(res.samples[name][str(m)], [0.25, 0.75]))
        assert (row.method, row.interval, row.estimand) == ('middle_half', 'middle_half', 'middle of the resamples')
    table = pf.PaperTable.from_results(res, [m, nDCG @ 5])
    assert 'interquartile bootstrap, for the middle of the resamples' in table.caption()
    assert 'interquartile bootstrap (200 samples) interval for the middle of the resamples' in table.caption(long=True)
    assert 'for the middle half of the resampled values (a toy method for this test).' in _interval_notes(res.summary)
    assert list(printed_summary(res.summary).columns) == [c for c in res.summary.columns
                                                          if c not in ('method', 'groups', 'notes')]


def test_a_registered_method_gets_a_calibration_row(middle_half):
    table = coverage(World(d=4), n_queries=(8,), n_trials=2, n_samples=40, n_reference=6, seed=2, verbose=False)
    assert {'FD', 'ΔFD'} == set(table[table.method == 'middle_half'].statistic)


def test_the_registry_refuses_a_taken_name_and_unknown_options_and_names_what_it_has():
    with pytest.raises(ValueError, match="named 'jackknife_log' is already registered"):
        register_interval_method(IntervalMethod('jackknife_log', 'x', 'x', 'x', _middle_half))
    with pytest.raises(ValueError, match="finite_population must be"):
        register_interval_method(IntervalMethod('toy', 'x', 'x', 'x', _middle_half, finite_population='scaled'))
    with pytest.raises(ValueError, match="centre must be"):
        register_interval_method(IntervalMethod('toy', 'x', 'x', 'x', _middle_half, centre='median'))
    assert 'toy' not in INTERVAL_METHODS
    with pytest.raises(ValueError, match=r"interval method must be one of \('percentile', .*'t'\), got 'nope'"):
        interval('nope', 1.0, [1.0, 2.0])


def test_a_method_without_a_finite_population_form_is_refused_one(middle_half):
    # the registry says how fpc enters; BCa has no form and is refused, the toy rescales its deviations from θ̂
    with pytest.raises(ValueError, match='the BCa bootstrap interval has no finite-population form'):
        interval('bca', 1.0, np.linspace(0, 2, 50), jackknife=np.linspace(0.9, 1.1, 5), fpc=0.5)
    low, high = interval('middle_half', 1.0, np.linspace(0, 2, 101), fpc=0.25)
    assert (low, high) == pytest.approx((1.0 - 0.5 * 0.5, 1.0 + 0.5 * 0.5), rel=1e-12)


def test_flags_are_read_from_the_registry():
    assert intervals.methods_where('positive_only') == ('jackknife_log',)
    assert set(intervals.methods_where('from_jackknife')) == {'jackknife', 'jackknife_log', 'jackknife_bc', 't'}
    assert set(intervals.methods_where('needs_jackknife')) == {'bca', 'jackknife', 'jackknife_log', 'jackknife_bc', 't'}


def test_a_cluster_bootstrap_caption_names_its_groups_once(world):
    # the old caption parsed 'percentile (cluster bootstrap over G=4 query groups)' and printed 'over 4 query groups)'
    vectors, qrels, runs, qids = world
    groups = pd.DataFrame({'qid': qids, 'group': [i // 3 for i in range(12)]})
    m = pf.FD(encoder=DictEncoder(vectors)) @ 5
    res = pf.bootstrap(runs, qrels, [m], n_samples=100, seed=1, verbose=False, interval='percentile', query_groups=groups)
    assert (res.summary['groups'] == 4).all() and (res.summary['method'] == 'percentile').all()
    caption = pf.PaperTable.from_results(res, [m]).caption()
    assert '95% intervals, over 4 query groups (' in caption and 'groups)' not in caption
