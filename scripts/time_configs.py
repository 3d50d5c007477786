"""Time explicit configs (and the dispatcher's choice) on one shape, the benchmark's way:
graph replay, cold L2, median. Usage:
    python scripts/time_configs.py 65536 256 float16 rows_per_warp:16:4:1:2:0:1 warp_per_row:32:4:1:2:0:1
A config is variant:threads_per_row:rows_per_block:vector_loads:unroll:x_in_smem:split_k."""
import ctypes
import sys

import pygemv
from pygemv import _lib, bench, timing


def main(argv):
    m, k, dtype = int(argv[0]), int(argv[1]), argv[2]
    configs = [None] + [pygemv.Config(v, *(int(f) for f in rest)) for v, *rest in (a.split(":") for a in argv[3:])]
    import torch
    es = _lib.DTYPE_SIZES[dtype]
    sets = timing.rotation_sets((m * k + k + m) * es, bench.device_props()["l2_bytes"])
    buf = bench.Buffers(m, k, dtype, sets, torch)
    s = pygemv.Stream()
    ws = pygemv.empty((pygemv.WORKSPACE_RECOMMENDED_BYTES // 4,), "float32")
    lib = _lib.load()
    args = [_lib.Args(0, _lib.DTYPES[dtype], m, k, 1.0, 0.0, buf.a(i), k, buf.xp(i), 1, buf.yp(i), 1, ws.ptr,
                      pygemv.WORKSPACE_RECOMMENDED_BYTES, s.handle, 1) for i in range(sets)]
    for cfg in configs:
        c = None if cfg is None else ctypes.byref(cfg.to_c())
        t = timing.time_graph(lambda i, st: _lib.check(lib.gemv_ex(ctypes.byref(args[i]), c), "gemv"), sets, s.handle)
        print(f"{dtype} {m}x{k} {'dispatch' if cfg is None else cfg}: {t.median_us:.2f} us")


if __name__ == "__main__":
    main(sys.argv[1:])
