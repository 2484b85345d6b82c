"""The shuffle check (analyses/shuffle.py): rankings rotated across the queries with a relevant document at each
measure's threshold, on hand-built frames; the `shuffle` subcommand equals the function."""
import ir_measures
import numpy as np
import pandas as pd
import pyterrier as pt
import pytest

import pyterrier_frechet as pf
from pyterrier_frechet.analyses.shuffle import relevance_threshold, rotate_rankings
from pyterrier_frechet.cli import main
from test_cli import files  # noqa: F401  (the toy files fixture, used by name)

QRELS = pd.DataFrame({'qid': ['a', 'a', 'b', 'c', 'd', 'd'], 'docno': ['x', 'y', 'x', 'z', 'y', 'w'],
                      'label': [2, 0, 1, 2, 0, 0]})
RUN = pd.DataFrame({'qid': ['d', 'c', 'b', 'a', 'a', 'e'], 'docno': ['1', '2', '3', '4', '5', '6'],
                    'score': [1.0, 2.0, 3.0, 4.0, 3.0, 1.0]})


def test_rotation_hands_each_ranking_to_the_next_query_at_the_threshold():
    # label >= 1: a, b, c have a relevant document (d only non-relevant ones, e no judgment): a -> b -> c -> a
    rotated = rotate_rankings(RUN, QRELS)
    assert rotated.qid.tolist() == ['d', 'a', 'c', 'b', 'b', 'e']
    assert rotated[['docno', 'score']].equals(RUN[['docno', 'score']])  # the rankings themselves do not change
    # label >= 2: only a and c: a <-> c, b keeps its ranking
    assert rotate_rankings(RUN, QRELS, rel=2).qid.tolist() == ['d', 'a', 'b', 'c', 'c', 'e']
    # PyTerrier or ir_measures column names for the qrels, the same rotation
    assert rotate_rankings(RUN, pt.model.to_ir_measures(QRELS)).qid.tolist() == rotated.qid.tolist()
    with pytest.raises(ValueError, match=r'at least 2 queries with relevant documents \(label >= 3\) in the run, got 0'):
        rotate_rankings(RUN, QRELS, rel=3)
    with pytest.raises(ValueError, match=r'got 1'):
        rotate_rankings(RUN[RUN.qid != 'c'], QRELS, rel=2)


def test_relevance_threshold_is_the_measure_rel_or_1():
    assert [relevance_threshold(m) for m in (pf.FD @ 10, pf.FD(rel=2) @ 10, pf.CFD(rel=3) @ 5, ir_measures.nDCG @ 10,
                                             ir_measures.P(rel=2) @ 5)] == [1, 2, 3, 1, 2]


def test_shuffle_subcommand_equals_the_function(files, capsys):  # noqa: F811
    data = ['--qrels', str(files / 'qrels.txt'), '--runs', str(files / 'runs'), '--vectors', str(files / 'vecs')]
    assert main(['shuffle', *data, '--metrics', 'FD@3', 'CFD@3', 'nDCG@3', '--format', 'csv', '--quiet']) == 0
    table = pd.read_csv(pd.io.common.StringIO(capsys.readouterr().out))
    runs = {n: pt.io.read_results(str(files / 'runs' / f'run.toy.{n}.txt')) for n in ('fwd', 'mid', 'rev')}
    expected = pf.shuffle_check(runs, pt.io.read_qrels(str(files / 'qrels.txt')),
                                [pf.FD(encoder=pf.VectorStore(str(files / 'vecs'))) @ 3,
                                 pf.CFD(encoder=pf.VectorStore(str(files / 'vecs'))) @ 3, ir_measures.nDCG @ 3])
    np.testing.assert_allclose(table[['value', 'rotated']].to_numpy(float), expected[['value', 'rotated']].to_numpy(float),
                               rtol=1e-6)
