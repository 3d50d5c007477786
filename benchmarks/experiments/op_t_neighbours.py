"""Time the dispatcher's op T config and its neighbours in the tuner's space (same variant and
loads; threads across a tile, row lanes, rows in flight and slices each within a factor of 4,
at most --diff of them changed), then the neighbours of the fastest found, for --rounds
rounds: what a rule could gain near its pick, shape by shape, for less device time than the
whole space (op_t_space.py). The tuner's instrument (checked first, cold L2, graph replay,
medians). Usage, after installing pygemv:

    python benchmarks/experiments/op_t_neighbours.py [--diff 2] [--rounds 2] [--csv PATH] dtype:MxK[xB] ... | @FILE

Each shape prints the dispatch's time and the fastest configs; --csv writes every timing,
the dispatcher's choice first, as dtype,m,k,batch,config,us,layout (empty: dense, aligned).
"""
import argparse
import math
import sys
import time
from pathlib import Path

from pygemv.tuning.measure import GpuContext, GpuMeasure
from pygemv.tuning.space import build_space

sys.path[:0] = [str(Path(__file__).resolve().parents[2] / "scripts"), str(Path(__file__).resolve().parent)]
from time_configs import spec  # noqa: E402  (the config form time_configs.py reads)
from op_t_space import open_csv, parse_case, read_cases  # noqa: E402

AXES = ("threads_per_row", "rows_per_block", "unroll", "split_k")


def near(a, b, diff):
    """b is a neighbour of a: same variant and loads, each axis within 4x, at most diff changed."""
    if a.variant != b.variant or int(a.vector_loads) != int(b.vector_loads) or bool(a.x_in_smem) != bool(b.x_in_smem):
        return False
    changed = 0
    for ax in AXES:
        x, y = getattr(a, ax), getattr(b, ax)
        if x != y:
            if abs(math.log2(x) - math.log2(y)) > 2:
                return False
            changed += 1
    return 0 < changed <= diff


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--diff", type=int, default=2, help="axes a neighbour may change")
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--top", type=int, default=3)
    ap.add_argument("--csv", help="write every timing here")
    ap.add_argument("cases", nargs="+", help="dtype:MxK or dtype:MxKxB, or @FILE of them")
    a = ap.parse_args()
    csv = open_csv(a.csv)
    ctx = GpuContext.create()
    for case in read_cases(a.cases):
        dtype, m, k, batch = parse_case(case)[:4]
        space = list(build_space(m, k, dtype, op="T", batch=batch).configs())
        meas = GpuMeasure(m, k, dtype, ctx, op="T", batch=batch, repeats=15, target_ms=2.0)
        chosen = meas.dispatch()
        t0, timed = time.time(), {}

        def time_it(c):
            key = spec(c)
            if key not in timed:
                ok, _ = meas.legal(c)
                if ok:
                    ok, _ = meas.check(c)
                timed[key] = meas.time_us(c) if ok else None
            return timed[key]

        d = time_it(chosen)
        best = chosen
        for _ in range(a.rounds):
            for c in [c for c in space if near(best, c, a.diff)]:
                time_it(c)
            fastest = min((t, s) for s, t in timed.items() if t is not None)[1]
            if fastest == spec(best):
                break
            best = next(c for c in space + [chosen] if spec(c) == fastest)
        ranked = sorted((t, s) for s, t in timed.items() if t is not None)
        if csv:
            for t, s in [(d, "dispatch:" + spec(chosen))] + ranked:
                print(f"{dtype},{m},{k},{batch},{s},{t:.3f},", file=csv, flush=True)
        print(f"T {dtype} {m}x{k}" + (f" batch {batch}" if batch > 1 else "") +
              f": dispatch {spec(chosen)} {d:.2f} us; {len(ranked)} timed in {time.time() - t0:.0f} s; "
              f"best/dispatch {ranked[0][0] / d:.3f}; fastest: " +
              ", ".join(f"{s} {t:.2f}" for t, s in ranked[:a.top]), flush=True)
        meas.close()


if __name__ == "__main__":
    main()
