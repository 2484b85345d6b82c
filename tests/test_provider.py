"""The ir_measures provider (evaluation/provider.py) under pt.Experiment: one evaluation context per qrels (the
relevant set reduced once, the qrels prepared once for many systems), and pt.Experiment(batch_size=...) refused."""
import ir_measures
import numpy as np
import pandas as pd
import pyterrier as pt
import pytest
from ir_measures import nDCG

import pyterrier_frechet as pf
from pyterrier_frechet import FD
from conftest import DictEncoder


def test_relevant_set_is_reduced_once_for_many_runs(toy, monkeypatch):
    # pt.Experiment over many systems shares one relevant set: the provider's evaluation context (one per qrels)
    # reduces it once (checked by a digest of its vectors), and the values equal the direct computation
    from pyterrier_frechet.core import frechet as core_frechet
    from pyterrier_frechet.core.frechet import frechet_distance
    from pyterrier_frechet.evaluation.vector_sets import fd_sets
    vectors, qrels, run = toy
    calls = []
    real = core_frechet.reduce_set
    counting = lambda x: calls.append(len(x)) or real(x)
    monkeypatch.setattr(core_frechet, 'reduce_set', counting)  # both sides
    m = pf.FD(encoder=DictEncoder(vectors)) @ 5
    runs = [run, run.assign(score=-run.score), run[run.qid != 'q2']]
    values = [ir_measures.calc_aggregate([m], pt.model.to_ir_measures(qrels), pt.model.to_ir_measures(r))[m] for r in runs]
    rel = np.stack([vectors[d] for d in qrels[qrels.label >= 1].docno])
    assert calls[0] == len(rel) and calls.count(len(rel)) == 1 and len(calls) == 4  # relevant once, 3 retrieved
    for r, value in zip(runs, values):  # the retrieved documents as the provider selects them (tested elsewhere)
        top = fd_sets(m, pt.model.to_ir_measures(qrels), pt.model.to_ir_measures(r)).retrieved
        assert value == pytest.approx(frechet_distance(rel, np.stack([vectors[d] for d in top.doc_id])), rel=1e-10)


@pytest.mark.parametrize('precompute', [False, True])
def test_experiment_with_batch_size_is_refused(toy, precompute):
    # S7: pt.Experiment(batch_size=2) used to give FD 5.02 for 1.70 without a sign: each batch is evaluated on its own
    vectors, qrels, run = toy
    m = FD(encoder=DictEncoder(vectors)) @ 3
    topics = pd.DataFrame({'qid': ['q1', 'q2', 'q3'], 'query': ''})
    system = pt.Transformer.from_df(run)
    kwargs = {'precompute_prefix': True} if precompute else {}
    with pytest.raises(ValueError, match=r'pt.Experiment\(batch_size=2\) evaluates each batch .* drop batch_size'):
        pt.Experiment([system], topics, qrels, eval_metrics=[m, nDCG @ 3], batch_size=2, **kwargs)
    # without batch_size: the value of the whole query set
    table = pt.Experiment([system], topics, qrels, eval_metrics=[m])
    assert table[str(m)][0] == ir_measures.calc_aggregate([m], pt.model.to_ir_measures(qrels), pt.model.to_ir_measures(run))[m]


def test_experiment_prepares_the_qrels_once_and_an_edited_frame_again(toy, monkeypatch):
    # ir_measures builds an evaluator per system and PyTerrier copies the qrels for each: the provider's memo (by the
    # frame's content) prepares and codes them once for the 3 systems; changed content is a new evaluation
    from pyterrier_frechet.evaluation import selection
    vectors, qrels, run = toy
    made = []
    real = selection.Judgments.__init__
    monkeypatch.setattr(selection.Judgments, '__init__', lambda self, q: made.append(len(q)) or real(self, q))
    m = FD(encoder=DictEncoder(vectors)) @ 3
    systems = [pt.Transformer.from_df(r) for r in (run, run.assign(score=-run.score), run[run.qid != 'q2'])]
    topics = pd.DataFrame({'qid': ['q1', 'q2', 'q3'], 'query': ''})
    table = pt.Experiment(systems, topics, qrels, eval_metrics=[m, pf.DO @ 3, nDCG @ 3])
    assert made == [len(qrels)]
    alone = [ir_measures.calc_aggregate([m], pt.model.to_ir_measures(qrels), pt.model.to_ir_measures(s.transform(topics)))[m]
             for s in systems]
    assert table[str(m)].tolist() == pytest.approx(alone, rel=1e-12)  # one Judgments for 3 systems, or one each
    edited = qrels.assign(label=np.where(qrels.docno == qrels.docno.iloc[0], 0, qrels.label))
    again = pt.Experiment(systems[:1], topics, edited, eval_metrics=[m])
    assert len(made) == 2 and again[str(m)][0] != table[str(m)][0]
