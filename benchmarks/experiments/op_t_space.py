"""Time op T's search space (tuning/space.py, the tuner's own) on a few shapes, whole or cut
down, and print each shape's fastest configs next to the dispatcher's choice: the check an
entry gets before it is set by hand, and what a short tune can miss (the tuner's
instrument: checked first, cold L2, graph replay, medians). Usage, after installing pygemv:

    python benchmarks/experiments/op_t_space.py [--vec 0,1] [--unroll 2,4] [--c 8,16,32]
        [--lanes 16,32,64] [--max-split 64] [--top 5] [--configs FILE] [--csv PATH] [--each] [--op N] dtype:MxK[xB] ...

(xB: a strided batch of B products, dense strides; +P: lda = K + P; @a,x,y: A's, x's and y's
pointers that many elements past a 256-byte boundary, as pygemv-bench --offsets; for example
bfloat16:4096x14336@0,3,0; the space follows lda and A's offset: padded rows that all start
aligned search aligned packs. Cases may also come one a line from a file, @FILE; a line may list
specs after its case, timed on that case besides --configs: a survey of configs derived from
each case, such as its aligned twin's pick.) --configs times
the configs a file lists (one spec a line, time_configs.py's form) instead of the space; --csv
writes every timing, the dispatcher's choice first, as dtype,m,k,batch,config,us,layout. --op N
times op N instead (its whole space is large: give --configs; s55 timed op N's batches so,
benchmarks/experiments/op-n-batched-*.txt).
"""
import argparse
import sys
import time
from pathlib import Path

from pygemv.tuning.measure import GpuContext, GpuMeasure
from pygemv.tuning.space import build_space

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "scripts"))
from time_configs import parse_spec, spec  # noqa: E402  (the config form time_configs.py reads)


def ints(text):
    return [int(v) for v in text.split(",")] if text else None


def read_cases(args):
    """The cases given (dtype:MxK[xB]) as (case, its own specs): those of @FILE arguments one a
    line, the case first, then any specs of its own."""
    out = []
    for arg in args:
        lines = Path(arg[1:]).read_text().splitlines() if arg.startswith("@") else [arg]
        out += [(words[0], words[1:]) for words in (line.split() for line in lines) if words]
    return out


def parse_case(case):
    """dtype:MxK[xB][+P][@a,x,y] as (dtype, m, k, batch, lda_pad, offsets)."""
    dtype, shape = case.split(":")
    shape, _, offs = shape.partition("@")
    shape, _, pad = shape.partition("+")
    m, k, batch = ([int(v) for v in shape.split("x")] + [1])[:3]
    offsets = tuple(int(v) for v in offs.split(",")) if offs else (0, 0, 0)
    return dtype, m, k, batch, int(pad or 0), offsets


def open_csv(path):
    """The timings' CSV (dtype,m,k,batch,config,us,layout: '' or as parse_case reads it,
    '+P@a,x,y'), or None without a path."""
    csv = open(path, "w") if path else None
    if csv:
        print("dtype,m,k,batch,config,us,layout", file=csv)
    return csv


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--vec", type=ints)
    ap.add_argument("--unroll", type=ints)
    ap.add_argument("--c", type=ints, help="threads across a tile's columns")
    ap.add_argument("--lanes", type=ints, help="row lanes a block")
    ap.add_argument("--max-split", type=int, default=512)
    ap.add_argument("--top", type=int, default=5)
    ap.add_argument("--configs", help="a file of specs to time instead of the space")
    ap.add_argument("--csv", help="write every timing here")
    ap.add_argument("--each", action="store_true", help="print each config as it is timed (finds one that hangs)")
    ap.add_argument("--op", default="T", choices=("N", "T"), help="the op timed (op N: give --configs)")
    ap.add_argument("cases", nargs="+", help="dtype:MxK or dtype:MxKxB (B products), or @FILE of them")
    a = ap.parse_args()
    listed = [parse_spec(line) for line in Path(a.configs).read_text().split()] if a.configs else None
    csv = open_csv(a.csv)
    ctx = GpuContext.create()
    for case, own in read_cases(a.cases):
        dtype, m, k, batch, pad, offsets = parse_case(case)
        space = (listed if listed is not None else [] if own
                 else list(build_space(m, k, dtype, op=a.op, batch=batch, lda=k + pad,
                                       a_offset=offsets[0]).configs()))  # a list: extended below
        space = space + [parse_spec(s) for s in own if all(spec(c) != s for c in space)]
        keep = [c for c in space
                if (a.vec is None or int(c.vector_loads) in a.vec) and (a.unroll is None or c.unroll in a.unroll)
                and (a.c is None or c.threads_per_row in a.c) and (a.lanes is None or c.rows_per_block in a.lanes)
                and c.split_k <= a.max_split]
        meas = GpuMeasure(m, k, dtype, ctx, op=a.op, batch=batch, repeats=15, target_ms=2.0, lda=k + pad,
                          offsets=offsets)
        chosen = meas.dispatch()
        t0, times = time.time(), []
        for c in keep:
            if a.each:
                print(f"  {spec(c)} ...", end=" ", flush=True)
            ok, why = meas.legal(c)
            if ok:
                ok, why = meas.check(c)
            if ok:
                times.append((meas.time_us(c), spec(c)))
            if a.each:
                print(f"{times[-1][0]:.2f} us" if ok else why, flush=True)
        times.sort()
        d = meas.time_us(chosen)
        layout = (f"+{pad}" if pad else "") + (f"@{','.join(map(str, offsets))}" if any(offsets) else "")
        if csv:
            for t, sp in [(d, "dispatch:" + spec(chosen))] + times:
                print(f"{dtype},{m},{k},{batch},{sp},{t:.3f},{layout}", file=csv, flush=True)
        print(f"{a.op} {dtype} {m}x{k}" + (f" batch {batch}" if batch > 1 else "") + f" {layout}" * bool(layout) + f": dispatch {spec(chosen)} {d:.2f} us; {len(times)} of {len(keep)} configs timed in "
              f"{time.time() - t0:.0f} s; fastest: " + ", ".join(f"{s} {t:.2f}" for t, s in times[:a.top]), flush=True)
        meas.close()


if __name__ == "__main__":
    main()
