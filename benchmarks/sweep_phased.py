"""Time phased rows (vector_loads = 3) against the dispatcher (table, heuristic) and cuBLAS on
shapes whose rows do not start 16-byte aligned, and the aligned shape of the same size where
one is given (cold L2, graph replay, medians; every config checked against a float64
reference first). The data behind the heuristic's phased-rows rule (libgemv/src/dispatch.cpp).

    python benchmarks/sweep_phased.py --json sweep.json [--shapes float16:8191x8191,...]
"""
import argparse
import itertools
import json
import sys

import pygemv
from pygemv._cublas import WORKSPACE_BYTES, Cublas
from pygemv.tuning.measure import GpuContext, GpuMeasure
from pygemv import timing

# The issue's misaligned pairs (with their aligned shapes), then the random draws' slow
# misaligned shapes of medium rows, then smaller matrices and long rows that need split K.
SHAPES = ([(d, m, k) for d in ("float32", "float16", "bfloat16")
           for m, k in ((8192, 8192), (8191, 8191), (16384, 8192), (16384, 8193))]
          + [("float16", 4559, 10455), ("bfloat16", 2520, 3735), ("float16", 158044, 1306), ("float32", 5769, 2217),
             ("float16", 4725, 2350), ("float16", 40109, 1446), ("float32", 32361, 863), ("bfloat16", 237313, 340),
             ("float32", 16384, 4097), ("float16", 1000, 3001), ("float16", 300, 5001), ("bfloat16", 2000, 999),
             ("float16", 802, 52649), ("float32", 48, 23714), ("float16", 34, 58900)])


def phased_configs(m: int, k: int, es: int):
    """Row kernels (8..512 lanes a row, 256..1024 threads), phased; the two-pass split for
    matrices of few rows."""
    packs = -(-k * es // 16)
    P = pygemv.LOADS_PHASED
    for p, threads, unroll in itertools.product((8, 32, 128, 512), (256, 512, 1024), (1, 2, 4)):
        if p > threads or (unroll == 4 and threads > 512) or p > max(8, packs // 2):
            continue
        v = "rows_per_warp" if p < 32 else "warp_per_row" if p == 32 else "block_per_row"
        yield pygemv.Config(v, p, threads // p, P, unroll, True, 1)
    if m < 1000:
        for p, split, unroll in itertools.product((64, 256), (4, 8, 16), (2, 4)):
            yield pygemv.Config("splitk_twopass", p, 1, P, unroll, True, split)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--json", default="")
    ap.add_argument("--shapes", default="", help="dtype:MxK,... instead of the default shapes")
    ap.add_argument("--aligned-too", action="store_true", help="phased configs on aligned rows as well")
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
        aligned = (k * pygemv._lib.DTYPE_SIZES[dtype]) % 16 == 0
        for cfg in ([] if aligned and not args.aligned_too else phased_configs(m, k, pygemv._lib.DTYPE_SIZES[dtype])):
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
        row["phased"] = timed
        row["wrong"] = [r for r in results if r["us"] is None]
        gb = m * k * pygemv._lib.DTYPE_SIZES[dtype] / 1e3
        cu, d = row["cublas_us"], row["dispatch"]
        line = (f"{dtype:8s} {m:>7d}x{k:<6d} cuBLAS {cu:8.2f}  dispatch {d['us']:8.2f} ({cu / d['us']:.2f}x, "
                f"{gb / d['us']:.0f} GB/s, {d['config']['variant']} v={d['config']['vector_loads']})")
        if timed:
            c = timed[0]["config"]
            line += (f"  phased {timed[0]['us']:8.2f} ({cu / timed[0]['us']:.2f}x, {gb / timed[0]['us']:.0f} GB/s, "
                     f"{c['variant']} p={c['threads_per_row']} r={c['rows_per_block']} u={c['unroll']} "
                     f"s={c['split_k']})")
        print(line, flush=True)
        out.append(row)
        if args.json:  # after every shape: a run cut short keeps what it measured
            with open(args.json, "w") as f:
                json.dump(out, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
