"""Re-time shipped table entries now: each entry's config, the same config with x read
through the cache instead of staged (x_in_smem 0), and the heuristic, on the entry's own
shape (the tuner's instrument: cold L2, graph replay, median). For entries that may have
gone stale since their tune (the kernels or the heuristic changed after it).

    python benchmarks/experiments/retime_entries.py TABLE [--smem-only] [--json out.json]
        [--update OUT.gemvtable [--margin 0.03]]

--update writes a copy of TABLE whose op N entries carry the times measured now (tuned_us,
heuristic_us); an entry the heuristic now beats by more than --margin takes the heuristic's
config (and its time). Other lines are copied as they are.

--candidates FILE re-times only the keys FILE names, of any op and batch: each line
"op dtype batch m k variant p r loads unroll smem split" (several lines may share a key).
A key's entry (if any), the heuristic and each candidate are timed; the fastest candidate
that beats both the entry's and the heuristic's time by more than --margin becomes the
entry (an existing line replaced, a new one added after its op and dtype's last), with the
times measured now; an entry the heuristic beats by the margin gives way to the fastest of
the candidates and the heuristic. So a config found by a sweep (op_t_space.py) lands with true times:
heuristic_us / tuned_us sets how far the lookup stretches it (docs/tuning.md).
"""
import argparse
import json
import sys
from pathlib import Path

import pygemv
from pygemv.tuning.measure import GpuContext, GpuMeasure

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "scripts"))
from time_configs import spec  # noqa: E402  (the config form time_configs.py reads)

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
    ap.add_argument("--candidates", default="", help="re-time these keys with these configs (see above)")
    args = ap.parse_args()
    if args.candidates:
        return with_candidates(args)
    ctx, out, lines = GpuContext.create(), [], {}
    for e in entries(args.table):
        if e["op"] != "N" or e["batch"] != "1" or (args.smem_only and e["x_in_smem"] != "1"):
            continue
        m, k = int(e["m"]), int(e["k"])
        cfg = config_of(e)
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


def config_of(e):
    return pygemv.Config(e["variant"], *(int(e[n]) for n in FIELDS[6:12]))


def with_candidates(args):
    table = {tuple(e[n] for n in FIELDS[:5]): e for e in entries(args.table)}
    wanted = {}
    for line in open(args.candidates):
        f = line.split()
        if len(f) == 12 and not line.startswith("#"):
            wanted.setdefault(tuple(f[:5]), []).append(config_of(dict(zip(FIELDS, f))))
    ctx, out, lines = GpuContext.create(), [], {}
    for key, cands in wanted.items():
        op, dtype, batch, m, k = key
        me = GpuMeasure(int(m), int(k), dtype, ctx, op=op, batch=int(batch), repeats=9, target_ms=1.0)
        timed = lambda c: me.time_us(c) if me.legal(c)[0] and me.check(c)[0] else None
        heur = me.heuristic()
        entry = config_of(table[key]) if key in table else None
        t_heur, t_entry = timed(heur), (timed(entry) if entry else None)
        t_cands = [(timed(c), c) for c in cands]
        me.close()
        now = min(t for t in (t_heur, t_entry) if t is not None)
        best = min(((t, c) for t, c in t_cands if t is not None), key=lambda tc: tc[0], default=None)
        taken = best is not None and best[0] < now * (1 - args.margin)
        # An entry the heuristic now beats by the margin is stale: the fastest of the
        # candidates and the heuristic replaces it.
        if not taken and t_entry is not None and t_heur < t_entry * (1 - args.margin):
            best, taken = min([(t_heur, heur)] + ([best] if best else []), key=lambda tc: tc[0]), True
        if taken:
            c = best[1]
            lines[key] = " ".join([*key, *spec(c).split(":"), f"{best[0]:.3f}", f"{t_heur:.3f}"])
        fmt = lambda v: f"{v:8.2f}" if v is not None else "     n/a"
        print(f"{op} {dtype:<8} b{batch:<5} {m:>8}x{k:<6} heur {fmt(t_heur)} entry {fmt(t_entry)} best candidate "
              f"{fmt(best[0] if best else None)} {'taken' if taken else 'not taken'}: "
              + ", ".join(f"{spec(c)} {fmt(t).strip()}" for t, c in t_cands), flush=True)
        out.append({"key": key, "heuristic_us": t_heur, "entry_us": t_entry, "heuristic": heur.as_dict(),
                    "candidates": [{"config": c.as_dict(), "us": t} for t, c in t_cands], "taken": taken})
    if args.json:
        json.dump(out, open(args.json, "w"), indent=1)
    if args.update:
        write_update(args.table, args.update, lines)


def write_update(src_path, dst_path, lines):
    """TABLE with each key of lines replaced or, if new, added after its op and dtype's last
    entry, and the header's entry count (with "end", what tells a truncated table) updated."""
    src = open(src_path).read().splitlines()
    keys = [tuple(l.split()[:5]) if len(l.split()) == len(FIELDS) and l.split()[0] in ("N", "T") else None for l in src]
    last = {key[:2]: i for i, key in enumerate(keys) if key}  # (op, dtype) -> its last entry's line
    known, after = set(keys), {}
    for key, line in lines.items():
        if key not in known:
            if key[:2] not in last:
                raise SystemExit(f"no entries of the op and dtype of {key} to place it after")
            after.setdefault(last[key[:2]], []).append(line)
    count = sum(1 for l in src if len(l.split()) == len(FIELDS) and not l.startswith("#")) + sum(map(len, after.values()))
    out = []
    for i, (line, key) in enumerate(zip(src, keys)):
        out.append(f"entries {count}" if line.startswith("entries ") else lines.get(key, line) if key else line)
        out.extend(after.get(i, []))
    open(dst_path, "w").write("\n".join(out) + "\n")


if __name__ == "__main__":
    main()
