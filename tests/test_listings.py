"""Text listings: query groups (qid group) and the pooling simulation's run groups share one reader."""
import pandas as pd
import pytest

import pyterrier_frechet as pf
from pyterrier_frechet.data.listings import read_listing


def test_query_groups_file_tabs_blanks_and_comments(tmp_path):
    path = tmp_path / 'groups.tsv'
    path.write_text('# topic of each query\n101\ttopic A\n102 tB   # a comment\n\n103\ttopic A\n')
    got = pf.read_query_groups(path)
    assert got.to_dict('list') == {'qid': ['101', '102', '103'], 'group': ['topic A', 'tB', 'topic A']}


def test_query_groups_file_with_byte_order_mark_and_crlf(tmp_path):
    """A file saved by a Windows editor: the byte-order mark and the carriage returns are not part of the fields."""
    path = tmp_path / 'groups.tsv'
    path.write_bytes('\ufeff101\tA\r\n102\tB\r\n'.encode('utf-8'))
    assert pf.read_query_groups(path).to_dict('list') == {'qid': ['101', '102'], 'group': ['A', 'B']}


@pytest.mark.parametrize('text, match', [
    ('101\n', r'groups.tsv:1: expected 2 fields \(qid, group\)'),
    ('101 a\n102 b c\n', r'groups.tsv:2: expected 2 fields'),
    ('101 a\n101 b\n', r"groups.tsv:2: qid '101' listed twice \(first on line 1\)"),
    ('# nothing\n\n', 'no query group listed'),
])
def test_bad_query_groups_files_name_the_line(tmp_path, text, match):
    path = tmp_path / 'groups.tsv'
    path.write_text(text)
    with pytest.raises(ValueError, match=match):
        pf.read_query_groups(path)


def test_read_listing_is_text_only(tmp_path):
    """A field that looks like code stays a string (nothing read is evaluated)."""
    path = tmp_path / 'x.tsv'
    path.write_text("__import__('os').system('false')\t1\n")
    got = read_listing(path, ('a', 'b'), 'row')
    assert got.iloc[0].tolist() == ["__import__('os').system('false')", '1'] and isinstance(got, pd.DataFrame)
