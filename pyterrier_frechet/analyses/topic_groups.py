"""Query groups found from the judged documents: queries whose relevant documents lie close together in the embedding
space are put in one group, for the cluster jackknife and bootstrap (``query_groups=``, ``--query-groups auto``).

Why: FD's intervals (and nDCG's t) treat queries as independent draws. Where queries share topics they are not, and
the intervals are too narrow — in the package's ``topics`` world at d = 384 and 43 queries FD@10's covered 0.87–0.93
and FD(per_query=5)@10's 0.83–0.93 (pt_docs "Calibration"). Naming the topics (``--query-groups FILE``) repairs
that (0.97–1.00), but a test collection rarely says which of its queries share a topic. :func:`topic_groups` guesses
them: k-means (k-means++ start, seeded) of the queries' unit-normalised relevant centroids into ``round(n / size)``
groups. It reads the qrels and the document vectors only, never a system's results, so every system shares the groups
and the grouping cannot favour one. Measured (60 trials each, benchmarks/calibrate_worlds.py ``--query-groups
auto``; pt_docs "Calibration", "Query groups found from the qrels"): 0.98–1.00 in the ``topics`` world, but where the
queries are independent the FD intervals came out 1.8–3.1× (synthetic) and 3.5–4.8× (Cranfield) as wide as the plain
ones, and the FD test's mean power on Cranfield fell from 0.29 to 0.03: grouping queries *because* their relevant
documents are alike puts queries with alike leave-out effects together, which over-states FD's variance. A
conservative sensitivity check, then, not an interval to report; named groups, where a collection has them, are better.
"""
from typing import Optional

import numpy as np
import pandas as pd

from ..evaluation.frames import prepare_qrels
from ..evaluation.selection import Judgments
from ..vectors.sources import get_default_encoder, lookup_vectors

#: Queries per group on average (the package's ``topics`` world has 2–8 queries per topic).
DEFAULT_SIZE = 5


def topic_groups(qrels, encoder=None, size: int = DEFAULT_SIZE, rel: int = 1, seed: int = 0) -> pd.DataFrame:
    """A frame ``qid``, ``group`` over every judged query of ``qrels``, as ``bootstrap(query_groups=...)`` takes it.

    Args:
        qrels: ``query_id``/``doc_id``/``relevance`` or PyTerrier's ``qid``/``docno``/``label``.
        encoder: the vectors of the relevant documents (default: :func:`~pyterrier_frechet.set_default_encoder`'s).
        size: queries per group on average: ``round(n / size)`` groups (at least 2) for the n queries with a
            relevant document that has a vector.
        rel: the label at or above which a document is relevant (as FD's ``rel``).
        seed: of the k-means start.

    Queries with no relevant document (or none with a vector) are groups of their own (``own:QID``); the others
    are in groups ``g0``, ``g1``, …. ValueError, before any vector is read, for ``size`` < 1, no encoder, or fewer
    than 4 queries with relevant documents.
    """
    if isinstance(size, bool) or not isinstance(size, (int, np.integer)) or size < 1:
        raise ValueError(f'size must be a positive number of queries per group, got {size!r}')
    encoder = get_default_encoder() if encoder is None else encoder
    if encoder is None:
        raise ValueError('topic_groups needs the document vectors: pass encoder= (a VectorStore, an Embedder, ...) '
                         'or set one with pf.set_default_encoder')
    judgments = Judgments(prepare_qrels(qrels, 'qrels'))
    queries = judgments.query_names.tolist()
    keep = judgments.labels >= rel
    qcode = judgments.qcode[keep]
    docnos = judgments.doc_names[judgments.dcode[keep]].astype(str)
    n_judged = len(np.unique(qcode))
    if n_judged < 4:
        raise ValueError(f'topic_groups needs at least 4 queries with a document labelled >= {rel}, got '
                         f'{n_judged}: too few to group')
    vecs, found = lookup_vectors(encoder, docnos)
    qcode, vecs = qcode[found], vecs[found]
    with_vectors = np.unique(qcode)
    if len(with_vectors) < 4:
        raise ValueError(f'topic_groups: only {len(with_vectors)} queries have a relevant document with a vector; '
                         'at least 4 are needed')
    sums = np.zeros((len(queries), vecs.shape[1]), dtype=np.float64)
    np.add.at(sums, qcode, vecs)  # lookup_vectors returns float64
    labels = cluster_centroids(sums[with_vectors], size, seed)
    group = {q: f'own:{q}' for q in queries}
    for code, label in zip(with_vectors, labels):
        group[queries[code]] = f'g{label}'
    return pd.DataFrame({'qid': queries, 'group': [group[q] for q in queries]})


def cluster_centroids(centroids: np.ndarray, size: int = DEFAULT_SIZE, seed: int = 0) -> np.ndarray:
    """The grouping itself (pure numpy/scipy): the rows of ``centroids`` (one per query; scaled to unit length here,
    so only their directions count) in ``max(2, round(n / size))`` groups by Lloyd's k-means with a k-means++ start
    seeded by ``seed``; group codes 0…G−1 in order of first appearance (a group k-means empties is dropped).
    ``benchmarks/calibrate_worlds.py --query-groups auto`` calls this on each simulated query set."""
    from scipy.cluster.vq import kmeans2
    x = np.asarray(centroids, dtype=np.float64)
    x = x / np.maximum(np.linalg.norm(x, axis=1, keepdims=True), 1e-300)
    k = max(2, int(round(len(x) / size)))
    _centres, labels = kmeans2(x, k, iter=10, minit='++', seed=np.random.default_rng(seed))
    return pd.factorize(labels)[0].astype(np.int64)
