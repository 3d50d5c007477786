#!/usr/bin/env bash
# The dense dispatch of this checkout against a previous commit's, in one session on one GPU:
# `pygemv-bench` of each build on the same cases (BENCH_ARGS, e.g. --shapes ... --dtypes ...;
# bench_vs_previous.sh: per-case ratios of pygemv's medians, previous / this, and this
# build's ratio to cuBLAS, timed in the same run as it).
#   git archive --format=tar <commit> -o .carry/old-src.tar    (on the host)
#   OUT=dir BENCH_ARGS="--shapes 1064x5241,... --dtypes float32" bash benchmarks/experiments/dense_vs_previous.sh .carry/old-src.tar
# Writes $OUT/dense-previous.json, dense-this.json and dense-bench-this.txt.
set -eu
PREFIX=dense- exec bash "$(dirname "$0")/bench_vs_previous.sh" "$@"
