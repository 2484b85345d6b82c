"""What a ``report`` costs beside the bootstrap it is built on (issue 26, item 3), measured in one run.

1. ``bootstrap`` alone and ``write_report`` on the same runs, metrics and samples: the report must reuse the one
   bootstrap pass per run and measure for every section (intervals, τ intervals, discriminative power, paired
   comparisons), so its time is the bootstrap's plus the evaluations it adds (results, sparsified judgments) and its
   files. Target: report ≤ 1.3× bootstrap.
2. With ``--cli``: ``report`` as a new user runs it, only ``--qrels --runs --vectors --rel 2 --missing drop --out``
   (every default: the metrics, the sample count, the paired test) on every run of ``--runs``.

Each report's time is split into resampling (the per-sample statistics), leave-one-query-out (the jackknife values),
vector look-ups, reading the input files, writing (tables and figures) and the rest (evaluations, sparsification,
τ, tests), by timers wrapped around those functions in this process only.

    python benchmarks/report_cost.py --n-runs 6 --samples 1000            # 1: bootstrap vs report
    python benchmarks/report_cost.py --cli --n-runs 19                     # 2: the 19 DL19 runs on defaults
"""
import argparse
import sys
import tempfile
import time
from collections import defaultdict
from contextlib import contextmanager
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # this checkout's package first

import pyterrier_frechet as pf  # noqa: E402
from pyterrier_frechet.analyses import bootstrap as bootstrap_module, plots, report as report_module  # noqa: E402
from pyterrier_frechet.data import runs as runs_module  # noqa: E402
from pyterrier_frechet.evaluation import vector_sets  # noqa: E402

SHARED = Path(__file__).resolve().parents[2] / 'shared'
TIMES = defaultdict(float)


def _timed(owner, name, bucket):
    """Replace ``owner.name`` by a wrapper adding its time to ``TIMES[bucket]`` (or to the bucket ``bucket(*args)``
    returns) — nested timers count once, in the outermost."""
    original = getattr(owner, name)
    active = []

    def wrapper(*args, **kwargs):
        if active:
            return original(*args, **kwargs)
        active.append(1)
        t0 = time.perf_counter()
        try:
            return original(*args, **kwargs)
        finally:
            TIMES[bucket(*args, **kwargs) if callable(bucket) else bucket] += time.perf_counter() - t0
            active.pop()
    setattr(owner, name, wrapper)


def _weights_kind(*args, **kwargs):
    """Resampling draws are counts summing to the number of queries per row; leave-one-out rows are 0/1 masks
    with at least one 0."""
    weights = np.asarray(args[1] if len(args) > 1 else kwargs.get('rel_weights'))
    if weights.ndim == 2 and len(weights) and np.all((weights == 0) | (weights == 1)) and (weights == 0).any(axis=1).all() \
            and np.all(weights.sum(axis=1) == weights.sum(axis=1)[0]):
        return 'leave-one-out'
    return 'resampling'


def _cfd_kind(rel, ret, weights, *rest, **kwargs):
    return _weights_kind(None, weights)


def instrument():
    _timed(bootstrap_module, 'weighted_fds', _weights_kind)
    from pyterrier_frechet.core import conditional
    from pyterrier_frechet.measures.resampling import HistogramCounts
    _timed(conditional, 'conditional_fds', _cfd_kind)  # CFD's resampling imports it when called
    _timed(HistogramCounts, 'samples', 'resampling')
    _timed(vector_sets, 'lookup_vectors', 'vector look-ups')
    from pyterrier_frechet import cli
    for owner in (runs_module, cli):
        for name in ('read_run', 'read_qrels'):
            _timed(owner, name, 'reading input')
    for name in ('scatter', 'bootstrap_intervals', 'asl_curves', 'sparsification'):
        _timed(plots, name, 'writing figures')
    _timed(report_module, '_table', 'writing tables')


@contextmanager
def stopwatch(label, out):
    before = dict(TIMES)
    t0 = time.perf_counter()
    yield
    out[label] = (time.perf_counter() - t0, {k: TIMES[k] - before.get(k, 0.0) for k in TIMES})


def _shares(total, parts):
    parts = {k: v for k, v in parts.items() if v > 0}
    rest = total - sum(parts.values())
    rows = [f'{k} {v:.1f} s ({v / total:.0%})' for k, v in sorted(parts.items(), key=lambda kv: -kv[1])]
    return ', '.join(rows + [f'other (evaluations, sparsification, τ, tests) {rest:.1f} s ({rest / total:.0%})'])


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument('--shared', default=str(SHARED))
    parser.add_argument('--n-runs', type=int, default=6, help='the first N DL19 runs (sorted by file name)')
    parser.add_argument('--samples', type=int, default=1000)
    parser.add_argument('--cli', action='store_true', help='the report subcommand on its defaults instead')
    args = parser.parse_args()
    data = Path(args.shared) / 'data' / 'msmarco-passage'
    vectors = str(Path(args.shared) / 'embeddings' / 'msmarco-passage.dl19-dl20.minilm')
    files = sorted((data / 'runs').iterdir())[:args.n_runs]
    instrument()
    results = {}
    if args.cli:
        from pyterrier_frechet.cli import main as cli
        with tempfile.TemporaryDirectory() as tmp:
            argv = ['report', '--qrels', str(data / 'qrels.dl19-passage.txt'), '--runs', *map(str, files),
                    '--vectors', vectors, '--rel', '2', '--missing', 'drop', '--out', str(Path(tmp) / 'report')]
            print('python -m pyterrier_frechet ' + ' '.join(argv))
            with stopwatch('report (CLI, defaults)', results):
                status = cli(argv)
            assert status == 0, status
    else:
        measures = ['FD@10', 'FD(urr=True)@10', 'nDCG@10', 'RR@10']  # the CLI's default metrics, rel 2, missing drop
        with stopwatch('read input', results):
            qrels = runs_module.read_qrels(str(data / 'qrels.dl19-passage.txt'))
            runs = {name: runs_module.read_run(str(f)) for name, f in zip(runs_module.run_names(files), files)}
        ms = [pf.evaluation.evaluate.parse_measures([m])[0] for m in measures]
        ms = [m(rel=2) if 'rel' in m.SUPPORTED_PARAMS else m for m in ms]
        ms = [m(missing='drop') if pf.measures.base.is_vector_measure(m) else m for m in ms]
        store = pf.VectorStore(vectors)
        pf.evaluate(runs, qrels, ms, encoder=store)  # warm: imports, the vector file mapped
        with stopwatch('bootstrap', results):
            pf.bootstrap(runs, qrels, ms, n_samples=args.samples, seed=0, verbose=False, encoder=store)
        with tempfile.TemporaryDirectory() as tmp:
            with stopwatch('report', results):
                report_module.write_report(runs, qrels, ms, Path(tmp) / 'report', encoder=store, n_samples=args.samples,
                                           verbose=False)
        print(f'{len(runs)} DL19 runs, metrics {measures} (rel 2, missing drop), {args.samples} samples, one process')
    for label, (total, parts) in results.items():
        print(f'{label}: {total:.1f} s — {_shares(total, parts)}')
    if 'report' in results:
        print(f'report / bootstrap = {results["report"][0] / results["bootstrap"][0]:.2f}x (target <= 1.3x)')


if __name__ == '__main__':
    main()
