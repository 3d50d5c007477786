#!/usr/bin/env bash
# int8 weights on tensor cores (q_mma, fp16) against the dispatcher's choice, with the
# tuner's instrument (cold L2, graph replay, median; each config checked first): per-channel
# symmetric int8 on the quantized benchmark's shapes; the variant is qmma-int8.patch (not kept:
# slower than q_rows on every shape but 4096^2 and 5003 x 7392, NOTES 31). s18:
#   patch -p1 < benchmarks/experiments/qmma-int8.patch   (then build)
#   OUT=dir bash benchmarks/experiments/qmma_int8.sh   (results/h100-2026-11-26-s18-qmma-int8.txt)
set -u
OUT=${OUT:-.}
SHAPES=${SHAPES:-"4096x4096 8192x8192 14336x4096 4096x14336 28672x8192 8192x28672 128256x4096 7392x8192 11008x10944 5003x7392 1000x4100"}
CONFIGS=${CONFIGS:-"q_mma:32:4:1:1:1:1 q_mma:32:4:1:1:1:2 q_mma:32:4:1:1:1:4 q_mma:32:4:1:1:1:8 q_mma:32:4:1:1:1:16 q_mma:32:8:1:1:1:2 q_mma:32:8:1:1:1:4 q_mma:64:2:1:1:1:2 q_mma:64:4:1:1:1:1"}
WEIGHTS=${WEIGHTS:-8,0,symmetric}
for s in $SHAPES; do
  m=${s%x*}; k=${s#*x}
  python3 -P scripts/time_configs.py --weights $WEIGHTS $m $k float16 $CONFIGS 2>&1
done 2>&1 | tee "$OUT/qmma-int8.txt"
