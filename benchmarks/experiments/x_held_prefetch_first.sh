#!/usr/bin/env bash
# q_mma_x_held's first-wave L2 prefetch before the PDL wait (QArgs::prefetch_tiles; NOTES
# section 35): the quantized benchmark of this build with GEMV_Q_PREFETCH = each of MODES
# (tiles of codes a block prefetches; 0: none), and of a previous commit if given, in one
# session on one GPU. This checkout must be installed (pip install .) first.
#   git archive --format=tar <commit> -o .carry/old-src.tar    (on the host)
#   OUT=dir SHAPES=MxK,... FORMATS=... [MODES="0 1 2 4"] bash benchmarks/experiments/x_held_prefetch_first.sh [.carry/old-src.tar]
# (s22's first form prefetched modes 1-3 = tile 0's codes, + scales and zeros, + x.)
set -eu
OUT=${OUT:-.}
BENCH="python3 -P -m pygemv.bench --quantized --shapes ${SHAPES} ${FORMATS:+--formats $FORMATS}"
for m in ${MODES:-0 1 2 4}; do
  (cd /tmp && GEMV_Q_PREFETCH=$m $BENCH --json "$OUT/prefetch-$m.json") > "/tmp/prefetch-$m.txt" 2>&1 ||
    { tail -30 "/tmp/prefetch-$m.txt"; exit 1; }
done
if [ -n "${1:-}" ]; then
  rm -rf /tmp/prev /tmp/skb-prev && mkdir -p /tmp/prev && tar -xf "$1" -C /tmp/prev
  python3 -m pip install -q --no-build-isolation --no-deps --target /tmp/prev-site \
    -Ccmake.define.CMAKE_CUDA_ARCHITECTURES=90 -Cbuild-dir=/tmp/skb-prev /tmp/prev > /tmp/build-previous.log 2>&1 ||
    { tail -30 /tmp/build-previous.log; exit 1; }
  (cd /tmp && PYTHONPATH=/tmp/prev-site:${PYTHONPATH:-} $BENCH --json "$OUT/prefetch-previous.json") > /tmp/prefetch-previous.txt 2>&1 ||
    { tail -30 /tmp/prefetch-previous.txt; exit 1; }
fi
python3 - "$OUT" <<'PY'
import json, math, os, sys
out = sys.argv[1]
runs = [n for n in ["previous"] + os.environ.get("MODES", "0 1 2 4").split() if os.path.exists(f"{out}/prefetch-{n}.json")]
data = {n: {(c["format"], c["m"], c["k"]): c for c in json.load(open(f"{out}/prefetch-{n}.json"))["cases"]} for n in runs}
base = "previous" if "previous" in data else "0"
print(f"{'format':16s} {'shape':>12s} " + " ".join(f"{n:>9s}" for n in runs) + "  tinygemm  config")
ratios = {n: [] for n in runs}
for k, c in data["0"].items():
    t = [data[n][k]["pygemv"]["median_us"] for n in runs]
    for n, v in zip(runs, t): ratios[n].append(data[base][k]["pygemv"]["median_us"] / v)
    tg = c.get("tinygemm", {}).get("median_us")
    cf = c["config"]
    print(f"{k[0]:16s} {k[1]:6d}x{k[2]:<6d}" + " ".join(f"{v:9.2f}" for v in t) + (f"  {tg:8.2f}" if tg else "         -")
          + f"  {cf['variant']} p={cf['threads_per_row']} r={cf['rows_per_block']} u={cf['unroll']} s={cf['split_k']}")
g = lambda xs: math.exp(sum(map(math.log, xs)) / len(xs))
for n in runs:
    print(f"{n:>9s}: {base}/this geomean {g(ratios[n]):.3f}x, min {min(ratios[n]):.3f}x, max {max(ratios[n]):.3f}x")
PY
