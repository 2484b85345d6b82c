"""Where vectors come from (vectors/sources.py): a VectorStore of .npy files, the default encoder and a run that
carries doc_vec, against FDs of hand-built sets; encoder keys are the content's identity."""
import ir_measures
import numpy as np
import pandas as pd
import pyterrier as pt
import pytest

import pyterrier_frechet as pf
from pyterrier_frechet import FD
from conftest import DictEncoder, reference_fd
from test_measure import REL_1, TOP_3, calc


def test_vector_store_encoder(toy, vec, tmp_path):
    vectors, qrels, run = toy
    ids = sorted(vectors)
    np.save(tmp_path / 'toy.npy', np.stack([vectors[i] for i in ids]).astype(np.float32))
    (tmp_path / 'toy.ids.txt').write_text('\n'.join(ids) + '\n')
    store = pf.VectorStore(str(tmp_path / 'toy'))
    assert repr(store) == f"VectorStore({str(tmp_path / 'toy')!r})"  # the prefix as given: two folders print apart
    expected = reference_fd(vec(*REL_1).astype(np.float32), vec(*TOP_3).astype(np.float32))
    assert calc(FD @ 3, qrels, run, store) == pytest.approx(expected, rel=1e-9)
    with pytest.raises(ValueError, match='no vector for 1 of 2'):
        store(pd.DataFrame({'docno': ['d1', 'nope']}))


def test_default_encoder_and_run_doc_vec(toy, vec):
    vectors, qrels, run = toy
    expected = reference_fd(vec(*REL_1), vec(*TOP_3))
    previous = pf.set_default_encoder(DictEncoder(vectors))
    try:
        assert ir_measures.calc_aggregate([FD @ 3], pt.model.to_ir_measures(qrels), pt.model.to_ir_measures(run))[FD @ 3] == pytest.approx(expected, rel=1e-9)
        # A run that carries doc_vec (the pipeline ends in an encoder) is used as is for the retrieved side.
        with_vecs = run.assign(doc_vec=[vectors[d] for d in run.docno])
        assert ir_measures.calc_aggregate([FD @ 3], pt.model.to_ir_measures(qrels), pt.model.to_ir_measures(with_vecs))[FD @ 3] == pytest.approx(expected, rel=1e-9)
        # ... and must agree with the encoder used for the relevant side.
        wrong = run.assign(doc_vec=[vectors[d] + 1 for d in run.docno])
        with pytest.raises(ValueError, match='same model'):
            ir_measures.calc_aggregate([FD @ 3], pt.model.to_ir_measures(qrels), pt.model.to_ir_measures(wrong))
    finally:
        pf.set_default_encoder(previous)


def test_encoder_keys_are_stable_identities(tmp_path):
    from pyterrier_frechet.vectors.sources import encoder_key
    for folder, scale in (('a', 1), ('b', 2), ('c', 1)):
        (tmp_path / folder).mkdir()
        np.save(tmp_path / folder / 'vec.npy', scale * np.eye(3, dtype=np.float32))
        (tmp_path / folder / 'vec.ids.txt').write_text('x\ny\nz\n')
    a1, a2, b, c = (pf.VectorStore(str(tmp_path / f / 'vec')) for f in ('a', 'a', 'b', 'c'))
    assert encoder_key(a1) == encoder_key(a2) != encoder_key(b)  # two objects, one identity; other vectors, another
    assert encoder_key(c) == encoder_key(a1)  # the identity is the files' content (issue 25), not their folder
    assert repr(a1) != repr(b)  # so FD(encoder=a1) and FD(encoder=b) are two columns
    measures = [pf.FD(encoder=a1) @ 3, pf.FD(encoder=b) @ 3]
    assert len(set(measures)) == 2


@pytest.mark.parametrize('tail', ['\n', '\n\n', '\n\n\n\n', '\n \n\t\n', '\r\n\r\n\r\n', ''])
def test_trailing_blank_lines_in_ids_are_accepted_an_empty_id_inside_is_not(tmp_path, tail):
    vectors = np.arange(6, dtype=np.float32).reshape(3, 2)
    np.save(tmp_path / 'v.npy', vectors)
    (tmp_path / 'v.ids.txt').write_text('a\nb\nc' + tail, newline='')
    store = pf.VectorStore(str(tmp_path / 'v'))
    vecs, found = store.lookup(['c', 'a', 'zz'])
    assert found.tolist() == [True, True, False]
    np.testing.assert_array_equal(vecs[:2], vectors[[2, 0]])
    (tmp_path / 'v.ids.txt').write_text('a\n\nc' + tail, newline='')  # an empty id in the middle: still refused
    with pytest.raises(ValueError, match=rf'{tmp_path / "v.ids.txt"} has an empty id on line 2; .*only at the end'):
        pf.VectorStore(str(tmp_path / 'v'))
