"""Adding a measure, as docs/CONTRIBUTING.md says: a toy vector measure with its own resampling and a toy histogram
measure, defined and registered inside a fixture that unregisters them, run through every subcommand that takes
measures and through pt.Experiment. The places a new resampled measure needs are counted here (PLACES) and stated
in CONTRIBUTING; the scan below keeps the entry points from growing a branch per kind of measure again."""
import io
import re
from pathlib import Path

import ir_measures
import numpy as np
import pandas as pd
import pytest

import pyterrier_frechet as pf
from pyterrier_frechet.analyses.bootstrap import draw_counts
from pyterrier_frechet.cli import main
from pyterrier_frechet.measures.base import (HISTOGRAM_PARAMS, VECTOR_PARAMS, HistogramMeasure, VectorMeasure,
                                             register_measure, registered_measures, unregister_measure)
from pyterrier_frechet.measures.resampling import VECTOR_STATS, Resampling
from conftest import DictEncoder
from test_cli import files  # noqa: F401  (the toy files fixture, used by name)

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / 'pyterrier_frechet'

#: What a new measure with its own resampling touches (docs/CONTRIBUTING.md "Adding a measure").
PLACES = ('core function (core/)', 'definition: the class, its Resampling, register_measure (measures/definitions.py)',
          'export (measures/__init__.py)', 'test', 'docs row (pt_docs/beyond-fd.rst)')


# --- place 1: the core functions (pure numpy) ---------------------------------------------------------------

def mean_shift(relevant: np.ndarray, retrieved: np.ndarray) -> float:
    diff = relevant.mean(axis=0) - retrieved.mean(axis=0)
    return float(diff @ diff)


def weighted_mean_shifts(rel, ret, weights: np.ndarray) -> np.ndarray:
    """The mean shift under each row of query weights, from per-query counts and (shifted) sums: the shift cancels."""
    with np.errstate(invalid='ignore', divide='ignore'):
        diff = (weights @ rel.s) / (weights @ rel.n)[:, None] - (weights @ ret.s) / (weights @ ret.n)[:, None]
    return np.einsum('ij,ij->i', diff, diff)


# --- place 2: the definitions (the resampling declared on the measure), registered; unregistered after ---------

class MeanShiftResampling(Resampling):
    name = 'mean_shift'
    statistics = VECTOR_STATS
    interval = 'jackknife'
    estimand = 'E[mean shift] at this number of queries'
    paired_test = 'jackknife'
    grouped_jackknife = True

    def samples(self, measure, stats, weights, engine, pbar=None):
        return weighted_mean_shifts(stats.rel, stats.ret, weights)

    def swapped(self, measure, stats_a, stats_b, swaps, engine):
        """The mean shift with the retrieved documents of the swapped queries taken from the other run."""
        full = np.ones_like(swaps)
        rel_mean = (full @ stats_a.rel.s) / (full @ stats_a.rel.n)[:, None]

        def shift(from_a, from_b):
            ret_mean = ((from_a @ stats_a.ret.s + from_b @ stats_b.ret.s)
                        / (from_a @ stats_a.ret.n + from_b @ stats_b.ret.n)[:, None])
            return np.einsum('ij,ij->i', rel_mean - ret_mean, rel_mean - ret_mean)
        return shift(1.0 - swaps, swaps) - shift(swaps, 1.0 - swaps)


@pytest.fixture
def toys():
    class _MeanShift(VectorMeasure):
        """Squared distance between the means of the relevant and the retrieved embeddings (a toy)."""
        __name__ = 'MeanShiftToy'
        NAME = __name__
        SHORT_DESC = 'Squared distance between the mean embeddings (lower is better).'
        HIGHER_IS_BETTER = False
        SUPPORTED_PARAMS = dict(VECTOR_PARAMS)
        RESAMPLING = MeanShiftResampling()

        def statistic(self, relevant, retrieved, relevant_key=None):
            return mean_shift(relevant, retrieved)

    class _RelevantScored(HistogramMeasure):
        """The number of relevant documents scored (a toy histogram measure: the histogram resampling is inherited)."""
        __name__ = 'RelScoredToy'
        NAME = __name__
        SHORT_DESC = 'Relevant documents scored (higher is better).'
        HIGHER_IS_BETTER = True
        SUPPORTED_PARAMS = dict(HISTOGRAM_PARAMS)

        def statistic(self, histograms):
            return float(np.sum(histograms.relevant))

    made = [register_measure(_MeanShift()), register_measure(_RelevantScored())]
    try:
        yield made
    finally:
        for m in made:
            unregister_measure(m)


def _expected_mean_shift(vectors, qrels, run, k=3, counts=None):
    """FD's two sets by hand (relevant: label >= 1; retrieved: top k of each query with a relevant document), each
    query's documents repeated ``counts[q]`` times (queries in sorted order)."""
    queries = sorted(qrels.qid.unique())
    counts = dict(zip(queries, np.ones(len(queries), int) if counts is None else counts))
    relevant = qrels[qrels.label >= 1]
    top = run[run.qid.isin(relevant.qid)].sort_values(['qid', 'score'], ascending=[True, False]).groupby('qid').head(k)
    rel = np.stack([vectors[d] for q, d in zip(relevant.qid, relevant.docno) for _ in range(counts[q])])
    ret = np.stack([vectors[d] for q, d in zip(top.qid, top.docno) for _ in range(counts[q])])
    return mean_shift(rel, ret)


def _csv(capsys) -> pd.DataFrame:
    return pd.read_csv(io.StringIO(capsys.readouterr().out))


def test_a_new_measure_with_its_own_resampling_works_everywhere(toys, toy, files, tmp_path, capsys):  # noqa: F811
    import pyterrier as pt
    shift, scored = toys
    vectors, qrels, run = toy
    expected = _expected_mean_shift(vectors, qrels, run)
    # pt.Experiment and ir_measures' parser
    topics = pd.DataFrame({'qid': ['q1', 'q2', 'q3'], 'query': ''})
    with pf.default_encoder(DictEncoder(vectors)):
        table = pt.Experiment([pt.Transformer.from_df(run)], topics, qrels, eval_metrics=[shift @ 3, scored @ 3],
                              names=['fwd'])
    assert ir_measures.parse_measure('MeanShiftToy@3') == shift @ 3
    assert table['MeanShiftToy@3'].iloc[0] == pytest.approx(expected, rel=1e-12)
    assert table['RelScoredToy@3'].iloc[0] == 5  # top 3: q1 d0, d1 (d2 is judged 0); q2 d10, d11, d12
    # its resampling re-weights vector statistics, so its per-query rows are centred pseudo-values from its own
    # leave-outs with nothing more declared: they average to the value and order the queries as the leave-outs do
    assert shift.has_rows() and not scored.has_rows()
    with pf.default_encoder(DictEncoder(vectors)):
        rows = {m.query_id: m.value for m in ir_measures.iter_calc([shift @ 3], qrels, run)}
    assert np.mean(list(rows.values())) == pytest.approx(expected, rel=1e-12)
    without_q1, without_q2 = (_expected_mean_shift(vectors, qrels, run, counts=c) for c in ([0, 1, 0], [1, 0, 0]))
    assert np.sign(rows['q1'] - rows['q2']) == np.sign(without_q2 - without_q1) != 0

    # the bootstrap re-weights it through its own resampling: each sample is the mean shift of the drawn queries'
    # documents, repeated as drawn (computed here by gathering them), the same draws for the histogram measure
    with pf.default_encoder(DictEncoder(vectors)):
        boot = pf.bootstrap({'fwd': run}, qrels, [shift @ 3, scored @ 3], n_samples=40, seed=4, verbose=False)
    counts = draw_counts(3, 40, 4)
    reference = [_expected_mean_shift(vectors, qrels, run, counts=c) if c[:2].sum() else np.nan for c in counts]
    np.testing.assert_allclose(boot.samples['fwd']['MeanShiftToy@3'], reference, rtol=1e-10)
    np.testing.assert_array_equal(boot.samples['fwd']['RelScoredToy@3'], [2 * c[0] + 3 * c[1] if c[:2].sum() else np.nan
                                                                          for c in counts])
    s = boot.summary.set_index('measure')
    assert s.loc['MeanShiftToy@3', 'interval'] == 'jackknife'
    assert s.loc['MeanShiftToy@3', 'estimand'] == 'E[mean shift] at this number of queries'
    # its leave-outs: the default leave_out re-weights with one query at 0 (q3 has no relevant document: no unit)
    np.testing.assert_allclose(boot.jackknife['fwd']['MeanShiftToy@3'],
                               [_expected_mean_shift(vectors, qrels, run, counts=c) for c in ([0, 1, 0], [1, 0, 0])],
                               rtol=1e-10)
    assert s.loc['RelScoredToy@3', 'interval'] == 'percentile'

    # every subcommand that takes measures (vectors stored as float32)
    data = ['--qrels', str(files / 'qrels.txt'), '--runs', str(files / 'runs'), '--vectors', str(files / 'vecs'), '--quiet']
    both = ['--metrics', 'MeanShiftToy@3', 'RelScoredToy@3', 'nDCG@3']
    assert main(['eval', *data, *both, '--format', 'csv']) == 0
    evaluated = _csv(capsys).set_index('name')
    assert evaluated.loc['fwd', 'MeanShiftToy@3'] == pytest.approx(expected, rel=1e-5)
    assert evaluated.loc['fwd', 'RelScoredToy@3'] == 5
    assert main(['bootstrap', *data, *both, '--samples', '40', '--format', 'csv']) == 0
    summary = _csv(capsys).set_index(['name', 'measure'])
    assert summary.loc[('fwd', 'MeanShiftToy@3'), 'value'] == pytest.approx(expected, rel=1e-5)
    assert summary.loc[('fwd', 'MeanShiftToy@3'), 'interval'] == 'jackknife'
    assert main(['compare', *data, *both, '--samples', '1000', '--format', 'csv']) == 0
    pairs = _csv(capsys).set_index(['measure', 'a', 'b'])
    row = pairs.loc[('MeanShiftToy@3', 'fwd', 'mid')]
    assert row['diff'] == pytest.approx(evaluated.loc['fwd', 'MeanShiftToy@3'] - evaluated.loc['mid', 'MeanShiftToy@3'], rel=1e-9)
    assert row['interval'] == 'jackknife' and row['test'] == 'jackknife' and np.isfinite(row['p_jackknife'])
    assert pairs.loc[('RelScoredToy@3', 'fwd', 'mid'), 'test'] == 'normal'
    assert main(['agreement', *data, *both, '--samples', '200', '--format', 'csv']) == 0
    agreement = _csv(capsys).set_index('measure')
    assert agreement.loc['MeanShiftToy@3', 'reference'] == 'nDCG@3' and agreement.loc['MeanShiftToy@3', 'pairs'] == 3
    assert main(['sparsify', *data, *both, '--per-query', '1', '--seeds', '0', '--format', 'csv']) == 0
    assert {'MeanShiftToy@3', 'RelScoredToy@3'} <= set(_csv(capsys).measure)
    assert main(['shuffle', *data, *both, '--format', 'csv']) == 0
    shuffled = _csv(capsys)
    assert shuffled.set_index(['name', 'measure']).loc[('fwd', 'MeanShiftToy@3'), 'value'] == pytest.approx(expected, rel=1e-5)
    assert main(['pool-sim', *data, *both, '--depth', '3', '--repeats', '2', '--format', 'csv']) == 0
    assert {'MeanShiftToy@3', 'RelScoredToy@3'} <= set(_csv(capsys).measure)
    assert main(['report', *data, *both, '--samples', '1000', '--per-query', '1', '--seeds', '0',
                 '--out', str(tmp_path / 'rep')]) == 0
    rep = tmp_path / 'rep'
    assert pd.read_csv(rep / 'results.csv').set_index('name').loc['fwd', 'MeanShiftToy@3'] == pytest.approx(expected, rel=1e-5)
    assert {'MeanShiftToy@3', 'RelScoredToy@3'} <= set(pd.read_csv(rep / 'bootstrap.csv').measure)
    assert {'MeanShiftToy@3', 'RelScoredToy@3'} <= set(pd.read_csv(rep / 'comparisons.csv').measure)
    # the help and the refusals name it, from the registry
    assert 'MeanShiftToy' in _help('bootstrap') and 'MeanShiftToy' in _help('compare')
    capsys.readouterr()
    assert main(['bootstrap', *data, '--metrics', 'KID@3', '--samples', '20']) == 2
    err = capsys.readouterr().err
    assert "no fast path for ['KID@3']" in err and 'MeanShiftToy' in err and 'RelScoredToy' in err


def test_a_new_resampling_gets_its_own_values_on_every_paired_route(toys, toy):  # noqa: F811
    """pf.paired_test (bootstrap, jackknife interval, randomisation) and compare's randomisation test reach a measure
    only through its resampling: the toy's value, its bootstrap and its randomisation statistic (its own swapped(),
    checked here against the mean shift of documents gathered by hand for every permutation), never FD's kernels."""
    shift, _ = toys
    vectors, qrels, run = toy
    other = run.assign(score=-run.score)  # the same documents, reversed: another top 3
    with pf.default_encoder(DictEncoder(vectors)):
        res = pf.paired_test(run, other, qrels, shift @ 3, n_samples=40, n_permutations=60, seed=2)
    value_a, value_b = _expected_mean_shift(vectors, qrels, run), _expected_mean_shift(vectors, qrels, other)
    assert (res.fd_a, res.fd_b) == (pytest.approx(value_a, rel=1e-12), pytest.approx(value_b, rel=1e-12))
    # the randomisation statistic by hand: for each permutation, each query's top 3 from the run it was swapped to
    queries = sorted(qrels.qid.unique())
    swaps = np.random.default_rng(3).integers(0, 2, size=(60, len(queries)))  # the test's draw: seed + 1
    relevant = qrels[qrels.label >= 1]
    rel_mean = np.mean([vectors[d] for d in relevant.docno], axis=0)

    def top(r):
        return r[r.qid.isin(relevant.qid)].sort_values(['qid', 'score'], ascending=[True, False]).groupby('qid').head(3)
    tops = {name: top(r) for name, r in (('a', run), ('b', other))}

    def mean_shift_of(choice):
        docs = [d for q, pick in zip(queries, choice) for d in tops[pick][tops[pick].qid == q].docno]
        return float(np.sum((rel_mean - np.mean([vectors[d] for d in docs], axis=0)) ** 2))
    perm = np.array([mean_shift_of(['b' if x else 'a' for x in s]) - mean_shift_of(['a' if x else 'b' for x in s])
                     for s in swaps])
    diff = value_a - value_b
    assert res.p_randomisation == pytest.approx((1 + np.sum(np.abs(perm) >= abs(diff) - 1e-12 * abs(diff))) / 61)
    assert res.ci_low <= diff <= res.ci_high


def _help(command: str) -> str:
    from pyterrier_frechet.cli import build_parser
    parser = build_parser()
    return parser._subparsers._group_actions[0].choices[command].format_help() + parser.format_help()


def test_the_fixture_unregisters_what_it_registered(toys):
    names = {m.NAME for m in registered_measures()}
    assert {'MeanShiftToy', 'RelScoredToy'} <= names
    for m in toys:
        unregister_measure(m)
    try:
        with pytest.raises(NameError, match='measure not found: MeanShiftToy'):
            ir_measures.parse_measure('MeanShiftToy@3')
        with pytest.raises(ValueError, match='MeanShiftToy'):
            pf.evaluation.evaluate.parse_measures(['MeanShiftToy@3'])
        assert {m.NAME for m in registered_measures()} == names - {'MeanShiftToy', 'RelScoredToy'}
        with pytest.raises(ValueError, match='MeanShiftToy is not a registered measure'):
            unregister_measure(toys[0])
    finally:
        for m in toys:
            register_measure(m)  # the fixture unregisters them again


def test_no_registered_toy_outlives_its_test():
    assert not {'MeanShiftToy', 'RelScoredToy'} & {m.NAME for m in registered_measures()}


def test_contributing_states_the_count_of_places():
    text = (ROOT / 'docs' / 'CONTRIBUTING.md').read_text()
    assert len(PLACES) <= 5
    assert f'touches **{len(PLACES)} places**' in text
    # the export is one place: the package re-exports measures.__all__
    assert [n for n in pf.__all__ if n in pf.measures.__all__] == pf.measures.__all__


def test_entry_points_dispatch_on_the_declaration_not_on_kinds():
    """No module above measures/ names a particular resampling or compares resampling names: bootstrap, compare,
    agreement, report and the CLI ask the measure's Resampling for what they need."""
    names = re.compile(r'\b(GAUSSIAN|CONDITIONAL|HISTOGRAM|PER_QUERY|VECTOR_PATHS|bootstrap_path|DEFAULT_INTERVAL|'
                       r'HistogramCounts|PerQueryMean)\b|\b(Gaussian|Conditional)\b(?![ -][a-zA-Z])|'
                       r'resampling\(.*\)\.name\s*[!=]=|\bres\.name\s*[!=]=')
    offenders = [f'{path.relative_to(PACKAGE)}:{i}: {line.strip()}'
                 for path in [*(PACKAGE / 'analyses').glob('*.py'), *(PACKAGE / 'evaluation').glob('*.py'), PACKAGE / 'cli.py']
                 for i, line in enumerate(path.read_text().splitlines(), 1) if names.search(line)]
    assert offenders == []
