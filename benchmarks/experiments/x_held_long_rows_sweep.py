"""int4 of long rows on few tiles (NOTES.md section 52): the dispatch against x held in two
forms and q_mma_rounds, with the tuner's instrument (cold L2, graph replay, median of 9; each
config checked first). Needs pygemv installed.
  A  x held, 4 warps of 2 steps, slices of 8 steps, tiles over 4 blocks an SM (the rule from 2048 rows)
  B  x held, 8 warps of 1 step, slices of 8 steps, tiles over 3 blocks an SM (the smaller-matrix rule)
  C  x held, 8 warps of 2 steps, slices of 16 steps, tiles over 2 blocks an SM
  D, E  q_mma_rounds at 1 and 2 steps a round (K unsplit)
    python3 -P benchmarks/experiments/x_held_long_rows_sweep.py 2008x8704,640x28672 128:float:bfloat16,32:int:float16
"""
import math
import sys

import pygemv
from pygemv.tuning.measure import GpuContext, GpuMeasure

SMS = 132


def sweep(shapes: str, formats: str, configs) -> None:
    """Print a line a shape and format: the dispatch's time and config, then each of configs(m, k)
    (a dict of name -> pygemv.Config; n/a where illegal or wrong). rounds_warps_sweep.py uses it too."""
    ctx = GpuContext.create()
    fmts = [(4, int(g) or None, z, dt) for g, z, dt in (f.split(":") for f in formats.split(","))]  # group 0: one a row
    for m, k in (tuple(map(int, s.split("x"))) for s in shapes.split(",")):
        cfgs = configs(m, k)
        for bits, g, z, dt in fmts:
            meas = GpuMeasure(m, k, dt, ctx, weights=(bits, g, z), repeats=9, target_ms=1.0)
            d = meas.dispatch()
            out = [f"{m:6d}x{k:<6d} t/SM {(m + 15) // 16 / SMS:5.2f} {dt:8s} g{g or 0:<3d} {z:5s} "
                   f"disp {meas.time_us(d):6.2f} ({d.variant} p={d.threads_per_row} u={d.unroll})"]
            for name, c in cfgs.items():
                ok, _ = meas.legal(c)
                if ok:
                    ok, _ = meas.check(c)
                out.append(f"{name} {meas.time_us(c):6.2f}" if ok else f"{name}   n/a")
            print(" | ".join(out), flush=True)
            meas.close()


def forms(m: int, k: int) -> dict:
    """Configs A-E of the docstring for an m x k problem."""
    tiles, steps = (m + 15) // 16, (k + 127) // 128
    s8, s16 = max(1, math.ceil(steps / 8)), max(1, math.ceil(steps / 16))
    return {"A xh128u2/8": pygemv.Config("q_mma_x_held", 128, min(64, max(1, math.ceil(tiles / max(1, 4 * SMS // s8)))), 1, 2, 0, s8),
            "B xh256u1/8": pygemv.Config("q_mma_x_held", 256, min(64, max(1, math.ceil(tiles * s8 / (3 * SMS)))), 1, 1, 0, s8),
            "C xh256u2/16": pygemv.Config("q_mma_x_held", 256, min(64, max(1, math.ceil(tiles * s16 / (2 * SMS)))), 1, 2, 0, s16),
            "D rounds u1": pygemv.Config("q_mma_rounds", 256, 1, 1, 1, 0, 1),
            "E rounds u2": pygemv.Config("q_mma_rounds", 256, 1, 1, 2, 0, 1)}


if __name__ == "__main__":
    sweep(sys.argv[1], sys.argv[2], forms)
