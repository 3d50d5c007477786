#!/usr/bin/env bash
# Configs around dispatch on the short-row shapes still slower than cuBLAS in the random
# draws (the row stream, rows_per_warp realigned or phased): OUT=dir bash benchmarks/experiments/short_rows.sh
T="python3 -P scripts/time_configs.py"
RS="row_stream:1:128:2:4:1:1 row_stream:1:256:2:4:1:1 row_stream:2:128:2:4:1:1 row_stream:2:64:2:2:1:1 row_stream:4:64:2:4:1:1 row_stream:4:32:2:4:1:1 row_stream:8:32:2:4:1:1 row_stream:2:256:2:4:1:1 rows_per_warp:4:64:2:4:1:1 rows_per_warp:8:32:2:2:1:1 rows_per_warp:4:32:3:2:1:1 rows_per_warp:8:32:3:1:1:1"
$T 1296187 108 float16 $RS
$T 50084 153 float16 $RS
$T 6770 1477 float16 row_stream:32:16:2:2:1:1 row_stream:32:8:2:4:1:1 row_stream:16:16:2:4:1:1 row_stream:64:8:2:2:1:1 warp_per_row:32:8:2:2:1:1 warp_per_row:32:8:3:1:1:1 block_per_row:64:4:2:2:1:1 rows_per_warp:16:16:2:2:1:1 rows_per_warp:16:16:3:1:1:1
$T 62972 445 float32 rows_per_warp:8:16:2:4:0:1 rows_per_warp:8:32:2:2:0:1 rows_per_warp:16:16:2:2:0:1 rows_per_warp:16:8:2:4:0:1 row_stream:8:32:2:4:1:1 row_stream:16:16:2:4:1:1 rows_per_warp:8:32:3:2:1:1 rows_per_warp:16:16:3:1:1:1 warp_per_row:32:8:2:2:0:1
