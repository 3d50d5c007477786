#!/usr/bin/env bash
# Opcode counts of every kernel of one source file, from its SASS (on the device: cuobjdump
# and cu++filt come with the toolkit there): $OUT/sass-hist.json (kernel -> opcode -> count)
# and a line a kernel on stdout (instructions, then the opcodes named in OPS).
#   OUT=dir [OPS="HADD2 PRMT ..."] bash benchmarks/experiments/sass_opcodes.sh libgemv/src/columns.cu
set -eu
SRC=$1
OPS=${OPS:-"HADD2 F2F PRMT IMAD SHF LDG FFMA BRA"}
nvcc -O3 -std=c++17 -arch=sm_90 -DGEMV_BUILDING_LIBRARY -I libgemv/include -I libgemv/src -cubin -o /tmp/sass.cubin "$SRC"
cuobjdump -sass /tmp/sass.cubin > /tmp/sass.txt
python3 - /tmp/sass.txt "$OUT" "$OPS" <<'PY'
import collections, json, re, subprocess, sys
funcs, cur = {}, None
for line in open(sys.argv[1]):
    m = re.search(r"Function : (\S+)", line)
    if m:
        cur = m.group(1); funcs[cur] = collections.Counter(); continue
    m = re.search(r"/\*[0-9a-f]{4}\*/\s+(@!?P\w+\s+)?([A-Z][A-Z0-9_]*)", line)
    if cur and m:
        funcs[cur][m.group(2)] += 1
names = list(funcs)
demangled = subprocess.run(["cu++filt"], input="\n".join(names), capture_output=True, text=True).stdout.split("\n")
hist = {d or n: dict(funcs[n]) for n, d in zip(names, demangled)}
json.dump(hist, open(sys.argv[2] + "/sass-hist.json", "w"), indent=0)
for name, h in hist.items():
    print(sum(h.values()), " ".join(f"{op}={h.get(op, 0)}" for op in sys.argv[3].split()), name[:150])
PY
