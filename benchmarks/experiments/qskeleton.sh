#!/usr/bin/env bash
# Build and run a standalone quantized experiment (qskeleton.cu, NOTES 31; PROG=qdense for
# qdense.cu, NOTES 41; PROG=qdmma for qdmma.cu, NOTES 42) against the installed pygemv's libgemv:
#   OUT=dir [PROG=qskeleton|qdense|qdmma] [QSK_FORMATS=02] bash benchmarks/experiments/qskeleton.sh [MxK ...]
# (run from the repository root)
set -eu
OUT=${OUT:-.}
PROG=${PROG:-qskeleton}
LIB=$(cd /tmp && python3 -P -c "import os, pygemv._lib as l; print(os.path.dirname(l.load()._name))")
nvcc -O3 -std=c++17 -arch=sm_90 "benchmarks/experiments/$PROG.cu" -Ilibgemv/include -L"$LIB" -lgemv \
     -Xlinker -rpath="$LIB" -o "/tmp/$PROG" -Xptxas -v 2> "$OUT/$PROG-ptxas.txt"
"/tmp/$PROG" "$@" | tee "$OUT/$PROG.txt"
