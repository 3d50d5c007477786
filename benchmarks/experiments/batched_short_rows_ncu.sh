#!/usr/bin/env bash
# Where op N strided batches of short 16-bit rows lose to cuBLAS (NOTES 76: fp16 296 x 112 x 4096
# 99 us against HSHgemvStridedBatched's 72): Nsight Compute's DRAM throughput, occupancy, load
# requests and stall reasons for our kernels (the dispatch and forced configs), the same bytes
# as one tall product, fp32 rows of the same elements, and cuBLAS's kernels; and the SASS of
# the batched row-group kernels at unroll 1 and 2. (Run 1 of s57 matched kernels by base name, which
# caught torch's copy kernel for cuBLAS's aligned case, and printed every stall ratio; both fixed since.)
#   OUT=dir bash benchmarks/experiments/batched_short_rows_ncu.sh
set -u
OUT=${OUT:-.}
NCU=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
M="gpu__time_duration.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,dram__bytes_read.sum,\
launch__registers_per_thread,launch__grid_size,launch__block_size,launch__shared_mem_per_block_static,\
sm__warps_active.avg.pct_of_peak_sustained_active,smsp__inst_executed.sum,\
smsp__issue_active.avg.pct_of_peak_sustained_active,l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum,\
l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum,l1tex__t_sector_hit_rate.pct,lts__t_sectors_srcunit_tex_op_read.sum,\
lts__t_sector_hit_rate.pct,smsp__warps_launched.sum,\
regex:smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio"
run() { # M K B dtype how
  echo "== ncu: $4 $1 x $2 x $3 $5" >> "$OUT/ncu.txt"
  $NCU --metrics "$M" --kernel-name-base demangled -k regex:"gemv|Gemv|splitK|reduce" --launch-skip 2 --launch-count 1 \
    python3 -P benchmarks/experiments/profile_batched.py "$@" >> "$OUT/ncu.txt" 2>&1
}
run 296 112 4096 float16 dispatch
run 296 112 4096 float16 rows_per_warp:4:32:1:1:0:1
run 296 112 4096 float16 rows_per_warp:2:64:1:4:0:1
run 296 112 4096 float16 thread_per_row:1:128:1:4:0:1
run 296 112 4096 float16 cublas:HSHgemvStridedBatched
run 296 112 4096 float16 cublas:GemmStridedBatchedEx
run 1212416 112 1 float16 rows_per_warp:4:32:1:1:0:1
run 296 112 4096 float32 dispatch
run 296 107 4096 float16 dispatch
run 296 107 4096 float16 cublas:HSHgemvStridedBatched
# (Stall ratios first: their names end in issue_active too; those under 0.1 left out.)
awk '/^== ncu/ {print; next} /^  [a-zA-Z_].*\(/ && !/==PROF==/ {k=$0; sub(/^ +/,"",k); print "  " substr(k,1,160); next}
     /stalled/ {if ($NF+0 >= 0.1) {sub("smsp__average_warps_issue_stalled_", "", $1); print "    stall", $1, $NF}; next}
     /duration|dram__|registers|grid_size|block_size|shared_mem|warps_active|inst_executed|issue_active|requests|sectors|hit_rate|warps_launched/ {print "    " $1, $(NF-1), $NF; next}
     /max err/ {print "  " $0}' "$OUT/ncu.txt" > "$OUT/ncu-summary.txt"
# SASS of the batched fp16 row-group kernels, aligned loads, unroll 1 and 2 (x not staged).
nvcc -O3 -std=c++17 -arch=sm_90 -DGEMV_BUILDING_LIBRARY -I libgemv/include -I libgemv/src -cubin \
  -o /tmp/rg.cubin libgemv/src/rowgroup.cu 2>/dev/null
for u in 1 2; do
  cuobjdump -sass -fun "_ZN7libgemv20gemv_rowgroup_kernelI6__halfLi1ELi${u}ELb0ELb1EEEvNS_7RowArgsE" /tmp/rg.cubin \
    > "$OUT/sass-fp16-aligned-u$u-batched.txt" 2>&1
done
