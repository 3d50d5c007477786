#!/usr/bin/env bash
# Why op T's realigned packs (vector_loads 2) stream slower than one element a load on many
# rows (NOTES 37): Nsight Compute metrics on one launch of the column kernel each, fp32
# 97394 x 743 (289 MB, rows that start anywhere) with element loads, realigned packs in two
# geometries, and the aligned packs of 97394 x 744 for scale.
#   OUT=dir bash benchmarks/experiments/op_t_realigned_ncu.sh   (results/h100-2026-11-26-s23-op-t-realigned-ncu.txt)
set -u
OUT=${OUT:-.}
NCU=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
R=$(cd "$(dirname "$0")/../.." && pwd)
STALLS=$(for s in long_scoreboard short_scoreboard mio_throttle lg_throttle barrier wait not_selected tex_throttle; do
  printf "smsp__average_warps_issue_stalled_%s_per_issue_active," $s; done)
METRICS="gpu__time_duration.sum,dram__bytes_read.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,lts__t_sectors_srcunit_tex_op_read.sum,l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum,l1tex__t_sector_hit_rate.pct,l1tex__throughput.avg.pct_of_peak_sustained_active,lts__throughput.avg.pct_of_peak_sustained_elapsed,sm__warps_active.avg.pct_of_peak_sustained_active,smsp__inst_executed.sum,launch__registers_per_thread,launch__grid_size,launch__block_size,${STALLS%,}"
run() { # label, profile_dense.py arguments
  local label=$1; shift
  echo "== $label" >> "$OUT/op-t-realigned-ncu.txt"
  (cd /tmp && $NCU --metrics "$METRICS" -k "regex:columns_kernel" --launch-skip 2 --launch-count 1 \
    python3 -P "$R/benchmarks/experiments/profile_dense.py" "$@" 2>&1) | grep -E "^\s+[a-z_0-9]+__|==PROF==|Error" >> "$OUT/op-t-realigned-ncu.txt"
}
run "elements 32:8 split 16" T 97394 743 float32 t_splitm_twopass:32:8:0:4:0:16
run "realigned 16:16 split 32" T 97394 743 float32 t_splitm_twopass:16:16:2:4:0:32
run "realigned 32:8 split 64" T 97394 743 float32 t_splitm_twopass:32:8:2:4:0:64
run "aligned 97394x744 16:16 split 32" T 97394 744 float32 t_splitm_twopass:16:16:1:4:0:32
run "aligned 97394x744 32:8 split 64" T 97394 744 float32 t_splitm_twopass:32:8:1:4:0:64
cat "$OUT/op-t-realigned-ncu.txt"
