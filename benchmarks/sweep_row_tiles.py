"""Row tiles (rows_in_registers) against the other op N operations on few long rows, with
cuBLAS in the same run: the heuristic (tuned table off), the shipped table's choice, and a
grid of row-tile configs around the heuristic's, each checked then timed with the tuner's
instrument (cold L2, graph replay, median).

    python benchmarks/sweep_row_tiles.py --json sweep.json
    python benchmarks/sweep_row_tiles.py --shapes float32:48x23714,bfloat16:162x1640311
"""
from __future__ import annotations

import argparse
import json
import os
import sys

DEFAULT = ("float32:48x23714,float32:16x72971,float16:2x1241717,bfloat16:9x215081,float32:4x435535,"
           "float32:10x115604,float16:6x235089,float32:15x8929542,float32:64x1453830,bfloat16:162x1640311,"
           "bfloat16:302x674519,bfloat16:167x1210399,float16:1x65536,float16:64x65536,float32:256x65536,"
           "float16:512x32768,float16:1024x16384")


def tile_grid(m: int, k: int, base) -> list:
    """Row-tile configs near base: rows a tile, threads, unroll, and splits x 1/4 .. 4."""
    import pygemv
    out = []
    rows = [r for r in (1, 2, 4) if r <= max(1, 2 * m - 1)][-2:]
    for r in rows:
        for p in (32, 64, 128, 256):
            for u in (1, 2, 4):
                if r * u != 4 and r * u != 2 * r:  # 4 packs in flight, or 2 slots of r rows
                    continue
                for f in (0.25, 1, 4):
                    s = max(1, min(1024, round(base.split_k * f * (base.threads_per_row * base.unroll) / (p * u))))
                    out.append(pygemv.Config("rows_in_registers", p, r, base.vector_loads, u, False, s))
    return list(dict.fromkeys(out))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--shapes", default=DEFAULT, help="dtype:MxK,...")
    ap.add_argument("--json", default="")
    ap.add_argument("--configs", default="", help="more configs to time, variant:p:rows:loads:unroll:smem:split,...")
    ap.add_argument("--verbose", action="store_true", help="every config's time")
    args = ap.parse_args(argv)
    os.environ["GEMV_TABLE"] = "off"  # before the first dispatch: the heuristic decides
    import pygemv
    from pygemv import _lib, bench
    from pygemv._cublas import Cublas
    from pygemv.tuning.measure import GpuContext, GpuMeasure

    ctx = GpuContext.create()
    ws = pygemv.empty((1 << 22,), "float32")
    cublas = Cublas(ws.ptr)
    table = os.path.join(os.path.dirname(pygemv.__file__), "tables")
    shipped = [os.path.join(table, f) for f in os.listdir(table)] if os.path.isdir(table) else []
    lib = _lib.load()
    rows = []
    for item in args.shapes.split(","):
        dtype, shape = item.split(":")
        m, k = (int(v) for v in shape.split("x"))
        try:
            peer = bench.bench_case(m, k, dtype, l2=ctx.l2_bytes, ws=(ctx.workspace, ctx.workspace_bytes),
                                    cublas=cublas, torch=ctx.torch, stream=ctx.stream, repeats=15)
        except AssertionError as e:  # the heuristic's config is wrong: time the peer through the sweep's rows
            print(f"{dtype} {m}x{k}: {e}", flush=True)
            peer = {"cublas": {"median_us": float("nan")}}
        meas = GpuMeasure(m, k, dtype, ctx, repeats=15, target_ms=2.0)
        heur = meas.heuristic()
        tabled = None
        if shipped:
            _lib.check(lib.gemv_load_table(shipped[0].encode()), "gemv_load_table")
            tabled = meas.dispatch()
            _lib.check(lib.gemv_load_table(None), "gemv_load_table")
        base = heur if heur.variant == "rows_in_registers" else pygemv.Config(
            "rows_in_registers", 128, 4, heur.vector_loads if heur.vector_loads in (1, 2) else 2, 1, False, 64)
        extra = [pygemv.Config(*f.split(":")[:1], *(int(v) for v in f.split(":")[1:])) for f in args.configs.split(",") if f]
        configs = [("heuristic", heur)] + ([("table", tabled)] if tabled else []) + [(str(c), c) for c in extra + tile_grid(m, k, base)]
        res = []
        for label, c in configs:
            ok, why = meas.legal(c)
            if ok:
                ok, why = meas.check(c)
            t = meas.time_us(c) if ok else None
            res.append({"label": label, "config": c.as_dict(), "us": t, "why": "" if ok else why})
        timed = [r for r in res if r["us"]]
        best = min(timed, key=lambda r: r["us"]) if timed else {"us": float("nan"), "label": "none"}
        cb = peer["cublas"]["median_us"]
        line = (f"{dtype:9} {m:>6}x{k:<8} cuBLAS {cb:7.2f}  heuristic {res[0]['us'] or float('nan'):7.2f} "
                f"({cb / (res[0]['us'] or 1):.2f}x)  table {(res[1]['us'] if tabled else float('nan')) or float('nan'):7.2f}  "
                f"best tile {best['us']:7.2f} ({cb / best['us']:.2f}x) {best['label']}  heur={heur}")
        print(line, flush=True)
        if args.verbose:
            for r in res:
                print(f"    {r['us'] or float('nan'):8.2f} {r['label']} {r['why']}", flush=True)
        rows.append({"dtype": dtype, "m": m, "k": k, "cublas_us": cb, "results": res, "best": best, "heuristic": str(heur)})
        meas.close()
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"run": bench.run_info(), "shapes": rows}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
