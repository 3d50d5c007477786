"""The registry of operations, read from libgemv (the one list; nothing here repeats it),
and the problem queries asked of it: can_implement, workspace size, default config."""
from __future__ import annotations

import ctypes
import itertools
from dataclasses import dataclass, fields
from typing import Iterator

from . import _checks, _lib

UNROLLS = (1, 2, 4)
# gemv_loads_t: Config.vector_loads
LOADS_SCALAR, LOADS_ALIGNED, LOADS_REALIGNED, LOADS_PHASED, LOADS_ALIGNED8, LOADS_PHASED_X_COPIES = 0, 1, 2, 3, 4, 5


@dataclass(frozen=True)
class Config:
    """An explicit launch configuration (``gemv_config_t``).

    Parameters
    ----------
    variant : int or str
        Registry id or name (see :func:`variants`).
    threads_per_row : int
        ``p``, a power of two within the variant's range.
    rows_per_block : int
        Rows one block computes; threads per block are ``p * rows_per_block``
        (``q_mma_x_held``: tiles of 16 rows a block of ``p`` threads walks;
        ``q_block_rows``: rows a block of ``p`` threads owns; ``q_mma_rounds``: 1, a
        16-row tile a block of ``p`` threads).
    vector_loads : int
        How A and x are read (``gemv_loads_t``): 0 one element a load; 1 16-byte packs of
        16-byte aligned rows; 2 (op N) 16-byte packs of rows that start anywhere, realigned
        in the kernel; 3 16-byte packs of rows that start anywhere, read as they lie by rows
        of one 16-byte phase: op N row kernels (single products, p >= 2), each block walking
        one phase, with x staged in that phase (``x_in_smem``) or read through L1 and
        shifted into it (``incx == 1``); op T, each row lane walking one phase (lane
        classes: lanes a multiple of the rows' phase period, or at least ``m``, and
        ``p >= 2``, which ``t_columns`` requires), else each row slice
        (``t_splitm_twopass``);
        4 (op N row kernels) 8-byte packs of rows (and x read from global memory) 8-byte
        aligned; 5 (op N row kernels, single products, K not split, p >= 2) rows that start
        anywhere (or aligned rows beside an x that is not) read as phased rows, with x (any
        ``incx``) copied into the workspace once a call in each 16-byte phase, a row's packs
        meeting its phase's copy through L1.
        ``True``/``False`` read as 1/0.
    unroll : int
        Loads in flight per thread: 1, 2 or 4.
    x_in_smem : bool
        Stage x in shared memory once per block.
    split_k : int
        K slices (split-K variants: 2..1024, others: 1).
    """

    variant: int | str
    threads_per_row: int
    rows_per_block: int
    vector_loads: int = 1
    unroll: int = 1
    x_in_smem: bool = False
    split_k: int = 1

    def __post_init__(self):
        if isinstance(self.vector_loads, bool):  # the 0.2 spelling
            object.__setattr__(self, "vector_loads", int(self.vector_loads))

    def to_c(self) -> _lib.Config:
        """The ``gemv_config_t``; a field outside int32 raises ``ValueError`` naming it (ctypes
        would wrap it, and 2**32 + 32 would read as 32)."""
        vid = self.variant if isinstance(self.variant, int) else variant(self.variant).id
        fields_ = {"variant": vid, "threads_per_row": self.threads_per_row, "rows_per_block": self.rows_per_block,
                   "vector_loads": int(self.vector_loads), "unroll": self.unroll, "x_in_smem": int(self.x_in_smem),
                   "split_k": self.split_k}
        return _lib.Config(*(_checks.integer(f"Config.{k}", v, *_checks.INT32) for k, v in fields_.items()))

    @classmethod
    def from_c(cls, c: _lib.Config) -> "Config":
        return cls(variant(c.variant).name, c.threads_per_row, c.rows_per_block, int(c.vector_loads),
                   c.unroll, bool(c.x_in_smem), c.split_k)

    def as_dict(self) -> dict:
        return {f.name: getattr(self, f.name) for f in fields(self)}


@dataclass(frozen=True)
class Variant:
    """One registry entry (an operation): what it is, the problems it serves (``op``
    'N' or 'T', storage ``dtypes``, ``batched``) and the ranges of its parameters. For op T
    the row fields read: threads_per_row = threads across a tile's columns, rows_per_block
    = row lanes, unroll = rows in flight, split_k = row slices (split-M)."""

    id: int
    name: str
    description: str
    threads_per_row: tuple[int, int]
    rows_per_block: tuple[int, int]
    split_k: tuple[int, int]
    unrolls: tuple[int, ...]
    deterministic: bool
    needs_workspace: bool
    op: str
    dtypes: tuple[str, ...]
    batched: bool
    stages_x: bool
    weight_bits: tuple[int, ...] = ()  # quantized weights of these bits; () for a dense A

    @property
    def quantized(self) -> bool:
        return bool(self.weight_bits)

    def configs(self, split_ks: tuple[int, ...] = (2, 4, 16, 64)) -> Iterator[Config]:
        """Every config within the ranges (split-K limited to ``split_ks``) that the library
        accepts as valid values; shape legality is :func:`can_implement`'s business."""
        ps = _pow2_range(*self.threads_per_row)
        rows = _pow2_range(*self.rows_per_block)
        splits = [s for s in split_ks if self.split_k[0] <= s <= self.split_k[1]] or [self.split_k[0]]
        smems = (False, True) if self.stages_x else (False,)
        loads = ((LOADS_ALIGNED, LOADS_PHASED, LOADS_REALIGNED, LOADS_SCALAR, LOADS_ALIGNED8, LOADS_PHASED_X_COPIES)
                 if self.op == "N" else
                 (LOADS_ALIGNED, LOADS_PHASED, LOADS_REALIGNED, LOADS_SCALAR))
        for p, r, u, vec, smem, s in itertools.product(ps, rows, self.unrolls, loads, smems, splits):
            c = Config(self.name, p, r, vec, u, smem, s)
            if validate(c):
                yield c


def _pow2_range(lo: int, hi: int) -> list[int]:
    out, v = [], 1
    while v <= hi:
        if v >= lo:
            out.append(v)
        v *= 2
    return out


_VARIANTS: tuple[Variant, ...] | None = None


def variants(op: str | None = None, *, quantized: bool = False) -> tuple[Variant, ...]:
    """The registry, as libgemv reports it (``gemv_variant_count``/``gemv_variant_info``);
    with ``op`` ('N' or 'T'), the operations that compute it on a dense A, or with
    ``quantized=True`` on quantized weights."""
    if op is not None:
        if op not in ("N", "T"):
            raise ValueError(f"op: expected 'N' or 'T', got {op!r}")
        return tuple(v for v in variants() if v.op == op and v.quantized == quantized)
    global _VARIANTS
    if _VARIANTS is None:
        lib = _lib.load()
        out = []
        for i in range(lib.gemv_variant_count()):
            info = _lib.VariantInfo()
            _lib.check(lib.gemv_variant_info(i, ctypes.byref(info)), "gemv_variant_info")
            out.append(Variant(
                id=info.variant, name=info.name.decode(), description=info.description.decode(),
                threads_per_row=(info.threads_per_row_min, info.threads_per_row_max),
                rows_per_block=(info.rows_per_block_min, info.rows_per_block_max),
                split_k=(info.split_k_min, info.split_k_max),
                unrolls=tuple(u for u in UNROLLS if (info.unroll_mask >> u) & 1),
                deterministic=bool(info.deterministic), needs_workspace=bool(info.needs_workspace),
                op="T" if info.op == _lib.OP_T else "N",
                dtypes=tuple(d for d, code in _lib.DTYPES.items() if (info.dtype_mask >> code) & 1),
                batched=bool(info.batched), stages_x=bool(info.stages_x),
                weight_bits=tuple(b for b in (4, 8) if (info.weight_bits_mask >> b) & 1)))
        _VARIANTS = tuple(out)
    return _VARIANTS


def variant(key: int | str) -> Variant:
    """A registry entry by id or name."""
    for v in variants():
        if key == v.id or key == v.name:
            return v
    raise ValueError(f"variant: no variant {key!r}; known: {[v.name for v in variants()]}")


def problem_args(m: int, k: int, dtype: str = "float32", *, trans: bool = False, lda: int | None = None,
                 incx: int = 1, incy: int = 1, a_ptr: int = 256, x_ptr: int = 256, y_ptr: int = 256,
                 batch: int = 1, stride_a: int | None = None, stride_x: int | None = None,
                 stride_y: int | None = None, workspace_bytes: int = 0, flags: int = 0) -> _lib.Args:
    """A ``gemv_args_t`` describing a problem, for the queries that read no data (pointers
    only matter for their alignment). Batch strides left out are the dense ones."""
    c = _checks
    m, k, incx, incy = c.integer("m", m), c.integer("k", k), c.integer("incx", incx), c.integer("incy", incy)
    lda = max(1, k) if lda is None else c.integer("lda", lda)
    nx, ny = (m, k) if trans else (k, m)
    stride_a = m * lda if stride_a is None else stride_a
    stride_x = nx * abs(incx) if stride_x is None else stride_x
    stride_y = ny * abs(incy) if stride_y is None else stride_y
    return _lib.Args(_lib.OP_T if trans else _lib.OP_N, _lib.DTYPES[dtype], m, k, 1.0, 0.0, c.pointer("a_ptr", a_ptr),
                     lda, c.pointer("x_ptr", x_ptr), incx, c.pointer("y_ptr", y_ptr), incy, None,
                     c.size("workspace_bytes", workspace_bytes), None, c.integer("flags", flags, 0, (1 << 32) - 1),
                     c.integer("batch", batch), c.integer("stride_a", stride_a), c.integer("stride_x", stride_x),
                     c.integer("stride_y", stride_y))


def _check_config(config: Config, args: _lib.Args) -> int:
    return _lib.load().gemv_check_config(ctypes.byref(config.to_c()), ctypes.byref(args))


def validate(config: Config) -> bool:
    """Whether the config's values lie within its variant's ranges (shape-independent)."""
    return _check_config(config, problem_args(1, 1)) != 1


def can_implement(config: Config, m: int, k: int, dtype: str = "float32", **problem) -> tuple[bool, str]:
    """Whether ``config`` can run this problem (``gemv_check_config``); pointers only matter
    for their alignment. ``problem`` takes :func:`problem_args`' keywords (``trans``,
    ``lda``, ``incx``, ``incy``, ``a_ptr``, ``x_ptr``, ``y_ptr``, ``batch``, strides).
    Returns ``(ok, reason)``; ``reason`` is empty when ``ok``."""
    return can_run(config, problem_args(m, k, dtype, **problem))


def can_run(config: Config, args: _lib.Args) -> tuple[bool, str]:
    """:func:`can_implement` for a filled ``gemv_args_t`` (quantized weights included)."""
    status = _check_config(config, args)
    if status == _lib.STATUS_SUCCESS:
        return True, ""
    return False, _lib.load().gemv_last_error().decode()


def workspace_size(config: Config | None, m: int, k: int, dtype: str = "float32", **problem) -> int:
    """Workspace bytes ``config`` needs for this problem; ``None``: what the dispatcher may use."""
    lib = _lib.load()
    c = ctypes.byref(config.to_c()) if config is not None else None
    return lib.gemv_workspace_size(c, ctypes.byref(problem_args(m, k, dtype, **problem)))


def default_config(variant_: int | str, m: int, k: int, dtype: str = "float32", **problem) -> Config:
    """An operation's default config for a problem (``gemv_default_config``): the
    heuristic's choice moved into the operation's ranges. Needs a GPU (its SM count)."""
    c = _lib.Config()
    args = problem_args(m, k, dtype, workspace_bytes=_lib.WORKSPACE_RECOMMENDED_BYTES, **problem)
    _lib.check(_lib.load().gemv_default_config(variant(variant_).id, ctypes.byref(args), ctypes.byref(c)),
               "default_config")
    return Config.from_c(c)
