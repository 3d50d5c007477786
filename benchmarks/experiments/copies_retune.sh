#!/usr/bin/env bash
# Issue 14's last items: tune the grid shapes in the phase-copies regime (the only two:
# 4096 x 4097 and 4096 x 4102, every dtype; rows misaligned, >= 16 MB, >= 2048 rows), merge
# them into the shipped table, and time the merged table: misaligned shapes, the suite and
# the held-out check. Run from the repository root on the GPU machine after installing.
#   OUT=dir bash benchmarks/experiments/copies_retune.sh
set -u
OUT=${OUT:-.}
OUT=$(cd "$OUT" && pwd)
SHIPPED=$PWD/libgemv/tables/NVIDIA-H100-80GB-HBM3-sm90-132sm.gemvtable
cd /tmp  # import the installed pygemv, not the source tree
python3 -P -m pygemv.tuning.cli --shapes 4096x4097,4096x4102 --ops N --no-batched --dtypes float32,float16,bfloat16 \
  --trials 24 --no-progress --out /tmp/copies.gemvtable --json "$OUT/copies-tune.json" > "$OUT/copies-tune.txt" 2>&1 \
  || { tail -20 "$OUT/copies-tune.txt"; exit 1; }
python3 -P -m pygemv.tuning.merge "$SHIPPED" /tmp/copies.gemvtable -o "$OUT/merged.gemvtable" || exit 1
export GEMV_TABLE=$OUT/merged.gemvtable
python3 -P -m pygemv.bench --shapes 8192x8192,8191x8191,16384x8192,16384x8193,3209x2998,3282x3245,3737x9949,4559x10455,4725x2350 \
  --json "$OUT/misaligned.json" > /tmp/misaligned.txt 2>&1
python3 -P -m pygemv.bench --json "$OUT/suite.json" > /tmp/suite.txt 2>&1
python3 -P -m pygemv.tuning.heldout --n 30 --json "$OUT/heldout.json" > "$OUT/heldout.txt" 2>&1
tail -4 "$OUT/copies-tune.txt"; tail -3 /tmp/misaligned.txt | cut -c1-600; tail -2 /tmp/suite.txt | cut -c1-400; tail -6 "$OUT/heldout.txt"
