"""The default log-scale jackknife intervals re-scored with a Student t reference on n − 1 degrees of freedom (lead).

Every FD interval the trials of both unseen-world checks recorded is [θ̂·exp(−z·SE), θ̂·exp(z·SE)] with z the normal
0.975 quantile (the package default). The same interval on t(n − 1) is the recorded one widened on the log scale by
t_{0.975, n−1} / z_{0.975} (1.0297 at 43 queries). This script re-scores the recorded intervals (no package call) and
prints the coverage of the truth under both references, for every 43-query setting of the two checks:

- this folder (graded, aniso; FD@10 and FD(per_query=5)@10), truths = the mean of the reference sets' own values;
- benchmarks/unseen_world (sphere, clustered, hub_lognorm, sphere-s0.9): FD@10 from trials_*_intervals.csv,
  FD(per_query=5)@10 from variant_per_query5_*.csv (their recorded truth column).

    python -m benchmarks.unseen_world2.t_reference

It also re-reads the recorded ΔFD intervals (widened the same way, on the linear scale) and the default paired test's
p-values (p_t = 2·T₄₂(−Φ⁻¹(1 − p/2))): ΔFD coverage of the truth, level on the equal-in-law pair A–B, mean power.
"""
import glob
import os
import re

import numpy as np
import pandas as pd
from scipy import stats

HERE = os.path.dirname(os.path.abspath(__file__))
FIRST = os.path.join(HERE, '..', 'unseen_world', 'results')
N = 43
WIDEN = stats.t.ppf(0.975, N - 1) / stats.norm.ppf(0.975)


def widen_about(centre, low, high, widen: float = WIDEN):
    """The interval [low, high] with both half-widths about ``centre`` times ``widen`` (on the scale given: log FD
    for the log-scale interval, ΔFD itself for the difference's) — a recorded normal-reference interval re-read on
    t(n − 1) with the default ``widen``."""
    return centre - (centre - low) * widen, centre + (high - centre) * widen


def p_on_t(p):
    """A recorded normal-reference two-sided p re-read on t(n − 1): 2·T_{n−1}(−Φ⁻¹(1 − p/2))."""
    return 2 * stats.t.sf(stats.norm.isf(p / 2), N - 1)


def coverage(frame: pd.DataFrame, widen: float = 1.0) -> float:
    """Share of rows whose log-scale interval, widened by ``widen`` about log(value), holds the truth."""
    low, high = widen_about(np.log(frame.value), np.log(frame.low), np.log(frame.high), widen)
    truth = np.log(frame.truth)
    return float(((low <= truth) & (truth <= high)).mean())


def recorded(kind: str):
    """(world, d, measure label, rows with the recorded interval, its truth) of every 43-query setting of both checks:
    ``kind`` 'trials' — one row per (query set, system), truth E[FD̂ₙ]; 'pairs' — one per (query set, pair), with the
    difference's interval and the default test's p, truth E[ΔFD̂ₙ]."""
    pairs = kind == 'pairs'

    def truths(frame, rows, column):
        if pairs:
            return [frame[column(a)].mean() - frame[column(b)].mean() for a, b in zip(rows.a, rows.b)]
        return [frame[column(s)].mean() for s in rows.system]

    for path in sorted(glob.glob(os.path.join(HERE, 'results', f'{kind}_*_d*.csv'))):
        world, d = re.match(rf'{kind}_(.*)_d(\d+)\.csv', os.path.basename(path)).groups()
        frame = pd.read_csv(path).rename(columns={'ci_low': 'low', 'ci_high': 'high'})
        truth = pd.read_csv(os.path.join(HERE, 'results', f'truth_{world}_d{d}.csv'))
        for measure, label in (('FD', 'FD@10'), ('FDpq5', 'FD(per_query=5)@10')):
            rows = frame[frame.measure == measure].copy()
            rows['truth'] = truths(truth, rows, lambda name: f'{name}_{measure}')
            yield f'{world} (check 2)', d, label, rows
    suffix = 'pairs' if pairs else 'intervals'
    for path in sorted(glob.glob(os.path.join(FIRST, f'trials_*_n{N}_{suffix}.csv'))):
        tag = re.match(rf'trials_(.*)_{suffix}\.csv', os.path.basename(path)).group(1)
        world, d = re.match(r'(.*)_d(\d+)_n\d+', tag).groups()
        truth = pd.read_csv(os.path.join(FIRST, f'truth_{tag}.csv'))
        rows = pd.read_csv(path)
        rows = rows[rows.measure == 'FD'].copy()
        rows['truth'] = truths(truth, rows, lambda name: f'FD_{name}')
        yield world, d, 'FD@10', rows
        balanced = os.path.join(FIRST, f'variant_per_query5_{tag}' + ('_pairs.csv' if pairs else '.csv'))
        if os.path.exists(balanced):
            yield world, d, 'FD(per_query=5)@10', pd.read_csv(balanced)


def pair_scores(rows: pd.DataFrame, widen: float, t_reference: bool):
    """ΔFD coverage, level on the equal-in-law pair A–B and mean power over the other pairs at α = 0.05, with the
    recorded normal-reference interval and p (``t_reference`` False) or both re-read on t(n − 1)."""
    low, high = widen_about(rows['diff'], rows.low, rows.high, widen)
    covered = float(((low <= rows.truth) & (rows.truth <= high)).mean())
    p = p_on_t(rows.p) if t_reference else rows.p
    equal = (rows.a == 'A') & (rows.b == 'B')
    return covered, float((p[equal] < 0.05).mean()), float((p[~equal] < 0.05).mean())


if __name__ == '__main__':
    print(f't(n − 1) widens the log-scale half-width by {WIDEN:.4f} at n = {N}\n')
    print('| world | d | measure | trials | coverage, normal reference (default) | coverage, t(n − 1) |')
    print('|---|---|---|---|---|---|')
    for world, d, label, rows in recorded('trials'):
        print(f'| {world} | {d} | {label} | {rows.trial.nunique()} | {coverage(rows):.3f} | {coverage(rows, WIDEN):.3f} |')
    print('\nΔFD intervals and the paired test (A and B are equal in law in every world), normal → t(n − 1):\n')
    print('| world | d | measure | sets | ΔFD coverage | level A–B | mean power, other pairs |')
    print('|---|---|---|---|---|---|---|')
    for world, d, label, rows in recorded('pairs'):
        z, t = pair_scores(rows, 1.0, False), pair_scores(rows, WIDEN, True)
        print(f'| {world} | {d} | {label} | {rows.trial.nunique()} | {z[0]:.3f} → {t[0]:.3f} | {z[1]:.3f} → {t[1]:.3f} '
              f'| {z[2]:.2f} → {t[2]:.2f} |')
