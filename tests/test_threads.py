"""LAPACK on one BLAS thread (core/threads.py), the setting restored afterwards."""
import pytest


def test_lapack_runs_on_one_thread_and_the_setting_is_restored():
    # LAPACK factorisations on one BLAS thread (2x faster at FD's sizes on the project machine),
    # the previous setting back afterwards, also after an exception
    from threadpoolctl import threadpool_info
    from pyterrier_frechet.core.threads import single_threaded

    def blas_threads():
        return [info['num_threads'] for info in threadpool_info() if info['user_api'] == 'blas']

    before = blas_threads()

    @single_threaded
    def inside(fail=False):
        if fail:
            raise RuntimeError('boom')
        return blas_threads()

    assert inside() and set(inside()) == {1}
    assert blas_threads() == before
    with pytest.raises(RuntimeError):
        inside(fail=True)
    assert blas_threads() == before
