"""Every Python entry point refuses what the command line refuses, with the same words.

A table of bad inputs × (subcommand, Python function): each is run through ``main([...])`` on small TREC files and
through the function the subcommand calls, on the same files read with ``pf.runs.read_run`` /
``pf.runs.read_qrels`` and a ``pf.VectorStore``. Both must refuse (exit status 2 / ValueError), and the CLI's
error line must contain the Python message, after the CLI's known respellings (:func:`as_cli`). Where the CLI
refuses in argparse (a type check before any library call) the wording is argparse's: those rows are marked
``ARGPARSE`` and compared on key phrases (the value and the allowed range), an explicit exception by design.
docs/bad-inputs.md ("The differential refusal test") lists the defects this table found.
"""
import types

import numpy as np
import pytest

import pyterrier_frechet as pf
from pyterrier_frechet.cli import _cli_spelling, main
from test_cli import files  # noqa: F401  (the toy TREC files fixture: qrels.txt, runs/run.toy.{fwd,rev,mid}.txt, vecs)

M = ['FD@3', 'nDCG@3']
B = 50  # bootstrap samples: enough for agreement's uncorrected alpha = 0.05 (at least 40), quick


def as_cli(message: str, folder) -> str:
    """A Python message as the command line says it, by the CLI's own respellings only."""
    message = _cli_spelling(message)  # missing='drop' -> --missing drop (cli._CLI_SPELLINGS)
    # parse_metrics: '--metrics: ' + the message with 'unknown measure' said as 'unknown metric'
    message = message.replace('unknown measure', 'unknown metric', 1)
    # the qrels are named by the option and the file the user gave (check_relevant's name=)
    if message.startswith('qrels: '):
        message = f'--qrels {folder / "qrels.txt"}: ' + message[len('qrels: '):]
    return message


def _other_run(f):  # a run sharing no query with the qrels
    (f / 'runs' / 'run.toy.other.txt').write_text('zz Q0 d1 1 1.0 tag\n')


def _drop_vectors(f):  # d1 (relevant for q1) and d2 (retrieved) without a vector
    ids = (f / 'vecs.ids.txt').read_text().split()
    keep = [i for i, d in enumerate(ids) if d not in ('d1', 'd2')]
    np.save(f / 'vecs.npy', np.load(f / 'vecs.npy')[keep])
    (f / 'vecs.ids.txt').write_text('\n'.join(ids[i] for i in keep) + '\n')


def _groups(f):  # query groups naming a query the qrels lack (zz) and none for q2, q3
    (f / 'groups.txt').write_text('q1 a\nzz b\n')


def _read(f):
    paths = pf.runs.run_files([f / 'runs'])
    runs = {n: pf.runs.read_run(p) for n, p in zip(pf.runs.run_names(paths), paths)}
    groups = pf.read_query_groups(str(f / 'groups.txt')) if (f / 'groups.txt').exists() else None
    return types.SimpleNamespace(runs=runs, qrels=pf.runs.read_qrels(f / 'qrels.txt'), store=pf.VectorStore(str(f / 'vecs')),
                                 groups=groups, folder=f)


# the Python counterpart of each subcommand, with the keyword arguments a row overrides
def py_eval(d, measures=M, **kw):
    return pf.evaluate(d.runs, d.qrels, measures, d.store)


def py_bootstrap(d, measures=M, **kw):
    return pf.bootstrap(d.runs, d.qrels, measures, encoder=d.store, verbose=False, **{'n_samples': B, **kw})


def py_compare(d, measures=M, **kw):
    return pf.compare_systems(d.runs, d.qrels, measures, encoder=d.store, verbose=False, **{'n_samples': B, **kw})


def py_agreement(d, measures=M, ci=0.95, alpha=0.05, test='jackknife', **kw):
    from pyterrier_frechet.analyses.significance import resample_for
    boot = pf.bootstrap(d.runs, d.qrels, measures, encoder=d.store, verbose=False, ci=ci, resample=resample_for(test),
                        **{'n_samples': B, **kw})
    return pf.agreement_table(boot, measures, ci=ci, alpha=alpha, test=test)


def py_sparsify(d, measures=M, **kw):
    return pf.sparsify(d.runs, d.qrels, measures, encoder=d.store, verbose=False, **kw)


def py_shuffle(d, measures=M, **kw):
    return pf.shuffle_check(d.runs, d.qrels, measures, encoder=d.store)


def py_pool_sim(d, measures=M, **kw):
    return pf.simulate_pools(d.runs, d.qrels, measures, {n: n for n in d.runs}, {n: 'all' for n in d.runs},
                             encoder=d.store, verbose=False, **kw)


def py_report(d, measures=M, **kw):
    return pf.write_report(d.runs, d.qrels, measures, d.folder / 'py-report', encoder=d.store, verbose=False,
                           **{'n_samples': B, **kw})


PY = {'eval': py_eval, 'bootstrap': py_bootstrap, 'compare': py_compare, 'agreement': py_agreement,
      'sparsify': py_sparsify, 'shuffle': py_shuffle, 'pool-sim': py_pool_sim, 'report': py_report}
#: the CLI options that make a subcommand's defaults those of its Python counterpart above
CLI_DEFAULTS = {'bootstrap': ['--samples', str(B)], 'compare': ['--samples', str(B)], 'agreement': ['--samples', str(B)],
                'report': ['--samples', str(B)]}
ALL = list(PY)
RESAMPLED = ['bootstrap', 'compare', 'agreement', 'report']
ARGPARSE = 'argparse'

# (id, subcommands, setup, CLI options, Python keyword arguments, ARGPARSE key phrases or None)
ROWS = [
    ('unknown-measure', ALL, None, ['--metrics', 'NotAMeasure@3', 'nDCG@3'], {'measures': ['NotAMeasure@3', 'nDCG@3']}, None),
    ('rel-above-every-label', ALL, None, ['--metrics', 'FD@3', 'nDCG@3', '--rel', '5'],
     {'measures': ['FD(rel=5)@3', 'nDCG@3']}, None),
    ('run-sharing-no-query', ALL, _other_run, [], {}, None),
    ('no-vector-missing-error', ALL, _drop_vectors, ['--missing', 'error'], {}, None),
    ('baseline-not-a-run', ['compare', 'report'], None, ['--baseline', 'nope'], {'baseline': 'nope'}, None),
    ('holm-unresolved-count-test', ['compare', 'report'], None, ['--test', 'bootstrap', '--samples', '20'],
     {'test': 'bootstrap', 'n_samples': 20}, None),
    ('agreement-count-test-samples-below-alpha', ['agreement'], None, ['--test', 'bootstrap', '--samples', '10'],
     {'test': 'bootstrap', 'n_samples': 10}, None),
    ('fdinf-not-resampled', ['bootstrap', 'compare', 'agreement'], None, ['--metrics', 'FDInf@3', 'nDCG@3'],
     {'measures': ['FDInf@3', 'nDCG@3']}, None),
    ('population-below-queries', ['bootstrap', 'compare', 'report'], None, ['--population', '1'], {'population': 1}, None),
    ('query-groups-unknown-queries', ['bootstrap', 'compare', 'agreement', 'report'], _groups,
     ['--query-groups', '{folder}/groups.txt'], {'query_groups': 'groups'}, None),
    # --- by design: argparse refuses these values by their type (exit 2 from parse_args, before any library call),
    # in argparse's words ("argument --ci: expected a number in (0, 1), got 1.5"); the library refuses the same values
    # in its own words. Compared on the phrases both must contain: the allowed range and the value.
    ('alpha-above-1', ['compare', 'agreement'], None, ['--alpha', '1.5'], {'alpha': 1.5}, ('(0, 1)', '1.5', 'alpha')),
    ('alpha-1', ['compare', 'agreement'], None, ['--alpha', '1'], {'alpha': 1}, ('(0, 1)', 'alpha')),
    ('alpha-0', ['compare', 'agreement'], None, ['--alpha', '0'], {'alpha': 0}, ('(0, 1)', 'alpha')),
    ('ci-above-1', RESAMPLED, None, ['--ci', '1.5'], {'ci': 1.5}, ('(0, 1)', '1.5', 'ci')),
    ('ci-0', RESAMPLED, None, ['--ci', '0'], {'ci': 0.0}, ('(0, 1)', 'ci')),
    ('samples-0', RESAMPLED, None, ['--samples', '0'], {'n_samples': 0}, ('positive', 'got 0', 'samples')),
    ('samples-negative', RESAMPLED, None, ['--samples', '-5'], {'n_samples': -5}, ('positive', 'got -5', 'samples')),
    ('population-0', ['bootstrap', 'compare', 'report'], None, ['--population', '0'], {'population': 0},
     ('positive', '0', 'population')),
    ('per-query-0', ['sparsify'], None, ['--per-query', '0'], {'per_query': [0]}, ('positive integer', 'got 0', 'per')),
    ('seeds-negative', ['sparsify'], None, ['--seeds', '-1'], {'seeds': [-1]}, ('non-negative integer', 'got -1', 'seeds')),
]
PARAMS = [pytest.param(sub, *row[2:], id=f'{row[0]}-{sub}') for row in ROWS for sub in row[1]]


def _cli(argv, capsys):
    """Exit status and the last ``error:`` line; argparse's refusals exit through SystemExit(2)."""
    try:
        status = main(argv)
    except SystemExit as ex:
        status = ex.code
    err = capsys.readouterr().err
    lines = [line for line in err.splitlines() if 'error: ' in line]
    return status, lines[-1] if lines else err


@pytest.mark.filterwarnings('ignore')
@pytest.mark.parametrize('sub,setup,cli_options,py_kwargs,phrases', PARAMS)
def test_cli_and_python_refuse_alike(files, capsys, sub, setup, cli_options, py_kwargs, phrases):  # noqa: F811
    if setup is not None:
        setup(files)
    options = {'--qrels': str(files / 'qrels.txt'), '--runs': str(files / 'runs'), '--vectors': str(files / 'vecs'),
               '--metrics': M}
    extra = CLI_DEFAULTS.get(sub, []) + [o.format(folder=files) for o in cli_options]
    argv = [sub, '--quiet'] + [x for k, v in options.items() if k not in extra for x in [k, *([v] if isinstance(v, str) else v)]]
    argv += extra + (['--out', str(files / 'cli-report')] if sub == 'report' else [])
    status, cli_line = _cli(argv, capsys)

    d = _read(files)
    kwargs = {k: (d.groups if v == 'groups' else v) for k, v in py_kwargs.items()}
    if sub == 'report' and '--missing' in cli_options:
        kwargs['missing'] = cli_options[cli_options.index('--missing') + 1]
    with pytest.raises(ValueError) as refused:
        PY[sub](d, **kwargs)
    py_message = str(refused.value)

    assert status == 2, (argv, cli_line)
    assert cli_line.startswith('error: ') or ': error: ' in cli_line, cli_line
    if phrases is None:
        assert as_cli(py_message, files) in cli_line, (py_message, cli_line)
    else:  # the documented argparse exception: both name the argument, the value and the range
        for phrase in phrases:
            assert phrase in py_message and phrase in cli_line, (phrase, py_message, cli_line)
    assert not (files / 'cli-report').exists() and not (files / 'py-report').exists()  # refused before any output
