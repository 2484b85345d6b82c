"""Does AnswerFD order answers by their quality? A validity check with real text and no language model.

    python examples/answer_validity.py [--samples 1000] [--subset 50] [--seed 0] [--work-dir DIR] [--vectors PREFIX]

On Cranfield (bundled with the package), five *stand-ins* for a RAG pipeline's answers — none is generated text —
one per query, of known, ordered quality:

1. ``relevant extract``: the first two sentences of a judged-relevant document of the query (its highest grade,
   lowest docno among ties);
2. ``BM25 top-1 extract``: the first two sentences of the top document BM25 (pyterrier-pisa) retrieves for the query;
3. ``weak BM25 top-1 extract``: the same for BM25 given one word of the query, its longest that retrieves anything
   (a deliberately weak retriever);
4. ``random extract``: the first two sentences of a random non-empty document not judged relevant for the query
   (seeded);
5. ``query text``: the query itself — on topic, but no answer; its place is not known in advance, so it is reported
   and kept out of the asserted order.

The expected order is 1 < 2 < 3 < 4 for AnswerFD (lower is better) and 1 > 2 > 3 > 4 for a SQuAD-style token F1 against
the same references (the first two sentences of every judged-relevant document of the query; max over them, as
pyterrier-rag's F1 takes the max over gold answers). The AnswerFD reference is the judged-relevant documents (full
text, the paper's relevant side), all 1,612 judgments at rel >= 1.

Both are resampled over query sets: bootstrap samples of all 225 queries (with replacement: a query drawn w times
counts w times on both sides) and random subsets of ``--subset`` queries (without replacement); the script prints
each source's value with its 95% percentile interval, its mean rank, and how often each expected pair and the whole
order hold. The point values are also computed by pt.Experiment with AnswerFD beside FD@10 of the two retrievers, and
the script checks that its own assembly of the sets (per-query sums in numpy) gives the same numbers.

Document vectors: ``--vectors PREFIX`` (default ``../shared/embeddings/cranfield.minilm`` when it exists: all-MiniLM-L6-v2
of title + text), else every relevant document is embedded by the Embedder. Answers are embedded by
``pf.Embedder()`` (all-MiniLM-L6-v2, the same model), cached under their text fingerprints; the script checks the
store against the Embedder on 20 documents.
"""
import argparse
import logging
import re
import string
import warnings
from collections import Counter
from pathlib import Path

import numpy as np
import pandas as pd
import pyterrier as pt
from ir_measures import P, nDCG

import pyterrier_frechet as pf
from pyterrier_frechet import AnswerCFD, AnswerFD, FD, pipelines
from pyterrier_frechet.core.frechet import GaussianStats, frechet_distance_from_stats
from pyterrier_frechet.vectors.cache import default_cache_root
from pyterrier_frechet.vectors.sources import lookup_vectors

logger = logging.getLogger('answer_validity')

SHARED_VECTORS = Path(__file__).resolve().parents[1].parent / 'shared' / 'embeddings' / 'cranfield.minilm'
ORDERED = ['relevant extract', 'BM25 top-1 extract', 'weak BM25 top-1 extract', 'random extract']
SOURCES = ORDERED + ['query text']


def extract(text: str, sentences: int = 2) -> str:
    """The first ``sentences`` sentences (split after . ? ! followed by white space)."""
    parts = [p for p in re.split(r'(?<=[.?!])\s+', text.strip()) if p.strip()]
    return ' '.join(parts[:sentences])


def _normalize(s: str) -> list:
    """SQuAD's answer normalisation: lower case, no punctuation, no articles, single spaces; as tokens."""
    s = ''.join(ch for ch in s.lower() if ch not in set(string.punctuation))
    return re.sub(r'\b(a|an|the)\b', ' ', s).split()


def token_f1(prediction: str, reference: str) -> float:
    p, r = _normalize(prediction), _normalize(reference)
    common = sum((Counter(p) & Counter(r)).values())
    if common == 0:
        return 0.0
    precision, recall = common / len(p), common / len(r)
    return 2 * precision * recall / (precision + recall)


def top1(run: pd.DataFrame, queries) -> dict:
    run = run.sort_values(['qid', 'score', 'docno'], ascending=[True, False, False])
    first = run.groupby('qid').head(1).set_index('qid')['docno']
    return {q: first.get(q) for q in queries}


def weak_bm25(bm25, topics: pd.DataFrame) -> pd.DataFrame:
    """The weak retriever's run: BM25 given one word of the query — its longest word that retrieves anything."""
    words = {q: sorted(set(re.findall(r'[a-z0-9]+', t.lower())), key=lambda w: (-len(w), w))
             for q, t in zip(topics.qid, topics['query'])}
    runs, todo = [], list(topics.qid)
    for k in range(max(len(w) for w in words.values())):
        todo = [q for q in todo if k < len(words[q])]
        if not todo:
            break
        run = bm25(pd.DataFrame({'qid': todo, 'query': [words[q][k] for q in todo]}))
        runs.append(run)
        todo = sorted(set(todo) - set(run.qid))
    return pd.concat(runs, ignore_index=True)


def build_sources(collection, bm25, seed: int) -> pd.DataFrame:
    """One answer per query and source: (source, qid, qanswer, docno the extract came from or '')."""
    topics, qrels, texts = collection.topics, collection.qrels, collection.texts
    queries = topics.qid.tolist()
    with pipelines.native_output_silenced():
        good_run = bm25(topics)
        weak_run = weak_bm25(bm25, topics)
    good, poor = top1(good_run, queries), top1(weak_run, queries)
    best = (qrels[qrels.docno.map(lambda d: bool(texts.get(d, '').strip()))]
            .sort_values(['qid', 'label', 'docno'], ascending=[True, False, True]).groupby('qid').head(1)
            .set_index('qid')['docno'])
    rng = np.random.default_rng(seed)
    nonempty = np.array(sorted(d for d, t in texts.items() if t.strip()))
    judged = qrels.groupby('qid')['docno'].apply(set)
    rows = []
    for q, query in zip(topics.qid, topics['query']):
        candidates = [d for d in nonempty if d not in judged.get(q, set())]
        random_doc = candidates[rng.integers(len(candidates))]
        for source, docno in (('relevant extract', best.get(q)), ('BM25 top-1 extract', good[q]),
                              ('weak BM25 top-1 extract', poor[q]), ('random extract', random_doc)):
            if docno is None:
                raise SystemExit(f'query {q}: no document for {source}')
            rows.append((source, q, extract(texts[docno]), docno))
        rows.append(('query text', q, query.strip(), ''))
    return pd.DataFrame(rows, columns=['source', 'qid', 'qanswer', 'docno']), good_run, weak_run


class Side:
    """One set of vectors with the query of each row, resampled by query weights (a query drawn w times counts w
    times): document weighting (every row 1) or query weighting (each query's rows 1/n_q)."""

    def __init__(self, vecs: np.ndarray, qids: np.ndarray, queries: list):
        index = {q: i for i, q in enumerate(queries)}
        self.x = np.asarray(vecs, dtype=np.float64)
        self.row_query = np.array([index[q] for q in qids])
        self.n_q = np.bincount(self.row_query, minlength=len(queries)).astype(np.float64)

    def stats(self, query_w: np.ndarray, weighting: str) -> GaussianStats:
        w = query_w[self.row_query] * (1.0 if weighting == 'document' else 1.0 / self.n_q[self.row_query])
        keep = w > 0
        x, w = self.x[keep], w[keep]
        v1 = w.sum()
        mean = w @ x / v1
        xc = x - mean
        if weighting == 'document':  # w are integer counts: n = Σw documents, unbiased n − 1
            cov = (xc * w[:, None]).T @ xc / (v1 - 1)
        else:  # numpy.cov(aweights=w)
            cov = (xc * w[:, None]).T @ xc / (v1 - (w @ w) / v1)
        return GaussianStats(mean, (cov + cov.T) / 2, int(round(v1)) if weighting == 'document' else len(x))


class Conditional:
    """AnswerCFD with one answer per query, from per-query numbers: a query drawn w times counts as w queries,
    Σ w_q ‖m_q − a_q‖² / Σ w_q  +  Σ w_q S_q / Σ w_q (n_q − 1), with m_q, S_q, n_q the mean, scatter and size of
    query q's relevant vectors and a_q its answer."""

    def __init__(self, reference: Side, queries: list):
        x, rq = reference.x, reference.row_query
        self.n = reference.n_q
        means = np.zeros((len(queries), x.shape[1]))
        np.add.at(means, rq, x)
        self.means = means / self.n[:, None]
        self.scatter = np.bincount(rq, weights=np.sum((x - self.means[rq]) ** 2, axis=1), minlength=len(queries))

    def value(self, answers: np.ndarray, w: np.ndarray) -> float:
        gap = np.sum((self.means - answers) ** 2, axis=1)
        return float(w @ gap / w.sum() + w @ self.scatter / (w @ (self.n - 1)))


MEASURES = ["AnswerFD", "AnswerFD(weighting='query')", 'AnswerCFD', 'token F1']
LOWER_IS_BETTER = {'AnswerFD': True, "AnswerFD(weighting='query')": True, 'AnswerCFD': True, 'token F1': False}


def resample(sides, conditional, f1, weights, desc):
    """Per resample (rows of ``weights``), every measure's value for every source: {measure: samples × sources}."""
    out = {m: np.zeros((len(weights), len(SOURCES))) for m in MEASURES}
    for i, w in enumerate(pt.tqdm(weights, desc=desc, unit='sample')):
        refs = {wt: sides['reference'].stats(w, wt) for wt in ('document', 'query')}
        for j, s in enumerate(SOURCES):
            out['AnswerFD'][i, j] = frechet_distance_from_stats(refs['document'], sides[s].stats(w, 'document'))
            out["AnswerFD(weighting='query')"][i, j] = frechet_distance_from_stats(refs['query'], sides[s].stats(w, 'query'))
            out['AnswerCFD'][i, j] = conditional.value(sides[s].x, w)
            out['token F1'][i, j] = w @ f1[s] / w.sum()
    return out


def _ranks(values: np.ndarray, lower_is_better: bool) -> np.ndarray:
    order = np.argsort(values if lower_is_better else -values, axis=1, kind='stable')
    ranks = np.empty_like(order)
    np.put_along_axis(ranks, order, np.arange(1, values.shape[1] + 1)[None, :].repeat(len(values), 0), axis=1)
    return ranks


def summarise(point: dict, samples: dict) -> pd.DataFrame:
    """Per source and measure: the value on all queries, the 95% percentile interval over resamples, the mean rank."""
    columns = {}
    for m in MEASURES:
        lo, hi = np.percentile(samples[m], [2.5, 97.5], axis=0)
        ranks = _ranks(samples[m], LOWER_IS_BETTER[m]).mean(0)
        columns[m] = [f'{v:.4f} [{a:.4f}, {b:.4f}] {r:.2f}' for v, a, b, r in zip(point[m][0], lo, hi, ranks)]
    return pd.DataFrame(columns, index=SOURCES)


def order_table(samples: dict) -> pd.DataFrame:
    """How often (share of resamples) each expected pair, and the whole expected order, holds for each measure."""
    idx = [SOURCES.index(s) for s in ORDERED]
    rows = {}
    for m in MEASURES:
        v = samples[m] if LOWER_IS_BETTER[m] else -samples[m]  # lower is better from here on
        shares = [float((v[:, a] < v[:, b]).mean()) for a, b in zip(idx[:-1], idx[1:])]
        shares.append(float(np.all(np.diff(v[:, idx], axis=1) > 0, axis=1).mean()))
        rows[m] = shares
    names = [f'{SOURCES[a]} > {SOURCES[b]}' for a, b in zip(idx[:-1], idx[1:])] + ['whole order 1 > 2 > 3 > 4']
    return pd.DataFrame(rows, index=names)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--samples', type=int, default=1000, help='resamples per query-set size (default 1000)')
    parser.add_argument('--subset', type=int, default=50, help='size of the smaller resampled query sets (default 50)')
    parser.add_argument('--subset-samples', type=int, default=200,
                        help='random subsets drawn (default 200; each costs about 1 s: FD of sets smaller than the '
                             'dimension takes the slower exact route)')
    parser.add_argument('--seed', type=int, default=0, help='seed of the random extracts and of every resample')
    parser.add_argument('--work-dir', default=str(default_cache_root()), help='PISA index and embedding cache')
    parser.add_argument('--vectors', default=str(SHARED_VECTORS) if Path(f'{SHARED_VECTORS}.npy').exists() else None,
                        help='precomputed all-MiniLM-L6-v2 document vectors (PREFIX.npy + PREFIX.ids.txt)')
    args = parser.parse_args()
    logging.basicConfig(level=logging.WARNING, format='%(levelname)s %(name)s: %(message)s')
    pd.set_option('display.width', 200)
    pd.set_option('display.max_columns', 20)
    work = Path(args.work_dir)

    collection = pf.bundled.cranfield()
    embedder = pf.Embedder(texts=collection.texts, empty_text='embed', cache_dir=work / 'embeddings', verbose=False)
    encoder = pf.VectorStore(args.vectors) if args.vectors else embedder
    if args.vectors:  # the store and the Embedder must be one model: compare 20 relevant documents
        sample = collection.qrels.docno.drop_duplicates().iloc[:20].tolist()
        delta = np.abs(encoder.lookup(sample)[0] - embedder.lookup(sample)[0]).max()
        print(f'store vs Embedder on 20 documents: max |delta| = {delta:.2e}')
        if delta > 1e-4:
            raise SystemExit('the vector store and the Embedder disagree: they are not the same model')

    bm25 = pipelines.bm25(collection, work / 'answer_validity', num_results=100)
    answers, good_run, weak_run = build_sources(collection, bm25, args.seed)
    queries = collection.topics.qid.tolist()

    # --- point values through the measure, in one pt.Experiment with FD@10 of the two retrievers ---------------
    fd10 = FD(encoder=encoder) @ 10
    afd = AnswerFD(encoder=encoder, text_encoder=embedder)
    afd_q = AnswerFD(encoder=encoder, text_encoder=embedder, weighting='query')
    acfd = AnswerCFD(encoder=encoder, text_encoder=embedder)
    frames = [good_run, weak_run] + [answers[answers.source == s][['qid', 'qanswer']] for s in SOURCES]
    names = ['BM25 (ranking)', 'weak BM25 (ranking)'] + [f'{s} (stand-in answer)' for s in SOURCES]
    with warnings.catch_warnings():
        warnings.filterwarnings('ignore', message='.*(is a ranking|is an answer frame).*')  # NaN cells, by design
        table = pt.Experiment(frames, collection.topics, collection.qrels, eval_metrics=[fd10, afd, afd_q, acfd],
                              names=names, validate='ignore')
    ndcg = pt.Experiment([good_run, weak_run], collection.topics, collection.qrels, eval_metrics=[nDCG @ 10, P @ 1],
                         names=names[:2])
    table = table.rename(columns={str(fd10): 'FD@10', str(afd): MEASURES[0], str(afd_q): MEASURES[1], str(acfd): MEASURES[2]})
    print('\npt.Experiment: rankings and stand-in answers in one table (NaN: the measure does not apply to that kind)')
    print(table.to_string(index=False, float_format=lambda v: f'{v:.4f}'))
    distinct = answers[answers.source != 'query text'].groupby('source', sort=False)['docno'].nunique()
    print(f'\ndistinct documents behind the {len(queries)} extracts of each source: {distinct.to_dict()}')
    print('\nthe two retrievers:')
    print(ndcg.to_string(index=False, float_format=lambda v: f'{v:.4f}'))

    # --- the same sets assembled here, per query, for the resampling -------------------------------------------
    qrels = collection.qrels[collection.qrels.label >= 1]
    ref_vecs, found = lookup_vectors(encoder, qrels.docno.to_numpy())
    assert found.all()
    sides = {'reference': Side(ref_vecs, qrels.qid.to_numpy(), queries)}
    ref_extracts = qrels.assign(text=qrels.docno.map(lambda d: extract(collection.texts[d]))).groupby('qid')['text'].apply(list)
    f1 = {}
    for s in SOURCES:
        rows = answers[answers.source == s].set_index('qid').loc[queries]
        sides[s] = Side(embedder.encode(rows.qanswer.tolist()), np.array(queries), queries)
        f1[s] = np.array([max(token_f1(a, r) for r in ref_extracts[q]) for q, a in zip(queries, rows.qanswer)])
    conditional = Conditional(sides['reference'], queries)
    full = resample(sides, conditional, f1, np.ones((1, len(queries))), 'all queries')
    by_name = table.set_index('name')
    diffs = [abs(full[short][0, j] - by_name.loc[f'{s} (stand-in answer)', short])
             for short in MEASURES[:3] for j, s in enumerate(SOURCES)]
    print(f'\nAnswerFD, AnswerFD(weighting=query), AnswerCFD through pt.Experiment vs the sets assembled here: '
          f'max |delta| = {max(diffs):.2e}')

    rng = np.random.default_rng(args.seed)
    boot = rng.multinomial(len(queries), np.full(len(queries), 1 / len(queries)), size=args.samples).astype(np.float64)
    subsets = np.zeros((args.subset_samples, len(queries)))
    for i in range(args.subset_samples):
        subsets[i, rng.choice(len(queries), size=args.subset, replace=False)] = 1.0
    for label, weights in ((f'bootstrap samples of all {len(queries)} queries', boot),
                           (f'random subsets of {args.subset} queries', subsets)):
        samples = resample(sides, conditional, f1, weights, label)
        print(f'\n=== {len(weights)} {label}: value on all queries [95% interval over resamples] mean rank (1 = best) ===')
        print(summarise(full, samples).to_string())
        print('\nshare of resamples in which the expected order holds (A > B: A better than B)')
        print(order_table(samples).to_string(float_format=lambda v: f'{v:.3f}'))


if __name__ == '__main__':
    main()
