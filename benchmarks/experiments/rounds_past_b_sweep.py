"""q_mma_rounds at one step a round against the dispatch past its regime (b) (NOTES.md section
52): for each row length K and row count M, five int4 formats (bf16 float zeros in groups of
128, 64 and 32, fp16 integer zeros g128, bf16 integer zeros g64), the tuner's instrument
(cold L2, graph replay, median of 9; each config checked first). Needs pygemv installed.
    python3 -P benchmarks/experiments/rounds_past_b_sweep.py 1024,1280,2048 6750,8450,12672
"""
import sys

import pygemv
from pygemv.tuning.measure import GpuContext, GpuMeasure

FORMATS = [(4, 128, "float", "bfloat16"), (4, 64, "float", "bfloat16"), (4, 32, "float", "bfloat16"),
           (4, 128, "int", "float16"), (4, 64, "int", "bfloat16")]


def spec(c: pygemv.Config) -> str:
    return ":".join([str(c.variant)] + [str(int(v)) for k, v in c.as_dict().items() if k != "variant"])


def main(ks: str, ms: str) -> None:
    ctx = GpuContext.create()
    one_step = pygemv.Config("q_mma_rounds", 256, 1, 1, 1, 0, 1)
    for k in map(int, ks.split(",")):
        for m in map(int, ms.split(",")):
            for bits, g, z, dt in FORMATS:
                meas = GpuMeasure(m, k, dt, ctx, weights=(bits, g, z), repeats=9, target_ms=1.0)
                d = meas.dispatch()
                ok, _ = meas.check(one_step)
                td, tu = meas.time_us(d), (meas.time_us(one_step) if ok else float("nan"))
                print(f"{m:6d}x{k:<5d} t/SM {((m + 15) // 16) / 132:4.2f} {dt:8s} g{g:<3d} {z:5s} disp {td:6.2f} "
                      f"u1 {tu:6.2f} disp/u1 {td / tu:5.3f} {spec(d)}", flush=True)
                meas.close()


if __name__ == "__main__":
    main(*sys.argv[1:3])
