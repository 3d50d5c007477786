"""Reading CUDA arrays of any library (torch, CuPy, Numba, DLPack producers, pygemv's own)
into (pointer, shape, element strides, dtype, device), and resolving streams."""
from __future__ import annotations

import ctypes
import sys
from typing import Any, NamedTuple

from . import _checks
from ._device import DeviceArray, dtype_name

_TYPESTRS = {"<f4": "float32", "<f2": "float16"}


class Operand(NamedTuple):
    ptr: int                  # address of logical element 0
    shape: tuple
    strides: tuple            # in elements
    dtype: str
    device: int | None        # None when the producer does not say
    kind: str                 # 'torch', 'cupy', 'numba', 'pygemv', 'cai', 'dlpack'
    keepalive: Any            # what must stay alive during the call
    stream: int | None = None  # a producer's stream (CAI v3 'stream' key)


def _torch():
    return sys.modules.get("torch")  # never import torch ourselves


def as_operand(obj, name: str) -> Operand:
    """Describe a CUDA array; ``name`` is the argument's name, used in error messages."""
    torch = _torch()
    if torch is not None and isinstance(obj, torch.Tensor):
        return _from_torch(obj, name, torch)
    if isinstance(obj, DeviceArray):
        return Operand(obj.ptr, obj.shape, obj.strides, obj.dtype, None, "pygemv", obj)
    cai = getattr(obj, "__cuda_array_interface__", None)
    if cai is not None:
        return _read(_from_cai, obj, cai, name, what="__cuda_array_interface__",
                     hint="; it needs 'shape', 'typestr', 'data': (pointer, read_only) and optional 'strides'")
    if hasattr(obj, "__dlpack__"):
        return _read(_from_dlpack, obj, name, what="DLPack object")
    raise TypeError(f"{name}: expected a CUDA array (torch tensor, CuPy/Numba array, an object with "
                    f"__cuda_array_interface__ or __dlpack__, or pygemv.DeviceArray), got {type(obj).__name__}")


def _read(reader, *args, what: str, hint: str = "") -> Operand:
    """``reader(*args)``, whose last argument is the operand's name: a malformed producer's
    KeyError, IndexError, ... becomes a ValueError naming the argument."""
    name = args[-1]
    try:
        return reader(*args)
    except (KeyError, IndexError, TypeError, ValueError, AttributeError, OverflowError) as e:
        if isinstance(e, (TypeError, ValueError)) and str(e).startswith(name):
            raise  # already names the argument and the fault
        raise ValueError(f"{name}: malformed {what} ({type(e).__name__}: {e}){hint}") from e


_TORCH_DTYPES: dict = {}


def _from_torch(t, name: str, torch) -> Operand:
    if not _TORCH_DTYPES:
        _TORCH_DTYPES.update({torch.float32: "float32", torch.float16: "float16", torch.bfloat16: "bfloat16"})
    dtype = _TORCH_DTYPES.get(t.dtype)
    if dtype is None:
        raise TypeError(f"{name}: dtype {t.dtype} is not supported; use float32, float16 or bfloat16")
    device = t.get_device()
    if device < 0:  # a CPU tensor
        raise ValueError(f"{name} is on {t.device}; pygemv needs CUDA tensors")
    return Operand(t.data_ptr(), t.shape, t.stride(), dtype, device, "torch", t)


def _from_cai(obj, cai: dict, name: str) -> Operand:
    if not isinstance(cai, dict):
        raise TypeError(f"{name}: __cuda_array_interface__ must be a dict, got {type(cai).__name__}")
    typestr = cai["typestr"]
    dtype = _TYPESTRS.get(typestr)
    if dtype is None:
        raise TypeError(f"{name}: __cuda_array_interface__ typestr {typestr!r} is not supported "
                        "(use float32 or float16; bfloat16 through torch, DLPack or pygemv.DeviceArray)")
    if cai.get("mask") is not None:
        raise ValueError(f"{name}: masked arrays are not supported")
    itemsize = int(typestr[2:])
    shape = tuple(_checks.integer(f"{name}: shape[{i}]", n, 0) for i, n in enumerate(cai["shape"]))
    strides = cai.get("strides")
    if strides is None:
        from ._device import _c_strides
        el = _c_strides(shape)
    else:
        strides = tuple(_checks.integer(f"{name}: strides[{i}]", st) for i, st in enumerate(strides))
        if len(strides) != len(shape):
            raise ValueError(f"{name}: strides {strides} do not match shape {shape}")
        if any(s % itemsize for s in strides):
            raise ValueError(f"{name}: strides {strides} are not multiples of the item size {itemsize}")
        el = tuple(s // itemsize for s in strides)
    module = type(obj).__module__.split(".")[0]
    device = None
    kind = {"cupy": "cupy", "numba": "numba"}.get(module, "cai")
    if kind == "cupy":
        device = obj.device.id
    stream = cai.get("stream") if cai.get("version", 0) >= 3 else None
    if stream is not None:
        stream = _checks.integer(f"{name}: __cuda_array_interface__ stream", stream, 1, _checks.UINT64[1])
    data = cai["data"]
    if not isinstance(data, (tuple, list)) or len(data) != 2:
        raise ValueError(f"{name}: __cuda_array_interface__ 'data' must be (pointer, read_only), got {data!r}")
    return Operand(_checks.pointer(f"{name}: data pointer", data[0]), shape, el, dtype, device, kind, obj, stream)


class _DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class _DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class _DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", _DLDevice), ("ndim", ctypes.c_int32),
                ("dtype", _DLDataType), ("shape", ctypes.POINTER(ctypes.c_int64)),
                ("strides", ctypes.POINTER(ctypes.c_int64)), ("byte_offset", ctypes.c_uint64)]


_KDL_CUDA, _KDL_CUDA_MANAGED = 2, 13
_DL_DTYPES = {(2, 32): "float32", (2, 16): "float16", (4, 16): "bfloat16"}  # (code, bits)
_capsule_pointer = ctypes.pythonapi.PyCapsule_GetPointer
_capsule_pointer.restype = ctypes.c_void_p
_capsule_pointer.argtypes = [ctypes.py_object, ctypes.c_char_p]


_KDL_CPU = 1


def _from_dlpack(obj, name: str) -> Operand:
    dev_type, dev_id = obj.__dlpack_device__()
    if dev_type == _KDL_CPU:
        raise TypeError(f"{name} is a host array ({type(obj).__module__}.{type(obj).__name__}); pygemv needs GPU "
                        f"memory: copy it with pygemv.to_device({name}), or pass a torch/CuPy CUDA array")
    if dev_type not in (_KDL_CUDA, _KDL_CUDA_MANAGED):
        raise ValueError(f"{name}: DLPack device type {dev_type} is not CUDA")
    # No stream argument: the producer makes the data ready for the legacy default stream.
    capsule = obj.__dlpack__()
    # The capsule stays unconsumed (named "dltensor"): its destructor frees the tensor when
    # the capsule is dropped after the call.
    t = _DLTensor.from_address(_capsule_pointer(capsule, b"dltensor"))
    dtype = _DL_DTYPES.get((t.dtype.code, t.dtype.bits))
    if dtype is None or t.dtype.lanes != 1:
        raise TypeError(f"{name}: DLPack dtype (code {t.dtype.code}, bits {t.dtype.bits}) is not supported")
    shape = tuple(t.shape[i] for i in range(t.ndim))
    if t.strides:
        strides = tuple(t.strides[i] for i in range(t.ndim))
    else:
        from ._device import _c_strides
        strides = _c_strides(shape)
    return Operand((t.data or 0) + t.byte_offset, shape, strides, dtype, dev_id, "dlpack", (obj, capsule))


def stream_handle(stream) -> int:
    """A raw ``cudaStream_t`` from an int or a stream object of any library."""
    if stream is None:
        return 0
    if isinstance(stream, int):
        return stream
    proto = getattr(stream, "__cuda_stream__", None)
    if proto is not None:  # CUDA stream protocol: (version, handle)
        return int(proto()[1] if callable(proto) else proto[1])
    for attr in ("cuda_stream", "ptr", "handle"):  # torch, CuPy, Numba/pygemv
        h = getattr(stream, attr, None)
        if h is not None:
            return int(getattr(h, "value", h) or 0)
    raise TypeError(f"stream: expected an int handle or an object with __cuda_stream__, .cuda_stream, .ptr "
                    f"or .handle, got {type(stream).__name__}")


def current_stream(op: Operand) -> int:
    """The caller library's current stream for this operand's device (0 when it has none)."""
    if op.kind == "torch":
        torch = _torch()
        try:
            return torch._C._cuda_getCurrentRawStream(op.device)
        except AttributeError:
            return torch.cuda.current_stream(op.device).cuda_stream
    if op.kind == "cupy":
        import cupy
        return cupy.cuda.get_current_stream().ptr
    if op.stream is not None:
        return int(op.stream)
    return 0


def allocate_like(op: Operand, shape: tuple):
    """A new contiguous array of ``shape`` from the operand's own library."""
    if op.kind == "torch":
        t = op.keepalive
        return _torch().empty(shape, dtype=t.dtype, device=t.device)
    if op.kind == "cupy":
        import cupy
        with cupy.cuda.Device(op.device):
            return cupy.empty(shape, dtype=op.dtype)
    if op.kind == "numba":
        from numba import cuda
        return cuda.device_array(shape, dtype=op.dtype)
    return DeviceArray.empty(tuple(shape), op.dtype)


__all__ = ["Operand", "as_operand", "stream_handle", "current_stream", "allocate_like", "dtype_name"]
