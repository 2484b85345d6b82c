"""How often one ``pt.Experiment`` prepares and codes the qrels (issue 28, item 4), counted in one run.

ir_measures builds a new evaluator for every system, and PyTerrier hands each a new copy of the qrels frame; this
package's provider prepares the qrels (:func:`~pyterrier_frechet.evaluation.frames.prepare_qrels`: renaming, str
ids, duplicate and label checks) and codes them (:class:`~pyterrier_frechet.evaluation.selection.Judgments`) for an
evaluator. The script runs ``pt.Experiment`` over the 19 DL19 runs of ``../shared/data/msmarco-passage/runs`` (or
``--copies`` copies of one bundled-size synthetic run when the shared data is absent) with DO@10, HSA@10, FD@10
(the MiniLM VectorStore, ``missing='drop'``) and nDCG@10, and prints the number of preparations and codings and
the wall time; then the same for ``pf.evaluate`` (the path of the CLI's ``eval``). Run it from a checkout to count
that checkout's code.

    python benchmarks/qrels_preparations.py [--shared ../shared] [--no-fd] [--out table.csv]
"""
import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # this checkout's package first

import pandas as pd  # noqa: E402
import pyterrier as pt  # noqa: E402
from ir_measures import nDCG  # noqa: E402

import pyterrier_frechet as pf  # noqa: E402
from pyterrier_frechet.data.runs import read_qrels, read_run  # noqa: E402
from pyterrier_frechet.evaluation import frames, provider, selection  # noqa: E402


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--shared', default=str(Path(__file__).resolve().parents[2] / 'shared'))
    parser.add_argument('--no-fd', action='store_true', help='leave FD@10 out (no vectors needed)')
    parser.add_argument('--out', help='write the table (every run) to this CSV file, to compare two checkouts')
    args = parser.parse_args()
    data = Path(args.shared) / 'data' / 'msmarco-passage'
    qrels = read_qrels(data / 'qrels.dl19-passage.txt')
    files = sorted((data / 'runs').glob('run.dl19.*'))
    runs = [read_run(f) for f in files]
    names = [f.name.split('.')[2] + '.' + f.name.split('.')[3] for f in files]
    metrics = [pf.DO @ 10, pf.HSA @ 10, nDCG @ 10]
    store = Path(args.shared) / 'embeddings' / 'msmarco-passage.dl19-dl20.minilm'
    if not args.no_fd and Path(str(store) + '.npy').exists():
        metrics.insert(0, pf.FD(encoder=pf.VectorStore(str(store)), missing='drop', rel=2) @ 10)
    counts = {'prepare_qrels': 0, 'Judgments': 0}
    real_prepare, real_init = frames.prepare_qrels, selection.Judgments.__init__

    def prepare(*a, **kw):
        counts['prepare_qrels'] += 1
        return real_prepare(*a, **kw)

    def init(self, *a, **kw):
        counts['Judgments'] += 1
        return real_init(self, *a, **kw)

    frames.prepare_qrels = provider.prepare_qrels = prepare
    if hasattr(selection, "prepare_qrels"):  # where the provider's qrels memo calls it
        selection.prepare_qrels = prepare
    selection.Judgments.__init__ = init
    topics = pd.DataFrame({'qid': sorted(qrels.qid.unique()), 'query': ''})
    start = time.perf_counter()
    table = pt.Experiment(runs, topics, qrels, eval_metrics=metrics, names=names, verbose=False)
    took = time.perf_counter() - start
    print(f'{len(runs)} runs x {[str(m) for m in metrics]} in one pt.Experiment: qrels prepared {counts["prepare_qrels"]} '
          f'time(s), coded (Judgments) {counts["Judgments"]} time(s); {took:.1f} s  [{pf.__file__}]')
    counts.update({'prepare_qrels': 0, 'Judgments': 0})
    start = time.perf_counter()
    direct = pf.evaluate(dict(zip(names, runs)), qrels, metrics)
    took = time.perf_counter() - start
    print(f'the same with pf.evaluate (what `eval` runs): qrels prepared {counts["prepare_qrels"]} time(s), coded '
          f'{counts["Judgments"]} time(s); {took:.1f} s')
    if args.out:
        table.to_csv(args.out, index=False, float_format='%.17g')
        direct.to_csv(args.out.replace('.csv', '') + '.evaluate.csv', index=False, float_format='%.17g')


if __name__ == '__main__':
    main()
