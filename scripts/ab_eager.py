"""A/B of the eager torch path: this tree's pygemv.gemv against another version of
pygemv/_api.py, loaded beside it in one process, plus torch.mv. Host speed drifts over
seconds, so the calls run in short interleaved chunks and the medians are compared.
    git show ff82d56:pygemv/_api.py > /tmp/old_api.py
    python scripts/ab_eager.py /tmp/old_api.py"""
import importlib.util
import statistics
import sys

import torch

import pygemv
from pygemv.timing import host_call_us

spec = importlib.util.spec_from_file_location("pygemv._api_old", sys.argv[1])
old = importlib.util.module_from_spec(spec)
sys.modules["pygemv._api_old"] = old  # relative imports resolve inside the installed pygemv
spec.loader.exec_module(old)

A = torch.randn(1024, 1024, device="cuda").half()
x = torch.randn(1024, device="cuda").half()
y = torch.empty(1024, device="cuda").half()
fns = {"this pygemv.gemv": lambda: pygemv.gemv(A, x, y), "other pygemv.gemv": lambda: old.gemv(A, x, y),
       "torch.mv(out=)": lambda: torch.mv(A, x, out=y), "this gemv, y omitted": lambda: pygemv.gemv(A, x),
       "torch.mv": lambda: torch.mv(A, x)}
res = {k: [] for k in fns}
for _ in range(40):
    for k, f in fns.items():
        res[k].append(host_call_us(f, torch.cuda.synchronize, calls=500, repeats=1, warmup=50))
for k, v in res.items():
    q = sorted(v)
    print(f"{k:<22} median {statistics.median(v):6.2f} us  min {q[0]:6.2f}  p25 {q[len(q) // 4]:6.2f}  "
          f"p75 {q[3 * len(q) // 4]:6.2f}")
y.fill_(float("nan"))
pygemv.gemv(A, x, y)
a = y.clone()
y.fill_(float("nan"))
old.gemv(A, x, y)
print("same result:", torch.equal(a, y))
