"""The tuner's instrument against the benchmark's path on the same QCase (NOTES.md section 56):
bf16 float zeros g128 at 2944 x 6144 and 7600 x 3584, timed with the dispatch's config, with no
config (the dispatcher at capture) and with the config again, twice. Needs pygemv installed.
    python3 -P benchmarks/experiments/bench_vs_instrument.py
"""
import pygemv
from pygemv import timing
from pygemv.tuning.measure import GpuContext, GpuMeasure
ctx = GpuContext.create()
for m, k in ((2944, 6144), (7600, 3584)):
    meas = GpuMeasure(m, k, "bfloat16", ctx, weights=(4, 128, "float"), repeats=15, target_ms=2.0)
    d = meas.dispatch()
    case = meas.case
    for rep in range(2):
        t_cfg = meas.time_us(d)
        t_none = timing.time_graph(case.call(None), meas.sets, ctx.stream, repeats=15, target_ms=2.0).median_us
        t_cfg2 = timing.time_graph(case.call(d.to_c()), meas.sets, ctx.stream, repeats=15, target_ms=2.0).median_us
        print(m, k, d.variant, d.threads_per_row, d.rows_per_block, d.unroll, d.split_k, "sets", meas.sets,
              f"config {t_cfg:.2f} none {t_none:.2f} config-again {t_cfg2:.2f}", flush=True)
    meas.close()
