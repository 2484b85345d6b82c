"""Benchmark: FD from statistics when covariances are singular — the bootstrap's and the jackknife's usual case at
d = 384, where a resample or leave-out holds fewer distinct vectors than dimensions on one side or both.

Two routes from the same means and covariances, timed in one run on one BLAS thread (as the package runs them):

- eigh: Tr((Σ₁^½Σ₂Σ₁^½)^½) as the nuclear norm of B₁ᵀB₂ with Σᵢ = BᵢBᵢᵀ from full symmetric eigendecompositions,
  round-off negative eigenvalues clipped to 0 (written here with scipy; the package's route for singular covariances
  before the pivoted one, and torchmetrics-style FIDs take square roots of eigenvalues likewise);
- package: ``pf.frechet_distance_from_stats``, which takes a rank-revealing pivoted Cholesky (LAPACK ``pstrf``)
  of each covariance when one is singular.

Error is against ``pf.frechet_distance`` on the vectors themselves (the exact cross-matrix route), relative.

    python -m benchmarks.stats_route [--dim 384] [--reps 10]
"""
import argparse
import time

import numpy as np
import scipy.linalg
from threadpoolctl import threadpool_limits

import pyterrier_frechet as pf


def fd_eigh(s1, s2) -> float:
    def factor(cov):
        evals, evecs = scipy.linalg.eigh(cov)
        return evecs * np.sqrt(np.clip(evals, 0.0, None))
    tr_sqrt = scipy.linalg.svdvals(factor(s1.cov).T @ factor(s2.cov)).sum()
    diff = s1.mean - s2.mean
    return float(diff @ diff + np.trace(s1.cov) + np.trace(s2.cov) - 2.0 * tr_sqrt)


def timed(fn, reps):
    fn()
    start = time.perf_counter()
    for _ in range(reps):
        value = fn()
    return value, (time.perf_counter() - start) / reps


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    p.add_argument('--dim', type=int, default=384)
    p.add_argument('--reps', type=int, default=10)
    args = p.parse_args(argv)
    d, rng = args.dim, np.random.default_rng(0)
    print(f'd = {d}; n₁ and n₂ distinct vectors (covariance rank min(n − 1, d)); time per FD from statistics, 1 thread')
    print(f"{'n1':>5} {'n2':>5} {'eigh ms':>9} {'package ms':>11} {'speed-up':>9} {'eigh error':>11} {'package error':>14}")
    for n1, n2 in ((50, 100), (120, 250), (200, 250), (300, 380), (200, 430), (800, 250)):
        x = rng.standard_normal((n1, d)) / np.sqrt(d)
        y = rng.standard_normal((n2, d)) / np.sqrt(d) + 0.3 * rng.standard_normal(d) / np.sqrt(d)
        s1, s2 = pf.gaussian_stats(x), pf.gaussian_stats(y)
        exact = pf.frechet_distance(x, y)
        with threadpool_limits(limits=1, user_api='blas'):
            eig, t_eig = timed(lambda: fd_eigh(s1, s2), args.reps)
            new, t_new = timed(lambda: pf.frechet_distance_from_stats(s1, s2), args.reps)
        print(f'{n1:>5} {n2:>5} {t_eig * 1e3:>9.2f} {t_new * 1e3:>11.2f} {t_eig / t_new:>8.1f}× '
              f'{abs(eig - exact) / exact:>11.1e} {abs(new - exact) / exact:>14.1e}', flush=True)


if __name__ == '__main__':
    main()
