"""Time the row stream's configs against the dispatcher (table, heuristic) and cuBLAS on
shapes where rows are short or do not start 16-byte aligned (cold L2, graph replay,
medians; every config checked against a float64 reference first). The data behind the
heuristic's row-stream rule (libgemv/src/dispatch.cpp).

    python benchmarks/sweep_row_stream.py --json sweep.json [--shapes float16:158044x1306,...]
"""
import argparse
import itertools
import json
import sys

import pygemv
from pygemv import _lib
from pygemv._cublas import WORKSPACE_BYTES, Cublas
from pygemv.tuning.measure import GpuContext, GpuMeasure
from pygemv import timing

# The slowest shapes of random seed 1 (0.3.0), then a K ladder of 64 MiB fp16/fp32 matrices
# with rows that are not 16-byte multiples, then aligned short rows of the suite.
SHAPES = ([("float16", 158044, 1306), ("float16", 12141, 35), ("float32", 239193, 106), ("float32", 32361, 863),
           ("float16", 4972633, 12), ("bfloat16", 93, 105), ("float16", 40109, 1446), ("float16", 48313, 34),
           ("bfloat16", 146, 85), ("float32", 5769, 2217), ("float16", 4725, 2350), ("bfloat16", 237313, 340)]
          + [("float16", (32 << 20) // k, k) for k in (9, 23, 57, 131, 257, 515, 1029, 2053, 4099, 8191)]
          + [("float32", (16 << 20) // k, k) for k in (5, 23, 131, 515, 2053)]
          + [("float16", 1048576, 32), ("float16", 131072, 128), ("float16", 65536, 256), ("float32", 1048576, 16)])


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--json", default="")
    ap.add_argument("--shapes", default="", help="dtype:MxK,... instead of the default shapes")
    args = ap.parse_args()
    shapes = [(d, *(int(v) for v in s.split("x"))) for d, s in (t.split(":") for t in args.shapes.split(","))] \
        if args.shapes else SHAPES
    ctx = GpuContext.create()
    cws = pygemv.empty((WORKSPACE_BYTES // 4,), "float32")
    cublas = Cublas(cws.ptr)
    cublas.set_stream(ctx.stream)
    out = []
    for dtype, m, k in shapes:
        meas = GpuMeasure(m, k, dtype, ctx, repeats=7, target_ms=0.5)
        buf = meas.buf
        cb = {}
        for entry in cublas.entry_points(dtype, 1):
            def call(i, s, entry=entry):
                cublas.gemv(entry, dtype, m, k, buf.a(i), k, buf.xp(i), buf.yp(i))
            cb[entry] = timing.time_graph(call, meas.sets, ctx.stream, repeats=7, target_ms=0.5).median_us
        row = {"dtype": dtype, "m": m, "k": k, "cublas_us": min(cb.values()), "cublas": cb}
        for label, cfg in (("dispatch", meas.dispatch()), ("heuristic", meas.heuristic())):
            row[label] = {"us": meas.time_us(cfg), "config": cfg.as_dict()}
        results = []
        for threads, unroll, p in itertools.product((64, 128, 256, 512), (1, 2, 4), (1, 4, 16, 32)):
            if p > threads or (unroll == 4 and threads > 512):
                continue
            cfg = pygemv.Config("row_stream", p, threads // p, 2, unroll, True, 1)
            if not meas.legal(cfg)[0]:
                continue
            ok, why = meas.check(cfg)
            if not ok:
                print(f"WRONG {dtype} {m}x{k} {cfg}: {why}", flush=True)
                results.append({"us": None, "config": cfg.as_dict(), "wrong": why})
                continue
            results.append({"us": meas.time_us(cfg), "config": cfg.as_dict()})
        meas.close()
        timed = sorted((r for r in results if r["us"]), key=lambda r: r["us"])
        row["stream"] = timed
        row["wrong"] = [r for r in results if r["us"] is None]
        best = timed[0] if timed else None
        cu = row["cublas_us"]
        line = (f"{dtype:8s} {m:>8d}x{k:<6d} cuBLAS {cu:8.2f}  dispatch {row['dispatch']['us']:8.2f} "
                f"({cu / row['dispatch']['us']:.2f}x, {row['dispatch']['config']['variant']})")
        if best:
            c = best["config"]
            line += (f"  stream {best['us']:8.2f} ({cu / best['us']:.2f}x, t={c['threads_per_row'] * c['rows_per_block']}"
                     f" u={c['unroll']} p={c['threads_per_row']})")
        print(line, flush=True)
        out.append(row)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(out, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
