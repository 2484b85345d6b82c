"""When do FD variants agree with nDCG@10, across collections and encoders?

    python -m benchmarks.disagreement.study                    # build runs -> score -> summary, cheap parts first
    python -m benchmarks.disagreement.study --stage score      # re-score every saved run (picks up new FD params)
    python -m benchmarks.disagreement.study --stage summary    # only rebuild the CSVs and summary.md from the parts

Runs, indexes and logs go to $STUDY_WORK (default ../study_work beside the checkout); results (CSVs, summary.md) to
benchmarks/results/disagreement/. See benchmarks/disagreement/README.md.
"""
import os

for _k, _v in {'OMP_NUM_THREADS': '1', 'MKL_NUM_THREADS': '1', 'OPENBLAS_NUM_THREADS': '1',
               'TOKENIZERS_PARALLELISM': 'false', 'HF_HUB_OFFLINE': '1',
               'PYTERRIER_FRECHET_CACHE': str(__import__('pathlib').Path(__file__).resolve().parents[3] / 'study_cache')}.items():
    os.environ.setdefault(_k, _v)

import argparse  # noqa: E402
import datetime as _dt  # noqa: E402
import json  # noqa: E402
import logging  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
import traceback  # noqa: E402
import warnings  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

import torch  # noqa: E402

torch.set_num_threads(1)

import pyterrier as pt  # noqa: E402
from ir_measures import RR, nDCG  # noqa: E402

import pyterrier_frechet as pf  # noqa: E402
from pyterrier_frechet import CFD, FD, pipelines  # noqa: E402

from . import data  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
WORK = Path(os.environ.get('STUDY_WORK', Path(__file__).resolve().parents[3] / 'study_work'))
RESULTS = REPO / 'benchmarks' / 'results' / 'disagreement'
PARTS = RESULTS / 'parts'

log = logging.getLogger('disagreement')

MAXSIM_LABEL = 'BM25 >> token MaxSim over MiniLM token vectors (not a ColBERT-trained checkpoint)'
#: slug -> (label, group). Group 'minilm' needs only MiniLM (and BM25/SPLADE); 'mpnet' needs the mpnet encoder.
SYSTEMS = {
    'bm25': ('BM25', 'minilm'),
    'dense-minilm': ('Dense MiniLM', 'minilm'),
    'bm25-minilm': ('BM25 >> MiniLM', 'minilm'),
    'splade-tiny': ('SPLADE-tiny', 'minilm'),
    'maxsim-minilm': (MAXSIM_LABEL, 'minilm'),
    'dense-mpnet': ('Dense mpnet', 'mpnet'),
    'bm25-mpnet': ('BM25 >> mpnet', 'mpnet'),
}
#: cheapest first within a group (SPLADE-tiny's document encoding was the slowest MiniLM-group step on Cranfield)
BUILD_ORDER = ('bm25', 'dense-minilm', 'bm25-minilm', 'maxsim-minilm', 'splade-tiny', 'dense-mpnet', 'bm25-mpnet')
OWN_ENCODER = {'dense-minilm': 'minilm', 'bm25-minilm': 'minilm', 'dense-mpnet': 'mpnet', 'bm25-mpnet': 'mpnet'}
ENCODERS = ('minilm', 'mpnet')
COLLECTIONS = ('cranfield', 'scifact', 'dl19', 'vaswani')


def now() -> str:
    return _dt.datetime.now(_dt.timezone.utc).strftime('%Y-%m-%d %H:%M:%S UTC')


def mpnet_path() -> str:
    return pf.models.fetch('all-mpnet-base-v2')


def splade_path() -> str:
    return pf.models.fetch('splade-tiny')


def make_embedder(encoder: str, texts) -> pf.Embedder:
    model = None if encoder == 'minilm' else mpnet_path()
    return pf.Embedder(model, texts=texts, empty_text='embed', verbose=False)


# ----------------------------------------------------------------------------------------------------- build runs
def _find(transformer, cls):
    """The first instance of ``cls`` inside a composed PyTerrier pipeline."""
    if isinstance(transformer, cls):
        return transformer
    for child in getattr(transformer, '_transformers', ()) or ():
        found = _find(child, cls)
        if found is not None:
            return found
    return None


def memoise_doc_encoding(pipeline) -> None:
    """Speed-up only: the MaxSim re-ranker encodes each (query, document) row's text afresh; BM25's top 100 repeat
    documents across queries, so remember each text's token vectors (same model, same per-document result up to
    float round-off from batch padding)."""
    from pyterrier_frechet.pipelines.late_interaction import ColBERTScorer
    scorer = _find(pipeline, ColBERTScorer)
    if scorer is None:
        raise RuntimeError('no ColBERTScorer in the token_maxsim pipeline')
    enc = scorer.colbert
    original = enc.encode_docs
    memo = {}

    def encode_docs(texts):
        new = list(dict.fromkeys(t for t in texts if t not in memo))
        if new:
            for t, v in zip(new, original(new)):
                memo[t] = np.ascontiguousarray(v)
        return [memo[t] for t in texts]
    enc.encode_docs = encode_docs


SPLADE_DOC_BATCH = 8


def small_splade_batches() -> None:
    """Memory only: pipelines.splade encodes documents with pyterrier-splade's default batch of 100, whose masked-LM
    logits (100 × 256 tokens × 30,522 terms, float32, several copies) took the process past 9 GB on Cranfield;
    pipelines.splade has no batch-size argument, so the default of Splade.doc_encoder is lowered here. The term weights
    of a document do not depend on the batch (up to float round-off)."""
    import pyterrier_splade
    original = pyterrier_splade.Splade.doc_encoder
    if getattr(original, '_study_patched', False):
        return

    def doc_encoder(self, text_field='text', batch_size=SPLADE_DOC_BATCH, **kwargs):
        return original(self, text_field, batch_size=batch_size, **kwargs)
    doc_encoder._study_patched = True
    pyterrier_splade.Splade.doc_encoder = doc_encoder


def run_dir(coll: str) -> Path:
    d = WORK / 'runs' / coll
    d.mkdir(parents=True, exist_ok=True)
    return d


def load_status(coll: str) -> dict:
    p = run_dir(coll) / 'status.json'
    return json.loads(p.read_text()) if p.exists() else {}


def save_status(coll: str, status: dict) -> None:
    p = run_dir(coll) / 'status.json'
    tmp = p.with_suffix('.tmp')
    tmp.write_text(json.dumps(status, indent=1))
    tmp.replace(p)


def past(deadline) -> bool:
    return deadline is not None and _dt.datetime.now(_dt.timezone.utc) > deadline


def build_runs(coll: str, group: str, force: bool = False, deadline=None, only=None) -> None:
    """Build the runs of ``group`` ('minilm' or 'mpnet' systems) for a pipeline collection, each saved as TREC."""
    spec = data.LOADERS[coll]()
    c = spec.collection
    status = load_status(coll)
    index_dir = WORK / 'indexes'
    index_dir.mkdir(parents=True, exist_ok=True)
    cache = {}

    def bm25():
        if 'bm25' not in cache:
            cache['bm25'] = pipelines.bm25(c, index_dir, num_results=100)
        return cache['bm25']

    def embedder(enc):
        if enc not in cache:
            cache[enc] = make_embedder(enc, c.texts)
        return cache[enc]

    def make(slug):
        if slug == 'bm25':
            return bm25()
        if slug in ('dense-minilm', 'dense-mpnet'):
            return pipelines.dense(c, embedder(slug.split('-')[1]), index_dir, num_results=100)
        if slug in ('bm25-minilm', 'bm25-mpnet'):
            return bm25() >> pipelines.dense_reranker(c, embedder(slug.split('-')[1]), index_dir)
        if slug == 'splade-tiny':
            small_splade_batches()
            return pipelines.splade(c, index_dir, model=splade_path(), num_results=100)
        if slug == 'maxsim-minilm':
            p = pipelines.token_maxsim(c, model='all-MiniLM-L6-v2', first_stage=bm25(), num_results=100)
            memoise_doc_encoding(p)
            return p
        raise ValueError(slug)

    for slug in BUILD_ORDER:
        label, g = SYSTEMS[slug]
        if g != group or (only and slug not in only):
            continue
        path = run_dir(coll) / f'{slug}.run'
        if path.exists() and not force and status.get(slug, {}).get('ok'):
            log.info('%s %s: run exists, kept', coll, slug)
            continue
        if past(deadline):
            log.warning('%s %s: past the deadline, not built', coll, slug)
            status[slug] = {'ok': False, 'label': label, 'error': 'not built: past the --deadline of this run', 'finished': now()}
            save_status(coll, status)
            continue
        log.info('%s %s: building (%s)', coll, slug, now())
        t0 = time.perf_counter()
        try:
            pipe = make(slug)
            t1 = time.perf_counter()
            res = pipe.transform(c.topics)
            t2 = time.perf_counter()
            res = res.sort_values(['qid', 'score', 'docno'], ascending=[True, False, False])
            res = res.groupby('qid', sort=False).head(100).copy()
            res['rank'] = res.groupby('qid', sort=False).cumcount()
            pt.io.write_results(res[['qid', 'docno', 'rank', 'score']], str(path), format='trec', run_name=slug)
            status[slug] = {'ok': True, 'label': label, 'setup_s': round(t1 - t0, 1), 'retrieve_s': round(t2 - t1, 1),
                            'queries': int(res['qid'].nunique()), 'rows': int(len(res)), 'finished': now()}
            log.info('%s %s: done, setup %.1f s, retrieval %.1f s', coll, slug, t1 - t0, t2 - t1)
        except Exception as ex:  # record why, go on
            status[slug] = {'ok': False, 'label': label, 'error': f'{type(ex).__name__}: {ex}',
                            'traceback': traceback.format_exc(), 'seconds': round(time.perf_counter() - t0, 1),
                            'finished': now()}
            log.error('%s %s failed: %s', coll, slug, traceback.format_exc())
        save_status(coll, status)


def dl19_needed_docnos(rel: int = data.DL19_REL) -> list:
    """Passages the FD measures on DL19 look up: judged >= rel, and every run's top 10 (trec_eval order)."""
    _, qrels = data.dl19_topics_qrels()
    need = set(qrels.loc[qrels['label'] >= rel, 'docno'].astype(str))
    for path in data.dl19_run_files().values():
        run = pt.io.read_results(str(path))
        run = run.sort_values(['qid', 'score', 'docno'], ascending=[True, False, False]).groupby('qid').head(10)
        need.update(run['docno'].astype(str))
    return sorted(need)


def build_dl19_mpnet() -> None:
    """Embed (and cache) with mpnet the DL19 passages FD needs: judged >= 2 and every run's top 10 that have text."""
    status = load_status('dl19')
    t0 = time.perf_counter()
    try:
        texts = data.dl19_passages()
        need = dl19_needed_docnos()
        have = [d for d in need if d in texts]
        emb = make_embedder('mpnet', texts)
        emb.lookup(have)
        status['mpnet-vectors'] = {'ok': True, 'needed': len(need), 'with_text': len(have), 'encoded_now': emb.n_encoded,
                                   'seconds': round(time.perf_counter() - t0, 1), 'finished': now()}
    except Exception as ex:
        status['mpnet-vectors'] = {'ok': False, 'error': f'{type(ex).__name__}: {ex}', 'traceback': traceback.format_exc(),
                                   'finished': now()}
        log.error('dl19 mpnet vectors failed: %s', traceback.format_exc())
    save_status('dl19', status)


# ----------------------------------------------------------------------------------------------------------- score
def fd_variants(rel: int, missing: str, rows: str = 'exact') -> dict:
    """Key -> measure. The key is the variant's name in the outputs (rel and missing are per collection).
    ``rows='influence'``: the FD variants' pt.Experiment rows from each query's influence (same FD values, a cheaper
    and more conservative paired test); CFD has no such option and keeps its exact leave-outs."""
    kw = {'missing': missing} if missing != 'error' else {}
    if rel != 1:
        kw['rel'] = rel
    fkw = dict(kw, rows='influence') if rows == 'influence' else kw
    variants = {
        'FD@10': FD(**fkw) @ 10,
        'FD(per_query=5)@10': FD(per_query=5, **fkw) @ 10,
        "FD(weighting='query')@10": FD(weighting='query', **fkw) @ 10,
        'CFD@10': CFD(**kw) @ 10,
    }
    if 'term' in FD.SUPPORTED_PARAMS:  # being added to the package: picked up when the score stage is rerun
        variants["FD(term='mean')@10"] = FD(term='mean', **fkw) @ 10
        variants["FD(term='cov')@10"] = FD(term='cov', **fkw) @ 10
    return variants


def top_k(run: pd.DataFrame, k: int = 10) -> pd.DataFrame:
    run = run.assign(qid=run['qid'].astype(str), docno=run['docno'].astype(str))
    return run.sort_values(['qid', 'score', 'docno'], ascending=[True, False, False]).groupby('qid').head(k)


def vector_map(encoder, docnos) -> dict:
    uniq = np.unique(np.asarray(list(docnos), dtype=str))
    vecs, found = encoder.lookup(uniq)
    vecs = np.asarray(vecs, dtype=np.float64)
    return {d: vecs[i] for i, d in enumerate(uniq) if found[i]}


def _trace_cov(rows) -> float:
    return float(np.var(np.asarray(rows), axis=0, ddof=1).sum()) if len(rows) >= 2 else float('nan')


def variance_rows(encoder, relevant: pd.DataFrame, tops: dict) -> list:
    """Tr Σ_ret / Tr Σ_rel under ``encoder``: pooled over the query set (the sets FD@10 fits: relevant (qid, docno)
    pairs, each such query's top 10; documents without a vector left out and counted), and within queries
    (Σ_q Tr Σ_ret,q / Σ_q Tr Σ_rel,q over the queries with >= 2 relevant and >= 2 retrieved vectors)."""
    vmap = vector_map(encoder, pd.concat([relevant['docno']] + [t['docno'] for t in tops.values()]))
    rel_rows = [vmap[d] for d in relevant['docno'] if d in vmap]
    tr_rel = _trace_cov(rel_rows)
    rel_by_q = {q: [vmap[d] for d in g['docno'] if d in vmap] for q, g in relevant.groupby('qid')}
    out = []
    for slug, top in tops.items():
        ret_rows = [vmap[d] for d in top['docno'] if d in vmap]
        tr_ret = _trace_cov(ret_rows)
        num = den = 0.0
        nq = 0
        for q, g in top.groupby('qid'):
            r = [vmap[d] for d in g['docno'] if d in vmap]
            rr = rel_by_q.get(q, [])
            if len(r) >= 2 and len(rr) >= 2:
                num += _trace_cov(r)
                den += _trace_cov(rr)
                nq += 1
        out.append({'system': slug, 'tr_ret': tr_ret, 'tr_rel': tr_rel, 'ratio': tr_ret / tr_rel,
                    'n_ret': len(ret_rows), 'n_rel': len(rel_rows),
                    'no_vector_ret': int(len(top) - len(ret_rows)), 'no_vector_rel': int(len(relevant) - len(rel_rows)),
                    'ratio_within': (num / den) if nq else float('nan'), 'queries_within': nq})
    return out


def load_scoring_inputs(coll: str):
    """(topics, qrels, rel, rel_why, missing, {slug: (label, run frame)}, baseline slug, texts or None)."""
    if coll == 'dl19':
        topics, qrels = data.dl19_topics_qrels()
        runs = {name: (name, pt.io.read_results(str(p))) for name, p in data.dl19_run_files().items()}
        return topics, qrels, data.DL19_REL, data.DL19_REL_WHY, 'drop', runs, 'bm25', None
    spec = data.LOADERS[coll]()
    c = spec.collection
    status = load_status(coll)
    runs = {}
    for slug, (label, _) in SYSTEMS.items():
        path = run_dir(coll) / f'{slug}.run'
        if path.exists() and status.get(slug, {}).get('ok'):
            runs[slug] = (label, pt.io.read_results(str(path)))
    return c.topics, c.qrels, spec.rel, spec.rel_why, 'error', runs, 'bm25', c.texts


#: (collection, encoder) parts whose FD rows come from the influence instead of exact leave-outs (--influence-rows):
#: Cranfield under mpnet (225 queries, 1,612 relevant, d = 768) needs ~1,600 768×768 eigen-solves per FD variant
INFLUENCE_ROWS = set()
#: parts scored without baseline= (values only, no p-values: no leave-outs at all) (--values-only)
VALUES_ONLY = set()


def score(coll: str, encoder_key: str) -> None:
    t0 = time.perf_counter()
    topics, qrels, rel, rel_why, missing, runs, base, texts = load_scoring_inputs(coll)
    if base not in runs:
        log.error('%s: no BM25 run, nothing scored', coll)
        return
    if coll == 'dl19':
        encoder = (pf.VectorStore(str(data.MINILM_DL)) if encoder_key == 'minilm'
                   else make_embedder('mpnet', data.dl19_passages()))
    else:
        encoder = make_embedder(encoder_key, texts)
    slugs = [base] + [s for s in runs if s != base]
    frames = [runs[s][1] for s in slugs]
    names = [runs[s][0] for s in slugs]
    rows_kind = 'influence' if (coll, encoder_key) in INFLUENCE_ROWS else 'exact'
    variants = fd_variants(rel, missing, rows_kind)
    classical = {'nDCG@10': nDCG @ 10, 'RR@10': (RR(rel=rel) @ 10 if rel != 1 else RR @ 10)}
    measures = {**classical, **variants}
    log.info('%s / %s: pt.Experiment over %d systems, %s (%s)', coll, encoder_key, len(frames), list(measures), now())
    with warnings.catch_warnings(record=True) as caught, pf.default_encoder(encoder):
        warnings.simplefilter('always')
        untested = {k: m for k, m in measures.items() if k == 'CFD@10' and rows_kind == 'influence'}
        tested = [m for k, m in measures.items() if k not in untested]
        table = pt.Experiment(frames, topics, qrels, eval_metrics=tested, names=names,
                              baseline=None if (coll, encoder_key) in VALUES_ONLY else 0).set_index('name')
        if untested:  # CFD has no influence rows; its exact leave-outs are what made this part slow: values only
            extra = pt.Experiment(frames, topics, qrels, eval_metrics=list(untested.values()), names=names)
            table = table.join(extra.set_index('name'))
    t1 = time.perf_counter()
    rows = []
    for slug, name in zip(slugs, names):
        for key, m in measures.items():
            col = str(m)
            pcol = f'{col} p-value'
            rows.append({'collection': coll, 'encoder': encoder_key, 'system': slug, 'label': name, 'measure': key,
                         'measure_spelled': col, 'value': float(table.loc[name, col]),
                         'p_value': (float(table.loc[name, pcol]) if slug != base and pcol in table.columns else np.nan),
                         'higher_is_better': key in classical, 'rel': rel, 'missing': missing, 'baseline': base})
    # total variance of the top-10 vectors relative to the relevant set's (same sets as FD@10: queries with a
    # relevant document at rel; relevant (qid, docno) pairs; each such query's top 10)
    judged = qrels.assign(qid=qrels['qid'].astype(str), docno=qrels['docno'].astype(str))
    relevant = judged[judged['label'] >= rel]
    qset = set(relevant['qid'])
    tops = {}
    for slug in slugs:
        top = top_k(runs[slug][1])
        tops[slug] = top[top['qid'].isin(qset)]
    var_rows = [{'collection': coll, 'encoder': encoder_key, 'label': runs[r['system']][0], **r}
                for r in variance_rows(encoder, relevant, tops)]
    t2 = time.perf_counter()
    PARTS.mkdir(parents=True, exist_ok=True)
    stem = f'{coll}__{encoder_key}'
    pd.DataFrame(rows).to_csv(PARTS / f'{stem}.systems.csv', index=False)
    pd.DataFrame(var_rows).to_csv(PARTS / f'{stem}.variance.csv', index=False)
    meta = {'collection': coll, 'encoder': encoder_key, 'encoder_repr': repr(encoder), 'rel': rel, 'rel_why': rel_why,
            'missing': missing,
            'fd_rows': ('none (values only, no tests)' if (coll, encoder_key) in VALUES_ONLY
                        else 'influence (CFD: values only, no test)' if rows_kind == 'influence' else rows_kind), 'systems': len(slugs), 'queries_topics': int(topics['qid'].nunique()),
            'queries_with_relevant': len(qset), 'experiment_s': round(t1 - t0, 1), 'variance_s': round(t2 - t1, 1),
            'term_variants': 'term' in FD.SUPPORTED_PARAMS, 'finished': now(),
            'warnings': sorted({f'{w.category.__name__}: {str(w.message)[:300]}' for w in caught})}
    (PARTS / f'{stem}.meta.json').write_text(json.dumps(meta, indent=1))
    log.info('%s / %s: scored in %.1f s (+ variance %.1f s)', coll, encoder_key, t1 - t0, t2 - t1)


def _aggregate() -> None:
    from .report import aggregate
    try:
        aggregate(RESULTS, WORK)
    except Exception:
        log.error('aggregate failed: %s', traceback.format_exc())


# ------------------------------------------------------------------------------------------------------------ plan
def plan(collections, encoders):
    """Cheap parts first (by measured cost on 2 cores): Cranfield; SciFact and DL19 with MiniLM; DL19 mpnet vectors
    (a few thousand passages); Vaswani with MiniLM; then the expensive mpnet corpus encodings (SciFact, Vaswani)."""
    steps = [
        ('build', 'cranfield', 'minilm'), ('build', 'cranfield', 'mpnet'),
        ('score', 'cranfield', 'minilm'), ('score', 'cranfield', 'mpnet'),
        ('build', 'scifact', 'minilm'), ('score', 'scifact', 'minilm'),
        ('score', 'dl19', 'minilm'),
        ('build', 'dl19', 'mpnet'), ('score', 'dl19', 'mpnet'),
        ('build', 'vaswani', 'minilm'), ('score', 'vaswani', 'minilm'),
        ('build', 'scifact', 'mpnet'), ('score', 'scifact', 'mpnet'),
        ('build', 'vaswani', 'mpnet'), ('score', 'vaswani', 'mpnet'),
    ]
    return [s for s in steps if s[1] in collections and s[2] in encoders]


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument('--stage', choices=('all', 'runs', 'score', 'summary'), default='all')
    ap.add_argument('--collections', nargs='+', choices=COLLECTIONS, default=list(COLLECTIONS))
    ap.add_argument('--encoders', nargs='+', choices=ENCODERS, default=list(ENCODERS),
                    help='build: the system groups to build (mpnet systems need mpnet); score: the FD encoders')
    ap.add_argument('--force', action='store_true', help='rebuild runs that exist')
    ap.add_argument('--influence-rows', nargs='+', default=['cranfield:mpnet'], metavar='COLL:ENC',
                    help="score these parts with FD(rows='influence') (same values, cheaper, more conservative test), "
                         "(default: cranfield:mpnet, whose exact rows take ~40 min here; 'none' for exact rows everywhere)")
    ap.add_argument('--values-only', nargs='+', default=[], metavar='COLL:ENC',
                    help='score these parts without baseline= (values, τ and own-encoder effects; no p-values)')
    ap.add_argument('--systems', nargs='+', choices=list(SYSTEMS), default=None,
                    help='build only these systems (default: all); scoring always takes every saved run')
    ap.add_argument('--deadline', default=None, help='UTC HH:MM: no build step starts after it (scores still run)')
    args = ap.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format='%(asctime)s %(name)s %(levelname)s %(message)s', stream=sys.stdout)
    logging.getLogger('pyterrier_frechet').setLevel(logging.WARNING)
    WORK.mkdir(parents=True, exist_ok=True)
    VALUES_ONLY.update(tuple(x.split(':')) for x in args.values_only)
    INFLUENCE_ROWS.update(tuple(x.split(':')) for x in args.influence_rows if x != 'none')
    deadline = None
    if args.deadline:
        h, m = map(int, args.deadline.split(':'))
        deadline = _dt.datetime.now(_dt.timezone.utc).replace(hour=h, minute=m, second=0, microsecond=0)
    timings = []
    for kind, coll, enc in plan(args.collections, args.encoders):
        if args.stage == 'summary' or (args.stage == 'runs' and kind == 'score') or (args.stage == 'score' and kind == 'build'):
            continue
        if kind == 'build' and past(deadline):
            log.warning('past the deadline %s: build %s %s skipped', args.deadline, coll, enc)
            continue
        if (kind == 'score' and enc == 'mpnet' and coll in ('scifact', 'vaswani') and past(deadline)
                and not load_status(coll).get('dense-mpnet', {}).get('ok')):
            # without the dense mpnet system the corpus is not embedded: FD would embed thousands of documents now
            log.warning('past the deadline %s: score %s mpnet skipped (its mpnet vectors are not cached)', args.deadline, coll)
            continue
        t0 = time.perf_counter()
        try:
            if kind == 'build':
                build_dl19_mpnet() if coll == 'dl19' else build_runs(coll, enc, args.force, deadline, args.systems)
            else:
                score(coll, enc)
                _aggregate()
        except Exception:
            log.error('%s %s %s failed: %s', kind, coll, enc, traceback.format_exc())
        timings.append((kind, coll, enc, round(time.perf_counter() - t0, 1)))
        log.info('step %s %s %s: %.1f s', kind, coll, enc, time.perf_counter() - t0)
    _aggregate()
    log.info('steps: %s', timings)


if __name__ == '__main__':
    main()
