"""Every q_rows config family (and q_mma's, for int4 fp16 without float zeros) on the
quantized benchmark's shapes, beside the dispatcher's choice: what the heuristic
(dispatch.cpp, heuristic_quantized) is fit to. A q_mma entry reads ("mma", warps, split, threads).

    python benchmarks/sweep_quantized.py --json sweep.json [--shapes 8192x8192,...] [--formats int4-g128]
"""
from __future__ import annotations

import argparse
import ctypes
import itertools
import json
import sys

import torch

import pygemv
from pygemv import _lib, timing
from pygemv.bench import device_props, parse_shapes
from pygemv.bench_quantized import FORMATS, SHAPES


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--shapes", default="")
    ap.add_argument("--formats", default="int4-g128,int8-row")
    ap.add_argument("--json", default="")
    args = ap.parse_args()
    lib = _lib.load()
    l2 = device_props()["l2_bytes"]
    s = ctypes.c_void_p()
    _lib.check(lib.gemv_stream_create(ctypes.byref(s)), "stream")
    stream = s.value
    ws_t = torch.empty(_lib.WORKSPACE_RECOMMENDED_BYTES // 4 * 4, dtype=torch.float32, device="cuda")
    ws = (ws_t.data_ptr(), ws_t.numel() * 4)
    out = []
    for (m, k), fmt in itertools.product(parse_shapes(args.shapes) or SHAPES,
                                         [f for f in FORMATS if f[0] in args.formats.split(",")]):
        name, bits, gs, zp, dtype = fmt
        dt = torch.float16 if dtype == "float16" else torch.bfloat16
        W = torch.randn(m, k, dtype=dt, device="cuda")
        Q0 = pygemv.quantize(W, bits, gs, zp)
        sets = timing.rotation_sets(Q0.nbytes, l2)
        Qs = [Q0] + [pygemv.quantize(W, bits, gs, zp) for _ in range(sets - 1)]
        X = torch.randn(sets, k, dtype=dt, device="cuda")
        Y = torch.empty(sets, m, dtype=dt, device="cuda")
        torch.cuda.synchronize()
        args_ = [_lib.Args(0, _lib.DTYPES[dtype], m, k, 1.0, 0.0, None, k, X[i].data_ptr(), 1, Y[i].data_ptr(), 1,
                           ws[0], ws[1], stream, _lib.FLAG_TRUSTED_POINTERS, 1, 0, 0, 0,
                           ctypes.addressof(Qs[i].descriptor)) for i in range(sets)]

        def time_config(c):
            cc = None if c is None else c.to_c()

            def call(i, st):
                args_[i].stream = st
                r = lib.gemv_ex(ctypes.byref(args_[i]), None if cc is None else ctypes.byref(cc))
                if r:
                    _lib.check(r, "gemv")
            return timing.time_graph(call, sets, stream, repeats=7).median_us

        best = {}
        auto = time_config(None)
        for p, unroll, split, threads in itertools.product((4, 8, 16, 32), (2, 4), (1, 2, 4, 8), (256, 512)):
            if unroll == 4 and threads > 512:
                continue
            c = pygemv.Config("q_rows", p, threads // p, 1, unroll, True, split)
            try:
                best[(p, unroll, split, threads)] = time_config(c)
            except pygemv.GemvError:
                continue
        if bits == 4 and dtype == "float16" and zp != "float":  # the tensor-core operation too
            for warps, split in itertools.product((1, 2, 4, 8), (1, 2, 4, 8, 16, 32)):
                c = pygemv.Config("q_mma", 32, warps, 1, 1, True, split)
                try:
                    best[("mma", warps, split, 32 * warps)] = time_config(c)
                except pygemv.GemvError:
                    continue
        top = sorted(best.items(), key=lambda kv: kv[1])[:5]
        row = {"format": name, "m": m, "k": k, "weight_bytes": Q0.nbytes, "auto_us": auto,
               "best": [{"p": c[0], "unroll": c[1], "split": c[2], "threads": c[3], "us": t} for c, t in top],
               "all": [[*c, t] for c, t in best.items()]}
        out.append(row)
        b = top[0]
        print(f"{name:16} {m:7} {k:6} auto {auto:8.2f} us ({Q0.nbytes / auto / 1e6:.2f} TB/s)  best {b[1]:8.2f} us "
              f"({Q0.nbytes / b[1] / 1e6:.2f} TB/s) p={b[0][0]} u={b[0][1]} s={b[0][2]} t={b[0][3]}", flush=True)
        del Qs, X, Y
        torch.cuda.empty_cache()
    if args.json:
        with open(args.json, "w") as f:
            json.dump(out, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
