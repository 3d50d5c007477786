"""Measuring configs on the GPU for one (M, K, dtype): the tuner's, the oracle's and the
held-out check's one instrument.

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
    """Legality, correctness and kernel time of configs on one shape.

    Parameters
    ----------
    m, k, dtype
        The problem (alpha = 1, beta = 0, dense rows).
    ctx : GpuContext
    repeats : int
        Timed samples per measurement (their median is the time).
    target_ms : float
        Length of one timed sample.
    """

    def __init__(self, m: int, k: int, dtype: str, ctx: GpuContext, *, repeats: int = 5, target_ms: float = 0.5):
        self.m, self.k, self.dtype, self.ctx = m, k, dtype, ctx
        self.repeats, self.target_ms = repeats, target_ms
        self.lib = _lib.load()
        es = _lib.DTYPE_SIZES[dtype]
        self.sets = timing.rotation_sets((m * k + k + m) * es, ctx.l2_bytes)
        self.buf = bench.Buffers(m, k, dtype, self.sets, ctx.torch)
        self.ref = bench.reference(self.buf)
        code = _lib.DTYPES[dtype]
        self.args = [_lib.Args(_lib.OP_N, code, m, k, 1.0, 0.0, self.buf.a(i), k, self.buf.xp(i), 1, self.buf.yp(i), 1,
                               ctx.workspace, ctx.workspace_bytes, ctx.stream, _lib.FLAG_TRUSTED_POINTERS)
                     for i in range(self.sets)]

    def dispatch(self, use_table: bool = True) -> pygemv.Config:
        """The config automatic dispatch picks for these buffers (tuned table or heuristic)."""
        a = _lib.Args.from_buffer_copy(self.args[0])
        a.flags |= 0 if use_table else _lib.FLAG_NO_TABLE
        c = _lib.Config()
        _lib.check(self.lib.gemv_select_config_ex(ctypes.byref(a), ctypes.byref(c), None), "select_config")
        return pygemv.Config.from_c(c)

    def heuristic(self) -> pygemv.Config:
        return self.dispatch(use_table=False)

    def legal(self, config: pygemv.Config) -> tuple[bool, str]:
        ok, why = pygemv.can_implement(config, self.m, self.k, self.dtype, a_ptr=self.buf.a(0),
                                       x_ptr=self.buf.xp(0), y_ptr=self.buf.yp(0))
        if ok and pygemv.workspace_size(config, self.m, self.k, self.dtype) > self.ctx.workspace_bytes:
            return False, "needs more workspace than the dispatcher is given"
        return ok, why

    def _call(self, c: _lib.Config):
        def call(i: int, stream: int) -> None:
            self.args[i].stream = stream
            _lib.check(self.lib.gemv_ex(ctypes.byref(self.args[i]), ctypes.byref(c)), "gemv")
        return call

    def check(self, config: pygemv.Config) -> tuple[bool, str]:
        call = self._call(config.to_c())
        return bench.check_pygemv(self.buf, lambda: call(0, 0), self.ref)

    def time_us(self, config: pygemv.Config) -> float:
        t = timing.time_graph(self._call(config.to_c()), self.sets, self.ctx.stream, repeats=self.repeats,
                              target_ms=self.target_ms)
        return t.median_us

    def close(self) -> None:
        self.buf = self.args = None
