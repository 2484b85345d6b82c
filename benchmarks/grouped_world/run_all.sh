#!/bin/bash
# The whole check, one core, sequentially; each step time-boxed (partial trial CSVs count).
# Run from the repository root:  nohup bash benchmarks/grouped_world/run_all.sh > benchmarks/grouped_world/results/run_all.log 2>&1 &
# World 'interact' (system x topic interaction), after that: the same with the argument interact (results/run_interact.log)
export OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 MKL_NUM_THREADS=1
PY=${PY:-/work/main/.venv/bin/python}
WORLD=${1:-shared}

# step D G REFERENCE_SETS TRIAL_SECONDS: the truth over reference sets, then 100 time-boxed trials
step() {
    date
    timeout 300 $PY -m benchmarks.grouped_world.truth --world "$WORLD" --d "$1" --G "$2" --sets "$3"
    timeout "$4" $PY -m benchmarks.grouped_world.run_trials --world "$WORLD" --d "$1" --G "$2" --trials 100
}

if [ "$WORLD" = interact ]; then
    step 128 14 500 480
    step 128 65 300 360
else
    step 128 14 500 900
    step 128 65 300 540
    step 384 14 400 600
    step 384 65 150 480
fi
date
