"""The loop the row-config sweeps share (sweep_row_stream.py, sweep_phased.py): for each
(dtype, M, K), cuBLAS (its best GEMV entry point), the dispatcher (table, heuristic) and every
candidate config on the same buffers (cold L2, graph replay, medians); each candidate is
checked against a float64 reference before it is timed, and a wrong one is reported."""
import argparse
import json

import pygemv
from pygemv import timing
from pygemv._cublas import WORKSPACE_BYTES, Cublas
from pygemv.tuning.measure import GpuContext, GpuMeasure


def parse_args(doc: str, extra=None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--json", default="", help="write every shape's results here (after each shape)")
    ap.add_argument("--shapes", default="", help="dtype:MxK,... instead of the default shapes")
    if extra:
        extra(ap)
    return ap.parse_args()


def shapes_of(arg: str, default):
    return [(d, *(int(v) for v in s.split("x"))) for d, s in (t.split(":") for t in arg.split(","))] if arg else default


def sweep(shapes, candidates, key: str, json_path: str = "") -> list[dict]:
    """candidates(dtype, m, k) -> configs to time. Prints a line a shape: cuBLAS, dispatch and
    the fastest candidate, with GB/s; returns (and writes) every timing."""
    ctx = GpuContext.create()
    cws = pygemv.empty((WORKSPACE_BYTES // 4,), "float32")
    cublas = Cublas(cws.ptr)
    cublas.set_stream(ctx.stream)
    out = []
    for dtype, m, k in shapes:
        meas = GpuMeasure(m, k, dtype, ctx, repeats=7, target_ms=0.5)
        buf = meas.case.buf
        cb = {}
        for entry in cublas.entry_points(dtype, 1):
            def call(i, s, entry=entry):
                cublas.gemv(entry, dtype, m, k, buf.a(i), k, buf.xp(i), buf.yp(i))
            cb[entry] = timing.time_graph(call, meas.sets, ctx.stream, repeats=7, target_ms=0.5).median_us
        row = {"dtype": dtype, "m": m, "k": k, "cublas_us": min(cb.values()), "cublas": cb}
        for label, cfg in (("dispatch", meas.dispatch()), ("heuristic", meas.heuristic())):
            row[label] = {"us": meas.time_us(cfg), "config": cfg.as_dict()}
        results = []
        for cfg in candidates(dtype, m, k):
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
        row[key] = timed
        row["wrong"] = [r for r in results if r["us"] is None]
        kb = m * k * pygemv._lib.DTYPE_SIZES[dtype] / 1e3
        cu, d = row["cublas_us"], row["dispatch"]
        line = (f"{dtype:8s} {m:>8d}x{k:<6d} cuBLAS {cu:8.2f}  dispatch {d['us']:8.2f} ({cu / d['us']:.2f}x, "
                f"{kb / d['us']:.0f} GB/s, {d['config']['variant']} v={d['config']['vector_loads']})")
        if timed:
            c = timed[0]["config"]
            line += (f"  {key} {timed[0]['us']:8.2f} ({cu / timed[0]['us']:.2f}x, {kb / timed[0]['us']:.0f} GB/s, "
                     f"{c['variant']} p={c['threads_per_row']} r={c['rows_per_block']} u={c['unroll']} s={c['split_k']})")
        print(line, flush=True)
        out.append(row)
        if json_path:  # after every shape: a run cut short keeps what it measured
            with open(json_path, "w") as f:
                json.dump(out, f, indent=1)
    return out
