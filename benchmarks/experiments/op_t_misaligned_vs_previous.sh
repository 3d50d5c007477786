#!/usr/bin/env bash
# s27's op T changes (NOTES.md section 41: phased rows from 24 MiB in 16 bits at 4 rows in
# flight, one element a load over 8 blocks an SM, the fp16/bf16 1048576 x 32 entries) against
# the commit before them, in one session: the op T suite, 64 random op T shapes (SEED, 31) and
# 17 misaligned shapes of 1.6-67 MB in every dtype; then int8 on the many short rows the
# q_block_rows rule leaves, and the GPU tests of this build.
#   git archive --format=tar -o .carry/old-src.tar <commit> -- . ':!benchmarks/results'   (on the host)
#   OUT=dir [SKIP_BUILD=1] bash benchmarks/experiments/op_t_misaligned_vs_previous.sh .carry/old-src.tar
set -eu
OUT=${OUT:-.}
R=$(cd "$(dirname "$0")/../.." && pwd)
MIS=1539x3179,1656x956,7308x1022,7083x655,1003x5053,1433x3611,2384x938,3979x2087,4421x3001,2999x5003,5003x4001
MIS=$MIS,3001x9001,8191x4097,20011x1201,40000x515,2047x7001,4001x2501
OUT=$OUT BENCH_ARGS="--ops T" BENCH_ARGS2="--ops T --random 64 --seed ${SEED:-31}" BENCH_ARGS3="--ops T --shapes $MIS" \
  bash "$R/benchmarks/experiments/bench_vs_previous.sh" "$1" > "$OUT/op-t-vs-previous.txt"
OUT=$OUT SKIP_BUILD=1 PREFIX=q- BENCH_ARGS="--quantized --shapes 63577x1058,11097x1264,54814x1760,5003x7392,8192x1264 --formats int8-row" \
  bash "$R/benchmarks/experiments/bench_vs_previous.sh" "$1" > "$OUT/q-vs-previous.txt"
(cd /tmp && python3 -P -m pytest -q -m gpu -n 12 -p no:cacheprovider "$R/tests" 2>&1 | tail -4) > "$OUT/pytest-gpu.txt" || true
