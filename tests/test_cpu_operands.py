"""Reading arrays of other libraries (CUDA array interface, DLPack), streams, and the
Python-side argument errors, without a GPU: fake producers stand in for real ones."""
import ctypes

import numpy as np
import pytest

import pygemv
from pygemv._device import bfloat16_bits_to_float32, float32_to_bfloat16_bits
from pygemv._operands import as_operand, stream_handle
from conftest import gpu_absent_reason

NO_GPU = gpu_absent_reason() is not None


class FakeCAI:
    """A CUDA-array-interface producer (v3) that points at made-up addresses."""

    def __init__(self, shape, typestr="<f4", strides=None, ptr=0x10000, stream=None):
        self.__cuda_array_interface__ = {"shape": shape, "typestr": typestr, "data": (ptr, False),
                                         "strides": strides, "version": 3}
        if stream is not None:
            self.__cuda_array_interface__["stream"] = stream


def test_cuda_array_interface_is_read_in_elements():
    op = as_operand(FakeCAI((3, 5), "<f2", strides=(16, 2), ptr=0x2000, stream=7), "A")
    assert (op.ptr, op.shape, op.strides, op.dtype, op.kind, op.stream) == (0x2000, (3, 5), (8, 1), "float16", "cai", 7)
    op = as_operand(FakeCAI((4, 6)), "A")  # no strides: C-contiguous
    assert op.strides == (6, 1) and op.dtype == "float32"
    with pytest.raises(TypeError, match="^x: __cuda_array_interface__ typestr '<f8'"):
        as_operand(FakeCAI((3,), "<f8"), "x")
    with pytest.raises(ValueError, match="^y: strides"):
        as_operand(FakeCAI((3,), "<f4", strides=(6,)), "y")
    with pytest.raises(TypeError, match="^A: expected a CUDA array"):
        as_operand([1.0, 2.0], "A")


def test_dlpack_tensor_is_parsed():
    host = np.arange(12, dtype=np.float16).reshape(3, 4)[:, ::2]

    class PretendCUDA:  # numpy's capsule, announced as CUDA memory, to exercise the parser
        def __dlpack__(self, stream=None):
            return host.__dlpack__()

        def __dlpack_device__(self):
            return (2, 0)

    op = as_operand(PretendCUDA(), "x")
    assert op.shape == (3, 2) and op.strides == (4, 2) and op.dtype == "float16" and op.device == 0
    assert op.ptr == host.ctypes.data
    with pytest.raises(TypeError, match=r"^A is a host array \(numpy.ndarray\).*pygemv.to_device\(A\)"):
        as_operand(np.zeros((2, 2), np.float32), "A")


def test_stream_handles_of_every_library():
    class Torchish:
        cuda_stream = 11

    class Cupyish:
        ptr = 12

    class Numbaish:
        handle = ctypes.c_void_p(13)

    class Protocol:
        def __cuda_stream__(self):
            return (0, 14)

    assert [stream_handle(s) for s in (None, 10, Torchish(), Cupyish(), Numbaish(), Protocol())] == \
        [0, 10, 11, 12, 13, 14]
    with pytest.raises(TypeError, match="^stream: expected"):
        stream_handle("default")


def test_python_checks_name_the_argument_before_any_gpu_work():
    A, x, y = FakeCAI((8, 4)), FakeCAI((4,)), FakeCAI((8,))
    with pytest.raises(ValueError, match="^A must be 2-D"):
        pygemv.gemv(FakeCAI((8,)), x, y)
    with pytest.raises(ValueError, match="^x must be 1-D"):
        pygemv.gemv(A, FakeCAI((4, 1, 1)), y)
    with pytest.raises(ValueError, match="^x has 1 entries"):
        pygemv.gemv(A, FakeCAI((4, 1)), y)
    with pytest.raises(ValueError, match="^x has 5 entries"):
        pygemv.gemv(A, FakeCAI((5,)), y)
    with pytest.raises(TypeError, match="^x has dtype float16, but A has float32"):
        pygemv.gemv(A, FakeCAI((4,), "<f2"), y)
    with pytest.raises(ValueError, match=r"^y must have shape \(8,\)"):
        pygemv.gemv(A, x, FakeCAI((7,)))
    # op T: x has M entries, y has K.
    with pytest.raises(ValueError, match=r"^x has 4 entries; A.T of shape \(8, 4\) needs 8"):
        pygemv.gemv(A, x, FakeCAI((4,)), trans=True)
    with pytest.raises(ValueError, match=r"^y must have shape \(4,\)"):
        pygemv.gemv(A, FakeCAI((8,)), y, trans=True)
    # Batches: (batch, M, K) with (batch, K) and (batch, M).
    A3 = FakeCAI((3, 8, 4))
    with pytest.raises(ValueError, match="^x has a batch of 2, but A has 3"):
        pygemv.gemv(A3, FakeCAI((2, 4)), FakeCAI((3, 8)))
    with pytest.raises(ValueError, match=r"^y must have shape \(3, 8\)"):
        pygemv.gemv(A3, FakeCAI((3, 4)), FakeCAI((8,)))
    with pytest.raises(ValueError, match=r"^y must have shape \(3, 4\)"):
        pygemv.gemv(A3, FakeCAI((3, 8)), FakeCAI((3, 8)), trans=True)
    with pytest.raises(TypeError, match="^y has dtype"):
        pygemv.gemv(A, x, FakeCAI((8,), "<f2"))
    with pytest.raises(ValueError, match="^A must have unit stride along its last axis.*trans=True"):
        pygemv.gemv(FakeCAI((8, 4), strides=(4, 32)), x, y)
    with pytest.raises(ValueError, match="^A: row stride 2 is smaller than its 4 columns"):
        pygemv.gemv(FakeCAI((8, 4), strides=(8, 4)), x, y)
    with pytest.raises(ValueError, match="^x has stride 0"):
        pygemv.gemv(A, FakeCAI((4,), strides=(0,)), y)
    with pytest.raises(ValueError, match="^y: omitted, so beta must be 0"):
        pygemv.gemv(A, x, beta=0.5)


@pytest.mark.skipif(not NO_GPU, reason="asserts the no-GPU path; this machine has a GPU")
def test_valid_arrays_reach_the_library_which_reports_no_gpu():
    with pytest.raises((pygemv.NoDriverError, pygemv.NoDeviceError)):
        pygemv.gemv(FakeCAI((8, 4)), FakeCAI((4,)), FakeCAI((8,)))


def test_bfloat16_conversion_rounds_to_nearest_even():
    a = np.array([1.0, 1.00390625, 1.01171875, -2.5, np.inf, np.nan, 3.0e38], dtype=np.float32)
    bits = float32_to_bfloat16_bits(a)
    back = bfloat16_bits_to_float32(bits)
    assert back[0] == 1.0 and back[1] == 1.0          # tie: to even
    assert back[2] == 1.015625                         # tie: up to even
    assert back[3] == -2.5 and np.isinf(back[4]) and np.isnan(back[5])
    assert abs(back[6] - 3.0e38) / 3.0e38 < 2**-8
    r = np.random.default_rng(0).standard_normal(1000).astype(np.float32)
    assert np.all(np.abs(bfloat16_bits_to_float32(float32_to_bfloat16_bits(r)) - r) <= 2**-8 * np.abs(r))


def test_dtype_spellings():
    from pygemv._device import dtype_name
    assert dtype_name(np.float16) == "float16" and dtype_name("bf16") == "bfloat16"
    assert dtype_name(np.dtype("float32")) == "float32"
    with pytest.raises(TypeError, match="^dtype: "):
        dtype_name("int8")
