#!/usr/bin/env bash
# Phased rows reading x's phase copies (vector_loads 5: a pre-pass copies x into the
# workspace in each 16-byte phase; blocks take a row step as aligned rows do) against
# dispatch (staged phased rows) on misaligned large matrices, and the aligned shape.
#   bash benchmarks/experiments/phase_copies.sh
T="python3 -P scripts/time_configs.py"
S='s/Config\(variant=.([a-z_]+)., threads_per_row=([0-9]+), rows_per_block=([0-9]+), vector_loads=([0-9]), unroll=([0-9]), x_in_smem=([0-9a-zA-Z]+), split_k=([0-9]+)\)/\1:\2:\3:\4:\5:\6:\7/'
X16="block_per_row:256:1:5:1:0:1 block_per_row:128:1:5:1:0:1 block_per_row:128:2:5:1:0:1 block_per_row:128:4:5:1:0:1 block_per_row:512:1:5:1:0:1 block_per_row:128:1:5:2:0:1 block_per_row:256:1:5:2:0:1 block_per_row:128:1:5:4:0:1 warp_per_row:32:8:5:1:0:1 block_per_row:128:2:3:1:1:1"
X32="block_per_row:256:1:5:1:0:1 block_per_row:512:1:5:1:0:1 block_per_row:1024:1:5:1:0:1 block_per_row:256:2:5:1:0:1 block_per_row:256:1:5:2:0:1 block_per_row:128:1:5:4:0:1 block_per_row:256:1:5:4:0:1 block_per_row:128:1:3:4:0:1"
{
for d in float16 bfloat16; do
  $T 8192 8192 $d
  $T 8191 8191 $d $X16
  $T 16384 8192 $d
  $T 16384 8193 $d $X16
done
$T 8192 8192 float32
$T 8191 8191 float32 $X32
$T 16384 8192 float32
$T 16384 8193 float32 $X32
$T 61772 24429 bfloat16 block_per_row:256:1:5:1:0:1 block_per_row:128:1:5:4:0:1
$T 4559 10455 float16 block_per_row:256:1:5:1:0:1 block_per_row:128:1:5:4:0:1
} 2>&1 | sed -E "$S"
