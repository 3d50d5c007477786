#!/usr/bin/env bash
# The tiny matrices still slower than cuBLAS on random shapes (2-3 us, rows not 16-byte
# multiples): does one load a lane (more threads a row, one round trip) beat the
# heuristic's two loads a lane or more? Times dispatch and the alternatives.
#   OUT=dir bash benchmarks/experiments/tiny_rows.sh
set -u
OUT=${OUT:-.}
T="python3 -P scripts/time_configs.py"
{
for p in "550 113 float32" "146 85 bfloat16" "719 75 bfloat16" "1000 300 float16" "300 1000 float32"; do
  $T $p rows_per_warp:8:16:2:2:0:1 rows_per_warp:8:16:2:1:0:1 rows_per_warp:16:8:2:1:0:1 rows_per_warp:16:16:2:1:0:1 \
     warp_per_row:32:4:2:1:0:1 warp_per_row:32:8:2:1:0:1 rows_per_warp:8:16:0:1:0:1 warp_per_row:32:4:0:1:0:1 \
     rows_per_warp:4:32:2:1:0:1 rows_per_warp:8:16:3:1:1:1 rows_per_warp:16:8:3:1:1:1
done
} 2>&1 | sed -E "s/Config\(variant='([a-z_]+)', threads_per_row=([0-9]+), rows_per_block=([0-9]+), vector_loads=([0-9]), unroll=([0-9]), x_in_smem=([0-9A-Za-z]+), split_k=([0-9]+)\)/\1:\2:\3:\4:\5:\6:\7/" | tee "$OUT/tiny-rows.txt"
