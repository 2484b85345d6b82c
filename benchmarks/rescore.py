"""Score a calibration run's recorded intervals again against another truth, without re-running its trials.

``benchmarks.calibrate_worlds`` writes every trial's interval to ``PREFIX.trials.csv.gz`` (trial, statistic, method,
estimand, who, estimate, low, high, truth). This prints, per (statistic, method, estimand, who), the coverage of the
recorded truth and of the one given, with the binomial standard error::

    python -m benchmarks.rescore benchmarks/results/calibration-worlds/NAME --estimand "τ of E[FD_n] and mean nDCG" --truth 0.380

``--who`` restricts to one system or pair (``all`` for τ; required with ``--truth`` when the estimand has several);
without ``--truth`` the recorded coverage is printed alone.
"""
import argparse
import sys

import numpy as np
import pandas as pd

from benchmarks.calibration_table import read_results

KEYS = ['statistic', 'method', 'estimand', 'who']
#: the columns of a trials file (``benchmarks.calibrate_worlds`` writes it)
TRIAL_COLUMNS = ['trial'] + KEYS + ['estimate', 'low', 'high', 'truth']


def covers(low, high, truth):
    """Whether [low, high] holds ``truth``, to a relative 1e-12: a τ of exactly 1 (a population with tied systems)
    against a bootstrap interval ending at scipy's 0.9999999999999999 for perfect agreement is held, not missed.
    Works elementwise on arrays."""
    slack = 1e-12 * np.maximum(1.0, np.abs(truth))
    return (low - slack <= truth) & (truth <= high + slack)


def rescore(trials: pd.DataFrame, truth: float = None) -> pd.DataFrame:
    """Coverage per :data:`KEYS` (in order of first appearance) of the recorded truth and, when given, of ``truth``:
    over the trials whose interval is defined (a finite ``low``; ``defined`` of ``trials``), the share whose [low,
    high] holds the truth (:func:`covers`); ``width`` is the mean of ``high − low`` where it is a number. The
    calibration harness's coverage table is this of its trials frame."""
    rows = []
    for key, g in trials.groupby(KEYS, sort=False):
        defined = g[np.isfinite(g['low'])]
        row = dict(zip(KEYS, key), trials=len(g), defined=len(defined), recorded_truth=float(g['truth'].iloc[0]),
                   coverage=float(covers(defined['low'], defined['high'], defined['truth']).mean()),
                   width=float(np.nanmean(g['high'] - g['low'])))
        if truth is not None:
            row['truth'] = float(truth)
            row['coverage_of_truth'] = float(covers(defined['low'], defined['high'], truth).mean())
        share = row.get('coverage_of_truth', row['coverage'])
        row['se'] = float(np.sqrt(share * (1 - share) / max(len(defined), 1)))
        rows.append(row)
    return pd.DataFrame(rows, columns=KEYS + ['trials', 'defined', 'recorded_truth', 'coverage', 'width']
                        + (['truth', 'coverage_of_truth'] if truth is not None else []) + ['se'])


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('prefix', help='a calibration run (PREFIX.trials.csv.gz)')
    parser.add_argument('--estimand', required=True, help="as in the trials file, e.g. 'E[FD_n]'")
    parser.add_argument('--who', default=None)
    parser.add_argument('--statistic', default=None)
    parser.add_argument('--method', default=None)
    parser.add_argument('--truth', type=float, default=None)
    args = parser.parse_args(argv)
    trials = read_results(f'{args.prefix}.trials.csv.gz')
    chosen = trials[trials['estimand'] == args.estimand]
    for column in ('who', 'statistic', 'method'):
        if getattr(args, column) is not None:
            chosen = chosen[chosen[column].astype(str) == getattr(args, column)]
    if chosen.empty:
        parser.error(f'{args.prefix}.trials.csv.gz has no rows for estimand {args.estimand!r} with those filters; its '
                     f'estimands: {sorted(trials["estimand"].unique())}')
    if args.truth is not None and chosen['who'].nunique() > 1:
        parser.error(f'--truth is one value, but the selection holds {chosen["who"].nunique()} systems or pairs '
                     f'({sorted(chosen["who"].unique())[:5]} ...): name one with --who')
    print(rescore(chosen, args.truth).to_string(index=False))
    return 0


if __name__ == '__main__':
    sys.exit(main())
