#!/bin/bash
# The whole check, one core, sequentially; each step time-boxed (partial trial CSVs count).
# Run from benchmarks/grouped_world:  nohup bash run_all.sh > results/run_all.log 2>&1 &
export OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 MKL_NUM_THREADS=1
PY=${PY:-/work/main/.venv/bin/python}
date
timeout 300 $PY truth.py --d 128 --G 14 --sets 500
timeout 900 $PY run_trials.py --d 128 --G 14 --trials 100
date
timeout 300 $PY truth.py --d 128 --G 65 --sets 300
timeout 540 $PY run_trials.py --d 128 --G 65 --trials 100
date
timeout 300 $PY truth.py --d 384 --G 14 --sets 400
timeout 600 $PY run_trials.py --d 384 --G 14 --trials 100
date
timeout 300 $PY truth.py --d 384 --G 65 --sets 150
timeout 480 $PY run_trials.py --d 384 --G 65 --trials 100
date
