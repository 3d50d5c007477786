#!/usr/bin/env bash
# Rows shorter than one 16-byte pack (K < 8 for 16-bit types, < 4 for fp32): element loads
# (the heuristic now) against realigned 16-byte loads (before), by the dispatcher's config
# (the table where it has a neighbour) and both heuristic choices.
#   OUT=dir bash benchmarks/experiments/rows_under_a_pack.sh
set -u
OUT=${OUT:-.}
T="python3 -P scripts/time_configs.py"
{
for s in "425 2 bfloat16" "902 1 float32" "100000 3 float16" "20000 3 float32" "1000000 2 bfloat16"; do
  $T $s thread_per_row:1:128:0:2:0:1 thread_per_row:1:128:0:1:0:1 thread_per_row:1:128:2:1:0:1
done
$T 50000 5 bfloat16 rows_per_warp:2:64:0:2:0:1 thread_per_row:1:128:2:1:0:1 rows_per_warp:2:64:2:1:0:1
$T 1000 7 float16 rows_per_warp:2:64:0:2:0:1 thread_per_row:1:128:2:1:0:1 rows_per_warp:2:64:2:1:0:1
} 2>&1 | sed -E "s/Config\(variant='([a-z_]+)', threads_per_row=([0-9]+), rows_per_block=([0-9]+), vector_loads=([0-9]), unroll=([0-9]), x_in_smem=([0-9A-Za-z]+), split_k=([0-9]+)\)/\1:\2:\3:\4:\5:\6:\7/" | tee "$OUT/rows-under-a-pack.txt"
