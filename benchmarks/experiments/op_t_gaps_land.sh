#!/usr/bin/env bash
# Landing the sweep's op T configs (op_t_gaps_space.sh -> op_t_gaps_candidates.txt), in two
# steps on the H100, after the .carry wheels:
#   STEP=retime: build this checkout, re-time each candidate against the shipped entry and the
#     heuristic (retime_entries.py --candidates, margin 1.5%) and write $OUT/new.gemvtable
#     (copy it over libgemv/tables/NVIDIA-H100-80GB-HBM3-sm90-132sm.gemvtable on the host).
#   STEP=ab: with that table in the tree and the commit before it in .carry/old-src.tar
#     (git archive --format=tar -o .carry/old-src.tar <commit> -- . ':!benchmarks/results'),
#     the op T suite, batches and a random set on both builds in one session, then the GPU
#     tests on this one.
#   OUT=dir STEP=retime|ab [SEED=29] bash benchmarks/experiments/op_t_gaps_land.sh
set -eu
OUT=${OUT:-.}
R=$(cd "$(dirname "$0")/../.." && pwd)
T=$R/libgemv/tables/NVIDIA-H100-80GB-HBM3-sm90-132sm.gemvtable
cd "$R"
if [ "${STEP:-ab}" = retime ]; then
  python3 -m pip install -q --no-build-isolation --no-deps -Ccmake.define.CMAKE_CUDA_ARCHITECTURES=90 -Cbuild-dir=/tmp/skb .
  (cd /tmp && python3 -P "$R/benchmarks/experiments/retime_entries.py" "$T" --margin 0.015 \
    --candidates "$R/benchmarks/experiments/op_t_gaps_candidates.txt" --update "$OUT/new.gemvtable" \
    --json "$OUT/retime.json") | tee "$OUT/retime.txt"
  exit 0
fi
OUT=$OUT BENCH_ARGS="--ops T" BENCH_ARGS2="--ops T --batched" BENCH_ARGS3="--ops T --random 64 --seed ${SEED:-29}" \
  bash benchmarks/experiments/bench_vs_previous.sh .carry/old-src.tar | tee "$OUT/vs-previous.txt"
(cd /tmp && python3 -P -m pytest -q -m gpu -n 12 -p no:cacheprovider "$R/tests" 2>&1 | tail -4) > "$OUT/pytest-gpu.txt" || true
