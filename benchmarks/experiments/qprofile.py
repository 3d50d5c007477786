"""Run one quantized GEMV a few times for a profiler (ncu): int4 groups of 128, integer
zeros, fp16 (or --weights bits,group,zeros: group 0 is one a row), the dispatcher's config or a
forced one.

    ncu --metrics ... python benchmarks/experiments/qprofile.py 28672 8192 [variant:p:r:v:u:s:k] [--weights 8,0,symmetric]
"""
import sys

import torch

import pygemv


def main(argv):
    bits, group, zeros = 4, 128, "int"
    if "--weights" in argv:
        i = argv.index("--weights")
        b, g, zeros = argv[i + 1].split(",")
        bits, group, argv = int(b), int(g) or None, argv[:i] + argv[i + 2:]
    m, k = int(argv[0]), int(argv[1])
    cfg = None
    if len(argv) > 2:
        v, *rest = argv[2].split(":")
        cfg = pygemv.Config(v, *(int(f) for f in rest))
    W = torch.randn(m, k, dtype=torch.float16, device="cuda")
    Q = pygemv.quantize(W, bits, group, zeros)
    x = torch.randn(k, dtype=torch.float16, device="cuda")
    y = torch.empty(m, dtype=torch.float16, device="cuda")
    for _ in range(3):
        pygemv.gemv(Q, x, y, config=cfg)
    torch.cuda.synchronize()
    print("config", cfg if cfg else "dispatch")


if __name__ == "__main__":
    main(sys.argv[1:])
