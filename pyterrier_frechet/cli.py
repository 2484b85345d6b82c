"""The command line: ``python -m pyterrier_frechet demo | eval | bootstrap | compare | correlate | sparsify | pool-sim | report``.

``demo`` runs the main job on the bundled collection. ``eval`` scores TREC run files with FD next to any
ir_measures measure, without writing Python; ``bootstrap``, ``compare``, ``sparsify``, ``pool-sim`` and ``report`` take the same data
options, ``correlate`` a results CSV::

    python -m pyterrier_frechet eval --qrels QRELS --runs DIR_OR_FILES... (--text JSONL | --vectors PREFIX) \\
        --metrics FD@10 "FD(urr=True)@10" nDCG@10 RR@10 [--rel 2] [--per-query N --seed S] \\
        [--missing error|drop] [--format markdown|csv|latex] [--output FILE]
"""
import argparse
import logging
import os
import sys
import tempfile
from pathlib import Path
from typing import Dict, List, NamedTuple, Optional, Sequence

import ir_measures
import pandas as pd
import pyterrier as pt

from .measure import SET_MEASURES, VECTOR_MEASURES
from .provider import fd_sets
from .qrels import balance_qrels
from . import plots
from .bootstrap import bootstrap
from .correlation import correlations
from .robustness import sparsify, summarise
from .runs import read_run, run_files, run_names
from .vectors import default_encoder, lookup_vectors

logger = logging.getLogger(__name__)


class CliError(ValueError):
    """A user error: printed as one line, exit status 2."""


def parse_metrics(names: Sequence[str], rel: Optional[int] = None, missing: Optional[str] = None) -> List[ir_measures.Measure]:
    """ir_measures measures from their names; ``rel`` is applied to every measure that has a ``rel``
    parameter and does not set it, ``missing`` to every FD measure that does not set it."""
    measures = []
    for name in names:
        try:
            m = ir_measures.parse_measure(name)
        except (NameError, ValueError, SyntaxError) as ex:
            raise CliError(f'unknown metric {name!r} ({ex}); use ir_measures names such as nDCG@10, RR(rel=2)@10, FD@10') from ex
        if rel is not None and 'rel' in m.SUPPORTED_PARAMS and 'rel' not in m.params:
            m = m(rel=rel)
        if missing is not None and m.NAME in VECTOR_MEASURES and 'missing' not in m.params:
            m = m(missing=missing)
        try:
            m.validate_params()
        except (AssertionError, ValueError) as ex:
            raise CliError(f'bad metric {name!r}: {ex}') from ex
        measures.append(m)
    return measures


def _read_qrels(path: str) -> pd.DataFrame:
    if not os.path.isfile(path):
        raise CliError(f'qrels file {path!r} does not exist')
    try:
        qrels = pt.io.read_qrels(path)
    except Exception as ex:
        raise CliError(f'{path}: cannot be read as TREC qrels (qid iter docno label): {ex}') from ex
    if len(qrels) == 0:
        raise CliError(f'{path}: the qrels are empty')
    return qrels


def _encoder(args):
    from .vectors import VectorStore
    if args.vectors:
        try:
            return VectorStore(args.vectors)
        except ValueError as ex:
            raise CliError(str(ex)) from ex
    from .embedder import Embedder
    from .text import TextLookup
    texts = TextLookup.from_jsonl(args.text, text_fields=tuple(args.text_fields))
    return Embedder(args.model, texts=texts, verbose=not args.quiet)


def _no_vector_count(fd_measures, qrels_ir: pd.DataFrame, run_ir: pd.DataFrame, encoder) -> int:
    """Distinct retrieved documents of this run, over all FD measures, that have no vector."""
    docnos = set()
    for m in fd_measures:
        docnos.update(fd_sets(m, qrels_ir, run_ir).retrieved['doc_id'])
    if not docnos:
        return 0
    _, found = lookup_vectors(encoder, sorted(docnos))
    return int((~found).sum())


def evaluate_runs(runs: Dict[str, pd.DataFrame], qrels: pd.DataFrame, measures, encoder=None,
                  verbose: bool = True) -> pd.DataFrame:
    """One row per run, one column per measure (in the order given), plus ``no_vector`` when FD is asked for.

    Each run is checked first: it must share at least one query with the qrels.
    """
    qids = set(qrels['qid'].astype(str))
    topics = pd.DataFrame({'qid': sorted(qids), 'query': ''})
    fd_measures = [m for m in measures if m.NAME in VECTOR_MEASURES]
    columns = [str(m) for m in measures]
    labels = {str(m): column_label(m) for m in measures}
    rows = []
    with default_encoder(encoder):
        for name, run in pt.tqdm(list(runs.items()), desc='runs', unit='run', disable=not verbose):
            if not set(run['qid'].astype(str)) & qids:
                raise CliError(f'run {name!r} shares no query with the qrels')
            try:
                table = pt.Experiment([pt.Transformer.from_df(run)], topics, qrels, eval_metrics=measures, names=[name])
            except ValueError as ex:
                raise CliError(f'run {name!r}: {ex}') from ex
            row = {labels[c]: v for c, v in table.iloc[0][columns].items()}
            if fd_measures and encoder is not None:
                row['no_vector'] = _no_vector_count(fd_measures, pt.model.to_ir_measures(qrels.astype({'qid': str, 'docno': str})),
                                                    pt.model.to_ir_measures(run.astype({'qid': str, 'docno': str})), encoder)
            rows.append({'name': name, **row})
    return pd.DataFrame(rows)


def column_label(measure) -> str:
    """The measure's name without the ``missing=`` policy of FD and the other vector measures (reported in its own column)."""
    return str(measure(missing='error')) if measure.NAME in VECTOR_MEASURES else str(measure)


def kendall_notes(table: pd.DataFrame, measures) -> List[str]:
    """Kendall τ-b of every set measure's column (FD, DO, HSA) against the first other column, across runs,
    oriented as :func:`~pyterrier_frechet.correlations` does: lower-is-better metrics negated, positive = agreement."""
    set_cols = [column_label(m) for m in measures if m.NAME in SET_MEASURES]
    ref = [column_label(m) for m in measures if m.NAME not in SET_MEASURES]
    if len(table) < 3 or not set_cols or not ref:
        return []
    corr = correlations(table, [ref[0]] + set_cols, pairs=[(col, ref[0]) for col in set_cols])
    return [f'Kendall tau({row.a}, {row.b}) over {row.n} runs = {row.kendall_tau:.3f} (p = {row.kendall_p:.2g})'
            + (f'; {row.oriented} negated (lower is better), so positive tau means agreement' if row.oriented else '')
            for row in corr.itertuples()]


def format_table(table: pd.DataFrame, fmt: str) -> str:
    if fmt == 'csv':
        return table.to_csv(index=False)
    if fmt == 'latex':
        return table.to_latex(index=False, float_format='%.4f')
    return table.to_markdown(index=False, floatfmt='.4f') + '\n'


def _write_atomically(path: str, text: str) -> None:
    """Write all of ``text`` or nothing: a temporary file in the same folder, renamed into place."""
    folder = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(dir=folder, prefix='.' + os.path.basename(path) + '.')
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
    encoder: object  # None when no FD measure is asked for


def load_data(args) -> Data:
    """Qrels (balanced with --per-query), runs, measures and the vector source, checked, from the shared arguments."""
    measures = parse_metrics(args.metrics, rel=args.rel, missing=args.missing)
    qrels = _read_qrels(args.qrels)
    if getattr(args, 'per_query', None) is not None:
        try:
            # every positive grade counts as relevant for balancing, whatever --rel the measures use
            qrels = balance_qrels(qrels, args.per_query, rel=1, seed=args.seed)
        except ValueError as ex:
            raise CliError(str(ex)) from ex
    threshold = args.rel or 1
    if not (qrels['label'] >= threshold).any():
        raise CliError(f'{args.qrels}: no document is judged relevant at the threshold (label >= {threshold})')
    try:
        files = run_files(args.runs)
        runs = {name: read_run(f) for name, f in zip(run_names(files), files)}
    except ValueError as ex:
        raise CliError(str(ex)) from ex
    needs_vectors = any(m.NAME in VECTOR_MEASURES for m in measures)
    if needs_vectors and not (args.text or args.vectors):
        raise CliError('FD needs document vectors: pass --vectors PREFIX or --text JSONL')
    if args.missing == 'drop':  # the no_vector column and a closing note replace per-measure warnings
        logging.getLogger('pyterrier_frechet').setLevel(logging.ERROR)
    return Data(runs, qrels, measures, _encoder(args) if needs_vectors else None)


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


def cmd_eval(args) -> int:
    data = load_data(args)
    table = evaluate_runs(data.runs, data.qrels, data.measures, data.encoder, verbose=not args.quiet)
    notes = kendall_notes(table, data.measures)
    if 'no_vector' in table.columns and table['no_vector'].any():
        notes.append(f"{int(table['no_vector'].sum())} retrieved document(s) without a vector were left out "
                     "(column no_vector, per run)")
    _emit(args, table, notes)
    return 0


def cmd_bootstrap(args) -> int:
    data = load_data(args)
    with default_encoder(data.encoder):
        result = bootstrap(data.runs, data.qrels, data.measures, n_samples=args.samples, seed=args.seed_bootstrap, ci=args.ci,
                           verbose=not args.quiet)
    summary = result.summary.assign(measure=[column_label(ir_measures.parse_measure(m)) if m.startswith('FD') else m
                                             for m in result.summary['measure']])
    if args.plot_dir:
        for measure in summary['measure'].unique():
            plots.bootstrap_intervals(summary, measure, Path(args.plot_dir) / f'bootstrap_{plots.slug(measure)}')
    _emit(args, summary, [f'{args.samples} bootstrap samples over {len(result.queries)} queries, seed {args.seed_bootstrap}, '
                          f'{args.ci:.0%} percentile intervals'])
    return 0


def cmd_correlate(args) -> int:
    try:
        table = pd.read_csv(args.table)
    except (OSError, pd.errors.ParserError, pd.errors.EmptyDataError) as ex:
        raise CliError(f'{args.table}: cannot be read as a CSV results table ({ex})') from ex
    result = correlations(table, args.metrics)
    _emit(args, result, ['lower-is-better metrics (FD, mrt) are negated first: positive coefficients mean agreement'])
    return 0


def cmd_sparsify(args) -> int:
    data = load_data(args)
    with default_encoder(data.encoder):
        result = sparsify(data.runs, data.qrels, data.measures, per_query=args.n, seeds=args.seeds, verbose=not args.quiet)
    summary = summarise(result)
    if args.plot_dir:
        plots.sparsification(summary, Path(args.plot_dir) / 'sparsification')
    _emit(args, summary, [f'Kendall tau between each metric with full qrels and with at most n relevant per query; '
                          f'seeds {list(args.seeds)}'])
    return 0


def cmd_report(args) -> int:
    from .report import write_report
    data = load_data(args)
    if args.baseline is not None and args.baseline not in data.runs:
        raise CliError(f'--baseline {args.baseline!r} is not one of the runs: {sorted(data.runs)[:10]}')
    path = write_report(data, Path(args.out), args.qrels, samples=args.samples, seed=args.seed_bootstrap,
                        per_query=args.n, seeds=args.seeds, verbose=not args.quiet, baseline=args.baseline)
    print(f'wrote {path}')
    return 0


def cmd_compare(args) -> int:
    from .significance import compare_systems
    data = load_data(args)
    if args.baseline is not None and args.baseline not in data.runs:
        raise CliError(f'--baseline {args.baseline!r} is not one of the runs: {sorted(data.runs)[:10]}')
    with default_encoder(data.encoder):
        table = compare_systems(data.runs, data.qrels, data.measures, baseline=args.baseline, n_samples=args.samples,
                                seed=args.seed_bootstrap, ci=args.ci, alpha=args.alpha, n_permutations=args.permutations,
                                verbose=not args.quiet)
    table = table.assign(measure=[column_label(ir_measures.parse_measure(m)) for m in table['measure']])
    n = len(table) // max(1, table['measure'].nunique())
    _emit(args, table, [f'{n} comparison(s) per measure, {args.samples} paired bootstrap samples (seed {args.seed_bootstrap}), '
                        f'{args.ci:.0%} intervals of a − b; p_holm: Holm-adjusted over each measure\'s comparisons'
                        + (f'; FD randomisation tests with {args.permutations} permutations' if args.permutations else '')
                        + f'; better: the better system where every adjusted p < {args.alpha:g}'])
    return 0


def cmd_pool_sim(args) -> int:
    from .pooling import read_groups, simulate_pools
    data = load_data(args)
    if args.groups:
        try:
            groups, types = read_groups(args.groups)
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
    with default_encoder(data.encoder):
        result = simulate_pools(data.runs, data.qrels, data.measures, groups, types, pool_types=pool_types,
                                fraction=args.fraction, depth=args.depth, repeats=args.repeats, seed=args.seed_pool,
                                unpooled=args.unpooled, verbose=not args.quiet)
    summary = result.summary.assign(measure=[column_label(ir_measures.parse_measure(m)) for m in result.summary['measure']])
    if args.pools_output:
        _write_atomically(args.pools_output, result.pools.to_csv(index=False))
    share = result.pools.groupby('pool_type', sort=False)['relevant_share'].mean()
    _emit(args, summary, [f'Kendall tau between each metric with the full qrels (actual) and with depth-{args.depth} pools from '
                          f'{args.fraction:g} of the groups (estimated), {args.repeats} pools per pool type, seed {args.seed_pool}; '
                          f'unpooled judgments {"set non-relevant" if args.unpooled == "nonrel" else "removed"}; '
                          f'tau is NaN for fewer than 3 test systems'] +
          [f'{t} pools found {v:.1%} of the relevant judgments on average' for t, v in share.items()])
    return 0


def cmd_demo(args) -> int:
    from .demo import run_demo
    result = run_demo(args.model, args.work_dir, verbose=not args.quiet, figures_dir=args.figures)
    print(result.table.to_string(index=False, float_format=lambda v: f'{v:.4g}'))
    print(f'\nFD: lower is better (nDCG@10, RR@10: higher is better). Encoder: {result.embedder!r}.')
    for metric, names in result.frontiers.items():
        print(f'Pareto frontier of {metric} against mrt (not dominated): {", ".join(names)}')
    print(f'Pareto plots: {", ".join(f for f in result.figures if f.endswith(".png"))}')
    print(f'Documents encoded by this run: {result.n_encoded} (embedding cache: {result.embedder.cache.path})')
    return 0


def _data_args(p, per_query: bool = False) -> None:
    p.add_argument('--qrels', required=True, help='TREC qrels file')
    p.add_argument('--runs', required=True, nargs='+', help='run files and/or directories of run files (gzip allowed)')
    src = p.add_mutually_exclusive_group()
    src.add_argument('--text', help='docno/text JSONL (gzip allowed), embedded through the cached Embedder')
    src.add_argument('--vectors', help='precomputed vectors: PREFIX.npy + PREFIX.ids.txt')
    p.add_argument('--text-fields', nargs='+', default=['text'], help='JSONL fields joined into the text (default: text)')
    p.add_argument('--model', default=None, help='encoder for --text (default all-MiniLM-L6-v2)')
    p.add_argument('--metrics', nargs='+', default=['FD@10', 'FD(urr=True)@10', 'nDCG@10', 'RR@10'],
                   help='ir_measures names, e.g. FD@10 "FD(urr=True)@10" nDCG@10 "RR(rel=2)@10"')
    p.add_argument('--rel', type=int, default=None, help='relevance threshold for every measure with a rel parameter (FD, RR, P, R, AP, ...)')
    if per_query:
        p.add_argument('--per-query', type=int, default=None, help='evaluate with qrels reduced to at most N documents with a positive label per query (highest grade first)')
        p.add_argument('--seed', type=int, default=0, help='seed of --per-query (default 0)')
    p.add_argument('--missing', choices=['error', 'drop'], default=None,
                   help='FD documents without a vector: fail (error, the default) or leave out and count (drop)')
    p.add_argument('--quiet', action='store_true', help='no progress bars')


def _output_args(p) -> None:
    p.add_argument('--format', choices=['markdown', 'csv', 'latex'], default='markdown')
    p.add_argument('--output', help='write the table here (all or nothing) instead of standard output')


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog='python -m pyterrier_frechet', description='Fréchet Distance evaluation for IR')
    sub = parser.add_subparsers(dest='command', required=True)

    demo = sub.add_parser('demo', help='BM25, BM25 re-ranked by MiniLM and dense retrieval on the bundled Cranfield collection, with FD, nDCG@10, RR@10, mrt and the Pareto frontier')
    demo.add_argument('--model', default=None, help='encoder (hub name or local path; default all-MiniLM-L6-v2)')
    demo.add_argument('--work-dir', default=None, help='indexes and embedding cache (default $PYTERRIER_FRECHET_CACHE or ~/.cache/pyterrier_frechet)')
    demo.add_argument('--figures', default=None, help='folder for the cost-vs-quality Pareto plots (default WORK_DIR/figures)')
    demo.add_argument('--quiet', action='store_true', help='no progress bars')
    demo.set_defaults(func=cmd_demo)

    ev = sub.add_parser('eval', help='score TREC run files with FD and any ir_measures measure')
    _data_args(ev, per_query=True)
    _output_args(ev)
    ev.set_defaults(func=cmd_eval)

    bs = sub.add_parser('bootstrap', help='bootstrap confidence intervals over queries (FD and any ir_measures measure)')
    _data_args(bs)
    bs.add_argument('--samples', type=int, default=1000, help='bootstrap samples (default 1000)')
    bs.add_argument('--seed', dest='seed_bootstrap', type=int, default=0, help='seed of the query draws (default 0)')
    bs.add_argument('--ci', type=float, default=0.95, help='confidence level (default 0.95)')
    bs.add_argument('--plot-dir', help='also write one figure per measure (PNG and PDF) here')
    _output_args(bs)
    bs.set_defaults(func=cmd_bootstrap)

    co = sub.add_parser('correlate', help='Kendall tau, Spearman and Pearson between metrics over a results table (CSV, e.g. from eval --format csv)')
    co.add_argument('--table', required=True, help='CSV: a name column and one column per metric')
    co.add_argument('--metrics', nargs='+', default=None, help='columns to correlate (default: every numeric column)')
    _output_args(co)
    co.set_defaults(func=cmd_correlate)

    sp = sub.add_parser('sparsify', help='Kendall tau of each metric between full qrels and qrels with at most n relevant per query')
    _data_args(sp)
    sp.add_argument('--n', type=int, nargs='+', default=[1, 5, 10], help='relevant documents kept per query (default 1 5 10)')
    sp.add_argument('--seeds', type=int, nargs='+', default=[0, 1, 2, 3, 4], help='seeds of the random choice within a grade')
    sp.add_argument('--plot-dir', help='also write the sparsification figure (PNG and PDF) here')
    _output_args(sp)
    sp.set_defaults(func=cmd_sparsify)

    cp = sub.add_parser('compare', help='paired significance tests between runs (all pairs or against --baseline), '
                        'Holm-corrected: FD, DO, HSA and any ir_measures measure')
    _data_args(cp)
    cp.add_argument('--baseline', help='compare every run with this one (default: all pairs)')
    cp.add_argument('--samples', type=int, default=1000, help='paired bootstrap samples (default 1000)')
    cp.add_argument('--permutations', type=int, default=0, help='also run FD randomisation tests with this many permutations per pair')
    cp.add_argument('--seed', dest='seed_bootstrap', type=int, default=0, help='seed of the draws (default 0)')
    cp.add_argument('--ci', type=float, default=0.95, help='confidence level of the difference (default 0.95)')
    cp.add_argument('--alpha', type=float, default=0.05, help='level at which a difference is called (default 0.05)')
    _output_args(cp)
    cp.set_defaults(func=cmd_compare)

    ps = sub.add_parser('pool-sim', help='pooling-bias simulation (Yilmaz et al. 2020): tau between metrics with full qrels '
                        'and with depth-k pools from random halves of the run groups, per system type')
    _data_args(ps)
    ps.add_argument('--groups', help='TSV: run, group, type per line (# comments), e.g. docs/dl19-run-groups.tsv; '
                    'default: each run its own group, one type')
    ps.add_argument('--pool-type', nargs='+', default=['any'],
                    help='pool from the groups holding a run of this type; several give several pool rows (default any)')
    ps.add_argument('--fraction', type=float, default=0.5, help='share of the candidate groups pooled (default 0.5)')
    ps.add_argument('--depth', type=int, default=10, help='pool depth (default 10)')
    ps.add_argument('--repeats', type=int, default=10, help='pools drawn per pool type (default 10)')
    ps.add_argument('--seed', dest='seed_pool', type=int, default=0, help='seed of the group draws (default 0)')
    ps.add_argument('--unpooled', choices=['nonrel', 'unjudged'], default='nonrel',
                    help='judgments outside the pool: non-relevant (default) or removed (unjudged)')
    ps.add_argument('--pools-output', help='also write one CSV row per simulated pool (groups, size, relevant found)')
    _output_args(ps)
    ps.set_defaults(func=cmd_pool_sim)

    rp = sub.add_parser('report', help='eval, correlate, bootstrap, compare and sparsify, written as a markdown report with tables and figures')
    _data_args(rp)
    rp.add_argument('--out', required=True, help='folder for report.md, its tables and figures')
    rp.add_argument('--samples', type=int, default=1000)
    rp.add_argument('--seed', dest='seed_bootstrap', type=int, default=0)
    rp.add_argument('--n', type=int, nargs='+', default=[1, 5, 10])
    rp.add_argument('--seeds', type=int, nargs='+', default=[0, 1, 2, 3, 4])
    rp.add_argument('--baseline', help='paired comparisons of every run against this one (default: all pairs, counted)')
    rp.set_defaults(func=cmd_report)
    return parser


def main(argv=None) -> int:
    args = build_parser().parse_args(argv)
    logging.basicConfig(level=logging.WARNING, format='%(levelname)s %(name)s: %(message)s')
    provider_log = logging.getLogger('pyterrier_frechet')
    level = provider_log.level  # --missing drop quietens it for the command; restored after
    try:
        return args.func(args)
    except ValueError as ex:  # CliError and the package's own clear ValueErrors
        print(f'error: {ex}', file=sys.stderr)
        return 2
    finally:
        provider_log.setLevel(level)
