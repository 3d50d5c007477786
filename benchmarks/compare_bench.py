"""Compare pygemv's time case by case between two pygemv-bench JSON files of the same cases
(for example before and after a tune): the ratio after/before, the cases whose config
changed, and those slower by more than a margin.

    python benchmarks/compare_bench.py before.json after.json [--margin 0.02]

--every prints every case instead, as an A/B file reads it: before -> after us, the speed-up
(before / after, > 1 is faster after), and the after run's cuBLAS time and its ratio to pygemv
(cuBLAS / pygemv, < 1 where cuBLAS is faster); '<' marks a case moved by more than the margin.
"""
import argparse
import json
import math
import sys

from results_file import open_results


def cases(path):
    out = {}
    for c in json.load(open_results(path))["cases"]:
        out[(c.get("group", ""), c["dtype"], c.get("op", "N"), c.get("batch", 1), c["m"], c["k"], c.get("lda", c["k"]),
             tuple(c.get("offsets", (0, 0, 0))))] = c
    return out


def layout(k):
    """' lda+3 @1,0,5' where the case's lda or offsets are not dense and aligned, else ''."""
    return f" lda+{k[6] - k[5]} @{','.join(map(str, k[7]))}" if k[6] != k[5] or any(k[7]) else ""


def config(c):
    c = c["config"]
    return (f"{c['variant']} p={c['threads_per_row']} r={c['rows_per_block']} v={int(c['vector_loads'])} "
            f"u={c['unroll']} s={int(c['x_in_smem'])} k={c['split_k']}")


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("before")
    ap.add_argument("after")
    ap.add_argument("--margin", type=float, default=0.02, help="slower than before by more than this counts")
    ap.add_argument("--every", action="store_true", help="every case, with the after run's cuBLAS")
    args = ap.parse_args()
    a, b = cases(args.before), cases(args.after)
    keys = [k for k in a if k in b]
    if args.every:
        return every_case(a, b, keys, args.margin)
    rows = sorted(((b[k]["pygemv"]["median_us"] / a[k]["pygemv"]["median_us"], k) for k in keys), reverse=True)
    for r, k in rows:
        changed = config(a[k]) != config(b[k])
        if changed or r > 1 + args.margin:
            print(f"{r:6.3f}  {k[1]:8s} {k[4]:>8d}x{k[5]:<8d}{layout(k)} {a[k]['pygemv']['median_us']:9.2f} -> "
                  f"{b[k]['pygemv']['median_us']:9.2f} us  {config(a[k])}" + (f"  ->  {config(b[k])}" if changed else ""))
    geo = math.exp(sum(math.log(r) for r, _ in rows) / len(rows))
    worse = sum(r > 1 + args.margin for r, _ in rows)
    print(f"{len(rows)} cases: after/before time geomean {geo:.4f}, max {rows[0][0]:.3f}, min {rows[-1][0]:.3f}; "
          f"{worse} slower by more than {args.margin:.0%}; "
          f"{sum(config(a[k]) != config(b[k]) for k in keys)} with another config")
    return 0


def every_case(a, b, keys, margin) -> int:
    speedups, vs_cublas = [], []
    for k in sorted(keys, key=lambda k: k[1:]):
        t0, t1 = a[k]["pygemv"]["median_us"], b[k]["pygemv"]["median_us"]
        cb = b[k]["cublas"]["median_us"] if "cublas" in b[k] else float("nan")
        speedups.append(t0 / t1)
        vs_cublas.append(cb / t1)
        mark = " <" if abs(t0 / t1 - 1) > margin else ""
        print(f"{k[1]:9s} {k[2]} b={k[3]:<5d} {k[4]:>7d}x{k[5]:<7d}{layout(k)} {t0:9.2f} -> {t1:9.2f} us "
              f"{t0 / t1:6.3f}x  "
              f"cuBLAS {cb:9.2f} ({cb / t1:.3f}x)  {config(b[k])}{mark}")
    geo = lambda v: math.exp(sum(math.log(x) for x in v) / len(v))
    print(f"{len(keys)} cases: speed-up geomean {geo(speedups):.3f}x, min {min(speedups):.3f}x; "
          f"{sum(r < 1 - margin for r in speedups)} slower by more than {margin:.0%}; after vs cuBLAS "
          f"{geo(vs_cublas):.3f}x, {sum(r < 1 for r in vs_cublas)} slower than cuBLAS")
    return 0


if __name__ == "__main__":
    sys.exit(main())
