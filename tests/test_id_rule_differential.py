"""One rule for ids on every input path (issue 64 item 1): the same hostile query id or docno through a frame
(pf.evaluate), ir_measures' provider (calc_aggregate, what pt.Experiment calls), a TREC qrels or run file, a JSONL
corpus, a vector store's ids file and the ids ``embed`` would write gets the same refusal, in the same words
(files.check_ids); and a vector that is not finite is refused wherever vectors are read or copied."""
import json

import ir_measures
import numpy as np
import pandas as pd
import pytest

import pyterrier_frechet as pf
from pyterrier_frechet.vectors.fill import fill_store

#: (hostile id, the words every entry point refuses it with); the TREC paths cannot carry white space in an id
HOSTILE = [('d\x01x', 'U+0001'), ('d\u202ex', 'U+202E'), ('d\u200bx', 'U+200B'), ('d\x7fx', 'U+007F'),
           ('d\x85x', 'U+0085')]
RULE = 'an id is non-empty text without control, line-break or invisible format characters'


def _qrels(docno='d1', qid='q1'):
    return pd.DataFrame({'qid': [qid, qid], 'docno': [docno, 'd2'], 'label': [1, 0]})


def _run(docno='d1', qid='q1'):
    return pd.DataFrame({'qid': [qid, qid], 'docno': [docno, 'd2'], 'score': [2.0, 1.0]})


def _store(folder, ids, vectors=None):
    vectors = np.eye(len(ids), 4) + 0.5 if vectors is None else vectors
    np.save(folder / 'v.npy', vectors)
    (folder / 'v.ids.txt').write_text(''.join(f'{i}\n' for i in ids), encoding='utf-8')
    return pf.VectorStore(str(folder / 'v'))


def _entry_points(tmp_path, bad):
    """name -> a call that reads ``bad`` as an id on that path."""
    good = _store(tmp_path, ['d1', 'd2'])
    jsonl = tmp_path / 'corpus.jsonl'
    jsonl.write_text(json.dumps({'docno': bad, 'text': 'x'}) + '\n', encoding='utf-8')
    qrels_file, run_file = tmp_path / 'qrels.txt', tmp_path / 'run.txt'
    qrels_file.write_text(f'q1 0 {bad} 1\nq1 0 d2 0\n', encoding='utf-8')
    run_file.write_text(f'q1 Q0 {bad} 1 2.0 t\n', encoding='utf-8')
    ids_folder = tmp_path / 'ids'
    ids_folder.mkdir()
    return {
        'evaluate, run docno': lambda: pf.evaluate({'a': _run(docno=bad)}, _qrels(), ['nDCG@2'], encoder=good),
        'evaluate, qrels qid': lambda: pf.evaluate({'a': _run()}, _qrels(qid=bad), ['nDCG@2']),
        'ir_measures provider': lambda: ir_measures.calc_aggregate(
            [pf.FD(encoder=good) @ 2], pt_names(_qrels(docno=bad)), pt_names(_run())),
        'TREC qrels file': lambda: pf.runs.read_qrels(qrels_file),
        'TREC run file': lambda: pf.runs.read_run(run_file),
        'JSONL corpus': lambda: pf.TextLookup.from_jsonl(str(jsonl)),
        'vector store ids': lambda: _store(ids_folder, ['d1', bad]).lookup(['d1']),
        'embed output': lambda: fill_store(str(tmp_path / 'new'), pf.TextLookup({bad: 'x'}), encoder=None),
    }


def pt_names(frame):
    return frame.rename(columns={'qid': 'query_id', 'docno': 'doc_id', 'label': 'relevance'})


@pytest.mark.parametrize('bad,words', HOSTILE, ids=[w for _, w in HOSTILE])
def test_the_same_hostile_id_gets_the_same_refusal_on_every_path(tmp_path, bad, words):
    refused = {}
    for name, call in _entry_points(tmp_path, bad).items():
        with pytest.raises(ValueError) as ex:
            call()
        refused[name] = str(ex.value)
    for name, message in refused.items():
        assert f'the control or format character {words}' in message and RULE in message, (name, message)
    assert not (tmp_path / 'new.ids.txt').exists()  # embed wrote nothing


def test_an_empty_id_is_refused_on_every_path_that_can_hold_one(tmp_path):
    good = _store(tmp_path, ['d1', 'd2'])
    jsonl = tmp_path / 'corpus.jsonl'
    jsonl.write_text(json.dumps({'docno': '', 'text': 'x'}) + '\n', encoding='utf-8')
    calls = {'evaluate': lambda: pf.evaluate({'a': _run(docno='')}, _qrels(), ['nDCG@2'], encoder=good),
             'JSONL': lambda: pf.TextLookup.from_jsonl(str(jsonl)),
             'embed output': lambda: fill_store(str(tmp_path / 'new'), pf.TextLookup({'': 'x'}), encoder=None)}
    for name, call in calls.items():
        with pytest.raises(ValueError, match='an empty id'):
            call()


def test_one_docno_with_two_texts_is_refused_as_a_frame_refuses_two_labels(tmp_path):
    jsonl = tmp_path / 'corpus.jsonl'
    jsonl.write_text('{"docno": "d1", "text": "a"}\n{"docno": "d1", "text": "b"}\n', encoding='utf-8')
    with pytest.raises(ValueError, match=r"corpus.jsonl:2: docno 'd1' has a second, different text"):
        pf.TextLookup.from_jsonl(str(jsonl))
    jsonl.write_text('{"docno": "d1", "text": "a"}\n{"docno": "d1", "text": "a"}\n', encoding='utf-8')
    assert pf.TextLookup.from_jsonl(str(jsonl)).texts == {'d1': 'a'}  # the same record twice: one document
    with pytest.raises(ValueError, match='duplicate'):
        pf.evaluate({'a': _run()}, pd.concat([_qrels(), _qrels().assign(label=[2, 0])]), ['nDCG@2'])


def test_a_vector_that_is_not_finite_is_refused_where_it_is_read_or_copied(tmp_path):
    vectors = np.eye(2, 4) + 0.5
    vectors[1, 2] = np.nan
    store = _store(tmp_path, ['d1', 'd2'], vectors)
    with pytest.raises(ValueError, match=r"NaN/inf vectors for 1 docno\(s\), e.g. \['d2'\]"):
        pf.evaluate({'a': _run()}, _qrels(), [pf.FD(encoder=store) @ 2])
    with pytest.raises(ValueError, match=r"1 of its rows are not finite \(NaN or inf\), e.g. docnos \['d2'\]"):
        fill_store(str(tmp_path / 'copy'), pf.TextLookup({'d1': 'x'}), encoder=None, source=store)
    assert not (tmp_path / 'copy.npy').exists()
