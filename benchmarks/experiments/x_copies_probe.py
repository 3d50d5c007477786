"""Checks op N's phased rows with x's phase copies (vector_loads 5) against the float64
reference with the workspace poisoned (0xFF bytes: NaN in every dtype) before each call, so a
read of workspace the copies' pre-pass did not write shows. s64 ran it on a benchmark failure
(fp16 430 x 144232, lda + 7: row 0 inf on every config, realigned packs too): the benchmark's
data (A's row 0 was x, its dot product K past fp16's 65504), not the copies; every fp16 case
of K up to 65535 and every bf16 and fp32 case passed. Usage, after installing pygemv:

    python3 benchmarks/experiments/x_copies_probe.py
"""
import ctypes
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "scripts"))
from pygemv import _lib, bench
from pygemv._device import DeviceArray
from time_configs import parse_spec
lib = _lib.load()
l2 = bench.device_props()["l2_bytes"]
WS = _lib.WORKSPACE_RECOMMENDED_BYTES
ws_buf = DeviceArray.empty((WS // 4,), "float32"); ws = (ws_buf.ptr, WS)
s = ctypes.c_void_p(); lib.gemv_stream_create(ctypes.byref(s)); stream = s.value
ff = np.full(WS, 0xFF, dtype=np.uint8)
def poison_ws(): lib.gemv_memcpy_to_device(ws_buf.ptr, ff.ctypes.data, WS)
def probe(m, k, dtype, lda, offs, spec, reps=3, poison=True):
    case = bench.Case(m, k, dtype, l2=l2, ws=ws, stream=stream, torch=None, lda=lda, offsets=offs)
    cfg = parse_spec(spec).to_c() if spec else None
    run = case.call(cfg)
    bad_all = []
    for r in range(reps):
        if poison: poison_ws()
        ok, why = bench.check_pygemv(case.buf, lambda: run(0, 0), case.ref)
        if not ok:
            ref, bound = case.ref
            y = case.buf.download(case.buf.yp(0), len(ref))
            bad = np.nonzero(~(np.abs(y - ref) <= bound))[0]
            bad_all.append((r, why, [(int(i), float(y[i]), float(ref[i]), float(bound[i])) for i in bad[:4]]))
    print(f"{dtype} {m}x{k} lda {lda} @{offs} {spec or 'dispatch'} poison={poison}: {'OK' if not bad_all else bad_all}", flush=True)
    return not bad_all
fails = 0
for spec in (None, 'block_per_row:256:1:5:2:0:1', 'block_per_row:512:1:5:1:0:1', 'block_per_row:512:1:5:4:0:1', 'block_per_row:512:1:2:2:0:1'):
    fails += not probe(430, 144232, 'float16', 144239, (0, 0, 0), spec, poison=False)
    fails += not probe(430, 144232, 'float16', 144239, (0, 0, 0), spec, poison=True)
for dtype in ('float16', 'bfloat16', 'float32'):
    for k in (16384, 16389, 40000, 65535, 100001, 144232, 200003, 262000):
        if dtype == 'float32' and k > 262144: continue
        for pad in (1, 7):
            fails += not probe(300, k, dtype, k + pad, (0, 0, 0), 'block_per_row:256:1:5:2:0:1', reps=1)
print("FAILS", fails)
