#!/usr/bin/env bash
# The quantized dispatch of this checkout against a previous commit's, in one session on one
# GPU: `pygemv-bench --quantized` of each build on the same shapes and formats, then the
# per-case ratio of pygemv's medians (previous / this; > 1 is faster now).
#   git archive --format=tar <commit> -o .carry/old-src.tar    (on the host)
#   OUT=dir SHAPES=MxK,... FORMATS=int4-g128 bash benchmarks/experiments/quantized_vs_previous.sh .carry/old-src.tar
# Builds with pip into the default site (the previous first, then this checkout, which stays
# installed); build logs and the previous build's bench log stay in /tmp. PLOT=1 also draws
# this build's bench ($OUT/this.png).
set -eu
OUT=${OUT:-.}
OLD=$1
PIP="python3 -m pip install -q --no-build-isolation --no-deps -Ccmake.define.CMAKE_CUDA_ARCHITECTURES=90"
BENCH="python3 -P -m pygemv.bench --quantized --shapes ${SHAPES} ${FORMATS:+--formats $FORMATS}"
# A clean build of the previous: tar keeps the commit's mtimes, older than the objects a build
# dir may hold from another commit, which ninja would then keep.
rm -rf /tmp/prev /tmp/skb-prev && mkdir -p /tmp/prev && tar -xf "$OLD" -C /tmp/prev
$PIP -Cbuild-dir=/tmp/skb-prev /tmp/prev > /tmp/build-previous.log 2>&1 || { tail -30 /tmp/build-previous.log; exit 1; }
(cd /tmp && $BENCH --json "$OUT/previous.json") > /tmp/bench-previous.txt 2>&1 || { tail -30 /tmp/bench-previous.txt; exit 1; }
$PIP -Cbuild-dir=/tmp/skb . > /tmp/build-this.log 2>&1 || { tail -30 /tmp/build-this.log; exit 1; }
(cd /tmp && $BENCH --json "$OUT/this.json" ${PLOT:+--plot "$OUT/this.png"}) > "$OUT/bench-this.txt" 2>&1 ||
  { tail -30 "$OUT/bench-this.txt"; exit 1; }
python3 - "$OUT/previous.json" "$OUT/this.json" <<'PY'
import json, math, sys
prev, this = ({(c["format"], c["m"], c["k"]): c for c in json.load(open(p))["cases"]} for p in sys.argv[1:])
r = []
for key in sorted(this):
    a, b = prev[key]["pygemv"]["median_us"], this[key]["pygemv"]["median_us"]
    r.append(a / b)
    cfg = this[key]["config"]
    print(f"{key[0]:16s} {key[1]:7d} x {key[2]:6d}  {a:8.2f} -> {b:8.2f} us  {a / b:.3f}x  "
          f"{cfg['variant']} p={cfg['threads_per_row']} r={cfg['rows_per_block']} s={cfg['split_k']} smem={int(cfg['x_in_smem'])}")
print(f"{len(r)} cases: geomean {math.exp(sum(map(math.log, r)) / len(r)):.3f}x, min {min(r):.3f}x, "
      f"slower than previous by > 2%: {sum(x < 0.98 for x in r)}")
PY
