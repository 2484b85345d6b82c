"""A table of every measure of the package on TREC DL 2019 passage (rel=2), to hold a change to "the numbers are the same".

Writes a CSV of ``measure, run, value`` rows (values printed with 17 significant digits, so they read back exactly):

- every registered measure of the package over rankings (FD and its variants, CFD, FDInf, KID, the k-NN measures,
  DO, HSA) and nDCG@10 through ``pf.evaluate`` on the 19 DL19 runs (``--runs`` picks fewer), vectors from
  ``/work/shared/embeddings`` (a ``pf.VectorStore``; passages without text have no vector: ``missing='drop'``);
- ``pf.bootstrap`` (fixed seed, ``--samples`` resamples) of FD, FD(weighting='query'), CFD, DO and HSA on three
  runs: the value, printed estimate, interval ends (each measure's default interval; jackknife_bc for FD and CFD),
  mean and std of the resamples, and the leave-one-query-out (jackknife) values;
- ``pf.compare_systems`` of those runs on the same resamples (differences, interval ends, bootstrap / normal /
  jackknife / Holm p-values);
- ``pf.analyses.significance.paired_test`` of two runs (bootstrap and randomisation p-values).

Only public API present both before and after issue 28 is used (measure strings, ``pf.evaluate``,
``pf.bootstrap``, ``pf.compare_systems``, ``pf.runs``, ``pf.VectorStore``), so the same script runs on an older
checkout. The answer measures (AnswerFD, AnswerCFD) are not in the table: they take a RAG pipeline's generated
answers and embed their text with a model, and DL19's runs are rankings.

Usage (from the checkout's root; its own package is imported first)::

    python benchmarks/regression_table.py --out tests/data/dl19_every_measure.csv

``tests/test_regression_dl19.py`` recomputes the table with :func:`table` and compares it with the committed CSV.
"""
import argparse
import math
import sys
import warnings
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))  # this checkout's package, not an installed one

SHARED = ROOT.parent / 'shared'
MSMARCO = SHARED / 'data' / 'msmarco-passage'
VECTORS = SHARED / 'embeddings' / 'msmarco-passage.dl19-dl20.minilm'

V = "rel=2,missing='drop'"
#: Every measure evaluated on every run given (ir_measures-style strings).
EVALUATE = [
    f'FD({V})', f'FD({V})@1', f'FD({V})@10', f'FD({V},urr=True)@10', f"FD({V},weighting='query')@10",
    f'FD({V},per_query=5)@10', f'FD({V},per_query=5,draws=3)@10', f'FD({V},jackknife=True)@10',
    f"FD({V},term='mean')@10", f"FD({V},term='cov')@10", f'SpreadRatio({V})@10',
    f'CFD({V})@10', f'CFD({V},urr=True)@10', f'CFD({V},per_query=5)@10',
    f'FDInf({V})@10', f'FDInf({V},points=5,min_fraction=0.7,seed=3)@10',
    f'KID({V})@10', f'KID({V},degree=2)@10',
    f'KNNPrecision({V})@10', f'KNNRecall({V})@10', f'KNNPrecision({V},k=5)@10', f'KNNRecall({V},k=5)@10',
    'DO(rel=2)@100', "DO(rel=2,norm='rank')@100", "DO(rel=2,unjudged='nonrel',bins=20)@100", 'DO(rel=2)@10',
    'HSA(rel=2)@100', "HSA(rel=2,norm='rank')@100", "HSA(rel=2,unjudged='nonrel',bins=20)@100",
    'nDCG@10',
]
#: Measures bootstrapped and compared, on RESAMPLED_RUNS (the default interval of each).
RESAMPLED = [f'FD({V})@10', f"FD({V},weighting='query')@10", f'CFD({V})@10', 'DO(rel=2)@100', 'HSA(rel=2)@100']
#: Bootstrapped again with another interval (jackknife_bc: the jackknife's bias-corrected interval).
RESAMPLED_OTHER_INTERVAL = ([f'FD({V})@10', f'CFD({V})@10'], 'jackknife_bc')
RESAMPLED_RUNS = ['bm25', 'tasb', 'bm25.monot5-3b']
SEED = 0


def run_name(path: Path) -> str:
    return path.name.split('.', 2)[2].rsplit('.top', 1)[0]


def run_paths():
    return {run_name(p): p for p in sorted((MSMARCO / 'runs').glob('run.dl19.*'))}


def load(names=None):
    """qrels, {name: run frame} (every DL19 run, or those named) and the VectorStore."""
    import pyterrier_frechet as pf
    paths = run_paths()
    names = list(paths) if names is None else names
    qrels = pf.runs.read_qrels(MSMARCO / 'qrels.dl19-passage.txt')
    runs = {n: pf.runs.read_run(paths[n]) for n in names}
    return qrels, runs, pf.VectorStore(str(VECTORS))


def package_measure_names():
    """The names of the package's registered measures over rankings (answer measures excepted)."""
    from ir_measures import measures
    from pyterrier_frechet.measures import SetMeasure
    return sorted({m.NAME for m in measures.registry.values()
                   if isinstance(m, SetMeasure) and getattr(m, 'INPUT', '') != 'answers'})


def label(measure: str) -> str:
    """The column a results table gives the measure (without its missing= policy)."""
    import ir_measures
    from pyterrier_frechet.measures import column_label
    return column_label(ir_measures.parse_measure(measure))


def evaluate_rows(runs, qrels, store, measures=EVALUATE):
    import pyterrier_frechet as pf
    table = pf.evaluate(runs, qrels, list(measures), encoder=store)
    rows = []
    for _, r in table.iterrows():
        for m in measures:
            rows.append((m, r['name'], float(r[label(m)])))
        for col in [c for c in ('no_vector_relevant', 'no_vector_retrieved') if c in r]:
            rows.append((col, r['name'], float(r[col])))
    return rows


def _bootstrap_rows(boot, tag, columns):
    return [(f'bootstrap[{tag}]:{r["measure"]}:{col}', r['name'], float(r[col]))
            for _, r in boot.summary.iterrows() for col in columns]


def resample_rows(runs, qrels, store, measures=RESAMPLED, n_samples=200):
    """``pf.bootstrap`` (default intervals; then :data:`RESAMPLED_OTHER_INTERVAL`), its leave-one-query-out values,
    ``pf.compare_systems`` on the same resamples and ``paired_test`` of the first two runs, seed :data:`SEED`."""
    import numpy as np
    import pyterrier_frechet as pf
    from pyterrier_frechet.analyses.significance import paired_test
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')  # p-values from few resamples are coarse: known, and the point here
        boot = pf.bootstrap(runs, qrels, list(measures), n_samples=n_samples, seed=SEED, verbose=False, encoder=store)
        other, interval = RESAMPLED_OTHER_INTERVAL
        boot_other = pf.bootstrap(runs, qrels, other, n_samples=n_samples, seed=SEED, verbose=False, encoder=store,
                                  interval=interval)
        compared = pf.compare_systems(runs, qrels, list(measures), seed=SEED, verbose=False, encoder=store, boot=boot)
        a, b = list(runs)[:2]
        fd = pf.FD(rel=2, missing='drop', encoder=store) @ 10
        pr = paired_test(runs[a], runs[b], qrels, fd, n_samples=n_samples, n_permutations=n_samples, seed=SEED)
    rows = _bootstrap_rows(boot, 'default', ['value', 'estimate', 'low', 'high', 'mean', 'std', 'n_valid'])
    rows += _bootstrap_rows(boot_other, interval, ['estimate', 'low', 'high'])
    for name, per in (boot.jackknife or {}).items():
        for lab, values in per.items():
            values = np.asarray(values, dtype=np.float64)
            rows.append((f'jackknife:{lab}:sum', name, float(values.sum())))
            rows.append((f'jackknife:{lab}:min', name, float(values.min())))
            rows.append((f'jackknife:{lab}:max', name, float(values.max())))
            if name == a and lab in (label(measures[0]), label(f'CFD({V})@10')):
                rows += [(f'jackknife:{lab}:{i}', name, float(v)) for i, v in enumerate(values)]
    for _, r in compared.iterrows():
        for col in ('value_a', 'value_b', 'diff', 'ci_low', 'ci_high', 'p_bootstrap', 'p_normal', 'p_jackknife',
                    'p_holm'):
            rows.append((f'compare:{r["measure"]}:{col}', f'{r["a"]}|{r["b"]}', float(r[col])))
    for field in ('fd_a', 'fd_b', 'diff', 'ci_low', 'ci_high', 'p_bootstrap', 'p_randomisation', 'n_queries'):
        rows.append((f'paired_test:FD({V})@10:{field}', f'{a}|{b}', float(getattr(pr, field))))
    return rows


def table(evaluate_runs=None, n_samples=200):
    """Every row: ``pf.evaluate`` of :data:`EVALUATE` on ``evaluate_runs`` (default: all 19) and the resampling
    outputs of :data:`RESAMPLED` on :data:`RESAMPLED_RUNS`."""
    qrels, runs, store = load(evaluate_runs)
    rows = evaluate_rows(runs, qrels, store)
    _, few, _ = load(RESAMPLED_RUNS)
    return rows + resample_rows(few, qrels, store, n_samples=n_samples)


def write(rows, path):
    import csv
    with open(path, 'w', newline='') as f:
        w = csv.writer(f, lineterminator='\n')
        w.writerow(['measure', 'run', 'value'])
        for m, r, v in rows:
            w.writerow([m, r, 'nan' if math.isnan(v) else repr(float(v))])


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    p.add_argument('--out', required=True, help='CSV to write')
    p.add_argument('--runs', nargs='*', help='DL19 run names for pf.evaluate (default: all 19)')
    p.add_argument('--samples', type=int, default=200, help='bootstrap samples (default 200)')
    args = p.parse_args(argv)
    import time
    import pyterrier_frechet as pf
    print('package:', pf.__file__)
    covered = {m.split('(')[0].split('@')[0] for m in EVALUATE}
    missing = sorted(set(package_measure_names()) - covered)
    if missing:
        raise SystemExit(f'measures of the package not in the table: {missing}')
    t0 = time.perf_counter()
    rows = table(args.runs, args.samples)
    write(rows, args.out)
    print(f'{len(rows)} values in {time.perf_counter() - t0:.1f} s -> {args.out}')


if __name__ == '__main__':
    main()
