"""Time the row stream's configs against the dispatcher (table, heuristic) and cuBLAS on
shapes where rows are short or do not start 16-byte aligned (cold L2, graph replay,
medians; every config checked against a float64 reference first). The data behind the
heuristic's row-stream rule (libgemv/src/dispatch.cpp).

    python benchmarks/sweep_row_stream.py --json sweep.json [--shapes float16:158044x1306,...]
"""
import itertools
import sys

import pygemv
from config_sweep import parse_args, shapes_of, sweep

# The slowest shapes of random seed 1 (0.3.0), then a K ladder of 64 MiB fp16/fp32 matrices
# with rows that are not 16-byte multiples, then aligned short rows of the suite.
SHAPES = ([("float16", 158044, 1306), ("float16", 12141, 35), ("float32", 239193, 106), ("float32", 32361, 863),
           ("float16", 4972633, 12), ("bfloat16", 93, 105), ("float16", 40109, 1446), ("float16", 48313, 34),
           ("bfloat16", 146, 85), ("float32", 5769, 2217), ("float16", 4725, 2350), ("bfloat16", 237313, 340)]
          + [("float16", (32 << 20) // k, k) for k in (9, 23, 57, 131, 257, 515, 1029, 2053, 4099, 8191)]
          + [("float32", (16 << 20) // k, k) for k in (5, 23, 131, 515, 2053)]
          + [("float16", 1048576, 32), ("float16", 131072, 128), ("float16", 65536, 256), ("float32", 1048576, 16)])


def stream_configs(dtype: str, m: int, k: int):
    """Every row-stream config of 64..512 threads, unroll 1, 2, 4 and 1..32 lanes a row."""
    for threads, unroll, p in itertools.product((64, 128, 256, 512), (1, 2, 4), (1, 4, 16, 32)):
        if p <= threads and not (unroll == 4 and threads > 512):
            yield pygemv.Config("row_stream", p, threads // p, 2, unroll, True, 1)


def main() -> int:
    args = parse_args(__doc__)
    sweep(shapes_of(args.shapes, SHAPES), stream_configs, "stream", args.json)
    return 0


if __name__ == "__main__":
    sys.exit(main())
