"""Argument checks and their status codes, through the C ABI. None of these reach the GPU,
so they hold on a machine without one; where a valid call does reach the device check,
the no-GPU status and message are asserted (and the GPU suite covers the rest)."""
import ctypes

import pytest

import pygemv
from pygemv import _lib
from conftest import gpu_absent_reason

SUCCESS, INVALID_VALUE, INVALID_POINTER, NOT_SUPPORTED = 0, 1, 2, 3
P = 0x10000  # a plausible, 16-byte aligned non-NULL address (never dereferenced here)
NO_GPU = gpu_absent_reason() is not None


def call(op=0, dtype=0, m=4, k=4, alpha=1.0, A=P, lda=None, x=P, incx=1, beta=0.0, y=P, incy=1, ws=0, wsb=0,
         config=None):
    lib = _lib.load()
    lda = max(1, k) if lda is None else lda
    if config is None:
        return lib.gemv(op, dtype, m, k, alpha, A, lda, x, incx, beta, y, incy, ws, wsb, 0)
    return lib.gemv_with_config(ctypes.byref(config), op, dtype, m, k, alpha, A, lda, x, incx, beta, y, incy, ws,
                                wsb, 0)


def last_error() -> str:
    return _lib.load().gemv_last_error().decode()


@pytest.mark.parametrize("kwargs, needle", [
    (dict(m=-1), "m = -1"),
    (dict(k=-1, lda=1), "k = -1"),
    (dict(k=8, lda=7), "lda = 7"),
    (dict(m=0, k=8, lda=7), "lda = 7"),     # checked even when M is 0
    (dict(m=5, k=0, lda=0), "lda = 0"),     # lda >= max(1, K)
    (dict(incx=0), "incx = 0"),
    (dict(incy=0), "incy = 0"),
    (dict(dtype=3), "dtype = 3"),
    (dict(dtype=-1), "dtype = -1"),
    (dict(op=2), "op = 2"),
])
def test_invalid_values(kwargs, needle):
    assert call(**kwargs) == INVALID_VALUE
    assert needle in last_error()


def test_values_are_checked_before_pointers():
    assert call(m=-1, A=0, x=0, y=0) == INVALID_VALUE


@pytest.mark.parametrize("name", ["A", "x", "y"])
def test_null_operands(name):
    assert call(**{name: 0}) == INVALID_POINTER
    assert last_error() == f"{name} is NULL"


def test_null_a_and_x_allowed_when_alpha_is_zero():
    # alpha == 0: A and x are never read, so NULL passes the checks (the call then needs a device).
    st = call(alpha=0.0, beta=2.0, A=0, x=0)
    assert st != INVALID_POINTER
    if NO_GPU:
        assert st in (5, 6)


@pytest.mark.parametrize("kwargs", [dict(m=0), dict(k=0), dict(alpha=0.0, beta=1.0)])
def test_quick_returns_need_neither_pointers_nor_gpu(kwargs):
    assert call(A=0, x=0, y=0, **kwargs) == SUCCESS
    assert last_error() == ""


def batched(**kw):
    """gemv_strided_batched with a valid problem, overridden by kw."""
    a = dict(op=0, dtype=1, m=4, k=8, alpha=1.0, A=P, lda=8, stride_a=32, x=P, incx=1, stride_x=8, beta=0.0, y=P,
             incy=1, stride_y=4, batch=3, ws=0, wsb=0)
    a.update(kw)
    return _lib.load().gemv_strided_batched(*a.values(), 0)


@pytest.mark.parametrize("kwargs, needle", [
    (dict(batch=-1), "batch = -1"),
    (dict(stride_y=3), "outputs of different products overlap"),     # 4 outputs, 3 apart
    (dict(stride_y=0), "outputs of different products overlap"),
    (dict(op=1, stride_y=7), "outputs of different products overlap"),  # op T: y has k = 8 entries
    (dict(incy=2, stride_y=1), "outputs of different products overlap"),  # interleaved, but 2 < batch
    (dict(stride_a=1 << 62), "A spans more than 2^63 bytes"),
    (dict(batch=1 << 40, stride_x=1 << 30), "x spans more than 2^63 bytes"),
    (dict(lda=7), "lda = 7"),
])
def test_batch_checks(kwargs, needle):
    assert batched(**kwargs) == INVALID_VALUE
    assert needle in last_error()


def test_valid_batches_pass_the_value_checks():
    # Interleaved outputs (a transposed (batch, n) y), shared operands (stride 0), negative
    # strides and batch 0 (a quick return) are all valid.
    expect = SUCCESS if not NO_GPU else None
    for kw in (dict(incy=3, stride_y=1), dict(stride_a=0, stride_x=0), dict(stride_a=-32, stride_y=-4),
               dict(op=1, stride_y=8), dict(batch=0, stride_y=0)):
        st = batched(**kw)
        if kw.get("batch") == 0:
            assert st == SUCCESS, kw  # nothing to do: no device needed
        else:
            assert st in (SUCCESS, 2, 5, 6), (kw, last_error())  # past the value checks (pointers, device)
            assert expect is None or st == expect


def test_op_t_has_the_blas_checks_and_quick_returns():
    # lda >= max(1, K) for either op; an empty op(A) (M == 0 or K == 0) returns at once.
    assert call(op=1, k=8, lda=7) == INVALID_VALUE and "lda = 7" in last_error()
    assert call(op=1, m=0, A=0, x=0, y=0) == SUCCESS
    assert call(op=1, k=0, lda=1, A=0, x=0, y=0) == SUCCESS
    assert call(op=1, incy=0) == INVALID_VALUE and "incy = 0" in last_error()


def test_invalid_config_values():
    c = _lib.Config(99, 32, 8, 1, 1, 0, 1)
    assert call(config=c) == INVALID_VALUE and "variant = 99" in last_error()
    c = _lib.Config(2, 16, 8, 1, 1, 0, 1)  # warp_per_row takes p = 32 only
    assert call(config=c) == INVALID_VALUE and "threads_per_row = 16" in last_error()
    c = _lib.Config(2, 32, 8, 1, 3, 0, 1)
    assert call(config=c) == INVALID_VALUE and "unroll = 3" in last_error()
    c = _lib.Config(2, 32, 8, 1, 1, 0, 2)  # split_k on a variant without split-K
    assert call(config=c) == INVALID_VALUE and "split_k = 2" in last_error()
    c = _lib.Config(5, 32, 8, 1, 1, 0, 1)  # split-K variant without a split
    assert call(config=c) == INVALID_VALUE and "split_k = 1" in last_error()
    c = _lib.Config(2, 32, 32, 1, 4, 0, 1)  # 1024 threads with unroll 4
    assert call(config=c) == INVALID_VALUE and "unroll = 4 allows at most 512" in last_error()
    assert _lib.load().gemv_with_config(None, 0, 0, 4, 4, 1.0, P, 4, P, 1, 0.0, P, 1, 0, 0, 0) == INVALID_POINTER


def test_forced_config_that_cannot_run_the_alignment_is_not_supported_before_any_gpu_work():
    # An odd lda breaks 16-byte rows: a forced vector config says NOT_SUPPORTED. With no
    # GPU the device check comes first, so this asserts the check function instead.
    c = _lib.Config(2, 32, 8, 1, 1, 0, 1)
    lib = _lib.load()
    args = pygemv._registry.problem_args(64, 63, "float16", a_ptr=P, x_ptr=P, y_ptr=P)
    st = lib.gemv_check_config(ctypes.byref(c), ctypes.byref(args))
    assert st == NOT_SUPPORTED and "16-byte aligned" in last_error()


def test_python_raw_pointer_errors_name_the_argument():
    with pytest.raises(pygemv.InvalidValueError, match="lda = 3"):
        pygemv.gemv(P, P, P, m=4, k=4, lda=3, dtype="float16")
    with pytest.raises(pygemv.InvalidValueError, match="incx = 0"):
        pygemv.gemv(P, P, P, m=4, k=4, incx=0, dtype="float16")
    with pytest.raises(pygemv.InvalidPointerError, match="y is NULL"):
        pygemv.gemv(P, P, 0, m=4, k=4, dtype="bfloat16")
    with pytest.raises(TypeError, match="m=, k= and dtype="):
        pygemv.gemv(P, P, P, m=4)
    with pytest.raises(TypeError, match="dtype"):
        pygemv.gemv(P, P, P, m=4, k=4, dtype="int8")
    with pytest.raises(pygemv.InvalidValueError, match="batch = -2"):
        pygemv.gemv(P, P, P, m=4, k=4, dtype="float32", trans=True, batch=-2, stride_y=4)
    with pytest.raises(pygemv.InvalidValueError, match="overlap"):
        pygemv.gemv(P, P, P, m=4, k=4, dtype="float32", trans=True, batch=2, stride_y=2)


@pytest.mark.skipif(not NO_GPU, reason="asserts the no-GPU message; this machine has a GPU")
def test_no_gpu_status_and_message():
    with pytest.raises((pygemv.NoDriverError, pygemv.NoDeviceError)) as info:
        pygemv.gemv(P, P, P, m=4, k=4, dtype="float32")
    msg = str(info.value)
    assert ("libcuda" in msg and "driver" in msg) or "no CUDA device" in msg
    assert info.value.status in (5, 6)
    with pytest.raises((pygemv.NoDriverError, pygemv.NoDeviceError)):
        pygemv.device_count()
    with pytest.raises((pygemv.NoDriverError, pygemv.NoDeviceError)):
        pygemv.to_device([1.0, 2.0], "float32")
    # Argument checks still come first, and a later call behaves the same (no stuck state).
    with pytest.raises(pygemv.InvalidValueError):
        pygemv.gemv(P, P, P, m=-1, k=4, dtype="float32")
    with pytest.raises((pygemv.NoDriverError, pygemv.NoDeviceError)):
        pygemv.gemv(P, P, P, m=4, k=4, dtype="float32")


def test_gemv_ex_runs_the_same_checks():
    lib = _lib.load()
    assert lib.gemv_ex(None, None) == INVALID_POINTER and last_error() == "args is NULL"
    args = _lib.Args(0, 1, 4, 8, 1.0, 0.0, P, 7, P, 1, P, 1, 0, 0, 0, _lib.FLAG_TRUSTED_POINTERS)
    assert lib.gemv_ex(ctypes.byref(args), None) == INVALID_VALUE and "lda = 7" in last_error()
    args.lda, args.y = 8, None
    # Trusted pointers skip only the pointer-attribute queries, never the NULL checks.
    assert lib.gemv_ex(ctypes.byref(args), None) == INVALID_POINTER and last_error() == "y is NULL"
    args.y, args.m = P, 0
    assert lib.gemv_ex(ctypes.byref(args), None) == SUCCESS
    bad = _lib.Config(0, 1, 16, 0, 1, 0, 1)
    args.m = 4
    assert lib.gemv_ex(ctypes.byref(args), ctypes.byref(bad)) == INVALID_VALUE
