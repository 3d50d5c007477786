#!/usr/bin/env bash
# op T runs at 47% (4 blocks an SM) or 25% occupancy where op N runs at 80-95%, and waits
# on its loads (long scoreboard 13-18 against 5-7; op_t_profile.sh). Two levers, timed on
# the dispatcher's config and on more slices: L2 prefetch of the rows GEMV_OPT_AHEAD steps
# ahead (no registers held), and more blocks (split-M above the heuristic's cap of 64).
# The prefetch is not in the library (slower everywhere, NOTES.md section 23): apply
# op-t-ahead.patch first (git apply benchmarks/experiments/op-t-ahead.patch; rebuild).
#   OUT=dir bash benchmarks/experiments/op_t_ahead.sh
set -u
OUT=${OUT:-.}
T="python3 -P scripts/time_configs.py --op T"
run() {
  for a in 0 1 2; do
    echo "-- GEMV_OPT_AHEAD=$a"
    GEMV_OPT_AHEAD=$a $T "$@"
  done
}
{
run 1048576 16 float16 t_splitm_twopass:2:128:1:4:0:1024 t_splitm_twopass:2:256:1:4:0:512 t_splitm_twopass:2:128:1:2:0:1024
run 131072 128 float16 t_splitm_twopass:8:64:1:4:0:256 t_splitm_twopass:16:32:1:4:0:256 t_splitm_twopass:8:32:1:4:0:512
run 65536 256 float16 t_splitm_twopass:8:64:1:4:0:128 t_splitm_twopass:16:32:1:4:0:128 t_splitm_twopass:16:16:1:4:0:256
run 4096 4096 float16 t_splitm_twopass:8:32:1:4:0:16 t_splitm_twopass:16:16:1:4:0:16 t_splitm_twopass:16:16:1:2:0:16
run 2048 2048 float16 t_splitm_twopass:16:16:1:4:0:64 t_splitm_twopass:8:16:1:4:0:64
run 1048576 16 float32 t_splitm_twopass:4:64:1:4:0:1024 t_splitm_twopass:4:128:1:4:0:512
run 4096 4096 float32 t_splitm_twopass:16:16:1:4:0:32 t_splitm_twopass:8:32:1:4:0:32
run 8192 8192 float16 t_splitm_twopass:16:16:1:4:0:16
} 2>&1 | tee "$OUT/op-t-ahead.txt"
