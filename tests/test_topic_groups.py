"""Query groups found from the qrels (``pf.topic_groups``, ``--query-groups auto``): on a collection whose queries share
well-separated topics they are the topics exactly, so every analysis run with them equals the same analysis run with
the topics named; queries without a relevant vector are groups of their own; bad input is refused before any vector
is read."""
import numpy as np
import pandas as pd
import pytest

import pyterrier_frechet as pf
from conftest import DictEncoder, assert_cli_compare_is_the_api

D, TOPICS, PER = 6, 4, 3       # 12 queries: 4 topics of 3


@pytest.fixture(scope='module')
def topical():
    rng = np.random.default_rng(5)
    vectors, qrows, runs, topic_of = {}, [], {'a': [], 'b': []}, {}
    for t in range(TOPICS):
        centre = 10.0 * rng.normal(size=D)           # topics far apart
        for i in range(PER):
            q = f't{t}q{i}'
            topic_of[q] = f'topic{t}'
            query = centre + rng.normal(size=D)      # queries of a topic close together
            for j in range(2 + i):                   # 2, 3, 4 relevant documents
                vectors[f'{q}r{j}'] = query + 0.3 * rng.normal(size=D)
                qrows.append((q, f'{q}r{j}', 1))
            qrows.append((q, f'{q}n', 0))            # a judged non-relevant document (no vector needed)
            for s, spread in (('a', 0.5), ('b', 1.5)):
                for r in range(5):
                    vectors[f'{q}{s}{r}'] = query + spread * rng.normal(size=D)
                    runs[s].append((q, f'{q}{s}{r}', 10.0 - r))
    qrels = pd.DataFrame(qrows, columns=['qid', 'docno', 'label'])
    runs = {s: pd.DataFrame(r, columns=['qid', 'docno', 'score']) for s, r in runs.items()}
    return vectors, qrels, runs, topic_of


def _partition(frame):
    return sorted(sorted(g.qid) for _, g in frame.groupby('group'))


def test_well_separated_topics_are_found_exactly(topical):
    vectors, qrels, _runs, topic_of = topical
    found = pf.topic_groups(qrels, DictEncoder(vectors), size=PER)
    truth = pd.DataFrame({'qid': list(topic_of), 'group': list(topic_of.values())})
    assert list(found.columns) == ['qid', 'group'] and sorted(found.qid) == sorted(topic_of)
    assert _partition(found) == _partition(truth)
    # seeded: the same call gives the same groups; the default size (5) makes round(12 / 5) = 2 groups
    assert found.equals(pf.topic_groups(qrels, DictEncoder(vectors), size=PER))
    assert pf.topic_groups(qrels, DictEncoder(vectors))['group'].nunique() == 2


def test_queries_without_a_relevant_vector_are_groups_of_their_own(topical):
    vectors, qrels, _runs, _topic_of = topical
    # t0q0's relevant documents lose their vectors; t3q2 has only non-relevant judgments
    partial = {d: v for d, v in vectors.items() if not d.startswith('t0q0r')}
    qrels2 = qrels[~((qrels.qid == 't3q2') & (qrels.label > 0))]
    found = pf.topic_groups(qrels2, DictEncoder(partial), size=PER).set_index('qid')['group']
    assert found['t0q0'] == 'own:t0q0' and found['t3q2'] == 'own:t3q2'
    assert found.drop(['t0q0', 't3q2']).str.match(r'^g\d+$').all()
    # rel=2 leaves no relevant document anywhere: refused
    with pytest.raises(ValueError, match='at least 4 queries with a document labelled >= 2'):
        pf.topic_groups(qrels, DictEncoder(vectors), rel=2)


def test_bad_input_is_refused_before_any_vector_is_read(topical):
    _vectors, qrels, _runs, _topic_of = topical

    class Refuses:
        def lookup(self, docnos):
            raise AssertionError('read a vector')

    for size in (0, -1, 2.5, True):
        with pytest.raises(ValueError, match='size must be a positive number'):
            pf.topic_groups(qrels, Refuses(), size=size)
    previous = pf.set_default_encoder(None)
    try:
        with pytest.raises(ValueError, match='pass encoder='):
            pf.topic_groups(qrels)
    finally:
        pf.set_default_encoder(previous)
    with pytest.raises(ValueError, match='at least 4 queries'):
        pf.topic_groups(qrels[qrels.qid.isin(['t0q0', 't1q0', 't2q0'])], Refuses())


@pytest.mark.filterwarnings("ignore:tau and tau_AP")
def test_cli_auto_groups_equal_the_api_s(topical, tmp_path, capsys):
    """``compare --query-groups auto`` gives the numbers of ``compare_systems`` with ``topic_groups``' groups, says
    it found them, and is refused with --population before any work."""
    from pyterrier_frechet.cli import main
    from conftest import write_trec_files
    vectors, qrels, runs, topic_of = topical
    folder = write_trec_files(tmp_path, qrels, runs, vectors)
    data = ['--qrels', str(folder / 'qrels.txt'), '--runs', str(folder / 'runs'), '--vectors', str(folder / 'vecs'),
            '--metrics', 'FD@5', 'nDCG@5', '--quiet']
    # the CLI's auto uses the default size (5): 12 queries make 2 groups; the API with size=5 names the same ones
    auto = pf.topic_groups(qrels, DictEncoder(vectors))
    assert main(['compare', *data, '--samples', '200', '--format', 'csv', '--query-groups', 'auto']) == 0
    out = capsys.readouterr()
    assert_cli_compare_is_the_api(out.out, runs, qrels, folder / 'vecs', auto)
    assert 'resampled in 2 groups found from the qrels' in out.err
    assert main(['compare', *data, '--query-groups', 'auto', '--population', '40']) == 2
    assert '--query-groups auto' in capsys.readouterr().err


def test_cli_auto_groups_need_vectors(topical, tmp_path, capsys):
    """--query-groups auto finds groups from the relevant documents' vectors: with only nDCG and no --vectors it is
    refused (exit 2) naming the flag and what to give, before any resampling."""
    from pyterrier_frechet.cli import main
    from conftest import write_trec_files
    vectors, qrels, runs, _topic_of = topical
    folder = write_trec_files(tmp_path, qrels, runs, vectors)
    assert main(['bootstrap', '--qrels', str(folder / 'qrels.txt'), '--runs', str(folder / 'runs'),
                 '--metrics', 'nDCG@5', '--quiet', '--query-groups', 'auto']) == 2
    err = capsys.readouterr().err
    assert '--query-groups auto' in err and '--vectors' in err
