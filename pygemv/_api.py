"""``pygemv.gemv``: the Python entry point, on raw pointers or on CUDA arrays."""
from __future__ import annotations

import ctypes
import struct
import sys
import threading

from . import _checks, _lib
from ._device import current_device, dtype_name, set_device
from ._operands import allocate_like, as_operand, current_stream, stream_handle
from ._quant import QuantizedMatrix
from ._registry import Config, problem_args

_device_count: int | None = None


def _single_device() -> bool:
    """One visible GPU: no device switching to consider (checked once)."""
    global _device_count
    if _device_count is None:
        n = ctypes.c_int(0)
        _lib.load().gemv_device_count(ctypes.byref(n))
        _device_count = n.value
    return _device_count == 1


def _blas_pointer(ptr: int, n: int, inc: int, itemsize: int) -> int:
    """Reference BLAS expects the lowest address with a negative increment; an array view
    gives the address of logical element 0."""
    return ptr + (n - 1) * inc * itemsize if inc < 0 and n > 0 else ptr


def gemv(A, x, y=None, *, alpha: float = 1.0, beta: float = 0.0, trans: bool = False,
         m: int | None = None, k: int | None = None, dtype=None, lda: int | None = None,
         incx: int = 1, incy: int = 1, batch: int | None = None, stride_a: int = 0, stride_x: int = 0,
         stride_y: int = 0, stream=None, config: Config | None = None,
         workspace: tuple[int, int] | None = None):
    """Matrix-vector product ``y = alpha * op(A) @ x + beta * y`` on the GPU, one or a batch.

    Parameters
    ----------
    A : CUDA array, pygemv.QuantizedMatrix or int
        A :class:`pygemv.QuantizedMatrix` (int4/int8 weights; op N, 1-D x and y of its
        dtype). Or an M x K row-major matrix (unit stride along its last axis; the row stride is
        lda) from torch, CuPy, Numba, any ``__cuda_array_interface__`` or ``__dlpack__``
        producer, or :class:`pygemv.DeviceArray`; or a batch of them, shape (batch, M, K),
        any batch stride (0 reuses one matrix). Or a raw device pointer (int), with ``m``,
        ``k`` and ``dtype`` given.
    x : CUDA array or int
        Vector of K entries (M with ``trans``), any stride, including negative; with a
        batch, shape (batch, K) (a 1-D x is shared by every product). A 2-D A with a 2-D x
        multiplies one matrix by a batch of vectors.
    y : CUDA array or int, optional
        Vector of M entries (K with ``trans``), or (batch, M) with a batch, updated in
        place. If omitted, it is allocated with the same library as ``x`` (and ``beta``
        must be 0).
    alpha, beta : float
        Scalars. ``beta == 0`` assigns y (NaN in y does not leak in).
    trans : bool
        Use ``A.T``: ``y = alpha * A.T @ x + beta * y``.
    m, k, dtype, lda, incx, incy :
        Raw-pointer mode only: sizes, storage type ('float32', 'float16', 'bfloat16'),
        leading dimension (default ``max(1, k)``) and increments (BLAS meaning).
    batch, stride_a, stride_x, stride_y : int, optional
        Raw-pointer mode only: a strided batch (cuBLAS's ``gemvStridedBatched``): product b
        reads ``A + b * stride_a`` and ``x + b * stride_x`` and writes ``y + b * stride_y``
        (strides in elements; 0 reuses an operand).
    stream : int or stream object, optional
        Stream to queue on. Default: the current stream of the arrays' library (torch,
        CuPy), else the legacy default stream.
    config : pygemv.Config, optional
        Force a variant and its parameters instead of the dispatcher's choice.
    workspace : (int, int), optional
        ``(device pointer, bytes)`` for split-K. Default: libgemv's pool, a buffer per
        stream and thread (``GEMV_FLAG_LIBRARY_WORKSPACE``).

    Returns
    -------
    y
        The output array (raw-pointer mode: the pointer).

    Raises
    ------
    TypeError, ValueError
        Naming the argument whose type, dtype, shape, stride or device is wrong.
    pygemv.GemvError
        Its subclass for the C status (see ``pygemv.errors``).
    """
    if type(A) is (_torch_tensor or _torch_tensor_type()):
        out = _gemv_torch(A, x, y, alpha, beta, trans, stream, config, workspace)
        if out is not None:
            return out
    if isinstance(A, QuantizedMatrix):
        return _gemv_quantized(A, x, y, alpha, beta, trans, stream, config, workspace)
    op = _lib.OP_T if trans else _lib.OP_N
    if isinstance(A, int):
        return _gemv_pointers(A, x, y, alpha, beta, op, m, k, dtype, lda, incx, incy,
                              1 if batch is None else batch, stride_a, stride_x, stride_y, stream, config, workspace)

    a = as_operand(A, "A")
    xo = as_operand(x, "x")
    if len(a.shape) not in (2, 3):
        raise ValueError(f"A must be 2-D (M, K) or 3-D (batch, M, K), got shape {a.shape}")
    if len(xo.shape) not in (1, 2):
        raise ValueError(f"x must be 1-D, or 2-D (batch, n) for a batch, got shape {xo.shape}")
    if xo.dtype != a.dtype:
        raise TypeError(f"x has dtype {xo.dtype}, but A has {a.dtype}")
    batched = len(a.shape) == 3 or len(xo.shape) == 2
    nb = a.shape[0] if len(a.shape) == 3 else xo.shape[0] if len(xo.shape) == 2 else 1
    M, K = a.shape[-2:]
    nx, ny = (M, K) if trans else (K, M)
    if xo.shape[-1] != nx:
        raise ValueError(f"x has {xo.shape[-1]} entries; A{'.T' if trans else ''} of shape {a.shape[-2:]} needs {nx}")
    if len(xo.shape) == 2 and xo.shape[0] != nb:
        raise ValueError(f"x has a batch of {xo.shape[0]}, but A has {nb}")
    if y is None:
        if beta != 0:
            raise ValueError("y: omitted, so beta must be 0 (there is no y to scale)")
        y = allocate_like(xo, (nb, ny) if batched else (ny,))
    yo = as_operand(y, "y")
    want_y = (nb, ny) if batched else (ny,)
    if tuple(yo.shape) != want_y:
        raise ValueError(f"y must have shape {want_y}, got {tuple(yo.shape)}")
    if yo.dtype != a.dtype:
        raise TypeError(f"y has dtype {yo.dtype}, but A has {a.dtype}")
    devices = {o.device for o in (a, xo, yo) if o.device is not None}
    if len(devices) > 1:
        raise ValueError(f"A, x and y are on different devices: A on {a.device}, x on {xo.device}, y on {yo.device}")

    # Row-major with unit stride along K; a single row or column needs neither.
    sa0, sa1 = a.strides[-2:]
    if K > 1 and sa1 != 1:
        raise ValueError(f"A must have unit stride along its last axis (row-major), got strides {a.strides}"
                         + ("; for a column-major A pass A.T with trans=True" if sa0 == 1 else ""))
    lda_ = sa0 if M > 1 else max(1, K)
    if M > 1 and lda_ < max(1, K):
        raise ValueError(f"A: row stride {sa0} is smaller than its {K} columns (overlapping rows)")
    incx_, incy_ = xo.strides[-1], yo.strides[-1]
    if nx > 1 and incx_ == 0:
        raise ValueError("x has stride 0 (a broadcast view); pass a materialised vector")
    if ny > 1 and incy_ == 0:
        raise ValueError("y has stride 0 (a broadcast view); y must have distinct entries")
    incx_ = incx_ or 1
    incy_ = incy_ or 1
    sa = a.strides[0] if len(a.shape) == 3 else 0
    sx = xo.strides[0] if len(xo.shape) == 2 else 0
    sy = yo.strides[0] if batched else 0
    itemsize = _lib.DTYPE_SIZES[a.dtype]

    device = next(iter(devices)) if devices else None
    restore = None
    if device is not None and not _single_device():
        cur = current_device()
        if cur != device:
            set_device(device)
            restore = cur
    try:
        s = stream_handle(stream) if stream is not None else current_stream(a)
        # __cuda_array_interface__ v3: an array that names its stream is ready in that
        # stream's order, so the call's stream waits for it first.
        for o in (a, xo, yo):
            if o.stream is not None and o.stream != s:
                _lib.check(_lib.load().gemv_stream_wait(s, o.stream), "stream")
        _call(config, op, a.dtype, M, K, alpha, a.ptr, lda_, _blas_pointer(xo.ptr, nx, incx_, itemsize), incx_, beta,
              _blas_pointer(yo.ptr, ny, incy_, itemsize), incy_, workspace, s, nb, sa, sx, sy)
    finally:
        if restore is not None:
            set_device(restore)
    return y


def _gemv_quantized(Q, x, y, alpha, beta, trans, stream, config, workspace):
    """y = alpha * W x + beta * y for quantized weights W (op N, single product)."""
    if trans:
        raise ValueError("trans: quantized weights take op N only (y = W @ x)")
    M, K = Q.shape
    xo = as_operand(x, "x")
    if len(xo.shape) != 1 or xo.shape[0] != K:
        raise ValueError(f"x must have shape ({K},) for a {M} x {K} QuantizedMatrix, got {tuple(xo.shape)}")
    if xo.dtype != Q.dtype:
        raise TypeError(f"x has dtype {xo.dtype}, but the QuantizedMatrix's scales are {Q.dtype}")
    if y is None:
        if beta != 0:
            raise ValueError("y: omitted, so beta must be 0 (there is no y to scale)")
        y = allocate_like(xo, (M,))
    yo = as_operand(y, "y")
    if tuple(yo.shape) != (M,):
        raise ValueError(f"y must have shape ({M},), got {tuple(yo.shape)}")
    if yo.dtype != Q.dtype:
        raise TypeError(f"y has dtype {yo.dtype}, but the QuantizedMatrix's scales are {Q.dtype}")
    incx_, incy_ = xo.strides[0] or 1, yo.strides[0] or 1
    if M > 1 and yo.strides[0] == 0:
        raise ValueError("y has stride 0 (a broadcast view); y must have distinct entries")
    itemsize = _lib.DTYPE_SIZES[Q.dtype]
    s = stream_handle(stream) if stream is not None else current_stream(xo)
    for o in (xo, yo):
        if o.stream is not None and o.stream != s:
            _lib.check(_lib.load().gemv_stream_wait(s, o.stream), "stream")
    _call(config, _lib.OP_N, Q.dtype, M, K, alpha, 0, max(1, K), _blas_pointer(xo.ptr, K, incx_, itemsize), incx_,
          beta, _blas_pointer(yo.ptr, M, incy_, itemsize), incy_, workspace, s, qweight=Q)
    return y


_torch_tensor: type | None = None  # torch.Tensor, once torch has been imported by the caller
_TORCH_CODES: dict = {}  # torch dtype -> gemv_dtype_t
_raw_stream = None  # torch._C._cuda_getCurrentRawStream, bound once
_torch_current_device = None  # torch._C._cuda_getDevice (the thread's CUDA device), bound once
_tls = threading.local()  # one reusable gemv_args_t per thread for the torch hot path


class _NoTensorType:
    """Stands in for torch.Tensor while torch is not imported: no object has this type."""


def _torch_tensor_type() -> type:
    """torch.Tensor when torch is imported (pygemv never imports it), else a type nothing has."""
    global _torch_tensor, _raw_stream, _torch_current_device
    torch = sys.modules.get("torch")
    if torch is None or not hasattr(torch, "Tensor"):
        return _NoTensorType
    _TORCH_CODES.update({torch.float32: _lib.DTYPES["float32"], torch.float16: _lib.DTYPES["float16"],
                         torch.bfloat16: _lib.DTYPES["bfloat16"]})
    _raw_stream = getattr(torch._C, "_cuda_getCurrentRawStream", None) or (
        lambda dev: torch.cuda.current_stream(dev).cuda_stream)
    _torch_current_device = getattr(torch._C, "_cuda_getDevice", None) or torch.cuda.current_device
    _torch_tensor = torch.Tensor
    return _torch_tensor


def _gemv_torch(A, x, y, alpha, beta, trans, stream, config, workspace):
    """The eager hot path for the common torch case: CUDA tensors on one device, a
    row-major 2-D A, 1-D x and y with positive strides, matching dtypes and sizes, op N
    or T. Each torch
    attribute read costs about 0.1 us, so it reads each once, and only what it needs.
    With several GPUs it also needs the tensors on the current device (libgemv launches
    there); the general path switches devices for the others.
    Returns None for anything else, which the general path then handles, or rejects with
    its precise messages."""
    dt = A.dtype
    code = _TORCH_CODES.get(dt)
    T = _torch_tensor
    if code is None or type(x) is not T or x.dtype is not dt:
        return None
    try:  # (len() of a tensor is a Python-level method: 0.5 us against 0.3 for the unpacking)
        M, K = A.shape
        (nx,) = x.shape
    except ValueError:  # wrong number of dimensions
        return None
    if nx != (M if trans else K):
        return None
    ny = K if trans else M
    if A.is_contiguous():
        lda = K if K > 1 else 1
    else:
        sa0, sa1 = A.stride()
        if (K > 1 and sa1 != 1) or (M > 1 and sa0 < K):
            return None
        lda = sa0 if M > 1 else max(1, K)
    incx = 1 if x.is_contiguous() else x.stride()[0]
    dev = A.get_device()
    if incx <= 0 or dev < 0 or x.get_device() != dev or (
            _device_count != 1 and not _single_device() and _torch_current_device() != dev):
        return None
    if y is None:
        if beta != 0:
            return None
        y = A.new_empty(ny)
        incy = 1
    else:
        if type(y) is not T or y.dtype is not dt:
            return None
        try:
            (n,) = y.shape
        except ValueError:
            return None
        if n != ny:
            return None
        incy = 1 if y.is_contiguous() else y.stride()[0]
        if incy <= 0 or y.get_device() != dev:
            return None
    s = _raw_stream(dev) if stream is None else stream_handle(stream)
    if workspace is not None:
        return None  # the general path checks the caller's workspace
    try:
        args = _tls.args
    except AttributeError:
        args = _tls.args = _lib.Args()
    try:
        # Torch guarantees these are device pointers of device dev: skip the pointer queries.
        _lib.ARGS_LAYOUT.pack_into(args, 0, _lib.ARGS_SIZE, _lib.OP_T if trans else _lib.OP_N, code, M, K, alpha, beta,
                                   A.data_ptr(), lda, x.data_ptr(), incx, y.data_ptr(), incy, 0, 0, s or 0,
                                   _lib.FLAG_TRUSTED_POINTERS | _lib.FLAG_LIBRARY_WORKSPACE, 1, 0, 0, 0, 0)
    except (struct.error, TypeError, OverflowError):  # alpha or beta not a real number, or too large
        return None
    c = None if config is None else ctypes.byref(config.to_c() if isinstance(config, Config) else config)
    st = (_gemv_ex or _bind_gemv_ex())(args, c)
    if st:
        _lib.check(st, "gemv")
    return y


_gemv_ex = None  # libgemv's gemv_ex, bound once: the hot path skips the loader's lookup


def _bind_gemv_ex():
    global _gemv_ex
    _gemv_ex = _lib.load().gemv_ex
    return _gemv_ex


def _gemv_pointers(A, x, y, alpha, beta, op, m, k, dtype, lda, incx, incy, batch, stride_a, stride_x, stride_y,
                   stream, config, workspace):
    if m is None or k is None or dtype is None:
        raise TypeError("A is a raw pointer: m=, k= and dtype= are required")
    for name, v in (("x", x), ("y", y)):
        if not isinstance(v, int):
            raise TypeError(f"{name}: with a raw pointer A, {name} must be a raw pointer (int) too, "
                            f"got {type(v).__name__}")
    name = dtype_name(dtype)
    s = stream_handle(stream)
    k = _checks.integer("k", k)
    _call(config, op, name, m, k, alpha, A, max(1, k) if lda is None else lda, x, incx, beta, y, incy,
          workspace, s, batch, stride_a, stride_x, stride_y)
    return y


def _call(config, op, dtype, m, k, alpha, A, lda, x, incx, beta, y, incy, workspace, stream, batch=1,
          stride_a=0, stride_x=0, stride_y=0, qweight=None):
    c = _checks
    flags = 0
    if workspace is None:
        ws, ws_bytes, flags = 0, 0, _lib.FLAG_LIBRARY_WORKSPACE
    else:
        try:
            ws, ws_bytes = workspace
        except (TypeError, ValueError):
            raise TypeError(f"workspace must be a (device pointer, bytes) pair, got {workspace!r}") from None
        ws, ws_bytes = c.pointer("workspace pointer", ws), c.size("workspace bytes", ws_bytes)
    args = _lib.Args(op, _lib.DTYPES[dtype], c.integer("m", m), c.integer("k", k), c.scalar("alpha", alpha),
                     c.scalar("beta", beta), c.pointer("A", A), c.integer("lda", lda), c.pointer("x", x),
                     c.integer("incx", incx), c.pointer("y", y), c.integer("incy", incy), ws, ws_bytes,
                     c.pointer("stream", stream), flags, c.integer("batch", batch), c.integer("stride_a", stride_a),
                     c.integer("stride_x", stride_x), c.integer("stride_y", stride_y),
                     ctypes.addressof(qweight.descriptor) if qweight is not None else None)
    cfg = None if config is None else ctypes.byref(config.to_c() if isinstance(config, Config) else config)
    st = _lib.load().gemv_ex(ctypes.byref(args), cfg)
    if st:
        _lib.check(st, "gemv")


def select_config(m: int, k: int, dtype="float32", *, workspace_bytes: int = _lib.WORKSPACE_RECOMMENDED_BYTES,
                  use_table: bool = True, **problem) -> Config:
    """The config the automatic dispatcher picks for this problem on the current GPU.

    Parameters
    ----------
    m, k : int
        The shape of A.
    dtype : str or dtype
        float32, float16 or bfloat16.
    workspace_bytes : int
        Workspace the call would get (split-K needs some).
    use_table : bool
        False: the built-in heuristic's choice, ignoring any tuned table.
    **problem
        ``trans``, ``lda``, ``incx``, ``incy``, ``a_ptr``, ``x_ptr``, ``y_ptr``, ``batch``
        and the batch strides (:func:`pygemv._registry.problem_args`); pointers only
        matter for their alignment.
    """
    c = _lib.Config()
    lib = _lib.load()
    args = problem_args(m, k, dtype_name(dtype), workspace_bytes=workspace_bytes,
                        flags=0 if use_table else _lib.FLAG_NO_TABLE, **problem)
    _lib.check(lib.gemv_select_config_ex(ctypes.byref(args), ctypes.byref(c), None), "select_config")
    return Config.from_c(c)
