#!/bin/bash
# reduced d=384 run (time box): 10 trials per world, 200 truth sets
export OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 MKL_NUM_THREADS=1
PY=/work/main/.venv/bin/python
for w in sphere clustered hub_lognorm; do
  $PY benchmarks/unseen_world/trials.py $w 384 43 10 > /dev/null
  echo "trials $w $(date -u +%T)"
  $PY benchmarks/unseen_world/truth.py $w 384 43 200
  echo "done $w 384 43 $(date -u +%T)"
done
