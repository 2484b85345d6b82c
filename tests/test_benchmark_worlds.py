"""The study worlds moved into benchmarks/worlds draw bit-identical query sets: each is compared, for the same seeds,
with its code as it stood in its study folder (read from git at the commit before the move), so every recorded number
of those studies stays reproducible; and each world's ``draw`` (the harness's interface) holds its native draw."""
import subprocess
import types
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[1]
BEFORE = '88c9b6b'   # the last commit with the worlds in their study folders


def old_module(path: str):
    try:
        source = subprocess.run(['git', '-C', str(ROOT), 'show', f'{BEFORE}:{path}'], capture_output=True, text=True,
                                check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        pytest.skip(f'git history with {BEFORE}:{path} is not available')
    module = types.ModuleType(path.replace('/', '_'))
    exec(compile(source, path, 'exec'), module.__dict__)
    return module


def assert_same(old, new):
    """Equal nested structures of arrays, dicts, tuples, lists and scalars (arrays bit for bit)."""
    assert type(old) is type(new) or isinstance(old, np.ndarray)
    if isinstance(old, dict):
        assert list(old) == list(new)
        for key in old:
            assert_same(old[key], new[key])
    elif isinstance(old, (list, tuple)):
        assert len(old) == len(new)
        for a, b in zip(old, new):
            assert_same(a, b)
    elif isinstance(old, np.ndarray):
        assert old.dtype == new.dtype and old.shape == new.shape
        np.testing.assert_array_equal(old, new)
    else:
        assert old == new


@pytest.mark.parametrize('kind', ['sphere', 'clustered', 'hub_lognorm', 'sphere-s0.9'])
def test_lognormal_is_unseen_world(kind):
    from benchmarks.worlds import lognormal
    old = old_module('benchmarks/unseen_world/worlds.py')
    for seed in (999, 2024 + 8 + 5):
        a = old.draw_set(old.World(kind, 8), np.random.default_rng(seed), 5)
        b = lognormal.draw_set(lognormal.World(kind, 8), np.random.default_rng(seed), 5)
        assert_same(a, b)
        assert old.own_measures(a) == lognormal.own_measures(b)     # the study's own FD and nDCG, bit for bit
        sample = lognormal.World(kind, 8).draw(5, np.random.default_rng(seed))
        np.testing.assert_array_equal(sample.relevant, np.vstack([q[0] for q in a]))
        for s in old.SYSTEMS:
            np.testing.assert_array_equal(sample.retrieved[s][0], np.vstack([q[1][s][0] for q in a]))


@pytest.mark.parametrize('name', ['GradedWorld', 'AnisoWorld'])
def test_graded_is_unseen_world2(name):
    from benchmarks.worlds import graded
    old = old_module('benchmarks/unseen_world2/worlds.py')
    for seed in ([1, 8, 0], [2, 8, 100003]):
        ra, rb = np.random.default_rng(seed), np.random.default_rng(seed)
        a = [getattr(old, name)(8).sample_query(ra, i) for i in range(4)]
        b = [getattr(graded, name)(8).sample_query(rb, i) for i in range(4)]
        assert_same(a, b)
        sample = getattr(graded, name)(8).draw(4, np.random.default_rng(seed))
        np.testing.assert_array_equal(sample.relevant, np.vstack([q['V'][q['labels'] >= 2] for q in a]))


@pytest.mark.parametrize('interaction', [False, True])
def test_grouped_is_grouped_world(interaction):
    from benchmarks.worlds import grouped
    old = old_module('benchmarks/grouped_world/world.py')
    for seed in ([8, 3, 0], [8, 3, 777, 1]):
        a = old.draw_query_set(old.Space(8), 3, np.random.default_rng(seed), interaction=interaction)
        b = grouped.draw_query_set(grouped.Space(8), 3, np.random.default_rng(seed), interaction=interaction)
        assert_same(a, b)
        assert old.fd_all(a) == grouped.fd_all(b) and old.ndcg_all(a) == grouped.ndcg_all(b)
        n = len(a) - 1      # the last topic cut
        sample = grouped.GroupedWorld(8, interaction=interaction).draw(n, np.random.default_rng(seed))
        np.testing.assert_array_equal(sample.relevant, np.vstack([q['rel'] for q in a[:n]]))
        assert [q.split('_')[0] for q in sample.qids] == [f"t{q['group'][1:]}" for q in a[:n]]


def test_tau_is_unseen_tau():
    from benchmarks.worlds import tau
    old = old_module('benchmarks/unseen_tau/world.py')
    a_world, b_world = old.World(), tau.World()
    for stream, qi in ((1, 0), (2, 43), (3, 7)):
        assert_same(a_world.query(stream, qi), b_world.query(stream, qi))
    qs, new = old.QuerySet(a_world, 2, range(2)), tau.QuerySet(b_world, 2, range(2))
    np.testing.assert_array_equal(qs.rel_vectors(), new.rel_vectors())
    np.testing.assert_array_equal(old.fd_many(qs.rel_vectors(), [qs.ret_vectors(0)]),
                                  tau.fd_many(new.rel_vectors(), [new.ret_vectors(0)]))
    sample = tau.TauWorld().draw(2, np.random.default_rng(0))
    idx = np.random.default_rng(0).integers(2 ** 62, size=2)
    np.testing.assert_array_equal(sample.relevant, old.QuerySet(a_world, 4, idx).rel_vectors())
