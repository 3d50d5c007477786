#!/usr/bin/env bash
# A/B an environment knob of libgemv on the GPU: one pygemv-bench run per setting, same
# shapes, cuBLAS in every run. Usage:
#   bash scripts/ab_env.sh "GEMV_PDL=0" "GEMV_PDL=1" -- --shapes 1024x1024 --dtypes float16
# Each run's JSON and table land in $OUT/ab-<n>.{json,txt}; a one-line summary per run last.
set -uo pipefail
OUT=${OUT:-gpu-logs}; mkdir -p "$OUT"
settings=()
while [ $# -gt 0 ] && [ "$1" != "--" ]; do settings+=("$1"); shift; done
[ "${1:-}" = "--" ] && shift
n=0
for s in "${settings[@]}"; do
  n=$((n + 1))
  env $s python3 -P -m pygemv.bench --json "$OUT/ab-$n.json" "$@" > "$OUT/ab-$n.txt" 2>/dev/null
  echo "[$n] $s: $(grep '^summary' "$OUT/ab-$n.txt" | cut -c1-400)"
done
