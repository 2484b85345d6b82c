"""Real data (needs ../shared; CI has it): TREC DL 2019 passage runs with precomputed MiniLM vectors.

FD@10 with rel=2 of each of the 19 runs, computed by pt.Experiment through the package, must equal an
independent computation written here from first principles — plain-Python parsing of the TREC files,
trec_eval ordering, numpy statistics — to 1e-8 relative.
"""
import gzip
import math
from collections import defaultdict
from pathlib import Path

import ir_measures
import numpy as np
import pyterrier as pt
import pytest
from ir_measures import nDCG

import pyterrier_frechet as pf
from conftest import SHARED, needs_shared, reference_fd_eigh

pytestmark = [needs_shared(), pytest.mark.shared]

MSMARCO = SHARED / 'data' / 'msmarco-passage'
VECTORS = SHARED / 'embeddings' / 'msmarco-passage.dl19-dl20.minilm'
# nDCG@10 of some runs, from ../shared/data/msmarco-passage/README.md
README_NDCG10 = {'bm25': 0.5058, 'tasb': 0.7210, 'splade-pp-ed': 0.7308, 'colbertv2': 0.7320, 'bm25.monot5-3b': 0.7345}


def _name(path: Path) -> str:
    return path.name.split('.', 2)[2].rsplit('.top', 1)[0]


def _lines(path: Path):
    opener = gzip.open if path.suffix == '.gz' else open
    with opener(path, 'rt') as f:
        for line in f:
            if line.strip():
                yield line.split()


def _first_principles_fd10(run_path, relevant_qids, relevant_vecs, vec_of):
    by_query = defaultdict(list)
    for qid, _, docno, _, score, *_ in _lines(run_path):
        by_query[qid].append((float(score), docno))
    retrieved = []
    for qid in relevant_qids:
        ranked = sorted(by_query.get(qid, []), reverse=True)  # score descending, ties by docno descending
        retrieved.extend(docno for _, docno in ranked[:10])
    vecs = np.stack([vec_of[d] for d in retrieved if d in vec_of])  # passages with no text have no vector
    return reference_fd_eigh(relevant_vecs, vecs)


@pytest.fixture(scope='module')
def dl19():
    ids = (VECTORS.parent / (VECTORS.name + '.ids.txt')).read_text().split('\n')
    matrix = np.load(str(VECTORS) + '.npy')
    vec_of = {docno: matrix[i].astype(np.float64) for i, docno in enumerate(ids) if docno}
    rel2 = [(q, d) for q, _, d, g in _lines(MSMARCO / 'qrels.dl19-passage.txt') if int(g) >= 2]
    relevant_qids = sorted({q for q, _ in rel2})
    relevant_vecs = np.stack([vec_of[d] for _, d in rel2])
    runs = sorted((MSMARCO / 'runs').glob('run.dl19.*'))
    assert len(runs) == 19
    return vec_of, relevant_qids, relevant_vecs, runs


def test_fd10_rel2_of_every_dl19_run_equals_first_principles(dl19):
    vec_of, relevant_qids, relevant_vecs, runs = dl19
    topics = pt.io.read_topics(str(MSMARCO / 'topics.dl19-passage.txt'), format='singleline')
    qrels = pt.io.read_qrels(str(MSMARCO / 'qrels.dl19-passage.txt'))
    measure = pf.FD(rel=2, encoder=pf.VectorStore(str(VECTORS)), missing='drop') @ 10
    systems = [pt.Transformer.from_df(pt.io.read_results(str(p))) for p in runs]
    names = [_name(p) for p in runs]
    table = pt.Experiment(systems, topics, qrels, eval_metrics=[measure, nDCG @ 10], names=names).set_index('name')
    assert len(relevant_qids) == 43 and len(relevant_vecs) == 2501
    for path, name in zip(runs, names):
        expected = _first_principles_fd10(path, relevant_qids, relevant_vecs, vec_of)
        assert table.loc[name, str(measure)] == pytest.approx(expected, rel=1e-8), name
    for name, ndcg in README_NDCG10.items():
        assert table.loc[name, 'nDCG@10'] == pytest.approx(ndcg, abs=5e-5), name


def _first_principles_histograms(run_path, qrels, rel, bins, cutoff):
    """DO and HSA written from the paper with plain Python: per query, min-max normalise the top ``cutoff``
    scores, count judged documents into relevant / non-relevant bins, pool over queries, then Eq. 1 and a
    least-squares slope by np.polyfit (Eq. 2)."""
    by_query = defaultdict(list)
    for qid, _, docno, _, score, *_ in _lines(run_path):
        by_query[qid].append((float(score), docno))
    h_r, h_nr = [0] * bins, [0] * bins
    for qid in sorted({q for (q, _), g in qrels.items() if g >= rel}):
        ranked = sorted(by_query.get(qid, []), reverse=True)[:cutoff]
        if not ranked:
            continue
        hi, lo = ranked[0][0], ranked[-1][0]
        if hi == lo:
            continue
        for score, docno in ranked:
            if (qid, docno) not in qrels:
                continue
            b = min(int((score - lo) / (hi - lo) * bins), bins - 1)
            if qrels[qid, docno] >= rel:
                h_r[b] += 1
            else:
                h_nr[b] += 1
    shared = [b for b in range(bins) if h_r[b] and h_nr[b]]
    do = sum(math.log(min(h_r[b], h_nr[b])) for b in shared)
    hsa = np.polyfit([(b + 0.5) / bins for b in shared], [math.log(h_r[b] / h_nr[b]) for b in shared], 1)[0]
    return do, hsa


def test_do_and_hsa_of_every_dl19_run_equal_first_principles(dl19):
    runs = dl19[3]
    qrels = {(q, d): int(g) for q, _, d, g in _lines(MSMARCO / 'qrels.dl19-passage.txt')}
    qrels_df = pt.io.read_qrels(str(MSMARCO / 'qrels.dl19-passage.txt'))
    do, hsa = pf.DO(100, rel=2, bins=10), pf.HSA(100, rel=2, bins=10)
    for path in runs:
        run = pt.io.read_results(str(path))
        values = ir_measures.calc_aggregate([do, hsa], pt.model.to_ir_measures(qrels_df), pt.model.to_ir_measures(run))
        expected_do, expected_hsa = _first_principles_histograms(path, qrels, 2, 10, 100)
        assert values[do] == pytest.approx(expected_do, rel=1e-12), path.name
        assert values[hsa] == pytest.approx(expected_hsa, rel=1e-9), path.name
