"""``TextLookup``: a docno → text source for runs that carry only docnos."""
import json
import os
from typing import Dict, Optional, Sequence

import pandas as pd
import pyterrier as pt

from ..files import READ_ERRORS, check_ids, loads_line, open_binary

_DOCNO_FIELDS = ('docno', 'docid', 'doc_id', '_id', 'id', 'pid')


def _json_kind(value) -> str:
    """The JSON name of a parsed value's type (for a refusal)."""
    if value is None:
        return 'null'
    if isinstance(value, bool):
        return 'boolean'
    return {str: 'string', int: 'number', float: 'number', list: 'array', dict: 'object'}.get(type(value), 'value')


class TextLookup(pt.Transformer):
    """Adds a ``text`` column to a frame with ``docno``, from an in-memory docno → text mapping.

    Build it from a dict or from a JSONL file (plain, gzip, bzip2 or xz) with :meth:`from_jsonl`. For a Terrier
    index or an ir_datasets corpus, ``pt.text.get_text(dataset_or_index, 'text')`` is the PyTerrier
    equivalent; either can stand before an :class:`~pyterrier_frechet.Embedder`. A docno with no text
    raises a ``ValueError`` naming how many are missing.
    """

    def __init__(self, texts: Dict[str, str], name: str = 'dict', text_field: str = 'text'):
        self.texts = {str(k): str(v) for k, v in texts.items()}
        self.name = name
        self.text_field = text_field

    @classmethod
    def from_jsonl(cls, path: str, text_fields: Sequence[str] = ('text',), docno_field: Optional[str] = None,
                   sep: str = ' ', allow_empty: bool = False) -> 'TextLookup':
        """Read ``path`` (JSON lines; gzip, bzip2 and xz recognised by their content, whatever the name; UTF-8, a BOM dropped).
        The text is the named fields joined by ``sep`` (e.g. ``('title', 'text')``); the id field is
        ``docno_field`` or the first of docno, docid, doc_id, _id, id, pid present.

        Refused before any encoding, naming the file: a record that has none of ``text_fields`` (the error lists
        the fields it does have), and a record whose text is empty or only white space (a vector of nothing
        would be the same for every such document, and FD would silently shrink) unless ``allow_empty``
        (for collections with genuinely empty documents; pair it with ``Embedder(empty_text='embed')``)."""
        if not os.path.exists(path):
            raise ValueError(f'TextLookup: {path} does not exist')
        text_fields = tuple(text_fields)
        texts = {}
        empty = []
        for lineno, line in _lines(path):
            if not line.strip():
                continue
            try:
                rec = loads_line(line)
            except json.JSONDecodeError as ex:
                raise ValueError(f'TextLookup: {path}:{lineno} is not valid JSON ({ex})') from ex
            field = docno_field or next((f for f in _DOCNO_FIELDS if f in rec), None)
            if field is None or field not in rec:
                raise ValueError(f'TextLookup: {path}:{lineno} has no id field (looked for {docno_field or _DOCNO_FIELDS})')
            if not any(f in rec for f in text_fields):
                raise ValueError(f'TextLookup: {path}:{lineno} has none of the text field(s) {list(text_fields)} '
                                 f'(--text-fields); its fields are {sorted(rec)}')
            kinds = [(f, rec[f]) for f in text_fields if rec.get(f) is not None and not isinstance(rec[f], str)]
            if kinds:  # str() would embed a list, object, number or boolean as its Python repr
                f, value = kinds[0]
                raise ValueError(f'TextLookup: {path}:{lineno}: text field {f!r} holds a JSON {_json_kind(value)}, not '
                                 'a string; fix the corpus or name other fields (--text-fields)')
            if isinstance(rec[field], bool) or not isinstance(rec[field], (str, int)):
                raise ValueError(f'TextLookup: {path}:{lineno}: id field {field!r} holds a JSON {_json_kind(rec[field])}, '
                                 'not a string or an integer; every document needs an id')
            text = sep.join(rec.get(f) or '' for f in text_fields).strip()
            docno = str(rec[field])
            if not text:
                empty.append(docno)
            if texts.get(docno, text) != text:
                raise ValueError(f'TextLookup: {path}:{lineno}: docno {docno[:60]!r} has a second, different text; a '
                                 'document has one text: keep one record for it')
            texts[docno] = text
        check_ids(texts, f'TextLookup: {path}: the docnos')
        if empty and not allow_empty:
            raise ValueError(f'TextLookup: {path}: {len(empty)} record(s) have an empty text in field(s) {list(text_fields)} '
                             f'(--text-fields), e.g. docnos {empty[:5]}; fix the corpus or name other fields, or pass '
                             'allow_empty=True (CLI: --allow-empty-text) if these documents are truly empty')
        return cls(texts, name=os.path.basename(path))

    def transform(self, inp: pd.DataFrame) -> pd.DataFrame:
        pt.validate.columns(inp, includes=['docno'])
        if len(inp) == 0:
            return inp.assign(**{self.text_field: pd.Series([], dtype=object)})
        docnos = inp['docno'].astype(str)
        text = docnos.map(self.texts)
        if text.isna().any():
            missing = docnos[text.isna()]
            raise ValueError(f'{self!r}: no text for {len(missing)} of {len(inp)} docno(s), e.g. {missing.iloc[:5].tolist()}')
        return inp.assign(**{self.text_field: text.to_numpy()})

    def __repr__(self):
        return f'TextLookup({self.name!r})'


#: The longest JSONL record read, in bytes. A document of several megabytes is still one; a longer line is not.
MAX_RECORD_BYTES = 1 << 24


def _lines(path: str):
    """(line number, line) of ``path``: gzip, bzip2 and xz recognised by their content (not the name), UTF-8 with a
    BOM dropped. A byte that is not UTF-8 or a damaged compressed stream is a ValueError naming the file and the line."""
    lineno = 0
    try:
        with open_binary(path) as fin:
            while True:
                raw = fin.readline(MAX_RECORD_BYTES + 1)  # bounded: a file of one endless line is refused, not read
                if not raw:
                    break
                lineno += 1
                if len(raw) > MAX_RECORD_BYTES:
                    raise ValueError(f'TextLookup: {path}:{lineno}: a record longer than {MAX_RECORD_BYTES} bytes (one '
                                     'JSON object per line, a document\'s text in it): is this a JSONL corpus?')
                try:
                    line = raw.decode('utf-8')
                except UnicodeDecodeError as ex:
                    raise ValueError(f'TextLookup: {path}:{lineno}: byte 0x{raw[ex.start]:02x} is not UTF-8 text; '
                                     'convert the file to UTF-8 (e.g. iconv -f latin1 -t utf-8)') from ex
                yield lineno, (line[1:] if lineno == 1 and line.startswith('\ufeff') else line)
    except READ_ERRORS as ex:
        raise ValueError(f'TextLookup: {path}: cannot be read after line {lineno} ({type(ex).__name__}: {ex})') from ex
