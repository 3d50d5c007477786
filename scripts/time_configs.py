"""Time explicit configs (and the dispatcher's choice) on one shape with the tuner's
instrument (tuning/measure.py: cold L2, graph replay, median; checked first). Usage:
    python scripts/time_configs.py 65536 256 float16 rows_per_warp:16:4:1:2:0:1 warp_per_row:32:4:1:2:0:1
A config is variant:threads_per_row:rows_per_block:vector_loads:unroll:x_in_smem:split_k."""
import sys

import pygemv
from pygemv.tuning.measure import GpuContext, GpuMeasure


def main(argv):
    m, k, dtype = int(argv[0]), int(argv[1]), argv[2]
    configs = [pygemv.Config(v, *(int(f) for f in rest)) for v, *rest in (a.split(":") for a in argv[3:])]
    measure = GpuMeasure(m, k, dtype, GpuContext.create(), repeats=15, target_ms=2.0)
    for label, cfg in [("dispatch", measure.dispatch())] + [(str(c), c) for c in configs]:
        ok, why = measure.check(cfg)
        print(f"{dtype} {m}x{k} {label}: " + (f"{measure.time_us(cfg):.2f} us" if ok else f"wrong ({why})"))


if __name__ == "__main__":
    main(sys.argv[1:])
