#!/usr/bin/env bash
# s27's final check on the H100 (NOTES.md section 41), one device call: build this checkout and
# the previous commit (.carry/old-src.tar), the GPU tests, random op T shapes (SEED) against
# the previous build, then compute-sanitizer memcheck and racecheck over the quantized part of
# tests/sanitize_sweep.py (q_block_rows among its operations).
#   OUT=dir [SEED=31] bash benchmarks/experiments/s27_final_check.sh .carry/old-src.tar
set -u
OUT=${OUT:-.}
R=$(cd "$(dirname "$0")/../.." && pwd)
OUT=$OUT BUILD_ONLY=1 bash "$R/benchmarks/experiments/bench_vs_previous.sh" "$1" || exit 1
(cd /tmp && timeout 200 python3 -P -m pytest -q -m gpu -n 12 -p no:cacheprovider "$R/tests" 2>&1 | tail -4) > "$OUT/pytest-gpu.txt"
OUT=$OUT SKIP_BUILD=1 BENCH_ARGS="--ops T --random 64 --seed ${SEED:-31}" \
  bash "$R/benchmarks/experiments/bench_vs_previous.sh" "$1" > "$OUT/op-t-random-vs-previous.txt" 2>&1
for tool in memcheck racecheck; do
  (cd "$R" && PYTHONPATH=tests:${PYTHONPATH:-} timeout ${SAN_TIMEOUT:-120} compute-sanitizer --tool $tool --error-exitcode 1 \
    python3 -P tests/sanitize_sweep.py Q > "/tmp/sanitizer-$tool.log" 2>&1)
  echo "compute-sanitizer $tool (sanitize_sweep.py Q): exit $?; $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|sanitize sweep' /tmp/sanitizer-$tool.log | tr '\n' ' ')"
done | tee "$OUT/sanitizer.txt"
