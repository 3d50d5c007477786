#!/usr/bin/env bash
# op T's search space on medium matrices of rows that start anywhere, where the random seeds
# leave op T slowest against cuBLAS after s26 (fp16 1539 x 3179 phased 10.9 us, cuBLAS 7.1;
# one element a load over 8 slices of 32 x 8 tiles ran 8.4 in -s26-op-t-few-rows-space.txt):
# element loads (0), realigned (2) and phased rows (3), unroll 2 and 4, to see whether the
# element-load split or the phased floors should move. After the .carry wheels and a build of
# this checkout:   OUT=dir [NAME=...] bash benchmarks/experiments/op_t_medium_misaligned.sh [dtype:MxK ...]
# s27 (NOTES 41) ran it as it stands (element loads won all 8, over 8 blocks an SM), then on
# 16-bit matrices of 20-70 MB (NAME=op-t-mid-misaligned-space), to place phased rows' floor.
set -u
OUT=${OUT:-.}
R=$(cd "$(dirname "$0")/../.." && pwd)
cd /tmp
[ $# -gt 0 ] || set -- float16:1539x3179 bfloat16:1656x956 bfloat16:7308x1022 float16:7083x655 bfloat16:1003x5053 \
  bfloat16:1433x3611 float32:2384x938 float16:3979x2087
python3 -P "$R/benchmarks/experiments/op_t_space.py" --top 8 --unroll 2,4 --c 8,16,32 --lanes 8,16,32 --max-split 128 \
  "$@" 2>&1 | tee "$OUT/${NAME:-op-t-medium-misaligned-space}.txt"
