"""q_mma_rounds with K split into slices (its SPLIT instance: block (tile, slice), partials reduced
by the two-pass reduce; NOTES.md section 57): the dispatch against rounds configs named
w<warps>u<steps a round>s<slices>, with the tuner's instrument (cold L2, graph replay, median
of 9; each config checked first), or against the forms a rule could take ("forms": slices of
about 4, 6 or 8 steps, within one wave of blocks; "forms2": regime (k)'s and four others).
Needs pygemv installed.
    python3 -P benchmarks/experiments/rounds_split_sweep.py 2944x6144,4096x14336 128:float:bfloat16,32:int:float16 [w4u1s6,w8u1s2,...]
    python3 -P benchmarks/experiments/rounds_split_sweep.py 1000x4100 128:int:float16 forms
    python3 -P benchmarks/experiments/rounds_split_sweep.py 1000x4100 128:int:float16 forms2
"""
import os
import sys

import pygemv

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # run with -P, which leaves the script's folder off
from x_held_long_rows_sweep import sweep  # noqa: E402

SMS = 132
DEFAULT = "w8u1s1,w8u2s1,w4u2s1,w8u1s2,w8u2s2,w4u1s2,w4u2s2,w8u1s3,w8u2s3,w4u2s3,w8u1s4,w4u2s4,w4u1s6"


def configs(names: str) -> dict:
    out = {}
    for n in names.split(","):
        w, rest = n[1:].split("u")
        u, s = rest.split("s")
        out[n] = pygemv.Config("q_mma_rounds", 32 * int(w), 1, 1, int(u), 0, int(s))
    return out


def sliced(m: int, k: int, w: int, n: int, per_sm: int):
    """Slices of about n steps for blocks of w warps at one step a round, at most per_sm blocks
    an SM: (slices, config)."""
    tiles, steps = (m + 15) // 16, (k + 127) // 128
    s = max(2, min(-(-steps // n), per_sm * SMS // tiles))
    return s, pygemv.Config("q_mma_rounds", 32 * w, 1, 1, 1, 0, s)


def forms(m: int, k: int) -> dict:
    """Slices of about n steps, as many as one wave holds (6 blocks an SM at 4 warps, 3 at 8, 12
    at 2): w<warps>n<steps a slice>s<slices>; and unsplit for reference."""
    out = {}
    for w, n, per_sm in ((4, 4, 6), (4, 6, 6), (4, 8, 6), (8, 8, 3), (2, 4, 12)):
        s, c = sliced(m, k, w, n, per_sm)
        out[f"w{w}n{n}s{s}"] = c
    out["w8u1s1"] = pygemv.Config("q_mma_rounds", 256, 1, 1, 1, 0, 1)
    out["w8u2s1"] = pygemv.Config("q_mma_rounds", 256, 1, 1, 2, 0, 1)
    return out


def forms2(m: int, k: int) -> dict:
    """Regime (k)'s first form against four others: w<warps>n<steps a slice>c<blocks an SM at most>s<slices>."""
    out = {}
    for w, n, per_sm in ((4, 4, 6), (8, 6, 3), (8, 8, 3), (4, 8, 6), (4, 4, 4)):
        s, c = sliced(m, k, w, n, per_sm)
        out[f"w{w}n{n}c{per_sm}s{s}"] = c
    return out


if __name__ == "__main__":
    if len(sys.argv) > 3 and sys.argv[3] in ("forms", "forms2"):
        sweep(sys.argv[1], sys.argv[2], forms if sys.argv[3] == "forms" else forms2)
    else:
        cfgs = configs(sys.argv[3] if len(sys.argv) > 3 else DEFAULT)
        sweep(sys.argv[1], sys.argv[2], lambda m, k: cfgs)
