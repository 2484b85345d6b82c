"""Collect the CSV files written by ``benchmarks.calibrate_worlds`` into the Markdown tables of
docs/calibration-worlds.md.

    python -m benchmarks.calibration_table RESULTS_DIR > tables.md
"""
import sys
from pathlib import Path

import pandas as pd


def _fmt(values) -> str:
    values = [v for v in values if pd.notna(v)]
    if not values:
        return '—'
    lo, hi = min(values), max(values)
    return f'{lo:.2f}' if abs(hi - lo) < 0.005 else f'{lo:.2f}–{hi:.2f}'


def coverage_table(cov: pd.DataFrame) -> str:
    """One row per (world, d, n): coverage of each printed interval for its estimand (range over systems/pairs)."""
    cells = [('FD', 'jackknife_log', 'E[FD_n]', 'FD jackknife (log scale) → E[FD̂ₙ] (default)'),
             ('FD', 'jackknife', 'E[FD_n]', 'FD jackknife → E[FD̂ₙ]'),
             ('FD', 'jackknife_bc', 'population FD', 'FD jackknife-bc → population FD (old default)'),
             ('FD', 'percentile', 'E[FD_n]', 'FD percentile → E[FD̂ₙ]'),
             ('FD', 'shifted', 'E[FD_n]', 'FD shifted → E[FD̂ₙ]'),
             ('FD', 'basic', 'population FD', 'FD basic → population FD'),
             ('ΔFD', 'jackknife', 'E[ΔFD_n]', 'ΔFD jackknife → E[ΔFD̂ₙ] (default)'),
             ('ΔFD', 'jackknife', 'population ΔFD', 'ΔFD jackknife → population ΔFD'),
             ('nDCG', 'percentile', 'population mean', 'nDCG@10 percentile → population mean'),
             ('τ(FD, nDCG)', 'percentile', 'τ of E[FD_n] and mean nDCG', 'τ percentile → τ(E[FD̂ₙ], nDCG)')]
    header = ['world', 'd', 'n', 'trials'] + [c[3] for c in cells]
    lines = ['| ' + ' | '.join(header) + ' |', '|' + '---|' * len(header)]
    for (world, d, n), g in cov.groupby(['world', 'd', 'n_queries'], sort=False):
        row = [world, str(d), str(n), str(int(g['trials'].iloc[0]))]
        for stat, method, estimand, _ in cells:
            sel = g[(g.statistic == stat) & (g.method == method) & (g.estimand == estimand)]
            row.append(_fmt(sel['coverage'].tolist()))
        lines.append('| ' + ' | '.join(row) + ' |')
    return '\n'.join(lines)


def test_table(tests: pd.DataFrame) -> str:
    """Level (largest rejection rate over equal-in-law pairs) and power (mean over the other pairs) per test."""
    header = ['world', 'd', 'n', 'trials', 'test', 'level (equal pairs)', 'power (mean over other pairs)',
              'power at the smallest difference']
    lines = ['| ' + ' | '.join(header) + ' |', '|' + '---|' * len(header)]
    for (world, d, n, stat, test), g in tests.groupby(['world', 'd', 'n_queries', 'statistic', 'test'], sort=False):
        null = g[g.hypothesis == 'null']
        alt = g[g.hypothesis == 'alternative']
        smallest = alt.sort_values('relative_difference').head(1)
        small = (f"{smallest['rejection_rate'].iloc[0]:.2f} (Δ = {smallest['relative_difference'].iloc[0]:.0%})"
                 if len(smallest) and stat == 'FD' else '—')
        lines.append(f"| {world} | {d} | {n} | {int(g['trials'].iloc[0])} | {stat}: {test} | "
                     f"{null['rejection_rate'].max():.3f} | {alt['rejection_rate'].mean():.2f} | {small} |")
    return '\n'.join(lines)


def main(argv=None):
    folder = Path((argv or sys.argv[1:])[0])
    cov = pd.concat([pd.read_csv(p, keep_default_na=False, na_values=['', 'nan', 'NaN']) for p in sorted(folder.glob('*.coverage.csv'))], ignore_index=True)
    tests = pd.concat([pd.read_csv(p, keep_default_na=False, na_values=['', 'nan', 'NaN']) for p in sorted(folder.glob('*.tests.csv'))], ignore_index=True)
    print(coverage_table(cov))
    print()
    print(test_table(tests))


if __name__ == '__main__':
    main()
