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

Measured (relevant vectors of 43-query sets; ``benchmarks/worlds``): DL19 with all-MiniLM-L6-v2, rel ≥ 2: 0.04
(the 19 runs' top-10 sets: 0.04–0.07); Cranfield (MiniLM, projected to d = 384) 0.49–0.97; the synthetic worlds
independent 0.52–1.14, topics 0.24–0.87, sphere 0.15–0.84 (d = 16, 128, 384; intervals calibrated in all of them);
heavy 1.85–8.2, where the FD interval covered 0.67–0.89 instead of 0.95. Above :data:`HEAVY_TAILED` the bootstrap
says its FD interval is not calibrated.
"""
from typing import Optional

import numpy as np

__all__ = ['squared_distance_dispersion', 'HEAVY_TAILED']

#: κ above this: heavier-tailed than every world the intervals were calibrated in (≤ 1.14), lighter than the world
#: they failed in (≥ 1.85); the bootstrap's FD interval then says it is not calibrated.
HEAVY_TAILED = 1.5


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


def heavy_tail_note(kappa: Optional[float]) -> str:
    """The words an interval carries when κ is above :data:`HEAVY_TAILED` (empty otherwise)."""
    if kappa is None or not np.isfinite(kappa) or kappa <= HEAVY_TAILED:
        return ''
    return f'not calibrated: heavy-tailed vectors, κ = {kappa:.2g} > {HEAVY_TAILED}'
