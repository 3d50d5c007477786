#!/usr/bin/env bash
# q_mma_rounds at one step a round against two, with the dispatch's choice, on int4 groups of
# GROUP columns (128 unless set; NOTES.md section 48): scripts/time_configs.py (the tuner's instrument) for each shape and
# format, then a table of the three times and the ratio of two steps to one. Needs pygemv
# installed.
#   OUT=dir NAME=rounds-unroll SHAPES="2560x3072 4200x2560 ..." [FORMATS="float:bfloat16 int:float16 int:bfloat16"] [GROUP=128] \
#     bash benchmarks/experiments/q_mma_rounds_steps.sh
set -u
F=${OUT:-.}/${NAME:-rounds-unroll}.txt
echo "# SHAPES=\"$SHAPES\" FORMATS=\"${FORMATS:-float:bfloat16 int:float16 int:bfloat16}\" GROUP=${GROUP:-128} bash benchmarks/experiments/q_mma_rounds_steps.sh: python scripts/time_configs.py --weights 4,<group>,<zeros> M K <dtype> q_mma_rounds:256:1:1:1:0:1 (u1) q_mma_rounds:256:1:1:2:0:1 (u2)" > "$F"
for s in $SHAPES; do
  for f in ${FORMATS:-float:bfloat16 int:float16 int:bfloat16}; do
    python3 -P scripts/time_configs.py --weights "4,${GROUP:-128},${f%%:*}" "${s%x*}" "${s#*x}" "${f#*:}" \
      q_mma_rounds:256:1:1:1:0:1 q_mma_rounds:256:1:1:2:0:1 >> "$F" 2>&1
  done
done
python3 - "$F" <<'PY'
import collections, re, sys
rows = collections.defaultdict(dict)
for line in open(sys.argv[1]):
    m = re.match(r"N (\S+) (\d+x\d+) (\S+) (.*): ([\d.]+) us", line)
    if m:
        label = "disp" if m[4].startswith("dispatch") else "u1" if m[4].endswith(":1:1:1:0:1") else "u2"
        rows[(m[2], m[1], m[3])][label] = float(m[5])
for (s, d, f), r in rows.items():
    if len(r) == 3:
        print(f"{s:10s} tiles {(int(s.split('x')[0]) + 15) // 16:3d} {d:9s} {f:14s} disp {r['disp']:6.2f} "
              f"u1 {r['u1']:6.2f} u2 {r['u2']:6.2f}  u2/u1 {r['u2'] / r['u1']:.3f}")
PY
