#!/usr/bin/env bash
# The x-held prefetch rule (NOTES 35): c7cc1de, this build, and this build with GEMV_Q_PREFETCH=0, one session.
#   git archive --format=tar c7cc1de -o .carry/old-src.tar; OUT=dir bash benchmarks/experiments/x_held_prefetch_rule.sh
python3 -m pip install -q --no-index --no-deps --target /tmp/site .carry/*.whl 2>/dev/null; export PYTHONPATH=/tmp/site
S=1000x4100,649x4352,598x13310,2048x4096,3072x2560,4096x1024,2560x1408,4096x2048,4096x4096,8192x8192,2048x2048,1020x9984
OUT=$OUT SHAPES=$S FORMATS=int4-g128,int4-g128-float,int4-g32,int8-row bash benchmarks/experiments/x_held_prefetch_variants.sh .carry/old-src.tar > $OUT/rule.txt 2>&1
(cd /tmp && GEMV_Q_PREFETCH=0 python3 -P -m pygemv.bench --quantized --shapes $S --formats int4-g128,int4-g128-float,int4-g32,int8-row --json $OUT/variant-nopf.json > /dev/null 2>&1)
python3 - $OUT <<'PY'
import json,sys,math
o=sys.argv[1]
L=lambda n:{(c["format"],c["m"],c["k"]):c for c in json.load(open(f"{o}/variant-{n}.json"))["cases"]}
p,t,z=L("previous"),L("-"),L("nopf")
r=[];rz=[]
for k in t:
    a,b,c=p[k]["pygemv"]["median_us"],t[k]["pygemv"]["median_us"],z[k]["pygemv"]["median_us"]
    r.append(a/b); rz.append(c/b); cf=t[k]["config"]
    print(f"{k[0]:16s} {k[1]:6d}x{k[2]:<6d} prev {a:6.2f} this {b:6.2f} nopf {c:6.2f} {a/b:.3f} {cf['variant']} r={cf['rows_per_block']} s={cf['split_k']}")
g=lambda x:math.exp(sum(map(math.log,x))/len(x))
print(f"this vs previous: {g(r):.3f}x min {min(r):.3f} slower>2%: {sum(x<0.98 for x in r)}; this vs GEMV_Q_PREFETCH=0: {g(rz):.3f}x min {min(rz):.3f}")
PY
