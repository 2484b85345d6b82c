#!/bin/bash
# One core, sequential. Run from the repository root.
#   bash benchmarks/unseen_world/run_all.sh                       # the full plan below
#   bash benchmarks/unseen_world/run_all.sh "384 43 10" clustered # one setting (D N TRIALS), chosen worlds
# PY selects the interpreter (default: python on PATH).
export OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 MKL_NUM_THREADS=1
PY=${PY:-python}
configs=${1:-"128 43 40;384 43 20;128 200 15"}
shift
worlds=${*:-"sphere clustered hub_lognorm"}
IFS=';' read -ra cfgs <<< "$configs"
for cfg in "${cfgs[@]}"; do
  set -- $cfg
  for w in $worlds; do
    $PY -m benchmarks.unseen_world.truth "$w" "$1" "$2" 200
    $PY -m benchmarks.unseen_world.trials "$w" "$1" "$2" "$3" > /dev/null
    echo "done $w $1 $2 $(date -u +%T)"
  done
done
