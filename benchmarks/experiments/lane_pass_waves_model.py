"""How well "the fewest waves of blocks at the kernel's registers" picks the batched lane-class
one pass's form (t_columns, vector_loads 3), judged on op_t_neighbours.py's timings: for each
case whose pick was that pass, among the timed forms of the pick's tile width at 4 or 2 rows
in flight and its lanes or half of them (blocks of 256 threads up, or the pick's size), take
the fewest waves (ties: the pick, then its lanes at 2 in flight, then the lanes halved at 4, then
at 2: dispatch.cpp's order since s53), and
print its time against the pick's and the fastest's. Registers from tests/test_cpu_kernel_registers.py
(dispatch.cpp's lane_class_pass_registers: ptxas, sm_90, CUDA 13.0). Usage (no GPU):

    python benchmarks/experiments/lane_pass_waves_model.py benchmarks/results/h200-2026-11-28-s52-run1-neighbours.csv.gz \
        benchmarks/results/h200-2026-11-28-s52-run3-neighbours.csv.gz

(s52 wrote it for the rule it prepared, ties with the lanes halved before 2 in flight; s53 timed
that rule, found it lost where it took half the lanes at a tie with 2 in flight, and landed it
with this order: benchmarks/NOTES.md section 73.)
"""
import collections
import csv
import math
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tests"))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from test_cpu_kernel_registers import LANE_CLASS_PASS_REGISTERS  # noqa: E402  (ptxas's, as dispatch.cpp counts them)
from results_file import open_results  # noqa: E402

SMS = 132


def waves(dtype, m, k, batch, c, lanes, unroll):
    pack = 4 if dtype == "float32" else 8
    tiles = -(-k // ((c - 1) * pack)) * batch
    # the walk: one step (every row of a lane at once), one tile (16 bits at 2), else the loops
    walk = 1 if m <= unroll * lanes else 2 if pack == 8 and unroll == 2 else 0
    per_warp = -(-LANE_CLASS_PASS_REGISTERS[(dtype, unroll, walk, walk != 0)] * 32 // 256) * 256
    slots = SMS * max(1, min(65536 // per_warp // (c * lanes // 32), 2048 // (c * lanes)))
    return -(-tiles // slots)


def form(spec):
    _, c, lanes, vec, unroll, _, _ = spec.split(":")
    return int(c), int(lanes), int(vec), int(unroll)


def main(paths):
    times, picks = collections.defaultdict(dict), {}
    for path in paths:
        for r in csv.DictReader(open_results(path)):
            key = (r["dtype"], int(r["m"]), int(r["k"]), int(r["batch"]))
            if r["config"].startswith("dispatch:"):
                picks[key] = r["config"][len("dispatch:"):]
            times[key][r["config"].replace("dispatch:", "")] = float(r["us"])
    ratios, fastest = [], []
    for key, pick in sorted(picks.items()):
        if not pick.startswith("t_columns") or form(pick)[2] != 3:
            continue
        dtype, m, k, batch = key
        c, lanes, _, unroll = form(pick)
        order = [(lanes, unroll), (lanes, 2), (lanes // 2, 4), (lanes // 2, 2)]
        timed = {f: s for s in times[key] if s.startswith("t_columns") and form(s)[2] == 3
                 for f in [(form(s)[1], form(s)[3])] if form(s)[0] == c}
        cands = [f for f in order if f in timed and f[0] >= 8 and (f[0] == lanes or c * f[0] >= min(256, c * lanes))]
        chosen = min(cands, key=lambda f: (waves(dtype, m, k, batch, c, *f), cands.index(f)))
        t = times[key]
        best = min(v for s, v in t.items() if s.startswith("t_columns") and form(s)[2] == 3)
        ratios.append(t[timed[chosen]] / t[pick])
        fastest.append(t[timed[chosen]] / best)
        if timed[chosen] != pick:
            print(f"{dtype:9s} {m} x {k} x {batch}: {pick} {t[pick]:.2f} us -> {timed[chosen]} {t[timed[chosen]]:.2f} "
                  f"({ratios[-1]:.3f}x the time)")
    g = lambda xs: math.exp(sum(map(math.log, xs)) / len(xs))
    print(f"{len(ratios)} cases: the fewest waves' time against the pick's {g(ratios):.3f} (max {max(ratios):.3f}), "
          f"against the fastest timed form {g(fastest):.3f}")


if __name__ == "__main__":
    main(sys.argv[1:])
