#!/usr/bin/env bash
# The row stream (dispatch's choice for packed rows up to 3.5 KB that do not start 16-byte
# aligned) against realigned rows_per_warp / warp_per_row with x staged, by matrix size:
# K in {153, 341, 701, 1477} (fp16) and {153, 445, 701} (fp32), 8 to 64 MB.
#   OUT=dir bash benchmarks/experiments/stream_vs_rows.sh
T="python3 -P scripts/time_configs.py"
for dt in float16 float32; do
  es=$([ $dt = float32 ] && echo 4 || echo 2)
  ks=$([ $dt = float32 ] && echo "153 445 701" || echo "153 341 701 1477")
  for k in $ks; do
    for mb in 8 16 32 64; do
      m=$(( (mb << 20) / (k * es) ))
      $T $m $k $dt rows_per_warp:4:32:2:2:1:1 rows_per_warp:8:32:2:2:1:1 rows_per_warp:16:16:2:2:1:1 warp_per_row:32:8:2:2:1:1 2>&1 \
        | sed -E "s/Config\(variant='([a-z_]+)', threads_per_row=([0-9]+), rows_per_block=([0-9]+), vector_loads=([0-9]), unroll=([0-9]), x_in_smem=([0-9a-zA-Z]+), split_k=([0-9]+)\)/\1:\2:\3:\4:\5:\6:\7/"
    done
  done
done
