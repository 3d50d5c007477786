"""The dispatcher's and the registry's launch plans, checked without a GPU: libgemv's host
code runs on the stand-in CUDA runtime (tests/hostcheck), which checks every plan against
the block, grid and shared-memory limits and every address a kernel would touch against
the operands' allocations (each exactly its extent)."""
from __future__ import annotations

import subprocess
import sys
import textwrap

import hostcheck_lib
from hostcheck_lib import run

PROBLEMS = '''
rng = np.random.default_rng(SEED)
DT = {"float32": 4, "float16": 2, "bfloat16": 2}

def alloc(lo, hi, esz, offset):
    """A buffer of exactly elements lo..hi (relative to the pointer returned) plus offset bytes."""
    d = pygemv.DeviceArray.empty(((hi - lo + 1) * esz + offset) // 2 + 1, "float16")
    keep.append(d)
    return d.ptr + offset - lo * esz

def reach(n, inc, batch, stride):
    lo = min(0, (n - 1) * inc) + min(0, (batch - 1) * stride)
    hi = max(0, (n - 1) * inc) + max(0, (batch - 1) * stride)
    return lo, hi

def problem():
    dtype = ["float32", "float16", "bfloat16"][rng.integers(3)]
    esz = DT[dtype]
    trans = bool(rng.integers(2))
    m = int(rng.integers(1, 9)) if rng.integers(4) == 0 else int(2 ** rng.uniform(0, 16))
    k = int(2 ** rng.uniform(0, min(18, 22 - np.log2(m))))
    lda = k + (int(rng.integers(0, 17)) if rng.integers(3) == 0 else 0)
    incx, incy = (int(v) for v in rng.choice([1, 1, 1, -1, 2, -3], 2))
    batch = int(rng.choice([1, 1, 2, 17, 64]))
    if m * lda * batch > 1 << 24:
        batch = 1
    nx, ny = (m, k) if trans else (k, m)
    span_a, span_x, span_y = (m - 1) * lda + k, (nx - 1) * abs(incx) + 1, (ny - 1) * abs(incy) + 1
    sa = int(rng.choice([0, span_a, -span_a, span_a + 3])) if batch > 1 else 0
    sx = int(rng.choice([0, span_x, -span_x])) if batch > 1 else 0
    sy = int(rng.choice([span_y, -span_y, span_y + 1])) if batch > 1 else 0
    off = lambda: int(rng.integers(16 // esz)) * esz * int(rng.integers(2))  # each operand its own phase
    lo, hi = reach(m, lda, batch, sa)
    A = alloc(lo, hi + k - 1, esz, off())
    lo, hi = reach(nx, abs(incx), batch, sx)
    x = alloc(lo, hi, esz, off())
    lo, hi = reach(ny, abs(incy), batch, sy)
    y = alloc(lo, hi, esz, off())
    ws_bytes = int(rng.choice([0, 16, 4096, 4 << 20]))
    ws = alloc(0, ws_bytes // 2, 2, 0) if ws_bytes else 0
    return dict(dtype=dtype, trans=trans, m=m, k=k, lda=lda, incx=incx, incy=incy, batch=batch, sa=sa, sx=sx,
                sy=sy, A=A, x=x, y=y, ws=ws, ws_bytes=ws_bytes)

def mma_fits(p):
    """Whole aligned 16-byte packs of 16-bit rows, products and x (row_mma's can_implement)."""
    return (p["dtype"] != "float32" and p["k"] % 8 == 0 and (p["m"] == 1 or p["lda"] % 8 == 0) and p["A"] % 16 == 0
            and p["x"] % 16 == 0 and p["incx"] == 1 and (p["batch"] == 1 or (p["sa"] % 8 == 0 and p["sx"] % 8 == 0)))

def args(p, flags=0):
    return _lib.Args(int(p["trans"]), _lib.DTYPES[p["dtype"]], p["m"], p["k"], 1.5, 0.5, p["A"], p["lda"], p["x"],
                     p["incx"], p["y"], p["incy"], p["ws"], p["ws_bytes"], 0, flags, p["batch"], p["sa"], p["sx"],
                     p["sy"])
'''


def test_automatic_dispatch_plans_are_legal():
    """2000 random problems, each operand in an allocation of exactly its extent, through
    the dispatcher (heuristic and the shipped table; caller's workspace and the pool)."""
    run("keep = []\nSEED = 11\n" + PROBLEMS + textwrap.dedent("""
    lib = _lib.load()
    table = next(p for p in (__import__("pathlib").Path("libgemv/tables")).glob("*.gemvtable"))
    for i in range(2000):
        if i == 1000:
            pygemv.load_table(str(table))
        keep.clear()
        p = problem()
        st = lib.gemv_ex(ctypes.byref(args(p, _lib.FLAG_LIBRARY_WORKSPACE if i % 2 else 0)), None)
        assert st == 0, (p, lib.gemv_last_error())
    assert fake.gemv_fake_launches() >= 2000
    no_violations()
    """), timeout=300)


def test_every_variant_forced_runs_or_refuses_cleanly():
    """Configs from every registry entry's ranges, forced on random problems: each either
    runs with a legal plan or gets NOT_SUPPORTED / INSUFFICIENT_WORKSPACE and launches
    nothing."""
    run("keep = []\nSEED = 5\n" + PROBLEMS + textwrap.dedent("""
    lib = _lib.load()
    counts = {}
    dense = [v for v in pygemv.variants() if not v.quantized]  # quantized weights: test_cpu_quantized.py
    for v in dense:
        def pow2s(lo, hi):
            out, a = [], lo
            while a <= hi:
                out.append(a); a *= 2
            return out
        for i in range(120):
            keep.clear()
            p = problem()
            # Operands placed for the variant's op; row_mma (whole aligned 16-bit packs, which few
            # random problems have) on every other draw one it can run.
            while p["trans"] != (v.op == "T") or (v.name == "row_mma" and i % 2 == 0 and not mma_fits(p)):
                keep.clear()
                p = problem()
            c = pygemv.Config(v.name, int(rng.choice(pow2s(*v.threads_per_row))), int(rng.choice(pow2s(*v.rows_per_block))),
                              int(rng.integers(6 if v.op == "N" else 4)), int(rng.choice(v.unrolls)),
                              bool(rng.integers(2)) and v.stages_x,
                              int(rng.choice(pow2s(max(1, v.split_k[0]), v.split_k[1]))))
            if not pygemv._registry.validate(c):
                continue
            before = fake.gemv_fake_launches()
            st = lib.gemv_ex(ctypes.byref(args(p)), ctypes.byref(c.to_c()))
            assert st in (0, 3, 4), (v.name, c, p, st, lib.gemv_last_error())
            if st:
                assert fake.gemv_fake_launches() == before, "a refused call launched"
            counts[(v.name, st)] = counts.get((v.name, st), 0) + 1
    ran = {name for (name, st) in counts if st == 0}
    assert ran == {v.name for v in dense}, counts
    # op T's phased rows split, forced on misaligned rows at every phase, with fewer rows
    # than phase classes, batches whose strides move the phase, and slices past the
    # workspace refused: lane classes where the lanes are a multiple of the period and a
    # tile has 2 threads, else a slice a phase class (4 lanes on 16-bit odd lda, 1 thread).
    P = pygemv.LOADS_PHASED
    def op_t_problem():
        keep.clear()
        p = problem()
        while not p["trans"]:
            keep.clear()
            p = problem()
        return p
    phased = 0
    for i in range(200):
        p = op_t_problem()
        c = pygemv.Config("t_splitm_twopass", int(rng.choice([1, 4, 8, 16, 32])), int(rng.choice([4, 8, 16, 32])), P,
                          int(rng.choice([1, 2, 4])), False, int(rng.choice([2, 3, 8, 64, 1024])))
        if not pygemv._registry.validate(c):
            continue
        before = fake.gemv_fake_launches()
        st = lib.gemv_ex(ctypes.byref(args(p)), ctypes.byref(c.to_c()))
        assert st in (0, 4), (c, p, st, lib.gemv_last_error())  # success or INSUFFICIENT_WORKSPACE
        if st:
            assert fake.gemv_fake_launches() == before, "a refused call launched"
        phased += st == 0
    assert phased >= 50, phased
    # op T's phased rows in one pass (t_columns, a row lane a phase class: lanes a multiple of
    # 8 serve every period), forced likewise: tiles of c - 1 packs, no workspace.
    lane_classes = 0
    for i in range(100):
        p = op_t_problem()
        c = pygemv.Config("t_columns", int(rng.choice([2, 4, 8, 32, 64])), int(rng.choice([8, 16, 32])), P,
                          int(rng.choice([1, 2, 4])))
        if not pygemv._registry.validate(c):
            continue
        st = lib.gemv_ex(ctypes.byref(args(p)), ctypes.byref(c.to_c()))
        assert st == 0, (c, p, st, lib.gemv_last_error())
        lane_classes += 1
    assert lane_classes >= 50, lane_classes
    no_violations()
    """), timeout=300)


def test_phased_rows_plans_cover_every_class_in_one_capped_wave():
    """Phased rows (vector_loads = 3) forced on misaligned and aligned single products: the
    grid is whole classes of rows of one 16-byte phase (a multiple of the period), capped at
    a wave, with x in a phase in shared memory. With x's phase copies (vector_loads = 5) the
    pre-pass writes every copy inside the workspace and the row kernel reads inside them.
    Batches are refused, launching nothing."""
    run("keep = []\nSEED = 23\n" + PROBLEMS + textwrap.dedent("""
    lib = _lib.load()
    P = pygemv.LOADS_PHASED
    configs = [pygemv.Config(v, p, r, P, u, True, s) for v, p, r, u, s in
               [("rows_per_warp", 2, 64, 4, 1), ("rows_per_warp", 8, 128, 1, 1), ("warp_per_row", 32, 32, 2, 1),
                ("block_per_row", 128, 2, 1, 1), ("block_per_row", 512, 2, 2, 1), ("splitk_twopass", 64, 2, 2, 4),
                ("splitk_atomic", 32, 2, 1, 3)]]
    X = pygemv.LOADS_PHASED_X_COPIES
    configs += [pygemv.Config(v, p, r, X, u) for v, p, r, u in
                [("rows_per_warp", 2, 64, 4), ("warp_per_row", 32, 8, 2), ("block_per_row", 256, 1, 1)]]
    ran = refused = 0
    copies = 0
    for i in range(700):
        keep.clear()
        p = problem()
        if p["trans"]:
            continue
        c = configs[i % len(configs)]
        before = fake.gemv_fake_launches()
        st = lib.gemv_ex(ctypes.byref(args(p)), ctypes.byref(c.to_c()))
        assert st in (0, 3, 4), (c, p, st, lib.gemv_last_error())
        if st:
            assert fake.gemv_fake_launches() == before, "a refused call launched"
            if p["batch"] > 1:
                assert "single products" in lib.gemv_last_error().decode()
        ran += st == 0
        refused += st != 0
        copies += st == 0 and c.vector_loads == X
    assert ran > 100 and refused > 20 and copies > 10, (ran, refused, copies)
    no_violations()
    """), timeout=300)


def test_the_checker_catches_an_operand_past_its_allocation():
    """The checker must be able to fail: y one element short of M."""
    r = run("""
    A = pygemv.DeviceArray.from_numpy(np.ones((64, 64), np.float32))
    x = pygemv.DeviceArray.from_numpy(np.ones(64, np.float32))
    y = pygemv.DeviceArray.empty(63, "float32")
    a = _lib.Args(0, 0, 64, 64, 1.0, 0.0, A.ptr, 64, x.ptr, 1, y.ptr, 1, 0, 0, 0, _lib.FLAG_TRUSTED_POINTERS)
    assert _lib.load().gemv_ex(ctypes.byref(a), None) == 0
    assert fake.gemv_fake_violations() >= 1
    print(fake_text(fake.gemv_fake_violation_text))
    """)
    assert "y reaches" in r.stdout


def test_table_fuzz_and_dispatch_stress_run_clean():
    """The fuzzers of scripts/hostcheck.sh, briefly (there they also run under the sanitizers)."""
    build = hostcheck_lib.library().parent
    r = subprocess.run(["cmake", "--build", str(build), "--target", "table_fuzz", "dispatch_stress"],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr
    table = str(next((hostcheck_lib.ROOT / "libgemv" / "tables").glob("*.gemvtable")))
    for cmd in ([str(build / "table_fuzz"), table, "3", "1", str(build)],
                [str(build / "dispatch_stress"), table, "2", "3", "1"]):
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
        assert r.returncode == 0, r.stdout + r.stderr
        assert "0 launch-plan violations" in r.stdout


def test_dispatch_same_picks_a_config_for_every_problem_of_its_grid():
    """scripts/dispatch_same.py (the tool that shows a host change moves no pick): it runs, its
    digest is reproducible, and the dispatcher gives every one of its ~74,000 problems (dense op
    N and T, batches, rows of any length; int4 and int8 in nine formats) a config, not a status."""
    script = hostcheck_lib.ROOT / "scripts" / "dispatch_same.py"
    out = subprocess.run([sys.executable, str(script), "--list"], capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stdout[-2000:] + out.stderr[-4000:]
    lines = out.stdout.splitlines()
    assert "problems, digest" in lines[-1] and len(lines[-1].split()[-1]) == 64
    n = int(lines[-1].split()[0])
    assert n == len(lines) - 1 > 60000
    assert not [ln for ln in lines[:-1] if ln.rstrip().endswith(",)")]   # (status,): no config
    again = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=600)
    assert again.stdout.splitlines()[-1] == lines[-1]
