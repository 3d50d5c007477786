#!/usr/bin/env bash
# A few q_mma configs (tiles x split, and two K warps) on int4 g128 fp16 shapes beside the
# dispatcher, with the tuner's instrument. Usage: bash benchmarks/experiments/qmma_configs.sh [MxK ...]
shapes=${*:-"4096x4096 8192x8192 28672x8192 11008x10944 128256x4096 5003x7392"}
here=$(cd "$(dirname "$0")/../.." && pwd)
configs="q_mma:32:4:1:1:1:2 q_mma:32:4:1:1:1:4 q_mma:32:4:1:1:1:8 q_mma:32:4:1:1:1:16 q_mma:32:8:1:1:1:4 q_mma:64:2:1:1:1:4 q_mma:64:2:1:1:1:8"
for shape in $shapes; do
  (cd / && python3 "$here/scripts/time_configs.py" --weights 4,128,int "${shape%x*}" "${shape#*x}" float16 $configs)
done
