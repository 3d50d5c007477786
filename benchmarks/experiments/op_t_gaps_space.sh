#!/usr/bin/env bash
# op T's search space (op_t_space.py: the tuner's own space and instrument) on the op T
# cases that stand furthest from the read ceiling or behind cuBLAS: tall aligned matrices
# (78-94% of the ceiling in the s24 suite run), large 16-bit ones (93-96%), and the batched
# cases slower than cuBLAS (s25 -e-2 run). After the .carry wheels and a build of this
# checkout:   OUT=dir [PARTS="single batched"] bash benchmarks/experiments/op_t_gaps_space.sh
set -u
OUT=${OUT:-.}
R=$(cd "$(dirname "$0")/../.." && pwd)
S="python3 -P $R/benchmarks/experiments/op_t_space.py --top 6"
cd /tmp
PARTS=${PARTS:-"single batched"}
{
if [[ $PARTS == *single* ]]; then
  $S --vec 1 --unroll 2,4 float16:1048576x16 float16:1048576x32 float16:131072x128 float16:65536x256 \
     float32:1048576x16 float32:1048576x32 float32:131072x128 float32:65536x256
  $S --vec 1 --unroll 2,4 --c 8,16,32 --lanes 16,32,64 float16:4096x14336 float16:14336x4096 float16:8192x8192 \
     float32:4096x4096
fi
if [[ $PARTS == *batched* ]]; then
  $S --vec 1 --unroll 2,4 --c 4,8,16,32 --lanes 8,16,32,64 float16:1024x1024x8 float32:1024x1024x8 float16:256x256x512
  $S --vec 1 --unroll 2,4 --c 8,16,32 --lanes 16,32,64 float16:4096x4096x8
  $S float32:64x64x8
fi
} 2>&1 | tee "$OUT/op-t-gaps-space.txt"
