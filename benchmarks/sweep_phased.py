"""Time phased rows (vector_loads = 3) against the dispatcher (table, heuristic) and cuBLAS on
shapes whose rows do not start 16-byte aligned, and the aligned shape of the same size where
one is given (cold L2, graph replay, medians; every config checked against a float64
reference first). The data behind the heuristic's phased-rows rule (libgemv/src/dispatch.cpp).

    python benchmarks/sweep_phased.py --json sweep.json [--shapes float16:8191x8191,...]
"""
import itertools
import sys

import pygemv
from config_sweep import parse_args, shapes_of, sweep

# The issue's misaligned pairs (with their aligned shapes), then the random draws' slow
# misaligned shapes of medium rows, then smaller matrices and long rows that need split K.
SHAPES = ([(d, m, k) for d in ("float32", "float16", "bfloat16")
           for m, k in ((8192, 8192), (8191, 8191), (16384, 8192), (16384, 8193))]
          + [("float16", 4559, 10455), ("bfloat16", 2520, 3735), ("float16", 158044, 1306), ("float32", 5769, 2217),
             ("float16", 4725, 2350), ("float16", 40109, 1446), ("float32", 32361, 863), ("bfloat16", 237313, 340),
             ("float32", 16384, 4097), ("float16", 1000, 3001), ("float16", 300, 5001), ("bfloat16", 2000, 999),
             ("float16", 802, 52649), ("float32", 48, 23714), ("float16", 34, 58900)])


def phased_configs(m: int, k: int, es: int):
    """Row kernels (8..512 lanes a row, 256..1024 threads), phased; the two-pass split for
    matrices of few rows."""
    packs = -(-k * es // 16)
    P = pygemv.LOADS_PHASED
    for p, threads, unroll in itertools.product((8, 32, 128, 512), (256, 512, 1024), (1, 2, 4)):
        if p > threads or (unroll == 4 and threads > 512) or p > max(8, packs // 2):
            continue
        v = "rows_per_warp" if p < 32 else "warp_per_row" if p == 32 else "block_per_row"
        yield pygemv.Config(v, p, threads // p, P, unroll, True, 1)
    if m < 1000:
        for p, split, unroll in itertools.product((64, 256), (4, 8, 16), (2, 4)):
            yield pygemv.Config("splitk_twopass", p, 1, P, unroll, True, split)


def main() -> int:
    args = parse_args(__doc__, lambda ap: ap.add_argument("--aligned-too", action="store_true",
                                                          help="phased configs on aligned rows as well"))

    def candidates(dtype, m, k):
        es = pygemv._lib.DTYPE_SIZES[dtype]
        return [] if (k * es) % 16 == 0 and not args.aligned_too else phased_configs(m, k, es)

    sweep(shapes_of(args.shapes, SHAPES), candidates, "phased", args.json)
    return 0


if __name__ == "__main__":
    sys.exit(main())
