"""The torch backend of the bootstrap and the leave-outs (analyses/torch_backend.py), on the CPU: the numpy values."""
import numpy as np
import pytest

from pyterrier_frechet.core.weighted import QueryStats, jackknife_groups, leave_out_fds
from test_weighted import _synthetic


def test_torch_batches_the_leave_out_fds_to_the_numpy_values():
    pytest.importorskip('torch')
    from pyterrier_frechet.analyses.torch_backend import fd_pairs_torch
    rel, rel_q, ret, ret_q = _synthetic(seed=5, n_queries=70)
    shift = rel.mean(axis=0)
    r, t = QueryStats(rel_q, rel, 70, shift, 0), QueryStats(ret_q, ret, 70, shift, 0)
    units = np.ones(70, dtype=bool)
    groups, g = jackknife_groups(units)
    ref = leave_out_fds(r, t, units, groups, g, shift)
    got = leave_out_fds(r, t, units, groups, g, shift, fd_batch=lambda pairs: fd_pairs_torch(pairs, device='cpu'))
    np.testing.assert_allclose(got, ref, rtol=1e-9)
