"""A default journey: one embedding cache folder shared by two corpora whose docnos collide (Cranfield and Vaswani).

Cranfield's documents are numbered 1..1400 and Vaswani's 1..11429, so every Cranfield docno is also a Vaswani docno
with another text. The script retrieves BM25's top 10 (pyterrier-pisa) on each collection and computes FD@10 with the
default encoder (all-MiniLM-L6-v2) three ways:

1. ``shared``: one cache folder, Cranfield then Vaswani, by two Embedders over their own ``texts=``;
2. ``separate``: a fresh cache folder per corpus (the reference);
3. ``warm``: new Embedders over the shared folder (a process restart in effect), Vaswani first this time.

and prints the FD values, their largest relative difference between the three, and how many documents each pass ran
through the model (the warm pass must encode none). Exit status 1 if the shared or warm FD differs from the
separate one by more than 1e-6 relative, or the warm pass encoded anything.

    python benchmarks/journey_shared_cache.py [--work-dir DIR]      # needs ../shared (Vaswani); ~5 min on 2 cores
"""
import argparse
import gzip
import re
import sys
import tempfile
import time
from pathlib import Path

import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # this checkout's package first

import pyterrier_frechet as pf  # noqa: E402
from pyterrier_frechet import FD, pipelines  # noqa: E402
from pyterrier_frechet.data.bundled import Collection, cranfield  # noqa: E402
from pyterrier_frechet.data.runs import read_qrels  # noqa: E402
from pyterrier_frechet.measures.base import column_label  # noqa: E402

VASWANI = Path(__file__).resolve().parents[2] / 'shared' / 'data' / 'vaswani'


def _trec_blocks(text: str, tag: str):
    return re.findall(rf'<{tag}>(.*?)</{tag}>', text, flags=re.S | re.I)


def vaswani() -> Collection:
    """Vaswani (NPL) from ../shared/data/vaswani: 11,429 documents, 93 queries, binary qrels."""
    if not VASWANI.is_dir():
        sys.exit(f'{VASWANI} not found: put ../shared beside the repository')
    with gzip.open(VASWANI / 'doc-text.trec.gz', 'rt', encoding='utf-8', errors='replace') as f:
        docs = _trec_blocks(f.read(), 'DOC')
    texts = {}
    for doc in docs:
        docno = re.search(r'<DOCNO>\s*(.*?)\s*</DOCNO>', doc, flags=re.S | re.I).group(1)
        texts[docno] = ' '.join(re.sub(r'<DOCNO>.*?</DOCNO>', ' ', doc, flags=re.S | re.I).split())
    queries = _trec_blocks((VASWANI / 'query-text.trec').read_text(encoding='utf-8'), 'TOP')
    topics = pd.DataFrame([{'qid': re.search(r'<NUM>\s*(.*?)\s*</NUM>', q, flags=re.S | re.I).group(1),
                            'query': ' '.join(re.search(r'<TITLE>(.*?)(?:</TITLE>|$)', q, flags=re.S | re.I)
                                              .group(1).split()).lower()}
                           for q in queries])
    qrels = read_qrels(VASWANI / 'qrels')
    return Collection('vaswani', topics, qrels, texts)


def fd_at_10(collection: Collection, run: pd.DataFrame, cache_dir) -> tuple:
    # Cranfield's document 995 is empty in the source collection: embed it as such (the default refuses empty text)
    emb = pf.Embedder(texts=collection.texts, cache_dir=cache_dir, empty_text='embed', verbose=False)
    t0 = time.perf_counter()
    measure = FD(encoder=emb) @ 10
    value = pf.evaluate({'bm25': run}, collection.qrels, [measure])[column_label(measure)].iloc[0]
    return float(value), emb.n_encoded, time.perf_counter() - t0


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument('--work-dir', default=None, help='indexes and cache folders (default: a temporary folder)')
    args = ap.parse_args()
    work = Path(args.work_dir or tempfile.mkdtemp(prefix='journey-cache-'))
    corpora = {'cranfield': cranfield(), 'vaswani': vaswani()}
    both = set(corpora['cranfield'].texts) & set(corpora['vaswani'].texts)
    differ = sum(corpora['cranfield'].texts[d] != corpora['vaswani'].texts[d] for d in both)
    print(f'docnos in both corpora: {len(both)}, with different text: {differ}')
    runs = {}
    for name, coll in corpora.items():
        runs[name] = pipelines.bm25(coll, work / f'index-{name}', num_results=10).transform(coll.topics)
        print(f'{name}: {len(coll.texts)} documents, {coll.topics.qid.nunique()} queries, '
              f'{runs[name].docno.nunique()} distinct retrieved docnos in the top 10')
    caches = Path(tempfile.mkdtemp(prefix='caches-', dir=work))  # fresh every run: the first passes start cold
    shared = caches / 'shared'
    rows = []
    for name in ('cranfield', 'vaswani'):
        rows.append(('shared', name, *fd_at_10(corpora[name], runs[name], shared)))
    for name in ('cranfield', 'vaswani'):
        rows.append(('separate', name, *fd_at_10(corpora[name], runs[name], caches / name)))
    for name in ('vaswani', 'cranfield'):
        rows.append(('warm', name, *fd_at_10(corpora[name], runs[name], shared)))
    table = pd.DataFrame(rows, columns=['pass', 'corpus', 'FD@10', 'encoded', 'seconds'])
    print(table.to_string(index=False))
    ok = True
    for name in corpora:
        ref = table[(table['pass'] == 'separate') & (table.corpus == name)]['FD@10'].iloc[0]
        for p in ('shared', 'warm'):
            value = table[(table['pass'] == p) & (table.corpus == name)]['FD@10'].iloc[0]
            rel = abs(value - ref) / ref
            print(f'{name}: {p} vs separate, relative difference {rel:.2e}')
            ok &= rel <= 1e-6
    warm_encoded = int(table[table['pass'] == 'warm'].encoded.sum())
    print(f'warm pass encoded {warm_encoded} documents (must be 0)')
    ok &= warm_encoded == 0
    print('OK' if ok else 'FAILED')
    sys.exit(0 if ok else 1)


if __name__ == '__main__':
    main()
