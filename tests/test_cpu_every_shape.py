"""Issue 14 without a GPU: realigned 16-byte loads (gemv_loads_t 2) in the registry and the
heuristic, table entries that must fit the shape they are used for, a user's table that
adds to the shipped one, and element-misaligned pointers refused before any launch. The
dispatch checks run libgemv's host code on the stand-in CUDA runtime (tests/hostcheck)."""
from __future__ import annotations

import math
import shutil

import pytest

import pygemv
from pygemv import Config
from pygemv._registry import validate
from pygemv._table import Entry, Fingerprint, write_table

import hostcheck_lib
from hostcheck_lib import run

A = 0x10000  # a 16-byte aligned address: alignment is all can_implement reads
H100 = Fingerprint("NVIDIA H100 80GB HBM3", 132, 9, 0, 13000, pygemv.library_version())


def ok(config, m=64, k=64, dtype="float16", **kw):
    return pygemv.can_implement(config, m, k, dtype, **kw)[0]


# ---- the registry ---------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16"])
@pytest.mark.parametrize("variant,p,r,split", [("thread_per_row", 1, 128, 1), ("rows_per_warp", 4, 32, 1),
                                               ("warp_per_row", 32, 4, 1), ("block_per_row", 128, 1, 1),
                                               ("splitk_twopass", 256, 1, 8), ("splitk_atomic", 64, 2, 4)])
def test_realigned_loads_run_rows_at_any_alignment(dtype, variant, p, r, split):
    es = {"float32": 4, "float16": 2, "bfloat16": 2}[dtype]
    c = Config(variant, p, r, pygemv.LOADS_REALIGNED, 2, False, split)
    aligned = Config(variant, p, r, pygemv.LOADS_ALIGNED, 2, False, split)
    for k in (63, 64, 65, 1001):
        for lda in (k, k + 1, k + 3):
            for a_off in range(0, 16, es):
                for x_off in range(0, 16, es):
                    kw = dict(lda=lda, a_ptr=A + a_off, x_ptr=A + 4096 + x_off)
                    assert ok(c, k=k, dtype=dtype, **kw), (k, lda, a_off, x_off)
                    rows16 = a_off == 0 and (lda * es) % 16 == 0 and x_off == 0
                    assert ok(aligned, k=k, dtype=dtype, **kw) == rows16, (k, lda, a_off, x_off)


def test_realigned_loads_of_a_strided_x_need_it_staged():
    c = Config("warp_per_row", 32, 8, pygemv.LOADS_REALIGNED)
    assert not ok(c, k=63, incx=2) and not ok(c, k=63, incx=-1)
    why = pygemv.can_implement(c, 64, 63, "float16", incx=2)[1]
    assert "vector_loads = 2" in why and "incx" in why
    staged = Config("warp_per_row", 32, 8, pygemv.LOADS_REALIGNED, x_in_smem=True)
    assert ok(staged, k=63, incx=2) and ok(staged, k=63, incx=-3, a_ptr=A + 6)


def test_8_byte_loads_and_x_copies_are_op_n_row_kernels_only_realigned_and_phased_both_and_loads_take_0_to_5():
    assert pygemv._registry.validate(Config("block_per_row", 128, 1, 2))
    assert pygemv._registry.validate(Config("block_per_row", 128, 1, 3, x_in_smem=True))
    assert pygemv._registry.validate(Config("block_per_row", 128, 1, 4, x_in_smem=True))
    assert pygemv._registry.validate(Config("t_columns", 16, 16, 2))  # op T: a pack cut from two aligned ones
    assert pygemv._registry.validate(Config("t_columns", 16, 16, 3))  # op T: a row lane a phase class
    assert not pygemv._registry.validate(Config("t_columns", 16, 16, 4))
    assert not pygemv._registry.validate(Config("row_stream", 4, 32, 4, x_in_smem=True))
    assert not pygemv._registry.validate(Config("rows_in_registers", 128, 4, 4, 1, False, 4))
    assert pygemv._registry.validate(Config("block_per_row", 128, 1, 5))
    assert not pygemv._registry.validate(Config("block_per_row", 128, 1, 5, x_in_smem=True))  # x from its copies
    assert not pygemv._registry.validate(Config("splitk_twopass", 128, 1, 5, 1, False, 4))  # copies of all of K
    assert not pygemv._registry.validate(Config("thread_per_row", 1, 32, 5))  # lanes 0 and 1 take the edges
    assert not pygemv._registry.validate(Config("t_columns", 16, 16, 5))
    assert not pygemv._registry.validate(Config("block_per_row", 128, 1, 6))
    assert not pygemv._registry.validate(Config("block_per_row", 128, 1, -1))
    # True/False (the 0.2 spelling) still read as aligned/scalar.
    assert Config("warp_per_row", 32, 8, True).vector_loads == 1
    assert Config("warp_per_row", 32, 8, False).vector_loads == 0
    names = {v.name: v for v in pygemv.variants()}
    assert {c.vector_loads for c in names["warp_per_row"].configs()} == {0, 1, 2, 3, 4, 5}
    assert {c.vector_loads for c in names["splitk_twopass"].configs()} == {0, 1, 2, 3, 4}
    assert {c.vector_loads for c in names["t_columns"].configs()} == {0, 1, 2, 3}


# ---- table entries must fit the shape ----------------------------------------------------------

def fit_table(tmp_path):
    C = Config
    return write_table(tmp_path / "fit.gemvtable", H100, [
        # 512 threads a row, tuned on rows of 512 packs (fp16 K = 4096): each thread one load.
        Entry("float16", 16384, 4096, C("block_per_row", 512, 1, 1, 1), 50.0, 60.0),
        # 256 threads on rows of 128 packs: idle threads at its own shape, measured best there.
        Entry("float16", 4, 1024, C("block_per_row", 256, 1, 1, 1), 3.0, 3.5),
        # split-K: 64 slices of 1024 elements, 128 threads a slice of 128 packs.
        Entry("float16", 1, 65536, C("splitk_twopass", 128, 1, 1, 2, False, 64), 4.0, 5.0),
        # realigned rows
        Entry("float16", 4096, 4097, C("block_per_row", 256, 2, 2, 2), 20.0, 23.0),
        # a warp a row on rows of 33 packs
        Entry("float16", 128, 257, C("warp_per_row", 32, 4, 2, 1), 1.30, 1.46),
        # phased rows (rows of 514 bytes, 33 MB)
        Entry("float16", 65536, 257, C("rows_per_warp", 8, 128, 3, 1, True), 14.8, 15.8),
        # x's phase copies (rows of 32 KB, 256 MB)
        Entry("float16", 8192, 16385, C("block_per_row", 256, 1, 5, 1), 90.0, 99.0),
        # realigned fp32 rows where the heuristic now reads x's phase copies (1024 rows, 16 MB)
        Entry("float32", 1024, 4097, C("block_per_row", 128, 1, 2, 2), 7.4, 10.7),
    ])


def test_an_entry_that_would_leave_threads_without_loads_is_not_applied(tmp_path):
    with pygemv.Table(fit_table(tmp_path)) as t:
        assert t.lookup(16384, 4096, "float16")[0].threads_per_row == 512   # its own shape
        assert t.lookup(30000, 5000, "float16")[0].threads_per_row == 512   # longer rows: fits
        # The issue's case: beyond the grid's largest M, K between grid points, 384 packs a row
        # for 512 threads. Nothing else in reach: the heuristic decides.
        assert t.lookup(40000, 3072, "float16") is None
        # Up to a warp a row, idle lanes are allowed: 32 lanes on rows of 28 packs.
        assert t.lookup(150, 219, "float16")[0].threads_per_row == 32
        # Not where the heuristic reads the rows otherwise than at the entry's shape: element
        # loads for 31 x 219 (13 KB), realigned packs at 128 x 257.
        assert t.lookup(31, 219, "float16") is None
        # A config with idle threads at its own shape stays where it was measured.
        assert t.lookup(4, 1024, "float16")[0].threads_per_row == 256
        assert t.lookup(4, 960, "float16")[0].threads_per_row == 256
        # Split-K: slices of K = 40000 / 64 = 632 elements (79 packs) for 128 threads.
        assert t.lookup(1, 65536, "float16")[0].split_k == 64
        assert t.lookup(1, 40000, "float16") is None
        # Realigned entries serve rows of the same (misaligned) kind, any phase.
        assert t.lookup(4096, 4099, "float16", lda=4099, a_ptr=A + 6, workspace_bytes=0)[0].vector_loads == 2
        assert t.lookup(4096, 4096, "float16", lda=4099, workspace_bytes=0)[0].vector_loads == 2
        assert t.lookup(4096, 4096, "float16", lda=4099) is None  # x's phase copies there (33 MB)
        # ... up to twice their matrix where the heuristic reads such rows phased (2048 rows
        # and 32 MB and more): beyond, the heuristic decides. Where it reads them with x's
        # phase copies (rows of 4 KB and more, the copies in the workspace), only an entry of
        # those does: the tables predate them.
        assert t.lookup(5792, 5793, "float16") is None                   # x's phase copies there
        assert t.lookup(8191, 16001, "float16")[0].vector_loads == 5     # an entry of them serves
        assert t.lookup(8191, 16001, "float16", workspace_bytes=0) is None  # no room for the copies
        assert t.lookup(5792, 5793, "float16", workspace_bytes=0)[0].vector_loads == 2  # 1.99x its elements
        assert t.lookup(8191, 8191, "float16") is None                   # 4x: phased rows instead
        assert t.lookup(2000, 8193, "float16") is None                   # 1.44 away: beyond 1.0
        # An entry at the problem's own shape serves it even there: it was tuned against them.
        assert t.lookup(1024, 4097, "float32")[0].vector_loads == 2
        assert t.lookup(1064, 5241, "float32") is None                   # 0.36 away: the copies
        assert t.lookup(1064, 5241, "float32", workspace_bytes=0)[0].vector_loads == 2
        # A phased entry serves its own shape and longer rows, but not shorter rows outside
        # the phased regime (under 512 bytes here).
        assert t.lookup(65536, 257, "float16")[0].vector_loads == 3
        assert t.lookup(70000, 301, "float16")[0].vector_loads == 3
        assert t.lookup(70000, 300, "float16") is None  # rows 8-byte aligned: 8-byte loads there
        assert t.lookup(50000, 300, "float16") is None  # 30 MB: the heuristic's rows are not phased there
        assert t.lookup(50084, 153, "float16") is None


# ---- the heuristic and dispatch (stand-in runtime) -------------------------------------------

def test_heuristic_takes_phased_or_realigned_loads_on_rows_that_are_not_16_byte_aligned():
    run("""
    buf = pygemv.empty(1 << 22, "float16")
    base = buf.ptr
    def pick(m, k, dtype, lda=None, a_off=0, x_off=0, incx=1, **kw):
        return pygemv.select_config(m, k, dtype, lda=lda or k, a_ptr=base + a_off, x_ptr=base + (1 << 21) + x_off,
                                    incx=incx, use_table=False, **kw)
    for dtype, es in (("float32", 4), ("float16", 2), ("bfloat16", 2)):
        assert pick(4096, 4096, dtype).vector_loads == 1
        for (m, k, lda, a_off, x_off) in [(7, 107041, None, 0, 0), (181524, 126, None, 0, 0),
                                          (1000, 1024, 1025, 0, 0), (1000, 1024, None, es, 0),
                                          (64, 32768, None, 0, es)]:  # x too long to stage
            if m * (lda or k) * es > (1 << 22) * 2 - (1 << 21) * 2:
                m = max(1, ((1 << 20) * 2) // ((lda or k) * es))
            c = pick(m, k, dtype, lda, a_off, x_off)
            # Realigned 16-byte packs (small matrices keep them on rows 8-byte aligned too).
            assert c.vector_loads == 2, (dtype, m, k, lda, a_off, x_off, c)
        # A misaligned x beside aligned rows of 128 lanes within a wave: realigned through L1, not
        # staged (NOTES 78; test_heuristic_reads_a_misaligned_x_beside_aligned_rows_... below).
        c = pick(1000, 1024, dtype, x_off=es)
        assert (c.vector_loads, bool(c.x_in_smem), c.threads_per_row) == (2, False, 128), c
        # A strided x: realigned with x staged while x fits shared memory.
        c = pick(64, 1001, dtype, incx=2)
        assert c.vector_loads == 2 and c.x_in_smem, c
    # Matrices of 2048 rows and 32 MB and more whose rows of 512 bytes and more (fp32: over 3.5 KB)
    # start anywhere: phased, lanes a row by the row's loads (choosing reads no memory: the
    # small buffer serves). Rows of 4 KB and more read x's phase copies where the workspace
    # holds them (a block a row; one load in flight, fp32 rows of more than 64 KB two on 512
    # lanes), else as below.
    X = pygemv.LOADS_PHASED_X_COPIES
    for dtype, es in (("float32", 4), ("float16", 2), ("bfloat16", 2)):
        for m, k, lda, a_off, p, r, u in [(4559, 10455, None, 0, 128, es, 1), (16384, 8193, None, 0, 128, es, 1),
                                          (9000, 2048, 2049, 0, 128, es, 1), (9000, 2048, None, es, 128, es, 1),
                                          (20000, 1001, None, 0, 32, 32, 1), (70000, 129 if es == 4 else 257, None, 0, 8, 128, 1),
                                          (4096, 16385, None, 0, 128, es, 1)]:
            c = pick(m, k, dtype, lda, a_off)
            if k * es >= 4096:
                assert c.vector_loads == X and not c.x_in_smem, (dtype, m, k, lda, a_off, c)
                two = es == 4 and m >= 4096 and k > 16384  # fp32: 4096 rows of more than 4096 packs
                assert (c.variant, c.threads_per_row, c.rows_per_block, c.unroll) == (
                    "block_per_row", 512 if two else 128, 1, 2 if two else 1), c
                if k > 16384:  # rows of 64 KB up stage no x: the rest is for shorter rows
                    continue
                c = pick(m, k, dtype, lda, a_off, workspace_bytes=0)  # no room for the copies
            else:  # without room for the copies (with it, shorter rows take them from 64 MB: below)
                c = pick(m, k, dtype, lda, a_off, workspace_bytes=0)
            if es == 4 and k * 4 <= 3584:  # fp32 rows the row stream holds (3.5 KB): not phased but
                # rows of 32-79 packs of 24-128 MB (s68, s69: 8 lanes, x staged; short_rows_config, SHORT_ROWS_RULE)
                if 32 <= -(-k * 4 // 16) < 80 and (24 << 20) <= m * (lda or k) * 4 < (128 << 20):
                    assert (c.variant, c.threads_per_row, c.rows_per_block, c.vector_loads, c.unroll, c.x_in_smem) == (
                        "rows_per_warp", 8, 32, pygemv.LOADS_PHASED, 1, True), (dtype, m, k, c)
                else:
                    assert c.vector_loads != pygemv.LOADS_PHASED, (dtype, m, k, c)
                continue
            if es == 4 and k >= 4096:  # fp32 rows of 16 KB and more: x through L1, a block a row, 4 loads
                assert c.vector_loads == pygemv.LOADS_PHASED and not c.x_in_smem, (dtype, m, k, lda, a_off, c)
                assert (c.variant, c.threads_per_row, c.rows_per_block, c.unroll) == ("block_per_row", 128, 1, 4), c
                continue
            assert c.vector_loads == pygemv.LOADS_PHASED and c.x_in_smem, (dtype, m, k, lda, a_off, c)
            assert (c.threads_per_row, c.rows_per_block, c.unroll) == (p, r, u), (dtype, m, k, c)
        # fp32 under 4096 rows or 16 KB a row: one load in flight, as 16-bit rows; from 16 MB.
        c = pick(2048, 4097, dtype)  # 16 MB in 16-bit types
        assert (c.vector_loads, c.threads_per_row, c.unroll) == (X, 128, 1), (dtype, c)
        assert pick(2048, 4097, dtype, workspace_bytes=0).vector_loads != X
        # Under 2048 rows: fp32 from 1024 rows up to 128 MB takes the copies too, 16-bit rows not.
        assert (pick(1900, 4097, dtype).vector_loads == X) == (es == 4)
        assert (pick(1064, 5241, dtype).vector_loads == X) == (es == 4)
        assert pick(1000, 5241, dtype).vector_loads != X                        # under 1024 rows
        # Rows of 16 KB up from 32 MiB (s63): 256 lanes at two, any dtype (fp32 over 128 MB too).
        c = pick(1024, 65537 if es == 4 else 16385, dtype)
        assert (c.vector_loads, c.threads_per_row, c.unroll) == (X, 256, 2), (dtype, c)
        # 16-bit rows of 8192 packs and more: 256 lanes, four in flight.
        if es == 2:
            c = pick(2048, 65537, dtype)
            assert (c.vector_loads, c.threads_per_row, c.unroll) == (X, 256, 4), (dtype, c)
        # Under 2048 rows or 32 MB, rows under 512 bytes, aligned rows and batches: not phased.
        for m, k, kw in [(500, 3001, {}), (1024, 4097, {}), (4096, 1001, {}), (100000, 101, {}), (8192, 8192, {}),
                         (4096, 2049, {"batch": 2, "stride_a": 4096 * 2049, "stride_y": 4096})]:
            c = pick(m, k, dtype, **kw)
            assert c.vector_loads != pygemv.LOADS_PHASED, (dtype, m, k, kw, c)
    # Few long misaligned rows keep 16-byte loads (7 x 107041 ran 0.23x cuBLAS scalar).
    c = pick(7, 107041, "float16")
    assert c.variant == "splitk_twopass" and c.vector_loads == 2, c
    # Few long rows of 32 MB and more: row tiles of 4 rows (2 for two), realigned or aligned;
    # aligned a slot a thread (at most 1024 slices); realigned one wave of resident blocks (8 an
    # SM in 16 bits, 6 in fp32) where that leaves 48 slices or more (132 SMs: 1056 over 4 tiles,
    # 264 slices; fp32 792 over 9 tiles, 88), else whole slots a thread, as many as leave 64
    # slices and 4 waves of resident blocks (s68; 6 blocks an SM before: 50 tiles of 150001 slots,
    # 13 slots a thread, 91 slices; fp32 18 tiles 186 slices, 65 before).
    c = pick(15, 1200007, "float16")
    assert c.variant == "rows_in_registers" and c.vector_loads == 2 and c.rows_per_block == 4, c
    assert c.split_k == 264 and c.threads_per_row == 128 and c.unroll == 1, c
    assert pick(35, 487331, "float32", lda=487334).split_k == 88  # 96 before s66: 864 blocks, past the wave
    assert pick(88, 600007, "float16").split_k == 48 and pick(92, 600007, "float16").split_k == 196  # 22, 23 tiles
    assert pick(15, 1200008, "float16").split_k == 1024
    assert pick(200, 1200007, "float16").split_k == 91
    assert pick(69, 1611549, "float32", a_off=120).split_k == 186  # 132.1 -> 113.2 us on an H200 (NOTES 88)
    c = pick(2, 1 << 23, "float16")
    assert c.variant == "rows_in_registers" and c.vector_loads == 1 and (c.rows_per_block, c.unroll) == (2, 2), c
    # Realigned from 32 MiB up to 480 rows (past 320, where x's phase copies do not fit the
    # workspace); aligned rows up to 320.
    c = pick(400, 600001, "float16", lda=600003)
    assert (c.variant, c.vector_loads, c.rows_per_block, c.split_k) == ("rows_in_registers", 2, 4, 66), c
    assert pick(481, 600001, "float16", lda=600003).variant != "rows_in_registers"
    assert pick(400, 600000, "float16").variant != "rows_in_registers"
    assert pick(400, 600000, "float16", x_off=6).variant != "rows_in_registers"  # aligned rows, x not
    # Whole slots a thread: 8193 realigned slots of 64 tiles take 65 slices of a slot, not 64.
    assert pick(256, 65536, "float16", lda=65537, a_off=2).split_k == 65
    # From 4 rows and 2 MB: tiles too, at most 4 blocks an SM (132 SMs: 528 over 12 tiles);
    # aligned here: realigned rows of under 8192 packs take realigned_mid_rows_config (s72).
    c = pick(48, 23712, "float32")
    assert c.variant == "rows_in_registers" and c.vector_loads == 1 and c.rows_per_block == 4, c
    assert c.split_k == 528 // 12 and c.threads_per_row == 128, c
    for m, k in ((3, 400001), (4, 40001)):  # under 4 rows, under 2 MB: split K
        assert pick(m, k, "float32").variant == "splitk_twopass", (m, k)
    # Small matrices (rows of <= 2048 packs, rows x packs <= 2 x 132 x 2048): a lane a pack
    # (512 at most; 1024 past 1024 packs while rows x 1024 fill half the GPU), no more lanes
    # in all than half the GPU's threads, at most 4 packs a lane; unroll 1, x staged only
    # when strided.
    for m, k, dtype, p in [(550, 113, "float32", 32), (719, 75, "bfloat16", 16),
                           (5000, 113, "float32", 16), (122, 1001, "bfloat16", 128), (17, 1391, "float16", 256),
                           (2, 4038, "bfloat16", 512), (4, 15128, "bfloat16", 1024), (1, 1293, "float16", 256),
                           (189, 15606, "float16", 512), (6687, 374, "bfloat16", 16), (1191, 705, "float32", 64),
                           (67241, 47, "float16", 2), (3423, 218, "float32", 32)]:
        c = pick(m, k, dtype)
        assert (c.threads_per_row, c.unroll, c.x_in_smem) == (p, 1, False), (m, k, dtype, c)
        aligned = m == 1 or (k * {"float32": 4}.get(dtype, 2)) % 16 == 0  # one row: only its start counts
        assert c.vector_loads == (1 if aligned else 2), (m, k, dtype, c)  # realigned, even rows 8-byte aligned
        assert c.threads_per_row * c.rows_per_block == max(128, p), c
        assert pick(m, k, dtype, incx=2).x_in_smem, (m, k, dtype)
    # Misaligned rows of at most 64 bytes, of 128 in at most 1 MB, of 512 in at most 64 KB:
    # element loads, a lane an element up to 256 and half the GPU's threads.
    for m, k, dtype, p in [(210, 7, "float32", 8), (2, 36, "float16", 64), (5890, 41, "bfloat16", 16),
                           (37474, 9, "float16", 2), (487, 25, "float32", 32), (129733, 9, "float32", 1),
                           (32234, 14, "float32", 4), (85, 195, "float16", 256), (146, 85, "bfloat16", 128)]:
        c = pick(m, k, dtype)
        assert (c.threads_per_row, c.vector_loads) == (p, 0), (m, k, dtype, c)
    assert pick(2392, 35, "float32").vector_loads == 2     # 140-byte rows: realigned packs
    assert pick(67241, 47, "float16").vector_loads == 2    # 6 MB: realigned packs
    # Larger: two loads a lane, as before (3209 x 2998 without room for x's phase copies).
    for m, k, dtype, kw in [(20000, 113, "float32", {}), (3209, 2998, "float16", {"workspace_bytes": 0})]:
        c = pick(m, k, dtype, **kw)
        assert c.unroll == 2 and c.threads_per_row < -(-k * {"float32": 4}.get(dtype, 2) // 16), (m, k, dtype, c)
    # Under 2048 rows of 256 bytes and more: row kernels, not the row stream; under 8 MB not
    # short_rows_config's staged x either.
    assert pick(1191, 705, "float32").variant == "block_per_row"
    c = pick(2181, 1614, "float16")
    assert (c.threads_per_row, c.x_in_smem) == (64, False), c
    # 39 realigned rows of 2749 packs: one block a row of 1024 lanes, one load in flight (s71;
    # two before), not split (39 x 12 slices pass 2 blocks an SM).
    c = pick(39, 21986, "float16")
    assert (c.variant, c.threads_per_row, c.unroll, c.split_k) == ("block_per_row", 1024, 1, 1), c
    # Aligned rows of 64-256 bytes read x through L1 (faster than staged on the H100).
    for m, k, dtype in [(131072, 128, "float16"), (1048576, 32, "bfloat16"), (65536, 64, "float32")]:
        if m * k * 2 <= (1 << 21) * 2:
            assert not pick(m, k, dtype).x_in_smem, (m, k, dtype)
    assert not pick(2048, 64, "float16").x_in_smem and pick(2048, 64, "float16", x_off=2).x_in_smem
    """)


def test_heuristic_doubles_the_threads_of_rows_that_just_pass_one_wave():
    """Aligned 16-bit rows given 64 threads (4 sqrt(packs) a row) that make 1 to 1.5 waves of
    132 x 2048 take 128 (each keeping two loads or more): fp16 5003 x 3696 ran 64 threads a row
    (1.18 waves) at 16.46 us, 128 at 14.96."""
    run("""
    def p(m, k, dtype="float16"):
        return pygemv.select_config(m, k, dtype, use_table=False).threads_per_row
    assert p(5003, 3696) == p(5003, 3696, "bfloat16") == 128     # 462 packs: 64 a row, 1.18 waves
    assert p(6000, 3000) == 128                                    # 375 packs, 1.42 waves
    assert p(4096, 3696) == 64                                     # 0.97 of a wave
    assert p(7000, 3000) == 64                                     # 1.66 waves: the last wave is full enough
    assert p(2500, 8192) == 128                                    # 128 a row stays 128 (mixed: NOTES 45)
    assert p(5003, 1848, "float32") == 128                         # fp32: two loads a thread already
    assert p(10000, 512) == 32                                     # 64 packs: 32 a row would leave one load
    """)


def test_heuristic_takes_row_mma_for_large_16_bit_matrices_of_short_aligned_rows():
    """Dense fp16/bf16 op N rows of 64 to 512 elements in whole aligned packs, 16 rows a
    product or more, from 8 MB (rows up to 136 elements), 16 MB (200), 32 MB (448) and 48 MB
    (512): row_mma, 4 warps a block, 4 steps in flight on rows of 80 to 127 elements, else 2
    (NOTES 77); an x not in aligned packs (any offset, increment or product stride) gathered into
    the workspace first, where it holds the batch's x (NOTES 79). fp32, other rows, smaller
    matrices, fewer rows a product and packs of A that are not whole or aligned keep the row
    kernels."""
    run("""
    buf = pygemv.empty(1 << 22, "float16")
    base = buf.ptr
    def pick(m, k, dtype="float16", b=1, lda=None, a_off=0, x_off=0, incx=1, pad=0, x_pad=0,
             ws=pygemv.WORKSPACE_RECOMMENDED_BYTES):
        c = pygemv.select_config(m, k, dtype, lda=lda or k, a_ptr=base + a_off, x_ptr=base + (1 << 21) + x_off,
                                 incx=incx, use_table=False, batch=b, stride_a=m * (lda or k) + pad,
                                 stride_x=k + pad + x_pad, stride_y=m, workspace_bytes=ws)
        return (str(c.variant), c.threads_per_row, c.rows_per_block, int(c.vector_loads), c.unroll, c.split_k)
    mma = lambda u: ("row_mma", 32, 4, 1, u, 1)
    for dtype in ("float16", "bfloat16"):
        assert pick(296, 112, dtype, 4096) == mma(4)          # rows of 80-127 elements: a round of 4 steps
        assert pick(64, 64, dtype, 4096) == mma(2)
        assert pick(296, 80, dtype, 400) == mma(4) and pick(296, 128, dtype, 400) == mma(2)
        assert pick(2097152, 128, dtype) == mma(2)
        assert pick(699051, 384, dtype) == mma(2)
        assert pick(16, 96, dtype, 70000) == mma(4)           # a tile a product
        assert pick(51000, 512, dtype) == mma(2)              # 49.8 MB
        assert pick(40, 360, dtype, 2048, lda=368, pad=8) == mma(2)  # padded rows and products, still whole packs
        # Thresholds: 8 MB to 136 elements, 16 MB to 200, 32 MB to 448, 48 MB to 512.
        assert pick(31000, 136, dtype)[0] == "row_mma" and pick(30000, 136, dtype)[0] != "row_mma"
        assert pick(42000, 200, dtype)[0] == "row_mma" and pick(40000, 200, dtype)[0] != "row_mma"
        assert pick(66000, 256, dtype)[0] == "row_mma" and pick(60000, 256, dtype)[0] != "row_mma"
        assert pick(40000, 512, dtype)[0] != "row_mma"
        for m, k, kw in [(296, 112, dict(b=100)),                 # 6.3 MB
                         (1048576, 32, {}), (8388608, 32, {}), (174763, 768, {}), (64528, 520, {}),
                         (15, 112, dict(b=20000)), (3, 64, dict(b=100000)),
                         (296, 112, dict(b=4096, pad=3)),         # products not 16-byte aligned
                         (299593, 112, dict(lda=113)), (299593, 112, dict(a_off=2)),
                         (299593, 108, {})]:  # K of 216 bytes: not whole packs
            assert pick(m, k, dtype, **kw)[0] != "row_mma", (dtype, m, k, kw)
        # x off its packs (offset, increment, products' stride): gathered, where the workspace
        # holds it (every product's x: K x 2 bytes each), else the row kernels.
        for m, k, kw in [(299593, 112, dict(x_off=2)), (299593, 112, dict(incx=2)), (299593, 112, dict(incx=-1)),
                         (296, 112, dict(b=4096, x_off=6)), (296, 112, dict(b=4096, x_pad=3))]:
            assert pick(m, k, dtype, **kw) == mma(4), (dtype, m, k, kw)
            need = kw.get("b", 1) * k * 2
            assert pick(m, k, dtype, ws=need, **kw) == mma(4), (dtype, m, k, kw)
            assert pick(m, k, dtype, ws=need - 2, **kw)[0] != "row_mma", (dtype, m, k, kw)
    assert pick(296, 112, "float32", 4096)[0] != "row_mma"
    """)


def test_heuristic_gives_strided_batches_of_rows_about_8_packs_a_lane():
    """op N strided batches of rows of more than 8 packs, aligned or realigned: pow2_floor(packs
    / 8) lanes a row, 4 to 32 (fp32 realigned rows, one pack in flight, the nearest power of two);
    more (as for single products) where the rows' lanes fill under the GPU's threads, realigned
    under half of them (NOTES 75: 71 drawn batches ran 1.24x over their best config at the
    single-product lanes).
    Rows of up to 8 packs and single products keep their lanes."""
    run("""
    def pick(m, k, dtype, b):
        c = pygemv.select_config(m, k, dtype, use_table=False, batch=b)
        return (str(c.variant), c.threads_per_row, c.rows_per_block, int(c.vector_loads), c.unroll)
    R, A = 2, 1
    for dtype, m, k, b, want in [
            ("float16", 14, 1065, 4096, ("rows_per_warp", 16, 8, R, 2)),      # 134 packs: 16 lanes
            ("bfloat16", 163, 619, 4096, ("rows_per_warp", 8, 16, R, 2)),     # 78 packs: 8
            ("float16", 22, 7503, 512, ("warp_per_row", 32, 4, R, 2)),        # 938 packs: 32 at most
            ("float32", 819, 3097, 64, ("warp_per_row", 32, 4, R, 1)),        # fp32 realigned: one in flight
            ("float32", 678, 51, 512, ("rows_per_warp", 4, 32, R, 1)),        # 13 packs: 4 at least
            ("float32", 142, 469, 64, ("rows_per_warp", 16, 8, R, 1)),        # fp32 realigned: 118 / 8 rounded
            ("float16", 61, 469, 512, ("rows_per_warp", 4, 32, R, 2)),        # 59 / 8 floored
            ("float32", 7, 2408, 4096, ("warp_per_row", 32, 4, A, 2)),        # aligned
            ("float16", 1258, 1072, 64, ("rows_per_warp", 16, 8, A, 2)),
            ("float32", 4, 1336, 512, ("block_per_row", 128, 1, A, 2)),       # 2048 rows: the GPU's threads
            ("float32", 6, 2744, 512, ("block_per_row", 64, 2, A, 2)),
            ("bfloat16", 2940, 248, 8, ("rows_per_warp", 8, 16, A, 2)),       # 31 packs: 4, raised to 8
            ("float32", 11, 8039, 64, ("block_per_row", 128, 1, R, 1)),       # 704 rows: half the GPU's threads
            ("bfloat16", 449, 4657, 8, ("warp_per_row", 32, 4, R, 2)),        # 3592 rows of 32 fill half
            ("bfloat16", 3987, 16, 4096, ("rows_per_warp", 2, 64, A, 1))]:   # 2 packs: as before
        assert pick(m, k, dtype, b) == want, (dtype, m, k, b, pick(m, k, dtype, b), want)
    # Single products keep the lanes of threads_per_row (fp16 1456 x 5895: 737 packs, 128 lanes).
    assert pick(1456, 5895, "float16", 1)[:2] == ("block_per_row", 128)
    assert pick(1456, 5895, "float16", 2)[:2] == ("warp_per_row", 32)    # batches: 32 (2912 rows fill half)
    """)


def test_op_t_heuristic_loads_and_grids_on_rows_that_start_anywhere():
    """op T: realigned packs on up to 7 long rows beyond 256 KiB (wider tiles when rows are
    fewer than the lanes), phased packs on 8 to 48 rows up to 8 MB (s69), phased rows on large
    matrices of many rows and on fewer rows than the phase period, one element a load elsewhere
    on misaligned rows; a small matrix whose lanes would walk more than 16 rows is split over the
    rows (NOTES 37), and every choice can run."""
    run("""
    base = 1 << 32
    def pick(m, k, dtype, lda=None, a_off=0):
        return pygemv.select_config(m, k, dtype, lda=lda or k, a_ptr=base + a_off, x_ptr=base + (1 << 40),
                                    trans=True, use_table=False)
    R, S = pygemv.LOADS_REALIGNED, pygemv.LOADS_SCALAR
    for dtype in ("float32", "float16", "bfloat16"):
        c = pick(2, 4452911, dtype)  # fewer rows than the period: a row a lane (BELOW_PERIOD_RULE_T)
        assert c.vector_loads == pygemv.LOADS_PHASED and c.rows_per_block == 2 and c.threads_per_row == 64, c
        # 8 to 48 rows up to 8 MB that the rules before take not: phased packs on 128-thread blocks,
        # 8 lanes up to 32 rows, 16 past them, 4 rows in flight (s69); fewer rows keep realigned packs.
        for m, k, lanes in ((47, 4403, 16), (33, 5970, 16), (20, 12007, 8), (8, 30011, 8)):
            c = pick(m, k, dtype)
            assert (c.variant, c.threads_per_row, c.rows_per_block, c.vector_loads, c.unroll) == (
                "t_columns", 128 // lanes, lanes, pygemv.LOADS_PHASED, 4), (dtype, m, k, c)
        assert pick(5, 60011 // (4 if dtype == "float32" else 2), dtype).vector_loads == R
        for m, k in ((11, 2999), (22518, 1), (100, 4097)):
            assert pick(m, k, dtype).vector_loads == S, (dtype, m, k)
        # Few long rows: the lane-class one pass (fp32 rows long enough for one-lane tiles keep those).
        assert pick(87, 517781, dtype).vector_loads == (S if dtype == "float32" else pygemv.LOADS_PHASED)
        for m, k in ((2318, 6081), (4096, 4097)):
            assert pick(m, k, dtype).vector_loads == pygemv.LOADS_PHASED, (dtype, m, k)
        assert pick(4096, 4096, dtype).vector_loads == pygemv.LOADS_ALIGNED
        # Small, but 1573 rows under 8 lanes: not one pass of 197 rows a lane. Rows of up to 128
        # bytes, or under 1 MiB of rows that start anywhere (no stream there), take one pass of
        # 256 lanes (the latency rule, test below); longer aligned rows split over the rows.
        for m, k in ((1573, 24), (1573, 69)):
            c = pick(m, k, dtype)
            assert (c.variant, c.rows_per_block) == ("t_columns", 256), (dtype, m, k, c)
        c = pick(1573, 72 if dtype == "float32" else 144, dtype)
        assert c.variant == "t_splitm_twopass" and c.split_k >= 4, c
        assert pick(256, 256, dtype).variant == "t_columns"  # small and short: one pass
        for m, k in ((2, 4452911), (47, 4403), (1573, 69), (5, 100003), (33, 261971)):
            c = pick(m, k, dtype)
            assert pygemv.can_implement(c, m, k, dtype, lda=k, a_ptr=base, x_ptr=base + (1 << 40), trans=True)[0], c
    """)


def test_op_t_heuristic_streams_rows_that_start_anywhere():
    """op T on more than 48 rows that do not start 16-byte aligned: A as one stream of aligned
    packs (t_stream) from 1 MiB (rows up to 256 bytes; longer ones from 32 MiB, where phased
    rows split by lane classes decline) where its gaps are under half of lda and its period
    fits a block;
    blocks of 1024 at 2 packs in flight, one an SM, from 8192 packs an SM; else blocks of 256
    at 4 (2 past a period of 512), slices of 4 packs a thread up to 2 blocks an SM; batches
    share the blocks; 16-bit rows shorter than a pack from 48 MiB. Aligned rows, few rows,
    wide gaps, long periods and other short rows keep the column kernels; every choice can
    run, within the workspace."""
    run("""
    base = 1 << 32
    def pick(m, k, dtype, lda=None, a_off=0, **kw):
        return pygemv.select_config(m, k, dtype, lda=lda or k, a_ptr=base + a_off, x_ptr=base + (1 << 40),
                                    trans=True, use_table=False, **kw)
    sms = 132
    for dtype, es in (("float32", 4), ("float16", 2), ("bfloat16", 2)):
        v = 16 // es
        big = pick(3985411, 61, dtype)
        assert (big.variant, big.threads_per_row, big.unroll, big.split_k) == ("t_stream", 1024, 2, sms), big
        assert pick(4194304, 64, dtype, a_off=es).variant == "t_stream"  # aligned rows, A misaligned
        small = pick(200000, 9 if es == 2 else 5, dtype)
        packs = (200000 * (9 if es == 2 else 5) + v - 1) // v
        assert (small.variant, small.threads_per_row, small.unroll) == ("t_stream", 256, 4), small
        assert small.split_k == min(2 * sms, packs // 1024), small
        # The period passes 512 threads: unroll 4 would refuse. (With a workspace, phased rows split by
        # lane classes run these rows of 512 bytes up ahead of the stream: LANE_SPLIT_RULE_T.)
        assert pick(97394, 743, dtype).variant == "t_splitm_twopass"
        c = pick(97394, 743, dtype, workspace_bytes=0)
        assert (c.variant, c.unroll, c.split_k) == ("t_stream", 2, 1), c
        b = pick(1000, 61, dtype, batch=512, stride_a=1000 * 61)
        assert b.variant == "t_stream" and b.split_k == 1, b
        for m, k, lda in ((4096, 4096, None), (47, 4403, None), (100000, 61, 128), (2318, 6081, None), (22518, 1, None),
                          (1573, 69, None), (58, 340, None), (4000, 130 // es, None), (2632, 1910, None),
                          (10941, 483, None)):
            assert pick(m, k, dtype, lda).variant != "t_stream", (m, k, lda)
        # Rows shorter than a pack (a pack reaches two or three rows): 16-bit ones of half a pack up
        # from 48 MiB; fp32 ones, smaller matrices and rows under half a pack keep the element loads.
        if es == 2:
            for m, k in ((8432200, 7), (5193644, 6), (7000000, 4)):
                assert pick(m, k, dtype, a_off=1).variant == "t_stream", (m, k)
        kept = ((1000000, 7), (300000, 5), (20000000, 3), (20000000, 1)) if es == 2 else ((3000000, 3), (16000000, 2))
        for m, k in kept:
            assert pick(m, k, dtype, a_off=1).variant != "t_stream", (m, k)
        assert es == 4 or pick(15747493, 2, dtype, 4, a_off=1).variant != "t_stream"  # under half a pack
        for m, k, kw in ((3985411, 61, {}), (200000, 9, {}), (1000, 61, dict(batch=512, stride_a=61000))):
            c = pick(m, k, dtype, **kw)
            assert pygemv.can_implement(c, m, k, dtype, lda=k, a_ptr=base, x_ptr=base + (1 << 40), trans=True, **kw)[0]
        # Without a workspace: one slice, which needs none.
        c = pygemv.select_config(3985411, 61, dtype, a_ptr=base, x_ptr=base + (1 << 40), trans=True, use_table=False,
                                 workspace_bytes=0)
        assert c.variant == "t_stream" and c.split_k == 1 and pygemv.workspace_size(c, 3985411, 61, dtype, trans=True) == 0
    """)


# dispatch.cpp long_rows_lane_pass_config, mirrored: op T's phased rows in one pass on few long
# rows that do not start aligned (single products, 132 SMs in the stand-in): (c, lanes), or None.
LANE_PASS_RULE_T = """
    def lane_pass_rule(m, k, es):
        if m <= 32 or m > 1536:
            return None
        tiles32 = -(-k // (31 * (16 // es)))
        nbytes, c, lanes = m * k * es, 32, 16 if m >= 512 and (es == 2 or tiles32 < 2 * 132) else 8
        if m <= 96:  # 33 to 96 rows from 6 MiB (16-bit from 8): fp32 64-thread tiles of 4 lanes, 16-bit 16 of 8
            if nbytes < ((6 if es == 4 else 8) << 20) or (es == 4 and -(-k // 64) >= 16 * 132):  # fp32: one-lane tiles
                return None
            c, lanes = (64, 4) if es == 4 else (16, 8)
        elif nbytes < (32 << 20):  # 16-bit rows of 97 to 511 from 8 MiB: 16 lanes
            if es == 4 or m >= 512 or nbytes < (8 << 20):
                return None
            lanes = 16
        return (c, lanes) if -(-k // ((c - 1) * (16 // es))) >= 132 else None
"""


def test_op_t_heuristic_takes_phased_rows_in_one_pass_on_few_long_rows():
    """Single products of few long rows that do not start 16-byte aligned, with at least a tile
    of lane classes an SM across a row: phased rows in one pass (t_columns, lane classes), 4 rows
    in flight, no split (LANE_PASS_RULE_T): 97 to 1536 rows from 32 MiB on 32-thread tiles of 8
    lanes (16 from 512 rows; fp32 only under 2 tiles an SM); 16-bit rows of 97 to 511 from 8 MiB on 16 lanes; 33 to 96 rows from
    6 MiB on 64-thread tiles of 4 lanes (fp32, short of the one-lane tiles' columns), from 8 MiB
    on 16-thread tiles of 8 (16 bits). Aligned rows, batches, 32 rows or fewer, more than 1536,
    smaller matrices (fp32 rows of 97 up under 32 MiB among them) and rows of fewer tiles keep
    the other rules."""
    run(LANE_PASS_RULE_T + """
    base = 1 << 32
    def pick(m, k, dtype, a_off, lda=None, **kw):
        return pygemv.select_config(m, k, dtype, lda=lda or k, a_ptr=base + a_off, x_ptr=base + (1 << 40),
                                    trans=True, use_table=False, **kw)
    def form(c):
        return (c.variant, c.threads_per_row, c.rows_per_block, int(c.vector_loads), c.unroll, c.split_k)
    seen = set()
    for dtype, es in (("float32", 4), ("float16", 2), ("bfloat16", 2)):
        pack = 16 // es
        for m, k in ((786, 109909), (155, 233231), (1292, 187258), (1536, 50001), (97, 400001), (1536, 31 * pack * 132),
                     (851, 110660 // es), (690, 196328 // es),
                     (96, 400001), (33, 54307), (81, 67578), (64, 615742), (40, 107812), (253, 37575), (298, 48061), (511, 40001),
                     (120, 27546)):
            c = pick(m, k, dtype, es)
            rule = lane_pass_rule(m, k, es)
            if rule is None:  # fp32 120 x 27546 (13 MiB) and one-lane rows; 16-bit 33 x 54307, 120 x 27546 (3.4, 6.3 MiB)
                assert (m, k) in ((120, 27546), (33, 54307)) or (es == 4 and m <= 96 and k >= 135105), (dtype, m, k)
                if (m, k, es) == (33, 54307, 2):  # 8 to 48 rows up to 8 MB: phased packs on 16 lanes (s69)
                    assert form(c) == ("t_columns", 8, 16, 3, 4, 1), (dtype, m, k, c)
                else:
                    assert not (c.variant == "t_columns" and int(c.vector_loads) == 3 and c.split_k == 1), (
                        dtype, m, k, c)
                seen.add(None)
                continue
            assert form(c) == ("t_columns", *rule, 3, 4, 1), (dtype, m, k, c, rule)
            assert pygemv.can_implement(c, m, k, dtype, lda=k, a_ptr=base + es, x_ptr=base + (1 << 40), trans=True)[0]
            seen.add(rule)
        few_tiles = 31 * pack * 131  # 131 tiles of 31 packs: under one an SM
        for m, k, a_off, kw in ((786, 109912, 0, {}), (786, 109909, es, dict(batch=2, stride_a=786 * 109909)),
                                (32, 400001, es, {}), (1537, 50001, es, {}), (1500, few_tiles, es, {}),
                                (128, (8 << 20) // (128 * es) - 1, es, {}), (60, ((6 if es == 4 else 8) << 20) // (60 * es) - 1, es, {}),
                                (600, (32 << 20) // (600 * es) - 1, es, {})):
            if a_off and not kw:
                assert lane_pass_rule(m, k, es) is None, (dtype, m, k)
            if m <= 32:  # 32 rows or fewer: the few-rows rule's (FEW_ROWS_RULE_T)
                continue
            c = pick(m, k, dtype, a_off, **kw)
            assert not (c.variant == "t_columns" and int(c.vector_loads) == 3 and c.split_k == 1), (dtype, m, k, kw, c)
    assert seen == {(32, 8), (32, 16), (64, 4), (16, 8), None}, seen
    """)


# dispatch.cpp lane_class_slices, mirrored: the phased split's split_k for c-thread tiles of
# `lanes` lanes at 4 rows in flight (132 SMs): from 4, doubled up to 512 while that adds slices
# within half a wave, halved until the partials fit ws; None where 4 slices do not.
LANE_CLASS_SPLIT_T = """
    def lane_class_split(m, k, es, b, c, lanes, ws):
        v, wave = 16 // es, 2048 * 132
        tiles = -(-k // ((c - 1) * v)) * b
        def slices(split):
            step = lanes * 4
            rows = -(-m // split)
            rows = max(1, min(-(-rows // step) * step, m))
            return -(-m // rows)
        if 2 * tiles * slices(4) * c * lanes > wave:
            return None
        split = 4
        while split < 512 and slices(2 * split) > slices(split) and 2 * tiles * slices(2 * split) * c * lanes <= wave:
            split *= 2
        while split > 4 and slices(split) * k * b * 4 > ws:
            split //= 2
        return None if slices(split) * k * b * 4 > ws else split
"""


# dispatch.cpp lane_classes_split_config, mirrored: op T's phased rows split, each row lane a
# phase class, on rows that do not start aligned (132 SMs in the stand-in, the recommended
# workspace): the config's (variant, c, lanes, loads, unroll, split_k), or None where it declines.
LANE_SPLIT_RULE_T = LANE_CLASS_SPLIT_T + """
    def lane_split_rule(m, k, es, b=1, ws=pygemv.WORKSPACE_RECOMMENDED_BYTES, regime=True):
        # regime=False: the family alone (lane_classes_split), as batched_lane_classes_config asks it
        if m < 256 or k < 64:
            return None
        nbytes = m * k * es
        # single products: from 4 MiB, or from 1 MiB past 2 MiB or 8 rows a lane of the one pass
        past_one_pass = nbytes >= (1 << 20) and (nbytes > (2 << 20) or m > 8 * 32 * es)
        if regime and ((b < 8 or b >= 64) if b > 1 else ((nbytes < (4 << 20) and not past_one_pass) or k * es < 512)):
            return None
        v = 16 // es
        packs = -(-k // v)
        c = 32 if packs >= 128 else 16 if packs > 16 else 8
        small_16bit = b == 1 and es == 2 and c >= 16 and nbytes < (4 << 20)
        if small_16bit:  # 16-thread tiles, 8 lanes under 1536 rows
            c = 16
        covered = lambda c: -(-k // ((c - 1) * v)) * (c - 1) * v  # batches: a tile half or twice as wide, where a fifth fewer
        for w in (c // 2, 2 * c):
            if b > 1 and 8 <= w <= (16 if m < 1024 else 32) and 5 * covered(w) < 4 * covered(c):
                c = w
        if b > 1 and c == 32 and m < 1024:
            return None
        lanes = 8 if c == 32 or (small_16bit and m < 1536) else 16
        split = lane_class_split(m, k, es, b, c, lanes, ws)
        return split and ("t_splitm_twopass", c, lanes, pygemv.LOADS_PHASED, 4, split)
"""


def test_op_t_heuristic_takes_phased_rows_on_misaligned_matrices():
    """op T on more than 48 rows that do not start 16-byte aligned, outside the stream's
    regime, one product: phased rows split (t_splitm_twopass, vector_loads 3), first by lane
    classes (each row lane a phase class; LANE_SPLIT_RULE_T) on matrices of 4 MiB up (1 MiB up
    past 2 MiB or past 8 rows a lane of the one pass of 16-byte tiles) of 256 rows up and rows
    of 512 bytes up: tiles of 32 threads of 8 lanes from 128 packs a row, else 16 of 16 (16-bit
    products under 4 MiB: 16 threads, 8 lanes under 1536 rows), 4 rows in flight, split_k the most of 4 to 512 that keeps the grid within
    half a wave while it adds slices (halved while the partials pass the workspace); declined where 4 slices
    pass half a wave. There the earlier rule: 16-bit matrices from 24 MiB (8 MiB on rows of
    more than 64 columns an SM: 8448 here) and fp32 ones from 32 MiB, rows of 512 bytes up,
    at least 8 rows a lane in each phase class; blocks of 256, tiles of 16 packs at 4 rows in
    flight in 16 bits from 24 MiB (else 2; tiles of 8 on rows of fewer than 128 packs), about
    4 rows a lane a slice (split_k a power of two, at least the phase period, halved until the
    partials fit the workspace). Few long rows (LANE_PASS_RULE_T) take the lane-class one pass
    ahead of both. Smaller matrices, shorter rows, fewer rows, batches, aligned rows and a
    workspace too small keep the other reads; every choice can run within its workspace."""
    run(LANE_SPLIT_RULE_T + LANE_PASS_RULE_T + """
    base = 1 << 32
    def pick(m, k, dtype, lda=None, a_off=0, **kw):
        return pygemv.select_config(m, k, dtype, lda=lda or k, a_ptr=base + a_off, x_ptr=base + (1 << 40),
                                    trans=True, use_table=False, **kw)
    def pow2_floor(v):
        return 1 << (max(1, v).bit_length() - 1)
    P = pygemv.LOADS_PHASED
    phased = lane_split = long_rows = 0
    for dtype, es in (("float32", 4), ("float16", 2), ("bfloat16", 2)):
        v = 16 // es
        for m, k, lda in ((4421, 11465, None), (17382, 8007, None), (8304, 1341, None), (1798, 1497, None), (595, 9406, None),
                          (20249, 309, None), (2632, 1910, None), (3000, 4096, 4100), (691, 32839, None),
                          (752, 114370, None), (146, 77887, None), (2384, 938, None), (2000, 120001, None),
                          (1800, 80001, None), (3000, 60001, None)):
            c = pick(m, k, dtype, lda)
            period = next(p for p in (1, 2, 4, 8) if ((lda or k) * es * p) % 16 == 0)
            if period == 1:  # fp32 rows of 4100: aligned
                assert c.vector_loads == pygemv.LOADS_ALIGNED, (dtype, m, k, c)
                continue
            got = (c.variant, c.threads_per_row, c.rows_per_block, c.vector_loads, c.unroll, c.split_k)
            # Few long rows (LANE_PASS_RULE_T): the one pass first.
            rule = lane_pass_rule(m, k, es)
            if rule:
                assert got == ("t_columns", *rule, P, 4, 1), (dtype, m, k, got)
                long_rows += 1
                continue
            form = lane_split_rule(m, k, es)
            if form:
                assert got == form, (dtype, m, k, got, form)
                assert pygemv.can_implement(c, m, k, dtype, lda=lda or k, a_ptr=base, x_ptr=base + (1 << 40), trans=True)[0]
                lane_split += 1
                continue
            packs = -(-k // v) + 1
            ct = 16 if packs >= 128 else 8
            big = m * k * es >= (32 << 20 if es == 4 else 8 << 20 if k > 64 * 132 else 24 << 20)
            if not big or m < 8 * period * (256 // ct):
                assert c.vector_loads != P, (dtype, m, k, c)
                continue
            phased += 1
            unroll = 4 if es == 2 and ct == 16 and m * k * es >= 24 << 20 else 2
            assert (c.variant, c.vector_loads, c.unroll, c.threads_per_row, c.rows_per_block) == (
                "t_splitm_twopass", P, unroll, ct, 256 // ct), (dtype, m, k, c)
            split = min(1024, max(max(2, period), pow2_floor(m // (4 * (256 // ct)))))
            def ws_of(split):
                cfg = pygemv.Config("t_splitm_twopass", ct, 256 // ct, P, unroll, False, split)
                return pygemv.workspace_size(cfg, m, k, dtype, lda=lda or k, trans=True)
            while split > max(2, period) and ws_of(split) > pygemv.WORKSPACE_RECOMMENDED_BYTES:
                split //= 2
            assert c.split_k == split and c.split_k % period == 0, (dtype, m, k, c, split)
            ws = pygemv.workspace_size(c, m, k, dtype, lda=lda or k, trans=True)
            assert 0 < ws <= pygemv.WORKSPACE_RECOMMENDED_BYTES, (dtype, m, k, c, ws)
            assert pygemv.can_implement(c, m, k, dtype, lda=lda or k, a_ptr=base, x_ptr=base + (1 << 40), trans=True)[0]
        # Not phased: aligned rows, rows under 512 bytes that the stream takes or that are under a
        # pack (K of 1 to 4 among them; SHORT_ROWS_RULE_T has the rest), a batch, K too long for
        # one slice a class within the workspace, no workspace at all.
        assert pick(4096, 4096, dtype).vector_loads == pygemv.LOADS_ALIGNED
        for m, k in ((147712607, 1), (4134863, 3), (200000, 100 // es), (200, 1001)):
            assert pick(m, k, dtype).vector_loads != P, (dtype, m, k)
        assert pick(4421, 11465, dtype, batch=2, stride_a=4421 * 11465).vector_loads != P
        assert pick(2000, 300001, dtype).vector_loads != P  # 4 or 8 x 300001 partials pass 4 MiB
        assert pick(4421, 11465, dtype, workspace_bytes=0).vector_loads != P
    # Under 256 rows, or 1 MiB, or 2 MiB where the one pass would walk at most 8 rows a lane,
    # one element a load: fp16 200 x 9406 (294 tiles) unsplit, fp32 300 x 1618 (51 tiles) in 8
    # slices. From 1 MiB past those, lane classes, 16-bit on 16-thread tiles under 4 MiB (8
    # lanes under 1536 rows): fp16 600 x 3179 and 1024^2, bf16 1800 x 1022; from 4 MiB 32-thread
    # tiles: fp16 1539 x 3179, 300 x 9406.
    c = pick(200, 9406, "float16")
    assert (c.variant, c.threads_per_row, c.rows_per_block, c.vector_loads) == ("t_columns", 32, 8, 0), c
    c = pick(300, 1618, "float32", 1627)
    assert (c.variant, c.threads_per_row, c.rows_per_block, c.vector_loads, c.unroll, c.split_k) == (
        "t_splitm_twopass", 32, 8, pygemv.LOADS_SCALAR, 4, 8), c
    for m, k, dtype, lanes, split in ((600, 3179, "float16", 8, 32), (1024, 1024, "float16", 8, 32),
                                      (1800, 1022, "bfloat16", 16, 32)):
        c = pick(m, k, dtype, k + 57)
        assert (c.variant, c.threads_per_row, c.rows_per_block, c.vector_loads, c.unroll, c.split_k) == \
            lane_split_rule(m, k, 2) == ("t_splitm_twopass", 16, lanes, P, 4, split), (m, k, c)
    for m, k in ((1539, 3179), (300, 9406)):
        c = pick(m, k, "float16")
        assert (c.variant, c.threads_per_row, c.rows_per_block, c.vector_loads, c.unroll, c.split_k) == \
            lane_split_rule(m, k, 2) == ("t_splitm_twopass", 32, 8, P, 4, 16 if m == 300 else 32), (m, k, c)
    assert phased >= 3 and lane_split >= 15 and long_rows >= 6, (phased, lane_split, long_rows)
    """)


# dispatch.cpp short_rows_lane_classes_config, mirrored: op T's phased split on short rows that
# do not start aligned (single products, 132 SMs, the recommended workspace), for problems the
# stream declines (the caller's cases): the config's (variant, c, lanes, loads, unroll, split_k), or None.
SHORT_ROWS_RULE_T = LANE_CLASS_SPLIT_T + """
    def short_rows_rule(m, k, lda, es, ws=pygemv.WORKSPACE_RECOMMENDED_BYTES):
        row, v = k * es, 16 // es
        if row < 16 or row >= 512 or lda * es < 32 or m < 256 or (es == 4 and row <= 32):
            return None
        if m * row < (12 << 20 if row <= 32 else 8 << 20 if row <= 64 else 4 << 20 if row < 128 else 2 << 20):
            return None
        tiles = lambda c: -(-k // ((c - 1) * v))  # a tile of c threads writes c - 1 packs
        c = 4
        while c < 32 and tiles(c) > 1:
            c *= 2
        if tiles(c) > 1:
            return None
        lanes = (256 if c <= 8 else 512) // c
        split = lane_class_split(m, k, es, 1, c, lanes, ws)
        return split and ("t_splitm_twopass", c, lanes, pygemv.LOADS_PHASED, 4, split)
"""


def test_op_t_heuristic_splits_short_misaligned_rows_on_lane_classes():
    """Single products of rows of 16 to 511 bytes that do not start 16-byte aligned, 256 rows up,
    32 bytes apart or more, where the stream declines (gaps past the row, or rows past 256 bytes
    under 32 MiB; the stream's rows are checked as its): phased rows split on lane classes (SHORT_ROWS_RULE_T), the narrowest tile of 4
    to 32 threads that covers a row, 256-thread blocks (512 on 16-32-thread tiles), 4 rows in
    flight, split_k as the lane-class split sizes it. Floors by row bytes: 16-bit rows up to 32
    bytes from 12 MiB (fp32 ones not at all), up to 64 from 8, under 128 from 4, else 2. Rows a
    tile of 32 does not cover, rows under a pack, smaller matrices, aligned rows, batches and the
    stream's rows keep the other reads."""
    run(SHORT_ROWS_RULE_T + """
    base = 1 << 32
    P = pygemv.LOADS_PHASED
    def pick(m, k, dtype, lda, a_off=0, **kw):
        return pygemv.select_config(m, k, dtype, lda=lda, a_ptr=base + a_off, x_ptr=base + (1 << 40),
                                    trans=True, use_table=False, **kw)
    def form(c):
        return (c.variant, c.threads_per_row, c.rows_per_block, c.vector_loads, c.unroll, c.split_k)
    taken = set()
    for dtype, es in (("float32", 4), ("float16", 2), ("bfloat16", 2)):
        for m, k, lda in ((2491753, 56, 114), (3000000, 24, 54), (200000, 100, 220), (1000000, 20, 45),
                          (30000, 248, 249), (16384, 64, 65), (12946, 86, 286), (1166443, 7, 97),
                          (4097303, 4, 204), (30000, 249, 250), (20178, 125, 125), (327937, 10, 140),
                          (78433, 29, 67), (55988, 24, 76), (2500000, 11, 23), (36021, 306 // es, 306 // es)):
            c = pick(m, k, dtype, lda, a_off=es)
            packs = ((m - 1) * lda + k) // (16 // es) + 1  # the stream's bounds (t_stream_config): asked first
            if lda <= 2 * k and packs >= (1 << 16 if lda * es <= 256 else 1 << 21):
                assert c.variant == "t_stream", (dtype, m, k, lda, c)
                continue
            rule = short_rows_rule(m, k, lda, es)
            if rule:
                assert form(c) == rule, (dtype, m, k, lda, c, rule)
                assert pygemv.can_implement(c, m, k, dtype, lda=lda, a_ptr=base + es, x_ptr=base + (1 << 40),
                                            trans=True)[0]
                taken.add((es, rule[1]))
            elif k * es < 512:  # nothing else splits phased rows under 512 bytes
                assert not (c.variant == "t_splitm_twopass" and c.vector_loads == P), (dtype, m, k, lda, c)
        # Aligned rows, a batch, and rows the stream takes (gaps within the row, 1 MiB up) keep their reads.
        assert pick(1000000, 64, "float32" if es == 4 else dtype, 128).vector_loads != P
        c = pick(1000000, 40, dtype, 90, a_off=es, batch=2, stride_a=1000000 * 90)
        assert not (c.variant == "t_splitm_twopass" and c.vector_loads == P), (dtype, c)
        assert pick(1000000, 40, dtype, 41, a_off=es).variant == "t_stream"
    # Every tile width, both dtypes' floors; what the rule declines: fp32 rows of 28 bytes, rows of
    # 8 bytes, 16-bit rows of 249 (two 32-thread tiles), fp32 rows of 125, 16-bit rows of 20 bytes at
    # 6.6 MB, of 58 at 4.5 MB, of 48 at 2.7 MB.
    assert taken == {(4, 4), (4, 8), (4, 16), (4, 32), (2, 4), (2, 8), (2, 16), (2, 32)}, taken
    for m, k, lda, es in ((1166443, 7, 97, 4), (4097303, 4, 204, 2), (30000, 249, 250, 2), (20178, 125, 125, 4),
                          (327937, 10, 140, 2), (78433, 29, 67, 2), (55988, 24, 76, 2)):
        assert short_rows_rule(m, k, lda, es) is None, (m, k, lda, es)
    """)


# The heuristic's op T choice on rows that start anywhere (132 SMs, no table; A a_off bytes past
# a 16-byte boundary, x aligned), and a rule's cases checked against it: check_rule(rule, cases,
# dtype, es, otherwise) runs each (m, k, pad, a_off) of rows that do not all start aligned; where
# rule(m, k, lda, es) gives a config the pick is it (and can run), else otherwise(m, k, lda, c)
# checks the pick. It returns the (es, c, lanes, loads, unroll) taken and the count declined.
PICK_MISALIGNED_T = """
    base = 1 << 32
    P, R = pygemv.LOADS_PHASED, pygemv.LOADS_REALIGNED
    def pick(m, k, dtype, lda, a_off=0, **kw):
        return pygemv.select_config(m, k, dtype, lda=lda, a_ptr=base + a_off, x_ptr=base + (1 << 40),
                                    trans=True, use_table=False, **kw)
    def check_rule(rule, cases, dtype, es, otherwise):
        taken, declined = set(), 0
        for m, k, pad, a_off in cases:
            lda = k + pad
            if (a_off * es) % 16 == 0 and (lda * es) % 16 == 0:
                continue  # aligned rows
            c = pick(m, k, dtype, lda, a_off * es)
            want = rule(m, k, lda, es)
            if want:
                got = (c.variant, c.threads_per_row, c.rows_per_block, c.vector_loads, c.unroll)
                assert got == want and c.split_k == 1, (dtype, m, k, lda, a_off, c, want)
                assert pygemv.can_implement(c, m, k, dtype, lda=lda, a_ptr=base + a_off * es, x_ptr=base + (1 << 40),
                                            trans=True)[0]
                taken.add((es, *want[1:]))
            else:
                declined += 1
                otherwise(m, k, lda, c)
        return taken, declined
"""


# dispatch.cpp few_rows_lane_classes_config, mirrored: op T on 3 to 32 long rows that do not
# start aligned (the caller's cases; single products, 132 SMs): the config's (variant, c, lanes,
# loads, unroll), or None where it declines.
FEW_ROWS_RULE_T = """
    def few_rows_rule(m, k, lda, es):
        nbytes, v = m * k * es, 16 // es
        if m < 3 or m > 32 or nbytes < (1 << 20) or (es == 4 and m > 21 and nbytes >= (16 << 20)):
            return None
        period = next(p for p in (1, 2, 4, 8) if (lda * es * p) % 16 == 0)
        f32_rows_2_apart = es == 4 and period == 2 and m < 8  # 2 lanes of 64-thread tiles
        if m < period or (f32_rows_2_apart and nbytes >= (64 << 20)):
            return None
        if m == period and nbytes < (4 << 20):  # a row a lane
            return None
        if nbytes >= (16 << 20) and (m == period or (period == 8 and m <= 16)):  # realigned one-lane tiles
            packs = -(-k // v)
            if m <= 8 or -(-packs // 64) < 16 * 132:                                 # as before, or declined
                return None
            return ("t_columns", 64, 1, pygemv.LOADS_REALIGNED, 2)
        tiles = lambda c: -(-k // ((c - 1) * v))
        narrow = es == 2 and (nbytes < (4 << 20) or tiles(32) < 4 * 132)  # 16-thread tiles
        tile = lambda lanes: 64 if lanes == 1 or f32_rows_2_apart else 16 if narrow else 32
        lanes = 4 if es == 4 and period == 2 and m >= 8 else period
        while lanes < 16 and -(-m // lanes) > 4 and tiles(tile(2 * lanes)) * tile(2 * lanes) * 2 * lanes <= 768 * 132:
            lanes *= 2
        unroll = 4 if -(-m // lanes) >= 3 and not (es == 4 and m > 21 and nbytes >= (8 << 20)) else 2
        return ("t_columns", tile(lanes), lanes, pygemv.LOADS_PHASED, unroll)
"""


def test_op_t_heuristic_reads_few_long_misaligned_rows_on_lane_classes():
    """Single products of 3 to 32 rows that do not start 16-byte aligned, from 1 MiB (fp32 past
    21 rows: under 16 MiB): phased rows in one pass (t_columns, vector_loads 3), lanes from the
    period P (4 for fp32 rows 2 apart, from 8 rows), doubled while a lane walks more than 4 rows
    and the doubled grid stays within 768 threads an SM; 32-thread tiles (64 on one lane and for
    fp32 rows 2 apart under 8 rows; 16-bit: 16 under 4 MiB or 4 tiles of 32 an SM); 4 rows in
    flight where a lane walks 3 or more, else 2 (fp32 past 21 rows from 8 MiB: 2)
    (FEW_ROWS_RULE_T). From 16 MiB a row a lane, and 16-bit rows of P 8 on up to 16 rows, keep
    the realigned one-lane tiles (9 to 16 rows too, where one element a load ran). Fewer rows
    than the period (BELOW_PERIOD_RULE_T), a row a lane under 4 MiB, fp32 rows 2 apart under 8
    rows from 64 MiB, more rows, smaller matrices, aligned rows and batches keep the other
    reads."""
    run(PICK_MISALIGNED_T + FEW_ROWS_RULE_T + BELOW_PERIOD_RULE_T + """
    cases = ((16, 3704445, 21, 6), (7, 206209, 0, 3), (22, 5864870, 0, 5), (13, 589206, 0, 3), (20, 1366466, 14, 3),
             (4, 384176, 0, 5), (12, 2361412, 43, 2), (16, 8099415, 0, 5), (8, 473219, 20, 2), (4, 11515264, 2, 1),
             (3, 16786824, 59, 1), (6, 6193213, 5, 1), (27, 159950, 5, 1), (19, 138437, 32, 4), (3, 32603701, 47, 7),
             (20, 121373, 1, 0), (10, 1982683, 1, 0), (9, 2562328, 1, 0), (19, 29365, 46, 4), (31, 9565, 0, 5),
             (14, 156536, 0, 4), (26, 94671, 0, 5), (23, 147482, 0, 6), (8, 140481, 0, 6), (4, 277290, 52, 4),
             (16, 35930, 8, 3))
    def other_reads(m, k, lda, c):
        below = below_period_rule(m, k, lda, es)  # fewer rows than the period: a row a lane
        if below:
            assert (c.variant, c.threads_per_row, c.rows_per_block, c.vector_loads, c.unroll) == below, (m, k, lda, c)
        elif (m, k) in ((31, 9565), (8, 140481)) and es == 2:  # up to 8 MB: phased packs, 8 lanes at 4 (s69)
            assert (c.variant, c.threads_per_row, c.rows_per_block, c.vector_loads, c.unroll) == (
                "t_columns", 16, 8, P, 4), (m, k, c)
        else:
            assert not (c.variant == "t_columns" and c.vector_loads == P and c.rows_per_block <= 8), (m, k, c)
    taken, declined = set(), 0
    for dtype, es in (("float32", 4), ("float16", 2), ("bfloat16", 2)):
        t, d = check_rule(few_rows_rule, cases, dtype, es, other_reads)
        taken, declined = taken | t, declined + d
        # Aligned rows and batches keep their reads.
        assert pick(16, 3704448, dtype, 3704448).vector_loads == pygemv.LOADS_ALIGNED
        c = pick(16, 3704445, dtype, 3704466, a_off=6 * es, batch=2, stride_a=16 * 3704466)
        assert not (c.variant == "t_columns" and c.vector_loads == P and c.rows_per_block <= 8), (dtype, c)
    # Lanes 1 to 8 (doubled past the period on small matrices), 16-thread tiles, 2 and 4 in flight,
    # and the realigned one-lane tiles.
    assert {(4, 32, 4, P, 4), (4, 32, 4, P, 2), (4, 64, 1, P, 4), (4, 32, 8, P, 4), (4, 64, 2, P, 2), (2, 32, 8, P, 4),
            (2, 32, 8, P, 2), (2, 32, 4, P, 4), (2, 16, 4, P, 4), (2, 16, 8, P, 4), (2, 64, 1, R, 2)} <= taken, taken
    assert declined >= 10, declined
    # What the rule declines: fewer rows than the period (fp16 3 x 16786824, P 8), a row a lane from
    # 16 MiB (bf16 4 x 11515264, P 4) and under 4 MiB (bf16 8 x 140481, P 8), fp32 rows 2 apart under
    # 8 rows from 64 MiB, fp32 past 21 rows from 16 MiB, under 1 MiB; 16-bit P 8 from 16 MiB takes
    # realigned tiles; 16-bit 20 x 121373 (4 tiles of 32 an SM: 489) 16-thread tiles, 4 lanes.
    for m, k, lda, es in ((3, 16786824, 16786883, 2), (4, 11515264, 11515266, 2), (8, 140481, 140481, 2),
                          (6, 6193213, 6193218, 4), (22, 503029, 503034, 4), (12, 40003, 40003, 2)):
        assert few_rows_rule(m, k, lda, es) is None, (m, k, lda, es)
    assert few_rows_rule(12, 2361412, 2361455, 2) == ("t_columns", 64, 1, R, 2)
    assert few_rows_rule(20, 121373, 121374, 2) == ("t_columns", 16, 4, P, 4)
    assert few_rows_rule(6, 2281120, 2281134, 4) == ("t_columns", 64, 2, P, 4)  # 55 MB
    assert few_rows_rule(3, 2500001, 2500002, 4) == ("t_columns", 64, 2, P, 2)
    """)


# dispatch.cpp rows_below_period_config, mirrored: op T on 2 to 7 rows that start anywhere, fewer
# than their phase period P (single products, 132 SMs): the config's (variant, c, lanes, loads,
# unroll), or None where it declines.
BELOW_PERIOD_RULE_T = """
    def below_period_rule(m, k, lda, es):
        nbytes = m * k * es
        period = next(p for p in (1, 2, 4, 8) if (lda * es * p) % 16 == 0)
        if m < 2 or (m >= period and period > 1):
            return None
        if period == 1 and (m > 4 or (m > 2 and nbytes >= (1 << 20))):  # rows in one phase, not aligned (s66)
            return None
        if m == 2:
            if not (256 << 10) <= nbytes < (64 << 20):
                return None
            return ("t_columns", 128, 2, pygemv.LOADS_SCALAR, 1) if nbytes < (512 << 10) else ("t_columns", 64, 2, pygemv.LOADS_PHASED, 1)
        if m <= 4:
            top = (12 if m == 3 else 64) << 20
            return ("t_columns", 32, 4, pygemv.LOADS_PHASED, 1) if (256 << 10) <= nbytes < top else None
        if nbytes < (512 << 10) or -(-(-(-k * es // 16)) // 64) >= 16 * 132:  # one-lane tiles' columns
            return None
        if nbytes < (19 << 18):  # 4.75 MiB
            return ("t_columns", 16, 8, pygemv.LOADS_PHASED, 1)
        return ("t_columns", 64, 2, pygemv.LOADS_REALIGNED, 1)
"""


def test_op_t_heuristic_reads_fewer_rows_than_the_phase_period_a_row_a_lane():
    """Single products of 2 to 7 rows that start anywhere, fewer than their phase period P
    (16-bit rows of odd lda or lda 2 mod 4, fp32 rows of odd lda), or 2-4 rows all in one phase
    that is not 0 (P 1; 3-4 under 1 MiB): lane classes of a row a lane (t_columns, vector_loads
    3, lanes at least M), one row in flight: 2 rows on 2 lanes of 64-thread tiles from 512 KiB to
    64 MiB (256-512 KiB: one element a load on 128-thread tiles); 3 or 4 on 4 lanes of 32 from
    256 KiB (3 under 12 MiB, 4 under 64); 16-bit 5 to 7 rows (P 8) from 512 KiB on 8 lanes of 16 under 4.75 MiB, past it
    on 2 lanes of realigned packs of 64-thread tiles, short of the one-lane tiles' columns
    (BELOW_PERIOD_RULE_T). Smaller and larger matrices, as many rows as P, aligned rows and
    batches keep the other reads."""
    run(PICK_MISALIGNED_T + BELOW_PERIOD_RULE_T + """
    cases = ((2, 4985898, 28, 3), (2, 524942, 0, 2), (2, 71268, 13, 55), (2, 16647, 38, 7), (4, 469281, 2, 0),
             (3, 132025, 0, 57), (3, 718221, 0, 6), (3, 3414947, 0, 3), (4, 4851391, 58, 1), (3, 22717, 0, 1),
             (4, 67499, 0, 0), (6, 393425, 0, 5), (7, 275878, 5, 3), (5, 636584, 51, 1), (5, 997121, 0, 3),
             (6, 1526009, 58, 3), (5, 26049, 0, 1), (7, 3246887, 0, 4), (4, 9000001, 0, 1), (2, 9000001, 0, 1),
             (3, 79820, 4, 53), (2, 478436, 0, 2), (4, 200000, 0, 3), (2, 100000, 0, 1), (5, 100000, 0, 1))
    def no_lanes_under_the_period(m, k, lda, c):  # declined: no lane classes of fewer lanes than P
        period = next(p for p in (1, 2, 4, 8) if (lda * es * p) % 16 == 0)
        assert not (c.variant == "t_columns" and c.vector_loads == P and c.rows_per_block % period), (m, k, c)
    taken, declined = set(), 0
    for dtype, es in (("float32", 4), ("float16", 2), ("bfloat16", 2)):
        t, d = check_rule(below_period_rule, cases, dtype, es, no_lanes_under_the_period)
        taken, declined = taken | t, declined + d
        # Aligned rows and batches keep their reads.
        assert pick(4, 469288, dtype, 469288).vector_loads == pygemv.LOADS_ALIGNED
        c = pick(4, 469281, dtype, 469283, batch=2, stride_a=4 * 469283)
        assert (c.threads_per_row, c.rows_per_block, c.vector_loads) != (32, 4, P), (dtype, c)
    S = pygemv.LOADS_SCALAR
    assert {t[1:] for t in taken} == {(64, 2, P, 1), (32, 4, P, 1), (16, 8, P, 1), (64, 2, R, 1), (128, 2, S, 1)}, taken
    assert declined >= 10, declined
    # The bounds: 2 rows of 256-512 KiB one element a load (fp16 2 x 71268, 285 KB), under 256 KiB
    # declined (fp32 2 x 16647); 3 x 3414947 from 12 MiB; 16-bit 7 x 3246887 past the one-lane tiles'
    # columns; 5 x 26049 under 512 KiB; m = P; rows in one phase (P 1): 2 rows, 3-4 under 1 MiB.
    assert below_period_rule(2, 71268, 71281, 2) == ("t_columns", 128, 2, S, 1)
    assert below_period_rule(3, 79820, 79824, 2) == ("t_columns", 32, 4, P, 1)
    assert below_period_rule(3, 200000, 200000, 2) is None and below_period_rule(5, 100000, 100000, 2) is None
    for m, k, lda, es in ((2, 16647, 16685, 4), (3, 3414947, 3414947, 2),
                          (7, 3246887, 3246887, 2), (5, 26049, 26049, 2), (8, 140481, 140481, 2), (4, 80911, 80911, 4)):
        assert below_period_rule(m, k, lda, es) is None, (m, k, lda, es)
    assert below_period_rule(4, 9000001, 9000001, 2) is None  # 72 MB
    assert below_period_rule(5, 636584, 636635, 2) == ("t_columns", 64, 2, R, 1)
    """)


# The heuristic's op T choice on the stand-in (132 SMs, no table), A and x 16-byte aligned.
PICK_T = """
    base = 1 << 32
    def pick(m, k, dtype, **kw):
        return pygemv.select_config(m, k, dtype, a_ptr=base, x_ptr=base + (1 << 40), trans=True, use_table=False, **kw)
"""


# dispatch.cpp aligned_few_rows_config and aligned_short_rows_split_config, mirrored: op T single
# products of aligned rows (132 SMs): the config's (variant, c, lanes, loads, unroll, split_k), or
# None where both decline.
ALIGNED_ROWS_RULE_T = """
    def aligned_rule(m, k, es):
        nbytes, A = m * k * es, pygemv.LOADS_ALIGNED
        if 3 <= m <= 48:
            if m <= 4 and (256 << 10) <= nbytes < (1 << 20):  # a row a lane
                return ("t_columns", 32, 4, A, 1, 1)
            if (es == 2 or m > 16) and -(-(-(-k * es // 16)) // 64) >= 16 * 132:  # 16 one-lane tiles an SM
                return ("t_columns", 64, 2, A, 2, 1)
        if m > 2048 and k * es <= 128 and nbytes <= (1 << 20):
            if k * es > 48:  # dense aligned rows are whole packs (those ending short read elements, s72)
                return ("t_splitm_twopass", 4, 64, A, 2, 128)
            if es == 2 and k * es in (32, 48):  # 16-bit rows of 2-3 whole packs (no gap): a lane of packs a row (s71)
                return ("t_splitm_twopass", 1, 64, A, 2, 256)
            # element loads, 4 in flight (s72): a column a tile of 256 lanes up to 16 bytes, else 2 of 64
            return ("t_splitm_twopass", 1, 256, 0, 4, 256) if k * es <= 16 else ("t_splitm_twopass", 2, 64, 0, 4, 256)
        return None
"""


def test_op_t_heuristic_reads_few_or_short_aligned_rows():
    """Single products of aligned rows (s66, ALIGNED_ROWS_RULE_T): 3 to 48 rows of at least 16
    one-lane tiles an SM across a row (16-bit, and fp32 from 17 rows) on 2 lanes of 64-thread
    tiles, 2 rows in flight; 3-4 rows of 256 KiB to 1 MiB a row a lane on 32-thread tiles; more
    than 2048 rows of up to 128 bytes, up to 1 MiB, in 128 slices of 4-thread tiles of 64 lanes
    (rows of up to 48 bytes on 256 slices since s71: element loads since s72, 16-bit rows of 2-3
    whole packs a lane of packs a row; longer rows ending short of a pack element loads on 256
    slices of 8-column tiles of 32 lanes). Fewer columns, fp32 up to 16
    rows, more rows, larger matrices, batches and rows that do not start aligned keep the other
    rules."""
    run(PICK_T + ALIGNED_ROWS_RULE_T + """
    seen = set()
    form = lambda c: (c.variant, c.threads_per_row, c.rows_per_block, c.vector_loads, c.unroll, c.split_k)
    for dtype, es in (("float32", 4), ("float16", 2), ("bfloat16", 2)):
        for m, k in ((15, 1549240), (28, 1370240), (6, 2398320), (11, 5321832), (7, 2250016), (33, 1087280), (48, 1087280),
                     (49, 1087280), (5, 4844776), (4, 51160), (3, 55400), (3, 134568), (3, 638072), (2, 502000),
                     (11962, 8), (3354, 8), (2122, 16), (3229, 24), (2048, 16), (2049, 16), (16384, 16), (16385, 16),
                     (4000, 40), (17247, 48), (1048576, 16), (4096, 4096)):
            c = pick(m, k, dtype)
            want = aligned_rule(m, k, es)
            if want:
                assert form(c) == want, (dtype, m, k, c, want)
                assert pygemv.can_implement(c, m, k, dtype, a_ptr=base, x_ptr=base + (1 << 40), trans=True)[0]
                seen.add(want[:3])
            elif 3 <= m <= 48:  # the other tiles (fp32 up to 16 rows, fewer columns, 49 rows)
                assert form(c)[:3] != ("t_columns", 64, 2), (dtype, m, k, c)
        # Batches and rows that do not start aligned keep their reads.
        c = pick(28, 1370240, dtype, batch=2, stride_a=28 * 1370240)
        assert form(c)[:4] != ("t_columns", 64, 2, pygemv.LOADS_ALIGNED), (dtype, c)
        c = pick(28, 1370240, dtype, lda=1370241)
        assert c.vector_loads != pygemv.LOADS_ALIGNED, (dtype, c)
    assert seen == {("t_columns", 32, 4), ("t_columns", 64, 2), ("t_splitm_twopass", 4, 64),
                    ("t_splitm_twopass", 1, 64), ("t_splitm_twopass", 1, 256), ("t_splitm_twopass", 2, 64)}, seen
    assert aligned_rule(7, 2250016, 4) is None and aligned_rule(28, 1370240, 4)  # fp32 from 17 rows
    assert aligned_rule(6, 494928, 2) is None  # under 16 one-lane tiles an SM
    """)


def test_op_t_heuristic_gives_few_misaligned_rows_of_many_columns_one_lane():
    """op T on few rows that do not start 16-byte aligned, beyond 256 KiB, with at least 16
    tiles of 64 packs an SM (132 SMs in the stand-in): t_columns with one row lane and 64
    threads across a tile, each thread walking every row: realigned packs on 3 to 8 rows, one
    element a load on 9 to 96 (33 up from 6-8 MiB take the lane-class one pass first:
    LANE_PASS_RULE_T; 3 to 32 from 1 MiB lane classes, or realigned packs up to 16 rows:
    FEW_ROWS_RULE_T; fewer rows than the phase period a row a lane: BELOW_PERIOD_RULE_T);
    4 rows in flight from 8 rows, else 2. Two rows, more rows, fewer
    columns, aligned rows, small matrices and batches keep the other tiles."""
    run(PICK_T + LANE_PASS_RULE_T + FEW_ROWS_RULE_T + BELOW_PERIOD_RULE_T + """
    taken = 0
    for dtype, es in (("float32", 4), ("float16", 2), ("bfloat16", 2)):
        for m, k in ((21, 305498), (54, 427342), (4, 52562781), (3, 2718414), (8, 1000003), (9, 1000003),
                     (47, 779470), (96, 300001), (97, 300001), (128, 300001), (2, 4452911), (2, 82819),
                     (30, 40001), (11, 74499), (18, 196533), (30, 135167), (30, 135101), (5, 100003),
                     (25, 4000001), (3, 52562781), (6, 3000001)):
            c = pick(m, k, dtype)
            realigned = 3 <= m <= 8
            packs = -(-k * es // 16) if realigned else k
            if few_rows_rule(m, k, k, es) or below_period_rule(m, k, k, es):  # lane classes first
                continue
            if m * k * es <= (256 << 10) or not 3 <= m <= 96 or -(-packs // 64) < 16 * 132 or lane_pass_rule(m, k, es):
                assert (c.threads_per_row, c.rows_per_block) != (64, 1), (dtype, m, k, c)  # 33 rows up: the lane pass
                continue
            taken += 1
            assert (c.variant, c.threads_per_row, c.rows_per_block, c.unroll, c.split_k) == (
                "t_columns", 64, 1, 4 if m >= 8 else 2, 1), (dtype, m, k, c)
            assert c.vector_loads == (pygemv.LOADS_REALIGNED if realigned else pygemv.LOADS_SCALAR), (dtype, m, k, c)
        # Aligned rows and batches keep their tiles.
        assert (pick(21, 305504, dtype).threads_per_row, pick(21, 305504, dtype).rows_per_block) != (64, 1)
        c = pick(21, 305498, dtype, batch=2, stride_a=21 * 305498, stride_x=21, stride_y=305498)
        assert (c.threads_per_row, c.rows_per_block) != (64, 1), (dtype, c)
    assert taken >= 16, taken
    """)


def test_op_t_heuristic_runs_small_matrices_in_one_pass_of_narrow_tiles():
    """op T on latency-bound matrices: 33 to 2048 rows, up to 2 MiB, rows that start anywhere
    (or aligned rows of up to 128 bytes), one product: t_columns, one element a load, 512
    threads, on tiles of 16 bytes of a row halved (to 2 columns) while they number fewer than
    the SMs (132 in the stand-in; half of them on rows that start anywhere); narrowed tiles
    only up to 1 MiB, and at most 2 tiles an SM; 4 rows in flight from 4 rows a lane, 2 from
    2. Rows that start anywhere past 8 rows a lane from 1 MiB take lane classes
    (LANE_SPLIT_RULE_T); outside those bounds the other rules run."""
    run(PICK_T + LANE_SPLIT_RULE_T + """
    taken = 0
    for dtype, es in (("float32", 4), ("float16", 2), ("bfloat16", 2)):
        for m, k in ((116, 627), (244, 81), (795, 1057), (1169, 169), (1446, 13), (689, 24), (640, 40), (33, 999),
                     (2048, 127), (2049, 127), (32, 999), (2000, 523), (1024, 1023), (40, 3001), (78, 21673),
                     (708, 2340), (300, 9406), (1309, 4), (512, 512), (96, 96), (300, 129), (65, 33), (1000, 513),
                     (512, 513), (558, 300), (872, 306), (402, 1674), (525, 715)):
            c = pick(m, k, dtype)
            aligned = (k * es) % 16 == 0
            cols = 16 // es
            while cols > 2 and -(-k // cols) < (132 if aligned else 66):
                cols //= 2
            want = ((not aligned or k * es <= 128) and 32 < m <= 2048 and m * k * es <= (2 << 20) and
                    (cols * es == 16 or m * k * es <= (1 << 20)) and -(-k // cols) <= 2 * 132 and
                    (aligned or not lane_split_rule(m, k, es)))
            got = (c.variant, c.threads_per_row, c.rows_per_block, c.vector_loads, c.split_k)
            if not want:
                assert got[:3] != ("t_columns", cols, 512 // cols) or c.vector_loads != pygemv.LOADS_SCALAR, (dtype, m, k, c)
                continue
            taken += 1
            rows = -(-m // (512 // cols))
            assert got == ("t_columns", cols, 512 // cols, pygemv.LOADS_SCALAR, 1), (dtype, m, k, c)
            assert c.unroll == (4 if rows >= 4 else 2 if rows >= 2 else 1), (dtype, m, k, c)
        # A batch keeps the other tiles.
        c = pick(244, 81, dtype, batch=2, stride_a=244 * 81, stride_x=244, stride_y=81)
        assert (c.threads_per_row, c.rows_per_block) != (2, 256), (dtype, c)
    assert taken >= 30, taken
    # Where the rule applies (fp16): 2-column tiles of 256 lanes on 81 columns, 8 of 64 on 627
    # (79 tiles: 4 of 128 until s59), 4 rows in flight on 402 rows; fp32 513 columns and
    # 558 x 300 keep 4-column tiles (129 and 75 of them), 4 rows in flight.
    assert (pick(244, 81, "float16").threads_per_row, pick(116, 627, "float16").threads_per_row) == (2, 8)
    c = pick(402, 1674, "float16")
    assert (c.threads_per_row, c.rows_per_block, c.unroll) == (8, 64, 4), c
    for m, k in ((512, 513), (558, 300)):
        c = pick(m, k, "float32", lda=k + (k % 2 == 0))
        assert (c.variant, c.threads_per_row, c.rows_per_block, c.unroll) == ("t_columns", 4, 128, 4), (m, k, c)
    """)


def test_op_t_heuristic_runs_small_aligned_matrices_in_one_step():
    """op T on small matrices of aligned rows past 128 bytes (65 rows up, up to 4 MiB, one
    product): configs whose lanes hold at most `unroll` rows of their slice, so the column
    kernel runs its one-step form. Up to 256 rows one pass: up to 256 KB 4-pack tiles of 64
    lanes (2 rows in flight up to 128 rows, else 4), past it 8-pack tiles of 32 lanes up to 128
    rows, of 64 up to 256; beyond, split-M in slices of 64 rows on 16 lanes, 4 rows in flight.
    Rows that start anywhere, rows of 128 bytes or less, 64 rows or fewer, larger matrices and
    batches keep the other rules."""
    run(PICK_T + """
    taken = 0
    for dtype, es in (("float32", 4), ("float16", 2), ("bfloat16", 2)):
        for m, k in ((80, 1872), (86, 1656), (128, 512), (129, 512), (174, 1104), (256, 1024), (257, 1024),
                     (384, 384), (512, 512), (1000, 96), (1663, 1280), (476, 4048), (65, 640), (64, 640),
                     (1000, 97), (2048, 2048), (600, 3000), (100, 16), (300, 32), (178, 256), (238, 144),
                     (100, 200), (123, 1168)):
            c = pick(m, k, dtype)
            aligned = (k * es) % 16 == 0
            want = aligned and k * es > 128 and m > 64 and m * k * es <= (4 << 20)
            got = (c.variant, c.threads_per_row, c.rows_per_block, c.vector_loads, c.unroll, c.split_k)
            if not want:
                assert not (got[1:5] == (8, 16, pygemv.LOADS_ALIGNED, 4) and c.split_k == -(-m // 64)), (dtype, m, k, c)
                continue
            taken += 1
            if m > 256:
                assert got == ("t_splitm_twopass", 8, 16, pygemv.LOADS_ALIGNED, 4, -(-m // 64)), (dtype, m, k, c)
            elif m * k * es <= (256 << 10):
                assert got == ("t_columns", 4, 64, pygemv.LOADS_ALIGNED, 2 if m <= 128 else 4, 1), (dtype, m, k, c)
            else:
                assert got == ("t_columns", 8, 32 if m <= 128 else 64, pygemv.LOADS_ALIGNED, 4, 1), (dtype, m, k, c)
            # One step: no lane holds more than `unroll` rows of its slice.
            chunk = m if c.split_k == 1 else -(-(-(-m // c.split_k)) // 64) * 64
            assert chunk <= c.rows_per_block * c.unroll, (dtype, m, k, c)
        # A batch keeps the other rules.
        c = pick(384, 384, dtype, batch=2, stride_a=384 * 384, stride_x=384, stride_y=384)
        assert (c.threads_per_row, c.rows_per_block, c.unroll) != (8, 16, 4), (dtype, c)
    assert taken >= 40, taken
    """)


def test_op_t_heuristic_runs_strided_batches_of_aligned_rows_in_one_pass():
    """op T on strided batches of aligned rows (64 rows up, rows past 256 bytes; 132 SMs in the
    stand-in): t_columns on 16-byte packs, no split; tiles of 4 threads up to 64 packs a row, 8
    up to 256, else 16, twice as wide from 64 products (16 at most); unroll 2 in 16 bits, 4 in
    fp32; lanes from min(128, block / threads) (blocks of up to 1024 threads at unroll 2, 512
    at 4; 64 lanes at most on fewer than 99 blocks) halved down to 8 while the grid passes 1024
    threads an SM or a lane would have fewer than 2 rows. Taken where that leaves 32 lanes (8
    on 16-bit tiles of 16 threads) and a lane walks at most 48 rows (4 on fewer than 99
    blocks); else (and on fewer rows, shorter or misaligned rows) the other rules, as on
    single products, which this rule leaves as they were."""
    run(PICK_T + """
    def rule(m, k, es, batch):
        packs = -(-k * es // 16)
        c = 4 if packs <= 64 else 8 if packs <= 256 else 16
        if batch >= 64:
            c = min(2 * c, 16)
        u = 4 if es == 4 else 2
        blocks = -(-packs // c) * batch
        few = 4 * blocks < 3 * 132
        lanes = min(64 if few else 128, (512 if u == 4 else 1024) // c)
        while lanes > 8 and (blocks * c * lanes > 1024 * 132 or m < 2 * lanes):
            lanes //= 2
        taken = m >= 64 and k * es > 256 and lanes >= (8 if es == 2 and c == 16 else 32) and -(-m // lanes) <= (4 if few else 48)
        return taken, ("t_columns", c, lanes, pygemv.LOADS_ALIGNED, u, 1)
    def batched(m, k, dtype, b, lda=None, pad=0):
        lda = lda or k
        return pick(m, k, dtype, lda=lda, batch=b, stride_a=m * lda + pad, stride_x=m, stride_y=k)
    # (m, k, dtype, batch): the form each should take, or None where the rule should not.
    cases = {(96, 1024, "float16", 8): (8, 32), (96, 4096, "float16", 8): (16, 32), (96, 256, "float32", 8): (4, 32),
             (384, 256, "float16", 64): (8, 64), (96, 4096, "float16", 64): (16, 8), (1024, 1024, "bfloat16", 8): (8, 128),
             (100, 568, "bfloat16", 8): (8, 32), (75, 2272, "float16", 8): (16, 32), (1536, 1024, "float32", 8): (8, 64),
             (1264, 808, "float16", 8): (8, 128), (96, 616, "float16", 8): (8, 32), (159, 232, "float32", 8): (4, 64),
             (1536, 256, "float16", 8): None,   # 12 rows a lane on 64 blocks
             (969, 160, "float32", 8): None,    # 7.6 on 80
             (397, 200, "float16", 8): None,    # 7 on 56 (64 lanes at most)
             (130, 104, "float32", 8): (4, 64),
             (256, 256, "float16", 4096): None,  # 8 lanes of 8-thread tiles
             (119, 128, "float32", 512): None,   # fp32 on 8 lanes
             (119, 128, "float16", 64): None,    # 256-byte rows
             (4096, 4096, "float16", 8): None,  # 128 rows a lane
             (2786, 2912, "float16", 8): None,  # 88
             (656, 1288, "float16", 64): None,  # 82
             (3229, 3624, "bfloat16", 64): None}
    for (m, k, dtype, b), want in cases.items():
        es = 4 if dtype == "float32" else 2
        taken, form = rule(m, k, es, b)
        assert (form[1:3] if taken else None) == want, (m, k, dtype, b, taken, form)  # the cases mean what they say
        c = batched(m, k, dtype, b)
        got = (c.variant, c.threads_per_row, c.rows_per_block, c.vector_loads, c.unroll, c.split_k)
        assert (got == form) == taken, (m, k, dtype, b, got, form)
    # Over a grid: the rule's form wherever it is taken.
    n = 0
    for dtype, es in (("float32", 4), ("float16", 2), ("bfloat16", 2)):
        for m in (64, 100, 255, 700, 2047):
            for k in (128 // es, 256 // es, 1000, 4096):
                for b in (2, 8, 64, 700):
                    if m * k * es * b > (1 << 31):
                        continue
                    taken, form = rule(m, k, es, b)
                    c = batched(m, k, dtype, b)
                    got = (c.variant, c.threads_per_row, c.rows_per_block, c.vector_loads, c.unroll, c.split_k)
                    if taken:
                        assert got == form, (m, k, dtype, b, got, form)
                        n += 1
    assert n >= 60, n
    # Rows that do not start aligned, fewer rows, short rows and single products keep the other rules.
    for dtype, es in (("float32", 4), ("float16", 2), ("bfloat16", 2)):
        assert batched(96, 1024, dtype, 8, lda=1025).vector_loads != pygemv.LOADS_ALIGNED
        assert batched(96, 1024, dtype, 8, pad=1).vector_loads != pygemv.LOADS_ALIGNED
        for m, k in ((63, 1024), (96, 240 // es)):
            c = batched(m, k, dtype, 8)
            assert (c.variant, c.threads_per_row, c.rows_per_block) != ("t_columns",) + rule(m, k, es, 8)[1][1:3], (m, k, dtype, c)
        c = pick(96, 4096, dtype)
        assert (c.threads_per_row, c.rows_per_block, c.unroll) != rule(96, 4096, es, 8)[1][1:3] + (rule(96, 4096, es, 8)[1][4],), (dtype, c)
    """)


def test_op_t_heuristic_runs_strided_batches_of_misaligned_rows_in_one_pass():
    """op T on strided batches (8 products up) of rows that do not start aligned (64 columns
    up; 132 SMs in the stand-in), first as phased rows split by lane classes on 8 to 63
    products of 256 rows up (LANE_SPLIT_RULE_T; 1024 up on 32-thread tiles), then as phased
    rows in one pass (t_columns, vector_loads 3, a row lane a phase class; 32 rows up, ahead of
    realigned packs on 32 to 48 rows): tiles of the fewest threads from 8 to 32 whose
    c - 1 packs cover a row, halved down to 8 while there are fewer tiles than SMs; under 66
    tiles, 4 threads up to 64 rows, else declined; past a wave (2048 threads an SM) at 8 lanes,
    fp32 under 64 rows on 4 lanes at 4 rows in flight, fp32 on 64 to 96 rows (256 of up to 512
    columns) declined on tiles past 8 threads, else 8 lanes at 4 rows in flight from 64 rows a
    lane, else 2; else lanes doubled while the grid stays in the wave, blocks within 512 threads
    and a lane has more than 2 rows; then the form of the fewest waves of blocks at the
    kernel's registers among those lanes or half of them (blocks of 256 threads up) at 4 or 2 rows in flight, ties in that order (in
    fp32 under 64 products where a lane has 5 to 32 rows, 2 in flight); where a grid under half the wave
    leaves a lane more than 32 rows, 64 products up take phased rows split by lane classes where those fit (LANE_SPLIT_RULE_T's
    family without its bounds; on batches a tile half or twice as wide where it covers a row in
    a fifth fewer columns), and fp32 tiles under 32 threads decline (the stream runs them).
    Where that declines, t_columns on one element a load, no split; tiles of 8
    columns up to 128 a row, 16 up to 512, else 32, twice as wide from 64 products (32 at most);
    lanes from 32 halved down to 2 while the grid passes 2048 threads an SM or a lane would have
    fewer than 2 rows (12 on 32-column tiles, down to 8 lanes); 4 rows in flight from 8 rows a
    lane (at most 512 threads a block), else 2. Not taken where a lane walks more than 12 rows
    (64 on 32-column tiles). Under 64 products, 16-column tiles become 8 with twice the lanes at
    2 in flight where the grid stays within the wave and a lane keeps 2 rows. A grid past a
    wave at 2 lanes: one-lane tiles of 64 columns on up to 96 rows but on 1 to 1.5 waves of them (32 blocks an SM), where the stream runs instead;
    2-lane tiles of 64 columns on 97 to 512 rows of products up to 2 MiB whose pack period
    passes 512.
    On large batches of a product an SM and more, the stream runs a block a product of about 256
    threads (the period, where longer), at 4 packs in flight where a thread has 16 packs and the
    block at most 512 threads (fp32) or 256 (16 bits). Fewer products and aligned rows keep the
    other rules."""
    run(PICK_T + LANE_SPLIT_RULE_T + """
    import math
    from test_cpu_kernel_registers import LANE_CLASS_PASS_REGISTERS  # ptxas's, as dispatch.cpp counts them
    def rule(m, k, es, b):
        if b < 8 or m < 64 or k < 64:
            return None
        c = 8 if k <= 128 else 16 if k <= 512 else 32
        if b >= 64:
            c = min(2 * c, 32)
        blocks = -(-k // c) * b
        past = lambda lanes: blocks * c * lanes > 2048 * 132
        few = lambda lanes: (lanes > 8 and m < 12 * lanes) if c == 32 else m < 2 * lanes
        lanes = 32
        while lanes > 2 and (past(lanes) or few(lanes)):
            lanes //= 2
        if past(lanes):
            if m > 96:
                period = k // math.gcd(k, 16 // es)
                return ("t_columns", 64, 2, pygemv.LOADS_SCALAR, 4, 1) if m <= 512 and m * k * es <= (2 << 20) and period > 512 else None
            waves_x100 = -(-k // 64) * b * 100 // (32 * 132)
            tail = 100 <= waves_x100 < 200 and waves_x100 % 100 < 50
            return None if tail else ("t_columns", 64, 1, pygemv.LOADS_SCALAR, 4, 1)
        u = 4 if -(-m // lanes) >= 8 else 2
        if u == 4:
            lanes = min(lanes, 512 // c)
        if -(-m // lanes) > (12 if c < 32 else 64):
            return None
        if b < 64 and c == 16 and lanes <= 32 and m >= 4 * lanes and -(-k // 8) * b * 16 * lanes <= 2048 * 132:
            c, lanes, u = 8, 2 * lanes, 2  # small batches of 129-512 columns: tiles of 8, twice the lanes
        return ("t_columns", c, lanes, pygemv.LOADS_SCALAR, u, 1)
    def lane_rule(m, k, es, b, bf16=False):
        if b < 8 or m < 32 or k < 64:
            return None
        v, wave = 16 // es, 2048 * 132
        tiles = lambda c: -(-k // ((c - 1) * v)) * b
        c = 8
        while c < 32 and (c - 1) * v < k:
            c *= 2
        while c > 8 and tiles(c) < 132:
            c //= 2
        if m <= 64 and 2 * tiles(c) < 132:
            c = 4  # up to 64 rows: tiles of 4 threads where 8 leave under half an SM a tile, taken however few
        blocks = tiles(c)
        if 2 * blocks < 132 and m > 64:
            return None
        lanes = 8
        if blocks * c * lanes > wave:
            if es == 4 and m < 64:
                return ("t_columns", c, 4, pygemv.LOADS_PHASED, 4, 1)  # fp32 under 64 rows: 4 lanes
            if es == 4 and 64 <= m and (m <= 96 or (m <= 256 and k <= 512)) and c > 8:
                return None  # fp32 few rows past a wave: the stream
            return ("t_columns", c, lanes, pygemv.LOADS_PHASED, 4 if m >= 64 * lanes else 2, 1)
        while c * lanes * 2 <= 512 and blocks * c * lanes * 2 <= wave and m > 4 * lanes:
            lanes *= 2  # while a lane keeps more than 2 rows
        if 2 * blocks * c * lanes < wave and m > 32 * lanes:
            if b >= 64 and (split := lane_split_rule(m, k, es, b, regime=False)):
                return split
            if es == 4 and c < 32:
                return None
        # The fewest waves at the kernel's registers (table below) among the lanes or half of them (blocks
        # of 256 threads up) at 4 or 2 rows in flight, ties in that order; fp32 small batches of 5-32 rows a lane at 2
        def waves(l, u):
            # the walk: one step (every row of a lane at once), one tile (16 bits at 2), else the loops
            walk = 1 if m <= u * l else 2 if es == 2 and u == 2 else 0
            dtype = "float32" if es == 4 else "bfloat16" if bf16 else "float16"
            regs = LANE_CLASS_PASS_REGISTERS[(dtype, u, walk, walk != 0)]
            per_warp = -(-regs * 32 // 256) * 256
            slots = 132 * max(1, min(65536 // per_warp // (c * l // 32), 2048 // (c * l)))
            return -(-blocks // slots)
        fp32_small = es == 4 and b < 64 and 4 * lanes < m <= 32 * lanes
        forms = [(l, u) for l in (lanes, lanes // 2) for u in (4, 2)
                 if not (fp32_small and u == 4) and l >= 8 and (l == lanes or c * l >= min(256, c * lanes))]
        lanes, u = min(forms, key=lambda f: (waves(*f), forms.index(f)))
        return ("t_columns", c, lanes, pygemv.LOADS_PHASED, u, 1)
    def batched(m, k, dtype, b, lda=None):
        lda = lda or k
        c = pick(m, k, dtype, lda=lda, batch=b, stride_a=m * lda + 1, stride_x=m, stride_y=k)
        return (c.variant, c.threads_per_row, c.rows_per_block, c.vector_loads, c.unroll, c.split_k)
    def expected(m, k, es, b, bf16=False):
        return lane_split_rule(m, k, es, b) or lane_rule(m, k, es, b, bf16) or rule(m, k, es, b)
    # Phased rows split by lane classes: (m, k, dtype, batch): (c, lanes, split_k), or None.
    split_cases = {(2797, 2267, "float16", 8): (32, 8, 4), (924, 511, "float16", 8): (16, 16, 8),
                   (339, 101, "float16", 8): (8, 16, 8), (1352, 289, "float32", 8): (16, 16, 16),
                   (547, 1411, "float16", 8): None,   # 32-thread tiles under 1024 rows
                   (183, 429, "float16", 8): None,    # under 256 rows
                   (339, 101, "float16", 64): None,   # 64 products
                   (924, 511, "float16", 4): None,    # under 8 products
                   (2797, 2267, "float32", 8): None,  # 4 slices past half a wave
                   (5244, 277, "float16", 8): (8, 16, 16),  # 5 tiles of 56 columns, not 3 of 120
                   (20011, 263, "float16", 1): (16, 16, 256)}  # single products keep 120
    for (m, k, dtype, b), want in split_cases.items():
        form = lane_split_rule(m, k, 4 if dtype == "float32" else 2, b)
        assert (form and (form[1], form[2], form[5])) == want, (m, k, dtype, b, form)
        if form:
            assert batched(m, k, dtype, b) == form, (m, k, dtype, b, batched(m, k, dtype, b), form)
    # Phased rows in one pass: (m, k, dtype, batch): the form (c, lanes, unroll), or None.
    lane_cases = {(174, 1223, "float16", 512): (32, 8, 2), (400, 601, "float16", 512): (32, 8, 2),
                  (924, 511, "float16", 512): (32, 8, 4), (884, 3489, "float16", 64): (32, 8, 4),
                  (178, 79, "float16", 4096): (16, 8, 2),
                  (1985, 247, "float16", 512): (32, 8, 4),  # lanes halved since s53: 32 x 16 119.2 us, 32 x 8 120.2
                  (924, 511, "float16", 8): (8, 64, 4), (1746, 961, "bfloat16", 8): (8, 64, 4),
                  (400, 601, "float32", 512): (32, 8, 2), (83, 525, "float32", 8): (8, 32, 4),
                  (76, 759, "float16", 512): (32, 8, 2), (76, 759, "float32", 8): (8, 32, 4),
                  (339, 101, "float16", 8): None,     # 16 tiles
                  (66, 7815, "float32", 8): (32, 8, 2),  # fp32 few rows within the wave (s54; declined before)
                  (64, 333, "float32", 64): (32, 16, 4), (256, 181, "float32", 64): (16, 32, 4),
                  (128, 121, "float32", 512): (32, 8, 4),
                  (76, 759, "float32", 512): None, (100, 489, "float32", 512): None,
                  (101, 79, "float32", 64): (8, 32, 4), (275, 1119, "float32", 512): (32, 8, 2),
                  (8192, 1001, "float16", 8): (8, 64, 4),  # 128 rows a lane in a fifth of the wave
                  (535, 335, "float32", 64): (32, 16, 4), (2797, 2267, "float32", 8): (32, 16, 4),
                  (924, 511, "float16", 64): (32, 16, 4),  # 58 rows a lane, no split within half a wave
                  (2602, 73, "bfloat16", 64): (8, 16, 4),  # tall products of 64 up: split by lane classes
                  (2254, 135, "float32", 64): None,   # fp32 tiles under 32 threads: the stream
                  (96, 435, "float16", 4): None, (63, 435, "float16", 8): (4, 16, 4),
                  # 2 rows in flight: fewer waves at the kernel's registers (640 blocks of 256: 2 waves
                  # at 4 in flight, 1 at 2; 576 in fp32), or fp32 small batches of 5-32 rows a lane
                  (901, 2263, "float16", 64): (32, 8, 2), (2999, 1083, "float32", 64): (32, 8, 2),
                  (1375, 2853, "float32", 64): (32, 8, 4),  # 3 waves either way
                  (465, 579, "float32", 8): (8, 64, 2), (124, 1595, "float32", 8): (16, 32, 4),  # one step at 4
                  # half the lanes where only they take fewer waves; not at a tie with 2 in flight
                  (129, 209, "float16", 512): (32, 8, 4), (196, 925, "float32", 64): (32, 8, 4),
                  (198, 103, "float16", 512): (16, 16, 4), (425, 119, "float32", 64): (8, 32, 4),
                  (861, 1025, "float16", 64): (32, 16, 2), (118, 491, "bfloat16", 64): (16, 32, 2),
                  # 32 to 63 rows (since s53; realigned packs, element loads or the stream before), fp32 too
                  (33, 137, "float16", 4096): (32, 8, 2), (36, 97, "float32", 4096): (32, 4, 4),  # fp32 past a wave: 4 lanes (s54)
                  (40, 145, "float16", 512): (32, 8, 4), (54, 205, "float16", 512): (32, 8, 4),
                  (47, 103, "bfloat16", 64): (8, 16, 4), (31, 137, "float16", 4096): None,
                  # up to 64 rows, tiles of 4 threads where 8 leave under half an SM a tile (s54)
                  (40, 145, "float16", 8): (4, 16, 4), (60, 403, "bfloat16", 8): (4, 16, 4),
                  (48, 189, "float32", 8): (4, 16, 4), (65, 189, "float32", 8): None,
                  # the fewest lanes that fill 4 rows in flight (s54: 64 and 16 before)
                  (128, 121, "float16", 64): (8, 32, 4), (32, 267, "float32", 64): (32, 8, 4),
                  (36, 1121, "float32", 4096): (32, 4, 4)}
    for (m, k, dtype, b), want in lane_cases.items():
        form = lane_rule(m, k, 4 if dtype == "float32" else 2, b, dtype == "bfloat16")
        assert (form and (form[1], form[2], form[4])) == want, (m, k, dtype, b, form)
        if form and not lane_split_rule(m, k, 4 if dtype == "float32" else 2, b):
            assert batched(m, k, dtype, b) == form, (m, k, dtype, b, batched(m, k, dtype, b), form)
    # (m, k, dtype, batch): the form each should take (c, lanes, unroll), or None where the rule should not.
    cases = {(96, 107, "float16", 8): (8, 32, 2), (300, 107, "float32", 8): (8, 32, 4), (96, 435, "float16", 8): (16, 32, 2),
             (300, 435, "bfloat16", 8): (8, 64, 2), (96, 1501, "float16", 8): (32, 8, 4), (300, 1501, "float32", 8): (32, 16, 4),
             (1000, 1501, "float16", 8): (32, 16, 4), (77, 1501, "float16", 8): (32, 8, 4), (300, 107, "float16", 64): (16, 32, 4),
             (96, 107, "float32", 64): (16, 32, 2), (211, 733, "float32", 64): (32, 4, 4), (96, 1501, "float16", 64): (32, 2, 4),
             (96, 3001, "float16", 64): (64, 1, 4),   # one-lane tiles, 0.71 waves
             (77, 1501, "float16", 512): (64, 1, 4),  # 2.9 waves
             (90, 427, "bfloat16", 4096): (64, 1, 4),
             (83, 525, "float16", 512): None,          # one-lane tiles in 1.09 waves: the stream
             (72, 3879, "float16", 512): (64, 1, 4),  # 7.4 waves
             (174, 1223, "float16", 512): (64, 2, 4),  # past a wave at 2 lanes on 97-512 rows
             (400, 601, "float32", 512): (64, 2, 4),
             (300, 435, "float16", 512): None,         # a period of 435: the stream
             (924, 511, "float16", 512): None,          # 924 rows
             (400, 1501, "float32", 512): None,         # 2.3 MiB a product
             (1000, 107, "float16", 8): None,          # 31 rows a lane
             (300, 1501, "float16", 64): None,         # 150 rows a lane on 2 lanes
             (2786, 2907, "float32", 8): None,         # 174 on 16
             (96, 435, "float16", 4): None, (63, 435, "float16", 8): None, (96, 63, "float16", 8): None}
    for (m, k, dtype, b), want in cases.items():
        form = rule(m, k, 4 if dtype == "float32" else 2, b)
        assert (form and (form[1], form[2], form[4])) == want, (m, k, dtype, b, form)  # the cases mean what they say
        if expected(m, k, 4 if dtype == "float32" else 2, b, dtype == "bfloat16") == form:
            got = batched(m, k, dtype, b)
            assert (got == form) == (form is not None), (m, k, dtype, b, got, form)
    # Over a grid (odd K: rows that start anywhere): the rule's form wherever it is taken.
    n = 0
    for dtype, es in (("float32", 4), ("float16", 2), ("bfloat16", 2)):
        for m in (33, 47, 64, 77, 100, 255, 700, 2047):
            for k in (65, 129, 301, 513, 1501, 4097):
                for b in (2, 8, 64, 700):
                    if m * k * es * b > (1 << 31):
                        continue
                    form = expected(m, k, es, b, dtype == "bfloat16")
                    if form:
                        assert batched(m, k, dtype, b) == form, (m, k, dtype, b, batched(m, k, dtype, b), form)
                        n += 1
    assert n >= 100, n
    # Aligned rows keep the aligned rules.
    for dtype in ("float32", "float16", "bfloat16"):
        assert pick(96, 1024, dtype, batch=8, stride_a=96 * 1024, stride_x=96, stride_y=1024).vector_loads == pygemv.LOADS_ALIGNED
    # The stream on large batches (a product an SM and more, 8192 packs an SM in all): blocks of
    # about 256 threads, no split.
    def stream(m, k, es, b):
        v = 16 // es
        period = k // math.gcd(k, v)
        block = period * max(1, 256 // period)
        packs = ((m - 1) * k + k) // v + 1
        return ("t_stream", 256, 1, pygemv.LOADS_ALIGNED, 4 if block <= (512 if es == 4 else 256) and packs >= 16 * block else 2, 1)
    streamed = 0
    for m, k, dtype, b, u in ((300, 107, "float16", 512, 4), (300, 107, "float32", 512, 4), (1337, 91, "bfloat16", 512, 4),
                              (300, 435, "float16", 512, 2), (300, 435, "float32", 512, 4), (83, 525, "float16", 512, 2),
                              (120, 107, "float16", 2048, 2), (83, 525, "float32", 512, 2)):
        es = 4 if dtype == "float32" else 2
        assert rule(m, k, es, b) is None and stream(m, k, es, b)[4] == u, (m, k, dtype, b)
        if expected(m, k, es, b, dtype == "bfloat16") is None:
            assert batched(m, k, dtype, b) == stream(m, k, es, b), (m, k, dtype, b, batched(m, k, dtype, b))
            streamed += 1
    assert streamed >= 1, streamed
    """)


def test_op_t_heuristic_runs_mid_sized_misaligned_matrices_in_one_pass_of_realigned_packs():
    """op T beyond the one-pass rule's 2 MiB, up to 8 MiB, on 16-bit rows that do not start
    aligned, one product (132 SMs in the stand-in): t_columns, realigned packs, 8 threads across
    a tile, 2 rows in flight; 64 lanes on 49 to 192 rows of at most 64 columns an SM and at
    least 0.75 tiles of 8 packs an SM, 16 lanes on 49 to 80 rows of more than 256 columns an
    SM. fp32, batches and the rest keep the other rules."""
    run(PICK_T + """
    taken = 0
    for dtype, es in (("float32", 4), ("float16", 2), ("bfloat16", 2)):
        for m, k, lda in ((49, 22051, None), (52, 37925, None), (66, 61931, None), (78, 21673, None), (120, 20011, None),
                          (168, 5145, None), (236, 7874, None), (202, 9649, None), (95, 12711, None), (184, 8135, None),
                          (255, 4096, 4097), (192, 5461, None), (193, 5461, None), (48, 40001, None), (64, 81268, None),
                          (71, 8694, None), (250, 1211, None), (100, 8448, 8449), (100, 8449, 8450), (120, 20000, None),
                          (60, 33792, 33793), (60, 33793, None), (148, 5523, None), (147, 8009, None), (55, 68469, None),
                          (150, 5809, None), (150, 6239, None), (80, 40001, None), (81, 40001, None), (95, 39607, None),
                          (49, 71945, None), (80, 52429, None), (190, 7109, None), (173, 6727, None), (65, 56033, None)):
            lda = lda or k
            c = pick(m, k, dtype, lda=lda)
            packs = -(-k * es // 16)
            nbytes, tiles = m * k * es, -(-packs // 8)
            few = k <= 64 * 132 and 3 * 132 <= 4 * tiles and m <= 192
            many = k > 256 * 132 and m <= 80
            if not ((lda * es) % 16 != 0 and es == 2 and 48 < m and (2 << 20) < nbytes <= (8 << 20) and (few or many)):
                assert c.vector_loads != pygemv.LOADS_REALIGNED or c.threads_per_row != 8, (dtype, m, k, c)
                continue
            taken += 1
            got = (c.variant, c.threads_per_row, c.rows_per_block, c.vector_loads, c.unroll, c.split_k)
            assert got == ("t_columns", 8, 64 if few else 16, pygemv.LOADS_REALIGNED, 2, 1), (dtype, m, k, c)
        # A batch keeps the other tiles.
        c = pick(55, 68469, dtype, batch=2, stride_a=55 * 68469, stride_x=55, stride_y=68469)
        assert c.vector_loads != pygemv.LOADS_REALIGNED or c.threads_per_row != 8, (dtype, c)
    assert taken >= 20, taken
    # Taken: fp16 184 x 8135 (64 lanes), 55 x 68469 (16); not: 194 x 6463 (4 rows a lane), 95 x
    # 39607, 202 x 5809 (91 tiles), fp32 148 x 5523.
    assert pick(184, 8135, "float16").rows_per_block == 64 and pick(55, 68469, "float16").rows_per_block == 16
    for m, k, dtype in ((194, 6463, "float16"), (95, 39607, "bfloat16"), (202, 5809, "float16"), (148, 5523, "float32")):
        assert pick(m, k, dtype).vector_loads != pygemv.LOADS_REALIGNED, (m, k, dtype)
    """)


def test_op_t_heuristic_runs_few_rows_a_lane_of_element_loads_in_one_pass():
    """op T on rows that do not start aligned, past the earlier rules, one product, 33 rows up
    (132 SMs in the stand-in): t_columns, one element a load, 4 rows in flight, lanes the power
    of two under 1024 x 132 / K, from 4 to 32 and at most m / 3 (from 4), 512-thread blocks from
    16 lanes, else 256; taken where a lane walks at most 16 rows (fp32 on 32 lanes: 8; 4 lanes
    past 256 columns an SM: 24 where the 64-column tiles fill their last wave of 8 blocks an SM
    at least half, from 0.85 waves) and, past 8, lanes x K reach half the target. The
    element-load split keeps 4 rows in flight on 16 tiles up (one product); batches and tall
    matrices of few columns drop to 2. Few long rows from 6-8 MiB take the lane-class one pass
    first (LANE_PASS_RULE_T)."""
    run(PICK_T + LANE_PASS_RULE_T + """
    def pow2_floor(v):
        return 1 << (max(1, v).bit_length() - 1)
    def one_pass(m, k, es):
        target = 1024 * 132
        lanes = min(max(4, min(32, pow2_floor(target // k))), max(4, pow2_floor(m // 3)))
        rows = -(-m // lanes)
        waves = -(-k // 64) / (8 * 132)
        most = 8 if es == 4 and lanes == 32 else 24 if lanes == 4 and k > 256 * 132 and waves >= 0.85 and waves % 1 >= 0.5 else 16
        taken = rows <= most and (rows <= 8 or k * lanes >= target // 2)
        return taken, ("t_columns", (512 if lanes >= 16 else 256) // lanes, lanes, pygemv.LOADS_SCALAR, 4, 1)
    # Shapes no earlier rule takes (past 2 MiB or 2 tiles an SM of 16 bytes, not the 16-bit
    # realigned rule's, not the stream's or phased rows': fp16 256 x 5813, 2.8 MiB, now takes
    # lane classes), with the forms each should take.
    cases = {(64, 2945, "float16"): (16, True), (300, 2173, "float16"): (32, True), (200, 5813, "float16"): (16, True),
             (130, 6242, "float32"): (16, True), (53, 104815, "float32"): (4, True), (100, 7475, "bfloat16"): (16, True),
             (138, 3251, "float32"): (32, True), (60, 20001, "float16"): (4, True), (49, 2863, "float32"): (16, True),
             (457, 3115, "float32"): (32, False), (475, 4833, "float16"): (16, False), (510, 2101, "float16"): (32, False),
             (506, 2010, "float32"): (32, False), (87, 43597, "float16"): (4, False),
             # 17-24 rows a lane on 4 lanes: 0.85 and 1.97 waves taken, 1.01 and 0.60 not.
             (82, 57493, "float16"): (4, True), (89, 133339, "bfloat16"): (4, True),
             (91, 68539, "float32"): (4, False), (96, 40275, "float16"): (4, False)}
    for (m, k, dtype), (lanes, taken) in cases.items():
        es = 4 if dtype == "float32" else 2
        want, form = one_pass(m, k, es)
        assert (want, form[2]) == (taken, lanes), (m, k, dtype, want, form)  # the cases mean what they say
        c = pick(m, k, dtype)
        got = (c.variant, c.threads_per_row, c.rows_per_block, c.vector_loads, c.unroll, c.split_k)
        if lane_pass_rule(m, k, es):  # few long rows from 6-8 MiB: the lane-class one pass first (s61)
            assert got == ("t_columns", *lane_pass_rule(m, k, es), pygemv.LOADS_PHASED, 4, 1), (m, k, dtype, got)
            continue
        assert (got == form) == taken, (m, k, dtype, got, form)
        if not taken:
            assert c.variant == "t_splitm_twopass" or c.rows_per_block == 8, (m, k, dtype, got)
    # Aligned rows and batches keep the other rules.
    assert pick(256, 5816, "float16").vector_loads != pygemv.LOADS_SCALAR
    for dtype in ("float32", "float16", "bfloat16"):
        c = pick(100, 7475, dtype, batch=2, stride_a=100 * 7475, stride_x=100, stride_y=7475)
        assert (c.variant, c.threads_per_row, c.rows_per_block) != ("t_columns", 32, 16), (dtype, c)
    # The element-load split: 4 rows in flight on 16 tiles up (fp32 300 x 1618, 51 tiles, splits 8
    # ways; fp16 667 x 909 did, 16 ways, until lane classes took it), 2 at a batch (300 x 909 x 2)
    # and on tall matrices of few columns (fp32 4088 x 23).
    c = pick(300, 1618, "float32", lda=1627)
    assert (c.variant, c.threads_per_row, c.rows_per_block, c.unroll, c.split_k) == ("t_splitm_twopass", 32, 8, 4, 8), c
    assert pick(667, 909, "float16").vector_loads == pygemv.LOADS_PHASED
    c = pick(300, 909, "float16", batch=2, stride_a=300 * 909, stride_x=300, stride_y=909)
    assert (c.variant, c.unroll) == ("t_splitm_twopass", 2), c
    c = pick(4088, 23, "float32")
    assert (c.variant, c.unroll) == ("t_splitm_twopass", 2), c
    """)


def test_phased_op_t_legality_and_workspace():
    """Phased rows in op T: split-M (t_splitm_twopass: any tile width, 1 thread up) and one
    pass (t_columns, a row lane a phase class: 2 threads a tile up), any phase. Split-M's
    workspace holds a partial per column for each slice: where its lanes are a multiple of
    the phase period (lane classes), chunks of whole steps (lanes x unroll rows); else each
    chunk (lanes x unroll x period rows, split_k / period of them, at least one) cut into its
    period phase classes."""
    C, P = pygemv.Config, pygemv.LOADS_PHASED
    assert validate(C("t_splitm_twopass", 1, 256, P, 2, False, 8)) and validate(C("t_columns", 16, 16, P, 2))
    assert not validate(C("t_columns", 1, 256, P, 2)) and not validate(C("t_splitm_twopass", 16, 16, 4, 2, False, 8))
    classes = slices_a_class = 0
    for c in (C("t_splitm_twopass", 16, 16, P, 2, False, 64), C("t_splitm_twopass", 16, 4, P, 2, False, 64)):
        for m, k, dtype, lda in ((4421, 11465, "float16", None), (8304, 1341, "float32", None),
                                 (1000, 64, "float16", 66), (1000, 64, "float32", None), (37, 65, "bfloat16", None)):
            lda = lda or k
            es = 4 if dtype == "float32" else 2
            period = next(p for p in (1, 2, 4, 8) if (lda * es * p) % 16 == 0)
            per = 1 if c.rows_per_block % period == 0 else period  # lane classes: slices in any phase
            classes += per == 1
            slices_a_class += per > 1
            step = c.rows_per_block * 2 * per
            chunks = max(1, 64 // per)
            length = -(-m // chunks)
            length = max(1, min(m, -(-length // step) * step))
            slices = -(-m // length) * per
            assert pygemv.can_implement(c, m, k, dtype, lda=lda, trans=True, a_ptr=(1 << 32) + es)[0]
            assert pygemv.workspace_size(c, m, k, dtype, lda=lda, trans=True) == 4 * slices * k, (c, m, k, dtype)
    assert classes >= 5 and slices_a_class >= 2, (classes, slices_a_class)


def test_t_stream_legality_and_workspace():
    """t_stream: aligned packs only, x never staged, rows_per_block 1; lda of at least half a
    pack when m > 1 (a pack reaches at most three rows); a pack period (lda / gcd(lda, pack))
    of at most the block's limit (512 threads at unroll 4, 1024 else); its workspace is a
    partial per column of each slice and product."""
    C, A = pygemv.Config, pygemv.LOADS_ALIGNED
    ok = lambda c, m, k, dtype, **kw: pygemv.can_implement(c, m, k, dtype, trans=True, **kw)
    assert validate(C("t_stream", 256, 1, A, 4, False, 16))
    for bad in (C("t_stream", 256, 1, pygemv.LOADS_SCALAR, 4), C("t_stream", 256, 1, pygemv.LOADS_REALIGNED, 4),
                C("t_stream", 256, 1, A, 4, True), C("t_stream", 128, 2, A, 4), C("t_stream", 16, 1, A, 4)):
        assert not validate(bad), bad
    s = C("t_stream", 256, 1, A, 4)
    assert ok(s, 100, 4, "float16")[0] and ok(s, 100, 7, "float16")[0] and ok(s, 100, 2, "float32")[0]  # short rows
    assert not ok(s, 100, 3, "float16")[0] and "lda >= 4" in ok(s, 100, 3, "float16")[1]
    assert not ok(s, 100, 1, "float32")[0] and "lda >= 2" in ok(s, 100, 1, "float32")[1]
    assert ok(s, 100, 3, "float16", lda=4)[0]
    assert ok(s, 1, 7, "float16")[0] and ok(s, 100, 7, "float32")[0]  # one row; fp32 packs of 4
    assert ok(s, 1000, 511, "float16")[0] and not ok(s, 1000, 513, "float16")[0]  # periods 511 and 513
    assert ok(C("t_stream", 256, 1, A, 2), 1000, 513, "float16")[0]
    assert not ok(C("t_stream", 256, 1, A, 2), 1000, 1025, "float16")[0]
    assert ok(s, 1000, 1000, "float16")[0]  # period 125
    assert not pygemv.can_implement(s, 1000, 61, "float16")[0]  # op N
    # Workspace: slices of whole blocks of packs (a block: the period times its copies).
    for m, k, dtype, split, batch in ((100000, 61, "float16", 132, 1), (1573, 69, "float32", 7, 3), (50, 8, "float16", 1, 1),
                                     (300000, 5, "float16", 64, 1)):
        v = 16 // {"float32": 4, "float16": 2}[dtype]
        period = k // math.gcd(k, v)
        threads = period * max(1, 256 // period)
        packs = ((m - 1) * k + k + 2 * (v - 1)) // v
        slice_ = -(-(-(-packs // split)) // threads) * threads
        slices = -(-packs // slice_)
        c = C("t_stream", 256, 1, A, 4, False, split)
        want = 4 * slices * k * batch if slices > 1 else 0
        assert pygemv.workspace_size(c, m, k, dtype, trans=True, batch=batch, stride_a=m * k) == want, (m, k, dtype)


# dispatch.cpp wide_gap_rows_config, mirrored: fp32 op N single products of rows of 32-127 bytes
# that do not start 16-byte aligned (the callers' rows never do), gaps of a quarter of lda or more,
# from 8 MB: 96 bytes apart or more, 4 lanes at 2 in flight, 8-byte loads (x staged) on rows on 8
# bytes, else element loads, x staged from rows of 64 bytes; closer (s68), rows of 32-48 bytes off 8
# bytes on 2 lanes of element loads, x through L1. The form (variant, p, rows a block, loads,
# unroll, x staged, split) or None.
WIDE_GAP_RULE = """
    def wide_gap_rule(m, k, lda, es, on_8):
        row, gap = k * es, lda - k
        if es != 4 or not 32 <= row < 128 or 4 * gap < lda or m * lda * es < (8 << 20):
            return None
        if lda * es < 96:  # s68: rows of 32-48 bytes off 8 bytes, 2 lanes of element loads, x through L1
            return None if row > 48 or on_8 else ("rows_per_warp", 2, 64, 0, 2, False, 1)
        if on_8:
            return ("rows_per_warp", 4, 32, pygemv.LOADS_ALIGNED8, 2, True, 1)
        return ("rows_per_warp", 4, 32, 0, 2, row >= 64, 1)
"""


# dispatch.cpp short_rows_element_config's rows of one phase, mirrored (s67): 16-bit rows of 8-46
# bytes, lda a multiple of a pack, gaps over an eighth of lda, A not on 8 bytes, from 12 MB; 64
# bytes apart or more (but 16-bit rows of 5-7 elements, which read a thread a row): x's phase
# copies on 2 lanes from 32 bytes (where the workspace holds them), else 2 lanes of element loads at
# 2, x through L1; closer (s68) a thread a row of element loads at 4, x staged where rows lie 16
# bytes apart. The form, or None.
ONE_PHASE_RULE = """
    def one_phase_rule(m, k, lda, es, a_off_bytes, copies=True):
        row, gap = k * es, lda - k
        if es != 2 or lda * es % 16 or a_off_bytes % 8 == 0 or not 8 <= row < 48 or 8 * gap <= lda:
            return None
        if m * lda * es < (12 << 20):
            return None
        if lda * es < 64:  # s68: a thread a row at 4, x staged where rows lie 16 bytes apart
            return ("thread_per_row", 1, 128, 0, 4, lda * es == 16, 1)
        if 10 <= row < 16:
            return None
        if row >= 32 and copies:
            return ("rows_per_warp", 2, 64, pygemv.LOADS_PHASED_X_COPIES, 1, False, 1)
        return ("rows_per_warp", 2, 64, 0, 2, False, 1)
"""


def test_heuristic_reads_short_rows_of_odd_pitch_an_element_a_load():
    """Single op N products of short rows from 12 MB that start anywhere, of odd pitch (lda not
    a multiple of a pack, rows not on 8 bytes), or of 16-bit rows of 5-7 elements 64 bytes apart
    or more (any alignment; fp32 ones and shorter ones keep the other rules): one element a
    load, x staged; 16-bit rows of up to 30 bytes (and those 5-7 elements) a thread a row at 4
    in flight, of 32-46 bytes (44 before s67) the same under gaps of 2/5 of lda, else 2 lanes at
    2; fp32 rows of 48-80 bytes on x's phase copies (2 lanes at one) under gaps of a quarter of
    lda, else 4 lanes at 2 (since s67 the wide-gap rule's form where it takes them,
    WIDE_GAP_RULE). Since s67 16-bit rows of one phase off 8 bytes with gaps over an eighth of lda
    take 2 lanes (ONE_PHASE_RULE). Other lengths, other rows of one phase, rows on 8 bytes,
    smaller matrices and batches keep the other rules."""
    run(WIDE_GAP_RULE + ONE_PHASE_RULE + """
    base = 1 << 32
    def pick(m, k, dtype, lda, a_off, **kw):
        return pygemv.select_config(m, k, dtype, lda=lda, a_ptr=base + a_off, x_ptr=base + (1 << 40), use_table=False, **kw)
    def form(c):
        return (c.variant, c.threads_per_row, c.rows_per_block, int(c.vector_loads), c.unroll, c.x_in_smem, c.split_k)
    taken = {1: ("thread_per_row", 1, 128, 0, 4, True, 1), 2: ("rows_per_warp", 2, 64, 0, 2, True, 1),
             4: ("rows_per_warp", 4, 32, 0, 2, True, 1), "copies": ("rows_per_warp", 2, 64, 5, 1, False, 1)}
    n, seen = 0, set()
    for dtype, es in (("float32", 4), ("float16", 2), ("bfloat16", 2)):
        for m, k, lda, a_off in ((1507581, 11, 23, 0), (3728270, 9, 9, 0), (9925715, 6, 10, 7), (528922, 22, 41, 55),
                                 (1048576, 16, 62, 0), (4778389, 20, 25, 0), (315164, 12, 54, 1), (2000000, 13, 33, 0),
                                 (873845, 19, 45, 0), (831526, 20, 62, 3), (600000, 14, 29, 1), (2000000, 17, 19, 0),
                                 (1048576, 16, 17, 0), (3504034, 16, 19, 1), (25630907, 5, 32, 40), (8000000, 7, 64, 0),
                                 (5000000, 5, 36, 0), (8000000, 3, 16, 0), (9000000, 3, 8, 0), (1953216, 2, 40, 6),
                                 (13194387, 14, 30, 11), (3586175, 23, 30, 2), (523071, 23, 123, 1),
                                 (200000, 14, 19, 0)):
            row, gap = k * es, lda - k
            if es == 2:
                p = 1 if row <= 30 else (1 if 5 * gap < 2 * lda else 2) if 32 <= row < 48 else 0
            else:
                p = ("copies" if 4 * gap < lda else 4) if 48 <= row <= 80 else 0
            one_phase = lda * es % 16 == 0
            on_8 = lda * es % 8 == 0 and a_off * es % 8 == 0
            spread = es == 2 and 10 <= row < 16 and lda * es >= 64
            if spread:
                p = 1
            c = pick(m, k, dtype, lda, a_off * es)
            wide = wide_gap_rule(m, k, lda, es, on_8) or one_phase_rule(m, k, lda, es, a_off * es)
            if wide:
                assert form(c) == wide, (dtype, m, k, lda, a_off, c)
                seen.add("wide" if es == 4 else "one phase")
                continue
            if p and (spread or (not one_phase and not on_8)) and m * lda * es >= (12 << 20):
                assert form(c) == taken[p], (dtype, m, k, lda, a_off, c)
                n += 1
                seen.add((p, spread))
            else:
                assert form(c) not in taken.values(), (dtype, m, k, lda, a_off, c)
        # Rows of one phase (lda a multiple of a pack), rows on 8 bytes, under 12 MB, batches: not this rule.
        for m, k, lda, a_off, kw in ((1000000, 16 // (es // 2 if es == 4 else 1), 64, 1, {}), (4310267, 16, 24, 4, {}),
                                     (200000, 11, 23, 0, {}), (50000, 11, 23, 0, dict(batch=8, stride_a=50000 * 23)),
                                     (100000, 5, 32, 0, {}), (50000, 5, 64, 0, dict(batch=8, stride_a=50000 * 64))):
            c = pick(m, k, dtype, lda, a_off * es, **kw)
            if not kw and one_phase_rule(m, k, lda, es, a_off * es):  # 16-bit rows of one phase off 8 bytes (s67)
                assert form(c) == one_phase_rule(m, k, lda, es, a_off * es), (dtype, m, k, lda, c)
                seen.add("one phase")
                continue
            assert form(c) not in taken.values(), (dtype, m, k, lda, kw)
        # Without room for x's phase copies, fp32 rows of narrow gaps keep 4 lanes.
        if es == 4:
            assert form(pick(4778389, 20, dtype, 25, 0, workspace_bytes=0)) == taken[4]
    want_seen = {(1, False), (2, False), (4, False), ("copies", False), (1, True), "wide", "one phase"}
    assert n >= 30 and seen == want_seen, (n, seen)
    """)


def test_heuristic_reads_fp32_rows_of_wide_gaps_on_4_lanes_and_short_rows_on_8_bytes_a_thread_a_row():
    """s67 (benchmarks/NOTES.md section 87). fp32 rows of 32-127 bytes that do not start 16-byte
    aligned, with gaps of a quarter of lda or more, 96 bytes apart or more, from 8 MB: 4 lanes at
    2 in flight (WIDE_GAP_RULE); not longer rows, closer ones, narrower gaps, smaller matrices or
    batches. Rows on 8 bytes of 8-63 bytes (any x): 8-byte loads a thread a row, x staged where it
    is not on 8 bytes, not the stream or element loads. 16-bit rows of 64 bytes up on x's phase
    copies take 4 lanes where rows lie 224 bytes apart or more. 16-bit rows of one phase off 8
    bytes, 64 bytes apart or more, gaps over an eighth of lda: 2 lanes (ONE_PHASE_RULE), not rows
    closer, smaller matrices or batches; element loads without a workspace."""
    run(WIDE_GAP_RULE + ONE_PHASE_RULE + """
    base = 1 << 32
    def pick(m, k, dtype, lda=None, a_off=0, x_off=0, **kw):
        return pygemv.select_config(m, k, dtype, lda=lda or k, a_ptr=base + a_off, x_ptr=base + (1 << 40) + x_off,
                                    use_table=False, **kw)
    def form(c):
        return (c.variant, c.threads_per_row, c.rows_per_block, int(c.vector_loads), c.unroll, c.x_in_smem, c.split_k)
    n = 0
    for k in range(6, 36):
        for pad in (1, 3, 10, 24, 60):
            for a_off in (1, 2):
                lda = k + pad
                m = (200 << 20) // (lda * 4)
                want = wide_gap_rule(m, k, lda, 4, on_8=lda % 2 == 0 and a_off % 2 == 0)
                c = pick(m, k, "float32", lda, a_off * 4, 12)
                if want:
                    assert form(c) == want, (k, lda, a_off, c)
                    assert pygemv.can_implement(c, m, k, "float32", lda=lda, a_ptr=base + a_off * 4)[0]
                    n += 1
                    assert form(pick(m, k, "float32", lda, a_off * 4, 12, batch=2, stride_a=m * lda)) != want
                    if want[3] or want[5]:  # under 8 MB (small matrices read short rows so x through L1 too)
                        assert form(pick((6 << 20) // (lda * 4), k, "float32", lda, a_off * 4, 12)) != want
    assert n >= 60, n
    # Rows of 128 bytes keep realigned packs. Rows under 96 bytes apart (s68): 2 lanes of element
    # loads, x through L1, rows of 32-48 bytes (687220 x 9, lda 12: 12.7 -> 12.4 us, a thread a row
    # before); rows of 52-63 bytes keep the rules before (0.94-0.96x on that form: 800000 x 13, lda 20,
    # 2 lanes of realigned packs; 250000 x 15, lda 22, 4 lanes of element loads, x staged).
    assert pick(2000000, 32, "float32", 64, 4).vector_loads == 2
    assert form(pick(687220, 9, "float32", 12, 12)) == ("rows_per_warp", 2, 64, 0, 2, False, 1)
    assert form(pick(800000, 13, "float32", 20, 12)) == ("rows_per_warp", 2, 64, 2, 2, True, 1)
    assert form(pick(250000, 15, "float32", 22, 12)) == ("rows_per_warp", 4, 32, 0, 2, True, 1)
    assert form(pick(2000000, 12, "float32", 16, 8, 12)) == ("thread_per_row", 1, 128, pygemv.LOADS_ALIGNED8, 2, True, 1)
    # Rows on 8 bytes of 8-63 bytes: a thread a row of 8-byte loads, packed or not, x staged
    # where it is off 8 bytes (16-bit rows of 48 bytes up there: x's phase copies, as before);
    # rows of 64 bytes keep x's phase copies.
    for dtype, es, ks in (("float32", 4, (8, 10, 12, 14)), ("float16", 2, (8, 12, 20, 28)), ("bfloat16", 2, (8, 24))):
        for k in ks:
            for pad, x_off in ((0, 0), (0, 4), (2 if es == 4 else 4, 4)):
                c = pick(2000000, k, dtype, k + pad, 8, x_off)
                if es == 2 and k * es >= 48 and x_off % 8:  # 16-bit rows of 48 bytes up beside such an x: the copies
                    assert int(c.vector_loads) == pygemv.LOADS_PHASED_X_COPIES, (dtype, k, pad, x_off, c)
                    continue
                want = ("thread_per_row", 1, 128, pygemv.LOADS_ALIGNED8, 2, x_off % 8 != 0, 1)
                assert form(c) == want, (dtype, k, pad, x_off, c)
            assert pick(2000000, k, dtype, k, es).vector_loads != pygemv.LOADS_ALIGNED8, (dtype, k)  # not on 8 bytes
    assert pick(2000000, 16, "float32", 16, 8).vector_loads == pygemv.LOADS_PHASED_X_COPIES
    # 16-bit x's phase copies: 4 lanes from rows 224 bytes apart (rows of 64 bytes up).
    X = pygemv.LOADS_PHASED_X_COPIES
    for dtype in ("float16", "bfloat16"):
        for k, lda, p in ((73, 173, 4), (73, 97, 2), (59, 119, 4), (55, 97, 2), (30, 112, 2)):
            c = pick(1796630, k, dtype, lda, 2)
            got = (c.variant, c.threads_per_row, c.rows_per_block, int(c.vector_loads))
            assert got == ("rows_per_warp", p, 128 // p, X), (dtype, k, lda, c)
    # 16-bit rows of one phase off 8 bytes.
    n = 0
    for dtype in ("float16", "bfloat16"):
        for k in range(4, 24):
            for lda in range(8, 129, 8):
                for a_off in (1, 2, 3):
                    if lda <= k:
                        continue
                    m = (40 << 20) // (lda * 2)
                    want = one_phase_rule(m, k, lda, 2, a_off * 2)
                    if not want:
                        continue
                    assert form(pick(m, k, dtype, lda, a_off * 2, 2)) == want, (dtype, k, lda, a_off)
                    n += 1
                    assert form(pick(m, k, dtype, lda, a_off * 2, 2, batch=2, stride_a=m * lda)) != want
                    if want[3]:  # under 12 MB (small matrices may read such rows on 2 lanes of element loads too)
                        assert form(pick((10 << 20) // (lda * 2), k, dtype, lda, a_off * 2, 2)) != want
                    if k * 2 >= 32:
                        assert form(pick(m, k, dtype, lda, a_off * 2, 2, workspace_bytes=0)) == one_phase_rule(
                            m, k, lda, 2, a_off * 2, copies=False)
        # Rows closer than 64 bytes (fp16 3154239 x 5, lda 16: 2 lanes ran 1.56x a thread a row) and
        # rows on 8 bytes: not this rule.
        assert pick(3154239, 5, dtype, 16, 4).variant == "thread_per_row"
        assert form(pick(2000000, 9, dtype, 40, 8)) != one_phase_rule(2000000, 9, 40, 2, 2)
    assert n >= 300, n
    """)


# dispatch.cpp short_rows_config, mirrored: rows of 256 bytes to 3.5 KB that start anywhere, 2048 and
# more, 8-128 MB, where no earlier rule takes them: (variant, p, rows a block, loads, unroll, x
# staged). Since s68 phased rows on 8 lanes, x staged, for 16-bit rows of 24-55 packs (56-79 from 20
# MB) and fp32 rows of 32-79 packs from 24 MB (to 64 MB before s69); 16 realigned lanes on 128-thread
# blocks from 20 MB.
SHORT_ROWS_RULE = """
    def short_rows_rule(m, k, lda, es):
        packs, size = -(-k * es // 16), m * lda * es
        if es == 2:
            phased8 = 24 <= packs < 80 and (packs < 56 or size >= (20 << 20))
        else:
            phased8 = 32 <= packs < 80 and size >= (24 << 20)
        if phased8:
            return ("rows_per_warp", 8, 32, pygemv.LOADS_PHASED, 1, True)
        p = max(4, min(16, 1 << round(math.log2(packs / 10))))
        rows = 128 // p if p == 4 or (p == 16 and size >= (20 << 20)) else 256 // p
        return ("rows_per_warp", p, rows, pygemv.LOADS_REALIGNED, 2, True)
"""


# dispatch.cpp short_rows_past_stream_config, mirrored: packed rows under 256 bytes (lda x es) that
# the stream took before s66: the (variant, p, loads, unroll, x_in_smem) without x's copies (no
# workspace), or None where the stream keeps them (fp32 rows of 32-63 bytes, rows of 256 up).
SHORT_ROWS_PAST_STREAM = """
    def short_rule(lda, es, copies=False):
        row = lda * es
        if row >= 256 or (es == 4 and 32 <= row < 64):
            return None
        if row < 32:
            return ("thread_per_row", 1, 0, 2, False) if es == 4 else ("thread_per_row", 1, 0, 4, True)
        p = 2 if row < 128 else 4
        if copies and row >= 64:
            return ("rows_per_warp", p, pygemv.LOADS_PHASED_X_COPIES, 1, False)
        return ("rows_per_warp", p, 0, 4, False)
"""


def test_heuristic_streams_short_rows_that_are_not_16_byte_aligned():
    """The row stream for packed rows up to 3.5 KB that do not start 16-byte aligned, beyond
    small matrices (rows of 256 bytes and more: from 128 MB; from 8 MB and 2048 rows realigned
    rows with x staged; below, the row kernels' own choice; 16-bit rows of up to 30 bytes read
    an element a load; since s66 rows under 256 bytes other than fp32 ones of 32-63 bytes take
    the row kernels, SHORT_ROWS_PAST_STREAM);
    row kernels for aligned rows, long rows, rows with wide gaps, single rows and batches. Its
    tile shrinks until the GPU has steps for every SM, and every choice can run. Without room
    for x's phase copies: with it, rows of 48 bytes up take them from 12-72 MB (next test)."""
    run(SHORT_ROWS_PAST_STREAM + SHORT_ROWS_RULE + """
    import math
    buf = pygemv.empty(1 << 22, "float16")
    base = buf.ptr
    def pick(m, k, dtype, lda=None, a_off=0, **kw):
        kw.setdefault("workspace_bytes", 0)
        return pygemv.select_config(m, k, dtype, lda=lda or k, a_ptr=base + a_off, x_ptr=base + (1 << 21),
                                    use_table=False, **kw)
    for dtype, es in (("float32", 4), ("float16", 2), ("bfloat16", 2)):
        for m, k, lda, a_off in [(1000000, 9, None, 0), (200000, 105, None, 0), (2400, 1306 // es * 2 + 1, None, 0),
                                 (100000, 64, 65, 0), (100000, 64, None, es), (121410, 35, None, 0)]:
            c = pick(m, k, dtype, lda, a_off)
            if es == 2 and k * es <= 30:  # 16-bit rows of up to 30 bytes: element loads (next test)
                assert (c.variant, c.vector_loads, c.unroll, c.x_in_smem) == ("thread_per_row", 0, 4, True), c
                continue
            if k * es >= 256 and m * (lda or k) * es < (8 << 20):  # the row kernels' own choice
                assert c.variant != "row_stream" and not c.x_in_smem, (dtype, m, k, c)
                continue
            if k * es >= 256 and m >= 2048:  # under 128 MB: realigned rows with x staged (below)
                assert c.variant == "rows_per_warp" and c.vector_loads == 2 and c.x_in_smem, (dtype, m, k, c)
                continue
            if short_rule(lda or k, es):  # rows under 256 bytes: row kernels since s66 (fp32 32-63 bytes stream)
                assert (c.variant, c.threads_per_row, c.vector_loads, c.unroll, c.x_in_smem) == short_rule(lda or k, es), (
                    dtype, m, k, lda, c)
                continue
            assert c.variant == "row_stream" and c.vector_loads == 2 and c.x_in_smem, (dtype, m, k, lda, a_off, c)
            assert pygemv.can_implement(c, m, k, dtype, lda=lda or k, a_ptr=base + a_off)[0]
        # Rows of 256 bytes to 3.5 KB, 2048 and more, under 128 MB: about ten packs a lane (4..16),
        # unroll 2, x staged, or phased rows on 8 lanes (s68; SHORT_ROWS_RULE); from 128 MB the row
        # stream again.
        seen = set()
        for m, k in [(20000, 701), (6770, 1477), (50084, 153), (40000, 129), (4000, 1477), (9000, 1401), (12000, 501),
                     (70000, 111), (45000, 171), (11324, 411), (14347, 301), (40000, 401)]:
            if not 256 <= k * es <= 3584:
                continue
            c = pick(m, k, dtype)
            want = short_rows_rule(m, k, k, es)
            assert (c.variant, c.threads_per_row, c.rows_per_block, c.vector_loads, c.unroll, c.x_in_smem) == want, (
                dtype, m, k, c)
            seen.add(want[1:4])
            ok, why = pygemv.can_implement(c, m, k, dtype, a_ptr=base, x_ptr=base + (1 << 21))
            assert ok, (dtype, m, k, c, why)
        forms = {(8, 32, pygemv.LOADS_PHASED), (4, 32, 2), (8, 32, 2), (16, 8, 2), (16, 16, 2)}
        assert seen == (forms - {(16, 16, 2)} if es == 4 else forms), (dtype, seen)  # fp32: no 16 lanes under 20 MB here
        big = pick((128 << 20) // (701 * es) + 1, 701, dtype)  # 128 MB: fp32 streamed, 16-bit phased
        assert (big.variant == "row_stream") if es == 4 else big.vector_loads == pygemv.LOADS_PHASED, big
        # 16-bit rows of 200-511 bytes from 256 MB: phased, x through L1, 2 lanes a row; shorter
        # rows, smaller matrices and fp32 stream. Rows 8-byte aligned (216 bytes): 8-byte loads,
        # about six a lane.
        c = pick(1296187, 108, dtype)
        assert (c.variant, c.threads_per_row, c.rows_per_block, c.vector_loads, c.unroll) == (
            ("rows_per_warp", 4, 32, pygemv.LOADS_ALIGNED8, 2) if es == 2 else ("rows_per_warp", 8, 16, 1, 2)), c
        # Large matrices of rows 8-byte aligned: 8-byte loads, about six a lane, not phased
        # rows (fp32 16384 x 8194, fp16 16384 x 8196); fp32 rows the stream takes stay streamed.
        k8 = 8194 if es == 4 else 8196
        c = pick(16384, k8, dtype)
        assert (c.variant, c.threads_per_row, c.vector_loads, c.unroll) == (
            "block_per_row", 512 if es == 4 else 256, pygemv.LOADS_ALIGNED8, 2), (dtype, c)
        if es == 4:
            assert pick(282737, 338, dtype).variant == "row_stream"
        for m, k in [(900001, 150), (700001, 201)]:
            c = pick(m, k, dtype)
            if es == 4:  # fp32: not this rule
                assert not (c.vector_loads == pygemv.LOADS_PHASED and not c.x_in_smem), (dtype, m, k, c)
                continue
            assert (c.variant, c.threads_per_row, c.rows_per_block, c.vector_loads, c.unroll, c.x_in_smem) == (
                "rows_per_warp", 2, 64, pygemv.LOADS_PHASED, 2, False), (dtype, m, k, c)
            for other in (pick(m, k, dtype, incx=2), pick(m // 3, k, dtype)):  # strided x; under 256 MB
                assert not (other.vector_loads == pygemv.LOADS_PHASED and not other.x_in_smem), (dtype, m, k, other)
        c = pick(2000003, 45, dtype)  # 90-180 bytes: 2 or 4 lanes of element loads without the workspace
        assert (c.variant, c.threads_per_row, c.vector_loads, c.unroll, c.x_in_smem) == short_rule(45, es), (dtype, c)
        for m, k, lda, a_off, kw in [(100000, 64, None, 0, {}),               # aligned rows
                                     (2000, 3601 // es + 2, None, 0, {}),    # over 3.5 KB
                                     (5000, 64, 80, 0, {}),                  # a gap of a fifth
                                     (1, 1001, None, 0, {}),                 # one row
                                     (100, 105, None, 0, {"batch": 4}),      # batches
                                     (93, 105, None, 0, {}), (4, 257, None, 0, {})]:  # small matrices
            c = pick(m, k, dtype, lda, a_off, **kw)
            assert c.variant != "row_stream", (dtype, m, k, lda, a_off, kw, c)
    assert pick(2000003, 45, "float16", workspace_bytes=1 << 20).variant != "row_stream"  # x's copies
    # Short rows take 128-thread blocks of 16-bit rows, 512 of fp32, 4 packs a thread on a
    # large matrix; a smaller one fewer packs a thread (until the GPU has 2 steps an SM).
    big = pick(1000000, 9, "float16")
    assert (big.threads_per_row * big.rows_per_block, big.unroll, big.threads_per_row) == (128, 4, 1), big
    assert pick(1000000, 9, "float32").threads_per_row * pick(1000000, 9, "float32").rows_per_block == 512
    fewer = pick(200000, 9, "float32")
    assert fewer.variant == "row_stream" and fewer.unroll < 4, fewer
    # Small matrices (at 4 packs a lane, half the GPU's threads) take the row kernels.
    for m, k, dtype in [(12141, 35, "float16"), (100000, 9, "float32"), (67241, 47, "float16")]:
        assert pick(m, k, dtype).variant != "row_stream", (m, k, dtype)
    """)


def test_heuristic_reads_x_phase_copies_for_shorter_misaligned_rows_of_large_matrices():
    """Single products of rows of 48 bytes to 4 KB that do not start 16-byte aligned read x's
    phase copies (phased rows, vector_loads 5) on 2 to 16 lanes a row by its packs, one load
    in flight, where the workspace holds the copies: 16-bit rows from 12 MB under 256 bytes,
    from 24 MB to 511 bytes, from 64 MB longer (rows staged phased rows take); fp32 rows of
    256 bytes up from 72 MB (benchmarks/NOTES.md section 76). Not where staged
    phased rows run 8 lanes (under 64 packs) or a warp (128 to 255 packs), not fp32
    rows of 32-63 bytes (the stream), other rows under 64 bytes (since s66, SHORT_ROWS_PAST_STREAM:
    rows of 64-255 bytes take the copies below these floors too, down to small matrices) or rows under 48 bytes (16-bit rows of up to 30 bytes an
    element a load), 8-byte aligned rows (8-byte
    loads), smaller matrices, batches, or without a workspace."""
    run(SHORT_ROWS_PAST_STREAM + """
    buf = pygemv.empty(1 << 22, "float16")
    base = buf.ptr
    def pick(m, k, dtype, **kw):
        return pygemv.select_config(m, k, dtype, lda=k, a_ptr=base, x_ptr=base + (1 << 21), use_table=False, **kw)
    X, PHASED = pygemv.LOADS_PHASED_X_COPIES, pygemv.LOADS_PHASED
    MB = 1 << 20
    def rows(mb, k, es):  # the rows of a matrix just past mb MB
        return mb * MB // (k * es) + 1
    for dtype, es, k, p in [("float16", 2, 27, 2), ("bfloat16", 2, 45, 2), ("float16", 2, 107, 4), ("float16", 2, 163, 4),
                            ("bfloat16", 2, 251, 8), ("float16", 2, 509, 8),
                            ("bfloat16", 2, 2047, 16), ("float32", 4, 65, 4), ("float32", 4, 251, 8),
                            ("float32", 4, 599, 16), ("float32", 4, 1021, 16)]:
        row = k * es
        # fp32 rows of 32-79 packs: phased on 8 lanes up to 128 MB (s69, SHORT_ROWS_RULE)
        least = (128 if 32 <= -(-row // 16) < 80 else 72) if es == 4 else 64 if row >= 512 else 24 if row >= 256 else 12
        c = pick(rows(least, k, es), k, dtype)
        assert (c.variant, c.threads_per_row, c.rows_per_block, c.vector_loads, c.unroll, c.x_in_smem) == (
            "rows_per_warp", p, 128 // p, X, 1, False), (dtype, k, c)
        assert pygemv.can_implement(c, rows(least, k, es), k, dtype, a_ptr=base, x_ptr=base + (1 << 21))[0]
        if not 64 <= row < 256:  # 2 MB fewer (rows of 64-255 bytes: the copies since s66, SHORT_ROWS_PAST_STREAM)
            assert pick(rows(least, k, es) - 2 * MB // row, k, dtype).vector_loads != X, (dtype, k)
        assert pick(rows(least, k, es), k, dtype, workspace_bytes=0).vector_loads != X, (dtype, k)
        assert pick(rows(least, k, es) // 300 + 1, k, dtype, batch=300).vector_loads != X, (dtype, k)
    for dtype, es in (("float16", 2), ("bfloat16", 2), ("float32", 4)):
        for k in ((13,) if es == 2 else (7, 9, 31, 53)):  # 16-bit rows of up to 30 bytes read an element a load (s61);
            c = pick(rows(300, k, es), k, dtype)  # fp32 rows under 256 bytes: SHORT_ROWS_PAST_STREAM (s66)
            if es == 2:
                assert (c.variant, c.vector_loads) == ("thread_per_row", 0), (dtype, k, c)
            elif short_rule(k, es, copies=True):
                assert (c.variant, c.threads_per_row, c.vector_loads, c.unroll, c.x_in_smem) == short_rule(k, es, True), (k, c)
            else:  # 32-63 bytes: streamed
                assert (c.variant, c.vector_loads) == ("row_stream", 2), (dtype, k, c)
        # Staged phased rows keep 8 lanes under 64 packs and a warp from 128 to 255 packs.
        for k in ((301, 1023, 1861, 2011) if es == 2 else (971,)):
            c = pick(rows(100, k, es), k, dtype)
            assert (c.vector_loads, c.x_in_smem) == (PHASED, True), (dtype, k, c)
        if es == 2:
            c = pick(rows(48, 509, 2), 509, dtype)  # staged phased rows' rows under 64 MB: a warp a row
            assert (c.vector_loads, c.x_in_smem, c.threads_per_row) == (PHASED, True, 32), c
            assert pick(rows(100, 108, 2), 108, dtype).vector_loads == pygemv.LOADS_ALIGNED8  # 216 bytes
            c = pick(rows(100, 2049, 2), 2049, dtype)  # rows of 4 KB up: a block a row, as before
            assert (c.variant, c.threads_per_row, c.vector_loads) == ("block_per_row", 128, X), c
    """)


def test_heuristic_reads_16_bit_rows_of_80_to_127_packs_on_copies_or_phased_rows():
    """16-bit single products of rows of 80-127 packs that start anywhere (s69,
    mid_rows_16bit_config): from 24 MB to 64 MB x's phase copies on 8 lanes at two in flight,
    from 64 MB to 256 MiB phased rows on 16 lanes with x staged (256-thread blocks). Under 24 MB,
    from 256 MiB, rows of 79 packs (phased on 8 lanes) or 128, rows on 8 bytes, batches, fp32
    and, under 64 MB, no room for the copies keep other reads; every choice can run."""
    run("""
    base = 1 << 32
    X, P = pygemv.LOADS_PHASED_X_COPIES, pygemv.LOADS_PHASED
    MB = 1 << 20
    def pick(m, k, dtype, a_off=2, **kw):
        return pygemv.select_config(m, k, dtype, lda=k, a_ptr=base + a_off, x_ptr=base + (1 << 40),
                                    use_table=False, **kw)
    def form(c):
        return (c.variant, c.threads_per_row, c.rows_per_block, int(c.vector_loads), c.unroll, bool(c.x_in_smem))
    def rows(mb, k, es=2):  # the rows of a matrix just past mb MB
        return mb * MB // (k * es) + 1
    copies, phased = ("rows_per_warp", 8, 16, X, 2, False), ("rows_per_warp", 16, 16, P, 1, True)
    for dtype in ("float16", "bfloat16"):
        for k in (633, 700, 1016):  # 80, 88 and 127 packs (1016: rows in one phase, off 2 bytes)
            for m, want in ((rows(24, k), copies), (rows(64, k) - 2, copies), (rows(64, k), phased),
                            (rows(256, k) - 2, phased)):
                c = pick(m, k, dtype)
                assert form(c) == want, (dtype, m, k, c)
                assert pygemv.can_implement(c, m, k, dtype, a_ptr=base + 2, x_ptr=base + (1 << 40))[0], c
            others = [(rows(24, k) - 2, {}), (rows(256, k), {}), (rows(30, k), dict(workspace_bytes=0)),
                      (rows(30, k) // 2, dict(batch=2, stride_a=(rows(30, k) // 2) * k))]
            if k == 700:  # rows 1400 bytes apart, A on 8 bytes: 8-byte loads
                others.append((rows(30, k), dict(a_off=8)))
            if k == 1016:  # rows 2032 bytes apart, A on 16 bytes: aligned
                others.append((rows(30, k), dict(a_off=0)))
            for m, kw in others:
                c = pick(m, k, dtype, **kw)
                assert form(c) not in (copies, phased), (dtype, m, k, kw, c)
        assert form(pick(rows(30, 632), 632, dtype)) == ("rows_per_warp", 8, 32, P, 1, True)  # 79 packs
        assert form(pick(rows(30, 1017), 1017, dtype)) not in (copies, phased)                # 128 packs
    assert form(pick(rows(30, 317, 4), 317, "float32")) not in (copies, phased)                 # fp32: 80 packs
    """)


def test_heuristic_splits_few_long_rows_into_slices_of_a_load_a_lane():
    """Single products of few rows of more than 2048 packs (s70): rows of under 4096 packs, or up
    to a load a lane of 3 blocks an SM in all (132 SMs: 101376 packs, about 1.6 MB), take slices of
    256 lanes at two in flight, a load a lane or less (loads / 256 slices, a power of two up; 8-byte
    loads count theirs), at most 3 blocks an SM (the SMs' share where that caps it). Rows of under
    4096 packs keep one block a row of 1024 lanes past 24 rows (fewer than 16 slices), or past 8
    rows under 3072 packs. Larger problems keep packs / 256 slices at four in flight, 8 blocks an
    SM; rows of 2048 packs and batches keep theirs."""
    run("""
    base = 1 << 32
    def pick(m, k, dtype, lda=None, a_off=0, **kw):
        return pygemv.select_config(m, k, dtype, lda=lda or k, a_ptr=base + a_off, x_ptr=base + (1 << 40),
                                    use_table=False, **kw)
    def form(c):
        return (c.variant, c.threads_per_row, int(c.vector_loads), c.unroll, c.split_k)
    for dtype, es in (("float32", 4), ("float16", 2), ("bfloat16", 2)):
        e = 16 // es  # elements a pack
        for m, packs, pad, a_off, loads, want in (
                (8, 3459, 63, 0, 2, 16),      # fp16 8 x 27671, lda 27734: one block a row of 1024 before
                (1, 3597, 0, 0, 1, 16), (2, 2049, 0, 0, 1, 16), (3, 8073, 3, 1, 2, 32),
                (1, 7243, 0, 0, 1, 32), (9, 6346, 0, 1, 2, 32),
                (13, 6632, 0, 0, 1, 30),      # 32 slices pass 396 blocks: 396 // 13
                (24, 3954, 0, 0, 1, 16), (8, 2100, 0, 0, 1, 16),
                (2, 50688, 0, 0, 1, 198),    # 101376 packs in all
                (8, 3459, 0, 0, 1, 16)):
            c = pick(m, packs * e, dtype, lda=packs * e + pad, a_off=a_off * es)
            assert form(c) == ("splitk_twopass", 256, loads, 2, want), (dtype, m, packs, pad, a_off, c)
        # 8-byte loads (rows on 8 bytes): twice the loads, twice the slices.
        c = pick(4, 3000 * e, dtype, lda=3000 * e + e // 2)
        assert form(c) == ("splitk_twopass", 256, pygemv.LOADS_ALIGNED8, 2, 32), (dtype, c)
        # Past 24 rows under 4096 packs (fewer than 16 slices), or past 8 under 3072: one block a row.
        assert pick(25, 4095 * e, dtype).variant == "block_per_row"
        assert pick(9, 3071 * e, dtype).variant == "block_per_row" and pick(9, 3072 * e, dtype).split_k == 16
        # 2048 packs: one block a row (two loads a lane).
        assert pick(4, 2048 * e, dtype).variant == "block_per_row"
        # Past 101376 packs in all: packs / 256 slices at four in flight, 8 blocks an SM.
        c = pick(2, 50689 * e, dtype)
        assert form(c) == ("splitk_twopass", 256, 1, 4, 198), (dtype, c)
        c = pick(1, 300000 * e, dtype)
        assert form(c) == ("splitk_twopass", 256, 1, 4, 1024), (dtype, c)
        c = pick(3, 100000 * e, dtype)
        assert form(c) == ("splitk_twopass", 256, 1, 4, 352), (dtype, c)
        # Batches keep theirs: no split under 4096 packs.
        c = pick(1, 3459 * e, dtype, batch=8, stride_a=3459 * e, stride_y=1)
        assert c.variant != "splitk_twopass", (dtype, c)
    """)


# A pick at any lda and offsets of A and x (bytes; trans=True for op T), and its (variant, p,
# loads, unroll, split_k), for the s71 and s72 rules' tests.
PICK_ANY = """
    base = 1 << 32
    R, A1, A8 = pygemv.LOADS_REALIGNED, pygemv.LOADS_ALIGNED, pygemv.LOADS_ALIGNED8
    def pick(m, k, dtype, lda=None, a_off=0, x_off=0, **kw):
        return pygemv.select_config(m, k, dtype, lda=lda or k, a_ptr=base + a_off, x_ptr=base + (1 << 40) + x_off,
                                    use_table=False, **kw)
    def form(c):
        return (c.variant, c.threads_per_row, int(c.vector_loads), c.unroll, c.split_k)
"""


def test_heuristic_s71_rules_for_realigned_rows_and_short_aligned_op_t_rows():
    """The s71 rules (132 SMs). Realigned rows past the s70 cuts (9-26 rows of 2049-3071 packs)
    split into ceil(packs / 256) slices rounded up to even, within 2 blocks an SM; one block a
    row of 1024 realigned lanes keeps one load in flight; realigned single products of 512-4095
    packs a row up to 16 MiB take lanes for half the GPU's threads; fp32 rows on 8 bytes with x
    off 8 bytes, few of them, realign rather than stage x for each row's block. Aligned rows keep
    theirs. op T on more than 2048 aligned rows of up to 48 bytes (up to 1 MiB): 256 slices (a
    lane of packs a row, 64 lanes; element loads since s72)."""
    run(PICK_ANY + """
    for dtype, es in (("float32", 4), ("float16", 2), ("bfloat16", 2)):
        e = 16 // es  # elements a pack
        # (m, packs, want split); A one element off: realigned rows
        for m, packs, split in ((12, 2060, 10), (26, 2049, 10), (9, 3071, 12), (22, 2600, 12)):
            c = pick(m, packs * e, dtype, a_off=es)
            assert form(c) == ("splitk_twopass", 256, R, 2, split), (dtype, m, packs, c)
        # Past 2 blocks an SM (27 x 10 slices), or past 24 rows from 3072 packs: one block a
        # row of 1024 realigned lanes at one in flight; aligned rows keep two.
        for m, packs in ((27, 2049), (25, 3500), (40, 3075), (9, 1500)):
            assert form(pick(m, packs * e, dtype, a_off=es)) == ("block_per_row", 1024, R, 1, 1), (dtype, m, packs)
        assert form(pick(40, 3075 * e, dtype)) == ("block_per_row", 1024, A1, 2, 1), dtype
        assert pick(12, 2060 * e, dtype).variant == "block_per_row"
        # Realigned single products of 512-4095 packs, up to 16 MiB: lanes for half the GPU's
        # threads (270336 / 2 / rows, at most packs / 2, 32 to 1024), whatever the rules gave.
        for m, packs, p in ((400, 1500, 256), (800, 1250, 128), (200, 2750, 512), (1000, 1000, 128),
                            (299, 3500, 256), (2000, 512, 64)):
            c = pick(m, packs * e + 1, dtype, lda=packs * e + 3)
            assert (c.threads_per_row, int(c.vector_loads)) == (p, R), (dtype, m, packs, c)
        # Past 16 MiB the rules before: 300 x 3501 packs (more than 1 << 20)
        c = pick(300, 3500 * e + 1, dtype, lda=3500 * e + 3)
        assert c.threads_per_row == 512, (dtype, c)
    # fp32 rows on 8 bytes, x 4 bytes off: realigned, not 8-byte loads with x staged ...
    c = pick(35, 10606, "float32", lda=10616, a_off=8, x_off=4)
    assert form(c) == ("block_per_row", 1024, R, 1, 1), c
    # ... x on 8 bytes: 8-byte loads, x through the cache
    c = pick(35, 10606, "float32", lda=10616, a_off=8)
    assert (int(c.vector_loads), bool(c.x_in_smem)) == (A8, False), c
    # op T, aligned rows of up to 48 bytes: 256 slices (element loads since s72, below) ...
    for m, k, lda, dtype in ((5262, 6, 20, "float32"), (3737, 12, 12, "float32"), (2049, 4, 4, "float32"),
                             (16048, 17, 24, "float16"), (10000, 24, 24, "bfloat16")):
        c = pick(m, k, dtype, lda=lda, trans=True)
        assert (c.variant, c.split_k) == ("t_splitm_twopass", 256), (m, k, lda, dtype, c)
    # ... 16-bit rows of 2-3 whole packs without gaps a lane of packs a row
    c = pick(10000, 24, "bfloat16", trans=True)
    assert (c.threads_per_row, c.rows_per_block, int(c.vector_loads), c.unroll) == (1, 64, A1, 2), c
    # rows of 64 bytes up of whole packs keep 4-lane tiles
    c = pick(3737, 16, "float32", lda=16, trans=True)
    assert (c.variant, c.threads_per_row, c.rows_per_block, c.split_k) == ("t_splitm_twopass", 4, 64, 128), c
    """)


def test_heuristic_s72_rules_for_realigned_mid_rows_and_short_aligned_op_t_rows():
    """The s72 rules (132 SMs). Realigned single products of 4096-8191 packs a row, 2-32 MiB, up
    to 264 rows (2 blocks of 512 an SM): up to 66 rows 256-lane slices at two in flight, 528 / rows
    of them (a power of two, at most 16); up to 132 rows a block of 1024 lanes at one in flight;
    then a block of 512 at two. Past them, aligned rows and 8192 packs keep the row tiles.
    op T on more than 2048 aligned rows of up to 48 bytes, up to 1 MiB: element loads at four in
    flight on 256 slices, a column a tile of 256 lanes up to 16 bytes, 2 columns of 64 lanes past
    them; 16-bit rows of 2-3 whole packs with no gap keep a lane of packs a row; rows of 49-128
    bytes that end short of a pack read elements too, 8 columns a tile of 32 lanes. op T single
    products of aligned rows with gaps from 64 MiB on up to 3 tiles an SM take 8 slices or more."""
    run(PICK_ANY + """
    for dtype, es in (("float32", 4), ("float16", 2), ("bfloat16", 2)):
        e = 16 // es
        # (m, packs, want); rows of packs * 16 - es bytes, so none starts aligned but the first
        for m, packs, want in ((22, 6500, ("splitk_twopass", 256, R, 2, 16)), (40, 6000, ("splitk_twopass", 256, R, 2, 8)),
                               (66, 4100, ("splitk_twopass", 256, R, 2, 8)), (67, 4100, ("block_per_row", 1024, R, 1, 1)),
                               (132, 8191, ("block_per_row", 1024, R, 1, 1)), (133, 5000, ("block_per_row", 512, R, 2, 1)),
                               (264, 4096, ("block_per_row", 512, R, 2, 1))):
            c = pick(m, packs * e - 1, dtype)
            assert form(c) == want, (dtype, m, packs, c)
        # Rows aligned with x off its pack: realigned too.
        assert form(pick(100, 5000 * e, dtype, x_off=es)) == ("block_per_row", 1024, R, 1, 1), dtype
        # Past 264 rows, at 8192 packs, aligned rows and x: the row tiles.
        for m, packs, kw in ((265, 4096, {}), (100, 8193, {}), (100, 5000, {"lda": 5000 * e})):
            k = packs * e - (0 if kw else 1)
            assert pick(m, k, dtype, **kw).variant == "rows_in_registers", (dtype, m, packs, kw)
        # Under 2 MiB the split rules before (20 x 6500 packs: 2.08 MB).
        assert pick(20, 6500 * e - 1, dtype).split_k != 16, dtype
        # Batches keep theirs.
        c = pick(40, 6000 * e - 1, dtype, batch=2, stride_a=40 * (6000 * e - 1))
        assert form(c) != ("splitk_twopass", 256, R, 2, 8), (dtype, c)
    # op T, aligned rows of up to 48 bytes, more than 2048 of them, up to 1 MiB
    T = lambda m, k, dtype, lda=None: pick(m, k, dtype, lda=lda, trans=True)
    tform = lambda c: (c.variant, c.threads_per_row, c.rows_per_block, int(c.vector_loads), c.unroll, c.split_k)
    for m, k, lda, dtype, want in ((15000, 2, 4, "float32", (1, 256, 0, 4)), (4000, 4, 4, "float32", (1, 256, 0, 4)),
                                   (20000, 5, 8, "float32", (2, 64, 0, 4)), (3737, 12, 12, "float32", (2, 64, 0, 4)),
                                   (30000, 4, 8, "float16", (1, 256, 0, 4)), (4996, 8, 8, "float16", (1, 256, 0, 4)),
                                   (16000, 12, 16, "float16", (2, 64, 0, 4)), (12000, 16, 24, "bfloat16", (2, 64, 0, 4)),
                                   (10000, 16, 16, "float16", (1, 64, A1, 2)), (10000, 24, 24, "bfloat16", (1, 64, A1, 2))):
        c = T(m, k, dtype, lda)
        assert tform(c) == ("t_splitm_twopass",) + want + (256,), (m, k, lda, dtype, c)
    # rows of 49-128 bytes: ending short of a pack element loads on 8-column tiles of 32 lanes,
    # whole packs 4-lane tiles of packs; 2048 rows and fewer, or past 1 MiB, the rules before
    assert tform(T(3737, 13, "float32", 16)) == ("t_splitm_twopass", 8, 32, 0, 4, 256)
    assert tform(T(8000, 30, "float16", 32)) == ("t_splitm_twopass", 8, 32, 0, 4, 256)
    assert tform(T(6000, 56, "float16", 64)) == ("t_splitm_twopass", 4, 64, A1, 2, 128)
    for m, k, dtype in ((2048, 2, "float32"), (70000, 4, "float32")):
        assert tform(T(m, k, dtype))[1:] != (1, 256, 0, 4, 256), (m, k, dtype)
    # op T single products of aligned rows with gaps from 64 MiB on up to 3 tiles an SM (396): 8
    # slices or more; dense rows, more tiles and smaller matrices the rule before
    for m, k, lda, dtype, split in ((1621, 34797, 34848, "bfloat16", 8), (1100, 17399, 17424, "float32", 8),
                                    (3000, 20000, 20008, "bfloat16", 8), (14336, 4096, 4104, "bfloat16", 16),
                                    (3000, 20000, None, "bfloat16", 2), (1621, 34816, None, "float16", 1)):
        assert tform(T(m, k, dtype, lda))[4:] == (4, split), (m, k, dtype, lda)
    assert tform(T(4096, 65536, "float16", 65544)) == ("t_columns", 16, 16, A1, 4, 1)  # 512 tiles
    assert tform(T(2000, 16000, "bfloat16", 16008)) == ("t_splitm_twopass", 16, 16, A1, 4, 4)  # under 64 MiB
    """)


def test_heuristic_reads_x_phase_copies_for_long_misaligned_rows_under_2048_rows():
    """Single products of 256 to 2047 rows of 16 KB and more that do not start 16-byte aligned,
    from 32 MiB, any dtype: phased rows with x's phase copies (block_per_row, vector_loads 5), before
    the row tiles from 2 blocks an SM (264 rows on 132 SMs): 512 lanes a row at 4 loads in flight
    up to 2.75 blocks an SM (363 rows), at 1 up to 3.5 (462); past them 256 lanes at 2, 128 where
    256-lane blocks (8 an SM) pass one wave by under half (1057 to 1583 rows). Under 264 rows of 64
    KB up the row tiles keep them; smaller matrices, shorter rows, aligned rows, batches and no
    workspace keep the other reads."""
    run("""
    base = 1 << 32
    X = pygemv.LOADS_PHASED_X_COPIES
    def pick(m, k, dtype, lda=None, a_off=0, **kw):
        return pygemv.select_config(m, k, dtype, lda=lda or k, a_ptr=base + a_off, x_ptr=base + (1 << 40),
                                    use_table=False, **kw)
    taken = set()
    for dtype, es in (("float32", 4), ("float16", 2), ("bfloat16", 2)):
        for m, k, pad, a_off in ((568, 98449, 0, 2), (1839, 37651, 0, 6), (1141, 21527, 35, 1), (389, 72224, 0, 7),
                                 (1057, 20000, 3, 0), (1583, 20000, 0, 3), (1584, 20000, 0, 3), (1056, 20000, 0, 3),
                                 (300, 30001, 0, 0), (351, 181005, 0, 3), (2047, 8192, 1, 0), (256, 65536, 0, 1),
                                 (363, 40000, 0, 1), (364, 40000, 0, 1), (462, 40000, 0, 1), (463, 40000, 0, 1)):
            c = pick(m, k, dtype, k + pad, a_off * es)
            nbytes = m * (k + pad) * es
            if k * es < 16384 or nbytes < (32 << 20):
                assert not (c.vector_loads == X and c.unroll == 2 and c.threads_per_row in (128, 256)), (dtype, m, k, c)
                continue
            if m < 264 and k * es >= 65536:  # under 2 blocks an SM: row tiles first (tile_config)
                assert c.variant == "rows_in_registers", (dtype, m, k, c)
                continue
            p, u = (512, 4) if 4 * m <= 11 * 132 else (512, 1) if 2 * m <= 7 * 132 else (128 if 1056 < m < 1584 else 256, 2)
            assert (c.variant, c.threads_per_row, c.rows_per_block, c.vector_loads, c.unroll, c.x_in_smem, c.split_k) == (
                "block_per_row", p, 1, X, u, False, 1), (dtype, m, k, c)
            assert pygemv.can_implement(c, m, k, dtype, lda=k + pad, a_ptr=base + a_off * es, x_ptr=base + (1 << 40))[0]
            taken.add((es, p, u))
        # 264 rows of 64 KB take the copies.
        assert pick(264, 65536, dtype, a_off=es).vector_loads == X
        # Aligned rows, a batch, no workspace, 2 MiB short of 32 keep their reads.
        assert pick(568, 98448, dtype).vector_loads != X
        assert pick(568, 98449, dtype, a_off=2 * es, batch=2, stride_a=568 * 98449).vector_loads != X
        assert pick(568, 98449, dtype, a_off=2 * es, workspace_bytes=0).vector_loads != X
        k = 30001
        assert pick((30 << 20) // (k * es), k, dtype, a_off=es).vector_loads != X
    assert taken == {(es, p, u) for es in (4, 2) for p, u in ((128, 2), (256, 2), (512, 4), (512, 1))}, taken
    """)


def test_element_misaligned_pointers_are_refused_before_any_launch():
    run("""
    x = pygemv.empty(4096, "float32"); y = pygemv.empty(64, "float32"); A = pygemv.empty(64 * 64, "float32")
    n0 = fake.gemv_fake_launches()
    for name, kw in [("A", dict(a=A.ptr + 2)), ("x", dict(x=x.ptr + 1)), ("y", dict(y=y.ptr + 2))]:
        args = dict(a=A.ptr, x=x.ptr, y=y.ptr)
        args.update(kw)
        try:
            pygemv.gemv(args["a"], args["x"], args["y"], m=64, k=64, dtype="float32")
        except pygemv.InvalidPointerError as e:
            assert f"{name} = " in str(e) and "not aligned to its 4-byte elements" in str(e), e
        else:
            raise AssertionError(name + ": no error")
    assert fake.gemv_fake_launches() == n0
    # Any element-aligned offset runs.
    pygemv.gemv(A.ptr + 4, x.ptr + 12, y.ptr + 4, m=63, k=63, lda=64, dtype="float32")
    assert fake.gemv_fake_launches() > n0
    no_violations()
    """)


# ---- a user's table adds to the shipped one -----------------------------------------------------

def test_user_table_adds_to_the_shipped_one(tmp_path):
    """The stand-in library copied beside a tables/ folder, as a wheel installs it."""
    lib = tmp_path / "lib"
    (lib / "tables").mkdir(parents=True)
    so = lib / "libgemv_hostcheck.so"
    shutil.copy(hostcheck_lib.library(), so)
    C = Config
    write_table(lib / "tables" / "h100.gemvtable", H100, [
        Entry("float16", 4096, 4096, C("block_per_row", 128, 1, 1, 2), 20.0, 22.0),
        Entry("float16", 64, 64, C("rows_per_warp", 4, 32, 1, 1), 2.0, 2.1),
        Entry("float32", 4096, 4096, C("block_per_row", 256, 1, 1, 2), 40.0, 41.0),
    ])
    write_table(tmp_path / "cache" / "pygemv" / "tables" / "mine.gemvtable", H100, [
        Entry("float16", 4096, 4096, C("warp_per_row", 32, 4, 1, 2), 19.0, 22.0),   # wins over the shipped
        Entry("float16", 16384, 128, C("rows_per_warp", 8, 16, 1, 1), 3.0, 3.5),     # a shape the shipped lacks
    ])
    run("""
    st = pygemv.table_status(0)
    assert st.source == "user" and st.entries == 2, st
    assert st.fill_source == "shipped" and st.fill_entries == 2 and st.fill_path.endswith("h100.gemvtable"), st
    assert st.sources == {"user": 2, "shipped": 2}, st.sources
    buf = pygemv.empty(1 << 22, "float16")
    pick = lambda m, k, dtype: pygemv.select_config(m, k, dtype, a_ptr=buf.ptr, x_ptr=buf.ptr, use_table=True)
    assert pick(4096, 4096, "float16").variant == "warp_per_row"          # the user's entry
    assert pick(16384, 128, "float16").threads_per_row == 8               # the user's only
    assert pick(64, 64, "float16").threads_per_row == 4                   # the shipped fills in
    assert pick(4096, 4096, "float32").threads_per_row == 256             # another dtype: shipped
    """, env={"PYGEMV_LIBRARY": str(so), "XDG_CACHE_HOME": str(tmp_path / "cache")})
    # Without a user table: the shipped one alone.
    run("""
    st = pygemv.table_status(0)
    assert st.source == "shipped" and st.entries == 3 and st.fill_source == "none" and st.sources == {"shipped": 3}
    """, env={"PYGEMV_LIBRARY": str(so), "XDG_CACHE_HOME": str(tmp_path / "empty")})
    # $GEMV_TABLE names one table: it alone decides (no fill).
    run(f"""
    st = pygemv.table_status(0)
    assert st.source == "env" and st.fill_source == "none", st
    """, env={"PYGEMV_LIBRARY": str(so), "GEMV_TABLE": str(tmp_path / "cache" / "pygemv" / "tables")})


def test_heuristic_reads_a_misaligned_x_beside_aligned_rows_of_64_lanes_and_more_unstaged():
    """Single op N products of aligned rows on 64 lanes and more, x contiguous but not 16-byte
    aligned: x's phase copies where the rows' lanes pass one wave of 1024 threads an SM (the
    stand-in's 132 SMs: 135168 threads), else x realigned through L1, both one load in flight,
    x never staged (NOTES 78); fp32 copies of rows up to 4096 packs on 128 lanes (NOTES 79).
    Rows of fewer lanes keep x staged; an aligned x, a strided x,
    batches, rows that do not start aligned and a workspace too small for the copies do not
    take this rule."""
    run("""
    buf = pygemv.empty(1 << 24, "float32")
    base = buf.ptr
    def pick(m, k, dtype="float32", x_off=4, incx=1, lda=None, a_off=0, b=1, ws=pygemv.WORKSPACE_RECOMMENDED_BYTES):
        c = pygemv.select_config(m, k, dtype, lda=lda or k, a_ptr=base + a_off, x_ptr=base + (1 << 25) + x_off,
                                 incx=incx, use_table=False, batch=b, stride_a=m * (lda or k), stride_x=k, stride_y=m,
                                 workspace_bytes=ws)
        return (str(c.variant), c.threads_per_row, int(c.vector_loads), c.unroll, int(c.x_in_smem), c.split_k)
    for dtype, es in (("float32", 4), ("float16", 2), ("bfloat16", 2)):
        for x_off in range(es, 16, es):
            # 4096 x 14336 (128-512 lanes, 524288 threads and more): copies; 1024 x 1024 (128 lanes,
            # 131072 threads): realigned.
            assert pick(4096, 14336, dtype, x_off)[2:] == (5, 1, 0, 1), (dtype, x_off)
            assert pick(1024, 1024, dtype, x_off)[2:] == (2, 1, 0, 1), (dtype, x_off)
        for m, k in ((296, 9792), (16384, 16384), (2621, 600 if es == 4 else 1200), (3000, 3000)):
            c = pick(m, k, dtype)
            assert c[0] == "block_per_row" and c[2:] == (5, 1, 0, 1), (dtype, m, k, c)
            # past the wave on the aligned problem's lanes; fp32 rows of up to 4096 packs then
            # read the copies on at most 128 lanes (as rows that start anywhere read them)
            assert (c[1] <= 128) if es == 4 else (m * c[1] > 135168), (dtype, m, k, c)
        for m, k in ((230, 392), (17, 6016), (256, 12288 if es == 2 else 6016), (121, 9288)):
            c = pick(m, k, dtype)
            assert c[0] == "block_per_row" and c[2:] == (2, 1, 0, 1) and m * c[1] <= 135168, (dtype, m, k, c)
        # The same rows with x aligned: 16-byte loads of x, whatever the lanes.
        assert pick(4096, 14336, dtype, 0)[2] == 1 and pick(230, 392, dtype, 0)[2] == 1
        # Fewer lanes a row (short rows, 4-64 rows a block) keep x staged.
        assert pick(60557, 436 if es == 4 else 256, dtype)[4] == 1
        # Not this rule: a strided x, a batch, rows that start anywhere, no room for the copies.
        assert pick(4096, 14336, dtype, incx=2)[2] != 5
        assert pick(64, 4096, dtype, b=64)[2] != 5
        assert pick(4096, 14336, dtype, ws=0)[2:] == (2, 1, 0, 1)
    """)


def test_heuristic_gives_fp32_rows_of_8_to_32_kb_about_16_packs_a_lane():
    """Single fp32 products of aligned rows of 512 to 2048 packs, x aligned: pow2_floor(packs /
    16) lanes, at least a warp, two loads in flight (NOTES 78: 512 lanes spent a block's
    reduction on each row). Longer rows, 16-bit rows and a misaligned x keep their lanes."""
    run("""
    buf = pygemv.empty(1 << 22, "float32")
    base = buf.ptr
    def pick(m, k, dtype="float32", x_off=0, b=1):
        c = pygemv.select_config(m, k, dtype, a_ptr=base, x_ptr=base + (1 << 21) + x_off, use_table=False, batch=b,
                                 stride_a=m * k, stride_x=k, stride_y=m)
        return (str(c.variant), c.threads_per_row, int(c.vector_loads), c.unroll, c.split_k)
    assert pick(60000, 2048) == ("warp_per_row", 32, 1, 2, 1)    # 512 packs: a warp
    assert pick(128256, 4096) == ("block_per_row", 64, 1, 2, 1)  # 1024 packs: 64 lanes (2048 packs: 128)
    assert pick(20000, 6144) == ("block_per_row", 64, 1, 2, 1)
    assert pick(28672, 8192) == ("block_per_row", 128, 1, 2, 1)
    assert pick(16384, 16384)[1] == 512                          # 4096 packs: as before
    assert pick(128256, 4096, "float16")[1] == 128               # 16-bit rows: as before
    assert pick(128256, 4096, x_off=4)[1:3] == (128, 5)          # a misaligned x: copies on 128 lanes
    """)
