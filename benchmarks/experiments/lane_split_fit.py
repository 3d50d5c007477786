"""Fit the family of lane_classes_split_config (dispatch.cpp) to a space of split lane-class
configs timed by op_t_space.py (its --csv: dtype,m,k,batch,config,us): tiles of 32 threads from
X packs a row (else 16, or 8 up to Y packs), 8 or 16 lanes, 4 rows in flight, split_k the most of
4-64 whose grid stays within F of a wave (2048 threads an SM, 132 SMs), 2 rows in flight past U
rows a lane (0: never). Prints the parameters by geomean of (each shape's best / the rule's
pick), then the best one's pick on each shape. s50 run 1 (benchmarks/NOTES.md section 70):
    python benchmarks/experiments/lane_split_fit.py benchmarks/results/h200-2026-11-28-s50-lane-split-space.csv.gz
"""
import collections
import csv
import itertools
import math
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from results_file import open_results  # noqa: E402

SMS = 132


def slices(m: int, split: int, step: int) -> int:
    rows = -(-m // split)
    rows = max(1, min(-(-rows // step) * step, m))
    return -(-m // rows)


def pick(dtype, m, k, batch, params):
    few_packs, wide_packs, lanes16, frac, unroll2_rows = params
    pack = 4 if dtype == "float32" else 8
    packs = -(-k // pack)
    c = 32 if packs >= wide_packs else 8 if packs <= few_packs else 16
    lanes = 16 if lanes16 and c < 32 else 8
    tiles = -(-k // ((c - 1) * pack)) * batch
    split = 4
    for s in (8, 16, 32, 64):
        if tiles * slices(m, s, lanes * 4) * c * lanes > frac * SMS * 2048:
            break
        split = s
    rows_a_lane = -(-m // slices(m, split, lanes * 4)) / lanes
    unroll = 2 if unroll2_rows and rows_a_lane > unroll2_rows else 4
    return f"t_splitm_twopass:{c}:{lanes}:3:{unroll}:0:{split}"


def main(path):
    times = collections.defaultdict(dict)
    with open_results(path) as f:
        for r in csv.DictReader(f):
            times[(r["dtype"], int(r["m"]), int(r["k"]), int(r["batch"]))][r["config"]] = float(r["us"])
    best = {key: min(v for c, v in t.items() if not c.startswith("dispatch")) for key, t in times.items()}
    scored = []
    for params in itertools.product((0, 16, 32), (64, 128, 256, 512), (0, 1), (0.25, 0.5, 0.75, 1.0), (0, 16, 32)):
        ratios = [best[key] / times[key][pick(*key, params)] for key in times if pick(*key, params) in times[key]]
        if len(ratios) == len(times):
            scored.append((math.exp(sum(map(math.log, ratios)) / len(ratios)), min(ratios), params))
    scored.sort(reverse=True)
    print("geomean of best / pick, min, (few packs, wide packs, 16 lanes, wave fraction, unroll 2 past rows a lane):")
    for g, lo, params in scored[:8]:
        print(f"  {g:.3f} {lo:.3f} {params}")
    params = scored[0][2]
    for key, t in times.items():
        c = pick(*key, params)
        dispatch = next(v for s, v in t.items() if s.startswith("dispatch"))
        print(f"  {key}: {c} {t[c]:.2f} us, best {best[key]:.2f}, the dispatch of the build timed {dispatch:.2f}")


if __name__ == "__main__":
    main(sys.argv[1])
