"""Exhaustive search of the registry's configs for a few shapes: the "oracle" that tuned
dispatch is judged against, and the data behind the heuristic.

Every config comes from the registry (pygemv.variants()), is checked by can_implement,
then against a float64 reference, and only then timed (pygemv.timing, cold L2).

    python tuning/oracle.py --shapes 1024x1024,8192x8192 --dtypes float16 --json out.json
"""
from __future__ import annotations

import argparse
import ctypes
import json
import sys
import time

import pygemv
from pygemv import _lib, bench, timing

SPLITS = (2, 4, 8, 16, 32, 64)


def search_space(m: int, k: int, dtype: str, ws_bytes: int):
    """Configs worth timing, from the registry: blocks of 64..512 threads; vector loads
    whenever the shape allows them (scalar loads only otherwise); the deterministic
    split-K only (the dispatcher never picks atomics), with unroll 2 or 4, x read through
    the cache, at most 2 rows a block and split factors from SPLITS."""
    vec_ok = pygemv.can_implement(pygemv.Config("warp_per_row", 32, 8, True), m, k, dtype)[0]
    for v in pygemv.variants():
        if not v.deterministic:
            continue
        split = v.split_k[1] > 1
        for c in v.configs(split_ks=SPLITS):
            threads = c.threads_per_row * c.rows_per_block
            if not 64 <= threads <= 512 or c.vector_loads != vec_ok:
                continue
            if split and (c.unroll == 1 or c.x_in_smem or c.rows_per_block > 2 or c.threads_per_row < 32):
                continue
            if not pygemv.can_implement(c, m, k, dtype)[0]:
                continue
            if pygemv.workspace_size(c, m, k, dtype) > ws_bytes:
                continue
            yield c


def search(m, k, dtype, *, l2, ws, stream, repeats=5, cublas=None, torch=None, progress=True):
    lib = _lib.load()
    es = _lib.DTYPE_SIZES[dtype]
    moved = (m * k + k + m) * es
    sets = timing.rotation_sets(moved, l2)
    buf = bench.Buffers(m, k, dtype, sets, torch)
    ref = bench.reference(buf)
    code = _lib.DTYPES[dtype]
    args = [_lib.Args(_lib.OP_N, code, m, k, 1.0, 0.0, buf.a(i), k, buf.xp(i), 1, buf.yp(i), 1, ws[0], ws[1],
                      stream, _lib.FLAG_TRUSTED_POINTERS) for i in range(sets)]
    results = []
    chosen = _lib.Config()
    _lib.check(lib.gemv_select_config(_lib.OP_N, code, m, k, buf.a(0), k, buf.xp(0), 1, buf.yp(0), 1, ws[1],
                                      ctypes.byref(chosen)), "select_config")
    heuristic = pygemv.Config.from_c(chosen).as_dict()
    configs = [None] + list(search_space(m, k, dtype, ws[1]))
    t0 = time.time()
    for n, config in enumerate(configs):
        c = None if config is None else ctypes.byref(config.to_c())

        def call(i, s, c=c):
            args[i].stream = s
            _lib.check(lib.gemv_ex(ctypes.byref(args[i]), c), "gemv")

        ok, why = bench.check_pygemv(buf, lambda: call(0, 0), ref)
        if not ok:
            results.append({"config": config and config.as_dict(), "wrong": why})
            continue
        t = timing.time_graph(call, sets, stream, repeats=repeats, target_ms=1.0)
        results.append({"config": heuristic if config is None else config.as_dict(), "us": t.median_us,
                        "heuristic": config is None})
        if progress:
            print(f"\r  {dtype} {m}x{k}: {n + 1}/{len(configs)} configs, {time.time() - t0:.0f}s", end="",
                  file=sys.stderr, flush=True)
    if progress:
        print(file=sys.stderr)
    timed = sorted((r for r in results if "us" in r), key=lambda r: r["us"])
    out = {"dtype": dtype, "m": m, "k": k, "bytes": moved, "best": timed[:8],
           "heuristic_us": next(r["us"] for r in results if r.get("heuristic")), "heuristic": heuristic,
           "wrong": [r for r in results if "wrong" in r], "timed": len(timed)}
    if cublas is not None:
        cublas.set_stream(stream)
        out["cublas_us"] = min(timing.time_graph(
            lambda i, s, e=e: cublas.gemv(e, dtype, m, k, buf.a(i), k, buf.xp(i), buf.yp(i)), sets, stream,
            repeats=repeats).median_us for e in cublas.entry_points(dtype))
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--shapes", required=True, help="MxK,...")
    ap.add_argument("--dtypes", default="float32,float16,bfloat16")
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--json", default="")
    args = ap.parse_args(argv)
    try:
        import torch
    except ImportError:
        torch = None
    from pygemv._cublas import WORKSPACE_BYTES, Cublas
    props = bench.device_props()
    ws_buf = pygemv.empty((pygemv.WORKSPACE_RECOMMENDED_BYTES // 4,), "float32")
    cws = pygemv.empty((WORKSPACE_BYTES // 4,), "float32")
    cublas = Cublas(cws.ptr)
    stream = pygemv.Stream()
    out = []
    for m, k in bench.parse_shapes(args.shapes):
        for dtype in args.dtypes.split(","):
            r = search(m, k, dtype, l2=props["l2_bytes"], ws=(ws_buf.ptr, pygemv.WORKSPACE_RECOMMENDED_BYTES),
                       stream=stream.handle, repeats=args.repeats, cublas=cublas, torch=torch)
            out.append(r)
            b = r["best"][0]
            c = b["config"]
            print(f"{dtype:<8} {m:>7}x{k:<6} best {b['us']:8.2f} us  heuristic {r['heuristic_us']:8.2f}  "
                  f"cuBLAS {r.get('cublas_us', float('nan')):8.2f}  {c['variant']} p={c['threads_per_row']} "
                  f"r={c['rows_per_block']} v={int(c['vector_loads'])} u={c['unroll']} s={int(c['x_in_smem'])} "
                  f"k={c['split_k']}  ({r['timed']} timed, {len(r['wrong'])} wrong)", flush=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"device": props, "results": out}, f, indent=1)
    return 0 if not any(r["wrong"] for r in out) else 1


if __name__ == "__main__":
    sys.exit(main())
