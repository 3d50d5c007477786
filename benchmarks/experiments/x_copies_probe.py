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

from pygemv import _lib, bench
from pygemv._device import DeviceArray

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "scripts"))
from time_configs import parse_spec  # noqa: E402  (the config form time_configs.py reads)

COPIES = ("block_per_row:256:1:5:2:0:1", "block_per_row:512:1:5:1:0:1", "block_per_row:512:1:5:4:0:1")
REALIGNED = "block_per_row:512:1:2:2:0:1"


class Probe:
    """One workspace and stream; check() runs a case on a config (None: the dispatcher's) reps
    times, poisoning the workspace first, and prints the rows out of bound."""

    def __init__(self):
        lib = _lib.load()
        self.l2 = bench.device_props()["l2_bytes"]
        self.ws_buf = DeviceArray.empty((_lib.WORKSPACE_RECOMMENDED_BYTES // 4,), "float32")
        self.ws = (self.ws_buf.ptr, _lib.WORKSPACE_RECOMMENDED_BYTES)
        self.poison = np.full(_lib.WORKSPACE_RECOMMENDED_BYTES, 0xFF, dtype=np.uint8)
        s = ctypes.c_void_p()
        _lib.check(lib.gemv_stream_create(ctypes.byref(s)), "stream")
        self.stream = s.value

    def check(self, m, k, dtype, lda, spec, reps=3, poison=True) -> bool:
        case = bench.Case(m, k, dtype, l2=self.l2, ws=self.ws, stream=self.stream, torch=None, lda=lda)
        run = case.call(parse_spec(spec).to_c() if spec else None)
        ref, bound = case.ref
        failed = []
        for r in range(reps):
            if poison:
                _lib.check(_lib.load().gemv_memcpy_to_device(self.ws[0], self.poison.ctypes.data, self.ws[1]), "poison")
            ok, why = bench.check_pygemv(case.buf, lambda: run(0, 0), case.ref)
            if not ok:
                y = case.buf.download(case.buf.yp(0), len(ref))
                bad = np.nonzero(~(np.abs(y - ref) <= bound))[0][:4]
                failed.append((r, why, [(int(i), float(y[i]), float(ref[i]), float(bound[i])) for i in bad]))
        print(f"{dtype} {m}x{k} lda {lda} {spec or 'dispatch'} poison={poison}: {failed or 'OK'}", flush=True)
        return not failed


def main():
    probe, fails = Probe(), 0
    for spec in (None, *COPIES, REALIGNED):  # the case that failed in run 3, with and without poison
        for poison in (False, True):
            fails += not probe.check(430, 144232, "float16", 144239, spec, poison=poison)
    for dtype in ("float16", "bfloat16", "float32"):
        for k in (16384, 16389, 40000, 65535, 100001, 144232, 200003, 262000):
            for pad in (1, 7):
                fails += not probe.check(300, k, dtype, k + pad, COPIES[0], reps=1)
    print("FAILS", fails)


if __name__ == "__main__":
    main()
