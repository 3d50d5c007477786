#!/usr/bin/env bash
# The quantized dispatch of this checkout against a previous commit's, in one session on one
# GPU: `pygemv-bench --quantized` of each build on the same shapes and formats
# (bench_vs_previous.sh: per-case ratios of pygemv's medians, previous / this).
#   git archive --format=tar <commit> -o .carry/old-src.tar    (on the host)
#   OUT=dir SHAPES=MxK,... FORMATS=int4-g128 bash benchmarks/experiments/quantized_vs_previous.sh .carry/old-src.tar
# Writes $OUT/previous.json, this.json and bench-this.txt; PLOT=1 also draws $OUT/this.png.
set -eu
BENCH_ARGS="--quantized --shapes ${SHAPES} ${FORMATS:+--formats $FORMATS}" PREFIX="" \
  exec bash "$(dirname "$0")/bench_vs_previous.sh" "$@"
