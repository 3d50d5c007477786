#!/usr/bin/env bash
# int8 on q_block_rows (NOTES.md section 41) against the commit before it, in one session:
# fp16 per row on the benchmark's shapes, 7 smaller ones and 12 random ones (seed 27: M 1024 to
# 65536, K 1024 to 16384 log-uniform, every other K not a multiple of 16), and bf16 per row,
# fp16 integer zeros in groups of 128 and bf16 float zeros in groups of 64 on 10 of them (formats
# the previous commit's benchmark lacks: both builds run this checkout's benchmark code).
#   git archive --format=tar -o .carry/old-src.tar <commit> -- . ':!benchmarks/results'   (on the host)
#   OUT=dir [SKIP_BUILD=1] bash benchmarks/experiments/q_block_rows_vs_previous.sh .carry/old-src.tar
set -eu
BENCH=4096x4096,14336x4096,4096x14336,8192x8192,28672x8192,8192x28672,128256x4096,7392x8192,11008x10944,5003x7392,1000x4100
SMALL=1024x2048,2048x2048,2048x4096,3072x2560,4096x2048,1024x8192,2560x1408
RAND_SHAPES=15191x7158,54814x1760,1343x10064,4091x2864,30345x1702,45014x3984,1377x13045,11097x1264,33490x8775,22242x6336,63577x1058,58924x6080
MORE=4096x4096,8192x8192,14336x4096,28672x8192,2048x2048,1024x8192,15191x7158,4091x2864,1343x10064,45014x3984
BENCH_ARGS="--quantized --shapes $BENCH,$SMALL,$RAND_SHAPES --formats int8-row" \
BENCH_ARGS2="--quantized --shapes $MORE --formats int8-row-bf16,int8-g128,int8-g64-float-bf16" PREFIX="" BENCH_FROM_THIS=1 \
  exec bash "$(dirname "$0")/bench_vs_previous.sh" "$@"
