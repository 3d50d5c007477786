#!/usr/bin/env bash
# Build and run qskeleton.cu against the installed pygemv's libgemv (NOTES 31):
#   OUT=dir [QSK_FORMATS=02] bash benchmarks/experiments/qskeleton.sh [MxK ...]   (run from the repository root)
set -eu
OUT=${OUT:-.}
LIB=$(cd /tmp && python3 -P -c "import os, pygemv._lib as l; print(os.path.dirname(l.load()._name))")
nvcc -O3 -std=c++17 -arch=sm_90 benchmarks/experiments/qskeleton.cu -Ilibgemv/include -L"$LIB" -lgemv \
     -Xlinker -rpath="$LIB" -o /tmp/qsk -Xptxas -v 2> "$OUT/qskeleton-ptxas.txt"
/tmp/qsk "$@" | tee "$OUT/qskeleton.txt"
