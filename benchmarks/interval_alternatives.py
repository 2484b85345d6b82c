"""Alternatives to the FD interval (jackknife on the log scale) and its reference distribution, measured on the same trials.

Where the default under-covers E[FD̂ₙ] (the heavy-tailed world; pt_docs Calibration), is there a repair that needs
nothing but the one query set? For ``--trials`` query sets of a world of :mod:`benchmarks.worlds` this script keeps
FD̂ and the n leave-one-query-out values of every system (the harness's, :func:`benchmarks.calibrate_worlds.leave_one_out`)
and scores, against E[FD̂ₙ] over ``--reference`` independent sets (and their median):

* ``log z``: log FD̂ ± z·SE_J(log), the normal reference (the package's default until stop 42);
* ``log t(n-1)``: Tukey's reference for the pseudo-values, Student t on n − 1 degrees of freedom (the package's
  default since stop 42: ``core.intervals.interval``'s ``jackknife_log``);
* ``log t(df_K)``: t on the Satterthwaite degrees of freedom of the jackknife variance, 2 / (2/(n−1) + K/n), K the
  pseudo-values' excess kurtosis (a heavy-tailed set gets a wider interval);
* ``log Cornish-Fisher``: both ends moved by the pseudo-values' skewness γ (the Edgeworth correction of a studentised
  mean, SE·γ(2z² + 1)/(6√n));
* and the normal reference's coverage among the sets whose pseudo-values have K > 10 and among the others (is K a flag?).

Run (one world at a time; ``--save`` keeps the per-trial values)::

    python -m benchmarks.interval_alternatives --world heavy --dim 128 --queries 43 --trials 200 --reference 300
    python -m benchmarks.interval_alternatives --world heavy --dim 384 --queries 200 --trials 60 --reference 150
"""
import argparse
import time

import numpy as np
import scipy.stats

from benchmarks.calibrate_worlds import leave_one_out, reference, set_fd, set_stats
from benchmarks.worlds import make_world

Z = float(scipy.stats.norm.ppf(0.975))
KURTOSIS_FLAG = 10.0


def draw_trials(world, n: int, n_trials: int, seed: int):
    """FD̂ (trials × systems) and the leave-one-query-out values (trials × systems × n) of fresh query sets."""
    rng = np.random.default_rng([seed, n, 99])
    systems = list(world.systems)
    est = np.zeros((n_trials, len(systems)))
    loos = np.zeros((n_trials, len(systems), n))
    for t in range(n_trials):
        sample = world.draw(n, rng)
        rel, rets, shift = set_stats(sample, 'fd')
        for j, s in enumerate(systems):
            est[t, j] = set_fd(rel, rets[s], np.ones((1, n)), shift)[0]
            loos[t, j] = leave_one_out(rel, rets[s], shift, n, 0, 'auto')
    return est, loos


def jackknife_se(values: np.ndarray) -> np.ndarray:
    """SE_J over the last axis: ((n−1)/n Σ(θ₍ᵢ₎ − θ̄)²)^½."""
    n = values.shape[-1]
    return np.sqrt((n - 1) / n * ((values - values.mean(-1, keepdims=True)) ** 2).sum(-1))


def log_intervals(est: np.ndarray, loos: np.ndarray) -> dict:
    """Every method's (low, high) on the log scale, arrays of trials × systems."""
    n = loos.shape[-1]
    logs = np.log(loos)
    centre, se = np.log(est), jackknife_se(logs)
    deviations = logs.mean(-1, keepdims=True) - logs          # the pseudo-values' deviations, up to the factor n − 1
    kurtosis = scipy.stats.kurtosis(deviations, axis=-1, bias=False)
    skewness = scipy.stats.skew(deviations, axis=-1, bias=False)
    t_n = scipy.stats.t.ppf(0.975, n - 1)
    t_k = scipy.stats.t.ppf(0.975, 2.0 / (2.0 / (n - 1) + np.maximum(kurtosis, 0.0) / n))
    shift = skewness * (2 * Z ** 2 + 1) / (6 * np.sqrt(n))
    return {'log z (normal)': (centre - Z * se, centre + Z * se),
            'log t(n-1) (default)': (centre - t_n * se, centre + t_n * se),
            'log t(df_K)': (centre - t_k * se, centre + t_k * se),
            'log Cornish-Fisher': (centre - se * (Z - shift), centre + se * (Z + shift))}, kurtosis


def report(world, est, loos, ref) -> None:
    truths = {'E[FD_n]': ref.mean(0), 'median FD_n': np.median(ref, 0)}
    intervals, kurtosis = log_intervals(est, loos)
    print(f'{world.name}, d = {world.d}, n = {loos.shape[-1]}, {len(est)} trials, {len(ref)} reference sets; '
          f'systems {", ".join(world.systems)}')
    print(f'E[FD_n] {np.round(truths["E[FD_n]"], 4)}; sd FD_n {np.round(ref.std(0, ddof=1), 4)}; '
          f'skewness of log FD_n {np.round(scipy.stats.skew(np.log(ref), 0), 2)}')
    for name, (low, high) in intervals.items():
        for estimand, truth in truths.items():
            target = np.log(truth)
            cover = ((low <= target) & (target <= high)).mean(0)
            above = (target > high).mean(0)
            print(f'  {name:20s} → {estimand:11s} coverage {np.round(cover, 2)}  (truth above the interval '
                  f'{np.round(above, 2)})')
    low, high = intervals['log z (normal)']
    target = np.log(truths['E[FD_n]'])
    hit = (low <= target) & (target <= high)
    flagged = kurtosis > KURTOSIS_FLAG
    print(f'  pseudo-values\' excess kurtosis K: median {np.round(np.median(kurtosis, 0), 1)}; '
          f'sets with K > {KURTOSIS_FLAG:g}: {flagged.mean():.2f}; log z coverage among them '
          f'{hit[flagged].mean() if flagged.any() else float("nan"):.2f}, among the others '
          f'{hit[~flagged].mean() if (~flagged).any() else float("nan"):.2f}')


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--world', required=True)
    ap.add_argument('--dim', type=int, required=True)
    ap.add_argument('--queries', type=int, required=True)
    ap.add_argument('--trials', type=int, default=100)
    ap.add_argument('--reference', type=int, default=200)
    ap.add_argument('--seed', type=int, default=0)
    ap.add_argument('--save', help='an .npz file for the per-trial values (est, loos, ref, systems)')
    ap.add_argument('--load', help='report from such a file instead of drawing (same world arguments)')
    args = ap.parse_args(argv)
    world = make_world(args.world, args.dim, args.seed)
    t0 = time.time()
    if args.load:
        saved = np.load(args.load)
        report(world, saved['est'], saved['loos'], saved['ref'])
        return
    ref_frame = reference(world, args.queries, args.reference, args.seed + 100, 'fd')
    ref = ref_frame.pivot(index='draw', columns='system', values='fd')[list(world.systems)].to_numpy()
    est, loos = draw_trials(world, args.queries, args.trials, args.seed)
    if args.save:
        np.savez(args.save, est=est, loos=loos, ref=ref, systems=np.array(world.systems))
    report(world, est, loos, ref)
    print(f'{time.time() - t0:.0f} s')


if __name__ == '__main__':
    main()
