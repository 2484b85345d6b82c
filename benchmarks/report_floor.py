"""``pf.paper_table`` and ``pf.write_report`` against ``pf.evaluate`` of the same runs and measures, in one process.

Issue 50's second path: the paper's table should not take much longer than the evaluation behind it. On the TREC DL
2019 runs and MiniLM vectors of ``../shared``, with the five default measures at ``rel=2, missing='drop'`` (FD@10,
FD(urr=True)@10, FD(per_query=5)@10, nDCG@10, RR@10; the CLI's ``report --rel 2 --missing drop``), this prints the
time of ``pf.evaluate`` (what ``eval`` computes), of ``pf.paper_table`` and, with ``--report``, of
``pf.write_report``, and their ratios to the evaluation. The report writes its own section times into its last
section.

    python benchmarks/report_floor.py [--shared ../shared] [--runs 4] [--report] [--routes]
"""
import argparse
import logging
import sys
import tempfile
import time
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # this checkout's package first

import pyterrier_frechet as pf  # noqa: E402
from pyterrier_frechet.data.runs import read_qrels, read_run  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument('--shared', default=str(Path(__file__).resolve().parents[2] / 'shared'))
    ap.add_argument('--runs', type=int, default=4, help='the first N DL19 runs (sorted by file name; 19 in all)')
    ap.add_argument('--report', action='store_true', help='also time write_report')
    ap.add_argument('--routes', action='store_true',
                    help="also time the bootstrap the table and report make (resample='needed': FD computed on the "
                         "first 20 draws, the rest of τ's 200 anchored on them) against the two routes before: FD "
                         "computed on all 200 (EXACT_DRAWS = 200, commit cd2a9f0) and on every draw (resample='all')")
    args = ap.parse_args()
    logging.disable(logging.WARNING)
    warnings.simplefilter('ignore')
    ms = Path(args.shared) / 'data' / 'msmarco-passage'
    store = pf.VectorStore(str(Path(args.shared) / 'embeddings' / 'msmarco-passage.dl19-dl20.minilm'))
    qrels = read_qrels(str(ms / 'qrels.dl19-passage.txt'))
    paths = sorted((ms / 'runs').glob('run.dl19.*'))[:args.runs]
    runs = {p.name[len('run.dl19.'):].split('.top')[0]: read_run(str(p)) for p in paths}
    fd = dict(rel=2, encoder=store, missing='drop')
    measures = [pf.FD(**fd) @ 10, pf.FD(urr=True, **fd) @ 10, pf.FD(per_query=5, **fd) @ 10, 'nDCG@10', 'RR@10']
    baseline = 'bm25' if 'bm25' in runs else None
    t0 = time.perf_counter()
    pf.evaluate(runs, qrels, measures)
    evaluated = time.perf_counter() - t0
    t0 = time.perf_counter()
    pf.paper_table(runs, qrels, measures, baseline=baseline, verbose=False)
    table = time.perf_counter() - t0
    print(f'{len(runs)} DL19 runs, {len(measures)} measures: evaluate {evaluated:.1f} s; paper_table {table:.1f} s '
          f'({table / evaluated:.0f}x)')
    if args.report:
        with tempfile.TemporaryDirectory() as tmp:
            t0 = time.perf_counter()
            pf.write_report(runs, qrels, measures, Path(tmp) / 'report', baseline=baseline, verbose=False)
            report = time.perf_counter() - t0
        print(f'write_report {report:.1f} s ({report / evaluated:.0f}x evaluate)')
    if args.routes:
        import pyterrier_frechet.analyses.bootstrap as bootstrap_module
        times = {}
        anchored = bootstrap_module.EXACT_DRAWS
        for route, resample, exact in (('needed', 'needed', anchored), ('200 computed', 'needed', bootstrap_module.TAU_DRAWS),
                                       ('all', 'all', anchored)):
            bootstrap_module.EXACT_DRAWS = exact
            try:
                t0 = time.perf_counter()
                boot = pf.bootstrap(runs, qrels, measures, verbose=False, resample=resample)
                pf.tau_intervals(boot, measures)
                times[route] = time.perf_counter() - t0
            finally:
                bootstrap_module.EXACT_DRAWS = anchored
        print(f"bootstrap + tau_intervals, 1000 draws: resample='needed' {times['needed']:.1f} s (FD on {anchored} "
              f"draws, anchored to 200); FD computed on all 200 (the route of cd2a9f0) {times['200 computed']:.1f} s "
              f"({times['200 computed'] / times['needed']:.1f}x); resample='all' {times['all']:.1f} s "
              f"({times['all'] / times['needed']:.1f}x)")


if __name__ == '__main__':
    main()
