#!/usr/bin/env bash
# q_mma with K warps a tile (threads_per_row = 32 kw): every (kw, block threads, split) on
# int4 g128 fp16 shapes, beside the dispatcher, with the tuner's instrument (cold L2, graph
# replay, medians, checked first). Usage: bash benchmarks/experiments/qmma_kwarps.sh [MxK ...]
shapes=${*:-"4096x4096 14336x4096 4096x14336 8192x8192 28672x8192 8192x28672 128256x4096 7392x8192 11008x10944 5003x7392"}
here=$(cd "$(dirname "$0")/../.." && pwd)
configs=""
for p in 32 64 128 256; do
  for threads in 128 256; do
    r=$((threads / p)); [ "$r" -ge 1 ] || continue
    for s in 1 2 4 8 16; do configs="$configs q_mma:$p:$r:1:1:1:$s"; done
  done
done
for shape in $shapes; do
  (cd / && python3 "$here/scripts/time_configs.py" --weights 4,128,int "${shape%x*}" "${shape#*x}" float16 $configs)
done
