"""Evaluation: from qrels and runs to the inputs of each measure, the ir_measures provider, and :func:`evaluate`,
the one function every entry point (Python API, CLI, report, analyses) uses to turn runs + qrels + measures into a
table.

- :mod:`.frames` — qrels and runs as checked ir_measures frames;
- :mod:`.selection` — the one selection engine: trec_eval order, top-k, URR on integer codes (every measure,
  URRFilter, depth pools); :mod:`.qrels` — balancing;
- :mod:`.vector_sets` — the two sets of vector measures and their vectors, dropped documents counted;
- :mod:`.histograms` — per-query score histograms of DO/HSA;
- :mod:`.provider` — the ir_measures provider of every set measure;
- :mod:`.evaluate` — :func:`evaluate`.
"""
