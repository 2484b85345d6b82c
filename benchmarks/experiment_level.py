"""Level and power of the t-test pt.Experiment(baseline=) prints for FD (test experiment) beside compare's jackknife z-test,
in the package's simulated world: python benchmarks/experiment_level.py DIM QUERIES TRIALS (the docs: 384 43 100)."""
import sys, time
from pyterrier_frechet.analyses.calibration import World, rejection_rates
d, n, trials = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
t = time.time()
tab = rejection_rates(World(d=d), n_queries=(n,), n_trials=trials, n_samples=40, alpha=0.05, seed=0, verbose=False,
                      statistic=sys.argv[4] if len(sys.argv) > 4 else 'fd', tests=('jackknife', 'experiment'))
print(tab.to_string()); print('seconds', round(time.time() - t))
