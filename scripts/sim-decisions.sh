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
# A workload the binary cannot load (one written for a later format, such
# as hetero-sizes.yaml for a build before node groups) is skipped with a
# note on stderr, so diff -r then lists it as only in the newer directory.
set -euo pipefail
bin=$1
out=$2
mkdir -p "$out"
cd "$(dirname "$0")/.."
for w in configs/workloads/*.yaml; do
  n=$(basename "$w" .yaml)
  if ! "$bin" sim --workload "$w" --policy bound --runs 1 >/dev/null 2>&1; then
    echo "skipping $n: $bin cannot load it" >&2
    continue
  fi
  for p in fifo random paper ra ra-psi ra-warm ra-profile-true packfit alternate tetris drf curves ra-curves pairwise oracle rollout rollout-foresight; do
    "$bin" sim --workload "$w" --policy "$p" --runs 20 --json >"$out/$n.$p.json"
  done
done
