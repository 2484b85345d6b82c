"""Analyses for a paper, each built on :func:`pyterrier_frechet.evaluation.evaluate.evaluate` or the bootstrap's
per-query statistics: :mod:`.bootstrap`, :mod:`.significance`, :mod:`.correlation`, :mod:`.robustness` (sparsified
judgments, encoders), :mod:`.pooling`, :mod:`.cost`, :mod:`.plots`, :mod:`.report` and :mod:`.table` (the paper table)."""
