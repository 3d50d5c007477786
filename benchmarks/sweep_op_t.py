"""Time op T configs of the registry on a few shapes (cold L2, graph replay, medians), to
fit the op T heuristic. Prints the best configs per shape and the heuristic's.

    python -m pygemv.bench is the peer comparison; this is the config search:
    python benchmarks/sweep_op_t.py --json sweep.json
"""
import argparse
import ctypes
import itertools
import json
import sys
from dataclasses import asdict

import pygemv
from pygemv import _lib, bench, timing

SHAPES = [(256, 256), (512, 512), (1024, 1024), (2048, 2048), (4096, 4096), (8192, 8192), (16384, 16384),
          (128256, 4096), (256, 65536), (65536, 256), (131072, 128)]


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--dtypes", default="float16,float32")
    ap.add_argument("--json", default="")
    ap.add_argument("--shapes", default="", help="MxK,... instead of the default shapes")
    args = ap.parse_args()
    lib = _lib.load()
    l2 = bench.device_props()["l2_bytes"]
    ws = pygemv.empty((pygemv.WORKSPACE_RECOMMENDED_BYTES // 4,), "float32")
    s = pygemv.Stream()
    out = []
    for dtype in args.dtypes.split(","):
        shapes = [tuple(int(v) for v in s.split("x")) for s in args.shapes.split(",")] if args.shapes else SHAPES
        for m, k in shapes:
            es = _lib.DTYPE_SIZES[dtype]
            sets = timing.rotation_sets((m * k + m + k) * es, l2)
            buf = bench.Buffers(m, k, dtype, sets, None, nx=m, ny=k)
            argv = [_lib.Args(_lib.OP_T, _lib.DTYPES[dtype], m, k, 1.0, 0.0, buf.a(i), k, buf.xp(i), 1, buf.yp(i), 1,
                              ws.ptr, pygemv.WORKSPACE_RECOMMENDED_BYTES, s.handle, 1) for i in range(sets)]

            def timed(config):
                c = None if config is None else ctypes.byref(config.to_c())

                def call(i, st):
                    argv[i].stream = st
                    _lib.check(lib.gemv_ex(ctypes.byref(argv[i]), c), "gemv")
                return timing.time_graph(call, sets, s.handle, repeats=5, target_ms=0.5).median_us

            results = [(timed(None), "dispatch")]
            for v in pygemv.variants("T"):  # the registry's op T operations and their ranges
                for cth, lanes, u, split in itertools.product((4, 8, 16, 32), (4, 8, 16, 32, 64), (2, 4),
                                                              (1, 2, 4, 8, 16, 32, 64)):
                    var = v.name
                    if not (v.split_k[0] <= split <= v.split_k[1]) or not 64 <= cth * lanes <= (512 if u == 4 else 1024):
                        continue
                    cfg = pygemv.Config(var, cth, lanes, True, u, False, split)
                    if not pygemv.can_implement(cfg, m, k, dtype, trans=True)[0]:
                        continue
                    if pygemv.workspace_size(cfg, m, k, dtype, trans=True) > pygemv.WORKSPACE_RECOMMENDED_BYTES:
                        continue
                    results.append((timed(cfg), cfg))
            results.sort(key=lambda r: r[0])
            disp = next(t for t, c in results if c == "dispatch")
            print(f"{dtype} {m}x{k}: dispatch {disp:.2f} us; best " +
                  "; ".join(f"{t:.2f} {c.variant} c={c.threads_per_row} r={c.rows_per_block} u={c.unroll} "
                            f"s={c.split_k}" for t, c in results[:4] if c != "dispatch") +
                  "; best of each operation: " +
                  ", ".join(f"{v.name} {min(t for t, c in results if c != 'dispatch' and c.variant == v.name):.2f}"
                            for v in pygemv.variants("T")
                            if any(c != "dispatch" and c.variant == v.name for t, c in results)), flush=True)
            out.append({"dtype": dtype, "m": m, "k": k, "dispatch_us": disp,
                        "all": [{"us": t, "config": c.as_dict()} for t, c in results if c != "dispatch"]})
    if args.json:
        json.dump(out, open(args.json, "w"), indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
