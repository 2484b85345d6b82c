"""Property test of the CLI's failure contract (issue 15): random malformed run, qrels and vector files fed to `eval`.

Every case is either *benign* — a change of form that must not change a number (BOM, CRLF, gzip without .gz,
extra white space, blank lines, float64 vectors, padded ids) — and then `eval` exits 0 and prints exactly the
table of the clean files; or *malformed* — and then `eval` exits 2 with exactly one ``error:`` line on stderr and
writes no output file. Never a traceback, never another number.

CI runs 60 derandomized (seeded) cases; the thorough run draws 2,000 fresh ones:

    HYPOTHESIS_PROFILE=thorough python -m pytest -q tests/test_fuzz.py
"""
import gzip
import os
import tempfile
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from pyterrier_frechet.cli import main
from conftest import toy as _toy_fixture, write_trec_files

THOROUGH = os.environ.get('HYPOTHESIS_PROFILE') == 'thorough'
EXAMPLES = 2000 if THOROUGH else 60
TOY = _toy_fixture.__wrapped__()


def _clean(folder: Path) -> None:
    vectors, qrels, run = TOY
    write_trec_files(folder, qrels, {'toy.fwd': run, 'toy.rev': run.assign(score=-run.score)}, vectors,
                     vector_dtype=np.float32)


def _clean_files():
    with tempfile.TemporaryDirectory() as tmp:
        _clean(Path(tmp))
        return {str(p.relative_to(tmp)): p.read_bytes() for p in Path(tmp).rglob('*') if p.is_file()}


CLEAN = _clean_files()
RUN, QRELS, NPY, IDS = 'runs/run.toy.rev.txt', 'qrels.txt', 'vecs.npy', 'vecs.ids.txt'


def _npy(array) -> bytes:
    import io
    buf = io.BytesIO()
    np.save(buf, array)
    return buf.getvalue()


def _load(data: bytes):
    import io
    return np.load(io.BytesIO(data))


def _eval(folder: Path, capfd):
    out = folder / 'table.csv'
    code = main(['eval', '--qrels', str(folder / 'qrels.txt'), '--runs', str(folder / 'runs'), '--vectors',
                 str(folder / 'vecs'), '--metrics', 'FD@3', 'FD(urr=True)@3', 'nDCG@3', '--format', 'csv',
                 '--output', str(out), '--quiet'])
    captured = capfd.readouterr()
    return code, (out.read_text() if out.exists() else None), captured.err


# --- benign changes of form: the numbers must not move ----------------------------------------------------------

def _bom(data: bytes, draw) -> bytes:
    return b'\xef\xbb\xbf' + data


def _crlf(data: bytes, draw) -> bytes:
    return data.replace(b'\n', b'\r\n')


def _gzip(data: bytes, draw) -> bytes:
    return gzip.compress(data, mtime=0)


def _spaces(data: bytes, draw) -> bytes:
    sep = draw(st.sampled_from([b'  ', b'\t', b' \t ']))
    return b'\n'.join(sep.join(line.split()) + draw(st.sampled_from([b'', b' ', b'\t'])) for line in data.split(b'\n'))


def _blank_lines(data: bytes, draw) -> bytes:
    lines = data.split(b'\n')
    at = draw(st.integers(0, len(lines)))
    return b'\n'.join(lines[:at] + [b'', b'   '] + lines[at:])


BENIGN_TEXT = [_spaces, _blank_lines, _crlf, _bom, _gzip]  # the order they compose in


# --- malformed lines: one error line, exit 2 ----------------------------------------------------------------------

def _line_edit(edit):
    def mutate(data: bytes, draw) -> bytes:
        lines = [line for line in data.split(b'\n') if line.strip()]
        at = draw(st.integers(0, len(lines) - 1))
        lines[at] = edit(lines[at].split(), draw)
        return b'\n'.join(lines) + b'\n'
    mutate.__name__ = edit.__name__
    return mutate


def _drop_column(parts, draw):
    del parts[draw(st.integers(0, len(parts) - 1))]
    return b' '.join(parts)


def _extra_column(parts, draw):
    return b' '.join(parts + [b'extra'])


def _not_utf8(parts, draw):
    return b' '.join(parts) + b' \xff'[: 1 + draw(st.integers(0, 1))] + b'\xe9'


def _number_column(which):
    def edit(parts, draw):
        parts[which] = draw(st.sampled_from([b'x', b'nan', b'inf', b'1e400', b'--1', b'1,5']))
        return b' '.join(parts)
    edit.__name__ = f'_bad_number_{which}'
    return edit


def _label(parts, draw):
    parts[3] = draw(st.sampled_from([b'1.5', b'two', b'2147483648', b'-2147483649', b'1e3']))
    return b' '.join(parts)


def _truncate_gzip(data: bytes, draw) -> bytes:
    packed = gzip.compress(data, mtime=0)
    return packed[:draw(st.integers(2, len(packed) - 1))]


def _empty(data: bytes, draw) -> bytes:
    return draw(st.sampled_from([b'', b'\n\n', b'   \n']))


def _header(data: bytes, draw) -> bytes:
    return draw(st.sampled_from([b'qid Q0 docno rank score tag\n', b'qid iter docno label\n'])) + data


RUN_MALFORMED = [_line_edit(_drop_column), _line_edit(_extra_column), _line_edit(_not_utf8),
                 _line_edit(_number_column(3)), _line_edit(_number_column(4)), _truncate_gzip, _empty, _header]
QRELS_MALFORMED = [_line_edit(_drop_column), _line_edit(_extra_column), _line_edit(_not_utf8), _line_edit(_label),
                   _truncate_gzip, _empty, _header]


def _vectors_benign(draw) -> dict:
    kind = draw(st.sampled_from(['float64', 'ids_bom', 'ids_padding']))
    if kind == 'float64':  # the same values in float64: kept as float64, FD unchanged
        return {NPY: _npy(_load(CLEAN[NPY]).astype(np.float64))}
    if kind == 'ids_bom':
        return {IDS: b'\xef\xbb\xbf' + CLEAN[IDS]}
    return {IDS: b''.join(b' ' + i + b'\t \n' for i in CLEAN[IDS].split())}


def _vectors_malformed(draw) -> dict:
    vecs, ids = _load(CLEAN[NPY]), CLEAN[IDS].split()
    kind = draw(st.sampled_from(['nan', 'rows', 'ids_short', 'ids_dup', '1d', 'garbage', 'no_ids']))
    if kind == 'nan':  # in the vector of a relevant document (a vector no measure reads is never looked at)
        row = ids.index(draw(st.sampled_from([b'd0', b'd1', b'd3', b'd10', b'd11', b'd12'])))
        vecs[row, draw(st.integers(0, vecs.shape[1] - 1))] = draw(st.sampled_from([np.nan, np.inf, -np.inf]))
        return {NPY: _npy(vecs)}
    if kind == 'rows':
        return {NPY: _npy(vecs[:-draw(st.integers(1, 5))])}
    if kind == 'ids_short':
        return {IDS: b'\n'.join(ids[:-1]) + b'\n'}
    if kind == 'ids_dup':
        ids[draw(st.integers(1, len(ids) - 1))] = ids[0]
        return {IDS: b'\n'.join(ids) + b'\n'}
    if kind == '1d':
        return {NPY: _npy(vecs.ravel())}
    if kind == 'garbage':
        return {NPY: b'\x93NUMPY' + draw(st.binary(min_size=0, max_size=64))}
    return {IDS: None}


@st.composite
def cases(draw):
    """(benign, name, files): new contents (None: deleted) of some of the clean files."""
    target = draw(st.sampled_from(['run', 'qrels', 'vectors']))
    benign = draw(st.booleans())
    if target == 'vectors':
        fn = _vectors_benign if benign else _vectors_malformed
        return benign, fn.__name__, fn(draw)
    if benign:  # several changes of form compose (e.g. BOM + CRLF + gzip); gzip goes last
        fns = sorted(set(draw(st.lists(st.sampled_from(BENIGN_TEXT), min_size=1, max_size=3))), key=BENIGN_TEXT.index)
    else:
        fns = [draw(st.sampled_from(RUN_MALFORMED if target == 'run' else QRELS_MALFORMED))]
    path = RUN if target == 'run' else QRELS
    data = CLEAN[path]
    for f in fns:
        data = f(data, draw)
    return benign, f'{target}:' + '+'.join(f.__name__ for f in fns), {path: data}


def _write(folder: Path, changes: dict) -> None:
    for path, data in {**CLEAN, **changes}.items():
        if data is not None:
            (folder / path).parent.mkdir(parents=True, exist_ok=True)
            (folder / path).write_bytes(data)


@pytest.fixture(scope='module')
def clean_table():
    with tempfile.TemporaryDirectory() as tmp:
        _write(Path(tmp), {})
        out = Path(tmp) / 'table.csv'
        assert main(['eval', '--qrels', f'{tmp}/qrels.txt', '--runs', f'{tmp}/runs', '--vectors', f'{tmp}/vecs',
                     '--metrics', 'FD@3', 'FD(urr=True)@3', 'nDCG@3', '--format', 'csv', '--output', str(out), '--quiet']) == 0
        table = out.read_text()
    assert table.count('\n') == 3 and 'nan' not in table.lower()  # two runs, finite numbers
    return table


@settings(max_examples=EXAMPLES, deadline=None, derandomize=not THOROUGH, database=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(case=cases())
def test_eval_either_prints_the_clean_numbers_or_fails_with_one_error_line(case, clean_table, capfd):
    benign, name, changes = case
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        _write(folder, changes)
        code, table, err = _eval(folder, capfd)
    if benign:
        assert (code, err) == (0, ''), (name, err)
        assert table == clean_table, name
    else:
        assert code == 2, (name, code, table)
        assert err.startswith('error: ') and err.count('\n') == 1 and 'Traceback' not in err, (name, err)
        assert table is None, name
