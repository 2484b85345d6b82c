"""Score a directory of TREC run files with FD next to nDCG@10, using precomputed vectors.

Default data: the 19 TREC DL 2019 passage runs and all-MiniLM-L6-v2 vectors in ../shared (see its READMEs):

    python examples/dl19_runs.py [--shared ../shared]

Prints one pt.Experiment table (runs sorted by nDCG@10) and Kendall's τ between FD@10 (rel=2) and
nDCG@10 across the runs (FD is lower-is-better, so agreement shows as a negative τ).
"""
import argparse
import logging
from pathlib import Path

import pyterrier as pt
import scipy.stats
from ir_measures import nDCG

import pyterrier_frechet as pf
from pyterrier_frechet import FD


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--shared', default=str(Path(__file__).resolve().parents[2] / 'shared'))
    args = parser.parse_args()
    logging.basicConfig(level=logging.ERROR)  # the per-run counts of passages without a vector are warnings
    data = Path(args.shared) / 'data' / 'msmarco-passage'
    runs = sorted((data / 'runs').glob('run.dl19.*'))
    names = [p.name.split('.', 2)[2].rsplit('.top', 1)[0] for p in runs]
    systems = [pt.Transformer.from_df(pt.io.read_results(str(p))) for p in runs]
    topics = pt.io.read_topics(str(data / 'topics.dl19-passage.txt'), format='singleline')
    qrels = pt.io.read_qrels(str(data / 'qrels.dl19-passage.txt'))

    # Passages with no text in ../shared have no vector: leave them out (a logged count) rather than fail.
    pf.set_default_encoder(pf.VectorStore(str(Path(args.shared) / 'embeddings' / 'msmarco-passage.dl19-dl20.minilm')))
    metrics = [FD(missing='drop') @ 1, FD(missing='drop') @ 10, FD(missing='drop', rel=2) @ 10,
               FD(missing='drop', urr=True) @ 10, nDCG @ 10]
    table = pt.Experiment(systems, topics, qrels, eval_metrics=metrics, names=names)
    table.columns = [c.replace("missing='drop',", '').replace("(missing='drop')", '') for c in table.columns]
    table = table.sort_values('nDCG@10', ascending=False)
    print(table.to_markdown(index=False, floatfmt='.4f'))
    for col in ['FD@1', 'FD@10', 'FD(rel=2)@10', 'FD(urr=True)@10']:
        tau, p = scipy.stats.kendalltau(table[col], table['nDCG@10'])
        print(f'\nKendall tau({col}, nDCG@10) over {len(table)} runs = {tau:.3f} (p = {p:.2g})', end='')
    print()


if __name__ == '__main__':
    main()
