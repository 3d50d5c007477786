#!/usr/bin/env bash
# op T's column kernel with its lane sums shuffled within a warp first (NOTES section 36; apply
# benchmarks/experiments/op-t-lane-shuffle.patch first, not shipped): the
# dispatcher's choice against one-pass and split configs of few columns and many row lanes
# (the shapes a serial lane sum made slow), on the small squares. After installing pygemv:
#   bash benchmarks/experiments/op_t_lane_shuffle.sh [MxK ...]
set -u
R=$(cd "$(dirname "$0")/../.." && pwd)
for s in ${*:-256x256 512x512 1024x1024 2048x2048}; do
  m=${s%x*}; k=${s#*x}
  for dt in float32 float16 bfloat16; do
    cfgs=""
    for c in 1 2 4 8; do
      for r in 64 128 256 512 1024; do
        for u in 1 2 4; do
          t=$((c * r)); max=$([ $u = 4 ] && echo 512 || echo 1024)
          [ $t -lt 128 ] || [ $t -gt $max ] && continue
          rows=$((r * u)); [ $rows -gt $((2 * m)) ] && continue
          cfgs="$cfgs t_columns:$c:$r:1:$u:0:1"
          for sp in 2 4 8; do [ $((rows * sp)) -le $m ] && cfgs="$cfgs t_splitm_twopass:$c:$r:1:$u:0:$sp"; done
        done
      done
    done
    (cd /tmp && python3 -P "$R/scripts/time_configs.py" --op T $m $k $dt $cfgs)
  done
done
