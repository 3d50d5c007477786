"""Few rows, every row in flight at once: how many lanes a row, how many loads a lane and
how large a block. For each shape (the held-out check's losers, then random draws of at
most 4096 rows and 8 MB) it times the heuristic, the table's choice and every row config
of p = 8..1024 lanes a row (up to twice the row's 16-byte loads), unroll 1 or 2, and blocks
of 128, 256 or 512 threads, x read through L1; the tuner's instrument (cold L2, graph
replay, median), each config checked first.

    python benchmarks/experiments/few_rows.py [--n 24] [--seed 7] [--json out.json]

Options for other regimes: --shapes dtype:MxK,... instead of the held-out list; --m-log2 and
--k-log2 (ranges of the draw, default 0,12 and 6,16), --max-mb (default 8); --modes (load
modes to sweep, default the heuristic's: 16-byte aligned where the rows allow, else
realigned; e.g. 0,2 for element and realigned loads), --ps, --threads, --unrolls.
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


def draw(n, seed, m_log2=(0, 12), k_log2=(6, 16), max_mb=8):
    rng, out = random.Random(seed), []
    while len(out) < n:
        dtype = ("float32", "float16", "bfloat16")[len(out) % 3]
        m, k = round(2 ** rng.uniform(*m_log2)), round(2 ** rng.uniform(*k_log2))
        if m * k * (4 if dtype == "float32" else 2) <= (max_mb << 20):
            out.append((dtype, m, k))
    return out


def candidates(m, k, dtype, mode, ps=(8, 16, 32, 64, 128, 256, 512, 1024), threads_list=(128, 256, 512),
               unrolls=(1, 2)):
    esz = 4 if dtype == "float32" else 2
    loads = math.ceil(k * esz / 16) if mode else k
    top = 2 ** math.ceil(math.log2(max(loads, 1)))
    for p in ps:
        if p > 2 * top:
            break
        variant = ("thread_per_row" if p == 1 else "rows_per_warp" if p < 32 else "warp_per_row" if p == 32
                   else "block_per_row")
        for threads in threads_list:
            rows = threads // p
            if rows < 1 or (rows > 1 and rows > 2 * m):
                continue
            for unroll in unrolls:
                yield pygemv.Config(variant, p, rows, mode, unroll, 0, 1)


def ints(text):
    return tuple(int(v) for v in text.split(","))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=24)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--json", default="")
    ap.add_argument("--shapes", default="", help="dtype:MxK,... instead of the held-out list")
    ap.add_argument("--m-log2", type=ints, default=(0, 12))
    ap.add_argument("--k-log2", type=ints, default=(6, 16))
    ap.add_argument("--max-mb", type=int, default=8)
    ap.add_argument("--modes", type=ints, default=None)
    ap.add_argument("--ps", type=ints, default=(8, 16, 32, 64, 128, 256, 512, 1024))
    ap.add_argument("--threads", type=ints, default=(128, 256, 512))
    ap.add_argument("--unrolls", type=ints, default=(1, 2))
    args = ap.parse_args()
    fixed = HELD_OUT if not args.shapes else [
        (d, *(int(v) for v in mk.split("x"))) for d, mk in (s.split(":") for s in args.shapes.split(","))]
    ctx, out = GpuContext.create(), []
    for dtype, m, k in fixed + draw(args.n, args.seed, args.m_log2, args.k_log2, args.max_mb):
        me = GpuMeasure(m, k, dtype, ctx, repeats=7, target_ms=1.0)
        heur, table = me.heuristic(), me.dispatch()
        mode = heur.vector_loads if heur.vector_loads in (pygemv.LOADS_ALIGNED, pygemv.LOADS_REALIGNED) else (
            pygemv.LOADS_ALIGNED if me.legal(pygemv.Config("warp_per_row", 32, 4, pygemv.LOADS_ALIGNED, 1, 0, 1))[0]
            else pygemv.LOADS_REALIGNED)
        modes = args.modes or (mode,)
        sweep = [c for md in modes for c in candidates(m, k, dtype, md, args.ps, args.threads, args.unrolls)]
        times = {}
        for c in [heur, table, *sweep]:
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
