"""Which dense cases a dispatch change moves, without a GPU: the shipped table's lookup, then
the heuristic, on the stand-in runtime (tests/hostcheck, 132 fake SMs: the H100's), for this
checkout's stand-in build and another's. Cases are the (dtype, M, K) of op N single products
in pygemv-bench JSON files. Prints each case whose config differs and the count (NOTES 45:
the op N suite unchanged, 26 of 234 cases moved).

    tar -xf .carry/old-src.tar -C /tmp/oldsrc
    cmake -S /tmp/oldsrc/tests/hostcheck -B /tmp/hc-old -G Ninja && cmake --build /tmp/hc-old --target gemv_hostcheck
    python benchmarks/experiments/dispatch_diff.py /tmp/hc-old/libgemv_hostcheck.so a.json [b.json ...]
"""
import json
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / "benchmarks"))
import hostcheck_lib  # noqa: E402
from results_file import open_results  # noqa: E402

TABLE = ROOT / "libgemv" / "tables" / "NVIDIA-H100-80GB-HBM3-sm90-132sm.gemvtable"
PICK = """
import json
t = pygemv.Table(%r)
out = []
for dt, m, k in %r:
    hit = t.lookup(m, k, dt)
    c = hit[0] if hit else pygemv.select_config(m, k, dt, use_table=False)
    out.append([c.variant, c.threads_per_row, c.rows_per_block, c.vector_loads, c.unroll, c.split_k, bool(hit)])
print(json.dumps(out))
"""


def configs(library, cases):
    """The dispatch config of each case under the stand-in build at library (None: this checkout's)."""
    env = dict(os.environ)
    env.pop("GEMV_HOSTCHECK_LIBRARY", None)
    if library:
        env["GEMV_HOSTCHECK_LIBRARY"] = library
    hostcheck_lib.library.cache_clear()
    old = os.environ.copy()
    os.environ.clear()
    os.environ.update(env)
    try:
        r = hostcheck_lib.run(PICK % (str(TABLE), cases))
    finally:
        os.environ.clear()
        os.environ.update(old)
    return json.loads(r.stdout.strip().splitlines()[-1])


def main(argv):
    other, files = argv[0], argv[1:]
    cases = []
    for f in files:
        cases += [(c["dtype"], c["m"], c["k"]) for c in json.load(open_results(f))["cases"]
                  if c.get("op", "N") == "N" and c.get("batch", 1) == 1 and "format" not in c]
    cases = list(dict.fromkeys(cases))
    a, b = configs(other, cases), configs(None, cases)
    moved = [(c, x, y) for c, x, y in zip(cases, a, b) if x != y]
    for c, x, y in moved:
        print(*c, x, "->", y)
    print(f"{len(moved)} of {len(cases)} cases change")


if __name__ == "__main__":
    main(sys.argv[1:])
