"""How a batched op T rule would have done on timings already taken: for each case of an
op_t_space.py CSV (benchmarks/results/h100-2026-11-28-s46-batched-{grid,space}.csv.gz), the
config the rule picks, its time if the CSV has it, the dispatch's (the CSV's `dispatch:` row)
and the case's best; then the geomean against the dispatch and against the best. Cases the
shipped table serves (a batched entry within 0.5 in log2 M, K and batch) are left out: the
rule does not reach them. Used to choose s47's rule (benchmarks/NOTES.md section 67); the
rule here is dispatch.cpp's batched_one_pass_config restated, --first its first form.
--misaligned asks this checkout's library for its picks instead (libgemv's host code on the
stand-in runtime, no table: s48's batched_element_config and the rest of the dispatch), on s47's
grids of products of rows that do not start aligned, which the table does not serve (section 68).

    python benchmarks/experiments/batched_rule_fit.py benchmarks/results/h100-2026-11-28-s46-batched-grid.csv.gz [--first] [--every]
    python benchmarks/experiments/batched_rule_fit.py --misaligned benchmarks/results/h100-2026-11-28-s47-misaligned-{grid,space}.csv.gz
"""
from __future__ import annotations

import argparse
import collections
import csv
import math
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from results_file import open_results  # noqa: E402

TABLE = Path(__file__).resolve().parents[2] / "libgemv" / "tables" / "NVIDIA-H100-80GB-HBM3-sm90-132sm.gemvtable"
SMS = 132


def tiles(dtype: str, k: int, b: int) -> tuple[int, int, int]:
    """Both forms' tile: (threads across it, unroll, blocks of the grid)."""
    es = 4 if dtype == "float32" else 2
    packs = -(-k * es // 16)
    c = 4 if packs <= 64 else 8 if packs <= 256 else 16
    if b >= 64:
        c = min(2 * c, 16)
    return c, 4 if es == 4 else 2, -(-packs // c) * b


def lanes_for(m: int, c: int, u: int, blocks: int, most: int) -> int:
    """Lanes from `most` (within the block's threads) halved to 8 until half a wave and 2 rows a lane."""
    lanes = min(most, (512 if u == 4 else 1024) // c)
    while lanes > 8 and (blocks * c * lanes > 1024 * SMS or m < 2 * lanes):
        lanes //= 2
    return lanes


def landed(dtype: str, m: int, k: int, b: int) -> str | None:
    es = 4 if dtype == "float32" else 2
    if m < 64 or k * es <= 256 or (k * es) % 16:
        return None
    c, u, blocks = tiles(dtype, k, b)
    few = 4 * blocks < 3 * SMS
    lanes = lanes_for(m, c, u, blocks, 64 if few else 128)
    if lanes < (8 if es == 2 and c == 16 else 32) or -(-m // lanes) > (4 if few else 48):
        return None
    return f"t_columns:{c}:{lanes}:1:{u}:0:1"


def first(dtype: str, m: int, k: int, b: int) -> str | None:
    es = 4 if dtype == "float32" else 2
    if m < 64 or k * es < 256 or (k * es) % 16:
        return None
    c, u, blocks = tiles(dtype, k, b)
    lanes = lanes_for(m, c, u, blocks, 128)
    if -(-m // lanes) > (8 if 2 * blocks <= SMS else 48):
        return None
    return f"t_columns:{c}:{lanes}:1:{u}:0:1"


PICKS = """
import pygemv
base = 1 << 32
for dtype, m, k, b in %r:
    c = pygemv.select_config(m, k, dtype, a_ptr=base, x_ptr=base + (1 << 40), trans=True, use_table=False,
                             batch=b, stride_a=m * k, stride_x=m, stride_y=k)
    print(dtype, m, k, b, f"{c.variant}:{c.threads_per_row}:{c.rows_per_block}:{c.vector_loads}:{c.unroll}:"
          f"{int(c.x_in_smem)}:{c.split_k}")
"""


def library_picks(keys) -> dict:
    """This checkout's own picks (libgemv's host code on the stand-in runtime, 132 SMs, no table;
    tests/hostcheck_lib.py builds it if needed) for (dtype, m, k, batch) keys of dense strides."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tests"))
    from hostcheck_lib import run
    out = {}
    for line in run(PICKS % (sorted(keys),), timeout=600).stdout.splitlines():
        dtype, m, k, b, cfg = line.split()
        out[(dtype, int(m), int(k), int(b))] = cfg
    return out


def batched_entries() -> list[tuple[str, int, int, int]]:
    out = []
    for line in TABLE.read_text().splitlines():
        w = line.split()
        if len(w) == 14 and w[0] == "T" and int(w[2]) > 1:
            out.append((w[1], int(w[2]), int(w[3]), int(w[4])))
    return out


def table_serves(entries, dtype: str, m: int, k: int, b: int) -> bool:
    return any(e[0] == dtype and math.log2(e[2] / m) ** 2 + math.log2(e[3] / k) ** 2 + math.log2(e[1] / b) ** 2 <= 0.25
               for e in entries)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("csv", nargs="+")
    ap.add_argument("--first", action="store_true", help="the rule's first form (s47 run 1)")
    ap.add_argument("--misaligned", action="store_true",
                    help="this checkout's picks (s48's rule for rows that do not start aligned, asked of the library)")
    ap.add_argument("--every", action="store_true", help="a line per case")
    args = ap.parse_args()
    rule = first if args.first else landed
    times: dict = collections.defaultdict(dict)
    dispatch = {}
    for path in args.csv:
        with open_results(path) as f:
            for r in csv.DictReader(f):
                key = (r["dtype"], int(r["m"]), int(r["k"]), int(r["batch"]))
                cfg, us = r["config"], float(r["us"])
                if cfg.startswith("dispatch:"):
                    cfg = cfg[len("dispatch:"):]
                    dispatch[key] = us
                times[key][cfg] = min(us, times[key].get(cfg, math.inf))
    entries = batched_entries()
    if args.misaligned:
        picks = library_picks(times)
        rule = lambda *key: picks[key]  # noqa: E731
    vs_dispatch, vs_best, unknown = [], [], 0
    for key in sorted(times):
        if not args.misaligned and table_serves(entries, *key):
            continue
        cfg, best = rule(*key), min(times[key].values())
        t = dispatch[key] if cfg is None else times[key].get(cfg)
        if t is None:
            unknown += 1
            continue
        vs_dispatch.append(dispatch[key] / t)
        vs_best.append(best / t)
        if args.every:
            print(f"{key[0]:9s} {key[1]:5d} x {key[2]:5d} x {key[3]:<5d} {cfg or 'not taken':24s} {t:8.2f} us  "
                  f"dispatch {dispatch[key]:8.2f}  best {best:8.2f}  {dispatch[key] / t:.3f}x")
    g = lambda v: math.exp(sum(map(math.log, v)) / len(v))
    print(f"{len(vs_dispatch)} cases ({unknown} whose pick the CSV lacks): against the dispatch {g(vs_dispatch):.3f}x, "
          f"min {min(vs_dispatch):.3f}x, {sum(r < 0.98 for r in vs_dispatch)} slower by over 2%; of the best {g(vs_best):.3f}")


if __name__ == "__main__":
    main()
