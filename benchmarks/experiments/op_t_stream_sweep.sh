#!/usr/bin/env bash
# The op T stream (t_stream) against the dispatcher's choice on short rows, with the tuner's
# instrument (scripts/time_configs.py: cold L2, graph replay, medians): blocks of 256 to 1024
# threads, unroll 2 and 4, about one, two and four waves of slices. After the .carry wheels
# and a build of this checkout:
#   OUT=dir [SHAPES="MxK ..."] [DTYPES="float16 float32"] bash benchmarks/experiments/op_t_stream_sweep.sh
set -u
OUT=${OUT:-.}
R=$(cd "$(dirname "$0")/../.." && pwd)
SHAPES=${SHAPES:-"3985411x61 1000003x41 2000000x73 500000x100 100000x333 1048576x32 4194304x64 8388608x16 262144x200 65536x1000 1573x69 20000x17 5000x61 200000x9 1000000x8 97394x743"}
DTYPES=${DTYPES:-"float16 float32"}
CFGS=""
for s in 132 264 528; do
  for tu in 256:2 256:4 512:2 512:4 1024:2; do CFGS="$CFGS t_stream:${tu%:*}:1:1:${tu#*:}:0:$s"; done
done
for dt in $DTYPES; do
  for shape in $SHAPES; do
    (cd /tmp && python3 -P "$R/scripts/time_configs.py" --op T "${shape%x*}" "${shape#*x}" "$dt" $CFGS 2>&1)
  done
done | tee "$OUT/op-t-stream-sweep.txt"
