"""Level and power of the t-test ``pt.Experiment(baseline=...)`` prints for FD (test ``experiment``) beside compare's
jackknife z-test, in the package's simulated world, in one run:

    python benchmarks/experiment_level.py 384 43 100        # DIM QUERIES TRIALS (benchmarks/results/calibration-level-experiment-384-43.txt)
"""
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # this checkout's package first

from pyterrier_frechet.analyses.calibration import World, rejection_rates  # noqa: E402


def main() -> None:
    d, n, trials = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
    start = time.time()
    table = rejection_rates(World(d=d), n_queries=(n,), n_trials=trials, n_samples=40, alpha=0.05, seed=0,
                            verbose=False, statistic=sys.argv[4] if len(sys.argv) > 4 else 'fd',
                            tests=('jackknife', 'experiment'))
    print(table.to_string())
    print('seconds', round(time.time() - start))


if __name__ == '__main__':
    main()
