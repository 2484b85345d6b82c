"""Where the default bootstrap's memory goes, phase by phase (issue 26 (a); docs/scale.md "Where the memory went").

Synthetic MS MARCO dev shape (``bootstrap_scale.synthetic``: Q queries × 10 retrieved, ~1.07 relevant per query,
d = 384, float32 vectors in a VectorStore), one FD@10 bootstrap with its default interval. ``tracemalloc`` (numpy
reports its buffers to it) gives, around each phase of ``analyses.bootstrap``, the memory held after it and the
peak reached inside it above what was held before; the last column is the process's peak RSS so far
(libraries included, so it starts at ~0.4 GiB).

    python benchmarks/memory_profile.py [--queries 5000] [--samples 100] [--top 8]

``--top N`` lists the N source lines holding the most memory once the per-query statistics are built.
"""
import argparse
import logging
import resource
import sys
import tracemalloc
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # this checkout's package

PHASES = ['draw_counts', 'evaluate', 'select_vector_sets', 'pair_query_stats', 'weighted_fds', '_leave_out_values']


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--queries', type=int, default=5000)
    parser.add_argument('--samples', type=int, default=100)
    parser.add_argument('--top', type=int, default=8)
    args = parser.parse_args()
    tracemalloc.start(1)
    from bootstrap_scale import synthetic

    import pyterrier_frechet as pf
    from pyterrier_frechet.analyses import bootstrap as bs
    logging.basicConfig(level=logging.ERROR)

    def mib(b):
        return b / 2 ** 20

    def rss_mib():
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2 ** 10

    qrels, run, prefix, _, _ = synthetic(args.queries, 10, 384, 0)
    tracemalloc.reset_peak()
    print(f'{args.queries} queries × 10, d = 384, {args.samples} samples; MiB (tracemalloc)')
    print(f'{"phase":22s} {"held before":>12s} {"peak inside, above it":>22s} {"held after":>11s} {"peak RSS so far":>16s}')

    def wrap(name, original):
        def timed(*a, **k):
            before = tracemalloc.get_traced_memory()[0]
            tracemalloc.reset_peak()
            out = original(*a, **k)
            after, peak = tracemalloc.get_traced_memory()
            print(f'{name:22s} {mib(before):12.1f} {mib(peak - before):22.1f} {mib(after):11.1f} {rss_mib():16.1f}', flush=True)
            if name == 'pair_query_stats' and args.top:
                for stat in tracemalloc.take_snapshot().statistics('lineno')[:args.top]:
                    print(f'    {stat}')
            return out
        return timed
    for name in PHASES:
        setattr(bs, name, wrap(name, getattr(bs, name)))
    measure = pf.FD(encoder=pf.VectorStore(prefix)) @ 10
    res = bs.bootstrap({'synthetic': run}, qrels, [measure], n_samples=args.samples, seed=0, verbose=False)
    row = res.summary.iloc[0]
    print(f'FD {row["value"]:.6f} [{row["low"]:.6f}, {row["high"]:.6f}] ({row["interval"]}); process peak RSS '
          f'{rss_mib() / 1024:.2f} GiB')


if __name__ == '__main__':
    main()
