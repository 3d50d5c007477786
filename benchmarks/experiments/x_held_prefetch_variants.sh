#!/usr/bin/env bash
# Builds of this checkout with each patch of PATCHES applied in turn (- for none) and of a
# previous commit, each timed by `pygemv-bench --quantized` on SHAPES x FORMATS in one
# session on one GPU (NOTES section 35: the first-wave prefetch's code generation).
#   git archive --format=tar <commit> -o .carry/old-src.tar    (on the host)
#   OUT=dir SHAPES=MxK,... FORMATS=... PATCHES="- benchmarks/experiments/x-held-prefetch-inline.patch" \
#     bash benchmarks/experiments/x_held_prefetch_variants.sh .carry/old-src.tar
set -eu
OUT=${OUT:-.}
PIP="python3 -m pip install -q --no-build-isolation --no-deps -Ccmake.define.CMAKE_CUDA_ARCHITECTURES=90"
BENCH="python3 -P -m pygemv.bench --quantized --shapes ${SHAPES} ${FORMATS:+--formats $FORMATS}"
names=()
if [ -n "${1:-}" ]; then
  rm -rf /tmp/prev /tmp/skb-prev && mkdir -p /tmp/prev && tar -xf "$1" -C /tmp/prev
  $PIP -Cbuild-dir=/tmp/skb-prev /tmp/prev > /tmp/build-previous.log 2>&1 || { tail -30 /tmp/build-previous.log; exit 1; }
  (cd /tmp && $BENCH --json "$OUT/variant-previous.json") > /tmp/variant-previous.txt 2>&1 || { tail -30 /tmp/variant-previous.txt; exit 1; }
  names+=(previous)
fi
for p in ${PATCHES:--}; do
  n=$(basename "$p" .patch)
  [ "$p" = - ] || git apply "$p"
  $PIP -Cbuild-dir=/tmp/skb . > "/tmp/build-$n.log" 2>&1 || { tail -30 "/tmp/build-$n.log"; [ "$p" = - ] || git apply -R "$p"; exit 1; }
  [ "$p" = - ] || git apply -R "$p"
  (cd /tmp && $BENCH --json "$OUT/variant-$n.json") > "/tmp/variant-$n.txt" 2>&1 || { tail -30 "/tmp/variant-$n.txt"; exit 1; }
  names+=("$n")
done
python3 - "$OUT" "${names[@]}" <<'PY'
import json, math, sys
out, runs = sys.argv[1], sys.argv[2:]
data = {n: {(c["format"], c["m"], c["k"]): c for c in json.load(open(f"{out}/variant-{n}.json"))["cases"]} for n in runs}
base = runs[0]
print(f"{'format':16s} {'shape':>12s} " + " ".join(f"{n[:12]:>12s}" for n in runs) + "  tinygemm  config")
ratios = {n: [] for n in runs}
for k, c in data[base].items():
    t = [data[n][k]["pygemv"]["median_us"] for n in runs]
    for n, v in zip(runs, t): ratios[n].append(t[0] / v)
    tg = c.get("tinygemm", {}).get("median_us")
    cf = data[runs[-1]][k]["config"]
    print(f"{k[0]:16s} {k[1]:6d}x{k[2]:<6d}" + " ".join(f"{v:12.2f}" for v in t) + (f"  {tg:8.2f}" if tg else "         -")
          + f"  {cf['variant']} p={cf['threads_per_row']} r={cf['rows_per_block']} u={cf['unroll']} s={cf['split_k']}")
g = lambda xs: math.exp(sum(map(math.log, xs)) / len(xs))
for n in runs:
    print(f"{n:>40s}: {base}/this geomean {g(ratios[n]):.3f}x, min {min(ratios[n]):.3f}x, max {max(ratios[n]):.3f}x")
PY
