"""Benchmark: the FD kernel against the routes of other FD tools, speed and error, measured in one run.

- ours: ``pyterrier_frechet.frechet_distance`` (method='auto': the cross-matrix route, or the Gram/Cholesky
  route when both sets outnumber the dimensions; the chosen route is printed);
- sqrtm: ``scipy.linalg.sqrtm(Σ₁Σ₂)``, real part (pytorch-fid, clean-fid, frechet-ir);
- eigvals: ``Σ sqrt(eigvals(Σ₁Σ₂))``, real part (torchmetrics' FID).

Each route starts from the two sets of vectors (the statistics' cost counts too). The data are built so
that the exact FD is known in closed form: both covariances share one random orthonormal eigenbasis V
(Σᵢ = V diag(λᵢ) Vᵀ, with n − 1 < d nonzero eigenvalues for a small set), so
FD = ‖μ₁ − μ₂‖² + Σⱼ (√λ₁ⱼ − √λ₂ⱼ)², evaluated with math.fsum. Error = |value − exact| / exact.

    python benchmarks/fd_kernel.py [--reps 3]
"""
import argparse
import math
import time

import numpy as np
import scipy.linalg

from pyterrier_frechet import frechet_distance
from pyterrier_frechet.core.frechet import choose_method


def make_set(n, d, basis, rng):
    """n vectors whose centred Gram matrix is (n−1)·V diag(λ) Vᵀ exactly (up to rounding); returns (x, λ, μ)."""
    r = min(n - 1, d)
    lam = np.zeros(d)
    lam[:r] = rng.uniform(0.05, 2.0, size=r) ** 2
    # orthonormal columns orthogonal to the all-ones vector, so the data are centred exactly
    a = rng.normal(size=(n, r + 1))
    a[:, 0] = 1.0
    q, _ = np.linalg.qr(a)
    u = q[:, 1:r + 1]
    mu = rng.normal(size=d) * 0.1
    x = (u * np.sqrt(lam[:r] * (n - 1))) @ basis[:, :r].T + mu
    return x, lam, mu


def exact_fd(lam1, mu1, lam2, mu2):
    return math.fsum((mu1 - mu2) ** 2) + math.fsum((np.sqrt(lam1) - np.sqrt(lam2)) ** 2)


def fd_sqrtm(x, y):
    m1, m2 = x.mean(0), y.mean(0)
    s1, s2 = np.cov(x, rowvar=False), np.cov(y, rowvar=False)
    covmean = scipy.linalg.sqrtm(s1 @ s2)
    return float(((m1 - m2) ** 2).sum() + np.trace(s1) + np.trace(s2) - 2 * np.trace(covmean).real)


def fd_eigvals(x, y):
    m1, m2 = x.mean(0), y.mean(0)
    s1, s2 = np.cov(x, rowvar=False), np.cov(y, rowvar=False)
    eig = np.linalg.eigvals(s1 @ s2).astype(complex)
    return float(((m1 - m2) ** 2).sum() + np.trace(s1) + np.trace(s2) - 2 * np.sqrt(eig).sum().real)


ROUTES = {'ours': frechet_distance, 'sqrtm': fd_sqrtm, 'eigvals': fd_eigvals}


def timed(f, x, y, reps):
    best = float('inf')
    for _ in range(reps):
        t0 = time.perf_counter()
        value = f(x, y)
        best = min(best, time.perf_counter() - t0)
    return value, best


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--reps', type=int, default=3, help='timing: best of this many calls')
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    print('| d | n₁ / n₂ | route | ours ms | sqrtm ms | eigvals ms | sqrtm / ours | eigvals / ours | ours err | sqrtm err | eigvals err | target met |')
    print('|---|---|---|---|---|---|---|---|---|---|---|---|')
    for d in (384, 768):
        basis, _ = np.linalg.qr(rng.normal(size=(d, d)))
        for n1, n2 in ((50, 50), (500, 500), (5000, 5000), (50, 5000)):
            x, lam1, mu1 = make_set(n1, d, basis, rng)
            y, lam2, mu2 = make_set(n2, d, basis, rng)
            exact = exact_fd(lam1, mu1, lam2, mu2)
            res = {name: timed(f, x, y, args.reps) for name, f in ROUTES.items()}
            t = {k: v[1] for k, v in res.items()}
            err = {k: abs(v[0] - exact) / exact for k, v in res.items()}
            # issue 8: ≥ 20× sqrtm where a set has fewer vectors than dimensions, ≥ 4× elsewhere; lower error
            speed_target = 20 if min(n1, n2) < d else 4
            # (errors below 1e-14 are all round-off: a tie there counts as not worse)
            met = t['sqrtm'] / t['ours'] >= speed_target and err['ours'] <= max(min(err['sqrtm'], err['eigvals']), 1e-14)
            print(f"| {d} | {n1} / {n2} | {choose_method(n1, n2, d)} | {t['ours'] * 1e3:.1f} | {t['sqrtm'] * 1e3:.1f} | "
                  f"{t['eigvals'] * 1e3:.1f} | {t['sqrtm'] / t['ours']:.1f}x | {t['eigvals'] / t['ours']:.1f}x | "
                  f"{err['ours']:.1e} | {err['sqrtm']:.1e} | {err['eigvals']:.1e} | "
                  f"{'yes' if met else 'no'} (≥ {speed_target}x) |", flush=True)


if __name__ == '__main__':
    main()
