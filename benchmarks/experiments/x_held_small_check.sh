#!/usr/bin/env bash
# The x-held small-matrix rule (dispatch.cpp; NOTES 34) at the top of its range, where the
# table's entries do not decide: its config against the larger rule's, each shape in the
# three int4 formats, with the tuner's instrument (scripts/time_configs.py). After installing:
#   bash benchmarks/experiments/x_held_small_check.sh
set -eu
R=$(cd "$(dirname "$0")/../.." && pwd)
x() { echo "q_mma_x_held:$1:$2:1:$3:0:$4"; }   # threads_per_row rows_per_block unroll split_k
for w in "4,128,int float16" "4,128,float bfloat16" "4,32,int float16"; do
  set -- $w
  python3 -P "$R/scripts/time_configs.py" --weights $1 16384 1024 $2 $(x 256 3 1 1) $(x 128 2 2 1)
  python3 -P "$R/scripts/time_configs.py" --weights $1 32768 1024 $2 $(x 256 6 1 1) $(x 128 4 2 1)
  python3 -P "$R/scripts/time_configs.py" --weights $1 16384 2048 $2 $(x 256 4 2 1) $(x 128 4 2 2)
done
