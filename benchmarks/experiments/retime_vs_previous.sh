#!/usr/bin/env bash
# Cases an A/B (bench_vs_previous.sh) read as slower, re-timed: `pygemv-bench` of the previous
# build and this one in alternating processes, ROUNDS rounds, and each case's ratio of medians
# (previous / this) with both builds' operations. Tells a config's change from the drift
# between processes (NOTES.md section 43: 0.948x read once on an unchanged config, 1.001x here).
#   OUT=dir BENCH_ARGS="--quantized --shapes ... --formats ..." [ROUNDS=3] bash benchmarks/experiments/retime_vs_previous.sh .carry/old-src.tar
set -eu
OUT=${OUT:-.}
BUILD_ONLY=1 bash "$(dirname "$0")/bench_vs_previous.sh" "$1"
cp pygemv/bench.py pygemv/bench_quantized.py /tmp/site-prev/pygemv/
for i in $(seq 1 "${ROUNDS:-3}"); do
  for b in previous this; do
    pp=""; [ $b = previous ] && pp=/tmp/site-prev:
    (cd /tmp && PYTHONPATH=$pp${PYTHONPATH:-} python3 -P -m pygemv.bench $BENCH_ARGS --json "$OUT/$b-$i.json" > /dev/null)
  done
done
python3 - "$OUT" "${ROUNDS:-3}" <<'PY'
import json, statistics as st, sys
d, n = sys.argv[1], int(sys.argv[2])
t = {}
for b in ("previous", "this"):
    for i in range(1, n + 1):
        for c in json.load(open(f"{d}/{b}-{i}.json"))["cases"]:
            k = (c.get("format") or f"{c['dtype']} {c['op']} x{c['batch']}", c["m"], c["k"])
            t.setdefault(k, {}).setdefault(b, []).append((c["pygemv"]["median_us"], c["config"]["variant"]))
for k, v in t.items():
    p, q = [x for x, _ in v["previous"]], [x for x, _ in v["this"]]
    print(f"{k[0]:16s} {k[1]}x{k[2]}  previous {' '.join(f'{x:.2f}' for x in p)}  this {' '.join(f'{x:.2f}' for x in q)}  "
          f"median ratio {st.median(p) / st.median(q):.3f}  {v['previous'][0][1]} / {v['this'][0][1]}")
PY
