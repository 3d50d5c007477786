"""Merge tuned tables of one GPU into one file: ``python -m pygemv.tuning.merge``.

    python -m pygemv.tuning.merge shipped.gemvtable op_t.gemvtable quantized.gemvtable -o out.gemvtable

Used to ship a table tuned in parts (one ``pygemv-tune`` run a grid): the entries of a
later table replace those of an earlier one with the same problem descriptor (op, dtype,
batch, M, K; quantized weights by their bits and group size), every other entry is kept.
The tables must share their fingerprint (GPU, SMs, compute capability, CUDA runtime,
libgemv version). The comment lines of every input are kept, in order, and a later
table's free header lines (``created``, ``tool``) become comments, so that a shipped table
still says how each part was tuned. The result is parsed by libgemv before it is
written: a merge never ships a table the library refuses.
"""
from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

import pygemv
from pygemv._table import write_atomically

FINGERPRINT_KEYS = ("gemv-table", "gpu", "sm_count", "compute_capability", "cuda_runtime", "libgemv")


class MergeError(ValueError):
    pass


def read_parts(path: str | os.PathLike) -> tuple[list[str], dict[str, str], list[str], dict[tuple, str]]:
    """(comment lines, fingerprint keys, other header lines, entries by descriptor) of a table."""
    comments, fingerprint, other, entries = [], {}, [], {}
    in_entries = False
    for n, raw in enumerate(Path(path).read_text().splitlines(), 1):
        line = raw.strip()
        if not line:
            continue
        if line.startswith("#"):
            comments.append(line)
            continue
        words = line.split()
        if line == "end":
            return comments, fingerprint, other, entries
        if not in_entries:
            if words[0] == "entries":
                in_entries = True
            elif words[0] in FINGERPRINT_KEYS:
                fingerprint[words[0]] = " ".join(words[1:])
            else:
                other.append(line)
            continue
        if len(words) != 14:
            raise MergeError(f"{path}:{n}: an entry has 14 fields, {len(words)} found")
        entries[tuple(words[:5])] = line
    raise MergeError(f"{path}: no closing 'end' line (truncated?)")


def merge(paths: list[str | os.PathLike], out: str | os.PathLike) -> tuple[int, int]:
    """Merge ``paths`` (later ones win) into ``out``; returns (entries, replaced)."""
    if not paths:
        raise MergeError("no tables to merge")
    comments: list[str] = []
    entries: dict[tuple, str] = {}
    replaced = 0
    first_fp, first_other = None, []
    for p in paths:
        c, fp, other, es = read_parts(p)
        if first_fp is None:
            first_fp, first_other = fp, other
        elif fp != first_fp:
            diff = {k: (first_fp.get(k), fp.get(k)) for k in FINGERPRINT_KEYS if first_fp.get(k) != fp.get(k)}
            raise MergeError(f"{p}: its fingerprint differs from {paths[0]}'s: {diff}")
        # A later table's free header lines (when and how it was tuned) become comments:
        # a header key may appear once.
        c = c + [f"# {Path(p).name}: {line}" for line in other] if first_fp is not fp else c
        comments += [line for line in c if line not in comments]
        replaced += sum(k in entries for k in es)
        entries.update(es)
    lines = comments[:2] + [f"{k} {first_fp[k]}" for k in FINGERPRINT_KEYS if k in first_fp]
    lines += comments[2:] + first_other + [f"entries {len(entries)}"]
    lines += [entries[k] for k in sorted(entries, key=lambda k: (k[0], k[1], int(k[2]), int(k[3]), int(k[4])))]
    lines.append("end")
    # libgemv's own parser first: a merge never ships what the library would refuse.
    write_atomically(out, "\n".join(lines) + "\n", check=lambda tmp: pygemv.Table(tmp).close())
    return len(entries), replaced


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m pygemv.tuning.merge", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--version", action="version", version=pygemv.version_string("pygemv.tuning.merge"))
    ap.add_argument("tables", nargs="+", help="tables of one GPU, earliest first (later entries win)")
    ap.add_argument("-o", "--out", required=True, help="the merged table")
    args = ap.parse_args(argv)
    try:
        n, replaced = merge(args.tables, args.out)
    except (MergeError, OSError, pygemv.GemvError) as e:
        print(f"merge: {e}", file=sys.stderr)
        return 2
    print(f"{args.out}: {n} entries ({replaced} replaced by a later table)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
