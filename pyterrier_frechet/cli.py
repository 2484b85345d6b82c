"""The command line: ``python -m pyterrier_frechet demo | eval``.

``eval`` scores TREC run files with FD next to any ir_measures measure, without writing Python::

    python -m pyterrier_frechet eval --qrels QRELS --runs DIR_OR_FILES... (--text JSONL | --vectors PREFIX) \\
        --metrics FD@10 "FD(urr=True)@10" nDCG@10 RR@10 [--rel 2] [--per-query N --seed S] \\
        [--missing error|drop] [--format markdown|csv|latex] [--output FILE]
"""
import argparse
import logging
import os
import sys
import tempfile
from typing import Dict, List, Optional, Sequence

import ir_measures
import numpy as np
import pandas as pd
import pyterrier as pt
import scipy.stats

from .measure import _FD
from .provider import fd_sets
from .qrels import balance_qrels
from .runs import read_run, run_files, run_names
from .vectors import lookup_vectors, set_default_encoder

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
        if missing is not None and m.NAME == _FD.NAME and 'missing' not in m.params:
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
    fd_measures = [m for m in measures if m.NAME == _FD.NAME]
    columns = [str(m) for m in measures]
    labels = {str(m): column_label(m) for m in measures}
    rows = []
    previous = set_default_encoder(encoder) if encoder is not None else None
    try:
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
    finally:
        if encoder is not None:
            set_default_encoder(previous)
    return pd.DataFrame(rows)


def column_label(measure) -> str:
    """The measure's name without FD's ``missing=`` policy, which is reported in its own column."""
    return str(measure(missing='error')) if measure.NAME == _FD.NAME else str(measure)


def kendall_notes(table: pd.DataFrame, measures) -> List[str]:
    """Kendall τ-b of every FD column against the first non-FD column, across runs."""
    fd_cols = [column_label(m) for m in measures if m.NAME == _FD.NAME]
    ref = [column_label(m) for m in measures if m.NAME != _FD.NAME]
    if len(table) < 3 or not fd_cols or not ref:
        return []
    notes = []
    for col in fd_cols:
        tau, p = scipy.stats.kendalltau(table[col], table[ref[0]])
        notes.append(f'Kendall tau({col}, {ref[0]}) over {len(table)} runs = {tau:.3f} (p = {p:.2g}); '
                     'FD is lower-is-better, so agreement shows as a negative tau')
    return notes


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


def cmd_eval(args) -> int:
    measures = parse_metrics(args.metrics, rel=args.rel, missing=args.missing)
    qrels = _read_qrels(args.qrels)
    if args.per_query is not None:
        try:
            qrels = balance_qrels(qrels, args.per_query, rel=args.rel or 1, seed=args.seed)
        except ValueError as ex:
            raise CliError(str(ex)) from ex
    threshold = args.rel or 1
    if not (qrels['label'] >= threshold).any():
        raise CliError(f'{args.qrels}: no document is judged relevant at the threshold (label >= {threshold})')
    try:
        files = run_files(args.runs)
        names = run_names(files)
        runs = {name: read_run(f) for name, f in zip(names, files)}
    except ValueError as ex:
        raise CliError(str(ex)) from ex
    needs_vectors = any(m.NAME == _FD.NAME for m in measures)
    if needs_vectors and not (args.text or args.vectors):
        raise CliError('FD needs document vectors: pass --vectors PREFIX or --text JSONL')
    encoder = _encoder(args) if needs_vectors else None
    provider_log = logging.getLogger('pyterrier_frechet.provider')
    level = provider_log.level
    if args.missing == 'drop':  # the no_vector column and a closing note replace per-measure warnings
        provider_log.setLevel(logging.ERROR)
    try:
        table = evaluate_runs(runs, qrels, measures, encoder, verbose=not args.quiet)
    finally:
        provider_log.setLevel(level)
    text = format_table(table, args.format)
    notes = kendall_notes(table, measures)
    if needs_vectors and table['no_vector'].any():
        notes.append(f"{int(table['no_vector'].sum())} retrieved document(s) without a vector were left out "
                     "(column no_vector, per run)")
    if args.output:
        _write_atomically(args.output, text)
        print('\n'.join([f'wrote {args.output}'] + notes))
    elif args.format == 'markdown':
        print(text + ('\n' + '\n'.join(notes) if notes else ''))
    else:
        sys.stdout.write(text)
        if notes:
            print('\n'.join(notes), file=sys.stderr)
    return 0


def cmd_demo(args) -> int:
    from .demo import run_demo
    result = run_demo(args.model, args.work_dir, verbose=not args.quiet)
    print(result.table.to_string(index=False, float_format=lambda v: f'{v:.4g}'))
    print(f'\nFD: lower is better (nDCG@10, RR@10: higher is better). Encoder: {result.embedder!r}.')
    print(f'Documents encoded by this run: {result.n_encoded} (embedding cache: {result.embedder.cache.path})')
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog='python -m pyterrier_frechet', description='Fréchet Distance evaluation for IR')
    sub = parser.add_subparsers(dest='command', required=True)

    demo = sub.add_parser('demo', help='BM25 and dense retrieval on the bundled Cranfield collection, with FD, nDCG@10, RR@10 and mrt')
    demo.add_argument('--model', default=None, help='encoder (hub name or local path; default all-MiniLM-L6-v2)')
    demo.add_argument('--work-dir', default=None, help='indexes and embedding cache (default $PYTERRIER_FRECHET_CACHE or ~/.cache/pyterrier_frechet)')
    demo.add_argument('--quiet', action='store_true', help='no progress bars')
    demo.set_defaults(func=cmd_demo)

    ev = sub.add_parser('eval', help='score TREC run files with FD and any ir_measures measure')
    ev.add_argument('--qrels', required=True, help='TREC qrels file')
    ev.add_argument('--runs', required=True, nargs='+', help='run files and/or directories of run files (gzip allowed)')
    src = ev.add_mutually_exclusive_group()
    src.add_argument('--text', help='docno/text JSONL (gzip allowed), embedded through the cached Embedder')
    src.add_argument('--vectors', help='precomputed vectors: PREFIX.npy + PREFIX.ids.txt')
    ev.add_argument('--text-fields', nargs='+', default=['text'], help='JSONL fields joined into the text (default: text)')
    ev.add_argument('--model', default=None, help='encoder for --text (default all-MiniLM-L6-v2)')
    ev.add_argument('--metrics', nargs='+', default=['FD@10', 'FD(urr=True)@10', 'nDCG@10', 'RR@10'],
                    help='ir_measures names, e.g. FD@10 "FD(urr=True)@10" nDCG@10 "RR(rel=2)@10"')
    ev.add_argument('--rel', type=int, default=None, help='relevance threshold for every measure with a rel parameter (FD, RR, P, R, AP, ...)')
    ev.add_argument('--per-query', type=int, default=None, help='evaluate with qrels reduced to at most N relevant documents per query (highest grade first)')
    ev.add_argument('--seed', type=int, default=0, help='seed of --per-query (default 0)')
    ev.add_argument('--missing', choices=['error', 'drop'], default=None,
                    help="FD documents without a vector: fail (error, the default) or leave out and count (drop)")
    ev.add_argument('--format', choices=['markdown', 'csv', 'latex'], default='markdown')
    ev.add_argument('--output', help='write the table here (all or nothing) instead of standard output')
    ev.add_argument('--quiet', action='store_true', help='no progress bars')
    ev.set_defaults(func=cmd_eval)
    return parser


def main(argv=None) -> int:
    args = build_parser().parse_args(argv)
    logging.basicConfig(level=logging.WARNING, format='%(levelname)s %(name)s: %(message)s')
    try:
        return args.func(args)
    except ValueError as ex:  # CliError and the package's own clear ValueErrors
        print(f'error: {ex}', file=sys.stderr)
        return 2
