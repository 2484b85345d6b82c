"""Command line: ``python -m pyterrier_frechet demo``."""
import argparse
import logging
import sys


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog='python -m pyterrier_frechet', description='Fréchet Distance evaluation for IR')
    sub = parser.add_subparsers(dest='command', required=True)
    demo = sub.add_parser('demo', help='BM25 and dense retrieval on the bundled Cranfield collection, with FD, nDCG@10, RR@10 and mrt')
    demo.add_argument('--model', default=None, help='encoder (hub name or local path; default all-MiniLM-L6-v2)')
    demo.add_argument('--work-dir', default=None, help='indexes and embedding cache (default $PYTERRIER_FRECHET_CACHE or ~/.cache/pyterrier_frechet)')
    demo.add_argument('--quiet', action='store_true', help='no progress bars')
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.WARNING, format='%(levelname)s %(name)s: %(message)s')

    if args.command == 'demo':
        from .demo import run_demo
        try:
            result = run_demo(args.model, args.work_dir, verbose=not args.quiet)
        except ValueError as ex:
            print(f'error: {ex}', file=sys.stderr)
            return 2
        print(result.table.to_string(index=False, float_format=lambda v: f'{v:.4g}'))
        print(f'\nFD: lower is better (nDCG@10, RR@10: higher is better). Encoder: {result.embedder!r}.')
        print(f'Documents encoded by this run: {result.n_encoded} (embedding cache: {result.embedder.cache.path})')
        return 0
    return 2  # pragma: no cover - argparse rejects unknown commands


if __name__ == '__main__':
    sys.exit(main())
