"""TREC run files as PyTerrier pipelines, so ``pt.Experiment`` scores a directory of other people's runs.

    systems = pf.runs.run_pipelines(['runs/'])           # {name: pt.Transformer}
    pt.Experiment(list(systems.values()), topics, qrels, eval_metrics=[FD@10, nDCG@10], names=list(systems))
"""
import csv
import io
import logging
import os
import re
from pathlib import Path
from typing import Dict, Iterable, List, Union

import numpy as np
import pandas as pd
import pyterrier as pt

from ..files import READ_ERRORS, ID_CHARACTERS_IN_TEXT, check_ids, id_form_pairs, read_bytes

logger = logging.getLogger(__name__)

_EXTENSIONS = ('.gz', '.bz2', '.xz', '.txt', '.trec', '.run', '.res', '.tsv')


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


_QRELS_COLUMNS = ('qid', 'iter', 'docno', 'label')
_RUN_COLUMNS = ('qid', 'Q0', 'docno', 'rank', 'score', 'tag')


def read_text(path: Union[str, os.PathLike], what: str) -> str:
    """The text of ``path`` as one string: gzip, bzip2 and xz recognised by their content (not the name), UTF-8 (a BOM
    dropped), CRLF line ends accepted. A missing or unreadable file, a damaged compressed stream or a byte that is not
    UTF-8 raises ValueError naming the file (and line)."""
    path = str(path)
    if not os.path.isfile(path):
        raise ValueError(f'{what} file {path!r} does not exist')
    try:
        data = read_bytes(path)
    except READ_ERRORS as ex:
        raise ValueError(f'{path}: cannot be read ({type(ex).__name__}: {ex})') from ex
    _check_line_lengths(path, data, what)
    try:
        text = data.decode('utf-8')
    except UnicodeDecodeError as ex:
        line = data.count(b'\n', 0, ex.start) + 1
        raise ValueError(f'{path}:{line}: byte 0x{data[ex.start]:02x} is not UTF-8 text; convert the file to UTF-8 '
                         f'(e.g. iconv -f latin1 -t utf-8)') from ex
    return text[1:] if text.startswith('\ufeff') else text


class WrongFileKind(ValueError):
    """A qrels file given where a run file was expected, or the reverse (``kind``: what the file looks like)."""

    def __init__(self, message: str, kind: str):
        super().__init__(message)
        self.kind = kind


def _is_int(text: str) -> bool:
    return re.fullmatch(r'[+-]?[0-9]{1,18}', text) is not None


def _is_float(text: str) -> bool:
    try:
        return np.isfinite(float(text))
    except ValueError:
        return False


def looks_like(text: str) -> str:
    """What the first non-blank line of a TREC file looks like: ``'run'`` (``qid Q0 docno rank score tag``: six
    columns, an integer rank, a numeric score), ``'qrels'`` (``qid iter docno label``: four columns, an integer
    label), or ``''``."""
    for line in text.splitlines():
        parts = line.split()
        if not parts:
            continue
        if len(parts) == 6 and _is_int(parts[3]) and _is_float(parts[4]):
            return 'run'
        if len(parts) == 4 and _is_int(parts[3]):
            return 'qrels'
        return ''
    return ''


def _check_kind(path: str, text: str, expected: str) -> None:
    """WrongFileKind if ``text`` looks like the other kind of TREC file (a run given as qrels or the reverse)."""
    kind = looks_like(text)
    if kind == '' or kind == expected:
        return
    lineno, first = next((n, line) for n, line in enumerate(text.splitlines(), 1) if line.split())
    if expected == 'qrels':
        raise WrongFileKind(f'{path}:{lineno}: this looks like a run file (6 columns: qid Q0 docno rank score tag, e.g. '
                            f'{quoted(first)}), not qrels (4 columns: qid iter docno label); pass it as a run and '
                            f'give the relevance judgments as the qrels', 'run')
    raise WrongFileKind(f'{path}:{lineno}: expected 6 columns (qid Q0 docno rank score tag), found 4: {quoted(first)}; '
                        f'this looks like a qrels file (qid iter docno label), not a run: pass it as the qrels', 'qrels')


def _columns(path: str, text: str, names, what: str) -> pd.DataFrame:
    """Whitespace-separated columns, all as str; a line with another number of columns is a ValueError naming
    the file, the line and the expected layout. Where every line has a column too many, pandas takes the first for
    the index and shifts the others: an index that is not the row numbers gives it away, and the line is named."""
    layout = ' '.join(names)
    error = None
    try:
        frame = pd.read_csv(io.StringIO(text), sep=r'\s+', header=None, names=list(names), dtype=str,
                            quoting=csv.QUOTE_NONE, skip_blank_lines=True, na_filter=False, engine='c')
    except (pd.errors.ParserError, ValueError) as ex:
        frame = None
        error = ex
    if frame is None or (frame[names[-1]] == '').any() or not isinstance(frame.index, pd.RangeIndex):
        raise ValueError(_bad_line(path, text, len(names), layout, what) or f'{path}: cannot be read as {what} ({layout}): {error}')
    if len(frame) == 0:
        raise ValueError(f'{path}: the {what} file is empty')
    return frame


#: The longest line a qrels or run file may have, in bytes. A TREC line is a few short columns; a longer one (a file
#: of another kind, a bomb of one line) is refused before it is split.
MAX_LINE_BYTES = 1 << 16
#: How much of a line an error message quotes, in characters.
QUOTED_CHARS = 160


def quoted(line: str) -> str:
    """``line`` (stripped) as an error message quotes it: at most :data:`QUOTED_CHARS` characters."""
    line = line.strip()
    return repr(line) if len(line) <= QUOTED_CHARS else f'{line[:QUOTED_CHARS]!r}… ({len(line)} characters)'


def _check_line_lengths(path: str, data: bytes, what: str) -> None:
    """Refuse a line longer than :data:`MAX_LINE_BYTES`, naming its number, before any split (a vectorised scan in
    blocks, so its memory stays bounded)."""
    def refused(lineno: int, length: str) -> ValueError:
        return ValueError(f'{path}:{lineno}: a line of {length} bytes, longer than the {MAX_LINE_BYTES} a {what} line '
                          f'may have (a TREC line is a few short columns): is this a {what} file?')

    start, line, block = 0, 1, 1 << 26
    for offset in range(0, len(data), block):
        chunk = np.frombuffer(data, dtype=np.uint8, count=min(block, len(data) - offset), offset=offset)
        ends = np.flatnonzero(chunk == 10)
        if data.find(b'\r', offset, offset + len(chunk)) >= 0:  # a line also ends at a CR not followed by LF (old Mac
            cr = np.flatnonzero(chunk == 13)                      # files, which pandas reads too)
            lone = cr[(cr + 1 >= len(chunk)) | (chunk[np.minimum(cr + 1, len(chunk) - 1)] != 10)]
            ends = np.union1d(ends, lone)
        ends = ends + offset
        bounds = np.concatenate([[start - 1], ends])
        lengths = np.diff(bounds) - 1
        if len(lengths) and lengths.max() > MAX_LINE_BYTES:
            i = int(np.argmax(lengths > MAX_LINE_BYTES))
            raise refused(line + i, str(int(lengths[i])))
        if len(ends):
            start, line = int(ends[-1]) + 1, line + len(ends)
        if offset + len(chunk) - start > MAX_LINE_BYTES:
            raise refused(line, f'more than {MAX_LINE_BYTES}')


def _bad_line(path: str, text: str, n_columns: int, layout: str, what: str):
    for lineno, line in enumerate(text.splitlines(), 1):
        parts = line.split()
        if parts and len(parts) != n_columns:
            if what == 'qrels' and len(parts) == n_columns - 1:
                hint = ' (a qrels line needs a relevance label)'
            elif len(parts) == n_columns + 1:
                hint = (f' (one more than the layout: the last, {parts[-1][:QUOTED_CHARS]!r}, is not part of a TREC '
                        f'{what} line; remove that column)')
            else:
                hint = ''
            return f'{path}:{lineno}: expected {n_columns} columns ({layout}), found {len(parts)}{hint}: {quoted(line)}'
    return None


def _first_bad(path: str, bad: np.ndarray, text: str, message: str) -> str:
    """``path:line: message: 'the line'`` for the first row flagged in ``bad``."""
    row = int(np.flatnonzero(bad)[0])
    lines = [(n, line) for n, line in enumerate(text.splitlines(), 1) if line.split()]
    lineno, line = lines[row]
    return f'{path}:{lineno}: {message}: {quoted(line)}'


def read_qrels(path: Union[str, os.PathLike]) -> pd.DataFrame:
    """Read a TREC qrels file (``qid iter docno label``; gzip/bzip2/xz by content, UTF-8) into ``qid, docno, label``.

    Every line needs the four columns and an integer label: a three-column line (no label), a header or a
    non-integer label is a ValueError naming the file and line — never a silently shifted column. A run file given
    as qrels is recognised as such (:class:`WrongFileKind`)."""
    path = str(path)
    text = read_text(path, 'qrels')
    _check_kind(path, text, 'qrels')
    frame = _columns(path, text, _QRELS_COLUMNS, 'qrels')
    bad = ~frame['label'].str.fullmatch(r'[+-]?[0-9]{1,18}').to_numpy(dtype=bool)  # as trec_eval reads it: decimal digits
    if bad.any():
        raise ValueError(_first_bad(path, bad, text, 'the relevance label (4th column) must be an integer'))
    _check_file_ids(path, frame, text)
    return pd.DataFrame({'qid': frame['qid'], 'docno': frame['docno'], 'label': frame['label'].astype(np.int64)})


def _check_file_ids(path: str, frame: pd.DataFrame, text: str) -> None:
    """The file's query ids and docnos by the one id rule (:func:`~pyterrier_frechet.files.check_ids`); a file whose
    text holds no character the rule refuses (besides the separators) passes in one scan of the text."""
    if not ID_CHARACTERS_IN_TEXT.search(text):
        return
    check_ids(frame['qid'].unique(), f'{path}: the query ids')
    check_ids(frame['docno'].unique(), f'{path}: the docnos')


def read_run(path: Union[str, os.PathLike]) -> pd.DataFrame:
    """Read a TREC run file (``qid Q0 docno rank score tag``; gzip/bzip2/xz by content, UTF-8) into
    ``qid, docno, rank, score, name``. A malformed line raises ValueError naming the file and line; a qrels file
    given as a run is recognised as such (:class:`WrongFileKind`)."""
    path = str(path)
    text = read_text(path, 'run')
    _check_kind(path, text, 'run')
    frame = _columns(path, text, _RUN_COLUMNS, 'run')
    rank = pd.to_numeric(frame['rank'], errors='coerce')
    score = pd.to_numeric(frame['score'], errors='coerce')
    bad = (rank.isna() | (rank.fillna(0) % 1 != 0) | score.isna()).to_numpy()
    if bad.any():
        raise ValueError(_first_bad(path, bad, text, 'rank (4th column) must be an integer and score (5th) a number'))
    finite = np.isfinite(score.to_numpy(dtype=np.float64))
    if not finite.all():
        raise ValueError(_first_bad(path, ~finite, text, 'the score is not finite'))
    _check_file_ids(path, frame, text)
    return pd.DataFrame({'qid': frame['qid'], 'docno': frame['docno'], 'rank': rank.astype(np.int64),
                         'score': score.astype(np.float64), 'name': frame['tag']})


def check_run_queries(runs: Dict[str, pd.DataFrame], qrels: pd.DataFrame) -> List[str]:
    """Warn (``logging.warning``, once) when queries of the runs match no query of the qrels: they are left out of
    every measure. Where such ids equal qrels ids written differently (``1.0`` vs ``1``, ``01``, blanks, case,
    Unicode form) the warning says so: ids are compared as text. Returns the warning's lines (empty if none)."""
    judged = set(qrels['qid'].astype(str))
    lines, pairs = [], {}
    for name, run in runs.items():
        qids = set(run['qid'].astype(str))
        unmatched = sorted(qids - judged)
        if not unmatched:
            continue
        lines.append(f'run {name!r}: {len(unmatched)} of {len(qids)} queries match no qrels query, e.g. {unmatched[:3]}')
        pairs.update(id_form_pairs(unmatched, judged))
    if not lines:
        return []
    if pairs:
        examples = ', '.join(f'run {a!r} vs qrels {b!r}' for a, b in sorted(pairs.items())[:3])
        lines.append(f'query ids are compared as text, and {len(pairs)} of them differ only in how they are written '
                     f'({examples}): write the run and the qrels ids alike')
    else:
        lines.append('those queries are left out of every measure (unjudged)')
    logger.warning('; '.join(lines))
    return lines


def run_pipelines(paths: Iterable[Union[str, os.PathLike]]) -> Dict[str, pt.Transformer]:
    """``{name: pt.Transformer.from_df(run)}`` for every run file under ``paths`` (files or directories)."""
    files = run_files(paths)
    return {name: pt.Transformer.from_df(read_run(f)) for name, f in zip(run_names(files), files)}
