"""(d) The real-data world: Cranfield (225 queries, 1,400 abstracts) with all-MiniLM-L6-v2 vectors.

`python -m benchmarks.worlds.cranfield --build` writes the runs (top 10 of every query, TREC format) to
benchmarks/worlds/data/cranfield.<system>.trec from the shared data and the cached query vectors
(data/cranfield_queries.minilm.npy, made by encode_data.py). `CranfieldWorld(d)` loads them in about a second.
"""
from __future__ import annotations

import argparse
import gzip
import json
import logging
import re
from collections import Counter
from pathlib import Path
from typing import Dict, List

import numpy as np
import pandas as pd
import scipy.sparse as sp

from .core import Population, QuerySample, World, ndcg_matrix, pooled_moments

HERE = Path(__file__).resolve().parent
DATA = HERE / 'data'
SHARED = HERE.parents[2] / 'shared'
CRAN = SHARED / 'data' / 'cranfield'
SCIFACT = SHARED / 'data' / 'beir-scifact'
MSMARCO = SHARED / 'data' / 'msmarco-passage'
K = 10
SYSTEMS = ['bm25', 'dense', 'title_bm25', 'bm25_top100_random', 'dense_noise_a', 'dense_noise_b']
#: systems whose stored runs are two independent perturbations of one system; `draw` hands the two runs to the two
#: systems by a fair coin per drawn query, so the pair is exchangeable, hence identical in law, exactly
SWAP_PAIRS = [('dense_noise_a', 'dense_noise_b')]
NOISE_SD = 0.02
log = logging.getLogger(__name__)

_STOP = set('''a about above after again against all am an and any are as at be because been before being below
between both but by can could did do does doing down during each few for from further had has have having he her here
hers herself him himself his how i if in into is it its itself me more most my myself no nor not of off on once only or
other our ours ourselves out over own same she should so some such than that the their theirs them themselves then
there these they this those through to too under until up very was we were what when where which while who whom why
will with would you your yours yourself yourselves also may must shall upon'''.split())


def _stem(w: str) -> str:
    """Harman's S-stemmer."""
    if len(w) > 3 and w.endswith('ies') and not w.endswith(('eies', 'aies')):
        return w[:-3] + 'y'
    if len(w) > 3 and w.endswith('es') and not w.endswith(('aes', 'ees', 'oes')):
        return w[:-1]
    if len(w) > 2 and w.endswith('s') and not w.endswith(('us', 'ss')):
        return w[:-1]
    return w


def tokenize(text: str) -> List[str]:
    return [_stem(w) for w in re.findall(r'[a-z0-9]+', text.lower()) if w not in _STOP]


class BM25:
    """Plain BM25 (k1 = 1.2, b = 0.75, idf = log(1 + (N - df + .5) / (df + .5))) over a scipy sparse matrix."""

    def __init__(self, docs: List[str], k1=1.2, b=0.75):
        toks = [tokenize(t) for t in docs]
        self.vocab = {w: i for i, w in enumerate(sorted({w for t in toks for w in t}))}
        rows, cols, vals = [], [], []
        for i, t in enumerate(toks):
            for w, c in Counter(t).items():
                rows.append(i), cols.append(self.vocab[w]), vals.append(c)
        tf = sp.csr_matrix((vals, (rows, cols)), shape=(len(docs), len(self.vocab)), dtype=np.float64)
        dl = np.array([len(t) for t in toks], float)
        df = np.diff(tf.tocsc().indptr)
        self.idf = np.log1p((len(docs) - df + 0.5) / (df + 0.5))
        norm = k1 * (1 - b + b * dl / max(dl.mean(), 1e-12))
        tf = tf.tocoo()
        w = tf.data * (k1 + 1) / (tf.data + norm[tf.row]) * self.idf[tf.col]
        self.W = sp.csr_matrix((w, (tf.row, tf.col)), shape=tf.shape).T.tocsr()   # terms x docs

    def scores(self, query: str) -> np.ndarray:
        q = np.zeros(len(self.vocab))
        for w, c in Counter(tokenize(query)).items():
            if w in self.vocab:
                q[self.vocab[w]] += c
        return self.W.T @ q


def _topk(scores: np.ndarray, k: int, docids: np.ndarray, rng=None):
    """top k by score; ties broken by a seeded random permutation (or by position without rng)."""
    tie = rng.permutation(len(scores)) if rng is not None else np.arange(len(scores))
    order = np.lexsort((tie, -scores))[:k]
    return docids[order], scores[order]


def load_corpus(dataset='cranfield'):
    """(docids, titles, texts)"""
    if dataset == 'cranfield':
        docs = [json.loads(l) for l in gzip.open(CRAN / 'corpus.jsonl.gz', 'rt')]
        return [d['docid'] for d in docs], [d['title'] for d in docs], [d['text'] for d in docs]
    docs = [json.loads(l) for l in gzip.open(SCIFACT / 'corpus.jsonl.gz', 'rt')]
    return [d['_id'] for d in docs], [d['title'] for d in docs], [d['text'] for d in docs]


def load_queries(dataset='cranfield') -> pd.DataFrame:
    """qid, text, in the order of the cached query vectors"""
    if dataset == 'cranfield':
        return pd.read_csv(CRAN / 'queries.tsv', sep='\t', header=None, names=['qid', 'orig', 'text'],
                           dtype=str, keep_default_na=False)[['qid', 'text']]
    rows = [l.rstrip('\n').split('\t', 1) for l in gzip.open(SCIFACT / 'topics.beir-v1.0.0-scifact.test.tsv.gz', 'rt')]
    return pd.DataFrame(rows, columns=['qid', 'text'])


def load_qrels(dataset='cranfield') -> pd.DataFrame:
    path = {'cranfield': CRAN / 'qrels.graded.trec', 'scifact': SCIFACT / 'qrels.beir-v1.0.0-scifact.test.txt',
            'dl19': MSMARCO / 'qrels.dl19-passage.txt'}[dataset]
    q = pd.read_csv(path, sep=r'\s+', header=None, names=['qid', 'iter', 'docno', 'label'],
                    dtype={'qid': str, 'docno': str, 'label': np.int64})
    return q[['qid', 'docno', 'label']]


def load_vectors(dataset='cranfield', raw: bool = False):
    """(docids, float64 matrix) of the corpus' MiniLM vectors (``raw``: Cranfield's without the final normalisation)."""
    if raw:
        if dataset != 'cranfield':
            raise ValueError('raw (unnormalised) vectors exist for Cranfield only')
        ids, path = DATA / 'cranfield_corpus.minilm-raw.ids.txt', DATA / 'cranfield_corpus.minilm-raw.f32.npy'
    elif dataset == 'cranfield':
        ids, path = SHARED / 'embeddings' / 'cranfield.minilm.ids.txt', SHARED / 'embeddings' / 'cranfield.minilm.npy'
    elif dataset == 'dl19':
        ids, path = (SHARED / 'embeddings' / 'msmarco-passage.dl19-dl20.minilm.ids.txt',
                     SHARED / 'embeddings' / 'msmarco-passage.dl19-dl20.minilm.npy')
    else:
        ids, path = DATA / 'scifact_corpus.minilm.ids.txt', DATA / 'scifact_corpus.minilm.f16.npy'
    if not path.exists():
        raise ValueError(f'{path} is missing: ' + ('put the shared folder beside the repository (../shared)'
                                                    if SHARED in path.parents else
                                                    'run python -m benchmarks.worlds.encode_data --scifact-corpus'))
    return [l.strip() for l in open(ids)], np.load(path).astype(np.float64)


def build(dataset: str = 'cranfield', out: Path = DATA):
    """Compute the six runs and write them as TREC files (qid Q0 docno rank score system)."""
    ids_, title_, text_ = load_corpus(dataset)
    docids = np.array(ids_, dtype=object)
    queries = load_queries(dataset)
    full = BM25([a + ' ' + b for a, b in zip(title_, text_)])
    titles = BM25(title_)
    ids, E = load_vectors(dataset)
    if ids != list(docids):
        raise ValueError(f'the {dataset} vector ids are not in corpus order; rebuild the vectors')
    Qv = np.load(DATA / f'{dataset}_queries.minilm.npy').astype(np.float64)
    rng = np.random.default_rng(20261123)
    runs = {s: [] for s in SYSTEMS}
    for qi, (qid, text) in enumerate(zip(queries.qid, queries.text)):
        bm = full.scores(text)
        cos = E @ Qv[qi]
        cand = {'bm25': bm, 'dense': cos, 'title_bm25': titles.scores(text),
                'dense_noise_a': cos + NOISE_SD * rng.standard_normal(len(cos)),
                'dense_noise_b': cos + NOISE_SD * rng.standard_normal(len(cos))}
        top100, _ = _topk(bm, 100, np.arange(len(bm)))
        pick = rng.choice(top100, size=K, replace=False)
        rnd = np.zeros(len(bm)) - np.inf
        rnd[pick] = -np.arange(K, dtype=float) - 1     # ranks in the order drawn
        cand['bm25_top100_random'] = rnd
        for s in SYSTEMS:
            dn, sc = _topk(cand[s], K, docids, rng)
            # strictly decreasing scores (ties broken as the ranks say), so that tools which sort by score
            # (trec_eval, ir_measures) see the same order as the ranks
            sc = sc - 1e-5 * np.arange(K)
            for r, (d_, v) in enumerate(zip(dn, sc), 1):
                runs[s].append(f'{qid} Q0 {d_} {r} {v:.6f} {s}\n')
    out.mkdir(parents=True, exist_ok=True)
    for s in SYSTEMS:
        (out / f'{dataset}.{s}.trec').write_text(''.join(runs[s]))


def read_trec_run(path) -> pd.DataFrame:
    return pd.read_csv(path, sep=' ', header=None, names=['qid', 'q0', 'docno', 'rank', 'score', 'tag'],
                       dtype={'qid': str, 'docno': str, 'rank': np.int64, 'score': np.float64})[
        ['qid', 'docno', 'score', 'rank']]


def pca_projection(E: np.ndarray, d: int):
    """The fixed PCA of the corpus vectors: centre on the corpus mean, keep the top d right singular vectors,
    each signed so that its largest-magnitude coordinate is positive. Returns (mean, V (384, d))."""
    m = E.mean(0)
    _, _, Vt = np.linalg.svd(E - m, full_matrices=False)
    V = Vt[:d].T
    V = V * np.sign(V[np.abs(V).argmax(0), np.arange(d)])
    return m, V


class CranfieldWorld(World):
    """The judged queries of a real collection (Cranfield, or dataset='scifact') as a finite population;
    draws are without replacement."""

    def __init__(self, d: int = 384, seed: int = 0, dataset: str = 'cranfield', raw: bool = False):
        if d not in (16, 128, 384):
            raise ValueError(f'd must be 16, 128 or 384 (PCA of the corpus vectors below 384), got {d}')
        if dataset not in ('cranfield', 'scifact'):
            raise ValueError(f"dataset must be 'cranfield' or 'scifact', got {dataset!r}")
        self.name, self.d, self.k, self.seed = dataset + ('-raw' if raw else ''), int(d), K, int(seed)
        self.systems, self.all_systems = list(SYSTEMS), list(SYSTEMS)
        self.equal_pairs, self.swap_pairs = list(SWAP_PAIRS), list(SWAP_PAIRS)
        missing = [s for s in SYSTEMS if not (DATA / f'{dataset}.{s}.trec').exists()]
        if missing:
            raise ValueError(f'runs {missing} are missing from {DATA}: run '
                             f'python -m benchmarks.worlds.cranfield --build --dataset {dataset}')
        docids, E = load_vectors(dataset, raw)
        if d < E.shape[1]:
            m, V = pca_projection(E, d)
            E = (E - m) @ V
        self.vec = dict(zip(docids, E))
        qrels = load_qrels(dataset)
        self.qrels = qrels[qrels.label >= 1].reset_index(drop=True)
        self.population_qids = sorted(self.qrels.qid.unique(), key=int)
        self.max_queries = len(self.population_qids)
        self.runs = {s: read_trec_run(DATA / f'{dataset}.{s}.trec') for s in SYSTEMS}
        self._index()

    def _index(self):
        self._rel_by_q = {q: g for q, g in self.qrels.groupby('qid')}
        self._lab = {(q, dn): l for q, dn, l in self.qrels.itertuples(index=False)}
        self._run_by_q = {s: {q: g for q, g in r.groupby('qid')} for s, r in self.runs.items()}
        self._pop = None
        self.metric_order = sorted(self.all_systems, key=lambda s: -self.population().per_query_metric_mean[s])

    def draw(self, n_queries: int, rng: np.random.Generator) -> QuerySample:
        self._check_n(n_queries)
        qids = [self.population_qids[i] for i in rng.choice(self.max_queries, size=n_queries, replace=False)]
        swap = {}
        for a, b in self.swap_pairs:
            flip = rng.random(len(qids)) < 0.5
            for q, f in zip(qids, flip):
                swap[(a, q)], swap[(b, q)] = (b, a) if f else (a, b)
        return self._sample(qids, list(qids), swap)

    def _sample(self, picks: List[str], names: List[str], swap: Dict[tuple, str]) -> QuerySample:
        """The QuerySample of the population queries ``picks``, named ``names`` in the set (a query drawn twice needs
        a second name), each system's run for a query read from the system ``swap`` gives it (default its own)."""
        rel = pd.concat([self._rel_by_q[q].assign(qid=nm) for q, nm in zip(picks, names)], ignore_index=True)
        retrieved, labels, docnos, scores = {}, {}, {}, {}
        for s in self.all_systems:
            parts = [(q, self._run_by_q[swap.get((s, q), s)].get(q), nm) for q, nm in zip(picks, names)]
            parts = [(q, p.assign(qid=nm)) for q, p, nm in parts if p is not None]
            r = pd.concat([p for _, p in parts], ignore_index=True)
            retrieved[s] = (np.array([self.vec[x] for x in r.docno]).reshape(len(r), self.d),
                            r.qid.to_numpy(str), r['rank'].to_numpy(np.int64))
            labels[s] = np.array([self._lab.get((q, x), 0) for q, p in parts for x in p.docno], np.int64)
            docnos[s], scores[s] = r.docno.to_numpy(str), r.score.to_numpy(np.float64)
        return QuerySample(qids=list(names), relevant=np.array([self.vec[x] for x in rel.docno]),
                           relevant_qid=rel.qid.to_numpy(str), relevant_label=rel.label.to_numpy(np.int64),
                           retrieved=retrieved, retrieved_relevant=labels, relevant_docno=rel.docno.to_numpy(str),
                           retrieved_docno=docnos, retrieved_score=scores)

    def _ndcg_all(self, s: str) -> Dict[str, float]:
        """nDCG@10 of every population query for the stored run of s."""
        qs = self.population_qids
        ret = np.zeros((len(qs), K))
        rel = np.zeros((len(qs), max(len(g) for g in self._rel_by_q.values())))
        for i, q in enumerate(qs):
            g = self._rel_by_q[q]
            rel[i, :len(g)] = g.label
            r = self._run_by_q[s].get(q)
            if r is not None:
                ret[i, r['rank'].to_numpy() - 1] = [self._lab.get((q, x), 0) for x in r.docno]
        return dict(zip(qs, ndcg_matrix(ret, rel, K)))

    def population(self) -> Population:
        if self._pop is None:
            qs = set(self.population_qids)
            rel_m, rel_c = pooled_moments(np.array([self.vec[x] for x in self.qrels.docno]))
            ret_m, ret_c, nd = {}, {}, {}
            partner = {a: b for a, b in self.swap_pairs} | {b: a for a, b in self.swap_pairs}
            for s in self.all_systems:
                group = sorted({s, partner.get(s, s)})
                docs = [x for g in group for x in self.runs[g].docno[self.runs[g].qid.isin(qs)]]
                ret_m[s], ret_c[s] = pooled_moments(np.array([self.vec[x] for x in docs]))
                nd[s] = float(np.mean([np.mean(list(self._ndcg_all(g).values())) for g in group]))
            self._pop = Population(rel_m, rel_c, ret_m, ret_c, nd,
                                   method={'moments': 'exact (finite population of the judged queries)',
                                           'per_query_metric_mean': 'exact (swap pairs: mean of the two runs)'})
        return self._pop


#: DL19's first-stage runs (every top-10 passage has a MiniLM vector in ../shared/embeddings) and two independent
#: random 10-of-top-20 picks from TAS-B's ranking (an exchangeable pair: equal in law)
#: (system names without '-': the calibration scripts name a pair 'a-b')
DL19_RUNS = ['bm25', 'bm25_rm3', 'tasb', 'openai_ada2', 'splade_pp_ed']
DL19_PICK_PAIR = ('tasb_pick_a', 'tasb_pick_b')


class DL19World(CranfieldWorld):
    """TREC DL 2019 passage as a finite population: its 43 judged queries, the relevant passages at grade >= ``rel``
    (TREC's binary convention: 2; 3 to 219 per query, as unequal as the unseen worlds where FD's default interval
    under-covered, but with heavy queries common, not rare: 11 of the 43 have 100 or more), the real top 10 of five
    first-stage runs, the shared MiniLM vectors (d = 384 only). Draws are without replacement (n < 43). nDCG@10
    here uses the grades >= ``rel`` only (the same qrels as the FD's relevant side), a coarsened nDCG, not TREC's."""

    def __init__(self, d: int = 384, seed: int = 0, rel: int = 2):
        self._load_dl19(f'dl19-rel{rel}', d, seed, rel)
        self.max_queries = len(self.population_qids)
        runs = {}
        for s in DL19_RUNS:
            r = read_trec_run(MSMARCO / 'runs' / f"run.dl19.{s.replace('_', '-')}.top100.txt")
            runs[s] = r[r.qid.isin(self.population_qids)].sort_values(['qid', 'rank'], kind='stable')
        rng = np.random.default_rng(20261126)
        for s in DL19_PICK_PAIR:
            parts = []
            for _, g in runs['tasb'].groupby('qid', sort=True):
                g = g[g['rank'] <= 20]
                pick = np.sort(rng.choice(len(g), size=min(K, len(g)), replace=False))
                parts.append(g.iloc[pick].assign(rank=np.arange(1, len(pick) + 1)))
            runs[s] = pd.concat(parts, ignore_index=True)
        self.runs = {s: r[r['rank'] <= K].reset_index(drop=True) for s, r in runs.items()}
        missing = sorted({x for r in self.runs.values() for x in r.docno} - set(self.vec)
                         | set(self.qrels.docno) - set(self.vec))
        if missing:
            raise ValueError(f'{len(missing)} passages of the DL19 world have no vector (first: {missing[:3]})')
        self.all_systems = DL19_RUNS + list(DL19_PICK_PAIR)
        self.systems = list(self.all_systems)
        self.equal_pairs, self.swap_pairs = [DL19_PICK_PAIR], [DL19_PICK_PAIR]
        self._index()

    def _load_dl19(self, name: str, d: int, seed: int, rel: int) -> None:
        """The DL19 qrels at grade >= ``rel``, their 43 queries and the shared MiniLM vectors (d = 384 only)."""
        if d != 384:
            raise ValueError(f'the DL19 world has the 384-d MiniLM vectors only, got d = {d}')
        self.name, self.d, self.k, self.seed = name, 384, K, int(seed)
        qrels = load_qrels('dl19')
        self.qrels = qrels[qrels.label >= rel].reset_index(drop=True)
        self.population_qids = sorted(self.qrels.qid.unique(), key=int)
        self.vec = dict(zip(*load_vectors('dl19')))


def _system_name(path: Path) -> str:
    """A run file's system name without '-' or '.' (the calibration scripts name a pair 'a-b')."""
    stem = path.name[len('run.dl19.'):].split('.top')[0]
    return re.sub(r'[^0-9a-zA-Z]+', '_', stem)


class DL19RunsWorld(DL19World):
    """TREC DL 2019 with every one of its 19 real runs (first stage and re-rankers), for the Kendall τ interval:
    the systems are many and some are close, as in a paper's table. Each run's top 10 with the passages that have no
    MiniLM vector dropped (as ``--missing drop``: 0 to 29 of a run's 430 top-10 rows). The population is the
    *empirical distribution* of the 43 judged queries: a set draws queries with replacement (a query drawn twice
    enters twice, as two queries ``QID~2`` …), so n is not capped and the sets are independent draws from a fixed
    population (the bootstrap's own model, but at n = 43 from 43, the paper's setting, with real systems and
    vectors). No equal-in-law pair: the tests' level is not measured here."""

    def __init__(self, d: int = 384, seed: int = 0, rel: int = 2):
        self._load_dl19(f'dl19-runs-rel{rel}', d, seed, rel)
        runs = {}
        for path in sorted((MSMARCO / 'runs').glob('run.dl19.*')):
            r = read_trec_run(path)
            r = r[r.qid.isin(self.population_qids) & (r['rank'] <= K) & r.docno.isin(self.vec.keys())]
            runs[_system_name(path)] = r.sort_values(['qid', 'rank'], kind='stable').reset_index(drop=True)
        self.runs = runs
        missing = sorted(set(self.qrels.docno) - set(self.vec))
        if missing:
            raise ValueError(f'{len(missing)} relevant passages of the DL19 world have no vector (first: {missing[:3]})')
        self.max_queries = None
        self.all_systems = sorted(runs)
        self.systems = list(self.all_systems)
        self.equal_pairs, self.swap_pairs = [], []
        self._index()

    def draw(self, n_queries: int, rng: np.random.Generator) -> QuerySample:
        """n queries drawn with replacement; the k-th copy of a query is named QID~k (k >= 2)."""
        self._check_n(n_queries)
        picks = [self.population_qids[i] for i in rng.integers(0, len(self.population_qids), size=n_queries)]
        seen: Dict[str, int] = {}
        names = []
        for q in picks:
            seen[q] = seen.get(q, 0) + 1
            names.append(q if seen[q] == 1 else f'{q}~{seen[q]}')
        return self._sample(picks, names, {})


if __name__ == '__main__':
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument('--build', action='store_true', help='compute the runs and write data/<dataset>.*.trec')
    ap.add_argument('--dataset', default='cranfield', choices=['cranfield', 'scifact'])
    args = ap.parse_args()
    logging.basicConfig(level=logging.INFO)
    if args.build:
        build(args.dataset)
    w = CranfieldWorld(384, dataset=args.dataset)
    for s, v in w.population().per_query_metric_mean.items():
        print(f'{s:22s} nDCG@10 = {v:.4f}')
