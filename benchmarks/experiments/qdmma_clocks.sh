#!/usr/bin/env bash
# Does the MMA path lower the SM clock? (NOTES 42: under ncu the full int4 kernel ran at 1.42 GHz
# where its loads-only floor and the dense kernel ran at 1.59.) Samples nvidia-smi every 20 ms
# while qdmma.cu times one method at a time (3000 graph replays), twice each; prints each
# method's median SM clock, power and the clock-event reasons seen (after installing pygemv):
#   OUT=dir bash benchmarks/experiments/qdmma_clocks.sh [MxK]
set -u
OUT=${OUT:-.}
SHAPE=${1:-8192x8192}
LIB=$(cd /tmp && python3 -P -c "import os, pygemv._lib as l; print(os.path.dirname(l.load()._name))")
nvcc -O3 -std=c++17 -arch=sm_90 benchmarks/experiments/qdmma.cu -Ilibgemv/include -L"$LIB" -lgemv \
     -Xlinker -rpath="$LIB" -o /tmp/qdmma || exit 1
F="$OUT/qdmma-clocks.txt"
: > "$F"
for m in 3 57 0 3 57 0; do
  nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu,clocks_event_reasons.active \
    --format=csv,noheader -lms 20 > /tmp/smi.csv 2>/dev/null &
  smi=$!
  sleep 0.3
  GRAPH_REPS=3000 QDM_ONLY=$m QSK_FORMATS=0 /tmp/qdmma "$SHAPE" >> "$F"
  kill $smi; wait $smi 2>/dev/null
  python3 - "$m" /tmp/smi.csv >> "$F" <<'PY'
import sys, statistics
rows = [l.split(", ") for l in open(sys.argv[2]) if l.count(",") >= 5]
busy = [r for r in rows if float(r[3].split()[0]) > 150]          # samples while a kernel ran
sm = [float(r[1].split()[0]) for r in busy]; pw = [float(r[3].split()[0]) for r in busy]
print(f"method {sys.argv[1]}: {len(busy)} busy samples of {len(rows)}; SM clock median {statistics.median(sm) if sm else 0:.0f} MHz "
      f"(min {min(sm) if sm else 0:.0f}); power median {statistics.median(pw) if pw else 0:.0f} W; reasons {sorted(set(r[5].strip() for r in busy))}")
PY
done
grep -E "^method|us " "$F"
