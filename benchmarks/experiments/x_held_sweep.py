"""q_mma_x_held against the dispatcher on int4 g128 (fp16, integer zeros by default), one process,
with the tuner's instrument (tuning/measure.py: cold L2, graph replay, median; each config
checked against the contract's bound first). For each shape it times the dispatcher's
choice, q_mma in place at its heuristic's K warps, and q_mma_x_held around the skeleton's
rule (benchmarks/NOTES.md section 33): kw warps a block, S steps a chunk, split_k so that
every warp takes one chunk, and tiles a block so that the grid is about 4 blocks an SM.
    python benchmarks/experiments/x_held_sweep.py [--json out.json] [--format bits,group,zeros,dtype] [MxK ...]
(default format 4,128,int,float16; e.g. 4,128,float,bfloat16 for tinygemm's).
"""
import json
import math
import sys

import pygemv
from pygemv.tuning.measure import GpuContext, GpuMeasure

SHAPES = ["4096x4096", "8192x8192", "14336x4096", "4096x14336", "28672x8192", "8192x28672", "128256x4096",
          "7392x8192", "11008x10944", "5008x7424", "97185x3649", "48619x3903", "2048x4096", "16384x1024"]


def pow2_near(v: float) -> list[int]:
    lo = 1 << max(0, int(math.floor(math.log2(max(v, 1)))))
    return sorted({min(64, lo), min(64, 2 * lo)})


def candidates(m: int, k: int, sms: int, bits: int = 4) -> list[pygemv.Config]:
    steps, tiles = -(-k // (512 // bits)), -(-m // 16)  # a step: 128 columns of int4, 64 of int8
    out = []
    for kw in (4, 8):
        for s in (1, 2):
            splits = max(1, min(1024, -(-steps // (kw * s))))
            for split in sorted({splits, max(1, splits // 2)}):
                row_blocks = max(1, -(-4 * sms // split))
                for tpb in pow2_near(tiles / row_blocks):
                    out.append(pygemv.Config("q_mma_x_held", 32 * kw, tpb, pygemv.LOADS_ALIGNED, s, False, split))
    return out


def main(argv):
    out_json, fmt = None, ("4", "128", "int", "float16")
    if argv and argv[0] == "--json":
        out_json, argv = argv[1], argv[2:]
    if argv and argv[0] == "--format":
        fmt, argv = tuple(argv[1].split(",")), argv[2:]
    weights, dtype = (int(fmt[0]), int(fmt[1]) or None, fmt[2]), fmt[3]
    shapes = argv or SHAPES
    ctx = GpuContext.create()
    sms = pygemv.device_properties().multiprocessor_count if hasattr(pygemv, "device_properties") else 132
    rows = []
    for s in shapes:
        m, k = (int(v) for v in s.split("x"))
        meas = GpuMeasure(m, k, dtype, ctx, weights=weights, repeats=15, target_ms=2.0)
        chosen = meas.dispatch()
        configs = [("dispatch", chosen)] + [("x_held", c) for c in candidates(m, k, sms, weights[0])]
        best = None
        for label, c in configs:
            ok, why = meas.legal(c)
            if ok:
                ok, why = meas.check(c)
            if not ok:
                print(f"{s} {label} {c}: not timed ({why})", flush=True)
                continue
            us = meas.time_us(c)
            rows.append({"shape": s, "label": label, "config": str(c), "us": us})
            if label == "x_held" and (best is None or us < best[0]):
                best = (us, c)
            print(f"{s} {label} {c}: {us:.2f} us", flush=True)
        d = next(r["us"] for r in rows if r["shape"] == s and r["label"] == "dispatch")
        if best:
            print(f"SUMMARY {s}: dispatch {d:.2f} us, best x_held {best[0]:.2f} us ({d / best[0]:.3f}x) {best[1]}",
                  flush=True)
    if out_json:
        with open(out_json, "w") as f:
            json.dump(rows, f, indent=1)


if __name__ == "__main__":
    main(sys.argv[1:])
