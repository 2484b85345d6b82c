"""Paper scale, end to end: FD@10 with its interval over the 6,980 queries of MS MARCO dev ("dev small"), through
the public API, with the time and the peak memory of each step.

    python examples/paper_scale.py                      # all 6,980 queries, 1000 bootstrap samples
    python examples/paper_scale.py --queries 500        # a quick look: 500 queries, 200 samples
    python examples/paper_scale.py --qrels my.qrels --dim 768 --out ./vectors
    python examples/paper_scale.py --report        # also `python -m pyterrier_frechet report` on defaults
    python examples/paper_scale.py --experiment    # also pt.Experiment with FD@10 (exact and influence rows), baseline=0

The qrels are the real ones (``../shared/data/msmarco-passage/qrels.msmarco-passage.dev-subset.txt`` beside the
checkout by default, or ``--qrels``: any TREC qrels file). MS MARCO dev passages have no precomputed vectors here, so the runs and
vectors are synthetic and seeded: each query has a topic direction; its relevant passages lie near it; two systems
retrieve 10 passages per query — ``strong`` ranks the query's relevant passage in its top 10 for 60% of the
queries and fills the rest with passages near the topic, ``weak`` 30%, with passages far from it. The vectors
(L2-normalised, float32, d = ``--dim``) are written block by block into a ``VectorStore`` (``PREFIX.npy`` +
``PREFIX.ids.txt``), the format of precomputed vectors: with real ones, point ``pf.VectorStore`` at them and read
the runs with ``pf.runs.read_run``.

``pf.bootstrap`` gives FD@10's value (the paper's FD), its interval (above 500 queries the delete-a-group jackknife
of log FD, docs/scale.md) and RR@10's and nDCG@10's t intervals. The store is the encoder of the call
(``encoder=store``), so the measure is plain ``FD@10`` in the table, whatever folder holds the vectors (a measure
that names its store, ``FD(encoder=store)``, is labelled by the store's path: a temporary one changes every run).

The time: each bootstrap sample and each jackknife leave-out costs one FD per run — a symmetric d × d eigenvalue
solve, 10–20 ms at d = 384 whatever the number of queries — on top of work that grows with queries × samples. So
fewer queries alone do not make a run much shorter: ``--queries 500`` with 1000 samples made 2 × (1000 + 500) FD
evaluations (at 500 queries or fewer the jackknife leaves each query out), more than the full run's
2 × (1000 + 200) (200 groups above 500 queries). A quick look (``--queries N``) therefore takes 200 samples unless
``--samples`` says otherwise; ``--jackknife G`` (``pf.bootstrap(jackknife=G)``) leaves out G groups of queries
instead of each query (fewer FDs below 500 queries, but at d/n near 1 its interval is not the same: wider here).

Memory: the float32 vectors once, the per-query sums, the resample counts and one chunk of resampled cross-products (docs/scale.md, "Where the memory
went"). ``--report`` then writes the two runs as TREC files beside the vectors and runs the command line's
``report`` on them with nothing but ``--qrels --runs --vectors --out`` (its default measures, samples and tests).
"""
import argparse
import logging
import resource
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd
from ir_measures import RR, nDCG

import pyterrier_frechet as pf

# the shared data folder beside the checkout (../shared, as the tests find it); elsewhere pass --qrels
DEV_QRELS = Path(__file__).resolve().parents[2] / 'shared' / 'data' / 'msmarco-passage' / 'qrels.msmarco-passage.dev-subset.txt'
FULL_SAMPLES, QUICK_SAMPLES = 1000, 200  # bootstrap samples of the full run and of a quick look (--queries)
SYSTEMS = {'strong': (0.6, 1.0), 'weak': (0.3, 0.4)}  # name: (share of queries with a relevant passage in the top
#                                                       depth, weight of the topic in its other passages' vectors)


def jackknife_arg(text: str):
    """--jackknife: 'auto', 'exact' or a number of groups."""
    return text if text in ('auto', 'exact') else int(text)


def peak_gib() -> float:
    """Peak resident memory of this process so far (Linux reports KiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2 ** 20


def synthetic_runs_and_vectors(qrels: pd.DataFrame, prefix: Path, dim: int = 384, depth: int = 10, seed: int = 0):
    """Two seeded runs over the qrels' queries and a VectorStore at ``prefix`` holding a vector for every relevant
    and every retrieved passage (written a block of rows at a time: never a float64 copy of all of them)."""
    rng = np.random.default_rng(seed)
    relevant = qrels[qrels['label'] > 0].drop_duplicates('docno')
    queries = np.array(sorted(qrels['qid'].unique()))
    q_index = pd.Index(queries)
    first_rel = relevant.drop_duplicates('qid').set_index('qid')['docno']  # the passage a hit ranks
    topics = rng.normal(size=(len(queries), dim)).astype(np.float32)
    topics /= np.linalg.norm(topics, axis=1, keepdims=True)

    # rows of the store: the relevant passages, then each system's depth other passages per query
    docnos = [relevant['docno'].to_numpy(dtype=str)]
    topic_of = [q_index.get_indexer(relevant['qid'])]
    topic_weight = [np.full(len(relevant), 1.0)]
    noise = [np.full(len(relevant), 0.8)]
    runs = {}
    for name, (hit_share, weight) in SYSTEMS.items():
        names = np.char.add(np.char.add(f'{name}-', np.repeat(queries, depth)), np.char.add('-', np.tile(np.arange(depth).astype(str), len(queries))))
        docnos.append(names)
        topic_of.append(np.repeat(np.arange(len(queries)), depth))
        topic_weight.append(np.full(len(names), weight))
        noise.append(np.full(len(names), 1.0))
        ranked = names.reshape(len(queries), depth).astype(object)
        has_rel = np.flatnonzero(q_index.isin(first_rel.index) & (rng.random(len(queries)) < hit_share))
        ranked[has_rel, rng.integers(0, depth, len(has_rel))] = first_rel.loc[queries[has_rel]].to_numpy()
        runs[name] = pd.DataFrame({'qid': np.repeat(queries, depth), 'docno': ranked.ravel(),
                                   'score': np.tile(np.arange(depth, 0, -1.0), len(queries)),
                                   'rank': np.tile(np.arange(depth), len(queries))})
    docnos, topic_of = np.concatenate(docnos), np.concatenate(topic_of)
    topic_weight, noise = np.concatenate(topic_weight), np.concatenate(noise)

    vecs = np.lib.format.open_memmap(f'{prefix}.npy', mode='w+', dtype=np.float32, shape=(len(docnos), dim))
    step = max(1, (1 << 22) // dim)
    for start in range(0, len(docnos), step):
        rows = slice(start, min(start + step, len(docnos)))
        block = topic_weight[rows, None] * topics[topic_of[rows]] + noise[rows, None] * rng.normal(size=(rows.stop - start, dim)) / np.sqrt(dim)
        vecs[rows] = block / np.linalg.norm(block, axis=1, keepdims=True)
    vecs.flush()
    del vecs
    with open(f'{prefix}.ids.txt', 'w') as out:
        for start in range(0, len(docnos), 1 << 16):
            out.write('\n'.join(docnos[start:start + (1 << 16)]) + '\n')
    return runs, pf.VectorStore(str(prefix))


def main(argv=None) -> pd.DataFrame:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--qrels', default=str(DEV_QRELS), help='TREC qrels file (default: MS MARCO dev small)')
    parser.add_argument('--queries', type=int, default=None, help='keep only the first N queries (sorted ids): a quick '
                        f'look, with {QUICK_SAMPLES} samples unless --samples')
    parser.add_argument('--samples', type=int, default=None,
                        help=f'bootstrap samples (default {FULL_SAMPLES}; {QUICK_SAMPLES} with --queries)')
    parser.add_argument('--dim', type=int, default=384, help='dimension of the synthetic vectors (default 384)')
    parser.add_argument('--seed', type=int, default=0)
    parser.add_argument('--jackknife', type=jackknife_arg, default='auto',
                        help="pf.bootstrap's jackknife: auto (default: each query left out up to 500 queries, 200 "
                             'groups above), exact, or a number of groups G')
    parser.add_argument('--out', default=None, help='folder for the VectorStore files (default: a temporary one)')
    parser.add_argument('--report', action='store_true',
                        help='also run `python -m pyterrier_frechet report` on defaults over the same runs and vectors')
    parser.add_argument('--experiment', action='store_true',
                        help="also pt.Experiment with FD@10 beside RR@10, baseline=0: exact rows, then rows='influence'")
    args = parser.parse_args(argv)
    if not Path(args.qrels).exists():
        raise SystemExit(f'{args.qrels} does not exist: pass --qrels PATH (a TREC qrels file)')
    logging.basicConfig(level=logging.WARNING)

    t0 = time.perf_counter()
    qrels = pf.runs.read_qrels(args.qrels)
    if args.queries is not None:
        qrels = qrels[qrels['qid'].isin(sorted(qrels['qid'].unique())[:args.queries])]
    n_samples = args.samples if args.samples is not None else QUICK_SAMPLES if args.queries is not None else FULL_SAMPLES
    out = Path(args.out or tempfile.mkdtemp())
    out.mkdir(parents=True, exist_ok=True)
    runs, store = synthetic_runs_and_vectors(qrels, out / 'vectors', dim=args.dim, seed=args.seed)
    n_rows = sum(len(r) for r in runs.values())
    print(f'{qrels["qid"].nunique()} queries, {len(qrels)} qrels, {len(runs)} runs of {n_rows} rows in all, '
          f'{len(store._index)} vectors (d = {args.dim}, float32) in {out}: {time.perf_counter() - t0:.1f} s, '
          f'peak RSS {peak_gib():.2f} GiB', flush=True)

    t1 = time.perf_counter()
    # the store as the call's encoder: the column is FD@10, not FD(encoder=VectorStore('/tmp/...'))@10
    measures = [pf.FD @ 10, RR @ 10, nDCG @ 10]
    result = pf.bootstrap(runs, qrels, measures, n_samples=n_samples, seed=args.seed, encoder=store,
                          jackknife=args.jackknife)
    seconds = time.perf_counter() - t1
    table = result.summary[['name', 'measure', 'value', 'low', 'high', 'interval']]
    with pd.option_context('display.width', 200, 'display.max_colwidth', 60):
        print(table.to_string(index=False))
    print(f'pf.bootstrap ({n_samples} samples, {len(runs)} runs, {len(measures)} measures): {seconds:.1f} s; '
          f'peak RSS of the whole script {peak_gib():.2f} GiB', flush=True)
    if args.report:
        report_on_defaults(qrels, runs, out)
    if args.experiment:
        experiment_rows(qrels, runs, store)
    return result.summary


def experiment_rows(qrels: pd.DataFrame, runs: dict, store) -> None:
    """pt.Experiment over the runs with RR@10 alone, then beside FD@10 (exact rows: above 500 queries, 200 seeded
    groups left out) and beside FD(rows='influence')@10 (a row per query from its influence), baseline=0, timed."""
    import pyterrier as pt
    topics = pd.DataFrame({'qid': sorted(qrels['qid'].unique()), 'query': ''})
    systems = [pt.Transformer.from_df(r) for r in runs.values()]
    for label, measures in (('RR@10', [RR @ 10]), ('FD@10 + RR@10', [pf.FD @ 10, RR @ 10]),
                            ("FD(rows='influence')@10 + RR@10", [pf.FD(rows='influence') @ 10, RR @ 10])):
        t = time.perf_counter()
        with pf.default_encoder(store):  # the store as the default encoder: the columns are FD@10, not FD(encoder=...)
            table = pt.Experiment(systems, topics, qrels, eval_metrics=measures, names=list(runs), baseline=0)
        p_values = table.filter(like='p-value').iloc[1].round(6).to_dict()
        print(f'pt.Experiment, {label}, baseline=0: {time.perf_counter() - t:.1f} s; p-values {p_values}; peak RSS of '
              f'the whole script {peak_gib():.2f} GiB', flush=True)


def report_on_defaults(qrels: pd.DataFrame, runs: dict, out: Path) -> None:
    """The runs as TREC files and ``report`` with only --qrels --runs --vectors --out, timed."""
    import pyterrier as pt
    from pyterrier_frechet.cli import main as cli
    (out / 'runs').mkdir(exist_ok=True)
    for name, run in runs.items():
        pt.io.write_results(run.assign(rank=run['rank']), str(out / 'runs' / f'{name}.txt'), format='trec', run_name=name)
    with open(out / 'qrels.txt', 'w') as f:
        for q, d, label in zip(qrels['qid'], qrels['docno'], qrels['label']):
            f.write(f'{q} 0 {d} {label}\n')
    t = time.perf_counter()
    code = cli(['report', '--qrels', str(out / 'qrels.txt'), '--runs', str(out / 'runs'), '--vectors', str(out / 'vectors'),
                '--out', str(out / 'report')])
    print(f'report on defaults: exit {code} in {time.perf_counter() - t:.1f} s; peak RSS of the whole script '
          f'{peak_gib():.2f} GiB; written to {out / "report"}', flush=True)


if __name__ == '__main__':
    main()
