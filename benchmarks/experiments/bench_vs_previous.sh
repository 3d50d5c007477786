#!/usr/bin/env bash
# `pygemv-bench` of this checkout against a previous commit's, in one session on one GPU: each
# build runs the same cases (BENCH_ARGS), then the per-case ratio of pygemv's medians
# (previous / this; > 1 is faster now) and, for dense cases, this build's ratio to cuBLAS
# (timed in the same run as it). quantized_vs_previous.sh and dense_vs_previous.sh call it.
#   git archive --format=tar <commit> -o .carry/old-src.tar    (on the host)
#   OUT=dir [PREFIX=name-] BENCH_ARGS="..." bash benchmarks/experiments/bench_vs_previous.sh .carry/old-src.tar
# BENCH_ARGS2 to BENCH_ARGS5, if set, are more case sets timed on both builds (files
# ${PREFIX}2-* to ${PREFIX}5-*). BENCH_FROM_THIS=1: both builds run this checkout's pygemv/bench*.py. THIS_TABLE, if set, is the table this build's runs read
# (GEMV_TABLE; a tune's merge, say); the previous reads its own shipped one.
# Writes $OUT/${PREFIX}previous.json, ${PREFIX}this.json and ${PREFIX}bench-this.txt. The two
# builds run side by side: the previous into /tmp/site-prev (put first on PYTHONPATH for its
# runs), this checkout into the default site, where it stays installed; build logs and the
# previous build's bench logs stay in /tmp. PLOT=1 also draws this build's bench
# ($OUT/${PREFIX}this.png). SKIP_BUILD=1 times the builds a previous run (or a run with
# BUILD_ONLY=1) left there.
set -eu
OUT=${OUT:-.}
PREFIX=${PREFIX:-}
OLD=$1
PIP="python3 -m pip install -q --no-build-isolation --no-deps -Ccmake.define.CMAKE_CUDA_ARCHITECTURES=90"
# A clean build of the previous: tar keeps the commit's mtimes, older than the objects a build
# dir may hold from another commit, which ninja would then keep.
if [ -z "${SKIP_BUILD:-}" ]; then
  rm -rf /tmp/prev /tmp/skb-prev /tmp/site-prev && mkdir -p /tmp/prev && tar -xf "$OLD" -C /tmp/prev
  $PIP --target /tmp/site-prev -Cbuild-dir=/tmp/skb-prev /tmp/prev > /tmp/build-previous.log 2>&1 &
  prev_build=$!
  $PIP -Cbuild-dir=/tmp/skb . > /tmp/build-this.log 2>&1 || { tail -30 /tmp/build-this.log; exit 1; }
  wait $prev_build || { tail -30 /tmp/build-previous.log; exit 1; }
fi
[ -z "${BUILD_ONLY:-}" ] || exit 0
# BENCH_FROM_THIS=1: the previous build runs this checkout's benchmark code (cases it lacks).
[ -z "${BENCH_FROM_THIS:-}" ] || cp pygemv/bench.py pygemv/bench_quantized.py /tmp/site-prev/pygemv/
sets=("$BENCH_ARGS" "${BENCH_ARGS2:-}" "${BENCH_ARGS3:-}" "${BENCH_ARGS4:-}" "${BENCH_ARGS5:-}")
names=("${PREFIX}" "${PREFIX}2-" "${PREFIX}3-" "${PREFIX}4-" "${PREFIX}5-")
for i in 0 1 2 3 4; do
  [ -n "${sets[$i]}" ] || continue
  p=${names[$i]}
  (cd /tmp && PYTHONPATH=/tmp/site-prev${PYTHONPATH:+:$PYTHONPATH} python3 -P -m pygemv.bench ${sets[$i]} \
    --json "$OUT/${p}previous.json") > "/tmp/${p}bench-previous.txt" 2>&1 || { tail -30 "/tmp/${p}bench-previous.txt"; exit 1; }
  plot=""; [ $i = 0 ] && [ -n "${PLOT:-}" ] && plot="--plot $OUT/${p}this.png"
  (cd /tmp && env ${THIS_TABLE:+GEMV_TABLE=$THIS_TABLE} python3 -P -m pygemv.bench ${sets[$i]} \
    --json "$OUT/${p}this.json" $plot) > "$OUT/${p}bench-this.txt" 2>&1 || { tail -30 "$OUT/${p}bench-this.txt"; exit 1; }
done
for i in 0 1 2 3 4; do
[ -n "${sets[$i]}" ] || continue
p=${names[$i]}
python3 - "$OUT/${p}previous.json" "$OUT/${p}this.json" <<'PY'
import json, math, sys
def key(c):  # quantized cases by format, dense ones by dtype, op, batch and layout ('' dense and aligned)
    if "format" in c:
        return (c["format"], c["m"], c["k"])
    lay = f" lda+{c['lda'] - c['k']} @{','.join(map(str, c['offsets']))}" if "lda" in c else ""
    return (c["dtype"] + lay, c["op"], c["batch"], c["m"], c["k"])
prev, this = ({key(c): c for c in json.load(open(p))["cases"]} for p in sys.argv[1:])
r, vs = [], []
for k in sorted(this):
    a, b = prev[k]["pygemv"]["median_us"], this[k]["pygemv"]["median_us"]
    r.append(a / b)
    c = this[k]["config"]
    if len(k) == 3:
        print(f"{k[0]:16s} {k[1]:7d} x {k[2]:6d}  {a:8.2f} -> {b:8.2f} us  {a / b:.3f}x  "
              f"{c['variant']} p={c['threads_per_row']} r={c['rows_per_block']} s={c['split_k']} smem={int(c['x_in_smem'])}")
        continue
    vs.append(this[k]["speedup_vs_cublas"])
    print(f"{k[0]:9s} {k[1]} {k[2]:5d} {k[3]:8d} x {k[4]:7d}  {a:8.2f} -> {b:8.2f} us  {a / b:.3f}x  vs cuBLAS {vs[-1]:.2f}x  "
          f"{c['variant']} p={c['threads_per_row']} r={c['rows_per_block']} v={c['vector_loads']} u={c['unroll']} k={c['split_k']}")
g = lambda xs: math.exp(sum(map(math.log, xs)) / len(xs))
line = (f"{len(r)} cases: geomean {g(r):.3f}x, min {min(r):.3f}x, slower than previous by > 2%: "
        f"{sum(x < 0.98 for x in r)}")
if vs:
    line += f"; against cuBLAS geomean {g(vs):.3f}x, min {min(vs):.3f}x, slower: {sum(x < 1 for x in vs)}"
print(line)
PY
done
