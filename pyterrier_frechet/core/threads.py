"""LAPACK's factorisations run single-threaded: the eigenvalue, singular-value, Cholesky and QR routines FD calls.

OpenBLAS (numpy's and scipy's) parallelises them over the machine's cores, but at FD's sizes (d×d with d of a few
hundred, or a few hundred × d) they are built mostly of level-2 steps whose threads cost more to wake and
synchronise than they save. Measured on the project's 2-core machine (``benchmarks/fd_kernel.py`` prints the same
comparison): the singular values of a 384×429 matrix take 47 ms on 2 threads and 21 ms on 1 (and as little as
13–15 ms when the threads were busy just before, which is why the cost hid in tight benchmark loops), ``eigvalsh``
of 384×384 17 vs 8 ms, a 430×384 QR 10 vs 7 ms; level-3 products (``gemm``, ``syrk``), which do gain from threads,
are left alone. The limit is :mod:`threadpoolctl`'s, set around each call and restored after (about 15 µs); it
is process-wide while it lasts, as every BLAS thread setting is.
"""
import functools
from contextlib import nullcontext

_CONTROLLER = None


def lapack_threads():
    """A context in which BLAS/LAPACK run on one thread."""
    global _CONTROLLER
    if _CONTROLLER is None:
        try:
            from threadpoolctl import ThreadpoolController
        except ImportError:  # pragma: no cover - threadpoolctl is a dependency; without it, threads as they are
            _CONTROLLER = False
        else:
            _CONTROLLER = ThreadpoolController()
    return _CONTROLLER.limit(limits=1, user_api='blas') if _CONTROLLER else nullcontext()


def single_threaded(function):
    """Decorate a function whose work is LAPACK factorisations: it runs with one BLAS thread."""
    @functools.wraps(function)
    def wrapper(*args, **kwargs):
        with lapack_threads():
            return function(*args, **kwargs)
    return wrapper

