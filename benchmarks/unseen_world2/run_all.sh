#!/bin/bash
# Run from /work/main/benchmarks/unseen_world2 with the venv active.
set -e
export OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 MKL_NUM_THREADS=1
python run.py truth graded 128 1000
python run.py truth aniso 128 1000
python run.py trials graded 128 0 40
python run.py trials aniso 128 0 40
python run.py truth graded 384 400
python run.py truth aniso 384 400
# d=384 trials interleaved in blocks of 2 so both worlds get equal counts if stopped early
for t in $(seq 0 2 38); do
  python run.py trials graded 384 $t $((t+2))
  python run.py trials aniso 384 $t $((t+2))
done
