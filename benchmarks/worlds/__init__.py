"""Test worlds for coverage / level / power studies of IR evaluation statistics (see README.md)."""
from .core import Population, QuerySample, World, ndcg_matrix, per_query_ndcg, pooled_moments
from .synthetic import (SyntheticWorld, SystemSpec, heavy_world, independent_world, sphere_world, topics_world)


def cranfield_world(d: int = 384, seed: int = 0):
    """(d) the real-data world (imported lazily: it reads /work/shared)."""
    from .cranfield import CranfieldWorld
    return CranfieldWorld(d, seed)


def scifact_world(d: int = 384, seed: int = 0):
    """(d') SciFact test queries (needs data/scifact_corpus.minilm.f16.npy from encode_data --scifact-corpus)."""
    from .cranfield import CranfieldWorld
    return CranfieldWorld(d, seed, dataset='scifact')


def cranfield_raw_world(d: int = 384, seed: int = 0):
    """(d'') Cranfield with MiniLM's vectors before its final normalisation (unequal lengths, norms 1.5–6.4: an
    unnormalised encoder; data/cranfield_corpus.minilm-raw.f32.npy from encode_data --cranfield-raw); same runs."""
    from .cranfield import CranfieldWorld
    return CranfieldWorld(d, seed, raw=True)


def dl19_world(d: int = 384, seed: int = 0, rel: int = 2):
    """(e) TREC DL 2019 passage (43 queries, relevant at grade >= 2, five real first-stage runs, shared MiniLM
    vectors) as a finite population: real data with very unequal relevant counts (3 to 219 per query; heavy queries
    common, not rare: 11 of 43 have 100 or more)."""
    from .cranfield import DL19World
    return DL19World(d, seed, rel=rel)


def dl19_rel1_world(d: int = 384, seed: int = 0):
    """(e') the same at grade >= 1 (the package's default ``rel``): more relevant passages per query, less unequal
    (Kish share (sum R)^2 / (n sum R^2) 0.57 against 0.46 at grade >= 2)."""
    return dl19_world(d, seed, rel=1)


def dl19_runs_world(d: int = 384, seed: int = 0):
    """(e'') TREC DL 2019 with all 19 real runs, queries drawn with replacement from its 43 (the empirical
    distribution as the population): many close systems, for the Kendall τ interval."""
    from .cranfield import DL19RunsWorld
    return DL19RunsWorld(d, seed)


def lognormal_world(kind: str):
    """unseen_world's worlds (``sphere``, ``clustered``, ``hub_lognorm``; ``sigma``: sd of the log relevant-set size,
    default 1.1; the study's world seed 12345)."""
    def make(d: int = 128, seed: int = 12345, sigma=None):
        from .lognormal import LognormalWorld
        return LognormalWorld(kind + (f'-s{sigma}' if sigma is not None else ''), d, seed)
    return make


def graded_world(d: int = 128, seed: int = 0):
    """unseen_world2's graded world (labels 0-3, relevant at >= 2, shared popular documents, short runs)."""
    from .graded import GradedWorld
    return GradedWorld(d, seed)


def aniso_world(d: int = 128, seed: int = 0):
    """unseen_world2's anisotropic world (a few very large relevant sets, hard queries, near duplicates)."""
    from .graded import AnisoWorld
    return AnisoWorld(d, seed)


def grouped_world(d: int = 128, seed: int = 12345, interaction: bool = False):
    """grouped_world's topics of 1-12 queries (shared centre, distractor, difficulty, richness)."""
    from .grouped import GroupedWorld
    return GroupedWorld(d, seed, interaction)


def tau_world(d: int = 384, seed: int = 20261126):
    """unseen_tau's 12 systems (d = 384 only), queries indexed by the generator."""
    if d != 384:
        raise ValueError(f'world tau12 has d = 384 only, got {d}')
    from .tau import TauWorld
    return TauWorld(seed)


WORLDS = {'independent': independent_world, 'topics': topics_world, 'heavy': heavy_world,
          'sphere': sphere_world, 'cranfield': cranfield_world, 'scifact': scifact_world,
          'cranfield-raw': cranfield_raw_world, 'dl19': dl19_world, 'dl19-rel1': dl19_rel1_world,
          'dl19-runs': dl19_runs_world}
#: the worlds of the one-off studies (their own default seeds; no population quantities)
STUDY_WORLDS = {'lognormal-sphere': lognormal_world('sphere'), 'lognormal-clustered': lognormal_world('clustered'),
          'lognormal-hub': lognormal_world('hub_lognorm'), 'graded': graded_world, 'aniso': aniso_world,
          'grouped': grouped_world, 'grouped-interact': lambda d=128, seed=12345: grouped_world(d, seed, True),
                'tau12': tau_world}
WORLDS.update(STUDY_WORLDS)


def make_world(name: str, d: int = 16, seed=None, **kw) -> World:
    """A world by name: one of WORLDS (``seed=None``: the world's own default seed, 0 for the calibration worlds)."""
    if name not in WORLDS:
        raise ValueError(f'unknown world {name!r}; choose one of {sorted(WORLDS)}')
    return WORLDS[name](d, **({} if seed is None else {'seed': seed}), **kw)


__all__ = ['Population', 'QuerySample', 'World', 'SyntheticWorld', 'SystemSpec', 'independent_world',
           'topics_world', 'heavy_world', 'sphere_world', 'cranfield_world', 'scifact_world', 'cranfield_raw_world',
           'dl19_world', 'dl19_rel1_world', 'dl19_runs_world', 'make_world', 'WORLDS', 'STUDY_WORLDS',
           'ndcg_matrix', 'per_query_ndcg', 'pooled_moments']
