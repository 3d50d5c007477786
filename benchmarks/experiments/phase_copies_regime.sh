#!/usr/bin/env bash
# Where x's phase copies (vector_loads 5) pay: shapes at the edges of dispatch's regime for
# them (2048 rows, 32 MB, rows of 4 KB), beyond staged x's shared memory, and below, against
# staged phased rows (x_in_smem 1), phased rows with x through L1 and realigned rows.
#   bash benchmarks/experiments/phase_copies_regime.sh
T="python3 -P scripts/time_configs.py"
S='s/Config\(variant=.([a-z_]+)., threads_per_row=([0-9]+), rows_per_block=([0-9]+), vector_loads=([0-9]), unroll=([0-9]), x_in_smem=([0-9a-zA-Z]+), split_k=([0-9]+)\)/\1:\2:\3:\4:\5:\6:\7/'
H="block_per_row:128:1:5:1:0:1 block_per_row:256:1:5:1:0:1 block_per_row:128:2:3:1:1:1 block_per_row:128:2:2:2:1:1"
F="block_per_row:256:1:5:4:0:1 block_per_row:128:1:5:1:0:1 block_per_row:128:1:3:4:0:1 block_per_row:128:4:3:1:1:1"
{
$T 4096 4097 float16 $H
$T 2048 8193 bfloat16 $H
$T 20000 2049 float16 $H warp_per_row:32:8:5:1:0:1 block_per_row:64:4:5:1:0:1
$T 40000 1025 float16 warp_per_row:32:8:5:1:0:1 block_per_row:64:4:5:1:0:1 warp_per_row:32:8:3:1:1:1
$T 2048 50001 float16 block_per_row:128:1:5:1:0:1 block_per_row:256:1:5:1:0:1 block_per_row:256:1:2:2:0:1
$T 2048 4097 float16 $H
$T 2048 4097 float32 $F
$T 20000 1001 float32 $F block_per_row:64:4:5:4:0:1
$T 1024 16385 float32 $F
} 2>&1 | sed -E "$S"
