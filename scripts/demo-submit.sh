#!/usr/bin/env bash
# Submits the paper's queue A to a running demo (make demo): 48 jobs,
# (4×tpch-q10 + 4×kmeans + 4×tpch-q3 + 4×cc) × 3, the bundled configs/jobs/*.json.
# Each job gets an idempotency key, so running the script twice adds nothing.
#   COLOCD_SERVER (default http://127.0.0.1:8080), COLOCD_TOKEN (default demo-submitter)
set -euo pipefail
cd "$(dirname "$0")/.."
export COLOCD_SERVER=${COLOCD_SERVER:-http://127.0.0.1:8080}
export COLOCD_TOKEN=${COLOCD_TOKEN:-demo-submitter}
bin=./bin/colocd
[ -x "$bin" ] || go build -o "$bin" ./cmd/colocd
n=0
for round in 1 2 3; do
  for kind in tpch-q10 kmeans tpch-q3 cc; do
    for i in 1 2 3 4; do
      n=$((n + 1))
      "$bin" submit -f "configs/jobs/$kind.json" --idempotency-key "demo-queue-a-$n" >/dev/null
    done
  done
done
echo "submitted $n jobs; watch them at $COLOCD_SERVER/?token=demo-admin or with: $bin queue"
