"""The per-query rows a set measure gives pt.Experiment (evaluation/experiment_rows.py): centred jackknife
pseudo-values that average to the set value, against FDs of hand-built sets; constant rows said in a warning."""
import warnings

import ir_measures
import numpy as np
import pyterrier as pt
import pytest

import pyterrier_frechet as pf
from pyterrier_frechet import FD
from conftest import INFORMATIVE_NOTES, DictEncoder, reference_fd


def test_rows_for_every_query_average_to_the_set_value(toy, vec):
    # every qrels query gets a row; the rows are centred jackknife pseudo-values (evaluation/experiment_rows.py):
    # units q1, q2 get FD + c'(n−1)(mean₋ − FD₋q) with n = 2, c' = √(M(M−1)/(n(n−1))) = √3 for M = 3 rows; q3 (no
    # relevant document) gets FD; so their mean is FD
    vectors, qrels, run = toy
    m = FD(encoder=DictEncoder(vectors)) @ 3
    rows = {r.query_id: r.value for r in ir_measures.iter_calc([m], pt.model.to_ir_measures(qrels),
                                                                  pt.model.to_ir_measures(run))}
    assert sorted(rows) == ['q1', 'q2', 'q3']
    full = reference_fd(vec('d0', 'd1', 'd3', 'd10', 'd11', 'd12'), vec('d0', 'd1', 'd2', 'd10', 'd11', 'd12'))
    without = {'q1': reference_fd(vec('d10', 'd11', 'd12'), vec('d10', 'd11', 'd12')),
               'q2': reference_fd(vec('d0', 'd1', 'd3'), vec('d0', 'd1', 'd2'))}
    mean = (without['q1'] + without['q2']) / 2
    for q in ('q1', 'q2'):
        assert rows[q] == pytest.approx(full + np.sqrt(3) * (mean - without[q]), rel=1e-9)
    assert rows['q3'] == pytest.approx(full, rel=1e-12)
    assert np.mean(list(rows.values())) == pytest.approx(full, rel=1e-12)


def test_measures_without_a_leave_out_warn_that_their_rows_are_constant(toy):
    vectors, qrels, run = toy
    m = pf.KID(encoder=DictEncoder(vectors)) @ 3
    with pytest.warns(UserWarning, match=r'rows repeat its value .* meaningless; this package has no paired test'):
        rows = list(ir_measures.iter_calc([m], pt.model.to_ir_measures(qrels), pt.model.to_ir_measures(run)))
    assert len({r.value for r in rows}) == 1
    with pytest.warns(UserWarning, match=r'rows repeat its value .* meaningless; compare systems with '
                                         r'pf.compare_systems / `python -m pyterrier_frechet compare`'):
        list(ir_measures.iter_calc([pf.DO @ 3], pt.model.to_ir_measures(qrels), pt.model.to_ir_measures(run)))
    with warnings.catch_warnings():
        warnings.simplefilter('error')  # calc_aggregate forms no rows and does not warn
        warnings.filterwarnings('ignore', message=INFORMATIVE_NOTES)  # what the rows and labels are, not a defect
        agg = ir_measures.calc_aggregate([m], pt.model.to_ir_measures(qrels), pt.model.to_ir_measures(run))[m]
    assert agg == pytest.approx(rows[0].value, rel=1e-12)


def _subspace_data(seed, n_queries=12, d=24, rank=20):
    """Judged relevant and retrieved documents whose vectors span one rank-20 subspace of 24 dimensions (singular
    covariances, as MiniLM's), two runs of 10 documents per query."""
    import pandas as pd
    rng = np.random.default_rng(seed)
    basis = np.linalg.qr(rng.normal(size=(d, rank)))[0]
    vectors = {f'd{i}': (rng.normal(size=rank) * np.linspace(1, 0.1, rank)) @ basis.T for i in range(n_queries * 40)}
    qrels, runs = [], {'a': [], 'b': []}
    for q in range(n_queries):
        docs = [f'd{40 * q + j}' for j in range(40)]
        qrels += [(f'q{q}', doc, 1) for doc in docs[:int(rng.integers(2, 9))]]
        qrels += [(f'q{q}', doc, 0) for doc in docs[30:33]]
        for name, start in (('a', 0), ('b', 5)):
            runs[name] += [(f'q{q}', doc, 100.0 - r) for r, doc in enumerate(docs[start:start + 25])]
    qrels = pd.DataFrame(qrels, columns=['qid', 'docno', 'label'])
    return vectors, qrels, {n: pd.DataFrame(v, columns=['qid', 'docno', 'score']) for n, v in runs.items()}


def _counted(monkeypatch, module, name) -> list:
    """Patch ``module.name`` to record each call (a list that grows by one per call) and return that list."""
    calls, original = [], getattr(module, name)
    monkeypatch.setattr(module, name, lambda *a: calls.append(1) or original(*a))
    return calls


def _per_query_experiment(runs, qrels, measures):
    topics = qrels[['qid']].drop_duplicates().assign(query='x')
    return pt.Experiment([pt.Transformer.from_df(r) for r in runs.values()], topics, qrels, eval_metrics=measures,
                         names=list(runs), perquery=True)


def test_the_relevant_leave_outs_are_made_once_and_the_rows_are_those_made_without_sharing(monkeypatch):
    """Issue 50: the relevant side's leave-outs depend on the qrels, rel, the encoder and the grouping, never on the
    run: one computation serves FD@1, FD@10 and FD(urr=True)@10 of every run in pt.Experiment, and the rows are
    those of the same measure computed with nothing shared (each run's own statistics, the general route)."""
    import pyterrier_frechet.core.weighted as weighted
    from pyterrier_frechet.evaluation.experiment_rows import leave_out_rows
    from pyterrier_frechet.evaluation.frames import prepare_qrels, prepare_run
    from pyterrier_frechet.evaluation.selection import Judgments
    from pyterrier_frechet.evaluation.vector_sets import select_vector_sets
    from pyterrier_frechet.evaluation.vector_statistics import vector_statistics
    vectors, qrels, runs = _subspace_data(31)
    enc = DictEncoder(vectors)
    measures = [FD(encoder=enc) @ 1, FD(encoder=enc) @ 10, FD(encoder=enc, urr=True) @ 10]
    calls = _counted(monkeypatch, weighted, 'relevant_leave_outs')
    table = _per_query_experiment(runs, qrels, measures)
    assert len(calls) == 1
    qrels_ir = prepare_qrels(pt.model.to_ir_measures(qrels), 'qrels')
    judgments = Judgments(qrels_ir)
    for name, run in runs.items():
        sets = select_vector_sets(measures, judgments, prepare_run(pt.model.to_ir_measures(run), 'run'))
        for m in measures:
            value = pf.evaluate({name: run}, qrels, [m]).iloc[0, 1]
            alone = leave_out_rows(m, vector_statistics(m, sets[m], judgments.query_names), value)
            got = table[(table.name == name) & (table.measure == str(m))].set_index('qid')['value']
            want = dict(zip(judgments.query_names, alone))
            np.testing.assert_allclose([got[q] for q in want], list(want.values()), rtol=1e-9)


def test_an_encoder_without_a_content_identity_never_reuses_another_vectors_leave_outs():
    """Two encoders of the same class and docnos but different vectors (no content identity: the relevant vectors'
    digest keys the shared leave-outs) on the same qrels: each evaluation's rows are its own."""
    from pyterrier_frechet.evaluation.experiment_rows import leave_out_rows
    from pyterrier_frechet.evaluation.frames import prepare_qrels, prepare_run
    from pyterrier_frechet.evaluation.selection import Judgments
    from pyterrier_frechet.evaluation.vector_sets import select_vector_sets
    from pyterrier_frechet.evaluation.vector_statistics import vector_statistics
    vectors, qrels, runs = _subspace_data(32)
    moved = {k: v * 1.5 + 0.1 for k, v in vectors.items()}
    qrels_ir = pt.model.to_ir_measures(qrels)
    for vecs in (vectors, moved):
        m = FD(encoder=DictEncoder(vecs)) @ 10
        rows = {r.query_id: r.value for r in ir_measures.iter_calc([m], qrels_ir, pt.model.to_ir_measures(runs['a']))}
        judgments = Judgments(prepare_qrels(qrels_ir, 'qrels'))
        sets = select_vector_sets([m], judgments, prepare_run(pt.model.to_ir_measures(runs['a']), 'run'))[m]
        value = pf.evaluate({'a': runs['a']}, qrels, [m]).iloc[0, 1]
        alone = leave_out_rows(m, vector_statistics(m, sets, judgments.query_names), value)
        np.testing.assert_allclose([rows[q] for q in judgments.query_names], alone, rtol=1e-9)


def test_pt_experiment_forms_rows_only_where_something_reads_them(monkeypatch):
    """Issue 50: pt.Experiment without baseline=, perquery= or save_dir= averages the rows and drops them, so each row
    is FD itself (no leave-outs); the table is the same. With baseline= (its paired test reads them) or perquery=True
    the centred pseudo-values are formed."""
    import pyterrier_frechet.evaluation.experiment_rows as er
    vectors, qrels, runs = _subspace_data(34)
    m = FD(encoder=DictEncoder(vectors)) @ 10
    topics = qrels[['qid']].drop_duplicates().assign(query='x')
    systems = [pt.Transformer.from_df(r) for r in runs.values()]
    calls = []
    original = er.leave_out_rows
    monkeypatch.setattr(er, 'leave_out_rows', lambda *a, **k: calls.append(1) or original(*a, **k))
    plain = pt.Experiment(systems, topics, qrels, eval_metrics=[m], names=list(runs))
    assert calls == []
    evaluated = pf.evaluate(runs, qrels, [m]).set_index('name').iloc[:, 0]
    np.testing.assert_allclose(plain.set_index('name')[str(m)], evaluated.loc[list(runs)], rtol=1e-12)
    tested = pt.Experiment(systems, topics, qrels, eval_metrics=[m], names=list(runs), baseline=0)
    assert len(calls) == len(runs)
    np.testing.assert_allclose(tested.set_index('name')[str(m)], evaluated.loc[list(runs)], rtol=1e-12)
    assert 0 < tested[f'{m} p-value'].iloc[1] < 1  # the jackknife t-test, not constant rows
    per_query = pt.Experiment(systems, topics, qrels, eval_metrics=[m], names=list(runs), perquery=True)
    assert len(calls) == 2 * len(runs)
    assert per_query.groupby('name')['value'].nunique().min() > 1  # pseudo-values, not FD repeated


def test_influence_rows_are_the_first_order_leave_outs_and_share_the_relevant_factor(monkeypatch):
    """FD(rows='influence'): each unit's row is FD + (n − 1)(g_q − ḡ) with g_q = ∂FD/∂w_q, here taken by central
    finite differences of the bootstrap's re-weighting (weighted_fds, a route that shares no code with the closed
    form), on singular covariances (rank 20 of 24 dimensions); the column is pf.evaluate's value; the relevant side's
    factor is made once for both runs and all three measures; the exact rows stay the default."""
    import pyterrier_frechet.core.influence as influence
    from pyterrier_frechet.core.weighted import weighted_fds
    from pyterrier_frechet.evaluation.frames import prepare_qrels, prepare_run
    from pyterrier_frechet.evaluation.selection import Judgments
    from pyterrier_frechet.evaluation.vector_sets import select_vector_sets
    from pyterrier_frechet.evaluation.vector_statistics import vector_statistics
    vectors, qrels, runs = _subspace_data(35)
    enc = DictEncoder(vectors)
    measures = [FD(encoder=enc, rows='influence') @ 1, FD(encoder=enc, rows='influence') @ 10,
                FD(encoder=enc, urr=True, rows='influence') @ 10]
    calls = _counted(monkeypatch, influence, 'relevant_factor')
    table = _per_query_experiment(runs, qrels, measures)
    assert len(calls) == 1
    judgments = Judgments(prepare_qrels(pt.model.to_ir_measures(qrels), 'qrels'))
    eps = 1e-5
    for name, run in runs.items():
        sets = select_vector_sets(measures, judgments, prepare_run(pt.model.to_ir_measures(run), 'run'))
        for m in measures:
            value = pf.evaluate({name: run}, qrels, [m]).iloc[0, 1]
            st = vector_statistics(m, sets[m], judgments.query_names)
            units = st.units.astype(float)
            n = int(units.sum())
            weights = np.repeat(units[None], 2 * n, axis=0)
            where = np.flatnonzero(st.units)
            weights[np.arange(n), where] += eps
            weights[n + np.arange(n), where] -= eps
            fds = weighted_fds(st.rel, weights, [st.ret], [weights], st.shift)
            g = (fds[:n] - fds[n:]) / (2 * eps)
            want = value + (n - 1) * (g - g.mean())
            got = table[(table.name == name) & (table.measure == str(m))].set_index('qid')['value']
            np.testing.assert_allclose([got[q] for q in np.asarray(judgments.query_names)[where]], want, rtol=1e-6, atol=1e-8)
            assert got.mean() == pytest.approx(value, rel=1e-12)
    exact = _per_query_experiment({'a': runs['a']}, qrels, [FD(encoder=enc) @ 10])['value'].to_numpy()
    assert not np.allclose(exact, table[(table.name == 'a') & (table.measure == str(measures[1]))]['value'].to_numpy())


def test_influence_rows_are_refused_with_the_jackknife_pseudo_values(toy):
    vectors, qrels, run = toy
    m = FD(encoder=DictEncoder(vectors), rows='influence', jackknife=True) @ 3
    with pytest.raises(ValueError, match="rows='influence' is not available with jackknife=True"):
        list(ir_measures.iter_calc([m], pt.model.to_ir_measures(qrels), pt.model.to_ir_measures(run)))


def _said(caught, text) -> int:
    return sum(text in str(w.message) for w in caught)


@pytest.mark.parametrize('plan', ['flat', 'tree'])
def test_pt_experiment_says_what_the_rows_columns_and_the_threshold_are_once_per_call(plan):
    """Issue 63 items 5 and 6: in pt.Experiment (the path the README leads with) graded qrels name the relevance
    threshold FD uses, and baseline= says that FD's '+'/'-' columns count pseudo-values, not wins and losses — each
    once per call, not once per system, and again in the next call (PyTerrier evaluates each system on its own)."""
    vectors, qrels, runs = _subspace_data(35)
    runs['c'] = runs['b'].assign(score=lambda f: -f['score'])
    graded = qrels.assign(label=qrels['label'] * 2)  # labels 0 and 2
    m = FD(encoder=DictEncoder(vectors)) @ 10
    topics = qrels[['qid']].drop_duplicates().assign(query='x')
    systems = [pt.Transformer.from_df(r) for r in runs.values()]

    def run(q, **kw):
        return pt.Experiment(systems, topics, q, eval_metrics=[m, ir_measures.nDCG @ 10], names=list(runs), plan=plan,
                             **kw)

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter('always')
        run(graded, baseline=0)
        run(graded, baseline=0)
    assert _said(caught, f'graded qrels (labels up to 2): {m} count label >= 1') == 2  # once per call over three systems
    assert _said(caught, 'count queries whose pseudo-value is above / below the baseline') == 2
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter('always')
        run(qrels)  # binary labels, no baseline: neither note
        pt.Experiment(systems, topics, graded, eval_metrics=[FD(encoder=DictEncoder(vectors), rel=2) @ 10],
                      names=list(runs), baseline=0, plan=plan)  # rel given: no threshold note
    assert _said(caught, 'graded qrels') == 0 and _said(caught, 'pseudo-value is above') == 1
    # FD(jackknife=True)'s rows are its own pseudo-values: the same note names it (round seven: it was left out)
    jack = FD(encoder=DictEncoder(vectors), jackknife=True) @ 10
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter('always')
        pt.Experiment(systems, topics, qrels, eval_metrics=[jack], names=list(runs), baseline=0, plan=plan)
    assert [str(w.message).split(' in pt.Experiment')[0] for w in caught if 'pseudo-value is above' in str(w.message)] \
        == [str(jack)]


def test_constant_rows_are_said_only_where_something_reads_the_rows(toy):
    """A measure without a leave-out path (KID) in pt.Experiment: without baseline= its rows are only averaged into the
    table, so nothing is wrong and nothing is said; with baseline= its paired test is meaningless, said once."""
    vectors, qrels, run = toy
    m = pf.KID(encoder=DictEncoder(vectors)) @ 3
    topics = qrels[['qid']].drop_duplicates().assign(query='x')
    systems = [pt.Transformer.from_df(run), pt.Transformer.from_df(run.assign(score=-run['score']))]
    for baseline, said in ((None, 0), (0, 1)):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter('always')
            pt.Experiment(systems, topics, qrels, eval_metrics=[m], names=['a', 'b'], baseline=baseline)
        assert sum('rows repeat its value' in str(w.message) for w in caught) >= said
        if not said:
            assert not any('rows repeat its value' in str(w.message) for w in caught)
