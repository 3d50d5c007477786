"""A small device-array type on libgemv's own helpers, so pygemv works with numpy alone."""
from __future__ import annotations

import ctypes

import numpy as np

from . import _checks, _lib

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
        shape = tuple(shape) if isinstance(shape, (tuple, list)) else (shape,)
        self.shape = tuple(_checks.integer(f"shape[{i}]", n, 0) for i, n in enumerate(shape))
        self.dtype = dtype_name(dtype)
        self.itemsize = _lib.DTYPE_SIZES[self.dtype]
        if strides is None:
            self.strides = _c_strides(self.shape)
        else:
            self.strides = tuple(_checks.integer(f"strides[{i}]", st) for i, st in enumerate(strides))
            if len(self.strides) != len(self.shape):
                raise ValueError(f"strides {self.strides} must have one entry per axis of shape {self.shape}")
        lo, hi = _extent(self.shape, self.strides)
        self.nbytes = (hi - lo + 1) * self.itemsize if hi >= lo else 0  # the bytes its elements span
        if self.nbytes > _checks.INT64[1]:
            raise ValueError(f"shape {self.shape} with strides {self.strides} spans {self.nbytes} bytes, "
                             "more than 64-bit offsets can address")
        self._owner = _owner
        if _ptr is None:
            # Element 0 lies above the lowest element when a stride is negative: allocate the
            # span and place the pointer -lo elements in.
            p = ctypes.c_void_p()
            _lib.check(_lib.load().gemv_malloc(ctypes.byref(p), max(self.nbytes, 1)), "DeviceArray")
            self._base, self._base_bytes = p.value or 0, max(self.nbytes, 1)
            self.ptr = self._base - min(lo, 0) * self.itemsize
            self._owns = True
        else:
            self.ptr = _ptr
            self._base, self._base_bytes = (_owner._base, _owner._base_bytes) if _owner is not None else (None, None)
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
        lo, hi = _extent(self.shape, self.strides)
        n = hi - lo + 1 if hi >= lo else 0
        store = np.empty(max(n, 1), dtype=np.uint16 if self.dtype == "bfloat16" else _NP_DTYPES[self.dtype])
        # From the lowest element up: with a negative stride that lies below ptr.
        _lib.check(_lib.load().gemv_memcpy_to_host(store.ctypes.data, self.ptr + min(lo, 0) * self.itemsize,
                                                   n * self.itemsize), "to_numpy")
        if self.dtype == "bfloat16":
            store = bfloat16_bits_to_float32(store)
        return np.lib.stride_tricks.as_strided(
            store[-min(lo, 0):], self.shape, tuple(s * store.itemsize for s in self.strides)).copy()

    def view(self, shape, strides, offset: int = 0) -> "DeviceArray":
        """A view of the same memory, ``offset`` elements in; strides of either sign.

        Raises
        ------
        ValueError
            When an element of the view would lie outside this array's allocation.
        """
        offset = _checks.integer("offset", offset)
        v = DeviceArray(shape, self.dtype, strides, _ptr=self.ptr + offset * self.itemsize, _owner=self)
        lo, hi = _extent(v.shape, v.strides)
        if hi >= lo and self._base is not None and (
                v.ptr + lo * self.itemsize < self._base
                or v.ptr + (hi + 1) * self.itemsize > self._base + self._base_bytes):
            raise ValueError(f"view: shape {v.shape}, strides {v.strides} at offset {offset} reaches outside the "
                             f"{self._base_bytes}-byte allocation")
        return v

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
        if getattr(self, "_owns", False) and self._base and _lib is not None:
            try:
                _lib.load().gemv_free(self._base)
            except Exception:
                pass
            self._base = self.ptr = 0


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


def _extent(shape, strides) -> tuple[int, int]:
    """Offsets (in elements, from element 0) of the lowest and the highest element; (0, -1)
    when the array is empty."""
    if any(n == 0 for n in shape):
        return 0, -1
    lo = sum((n - 1) * st for n, st in zip(shape, strides) if st < 0)
    hi = sum((n - 1) * st for n, st in zip(shape, strides) if st > 0)
    return lo, hi


def _to_storage(a: np.ndarray, name: str) -> np.ndarray:
    if name == "bfloat16":
        return float32_to_bfloat16_bits(a.astype(np.float32))
    return np.ascontiguousarray(a, dtype=_NP_DTYPES[name])

