#!/usr/bin/env bash
# Build, test and sanitize on a GPU machine in one go (the H100 test machine has no
# package registry: its wheels come along in .carry/). Logs land in $OUT (or ./gpu-logs).
#   bash scripts/gpu_check.sh            # everything
#   SKIP_SANITIZER=1 bash scripts/gpu_check.sh
#   TOOLS="initcheck synccheck" bash scripts/gpu_check.sh   # some compute-sanitizer tools
set -uo pipefail
OUT=${OUT:-gpu-logs}; mkdir -p "$OUT"
export PYTHONUNBUFFERED=1
if ls .carry/*.whl >/dev/null 2>&1; then
  python3 -m pip install -q --no-index --no-deps --target /tmp/site .carry/*.whl && export PYTHONPATH=/tmp/site
fi
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | tee "$OUT/gpu.txt"
t0=$(date +%s)
python3 -m pip install -q --no-build-isolation --no-deps -Ccmake.define.CMAKE_CUDA_ARCHITECTURES=${ARCHS:-90} . \
  > "$OUT/build.log" 2>&1 || { echo "BUILD FAILED"; tail -50 "$OUT/build.log"; exit 1; }
echo "build: $(( $(date +%s) - t0 )) s"
status=0
# Correctness in parallel processes (one GPU, many host cores); timing tests alone after.
python3 -P -m pytest -q -m "gpu and not timing" -rs --durations=10 -n ${JOBS:-8} -p no:cacheprovider tests 2>&1 \
  | tee "$OUT/pytest-gpu.log" | tail -30
rc=${PIPESTATUS[0]}; [ "$rc" = 0 ] || status=1
python3 -P -m pytest -q -s -m "gpu and timing" -p no:cacheprovider tests 2>&1 | tee -a "$OUT/pytest-gpu.log" | tail -8
rc=${PIPESTATUS[0]}; [ "$rc" = 0 ] || status=1
if [ -z "${SKIP_SANITIZER:-}" ]; then
  for tool in ${TOOLS:-memcheck racecheck initcheck synccheck}; do
    PYTHONPATH=tests:${PYTHONPATH:-} compute-sanitizer --tool $tool --error-exitcode 1 python3 -P tests/sanitize_sweep.py \
      > "$OUT/sanitizer-$tool.log" 2>&1
    rc=$?; [ "$rc" = 0 ] || status=1
    echo "compute-sanitizer $tool: exit $rc; $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|sanitize sweep' "$OUT/sanitizer-$tool.log" | tr '\n' ' ')"
  done
fi
echo "== summary =="
grep -E "^[0-9]+ (passed|failed)|^=+ .*(passed|failed)" "$OUT/pytest-gpu.log"
exit $status
