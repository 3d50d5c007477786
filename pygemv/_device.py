"""A small device-array type on libgemv's own helpers, so pygemv works with numpy alone."""
from __future__ import annotations

import ctypes

import numpy as np

from . import _lib

_NP_DTYPES = {"float32": np.float32, "float16": np.float16}


def dtype_name(dtype) -> str:
    """Normalise a dtype spelling (str, numpy dtype, torch dtype) to 'float32', 'float16' or 'bfloat16'."""
    if not isinstance(dtype, str) and "torch" not in type(dtype).__module__:
        try:
            dtype = np.dtype(dtype).name  # numpy and CuPy dtypes and scalar types
        except TypeError:
            pass
    name = str(dtype).replace("torch.", "")
    name = {"f4": "float32", "<f4": "float32", "f2": "float16", "<f2": "float16", "half": "float16",
            "float": "float32", "bf16": "bfloat16", "fp32": "float32", "fp16": "float16"}.get(name, name)
    if name not in _lib.DTYPES:
        raise TypeError(f"dtype: {dtype!r} is not supported; use float32, float16 or bfloat16")
    return name


def float32_to_bfloat16_bits(a: np.ndarray) -> np.ndarray:
    """Round float32 to bfloat16 (nearest even), as uint16 bit patterns; NaN stays NaN."""
    u = np.ascontiguousarray(a, dtype=np.float32).view(np.uint32)
    rounded = ((u + np.uint32(0x7FFF) + ((u >> 16) & 1)) >> 16).astype(np.uint16)
    return np.where(np.isnan(a), np.uint16(0x7FC0), rounded)


def bfloat16_bits_to_float32(b: np.ndarray) -> np.ndarray:
    """Widen bfloat16 bit patterns (uint16) to float32, exactly."""
    return (np.asarray(b, dtype=np.uint16).astype(np.uint32) << 16).view(np.float32)


def device_count() -> int:
    """Number of CUDA devices (raises NoDriverError or NoDeviceError when there are none)."""
    n = ctypes.c_int(0)
    _lib.check(_lib.load().gemv_device_count(ctypes.byref(n)), "device_count")
    if n.value == 0:
        _lib.check(5, "device_count")
    return n.value


def current_device() -> int:
    d = ctypes.c_int(0)
    _lib.check(_lib.load().gemv_get_device(ctypes.byref(d)), "current_device")
    return d.value


def set_device(device: int) -> None:
    _lib.check(_lib.load().gemv_set_device(device), "set_device")


def device_name(device: int | None = None) -> str:
    buf = ctypes.create_string_buffer(256)
    _lib.check(_lib.load().gemv_device_name(current_device() if device is None else device, buf, 256), "device_name")
    return buf.value.decode()


def synchronize(stream: int = 0) -> None:
    """Wait for the work queued on ``stream`` (0: the legacy default stream)."""
    _lib.check(_lib.load().gemv_stream_synchronize(stream), "synchronize")


class Stream:
    """A CUDA stream owned by libgemv (non-blocking). ``int(stream)`` is its handle."""

    def __init__(self):
        h = ctypes.c_void_p()
        _lib.check(_lib.load().gemv_stream_create(ctypes.byref(h)), "Stream")
        self.handle = h.value or 0

    def __int__(self) -> int:
        return self.handle

    def synchronize(self) -> None:
        synchronize(self.handle)

    def close(self) -> None:
        if self.handle:
            _lib.check(_lib.load().gemv_stream_destroy(self.handle), "Stream.close")
            self.handle = 0

    def __del__(self):
        try:
            self.close()
        except Exception:
            pass


class DeviceArray:
    """Device memory from ``gemv_malloc`` with a shape, element strides and a dtype.

    Works as a ``pygemv.gemv`` operand and exposes ``__cuda_array_interface__`` (fp32,
    fp16), so CuPy or Numba can read it too.

    Parameters
    ----------
    shape : tuple of int
    dtype : str
        'float32', 'float16' or 'bfloat16'.
    strides : tuple of int, optional
        In elements; C-contiguous by default. ``DeviceArray.empty((m, lda), d)[:, :k]``-style
        padding is made with :meth:`view`.
    """

    def __init__(self, shape, dtype="float32", strides=None, *, _ptr=None, _owner=None):
        self.shape = tuple(int(s) for s in shape)
        self.dtype = dtype_name(dtype)
        self.itemsize = _lib.DTYPE_SIZES[self.dtype]
        self.strides = tuple(strides) if strides is not None else _c_strides(self.shape)
        self._owner = _owner
        if _ptr is None:
            span = _span(self.shape, self.strides)
            p = ctypes.c_void_p()
            _lib.check(_lib.load().gemv_malloc(ctypes.byref(p), max(span, 1) * self.itemsize), "DeviceArray")
            self.ptr = p.value or 0
            self._owns = True
        else:
            self.ptr = _ptr
            self._owns = False

    @classmethod
    def empty(cls, shape, dtype="float32") -> "DeviceArray":
        return cls(shape if isinstance(shape, tuple) else (shape,), dtype)

    @classmethod
    def from_numpy(cls, a, dtype=None) -> "DeviceArray":
        """Upload a numpy array (converted to ``dtype``; bfloat16 is rounded from float32)."""
        a = np.asarray(a)
        name = dtype_name(dtype if dtype is not None else a.dtype)
        host = _to_storage(a, name)
        out = cls(a.shape, name)
        _lib.check(_lib.load().gemv_memcpy_to_device(out.ptr, host.ctypes.data, host.nbytes), "from_numpy")
        return out

    def to_numpy(self) -> np.ndarray:
        """Download (synchronously) as numpy; bfloat16 comes back widened to float32."""
        span = _span(self.shape, self.strides)
        store = np.empty(max(span, 1), dtype=np.uint16 if self.dtype == "bfloat16" else _NP_DTYPES[self.dtype])
        _lib.check(_lib.load().gemv_memcpy_to_host(store.ctypes.data, self.ptr, span * self.itemsize), "to_numpy")
        if self.dtype == "bfloat16":
            store = bfloat16_bits_to_float32(store)
        return np.lib.stride_tricks.as_strided(
            store, self.shape, tuple(s * store.itemsize for s in self.strides)).copy()

    def view(self, shape, strides, offset: int = 0) -> "DeviceArray":
        """A view of the same memory, ``offset`` elements in (no bounds are checked)."""
        return DeviceArray(shape, self.dtype, strides, _ptr=self.ptr + offset * self.itemsize, _owner=self)

    @property
    def __cuda_array_interface__(self) -> dict:
        if self.dtype == "bfloat16":
            raise AttributeError("__cuda_array_interface__ has no bfloat16 type string")
        return {"shape": self.shape, "typestr": np.dtype(_NP_DTYPES[self.dtype]).str, "data": (self.ptr, False),
                "strides": tuple(s * self.itemsize for s in self.strides), "version": 3}

    def __len__(self) -> int:
        return self.shape[0]

    def __repr__(self) -> str:
        return f"DeviceArray(shape={self.shape}, dtype={self.dtype}, strides={self.strides}, ptr={self.ptr:#x})"

    def __del__(self):
        if getattr(self, "_owns", False) and self.ptr and _lib is not None:
            try:
                _lib.load().gemv_free(self.ptr)
            except Exception:
                pass
            self.ptr = 0


def to_device(a, dtype=None) -> DeviceArray:
    """Upload a numpy array: ``DeviceArray.from_numpy``."""
    return DeviceArray.from_numpy(a, dtype)


def empty(shape, dtype="float32") -> DeviceArray:
    """An uninitialised device array."""
    return DeviceArray.empty(shape, dtype)


def _c_strides(shape) -> tuple[int, ...]:
    strides, acc = [], 1
    for s in reversed(shape):
        strides.append(acc)
        acc *= max(s, 1)
    return tuple(reversed(strides))


def _span(shape, strides) -> int:
    """Elements between the first and one past the last addressed element."""
    if any(s == 0 for s in shape):
        return 0
    return 1 + sum((n - 1) * abs(st) for n, st in zip(shape, strides))


def _to_storage(a: np.ndarray, name: str) -> np.ndarray:
    if name == "bfloat16":
        return float32_to_bfloat16_bits(a.astype(np.float32))
    return np.ascontiguousarray(a, dtype=_NP_DTYPES[name])

