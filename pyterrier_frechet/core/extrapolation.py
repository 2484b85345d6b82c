"""FD∞ (Chong & Forsyth, CVPR 2020): FD extrapolated to infinitely many samples.

FD computed from finite sets is biased upward, and the bias is, to first order, proportional to 1/N. FD∞
subsamples both sets to fractions f₁ < … < f_P = 1 of their sizes (without replacement, seeded), fits the
least-squares line FD(f) = FD∞ + b · (1/f), and returns the intercept: the value at 1/f → 0. Subsampling
both sets at the same fraction keeps their ratio fixed, so the summed bias b₁/(f n₁) + b₂/(f n₂) is linear
in 1/f. The fit is over ``points`` fractions evenly spaced in 1/f between 1 and 1/``min_fraction``.
"""
from typing import NamedTuple

import numpy as np

from .frechet import check_pair, frechet_distance


class Extrapolation(NamedTuple):
    value: float  # FD∞, the intercept
    slope: float  # b, FD's growth per unit of 1/f
    inverse_fractions: np.ndarray  # 1/f of each point
    fds: np.ndarray  # FD at each point


def fd_infinity(x, y, points: int = 10, min_fraction: float = 0.5, seed: int = 0) -> Extrapolation:
    """FD∞ of the sets ``x`` and ``y`` (see the module docstring)."""
    x, y = check_pair(x, y)
    if isinstance(points, bool) or not isinstance(points, (int, np.integer)) or points < 2:
        raise ValueError(f'points must be an integer >= 2, got {points!r}')
    if not 0 < min_fraction < 1:
        raise ValueError(f'min_fraction must be in (0, 1), got {min_fraction}')
    if min(len(x), len(y)) * min_fraction < 2:
        raise ValueError(f'sets of {len(x)} and {len(y)} vectors are too small to subsample to {min_fraction:g} '
                         '(each subsample needs 2 vectors)')
    rng = np.random.default_rng(seed)
    inv = np.linspace(1.0, 1.0 / min_fraction, points)
    fds = np.empty(points)
    for i, t in enumerate(inv):
        sub = []
        for s in (x, y):
            k = max(2, int(round(len(s) / t)))
            sub.append(s if k >= len(s) else s[rng.choice(len(s), size=k, replace=False)])
        fds[i] = frechet_distance(sub[0], sub[1])
    slope, intercept = np.polyfit(inv, fds, 1)
    return Extrapolation(float(intercept), float(slope), inv, fds)
