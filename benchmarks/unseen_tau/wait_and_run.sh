#!/bin/bash
# Starts the real run at 21:05 UTC, or earlier as soon as no calibrate_worlds process is left.
cd "$(dirname "$0")/../.."   # the repository root
source /work/main/.venv/bin/activate
while true; do
  now=$(date -u +%H%M)
  if [ "$now" -ge 2105 ]; then echo "start: time $(date -u)"; break; fi
  if ! pgrep -f calibrate_worlds >/dev/null; then echo "start: calibrate_worlds gone $(date -u)"; break; fi
  sleep 20
done
python -m benchmarks.unseen_tau.run --truth-sets 300 --n-samples 200 --stop 21:45 --tag main
python -m benchmarks.unseen_tau.summarise main
