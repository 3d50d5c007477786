"""Run one dense GEMV a few times for a profiler (ncu): random data, the dispatcher's config
or a forced one.

    ncu --metrics ... python benchmarks/experiments/profile_dense.py T 1048576 16 float16 [variant:p:r:v:u:s:k]
"""
import sys

import torch

import pygemv


def main(argv):
    op, m, k, dtype = argv[0], int(argv[1]), int(argv[2]), getattr(torch, argv[3])
    cfg = None
    if len(argv) > 4:
        v, *rest = argv[4].split(":")
        cfg = pygemv.Config(v, *(int(f) for f in rest))
    A = torch.randn(m, k, dtype=dtype, device="cuda")
    x = torch.randn(m if op == "T" else k, dtype=dtype, device="cuda")
    y = torch.empty(k if op == "T" else m, dtype=dtype, device="cuda")
    for _ in range(3):
        pygemv.gemv(A, x, y, trans=op == "T", config=cfg)
    torch.cuda.synchronize()
    print("config", cfg if cfg else "dispatch")


if __name__ == "__main__":
    main(sys.argv[1:])
