"""Run one op N strided batch a few times for a profiler (ncu): random data, the dispatcher's
config, a forced one, or a cuBLAS entry point (the peer's kernel, its grid and registers).

    ncu --metrics ... python benchmarks/experiments/profile_batched.py M K B float16 [variant:p:r:v:u:s:k | cublas:ENTRY]
"""
import sys

import torch

import pygemv
from pygemv._cublas import Cublas


def main(argv):
    m, k, batch, dtype = int(argv[0]), int(argv[1]), int(argv[2]), argv[3]
    how = argv[4] if len(argv) > 4 else "dispatch"
    t = getattr(torch, dtype)
    A = torch.randn(batch, m, k, dtype=t, device="cuda")
    x = torch.randn(batch, k, dtype=t, device="cuda")
    y = torch.empty(batch, m, dtype=t, device="cuda")
    if how.startswith("cublas:"):
        cb = Cublas()
        cb.set_stream(torch.cuda.current_stream().cuda_stream)
        for _ in range(3):
            cb.gemv(how.split(":")[1], dtype, m, k, A.data_ptr(), k, x.data_ptr(), y.data_ptr(), batch=batch,
                    stride_a=m * k, stride_x=k, stride_y=m)
    else:
        cfg = None
        if how != "dispatch":
            v, *rest = how.split(":")
            cfg = pygemv.Config(v, *(int(f) for f in rest))
        for _ in range(3):
            pygemv.gemv(A, x, y, config=cfg)
    torch.cuda.synchronize()
    ref = torch.einsum("bmk,bk->bm", A.double(), x.double())
    print(how, "max err", (y.double() - ref).abs().max().item())


if __name__ == "__main__":
    main(sys.argv[1:])
