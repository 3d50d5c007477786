#!/usr/bin/env bash
# op T's phased rows (t_splitm_twopass, vector_loads 3) against the dispatcher's choice on
# rows that do not start 16-byte aligned, with the tuner's instrument (scripts/time_configs.py:
# cold L2, graph replay, medians): blocks of 256 threads (tiles of 16 threads and 16 lanes, or
# 8 and 32), unroll 2 and 4, 16 to 256 slices (split_k: rounded up to the phase period). This
# is the set of results/h100-2026-11-26-s25-op-t-phased-sweep-2.txt (-sweep-1.txt ran an
# earlier split_k meaning). After the .carry wheels and a build of this checkout:
#   OUT=dir [CASES="dtype:MxK ..."] bash benchmarks/experiments/op_t_phased_sweep.sh
set -u
OUT=${OUT:-.}
R=$(cd "$(dirname "$0")/../.." && pwd)
CASES=${CASES:-"float16:4421x11465 bfloat16:1003x5053 bfloat16:4390x5644 float16:17382x8007 float32:8304x1341 float16:261x391363 float16:752x114370 float32:1965x11797 bfloat16:1433x3611 float16:252x6690 float32:97394x743 bfloat16:2632x1910 float16:20249x309 float32:5272x13301"}
CFGS=${CFGS:-""}
if [ -z "$CFGS" ]; then
  for s in 16 32 64 128 256; do
    for cru in 16:16:4 16:16:2 8:32:4 8:32:2; do
      IFS=: read -r c r u <<<"$cru"
      CFGS="$CFGS t_splitm_twopass:$c:$r:3:$u:0:$s"
    done
  done
fi
for case in $CASES; do
  dt=${case%%:*}; shape=${case#*:}
  (cd /tmp && python3 -P "$R/scripts/time_configs.py" --op T "${shape%x*}" "${shape#*x}" "$dt" $CFGS 2>&1)
done | tee "$OUT/op-t-phased-sweep.txt"
