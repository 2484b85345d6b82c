"""Benchmark: the bootstrap's default interval (jackknife bias-corrected) at MS MARCO dev scale and beyond
(issue 26 item 1), synthetic vectors (``bootstrap_scale.synthetic``: Q queries × 10 retrieved, ~1.07 relevant per
query, d = 384, L2-normalised normal vectors, seeded), every variant in its own process so that each peak RSS is
its own; the parent prints the ratios measured in this one run.

    python benchmarks/jackknife_scale.py msmarco [--queries 6980] [--samples 1000]
        default bootstrap (its leave-out values: the delete-a-group jackknife above 500 unit queries) vs the
        percentile-only bootstrap of the same samples: time ratio (target ≤ 1.5×) and peak RSS (target ≤ 2 GiB);
        the time of the leave-out phase alone, and of one leave-out FD (which sets the exact/grouped threshold).
    python benchmarks/jackknife_scale.py growth [--sizes 1000 2000 4000 8000] [--samples 1000]
        the default bootstrap's time at each Q: time per 1,000 queries and the marginal cost (target: linear).
    python benchmarks/jackknife_scale.py large [--queries 100000] [--samples 1000]
        the default bootstrap completes: time and peak RSS (target ≤ 4 GiB).
"""
import argparse
import json
import logging
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # this checkout's package

import numpy as np  # noqa: E402

import pyterrier_frechet as pf  # noqa: E402
from pyterrier_frechet.analyses import bootstrap as bs  # noqa: E402


def child(args):
    """One bootstrap in this process; writes its figures to ``args.child``.json."""
    from bootstrap_scale import synthetic
    logging.basicConfig(level=logging.ERROR)
    qrels, run, prefix, _, _ = synthetic(args.queries, 10, args.dim, args.seed)
    measure = pf.FD(encoder=pf.VectorStore(prefix)) @ 10
    leave_out = {'seconds': 0.0, 'groups': 0}
    from pyterrier_frechet.measures.definitions import Gaussian
    original = Gaussian.leave_out  # FD's leave-outs (its resampling's)

    def timed(*a, **k):  # the leave-out phase alone
        t0 = time.perf_counter()
        out = original(*a, **k)
        leave_out['seconds'] += time.perf_counter() - t0
        leave_out['groups'] += len(out)
        return out
    Gaussian.leave_out = timed
    t0 = time.perf_counter()
    res = bs.bootstrap({'synthetic': run}, qrels, [measure], n_samples=args.samples, seed=args.seed, verbose=False,
                       interval='percentile' if args.variant == 'percentile' else None,
                       jackknife='exact' if args.variant == 'exact' else 'auto')
    seconds = time.perf_counter() - t0
    row = res.summary.iloc[0]
    figures = {'seconds': seconds, 'peak_gib': resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2 ** 20,
               'leave_out_seconds': leave_out['seconds'], 'leave_outs': leave_out['groups'],
               'interval': row['interval'], 'jackknife': row['jackknife'], 'value': float(row['value']),
               'estimate': float(row['estimate']), 'low': float(row['low']), 'high': float(row['high'])}
    Path(f'{args.child}.json').write_text(json.dumps(figures))


def run_child(args, queries, variant, out: Path) -> dict:
    name = f'{variant}-{queries}'
    cmd = [sys.executable, __file__, args.mode, '--queries', str(queries), '--samples', str(args.samples),
           '--dim', str(args.dim), '--seed', str(args.seed), '--variant', variant, '--child', str(out / name)]
    subprocess.run(cmd, check=True)
    figures = json.loads((out / f'{name}.json').read_text())
    print(f'  {variant:10s} Q = {queries:6d}: {figures["seconds"]:7.1f} s, peak RSS {figures["peak_gib"]:.2f} GiB, '
          f'interval {figures["interval"]!r}, jackknife {figures["jackknife"]!r}, leave-out phase '
          f'{figures["leave_out_seconds"]:.1f} s for {figures["leave_outs"]} leave-outs; FD {figures["value"]:.5f}, '
          f'estimate {figures["estimate"]:.5f} [{figures["low"]:.5f}, {figures["high"]:.5f}]', flush=True)
    return figures


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('mode', choices=['msmarco', 'growth', 'large'])
    parser.add_argument('--queries', type=int, default=None)
    parser.add_argument('--sizes', type=int, nargs='+', default=[1000, 2000, 4000, 8000])
    parser.add_argument('--samples', type=int, default=1000)
    parser.add_argument('--dim', type=int, default=384)
    parser.add_argument('--seed', type=int, default=0)
    parser.add_argument('--variant', choices=['default', 'percentile', 'exact'], default='default')
    parser.add_argument('--child', default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child is not None:
        return child(args)
    out = Path(tempfile.mkdtemp())
    print(f'{args.mode}: {args.samples} samples, d = {args.dim}, seed {args.seed}; one process per variant', flush=True)
    if args.mode == 'msmarco':
        q = args.queries or 6980
        pct = run_child(args, q, 'percentile', out)
        dft = run_child(args, q, 'default', out)
        per_fd = dft['leave_out_seconds'] / max(dft['leave_outs'], 1)
        print(f'default / percentile time = {dft["seconds"] / pct["seconds"]:.2f}x (target <= 1.5x); peak RSS default '
              f'{dft["peak_gib"]:.2f} GiB, percentile {pct["peak_gib"]:.2f} GiB (target <= 2 GiB); leave-out phase '
              f'{dft["leave_out_seconds"]:.1f} s = {per_fd * 1e3:.0f} ms per leave-out; the exact jackknife would need '
              f'~{q} leave-outs ≈ {q * per_fd:.0f} s, {(pct["seconds"] + q * per_fd) / pct["seconds"]:.1f}x the percentile '
              f'bootstrap', flush=True)
    elif args.mode == 'growth':
        rows = [(q, run_child(args, q, 'default', out)) for q in args.sizes]
        base_q, base = rows[0]
        for q, f in rows:
            print(f'  Q = {q:6d}: {f["seconds"]:7.1f} s, {f["seconds"] / q * 1e3:6.1f} s per 1,000 queries, '
                  f'time ratio to Q = {base_q}: {f["seconds"] / base["seconds"]:.2f} (query ratio {q / base_q:.0f})')
        slopes = [(b["seconds"] - a["seconds"]) / (qb - qa) * 1e3 for (qa, a), (qb, b) in zip(rows, rows[1:])]
        print('  marginal cost per 1,000 queries between consecutive sizes: '
              + ', '.join(f'{s:.1f} s' for s in slopes) + ' (linear: constant)')
    else:
        q = args.queries or 100000
        f = run_child(args, q, 'default', out)
        print(f'{q} queries: the default bootstrap completed in {f["seconds"]:.0f} s, peak RSS {f["peak_gib"]:.2f} GiB '
              f'(target <= 4 GiB)')


if __name__ == '__main__':
    main()
