#!/usr/bin/env bash
# q_block_rows with its grid capped at n blocks an SM (qblock-grid-cap.patch: GEMV_QBLOCK_PER_SM,
# the blocks walking their row groups grid-stride), n = 0 (uncapped), 8, 16, 32: whether many
# short int8 rows (63577 x 1058 ran 0.68x the previous dispatch uncapped) gain, and what the
# cap does to the shapes the rule runs (NOTES.md section 41). Builds a patched copy into
# /tmp/site-cap; after the .carry wheels:   OUT=dir bash benchmarks/experiments/qblock_grid_cap.sh
set -eu
OUT=${OUT:-.}
R=$(cd "$(dirname "$0")/../.." && pwd)
rm -rf /tmp/cap && mkdir -p /tmp/cap && tar -C "$R" --exclude=./benchmarks/results --exclude=./.carry --exclude=./.git -cf - . | tar -x -C /tmp/cap
(cd /tmp/cap && patch -p1 -s < "$R/benchmarks/experiments/qblock-grid-cap.patch")
python3 -m pip install -q --no-build-isolation --no-deps -Ccmake.define.CMAKE_CUDA_ARCHITECTURES=90 -Cbuild-dir=/tmp/skb-cap \
  --target /tmp/site-cap /tmp/cap > /tmp/build-cap.log 2>&1 || { tail -20 /tmp/build-cap.log; exit 1; }
cd /tmp
C="q_block_rows:64:2:1:1:0:1 q_block_rows:128:2:1:1:0:1 q_block_rows:64:4:1:1:0:1 q_block_rows:128:2:1:2:0:1"
for n in 0 8 16 32; do
  for s in 63577x1058 11097x1264 54814x1760 30345x1702 4096x4096 8192x8192 128256x4096 1024x8192; do
    GEMV_QBLOCK_PER_SM=$n PYTHONPATH=/tmp/site-cap:$PYTHONPATH python3 -P "$R/scripts/time_configs.py" --weights 8,0,symmetric \
      ${s%x*} ${s#*x} float16 $C 2>&1 | sed "s/^/cap $n: /"
  done
done | tee "$OUT/qblock-grid-cap.txt"
