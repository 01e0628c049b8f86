#!/usr/bin/env bash
# Plays every shipped workload under every policy of `colocd sim`, seeds
# 1–20, and writes each --json to OUTDIR/<workload>.<policy>.json, so that
# two builds' decisions can be compared byte for byte:
#
#   scripts/sim-decisions.sh ./old-colocd /tmp/old
#   scripts/sim-decisions.sh ./bin/colocd /tmp/new
#   diff -r /tmp/old /tmp/new && echo identical
#
# About 40 minutes on the 2-vCPU project machine (rollout takes most of it).
set -euo pipefail
bin=$1
out=$2
mkdir -p "$out"
cd "$(dirname "$0")/.."
for w in configs/workloads/*.yaml; do
  n=$(basename "$w" .yaml)
  for p in fifo random paper ra ra-psi ra-warm ra-profile-true packfit alternate tetris drf curves ra-curves pairwise oracle rollout rollout-foresight; do
    "$bin" sim --workload "$w" --policy "$p" --runs 20 --json >"$out/$n.$p.json"
  done
done
