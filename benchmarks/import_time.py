"""Import cost of the package: ``import pyterrier, ir_measures`` against the same plus ``import pyterrier_frechet``,
each in a fresh interpreter, best of N (issue 14 target: at most +0.3 s).

    python benchmarks/import_time.py [--repeats 3]
"""
import argparse
import subprocess
import sys
import time


def best(code: str, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        subprocess.run([sys.executable, '-c', code], check=True)
        times.append(time.perf_counter() - start)
    return min(times)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument('--repeats', type=int, default=3)
    args = parser.parse_args()
    best('import pyterrier, ir_measures, pyterrier_frechet', 1)  # warm the OS file cache and .pyc files
    base = best('import pyterrier, ir_measures', args.repeats)
    ours = best('import pyterrier, ir_measures, pyterrier_frechet', args.repeats)
    print(f'import pyterrier, ir_measures:                    {base:.3f} s (best of {args.repeats})')
    print(f'import pyterrier, ir_measures, pyterrier_frechet: {ours:.3f} s (best of {args.repeats})')
    print(f'overhead of pyterrier_frechet: {ours - base:+.3f} s (target <= 0.300 s)')


if __name__ == '__main__':
    main()
