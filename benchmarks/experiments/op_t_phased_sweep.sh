#!/usr/bin/env bash
# op T's phased rows (t_splitm_twopass, vector_loads 3) against the dispatcher's choice on
# rows that do not start 16-byte aligned, with the tuner's instrument (scripts/time_configs.py:
# cold L2, graph replay, medians): tiles of 16 and 32 threads, 8 or 16 lanes, unroll 2 and 4,
# one to four chunks of rows (each cut into its phase classes). After the .carry wheels and a
# build of this checkout:
#   OUT=dir [CASES="dtype:MxK ..."] bash benchmarks/experiments/op_t_phased_sweep.sh
set -u
OUT=${OUT:-.}
R=$(cd "$(dirname "$0")/../.." && pwd)
CASES=${CASES:-"float16:4421x11465 bfloat16:1003x5053 bfloat16:4390x5644 float16:17382x8007 float32:8304x1341 float16:261x391363 float16:752x114370 float32:1965x11797 bfloat16:1433x3611 float16:252x6690 float32:97394x743 bfloat16:2632x1910 float16:20249x309 float32:5272x13301"}
CFGS=${CFGS:-""}
if [ -z "$CFGS" ]; then
  for s in 1 2 4; do
    for cru in 32:8:4 32:8:2 16:16:4 16:16:2; do
      IFS=: read -r c r u <<<"$cru"
      CFGS="$CFGS t_splitm_twopass:$c:$r:3:$u:0:$s"
    done
  done
fi
for case in $CASES; do
  dt=${case%%:*}; shape=${case#*:}
  (cd /tmp && python3 -P "$R/scripts/time_configs.py" --op T "${shape%x*}" "${shape#*x}" "$dt" $CFGS 2>&1)
done | tee "$OUT/op-t-phased-sweep.txt"
