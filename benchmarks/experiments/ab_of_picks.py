"""The A/B of this checkout's dispatch, from an A/B of two other builds timed in one session:
where this checkout picks (on the host, tests/hostcheck's stand-in, no table) the config one
of the two builds ran on a case, that build's time is its time; a case whose pick neither
ran is reported and left out. For a host-only rule change that keeps some of a measured
rule's picks and returns the rest to the previous ones (benchmarks/NOTES.md section 76).
Cases keep their layout (lda and the pointers' offsets, --lda-pad and --offsets; since s63).
    python3 benchmarks/experiments/ab_of_picks.py previous.json this.json    # bench_vs_previous.sh's JSONs
"""
import json
import math
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tests"))
from hostcheck_lib import run  # noqa: E402

FIELDS = ("variant", "threads_per_row", "rows_per_block", "vector_loads", "unroll", "x_in_smem", "split_k")


def spec(c):
    return ":".join(str(int(c[f]) if f != "variant" else c[f]) for f in FIELDS)


def main():
    def key(c):  # the case and its layout: lda (K where the bench left it packed), A's, x's, y's offsets
        return (c["dtype"], c["op"], c["batch"], c["m"], c["k"], c.get("lda", c["k"]), tuple(c.get("offsets", (0, 0, 0))))
    prev, this = ({key(c): c for c in json.load(open(p))["cases"]} for p in sys.argv[1:3])
    keys = sorted(this)
    code = f'''
import pygemv
for dt, op, b, m, k, lda, offs in {keys!r}:
    es = 4 if dt == "float32" else 2
    a, x, y = ((1 << 32) + (i << 36) + o * es for i, o in enumerate(offs))  # 256-byte aligned bases, as the bench
    strides = dict(stride_a=m * lda, stride_x=k if op == "N" else m, stride_y=m if op == "N" else k) if b > 1 else {{}}
    c = pygemv.select_config(m, k, dt, use_table=False, batch=b, trans=op == "T", lda=lda, a_ptr=a, x_ptr=x, y_ptr=y,
                             **strides)
    print(":".join([str(c.variant)] + [str(int(v)) for n, v in c.as_dict().items() if n != "variant"]))
'''
    picks = run(code).stdout.split()
    g = lambda xs: math.exp(sum(map(math.log, xs)) / len(xs))  # noqa: E731
    r, moved, vb, va, left = [], [], [], [], []
    for key, pick in zip(keys, picks):
        p, t = prev[key], this[key]
        ran = t if pick == spec(t["config"]) else p if pick == spec(p["config"]) else None
        if ran is None:
            left.append((key, pick))
            continue
        r.append(p["pygemv"]["median_us"] / ran["pygemv"]["median_us"])
        vb.append(p["speedup_vs_cublas"])
        va.append(ran["speedup_vs_cublas"])
        if ran is t and pick != spec(p["config"]):
            moved.append(r[-1])
            print(f"{key[0]:9s} {key[3]:8d} x {key[4]:6d}  {p['pygemv']['median_us']:8.2f} -> "
                  f"{ran['pygemv']['median_us']:8.2f} us  {r[-1]:.3f}x  vs cuBLAS {va[-1]:.2f}x  {pick}")
    for key, pick in left:
        print("not timed:", key, pick)
    print(f"{len(r)} cases: geomean {g(r):.3f}x, min {min(r):.3f}x, slower by > 2%: {sum(x < 0.98 for x in r)}; "
          f"{len(moved)} moved: {g(moved) if moved else 1:.3f}x; against cuBLAS {g(vb):.3f}x -> {g(va):.3f}x, "
          f"slower {sum(v < 1 for v in vb)} -> {sum(v < 1 for v in va)}, min {min(vb):.3f}x -> {min(va):.3f}x")


if __name__ == "__main__":
    main()
