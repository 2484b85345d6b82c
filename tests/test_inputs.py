"""Issue 15's input defects that gave silent wrong numbers or unclear errors, each reproduced (toy files)."""
import json

import numpy as np
import pandas as pd
import pytest

import pyterrier_frechet as pf
from pyterrier_frechet.cli import main
from conftest import reference_fd
from test_cli import files  # noqa: F401,F811  (the toy files fixture, used by name)


def _text_eval(files, *extra):  # noqa: F811
    return main(['eval', '--qrels', str(files / 'qrels.txt'), '--runs', str(files / 'runs'), '--text',
                 str(files / 'corpus.jsonl'), '--metrics', 'FD@3', '--quiet', *extra])


def test_corpus_without_the_text_field_is_refused_before_encoding(files, capsys):  # noqa: F811
    # S1: {"id", "contents"} records used to embed empty strings -> identical vectors -> FD@10 = 0.0
    with open(files / 'corpus.jsonl', 'w') as f:
        for i in range(60):
            f.write(json.dumps({'id': f'd{i}', 'contents': f'document {i}'}) + '\n')
    assert _text_eval(files, '--model', str(files / 'no-such-model')) == 2  # refused before the model is even looked at
    err = capsys.readouterr().err
    assert "corpus.jsonl:1 has none of the text field(s) ['text'] (--text-fields); its fields are ['contents', 'id']" in err
    assert err.count('\n') == 1 and err.startswith('error: ')


def test_empty_texts_are_refused_naming_the_docnos(files, capsys):  # noqa: F811
    with open(files / 'corpus.jsonl', 'w') as f:
        for i in range(60):
            f.write(json.dumps({'docno': f'd{i}', 'text': '   ' if i in (3, 7) else f'document {i}'}) + '\n')
    assert _text_eval(files, '--model', str(files / 'no-such-model')) == 2
    assert "2 record(s) have an empty text in field(s) ['text'] (--text-fields), e.g. docnos ['d3', 'd7']" in capsys.readouterr().err


def _store(tmp_path, ids_text, vectors):
    np.save(tmp_path / 'v.npy', vectors)
    (tmp_path / 'v.ids.txt').write_bytes(ids_text)
    return pf.VectorStore(str(tmp_path / 'v'))


def test_float64_vectors_stay_float64(tmp_path):
    # S8: offset data (mean 1e4, spread 1) lost ~1% of FD when cast to float32
    rng = np.random.default_rng(0)
    x = rng.normal(size=(40, 4)) + 1e4
    store = _store(tmp_path, '\n'.join(f'd{i}' for i in range(40)).encode() + b'\n', x)
    vecs, found = store.lookup([f'd{i}' for i in range(40)])
    assert vecs.dtype == np.float64 and found.all() and np.array_equal(vecs, x)
    qrels = pd.DataFrame({'qid': 'q', 'docno': [f'd{i}' for i in range(20)], 'label': 1})
    run = pd.DataFrame({'qid': 'q', 'docno': [f'd{i}' for i in range(20, 40)], 'score': np.arange(20.0)})
    value = pf.evaluate({'r': run}, qrels, [pf.FD(encoder=store)]).iloc[0]['FD(encoder=' + repr(store) + ')']
    assert value == pytest.approx(reference_fd(x[:20], x[20:]), rel=1e-9)
    big = _store(tmp_path, b'a\nb\n', np.array([[1e300, 0.0], [0.0, 1e300]]))  # beyond float32: stays finite
    assert np.isfinite(big.lookup(['a', 'b'])[0]).all()


@pytest.mark.parametrize('ids_text', [b'\xef\xbb\xbfd0\nd1\nd2\n', b'd0 \nd1\t\nd2  \n', b'd0\r\nd1\r\nd2\r\n'],
                         ids=['byte-order mark', 'trailing white space', 'CRLF'])
def test_ids_file_quirks_do_not_unmatch_ids(tmp_path, ids_text):
    # S11 / U3: a BOM used to unmatch the first id; trailing white space made every id "have no vector"
    store = _store(tmp_path, ids_text, np.eye(3))
    vecs, found = store.lookup(['d0', 'd1', 'd2'])
    assert found.all() and np.array_equal(vecs, np.eye(3))


def test_bad_vector_files_are_named(tmp_path):
    (tmp_path / 'v.npy').write_bytes(b'not a numpy file')
    (tmp_path / 'v.ids.txt').write_text('d0\n')
    with pytest.raises(ValueError, match=r'VectorStore: .*v\.npy cannot be read as a \.npy matrix'):
        pf.VectorStore(str(tmp_path / 'v'))
    np.save(tmp_path / 'v.npy', np.array([['a', 'b']]))
    with pytest.raises(ValueError, match=r'v\.npy holds <U1 values; vectors must be floats'):
        pf.VectorStore(str(tmp_path / 'v'))


@pytest.mark.parametrize('args,message', [
    (('--samples', '0'), "argument --samples: expected a positive integer, got 0"),
    (('--ci', '2'), "argument --ci: expected a number in (0, 1), got 2.0"),
    (('--rel', '-1'), "argument --rel: expected a positive integer, got -1"),
])
def test_bad_numbers_are_refused_by_the_parser(files, capsys, args, message):  # noqa: F811
    # S9 and the "caught only after the expensive work" arguments: refused before anything is read
    with pytest.raises(SystemExit) as exit_info:
        main(['bootstrap', '--qrels', str(files / 'qrels.txt'), '--runs', str(files / 'runs'), '--vectors',
              str(files / 'vecs'), '--metrics', 'FD@3', *args])
    assert exit_info.value.code == 2 and message in capsys.readouterr().err


@pytest.mark.parametrize('option', ['--output', '--plot-dir'])
def test_unwritable_output_places_are_refused_before_the_work(files, capsys, option):  # noqa: F811
    # C1/C2: a missing folder or a path under a file used to fail after all the computation
    (files / 'a_file').write_text('x')
    target = str(files / 'a_file' / 'out')
    assert main(['bootstrap', '--qrels', str(files / 'qrels.txt'), '--runs', str(files / 'runs'), '--vectors',
                 str(files / 'vecs'), '--metrics', 'FD@3', '--samples', '5', '--quiet', option, target]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f'error: {option} ') and 'does not exist' in err


def test_unknown_measure_parameter_in_the_cli(files, capsys):  # noqa: F811
    # C5: FD(bogus=1)@10 used to be a KeyError, even from str(measure)
    assert main(['eval', '--qrels', str(files / 'qrels.txt'), '--runs', str(files / 'runs'), '--vectors',
                 str(files / 'vecs'), '--metrics', 'FD(bogus=1)@3', '--quiet']) == 2
    assert "FD has no parameter(s) ['bogus']" in capsys.readouterr().err


@pytest.mark.parametrize('label,message', [('x', "'x'"), ('1.5', "'1.5'"), ('3000000000', "'3000000000'")])
def test_bad_labels_are_refused(files, capsys, label, message):  # noqa: F811
    # C3/C4/S13: non-numeric, fractional and out-of-range labels (pytrec_eval stores C ints)
    with open(files / 'qrels.txt', 'a') as f:
        f.write(f'q1 0 d9 {label}\n')
    assert main(['eval', '--qrels', str(files / 'qrels.txt'), '--runs', str(files / 'runs'), '--vectors',
                 str(files / 'vecs'), '--metrics', 'FD@3', 'nDCG@3', '--quiet']) == 2
    err = capsys.readouterr().err
    assert 'relevance label(s) are missing, not integers or outside' in err and message in err


def test_a_failed_report_leaves_the_existing_folder_as_it_was(toy, tmp_path):
    # S14: a failed report used to overwrite some CSVs and leave the old report.md
    from conftest import DictEncoder
    vectors, qrels, run = toy
    out = tmp_path / 'rep'
    out.mkdir()
    (out / 'report.md').write_text('the old report')
    runs = {'fwd': run, 'other': run.assign(qid='zz')}  # the second run shares no query with the qrels
    with pytest.raises(ValueError, match="run 'other' shares no query with the qrels"):
        pf.write_report(runs, qrels, [pf.FD @ 3, 'nDCG@3'], out, encoder=DictEncoder(vectors), n_samples=40, verbose=False)
    assert (out / 'report.md').read_text() == 'the old report' and sorted(p.name for p in out.iterdir()) == ['report.md']
    assert sorted(p.name for p in tmp_path.iterdir()) == ['rep']  # no temporary folder left behind
    path = pf.write_report({'fwd': run, 'rev': run.assign(score=-run.score)}, qrels, [pf.FD @ 3, 'nDCG@3'], out,
                           encoder=DictEncoder(vectors), n_samples=40, per_query=(1,), seeds=(0,), verbose=False)
    assert path == out / 'report.md' and '# FD evaluation report' in path.read_text()
    assert sorted(p.name for p in tmp_path.iterdir()) == ['rep']


def test_bootstrap_p_is_never_below_one_over_b_plus_one():
    # S5: compare --samples 5 used to print p = 0.0 (and name a winner) when all five differences had one sign
    from pyterrier_frechet.analyses.significance import bootstrap_p
    assert bootstrap_p(np.array([0.3, 0.1, 0.2, 0.4, 0.5])) == pytest.approx(2 / 6)
    assert bootstrap_p(np.ones(999)) == pytest.approx(2 / 1000)
    # one sample on the other side of 0 out of 9: 2 (1 + 1) / 10
    assert bootstrap_p(np.array([-1.0] + [1.0] * 8)) == pytest.approx(0.4)
    assert bootstrap_p(np.array([-1.0, 1.0])) == 1.0 and np.isnan(bootstrap_p(np.array([np.nan])))


def test_too_few_resamples_are_refused_before_the_work(files, capsys):  # noqa: F811
    # S5: the smallest attainable p must be below alpha, else no difference can ever be called
    data = ['--qrels', str(files / 'qrels.txt'), '--runs', str(files / 'runs'), '--vectors', str(files / 'vecs'), '--quiet']
    assert main(['compare', *data, '--metrics', 'FD@3', '--samples', '5']) == 2
    err = capsys.readouterr().err
    assert err.startswith('error: n_samples=5 (--samples)') and '2/(B+1) = 0.333' in err and 'at least 40' in err
    assert main(['compare', *data, '--metrics', 'FD@3', '--samples', '100', '--permutations', '9']) == 2
    assert 'n_permutations=9 (--permutations)' in capsys.readouterr().err
    assert main(['report', *data, '--metrics', 'FD@3', '--samples', '20', '--out', str(files / 'rep')]) == 2
    assert not (files / 'rep').exists()
    with pytest.warns(UserWarning, match='n_samples=100: p-values from fewer than 1000 resamples are coarse'):
        from pyterrier_frechet.analyses.significance import check_test_resolution
        check_test_resolution(100, 0.05)
    with pytest.raises(ValueError, match='alpha must be in'):
        check_test_resolution(1000, 1.5)
