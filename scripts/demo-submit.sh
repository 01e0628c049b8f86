#!/usr/bin/env bash
# Submits the paper's queue A to a running demo (make demo) in one batch:
# 48 jobs, (4×tpch-q10 + 4×kmeans + 4×tpch-q3 + 4×cc) × 3, from
# configs/jobs/paper-queue-a.json, by one colocd process over one
# connection, so the whole queue is waiting when the first decisions are
# made. The jobs get the idempotency keys demo-queue-a-1…48: running the
# script twice adds nothing.
#   COLOCD_SERVER (default http://127.0.0.1:8080), COLOCD_TOKEN (default demo-submitter)
set -euo pipefail
cd "$(dirname "$0")/.."
export COLOCD_SERVER=${COLOCD_SERVER:-http://127.0.0.1:8080}
export COLOCD_TOKEN=${COLOCD_TOKEN:-demo-submitter}
bin=./bin/colocd
[ -x "$bin" ] || go build -o "$bin" ./cmd/colocd
"$bin" submit -f configs/jobs/paper-queue-a.json --idempotency-key demo-queue-a | tail -n 1
echo "watch them at $COLOCD_SERVER/?token=demo-admin or with: $bin queue"
