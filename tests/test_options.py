"""The analyses' options (analyses/options.py): one validated object, each field checked by its entry in the
constraints table, and — differentially — every entry point (pf.compare_systems, pf.paper_table, pf.write_report
and the command line's compare and report) refusing the same bad option with the same words, before any work."""
import re

import numpy as np
import pytest

import pyterrier_frechet as pf
from ir_measures import nDCG
from pyterrier_frechet.analyses.options import (CONSTRAINTS, ResamplingOptions, default_samples, n_comparisons,
                                                samples_for_holm)
from pyterrier_frechet.cli import main
from conftest import DictEncoder
from test_cli import files  # noqa: F401  (the toy files fixture, used by name)

#: (keyword arguments, the same on the command line, the words of the refusal; where the command line's parser refuses
#: the value itself, the words it refuses it in: the flag and what it expects)
BAD = [
    ({'n_samples': 0}, ['--samples', '0'], r'n_samples must be positive, got 0 \(--samples',
     r'argument --samples: expected a positive integer, got 0'),
    ({'seed': -1}, ['--seed', '-1'], r'seed \(--seed\) must be a non-negative integer, got -1',
     r'argument --seed: expected a non-negative integer, got -1'),
    ({'ci': 1.5}, ['--ci', '1.5'], r'ci \(--ci\) must be in \(0, 1\), got 1.5', r'argument --ci: expected a number in \(0, 1\)'),
    ({'population': 0}, ['--population', '0'], r'population must be a positive number of queries \(--population N\)',
     r'argument --population: expected a positive integer, got 0'),
    ({'test': 'bootstrap', 'population': 50}, ['--test', 'bootstrap', '--population', '50'],
     r"population= \(--population\) corrects the jackknife and normal tests; the count test", None),
    ({'baseline': 'nope'}, ['--baseline', 'nope'], r"baseline 'nope' \(--baseline\) is not one of the runs", None),
]


def test_every_field_with_a_rule_is_in_the_table_and_refused_in_its_words():
    assert set(CONSTRAINTS) == {'n_samples', 'seed', 'ci', 'alpha', 'test', 'interval', 'population', 'n_permutations'}
    for kwargs, _, words, _ in BAD[:-1]:
        with pytest.raises(ValueError, match=words):
            ResamplingOptions(**kwargs)
    for kwargs, words in (({'alpha': 1.0}, r'alpha must be in \(0, 1\), got 1.0 \(--alpha\)'),
                          ({'test': 'wilcoxon'}, r"test must be one of \('jackknife', 'normal', 'bootstrap'\)"),
                          ({'interval': 'nope'}, r'interval method must be one of'),
                          ({'n_permutations': -1}, r'n_permutations \(--permutations\) must be a non-negative'),
                          ({'seed': True}, r'seed \(--seed\)'), ({'n_samples': 2.5}, r'n_samples must be positive'),
                          ({'query_groups': {'q1': 'a'}, 'population': 9}, r'population= \(--population\) and '
                                                                          r'query_groups= \(--query-groups\) together')):
        with pytest.raises(ValueError, match=words):
            ResamplingOptions(**kwargs)
    assert ResamplingOptions().n_samples is None and ResamplingOptions(seed=np.int64(3)).seed == 3


def test_for_runs_chooses_the_count_and_checks_holm_against_the_comparisons():
    runs = {f's{i}': None for i in range(19)}
    # the jackknife test: 1000, not quantised; the count test over all 171 pairs: the smallest count past Holm's step
    assert ResamplingOptions().for_runs(runs).n_samples == 1000 == default_samples('jackknife', 0.05, 171)
    chosen = ResamplingOptions(test='bootstrap').for_runs(runs)
    assert chosen.n_samples == samples_for_holm(0.05, 171) == 6840 and chosen.chosen
    assert 2 / (chosen.n_samples + 1) < 0.05 / n_comparisons(19, False)
    given = ResamplingOptions(n_samples=7000, test='bootstrap').for_runs(runs)
    assert (given.n_samples, given.chosen) == (7000, False) and given == ResamplingOptions(n_samples=7000, test='bootstrap')
    with pytest.raises(ValueError, match=r'n_samples=1000 \(--samples\).*171 comparisons.*--baseline NAME'):
        ResamplingOptions(n_samples=1000, test='bootstrap').for_runs(runs)
    # against a baseline: 18 comparisons, 1000 resamples resolve them
    assert ResamplingOptions(n_samples=1000, test='bootstrap', baseline='s0').for_runs(runs).n_samples == 1000
    with pytest.raises(ValueError, match=r'n_permutations=20 \(--permutations\)'):
        ResamplingOptions(n_permutations=20, baseline='s0').for_runs(runs)


def _toy(files):
    vectors = dict(zip((files / 'vecs.ids.txt').read_text().split(), np.load(files / 'vecs.npy').astype(np.float64)))
    runs = {p.name.split('.', 1)[1].rsplit('.', 1)[0]: pf.runs.read_run(p) for p in sorted((files / 'runs').iterdir())}
    return runs, pf.runs.read_qrels(files / 'qrels.txt'), [pf.FD(encoder=DictEncoder(vectors)) @ 3]


@pytest.mark.parametrize('kwargs,flags,words,parser_words', BAD)
def test_every_entry_point_refuses_the_same_option_in_the_same_words(files, tmp_path, capsys, kwargs, flags, words,
                                                                    parser_words):
    runs, qrels, measures = _toy(files)
    calls = {'compare_systems': lambda: pf.compare_systems(runs, qrels, measures, verbose=False, **kwargs),
             'paper_table': lambda: pf.paper_table(runs, qrels, measures, verbose=False, **kwargs),
             'write_report': lambda: pf.write_report(runs, qrels, measures, tmp_path / 'report', verbose=False,
                                                     **kwargs)}
    for name, call in calls.items():
        with pytest.raises(ValueError, match=words):
            call()
    assert not (tmp_path / 'report').exists()  # refused before any work
    data = ['--qrels', str(files / 'qrels.txt'), '--runs', str(files / 'runs'), '--vectors', str(files / 'vecs'),
            '--metrics', 'FD@3', '--quiet']
    for command in (['compare'], ['report', '--out', str(tmp_path / 'cli-report')]):
        capsys.readouterr()
        try:
            code = main([*command, *data, *flags])
        except SystemExit as ex:  # the parser's refusal of a value (usage and one line; exit status 2)
            code = ex.code
        assert code == 2, command
        assert re.search(parser_words or words, capsys.readouterr().err), command
    assert not (tmp_path / 'cli-report').exists()


TAILS = r'n_samples=20 \(--samples\): a 95% interval needs at least 40 bootstrap samples \(each tail holds'


def test_every_interval_read_from_resamples_refuses_too_few_for_its_tails(files, tmp_path, capsys):
    # one check (core.intervals.check_tail_samples) before any work, wherever a printed interval is read from the
    # resamples: a percentile bootstrap interval, DO's default one, τ's; the jackknife intervals read none
    runs, qrels, measures = _toy(files)
    do = pf.DO @ 3
    calls = [lambda: pf.bootstrap(runs, qrels, measures, n_samples=20, interval='percentile', verbose=False),
             lambda: pf.bootstrap(runs, qrels, [do], n_samples=20, verbose=False),
             lambda: pf.compare_systems(runs, qrels, [do], n_samples=20, verbose=False, test='normal'),
             lambda: pf.paper_table(runs, qrels, measures + [nDCG @ 3], n_samples=20, verbose=False),
             lambda: pf.write_report(runs, qrels, measures + [nDCG @ 3], tmp_path / 'r', n_samples=20, verbose=False)]
    for call in calls:
        with pytest.raises(ValueError, match=TAILS):
            call()
    assert not (tmp_path / 'r').exists()
    boot = pf.bootstrap(runs, qrels, measures + [nDCG @ 3], n_samples=20, verbose=False)  # jackknife and t: fine
    assert set(boot.summary['method']) <= {'jackknife_log', 'jackknife', 't'}  # (a toy leave-out of 0: plain)
    with pytest.raises(ValueError, match=TAILS):
        pf.tau_intervals(boot, measures + [nDCG @ 3])
    data = ['--qrels', str(files / 'qrels.txt'), '--runs', str(files / 'runs'), '--vectors', str(files / 'vecs'),
            '--metrics', 'FD@3', 'nDCG@3', '--quiet', '--samples', '20']
    for command in (['bootstrap', '--interval', 'percentile'], ['report', '--out', str(tmp_path / 'cli')]):
        capsys.readouterr()
        assert main([*command, *data]) == 2, command
        assert re.search(TAILS, capsys.readouterr().err), command
