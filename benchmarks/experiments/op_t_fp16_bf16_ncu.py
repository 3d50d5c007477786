"""ncu target: op T in fp16 and bf16 at the same dispatched one-step configs (71 x 368, one pass
of t_columns 8 x 32 lanes; 303 x 80, t_splitm_twopass in 5 slices), two calls each (s44,
NOTES.md section 64). On the device, after installing pygemv:

    ncu --section WarpStateStats --section SpeedOfLight --section LaunchStats \\
      --metrics regex:smsp__average_warps_issue_stalled_.*_per_issue_active.ratio,smsp__inst_executed.sum,sm__cycles_elapsed.max \\
      -k regex:gemv_columns python3 -P benchmarks/experiments/op_t_fp16_bf16_ncu.py
"""
import numpy as np

import pygemv

rng = np.random.default_rng(0)
for m, k in ((71, 368), (303, 80)):
    for dt in ("float16", "bfloat16"):
        A = pygemv.to_device(rng.standard_normal((m, k)).astype(np.float32), dt)
        x = pygemv.to_device(rng.standard_normal(m).astype(np.float32), dt)
        y = pygemv.to_device(np.zeros(k, np.float32), dt)
        for _ in range(2):
            pygemv.gemv(A, x, y, trans=True)
        pygemv.synchronize()
        print(m, k, dt, pygemv.select_config(m, k, dt, trans=True))
