"""Measuring configs on the GPU for one problem (op, batch, M, K, dtype): the tuner's, the
oracle's and the held-out check's one instrument.

Inputs are random and rotated until a pass over them moves at least 4x L2
(``pygemv.timing``), so every timed call reads A from HBM. Before a config is timed it
runs once on set 0 with y poisoned (NaN) and the first rows are compared with a
float64 reference under the contract's bound.
"""
from __future__ import annotations

import ctypes
from dataclasses import dataclass

import pygemv
from pygemv import _lib, bench, timing
from pygemv._registry import can_run


@dataclass
class GpuContext:
    """What every shape shares: the stream, the split-K workspace, the L2 size, torch."""

    stream: int
    workspace: int
    workspace_bytes: int
    l2_bytes: int
    torch: object = None

    @classmethod
    def create(cls) -> "GpuContext":
        try:
            import torch
            if not torch.cuda.is_available():
                torch = None
        except ImportError:
            torch = None
        props = bench.device_props(pygemv.current_device())
        ws = pygemv.empty((pygemv.WORKSPACE_RECOMMENDED_BYTES // 4,), "float32")
        stream = pygemv.Stream()
        ctx = cls(stream.handle, ws.ptr, pygemv.WORKSPACE_RECOMMENDED_BYTES, props["l2_bytes"], torch)
        ctx._keep = (ws, stream)  # owned for the context's life
        return ctx


class GpuMeasure:
    """Legality, correctness and kernel time of configs on one problem.

    Parameters
    ----------
    m, k, dtype
        The problem (alpha = 1, beta = 0, dense vectors and batch strides).
    ctx : GpuContext
    op : str
        ``"N"`` or ``"T"``.
    batch : int
        Products of a strided batch (1: a single product).
    lda : int, optional
        A's row stride in elements (default K: dense rows).
    offsets : (int, int, int)
        A's, x's and y's pointers in elements past a 256-byte boundary (dense layouts only).
    weights : (bits, group_size, zero_point), optional
        Quantized weights (op N), as ``pygemv.quantize`` takes them (``group_size`` None:
        one group a row); needs torch.
    repeats : int
        Timed samples per measurement (their median is the time).
    target_ms : float
        Length of one timed sample.
    """

    def __init__(self, m: int, k: int, dtype: str, ctx: GpuContext, *, op: str = "N", batch: int = 1,
                 weights: tuple | None = None, repeats: int = 5, target_ms: float = 0.5, lda: int | None = None,
                 offsets: tuple = (0, 0, 0)):
        self.m, self.k, self.dtype, self.ctx, self.op, self.batch = m, k, dtype, ctx, op, batch
        self.repeats, self.target_ms = repeats, target_ms
        self.lib = _lib.load()
        ws = (ctx.workspace, ctx.workspace_bytes)
        if weights is not None:
            if ctx.torch is None:
                raise RuntimeError("tuning quantized weights needs torch with CUDA (pygemv.quantize takes its tensors)")
            from pygemv.bench_quantized import QCase
            self.case = QCase(ctx.torch, m, k, (*weights, dtype), l2=ctx.l2_bytes, ws=ws, stream=ctx.stream)
        else:
            self.case = bench.Case(m, k, dtype, l2=ctx.l2_bytes, ws=ws, stream=ctx.stream, torch=ctx.torch,
                                   trans=op == "T", batch=batch, lda=lda, offsets=offsets)
        self.sets = self.case.sets

    def dispatch(self, use_table: bool = True) -> pygemv.Config:
        """The config automatic dispatch picks for these buffers (tuned table or heuristic)."""
        a = _lib.Args.from_buffer_copy(self.case.args[0])
        a.flags |= 0 if use_table else _lib.FLAG_NO_TABLE
        c = _lib.Config()
        _lib.check(self.lib.gemv_select_config_ex(ctypes.byref(a), ctypes.byref(c), None), "select_config")
        return pygemv.Config.from_c(c)

    def heuristic(self) -> pygemv.Config:
        return self.dispatch(use_table=False)

    def legal(self, config: pygemv.Config) -> tuple[bool, str]:
        args = self.case.args[0]
        ok, why = can_run(config, args)
        if ok and self.lib.gemv_workspace_size(ctypes.byref(config.to_c()), ctypes.byref(args)) > args.workspace_bytes:
            return False, "needs more workspace than the dispatcher is given"
        return ok, why

    def check(self, config: pygemv.Config) -> tuple[bool, str]:
        return self.case.check(config.to_c())

    def time_us(self, config: pygemv.Config) -> float:
        t = timing.time_graph(self.case.call(config.to_c()), self.sets, self.ctx.stream, repeats=self.repeats,
                              target_ms=self.target_ms)
        return t.median_us

    def close(self) -> None:
        self.case = None
