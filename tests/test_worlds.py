"""benchmarks/worlds: shapes, determinism, population moments against large independent draws, the finite
Cranfield world against a plain recomputation from the files, equal-in-law pairs and the designed nDCG order."""
from collections import defaultdict
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from benchmarks.worlds import (heavy_world, independent_world, make_world, per_query_ndcg, sphere_world,
                               topics_world)

SHARED = Path(__file__).resolve().parents[1].parent / 'shared'
CLOSED = [independent_world, topics_world, heavy_world]


def ref_ndcg(qrels: pd.DataFrame, run: pd.DataFrame, k=10):
    """nDCG@k per query written out plainly: gain = label, discount 1/log2(rank+1), ideal from the qrels."""
    lab = {(q, d): l for q, d, l in zip(qrels.qid, qrels.docno, qrels.label)}
    ranked = defaultdict(list)
    for q, d, rk in zip(run.qid, run.docno, run['rank']):
        ranked[q].append((rk, d))
    out = {}
    for q, g in qrels[qrels.label > 0].groupby('qid'):
        ideal = sorted(g.label, reverse=True)[:k]
        idcg = sum(l / np.log2(i + 2) for i, l in enumerate(ideal))
        dcg = sum(lab.get((q, d), 0) / np.log2(rk + 1) for rk, d in sorted(ranked[q]) if rk <= k)
        out[q] = dcg / idcg
    return out


def ratio_z(x, groups, mean, cov, block=16):
    """z-scores of the pooled (ratio-form) mean and covariance of rows x against (mean, cov), with the
    linearisation standard error of a ratio estimator, clustered by `groups` (the sampling unit). Checked: every
    mean, every variance, and the covariances among the first `block` coordinates (memory stays small)."""
    n, d = x.shape
    m = x.mean(0)
    b = min(block, d)
    iu = np.triu_indices(b)
    ii = np.concatenate([iu[0], np.arange(b, d)]), np.concatenate([iu[1], np.arange(b, d)])
    xc = x - mean
    f = np.concatenate([xc, xc[:, ii[0]] * xc[:, ii[1]]], axis=1)       # per-document moment contributions
    est = f.mean(0)
    codes = pd.factorize(groups)[0]
    tot = np.zeros((codes.max() + 1, f.shape[1]))
    np.add.at(tot, codes, f - est)
    se = np.sqrt((tot ** 2).sum(0)) / n                                 # cluster totals -> ratio SE
    # covariance about `mean` = covariance about m + (m-mean)(m-mean)'; compare like with like
    adj = np.concatenate([np.zeros(d), ((m - mean)[ii[0]] * (m - mean)[ii[1]])])
    target = np.concatenate([np.zeros(d), cov[ii]])
    return (est - adj - target) / se, se, ii


@pytest.mark.parametrize('make', CLOSED + [sphere_world])
def test_shapes_and_frames(make):
    w = make(16, 3, mc_queries=1000, mc_docs=1000)
    s = w.draw(50, np.random.default_rng(0))
    assert len(w.systems) >= 4 and w.equal_pairs and w.max_queries is None and w.k == 10
    assert len(s.qids) == 50 == len(set(s.qids))
    N = len(s.relevant)
    assert s.relevant.shape == (N, 16) and s.relevant.dtype == np.float64
    assert s.relevant_qid.shape == s.relevant_label.shape == (N,) and (s.relevant_label >= 1).all()
    assert set(s.relevant_qid) == set(s.qids)
    counts = pd.Series(s.relevant_qid).value_counts()
    assert counts.min() >= 1 and counts.max() <= 40
    for name in w.systems:
        v, q, r = s.retrieved[name]
        assert v.shape == (500, 16) and q.shape == r.shape == (500,)
        assert (pd.Series(q).value_counts() == 10).all() and sorted(set(r)) == list(range(1, 11))
        assert s.retrieved_relevant[name].shape == (500,)
    if w.sphere:
        assert np.allclose(np.linalg.norm(s.relevant, axis=1), 1) and np.allclose(
            np.linalg.norm(s.retrieved['good'][0], axis=1), 1)
    qrels, runs, vectors = s.to_frames()
    assert list(qrels.columns) == ['qid', 'docno', 'label'] and not qrels.duplicated(['qid', 'docno']).any()
    assert (qrels.label > 0).sum() == N
    lab = dict(zip(zip(qrels.qid, qrels.docno), qrels.label))
    for name, run in runs.items():
        assert list(run.columns) == ['qid', 'docno', 'score', 'rank']
        got = np.array([lab[(q, d)] for q, d in zip(run.qid, run.docno)])   # every retrieved doc is judged
        assert (got == s.retrieved_relevant[name]).all()
        assert np.allclose(np.array([vectors[d] for d in run.docno]), s.retrieved[name][0], atol=1e-6)
    # a retrieved relevant document is the same document (same vector) as its qrels row
    relvec = dict(zip(s.relevant_docno, s.relevant))
    v, _, _ = s.retrieved['good']
    isrel = s.retrieved_relevant['good'] > 0
    assert isrel.any()
    assert np.array_equal(np.array([relvec[d] for d in s.retrieved_docno['good'][isrel]]), v[isrel])


@pytest.mark.parametrize('make', CLOSED + [sphere_world])
def test_determinism(make):
    a = make(16, 5, mc_queries=1000, mc_docs=1000).draw(30, np.random.default_rng(11))
    b = make(16, 5, mc_queries=1000, mc_docs=1000).draw(30, np.random.default_rng(11))
    c = make(16, 5, mc_queries=1000, mc_docs=1000).draw(30, np.random.default_rng(12))
    d = make(16, 6, mc_queries=1000, mc_docs=1000).draw(30, np.random.default_rng(11))   # another world seed
    assert np.array_equal(a.relevant, b.relevant) and a.qids == b.qids
    for s in a.retrieved:
        assert np.array_equal(a.retrieved[s][0], b.retrieved[s][0])
        assert np.array_equal(a.retrieved_relevant[s], b.retrieved_relevant[s])
    assert not np.array_equal(a.relevant[:5], c.relevant[:5])
    assert not np.allclose(a.relevant.mean(0), d.relevant.mean(0))


@pytest.mark.parametrize('make', CLOSED)
@pytest.mark.parametrize('d', [16, 128])
def test_closed_form_moments_match_a_large_draw(make, d):
    """The closed-form pooled moments against 6,000 drawn queries at d=16 (about 42,000 relevant and 60,000
    retrieved documents per system; 2,000 queries at d=128): every mean, variance and leading covariance within
    5.5 clustered standard errors."""
    w = make(d, 1, mc_queries=1000)
    p = w.population()
    s = w.draw(6000 if d == 16 else 2000, np.random.default_rng(2))
    unit = lambda q: np.array([x.split('_')[0] for x in q]) if w.topic_share > 0 else q
    z, _, _ = ratio_z(s.relevant, unit(s.relevant_qid), p.relevant_mean, p.relevant_cov)
    assert np.abs(z).max() < 5.5, (w.name, 'relevant', np.abs(z).max())
    for name in w.systems:
        v, q, _ = s.retrieved[name]
        z, _, _ = ratio_z(v, unit(q), p.retrieved_mean[name], p.retrieved_cov[name])
        assert np.abs(z).max() < 5.5, (w.name, name, np.abs(z).max())


def test_topics_world_queries_of_a_topic_are_dependent():
    """In world (b) the mean of a topic's queries' topic vectors varies more than iid queries allow: the
    between-topic variance of per-query relevant means exceeds its iid value by the design effect."""
    w = topics_world(16, 0, mc_queries=1000)
    s = w.draw(3000, np.random.default_rng(4))
    df = pd.DataFrame(s.relevant[:, :1], columns=['x'])
    df['q'] = s.relevant_qid
    qm = df.groupby('q').x.mean()
    topic = qm.index.str.split('_').str[0]
    # correlation of two different queries' means within a topic: positive (0.7 of the topic variance shared)
    pairs = [(g.iloc[0], g.iloc[1]) for _, g in qm.groupby(topic) if len(g) >= 2]
    r = np.corrcoef(np.array(pairs).T)[0, 1]
    assert r > 0.4
    iid = independent_world(16, 0, mc_queries=1000).draw(3000, np.random.default_rng(4))
    assert len({q.split('_')[0] for q in s.qids}) < 1000 < len(set(iid.qids))


def test_sphere_world_monte_carlo_moments():
    """(c2) Monte Carlo population (here 2*10^5 documents per law, to keep the test fast) against a draw of
    5,000 queries: within 5.5 combined standard errors (draw's clustered SE and the MC SE)."""
    w = sphere_world(16, 2, mc_docs=200_000, mc_queries=1000)
    p = w.population()
    assert 'monte carlo' in p.method['moments']
    assert np.allclose(np.trace(p.relevant_cov) + p.relevant_mean @ p.relevant_mean, 1.0)   # unit vectors
    s = w.draw(5000, np.random.default_rng(3))
    z, se, ii = ratio_z(s.relevant, s.relevant_qid, p.relevant_mean, p.relevant_cov)
    mc = np.concatenate([p.se['relevant_mean'], p.se['relevant_cov'][ii]])
    assert np.abs(z * se / np.sqrt(se ** 2 + mc ** 2)).max() < 5.5
    for name in w.systems:
        v, q, _ = s.retrieved[name]
        z, se, ii = ratio_z(v, q, p.retrieved_mean[name], p.retrieved_cov[name])
        mc = np.concatenate([p.se['retrieved_mean'][name], p.se['retrieved_cov'][name][ii]])
        assert np.abs(z * se / np.sqrt(se ** 2 + mc ** 2)).max() < 5.5, name


@pytest.mark.parametrize('make', CLOSED + [sphere_world])
def test_equal_pairs_equal_in_population_and_in_a_draw(make):
    w = make(16, 0, mc_queries=20_000, mc_docs=50_000)
    p = w.population()
    s = w.draw(4000, np.random.default_rng(9))
    for a, b in w.equal_pairs:
        assert np.array_equal(p.retrieved_mean[a], p.retrieved_mean[b])
        assert np.array_equal(p.retrieved_cov[a], p.retrieved_cov[b])
        assert p.per_query_metric_mean[a] == p.per_query_metric_mean[b]
        # drawn: the per-query difference of the pooled means is centred at 0 (paired, clustered by query)
        va, qa, _ = s.retrieved[a]
        vb, qb, _ = s.retrieved[b]
        assert np.array_equal(qa, qb)
        diff = pd.DataFrame(va - vb).groupby(qa).sum()
        z = diff.mean(0) / (diff.std(0, ddof=1) / np.sqrt(len(diff)))
        assert np.abs(z).max() < 4.5
    # and systems not in a pair are not equal
    assert not np.allclose(p.retrieved_mean['good'], p.retrieved_mean['weak'])


@pytest.mark.parametrize('make', CLOSED)
def test_designed_ndcg_order_and_population_ndcg(make):
    w = make(16, 0, mc_queries=50_000)
    p = w.population()
    pm = p.per_query_metric_mean
    pairs = {frozenset(x) for x in w.equal_pairs}
    for a, b in zip(w.metric_order, w.metric_order[1:]):
        if frozenset((a, b)) in pairs:
            assert pm[a] == pm[b]
        else:
            assert pm[a] > pm[b] + 0.05, (a, b, pm)
    s = w.draw(3000, np.random.default_rng(8))
    qrels, runs, _ = s.to_frames()
    for name in w.systems:
        ref = ref_ndcg(qrels, runs[name])
        mine = per_query_ndcg(s, name, 10)
        assert np.allclose([ref[q] for q in s.qids], [mine[q] for q in s.qids])
        v = np.array(list(ref.values()))
        se = np.hypot(v.std(ddof=1) / np.sqrt(len(v)), p.se['per_query_metric_mean'][name])
        if w.topic_share > 0:   # clustered: per-topic totals
            t = pd.Series(v, index=[q.split('_')[0] for q in ref]).groupby(level=0)
            tot, cnt = t.sum(), t.count()
            se = np.sqrt((((tot - v.mean() * cnt) ** 2).sum())) / len(v)
        assert abs(v.mean() - pm[name]) < 5 * se, (name, v.mean(), pm[name], se)


# ---- (d) Cranfield ------------------------------------------------------------------------------------------
need_shared = pytest.mark.skipif(not (SHARED / 'data' / 'cranfield').exists(), reason='needs /work/shared')


def _plain_cranfield(d):
    """The population recomputed from the files with plain numpy/pandas (no benchmarks.worlds code)."""
    E = np.load(SHARED / 'embeddings' / 'cranfield.minilm.npy').astype(np.float64)
    ids = [l.strip() for l in open(SHARED / 'embeddings' / 'cranfield.minilm.ids.txt')]
    if d < 384:
        m = E.mean(0)
        evals, evecs = np.linalg.eigh(np.cov((E - m).T))
        V = evecs[:, ::-1][:, :d]
        V = V * np.sign(V[np.abs(V).argmax(0), np.arange(d)])
        E = (E - m) @ V
    vec = dict(zip(ids, E))
    q = pd.read_csv(SHARED / 'data/cranfield/qrels.graded.trec', sep=' ', header=None,
                    names=['qid', 'it', 'docno', 'label'], dtype=str)
    q['label'] = q.label.astype(int)
    q = q[q.label > 0]
    data = Path(__file__).resolve().parents[1] / 'benchmarks/worlds/data'
    runs = {}
    for f in data.glob('cranfield.*.trec'):
        r = pd.read_csv(f, sep=' ', header=None, names=['qid', 'q0', 'docno', 'rank', 'score', 'tag'], dtype=str)
        r['rank'] = r['rank'].astype(int)
        runs[f.name.split('.')[1]] = r
    return vec, q, runs


@need_shared
@pytest.mark.shared
@pytest.mark.parametrize('d', [16, 384])
def test_cranfield_population_is_the_pooled_full_population(d):
    w = make_world('cranfield', d)
    vec, qrels, runs = _plain_cranfield(d)
    p = w.population()
    assert w.max_queries == qrels.qid.nunique() == 225 and len(w.systems) == 6
    X = np.array([vec[x] for x in qrels.docno])
    assert np.allclose(p.relevant_mean, X.mean(0), atol=1e-12)
    assert np.allclose(p.relevant_cov, np.cov(X.T, bias=True), atol=1e-10)
    for s in w.systems:
        group = [s] if not any(s in pr for pr in w.equal_pairs) else sorted(next(pr for pr in w.equal_pairs if s in pr))
        Y = np.array([vec[x] for g in group for x in runs[g].docno])
        assert np.allclose(p.retrieved_mean[s], Y.mean(0), atol=1e-12)
        assert np.allclose(p.retrieved_cov[s], np.cov(Y.T, bias=True), atol=1e-10)
        nd = np.mean([np.mean(list(ref_ndcg(qrels, runs[g]).values())) for g in group])
        assert abs(p.per_query_metric_mean[s] - nd) < 1e-12
    # drawing every query gives the population exactly (deterministic systems; for the swap pair, the union)
    s_all = w.draw(225, np.random.default_rng(1))
    assert sorted(s_all.qids, key=int) == sorted(qrels.qid.unique(), key=int)
    m_, c_ = s_all.relevant.mean(0), np.cov(s_all.relevant.T, bias=True)
    assert np.allclose(m_, p.relevant_mean) and np.allclose(c_, p.relevant_cov)
    assert np.allclose(s_all.retrieved['bm25'][0].mean(0), p.retrieved_mean['bm25'])
    a, b = w.equal_pairs[0]
    U = np.concatenate([s_all.retrieved[a][0], s_all.retrieved[b][0]])
    assert np.allclose(U.mean(0), p.retrieved_mean[a]) and np.allclose(np.cov(U.T, bias=True), p.retrieved_cov[b])
    if d < 384:   # the PCA projection keeps the top-d variance directions: diagonal, decreasing
        C = np.cov(np.array(list(vec.values())).T)
        assert np.allclose(C, np.diag(np.diag(C)), atol=1e-10) and (np.diff(np.diag(C)) <= 0).all()
        assert np.allclose(np.array([w.vec[k] for k in vec]), np.array(list(vec.values())), atol=1e-8)


@need_shared
@pytest.mark.shared
def test_cranfield_draws_and_swap_pair():
    w = make_world('cranfield', 128)
    s = w.draw(40, np.random.default_rng(5))
    t = w.draw(40, np.random.default_rng(5))
    assert s.qids == t.qids and len(set(s.qids)) == 40
    assert np.array_equal(s.retrieved['dense_noise_a'][0], t.retrieved['dense_noise_a'][0])
    assert s.relevant.shape[1] == 128 and (s.relevant_label >= 1).all()
    with pytest.raises(ValueError, match='225'):
        w.draw(226, np.random.default_rng(0))
    # the swap pair: per query, a and b hold the two stored runs, one each, in an order set by a fair coin
    a, b = w.equal_pairs[0]
    _, _, runs = _plain_cranfield(384)
    stored = {g: runs[g].groupby('qid').docno.apply(tuple).to_dict() for g in (a, b)}
    flips = 0
    for big in [w.draw(225, np.random.default_rng(i)) for i in range(4)]:
        qa = pd.Series(big.retrieved_docno[a]).groupby(big.retrieved[a][1]).apply(tuple)
        qb = pd.Series(big.retrieved_docno[b]).groupby(big.retrieved[b][1]).apply(tuple)
        for q in big.qids:
            assert {qa[q], qb[q]} == {stored[a][q], stored[b][q]} or stored[a][q] == stored[b][q]
            flips += qa[q] != stored[a][q]
    assert abs(flips / 900 - 0.5) < 0.07
    # the qrels carry every retrieved document, non-relevant ones with label 0, relevant ones with their grade
    qrels, runs_, vectors = s.to_frames()
    lab = dict(zip(zip(qrels.qid, qrels.docno), qrels.label))
    for name, run in runs_.items():
        assert (np.array([lab[x] for x in zip(run.qid, run.docno)]) == s.retrieved_relevant[name]).all()
    # designed order: dense > bm25 > title_bm25 > random, the noisy pair between dense and title_bm25
    pm = w.population().per_query_metric_mean
    assert pm['dense'] > pm['dense_noise_a'] == pm['dense_noise_b'] > pm['title_bm25'] > pm['bm25_top100_random']
    assert pm['bm25'] > pm['title_bm25']


@need_shared
@pytest.mark.shared
def test_cranfield_ndcg_agrees_with_ir_measures():
    """nDCG@10 as README.md defines it is ir_measures' nDCG@10 (trec_eval's, which sorts by score) on to_frames()."""
    ir_measures = pytest.importorskip('ir_measures')
    w = make_world('cranfield', 16)
    s = w.draw(225, np.random.default_rng(0))
    qrels, runs, _ = s.to_frames()
    qr = qrels.rename(columns={'qid': 'query_id', 'docno': 'doc_id', 'label': 'relevance'})
    pm = w.population().per_query_metric_mean
    M = ir_measures.nDCG @ 10
    for name in ['bm25', 'dense', 'title_bm25', 'bm25_top100_random']:
        r = runs[name].rename(columns={'qid': 'query_id', 'docno': 'doc_id'})
        assert abs(ir_measures.calc_aggregate([M], qr, r)[M] - pm[name]) < 1e-12, name
    a, b = w.equal_pairs[0]
    both = [ir_measures.calc_aggregate([M], qr, runs[x].rename(columns={'qid': 'query_id', 'docno': 'doc_id'}))[M]
            for x in (a, b)]
    assert abs(np.mean(both) - pm[a]) < 1e-12      # a full draw holds each stored run once, whichever way round


@need_shared
@pytest.mark.shared
def test_scifact_world_is_its_full_population():
    """SciFact (300 test queries): population moments are the pooled moments over all queries, recomputed
    from the files with plain numpy; nDCG@10 is ir_measures'."""
    ir_measures = pytest.importorskip('ir_measures')
    data = Path(__file__).resolve().parents[1] / 'benchmarks/worlds/data'
    w = make_world('scifact', 384)
    assert w.max_queries == 300 and len(w.systems) == 6
    E = np.load(data / 'scifact_corpus.minilm.f16.npy').astype(np.float64)
    vec = dict(zip((data / 'scifact_corpus.minilm.ids.txt').read_text().split(), E))
    assert len(vec) == 5183 and np.allclose(np.linalg.norm(E, axis=1), 1, atol=2e-3)
    q = pd.read_csv(SHARED / 'data/beir-scifact/qrels.beir-v1.0.0-scifact.test.txt', sep=' ', header=None,
                    names=['qid', 'it', 'docno', 'label'], dtype=str)
    X = np.array([vec[x] for x in q.docno])
    p = w.population()
    assert np.allclose(p.relevant_mean, X.mean(0), atol=1e-12)
    assert np.allclose(p.relevant_cov, np.cov(X.T, bias=True), atol=1e-10)
    r = pd.read_csv(data / 'scifact.bm25.trec', sep=' ', header=None, dtype=str)
    Y = np.array([vec[x] for x in r[2]])
    assert len(r) == 3000 and np.allclose(p.retrieved_mean['bm25'], Y.mean(0), atol=1e-12)
    s = w.draw(300, np.random.default_rng(0))
    qrels, runs, _ = s.to_frames()
    qr = qrels.rename(columns={'qid': 'query_id', 'docno': 'doc_id', 'label': 'relevance'})
    M = ir_measures.nDCG @ 10
    for name in ['bm25', 'dense', 'title_bm25', 'bm25_top100_random']:
        rr = runs[name].rename(columns={'qid': 'query_id', 'docno': 'doc_id'})
        assert abs(ir_measures.calc_aggregate([M], qr, rr)[M] - p.per_query_metric_mean[name]) < 1e-12
    pm = p.per_query_metric_mean
    assert pm['dense'] > pm['dense_noise_a'] == pm['dense_noise_b'] > pm['bm25_top100_random']


# ---- (e) TREC DL 2019 passage ---------------------------------------------------------------------------------
MSM = SHARED / 'data' / 'msmarco-passage'
need_dl19 = pytest.mark.skipif(not (MSM / 'runs').exists(), reason='needs /work/shared (msmarco-passage)')


def _dl19_relevant(rel: int) -> pd.DataFrame:
    """DL19's qrels rows with label >= rel, read with plain pandas (not the world's loader)."""
    q = pd.read_csv(MSM / 'qrels.dl19-passage.txt', sep=' ', header=None, names=['qid', 'it', 'docno', 'label'],
                    dtype=str)
    q['label'] = q.label.astype(int)
    return q[q.label >= rel]


def _dl19_vectors() -> dict:
    """docno -> MiniLM vector (float64) from the shared files, with plain numpy."""
    E = np.load(SHARED / 'embeddings' / 'msmarco-passage.dl19-dl20.minilm.npy').astype(np.float64)
    return dict(zip((SHARED / 'embeddings' / 'msmarco-passage.dl19-dl20.minilm.ids.txt').read_text().split(), E))


@need_dl19
@pytest.mark.shared
def test_dl19_world_is_dl19_at_grade_2_with_its_real_runs():
    """The DL19 world from the files with plain numpy/pandas: 43 queries, grade >= 2 relevant (3 to 219 per query,
    the counts pf.interval_caveat prints for DL19: sd of log 1.19), the real top 10 of the first-stage runs, exact
    pooled population moments, nDCG@10 = ir_measures' on the grade >= 2 qrels, the pick pair drawn from TAS-B's top 20."""
    ir_measures = pytest.importorskip('ir_measures')
    w = make_world('dl19', 384)
    with pytest.raises(ValueError, match='384'):
        make_world('dl19', 128)
    q = _dl19_relevant(2)
    counts = q.groupby('qid').size().to_numpy(float)
    assert w.max_queries == 43 and counts.min() == 3 and counts.max() == 219
    assert abs(np.log(counts).std() - 1.19) < 0.005
    vec = _dl19_vectors()
    p = w.population()
    X = np.array([vec[x] for x in q.docno])
    assert np.allclose(p.relevant_mean, X.mean(0), atol=1e-12)
    assert np.allclose(p.relevant_cov, np.cov(X.T, bias=True), atol=1e-10)
    qr = q.rename(columns={'qid': 'query_id', 'docno': 'doc_id', 'label': 'relevance'})[['query_id', 'doc_id', 'relevance']]
    M = ir_measures.nDCG @ 10
    for s, f in [('bm25', 'bm25'), ('tasb', 'tasb'), ('splade_pp_ed', 'splade-pp-ed')]:
        full = pd.read_csv(MSM / 'runs' / f'run.dl19.{f}.top100.txt', sep=' ', header=None,
                           names=['qid', 'q0', 'docno', 'rank', 'score', 'tag'], dtype={'qid': str, 'docno': str})
        r = full[(full['rank'] <= 10) & full.qid.isin(set(q.qid))]
        Y = np.array([vec[x] for x in r.docno])
        assert np.allclose(p.retrieved_mean[s], Y.mean(0), atol=1e-12)
        assert np.allclose(p.retrieved_cov[s], np.cov(Y.T, bias=True), atol=1e-10)
        nd = ir_measures.calc_aggregate([M], qr, r.rename(columns={'qid': 'query_id', 'docno': 'doc_id'}))[M]
        assert abs(p.per_query_metric_mean[s] - nd) < 1e-12, s
        if s == 'tasb':
            top20 = full[full['rank'] <= 20].groupby('qid').docno.apply(set).to_dict()
    a, b = w.equal_pairs[0]
    differ = 0
    for qid in w.population_qids:
        da, db = set(w.runs[a].docno[w.runs[a].qid == qid]), set(w.runs[b].docno[w.runs[b].qid == qid])
        assert len(da) == len(db) == 10 and da <= top20[qid] and db <= top20[qid]
        differ += da != db
    assert differ >= 40
    # draws are without replacement and reproducible; n = 43 is the population, 44 is refused
    s1, s2 = w.draw(20, np.random.default_rng(3)), w.draw(20, np.random.default_rng(3))
    assert s1.qids == s2.qids and len(set(s1.qids)) == 20 and (s1.relevant_label >= 2).all()
    with pytest.raises(ValueError, match='43'):
        w.draw(44, np.random.default_rng(0))


@need_dl19
@pytest.mark.shared
def test_dl19_rel1_world_takes_every_judged_relevant_passage():
    """'dl19-rel1' is the DL19 world at grade >= 1 (the package's default rel): 4 to 341 relevant per query, Kish
    share (sum R)^2 / (n sum R^2) 0.57, counted here from the qrels file; its relevant mean is those passages' mean."""
    w = make_world('dl19-rel1', 384)
    q = _dl19_relevant(1)
    counts = q.groupby('qid').size().to_numpy(float)
    assert w.name == 'dl19-rel1' and w.max_queries == 43 == len(counts)
    assert counts.min() == 4 and counts.max() == 341
    assert abs(counts.sum() ** 2 / (len(counts) * (counts ** 2).sum()) - 0.573) < 0.001
    vec = _dl19_vectors()
    assert np.allclose(w.population().relevant_mean, np.array([vec[x] for x in q.docno]).mean(0), atol=1e-12)


@need_dl19
@pytest.mark.shared
def test_dl19_runs_world_has_every_run_and_draws_queries_with_replacement():
    """'dl19-runs': the 19 run files of ../shared, each's top 10 of the 43 judged queries less the passages without a
    vector (counted here with plain pandas); a set draws queries with replacement, a second copy named QID~2 with the
    original's relevant passages, retrieved passages and labels; the population is the 43 queries (bm25's nDCG@10 as
    in the 'dl19' world, whose runs are the same files)."""
    w = make_world('dl19-runs', 384)
    vec = _dl19_vectors()
    q = _dl19_relevant(2)
    files = sorted((MSM / 'runs').glob('run.dl19.*'))
    assert len(files) == len(w.systems) == 19 and w.max_queries is None and w.equal_pairs == []
    for f in files[:4]:
        full = pd.read_csv(f, sep=r'\s+', header=None, names=['qid', 'q0', 'docno', 'rank', 'score', 'tag'],
                           dtype={'qid': str, 'docno': str})
        top = full[(full['rank'] <= 10) & full.qid.isin(set(q.qid)) & full.docno.isin(vec.keys())]
        name = f.name[len('run.dl19.'):].split('.top')[0].replace('-', '_').replace('.', '_')
        assert sorted(zip(w.runs[name].qid, w.runs[name].docno)) == sorted(zip(top.qid, top.docno))
    assert w.population().per_query_metric_mean['bm25'] == pytest.approx(
        make_world('dl19', 384).population().per_query_metric_mean['bm25'], abs=1e-12)
    s = w.draw(60, np.random.default_rng(1))
    assert len(s.qids) == len(set(s.qids)) == 60
    copies = [x for x in s.qids if '~' in x]
    assert copies, 'sixty draws from 43 queries repeat some'
    again = w.draw(60, np.random.default_rng(1))
    assert again.qids == s.qids
    c = copies[0]
    orig = c.split('~')[0]
    assert orig in s.qids
    for side in (lambda qid: s.relevant[s.relevant_qid == qid],
                 lambda qid: s.retrieved['tasb'][0][s.retrieved['tasb'][1] == qid],
                 lambda qid: s.retrieved_relevant['tasb'][s.retrieved['tasb'][1] == qid]):
        assert np.array_equal(side(c), side(orig)) and len(side(c))
    assert np.array_equal(s.relevant[s.relevant_qid == orig], np.array([vec[x] for x in q.docno[q.qid == orig]]))
