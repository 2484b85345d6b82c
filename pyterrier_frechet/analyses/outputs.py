"""Output folders that never destroy what the package did not write, and tables safe to open or paste.

**Folders** (``report --out``, ``--plot-dir``, ``demo --figures``): :class:`OutputFolder` resolves the path first
(``.``, ``..`` and ``x/..`` included) and accepts a folder that does not exist yet, an empty folder, or one marked
by :data:`MARKER` — a JSON file the package writes listing every file it put there. Anything else is refused
before any work, with nothing touched. Files are written into a staging folder (``.rep.*``, holding
:data:`STAGING_MARKER`) and then moved into place; replacing an earlier output removes only the files its marker
lists. A run that is killed leaves a staging folder or a marker listing what it may have written; the next run on
the same folder removes stale staging folders that carry the staging marker (and only the files the package
writes in them), never anything else.

**Tables**: :func:`csv_safe` neutralises cells a spreadsheet would run as a formula (OWASP: a leading ``'``
before ``=``, ``+``, ``-``, ``@``, tab or carriage return; numbers stay numbers); :func:`markdown_safe` escapes
``|``, line breaks and HTML in markdown table cells.
"""
import json
import logging
import os
import csv
import re
import unicodedata
import socket
import time
from contextlib import contextmanager
from pathlib import Path, PurePosixPath
from typing import Callable, Iterable, List, Optional

import pandas as pd

from ..files import read_json, temporary_file, temporary_folder

logger = logging.getLogger(__name__)

#: The file that marks a folder as written by this package; it lists the files written there.
MARKER = '.pyterrier-frechet-outputs.json'
#: The file that marks a staging folder (``.rep.*``) of a write in progress.
STAGING_MARKER = '.pyterrier-frechet-staging.json'
STAGING_PREFIX = '.rep.'
PACKAGE = 'pyterrier-frechet'

# what the package ever writes into an output folder: report.md, CSV tables, figures; nothing else is deleted
_OWN_FILE = re.compile(r'(figures/)?[A-Za-z0-9_][A-Za-z0-9_.@=()+,-]*\.(md|csv|png|pdf|tex)')


def _valid_entry(rel: str) -> bool:
    p = PurePosixPath(rel)
    return bool(_OWN_FILE.fullmatch(rel)) and not p.is_absolute() and '..' not in p.parts


def read_marker(folder: Path) -> Optional[List[str]]:
    """The files listed by ``folder``'s marker, None if it has no marker; ValueError if the marker is damaged."""
    path = folder / MARKER
    if not path.exists():
        return None
    try:
        data = read_json(path, 'output marker')
        files = data['files']
        ok = data.get('package') == PACKAGE and isinstance(files, list) and all(
            isinstance(f, str) and _valid_entry(f) for f in files)
    except (OSError, ValueError, KeyError, TypeError):
        ok = False
    if not ok:
        raise ValueError(f'{str(path)!r} is not a marker this package wrote (damaged or edited); delete the folder '
                         'yourself or name another one')
    return files


def temp_prefix(name: str) -> str:
    """The prefix of this process's temporary file for ``name``: ``.rep.NAME.HOST-PID.`` — the host and process in
    the name are its marker, so a later run can tell a file left by a dead process from one being written."""
    return f'{STAGING_PREFIX}{name}.{socket.gethostname()}-{os.getpid()}.'


def clean_stale_temp_files(folder, name: str) -> None:
    """Remove the temporary files for ``name`` in ``folder`` (:func:`temp_prefix`) left by dead processes of this
    host; regular files only, nothing else."""
    prefix = f'{STAGING_PREFIX}{name}.{socket.gethostname()}-'
    for p in Path(folder).glob(glob_escape(prefix) + '*'):
        pid = p.name[len(prefix):].split('.', 1)[0]
        if pid.isdigit() and not p.is_symlink() and p.is_file() and not _pid_alive(int(pid)):
            logger.warning('removing %s, left by an interrupted write of this package', p)
            p.unlink()


def glob_escape(text: str) -> str:
    return re.sub(r'([*?\[])', r'[\1]', text)


def _write_marker(folder: Path, files: Iterable[str], state: str) -> None:
    text = json.dumps({'package': PACKAGE, 'state': state, 'files': sorted(set(files))}, indent=1)
    clean_stale_temp_files(folder, MARKER)
    fd, tmp = temporary_file(folder, temp_prefix(MARKER))
    with os.fdopen(fd, 'wt', encoding='utf-8') as f:
        f.write(text)
    os.replace(tmp, folder / MARKER)


def _entries(folder: Path) -> List[str]:
    """Every file and folder under ``folder`` (relative POSIX paths), symbolic links not followed."""
    out = []
    for root, dirs, files in os.walk(folder):
        rel_root = Path(root).relative_to(folder)
        for name in dirs + files:
            out.append((rel_root / name).as_posix())
    return out


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OSError):
        return True
    return True


def _is_stale_staging(folder: Path, target: Path) -> bool:
    """``folder`` is a staging folder this package made for ``target`` and its process is gone."""
    if folder.is_symlink() or not folder.is_dir() or not folder.name.startswith(STAGING_PREFIX):
        return False
    try:
        data = read_json(folder / STAGING_MARKER, 'staging marker')
        if data.get('package') != PACKAGE or data.get('target') != str(target):
            return False
        same_host = data.get('host') == socket.gethostname()
        return not _pid_alive(int(data['pid'])) if same_host else time.time() - float(data['created']) > 86400
    except (OSError, ValueError, KeyError, TypeError):
        return False


def _remove_own_files(folder: Path, listed: Iterable[str]) -> None:
    """Remove the listed files (only files or links, never a folder's content) and then empty folders we made."""
    for rel in listed:
        if not _valid_entry(rel):
            continue
        p = folder / rel
        if p.is_symlink() or p.is_file():
            p.unlink()
    fig = folder / 'figures'
    if fig.is_dir() and not fig.is_symlink() and not any(fig.iterdir()):
        fig.rmdir()


def _clean_staging(folder: Path) -> None:
    """Remove a staging folder: the package's files in it and its marker; anything else stays (and so does it)."""
    own = [e for e in _entries(folder) if _valid_entry(e)]
    _remove_own_files(folder, own)
    for name in (STAGING_MARKER, MARKER):
        if (folder / name).is_file():
            (folder / name).unlink()
    try:
        folder.rmdir()
    except OSError:
        logger.warning('left the staging folder %s: it holds files this package did not write', folder)


class OutputFolder:
    """A folder the package writes files into, checked before any work (see the module docstring).

    Args:
        path: the folder as the user named it.
        option: how the user named it (``--out``, ``--plot-dir``), for messages.
        reserved: which relative paths this output may write; an existing file there that the package did not
            write (not listed by the marker) is refused.
    """

    def __init__(self, path, option: str, reserved: Callable[[str], bool]):
        self.given, self.option, self.reserved = str(path), option, reserved
        self.path = Path(os.path.abspath(os.path.expanduser(str(path)))).resolve()
        self.listed: List[str] = []
        self.check()

    def _say(self, text: str) -> ValueError:
        shown = repr(self.given) + ('' if str(self.path) == self.given else f' ({self.path})')
        return ValueError(f'{self.option} {shown}: {text}')

    def check(self) -> None:
        """Refuse a path that is not a new, empty or marked folder (nothing is touched); remove stale staging."""
        p = self.path
        if p.parent == p:
            raise self._say('is the root of the file system; name a new folder')
        if p.exists() and not p.is_dir():
            raise self._say('exists and is not a folder')
        if not p.exists():
            if not p.parent.is_dir():
                raise self._say(f'its parent folder {str(p.parent)!r} does not exist')
            if not os.access(p.parent, os.W_OK):
                raise self._say(f'its parent folder {str(p.parent)!r} is not writable')
            self.listed = []
        else:
            if not os.access(p, os.W_OK):
                raise self._say('is not writable')
            if (p / 'figures').is_symlink() or (p / MARKER).is_symlink():
                raise self._say('its figures/ folder or its marker is a symbolic link; the package writes only into '
                                'folders it made — nothing was deleted')
            listed = read_marker(p)
            if listed is None:  # any entry is enough to refuse: do not walk a big tree (--out ~)
                entries = [c.name for c in p.iterdir()]
                fig = p / 'figures'
                if fig.is_dir() and not fig.is_symlink():
                    entries += [f'figures/{c.name}' for c in fig.iterdir()]
            else:
                entries = _entries(p)
            foreign = [e for e in entries if not self._ours(e, listed)]
            if listed is None and foreign:
                raise self._say(f'holds files this package did not write (e.g. {", ".join(sorted(foreign)[:3])}); '
                                f'name a new or empty folder, or the folder of an earlier output of this package '
                                f'(marked by {MARKER}) — nothing was deleted')
            clash = [e for e in foreign if self.reserved(e) and not (p / e).is_dir()]
            if clash:
                raise self._say(f'holds {", ".join(sorted(clash)[:3])}, which this package did not write, under a name '
                                'of the files it writes there: the new output would sit beside it (it is neither '
                                'replaced nor deleted), and a reader would take it for part of that output; move it '
                                'out or name another folder — nothing was changed')
            self.listed = listed or []
        self._clean_stale()

    def _ours(self, entry: str, listed: Optional[List[str]]) -> bool:
        top = entry.split('/')[0]
        if entry in (MARKER, STAGING_MARKER, 'figures') or top.startswith(STAGING_PREFIX):
            return True
        return listed is not None and entry in listed

    def _stagings(self) -> List[Path]:
        places = [(self.path.parent, f'{STAGING_PREFIX}{self.path.name}.')]
        if self.path.is_dir():
            places.append((self.path, STAGING_PREFIX))
        return [c for where, prefix in places for c in where.glob(glob_escape(prefix) + '*') if c.is_dir()]

    def _clean_stale(self) -> None:
        if self.path.is_dir():
            clean_stale_temp_files(self.path, MARKER)
        for folder in self._stagings():
            if _is_stale_staging(folder, self.path):
                logger.warning('removing %s, left by an interrupted write of this package', folder)
                _clean_staging(folder)

    @contextmanager
    def staging(self):
        """A fresh staging folder to write the files into; call :meth:`commit` inside the block to move them in."""
        self.check()
        where, prefix = ((self.path, STAGING_PREFIX) if self.path.is_dir()
                         else (self.path.parent, f'{STAGING_PREFIX}{self.path.name}.'))
        work = temporary_folder(where, prefix)
        (work / STAGING_MARKER).write_text(json.dumps({'package': PACKAGE, 'pid': os.getpid(), 'created': time.time(),
                                                       'host': socket.gethostname(), 'target': str(self.path)}))
        try:
            yield work
        finally:
            if work.exists():
                _clean_staging(work)

    def commit(self, work: Path, replace: bool) -> List[str]:
        """Move every file of ``work`` into the folder. ``replace``: first remove the files the marker lists (an
        earlier report); otherwise files of the same name are replaced and the others kept (figures of several
        commands in one --plot-dir). Returns the paths written."""
        new = [e for e in _entries(work) if (work / e).is_file() and e not in (STAGING_MARKER, MARKER)]
        bad = [e for e in new if not _valid_entry(e)]
        if bad:
            raise RuntimeError(f'internal: output names {bad} are not ones the package may write')
        if not self.path.exists():
            _write_marker(work, new, 'complete')
            try:  # the staging marker travels along, so a kill before the rename leaves a folder the next run cleans
                os.rename(work, self.path)
            except OSError:
                if not self.path.exists():
                    raise
                # someone made the folder meanwhile: merge as below
            else:
                (self.path / STAGING_MARKER).unlink()
                return [str(self.path / e) for e in new]
        listed = read_marker(self.path) or []
        clash = [e for e in new if (self.path / e).exists() and e not in listed]
        if clash:
            raise self._say(f'{", ".join(clash[:3])} appeared there meanwhile and was not written by this package; '
                            'nothing was replaced')
        _write_marker(self.path, set(listed) | set(new), 'replacing')  # a kill from here on leaves all of it listed
        if replace:
            _remove_own_files(self.path, [e for e in listed if e not in new])
        for e in new:
            (self.path / e).parent.mkdir(exist_ok=True)
            os.replace(work / e, self.path / e)
        _write_marker(self.path, set(new) | (set() if replace else set(listed)), 'complete')
        if (self.path / STAGING_MARKER).is_file():  # left by a run killed just after its rename
            (self.path / STAGING_MARKER).unlink()
        return [str(self.path / e) for e in new]

    def __str__(self):
        return str(self.path)


def report_paths(rel: str) -> bool:
    """What ``report`` may write: report.md, the paper table (table.md, table.tex), top-level CSV tables and anything
    under figures/."""
    return (rel in ('report.md', 'table.md', 'table.tex') or rel.startswith('figures/')
            or ('/' not in rel and rel.endswith('.csv')))


def named_paths(names: Iterable[str]) -> Callable[[str], bool]:
    names = set(names)
    return lambda rel: rel in names


# --- tables ---

_FORMULA_START = ('=', '+', '-', '@', '\t', '\r')
_NUMBER = re.compile(r'[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?|[+-]?(inf|nan)', re.IGNORECASE)


def csv_cell(value):
    """One cell made inert for spreadsheets: text beginning with ``= + - @``, tab or CR (after any spaces) gets a
    leading ``'`` (OWASP's CSV-injection rule), unless it is a plain number; everything else unchanged."""
    if isinstance(value, str) and value.lstrip(' ').startswith(_FORMULA_START) and not _NUMBER.fullmatch(value.strip()):
        return "'" + value
    return value


def csv_safe(table: pd.DataFrame) -> pd.DataFrame:
    """``table`` with every text cell (and column name) through :func:`csv_cell`; numeric columns untouched."""
    out = table.copy()
    for col in out.columns:
        if not pd.api.types.is_numeric_dtype(out[col]) and not pd.api.types.is_bool_dtype(out[col]):
            out[col] = out[col].map(csv_cell)
    out.columns = [csv_cell(c) if isinstance(c, str) else c for c in out.columns]
    return out


def to_csv(table: pd.DataFrame, path=None, **kwargs):
    """``DataFrame.to_csv`` of :func:`csv_safe`'s table (index off unless asked). Every CSV the package writes goes
    through here. Where a text cell, column name or index label holds a carriage return, every field is quoted:
    Python's csv writer quotes a field with a line feed but not one with a lone CR (its line terminator here is
    ``\n``), and every CSV reader ends the row at that CR (a name ``'cr\rhere'`` shifted the row's columns)."""
    kwargs.setdefault('index', False)
    safe = csv_safe(table)
    if _holds_cr(safe) or (kwargs['index'] and _holds_cr(safe.index.to_frame())):
        kwargs.setdefault('quoting', csv.QUOTE_ALL)
    return safe.to_csv(path, **kwargs)


def _holds_cr(frame: pd.DataFrame) -> bool:
    """Whether a text cell or a column name of ``frame`` holds a carriage return."""
    if any(isinstance(c, str) and '\r' in c for c in frame.columns):
        return True
    return any(frame[c].map(lambda v: isinstance(v, str) and '\r' in v).any() for c in frame.columns
               if not pd.api.types.is_numeric_dtype(frame[c]) and not pd.api.types.is_bool_dtype(frame[c]))


_ASCII_PUNCTUATION = r'!-/:-@\[-`{-~'  # the characters a backslash escapes in Markdown (CommonMark 2.4)


def markdown_text(value, *, cell: bool = False) -> str:
    """Text for a markdown table cell or paragraph, escaped only where Markdown would change it, so a name prints
    as given (``bm25_base``, ``A&B``, ``BM25 >> MiniLM``) and renders as given. Backslash-escaped: ``|`` (a cell's
    end); ``*`` `` ` `` ``~`` ``$`` (emphasis, code, strike-through, math); ``_`` unless inside a word (GFM: ``a_b``
    is not emphasis); ``]`` before ``(`` or ``[`` (a link); ``<`` before a tag or an autolink; ``&`` of an entity
    (``&amp;``); ``\\`` before any of them; and, outside a table ``cell``, what opens a line and would make it a
    block (``#``, ``>``, ``-``, ``+``, ``=``, ``1.``, ``[x]:``). Line breaks (also U+2028/2029) become ``<br>``; other
    control and format characters (BEL, ESC, bidirectional overrides) a space, so a name can neither split a row nor
    drive a terminal. Checked by rendering with a CommonMark/GFM parser (tests/test_outputs.py)."""
    text = ''.join(ch if ch in '\r\n\u2028\u2029' or unicodedata.category(ch) not in ('Cc', 'Cf') else ' '
                   for ch in str(value))
    text = re.sub(rf'\\(?=[{_ASCII_PUNCTUATION}\r\n\u2028\u2029]|$)', r'\\\\', text)
    text = re.sub(r'([|*`~$])', r'\\\1', text)
    text = re.sub(r'(?<![^\W_])_|_(?![^\W_])', r'\\_', text)
    text = re.sub(r'\](?=[(\[])', r'\\]', text)
    text = re.sub(r'<(?=[A-Za-z/!?])', r'\\<', text)
    text = re.sub(r'&(?=#?[0-9A-Za-z]+;)', r'\\&', text)
    if not cell:  # a reference definition '[x]: url' opens a line: its '[' escaped
        text = re.sub(r'(^|[\r\n\u2028\u2029])([ \t]*)\[(?=[^\r\n\u2028\u2029]*\]:)', r'\1\2\\[', text)
        text = re.sub(r'(^|[\r\n\u2028\u2029])([ \t]*)([#>+=-])', r'\1\2\\\3', text)
        text = re.sub(r'(^|[\r\n\u2028\u2029])([ \t]*\d{1,9})([.)])', r'\1\2\\\3', text)
    return re.sub(r'\r\n|\r|\n|\u2028|\u2029', '<br>', text)


def markdown_safe(table: pd.DataFrame) -> pd.DataFrame:
    """``table`` with every text cell and column name through :func:`markdown_text`; numbers untouched."""
    out = table.copy()
    for col in out.columns:
        if not pd.api.types.is_numeric_dtype(out[col]) and not pd.api.types.is_bool_dtype(out[col]):
            out[col] = out[col].map(lambda v: markdown_text(v, cell=True) if isinstance(v, str) else v)
    out.columns = [markdown_text(c, cell=True) for c in out.columns]
    return out


def to_markdown(table: pd.DataFrame, **kwargs) -> str:
    kwargs.setdefault('index', False)
    return markdown_safe(table).to_markdown(**kwargs)


__all__ = ['MARKER', 'OutputFolder', 'csv_cell', 'csv_safe', 'markdown_safe', 'markdown_text', 'named_paths',
           'read_marker', 'report_paths', 'to_csv', 'to_markdown']
