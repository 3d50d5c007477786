#!/usr/bin/env bash
# The quantized kernels' loads and q_mma's step loop. Each version is a patch on the
# checked-out code ("none": as checked out); each is built in turn, its q_mma SASS counted by
# opcode (cuobjdump), and q_mma configs and dispatch timed on int4 g128 (and dispatch on
# bf16 float zeros). The s16 run (results/h100-2026-11-24-s16-qmma-lean.txt) named them:
#   v_C: the code before ce44682 (git checkout ce44682~1 -- libgemv/src/qmma.cu);
#   v_A: ce44682 (one LOP3 a pair, a tile's pointers formed once): "none" on ce44682;
#   v_B: qmma-zero-fp16.patch (v_A with the zero terms in fp16 arithmetic: 100 registers);
#   v_E: quant-l2-256b.patch (v_A with every code load asking L2 for 256 bytes, q_mma and q_rows).
# and the second (-s16-quant-prefetch.txt): none, quant-prefetch4.patch, quant-prefetch8.patch
# (an L2 prefetch of the codes 4 or 8 steps or packs ahead of use, q_mma and q_rows).
# s17 (its results file was lost with its machine; figures in NOTES 31): qmma-staged-ring.patch
# (the codes staged through a cp.async ring, 4 x unroll steps a warp, four MMA chains).
# s18 (results/h100-2026-11-26-s18-qmma-tile-contiguous.txt), UNCHECKED=1: none,
# qmma-tile-contiguous-timing.patch and qmma-staged-tile-contiguous-timing.patch (the codes read
# as if each 16-row tile's step were 1 KB contiguous: wrong results, timed for the pattern);
# results/h100-2026-11-26-s18-qmma-no-dequant.txt: none, qmma-no-dequant-timing.patch and
# qmma-no-dequant-tile-contiguous-timing.patch (the raw code words fed to the MMAs: the
# skeleton's floor); results/h100-2026-11-26-s18-qrows-no-dequant.txt: none and
# qrows-no-dequant-timing.patch (one FFMA a word in q_rows), ALSO="8,0,symmetric:float16".
# s19 (results/h100-2026-11-26-s19-qmma-inplace-*.txt): the in-place kernel's configs (x_in_smem 0)
# against the staged ones; -pinned-free-registers.txt: none, qmma-inplace-pinned.patch (asm
# volatile dequantization) and qmma-inplace-free-registers.patch (no 64-register bound).
#   VERSIONS="none benchmarks/experiments/quant-l2-256b.patch" OUT=dir bash benchmarks/experiments/qmma_lean.sh
set -u
OUT=${OUT:-.}
SHAPES=${SHAPES:-"4096x4096 8192x8192 11008x10944 5003x7392 28672x8192 128256x4096 4096x14336"}
CONFIGS=${CONFIGS:-"q_mma:32:4:1:1:1:1 q_mma:32:4:1:1:1:2 q_mma:32:4:1:1:1:4 q_mma:32:4:1:1:1:8"}
FLOAT=${FLOAT:-1} # also time bf16 float zeros' dispatch (q_rows)
ALSO=${ALSO:-} # more formats' dispatch, as bits,group,zeros:dtype (e.g. "8,0,symmetric:float16")
UNCHECKED=${UNCHECKED:-0} # time without the correctness check (patches that read another layout)
TC="python3 -P scripts/time_configs.py"; [ "$UNCHECKED" = 0 ] || TC="$TC --unchecked"
rm -rf /tmp/src_orig && cp -r libgemv/src /tmp/src_orig
for v in $VERSIONS; do
  name=$(basename "$v" .patch)
  cp /tmp/src_orig/* libgemv/src/
  [ "$v" = none ] || patch -s -p1 < "$v" || { echo "$name: patch failed"; continue; }
  python3 -m pip install -q --no-build-isolation --no-deps -Cbuild-dir=/tmp/skb -Ccmake.define.CMAKE_CUDA_ARCHITECTURES=90 . \
    > "/tmp/build-$name.log" 2>&1 || { echo "$name: BUILD FAILED"; tail -30 "/tmp/build-$name.log"; continue; }
  lib=$(cd /tmp && python3 -P -c "import pygemv._lib as l; print(l.load()._name)")
  for f in $(cuobjdump -sass "$lib" | grep -o "Function : [^ ]*qmma_kernel[^ ]*" | awk '{print $3}'); do
    echo "$name $f: $(cuobjdump -sass -fun "$f" "$lib" | grep -cE '^\s+/\*[0-9a-f]{4}\*/') instructions;" \
      "$(cuobjdump -sass -fun "$f" "$lib" | grep -E '^\s+/\*[0-9a-f]{4}\*/' | sed -E 's#^\s+/\*[0-9a-f]+\*/\s+(@!?U?P[0-9T] )?##' | awk '{print $1}' | cut -d. -f1 | sort | uniq -c | sort -rn | head -12 | awk '{printf "%s %s, ", $2, $1}')"
  done
  for s in $SHAPES; do
    m=${s%x*}; k=${s#*x}
    ($TC --weights 4,128,int $m $k float16 $CONFIGS 2>&1;
     [ "$FLOAT" = 0 ] || $TC --weights 4,128,float $m $k bfloat16 2>&1;
     for f in $ALSO; do $TC --weights ${f%:*} $m $k ${f#*:} 2>&1; done) | sed "s/^/$name /"
  done
done 2>&1 | tee "$OUT/qmma-lean.txt"
cp /tmp/src_orig/* libgemv/src/
