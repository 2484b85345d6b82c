"""Collect the CSV files written by ``benchmarks.calibrate_worlds`` into tables: Markdown (default) or
reStructuredText list-tables (``--rst``, the tables of pt_docs/calibration-worlds-tables.inc).

    python -m benchmarks.calibration_table benchmarks/results/calibration-worlds > benchmarks/results/calibration-worlds/tables.md
    python -m benchmarks.calibration_table benchmarks/results/calibration-worlds --rst > pyterrier_frechet/pt_docs/calibration-worlds-tables.inc
"""
import sys
from pathlib import Path

import pandas as pd

#: The only spellings of a missing value in the harness's CSVs: pandas' default list would also read the hypothesis
#: ``null`` (a test's level rows) or a system or pair named ``NA`` as missing.
MISSING = ['', 'nan', 'NaN']


def read_results(path, **kwargs) -> pd.DataFrame:
    """A CSV written by ``benchmarks.calibrate_worlds``, with only :data:`MISSING` as missing values."""
    return pd.read_csv(path, keep_default_na=False, na_values=MISSING, **kwargs)


#: the rows of a variant's runs: world name + this (``FD`` in the column headers then means that variant)
VARIANT_LABELS = {'fd-per-query5': ' · FD(per_query=5)', 'fd-query': " · FD(weighting='query')"}


def _fmt(values) -> str:
    values = [v for v in values if pd.notna(v)]
    if not values:
        return '—'
    lo, hi = min(values), max(values)
    return f'{lo:.2f}' if abs(hi - lo) < 0.005 else f'{lo:.2f}–{hi:.2f}'


def coverage_table(cov: pd.DataFrame) -> str:
    """One row per (world, d, n): coverage of each printed interval for its estimand (range over systems/pairs)."""
    cells = [('FD', 'jackknife_log t', 'E[FD_n]', 'FD jackknife (log scale), t(n − 1) → E[FD̂ₙ] (default; — : run before it was recorded)'),
             ('FD', 'jackknife_log', 'E[FD_n]', 'FD jackknife (log scale), normal reference → E[FD̂ₙ] (earlier default)'),
             ('FD', 'jackknife_log fpc', 'E[FD_n]', 'FD jackknife (log scale) with --population N → E[FD̂ₙ]'),
             ('FD', 'jackknife_log groups', 'E[FD_n]', 'FD cluster jackknife (log scale) with --query-groups → E[FD̂ₙ]'),
             ('FD', 'jackknife', 'E[FD_n]', 'FD jackknife → E[FD̂ₙ]'),
             ('FD', 'jackknife_bc', 'population FD', 'FD jackknife-bc → population FD (old default)'),
             ('FD', 'percentile', 'E[FD_n]', 'FD percentile → E[FD̂ₙ]'),
             ('FD', 'shifted', 'E[FD_n]', 'FD shifted → E[FD̂ₙ]'),
             ('FD', 'basic', 'population FD', 'FD basic → population FD'),
             ('ΔFD', 'jackknife t', 'E[ΔFD_n]', 'ΔFD jackknife, t(n − 1) → E[ΔFD̂ₙ] (default)'),
             ('ΔFD', 'jackknife', 'E[ΔFD_n]', 'ΔFD jackknife, normal reference → E[ΔFD̂ₙ] (earlier default)'),
             ('ΔFD', 'jackknife groups', 'E[ΔFD_n]', 'ΔFD cluster jackknife with --query-groups → E[ΔFD̂ₙ]'),
             ('ΔFD', 'jackknife fpc', 'E[ΔFD_n]', 'ΔFD jackknife with --population N → E[ΔFD̂ₙ]'),
             ('ΔFD', 'jackknife', 'population ΔFD', 'ΔFD jackknife → population ΔFD'),
             ('nDCG', 't', 'population mean', 'nDCG@10 t → population mean (default)'),
             ('nDCG', 'percentile', 'population mean', 'nDCG@10 percentile → population mean (earlier default)'),
             ('nDCG', 't groups', 'population mean', 'nDCG@10 cluster t → population mean'),
             ('nDCG', 't fpc', 'population mean', 'nDCG@10 t with --population N → population mean'),
             ('τ(FD, nDCG)', 'percentile', 'τ of E[FD_n] and mean nDCG', 'τ percentile → τ(E[FD̂ₙ], nDCG)'),
             ('τ_AP(FD, nDCG)', 'percentile', 'τ_AP of E[FD_n] and mean nDCG', 'τ_AP percentile → τ_AP(E[FD̂ₙ], nDCG)')]
    header = ['world', 'd', 'n', 'N', 'jackknife', 'trials'] + [c[3] for c in cells]
    lines = ['| ' + ' | '.join(header) + ' |', '|' + '---|' * len(header)]
    for (world, d, n, jack), g in cov.groupby(['world', 'd', 'n_queries', 'jackknife'], sort=False):
        row = [world, str(d), str(n), _population(g), _jackknife(jack), str(int(g['trials'].iloc[0]))]
        for stat, method, estimand, _ in cells:
            sel = g[(g.statistic == stat) & (g.method == method) & (g.estimand == estimand)]
            row.append(_fmt(sel['coverage'].tolist()))
        lines.append('| ' + ' | '.join(row) + ' |')
    return '\n'.join(lines)


def _population(g: pd.DataFrame) -> str:
    """N of a finite population (the real-data worlds), ∞ for the synthetic ones."""
    values = g['population'].dropna() if 'population' in g else []
    return str(int(values.iloc[0])) if len(values) and str(values.iloc[0]) not in ('', 'nan') else '∞'


def _jackknife(text) -> str:
    """'leave-one-out' or 'G=200' (the delete-a-group jackknife the package uses above 500 queries)."""
    text = str(text)
    return text.split('(')[1].split(' groups')[0] if text.startswith('delete-a-group') else 'leave-one-out'


def test_table(tests: pd.DataFrame) -> str:
    """Level (largest rejection rate over equal-in-law pairs) and power (mean over the other pairs) per test."""
    header = ['world', 'd', 'n', 'N', 'jackknife', 'trials', 'test', 'level (equal pairs)', 'power (mean over other pairs)',
              'power at the smallest difference']
    lines = ['| ' + ' | '.join(header) + ' |', '|' + '---|' * len(header)]
    for (world, d, n, jack, stat, test), g in tests.groupby(['world', 'd', 'n_queries', 'jackknife', 'statistic', 'test'],
                                                        sort=False):
        null = g[g.hypothesis == 'null']
        alt = g[g.hypothesis == 'alternative']
        smallest = alt.sort_values('relative_difference').head(1)
        small = (f"{smallest['rejection_rate'].iloc[0]:.2f} (Δ = {smallest['relative_difference'].iloc[0]:.0%})"
                 if len(smallest) and stat == 'FD' else '—')
        level = f"{null['rejection_rate'].max():.3f}" if len(null) else '—'   # a world without an equal-in-law pair
        lines.append(f"| {world} | {d} | {n} | {_population(g)} | {_jackknife(jack)} | {int(g['trials'].iloc[0])} | {stat}: {test} | "
                     f"{level} | {alt['rejection_rate'].mean():.2f} | {small} |")
    return '\n'.join(lines)


def to_rst(markdown: str, title: str) -> str:
    """A Markdown pipe table as an rst list-table."""
    rows = [[c.strip() for c in line.strip().strip('|').split('|')] for line in markdown.splitlines()
            if line.strip() and not set(line.strip()) <= set('|-')]
    out = [f'.. list-table:: {title}', '   :header-rows: 1', '']
    for row in rows:
        out.append('   * - ' + row[0])
        out += [f'     - {cell}' for cell in row[1:]]
    return '\n'.join(out)


def main(argv=None):
    args = list(argv or sys.argv[1:])
    rst = '--rst' in args
    folder = Path([a for a in args if a != '--rst'][0])
    cov = pd.concat([read_results(p) for p in sorted(folder.glob('*.coverage.csv'))], ignore_index=True)
    tests = pd.concat([read_results(p) for p in sorted(folder.glob('*.tests.csv'))], ignore_index=True)
    for frame in (cov, tests):  # runs written before the jackknife plan was recorded: n ≤ 500, leave-one-out
        frame['jackknife'] = frame['jackknife'].fillna('leave-one-out') if 'jackknife' in frame else 'leave-one-out'
        if 'population' not in frame:
            frame['population'] = float('nan')
        known = {'cranfield': 225, 'scifact': 300}  # the finite worlds' N, for runs written before it was recorded
        frame['population'] = frame['population'].fillna(frame['world'].map(known))
        # a variant's runs (--statistic other than fd) are rows of their own, named by the measure they calibrate
        kind = frame['statistic_kind'].fillna('fd') if 'statistic_kind' in frame else pd.Series('fd', index=frame.index)
        frame['world'] = frame['world'] + kind.map(VARIANT_LABELS).fillna('')
        # runs whose '… groups' methods used groups found from the qrels (--query-groups auto), not the world's topics
        if 'query_groups' in frame:
            frame.loc[frame['query_groups'].fillna('') == 'auto', 'world'] += ' (groups found from the qrels)'
    cov = cov.sort_values(['d', 'world', 'n_queries'], kind='stable')
    tests = tests.sort_values(['d', 'world', 'n_queries'], kind='stable')
    if rst:
        print('..  generated by python -m benchmarks.calibration_table benchmarks/results/calibration-worlds --rst\n')
        print(to_rst(coverage_table(cov), 'Coverage of nominal 95% intervals (range over systems or pairs)'))
        print()
        print(to_rst(test_table(tests), 'Level and power of the paired tests at α = 0.05'))
        return
    print(coverage_table(cov))
    print()
    print(test_table(tests))


if __name__ == '__main__':
    main()
