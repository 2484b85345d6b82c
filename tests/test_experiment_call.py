"""evaluation/experiment_call.py, outside pt.Experiment (inside it: test_experiment_rows.py, test_leave_one_out.py,
test_experiment_differential.py): every caller of ir_measures reads the rows, no paired test of PyTerrier's is run,
and a note is said on every call (no pt.Experiment call to say it once for)."""
import warnings

import pytest

from pyterrier_frechet.evaluation.experiment_call import paired_test_is_run, rows_are_read, warn_once_per_experiment


def test_outside_pt_experiment_the_rows_are_read_and_no_paired_test_is_run():
    assert rows_are_read() is True
    assert paired_test_is_run() is False


def test_outside_pt_experiment_a_note_is_said_on_every_call():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter('always')
        warn_once_per_experiment('a note')
        warn_once_per_experiment('a note')
    assert [str(w.message) for w in caught] == ['a note', 'a note']


@pytest.mark.parametrize('plan', ['flat', 'tree'])
def test_a_refusal_inside_pt_experiment_names_the_system(plan):
    """Round seven: with several systems, "20 row(s) of the run have a missing or non-numeric 'score'" did not say
    whose run; pf.evaluate names it. caller().system gives the name from names= (else the position)."""
    import numpy as np
    import pandas as pd
    import pyterrier as pt
    import pyterrier_frechet as pf
    from conftest import DictEncoder
    rng = np.random.default_rng(0)
    vectors = {f'd{i}': rng.normal(size=4) for i in range(60)}
    topics = pd.DataFrame({'qid': [f'q{q}' for q in range(6)], 'query': ['x'] * 6})
    qrels = pd.DataFrame([(f'q{q}', f'd{q * 10 + i}', 1) for q in range(6) for i in range(3)],
                         columns=['qid', 'docno', 'label'])
    run = pd.DataFrame([(f'q{q}', f'd{q * 10 + i}', 10.0 - i) for q in range(6) for i in range(10)],
                       columns=['qid', 'docno', 'score'])
    bad = run.copy()
    bad.loc[::3, 'score'] = np.nan
    systems = [pt.Transformer.from_df(r, uniform=True) for r in (run, bad)]
    fd = pf.FD(encoder=DictEncoder(vectors)) @ 10
    with pytest.raises(ValueError, match=r"^pt\.Experiment system 'dense': 20 row\(s\) of the run have a missing"):
        pt.Experiment(systems, topics, qrels, [fd], names=['BM25', 'dense'], plan=plan)
    with pytest.raises(ValueError, match=r"^pt\.Experiment system (1|'.*'): 20 row\(s\)"):
        pt.Experiment(systems, topics, qrels, [fd], plan=plan)
    with pytest.raises(ValueError, match=r"^run 'dense': 20 row\(s\)"):  # pf.evaluate's own words, unchanged
        pf.evaluate({'BM25': run, 'dense': bad}, qrels, [fd])
