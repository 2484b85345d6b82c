"""Make a vector store (``PREFIX.npy`` + ``PREFIX.ids.txt``) from document texts, or a copy of an existing store with
the documents it lacks added — never mixing models: before adding anything to an existing store, documents it already
has are embedded again with the chosen encoder and must match its vectors (:data:`MODEL_TOLERANCE`).

The command line is ``python -m pyterrier_frechet embed --text TEXTS.jsonl [--from PREFIX] --out NEWPREFIX``; a
run whose documents lack vectors in a store is told this command (:meth:`VectorStore.missing_hint
<pyterrier_frechet.vectors.sources.VectorStore.missing_hint>`). The existing store is only read; the new one is
written whole (temporary files renamed into place) and an existing file is never replaced.
"""
import logging
import os
from typing import NamedTuple, Optional, Sequence

import numpy as np

from ..files import check_ids, temporary_file

logger = logging.getLogger(__name__)

#: The largest difference (any coordinate) between a store's vector and the same document embedded again for the two
#: to count as the same model: float32 encodings of one text on two machines agree to about 1e-6 per coordinate.
MODEL_TOLERANCE = 1e-4
#: How many of the store's own documents are embedded again to check the model.
CHECKED = 8


class Filled(NamedTuple):
    """What :func:`fill_store` wrote: ``kept`` rows copied from the existing store, ``added`` rows embedded,
    ``without_text`` documents asked for that have no text (so no vector), ``checked`` documents of the store embedded
    again and ``max_difference`` their largest coordinate difference (NaN without a store)."""
    prefix: str
    kept: int
    added: int
    without_text: int
    checked: int
    max_difference: float


def fill_store(out: str, texts, encoder, source=None, docnos: Optional[Sequence[str]] = None,
               checked: int = CHECKED) -> Filled:
    """Write the store ``out`` (``out.npy`` + ``out.ids.txt``, neither may exist): the rows of ``source`` (a
    :class:`~pyterrier_frechet.VectorStore`, or None), then ``encoder``'s vectors of the documents of ``docnos``
    (default: every document of ``texts``) that ``source`` lacks and ``texts`` has.

    ``texts``: a :class:`~pyterrier_frechet.vectors.text.TextLookup`; ``encoder``: an
    :class:`~pyterrier_frechet.Embedder` (its cache is used). With a ``source``, ``checked`` of its documents that
    have a text are embedded again first; if any coordinate differs by more than :data:`MODEL_TOLERANCE` the store was
    made by another model (or pooling, normalisation, maximum length) and nothing is written. Everything is refused
    before any embedding.
    """
    if not os.path.basename(str(out)):
        raise ValueError(f'{out!r} names a folder, not a store: give a prefix such as {os.path.join(str(out), "vectors")!r} '
                         '(the store is PREFIX.npy and PREFIX.ids.txt)')
    files = (f'{out}.npy', f'{out}.ids.txt')
    for path in files:
        if os.path.lexists(path):
            raise ValueError(f'{path} exists: name a new prefix (the new store is written whole, never over a file)')
    folder = os.path.dirname(os.path.abspath(files[0]))
    if not os.path.isdir(folder):
        raise ValueError(f'the folder of {out!r} ({folder}) does not exist')
    if not os.access(folder, os.W_OK):
        raise ValueError(f'the folder of {out!r} ({folder}) is not writable')
    have = texts.texts
    encoder = _reading(encoder, texts)
    wanted = list(dict.fromkeys(str(d) for d in (have if docnos is None else docnos)))
    check_ids(wanted, f'the docnos to write into {out}.ids.txt')  # one id per line: the rule every reader holds it to
    if source is not None:
        finite = np.isfinite(np.asarray(source.vectors)).all(axis=1)
        if not finite.all():
            bad = [source.docnos[i] for i in np.flatnonzero(~finite)[:5]]
            raise ValueError(f'{source!r}: {int((~finite).sum())} of its rows are not finite (NaN or inf), e.g. docnos '
                             f'{bad}: a damaged store is not copied; make the store again from the texts (without --from)')
    known = set() if source is None else set(source.docnos)
    todo = [d for d in wanted if d not in known and d in have]
    without_text = sum(1 for d in wanted if d not in known and d not in have)
    diff, n_checked = float('nan'), 0
    if source is not None:
        common = sorted(d for d in source.docnos if d in have)
        if not common:
            raise ValueError(f'{source!r}: none of its documents has a text in {texts!r}, so the model cannot be checked '
                             'against its vectors; give the texts of (some of) its documents too')
        pick = [common[int(i)] for i in np.unique(np.linspace(0, len(common) - 1, min(checked, len(common))).round())]
        again, found = encoder.lookup(pick)
        if not found.all():
            raise ValueError(f'{encoder!r} gave no vector for {int((~found).sum())} of the store\'s documents checked')
        theirs, _ = source.lookup(pick)
        if again.shape[1] != theirs.shape[1]:
            raise ValueError(f'{source!r} holds {theirs.shape[1]}-d vectors but {encoder!r} makes {again.shape[1]}-d ones: '
                             'not the model the store was made with; pass that model (--model)')
        diff, n_checked = float(np.max(np.abs(again.astype(np.float64) - theirs.astype(np.float64)))), len(pick)
        if not diff <= MODEL_TOLERANCE:
            raise ValueError(f'{source!r} was not made by {encoder!r}: {n_checked} of its documents embedded again differ '
                             f'by up to {diff:.3g} (tolerance {MODEL_TOLERANCE:g}); pass the model, pooling and '
                             'normalisation the store was made with (--model), or make a new store from the texts alone '
                             '(without --from) — vectors of two models are never mixed')
        logger.info('%r: %d of its documents embedded again agree to %.2g', source, n_checked, diff)
    dtype = np.float32 if source is None else source.vectors.dtype
    new, found = encoder.lookup(todo) if todo else (np.zeros((0, 0 if source is None else source.dim), dtype), np.zeros(0, bool))
    if todo and not found.all():
        raise ValueError(f'{encoder!r} gave no vector for {int((~found).sum())} document(s) with a text')
    parts = ([np.asarray(source.vectors)] if source is not None else []) + ([new.astype(dtype)] if todo else [])
    if not parts:
        raise ValueError('nothing to write: no store given and no document with a text asked for')
    rows = np.concatenate(parts) if len(parts) > 1 else parts[0]
    ids = (list(source.docnos) if source is not None else []) + todo
    _write(files, rows, ids)
    return Filled(str(out), len(known), len(todo), without_text, n_checked, diff)


def _reading(encoder, texts):
    """``encoder`` embedding the texts of ``texts`` (the ones the store is filled from): an Embedder without texts of
    its own is given them (its cache is keyed by docno and text, so a docno another corpus put in a shared cache with
    another text gets this text's vector); one with texts of its own must agree with ``texts`` on every document, else
    ValueError naming one that differs — two sources of texts are never mixed silently."""
    own = getattr(encoder, 'texts', None)
    if own is None:
        return encoder.reading(texts) if hasattr(encoder, 'reading') else encoder
    mapping = texts.texts
    names = np.asarray(list(mapping), dtype=object)
    theirs = own(names)
    differ = [d for d in names if theirs.get(d) != mapping[d]]
    if differ:
        raise ValueError(f'{encoder!r} reads other texts than {texts!r} for {len(differ)} document(s), e.g. '
                         f'{differ[0][:80]!r}: give the Embedder no texts (fill_store embeds the texts it is given) '
                         'or the same ones')
    return encoder


def _write(files, rows: np.ndarray, ids: Sequence[str]) -> None:
    """Both files written to temporary names in their folder, then renamed into place (the .ids.txt last)."""
    temps = []
    try:
        for path, write in ((files[0], lambda f: np.save(f, rows, allow_pickle=False)),
                            (files[1], lambda f: f.write(('\n'.join(ids) + '\n').encode('utf-8')))):
            fd, tmp = temporary_file(os.path.dirname(os.path.abspath(path)), '.fill.', '.tmp')
            temps.append(tmp)
            with os.fdopen(fd, 'wb') as f:
                write(f)
        for tmp, path in zip(temps, files):
            os.replace(tmp, path)
        temps = []
    finally:
        for tmp in temps:
            if os.path.exists(tmp):
                os.remove(tmp)


__all__ = ['CHECKED', 'Filled', 'MODEL_TOLERANCE', 'fill_store']
