"""q_mma_x_held with more code bytes in flight (experiment, x-held-prefetch.patch): the
mode comes from GEMV_XHELD_PF="mode,depth" (0: one tile ahead in registers, as shipped;
1: plus an L2 prefetch of the codes `depth` tiles ahead; 2: codes through
a per-warp cp.async ring of `depth` tiles, scales one ahead; 3: as 2, scales L2-prefetched;
4, 5: timing only, codes read as if each tile-step's 1 KB were contiguous, step-major or
tile-major, so results are wrong and not checked; 6: timing only, no scale loads in the
tile walk; 7: 5 and 6; 8: 7 with no dequantization or MMA, the skeleton's floor). Times the
dispatcher's choice and x_held configs around it (tuner's instrument: cold L2, graph replay,
median; each config checked against the contract's bound first), one JSON line each.
    GEMV_XHELD_PF=2,4 python x_held_prefetch.py --format 4,128,int,float16 MxK ...
"""
import json
import os
import sys

import pygemv
from pygemv.tuning.measure import GpuContext, GpuMeasure


def candidates(m, k, sms):
    steps, tiles = -(-k // 128), -(-m // 16)
    out = set()
    for kw in (4, 8):
        for s in (1, 2):
            splits = max(1, min(1024, -(-steps // (kw * s))))
            for split in sorted({splits, max(1, splits // 2)}):
                per = max(1, -(-tiles // max(1, -(-4 * sms // split))))
                for tpb in sorted({per, min(64, 2 * per), max(1, per // 2)}):
                    out.add(pygemv.Config("q_mma_x_held", 32 * kw, tpb, pygemv.LOADS_ALIGNED, s, False, split))
    return sorted(out, key=str)


def main(argv):
    fmt = ("4", "128", "int", "float16")
    if argv and argv[0] == "--format":
        fmt, argv = tuple(argv[1].split(",")), argv[2:]
    weights, dtype = (int(fmt[0]), int(fmt[1]) or None, fmt[2]), fmt[3]
    # the patch's mode, or the shipped first-wave prefetch's tiles (GEMV_Q_PREFETCH, NOTES 35)
    mode = os.environ.get("GEMV_XHELD_PF") or "q" + os.environ.get("GEMV_Q_PREFETCH", "1")
    ctx = GpuContext.create()
    for s in argv:
        m, k = (int(v) for v in s.split("x"))
        meas = GpuMeasure(m, k, dtype, ctx, weights=weights, repeats=15, target_ms=2.0)
        for label, c in [("dispatch", meas.dispatch())] + [("x_held", c) for c in candidates(m, k, 132)]:
            ok, why = meas.legal(c)
            if ok and mode.split(",")[0] not in ("4", "5", "6", "7", "8"):  # timing only
                ok, why = meas.check(c)
            us = meas.time_us(c) if ok else None
            print(json.dumps({"mode": mode, "format": ",".join(fmt), "shape": s, "label": label,
                              "config": str(c), "us": us, "why": None if ok else why}), flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
