#!/usr/bin/env bash
# The int4 problems NOTES.md section 52 leaves to time ("Next" 1, 4, 5), in one call: where the
# dispatcher still picks q_rows with x in place, and per-row int4's moves. Each line: the
# dispatch against x held in three forms and q_mma_rounds at one and two steps
# (experiments/x_held_long_rows_sweep.py). Needs pygemv installed.
#   OUT=dir bash benchmarks/experiments/int4_dispatch_holes.sh
set -u
S=benchmarks/experiments/x_held_long_rows_sweep.py
F=${OUT:-.}/int4-dispatch-holes.txt
{
  echo "# (1) q_mma's formats from 2048 to 4095 rows past 2^25 codes (q_rows)"
  python3 -P $S 2048x16512,2300x20000,3000x16384,3900x12000,2600x28672 128:int:float16,128:symmetric:float16,128:float:bfloat16
  echo "# (4) under 512 rows on long rows; fp16 512 x 14336-16384; past 6 tiles an SM on 2049-2177 columns"
  python3 -P $S 255x16384,100x65536,400x28672,300x12000,511x20000 128:int:float16,128:float:bfloat16,32:float:bfloat16
  python3 -P $S 512x14336,512x16384,12838x2049,13000x2100 128:int:float16,128:symmetric:float16
  echo "# (5) per-row int4 where s34's rules moved it: regime (d) and long rows"
  python3 -P $S 8450x1024,12672x2560,9500x3000,9500x4096,2008x8704,1536x11008,800x65536,2944x6144 0:int:bfloat16,0:int:float16
} > "$F" 2>&1
cat "$F"
