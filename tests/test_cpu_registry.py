"""The variant registry and its legality rules (can_implement), without a GPU."""
import pytest

import pygemv
from pygemv import Config

A = 0x10000  # 16-byte aligned addresses; alignment is all can_implement reads


def ok(config, m=64, k=64, dtype="float16", **kw):
    return pygemv.can_implement(config, m, k, dtype, **kw)[0]


def test_registry_is_complete_and_consistent():
    vs = pygemv.variants()
    assert [v.id for v in vs] == list(range(len(vs)))
    assert len({v.name for v in vs}) == len(vs)
    assert {v.name for v in vs} >= {"thread_per_row", "rows_per_warp", "warp_per_row", "block_per_row",
                                    "splitk_atomic", "splitk_twopass"}
    for v in vs:
        lo, hi = v.threads_per_row
        assert lo & (lo - 1) == 0 and hi & (hi - 1) == 0 and lo <= hi
        # q_mma: a warp per 16 rows; q_mma_x_held: steps of x held a warp
        assert v.unrolls == {"q_mma": (1,), "q_mma_x_held": (1, 2), "q_block_rows": (1, 2),
                             "q_mma_rounds": (1, 2)}.get(v.name, (1, 2, 4))
        assert v.needs_workspace == (v.split_k[1] > 1)  # every operation that splits takes a workspace
        # Quantized weights: fp16/bf16 activations (the scales' type), int4 and int8.
        assert v.dtypes == {"q_rows": ("float16", "bfloat16"), "q_mma": ("float16",),
                            "q_mma_x_held": ("float16", "bfloat16"), "q_block_rows": ("float16", "bfloat16"),
                            "q_mma_rounds": ("float16", "bfloat16"), "row_mma": ("float16", "bfloat16")}.get(
            v.name, ("float32", "float16", "bfloat16"))
        assert v.weight_bits == {"q_rows": (4, 8), "q_mma": (4,), "q_mma_x_held": (4, 8), "q_block_rows": (8,),
                                 "q_mma_rounds": (4,)}.get(v.name, ())
        assert v.batched == (v.name not in ("row_stream", "q_rows", "q_mma", "rows_in_registers", "q_mma_x_held", "q_block_rows",
                                            "q_mma_rounds"))
        # op T reads x as a broadcast, row tiles as packs, q_mma_x_held into registers,
        # q_block_rows, q_mma_rounds and row_mma in place
        assert v.stages_x == (v.op == "N" and v.name not in ("rows_in_registers", "q_mma_x_held", "q_block_rows",
                                                            "q_mma_rounds", "row_mma"))
    # Each op has its operations; filtering by op and weights partitions the registry.
    assert {v.name for v in pygemv.variants("T")} == {"t_columns", "t_splitm_twopass", "t_stream"}
    assert {v.name for v in pygemv.variants("N", quantized=True)} == {"q_rows", "q_mma", "q_mma_x_held", "q_block_rows",
                                                                      "q_mma_rounds"}
    assert len(pygemv.variants("N")) + len(pygemv.variants("T")) + len(pygemv.variants("N", quantized=True)) == len(vs)
    with pytest.raises(ValueError, match="op: expected 'N' or 'T'"):
        pygemv.variants("C")
    assert pygemv.variant("splitk_twopass").deterministic
    assert not pygemv.variant("splitk_atomic").deterministic
    # The strategies of the field, by threads per row.
    assert pygemv.variant("thread_per_row").threads_per_row == (1, 1)
    assert pygemv.variant("rows_per_warp").threads_per_row == (2, 16)
    assert pygemv.variant("warp_per_row").threads_per_row == (32, 32)
    assert pygemv.variant("block_per_row").threads_per_row == (64, 1024)


def test_every_enumerated_config_is_valid_and_blocks_are_whole_warps():
    total = 0
    for v in pygemv.variants():
        configs = list(v.configs())
        assert configs, v.name
        for c in configs:
            # q_mma_x_held: a block of p threads walks rows_per_block tiles
            threads = c.threads_per_row * (1 if v.name == "q_mma_x_held" else c.rows_per_block)
            assert 32 <= threads <= (512 if c.unroll == 4 else 1024)
            # (The quantized operations take no dense problem: their legality is test_cpu_quantized's.)
            dtype = "float32" if "float32" in v.dtypes else v.dtypes[0]  # row_mma: 16-bit
            assert v.weight_bits or pygemv.can_implement(c, 256, 256, dtype, trans=v.op == "T")[0] or c.x_in_smem
            assert v.stages_x or not c.x_in_smem
        total += len(configs)
    assert total > 1000


def test_values_outside_the_ranges_are_rejected():
    assert not pygemv._registry.validate(Config("warp_per_row", 16, 8))
    assert not pygemv._registry.validate(Config("block_per_row", 2048, 1))
    assert not pygemv._registry.validate(Config("rows_per_warp", 3, 8))
    assert not pygemv._registry.validate(Config("thread_per_row", 1, 16))   # < 32 threads: not whole warps
    assert not pygemv._registry.validate(Config("warp_per_row", 32, 32, unroll=4))
    assert pygemv._registry.validate(Config("warp_per_row", 32, 32, unroll=2))
    assert not pygemv._registry.validate(Config("splitk_twopass", 32, 8, split_k=1))
    assert not pygemv._registry.validate(Config("splitk_twopass", 32, 8, split_k=2000))
    with pytest.raises(ValueError, match="no variant"):
        Config("nope", 32, 8).to_c()


def test_vector_loads_need_aligned_rows():
    c = Config("warp_per_row", 32, 8, vector_loads=True)
    assert ok(c, k=64, lda=64)
    assert not ok(c, k=63, lda=63)                     # fp16 rows of 126 bytes
    assert ok(c, k=63, lda=64)                         # padded rows are fine
    assert ok(c, k=63, lda=63, dtype="float32") is False
    assert not ok(c, a_ptr=A + 2)                      # base pointer off by one fp16
    assert ok(Config("warp_per_row", 32, 8, vector_loads=False), k=63, lda=63, a_ptr=A + 2)
    reason = pygemv.can_implement(c, 64, 64, "float16", a_ptr=A + 2)[1]
    assert "16-byte aligned" in reason


def test_vector_loads_of_x_need_contiguous_aligned_x_unless_staged():
    c = Config("warp_per_row", 32, 8, vector_loads=True)
    assert not ok(c, incx=2)
    assert not ok(c, incx=-1)
    assert not ok(c, x_ptr=A + 4)
    staged = Config("warp_per_row", 32, 8, vector_loads=True, x_in_smem=True)
    assert ok(staged, incx=2) and ok(staged, incx=-3) and ok(staged, x_ptr=A + 2)


def test_x_in_smem_is_bounded_by_shared_memory():
    staged = Config("warp_per_row", 32, 8, x_in_smem=True)
    assert ok(staged, k=24576, dtype="float16")       # 48 KB
    assert not ok(staged, k=24577, dtype="float16")
    assert not ok(staged, k=12289, dtype="float32")
    # Split-K stages only its slice.
    sk = Config("splitk_twopass", 32, 8, x_in_smem=True, split_k=4)
    assert ok(sk, k=4 * 12288, dtype="float32")
    assert not ok(sk, k=4 * 12288 + 64, dtype="float32")
    # Kernels of more than 32 threads a row keep 128 bytes of their own in shared memory:
    # their slice of x gets the rest (a full 48 KB slice failed to launch: fp32 326x49147,
    # split 4, found by the held-out check).
    for wide in (Config("block_per_row", 128, 1, x_in_smem=True),
                 Config("splitk_twopass", 256, 1, x_in_smem=True, split_k=4)):
        split = wide.split_k
        assert ok(wide, k=split * (24576 - 64), dtype="float16")
        assert not ok(wide, k=split * 24576, dtype="float16")
    assert not ok(Config("splitk_twopass", 256, 1, unroll=4, x_in_smem=True, split_k=4), k=49147, dtype="float32")


def test_phased_rows_rules():
    """vector_loads = 3: any row alignment, x staged in the rows' phase (a pack more of
    shared memory) or read through L1 (incx == 1), two threads a row or more, single
    products."""
    P = pygemv.LOADS_PHASED
    c = Config("warp_per_row", 32, 8, P, 2, True)
    assert ok(c, k=63, lda=63) and ok(c, a_ptr=A + 2) and ok(c, k=63, lda=63, dtype="float32")
    assert ok(c, incx=-3) and ok(c, x_ptr=A + 2)
    assert ok(c, k=24576 - 7, dtype="float16") and not ok(c, k=24576 - 6, dtype="float16")
    assert ok(c, k=12288 - 3, dtype="float32") and not ok(c, k=12288 - 2, dtype="float32")
    l1 = Config("warp_per_row", 32, 8, P, 2, False)  # x through L1: contiguous x, any phase, any K
    assert ok(l1, k=63, lda=63) and ok(l1, x_ptr=A + 2) and ok(l1, k=1 << 20, dtype="float32")
    assert not ok(l1, incx=2) and not ok(l1, incx=-1)
    # Its slices' packs are counted in 32 bits: at most 2^32 elements a slice.
    assert ok(l1, m=1, k=1 << 32, dtype="float16") and not ok(l1, m=1, k=(1 << 32) + 8, dtype="float16")
    assert ok(Config("splitk_twopass", 64, 2, P, 2, False, 2), m=1, k=(1 << 32) + 8, dtype="float16")
    assert "incx == 1" in pygemv.can_implement(l1, 64, 64, "float16", incx=3)[1]
    assert not pygemv._registry.validate(Config("thread_per_row", 1, 64, P, 2, True))  # one thread a row
    assert not pygemv._registry.validate(Config("row_stream", 4, 32, P, 2, True))
    assert pygemv._registry.validate(Config("splitk_twopass", 64, 2, P, 2, True, 3))
    assert not ok(c, batch=4, stride_a=64 * 64, stride_x=0, stride_y=64)
    why = pygemv.can_implement(Config("thread_per_row", 1, 64, P, 2, True), 64, 64, "float16")[1]
    assert "2 threads a row or more" in why
    assert any(cfg.vector_loads == P for cfg in pygemv.variant("block_per_row").configs())


def test_row_tile_rules():
    """rows_in_registers: 16-byte packs of A and of a contiguous x (aligned, or realigned for
    rows and x at any phase), x never staged, at most 4 packs in flight a thread (rows *
    unroll), 32..512 threads, single products, a workspace only when K is split."""
    R, AL = pygemv.LOADS_REALIGNED, pygemv.LOADS_ALIGNED
    valid = pygemv._registry.validate
    assert valid(Config("rows_in_registers", 128, 4, R, 1, False, 64))
    assert valid(Config("rows_in_registers", 512, 1, R, 4, False, 1))
    assert not valid(Config("rows_in_registers", 128, 4, R, 2, False, 64))  # 8 packs in flight
    assert not valid(Config("rows_in_registers", 64, 2, R, 4, False, 64))
    assert not valid(Config("rows_in_registers", 1024, 1, R, 1, False, 64))  # at most 512 threads
    assert not valid(Config("rows_in_registers", 128, 8, R, 1, False, 64))   # at most 4 rows a tile
    assert not valid(Config("rows_in_registers", 128, 4, R, 1, True, 64))    # x is never staged
    assert not valid(Config("rows_in_registers", 128, 4, 0, 1, False, 64))   # packs only
    assert not valid(Config("rows_in_registers", 128, 4, 3, 1, False, 64))
    c = Config("rows_in_registers", 128, 4, R, 1, False, 64)
    assert ok(c, k=100003, lda=100003) and ok(c, a_ptr=A + 2) and ok(c, x_ptr=A + 6, dtype="float16")
    assert not ok(c, incx=2) and not ok(c, incx=-1)
    assert "incx == 1" in pygemv.can_implement(c, 64, 100003, "float16", incx=3)[1]
    assert not ok(c, batch=4, stride_a=64 * 64, stride_x=64, stride_y=64)
    a = Config("rows_in_registers", 128, 4, AL, 1, False, 64)
    assert ok(a, k=65536) and not ok(a, k=65535, lda=65535, dtype="float16") and not ok(a, x_ptr=A + 2, dtype="float16")
    # Partials: M x slices fp32, the slices counted in 16-byte slots of a row (with its phase).
    assert pygemv.workspace_size(c, 48, 23714, "float32") == 48 * 64 * 4  # 5930 slots in 64 slices of 93
    assert pygemv.workspace_size(c, 48, 100, "float32") == 48 * 26 * 4  # 26 slots: fewer slices run
    assert pygemv.workspace_size(Config("rows_in_registers", 128, 4, R, 1, False, 1), 48, 23714, "float32") == 0


def test_an_operation_serves_only_its_op():
    n, t = Config("warp_per_row", 32, 8), Config("t_columns", 32, 8, True, 2)
    assert ok(n) and not ok(n, trans=True)
    assert ok(t, trans=True) and not ok(t)
    assert "computes op T" in pygemv.can_implement(t, 64, 64, "float16")[1]
    assert "computes op N" in pygemv.can_implement(n, 64, 64, "float16", trans=True)[1]


def test_column_operations_rules():
    t = Config("t_columns", 32, 8, True, 2)
    # 16-byte packs need every row aligned; K itself may be anything (a partial last pack).
    assert ok(t, k=63, lda=64, trans=True) and not ok(t, k=63, lda=63, trans=True)
    assert not ok(t, a_ptr=A + 2, trans=True)
    assert ok(Config("t_columns", 32, 8, False, 2), k=63, lda=63, a_ptr=A + 2, trans=True)
    # Realigned packs (cut from two aligned ones): rows that start anywhere, in both operations.
    R = pygemv.LOADS_REALIGNED
    for r in (Config("t_columns", 32, 8, R, 2), Config("t_splitm_twopass", 16, 16, R, 4, False, 4)):
        assert ok(r, k=63, lda=63, a_ptr=A + 2, trans=True) and ok(r, k=64, trans=True)
        assert ok(r, k=63, lda=67, a_ptr=A + 6, trans=True, batch=3, stride_a=64 * 67 + 3, stride_x=64, stride_y=63)
    assert "vector_loads = 2 takes rows that start anywhere" in pygemv.can_implement(t, 63, 63, "float16", trans=True)[1]
    # 8-byte packs and x's phase copies are row-kernel paths.
    for loads in (pygemv.LOADS_ALIGNED8, pygemv.LOADS_PHASED_X_COPIES):
        assert not pygemv._registry.validate(Config("t_columns", 32, 8, loads, 2))
    # Phased rows in one pass (lane classes): rows that start anywhere, batches too, each row
    # lane one phase class, so the lanes are a multiple of the rows' phase period (fp16: 8
    # for odd lda, 4 for lda = 2 mod 4; fp32: 4 for odd lda) or at least the rows (a row a
    # lane, its own class), and two threads a tile or more (a tile writes c - 1 packs of
    # columns); no workspace.
    P = pygemv.LOADS_PHASED
    lc = Config("t_columns", 32, 8, P, 2)
    assert ok(lc, k=63, lda=63, a_ptr=A + 2, trans=True) and ok(lc, k=64, trans=True)
    assert ok(lc, k=63, lda=63, a_ptr=A + 6, trans=True, batch=3, stride_a=64 * 63 + 1, stride_x=64, stride_y=63)
    four = Config("t_columns", 32, 4, P, 2)
    assert not ok(four, k=63, lda=63, trans=True) and ok(four, k=62, lda=62, trans=True)
    assert ok(four, m=4, k=63, lda=63, trans=True) and ok(four, m=3, k=63, lda=63, a_ptr=A + 2, trans=True)
    assert not ok(four, m=5, k=63, lda=63, trans=True)
    assert ok(four, m=4, k=63, lda=63, trans=True, batch=3, stride_a=4 * 63 + 1, stride_x=4, stride_y=63)
    assert ok(four, k=63, lda=63, trans=True, dtype="float32") and ok(four, k=62, lda=66, trans=True)
    assert not pygemv._registry.validate(Config("t_columns", 1, 64, P, 2))
    assert pygemv._registry.validate(Config("t_splitm_twopass", 1, 64, P, 2, False, 4))  # a slice a class
    # Split-M's phased rows: lane classes where the lanes are a multiple of the period (4
    # slices of 1024 rows here: 4 partials of K), else a slice a phase class (one chunk of
    # 8 classes: 8 partials).
    assert pygemv.workspace_size(Config("t_splitm_twopass", 16, 8, P, 2, False, 4), 4096, 1001, "float16",
                                 trans=True, lda=1001) == 4 * 1001 * 4
    assert pygemv.workspace_size(Config("t_splitm_twopass", 16, 4, P, 2, False, 4), 4096, 1001, "float16",
                                 trans=True, lda=1001) == 8 * 1001 * 4
    assert pygemv.workspace_size(Config("t_splitm_twopass", 16, 4, P, 2, False, 4), 4096, 1001, "float32",
                                 trans=True, lda=1001) == 4 * 1001 * 4
    assert ok(Config("t_columns", 2, 64, P, 2), k=63, lda=63, trans=True, incx=-3, x_ptr=A + 2)
    why = pygemv.can_implement(four, 64, 63, "float16", lda=63, trans=True)[1]
    assert "multiple of the rows' phase period 8, or at least m (lda = 63; rows_per_block = 4, m = 64)" in why
    assert pygemv.workspace_size(lc, 4096, 1001, "float16", trans=True, lda=1001) == 0
    assert any(cfg.vector_loads == P for cfg in pygemv.variant("t_columns").configs())
    # x is read as a broadcast: any stride, any alignment; never staged.
    assert ok(t, incx=-3, x_ptr=A + 2, trans=True)
    assert not pygemv._registry.validate(Config("t_columns", 32, 8, True, 2, x_in_smem=True))
    # Batches: every product's rows aligned too.
    assert ok(t, trans=True, batch=3, stride_a=64 * 64)
    assert not ok(t, trans=True, batch=3, stride_a=64 * 64 + 1)
    # Split-M: slices of whole lane steps; its workspace is slices x K x batch floats.
    sm = Config("t_splitm_twopass", 32, 8, True, 2, split_k=4)
    assert pygemv.workspace_size(sm, 4096, 1000, "float16", trans=True) == 4 * 1000 * 4
    assert pygemv.workspace_size(sm, 4096, 1000, "float16", trans=True, batch=3) == 4 * 1000 * 3 * 4
    # 40 rows, lane steps of 8 x 2 = 16 rows: 4 slices asked, 3 real ones (16, 16, 8 rows).
    assert pygemv.workspace_size(sm, 40, 10, "float32", trans=True) == 3 * 10 * 4
    assert pygemv.workspace_size(Config("t_columns", 32, 8), 4096, 1000, "float16", trans=True) == 0


def test_batched_row_operations_rules():
    # A staged x serves every row of a block, which may span products: one x only.
    staged = Config("warp_per_row", 32, 8, True, 1, x_in_smem=True)
    assert ok(staged, batch=4, stride_x=0)
    assert not ok(staged, batch=4, stride_x=64)
    assert "stride_x == 0" in pygemv.can_implement(staged, 64, 64, "float16", batch=4, stride_x=64)[1]
    # 16-byte loads need every product's rows and x aligned.
    vec = Config("warp_per_row", 32, 8, True, 1)
    assert ok(vec, batch=4) and not ok(vec, batch=4, stride_a=64 * 64 + 4)
    assert not ok(vec, batch=4, stride_x=68)
    # Split-K partials: one a row of every product.
    two = Config("splitk_twopass", 256, 1, split_k=4)
    assert pygemv.workspace_size(two, 100, 4096, batch=5) == 4 * 100 * 5 * 4
    at = Config("splitk_atomic", 256, 1, split_k=4)
    assert pygemv.workspace_size(at, 100, 4096, "float32", batch=5) == 100 * 5 * 4  # no atomics into a batch of y


def test_workspace_sizes():
    two = Config("splitk_twopass", 256, 1, split_k=4)
    assert pygemv.workspace_size(two, 100, 4096) == 4 * 100 * 4
    # Slices are multiples of 8 elements: 10 slices of K = 20 give 3 real slices.
    assert pygemv.workspace_size(Config("splitk_twopass", 32, 8, split_k=10), 7, 20) == 3 * 7 * 4
    at = Config("splitk_atomic", 256, 1, split_k=4)
    assert pygemv.workspace_size(at, 100, 4096, "float32") == 0       # atomics straight into y
    assert pygemv.workspace_size(at, 100, 4096, "bfloat16") == 100 * 4  # fp32 accumulator
    assert pygemv.workspace_size(Config("warp_per_row", 32, 8), 100, 4096) == 0
    assert pygemv.workspace_size(None, 100, 4096) == pygemv.WORKSPACE_RECOMMENDED_BYTES


def test_row_mma_gathers_an_x_off_its_packs_into_the_workspace():
    """row_mma reads x in aligned packs: an x at any offset, increment or products' stride is
    gathered first, contiguous, K elements a product (one where the batch shares x), into the
    workspace; in place it needs none. A's rows, products and K stay whole aligned packs."""
    mma = Config("row_mma", 32, 4, pygemv.LOADS_ALIGNED, 2)
    for dtype in ("float16", "bfloat16"):
        ws = lambda **kw: pygemv.workspace_size(mma, 296, 112, dtype, a_ptr=A, **kw)
        assert ws(x_ptr=A) == 0 and ws(x_ptr=A, batch=8, stride_a=296 * 112, stride_x=112) == 0
        assert ws(x_ptr=A + 2) == 112 * 2 and ws(x_ptr=A, incx=3) == 112 * 2 and ws(x_ptr=A, incx=-1) == 112 * 2
        assert ws(x_ptr=A + 6, batch=8, stride_a=296 * 112, stride_x=112) == 8 * 112 * 2
        assert ws(x_ptr=A, batch=8, stride_a=296 * 112, stride_x=115) == 8 * 112 * 2   # products' x off their packs
        assert ws(x_ptr=A + 2, batch=8, stride_a=296 * 112, stride_x=0) == 112 * 2      # one x for the batch
        for kw in (dict(x_ptr=A + 2), dict(x_ptr=A, incx=-2), dict(x_ptr=A, batch=3, stride_a=296 * 112, stride_x=113)):
            assert ok(mma, 296, 112, dtype, a_ptr=A, **kw), kw
        assert not ok(mma, 296, 112, dtype, a_ptr=A + 2, x_ptr=A)  # A off its packs
        assert not ok(mma, 296, 108, dtype, a_ptr=A, x_ptr=A)      # K of 216 bytes


def test_8_byte_loads_rules():
    """vector_loads = 4: op N row kernels on rows (and an unstaged x) 8-byte aligned, any
    product count."""
    E = pygemv.LOADS_ALIGNED8
    c = Config("rows_per_warp", 4, 32, E, 2)
    assert ok(c, k=108, lda=108) and ok(c, k=64, lda=68) and ok(c, k=2, dtype="float32", lda=2)
    assert ok(c, a_ptr=A + 8) and ok(c, x_ptr=A + 8)
    assert not ok(c, k=107, lda=107) and not ok(c, k=64, lda=66) and not ok(c, k=3, lda=3, dtype="float32")
    assert not ok(c, a_ptr=A + 4, dtype="float32") and not ok(c, a_ptr=A + 2)
    assert not ok(c, x_ptr=A + 4, dtype="float32") and not ok(c, incx=2)
    staged = Config("rows_per_warp", 4, 32, E, 2, True)
    assert ok(staged, x_ptr=A + 2) and ok(staged, incx=-3)  # x staged: any x
    assert ok(c, k=108, lda=108, batch=3, stride_a=64 * 108 + 4, stride_x=112, stride_y=64)
    assert not ok(c, k=108, lda=108, batch=3, stride_a=64 * 108 + 2, stride_x=112, stride_y=64)
    assert not ok(c, k=108, lda=108, batch=3, stride_a=64 * 108, stride_x=110, stride_y=64)
    why = pygemv.can_implement(c, 64, 107, "float16")[1]
    assert "vector_loads = 4" in why and "8-byte aligned" in why
    assert ok(Config("splitk_twopass", 64, 2, E, 2, False, 3), m=4, k=4100, lda=4100)
