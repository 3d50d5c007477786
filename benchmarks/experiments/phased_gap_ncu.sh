#!/usr/bin/env bash
# Why staged phased rows read even aligned rows slower than the aligned kernel (fp16 8192 x
# 8192: 50.1 us against 45.3): Nsight Compute on one launch of each, and of phased rows on
# misaligned 8191 x 8191.
#   OUT=dir bash benchmarks/experiments/phased_gap_ncu.sh
set -u
OUT=${OUT:-.}
NCU=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
P="python3 -P benchmarks/experiments/profile_dense.py N"
for spec in "8192 block_per_row:256:1:1:2:0:1" "8192 block_per_row:128:2:3:1:1:1" "8191 block_per_row:128:2:3:1:1:1"; do
  set -- $spec
  echo "== ncu: fp16 $1 x $1, $2" >> "$OUT/phased-gap-ncu.txt"
  $NCU --set full -k regex:rowblock --launch-skip 2 --launch-count 1 $P $1 $1 float16 $2 >> "$OUT/phased-gap-ncu.txt" 2>&1
done
grep -E "^== ncu|Duration|DRAM Throughput|Registers Per|Achieved Occupancy|Theoretical Occupancy|Warp Cycles Per Issued|Issue Slots Busy|Block Limit|L2 Hit Rate|L1/TEX Hit|Waves Per SM|Grid Size|Block Size" "$OUT/phased-gap-ncu.txt"
