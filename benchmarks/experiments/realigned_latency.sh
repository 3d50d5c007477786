#!/usr/bin/env bash
# Why few realigned rows cost ~2 us more than aligned ones of the same size (fp32 48 x 23714:
# 6.5 us, 48 x 23716: 4.5): the same row-tile and split-K configs on both, the realigned
# kernels on aligned rows too, and Nsight Compute on one launch of each.
#   OUT=dir bash benchmarks/experiments/realigned_latency.sh
set -u
OUT=${OUT:-.}
T="python3 -P scripts/time_configs.py"
for k in 23714 23716; do
  $T 48 $k float32 rows_in_registers:256:4:2:1:0:32 rows_in_registers:256:4:1:1:0:32 \
     splitk_twopass:256:1:2:4:0:66 splitk_twopass:256:1:1:4:0:66 splitk_twopass:256:1:0:4:0:66
done 2>&1 | tee "$OUT/realigned-latency.txt"
NCU=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
for spec in "23714 2" "23716 2" "23716 1"; do
  set -- $spec
  echo "== ncu: 48 x $1, rows_in_registers loads $2" >> "$OUT/realigned-ncu.txt"
  $NCU --set full -k regex:rowtile --launch-count 1 $T 48 $1 float32 rows_in_registers:256:4:$2:1:0:32 \
    >> "$OUT/realigned-ncu.txt" 2>&1
done
grep -E "^== ncu|Duration|DRAM Throughput|Memory Throughput|Registers Per|Achieved Occupancy|Elapsed Cycles|Warp Cycles Per Issued" "$OUT/realigned-ncu.txt"
