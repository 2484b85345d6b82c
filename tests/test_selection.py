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


# --- one engine for every selection: DO/HSA, URRFilter and depth pools against plain pandas on the bundled data ----

def _trec_eval_sorted(run):
    """trec_eval's order by pandas alone: query ascending, score descending, docno descending."""
    return run.sort_values(['qid', 'score', 'docno'], ascending=[True, False, False], kind='stable')


def reference_histogram_measures(qrels, run, cutoff, rel, bins, norm, unjudged):
    """DO and HSA (Krstovski et al. 2015, Eq. 1-2) with pandas and plain numpy: the queries with a document judged
    >= rel, each one's top cutoff in trec_eval order, normalised per query, judged documents binned by ⌊x·bins⌋."""
    queries = set(qrels.loc[qrels.label >= rel, 'qid'])
    ranked = _trec_eval_sorted(run[run.qid.isin(queries)])
    if cutoff is not None:
        ranked = ranked.groupby('qid', sort=False).head(cutoff)
    ranked = ranked.merge(qrels, on=['qid', 'docno'], how='left')
    grouped = ranked.groupby('qid', sort=False)['score']
    if norm == 'minmax':
        lo, hi = grouped.transform('min'), grouped.transform('max')
        x = ((ranked.score - lo) / (hi - lo)).where(hi > lo)
    else:
        n = grouped.transform('size') - 1
        x = ((n - ranked.groupby('qid', sort=False).cumcount()) / n).where(n > 0)
    ranked = ranked.assign(x=x).dropna(subset=['x'])
    is_rel = ranked.label >= rel
    is_nonrel = (ranked.label < rel) | (ranked.label.isna() if unjudged == 'nonrel' else False)
    b = np.minimum(np.floor(ranked.x.to_numpy() * bins), bins - 1).astype(int)
    h_rel = np.bincount(b[is_rel.to_numpy()], minlength=bins)
    h_non = np.bincount(b[is_nonrel.to_numpy()], minlength=bins)
    both = (h_rel > 0) & (h_non > 0)
    do = float(np.log(np.minimum(h_rel[both], h_non[both])).sum())
    centres = (np.arange(bins) + 0.5) / bins
    hsa = (float(np.polyfit(centres[both], np.log(h_rel[both] / h_non[both]), 1)[0]) if both.sum() >= 2 else np.nan)
    return do, hsa


@pytest.fixture(scope='module')
def cranfield_runs():
    """The bundled Cranfield qrels (labels 1-4: judged non-relevant below rel=2) and three seeded runs over judged and
    unjudged documents, with many tied scores."""
    from pyterrier_frechet.data.bundled import cranfield
    qrels = cranfield().qrels.astype({'qid': str, 'docno': str})
    docs = np.array(sorted(set(qrels.docno)) + [f'u{i}' for i in range(300)])
    runs = []
    for seed in range(3):
        rng = np.random.default_rng([seed, 28])
        rows = []
        for q in sorted(set(qrels.qid))[::3]:
            judged = qrels.loc[qrels.qid == q, 'docno'].to_numpy()
            picked = np.unique(np.concatenate([rng.choice(judged, size=min(len(judged), 8), replace=False),
                                               rng.choice(docs, size=25, replace=False)]))
            scores = np.round(rng.normal(size=len(picked)), 1)  # ties, broken by docno
            rows += [(q, d, float(s)) for d, s in zip(picked, scores)]
        runs.append(pd.DataFrame(rows, columns=['qid', 'docno', 'score']))
    return qrels, runs


@pytest.mark.parametrize('cutoff', [None, 5, 12])
def test_histogram_measures_equal_a_pandas_reference(cranfield_runs, cutoff):
    qrels, runs = cranfield_runs
    grid = [dict(rel=rel, bins=bins, norm=norm, unjudged=unjudged)
            for rel in (2, 3) for bins in (2, 10) for norm in ('minmax', 'rank') for unjudged in ('skip', 'nonrel')]
    measures = [(pf.DO(cutoff, **p), pf.HSA(cutoff, **p), p) for p in grid]
    table = pf.evaluate(dict(enumerate(runs)), qrels, [m for do, hsa, _ in measures for m in (do, hsa)])
    assert np.isfinite(table[[str(hsa) for _, hsa, _ in measures]].to_numpy()).mean() > 0.9  # slopes, not NaN
    for i, run in enumerate(runs):
        for do, hsa, p in measures:
            want_do, want_hsa = reference_histogram_measures(qrels, run, cutoff, **p)
            assert table.loc[i, str(do)] == pytest.approx(want_do, abs=1e-12, rel=1e-12)
            assert table.loc[i, str(hsa)] == pytest.approx(want_hsa, abs=1e-12, rel=1e-12, nan_ok=True)


@pytest.mark.parametrize('k', [1, 4, 30])
def test_urr_filter_and_depth_pools_equal_a_pandas_reference(cranfield_runs, k):
    from pyterrier_frechet.analyses.pooling import depth_pool
    qrels, runs = cranfield_runs
    extra = pd.DataFrame({'qid': ['no-such-query'] * 3, 'docno': ['a', 'b', 'c'], 'score': [1.0, 1.0, 2.0]})
    for run in runs:
        run = pd.concat([run, extra], ignore_index=True)
        judged = qrels[['qid', 'docno']].assign(_judged=True)
        unjudged = _trec_eval_sorted(run).merge(judged, on=['qid', 'docno'], how='left')
        want = unjudged[unjudged._judged.isna()].drop(columns='_judged').groupby('qid', sort=False).head(k)
        want = want.assign(rank=want.groupby('qid', sort=False).cumcount()).reset_index(drop=True)
        got = pf.URRFilter(qrels, k)(run)
        pd.testing.assert_frame_equal(got[['qid', 'docno', 'score', 'rank']], want, check_dtype=False)
    pool = depth_pool(runs, k)
    want = pd.concat([_trec_eval_sorted(r).groupby('qid', sort=False).head(k) for r in runs])
    assert sorted(pool.tolist()) == sorted(set(zip(want.qid, want.docno)))
