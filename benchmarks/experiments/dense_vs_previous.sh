#!/usr/bin/env bash
# The dense dispatch of this checkout against a previous commit's, in one session on one GPU:
# `pygemv-bench` of each build on the same cases (BENCH_ARGS, e.g. --shapes ... --dtypes ...),
# then the per-case ratio of pygemv's medians (previous / this; > 1 is faster now) and this
# build's ratio to cuBLAS (timed in the same run as it).
#   git archive --format=tar <commit> -o .carry/old-src.tar    (on the host)
#   OUT=dir BENCH_ARGS="--shapes 1064x5241,... --dtypes float32" bash benchmarks/experiments/dense_vs_previous.sh .carry/old-src.tar
# Builds with pip into the default site (the previous first, then this checkout, which stays
# installed); build logs stay in /tmp.
set -eu
OUT=${OUT:-.}
OLD=$1
PIP="python3 -m pip install -q --no-build-isolation --no-deps -Ccmake.define.CMAKE_CUDA_ARCHITECTURES=90"
BENCH="python3 -P -m pygemv.bench ${BENCH_ARGS}"
# A clean build of the previous: tar keeps the commit's mtimes, older than the objects a build
# dir may hold from another commit, which ninja would then keep.
rm -rf /tmp/prev /tmp/skb-prev && mkdir -p /tmp/prev && tar -xf "$OLD" -C /tmp/prev
$PIP -Cbuild-dir=/tmp/skb-prev /tmp/prev > /tmp/build-previous.log 2>&1 || { tail -30 /tmp/build-previous.log; exit 1; }
(cd /tmp && $BENCH --json "$OUT/dense-previous.json") > /tmp/dense-bench-previous.txt 2>&1 || { tail -30 /tmp/dense-bench-previous.txt; exit 1; }
$PIP -Cbuild-dir=/tmp/skb . > /tmp/build-this.log 2>&1 || { tail -30 /tmp/build-this.log; exit 1; }
(cd /tmp && $BENCH --json "$OUT/dense-this.json") > "$OUT/dense-bench-this.txt" 2>&1 || { tail -30 "$OUT/dense-bench-this.txt"; exit 1; }
python3 - "$OUT/dense-previous.json" "$OUT/dense-this.json" <<'PY'
import json, math, sys
key = lambda c: (c["dtype"], c["op"], c["batch"], c["m"], c["k"])
prev, this = ({key(c): c for c in json.load(open(p))["cases"]} for p in sys.argv[1:])
r, vs = [], []
for k in sorted(this):
    a, b = prev[k]["pygemv"]["median_us"], this[k]["pygemv"]["median_us"]
    r.append(a / b)
    vs.append(this[k]["speedup_vs_cublas"])
    c = this[k]["config"]
    print(f"{k[0]:9s} {k[1]} {k[3]:8d} x {k[4]:7d}  {a:8.2f} -> {b:8.2f} us  {a / b:.3f}x  vs cuBLAS {vs[-1]:.2f}x  "
          f"{c['variant']} p={c['threads_per_row']} r={c['rows_per_block']} v={c['vector_loads']} u={c['unroll']} k={c['split_k']}")
g = lambda xs: math.exp(sum(map(math.log, xs)) / len(xs))
print(f"{len(r)} cases: against previous geomean {g(r):.3f}x, min {min(r):.3f}x, slower by > 2%: {sum(x < 0.98 for x in r)}; "
      f"against cuBLAS geomean {g(vs):.3f}x, min {min(vs):.3f}x, slower: {sum(x < 1 for x in vs)}")
PY
