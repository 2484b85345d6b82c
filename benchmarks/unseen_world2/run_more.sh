#!/bin/bash
# Second stage (run after run_all.sh was stopped at the time box): extra d=128 trials,
# worlds interleaved in blocks of 5, to tighten the d=128 estimates.
set -e
export OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 MKL_NUM_THREADS=1
for t in $(seq 40 5 115); do
  python -m benchmarks.unseen_world2.run trials graded 128 $t $((t+5))
  python -m benchmarks.unseen_world2.run trials aniso 128 $t $((t+5))
done
