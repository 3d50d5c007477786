#!/usr/bin/env bash
# The pre-pass of x's phase copies: one thread an element of every copy (8 loads of each
# x element) against one thread an element of x written to every copy; and the L2 prefetch
# budget the row kernel's first wave spends while the pre-pass runs (GEMV_PREFETCH_KB_PER_SM).
#   bash benchmarks/experiments/phase_copies_prepass.sh
T="python3 -P scripts/time_configs.py"
for flags in "-DGEMV_EXP_PREPASS_1D" ""; do
  python3 -m pip install -q --no-build-isolation --no-deps -Ccmake.define.CMAKE_CUDA_ARCHITECTURES=90 \
    "-Ccmake.define.CMAKE_CUDA_FLAGS=$flags" . > /dev/null 2>&1 || { echo "build failed: $flags"; continue; }
  for kb in 64 128 0; do
    echo "== pre-pass ${flags:-one thread an element of x}, GEMV_PREFETCH_KB_PER_SM=$kb"
    for s in "8191 8191 float16" "16384 8193 bfloat16" "8191 8191 bfloat16" "8191 8191 float32"; do
      GEMV_PREFETCH_KB_PER_SM=$kb $T $s 2>&1 | sed -E 's/ \(.*\)//'
    done
  done
done
