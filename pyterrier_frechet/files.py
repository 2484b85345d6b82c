"""The one place the package opens the text files it is given (qrels, runs, JSONL corpora): gzip, bzip2 and xz are
recognised by their content (magic bytes), whatever the file is named, and read decompressed; anything else is read
as it is. The small JSON files it reads back (output and model markers, cache identities, manifests, model configs)
through one bounded reader (:func:`read_json`). And the loose form of an id read from them (:func:`id_form`), to name ids written differently in two files.
A leaf module (it imports nothing of the package), so every layer may use it."""
import bz2
import json
import io
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


#: The most a file read whole (a qrels or run file) may hold once decompressed, in bytes. Several times a run of 1,000
#: documents for each of MS MARCO's 6,980 dev queries (about 0.4 GB); a larger one, or a compressed bomb, is refused
#: while it is read, before it fills the memory.
MAX_TEXT_BYTES = 2 << 30

_MAGIC = {'gzip': b'\x1f\x8b', 'bzip2': b'BZh', 'xz': b'\xfd7zXZ\x00'}
_IN, _OUT = 1 << 20, 1 << 22  # compressed bytes read, decompressed bytes made, per step


class CompressedDataError(OSError):
    """A compressed file that cannot be read as one: data after its last stream that is no stream of the same kind
    (nor the NUL padding gzip and xz allow), a stream cut short, or more decompressed bytes than the bound. An
    OSError, as a damaged stream's own errors are (:data:`READ_ERRORS`)."""


def _decompressor(kind: str):
    if kind == 'gzip':
        return zlib.decompressobj(wbits=16 + zlib.MAX_WBITS)  # one member; the next one gets its own
    return bz2.BZ2Decompressor() if kind == 'bzip2' else lzma.LZMADecompressor(format=lzma.FORMAT_XZ)


def _decompressed_chunks(fin: BinaryIO, kind: str, max_bytes: Optional[int]):
    """The decompressed content of ``fin`` in chunks of at most 4 MiB, stream after stream of the same kind; every
    compressed format held to one rule: after the last stream only NUL padding (gzip; xz in multiples of 4 bytes, as
    its format allows), anything else :class:`CompressedDataError` — never ignored (Python's bz2 and lzma readers
    skip such data silently, its gzip reader refuses it). More than ``max_bytes`` decompressed: refused when it is
    reached, not after."""
    magic, total, consumed = _MAGIC[kind], 0, 0
    d, buf, in_stream, padding = _decompressor(kind), b'', True, 0
    while True:
        if in_stream:
            wants = not buf if kind == 'gzip' else (not buf and d.needs_input)
            if wants:
                buf = fin.read(_IN)
                consumed += len(buf)
                if not buf:
                    raise CompressedDataError(f'the {kind} stream ends before its end marker (a truncated file)')
            out = d.decompress(buf, _OUT)  # bz2 and lzma keep unread input themselves; zlib hands it back
            buf = d.unused_data if d.eof else (d.unconsumed_tail if kind == 'gzip' else b'')
            total += len(out)
            if max_bytes is not None and total > max_bytes:
                raise CompressedDataError(f'decompresses to more than {max_bytes} bytes, the most this file may hold '
                                          f'(after {consumed} compressed bytes); split it, or check that it is the '
                                          'file you meant')
            if out:
                yield out
            in_stream = not d.eof
            continue
        if not buf:
            buf = fin.read(_IN)
            consumed += len(buf)
            if not buf:
                if (kind == 'xz' and padding % 4) or (kind == 'bzip2' and padding):
                    raise CompressedDataError(f'{padding} NUL bytes after the last {kind} stream, which '
                                              + ('pads in multiples of 4' if kind == 'xz' else 'has no padding'))
                return
        stripped = buf.lstrip(b'\0')
        padding += len(buf) - len(stripped)
        buf = stripped
        if not buf:
            continue
        while len(buf) < len(magic):
            more = fin.read(_IN)
            consumed += len(more)
            if not more:
                break
            buf += more
        if buf.startswith(magic) and (padding == 0 or (kind == 'gzip') or (kind == 'xz' and padding % 4 == 0)):
            d, in_stream, padding = _decompressor(kind), True, 0
            continue
        raise CompressedDataError(f'data after the last {kind} stream, from compressed byte {consumed - len(buf)} on: '
                                  f'not another {kind} stream (a damaged or appended file); recompress it')


class _Decompressed(io.RawIOBase):
    """A readable binary stream over :func:`_decompressed_chunks` (for line-by-line reading through
    ``io.BufferedReader``)."""

    def __init__(self, path, kind: str, max_bytes: Optional[int]):
        super().__init__()
        self._file = open(path, 'rb')
        self._chunks = _decompressed_chunks(self._file, kind, max_bytes)
        self._chunk, self._at = memoryview(b''), 0

    def readable(self) -> bool:
        return True

    def readinto(self, b) -> int:
        while self._at >= len(self._chunk):
            nxt = next(self._chunks, None)
            if nxt is None:
                return 0
            self._chunk, self._at = memoryview(nxt), 0
        n = min(len(b), len(self._chunk) - self._at)
        b[:n] = self._chunk[self._at:self._at + n]
        self._at += n
        return n

    def close(self) -> None:
        self._file.close()
        super().close()


def open_binary(path: Union[str, os.PathLike], max_bytes: Optional[int] = None) -> BinaryIO:
    """``path`` opened for reading bytes, decompressed when its content is gzip, bzip2 or xz (one rule for what may
    follow a stream: :func:`_decompressed_chunks`); ``max_bytes`` bounds what it decompresses to."""
    kind = compression(path)
    return open(path, 'rb') if kind is None else io.BufferedReader(_Decompressed(path, kind, max_bytes), _OUT)


def read_bytes(path: Union[str, os.PathLike], max_bytes: Optional[int] = MAX_TEXT_BYTES) -> bytes:
    """The whole (decompressed) content of ``path``, at most ``max_bytes`` of it (:class:`CompressedDataError`, an
    OSError, past that — a plain file by its size, before it is read)."""
    kind = compression(path)
    if kind is None:
        size = os.path.getsize(path)
        if max_bytes is not None and size > max_bytes:
            raise CompressedDataError(f'holds {size} bytes, more than the {max_bytes} this file may hold; split it')
        with open(path, 'rb') as fin:
            return fin.read()
    with open(path, 'rb') as fin:
        return b''.join(_decompressed_chunks(fin, kind, max_bytes))


#: The characters no id (a query id, a docno) may hold, wherever it enters (a frame, a TREC file, a JSONL corpus, a
#: vector store's ids file, the ids ``embed`` writes). Control characters (C0, DEL, C1; a tab or a line break splits
#: the one-id-per-line and whitespace-separated formats), line and paragraph separators, zero-width and bidirectional
#: format characters (two ids that print alike but differ), a byte-order mark.
# DEL, the C1 controls, and the zero-width, separator, bidirectional and byte-order marks: in both rules below
_FORMAT_CHARACTERS = '\x7f-\x9f\u200b-\u200f\u2028-\u202e\u2060-\u2064\u2066-\u2069\ufeff'
BAD_ID_CHARACTERS = f'[\x01-\x1f{_FORMAT_CHARACTERS}]'
_BAD_ID = re.compile(BAD_ID_CHARACTERS)
#: The same characters in a whitespace-separated file's text, less its separators (tab, line feed, carriage return),
#: plus NUL. One scan of a TREC file that finds none of them clears every id in it.
ID_CHARACTERS_IN_TEXT = re.compile(f'[\x00-\x08\x0b\x0c\x0e-\x1f{_FORMAT_CHARACTERS}]')


def id_problem(ids) -> Optional[str]:
    """Why one of ``ids`` (strings) cannot be an id — '' when every one can: empty, or holding a character of
    :data:`BAD_ID_CHARACTERS` (or NUL), said with the first such id. One scan of the ids joined (C speed: 7 million
    run rows in well under a second)."""
    ids = ids.tolist() if hasattr(ids, 'tolist') else list(ids)  # an array's values at C speed (not one by one)
    if not ids:
        return ''
    try:
        joined = '\x00'.join(ids)
    except TypeError:  # ids that are not all text: as text
        ids = [i if isinstance(i, str) else str(i) for i in ids]
        joined = '\x00'.join(ids)
    if '' in ids:
        return 'an empty id'
    if joined.count('\x00') != len(ids) - 1:
        bad = next(i for i in ids if '\x00' in i)
        return f'an id with a NUL character ({bad[:60]!r})'
    hit = _BAD_ID.search(joined)
    if hit is None:
        return ''
    bad = ids[joined.count('\x00', 0, hit.start())]
    return f'an id with the control or format character U+{ord(hit.group()):04X} ({bad[:60]!r})'


def check_ids(ids, what: str) -> None:
    """Refuse ``ids`` with :func:`id_problem`'s reason: ``what`` names them and where they come from ('the docnos of
    corpus.jsonl'). One rule for every input path (tests/test_refusals_differential.py)."""
    problem = id_problem(ids)
    if problem:
        raise ValueError(f'{what}: {problem}; an id is non-empty text without control, line-break or invisible '
                         'format characters — fix it where it was written')


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


def temporary_file(folder, prefix: str, suffix: str = ''):
    """``(fd, path)`` of a new file in ``folder`` (``tempfile.mkstemp``'s, to be written and renamed into place) with
    the mode ``open()`` would give it under the current umask, not mkstemp's 0600: every file the package writes by
    write-then-rename (outputs, the report's marker, stores, the embedding cache's metadata) is made here, so a
    shared cache or output folder is readable by whoever the umask allows (a 0600 ``encoder.json`` made a cache
    shared by a group unreadable). ``test_architecture`` holds every ``mkstemp`` to this function."""
    import tempfile
    fd, path = tempfile.mkstemp(dir=folder, prefix=prefix, suffix=suffix)
    try:
        chmod_as_open(path)
    except BaseException:
        os.close(fd)
        os.remove(path)
        raise
    return fd, path


def temporary_folder(where, prefix: str):
    """A new folder ``where/prefix<random>`` (a ``pathlib.Path``) with the mode ``mkdir`` gives (0777 & ~umask),
    unlike ``tempfile.mkdtemp``'s 0700: a staging folder renamed into place (a report's folder, a converted model in
    a shared store) becomes the folder itself."""
    import secrets
    from pathlib import Path
    for _ in range(100):
        path = Path(where) / f'{prefix}{secrets.token_hex(4)}'
        try:
            os.mkdir(path)  # mode 0777, less the umask, as mkdir(1) gives
        except FileExistsError:
            continue
        return path
    raise FileExistsError(f'no free name for a temporary folder {prefix}* in {where}')


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
