"""pyterrier_frechet/progress.py: quiet_progress silences the progress bars of the libraries the package drives
(pyterrier-dr's pt.tqdm without a switch, transformers' weight loading) and restores them on exit, also after an
error; not quiet, it changes nothing."""
import io

import pyterrier as pt
import pytest
import transformers

from pyterrier_frechet.progress import quiet_progress


def _drawn(**kw) -> str:
    out = io.StringIO()
    for _ in pt.tqdm(range(3), file=out, **kw):
        pass
    return out.getvalue()


def test_quiet_silences_pt_tqdm_and_transformers_then_restores_both():
    original = pt.tqdm
    assert '3/3' in _drawn()
    assert transformers.utils.logging.is_progress_bar_enabled()
    with quiet_progress():
        assert _drawn() == ''
        assert not transformers.utils.logging.is_progress_bar_enabled()
    assert pt.tqdm is original and '3/3' in _drawn()
    assert transformers.utils.logging.is_progress_bar_enabled()


def test_restored_after_an_error_and_unchanged_when_not_quiet():
    original = pt.tqdm
    with pytest.raises(RuntimeError):
        with quiet_progress():
            raise RuntimeError('inside')
    assert pt.tqdm is original and transformers.utils.logging.is_progress_bar_enabled()
    with quiet_progress(False):
        assert pt.tqdm is original and '3/3' in _drawn()
