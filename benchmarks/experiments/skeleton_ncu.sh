#!/usr/bin/env bash
# Why the quantized kernels' skeletons stream slower than the dense ones at the same bytes
# (NOTES 31): Nsight Compute metrics on one launch each of dense fp16 8192 x 2048 (32 MB, the
# dispatcher's block_per_row), int4 g128 8192^2 in q_rows (dispatch) and q_mma (32:8 split 4),
# and int8 per channel 8192^2 in q_rows (dispatch; the same 64 MB as dense 8192 x 4096).
#   OUT=dir bash benchmarks/experiments/skeleton_ncu.sh   (results/h100-2026-11-26-s18-skeleton-ncu.txt)
set -u
OUT=${OUT:-.}
NCU=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
STALLS=$(for s in long_scoreboard short_scoreboard mio_throttle lg_throttle barrier math_pipe_throttle wait not_selected no_instruction dispatch_stall tex_throttle branch_resolving; do
  printf "smsp__average_warps_issue_stalled_%s_per_issue_active," $s; done)
METRICS="gpu__time_duration.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,sm__warps_active.avg.pct_of_peak_sustained_active,smsp__issue_active.avg.pct_of_peak_sustained_active,smsp__inst_executed.sum,l1tex__throughput.avg.pct_of_peak_sustained_active,l1tex__data_pipe_lsu_wavefronts_mem_shared.sum,lts__throughput.avg.pct_of_peak_sustained_elapsed,launch__registers_per_thread,launch__grid_size,launch__block_size,${STALLS%,}"
run() { # label, kernel regex, command...
  local label=$1 kern=$2; shift 2
  echo "== $label" >> "$OUT/skeleton-ncu.txt"
  $NCU --metrics "$METRICS" -k "regex:$kern" --launch-skip 2 --launch-count 1 "$@" 2>&1 | grep -E "^\s+[a-z_]+__|==PROF==|Error" >> "$OUT/skeleton-ncu.txt"
}
run "dense fp16 8192x2048 dispatch" rowblock python3 -P benchmarks/experiments/profile_dense.py N 8192 2048 float16
run "int4 g128 8192x8192 q_rows dispatch" gemv_q python3 -P benchmarks/experiments/qprofile.py 8192 8192
run "int4 g128 8192x8192 q_mma 32:8 split 4" gemv_qmma python3 -P benchmarks/experiments/qprofile.py 8192 8192 q_mma:32:8:1:1:1:4
run "int8 8192x8192 q_rows dispatch" gemv_q python3 -P benchmarks/experiments/qprofile.py 8192 8192 --weights 8,0,symmetric
cat "$OUT/skeleton-ncu.txt"
