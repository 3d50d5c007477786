#!/usr/bin/env bash
# Where op T's time goes against op N on the same bytes: Nsight Compute's stall reasons,
# DRAM throughput and load requests for the dispatcher's kernels, op T and op N, on the
# shapes where op T trails op N most (small squares, tall-skinny).
#   OUT=dir bash benchmarks/experiments/op_t_profile.sh
set -u
OUT=${OUT:-.}
NCU=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
M="gpu__time_duration.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,launch__registers_per_thread,\
launch__grid_size,launch__block_size,sm__warps_active.avg.pct_of_peak_sustained_active,smsp__inst_executed.sum,\
smsp__issue_active.avg.pct_of_peak_sustained_active,l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum,\
l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum,dram__bytes_read.sum,\
regex:smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio"
for spec in "T 1048576 16" "N 1048576 16" "T 131072 128" "N 131072 128" "T 4096 4096" "N 4096 4096" "T 512 512" "N 512 512"; do
  set -- $spec
  echo "== ncu: $1 float16 $2 x $3" >> "$OUT/op-t-ncu.txt"
  $NCU --metrics "$M" -k regex:"gemv|reduce" --launch-skip 2 --launch-count 2 python3 -P benchmarks/experiments/profile_dense.py $1 $2 $3 float16 \
    >> "$OUT/op-t-ncu.txt" 2>&1
done
# Stall ratios below 0.05 left out of the summary.
awk '/^== ncu/ {print; next} /gemv|reduce/ && /\(/ {print "  " $0; next}
     /duration|dram__|registers|grid_size|block_size|warps_active|inst_executed|issue_active|requests|sectors/ {print "    " $1, $NF; next}
     /stalled/ && $NF+0 >= 0.05 {sub("smsp__average_warps_issue_stalled_", "", $1); print "    stall", $1, $NF}' "$OUT/op-t-ncu.txt"
