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


@pytest.mark.parametrize('label,message', [
    ('x', ":10: the relevance label (4th column) must be an integer: 'q1 0 d9 x'"),  # named by the reader, file:line
    ('1.5', ":10: the relevance label (4th column) must be an integer: 'q1 0 d9 1.5'"),
    ('3000000000', "relevance label(s) are missing, not integers or outside")])  # read, then range-checked
def test_bad_labels_are_refused(files, capsys, label, message):  # noqa: F811
    # C3/C4/S13: non-numeric, fractional and out-of-range labels (pytrec_eval stores C ints)
    with open(files / 'qrels.txt', 'a') as f:
        f.write(f'q1 0 d9 {label}\n')
    assert main(['eval', '--qrels', str(files / 'qrels.txt'), '--runs', str(files / 'runs'), '--vectors',
                 str(files / 'vecs'), '--metrics', 'FD@3', 'nDCG@3', '--quiet']) == 2
    err = capsys.readouterr().err
    assert err.startswith('error: ') and err.count('\n') == 1 and message in err


def test_a_failed_report_leaves_the_existing_folder_as_it_was(toy, tmp_path):
    # S14: a failed report used to overwrite some CSVs and leave the old report.md
    from conftest import DictEncoder
    vectors, qrels, run = toy
    out = tmp_path / 'rep'
    good = {'fwd': run, 'rev': run.assign(score=-run.score)}
    kwargs = dict(encoder=DictEncoder(vectors), n_samples=40, per_query=(1,), seeds=(0,), verbose=False)
    pf.write_report(good, qrels, [pf.FD @ 3, 'nDCG@3'], out, **kwargs)  # an earlier report (marked as the package's)
    (out / 'report.md').write_text('the old report')
    before = sorted(p.name for p in out.iterdir())
    runs = {'fwd': run, 'other': run.assign(qid='zz')}  # the second run shares no query with the qrels
    with pytest.raises(ValueError, match="run 'other' shares no query with the qrels"):
        pf.write_report(runs, qrels, [pf.FD @ 3, 'nDCG@3'], out, **kwargs)
    assert (out / 'report.md').read_text() == 'the old report' and sorted(p.name for p in out.iterdir()) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ['rep']  # no temporary folder left behind
    path = pf.write_report(good, qrels, [pf.FD @ 3, 'nDCG@3'], out, **kwargs)
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
    # (the count p-value of --test bootstrap; the default normal test is not quantised by the count)
    assert main(['compare', *data, '--metrics', 'FD@3', '--samples', '5', '--test', 'bootstrap']) == 2
    err = capsys.readouterr().err
    assert err.startswith('error: n_samples=5 (--samples)') and '2/(B+1) = 0.333' in err and 'at least 120' in err  # 3 pairs
    assert main(['compare', *data, '--metrics', 'FD@3', '--samples', '200', '--permutations', '9']) == 2
    assert 'n_permutations=9 (--permutations)' in capsys.readouterr().err
    assert main(['report', *data, '--metrics', 'FD@3', '--samples', '20', '--out', str(files / 'rep'), '--test', 'bootstrap']) == 2
    assert not (files / 'rep').exists()
    with pytest.warns(UserWarning, match='n_samples=100: p-values from fewer than 1000 resamples are coarse'):
        from pyterrier_frechet.analyses.options import check_test_resolution
        check_test_resolution(100, 0.05)
    with pytest.raises(ValueError, match='alpha must be in'):
        check_test_resolution(1000, 1.5)


def _eval(files, qrels, runs, *metrics):
    return main(['eval', '--qrels', str(qrels), '--runs', str(runs), '--vectors', str(files / 'vecs'),
                 '--metrics', *(metrics or ('FD@3',)), '--format', 'csv', '--quiet'])


def test_qrels_lines_without_a_label_are_refused_with_file_and_line(files, capsys):  # noqa: F811
    # S10: '1 0 dNEW' was accepted when only FD was asked for; U4: 3-column qrels gave "no relevant document"
    good = (files / 'qrels.txt').read_text()
    for name, text, message in [
            ('extra.txt', good + 'q1 0 dNEW\n', f':{good.count(chr(10)) + 1}: expected 4 columns (qid iter docno label), found 3 '
                                                '(a qrels line needs a relevance label)'),
            ('three.txt', ''.join(' '.join(l.split()[::2][:1] + l.split()[2:3] + l.split()[3:]) + '\n' for l in good.splitlines()),
             ':1: expected 4 columns'),
            ('header.txt', 'qid iter docno label\n' + good, ':1: the relevance label (4th column) must be an integer'),
            ('float.txt', good.replace(' 1\n', ' 1.5\n', 1), 'the relevance label (4th column) must be an integer')]:
        (files / name).write_text(text)
        assert _eval(files, files / name, files / 'runs') == 2, name
        err = capsys.readouterr().err
        assert err.startswith('error: ') and err.count('\n') == 1 and f'{files / name}' in err and message in err, (name, err)


def test_run_and_qrels_encodings_are_read_by_content(files, capsys):  # noqa: F811
    # U1: a gzip run without .gz, a BOM, CRLF line ends are read; a non-UTF-8 byte names file and line
    import gzip as gz
    assert _eval(files, files / 'qrels.txt', files / 'runs') == 0
    clean = capsys.readouterr().out
    runs = files / 'variants'
    runs.mkdir()
    for f in sorted((files / 'runs').iterdir()):
        text = f.read_text()
        if 'fwd' in f.name:
            (runs / f.name).write_bytes(gz.compress(text.encode()))  # gzip, but named .txt
        elif 'mid' in f.name:
            (runs / f.name).write_bytes(b'\xef\xbb\xbf' + text.replace('\n', '\r\n').encode())  # BOM + CRLF
        else:
            (runs / f.name).write_text(text)
    (files / 'qrels_bom.txt').write_bytes(b'\xef\xbb\xbf' + (files / 'qrels.txt').read_bytes())
    assert _eval(files, files / 'qrels_bom.txt', runs) == 0
    assert capsys.readouterr().out == clean  # the same numbers as the clean files
    bad = runs / 'run.toy.rev.txt'
    lines = bad.read_bytes().split(b'\n')
    lines[2] = lines[2].replace(b'Q0', b'Q\xe90')
    bad.write_bytes(b'\n'.join(lines))
    assert _eval(files, files / 'qrels.txt', runs) == 2
    err = capsys.readouterr().err
    assert err == f'error: {bad}:3: byte 0xe9 is not UTF-8 text; convert the file to UTF-8 (e.g. iconv -f latin1 -t utf-8)\n'
    bad.write_bytes(gz.compress(b'q1 Q0 d1 1 2.0 x\n')[:-6])  # a truncated gzip stream
    assert _eval(files, files / 'qrels.txt', runs) == 2
    assert f'error: {bad}: cannot be read' in capsys.readouterr().err


def test_frechet_distance_from_stats_refuses_what_is_not_a_covariance():
    # S12: a negative-definite or asymmetric covariance gave 0.0; complex input lost its imaginary parts silently
    from pyterrier_frechet.core.frechet import GaussianStats as G, frechet_distance_from_stats as fds
    eye, zero = np.eye(3), np.zeros(3)
    indefinite = np.array([[1.0, 2.0, 0.0], [2.0, 1.0, 0.0], [0.0, 0.0, 1.0]])  # eigenvalues −1, 1, 3
    for other, message in [(-eye, 'negative variances'), (indefinite, 'not positive semi-definite'),
                           (np.triu(np.ones((3, 3))), 'not symmetric'), (eye * (1 + 1j), 'complex')]:
        for first, second in ((eye, other), (other, eye)):
            with pytest.raises(ValueError, match=message):
                fds(G(zero, first, 5), G(zero, second, 5))
    # a complex input with zero imaginary parts is a real one; a PSD singular covariance is fine
    assert fds(G(zero, eye + 0j, 5), G(zero, np.diag([1.0, 1.0, 0.0]), 5)) == pytest.approx(1.0)  # (1 − 0)² on the last axis


def test_frechet_distance_at_extreme_scales_and_of_identical_sets():
    # C7: at scale ≥ 1e78 the Gram matrix of the cross matrix overflowed (LinAlgError); FD scales as s²
    rng = np.random.default_rng(3)
    x, y = rng.normal(size=(30, 8)), rng.normal(size=(40, 8)) + 0.3
    ref = reference_fd(x, y)
    for scale in (2.0 ** 260, 2.0 ** -260, 1e78, 1e-90):
        assert pf.frechet_distance(x * scale, y * scale) == pytest.approx(ref * scale * scale, rel=1e-10)
    # identical sets (in any order) are exactly 0, not the round-off of the traces (8.9e-16 before)
    assert pf.frechet_distance(x, x) == 0.0 and pf.frechet_distance(x, x[::-1]) == 0.0
    assert pf.frechet_distance(x, x + 1e-3) == pytest.approx(8e-6, rel=1e-6)  # a shifted set: ‖μ₁−μ₂‖² = 8·1e-6


def test_measure_parameters_of_the_wrong_type_are_refused():
    # FD(rel=True) was accepted as rel=1 (bool is an int to isinstance)
    with pytest.raises(ValueError, match='FD: rel=True is a bool, but rel takes int values'):
        (pf.FD(rel=True) @ 10).validate_params()
    (pf.FD(urr=True) @ 10).validate_params()  # a bool parameter takes bools


def test_latex_output_is_escaped_and_output_files_follow_the_umask(files, tmp_path, capsys):  # noqa: F811
    import os
    import shutil
    runs = tmp_path / 'amp_runs'
    runs.mkdir()
    for f in (files / 'runs').iterdir():
        shutil.copy(f, runs / f.name.replace('fwd', 'my_run&50%'))
    out = tmp_path / 'table.tex'
    old = os.umask(0o022)
    try:
        assert main(['eval', '--qrels', str(files / 'qrels.txt'), '--runs', str(runs), '--vectors', str(files / 'vecs'),
                     '--metrics', 'FD@3', '--format', 'latex', '--output', str(out), '--quiet']) == 0
    finally:
        os.umask(old)
    text = out.read_text()
    assert r'my\_run\&50\%' in text and 'my_run&50%' not in text
    assert (out.stat().st_mode & 0o777) == 0o644  # as open() would create it under umask 022 (was 0600)


def test_correlations_of_a_constant_column_say_why_instead_of_scipy_warnings():
    from pyterrier_frechet.analyses.correlation import correlations
    import warnings
    table = pd.DataFrame({'name': list('abcd'), 'nDCG@10': [0.1, 0.2, 0.3, 0.4], 'P@10': [0.5] * 4, 'FD@10': [4.0, 3.0, 2.0, 1.0]})
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter('always')
        out = correlations(table).set_index(['a', 'b'])
    assert [str(w.message) for w in caught] == ["no correlation between nDCG@10 and P@10: ['P@10'] constant across the systems",
                                                "no correlation between P@10 and FD@10: ['P@10'] constant across the systems"]
    assert np.isnan(out.loc[('nDCG@10', 'P@10'), 'kendall_tau'])
    assert out.loc[('nDCG@10', 'FD@10'), 'kendall_tau'] == pytest.approx(1.0)  # FD negated: perfect agreement


def test_too_few_resamples_for_the_number_of_comparisons_are_refused(files, capsys):  # noqa: F811
    # compare over all 171 pairs of 19 DL19 runs with 1000 samples could never call a difference after Holm
    # (171 · 2/1001 = 0.34 > 0.05) and said "nothing significant" — now refused before the work, naming the fix
    from pyterrier_frechet.analyses.options import check_test_resolution, n_comparisons
    assert n_comparisons(19, False) == 171 and n_comparisons(19, True) == 18
    with pytest.raises(ValueError, match=r'not below alpha/m = 0.05/171 = 0.000292 \(Holm, 171 comparisons\); '
                                         r'use at least 6840 samples; or compare fewer pairs \(--baseline NAME'):
        check_test_resolution(1000, 0.05, n_comparisons=171)
    with pytest.warns(UserWarning, match='n_samples=999'):  # 18 comparisons at 999 samples: allowed, with a warning
        check_test_resolution(999, 0.05, n_comparisons=18)
    data = ['--qrels', str(files / 'qrels.txt'), '--runs', str(files / 'runs'), '--vectors', str(files / 'vecs'), '--quiet']
    # 3 runs, the count test (--test bootstrap): 3 pairs need B ≥ 2·3/0.05 = 120; with a baseline, 2 comparisons
    # need B ≥ 80. The default normal test is not quantised by B: nothing to refuse
    assert main(['compare', *data, '--metrics', 'FD@3', '--samples', '100', '--test', 'bootstrap']) == 2
    assert 'use at least 120 samples' in capsys.readouterr().err
    assert main(['compare', *data, '--metrics', 'FD@3', '--samples', '100', '--baseline', 'fwd', '--format', 'csv',
                 '--test', 'bootstrap']) == 0
    with pytest.warns(UserWarning, match='n_samples=100: the normal test and percentile interval of FD'):
        assert main(['compare', *data, '--metrics', 'FD@3', '--samples', '100', '--format', 'csv', '--test', 'normal']) == 0
    import warnings
    with warnings.catch_warnings():  # the default jackknife test of FD does not use the resamples: no such warning
        warnings.simplefilter('error', UserWarning)
        assert main(['compare', *data, '--metrics', 'FD@3', '--rel', '1', '--samples', '100', '--format', 'csv']) == 0


def _numeric_ids(toy):
    """The toy qrels with ids 1, 2, 3 and its run written 1.0, 2.0, ... (as a float column printed would)."""
    vectors, qrels, run = toy
    return vectors, qrels.assign(qid=qrels.qid.str[1:]), run.assign(qid=run.qid.str[1:] + '.0')


def test_run_ids_written_differently_from_the_qrels_ids_are_named_in_the_error(toy):
    from conftest import DictEncoder
    vectors, qrels, run = _numeric_ids(toy)
    with pytest.raises(ValueError) as info:  # was: "shares no query with the qrels", no word on why
        pf.evaluate({'a': run}, qrels, [pf.FD @ 3, 'nDCG@3'], encoder=DictEncoder(vectors))
    assert str(info.value) == ("run 'a' shares no query with the qrels; query ids are compared as text, and 3 of the "
                               "run's differ from qrels ids only in how they are written (run '1.0' vs qrels '1', "
                               "run '2.0' vs qrels '2', run '3.0' vs qrels '3'): write the run and the qrels ids alike")


def test_a_few_run_ids_written_differently_are_warned_and_fd_names_them(toy):
    import ir_measures
    import pyterrier as pt
    from conftest import DictEncoder
    from pyterrier_frechet.evaluation import vector_sets
    vectors, qrels, run = _numeric_ids(toy)
    run = run.assign(qid=run.qid.replace({'1.0': '1'}))  # q1 matches; q2 written '2.0' matches nothing
    vector_sets._UNRETRIEVED_WARNED.clear()
    fd = pf.FD(encoder=DictEncoder(vectors)) @ 3
    with pytest.warns(UserWarning) as record:
        table = pf.evaluate({'a': run}, qrels, [fd, 'nDCG@3'])
    said = [str(w.message) for w in record]
    assert ("run 'a': query ids are compared as text, and 2 of the run's differ from qrels ids only in how they are "
            "written (run '2.0' vs qrels '2', run '3.0' vs qrels '3'): write the run and the qrels ids alike") in said
    assert any(s.startswith(f"{fd}: 1 of 2 queries with relevant documents have nothing retrieved: query ids are "
                            "compared as text, and 1 of the run's differ from qrels ids only in how they are written "
                            "(run '2.0' vs qrels '2')") for s in said)
    # the numbers are unchanged: q2 counts in nDCG as 0 and in FD's relevant set only
    expected = ir_measures.calc_aggregate([ir_measures.nDCG @ 3], pt.model.to_ir_measures(qrels),
                                          pt.model.to_ir_measures(run))[ir_measures.nDCG @ 3]
    assert table.loc[0, 'nDCG@3'] == pytest.approx(expected, rel=1e-12)
    vec = lambda *ds: np.stack([vectors[d] for d in ds])
    assert table.loc[0, str(fd)] == pytest.approx(
        reference_fd(vec('d0', 'd1', 'd3', 'd10', 'd11', 'd12'), vec('d0', 'd1', 'd2')), rel=1e-9)
