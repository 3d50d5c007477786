"""Which kernels of a source file compile to the same PTX at two commits: exactly (then the
SASS is the same and a timing difference is noise), only up to the numbering of virtual
registers (ptxas may then schedule differently: NOTES.md section 51 measured 2-4% on one
kernel from a swapped pair of accumulators), or not at all. Host only, no GPU.

    python benchmarks/experiments/ptx_same.py libgemv/src/qmma.cu 52c2497 [HEAD | worktree] [--match rounds]

Kernels are paired by demangled name; where template parameters changed form, --rename
PATTERN=REPLACEMENT (re.sub, repeatable) maps old names to new ones, for example
    --rename 'x_held_kernel<(\S+), (\d), (\d), false, (\d)>=x_held_kernel<\1, \2, \3, 0, \4>'
Needs nvcc and c++filt."""
import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def ptx_of(source: str, rev: str, work: Path) -> str:
    """PTX of `source` (a path in the repository) at `rev` ("worktree": the file as it is)."""
    src = work / rev.replace("/", "_") / "src"
    src.mkdir(parents=True)
    for d in ("libgemv/src", "libgemv/include"):  # the file's includes, at the same revision
        if rev == "worktree":
            shutil.copytree(ROOT / d, src / d, dirs_exist_ok=True)
        else:
            tar = subprocess.run(["git", "-C", str(ROOT), "archive", rev, d], capture_output=True, check=True).stdout
            subprocess.run(["tar", "-x", "-C", str(src)], input=tar, check=True)
    out = src.parent / "k.ptx"
    nvcc = os.environ.get("CUDACXX") or shutil.which("nvcc") or "/usr/local/cuda/bin/nvcc"
    subprocess.run([nvcc, "-std=c++17", "-O3", "-arch=sm_90", "-DGEMV_BUILDING_LIBRARY", "-I", str(src / "libgemv/include"),
                    "-I", str(src / "libgemv/src"), "-ptx", str(src / source), "-o", str(out)], check=True,
                   capture_output=True)
    return out.read_text()


def kernels(ptx: str, registers: bool) -> dict:
    """Demangled entry name -> body, with names that differ between builds made equal (the
    anonymous namespace's hash, labels, the kernel's own symbol); registers=False also
    erases virtual register numbers."""
    out = {}
    for part in re.split(r"(?=^(?:\.visible |\.weak )?\.entry )", ptx, flags=re.M):
        m = re.match(r"(?:\.visible |\.weak )?\.entry (\S+)\(", part)
        if not m:
            continue
        name = m.group(1)
        body = part.replace(name, "F")
        body = re.sub(r"_GLOBAL__N__[0-9a-f]+_\d+_\w+?_[0-9a-f]+", "ANON", body)
        body = re.sub(r"_ZZN\S*?E(\d+\w+)", r"LOCAL_\1", body)  # function-local statics carry the kernel's name
        body = re.sub(r"\$L__BB\d+_", "$L__BB_", body)
        body = re.sub(r"callseq \d+", "callseq", body)  # numbered across the file, like the labels
        if not registers:
            body = re.sub(r"%(f|r|rd|p|rs|h|fd)\d+", r"%\1", body)
        lines = [l for l in body.splitlines()[1:] if not l.strip().startswith(("//", ".loc", ".file"))]
        out[subprocess.run(["c++filt", name], capture_output=True, text=True).stdout.strip()] = "\n".join(lines)
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("source")
    ap.add_argument("old")
    ap.add_argument("new", nargs="?", default="worktree")
    ap.add_argument("--match", default="", help="only kernels whose name contains this")
    ap.add_argument("--rename", action="append", default=[], help="PATTERN=REPLACEMENT applied to the old names")
    a = ap.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        old_ptx, new_ptx = (ptx_of(a.source, rev, Path(tmp)) for rev in (a.old, a.new))
    exact = [kernels(p, True) for p in (old_ptx, new_ptx)]
    loose = [kernels(p, False) for p in (old_ptx, new_ptx)]
    for pattern, _, repl in (r.partition("=") for r in a.rename):
        for side in (exact[0], loose[0]):
            for n in list(side):
                side[re.sub(pattern, repl, n)] = side.pop(n)
    names = sorted(n for n in set(exact[0]) | set(exact[1]) if a.match in n)
    tally = {"same": 0, "registers renumbered": 0, "different": 0, "only old": 0, "only new": 0}
    for n in names:
        if n not in exact[1] or n not in exact[0]:
            verdict = "only new" if n not in exact[0] else "only old"
        elif exact[0][n] == exact[1][n]:
            verdict = "same"
        elif loose[0][n] == loose[1][n]:
            verdict = "registers renumbered"
        else:
            verdict = "different"
        tally[verdict] += 1
        if verdict != "same":
            print(f"{verdict:21s} {n}")
    print(f"{a.source} {a.old} -> {a.new}: " + ", ".join(f"{v} {k}" for k, v in tally.items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
