"""evaluation/experiment_call.py, outside pt.Experiment (inside it: test_experiment_rows.py, test_leave_one_out.py,
test_experiment_differential.py): every caller of ir_measures reads the rows, no paired test of PyTerrier's is run,
and a note is said on every call (no pt.Experiment call to say it once for)."""
import warnings

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
