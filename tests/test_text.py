"""Texts by docno (vectors/text.py): TextLookup from a dict or a JSONL file, gzip by content, refusals naming the file
and line."""
import gzip
import json

import pandas as pd
import pytest

import pyterrier_frechet as pf


def test_text_lookup(tmp_path):
    recs = [{'docid': '1', 'title': 'wing', 'text': 'lift'}, {'docid': '2', 'title': 'shock', 'text': None}]
    path = tmp_path / 'c.jsonl.gz'
    with gzip.open(path, 'wt') as f:
        f.write('\n'.join(json.dumps(r) for r in recs) + '\n')
    lookup = pf.TextLookup.from_jsonl(str(path), text_fields=('title', 'text'))
    out = lookup(pd.DataFrame({'docno': ['2', '1']}))
    assert out.text.tolist() == ['shock', 'wing lift'] and repr(lookup) == "TextLookup('c.jsonl.gz')"
    assert len(lookup(pd.DataFrame({'docno': []}))) == 0
    with pytest.raises(ValueError, match='no text for 1 of 2'):
        lookup(pd.DataFrame({'docno': ['1', '9']}))
    (tmp_path / 'bad.jsonl').write_text('{"docid": "1", "text": "a"}\nnot json\n')
    with pytest.raises(ValueError, match='bad.jsonl:2 is not valid JSON'):
        pf.TextLookup.from_jsonl(str(tmp_path / 'bad.jsonl'))
    (tmp_path / 'bad.jsonl').write_text('{"docid": "1"}\n')  # no text field at all: refused, naming the fields it has
    with pytest.raises(ValueError, match=r"bad.jsonl:1 has none of the text field\(s\) \['text'\].*its fields are \['docid'\]"):
        pf.TextLookup.from_jsonl(str(tmp_path / 'bad.jsonl'))
    with pytest.raises(ValueError, match='does not exist'):
        pf.TextLookup.from_jsonl(str(tmp_path / 'none.jsonl'))


def test_text_lookup_reads_gzip_by_content_drops_a_bom_and_names_bad_bytes(tmp_path):
    """The JSONL twin of the run/qrels reader: a gzip file without .gz, a BOM, and a non-UTF-8 byte or a truncated
    gzip stream as a ValueError naming the file."""
    body = '\ufeff{"docno": "d1", "text": "shock wave"}\n{"docno": "d2", "text": "caf\u00e9"}\n'
    (tmp_path / 'plain.jsonl').write_bytes(gzip.compress(body.encode('utf-8')))  # gzip, no .gz name
    lookup = pf.TextLookup.from_jsonl(str(tmp_path / 'plain.jsonl'))
    assert lookup.texts == {'d1': 'shock wave', 'd2': 'café'}
    (tmp_path / 'latin1.jsonl').write_bytes('{"docno": "d1", "text": "ok"}\n{"docno": "d2", "text": "caf\u00e9"}\n'.encode('latin-1'))
    with pytest.raises(ValueError, match=r'latin1.jsonl:2: byte 0xe9 is not UTF-8'):
        pf.TextLookup.from_jsonl(str(tmp_path / 'latin1.jsonl'))
    (tmp_path / 'cut.jsonl.gz').write_bytes(gzip.compress(body[1:].encode('utf-8') * 50)[:-20])
    with pytest.raises(ValueError, match='cut.jsonl.gz: cannot be read'):
        pf.TextLookup.from_jsonl(str(tmp_path / 'cut.jsonl.gz'))


@pytest.mark.parametrize('value, kind', [(['z', 'w'], 'array'), ({'a': 1}, 'object'), (True, 'boolean'),
                                         (3, 'number'), (2.5, 'number')])
def test_a_text_that_is_not_a_json_string_is_refused_not_embedded_as_its_repr(tmp_path, value, kind):
    # round seven: str() made "['z', 'w']" or "True" the document's text; a null text stays an empty one
    path = tmp_path / 'c.jsonl'
    path.write_text(json.dumps({'docno': 'a', 'text': 'fine'}) + '\n' + json.dumps({'docno': 'b', 'text': value})
                    + '\n', encoding='utf-8')
    with pytest.raises(ValueError, match=rf"c.jsonl:2: text field 'text' holds a JSON {kind}, not a string"):
        pf.TextLookup.from_jsonl(str(path))
    path.write_text(json.dumps({'docno': 'a', 'title': 'wing', 'text': None}) + '\n', encoding='utf-8')
    assert pf.TextLookup.from_jsonl(str(path), text_fields=('title', 'text')).texts == {'a': 'wing'}


@pytest.mark.parametrize('value, kind', [(None, 'null'), (True, 'boolean'), (1.5, 'number'), ([1], 'array')])
def test_an_id_that_is_not_a_json_string_or_integer_is_refused(tmp_path, value, kind):
    # round seven: {"docno": null} became the document 'None'; integer ids (MS MARCO's pids) stay ids
    path = tmp_path / 'c.jsonl'
    path.write_text(json.dumps({'docno': value, 'text': 'wing'}) + '\n', encoding='utf-8')
    with pytest.raises(ValueError, match=rf"c.jsonl:1: id field 'docno' holds a JSON {kind}, not a string or an integer"):
        pf.TextLookup.from_jsonl(str(path))
    path.write_text(json.dumps({'pid': 7, 'text': 'wing'}) + '\n', encoding='utf-8')
    assert pf.TextLookup.from_jsonl(str(path)).texts == {'7': 'wing'}
