"""Small text listings the CLI reads: one record per line, fields separated by a tab (or by blanks when the line has
no tab), ``#`` starting a comment. Read as text only — nothing in them is executed or unpickled.

- :func:`read_query_groups`: ``qid group`` — queries that are not independent (a topic, a session, an information
  need), for the cluster bootstrap and jackknife (``--query-groups``);
- :func:`read_run_groups`: ``run group type`` — the pooling simulation's run groups (``pool-sim --groups``);
- :func:`read_listing`: any such listing with named fields.
"""
from pathlib import Path
from typing import Sequence, Union

import pandas as pd


def read_listing(path: Union[str, Path], fields: Sequence[str], what: str) -> pd.DataFrame:
    """One row per non-empty line of ``path``, with ``fields`` as columns (strings). ValueError naming the file and
    line for a line with another number of fields or a first field listed twice, and for a file that lists nothing."""
    rows, first = [], {}
    with open(path, 'rt', encoding='utf-8-sig') as f:  # a byte-order mark is not part of the first field
        for lineno, line in enumerate(f, 1):
            line = line.split('#', 1)[0].strip()
            if not line:
                continue
            parts = line.split('\t') if '\t' in line else line.split()
            parts = [p.strip() for p in parts]
            if len(parts) != len(fields) or not all(parts):
                raise ValueError(f'{path}:{lineno}: expected {len(fields)} fields ({", ".join(fields)}), got {parts}')
            if parts[0] in first:
                raise ValueError(f'{path}:{lineno}: {fields[0]} {parts[0]!r} listed twice (first on line '
                                 f'{first[parts[0]]}); give each {fields[0]} one line')
            first[parts[0]] = lineno
            rows.append(parts)
    if not rows:
        raise ValueError(f'{path}: no {what} listed')
    return pd.DataFrame(rows, columns=list(fields), dtype=str)


def read_query_groups(path: Union[str, Path]) -> pd.DataFrame:
    """A query-groups file: ``qid<TAB>group`` per line (``#`` comments), e.g. the topic of each query. Returns a
    frame with columns ``qid`` and ``group``, as ``bootstrap(query_groups=...)`` takes it."""
    return read_listing(path, ('qid', 'group'), 'query group')


def read_run_groups(path: Union[str, Path]) -> tuple:
    """A run-grouping file for the pooling simulation: ``run<TAB>group<TAB>type`` per line (``#`` comments).
    Returns ``(groups, types)`` dicts keyed by run name."""
    table = read_listing(path, ('run', 'group', 'type'), 'run')
    return dict(zip(table['run'], table['group'])), dict(zip(table['run'], table['type']))
