"""How fast op T would have to run for a geomean against cuBLAS: from a `pygemv-bench --ops
N,T --json` run, the geomean of cuBLAS's op T time over (a) pygemv's op T time, (b) the
faster of it and pygemv's op N on the same shape, (c) the faster of it and the read ceiling
at that size. Usage: python benchmarks/op_t_bound.py benchmarks/results/h100-2026-11-24-s9-suite-NT.json.gz"""
import json
import math
import sys

from results_file import open_results


def geomean(values):
    return math.exp(sum(map(math.log, values)) / len(values))


def main(path):
    cases = json.load(open_results(path))["cases"]
    op_n = {(c["dtype"], c["m"], c["k"], c["batch"]): c for c in cases if c["op"] == "N"}
    rows = {"op T": [], "op N speed": [], "read ceiling": []}
    for c in (c for c in cases if c["op"] == "T"):
        t, cublas = c["pygemv"]["median_us"], c["cublas"]["median_us"]
        rows["op T"].append(cublas / t)
        n = op_n.get((c["dtype"], c["m"], c["k"], c["batch"]))
        if n:
            rows["op N speed"].append(cublas / min(t, n["pygemv"]["median_us"]))
        if c.get("ceiling_at_size"):
            rows["read ceiling"].append(cublas / min(t, c["ceiling_at_size"]["median_us"]))
    for name, r in rows.items():
        print(f"op T at {name:13s}: geomean {geomean(r):.3f}x cuBLAS over {len(r)} shapes" if r else f"{name}: no data")


if __name__ == "__main__":
    main(sys.argv[1])
