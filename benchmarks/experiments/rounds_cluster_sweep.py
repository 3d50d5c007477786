"""q_mma_rounds with a tile on a thread-block cluster (split_k blocks adding their sums through
distributed shared memory; NOTES.md section 56): the dispatch against rounds at 2, 4 and 8
warps a block, 1 or 2 steps a round and clusters of 1, 2, 4 and 8 blocks, with the tuner's
instrument (cold L2, graph replay, median of 9; each config checked first). Needs pygemv installed,
built with experiments/q-mma-rounds-clusters.patch applied (without it split_k > 1 is refused: n/a).
    python3 -P benchmarks/experiments/rounds_cluster_sweep.py 2944x6144,8192x8192 128:float:bfloat16,32:int:float16
"""
import os
import sys

import pygemv

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # run with -P, which leaves the script's folder off
from x_held_long_rows_sweep import sweep  # noqa: E402

CONFIGS = {f"w{p // 32}u{u}c{c}": pygemv.Config("q_mma_rounds", p, 1, 1, u, 0, c)
           for p, u, c in ((256, 1, 1), (256, 2, 1), (128, 1, 1), (128, 2, 1),
                           (256, 1, 2), (256, 2, 2), (128, 1, 2), (128, 2, 2), (64, 2, 2),
                           (256, 1, 4), (128, 1, 4), (128, 2, 4), (64, 2, 4), (64, 1, 8), (128, 1, 8))}

if __name__ == "__main__":
    sweep(sys.argv[1], sys.argv[2], lambda m, k: CONFIGS)
