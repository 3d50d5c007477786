#!/usr/bin/env bash
# The 2 MB quantized matrix (1000 x 4100) where q_rows ran level with or slower than dense
# cuBLAS (int4 g32 0.94x, float zeros 1.04x; -s16-quantized.txt): latency-bound, so fewer rows
# a thread, smaller blocks and more slices against the heuristic's choice.
#   OUT=dir bash benchmarks/experiments/small_quantized.sh
set -u
OUT=${OUT:-.}
C="q_rows:8:32:1:2:1:8 q_rows:8:16:1:2:1:8 q_rows:8:16:1:1:1:16 q_rows:8:16:1:2:1:16 q_rows:8:32:1:1:1:16
   q_rows:4:32:1:1:1:16 q_rows:8:16:1:1:1:32 q_rows:16:8:1:1:1:16 q_rows:4:64:1:1:1:8 q_rows:8:8:1:1:1:16
   q_rows:8:16:1:1:1:8 q_rows:4:16:1:1:1:32"
{
for shape in "1000 4100" "2048 2048" "1024 4096"; do
  python3 -P scripts/time_configs.py --weights 4,32,int $shape float16 $C
  python3 -P scripts/time_configs.py --weights 4,128,float $shape bfloat16 $C
  python3 -P scripts/time_configs.py --weights 8,0,symmetric $shape float16 $(echo $C | sed 's/q_rows:8:/q_rows:16:/g; s/q_rows:4:/q_rows:8:/g')
done
} 2>&1 | sed -E "s/Config\(variant='([a-z_]+)', threads_per_row=([0-9]+), rows_per_block=([0-9]+), vector_loads=([0-9]), unroll=([0-9]), x_in_smem=([0-9A-Za-z]+), split_k=([0-9]+)\)/\1:\2:\3:\4:\5:\6:\7/" | tee "$OUT/small-quantized.txt"
