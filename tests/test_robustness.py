"""Sparsified judgments and encoder robustness (analyses/robustness.py): a hand-built case, and an encoder that
scales FD by exactly 4."""
import numpy as np
import pandas as pd
import pytest
from ir_measures import P

import pyterrier_frechet as pf
from pyterrier_frechet.analyses.robustness import sparsify, summarise
from conftest import DictEncoder


def test_sparsify_hand_built_case():
    # q1 judges a (grade 2) and b (grade 1). System A ranks a first, B ranks b first, C ranks neither.
    qrels = pd.DataFrame({'qid': ['1', '1'], 'docno': ['a', 'b'], 'label': [2, 1]})
    run = lambda first: pd.DataFrame({'qid': ['1', '1'], 'docno': [first, 'z'], 'score': [2.0, 1.0]})
    runs = {'A': run('a'), 'B': run('b'), 'C': run('y')}
    # P@1 with full qrels: A=1, B=1, C=0; keeping 1 relevant per query keeps a (highest grade): A=1, B=0, C=0.
    # Kendall tau-b of [1,1,0] vs [1,0,0]: one concordant pair, one tie in each: (1-0)/sqrt(2*2) = 0.5
    result = sparsify(runs, qrels, [P @ 1], per_query=[1, 2], seeds=[0, 1])
    by_n = result.set_index(['per_query', 'seed'])['kendall_tau']
    assert by_n.loc[(1, 0)] == pytest.approx(0.5) and by_n.loc[(1, 1)] == pytest.approx(0.5)
    assert by_n.loc[(2, 0)] == pytest.approx(1.0)  # nothing removed
    s = summarise(result).set_index('per_query')
    assert s.loc[1, 'mean'] == pytest.approx(0.5) and s.loc[1, 'seeds'] == 2


def test_encoder_robustness(toy):
    vectors, qrels, run = toy
    runs = {'fwd': run, 'rev': run.assign(score=-run.score),
            'mid': run.assign(score=np.where(run.docno.str[1:].astype(int) % 2 == 0, run.score, -run.score))}
    doubled = DictEncoder({k: 2 * v for k, v in vectors.items()})  # FD scales by exactly 4: same ranking
    table, agreement = pf.encoder_robustness(runs, qrels, {'base': DictEncoder(vectors), 'x2': doubled}, pf.FD @ 3)
    assert list(table.columns) == ['name', 'FD@3 [base]', 'FD@3 [x2]']
    np.testing.assert_allclose(table['FD@3 [x2]'], 4 * table['FD@3 [base]'], rtol=1e-9)
    assert agreement.iloc[0].kendall_tau == pytest.approx(1.0)
    with pytest.raises(ValueError, match='at least two'):
        pf.encoder_robustness(runs, qrels, {'base': DictEncoder(vectors)})
