#!/bin/bash
# one core, sequential. usage: bash benchmarks/unseen_world/run_all.sh
export OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 MKL_NUM_THREADS=1
PY=/work/main/.venv/bin/python
for cfg in "128 43 40" "384 43 20" "128 200 15"; do
  set -- $cfg
  for w in sphere clustered hub_lognorm; do
    $PY benchmarks/unseen_world/truth.py $w $1 $2 200
    $PY benchmarks/unseen_world/trials.py $w $1 $2 $3 > /dev/null
    echo "done $w $1 $2 $(date -u +%T)"
  done
done
