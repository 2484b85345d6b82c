#!/usr/bin/env bash
# Every benchmark behind BENCHMARKS.md, one after the other (about 20 min on 2 CPU cores; needs ../shared).
# Run on an otherwise idle machine: each script prints ratios measured side by side in its own run.
set -euo pipefail
cd "$(dirname "$0")/.."
python benchmarks/experiment_floor.py
python benchmarks/report_floor.py --runs 4 --report --routes
python benchmarks/fd_kernel.py
python benchmarks/bootstrap_fd.py
python benchmarks/bootstrap_scale.py
python benchmarks/embedder_throughput.py
python benchmarks/experiment_cache.py
python benchmarks/measure_overhead.py
python benchmarks/import_time.py --repeats 5
