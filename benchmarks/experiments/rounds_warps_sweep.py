"""q_mma_rounds' warps a tile on short int4 rows (NOTES.md section 54): the dispatch against
rounds at 1, 2, 4 and 8 warps a block and 1 or 2 steps a round, with the tuner's instrument
(cold L2, graph replay, median of 9; each config checked first). Needs pygemv installed.
    python3 -P benchmarks/experiments/rounds_warps_sweep.py 9462x96,16384x255 128:float:bfloat16,32:int:float16
"""
import sys

import pygemv
from pygemv.tuning.measure import GpuContext, GpuMeasure


def main(shapes: str, formats: str) -> None:
    ctx = GpuContext.create()
    fmts = [(4, int(g) or None, z, dt) for g, z, dt in (f.split(":") for f in formats.split(","))]  # group 0: one a row
    cfgs = {f"w{p // 32}u{u}": pygemv.Config("q_mma_rounds", p, 1, 1, u, 0, 1) for p in (32, 64, 128, 256) for u in (1, 2)}
    for m, k in (tuple(map(int, s.split("x"))) for s in shapes.split(",")):
        for bits, g, z, dt in fmts:
            meas = GpuMeasure(m, k, dt, ctx, weights=(bits, g, z), repeats=9, target_ms=1.0)
            d = meas.dispatch()
            out = [f"{m:6d}x{k:<5d} t/SM {(m + 15) // 16 / 132:5.2f} {dt:8s} g{g or 0:<3d} {z:5s} "
                   f"disp {meas.time_us(d):6.2f} ({d.variant} p={d.threads_per_row} u={d.unroll})"]
            for name, c in cfgs.items():
                ok, _ = meas.legal(c)
                if ok:
                    ok, _ = meas.check(c)
                out.append(f"{name} {meas.time_us(c):6.2f}" if ok else f"{name}   n/a")
            print(" | ".join(out), flush=True)
            meas.close()


if __name__ == "__main__":
    main(*sys.argv[1:3])
