"""Pooling-bias simulation (Yilmaz et al. 2020): pools and pooled qrels by hand, and the simulation's numbers
recomputed independently from the pools it reports."""
import ir_measures
import numpy as np
import pandas as pd
import pyterrier as pt
import pytest
import scipy.stats
from ir_measures import nDCG, P

import pyterrier_frechet as pf
from pyterrier_frechet.analyses.pooling import depth_pool, pooled_qrels
from pyterrier_frechet.data.listings import read_run_groups


def _run(rows):
    return pd.DataFrame(rows, columns=['qid', 'docno', 'score'])


def test_depth_pool_is_the_union_of_top_k_in_trec_eval_order():
    a = _run([('q1', 'x', 3.0), ('q1', 'y', 2.0), ('q1', 'z', 2.0), ('q2', 'u', 1.0)])
    b = _run([('q1', 'w', 9.0), ('q1', 'x', 8.0), ('q1', 'v', 1.0)])
    pool = depth_pool([a, b], 2)
    # a's top 2 in q1: x, then the tie y/z broken by docno descending → z; b's top 2: w, x
    assert sorted(pool.tolist()) == [('q1', 'w'), ('q1', 'x'), ('q1', 'z'), ('q2', 'u')]


def test_pooled_qrels_nonrel_and_unjudged():
    qrels = pd.DataFrame([('q1', 'x', 2), ('q1', 'y', 1), ('q2', 'u', 0)], columns=['qid', 'docno', 'label'])
    pool = pd.MultiIndex.from_tuples([('q1', 'x'), ('q2', 'u'), ('q2', 'not-judged')])
    assert pooled_qrels(qrels, pool).values.tolist() == [['q1', 'x', 2], ['q1', 'y', 0], ['q2', 'u', 0]]
    assert pooled_qrels(qrels, pool, 'unjudged').values.tolist() == [['q1', 'x', 2], ['q2', 'u', 0]]
    with pytest.raises(ValueError, match='unpooled'):
        pooled_qrels(qrels, pool, 'maybe')


@pytest.fixture
def systems():
    """12 runs in 6 groups of 2 (types: groups g0-g2 'lex', g3-g5 'sem'); 6 queries with 4 relevant documents each."""
    rng = np.random.default_rng(11)
    qrels = pd.DataFrame([(f'q{q}', f'q{q}d{j}', int(j < 4) * (1 + j % 2)) for q in range(6) for j in range(12)],
                         columns=['qid', 'docno', 'label'])
    runs, groups, types = {}, {}, {}
    for g in range(6):
        for v in range(2):
            name = f'g{g}v{v}'
            rows = []
            for q in range(6):
                docs = rng.permutation(30)[:15]
                rows += [(f'q{q}', f'q{q}d{d}', float(15 - r)) for r, d in enumerate(docs)]
            runs[name], groups[name], types[name] = _run(rows), f'g{g}', 'lex' if g < 3 else 'sem'
    return runs, qrels, groups, types


def test_taus_equal_an_independent_recomputation(systems):
    runs, qrels, groups, types = systems
    measures = [nDCG @ 10, P(rel=1) @ 5]
    res = pf.simulate_pools(runs, qrels, measures, groups, types, pool_types=['lex', None], fraction=0.5, depth=3,
                            repeats=3, seed=4, verbose=False)
    assert len(res.pools) == 6 and set(res.pools.pool_type) == {'lex', 'all'}
    qrels_ir = pt.model.to_ir_measures(qrels)
    full = {n: ir_measures.calc_aggregate(measures, qrels_ir, pt.model.to_ir_measures(r)) for n, r in runs.items()}
    checked = 0
    for pool in res.pools.itertuples():
        picked = pool.groups.split()
        if pool.pool_type == 'lex':
            assert set(picked) <= {'g0', 'g1', 'g2'} and len(picked) == 2  # round(0.5 × 3) lexical groups
        else:
            assert len(picked) == 3
        judged = set()  # the depth-3 pool, written out directly
        for name in (n for n in runs if groups[n] in picked):
            for q, grp in runs[name].groupby('qid'):
                judged.update((q, d) for d in grp.sort_values('score', ascending=False).docno[:3])
        sim = qrels.assign(label=[lab if (q, d) in judged else 0 for q, d, lab in qrels.values])
        assert pool.relevant_found == int((sim.label > 0).sum())
        tests = [n for n in runs if groups[n] not in picked]
        est = {n: ir_measures.calc_aggregate(measures, pt.model.to_ir_measures(sim), pt.model.to_ir_measures(runs[n])) for n in tests}
        got = res.taus[(res.taus.pool_type == pool.pool_type) & (res.taus.repeat == pool.repeat)]
        for m in measures:
            for test_type in ('lex', 'sem', 'all'):
                members = [n for n in tests if test_type == 'all' or types[n] == test_type]
                row = got[(got.measure == str(m)) & (got.test_type == test_type)]
                if not members:
                    assert len(row) == 0
                    continue
                assert int(row.n_systems.iloc[0]) == len(members)
                if len(members) < 3:
                    assert np.isnan(row.kendall_tau.iloc[0])
                    continue
                expected = scipy.stats.kendalltau([full[n][m] for n in members], [est[n][m] for n in members]).statistic
                assert row.kendall_tau.iloc[0] == pytest.approx(expected, abs=1e-12)
                checked += 1
    assert checked >= 12
    summary = res.summary.set_index(['pool_type', 'measure', 'test_type'])
    mine = res.taus[(res.taus.pool_type == 'all') & (res.taus.measure == 'nDCG@10') & (res.taus.test_type == 'all')]
    assert summary.loc[('all', 'nDCG@10', 'all'), 'mean'] == pytest.approx(mine.kendall_tau.mean())


def test_a_pool_that_finds_every_judged_document_reproduces_the_actual_ranking():
    # Every run ranks all 8 judged documents of each query in its top 10 (in its own order), so any depth-10 pool
    # judges everything: estimated = actual, and τ = 1 for every type and pool.
    rng = np.random.default_rng(3)
    qrels = pd.DataFrame([(f'q{q}', f'j{q}.{j}', j % 3) for q in range(5) for j in range(8)], columns=['qid', 'docno', 'label'])
    runs = {}
    for name in range(8):
        rows = []
        for q in range(5):
            docs = [f'j{q}.{j}' for j in range(8)] + [f'u{q}.{name}.{k}' for k in range(2)]
            rows += [(f'q{q}', d, float(-r)) for r, d in enumerate(rng.permutation(docs))]
        runs[f'r{name}'] = _run(rows)
    groups = {n: n for n in runs}
    types = {n: 'a' if int(n[1]) % 2 else 'b' for n in runs}
    res = pf.simulate_pools(runs, qrels, [nDCG @ 10, P(rel=2) @ 5], groups, types, fraction=0.25, depth=10, repeats=3,
                            seed=1, verbose=False)
    assert (res.pools.relevant_share == 1).all()
    enough = res.taus.n_systems >= 3
    assert len(res.taus) == 3 * 2 * 3 and enough.sum() >= 12
    np.testing.assert_allclose(res.taus.kendall_tau[enough], 1.0, rtol=1e-12)
    assert res.taus.kendall_tau[~enough].isna().all()


def test_bad_input(systems, tmp_path):
    runs, qrels, groups, types = systems
    with pytest.raises(ValueError, match='have no group'):
        pf.simulate_pools(runs, qrels, [nDCG @ 10], {}, types)
    with pytest.raises(ValueError, match="type 'neural'"):
        pf.simulate_pools(runs, qrels, [nDCG @ 10], groups, types, pool_types=['neural'])
    with pytest.raises(ValueError, match='fraction'):
        pf.simulate_pools(runs, qrels, [nDCG @ 10], groups, types, fraction=0)
    with pytest.raises(ValueError, match='nothing is left to test'):
        pf.simulate_pools(runs, qrels, [nDCG @ 10], groups, types, fraction=1.0, verbose=False)
    with pytest.raises(ValueError, match='depth'):
        pf.simulate_pools(runs, qrels, [nDCG @ 10], groups, types, depth=0)
    path = tmp_path / 'groups.tsv'
    path.write_text('# comment\na\tg1\tlex\nb g2 sem  # trailing comment\n')
    assert read_run_groups(str(path)) == ({'a': 'g1', 'b': 'g2'}, {'a': 'lex', 'b': 'sem'})
    path.write_text('a\tg1\n')
    with pytest.raises(ValueError, match=r'expected 3 fields \(run, group, type\)'):
        read_run_groups(str(path))
    path.write_text('a g1 x\na g2 y\n')
    with pytest.raises(ValueError, match='listed twice'):
        read_run_groups(str(path))
