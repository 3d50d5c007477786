"""How well the steps the busiest SM walks predict the fastest of regime (k)'s split forms (NOTES
62), from a `rounds_split_sweep.py` table (s38's `-split-forms2.txt`): for each case, the form
with the fewest ceil(tiles x slices / SMs) x (steps a slice), ties by rounds, against the
fastest measured, and the dispatch's time against it. Usage:
    python benchmarks/experiments/rounds_forms_model.py benchmarks/results/h100-2026-11-27-s38-split-forms2.txt
"""
import math
import re
import sys

SMS = 132


def cost(m, k, form):
    warps, _steps_cap, _blocks_cap, slices = map(int, re.match(r"w(\d+)n(\d+)c(\d+)s(\d+)", form).groups())
    steps, tiles = -(-k // 128), -(-m // 16)
    per = -(-steps // slices)  # steps a slice
    busiest = -(-tiles * slices // SMS)  # blocks on the busiest SM
    return busiest * per, busiest * -(-per // warps)


def main(path):
    geo = lambda v: math.exp(sum(map(math.log, v)) / len(v))
    picked, disp, right = [], [], 0
    for line in open(path):
        m = re.match(r"\s*(\d+)x(\d+)\s+t/SM.*?disp\s+([\d.]+)", line)
        if not m:
            continue
        rows, cols, d = int(m.group(1)), int(m.group(2)), float(m.group(3))
        forms = [(f, float(t)) for f, t in re.findall(r"\| (w\d+n\d+c\d+s\d+)\s+([\d.]+)", line)]
        best = min(t for _, t in forms)
        choice = min(forms, key=lambda ft: cost(rows, cols, ft[0]))
        picked.append(choice[1] / best)
        disp.append(d / best)
        right += choice[1] == best
    print(f"{len(picked)} cases: the model's pick {geo(picked):.3f}x the fastest (max {max(picked):.3f}x, "
          f"fastest in {right}); the dispatch {geo(disp):.3f}x (max {max(disp):.3f}x)")


if __name__ == "__main__":
    main(sys.argv[1])
