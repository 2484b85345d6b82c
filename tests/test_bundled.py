"""The bundled Cranfield collection (data/bundled.py) against the counts its README states
(pyterrier_frechet/data/cranfield/README.md), and a record read from the raw file."""
import gzip
import json
from importlib import resources

import pandas as pd

from pyterrier_frechet.data.bundled import Collection, cranfield

RAW = resources.files('pyterrier_frechet') / 'data' / 'cranfield'


def test_cranfield_has_the_counts_of_its_readme():
    c = cranfield()
    assert c.name == 'cranfield' and len(c.texts) == 1400 and len(c.topics) == 225 and len(c.qrels) == 1612
    assert list(c.topics.columns) == ['qid', 'query'] and list(c.qrels.columns) == ['qid', 'docno', 'label']
    assert c.topics.qid.tolist() == [str(i) for i in range(1, 226)]  # the query's position, which the qrels use
    assert c.qrels.label.value_counts().sort_index().to_dict() == {1: 363, 2: 734, 3: 387, 4: 128}
    per_query = c.qrels.groupby('qid').size()
    assert (per_query.min(), per_query.max(), len(per_query)) == (1, 39, 225)
    assert set(c.qrels.docno) <= set(c.texts) and set(c.qrels.qid) == set(c.topics.qid)
    assert c.texts['471'] == '' and c.texts['995'] == ''  # the two empty records


def test_text_is_title_and_abstract_of_the_raw_record():
    with gzip.open(RAW / 'corpus.jsonl.gz', 'rt', encoding='utf-8') as f:
        first = json.loads(f.readline())
    c = cranfield()
    assert c.texts[str(first['docid'])] == f"{first['title']} {first['text']}"
    assert first['title'] and c.texts[str(first['docid'])].startswith(first['title'] + ' ')


def test_a_collection_of_ones_own_iterates_its_corpus():
    topics = pd.DataFrame({'qid': ['1'], 'query': ['wing']})
    qrels = pd.DataFrame({'qid': ['1'], 'docno': ['a'], 'label': [1]})
    mine = Collection('mine', topics, qrels, {'a': 'wing lift', 'b': 'heat'})
    assert list(mine.corpus_iter()) == [{'docno': 'a', 'text': 'wing lift'}, {'docno': 'b', 'text': 'heat'}]
