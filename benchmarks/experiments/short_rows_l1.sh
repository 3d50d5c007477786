#!/usr/bin/env bash
# Large matrices of short rows that do not start 16-byte aligned (rows under 512 bytes,
# 128-300 MB): dispatch (the row stream) against phased rows with x read through L1 (2 to 8
# lanes a row) and with x staged.
#   bash benchmarks/experiments/short_rows_l1.sh
T="python3 -P scripts/time_configs.py"
S='s/Config\(variant=.([a-z_]+)., threads_per_row=([0-9]+), rows_per_block=([0-9]+), vector_loads=([0-9]), unroll=([0-9]), x_in_smem=([0-9a-zA-Z]+), split_k=([0-9]+)\)/\1:\2:\3:\4:\5:\6:\7/'
C="rows_per_warp:2:64:3:2:0:1 rows_per_warp:2:256:3:2:0:1 rows_per_warp:2:64:3:4:0:1 rows_per_warp:4:64:3:2:0:1 rows_per_warp:8:32:3:2:0:1 rows_per_warp:4:64:3:2:1:1"
for spec in float16:1296187:108 float16:700001:201 bfloat16:2000003:45 float16:400009:333 bfloat16:900001:150 float32:600011:75 float32:300007:197 float32:1500007:27; do
  IFS=: read dt m k <<< "$spec"
  $T $m $k $dt $C 2>&1 | sed -E "$S"
done
