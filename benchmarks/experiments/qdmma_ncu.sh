#!/usr/bin/env bash
# Where qdmma.cu's full int4 kernel spends the time its loads-only floor does not (NOTES 42):
# Nsight Compute on one graph-replayed launch each of the full kernel (method 3, KW4 U2 xw),
# its floor (method 57, loads KW4 U2) and the dense kernel on the codes' bytes (method 0), at
# 8192^2 int4 g128 integer zeros (after installing pygemv; run from the repository root):
#   OUT=dir bash benchmarks/experiments/qdmma_ncu.sh [MxK]
set -u
OUT=${OUT:-.}
SHAPE=${1:-8192x8192}
NCU=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
LIB=$(cd /tmp && python3 -P -c "import os, pygemv._lib as l; print(os.path.dirname(l.load()._name))")
nvcc -O3 -std=c++17 -arch=sm_90 benchmarks/experiments/qdmma.cu -Ilibgemv/include -L"$LIB" -lgemv \
     -Xlinker -rpath="$LIB" -o /tmp/qdmma || exit 1
F="$OUT/qdmma-ncu.txt"
: > "$F"
for spec in "3 qdm_kernel" "57 qdm_kernel" "0 rowblock|rowtile|rowgroup|rowstream"; do
  set -- $spec
  echo "== ncu: method $1 ($2), $SHAPE" >> "$F"
  QDM_ONLY=$1 QSK_FORMATS=0 $NCU --set full -k "regex:$2" --launch-skip 3 --launch-count 1 /tmp/qdmma "$SHAPE" >> "$F" 2>&1
done
grep -E "^== ncu|^  [a-z_]+.*\(|Duration|SM Frequency|DRAM Throughput|Memory Throughput|Registers Per|Achieved Occupancy|Theoretical Occupancy|Warp Cycles Per Issued|Issue Slots Busy|Executed Ipc Active|Waves Per SM|Grid Size|Block Size|L1/TEX Hit|Stall|One or More Eligible|No Eligible" "$F" | head -150
