#!/usr/bin/env bash
# int4 on q_mma_rounds (q-mma-rounds.patch, NOTES.md section 42) against the commit before it,
# in one session: the rule's regime (int4 in groups of 128 up, x in place, 2048 rows and 2048
# columns up to 2^24 codes), its edges, and shapes outside it (which must not move), in fp16
# integer zeros (int4-g128), bf16 float zeros (int4-g128-float, tinygemm alongside) and groups
# of 32 (int4-g32, outside by format). Both builds run this checkout's benchmark code.
#   git archive --format=tar -o .carry/old-src.tar <commit> -- . ':!benchmarks/results'   (on the host)
#   OUT=dir [SKIP_BUILD=1] bash benchmarks/experiments/q_mma_rounds_vs_previous.sh .carry/old-src.tar
set -eu
INSIDE=2048x2048,2048x4096,3072x2560,4096x2048,4096x4096,2048x8192,8192x2048,2051x4099,3000x5000,2600x6100,5120x3072,2304x2304
EDGES=4096x4224,2047x4096,8192x1024,1536x8192
OUTSIDE=8192x8192,14336x4096,1000x4100,5003x7392
BENCH_ARGS="--quantized --shapes $INSIDE,$EDGES,$OUTSIDE --formats int4-g128,int4-g128-float" \
BENCH_ARGS2="--quantized --shapes 4096x4096,2048x4096,3072x2560 --formats int4-g32" PREFIX="" BENCH_FROM_THIS=1 \
  exec bash "$(dirname "$0")/bench_vs_previous.sh" "$@"
