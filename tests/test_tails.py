"""core.tails: κ = Var‖x − μ‖² / (2 Tr Σ²) against closed forms, and the bootstrap's heavy-tail caveat."""
import numpy as np
import pandas as pd
import pytest

import pyterrier_frechet as pf
from pyterrier_frechet.core.tails import (HEAVY_NORM_CV, HEAVY_TAILED, heavy_tail_note, heavy_tailed, norm_dispersion,
                                          squared_distance_dispersion)
from conftest import DictEncoder


def test_gaussian_vectors_give_one_in_any_dimension():
    # Var(‖x − μ‖²) = 2 Tr Σ² for x ~ N(μ, Σ): κ = 1, anisotropic or not, whatever d is against n
    rng = np.random.default_rng(0)
    for d in (5, 50, 384):
        kappas = [squared_distance_dispersion(rng.normal(size=(1500, d)) * rng.uniform(0.2, 3.0, size=d) + 7.0)
                  for _ in range(4)]
        assert np.mean(kappas) == pytest.approx(1.0, abs=0.06), d


def test_multivariate_t_gives_its_closed_form():
    # x = z/√w, w ~ χ²_ν/ν, d isotropic dimensions: κ = (d + ν − 2)/(ν − 4); ν = 12, d = 8 gives 2.25
    rng = np.random.default_rng(1)
    d, nu = 8, 12
    kappas = [squared_distance_dispersion(rng.normal(size=(2000, d)) / np.sqrt(rng.chisquare(nu, size=(2000, 1)) / nu))
              for _ in range(6)]
    assert np.mean(kappas) == pytest.approx((d + nu - 2) / (nu - 4), rel=0.1)


def test_unit_norm_vectors_about_a_zero_mean_give_about_zero():
    x = np.random.default_rng(2).normal(size=(1000, 40))
    x /= np.linalg.norm(x, axis=1, keepdims=True)
    assert squared_distance_dispersion(x) < 0.02


def test_large_sets_are_subsampled_reproducibly_and_degenerate_ones_give_nan():
    x = np.random.default_rng(3).normal(size=(3000, 6))
    assert squared_distance_dispersion(x, max_rows=500, seed=4) == squared_distance_dispersion(x, max_rows=500, seed=4)
    assert squared_distance_dispersion(x, max_rows=500, seed=4) != squared_distance_dispersion(x, max_rows=500, seed=5)
    assert np.isnan(squared_distance_dispersion(x[:2])) and np.isnan(squared_distance_dispersion(np.ones((5, 3))))
    with pytest.raises(ValueError, match='2-D'):
        squared_distance_dispersion(np.ones(5))


def test_norm_dispersion_is_the_coefficient_of_variation_of_the_lengths():
    x = np.array([[3.0, 4.0], [0.0, 1.0], [6.0, 8.0]])  # norms 5, 1, 10: mean 16/3, sd √(sum of squares / 2)
    norms = np.array([5.0, 1.0, 10.0])
    assert norm_dispersion(x) == pytest.approx(np.sqrt(((norms - 16 / 3) ** 2).sum() / 2) / (16 / 3), rel=1e-12)
    unit = np.random.default_rng(5).normal(size=(50, 8))
    assert norm_dispersion(unit / np.linalg.norm(unit, axis=1, keepdims=True)) < 1e-15
    assert np.isnan(norm_dispersion(x[:1])) and np.isnan(norm_dispersion(np.zeros((3, 2))))


def test_heavy_tailed_needs_both_kappa_and_unequal_lengths():
    rng = np.random.default_rng(6)
    t = rng.normal(size=(1500, 16)) / np.sqrt(rng.chisquare(5, size=(1500, 1)) / 5)
    kappa, cv, heavy = heavy_tailed(t)
    assert kappa > HEAVY_TAILED and cv > HEAVY_NORM_CV and heavy
    # the same directions at unit length: κ small, CV 0
    assert heavy_tailed(t / np.linalg.norm(t, axis=1, keepdims=True))[2] is False
    # Gaussian vectors in few dimensions have unequal lengths (CV ≈ 1/√(2d) = 0.18 at d = 16) but κ ≈ 1
    kappa, cv, heavy = heavy_tailed(rng.normal(size=(1500, 16)))
    assert cv > HEAVY_NORM_CV and kappa < HEAVY_TAILED and not heavy


def test_the_note_names_both_statistics_above_their_thresholds_only():
    assert heavy_tail_note(None, None) == heavy_tail_note(float('nan'), 0.5) == heavy_tail_note(3.0, 0.1) == ''
    assert heavy_tail_note(HEAVY_TAILED, 0.5) == heavy_tail_note(1.2, 0.5) == ''
    assert heavy_tail_note(3.14159, 0.3071) == (f'not calibrated: heavy-tailed vectors, κ = 3.1 > {HEAVY_TAILED} and '
                                                f'norm CV = 0.31 > {HEAVY_NORM_CV}')


def _world(heavy: bool, seed: int = 0):
    """30 queries, 6 relevant and 5 retrieved documents each, 6-d vectors: Student t with 3 degrees of freedom
    (unnormalised, heavy-tailed) or the same directions at unit length."""
    rng = np.random.default_rng(seed)
    vectors, qrels, runs = {}, [], {'a': [], 'b': []}
    for q in range(30):
        centre = rng.normal(size=6)
        for i in range(6):
            v = centre + rng.normal(size=6) / np.sqrt(rng.chisquare(3) / 3)
            vectors[f'q{q}r{i}'] = v if heavy else v / np.linalg.norm(v)
            qrels.append((f'q{q}', f'q{q}r{i}', 1))
        for name, shift in (('a', 0.5), ('b', 1.5)):
            for j in range(5):
                v = centre + shift + rng.normal(size=6) / np.sqrt(rng.chisquare(3) / 3)
                vectors[f'q{q}{name}{j}'] = v if heavy else v / np.linalg.norm(v)
                runs[name].append((f'q{q}', f'q{q}{name}{j}', 5.0 - j))
    return (vectors, pd.DataFrame(qrels, columns=['qid', 'docno', 'label']),
            {k: pd.DataFrame(v, columns=['qid', 'docno', 'score']) for k, v in runs.items()})


def test_bootstrap_and_compare_say_when_the_relevant_vectors_are_heavy_tailed(caplog):
    vectors, qrels, runs = _world(heavy=True)
    kappa, cv, heavy = heavy_tailed(np.stack([vectors[d] for d in qrels.docno]))
    assert heavy and kappa > 2 * HEAVY_TAILED
    m = pf.FD(encoder=DictEncoder(vectors)) @ 5
    with caplog.at_level('WARNING'):
        boot = pf.bootstrap(runs, qrels, [m, 'nDCG@5'], n_samples=50, seed=0, verbose=False)
    note = heavy_tail_note(kappa, cv)
    fd_rows = boot.summary[boot.summary.measure == str(m)]
    assert (fd_rows.interval == f'jackknife_log ({note})').all() and boot.caveats == {str(m): note}
    assert (boot.summary[boot.summary.measure == 'nDCG@5'].interval == 'percentile').all()  # not a vector measure
    assert 'the relevant vectors are heavy-tailed' in caplog.text
    table = pf.compare_systems(runs, qrels, [m], boot=boot, verbose=False, n_permutations=0)
    assert table.interval.tolist() == [f'jackknife ({note})']
    # the same directions at unit length (the calibrated setting): no caveat
    vectors, qrels, runs = _world(heavy=False)
    boot = pf.bootstrap(runs, qrels, [pf.FD(encoder=DictEncoder(vectors)) @ 5], n_samples=50, seed=0, verbose=False)
    assert (boot.summary.interval == 'jackknife_log').all() and boot.caveats == {}


def test_the_paper_table_caption_carries_the_caveat():
    vectors, qrels, runs = _world(heavy=True)
    m = pf.FD(encoder=DictEncoder(vectors)) @ 5
    boot = pf.bootstrap(runs, qrels, [m], n_samples=50, seed=0, verbose=False)
    caption = pf.PaperTable.from_results(boot, [m]).caption()
    assert f'({boot.caveats[str(m)]})' in caption
