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


WORLDS = {'independent': independent_world, 'topics': topics_world, 'heavy': heavy_world,
          'sphere': sphere_world, 'cranfield': cranfield_world, 'scifact': scifact_world,
          'cranfield-raw': cranfield_raw_world, 'dl19': dl19_world, 'dl19-rel1': dl19_rel1_world,
          'dl19-runs': dl19_runs_world}


def make_world(name: str, d: int = 16, seed: int = 0, **kw) -> World:
    """A world by name: one of WORLDS."""
    if name not in WORLDS:
        raise ValueError(f'unknown world {name!r}; choose one of {sorted(WORLDS)}')
    return WORLDS[name](d, seed, **kw)


__all__ = ['Population', 'QuerySample', 'World', 'SyntheticWorld', 'SystemSpec', 'independent_world',
           'topics_world', 'heavy_world', 'sphere_world', 'cranfield_world', 'scifact_world', 'cranfield_raw_world',
           'dl19_world', 'dl19_rel1_world', 'dl19_runs_world', 'make_world', 'WORLDS',
           'ndcg_matrix', 'per_query_ndcg', 'pooled_moments']
