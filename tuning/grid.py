"""The shapes ``pygemv-tune`` tunes.

The default grid: M and K each 1, 4, 16, ... 4^10 = 2^20 (a factor of 4 apart, so no
shape is more than one step from a tuned one in either axis), every pair whose matrix
fits in 64 MiB (beyond that every config that streams well is at the read ceiling and
the largest tuned shapes stand for them), plus the common LLM projection shapes and two tall-skinny ones (NAMED_SHAPES).
Rows that forbid 16-byte loads (K * size not a multiple of 16) run other configs, so the
default grid also tunes such K for every M of the grid: odd K (3, 17, 257, 4097, 65537),
whose rows take 8 phases (16-bit) or 4 (fp32), and K of 2 and 4 mod 8 (18, 260, 4102),
whose 16-bit rows take 4 and 2.
The quick grid steps by 16 instead of 4 and leaves odd K to the heuristic.

op T (the column kernels) tunes M and K a factor of 8 apart plus the named shapes; rows
that are not 16-byte aligned take the scalar column kernels, where the heuristic's choice
stands. Strided batches tune square matrices of 16 to 1024 at batches of 8 to 4096
(batch_grid), both ops.
"""
from __future__ import annotations

from pygemv import _lib
from pygemv.bench_quantized import FORMATS as QUANTIZED_BENCH_FORMATS

CAP_BYTES = 64 << 20
LLM_SHAPES = [(4096, 4096), (14336, 4096), (4096, 14336), (11008, 4096), (4096, 11008), (8192, 8192),
              (28672, 8192), (8192, 28672), (128256, 4096), (6144, 4096), (4096, 12288)]
# Tall-skinny shapes between grid points where the nearest entry is in another regime:
# at 1048576x32 the K=16 entry's config ran 12% slower than the heuristic's (pygemv-bench,
# benchmarks/NOTES.md section 9). Both are shapes of the benchmark suite.
SKEWED_SHAPES = [(1048576, 32), (131072, 128)]
NAMED_SHAPES = LLM_SHAPES + SKEWED_SHAPES
# K whose rows are not 16-byte multiples, in every phase period (see the module doc).
UNALIGNED_K = (3, 17, 18, 257, 260, 4097, 4102, 65537)


def log_grid(step: int, top: int = 1 << 20, cap_bytes: int = CAP_BYTES, dtype: str = "float16") -> list[tuple[int, int]]:
    es = _lib.DTYPE_SIZES[dtype]
    sides = []
    v = 1
    while v <= top:
        sides.append(v)
        v *= step
    return [(m, k) for m in sides for k in sides if m * k * es <= cap_bytes]


def odd_k(ms: list[int], ks: tuple[int, ...], cap_bytes: int = CAP_BYTES) -> list[tuple[int, int]]:
    return [(m, k) for m in ms for k in ks if m * k * 2 <= cap_bytes]


def default_grid(dtype: str) -> list[tuple[int, int]]:
    shapes = log_grid(4, dtype="float16")  # the same shapes for every dtype
    ms = sorted({m for m, _ in shapes})
    return shapes + [s for s in NAMED_SHAPES if s not in shapes] + odd_k(ms, UNALIGNED_K)


def quick_grid(dtype: str) -> list[tuple[int, int]]:
    shapes = log_grid(16, dtype="float16")
    return shapes + [s for s in [(4096, 4096), (14336, 4096)] if s not in shapes]


def op_t_grid(dtype: str, quick: bool = False) -> list[tuple[int, int]]:
    """op T's shapes: M and K a factor of 8 apart (the op T heuristic came within 1% of each
    shape's best on a sweep of every config, so a coarser grid than op N's), and the LLM
    projections; quick: the quick grid."""
    if quick:
        return quick_grid(dtype)
    shapes = log_grid(8, dtype="float16")
    return shapes + [s for s in NAMED_SHAPES if s not in shapes]


BATCH_SIDES = (16, 64, 256, 1024)
BATCHES = (8, 64, 512, 4096)


def batch_grid(dtype: str, cap_bytes: int = CAP_BYTES) -> list[tuple[int, int, int]]:
    """(batch, M, K) of the strided-batch tune: squares whose whole batch fits cap_bytes
    (16-bit sizes, so every dtype tunes the same problems)."""
    return [(b, s, s) for s in BATCH_SIDES for b in BATCHES if b * s * s * 2 <= cap_bytes]


# Quantized weights (pygemv-tune --quantized): the formats of pygemv-bench --quantized, each
# a distinct table key (bits, group size, dtype), as (bits, group_size, zero_point, dtype),
# on M and K of 1024 to 65536 and the LLM projections (issue 15's shapes).
QUANTIZED_FORMATS = [fmt[1:] for fmt in QUANTIZED_BENCH_FORMATS]


def quantized_grid() -> list[tuple[tuple, str, int, int]]:
    """((bits, group_size, zero_point), dtype, M, K) of the quantized tune."""
    shapes = [(m, k) for m in (1024, 4096, 16384, 65536) for k in (1024, 4096, 16384)]
    shapes += [s for s in LLM_SHAPES + [(7392, 8192)] if s not in shapes]
    return [((bits, gs, zp), dtype, m, k) for bits, gs, zp, dtype in QUANTIZED_FORMATS for m, k in shapes]
