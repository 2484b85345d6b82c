#!/bin/bash
# Run from the repository root with the venv active.
set -e
export OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 MKL_NUM_THREADS=1
python -m benchmarks.unseen_world2.run truth graded 128 1000
python -m benchmarks.unseen_world2.run truth aniso 128 1000
python -m benchmarks.unseen_world2.run trials graded 128 0 40
python -m benchmarks.unseen_world2.run trials aniso 128 0 40
python -m benchmarks.unseen_world2.run truth graded 384 400
python -m benchmarks.unseen_world2.run truth aniso 384 400
# d=384 trials interleaved in blocks of 2 so both worlds get equal counts if stopped early
for t in $(seq 0 2 38); do
  python -m benchmarks.unseen_world2.run trials graded 384 $t $((t+2))
  python -m benchmarks.unseen_world2.run trials aniso 384 $t $((t+2))
done
