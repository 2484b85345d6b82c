#!/bin/bash
# World 'interact' (system x topic interaction), after run_all.sh; one core, time-boxed steps.
# Run from benchmarks/grouped_world:  nohup bash run_interact.sh > results/run_interact.log 2>&1 &
export OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 MKL_NUM_THREADS=1
PY=${PY:-/work/main/.venv/bin/python}
date
timeout 300 $PY truth.py --world interact --d 128 --G 14 --sets 500
timeout 480 $PY run_trials.py --world interact --d 128 --G 14 --trials 100
date
timeout 300 $PY truth.py --world interact --d 128 --G 65 --sets 300
timeout 360 $PY run_trials.py --world interact --d 128 --G 65 --trials 100
date
