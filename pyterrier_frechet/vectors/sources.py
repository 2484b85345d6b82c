"""Where document vectors come from: precomputed vector files, and the lookup protocol used by ``FD``.

An *encoder* for the ``FD`` measure is anything that maps document ids to vectors:

- a :class:`VectorStore` (precomputed ``PREFIX.npy`` + ``PREFIX.ids.txt``), or any object with a
  ``lookup(docnos) -> (vectors, found)`` method;
- any PyTerrier transformer that takes a frame with a ``docno`` column and adds ``doc_vec`` (e.g.
  ``TextLookup.from_jsonl(...) >> Embedder()``). Rows it leaves out, or leaves with a ``None``
  ``doc_vec``, count as documents without a vector.
"""
import contextlib
import logging
import mmap
import os
from typing import Optional, Sequence, Tuple

import numpy as np
import pandas as pd
import pyterrier as pt

from ..files import check_ids

logger = logging.getLogger(__name__)

_default_encoder = None


def set_default_encoder(encoder) -> object:
    """Set the encoder used by ``FD`` measures that name none (``FD@10`` rather than ``FD(encoder=...)@10``).

    Returns the previous default, so that it can be restored. ``None`` removes the default.
    """
    global _default_encoder
    previous, _default_encoder = _default_encoder, encoder
    return previous


@contextlib.contextmanager
def default_encoder(encoder):
    """``with default_encoder(enc): ...`` — :func:`set_default_encoder` for the block, restored after."""
    previous = set_default_encoder(encoder)
    try:
        yield encoder
    finally:
        set_default_encoder(previous)


def using_encoder(encoder):
    """:func:`default_encoder` for ``encoder``, or nothing at all when it is None (the current default stays):
    how every analysis applies its ``encoder=`` argument."""
    return default_encoder(encoder) if encoder is not None else contextlib.nullcontext()


def get_default_encoder():
    """The encoder set by :func:`set_default_encoder`, or None."""
    return _default_encoder


class VectorStore(pt.Transformer):
    """Precomputed document vectors: ``PREFIX.npy`` (an n×d float matrix) and ``PREFIX.ids.txt`` (n ids).

    This is the format of the vectors shipped in ``../shared/embeddings``. As a transformer it adds
    ``doc_vec`` (one row per input row, in the file's precision) to a frame with a ``docno`` column and raises a
    ``ValueError`` for docnos it has no vector for; the ``FD`` measure calls :meth:`lookup` instead
    and applies its ``missing=`` policy.
    """

    def __init__(self, prefix: str, name: Optional[str] = None):
        npy, ids_path = f'{prefix}.npy', f'{prefix}.ids.txt'
        for path in (npy, ids_path):
            if not os.path.exists(path):
                raise ValueError(f'VectorStore: {path} does not exist')
        self.prefix = str(prefix)
        self.name = name or os.path.basename(self.prefix)
        self._load()

    def _files(self) -> Tuple[str, str]:
        return f'{self.prefix}.npy', f'{self.prefix}.ids.txt'

    def _signature(self) -> tuple:
        try:
            return tuple(_file_signature(p) for p in self._files())
        except OSError as ex:
            raise ValueError(f'VectorStore: {self.prefix}.npy / .ids.txt can no longer be read ({ex})') from ex

    def _sync(self) -> None:
        """Serve the files as they are now: a file replaced or rewritten since it was read is read again."""
        if self._signature() != self._loaded:
            logger.info('%r: the files changed since they were read; reading them again', self)
            self._load()

    def _load(self) -> None:
        npy, ids_path = self._files()
        self._loaded = self._signature()
        try:
            self.vectors = np.load(npy, mmap_mode='r')
        except (OSError, ValueError) as ex:
            raise ValueError(f'VectorStore: {npy} cannot be read as a .npy matrix ({ex})') from ex
        if self.vectors.ndim == 2 and not np.issubdtype(self.vectors.dtype, np.floating):
            raise ValueError(f'VectorStore: {npy} holds {self.vectors.dtype} values; vectors must be floats')
        try:
            with open(ids_path, 'rt', encoding='utf-8-sig') as fin:  # utf-8-sig: a byte-order mark is not part of the first id
                ids = [line.strip() for line in fin]  # ids never contain white space: trailing spaces and CR are not theirs
        except UnicodeDecodeError as ex:
            raise ValueError(f'VectorStore: {ids_path} is not UTF-8 text ({ex})') from ex
        while ids and ids[-1] == '':  # blank lines at the end (any number) list nothing
            ids.pop()
        if '' in ids:
            raise ValueError(f'VectorStore: {ids_path} has an empty id on line {ids.index("") + 1}; give every vector '
                             'its id on its own line (blank lines are allowed only at the end of the file)')
        check_ids(ids, f'VectorStore: {ids_path}')
        if self.vectors.ndim != 2 or self.vectors.shape[0] != len(ids):
            raise ValueError(f'VectorStore: {npy} has shape {self.vectors.shape} but {ids_path} lists {len(ids)} ids')
        index = pd.Index(ids)
        if index.has_duplicates:
            raise ValueError(f'VectorStore: {ids_path} lists {int(index.duplicated().sum())} duplicate id(s)')
        self._index = index

    @property
    def dim(self) -> int:
        return int(self.vectors.shape[1])

    @property
    def docnos(self) -> pd.Index:
        """The ids of the stored vectors, in file order (row i of :attr:`vectors` is ``docnos[i]``)."""
        return self._index

    def lookup(self, docnos: Sequence[str]) -> Tuple[np.ndarray, np.ndarray]:
        """Vectors of ``docnos`` (one row each, in the file's precision: float64 files stay float64; rows of missing
        docnos are NaN) and a found mask."""
        pos = self._index.get_indexer(pd.Index(np.asarray(docnos, dtype=str)))
        found = pos >= 0
        out = np.full((len(pos), self.dim), np.nan, dtype=np.result_type(self.vectors.dtype, np.float32))
        if found.any():
            # mmap: gather sorted rows (sequential reads) a chunk at a time, each put straight into its request rows
            # (no second and third copy of the output: 1.5 GB each for a million 384-d float32 vectors)
            where = np.flatnonzero(found)
            order = np.argsort(pos[where], kind='stable')
            step = max(1, (1 << 22) // max(self.dim, 1))
            for start in range(0, len(order), step):
                part = order[start:start + step]
                rows = pos[where[part]]
                out[where[part]] = self.vectors[rows]
                self._release(int(rows[0]), int(rows[-1]) + 1)
        return out, found

    def _release(self, first: int, stop: int) -> None:
        """Unmap the file pages of rows first..stop−1 from this process once they are copied (``MADV_DONTNEED`` on the
        read-only map: they stay in the OS's file cache, and a later read maps them again), so that reading a million
        vectors does not count their 1.5 GB of file pages in the process's resident memory as well as the copy."""
        mm = getattr(self.vectors, '_mmap', None)
        option = getattr(mmap, 'MADV_DONTNEED', None)
        if mm is None or option is None or not hasattr(mm, "madvise") or not self.vectors.flags.c_contiguous:
            return
        row_bytes = self.vectors.strides[0]
        base = self.vectors.offset % mmap.ALLOCATIONGRANULARITY  # where the array starts in numpy's map
        begin = base + first * row_bytes
        begin -= begin % mmap.PAGESIZE
        try:
            mm.madvise(option, begin, min(base + stop * row_bytes, len(mm)) - begin)
        except (OSError, ValueError):  # pragma: no cover - an advice the platform refuses changes nothing
            pass

    def transform(self, inp: pd.DataFrame) -> pd.DataFrame:
        pt.validate.columns(inp, includes=['docno'])
        if len(inp) == 0:
            return inp.assign(doc_vec=pd.Series([], dtype=object))
        vecs, found = self.lookup(inp['docno'].astype(str).to_numpy())
        if not found.all():
            missing = inp['docno'][~found]
            raise ValueError(f'{self!r}: no vector for {len(missing)} of {len(inp)} docno(s), e.g. {missing.iloc[:5].tolist()}'
                             + self.missing_hint(missing.astype(str).tolist()))
        return inp.assign(doc_vec=list(vecs))

    def vector_identity(self) -> tuple:
        """What these vectors are: the sha256 of the two files' bytes (:mod:`.identity`), not their names or times."""
        from .identity import file_digest
        self._sync()
        return tuple(file_digest(p) for p in self._files())

    def missing_hint(self, docnos: Sequence[str]) -> str:
        """A hint for an error about ``docnos`` without a vector (see :func:`unicode_hint`), and the one command that
        makes a copy of this store with them added from their texts, by the store's own model (checked against its
        vectors first: :func:`~pyterrier_frechet.vectors.fill.fill_store`)."""
        return (unicode_hint(docnos, lambda d: self._index.get_indexer([d])[0] >= 0)
                + f'. Where you have their texts, `python -m pyterrier_frechet embed --text TEXTS.jsonl --from '
                  f'{self.prefix} --out NEWPREFIX` writes a copy of this store with them added, by the model that made '
                  'it (--model; checked against its own vectors, never mixed), then use NEWPREFIX')

    def __repr__(self):
        # the prefix as given, so two stores in different folders print (and so name their FD columns) differently
        return f'VectorStore({self.prefix!r})'


def _file_signature(path: str) -> tuple:
    st = os.stat(path)
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


def encoder_key(encoder) -> tuple:
    """The identity of an encoder, for grouping lookups and memoising work on its vectors (never ``id()``): the one
    identity function, :func:`~pyterrier_frechet.vectors.identity.encoder_identity`."""
    from .identity import encoder_identity
    return encoder_identity(encoder)


_FORMS = ('NFC', 'NFD', 'NFKC', 'NFKD')


def unicode_hint(docnos: Sequence[str], known) -> str:
    """For an error about ``docnos`` that have no vector: a sentence (with a leading space) when some of them would
    match a known docno (``known(docno) -> bool``) after Unicode normalisation — NFC and NFD forms of one id print
    alike but are different strings —, else ''."""
    import unicodedata
    pairs = []
    tried = 0
    for d in docnos:
        d = str(d)
        if d.isascii():
            continue
        tried += 1
        if tried > 200:  # a hint, not a search: the first 200 non-ASCII docnos are enough to see the pattern
            break
        for form in _FORMS:
            other = unicodedata.normalize(form, d)
            if other != d and known(other):
                pairs.append((d, other, form))
                break
        if len(pairs) >= 3:
            break
    if not pairs:
        return ''
    shown = '; '.join(f'{ascii(d)} is {ascii(o)} in {form}' for d, o, form in pairs)
    return (f'. Some of these docnos differ from known ones only in Unicode normalisation ({shown}): normalise the ids of '
            "the qrels/run and of the vectors or texts alike, e.g. unicodedata.normalize('NFC', docno)")


def lookup_vectors(encoder, docnos: Sequence[str], dtype=np.float64) -> Tuple[np.ndarray, np.ndarray]:
    """Vectors for ``docnos`` from any encoder (see the module docstring), as ``dtype`` (None: the encoder's own
    floating-point type, which spares a copy when the caller converts only some rows), with a found mask.

    Rows of documents without a vector are NaN. Raises ValueError if the encoder returns vectors of
    mixed dimension or containing NaN/inf.
    """
    docnos = np.asarray(docnos, dtype=str)
    if hasattr(encoder, 'lookup'):
        vecs, found = encoder.lookup(docnos)
        vecs = np.asarray(vecs)  # converted to dtype once, at the end
        if not np.issubdtype(vecs.dtype, np.floating):
            vecs = vecs.astype(np.float64)
        found = np.asarray(found, dtype=bool)
    elif isinstance(encoder, pt.Transformer):
        if len(docnos) == 0:
            return np.zeros((0, 0)), np.zeros(0, dtype=bool)
        out = encoder(pd.DataFrame({'docno': docnos}))
        if 'doc_vec' not in out.columns or 'docno' not in out.columns:
            raise ValueError(f'encoder {encoder!r} must return docno and doc_vec columns, returned {list(out.columns)}')
        out = out[out['doc_vec'].notna()].drop_duplicates('docno')
        vecs, found = _align(out['docno'].astype(str).to_numpy(), out['doc_vec'].tolist(), docnos, repr(encoder))
    else:
        raise ValueError(f'encoder must be a pt.Transformer producing doc_vec or have a lookup() method; got {type(encoder).__name__}')
    if vecs.ndim != 2 or vecs.shape[0] != len(docnos):
        raise ValueError(f'encoder {encoder!r} returned vectors of shape {vecs.shape} for {len(docnos)} docnos')
    bad = found & ~np.isfinite(vecs).all(axis=1)  # rows not found are NaN by design
    if bad.any():
        bad = docnos[bad]
        raise ValueError(f'encoder {encoder!r} returned NaN/inf vectors for {len(bad)} docno(s), e.g. {bad[:5].tolist()}')
    return (vecs if dtype is None else vecs.astype(dtype, copy=False)), found


def _align(out_docnos: np.ndarray, out_vecs: list, docnos: np.ndarray, what: str) -> Tuple[np.ndarray, np.ndarray]:
    stack = stack_vectors(out_vecs, what) if len(out_vecs) else np.zeros((0, 0))
    pos = pd.Index(out_docnos).get_indexer(pd.Index(docnos))
    found = pos >= 0
    dim = stack.shape[1] if stack.size else 0
    vecs = np.full((len(docnos), dim), np.nan)
    vecs[found] = stack[pos[found]]
    return vecs, found


def stack_vectors(values: list, what: str = 'doc_vec') -> np.ndarray:
    """Stack a column of per-row vectors into an n×d float64 matrix; ValueError on mixed dimensions."""
    dims = {np.shape(v) for v in values}
    if len(dims) != 1:
        raise ValueError(f'{what}: vectors of mixed shapes {sorted(dims)[:5]}')
    (shape,) = dims
    if len(shape) != 1:
        raise ValueError(f'{what}: each doc_vec must be a 1-D vector, got shape {shape}')
    return np.asarray(np.stack(values), dtype=np.float64)
