#!/usr/bin/env bash
# report and eval of the 19 TREC DL 2019 runs with defaults, one tree after the other, for a same-hour A/B:
#   git worktree add /tmp/old REV && bash benchmarks/report_ab.sh /tmp/old .
# Prints each tree's eval and report wall times; the reports are left in /tmp/report_ab/<a|b> to diff.
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
shared="${SHARED:-$here/../shared}"
python="${PYTHON:-$here/.venv/bin/python}"
D="$shared/data/msmarco-passage"; V="$shared/embeddings/msmarco-passage.dl19-dl20.minilm"
mkdir -p /tmp/report_ab
for pair in "a:$1" "b:$2"; do
  name=${pair%%:*}; tree=$(cd "${pair#*:}" && pwd)
  rm -rf "/tmp/report_ab/$name"
  s=$(date +%s.%N)
  (cd /tmp && PYTHONPATH="$tree" "$python" -m pyterrier_frechet eval --qrels "$D/qrels.dl19-passage.txt" --runs "$D/runs" \
     --vectors "$V" --rel 2 --missing drop --metrics FD@10 "FD(urr=True)@10" "FD(per_query=5)@10" nDCG@10 RR@10 --quiet >/dev/null)
  e=$(date +%s.%N)
  (cd /tmp && PYTHONPATH="$tree" "$python" -m pyterrier_frechet report --qrels "$D/qrels.dl19-passage.txt" --runs "$D/runs" \
     --vectors "$V" --rel 2 --baseline bm25.top100 --quiet --out "/tmp/report_ab/$name" >/dev/null)
  f=$(date +%s.%N)
  echo "$name ($tree): eval $(echo "$e - $s" | bc) s, report $(echo "$f - $e" | bc) s"
done
