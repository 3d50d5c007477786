"""Time configs with a cold L2 (the tuner's rotation of buffers larger than L2) and a warm
one (one buffer set: A, x and the kernel's code stay in L2), to tell latency that comes
from DRAM (data or instructions) from latency in the kernel.
    python benchmarks/experiments/warm_vs_cold.py 48 23714 float32 rows_in_registers:256:4:2:1:0:32 ...
"""
import sys

import pygemv
from pygemv.tuning.measure import GpuContext, GpuMeasure


def main(argv):
    m, k, dtype = int(argv[0]), int(argv[1]), argv[2]
    configs = [pygemv.Config(v, *(int(f) for f in rest)) for v, *rest in (a.split(":") for a in argv[3:])]
    cold_ctx = GpuContext.create()
    cold = GpuMeasure(m, k, dtype, cold_ctx, repeats=15, target_ms=2.0)
    warm_ctx = GpuContext.create()
    warm_ctx.l2_bytes = 1  # one buffer set
    warm = GpuMeasure(m, k, dtype, warm_ctx, repeats=15, target_ms=2.0)
    for c in [cold.dispatch()] + configs:
        ok, why = cold.legal(c)
        if ok:
            ok, why = cold.check(c)
        print(f"{dtype} {m}x{k} {c}: " + (f"cold {cold.time_us(c):.2f} us, warm {warm.time_us(c):.2f} us (sets {len(warm.sets) if hasattr(warm.sets, '__len__') else warm.sets})" if ok else why), flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
