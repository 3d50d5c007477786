"""Where the host time of one eager pygemv.gemv call goes (1024x1024 fp16, torch tensors).
Prints microseconds per call of each layer, best of 5 x 2000 calls."""
import ctypes
import torch

import pygemv
from pygemv import _lib
from pygemv._operands import as_operand
from pygemv.timing import host_call_us

A = torch.randn(1024, 1024, device="cuda").half()
x = torch.randn(1024, device="cuda").half()
y = torch.empty(1024, device="cuda").half()
lib = _lib.load()
s = torch.cuda.current_stream().cuda_stream
pa, px, py = A.data_ptr(), x.data_ptr(), y.data_ptr()
cfg = _lib.Config()
trusted = _lib.Args(0, 1, 1024, 1024, 1.0, 0.0, pa, 1024, px, 1, py, 1, 0, 0, s, 1)


def per_call(fn):
    return host_call_us(fn, torch.cuda.synchronize)


rows = {
    "ctypes gemv_version() (call floor)": lambda: lib.gemv_version(),
    "C gemv, quick return (checks only)": lambda: lib.gemv(0, 1, 1024, 1024, 0.0, pa, 1024, px, 1, 1.0, py, 1, 0, 0, s),
    "C gemv, full call": lambda: lib.gemv(0, 1, 1024, 1024, 1.0, pa, 1024, px, 1, 0.0, py, 1, 0, 0, s),
    "C gemv_select_config (no launch)": lambda: lib.gemv_select_config(0, 1, 1024, 1024, pa, 1024, px, 1, py, 1, 0,
                                                                       ctypes.byref(cfg)),
    "C gemv_ex alpha=0 (checks + 1 tiny launch)": lambda: lib.gemv_ex(ctypes.byref(_lib.Args(
        0, 1, 1024, 1024, 0.0, 0.5, pa, 1024, px, 1, py, 1, 0, 0, s, 1)), None),
    "C gemv_ex, trusted pointers": lambda: lib.gemv_ex(ctypes.byref(_lib.Args(
        0, 1, 1024, 1024, 1.0, 0.0, pa, 1024, px, 1, py, 1, 0, 0, s, 1)), None),
    "C gemv_ex, trusted, args built once": lambda: lib.gemv_ex(trusted, None),
    "as_operand(torch tensor)": lambda: as_operand(A, "A"),
    "pygemv.gemv raw pointers": lambda: pygemv.gemv(pa, px, py, m=1024, k=1024, dtype="float16", stream=s),
    "pygemv.gemv torch tensors": lambda: pygemv.gemv(A, x, y),
    "torch.mv(out=)": lambda: torch.mv(A, x, out=y),
}
for name, fn in rows.items():
    print(f"{name:<40} {per_call(fn):6.2f} us")

# The Python pieces of the torch hot path, one by one (no launch; timeit, best of 5).
import struct
import timeit

from pygemv import _api

ns = dict(A=A, x=x, y=y, torch=torch, _api=_api, _lib=_lib, args=_lib.Args(), struct=struct, s=s,
          raw=torch._C._cuda_getCurrentRawStream, sys=__import__("sys"), lib=lib, trusted=trusted)
pieces = {
    "sys.modules.get('torch')": "sys.modules.get('torch')",
    "type(A) is torch.Tensor": "type(A) is torch.Tensor",
    "A.dtype": "A.dtype",
    "M, K = A.shape": "M, K = A.shape",
    "A.stride()": "A.stride()",
    "A.is_contiguous()": "A.is_contiguous()",
    "x.ndim": "x.ndim",
    "len(x)": "len(x)",
    "A.get_device()": "A.get_device()",
    "A.data_ptr()": "A.data_ptr()",
    "A.device": "A.device",
    "torch._C._cuda_getCurrentRawStream(0)": "torch._C._cuda_getCurrentRawStream(0)",
    "raw(0) (bound once)": "raw(0)",
    "ARGS_LAYOUT.pack_into (16 values)": "_lib.ARGS_LAYOUT.pack_into(args, 0, 0, 1, 1024, 1024, 1.0, 0.0, 1, 1024, 2, 1, 3, 1, 4, 5, s, 1)",
    "lib.gemv_ex(trusted, None)": "lib.gemv_ex(trusted, None)",
    "_api._gemv_torch(...) whole": "_api._gemv_torch(A, x, y, 1.0, 0.0, None, None, None)",
}
print()
for name, stmt in pieces.items():
    n = 20000
    us = min(timeit.repeat(stmt, globals=ns, number=n, repeat=5)) / n * 1e6
    torch.cuda.synchronize()
    print(f"{name:<40} {us:6.3f} us")
