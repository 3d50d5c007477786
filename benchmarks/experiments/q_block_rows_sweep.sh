#!/usr/bin/env bash
# q_block_rows' configs (threads a block 64/128/256, rows a block 1/2/4, packs in flight 1/2)
# on int8 shapes from 1024 x 2048 to 128256 x 4096, fp16 per row (symmetric), and fewer shapes
# in bf16 with integer zeros in groups of 128 and with float zeros in groups of 64: where the
# dispatch rule (dispatch.cpp q_block_rows_config) should start and which config it should
# take (NOTES.md section 41). The tuner's instrument (scripts/time_configs.py). After the
# .carry wheels and a build of this checkout:
#   OUT=dir bash benchmarks/experiments/q_block_rows_sweep.sh
set -u
OUT=${OUT:-.}
R=$(cd "$(dirname "$0")/../.." && pwd)
cd /tmp
CONFIGS=""
for p in 64 128 256; do for r in 1 2 4; do for u in 1 2; do CONFIGS="$CONFIGS q_block_rows:$p:$r:1:$u:0:1"; done; done; done
sweep() { # weights shape...
  local w=$1; shift
  for s in "$@"; do python3 -P "$R/scripts/time_configs.py" --weights "$w" ${s%x*} ${s#*x} ${DTYPE:-float16} $CONFIGS 2>&1; done
}
{
  DTYPE=float16 sweep 8,0,symmetric 1024x2048 2048x1024 2048x2048 1024x8192 2048x4096 4096x2048 3072x2560 4096x4096 \
    5003x7392 8192x8192 14336x4096 4096x14336 11008x10944 28672x8192 8192x28672 128256x4096 512x16384
  DTYPE=bfloat16 sweep 8,128,int 2048x2048 4096x4096 8192x8192 14336x4096 28672x8192
  DTYPE=bfloat16 sweep 8,64,float 2048x2048 4096x4096 8192x8192 28672x8192
} | tee "$OUT/q-block-rows-sweep.txt"
