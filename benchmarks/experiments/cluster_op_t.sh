#!/usr/bin/env bash
# op T split over a thread-block cluster (t_splitm_cluster) against the dispatcher's choice
# (two-pass split-M or one pass) on small and medium shapes, with the tuner's instrument
# (cold L2, graph replay, median; each config checked first). The variant is
# op-t-cluster.patch (not kept: slower than two-pass split-M everywhere, NOTES 31). s18:
#   patch -p1 < benchmarks/experiments/op-t-cluster.patch   (then build)
#   OUT=dir bash benchmarks/experiments/cluster_op_t.sh   (results/h100-2026-11-26-s18-cluster-op-t.txt)
set -u
OUT=${OUT:-.}
SHAPES=${SHAPES:-"float16:512x512 float32:512x512 bfloat16:512x512 float16:1024x1024 float32:1024x1024 float16:2048x2048 float32:2048x2048 float16:4096x4096 float16:8192x8192 float16:1024x4096 float16:4096x1024 float16:256x65536 float16:4096x14336"}
CONFIGS=${CONFIGS:-"t_splitm_cluster:4:64:1:4:0:8 t_splitm_cluster:8:32:1:4:0:8 t_splitm_cluster:16:16:1:4:0:8 t_splitm_cluster:16:16:1:2:0:8 t_splitm_cluster:32:8:1:4:0:8 t_splitm_cluster:8:32:1:2:0:4 t_splitm_cluster:4:64:1:2:0:8 t_splitm_cluster:16:32:1:2:0:8"}
for s in $SHAPES; do
  dt=${s%%:*}; mk=${s#*:}; m=${mk%x*}; k=${mk#*x}
  python3 -P scripts/time_configs.py --op T $m $k $dt $CONFIGS 2>&1
done 2>&1 | tee "$OUT/cluster-op-t.txt"
