#!/usr/bin/env bash
# fp32 rows with x's phase copies: lanes and loads in flight, against the aligned shape,
# in one process each (the bench put 8191 x 8191 and 16384 x 8193 at 94.9-95.2% of it).
#   bash benchmarks/experiments/phase_copies_fp32.sh
T="python3 -P scripts/time_configs.py"
S='s/Config\(variant=.([a-z_]+)., threads_per_row=([0-9]+), rows_per_block=([0-9]+), vector_loads=([0-9]), unroll=([0-9]), x_in_smem=([0-9a-zA-Z]+), split_k=([0-9]+)\)/\1:\2:\3:\4:\5:\6:\7/'
X="block_per_row:256:1:5:4:0:1 block_per_row:512:1:5:2:0:1 block_per_row:512:1:5:1:0:1 block_per_row:256:1:5:1:0:1 block_per_row:128:1:5:4:0:1 block_per_row:256:2:5:2:0:1 block_per_row:128:2:5:4:0:1"
{
$T 8192 8192 float32 block_per_row:512:1:1:2:0:1
$T 8191 8191 float32 $X
$T 16384 8192 float32 block_per_row:512:1:1:2:0:1
$T 16384 8193 float32 $X
} 2>&1 | sed -E "$S"
