"""Queries that are not independent: the cluster bootstrap and the cluster jackknife over user-named query groups
(``query_groups=``, ``--query-groups``), checked against FDs recomputed with numpy from the vectors."""
import warnings

import numpy as np
import pandas as pd
import pytest
import scipy.stats

import pyterrier_frechet as pf
from pyterrier_frechet.analyses.bootstrap import resample_counts
from pyterrier_frechet.analyses.options import query_clusters
from pyterrier_frechet.core.weighted import cluster_groups, jackknife_plan
from conftest import DictEncoder, assert_cli_compare_is_the_api, reference_fd_eigh

D, Q, PER = 4, 12, 3          # 12 queries in 4 groups of 3


@pytest.fixture(scope='module')
def grouped():
    rng = np.random.default_rng(0)
    vectors, qrows, runs = {}, [], {'a': [], 'b': []}
    for q in range(Q):
        centre = rng.normal(size=D)
        for j in range(4):
            vectors[f'q{q}r{j}'] = centre + rng.normal(size=D)
            qrows.append((f'q{q}', f'q{q}r{j}', 1))
        for s, spread in (('a', 0.5), ('b', 1.0)):
            for r in range(5):
                vectors[f'q{q}{s}{r}'] = centre + spread * rng.normal(size=D)
                runs[s].append((f'q{q}', f'q{q}{s}{r}', 10.0 - r))
    qrels = pd.DataFrame(qrows, columns=['qid', 'docno', 'label'])
    runs = {s: pd.DataFrame(r, columns=['qid', 'docno', 'score']) for s, r in runs.items()}
    groups = {f'q{q}': f'topic{q // PER}' for q in range(Q)}
    return vectors, qrels, runs, groups


def _fd_without(vectors, qrels, run, left_out):
    """FD@5 from the vectors of the queries not in ``left_out`` (numpy, float64)."""
    rel = np.stack([vectors[d] for q, d in zip(qrels.qid, qrels.docno) if q not in left_out])
    ret = np.stack([vectors[d] for q, d in zip(run.qid, run.docno) if q not in left_out])
    return reference_fd_eigh(rel, ret)


def test_cluster_groups_by_hand():
    units = np.array([True, True, False, True, True, True])
    clusters = np.array([5, 2, 7, 5, 9, 2])
    groups, n = cluster_groups(units, clusters)
    assert n == 3 and groups.tolist() == [1, 0, -1, 1, 2, 0]      # cluster 7 holds no unit query: not a group
    plan = jackknife_plan('auto', 5, 0, clusters)
    assert plan.describe(5) == 'cluster jackknife (G=4 query groups of 5 queries)'
    with pytest.raises(ValueError, match='have no query group'):
        cluster_groups(units, np.array([5, -1, 7, 5, 9, 2]))
    with pytest.raises(ValueError, match="leave jackknife at 'auto'"):
        jackknife_plan(5, 5, 0, clusters)


def test_cluster_bootstrap_draws_whole_groups():
    clusters = np.array([0, 0, 1, 2, 2, 2, 3])
    counts = resample_counts(7, 300, 4, clusters)
    for g in range(4):
        members = counts[:, clusters == g]
        assert (members == members[:, :1]).all()                 # every query of a group drawn as often as the group
    per_group = np.stack([counts[:, np.flatnonzero(clusters == g)[0]] for g in range(4)], axis=1)
    assert (per_group.sum(axis=1) == 4).all()                    # G groups drawn with replacement per sample
    assert 0.15 < (per_group == 0).mean() < 0.45                 # P(a group is not drawn) = (3/4)^4 = 0.32


def test_bootstrap_with_query_groups_is_the_cluster_jackknife_and_bootstrap(grouped):
    vectors, qrels, runs, groups = grouped
    m = pf.FD(encoder=DictEncoder(vectors)) @ 5
    res = pf.bootstrap(runs, qrels, [m], n_samples=50, seed=1, query_groups=groups, verbose=False)
    queries = res.queries
    # leave-outs: one per group, equal to FD recomputed without the group's queries
    names = sorted(set(groups.values()), key=lambda g: [groups[q] for q in queries].index(g))
    for s in ('a', 'b'):
        want = [_fd_without(vectors, qrels, runs[s], {q for q in queries if groups[q] == g}) for g in names]
        np.testing.assert_allclose(res.jackknife[s][str(m)], want, rtol=1e-9)
    # the interval: value · exp(±t_{G−1} SE of the log leave-outs)
    row = res.summary.set_index('name').loc['a']
    logs = np.log(res.jackknife['a'][str(m)])
    se = np.sqrt((len(logs) - 1) / len(logs) * np.sum((logs - logs.mean()) ** 2))
    t = scipy.stats.t.ppf(0.975, len(names) - 1)
    assert (row.low, row.high) == pytest.approx((row.value * np.exp(-t * se), row.value * np.exp(t * se)), rel=1e-12)
    assert 'cluster jackknife over G=4 query groups, t reference' in row.interval
    assert row.jackknife == 'cluster jackknife (G=4 query groups of 12 queries)'
    # a bootstrap sample: FD of the groups drawn, each query's vectors repeated as often as its group was drawn
    counts = resample_counts(len(queries), 50, 1, query_clusters(groups, queries))
    for b in (0, 7):
        reps = dict(zip(queries, counts[b]))
        rel = np.stack([vectors[d] for q, d in zip(qrels.qid, qrels.docno) for _ in range(reps[q])])
        ret = np.stack([vectors[d] for q, d in zip(runs['a'].qid, runs['a'].docno) for _ in range(reps[q])])
        assert res.samples['a'][str(m)][b] == pytest.approx(reference_fd_eigh(rel, ret), rel=1e-9)
    assert res.query_groups.tolist() == query_clusters(groups, queries).tolist()


def test_singleton_groups_leave_each_query_out(grouped):
    """Each query its own group: the leave-one-out values of the default jackknife (a differential check) and the
    same interval (both on t with n − 1 degrees of freedom)."""
    vectors, qrels, runs, _ = grouped
    m = pf.FD(encoder=DictEncoder(vectors)) @ 5
    alone = {q: q for q in qrels.qid.unique()}
    grouped_res = pf.bootstrap(runs, qrels, [m], n_samples=20, seed=2, query_groups=alone, verbose=False)
    plain = pf.bootstrap(runs, qrels, [m], n_samples=20, seed=2, verbose=False)
    np.testing.assert_allclose(grouped_res.jackknife['a'][str(m)], plain.jackknife['a'][str(m)], rtol=1e-12)
    g, p = grouped_res.summary.iloc[0], plain.summary.iloc[0]
    assert (g.low, g.high) == pytest.approx((p.low, p.high), rel=1e-12)
    logs = np.log(plain.jackknife['a'][str(m)])
    se = np.sqrt((Q - 1) / Q * np.sum((logs - logs.mean()) ** 2))
    assert np.log(p.high / p.value) == pytest.approx(scipy.stats.t.ppf(0.975, Q - 1) * se, rel=1e-10)


def test_compare_with_query_groups_is_the_cluster_jackknife_t_test(grouped):
    vectors, qrels, runs, groups = grouped
    m = pf.FD(encoder=DictEncoder(vectors)) @ 5
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')          # few samples
        row = pf.compare_systems(runs, qrels, [m], n_samples=50, query_groups=groups, verbose=False).iloc[0]
    queries = sorted(groups)
    names = sorted(set(groups.values()))
    jd = np.array([_fd_without(vectors, qrels, runs['a'], {q for q in queries if groups[q] == g})
                   - _fd_without(vectors, qrels, runs['b'], {q for q in queries if groups[q] == g}) for g in names])
    se = np.sqrt((len(jd) - 1) / len(jd) * np.sum((jd - jd.mean()) ** 2))
    diff = _fd_without(vectors, qrels, runs['a'], set()) - _fd_without(vectors, qrels, runs['b'], set())
    assert row['diff'] == pytest.approx(diff, rel=1e-9)
    assert row.p_jackknife == pytest.approx(2 * scipy.stats.t.sf(abs(diff) / se, len(names) - 1), rel=1e-8)
    t = scipy.stats.t.ppf(0.975, len(names) - 1)
    assert (row.ci_low, row.ci_high) == pytest.approx((diff - t * se, diff + t * se), rel=1e-8)
    assert row.test == 'jackknife' and 'cluster jackknife over G=4 query groups' in row.interval
    # the standalone paired test forms the same interval
    pt_res = pf.paired_test(runs['a'], runs['b'], qrels, m, n_samples=50, n_permutations=50, query_groups=groups)
    assert (pt_res.ci_low, pt_res.ci_high) == pytest.approx((diff - t * se, diff + t * se), rel=1e-8)


def test_paired_test_t_reference_counts_only_defined_leave_outs(grouped, monkeypatch):
    """A leave-out that is undefined (NaN) drops out of the standard error and out of the t reference's degrees of
    freedom alike: the interval is t(m − 1) over the m finite leave-outs, as compare_systems' and bootstrap's are
    (one df, jackknife_df, for every interval and test)."""
    import pyterrier_frechet.core.weighted as weighted  # the kernel FD's resampling calls for its leave-outs
    vectors, qrels, runs, groups = grouped
    m = pf.FD(encoder=DictEncoder(vectors)) @ 5
    real = weighted.leave_out_fds
    seen = []

    def first_undefined(*args, **kwargs):
        values = np.array(real(*args, **kwargs), dtype=np.float64)
        values[0] = np.nan
        seen.append(values)
        return values

    monkeypatch.setattr(weighted, 'leave_out_fds', first_undefined)
    res = pf.paired_test(runs['a'], runs['b'], qrels, m, n_samples=50, n_permutations=0, query_groups=groups)
    queries = sorted(groups)
    names = sorted(set(groups.values()))
    jd = np.array([_fd_without(vectors, qrels, runs['a'], {q for q in queries if groups[q] == g})
                   - _fd_without(vectors, qrels, runs['b'], {q for q in queries if groups[q] == g}) for g in names])[1:]
    assert len(seen) == 2 and len(jd) == 3                    # 4 groups, the first one's leave-out undefined
    se = np.sqrt((len(jd) - 1) / len(jd) * np.sum((jd - jd.mean()) ** 2))
    diff = _fd_without(vectors, qrels, runs['a'], set()) - _fd_without(vectors, qrels, runs['b'], set())
    t = scipy.stats.t.ppf(0.975, 2)                           # 3 finite leave-outs: 2 degrees of freedom, not G − 1 = 3
    assert (res.ci_low, res.ci_high) == pytest.approx((diff - t * se, diff + t * se), rel=1e-8)


def test_query_groups_refused_before_any_work(grouped):
    vectors, qrels, runs, groups = grouped
    m = pf.FD(encoder=DictEncoder(vectors)) @ 5
    partial = {q: g for q, g in groups.items() if q != 'q3'}
    with pytest.raises(ValueError, match=r"no group for 1 of the 12 judged queries, e.g. \['q3'\]"):
        pf.bootstrap(runs, qrels, [m], n_samples=10, query_groups=partial)
    with pytest.raises(ValueError, match='one group'):
        pf.bootstrap(runs, qrels, [m], n_samples=10, query_groups={q: 'x' for q in groups})
    with pytest.raises(ValueError, match="leave jackknife at 'auto'"):
        pf.bootstrap(runs, qrels, [m], n_samples=10, query_groups=groups, jackknife=3)
    with pytest.raises(ValueError, match='columns qid and group'):
        pf.bootstrap(runs, qrels, [m], n_samples=10, query_groups=pd.DataFrame({'qid': list(groups)}))
    with pytest.raises(ValueError, match='must be a dict or Series'):
        pf.bootstrap(runs, qrels, [m], n_samples=10, query_groups=list(groups))
    with pytest.raises(ValueError, match='together are not offered'):
        pf.bootstrap(runs, qrels, [m], n_samples=10, query_groups=groups, population=100)
    boot = pf.bootstrap(runs, qrels, [m], n_samples=10, verbose=False)
    with pytest.raises(ValueError, match='differ from the groups boot was resampled with'):
        pf.compare_systems(runs, qrels, [m], boot=boot, query_groups=groups)
    # a frame and a Series name the same groups as the dict
    frame = pd.DataFrame({'qid': list(groups), 'group': list(groups.values())})
    codes = query_clusters(groups, sorted(groups))
    assert (query_clusters(frame, sorted(groups)) == codes).all()
    assert (query_clusters(pd.Series(groups), sorted(groups)) == codes).all()


@pytest.mark.filterwarnings("ignore:tau and tau_AP")
def test_cli_query_groups_equal_the_api_and_reach_the_report(grouped, tmp_path, capsys):
    from pyterrier_frechet.cli import main
    from conftest import write_trec_files
    vectors, qrels, runs, groups = grouped
    # a third run (b's ranking reversed), so the report has its discriminative-power section too
    runs = {**runs, 'c': runs['b'].assign(score=-runs['b'].score)}
    folder = write_trec_files(tmp_path, qrels, runs, vectors)
    (folder / 'groups.tsv').write_text('# topic per query\n' + ''.join(f'{q}\t{g}\n' for q, g in groups.items()))
    data = ['--qrels', str(folder / 'qrels.txt'), '--runs', str(folder / 'runs'), '--vectors', str(folder / 'vecs'),
            '--metrics', 'FD@5', 'nDCG@5', '--quiet']
    assert main(['compare', *data, '--samples', '200', '--format', 'csv', '--query-groups', str(folder / 'groups.tsv')]) == 0
    out = capsys.readouterr()
    assert_cli_compare_is_the_api(out.out, runs, qrels, folder / 'vecs', groups)
    assert 'resampled in 4 groups (cluster bootstrap)' in out.err
    # a judged query missing from the file: refused, naming the flag, the file and the query, before any work
    (folder / 'partial.tsv').write_text(''.join(f'{q}\t{g}\n' for q, g in groups.items() if q != 'q5'))
    assert main(['bootstrap', *data, '--query-groups', str(folder / 'partial.tsv')]) == 2
    err = capsys.readouterr().err
    assert '--query-groups' in err and 'partial.tsv' in err and "['q5']" in err
    assert main(['agreement', *data, '--samples', '200', '--query-groups', str(folder / 'groups.tsv')]) == 0
    assert 'resampled in 4 groups (cluster bootstrap)' in capsys.readouterr().out      # markdown: notes follow the table
    assert main(['report', *data, '--out', str(tmp_path / 'report'), '--samples', '200', '--per-query', '1',
                 '--seeds', '0', '--query-groups', str(folder / 'groups.tsv')]) == 0
    text = (tmp_path / 'report' / 'report.md').read_text()
    assert '**Query groups**: the 12 queries were resampled and left out in the 4 groups given' in text
    assert 'cluster jackknife over G=4 query groups, t reference' in text
    boot = pd.read_csv(tmp_path / 'report' / 'bootstrap.csv').set_index(['name', 'measure'])['interval']
    assert boot['a', 'nDCG@5'] == 't (cluster jackknife over G=4 query groups, t reference)'
    assert boot['a', 'FD@5'] == 'jackknife_log (cluster jackknife over G=4 query groups, t reference)'
    caption = (tmp_path / 'report' / 'table.md').read_text()
    assert '95% intervals, over 4 query groups (' in caption  # the short caption
    assert 'centred on the value on the log scale (cluster jackknife over G=4 query groups, t reference).' in text  # notes
    assert ('Student t interval for the population mean (cluster jackknife over G=4 query groups, t reference).'
            in text)


def test_per_query_mean_under_the_cluster_bootstrap_is_the_mean_of_the_queries_drawn():
    """A perfect run (nDCG = 1 on every query): every cluster-bootstrap sample of the mean is 1, whatever the group
    sizes (found by an independent check: dividing by the number of judged queries gave [0.5, 2.0])."""
    qids = [f'q{i}' for i in range(6)]
    groups = {'q0': 'a', 'q1': 'b', 'q2': 'c', 'q3': 'c', 'q4': 'c', 'q5': 'c'}
    qrels = pd.DataFrame([(q, f'{q}_d', 1) for q in qids], columns=['qid', 'docno', 'label'])
    run = pd.DataFrame([(q, f'{q}_d', 1.0) for q in qids], columns=['qid', 'docno', 'score'])
    res = pf.bootstrap({'p': run}, qrels, ['nDCG@10'], n_samples=200, seed=0, verbose=False, query_groups=groups)
    assert (res.samples['p']['nDCG@10'] == 1.0).all()
    assert (res.summary.low.iloc[0], res.summary.high.iloc[0]) == (1.0, 1.0)
    # a run right on half the queries: each sample is the share of drawn queries it gets right (counts by hand)
    half = run.assign(docno=[d if q in ('q0', 'q2') else 'x' for q, d in zip(run.qid, run.docno)])
    res = pf.bootstrap({'h': half}, qrels, ['nDCG@10'], n_samples=50, seed=3, verbose=False, query_groups=groups)
    counts = resample_counts(6, 50, 3, query_clusters(groups, qids))
    right = np.array([1, 0, 1, 0, 0, 0], dtype=float)
    np.testing.assert_allclose(res.samples['h']['nDCG@10'], counts @ right / counts.sum(axis=1), rtol=1e-12)
