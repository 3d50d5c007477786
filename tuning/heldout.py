"""Held-out check of tuned dispatch: random shapes that are not in the tuning grid.

For each shape (M and K drawn log-uniform in [1, 2^17], dtypes in turn) it times three
choices on the same buffers:

- tuned: what automatic dispatch picks with the GPU's table (nearest tuned shape);
- heuristic: what it picks with no table;
- oracle: the fastest config of a long search at that very shape: an Optuna study of
  ``--oracle-trials`` (48) trials, three times the tuner's budget, or with
  ``--oracle exhaustive`` every config of ``oracle.search_space``, checked and timed.

The candidates (tuned, heuristic, the search's best two or three) are then re-timed together,
interleaved, and each takes the median of those rounds, so that no side profits from a
lucky sample; the oracle's time is the best of all of them.

    python -m pygemv.tuning.heldout --n 30 --json heldout.json
"""
from __future__ import annotations

import argparse
import json
import math
import random
import sys

import optuna

import pygemv
from pygemv.tuning import grid, oracle
from pygemv.tuning.cli import generic_seeds
from pygemv.tuning.measure import GpuContext, GpuMeasure
from pygemv.tuning.space import build_space
from pygemv.tuning.tuner import config_key, retime, tune_shape

DTYPES = ("float32", "float16", "bfloat16")


def draw_shapes(n: int, seed: int = 2026, top_log2: int = 17) -> list[tuple[str, int, int]]:
    """n shapes, M and K log-uniform in [1, 2^top_log2], none of them a grid shape."""
    rng = random.Random(seed)
    grids = {d: set(grid.default_grid(d)) for d in DTYPES}
    out = []
    while len(out) < n:
        m, k = (max(1, round(2 ** rng.uniform(0, top_log2))) for _ in range(2))
        dtype = DTYPES[len(out) % len(DTYPES)]
        if (m, k) in grids[dtype] or any(s[1:] == (m, k) for s in out):
            continue
        out.append((dtype, m, k))
    return out


def geomean(values) -> float:
    values = list(values)
    return math.exp(sum(map(math.log, values)) / len(values))


def check_shape(ctx, dtype, m, k, *, how="search", trials=48, rounds=5) -> dict:
    measure = GpuMeasure(m, k, dtype, ctx)
    try:
        tuned, heuristic = measure.dispatch(use_table=True), measure.heuristic()
        if how == "exhaustive":
            best, wrong = oracle.search(measure, oracle.search_space(m, k, dtype, ctx.workspace_bytes),
                                        progress=False)
            found = [c for _, c in best[:3]]
        else:
            space = build_space(m, k, dtype)
            r = tune_shape(measure, space, storage=optuna.storages.InMemoryStorage(), study_name="oracle",
                           trials=trials, seed=1,
                           seeds=generic_seeds(space.vector_loads[0], aligned8=pygemv.LOADS_ALIGNED8 in space.vector_loads))
            found, wrong, best = [c for c in (r.config, r.runner_up) if c is not None], r.wrong, range(r.timed)
        contenders = {config_key(c): c for c in found}
        for c in (tuned, heuristic):
            contenders.setdefault(config_key(c), c)
        med = retime(measure, contenders, rounds)
        best_key = min(med, key=med.get)
        return {"dtype": dtype, "m": m, "k": k, "tuned": tuned.as_dict(), "tuned_us": med[config_key(tuned)],
                "heuristic": heuristic.as_dict(), "heuristic_us": med[config_key(heuristic)],
                "oracle": contenders[best_key].as_dict(), "oracle_us": med[best_key], "searched": len(best),
                "wrong": wrong}
    finally:
        measure.close()


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=30, help="shapes (dtypes take turns)")
    ap.add_argument("--seed", type=int, default=2026)
    ap.add_argument("--table", default="", help="table to dispatch with (default: the one libgemv finds)")
    ap.add_argument("--oracle", choices=("search", "exhaustive"), default="search")
    ap.add_argument("--oracle-trials", type=int, default=48)
    ap.add_argument("--json", default="")
    args = ap.parse_args(argv)
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    if args.table:
        pygemv.load_table(args.table)
    status = pygemv.table_status()
    print(f"table: {status.source} {status.path} ({status.entries} entries) {status.message}")
    if status.source == "none":
        print("no tuned table: tuned dispatch is the heuristic here", file=sys.stderr)
    ctx = GpuContext.create()
    rows = []
    print(f"{'dtype':<9} {'M':>7} {'K':>7} {'tuned us':>9} {'heur us':>9} {'oracle us':>9} {'oracle/tuned':>12}")
    for dtype, m, k in draw_shapes(args.n, args.seed):
        r = check_shape(ctx, dtype, m, k, how=args.oracle, trials=args.oracle_trials)
        rows.append(r)
        print(f"{dtype:<9} {m:>7} {k:>7} {r['tuned_us']:>9.2f} {r['heuristic_us']:>9.2f} {r['oracle_us']:>9.2f} "
              f"{r['oracle_us'] / r['tuned_us']:>12.3f}", flush=True)
    vs_oracle = geomean(r["oracle_us"] / r["tuned_us"] for r in rows)
    vs_heuristic = geomean(r["heuristic_us"] / r["tuned_us"] for r in rows)
    worst = min(rows, key=lambda r: r["oracle_us"] / r["tuned_us"])
    print(f"{len(rows)} held-out shapes: tuned/oracle speed geomean {vs_oracle:.3f} (goal >= 0.97), "
          f"tuned over heuristic geomean {vs_heuristic:.3f}x; worst {worst['dtype']} {worst['m']}x{worst['k']} "
          f"{worst['oracle_us'] / worst['tuned_us']:.3f}; wrong configs: {sum(len(r['wrong']) for r in rows)}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"table": status.__dict__, "oracle": args.oracle, "oracle_trials": args.oracle_trials,
                       "tuned_vs_oracle": vs_oracle, "tuned_vs_heuristic": vs_heuristic,
                       "results": rows}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
