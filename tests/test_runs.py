"""TREC run and qrels files (data/runs.py): ordinary files, and a run file given as qrels (and the reverse)."""
import numpy as np
import pytest

from pyterrier_frechet.cli import main
from pyterrier_frechet.data.runs import WrongFileKind, looks_like, read_qrels, read_run
from test_cli import files  # noqa: F401 - the toy files fixture (qrels.txt, runs/, vecs.npy + vecs.ids.txt)


def test_run_file_given_as_qrels_and_the_reverse(files, capsys):  # noqa: F811
    run_file = files / 'runs' / 'run.toy.fwd.txt'
    assert looks_like(run_file.read_text()) == 'run' and looks_like((files / 'qrels.txt').read_text()) == 'qrels'
    with pytest.raises(WrongFileKind, match=r'run\.toy\.fwd\.txt:1: this looks like a run file') as info:
        read_qrels(run_file)  # today: "the relevance label (4th column) must be an integer"
    assert info.value.kind == 'run'
    with pytest.raises(WrongFileKind, match=r'qrels\.txt:1: expected 6 columns .* this looks like a qrels file'):
        read_run(files / 'qrels.txt')
    # blank lines before the first record: the line number is the record's
    (files / 'blank.txt').write_text('\n\n' + run_file.read_text())
    with pytest.raises(WrongFileKind, match=r'blank\.txt:3: this looks like a run file'):
        read_qrels(files / 'blank.txt')
    base = ['eval', '--vectors', str(files / 'vecs'), '--metrics', 'FD@3', '--quiet']
    assert main(base + ['--qrels', str(run_file), '--runs', str(files / 'runs')]) == 2
    err = capsys.readouterr().err
    assert '--qrels: ' in err and 'looks like a run file' in err and '--runs takes run files' in err
    assert main(base + ['--qrels', str(files / 'qrels.txt'), '--runs', str(files / 'qrels.txt')]) == 2
    err = capsys.readouterr().err
    assert '--runs: ' in err and 'looks like a qrels file' in err


def test_ordinary_files_still_read(files):  # noqa: F811
    qrels = read_qrels(files / 'qrels.txt')
    assert qrels.shape == (9, 3) and qrels.label.dtype == np.int64
    run = read_run(files / 'runs' / 'run.toy.fwd.txt')
    assert len(run) == 40 and run.score.dtype == np.float64
    # a qrels line with a non-integer label is still reported as before (not as a run file)
    (files / 'bad.txt').write_text('q1 0 d1 x\n')
    with pytest.raises(ValueError, match=r'relevance label \(4th column\) must be an integer'):
        read_qrels(files / 'bad.txt')
