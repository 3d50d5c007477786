#!/usr/bin/env bash
# q_mma_x_held on small int4 matrices (under 2^23 codes or 2048 rows, where the heuristic
# keeps q_rows; NOTES 34): the dispatcher's choice against x_held configs around the wave
# rule, three formats, and tinygemm on the same shapes. After installing pygemv:
#   OUT=dir bash benchmarks/experiments/x_held_small.sh [MxK ...]
set -u
OUT=${OUT:-.}
R=$(cd "$(dirname "$0")/../.." && pwd)
SHAPES=${*:-1000x4100 2560x1408 2048x4096 4096x2048 2048x2048 1024x4096 6397x1219 4096x1024 1536x1536 3000x2000 512x8192 16960x1152 17280x1353 19631x1414}
for fmt in 4,128,int,float16 4,128,float,bfloat16 4,32,int,float16; do
  python3 -P "$R/benchmarks/experiments/x_held_prefetch.py" --format $fmt $SHAPES >> "$OUT/x-held-small.jsonl"
done
python3 -P -m pygemv.bench --quantized --formats int4-g128-float --shapes "$(echo $SHAPES | tr ' ' ',')" \
  --json "$OUT/x-held-small-tinygemm.json" > "$OUT/x-held-small-tinygemm.txt" 2>&1
python3 - "$OUT" <<'PY'
import json, sys, collections
out = sys.argv[1]
rows = [json.loads(l) for l in open(f"{out}/x-held-small.jsonl")]
tiny = {}
try:
    for r in json.load(open(f"{out}/x-held-small-tinygemm.json"))["cases"]:
        if "tinygemm" in r: tiny[f"{r['m']}x{r['k']}"] = r["tinygemm"]["median_us"]
except Exception as e:
    print("tinygemm:", e)
by = collections.defaultdict(list)
for r in rows:
    if r["us"]: by[(r["format"], r["shape"])].append(r)
for (fmt, shape), rs in by.items():
    d = next(r for r in rs if r["label"] == "dispatch")
    b = min((r for r in rs if r["label"] == "x_held"), key=lambda r: r["us"])
    t = tiny.get(shape) if "float" in fmt else None
    print(f"{fmt:22s} {shape:>11s} dispatch {d['us']:6.2f} best x_held {b['us']:6.2f} ({d['us']/b['us']:.2f}x)"
          + (f" tinygemm {t:6.2f}" if t else "") + "  " + b["config"][27:].replace("vector_loads=1, ", ""))
PY
