"""TREC run files as PyTerrier pipelines, so ``pt.Experiment`` scores a directory of other people's runs.

    systems = pf.runs.run_pipelines(['runs/'])           # {name: pt.Transformer}
    pt.Experiment(list(systems.values()), topics, qrels, eval_metrics=[FD@10, nDCG@10], names=list(systems))
"""
import gzip
import os
from pathlib import Path
from typing import Dict, Iterable, List, Union

import pandas as pd
import pyterrier as pt

_EXTENSIONS = ('.gz', '.txt', '.trec', '.run', '.res', '.tsv')


def run_files(paths: Iterable[Union[str, os.PathLike]]) -> List[Path]:
    """Expand files and directories (every regular, non-hidden file in them, sorted) into run files."""
    files = []
    for p in map(Path, paths):
        if p.is_dir():
            files.extend(sorted(f for f in p.iterdir() if f.is_file() and not f.name.startswith('.')
                                and not f.name.lower().startswith('readme')))
        elif p.is_file():
            files.append(p)
        else:
            raise ValueError(f'run file or directory {str(p)!r} does not exist')
    if not files:
        raise ValueError(f'no run files found in {[str(p) for p in paths]}')
    return files


def run_names(files: List[Path]) -> List[str]:
    """System names from file names: extensions dropped, and the dot-separated prefix all runs share
    (e.g. ``run.dl19.``) removed. Raises ValueError if two runs would get the same name."""
    stems = []
    for f in files:
        name = f.name
        while name.lower().endswith(_EXTENSIONS):
            name = name[:name.rfind('.')]
        stems.append(name.split('.'))
    common = 0
    if len(stems) > 1:
        while all(len(s) > common + 1 and s[common] == stems[0][common] for s in stems):
            common += 1
    names = ['.'.join(s[common:]) for s in stems]
    dup = {n for n in names if names.count(n) > 1}
    if dup:
        raise ValueError(f'several run files would be named {sorted(dup)}; rename them')
    return names


def read_qrels(path: Union[str, os.PathLike]) -> pd.DataFrame:
    """Read a TREC qrels file (``qid iter docno label``) with ``pt.io.read_qrels``; ValueError naming the file if it is
    missing, unreadable or empty."""
    path = str(path)
    if not os.path.isfile(path):
        raise ValueError(f'qrels file {path!r} does not exist')
    try:
        qrels = pt.io.read_qrels(path)
    except Exception as ex:
        raise ValueError(f'{path}: cannot be read as TREC qrels (qid iter docno label): {ex}') from ex
    if len(qrels) == 0:
        raise ValueError(f'{path}: the qrels are empty')
    return qrels


def read_run(path: Union[str, os.PathLike]) -> pd.DataFrame:
    """Read a TREC run file (``qid Q0 docno rank score tag``, gzip allowed) with ``pt.io.read_results``.

    A malformed line raises ValueError naming the file and line, which pt.io.read_results does not.
    """
    path = str(path)
    try:
        run = pt.io.read_results(path)
    except Exception as ex:  # pandas parse errors of several types: find the line and say which
        raise ValueError(_locate_bad_line(path) or f'{path}: cannot be read as a TREC run ({ex})') from ex
    if len(run) == 0:
        raise ValueError(f'{path}: the run is empty')
    if run['score'].isna().any():
        raise ValueError(_locate_bad_line(path) or f'{path}: missing scores')
    return run


def _locate_bad_line(path: str):
    opener = gzip.open if path.endswith('.gz') else open
    with opener(path, 'rt') as fin:
        for lineno, line in enumerate(fin, 1):
            parts = line.split()
            if not parts:
                continue
            if len(parts) != 6:
                return f'{path}:{lineno}: expected 6 columns (qid Q0 docno rank score tag), found {len(parts)}: {line.strip()!r}'
            try:
                int(parts[3])
                float(parts[4])
            except ValueError:
                return f'{path}:{lineno}: rank must be an integer and score a number: {line.strip()!r}'
    return None


def run_pipelines(paths: Iterable[Union[str, os.PathLike]]) -> Dict[str, pt.Transformer]:
    """``{name: pt.Transformer.from_df(run)}`` for every run file under ``paths`` (files or directories)."""
    files = run_files(paths)
    return {name: pt.Transformer.from_df(read_run(f)) for name, f in zip(run_names(files), files)}
