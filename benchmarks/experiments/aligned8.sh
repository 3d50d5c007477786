#!/usr/bin/env bash
# 8-byte loads (vector_loads 4) on rows that start 8-byte aligned but not 16-byte aligned,
# against dispatch (phased rows, the row stream or realigned rows) and the aligned shape.
#   bash benchmarks/experiments/aligned8.sh
T="python3 -P scripts/time_configs.py"
S='s/Config\(variant=.([a-z_]+)., threads_per_row=([0-9]+), rows_per_block=([0-9]+), vector_loads=([0-9]), unroll=([0-9]), x_in_smem=([0-9a-zA-Z]+), split_k=([0-9]+)\)/\1:\2:\3:\4:\5:\6:\7/'
{
$T 1296187 108 float16 rows_per_warp:4:32:4:2:0:1 rows_per_warp:4:64:4:4:0:1 rows_per_warp:8:16:4:2:0:1 rows_per_warp:2:64:4:4:0:1
$T 700001 204 bfloat16 rows_per_warp:8:32:4:2:0:1 rows_per_warp:16:16:4:2:0:1 rows_per_warp:4:64:4:4:0:1
$T 282737 338 float32 rows_per_warp:16:16:4:2:0:1 rows_per_warp:8:32:4:4:0:1 warp_per_row:32:8:4:2:0:1
$T 62972 446 float32 rows_per_warp:16:16:4:2:0:1 rows_per_warp:8:32:4:4:0:1 warp_per_row:32:8:4:2:0:1
$T 16384 8192 float32
$T 16384 8194 float32 block_per_row:256:1:4:2:0:1 block_per_row:512:1:4:2:0:1 block_per_row:128:2:4:4:0:1
$T 16384 8192 float16
$T 16384 8196 float16 block_per_row:256:1:4:2:0:1 block_per_row:128:1:4:4:0:1 block_per_row:512:1:4:2:0:1
} 2>&1 | sed -E "$S"
