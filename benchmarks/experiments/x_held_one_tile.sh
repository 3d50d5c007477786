#!/usr/bin/env bash
# Does q_mma_x_held already run qdmma.cu's small-matrix form (NOTES 42: a 16-row tile a block,
# 8 warps, 2 steps a round, K unsplit: bf16/fp16 float zeros 4096^2 6.24 us against the
# dispatch's 8.41)? x held with rows_per_block 1, split_k 1 and 4 or 8 warps is that grid. The
# tuner's instrument on the small shapes where bf16 float zeros trail tinygemm, and two larger
# (after installing pygemv; run from the repository root):
#   OUT=dir bash benchmarks/experiments/x_held_one_tile.sh
set -u
OUT=${OUT:-.}
F="$OUT/x-held-one-tile.txt"
: > "$F"
C="q_mma_x_held:256:1:1:2:0:1 q_mma_x_held:256:1:1:1:0:1 q_mma_x_held:128:1:1:2:0:1 q_mma_x_held:256:2:1:2:0:1 q_mma_x_held:256:1:1:2:0:2"
for w in "4,128,float bfloat16" "4,128,int float16"; do
  set -- $w
  for s in "4096 4096" "4096 2048" "2048 4096" "3072 2560" "2560 1408" "4096 1024" "8192 8192" "14336 4096"; do
    (cd /tmp && python3 -P "$OLDPWD/scripts/time_configs.py" --weights $1 $s $2 $C) >> "$F" 2>&1
  done
done
cat "$F"
