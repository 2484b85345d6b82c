"""The integer-coded selection of vector measures (evaluation.selection) against an independent pandas reference,
and the memo of relevant vectors by encoder identity."""
import os

import numpy as np
import pandas as pd
import pytest

import pyterrier_frechet as pf
from pyterrier_frechet.evaluation.frames import prepare_qrels, prepare_run
from pyterrier_frechet.evaluation.selection import group_ranks


def reference_retrieved(qrels, run, cutoff, urr, rel):
    """trec_eval's order by sort_values (score descending, docno descending), judged pairs removed by a merge, then
    groupby().head(k) — over the queries with a document judged >= rel."""
    queries = set(qrels.loc[qrels.relevance >= rel, 'query_id'])
    ranked = run[run.query_id.isin(queries)].sort_values(['query_id', 'score', 'doc_id'], ascending=[True, False, False])
    if urr:
        judged = qrels[['query_id', 'doc_id']].assign(_judged=True)
        ranked = ranked.merge(judged, on=['query_id', 'doc_id'], how='left')
        ranked = ranked[ranked._judged.isna()].drop(columns='_judged')
    if cutoff is not None:
        ranked = ranked.groupby('query_id', sort=False).head(cutoff)
    return ranked[['query_id', 'doc_id', 'score']].reset_index(drop=True)


@pytest.mark.parametrize('seed', range(12))
def test_selection_equals_a_pandas_reference(seed):
    rng = np.random.default_rng(seed)
    n_docs, n_queries = 60, 7
    docs = np.array([f'd{i}' for i in range(n_docs)])
    rows = []
    for q in range(n_queries):
        for d in rng.choice(n_docs, size=rng.integers(5, 12), replace=False):
            rows.append((f'q{q}', docs[d], int(rng.integers(0, 3))))
    qrels = prepare_qrels(pd.DataFrame(rows, columns=['query_id', 'doc_id', 'relevance']), 'test')
    run_rows = []
    for q in range(n_queries + 2):  # two queries the qrels do not have
        for d in rng.choice(n_docs, size=rng.integers(0, 30), replace=False):
            # few distinct scores: many ties, broken by docno descending (lexicographic: d9 > d59 > d10)
            run_rows.append((f'q{q}', docs[d], float(rng.integers(0, 4 if seed % 2 else 1000))))
    run = prepare_run(pd.DataFrame(run_rows, columns=['query_id', 'doc_id', 'score']), 'test')
    for cutoff in (1, 3, None):
        for urr in (False, True):
            for rel in (1, 2):
                measure = pf.FD(rel=rel, urr=urr) @ cutoff if cutoff else pf.FD(rel=rel, urr=urr)
                sets = pf.fd_sets(measure, qrels, run)
                want = reference_retrieved(qrels, run, cutoff, urr, rel)
                pd.testing.assert_frame_equal(sets.retrieved[['query_id', 'doc_id', 'score']], want, check_dtype=False)
                relevant = qrels[qrels.relevance >= rel]
                assert sets.relevant.values.tolist() == relevant[['query_id', 'doc_id']].values.tolist()
                assert sets.queries == sorted(relevant.query_id.unique())


def test_group_ranks_count_members_within_groups():
    groups = np.array([0, 0, 0, 2, 2, 5])
    assert group_ranks(groups).tolist() == [0, 1, 2, 0, 1, 0]
    member = np.array([False, True, True, True, False, True])
    got = group_ranks(groups, member)
    assert got[member].tolist() == [0, 1, 0, 0]
    assert group_ranks(np.zeros(0, dtype=np.int64)).tolist() == []


def test_balanced_relevant_sets_follow_balance_qrels():
    qrels = prepare_qrels(pd.DataFrame({'query_id': ['q1'] * 5 + ['q2'] * 2, 'doc_id': list('abcde') + ['a', 'f'],
                                        'relevance': [2, 1, 1, 2, 0, 1, 1]}), 'test')
    run = prepare_run(pd.DataFrame({'query_id': ['q1', 'q2'], 'doc_id': ['x', 'y'], 'score': [1.0, 1.0]}), 'test')
    sets = pf.fd_sets(pf.FD(per_query=2, seed=3) @ 1, qrels, run)
    want = pf.balance_qrels(qrels, 2, rel=1, seed=3, qid='query_id', docno='doc_id', label='relevance')
    want = want[want.relevance >= 1]
    assert sets.relevant.values.tolist() == want[['query_id', 'doc_id']].values.tolist()
    assert sets.relevant.query_id.value_counts().to_dict() == {'q1': 2, 'q2': 2}


def test_a_rewritten_vector_store_is_read_again(tmp_path):
    # the relevant vectors of a VectorStore are remembered by its files' identity: new files, new vectors
    rng = np.random.default_rng(0)
    ids = [f'd{i}' for i in range(40)]
    prefix = str(tmp_path / 'vecs')
    (tmp_path / 'vecs.ids.txt').write_text('\n'.join(ids) + '\n')
    qrels = pd.DataFrame({'qid': ['q1'] * 20 + ['q2'] * 20, 'docno': ids, 'label': 1})
    run = pd.DataFrame({'qid': ['q1'] * 5 + ['q2'] * 5, 'docno': ids[20:25] + ids[:5], 'score': np.arange(10.0)})
    values = []
    for scale in (1.0, 3.0):
        x = rng.normal(size=(40, 4)) * scale
        np.save(prefix + '.npy', x)
        os.utime(prefix + '.npy', ns=(int(scale * 1e9), int(scale * 1e9)))  # a distinct modification time
        store = pf.VectorStore(prefix)
        got = pf.evaluate({'run': run}, qrels, [pf.FD(encoder=store) @ 5], verbose=False)
        rel = x[:40]
        ret = x[[20, 21, 22, 23, 24, 0, 1, 2, 3, 4]]
        assert got.iloc[0, 1] == pytest.approx(pf.frechet_distance(rel, ret), rel=1e-10)
        values.append(got.iloc[0, 1])
    assert values[0] != pytest.approx(values[1])
