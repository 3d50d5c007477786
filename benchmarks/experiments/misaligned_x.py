"""op N with aligned rows and an x that does not start 16-byte aligned: what the dispatcher
runs against the same problem with x aligned, and against the aligned problem's config read
other ways (the tuner's instrument: checked first, cold L2, graph replay, medians). Usage,
after installing pygemv:

    python benchmarks/experiments/misaligned_x.py [--csv PATH] dtype:MxK[xB]@a,x,y ... | @FILE

For each case: 'aligned' is the dispatch with every offset 0; 'dispatch' the case's own; then
the aligned case's config with realigned loads (vector_loads 2, x through L1) at unroll 1, 2
and 4, with x staged (x_in_smem 1), and with x's phase copies (vector_loads 5) where the
registry takes them. --csv writes dtype,m,k,batch,layout,form,config,us.
"""
import argparse
import csv as csvlib
import dataclasses
import sys
import time
from pathlib import Path

from pygemv.tuning.measure import GpuContext, GpuMeasure

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "scripts"))
from op_t_space import parse_case, read_cases  # noqa: E402
from time_configs import spec  # noqa: E402


def forms(c):
    """(name, config) of the aligned problem's config c read other ways."""
    out = []
    for u in (1, 2, 4):
        out.append((f"realigned-u{u}", dataclasses.replace(c, vector_loads=2, x_in_smem=False, unroll=u)))
    out.append(("staged", dataclasses.replace(c, x_in_smem=True)))
    if c.split_k == 1:
        for u in (1, 2, 4):
            out.append((f"copies-u{u}", dataclasses.replace(c, vector_loads=5, x_in_smem=False, unroll=u)))
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--csv", help="write every timing here")
    ap.add_argument("cases", nargs="+", help="dtype:MxK[xB][+P]@a,x,y, or @FILE of them")
    a = ap.parse_args()
    out = open(a.csv, "w", newline="") if a.csv else None
    csv = csvlib.writer(out) if out else None  # the layout holds commas: quoted
    if csv:
        csv.writerow(["dtype", "m", "k", "batch", "layout", "form", "config", "us"])
    ctx = GpuContext.create()
    for case in read_cases(a.cases):
        dtype, m, k, batch, pad, offsets = parse_case(case)
        t0 = time.time()
        al = GpuMeasure(m, k, dtype, ctx, batch=batch, repeats=15, target_ms=2.0, lda=k + pad)
        c_al = al.dispatch()
        rows = [("aligned", c_al, al.time_us(c_al))]
        al.close()
        meas = GpuMeasure(m, k, dtype, ctx, batch=batch, repeats=15, target_ms=2.0, lda=k + pad, offsets=offsets)
        c_d = meas.dispatch()
        rows.append(("dispatch", c_d, meas.time_us(c_d)))
        for name, c in forms(c_al):
            ok, why = meas.legal(c)
            if ok:
                ok, why = meas.check(c)
            if ok:
                rows.append((name, c, meas.time_us(c)))
        meas.close()
        layout = (f"+{pad}" if pad else "") + "@" + ",".join(map(str, offsets))
        if csv:
            csv.writerows([dtype, m, k, batch, layout, name, spec(c), f"{t:.3f}"] for name, c, t in rows)
            out.flush()
        best = min(rows[2:], key=lambda r: r[2], default=None)
        print(f"{dtype} {m}x{k}" + (f"x{batch}" if batch > 1 else "") + f" {layout}: aligned {rows[0][2]:.2f} "
              f"({spec(c_al)}), dispatch {rows[1][2]:.2f} ({spec(c_d)}); " +
              ", ".join(f"{n} {t:.2f}" for n, _, t in rows[2:]) +
              (f"; best {best[0]} {rows[1][2] / best[2]:.3f}x dispatch, {rows[0][2] / best[2]:.3f}x aligned" if best else "")
              + f" [{time.time() - t0:.0f} s]", flush=True)


if __name__ == "__main__":
    main()
