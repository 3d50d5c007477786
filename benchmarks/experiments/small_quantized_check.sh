#!/usr/bin/env bash
# The small-matrix rule of heuristic_quantized (s16): retune the quantized grid with it in
# the heuristic and the seeds, merge into the shipped table, run the GPU tests, then time
# dispatch (the merged table) against the previous rule's config on shapes the sweep did not
# include, and the quantized benchmark. Run from the repository root after installing.
#   OUT=dir bash benchmarks/experiments/small_quantized_check.sh    # SKIP_TESTS=1: no GPU tests
# Run at 26d891d (results/h100-2026-11-24-s16-small-quantized-check*); its retuned table was
# not shipped (benchmarks/NOTES.md section 30).
set -u
OUT=$(cd "${OUT:-.}" && pwd)
SHIPPED=$PWD/libgemv/tables/NVIDIA-H100-80GB-HBM3-sm90-132sm.gemvtable
if [ -z "${SKIP_TESTS:-}" ]; then
  python3 -P -m pytest -q -m "gpu and not timing" -n ${JOBS:-12} -p no:cacheprovider tests > "$OUT/pytest-gpu.log" 2>&1
  tail -1 "$OUT/pytest-gpu.log"
fi
(cd /tmp && python3 -P -m pygemv.tuning.cli --ops N --no-single --no-batched --quantized --dtypes float16,bfloat16 \
   --no-progress --out /tmp/q.gemvtable --json "$OUT/quantized-tune.json" > /tmp/qtune.txt 2>&1) || tail -20 /tmp/qtune.txt
tail -8 /tmp/qtune.txt
(cd /tmp && python3 -P -m pygemv.tuning.merge "$SHIPPED" /tmp/q.gemvtable -o "$OUT/merged.gemvtable") || exit 1
export GEMV_TABLE=$OUT/merged.gemvtable
T="python3 -P scripts/time_configs.py"
{
# the previous rule's config after each dispatch line (int4, then int8)
while read m k o4 o8; do
  $T --weights 4,32,int $m $k float16 $o4
  $T --weights 4,128,float $m $k bfloat16 $o4
  $T --weights 8,0,symmetric $m $k float16 $o8
done <<'SHAPES'
2048 2048 q_rows:8:64:1:4:1:4 q_rows:16:32:1:4:1:4
4096 2048 q_rows:8:64:1:4:1:4 q_rows:16:32:1:4:1:4
2048 4096 q_rows:8:64:1:4:1:8 q_rows:16:32:1:4:1:8
512 4096 q_rows:8:32:1:2:1:8 q_rows:16:16:1:2:1:8
1536 1536 q_rows:8:32:1:2:1:3 q_rows:16:16:1:2:1:2
3000 1000 q_rows:8:64:1:4:1:2 q_rows:16:32:1:4:1:1
1000 4100 q_rows:8:32:1:2:1:8 q_rows:16:16:1:2:1:4
SHAPES
} 2>&1 | sed -E "s/Config\(variant='([a-z_]+)', threads_per_row=([0-9]+), rows_per_block=([0-9]+), vector_loads=([0-9]), unroll=([0-9]), x_in_smem=([0-9A-Za-z]+), split_k=([0-9]+)\)/\1:\2:\3:\4:\5:\6:\7/" > "$OUT/small-quantized-check.txt"
cat "$OUT/small-quantized-check.txt" | sed -E 's/^N //' | cut -c1-110
(cd /tmp && python3 -P -m pygemv.bench --quantized --json "$OUT/quantized.json" --plot "$OUT/quantized.png" > "$OUT/quantized.txt" 2>&1)
tail -1 "$OUT/quantized.txt" | cut -c1-900
