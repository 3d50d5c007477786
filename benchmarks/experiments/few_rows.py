"""Few rows, every row in flight at once: how many lanes a row, how many loads a lane and
how large a block. For each shape (the held-out check's losers, then random draws of at
most 4096 rows and 8 MB) it times the heuristic, the table's choice and every row config
of p = 8..1024 lanes a row (up to twice the row's 16-byte loads), unroll 1 or 2, and blocks
of 128, 256 or 512 threads, x read through L1; the tuner's instrument (cold L2, graph
replay, median), each config checked first.

    python benchmarks/experiments/few_rows.py [--n 24] [--seed 7] [--json out.json]
"""
import argparse
import json
import math
import random

import pygemv
from pygemv.tuning.measure import GpuContext, GpuMeasure

HELD_OUT = [("bfloat16", 2, 4038), ("float16", 17, 1391), ("float32", 55, 712), ("float16", 416, 25180),
            ("float16", 3209, 2998), ("float32", 994, 356), ("float32", 6972, 1004), ("float32", 4, 373),
            ("bfloat16", 4, 15128), ("float32", 1191, 705), ("float16", 10208, 636), ("bfloat16", 5477, 8528)]


def draw(n, seed):
    rng, out = random.Random(seed), []
    while len(out) < n:
        dtype = ("float32", "float16", "bfloat16")[len(out) % 3]
        m, k = round(2 ** rng.uniform(0, 12)), round(2 ** rng.uniform(6, 16))
        if m * k * (4 if dtype == "float32" else 2) <= (8 << 20):
            out.append((dtype, m, k))
    return out


def candidates(m, k, dtype, mode):
    esz = 4 if dtype == "float32" else 2
    loads = math.ceil(k * esz / 16)
    top = 2 ** math.ceil(math.log2(max(loads, 1)))
    for p in (8, 16, 32, 64, 128, 256, 512, 1024):
        if p > 2 * top:
            break
        variant = "rows_per_warp" if p < 32 else "warp_per_row" if p == 32 else "block_per_row"
        for threads in (128, 256, 512):
            rows = threads // p
            if rows < 1 or (rows > 1 and rows > 2 * m):
                continue
            for unroll in (1, 2):
                yield pygemv.Config(variant, p, rows, mode, unroll, 0, 1)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=24)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--json", default="")
    args = ap.parse_args()
    ctx, out = GpuContext.create(), []
    for dtype, m, k in HELD_OUT + draw(args.n, args.seed):
        me = GpuMeasure(m, k, dtype, ctx, repeats=7, target_ms=1.0)
        heur, table = me.heuristic(), me.dispatch()
        mode = heur.vector_loads if heur.vector_loads in (pygemv.LOADS_ALIGNED, pygemv.LOADS_REALIGNED) else (
            pygemv.LOADS_ALIGNED if me.legal(pygemv.Config("warp_per_row", 32, 4, pygemv.LOADS_ALIGNED, 1, 0, 1))[0]
            else pygemv.LOADS_REALIGNED)
        times = {}
        for c in [heur, table, *candidates(m, k, dtype, mode)]:
            key = str(c)
            if key in times:
                continue
            ok = me.legal(c)[0] and me.check(c)[0]
            times[key] = me.time_us(c) if ok else None
        me.close()
        best = min((t, c) for c, t in times.items() if t is not None)
        row = {"dtype": dtype, "m": m, "k": k, "heuristic": str(heur), "table": str(table), "times": times}
        out.append(row)
        print(f"{dtype:<8} {m:>6}x{k:<6} heur {times[str(heur)]:7.2f} table {times[str(table)]:7.2f} "
              f"best {best[0]:7.2f} {best[1]}", flush=True)
    if args.json:
        json.dump(out, open(args.json, "w"), indent=1)


if __name__ == "__main__":
    main()
