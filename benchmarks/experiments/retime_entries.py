"""Re-time shipped table entries now: each entry's config, the same config with x read
through the cache instead of staged (x_in_smem 0), and the heuristic, on the entry's own
shape (the tuner's instrument: cold L2, graph replay, median). For entries that may have
gone stale since their tune (the kernels or the heuristic changed after it).

    python benchmarks/experiments/retime_entries.py TABLE [--smem-only] [--json out.json]
        [--update OUT.gemvtable [--margin 0.03]]

--update writes a copy of TABLE whose op N entries carry the times measured now (tuned_us,
heuristic_us); an entry the heuristic now beats by more than --margin takes the heuristic's
config (and its time). Other lines are copied as they are.
"""
import argparse
import json

import pygemv
from pygemv.tuning.measure import GpuContext, GpuMeasure

FIELDS = "op dtype batch m k variant threads_per_row rows_per_block vector_loads unroll x_in_smem split_k tuned_us heuristic_us".split()


def entries(path):
    for line in open(path):
        f = line.split()
        if len(f) == len(FIELDS) and f[0] in ("N", "T"):
            yield dict(zip(FIELDS, f))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("table")
    ap.add_argument("--smem-only", action="store_true")
    ap.add_argument("--json", default="")
    ap.add_argument("--update", default="", help="write the re-timed table here")
    ap.add_argument("--margin", type=float, default=0.03)
    args = ap.parse_args()
    ctx, out, lines = GpuContext.create(), [], {}
    for e in entries(args.table):
        if e["op"] != "N" or e["batch"] != "1" or (args.smem_only and e["x_in_smem"] != "1"):
            continue
        m, k = int(e["m"]), int(e["k"])
        cfg = pygemv.Config(e["variant"], *(int(e[n]) for n in FIELDS[6:12]))
        twin = pygemv.Config(e["variant"], *(int(e[n]) for n in FIELDS[6:10]), 0, int(e["split_k"]))
        me = GpuMeasure(m, k, e["dtype"], ctx, repeats=7, target_ms=1.0)
        heur = me.heuristic()
        t = {name: (me.time_us(c) if me.legal(c)[0] and me.check(c)[0] else None)
             for name, c in (("entry", cfg), ("smem0", twin), ("heuristic", heur))
             if name != "smem0" or cfg.x_in_smem}
        t.setdefault("smem0", None)
        me.close()
        row = {**e, **{f"{n}_now": v for n, v in t.items()}, "heuristic": heur.as_dict()}
        out.append(row)
        if t["entry"] is not None and t["heuristic"] is not None:
            entry_us, heur_us = t["entry"], t["heuristic"]
            fields = [e[n] for n in FIELDS[5:12]]
            if heur_us < entry_us * (1 - args.margin):
                h = heur.as_dict()
                fields = [h["variant"]] + [str(int(h[n])) for n in FIELDS[6:12]]
                entry_us = heur_us
            lines[(e["dtype"], e["batch"], e["m"], e["k"])] = " ".join(
                ["N", e["dtype"], e["batch"], e["m"], e["k"], *fields, f"{entry_us:.3f}", f"{heur_us:.3f}"])
        fmt = lambda v: f"{v:8.2f}" if v is not None else "     n/a"
        print(f"{e['dtype']:<8} {m:>8}x{k:<8} {e['variant']}:{':'.join(e[n] for n in FIELDS[6:12])} "
              f"tuned {float(e['tuned_us']):8.2f} now {fmt(t['entry'])} s0 {fmt(t['smem0'])} heur {fmt(t['heuristic'])}",
              flush=True)
    if args.json:
        json.dump(out, open(args.json, "w"), indent=1)
    if args.update:
        with open(args.table) as src, open(args.update, "w") as dst:
            for line in src:
                f = line.split()
                key = (f[1], f[2], f[3], f[4]) if len(f) == len(FIELDS) and f[0] == "N" else None
                dst.write(lines[key] + "\n" if key in lines else line)


if __name__ == "__main__":
    main()
