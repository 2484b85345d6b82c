"""Retrieval pipelines (BM25, SPLADE, ColBERT, dense) built with their real libraries, the URR filter, and tiny
random checkpoints for tests (:mod:`.tiny`).

``pipelines.bm25(collection, work_dir)`` etc. are in :mod:`.retrieval`; ColBERT's MaxSim, and MaxSim over a trained
encoder's token vectors (``token_maxsim``), in :mod:`.late_interaction`.
"""
from .retrieval import (DEFAULT_SPLADE, bm25, colbert, dense, dense_reranker, native_output_silenced, splade,
                        token_maxsim)

__all__ = ['bm25', 'splade', 'dense', 'dense_reranker', 'colbert', 'token_maxsim', 'native_output_silenced', 'DEFAULT_SPLADE']
