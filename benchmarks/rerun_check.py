"""Whether a re-run of a calibration setting gives back every recorded row (benchmarks/results/calibration-worlds/README.md).

    python -m benchmarks.rerun_check benchmarks/results/calibration-worlds/NAME /tmp/NAME            # report only
    python -m benchmarks.rerun_check benchmarks/results/calibration-worlds/NAME /tmp/NAME --replace  # and, if reproduced, replace

Rows are matched on (statistic, method, estimand, who) and (statistic, test, hypothesis, pair); every recorded numeric
column but ``seconds`` must agree to a relative 1e-9 (interval widths to 1e-4: the largest seen was 1.5e-7, at
d = 384), with an absolute floor of 1e-10 as ``numpy.isclose`` has one: a truth that is a difference of two
population FDs (ΔFD between close systems, 8e-4 in Cranfield at d = 384) is a cancellation whose last digits move
with the BLAS (1.9e-11 absolute, 2.4e-8 of itself, 6e-10 of either FD). New rows (an interval's column added since)
are counted, not checked. ``--replace`` writes the re-run's files over the recorded ones, keeping the recorded world
label (some settings were relabelled by hand). Exit 1 when a recorded row is missing or moved.
"""
import os
import shutil
import sys

import numpy as np

from benchmarks.calibration_table import read_results

KEYS = {'coverage': ['statistic', 'method', 'estimand', 'who'], 'tests': ['statistic', 'test', 'hypothesis', 'pair']}
TOLERANCE, WIDTH_TOLERANCE, ABSOLUTE_FLOOR = 1e-9, 1e-4, 1e-10


def _relative(recorded, rerun, tolerance: float) -> float:
    """The largest |rerun − recorded| / max(|recorded|, ABSOLUTE_FLOOR / tolerance) (0 where both are missing)."""
    if not (recorded.notna() | rerun.notna()).any():
        return 0.0
    scale = np.maximum(np.abs(recorded), ABSOLUTE_FLOOR / tolerance)
    return float(np.nan_to_num(np.nanmax(np.abs(recorded - rerun) / scale), nan=0.0))


def check(recorded: str, rerun: str) -> bool:
    """Print, per file kind, the recorded rows, the missing ones, the largest relative difference and the new rows;
    True when every recorded row is reproduced."""
    ok = True
    for kind, keys in KEYS.items():
        old, new = read_results(f'{recorded}.{kind}.csv'), read_results(f'{rerun}.{kind}.csv')
        both = old.merge(new, on=keys, how='left', suffixes=('', '_new'), indicator=True)
        missing = int((both._merge != 'both').sum())
        columns = [c for c in old.select_dtypes('number').columns if c not in keys and c != 'seconds']
        # relative difference, with |recorded| raised to ABSOLUTE_FLOOR / tolerance: at most the column's tolerance
        # exactly when numpy.isclose(new, recorded, rtol=tolerance, atol=ABSOLUTE_FLOOR) would hold (up to its sum)
        rel = {c: _relative(both[c], both[c + '_new'], WIDTH_TOLERANCE if c == 'width' else TOLERANCE) for c in columns}
        worst = max([v for c, v in rel.items() if c != 'width'], default=0.0)
        print(f'{recorded}.{kind}: {len(old)} recorded rows, {missing} missing, largest relative difference '
              f'{worst:.2e} (widths {rel.get("width", 0.0):.2e}; absolute floor {ABSOLUTE_FLOOR:g}), '
              f'{len(new) - (len(old) - missing)} new rows')
        ok &= missing == 0 and worst <= TOLERANCE and rel.get('width', 0.0) <= WIDTH_TOLERANCE
    return ok


def replace(recorded: str, rerun: str) -> None:
    """The re-run's files over the recorded ones, with the recorded world label."""
    for kind in KEYS:
        old, new = read_results(f'{recorded}.{kind}.csv'), read_results(f'{rerun}.{kind}.csv')
        if old.world.nunique() == 1:
            new['world'] = old.world.iloc[0]
        new.to_csv(f'{recorded}.{kind}.csv', index=False)
    shutil.copy(f'{rerun}.context.csv', f'{recorded}.context.csv')
    trials = f'{rerun}.trials.csv.gz'   # every trial's interval (written since stop 46)
    if os.path.exists(trials):
        shutil.copy(trials, f'{recorded}.trials.csv.gz')
    elif os.path.exists(f'{recorded}.trials.csv.gz'):   # not the replaced run's: it would not match the new files
        os.remove(f'{recorded}.trials.csv.gz')


def main(argv=None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    recorded, rerun = [a for a in args if a != '--replace']
    if not check(recorded, rerun):
        print('not reproduced: the recorded files are kept')
        return 1
    if '--replace' in args:
        replace(recorded, rerun)
        print(f'reproduced: {recorded}.* replaced')
    else:
        print('reproduced')
    return 0


if __name__ == '__main__':
    sys.exit(main())
