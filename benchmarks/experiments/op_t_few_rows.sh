#!/usr/bin/env bash
# op T's one-lane tiles for few misaligned rows of many columns (dispatch.cpp
# heuristic_columns) against the previous commit, built and timed in one session: the
# few-row shapes in three dtypes (with controls past the rule's limits), random op T sets
# (seed 29 found the cases; seed 30 held out), then the GPU tests. After the .carry wheels,
# with the previous commit in .carry/old-src.tar:
#   OUT=dir bash benchmarks/experiments/op_t_few_rows.sh
set -eu
OUT=${OUT:-.}
R=$(cd "$(dirname "$0")/../.." && pwd)
cd "$R"
S=21x305498,54x427342,47x779470,92x590022,128x300001,4x52562781,2x4452911,2x82819,30x40001,11x74499,18x196533,33x261971,87x517781,5x100003,313x112545,11x2999
OUT=$OUT BENCH_ARGS="--ops T --dtypes float32,float16,bfloat16 --shapes $S" BENCH_ARGS2="--ops T --random 64 --seed 30" \
  BENCH_ARGS3="--ops T --random 64 --seed 29" bash benchmarks/experiments/bench_vs_previous.sh .carry/old-src.tar \
  | tee "$OUT/vs-previous.txt"
(cd /tmp && python3 -P -m pytest -q -m gpu -n 12 -p no:cacheprovider "$R/tests" 2>&1 | tail -4) > "$OUT/pytest-gpu.txt" || true
