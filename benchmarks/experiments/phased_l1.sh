#!/usr/bin/env bash
# Phased rows with x read through L1 (vector_loads 3, x_in_smem 0) against dispatch (phased
# rows with x staged) and the aligned shape of the same size: large matrices whose rows do
# not start 16-byte aligned (issue 14's 95% target).
#   bash benchmarks/experiments/phased_l1.sh
T="python3 -P scripts/time_configs.py"
S='s/Config\(variant=.([a-z_]+)., threads_per_row=([0-9]+), rows_per_block=([0-9]+), vector_loads=([0-9]), unroll=([0-9]), x_in_smem=([0-9a-zA-Z]+), split_k=([0-9]+)\)/\1:\2:\3:\4:\5:\6:\7/'
L1="block_per_row:128:1:3:1:0:1 block_per_row:128:1:3:2:0:1 block_per_row:128:1:3:4:0:1 block_per_row:256:1:3:1:0:1 block_per_row:128:2:3:1:0:1 block_per_row:64:4:3:2:0:1 warp_per_row:32:8:3:2:0:1"
for dt in float16 float32 bfloat16; do
  $T 8192 8192 $dt 2>&1 | sed -E "$S"
  $T 8191 8191 $dt $L1 2>&1 | sed -E "$S"
  [ $dt = bfloat16 ] || $T 16384 8193 $dt $L1 2>&1 | sed -E "$S"
done
