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
