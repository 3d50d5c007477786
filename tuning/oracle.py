"""Exhaustive search of the registry's configs for a few shapes: the "oracle" that tuned
dispatch is judged against, and the data behind the heuristic.

Every config comes from the registry (pygemv.variants()), is checked by can_implement,
then against a float64 reference, and only then timed (pygemv.timing, cold L2).

    python -m pygemv.tuning.oracle --shapes 1024x1024,8192x8192 --dtypes float16 --json out.json
"""
from __future__ import annotations

import argparse
import json
import sys
import time

import pygemv
from pygemv import bench, timing
from pygemv.tuning.measure import GpuContext, GpuMeasure

SPLITS = (2, 4, 8, 16, 32, 64)


def search_space(m: int, k: int, dtype: str, ws_bytes: int):
    """Configs worth timing, from the registry: blocks of 64..512 threads; 16-byte loads
    (aligned where the rows allow, else realigned, phased or 8-byte); the deterministic
    split-K only (the dispatcher never picks atomics), with unroll 2 or 4, x read through
    the cache, at most 2 rows a block and split factors from SPLITS."""
    vec_ok = pygemv.can_implement(pygemv.Config("warp_per_row", 32, 8, pygemv.LOADS_ALIGNED), m, k, dtype)[0]
    loads = ({pygemv.LOADS_ALIGNED} if vec_ok else
             {pygemv.LOADS_REALIGNED, pygemv.LOADS_PHASED, pygemv.LOADS_PHASED_X_COPIES})
    if not vec_ok and pygemv.can_implement(pygemv.Config("warp_per_row", 32, 8, pygemv.LOADS_ALIGNED8), m, k, dtype)[0]:
        loads.add(pygemv.LOADS_ALIGNED8)  # rows 8-byte aligned
    for v in pygemv.variants("N"):
        if not v.deterministic:
            continue
        split = v.split_k[1] > 1
        for c in v.configs(split_ks=SPLITS):
            threads = c.threads_per_row * c.rows_per_block
            if not 64 <= threads <= 512 or c.vector_loads not in loads:
                continue
            if split and (c.unroll == 1 or c.x_in_smem or c.rows_per_block > 2 or c.threads_per_row < 32):
                continue
            if not pygemv.can_implement(c, m, k, dtype)[0]:
                continue
            if pygemv.workspace_size(c, m, k, dtype) > ws_bytes:
                continue
            yield c


def search(measure: GpuMeasure, configs, *, progress: bool = True) -> tuple[list[tuple[float, pygemv.Config]], list]:
    """Check then time every config; returns (time, config) fastest first, and the wrong ones."""
    timed, wrong = [], []
    configs = list(configs)
    t0 = time.time()
    for n, c in enumerate(configs):
        ok, why = measure.check(c)
        if not ok:
            wrong.append({"config": c.as_dict(), "why": why})
            continue
        timed.append((measure.time_us(c), c))
        if progress:
            print(f"\r  {measure.dtype} {measure.m}x{measure.k}: {n + 1}/{len(configs)} configs, "
                  f"{time.time() - t0:.0f}s", end="", file=sys.stderr, flush=True)
    if progress:
        print(file=sys.stderr)
    return sorted(timed, key=lambda tc: tc[0]), wrong


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--shapes", required=True, help="MxK,...")
    ap.add_argument("--dtypes", default="float32,float16,bfloat16")
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--json", default="")
    args = ap.parse_args(argv)
    from pygemv._cublas import WORKSPACE_BYTES, Cublas
    ctx = GpuContext.create()
    cws = pygemv.empty((WORKSPACE_BYTES // 4,), "float32")
    cublas = Cublas(cws.ptr)
    cublas.set_stream(ctx.stream)
    out = []
    for m, k in bench.parse_shapes(args.shapes):
        for dtype in args.dtypes.split(","):
            measure = GpuMeasure(m, k, dtype, ctx, repeats=args.repeats)
            best, wrong = search(measure, search_space(m, k, dtype, ctx.workspace_bytes))
            heuristic = measure.heuristic()
            h_us = measure.time_us(heuristic)
            buf = measure.case.buf
            cublas_us = min(timing.time_graph(
                lambda i, s, e=e: cublas.gemv(e, dtype, m, k, buf.a(i), k, buf.xp(i), buf.yp(i)), measure.sets,
                ctx.stream, repeats=args.repeats).median_us for e in cublas.entry_points(dtype))
            measure.close()
            out.append({"dtype": dtype, "m": m, "k": k, "best": [{"us": t, "config": c.as_dict()} for t, c in best[:8]],
                        "heuristic": heuristic.as_dict(), "heuristic_us": h_us, "cublas_us": cublas_us,
                        "timed": len(best), "wrong": wrong})
            t, c = best[0]
            print(f"{dtype:<8} {m:>7}x{k:<6} best {t:8.2f} us  heuristic {h_us:8.2f}  cuBLAS {cublas_us:8.2f}  "
                  f"{c.variant} p={c.threads_per_row} r={c.rows_per_block} v={int(c.vector_loads)} u={c.unroll} "
                  f"s={int(c.x_in_smem)} k={c.split_k}  ({len(best)} timed, {len(wrong)} wrong)", flush=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"device": bench.device_props(pygemv.current_device()), "results": out}, f, indent=1)
    return 0 if not any(r["wrong"] for r in out) else 1


if __name__ == "__main__":
    sys.exit(main())
