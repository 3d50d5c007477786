#!/usr/bin/env bash
# libgemv's host code under the sanitizers, on the stand-in CUDA runtime (tests/hostcheck):
#   1. AddressSanitizer + UBSan: the CPU tests against that build, a table fuzz (a fixed
#      seed and a random one, printed) and the dispatch stress;
#   2. ThreadSanitizer: threads dispatching while tables load and reload.
# CI runs it after the tests (.ci/run). Seconds per fuzz run: FUZZ_SECONDS (default 5).
#   bash scripts/hostcheck.sh            # both
#   SKIP_TSAN=1 bash scripts/hostcheck.sh
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
SECONDS_EACH=${FUZZ_SECONDS:-5}
TABLE=$(ls libgemv/tables/*.gemvtable | head -1)
GEN=$(command -v ninja >/dev/null && echo "-G Ninja" || true)
JOBS=$(nproc)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
start=$(date +%s)

echo "== AddressSanitizer + UBSan build"
cmake -S tests/hostcheck -B "$BUILD/hostcheck-asan" $GEN -DSANITIZE=address,undefined > /dev/null
cmake --build "$BUILD/hostcheck-asan" -j "$JOBS" > "$work/build.log" 2>&1 || { cat "$work/build.log"; exit 1; }
echo "built in $(( $(date +%s) - start )) s"
ASAN_LIB=$(gcc -print-file-name=libasan.so)
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1

echo "== CPU tests on the sanitized stand-in (LD_PRELOAD $ASAN_LIB)"
# Python itself leaks by design at exit: leak checks stay off for the interpreter.
env LD_PRELOAD="$ASAN_LIB" ASAN_OPTIONS=detect_leaks=0:abort_on_error=1 \
    PYGEMV_LIBRARY="$PWD/$BUILD/hostcheck-asan/libgemv_hostcheck.so" \
    GEMV_HOSTCHECK_LIBRARY="$PWD/$BUILD/hostcheck-asan/libgemv_hostcheck.so" \
    python -m pytest -q -p no:cacheprovider -m "not gpu" tests/test_cpu_hardening.py tests/test_cpu_launch_plans.py \
    tests/test_cpu_table.py tests/test_cpu_validation.py tests/test_cpu_operands.py

echo "== table fuzz (leak checks on)"
seed=$(( (RANDOM << 15) | RANDOM ))
for s in 20261123 "$seed"; do
  echo "seed $s (rerun: $BUILD/hostcheck-asan/table_fuzz $TABLE $SECONDS_EACH $s DIR)"
  "$BUILD/hostcheck-asan/table_fuzz" "$TABLE" "$SECONDS_EACH" "$s" "$work"
done
"$BUILD/hostcheck-asan/dispatch_stress" "$TABLE" "$SECONDS_EACH" 4 "$seed"

if [ -z "${SKIP_TSAN:-}" ]; then
  echo "== ThreadSanitizer: dispatch while tables load and reload"
  cmake -S tests/hostcheck -B "$BUILD/hostcheck-tsan" $GEN -DSANITIZE=thread > /dev/null
  cmake --build "$BUILD/hostcheck-tsan" -j "$JOBS" --target dispatch_stress > "$work/build.log" 2>&1 \
    || { cat "$work/build.log"; exit 1; }
  TSAN_OPTIONS=halt_on_error=1 "$BUILD/hostcheck-tsan/dispatch_stress" "$TABLE" $(( SECONDS_EACH * 2 )) 4 "$seed"
fi
echo "hostcheck: clean in $(( $(date +%s) - start )) s"
