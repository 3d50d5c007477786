"""Print N small op T shapes of aligned rows for a held-out A/B (pygemv-bench --shapes), as the
one-step rule's (dispatch.cpp heuristic_columns) were drawn in s44: M log-uniform from MIN_M to
2048, K a multiple of 8 (rows of 16-byte multiples in every dtype) log-uniform from 72 to 8192,
A at most 4 MiB in fp32. Usage: python heldout_aligned_shapes.py SEED MIN_M [N=30]
(s44: seed 4401 from 33 rows, 4402 from 65)."""
import math
import random
import sys


def shapes(seed: int, min_m: int, n: int = 30) -> list[str]:
    r = random.Random(seed)
    out = []
    while len(out) < n:
        m = int(round(math.exp(r.uniform(math.log(min_m), math.log(2048)))))
        k = 8 * int(round(math.exp(r.uniform(math.log(72), math.log(8192))) / 8))
        if m * k * 4 <= (4 << 20) and k >= 72:
            out.append(f"{m}x{k}")
    return out


if __name__ == "__main__":
    print(",".join(shapes(int(sys.argv[1]), int(sys.argv[2]), *(int(v) for v in sys.argv[3:4]))))
