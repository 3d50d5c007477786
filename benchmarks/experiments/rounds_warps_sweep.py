"""q_mma_rounds' warps a tile on short int4 rows (NOTES.md section 55): the dispatch against
rounds at 1, 2, 4 and 8 warps a block and 1 or 2 steps a round, with the tuner's instrument
(cold L2, graph replay, median of 9; each config checked first). Needs pygemv installed.
    python3 -P benchmarks/experiments/rounds_warps_sweep.py 9462x96,16384x255 128:float:bfloat16,32:int:float16
"""
import os
import sys

import pygemv

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # run with -P, which leaves the script's folder off
from x_held_long_rows_sweep import sweep  # noqa: E402

WARPS = {f"w{p // 32}u{u}": pygemv.Config("q_mma_rounds", p, 1, 1, u, 0, 1) for p in (32, 64, 128, 256) for u in (1, 2)}

if __name__ == "__main__":
    sweep(sys.argv[1], sys.argv[2], lambda m, k: WARPS)
