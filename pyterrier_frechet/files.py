"""The one place the package opens the text files it is given (qrels, runs, JSONL corpora): gzip, bzip2 and xz are
recognised by their content (magic bytes), whatever the file is named, and read decompressed; anything else is read
as it is. The small JSON files it reads back (output and model markers, cache identities, manifests, model configs)
through one bounded reader (:func:`read_json`). And the loose form of an id read from them (:func:`id_form`), to name ids written differently in two files.
A leaf module (it imports nothing of the package), so every layer may use it."""
import bz2
import json
import gzip
import lzma
import os
import re
import unicodedata
import zlib
from typing import BinaryIO, Optional, Union

# errors a damaged or truncated compressed stream raises while it is read (gzip's BadGzipFile and bz2's are OSError)
READ_ERRORS = (OSError, EOFError, zlib.error, lzma.LZMAError)


def compression(path: Union[str, os.PathLike]) -> Optional[str]:
    """``'gzip'``, ``'bzip2'`` or ``'xz'`` from the first bytes of ``path``; None for anything else (plain text)."""
    with open(path, 'rb') as fin:
        head = fin.read(10)
    if head[:2] == b'\x1f\x8b':
        return 'gzip'
    if head[:6] == b'\xfd7zXZ\x00':
        return 'xz'
    # "BZh", a block size 1-9, then a block's magic (pi) or, for an empty stream, the end-of-stream magic (sqrt(pi)):
    # ten bytes a text file does not start with
    if head[:3] == b'BZh' and head[3:4] in b'123456789' and len(head) == 10 and head[4:] in (b'1AY&SY', b'\x17rE8P\x90'):
        return 'bzip2'
    return None


_OPENERS = {'gzip': gzip.open, 'bzip2': bz2.open, 'xz': lzma.open}


def open_binary(path: Union[str, os.PathLike]) -> BinaryIO:
    """``path`` opened for reading bytes, decompressed when its content is gzip, bzip2 or xz."""
    kind = compression(path)
    return open(path, 'rb') if kind is None else _OPENERS[kind](path, 'rb')


def read_bytes(path: Union[str, os.PathLike]) -> bytes:
    """The whole (decompressed) content of ``path``."""
    with open_binary(path) as fin:
        return fin.read()


def id_form(qid: str) -> str:
    """A loose form of a query id, to spot ids written differently: NFC, no surrounding blanks, lower case, a
    number written as an integer where it is one (``1.0``, ``01``, ``1e0`` → ``1``)."""
    text = unicodedata.normalize('NFC', qid).strip().lower()
    if re.fullmatch(r'[+-]?(\d+\.?\d*|\.\d+)([e][+-]?\d+)?', text):
        value = float(text)
        if value.is_integer() and abs(value) < 2 ** 53:
            return str(int(value))
    return text


def id_form_pairs(ids, known) -> dict:
    """Each id of ``ids`` that ``known`` lacks but holds written differently (same :func:`id_form`), mapped to that
    known id (the first in sorted order where several share a form) — the one pairing behind every "ids written
    differently" message."""
    known = {str(k) for k in known}
    loose = {}
    for k in sorted(known):
        loose.setdefault(id_form(k), k)
    return {q: loose[id_form(q)] for q in sorted({str(q) for q in ids} - known) if id_form(q) in loose}


def chmod_as_open(path, base: int = 0o666) -> None:
    """Give ``path`` the mode ``open()`` (``base`` 0o666) or ``mkdir`` (0o777) would have given it under the current
    umask — for files made by ``tempfile.mkstemp`` (0600) and renamed into place."""
    os.chmod(path, base & ~current_umask(os.path.dirname(os.path.abspath(path))))


def current_umask(probe_dir: Optional[str] = None) -> int:
    """The process umask, read without changing it (``os.umask`` can only be read by setting it, which leaves a window
    where another thread's new file gets mode 0666): Linux's ``/proc/self/status`` ``Umask:`` line; elsewhere the mode
    of a folder made with 0o777 in ``probe_dir`` (default: the temporary folder), removed at once."""
    try:
        with open('/proc/self/status', 'rt') as fin:
            for line in fin:
                if line.startswith('Umask:'):
                    return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    import tempfile
    import uuid
    probe = os.path.join(probe_dir or tempfile.gettempdir(), f'.umask-probe-{uuid.uuid4().hex}')
    os.mkdir(probe, 0o777)
    try:
        return 0o777 & ~os.stat(probe).st_mode
    finally:
        os.rmdir(probe)


#: The largest JSON file the package reads back (a marker, an identity, a manifest, a model config): theirs are a few
#: kB; a larger one is not one of them, and reading it whole would cost memory for nothing.
MAX_JSON_BYTES = 1 << 20


class JSONFileError(ValueError):
    """A JSON file :func:`read_json` refused (too large, too deep, not UTF-8 or not JSON)."""


def read_json(path: Union[str, os.PathLike], what: str = 'JSON file', max_bytes: int = MAX_JSON_BYTES):
    """The JSON value in ``path``, read bounded: at most ``max_bytes`` bytes (ValueError for a larger file, before
    it is read whole) and nesting no deeper than Python's parser allows (not a RecursionError). Every failure is a
    :class:`JSONFileError` (a ValueError; or the OSError of opening it) naming ``what`` and the file; invalid UTF-8
    and invalid JSON too."""
    with open(path, 'rb') as fin:
        raw = fin.read(max_bytes + 1)
    if len(raw) > max_bytes:
        raise JSONFileError(f'{what} {os.fspath(path)!r} is larger than {max_bytes} bytes: not a file this package '
                         'wrote; delete or replace it')
    try:
        return json.loads(raw.decode('utf-8'))
    except RecursionError:
        raise JSONFileError(f'{what} {os.fspath(path)!r} nests deeper than JSON can be read here: not a file this package '
                         'wrote; delete or replace it') from None
    except (UnicodeDecodeError, ValueError) as ex:
        raise JSONFileError(f'{what} {os.fspath(path)!r} is not valid JSON ({ex}); delete or replace it') from None


def loads_line(line: str):
    """One JSONL record (``json.loads``), with a record nested too deeply for the parser as a ValueError (a
    JSONDecodeError, as for any other invalid line) instead of a RecursionError."""
    try:
        return json.loads(line)
    except RecursionError:
        raise json.JSONDecodeError('nested too deeply to read', line[:50], 0) from None
