"""The main job (python -m pyterrier_frechet demo) on the bundled Cranfield collection."""
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import pyterrier_frechet as pf
from pyterrier_frechet.cli import main
from pyterrier_frechet.demo import run_demo
from conftest import reference_fd
from test_embedder import _tiny_bert

COLUMNS = ['name', 'FD@1', 'FD@10', 'FD(urr=True)@10', 'nDCG@10', 'RR@10', 'mrt']


def test_bundled_collection():
    c = pf.bundled.cranfield()
    assert len(c.texts) == 1400 and len(c.topics) == 225 and len(c.qrels) == 1612
    assert c.qrels.label.value_counts().to_dict() == {2: 734, 3: 387, 1: 363, 4: 128}
    assert c.texts['1'].startswith('experimental investigation of the aerodynamics of a wing in a slipstream .')
    assert c.texts['471'] == '' and c.texts['995'] == ''  # empty records in the source


def test_demo_with_tiny_model_embeds_once(tmp_path):
    model = _tiny_bert(tmp_path / 'tiny-bert')
    first = run_demo(model, str(tmp_path / 'work'), verbose=False, figures_dir=tmp_path / 'figures')
    assert first.n_encoded == 1400
    assert list(first.table.columns) == COLUMNS
    assert first.table.name.tolist() == ['BM25 (PISA)', 'BM25 >> tiny-bert', 'Dense (tiny-bert)']
    # the re-ranker keeps BM25's documents (same URR pool size per query) but orders them by the encoder
    assert first.table['nDCG@10'][1] != first.table['nDCG@10'][0]
    # Pareto frontier against mrt: a system is on it iff no other is at least as fast and as good, and better in one
    rows = first.table.to_dict('records')
    for metric, sign in (('FD@10', -1), ('nDCG@10', 1)):
        dominated = lambda a: any(b['mrt'] <= a['mrt'] and sign * b[metric] >= sign * a[metric]
                                  and (b['mrt'] < a['mrt'] or b[metric] != a[metric]) for b in rows)
        expected = [a['name'] for a in rows if not dominated(a)]
        assert first.frontiers[metric] == expected and expected
    assert sorted(Path(f).name for f in first.figures) == ['pareto_FD_10_mrt.pdf', 'pareto_FD_10_mrt.png',
                                                         'pareto_nDCG_10_mrt.pdf', 'pareto_nDCG_10_mrt.png']
    assert all(Path(f).stat().st_size > 1000 for f in first.figures)
    second = run_demo(model, str(tmp_path / 'work'), verbose=False, figures_dir=tmp_path / 'figures')
    assert second.n_encoded == 0  # warm cache: nothing is embedded again
    pd.testing.assert_frame_equal(first.table.drop(columns='mrt'), second.table.drop(columns='mrt'))

    # The BM25 row's FD@10 equals an independent computation from the same index and the cached vectors.
    import pyterrier_pisa
    c = pf.bundled.cranfield()
    bm25 = pyterrier_pisa.PisaIndex(str(tmp_path / 'work' / 'demo' / 'cranfield.pisa')).bm25(num_results=100)
    res = bm25(c.topics)
    rel = c.qrels[c.qrels.label >= 1]
    res = res[res.qid.isin(rel.qid)].sort_values(['qid', 'score', 'docno'], ascending=[True, False, False])
    top10 = res.groupby('qid').head(10)
    emb = pf.Embedder(model, cache_dir=tmp_path / 'work', verbose=False)
    vec = lambda docnos: np.stack(emb(pd.DataFrame({'docno': list(docnos)})).doc_vec)
    # mpmath reference: mean-pooled LayerNorm outputs lie close to a hyperplane, which costs a float64 eigh route digits
    expected = reference_fd(vec(rel.docno), vec(top10.docno))
    assert emb.n_encoded == 0
    assert first.table.set_index('name').loc['BM25 (PISA)', 'FD@10'] == pytest.approx(expected, rel=1e-9)


def test_cli_demo_prints_table(tmp_path, capsys):
    model = _tiny_bert(tmp_path / 'tiny-bert')
    assert main(['demo', '--model', model, '--work-dir', str(tmp_path / 'w'), '--quiet', '--figures', str(tmp_path / 'f')]) == 0
    out = capsys.readouterr().out
    assert 'FD(urr=True)@10' in out and 'nDCG@10' in out and 'Documents encoded by this run: 1400' in out
    assert 'Pareto frontier of FD@10 against mrt (not dominated):' in out and 'pareto_FD_10_mrt.png' in out
    assert main(['demo', '--model', model, '--work-dir', str(tmp_path / 'w'), '--quiet', '--figures', str(tmp_path / 'f')]) == 0
    assert 'Documents encoded by this run: 0' in capsys.readouterr().out
    assert main(['demo', '--model', str(tmp_path / 'missing'), '--work-dir', str(tmp_path / 'w'), '--figures', str(tmp_path / 'f')]) == 2
    assert 'does not exist' in capsys.readouterr().err


def test_the_demo_and_the_python_api_share_one_embedding_cache(tmp_path, monkeypatch, capsys):
    """Issue 63: the demo with its defaults, then the README's next example (pf.Embedder over the same collection,
    default cache): every document comes from the demo's cache, none is encoded again."""
    model = _tiny_bert(tmp_path / 'tiny-bert')
    monkeypatch.setenv('PYTERRIER_FRECHET_CACHE', str(tmp_path / 'cache'))
    assert main(['demo', '--model', model, '--quiet']) == 0
    assert 'Documents encoded by this run: 1400' in capsys.readouterr().out
    collection = pf.bundled.cranfield()
    embedder = pf.Embedder(model, texts=collection.texts, empty_text='embed', verbose=False)  # the README's, by default
    vectors = embedder(pd.DataFrame({'docno': sorted(collection.texts)}))
    assert len(vectors) == 1400 and embedder.n_encoded == 0


@pytest.mark.slow
def test_main_job_with_default_model(tmp_path):
    """The README's main job with the real default encoder (all-MiniLM-L6-v2): ~1 minute on 2 cores."""
    first = run_demo(None, str(tmp_path), verbose=False, figures_dir=tmp_path / 'figures')
    assert first.n_encoded == 1400
    table = first.table.set_index('name')
    assert list(table.index) == ['BM25 (PISA)', 'BM25 >> all-MiniLM-L6-v2', 'Dense (all-MiniLM-L6-v2)']
    assert ((table[['FD@1', 'FD@10', 'FD(urr=True)@10']] > 0).all()).all()
    assert run_demo(None, str(tmp_path), verbose=False, figures_dir=tmp_path / 'figures').n_encoded == 0
