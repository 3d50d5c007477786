"""Print N op T shapes of aligned rows for a held-out A/B (pygemv-bench --shapes), as the
one-step rule's (dispatch.cpp heuristic_columns) were drawn in s44: M log-uniform from MIN_M to
--max-m, K a multiple of 8 (rows of 16-byte multiples in every dtype) log-uniform from 72 to
--max-k, A in fp32 between --min-mib and --max-mib MiB; --odd-k draws K odd instead (rows that do
not start aligned in any dtype: s48's batched element-load rule). Usage:
    python heldout_aligned_shapes.py SEED MIN_M [N=30] [--max-m 2048 --max-k 8192 --min-mib 0 --max-mib 4] [--odd-k]
(s44: seed 4401 from 33 rows, 4402 from 65, the defaults; s45's mid sizes: seed 4501, 16
shapes from 64 rows, --max-m 65536 --max-k 65536 --min-mib 4 --max-mib 64)."""
import argparse
import math
import random


def shapes(seed: int, min_m: int, n: int = 30, max_m: int = 2048, max_k: int = 8192, min_mib: float = 0,
           max_mib: float = 4, odd_k: bool = False) -> list[str]:
    r = random.Random(seed)
    out = []
    while len(out) < n:
        m = int(round(math.exp(r.uniform(math.log(min_m), math.log(max_m)))))
        k = math.exp(r.uniform(math.log(72), math.log(max_k)))
        k = 2 * int(k / 2) + 1 if odd_k else 8 * int(round(k / 8))
        if min_mib * (1 << 20) <= m * k * 4 <= max_mib * (1 << 20) and k >= 72:
            out.append(f"{m}x{k}")
    return out


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("seed", type=int)
    ap.add_argument("min_m", type=int)
    ap.add_argument("n", type=int, nargs="?", default=30)
    ap.add_argument("--max-m", type=int, default=2048)
    ap.add_argument("--max-k", type=int, default=8192)
    ap.add_argument("--min-mib", type=float, default=0)
    ap.add_argument("--max-mib", type=float, default=4)
    ap.add_argument("--odd-k", action="store_true", help="K odd (rows that do not start aligned)")
    a = ap.parse_args()
    print(",".join(shapes(a.seed, a.min_m, a.n, a.max_m, a.max_k, a.min_mib, a.max_mib, a.odd_k)))
