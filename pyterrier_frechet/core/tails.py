"""How heavy-tailed a set of vectors is, as far as FD's intervals are concerned (pure numpy).

FD fits a Gaussian to each set. Its resampling intervals were calibrated in worlds whose vectors are Gaussian, unit-norm
(sentence embeddings such as MiniLM) or real MiniLM vectors, and they under-covered in one world: unnormalised
multivariate-t vectors (pt_docs "Calibration", world ``heavy``). What sets that world apart is a common random scale
per vector — a few vectors far longer than the rest — which shows in the spread of the squared distances to the mean.

:func:`squared_distance_dispersion` measures it as

    κ = Var(‖x − μ‖²) / (2 Tr Σ²),

the variance of the squared distance divided by its value for Gaussian vectors with the same covariance (for
x ~ N(μ, Σ), Var(‖x − μ‖²) = 2 Tr Σ² exactly, in any dimension). κ = 1 for Gaussian vectors; 0 for vectors of one
length about a zero mean; for multivariate t with ν degrees of freedom (x = z/√w, w ~ χ²_ν/ν) in d isotropic
dimensions, κ = (d + ν − 2)/(ν − 4).

κ alone does not separate the worlds: a sample of queries is a mixture of query clusters, and in the synthetic
``independent`` world (Gaussian vectors, intervals calibrated) κ reached 1.61 at d = 384 with 200 queries. What the one
failed world has besides is vectors of very different lengths, which :func:`norm_dispersion` measures (the
coefficient of variation of ‖x‖: 0 for unit-norm vectors such as MiniLM's). :func:`heavy_tailed` requires both.

Measured on the relevant vectors of 25 query sets per world, d ∈ {16, 128, 384}, 43 and 200 queries
(``benchmarks/worlds``; intervals calibrated in all but ``heavy``): ``independent`` κ 0.43–1.61, norm CV 0.058–0.200;
``topics`` κ 0.21–1.12, CV 0.055–0.217; ``sphere``, Cranfield and SciFact (unit norm) κ 0.18–0.99, CV 0; DL19 with
all-MiniLM-L6-v2, rel ≥ 2: κ 0.04, CV 0; ``heavy`` (unnormalised multivariate t, where the FD interval covered
0.67–0.89 instead of 0.95) κ 1.44–35, CV 0.200–0.886. Both above their thresholds: none of the calibrated worlds' sets,
0.92–1.00 of ``heavy``'s. A world-level flag chosen between the worlds measured, not a per-set predictor of a miss.
"""
from typing import Optional

import numpy as np

__all__ = ['squared_distance_dispersion', 'norm_dispersion', 'heavy_tailed', 'HEAVY_TAILED', 'HEAVY_NORM_CV']

#: κ above this and the vector lengths' coefficient of variation above :data:`HEAVY_NORM_CV`: heavier-tailed than the
#: worlds the intervals were calibrated in (module docstring); the bootstrap's intervals then say they are not.
HEAVY_TAILED = 1.5
HEAVY_NORM_CV = 0.15


def squared_distance_dispersion(x, max_rows: int = 2000, seed: int = 0) -> float:
    """κ = Var(‖x − x̄‖²) / (2 Tr Σ̂²) of the rows of ``x`` (module docstring): 1 for Gaussian vectors.

    Tr Σ² is estimated without its small-sample bias as the mean of (x̃ᵢᵀx̃ⱼ)² over pairs i ≠ j of centred rows
    (E[(xᵢᵀxⱼ)²] = Tr Σ² for independent zero-mean rows); the squared Gram matrix of tr(Σ̂²) itself would add
    (Tr Σ)²/n, as large as Tr Σ² when n ≈ d. Above ``max_rows`` rows, ``max_rows`` of them drawn by
    ``numpy.random.default_rng(seed)`` (O(max_rows² · d)). NaN for fewer than 3 rows or no spread.
    """
    x = np.asarray(x, dtype=np.float64)
    if x.ndim != 2:
        raise ValueError(f'x must be a 2-D array of vectors, got shape {x.shape}')
    if len(x) > max_rows:
        x = x[np.sort(np.random.default_rng(seed).choice(len(x), max_rows, replace=False))]
    n = len(x)
    if n < 3:
        return float('nan')
    centred = x - x.mean(axis=0)
    gram = centred @ centred.T
    squared = np.diag(gram).copy()
    off_diagonal = float((gram ** 2).sum() - (squared ** 2).sum()) / (n * (n - 1))
    if not off_diagonal > 0:
        return float('nan')
    return float(squared.var(ddof=1) / (2.0 * off_diagonal))


def norm_dispersion(x) -> float:
    """The coefficient of variation (sample standard deviation / mean) of the rows' Euclidean norms: 0 for unit-norm
    vectors; NaN for fewer than 2 rows or all-zero ones."""
    norms = np.linalg.norm(np.asarray(x, dtype=np.float64), axis=1)
    if len(norms) < 2 or not norms.mean() > 0:
        return float('nan')
    return float(norms.std(ddof=1) / norms.mean())


def heavy_tailed(x, max_rows: int = 2000, seed: int = 0):
    """(κ, norm CV, whether both exceed their thresholds) for the rows of ``x`` (module docstring)."""
    kappa, cv = squared_distance_dispersion(x, max_rows, seed), norm_dispersion(x)
    return kappa, cv, bool(kappa > HEAVY_TAILED and cv > HEAVY_NORM_CV)


def heavy_tail_note(kappa: Optional[float], cv: Optional[float]) -> str:
    """The words an interval carries when κ and the norms' CV are both above their thresholds (empty otherwise)."""
    if kappa is None or cv is None or not (kappa > HEAVY_TAILED and cv > HEAVY_NORM_CV):
        return ''
    return (f'not calibrated: heavy-tailed vectors, κ = {kappa:.2g} > {HEAVY_TAILED} and norm CV = {cv:.2g} > '
            f'{HEAVY_NORM_CV}')
