"""Time explicit configs (and the dispatcher's choice) on one shape with the tuner's
instrument (tuning/measure.py: cold L2, graph replay, median; checked first). Usage:
    python scripts/time_configs.py 65536 256 float16 rows_per_warp:16:4:1:2:0:1 warp_per_row:32:4:1:2:0:1
    python scripts/time_configs.py --weights 4,128,int 8192 8192 float16 q_mma:128:1:1:1:1:4
    python scripts/time_configs.py --warm 48 23714 float32 rows_in_registers:256:4:2:1:0:32
    python scripts/time_configs.py --op T 4096 4096 float16 t_splitm_twopass:16:16:1:4:0:8
A config is variant:threads_per_row:rows_per_block:vector_loads:unroll:x_in_smem:split_k;
--weights bits,group_size,zero_point (group 0: one group a row) times quantized weights;
--op T times y = A^T x (A still M x K);
--warm also times each config with a warm L2 (one buffer set: A, x and the kernel's code
stay in L2), to tell latency from DRAM apart from latency in the kernel;
--unchecked times configs whose results are wrong (a kernel patched to read another layout,
timed for its access pattern only) and says so on each line. Configs print in the form they
are given in."""
import sys

import pygemv
from pygemv.tuning.measure import GpuContext, GpuMeasure


def spec(c: pygemv.Config) -> str:
    """c as this script reads it: variant:threads_per_row:rows_per_block:vector_loads:unroll:x_in_smem:split_k."""
    return ":".join([str(c.variant)] + [str(int(v)) for k, v in c.as_dict().items() if k != "variant"])


def parse_spec(text: str) -> pygemv.Config:
    """The config `spec` writes."""
    variant, *fields = text.split(":")
    return pygemv.Config(variant, *(int(f) for f in fields))


def main(argv):
    weights, warm, op, unchecked = None, None, "N", False
    if argv and argv[0] == "--unchecked":
        unchecked, argv = True, argv[1:]
    if argv and argv[0] == "--op":
        op, argv = argv[1], argv[2:]
    if argv and argv[0] == "--warm":
        warm, argv = True, argv[1:]
    if argv and argv[0] == "--weights":
        bits, gs, zp = argv[1].split(",")
        weights, argv = (int(bits), int(gs) or None, zp), argv[2:]
    m, k, dtype = int(argv[0]), int(argv[1]), argv[2]
    configs = [parse_spec(a) for a in argv[3:]]
    measure = GpuMeasure(m, k, dtype, GpuContext.create(), op=op, weights=weights, repeats=15, target_ms=2.0)
    if warm:
        warm_ctx = GpuContext.create()
        warm_ctx.l2_bytes = 1  # one buffer set
        warm = GpuMeasure(m, k, dtype, warm_ctx, op=op, weights=weights, repeats=15, target_ms=2.0)
    what = f"{op} {dtype} {m}x{k}" + (f" W{weights[0]}G{weights[1] or 0}-{weights[2]}" if weights else "")
    chosen = measure.dispatch()
    for label, cfg in [(f"dispatch ({spec(chosen)})", chosen)] + [(spec(c), c) for c in configs]:
        ok, why = measure.legal(cfg)
        if ok and not unchecked:
            ok, why = measure.check(cfg)
        if not ok:
            print(f"{what} {label}: not timed ({why})")
            continue
        timed = f"{measure.time_us(cfg):.2f} us" + (f", warm {warm.time_us(cfg):.2f} us" if warm else "")
        print(f"{what} {label}: {timed}" + (" (unchecked)" if unchecked else ""))


if __name__ == "__main__":
    main(sys.argv[1:])
