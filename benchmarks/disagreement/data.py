"""The study's collections, read from ../shared (read-only) or the package's bundled Cranfield.

Each loader returns a :class:`pyterrier_frechet.bundled.Collection` (name, topics, qrels, texts) plus the
relevance threshold the study uses for FD and RR (``rel``) and why.
"""
import gzip
import json
import re
from pathlib import Path
from typing import Dict, NamedTuple

import pandas as pd
import pyterrier as pt

import pyterrier_frechet as pf

SHARED = Path(__file__).resolve().parents[3] / 'shared'  # ../shared beside the checkout
DATA = SHARED / 'data'
MSMARCO = DATA / 'msmarco-passage'
MINILM_DL = SHARED / 'embeddings' / 'msmarco-passage.dl19-dl20.minilm'


class Spec(NamedTuple):
    collection: pf.bundled.Collection
    rel: int  # label >= rel is relevant for FD, CFD and RR
    rel_why: str


def cranfield() -> Spec:
    return Spec(pf.bundled.cranfield(), 1,
                'graded 1-4 (4 best, 1 "minimum interest"); its README states no binary threshold, so every positive '
                'grade counts (rel=1, the package default)')


def vaswani() -> Spec:
    texts: Dict[str, str] = {}
    with gzip.open(DATA / 'vaswani' / 'doc-text.trec.gz', 'rt', encoding='utf-8', errors='replace') as fin:
        raw = fin.read()
    for m in re.finditer(r'<DOC>\s*<DOCNO>\s*(\S+?)\s*</DOCNO>(.*?)</DOC>', raw, flags=re.S):
        texts[m.group(1)] = ' '.join(m.group(2).split())
    qraw = (DATA / 'vaswani' / 'query-text.trec').read_text(encoding='utf-8', errors='replace')
    topics = []
    for m in re.finditer(r'<num>\s*(\S+?)\s*</num>\s*<title>(.*?)</title>', qraw, flags=re.S):
        # documents are lower-cased; the queries are upper case: lower-case them so every system sees one case
        topics.append((m.group(1), ' '.join(m.group(2).split()).lower()))
    topics = pd.DataFrame(topics, columns=['qid', 'query'])
    qrels = pd.read_csv(DATA / 'vaswani' / 'qrels', sep=r'\s+', header=None, names=['qid', 'iter', 'docno', 'label'],
                        dtype={'qid': str, 'iter': str, 'docno': str, 'label': int})[['qid', 'docno', 'label']]
    assert len(texts) == 11429 and len(topics) == 93, (len(texts), len(topics))
    return Spec(pf.bundled.Collection('vaswani', topics, qrels, texts), 1, 'binary qrels (all 1)')


def scifact() -> Spec:
    base = DATA / 'beir-scifact'
    texts = {}
    with gzip.open(base / 'corpus.jsonl.gz', 'rt', encoding='utf-8') as fin:
        for line in fin:
            rec = json.loads(line)
            texts[str(rec['_id'])] = f"{rec.get('title') or ''} {rec.get('text') or ''}".strip()
    topics = pd.read_csv(base / 'topics.beir-v1.0.0-scifact.test.tsv.gz', sep='\t', header=None, names=['qid', 'query'],
                         dtype=str, quoting=3)
    qrels = pd.read_csv(base / 'qrels.beir-v1.0.0-scifact.test.txt', sep=r'\s+', header=None,
                        names=['qid', 'iter', 'docno', 'label'],
                        dtype={'qid': str, 'iter': str, 'docno': str, 'label': int})[['qid', 'docno', 'label']]
    assert len(texts) == 5183 and len(topics) == 300, (len(texts), len(topics))
    return Spec(pf.bundled.Collection('scifact', topics, qrels, texts), 1, 'binary qrels (all 1), test split')


def dl19_topics_qrels():
    topics = pt.io.read_topics(str(MSMARCO / 'topics.dl19-passage.txt'), format='singleline')
    qrels = pt.io.read_qrels(str(MSMARCO / 'qrels.dl19-passage.txt'))
    return topics, qrels


DL19_REL = 2
DL19_REL_WHY = ('graded 0-3; the README states that TREC\'s binary measures treat grade >= 2 as relevant '
                '(trec_eval -l 2), so FD, CFD and RR use rel=2; nDCG@10 uses the raw grades')


def dl19_run_files() -> Dict[str, Path]:
    """The 19 DL19 runs, named as benchmarks/experiment_baseline.py names them (``bm25`` is BM25)."""
    paths = sorted((MSMARCO / 'runs').glob('run.dl19.*'))
    return {p.name[len('run.dl19.'):].split('.top')[0]: p for p in paths}


def dl19_passages() -> Dict[str, str]:
    texts = {}
    with gzip.open(MSMARCO / 'passages.dl19-dl20.jsonl.gz', 'rt', encoding='utf-8') as fin:
        for line in fin:
            rec = json.loads(line)
            texts[str(rec['pid'])] = rec['text']
    return texts


LOADERS = {'cranfield': cranfield, 'vaswani': vaswani, 'scifact': scifact}
