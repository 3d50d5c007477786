"""Weight-only quantized matrices: :class:`QuantizedMatrix`, :func:`quantize`, and the
GPTQ and AWQ importers (the packed layout and the formats: docs/quantized.md)."""
from __future__ import annotations

import ctypes
import math
import sys

from . import _checks, _lib
from ._device import DeviceArray, dtype_name
from ._operands import as_operand, current_stream, stream_handle

ZERO_POINTS = _lib.QZERO_MODES  # "symmetric", "int", "float": gemv_qzero_t by index


class _Buffer:
    """Device memory from ``gemv_malloc``, freed with its owner."""

    def __init__(self, nbytes: int):
        p = ctypes.c_void_p()
        _lib.check(_lib.load().gemv_malloc(ctypes.byref(p), max(int(nbytes), 1)), "QuantizedMatrix")
        self.ptr, self.nbytes = p.value or 0, int(nbytes)

    def __del__(self):
        if getattr(self, "ptr", 0):
            try:
                _lib.load().gemv_free(self.ptr)
            except Exception:  # interpreter shutdown
                pass
            self.ptr = 0


class _Raw:
    """Pointer, shape, dtype name and device of a C-contiguous CUDA array of any type."""

    def __init__(self, obj, name: str):
        torch = sys.modules.get("torch")
        if torch is not None and isinstance(obj, torch.Tensor):
            if obj.get_device() < 0:
                raise ValueError(f"{name} is on {obj.device}; pygemv needs CUDA tensors")
            if not obj.is_contiguous():
                raise ValueError(f"{name} must be contiguous (as a checkpoint stores it)")
            self.ptr, self.shape, self.device = obj.data_ptr(), tuple(obj.shape), obj.get_device()
            self.dtype = str(obj.dtype).replace("torch.", "")
        elif isinstance(obj, DeviceArray):
            from ._device import _c_strides
            if obj.strides != _c_strides(obj.shape):
                raise ValueError(f"{name} must be C-contiguous")
            self.ptr, self.shape, self.device, self.dtype = obj.ptr, tuple(obj.shape), None, obj.dtype
        else:
            cai = getattr(obj, "__cuda_array_interface__", None)
            if cai is None:
                raise TypeError(f"{name}: expected a CUDA array (torch tensor or __cuda_array_interface__), "
                                f"got {type(obj).__name__}; host arrays need pygemv.to_device or torch's .cuda()")
            self.ptr, self.shape, self.device = int(cai["data"][0]), tuple(cai["shape"]), None
            self.dtype = {"<i4": "int32", "<f2": "float16", "<f4": "float32", "<u2": "bfloat16"}.get(
                cai["typestr"], cai["typestr"])
            size = int(cai["typestr"][2:])
            contiguous = [size * math.prod(self.shape[i + 1:]) for i in range(len(self.shape))]
            if cai.get("strides") is not None and list(cai["strides"]) != contiguous:
                raise ValueError(f"{name} must be C-contiguous")
        self.keepalive = obj

    def expect(self, name: str, dtype: str, shape: tuple) -> "_Raw":
        if self.dtype != dtype:
            raise TypeError(f"{name}: dtype {self.dtype}, expected {dtype}")
        if self.shape != tuple(shape):
            raise ValueError(f"{name}: shape {self.shape}, expected {tuple(shape)}")
        return self


class QuantizedMatrix:
    """An M x K weight matrix of 4- or 8-bit codes with fp16/bf16 scales and zero points,
    in libgemv's packed layout, on the GPU: ``pygemv.gemv(Q, x, y)`` multiplies by it.

    Build one with :func:`pygemv.quantize`, :meth:`from_gptq` or :meth:`from_awq`.

    Attributes
    ----------
    shape : (int, int)
        (M, K): M outputs, K inputs.
    bits : int
        4 or 8.
    group_size : int or None
        Columns sharing a scale and zero; None: one group a row.
    zero_point : str
        'symmetric' (w = (q - 2^(bits-1)) s), 'int' (w = (q - z) s) or 'float' (w = q s + z).
    dtype : str
        'float16' or 'bfloat16': the scales', zeros', and the activations' type.
    nbytes : int
        Bytes a GEMV reads from the weights: codes, scales and zeros.
    """

    def __init__(self, m: int, k: int, *, bits: int, group_size: int | None, zero_point: str, dtype,
                 act_order: bool = False):
        if zero_point not in ZERO_POINTS:
            raise ValueError(f"zero_point: {zero_point!r} is not one of {ZERO_POINTS}")
        if bits not in (4, 8):
            raise ValueError(f"bits: {bits!r} must be 4 or 8")
        if group_size is not None and (not isinstance(group_size, int) or group_size < 32 or group_size > 1024
                                       or group_size & (group_size - 1)):
            raise ValueError(f"group_size: {group_size!r} must be a power of two from 32 to 1024, or None "
                             "(one group a row)")
        self.dtype = dtype_name(dtype)
        if self.dtype not in ("float16", "bfloat16"):
            raise TypeError(f"dtype: {self.dtype} scales are not supported; use float16 or bfloat16")
        d = _lib.QMatrix()
        _lib.check(_lib.load().gemv_qmatrix_init(
            ctypes.byref(d), bits, group_size or 0, ZERO_POINTS.index(zero_point), _lib.DTYPES[self.dtype],
            _checks.integer("m", m, 0), _checks.integer("k", k, 0)), "QuantizedMatrix")
        self.shape, self.bits, self.group_size, self.zero_point = (m, k), bits, group_size, zero_point
        self._codes = _Buffer(m * d.ldq)
        self._scales = _Buffer(m * d.lds * 2)
        self._zeros = _Buffer(m * d.ldz * 2) if d.ldz else None
        self._perm = _Buffer(k * 4) if act_order else None
        d.qweight, d.scales = self._codes.ptr, self._scales.ptr
        d.zeros = self._zeros.ptr if self._zeros else None
        d.perm = self._perm.ptr if self._perm else None
        self._desc = d
        self.nbytes = m * (d.ldq + (d.lds + d.ldz) * 2)

    @property
    def descriptor(self) -> _lib.QMatrix:
        """The ``gemv_qmatrix_t`` (device pointers, strides) this matrix passes to libgemv."""
        return self._desc

    def __repr__(self) -> str:
        g = self.group_size or "row"
        return (f"QuantizedMatrix(shape={self.shape}, bits={self.bits}, group_size={g}, "
                f"zero_point={self.zero_point!r}, dtype={self.dtype})")

    @classmethod
    def from_gptq(cls, qweight, qzeros, scales, g_idx=None, bits: int = 4, *, group_size: int | None = None,
                  format: str = "v1", stream=None) -> "QuantizedMatrix":
        """Repack a GPTQ checkpoint's tensors (as stored, on the GPU) once.

        Parameters
        ----------
        qweight : int32 CUDA array, (K * bits / 32, M)
            Codes packed along K, low bits first.
        qzeros : int32 CUDA array, (groups, M * bits / 32)
            Zero points packed along M.
        scales : float16 or bfloat16 CUDA array, (groups, M)
            Its dtype is the matrix's (and the activations').
        g_idx : int32 CUDA array, (K,), optional
            Act-order: the group of each row of qweight. The columns are reordered once so
            that groups are contiguous; the GEMV then reads x through that order.
        bits : int
            4 or 8.
        group_size : int, optional
            Default: K / groups (one group: None).
        format : str
            'v1' (AutoGPTQ: zero - 1 stored, the common format) or 'v2' (GPTQModel: zero stored).
        """
        if format not in ("v1", "v2"):
            raise ValueError(f"format: {format!r} must be 'v1' (zero - 1 stored) or 'v2'")
        if bits not in (4, 8):
            raise ValueError(f"bits: {bits!r} must be 4 or 8")
        per = 32 // bits
        qw, qz, sc = _Raw(qweight, "qweight"), _Raw(qzeros, "qzeros"), _Raw(scales, "scales")
        if len(qw.shape) != 2 or len(sc.shape) != 2:
            raise ValueError(f"qweight and scales must be 2-D, got {qw.shape} and {sc.shape}")
        k, m = qw.shape[0] * per, qw.shape[1]
        groups = sc.shape[0]
        gs = group_size if group_size is not None else _infer_group(k, groups)
        Q = cls(m, k, bits=bits, group_size=gs, zero_point="int", dtype=sc.dtype, act_order=g_idx is not None)
        qw.expect("qweight", "int32", (k // per, m))
        qz.expect("qzeros", "int32", (groups, m // per))
        sc.expect("scales", Q.dtype, (_ngroups(k, gs), m))
        gi = _Raw(g_idx, "g_idx").expect("g_idx", "int32", (k,)) if g_idx is not None else None
        s = _stream(stream, scales)
        _lib.check(_lib.load().gemv_repack_gptq(ctypes.byref(Q._desc), qw.ptr, qz.ptr, sc.ptr,
                                                gi.ptr if gi else None, 1 if format == "v1" else 0, s),
                   "from_gptq")
        Q._keep = (qw, qz, sc, gi)  # the repack is asynchronous: sources live until it ran
        return Q

    @classmethod
    def from_awq(cls, qweight, qzeros, scales, *, group_size: int | None = None, stream=None) -> "QuantizedMatrix":
        """Repack an AutoAWQ (GEMM format) checkpoint's tensors once.

        Parameters
        ----------
        qweight : int32 CUDA array, (K, M / 8)
            Nibble i of word c holds column 8c + (0, 2, 4, 6, 1, 3, 5, 7)[i].
        qzeros : int32 CUDA array, (groups, M / 8)
            Packed the same way.
        scales : float16 or bfloat16 CUDA array, (groups, M)
        group_size : int, optional
            Default: K / groups.
        """
        qw, qz, sc = _Raw(qweight, "qweight"), _Raw(qzeros, "qzeros"), _Raw(scales, "scales")
        if len(qw.shape) != 2 or len(sc.shape) != 2:
            raise ValueError(f"qweight and scales must be 2-D, got {qw.shape} and {sc.shape}")
        k, m = qw.shape[0], qw.shape[1] * 8
        gs = group_size if group_size is not None else _infer_group(k, sc.shape[0])
        Q = cls(m, k, bits=4, group_size=gs, zero_point="int", dtype=sc.dtype)
        qw.expect("qweight", "int32", (k, m // 8))
        qz.expect("qzeros", "int32", (_ngroups(k, gs), m // 8))
        sc.expect("scales", Q.dtype, (_ngroups(k, gs), m))
        _lib.check(_lib.load().gemv_repack_awq(ctypes.byref(Q._desc), qw.ptr, qz.ptr, sc.ptr, _stream(stream, scales)),
                   "from_awq")
        Q._keep = (qw, qz, sc)
        return Q

    def dequantize(self, out=None, *, stream=None):
        """The dequantized matrix, exact fp32 values, columns in x's order.

        Parameters
        ----------
        out : float32 CUDA array (M, K), optional
            Written in place; default: a new :class:`pygemv.DeviceArray`.
        """
        m, k = self.shape
        if out is None:
            out = DeviceArray.empty((m, k), "float32")
        o = as_operand(out, "out")
        if o.dtype != "float32" or tuple(o.shape) != (m, k) or (k > 1 and o.strides[1] != 1):
            raise ValueError(f"out must be a row-major float32 ({m}, {k}) array, got {o.dtype} {tuple(o.shape)}")
        s = stream_handle(stream) if stream is not None else current_stream(o)
        _lib.check(_lib.load().gemv_dequantize(ctypes.byref(self._desc), o.ptr, o.strides[0] if m > 1 else max(1, k),
                                               s), "dequantize")
        return out


def quantize(W, bits: int = 4, group_size: int | None = 128, zero_point: str = "int", *,
             stream=None) -> QuantizedMatrix:
    """Quantize a dense fp16/bf16 weight on the GPU (round to nearest, clamp).

    Parameters
    ----------
    W : float16 or bfloat16 CUDA array (M, K), row-major
    bits : int
        4 or 8.
    group_size : int or None
        32 .. 1024 (a power of two), or None: one group a row (per channel).
    zero_point : str
        'symmetric', 'int' (asymmetric, integer zeros, as AWQ/GPTQ) or 'float' (zero = the
        group's minimum, as HQQ/tinygemm). int8 per channel is
        ``quantize(W, bits=8, group_size=None, zero_point='symmetric')``.

    Returns
    -------
    QuantizedMatrix
    """
    w = as_operand(W, "W")
    if len(w.shape) != 2:
        raise ValueError(f"W must be 2-D (M, K), got shape {tuple(w.shape)}")
    m, k = w.shape
    if k > 1 and w.strides[1] != 1:
        raise ValueError(f"W must be row-major (unit stride along K), got strides {w.strides}")
    Q = QuantizedMatrix(m, k, bits=bits, group_size=group_size, zero_point=zero_point, dtype=w.dtype)
    s = stream_handle(stream) if stream is not None else current_stream(w)
    _lib.check(_lib.load().gemv_quantize(ctypes.byref(Q._desc), w.ptr, w.strides[0] if m > 1 else max(1, k), s),
               "quantize")
    return Q


def _ngroups(k: int, gs: int | None) -> int:
    return 1 if gs is None else -(-k // gs)


def _infer_group(k: int, groups: int) -> int | None:
    if groups == 1:
        return None
    gs = -(-k // groups)
    gs = 1 << (gs - 1).bit_length()  # the power of two that gives this many groups
    if -(-k // gs) != groups:
        raise ValueError(f"scales: {groups} groups do not match a power-of-two group size for K = {k}; "
                         "pass group_size=")
    return gs


def _stream(stream, like) -> int:
    if stream is not None:
        return stream_handle(stream)
    torch = sys.modules.get("torch")
    if torch is not None and isinstance(like, torch.Tensor):
        return torch.cuda.current_stream(like.device).cuda_stream
    return 0


__all__ = ["QuantizedMatrix", "quantize", "ZERO_POINTS"]
