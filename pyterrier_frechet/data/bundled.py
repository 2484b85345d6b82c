"""The collection bundled with the package (Cranfield 1400), for the demo and the tests."""
import gzip
import json
from importlib import resources
from typing import Dict, Iterator, NamedTuple

import pandas as pd


class Collection(NamedTuple):
    """A test collection as the pipelines and the demo take it: ``name`` (names the index folders), ``topics``
    (``qid``, ``query``), ``qrels`` (``qid``, ``docno``, ``label``) and ``texts`` (docno → text). Build one for your
    own documents with ``Collection('mine', topics, qrels, texts)``; :func:`cranfield` returns the bundled one."""
    name: str
    topics: pd.DataFrame  # qid, query
    qrels: pd.DataFrame  # qid, docno, label
    texts: Dict[str, str]  # docno -> text

    def corpus_iter(self) -> Iterator[Dict[str, str]]:
        for docno, text in self.texts.items():
            yield {'docno': docno, 'text': text}


def _path(name: str):
    return resources.files('pyterrier_frechet') / 'data' / 'cranfield' / name


def cranfield() -> Collection:
    """Cranfield 1400: 1,400 abstracts (text = title + " " + abstract), 225 queries, graded qrels (4 = best).

    See ``pyterrier_frechet/data/cranfield/README.md`` for origin and caveats.
    """
    texts = {}
    with gzip.open(_path('corpus.jsonl.gz'), 'rt', encoding='utf-8') as fin:
        for line in fin:
            rec = json.loads(line)
            texts[str(rec['docid'])] = f"{rec.get('title') or ''} {rec.get('text') or ''}".strip()
    topics = pd.read_csv(_path('queries.tsv'), sep='\t', header=None, names=['qid', 'orig_id', 'query'], dtype=str)
    topics = topics[['qid', 'query']]
    qrels = pd.read_csv(_path('qrels.graded.trec'), sep=r'\s+', header=None, names=['qid', 'iter', 'docno', 'label'],
                        dtype={'qid': str, 'iter': str, 'docno': str, 'label': int})
    return Collection('cranfield', topics, qrels[['qid', 'docno', 'label']], texts)
