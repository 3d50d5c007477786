"""Draw fresh dense cases for op_t_space.py (dtype:MxK+P@a,x,y, one a line): M log-uniform in
--rows, the matrix's bytes (M x lda x element size) log-uniform in --mib, every dtype alike
(or --dtypes), A, x and y 0-7 elements past a 256-byte boundary and lda = K + P, P 0 half the
time, else 1-64 (or --pad). --misaligned keeps only cases whose rows do not all start 16-byte
aligned; --one-phase keeps only rows that all share one 16-byte phase but not 0 (lda a whole
number of packs, A off a pack's boundary: K rounded down to make it so); --aligned keeps A on
the boundary and lda a whole number of packs (K rounded down). --row-bytes bounds K x element size (rejecting draws outside it). Usage:

    python benchmarks/experiments/draw_cases.py --seed 5891 --n 40 --rows 2,32 --mib 4,256 --misaligned
"""
import argparse
import math
import random

ESZ = {"float32": 4, "float16": 2, "bfloat16": 2}


def pair(text, kind=float):
    lo, hi = text.split(",")
    return kind(lo), kind(hi)


def log_uniform(rng, lo, hi):
    return math.exp(rng.uniform(math.log(lo), math.log(hi)))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--seed", type=int, required=True)
    ap.add_argument("--n", type=int, default=40)
    ap.add_argument("--rows", default="2,32", help="M's range")
    ap.add_argument("--mib", default="4,256", help="the matrix's MiB range")
    ap.add_argument("--row-bytes", default=None, help="K x element size's range")
    ap.add_argument("--pad", default=None, help="lda - K's range (else 0 half the time, else 1-64)")
    ap.add_argument("--dtypes", default="float32,float16,bfloat16")
    ap.add_argument("--misaligned", action="store_true", help="rows that do not all start 16-byte aligned")
    ap.add_argument("--one-phase", action="store_true", help="rows all in one 16-byte phase, not aligned")
    ap.add_argument("--aligned", action="store_true", help="rows all 16-byte aligned")
    a = ap.parse_args()
    rng = random.Random(a.seed)
    rows, mib = pair(a.rows, int), pair(a.mib)
    row_bytes = pair(a.row_bytes, int) if a.row_bytes else None
    dtypes = a.dtypes.split(",")
    out = []
    while len(out) < a.n:
        dtype = rng.choice(dtypes)
        esz = ESZ[dtype]
        m = int(round(log_uniform(rng, *rows)))
        pad = rng.randint(*pair(a.pad, int)) if a.pad else (0 if rng.random() < 0.5 else rng.randint(1, 64))
        lda_bytes = log_uniform(rng, *mib) * (1 << 20) / m
        k = int(lda_bytes / esz) - pad
        if a.one_phase or a.aligned:
            k -= (k + pad) % (16 // esz)  # lda a whole number of packs
        if k < 1 or (row_bytes and not row_bytes[0] <= k * esz <= row_bytes[1]):
            continue
        offs = [rng.randint(0, 7) for _ in range(3)]
        if a.one_phase and (offs[0] * esz) % 16 == 0:
            continue
        if a.aligned:
            offs[0] = 0
        if a.misaligned and (offs[0] * esz) % 16 == 0 and ((k + pad) * esz) % 16 == 0:
            continue
        out.append(f"{dtype}:{m}x{k}" + (f"+{pad}" if pad else "") + "@" + ",".join(map(str, offs)))
    print("\n".join(out))


if __name__ == "__main__":
    main()
