"""Opening input files (files.py): gzip, bzip2 and xz recognised by content wherever qrels, runs and JSONL texts are
read; the same file plain or compressed, named or misnamed, gives the same frame."""
import bz2
import gzip
import lzma
import re

import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import pyterrier_frechet as pf
from pyterrier_frechet import files
from pyterrier_frechet.files import CompressedDataError, open_binary, read_bytes
from pyterrier_frechet.data.runs import read_qrels, read_run, run_names
from pyterrier_frechet.vectors.text import TextLookup

QRELS = 'q1 0 d1 1\nq1 0 d2 0\nq2 0 d3 2\n'
RUN = 'q1 Q0 d1 1 2.5 bm25\nq1 Q0 d2 2 1.5 bm25\nq2 Q0 d3 1 0.5 bm25\n'
JSONL = '{"docno": "d1", "text": "wing lift é"}\n{"docno": "d2", "text": "shock layer"}\n'
COMPRESS = {'plain': lambda b: b, 'gzip': gzip.compress, 'bzip2': bz2.compress, 'xz': lzma.compress}
SUFFIX = {'plain': '', 'gzip': '.gz', 'bzip2': '.bz2', 'xz': '.xz'}


def _variants(tmp_path, stem, body):
    """name -> path: each compression under its own suffix, and each under a plain .txt name (misnamed)."""
    out = {}
    for kind, compress in COMPRESS.items():
        data = compress(body.encode('utf-8'))
        out[kind] = tmp_path / f'{stem}.txt{SUFFIX[kind]}'
        out[kind].write_bytes(data)
        out[f'{kind} misnamed'] = tmp_path / f'{stem}-{kind}-misnamed.txt'
        out[f'{kind} misnamed'].write_bytes(data)
    return out


def test_compression_is_told_by_content(tmp_path):
    paths = _variants(tmp_path, 'qrels', QRELS)
    assert {k: files.compression(p) for k, p in paths.items()} == {
        'plain': None, 'plain misnamed': None, 'gzip': 'gzip', 'gzip misnamed': 'gzip', 'bzip2': 'bzip2',
        'bzip2 misnamed': 'bzip2', 'xz': 'xz', 'xz misnamed': 'xz'}
    empty = tmp_path / 'empty.bz2'
    empty.write_bytes(bz2.compress(b''))
    assert files.compression(empty) == 'bzip2' and files.read_bytes(empty) == b''
    text = tmp_path / 'bzh.txt'  # a text file that starts like a bzip2 header is text
    text.write_bytes(b'BZh9 0 d1 1\n')
    assert files.compression(text) is None and files.read_bytes(text) == b'BZh9 0 d1 1\n'


@pytest.mark.parametrize('reader,body', [(read_qrels, QRELS), (read_run, RUN)])
def test_qrels_and_runs_read_the_same_plain_or_compressed(tmp_path, reader, body):
    paths = _variants(tmp_path, reader.__name__, body)
    frames = {k: reader(p) for k, p in paths.items()}
    assert len(frames['plain']) == 3 and frames['plain'].docno.tolist() == ['d1', 'd2', 'd3']
    for name, frame in frames.items():
        pd.testing.assert_frame_equal(frame, frames['plain'], obj=name)


def test_text_lookup_reads_the_same_plain_or_compressed(tmp_path):
    paths = _variants(tmp_path, 'corpus', JSONL)
    for name, path in paths.items():
        assert TextLookup.from_jsonl(str(path)).texts == {'d1': 'wing lift é', 'd2': 'shock layer'}, name


def test_a_damaged_bzip2_or_xz_stream_names_the_file(tmp_path):
    for kind in ('bzip2', 'xz'):
        cut = tmp_path / f'cut-{kind}.txt'
        cut.write_bytes(COMPRESS[kind]((RUN * 200).encode())[:-30])
        with pytest.raises(ValueError, match=rf'{cut}: cannot be read'):
            read_run(cut)
        cut.write_bytes(COMPRESS[kind]((JSONL * 200).encode())[:-30])
        with pytest.raises(ValueError, match=rf'TextLookup: {cut}: cannot be read after line \d+'):
            TextLookup.from_jsonl(str(cut))


def test_run_names_drop_compression_suffixes(tmp_path):
    assert run_names([tmp_path / 'run.dl19.bm25.txt.bz2', tmp_path / 'run.dl19.dense.xz', tmp_path / 'run.dl19.splade.gz']) \
        == ['bm25', 'dense', 'splade']


def test_read_json_is_bounded_and_every_failure_is_a_value_error(tmp_path):
    """The one reader of the small JSON files the package reads back: a value as json gives it; a file larger than
    the bound refused before it is read whole; nesting deeper than the parser allows, invalid UTF-8 and invalid JSON
    each a ValueError naming the file (never a RecursionError or a UnicodeDecodeError)."""
    import json
    from pyterrier_frechet.files import read_json
    good = tmp_path / 'good.json'
    good.write_text(json.dumps({'package': 'x', 'files': ['a', 'b']}), encoding='utf-8')
    assert read_json(good) == {'package': 'x', 'files': ['a', 'b']}
    big = tmp_path / 'big.json'
    big.write_text('[' + '0,' * 600_000 + '0]')
    with pytest.raises(ValueError, match=r"big\.json' is larger than 1048576 bytes"):
        read_json(big)
    deep = tmp_path / 'deep.json'
    deep.write_text('[' * 200_000 + ']' * 200_000)
    with pytest.raises(ValueError, match=r'deep\.json.*nests deeper'):
        read_json(deep, 'output marker')
    for name, content in (('bytes.json', b'{"a": "\xff"}'), ('text.json', b'{"a": ')):
        (tmp_path / name).write_bytes(content)
        with pytest.raises(ValueError, match=rf"{name.split('.')[0]}\.json' is not valid JSON"):
            read_json(tmp_path / name)


def _is_json_dumps(node) -> bool:
    import ast
    return (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == 'dumps'
            and isinstance(node.func.value, ast.Name) and node.func.value.id == 'json')


def test_no_json_file_is_read_back_outside_the_bounded_reader():
    """The class, not the instance: every json.load/json.loads of the package is files.read_json (or files.loads_line
    for a JSONL record), except the package's own bundled data."""
    import ast
    from pathlib import Path
    root = Path(__file__).resolve().parents[1] / 'pyterrier_frechet'
    allowed = {root / 'files.py', root / 'data' / 'bundled.py'}
    found = []
    for path in root.rglob('*.py'):
        if path in allowed:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding='utf-8'))):
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in ('load', 'loads')
                    and isinstance(node.func.value, ast.Name) and node.func.value.id == 'json'
                    and not _is_json_dumps(node.args[0] if node.args else None)):   # a round trip in memory
                found.append(f'{path.relative_to(root)}:{node.lineno}')
    assert not found, f'read these through files.read_json / files.loads_line: {found}'


def test_a_jsonl_record_nested_too_deeply_is_named_not_a_traceback(tmp_path):
    """A text file's record nested deeper than the parser allows: the line is named as invalid JSON, as any other
    invalid line (files.loads_line), not a RecursionError."""
    from pyterrier_frechet.vectors.text import TextLookup
    path = tmp_path / 'texts.jsonl'
    path.write_text('{"docno": "d1", "text": "fine"}\n' + '[' * 200_000 + ']' * 200_000 + '\n', encoding='utf-8')
    with pytest.raises(ValueError, match=r'texts\.jsonl:2 is not valid JSON'):
        TextLookup.from_jsonl(str(path))


def test_the_umask_is_read_without_changing_it(tmp_path, monkeypatch):
    import os
    from pyterrier_frechet import files
    old = os.umask(0o027)
    try:
        calls = []
        real = os.umask
        monkeypatch.setattr(os, 'umask', lambda m: calls.append(m) or real(m))
        assert files.current_umask(str(tmp_path)) == 0o027
        target = tmp_path / 'f'
        target.write_text('x')
        files.chmod_as_open(target)
        assert (target.stat().st_mode & 0o777) == 0o640
        assert calls == []  # never set, so never changed, even for a moment
        # the probe used where /proc is not there: a folder of mode 0o777 under the umask, removed
        monkeypatch.setattr(files, 'open', lambda *a, **k: (_ for _ in ()).throw(OSError('no /proc')), raising=False)
        assert files.current_umask(str(tmp_path)) == 0o027
        assert sorted(p.name for p in tmp_path.iterdir()) == ['f']
    finally:
        os.umask(old)


# --- issue 64 item 2: bounded work on any file, one rule for what follows a compressed stream ---------------------

_COMPRESS = {'gzip': gzip.compress, 'bzip2': bz2.compress, 'xz': lzma.compress}
_QRELS = b'q1 0 d1 1\nq2 0 d2 0\n'


@pytest.mark.parametrize('kind', sorted(_COMPRESS))
def test_what_follows_a_compressed_stream_is_one_rule_for_every_format(tmp_path, kind):
    """Concatenated streams of the same kind are read in full (gzip members, pbzip2, xz streams); gzip's NUL padding
    and xz's in multiples of 4 are allowed; anything else after the last stream is refused, for every format (bz2 and
    xz readers skip it silently, gzip's refuses it); a stream cut short too."""
    comp = _COMPRESS[kind]
    cases = {'two': (comp(_QRELS) + comp(_QRELS), 2 * _QRELS),
             'nul4': (comp(_QRELS) + b'\0' * 4, _QRELS if kind != 'bzip2' else None),
             'nul3': (comp(_QRELS) + b'\0' * 3, _QRELS if kind == 'gzip' else None),
             'garbage': (comp(_QRELS) + b'garbage!', None),
             'other kind after': (comp(_QRELS) + _COMPRESS['gzip' if kind != 'gzip' else 'xz'](_QRELS), None),
             'truncated': (comp(_QRELS)[:-6], None)}
    for name, (blob, want) in cases.items():
        path = tmp_path / name
        path.write_bytes(blob)
        if want is not None:
            assert read_bytes(path) == want, name
            assert pf.runs.read_qrels(path)['qid'].tolist() == ['q1', 'q2'] * (len(want) // len(_QRELS)), name
        else:
            with pytest.raises(CompressedDataError):
                read_bytes(path)
            with pytest.raises(ValueError, match=rf'{re.escape(str(path))}: cannot be read \(CompressedDataError'):
                pf.runs.read_qrels(path)


def test_a_decompression_bomb_is_refused_while_it_is_read(tmp_path):
    path = tmp_path / 'bomb.gz'
    with gzip.open(path, 'wb', compresslevel=9) as fout:
        for _ in range(40):
            fout.write(b'\0' * (1 << 24))  # 640 MiB of NUL bytes, 0.6 MB compressed
    with pytest.raises(CompressedDataError, match=r'decompresses to more than 67108864 bytes'):
        read_bytes(path, max_bytes=1 << 26)
    with open_binary(path, max_bytes=1 << 26) as fin:
        with pytest.raises(CompressedDataError, match='more than 67108864 bytes'):
            while fin.read(1 << 22):
                pass


def test_a_line_too_long_is_refused_before_any_split_and_quoted_short(tmp_path):
    from pyterrier_frechet.data.runs import MAX_LINE_BYTES, QUOTED_CHARS
    long = tmp_path / 'long.qrels'
    long.write_bytes(b'q1 0 d1 1\n' + b'x ' * (MAX_LINE_BYTES // 2 + 10) + b'\nq2 0 d2 1\n')
    with pytest.raises(ValueError, match=rf'long.qrels:2: a line of {MAX_LINE_BYTES + 20} bytes, longer than the '
                                         rf'{MAX_LINE_BYTES}') as ex:
        pf.runs.read_qrels(long)
    assert len(str(ex.value)) < 400
    endless = tmp_path / 'endless.gz'  # one line of NUL bytes, no newline
    endless.write_bytes(gzip.compress(b'\0' * (1 << 22)))
    with pytest.raises(ValueError, match=r'endless.gz:1: a line of more than 65536 bytes') as ex:
        pf.runs.read_run(endless)
    assert len(str(ex.value)) < 400
    wide = tmp_path / 'wide.qrels'  # under the line bound, but one line of many columns: a short quote
    wide.write_text('q1 0 d1 1\n' + ' '.join(['7'] * 20000) + '\n')
    with pytest.raises(ValueError, match=r'wide.qrels:2: expected 4 columns .*found 20000') as ex:
        pf.runs.read_qrels(wide)
    assert len(str(ex.value)) < 200 + 2 * QUOTED_CHARS


def test_a_fifth_qrels_column_is_named_not_read_as_a_label(tmp_path):
    path = tmp_path / 'five.qrels'
    path.write_text('q1 0 d1 1 extra\nq2 0 d2 0 extra\n')
    with pytest.raises(ValueError, match=r"five.qrels:1: expected 4 columns \(qid iter docno label\), found 5 \(one "
                                         r"more than the layout: the last, 'extra', is not part of a TREC qrels line"):
        pf.runs.read_qrels(path)
    run = tmp_path / 'seven.run'
    run.write_text('q1 Q0 d1 1 2.0 tag more\n')
    with pytest.raises(ValueError, match=r"seven.run:1: expected 6 columns .*found 7 \(one more than the layout"):
        pf.runs.read_run(run)


def test_a_jsonl_record_without_end_is_refused_bounded(tmp_path, monkeypatch):
    from pyterrier_frechet.vectors import text
    monkeypatch.setattr(text, 'MAX_RECORD_BYTES', 1 << 16)
    path = tmp_path / 'corpus.jsonl.xz'
    path.write_bytes(lzma.compress(b'{"docno": "d1", "text": "a"}\n' + b'\0' * (1 << 20)))
    with pytest.raises(ValueError, match=r'corpus.jsonl.xz:2: a record longer than 65536 bytes'):
        pf.TextLookup.from_jsonl(str(path))


@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(body=st.lists(st.tuples(st.integers(0, 9), st.sampled_from(['q', '0', 'd', '1', '\0', 'é', '\t', 'x' * 300])),
                     max_size=40),
       layers=st.lists(st.sampled_from(sorted(_COMPRESS)), max_size=2), tail=st.sampled_from([b'', b'\0' * 4, b'junk']))
def test_hostile_files_get_an_answer_bounded_in_time_and_length(tmp_path_factory, body, layers, tail):
    """Any mix of column counts, long and NUL-filled lines, nested compression and trailing bytes: read_qrels returns a
    frame or raises ValueError — within a second, with a message of bounded length."""
    import time
    lines = '\n'.join(' '.join([tok] * n) for n, tok in body).encode('utf-8')
    blob = lines
    for kind in layers:
        blob = _COMPRESS[kind](blob)
    blob += tail if layers else b''
    path = tmp_path_factory.mktemp('hostile') / 'f'
    path.write_bytes(blob)
    start = time.perf_counter()
    try:
        out = pf.runs.read_qrels(path)
        assert list(out.columns) == ['qid', 'docno', 'label']
    except ValueError as ex:
        assert len(str(ex)) < 800, str(ex)[:200]
    assert time.perf_counter() - start < 1.0


def test_line_ends_of_every_kind_are_lines_for_the_length_bound(tmp_path):
    body = ''.join(f'q{i} 0 d{i} 1' + end for i in range(20000) for end in ['\r'])  # CR only: 260 KB, short lines
    (tmp_path / 'cr.qrels').write_bytes(body.encode())
    (tmp_path / 'crlf.qrels').write_bytes(body.replace('\r', '\r\n').encode())
    assert len(pf.runs.read_qrels(tmp_path / 'cr.qrels')) == len(pf.runs.read_qrels(tmp_path / 'crlf.qrels')) == 20000
