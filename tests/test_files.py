"""Opening input files (files.py): gzip, bzip2 and xz recognised by content wherever qrels, runs and JSONL texts are
read; the same file plain or compressed, named or misnamed, gives the same frame."""
import bz2
import gzip
import lzma

import pandas as pd
import pytest

from pyterrier_frechet import files
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
