"""Quantized weights without a GPU: the numpy references of the formats (our layout, GPTQ,
AWQ) against hand-written fixtures and each other, the descriptor's and the entry points'
argument checks and status codes, the registry's rules for q_rows, the heuristic, and
every launch plan (quantized GEMV and conversions) on the stand-in CUDA runtime."""
from __future__ import annotations

import ctypes
import textwrap

import numpy as np
import pytest

import pygemv
import quant_reference as qr
from hostcheck_lib import run
from pygemv import _lib

# ---- the formats, in numpy -------------------------------------------------------------


def test_awq_nibble_order_by_hand():
    # Columns 0..7 hold the values 0..7: nibble i holds column AWQ_ORDER[i], so the word reads
    # 0x75316420 (nibble 0 lowest), and unpacking reads nibbles 0, 4, 1, 5, 2, 6, 3, 7.
    codes = np.arange(8, dtype=np.uint8)[:, None]  # M = 8 rows (columns of qweight), K = 1
    qweight, _ = qr.awq_pack(codes, np.zeros((8, 1), np.int64))
    assert qweight.view(np.uint32)[0, 0] == 0x75316420
    back, _ = qr.awq_unpack(qweight, qweight)
    assert np.array_equal(back[:, 0], np.arange(8))


def test_gptq_packing_by_hand():
    # K = 8 rows of qweight per int4 word, low nibble first; v1 zeros store zero - 1.
    codes = np.array([[1, 2, 3, 4, 5, 6, 7, 8]] * 8, np.uint8)  # M = 8, K = 8
    zeros = np.full((8, 1), 5)
    qweight, qzeros = qr.gptq_pack(codes, zeros, 4)
    assert qweight.shape == (1, 8) and qweight.view(np.uint32)[0, 0] == 0x87654321
    assert qzeros.shape == (1, 1) and qzeros.view(np.uint32)[0, 0] == 0x44444444
    q8, _ = qr.gptq_pack(codes, zeros, 8)
    assert q8.shape == (2, 8) and q8.view(np.uint32)[0, 0] == 0x04030201


@pytest.mark.parametrize("bits", [4, 8])
def test_checkpoint_packers_round_trip_and_agree(bits):
    rng = np.random.default_rng(bits)
    m, k, G = 64, 256, 2
    codes = rng.integers(0, 2**bits, (m, k), dtype=np.uint8)
    zeros = rng.integers(1, 2**bits, (m, G))
    for offset in (1, 0):
        qw, qz = qr.gptq_pack(codes, zeros, bits, zero_offset=offset)
        c, z = qr.gptq_unpack(qw, qz, bits, zero_offset=offset)
        assert np.array_equal(c, codes) and np.array_equal(z, zeros)
    if bits == 4:
        aw, az = qr.awq_pack(codes, zeros)
        c, z = qr.awq_unpack(aw, az)
        assert np.array_equal(c, codes) and np.array_equal(z, zeros)
    words = qr.pack_rows(codes[:, :250], bits)
    assert words.shape[1] * 4 % 16 == 0  # rows padded to whole 16-byte packs
    assert np.array_equal(qr.unpack_rows(words, bits, 250), codes[:, :250])


@pytest.mark.parametrize("mode", qr.MODES)
@pytest.mark.parametrize("bits", [4, 8])
def test_reference_quantizer_rounds_to_nearest(bits, mode):
    """Every value lands within half a step of its dequantized value (no clamping inside
    a group's range), and the codes stay in range."""
    rng = np.random.default_rng(3)
    W = qr.round_to(rng.standard_normal((16, 200)), "float16")
    for gs in (32, 128, None):
        codes, S, Z = qr.quantize(W, bits, gs, mode, "float16")
        assert codes.max() < 2**bits
        D = qr.dequantize(codes, S, Z, bits, gs, mode)
        g = np.arange(200) // (gs or 200)
        err = np.abs(D - W) / S[:, g]
        # Half a step but where a scale rounded down pushes a group's extreme past the grid.
        assert err.max() <= 1.0 and np.mean(err <= 0.5 + 1e-3) > 0.99, (gs, err.max())


# ---- argument checks of the C entry points (real library, no GPU needed) ------------------

def qmatrix(bits=4, group=128, mode=1, dtype=1, m=64, k=256) -> _lib.QMatrix:
    q = _lib.QMatrix()
    assert _lib.load().gemv_qmatrix_init(ctypes.byref(q), bits, group, mode, dtype, m, k) == 0
    q.qweight, q.scales, q.zeros = 4096, 8192, 12288  # placeholders: the value checks come first
    return q


def last_error() -> str:
    return _lib.load().gemv_last_error().decode()


@pytest.mark.parametrize("args, needle", [
    ((3, 128, 1, 1), "bits = 3"), ((4, 48, 1, 1), "group_size = 48"), ((4, 2048, 1, 1), "group_size = 2048"),
    ((4, 128, 3, 1), "zero_mode = 3"), ((4, 128, 1, 0), "dtype = 0"),
])
def test_qmatrix_init_names_the_bad_field(args, needle):
    q = _lib.QMatrix()
    assert _lib.load().gemv_qmatrix_init(ctypes.byref(q), *args, 64, 256) == 1
    assert needle in last_error()


def test_qmatrix_init_gives_the_tight_layout():
    q = qmatrix(4, 128, 1, 1, 100, 7392)
    assert (q.ldq, q.lds, q.ldz) == (-(-7392 // 32) * 16, 58, 58)
    q = qmatrix(8, 0, 0, 2, 3, 17)
    assert (q.ldq, q.lds, q.ldz, q.group_size) == (32, 1, 0, 0)


@pytest.mark.parametrize("field, value, status, needle", [
    ("ldq", 100, 1, "ldq = 100"), ("ldq", 64, 1, "ldq = 64"), ("lds", 1, 1, "lds = 1"), ("ldz", 1, 1, "ldz = 1"),
    ("m", -1, 1, "m = -1"), ("qweight", 0, 2, "W->qweight is NULL"), ("qweight", 4104, 2, "16-byte aligned"),
    ("scales", 0, 2, "W->scales is NULL"), ("zeros", 0, 2, "W->zeros is NULL"), ("scales", 8193, 2, "2-byte"),
])
def test_quantized_gemv_checks_the_descriptor(field, value, status, needle):
    q = qmatrix()
    setattr(q, field, value)
    st = _lib.load().gemv_quantized(ctypes.byref(q), 1.0, 256, 1, 0.0, 512, 1, None, 0, None)
    assert st == status, last_error()
    assert needle in last_error()


def args_for(q, **kw):
    a = _lib.Args(0, q.dtype, q.m, q.k, 1.0, 0.0, None, q.k, 256, 1, 512, 1, None, 0, None, 0, 1, 0, 0, 0,
                  ctypes.addressof(q))
    for k_, v in kw.items():
        setattr(a, k_, v)
    return a


@pytest.mark.parametrize("change, needle", [
    (dict(op=1), "GEMV_OP_N only"), (dict(batch=2), "single products"), (dict(dtype=2), "W->dtype"),
    (dict(m=63), "W is 64 x 256"), (dict(A=4096), "A must be NULL"),
])
def test_gemv_ex_with_qweight_checks_the_problem(change, needle):
    q = qmatrix()
    a = args_for(q, **change)
    assert _lib.load().gemv_ex(ctypes.byref(a), None) == 1
    assert needle in last_error()


def test_quick_returns_need_no_device_and_the_rest_says_there_is_none():
    lib = _lib.load()
    q = qmatrix(m=0)
    assert lib.gemv_quantized(ctypes.byref(q), 1.0, None, 1, 0.0, None, 1, None, 0, None) == 0
    q = qmatrix()
    assert lib.gemv_quantized(ctypes.byref(q), 0.0, None, 1, 1.0, 512, 1, None, 0, None) == 0  # alpha 0, beta 1
    st = lib.gemv_quantized(ctypes.byref(q), 1.0, 256, 1, 0.0, 512, 1, None, 0, None)
    assert st == 6 and "no usable CUDA driver" in last_error()  # this CPU machine: the no-GPU message


@pytest.mark.parametrize("call, needle", [
    (lambda lib, q: lib.gemv_repack_gptq(ctypes.byref(qmatrix(mode=0)), 64, 64, 64, None, 1, None), "integer zeros"),
    (lambda lib, q: lib.gemv_repack_gptq(ctypes.byref(qmatrix(k=250)), 64, 64, 64, None, 1, None), "multiple of 8"),
    (lambda lib, q: lib.gemv_repack_awq(ctypes.byref(qmatrix(bits=8)), 64, 64, 64, None), "AWQ checkpoints are int4"),
    (lambda lib, q: lib.gemv_repack_awq(ctypes.byref(qmatrix(m=60)), 64, 64, 64, None), "multiple of 8"),
    (lambda lib, q: lib.gemv_quantize(ctypes.byref(q), 64, 255, None), "lda = 255"),
    (lambda lib, q: lib.gemv_dequantize(ctypes.byref(q), 64, 100, None), "ldo = 100"),
])
def test_conversions_check_their_arguments(call, needle):
    assert call(_lib.load(), qmatrix()) == 1
    assert needle in last_error()


def test_gptq_perm_is_written_only_from_g_idx():
    q = qmatrix()
    q.perm = 65536
    assert _lib.load().gemv_repack_gptq(ctypes.byref(q), 64, 64, 64, None, 1, None) == 1
    assert "perm must be NULL without g_idx" in last_error()
    q.perm = None
    assert _lib.load().gemv_repack_gptq(ctypes.byref(q), 64, 64, 64, 64, 1, None) == 2
    assert "W->perm is NULL" in last_error()


def test_python_checks_name_the_argument():
    with pytest.raises(ValueError, match="zero_point"):
        pygemv.QuantizedMatrix(4, 64, bits=4, group_size=32, zero_point="asym", dtype="float16")
    with pytest.raises(ValueError, match="bits"):
        pygemv.QuantizedMatrix(4, 64, bits=3, group_size=32, zero_point="int", dtype="float16")
    with pytest.raises(ValueError, match="group_size"):
        pygemv.QuantizedMatrix(4, 64, bits=4, group_size=96, zero_point="int", dtype="float16")
    with pytest.raises(TypeError, match="float32 scales"):
        pygemv.QuantizedMatrix(4, 64, bits=4, group_size=32, zero_point="int", dtype="float32")
    with pytest.raises(TypeError, match="to_device"):
        pygemv.quantize(np.zeros((4, 64), np.float16))
    from pygemv._quant import _infer_group
    assert _infer_group(4096, 32) == 128 and _infer_group(7392, 58) == 128 and _infer_group(100, 1) is None
    with pytest.raises(ValueError, match="group_size="):
        _infer_group(4096, 3)


# ---- the registry, the heuristic and the launch plans (stand-in CUDA runtime) ------------

def test_q_rows_legality_and_workspace():
    lib = _lib.load()
    q = qmatrix(m=64, k=7392)
    a = args_for(q)
    c = pygemv.Config("q_rows", 8, 32, pygemv.LOADS_ALIGNED, 4, True, 3).to_c()
    assert lib.gemv_check_config(ctypes.byref(c), ctypes.byref(a)) == 0, last_error()
    assert lib.gemv_workspace_size(ctypes.byref(c), ctypes.byref(a)) == 64 * 3 * 4
    c.split_k = 1
    assert lib.gemv_workspace_size(ctypes.byref(c), ctypes.byref(a)) == 0
    for field, value in (("vector_loads", 0), ("vector_loads", 2), ("x_in_smem", 0)):
        bad = pygemv.Config("q_rows", 8, 32, pygemv.LOADS_ALIGNED, 4, True, 1).to_c()
        setattr(bad, field, value)
        assert lib.gemv_check_config(ctypes.byref(bad), ctypes.byref(a)) == 1
        assert "q_rows takes vector_loads in {1} and x_in_smem = 1" in last_error()
    # Dense operations refuse quantized weights, and q_rows refuses a dense A.
    dense = pygemv.Config("warp_per_row", 32, 8, pygemv.LOADS_ALIGNED, 2, False, 1).to_c()
    assert lib.gemv_check_config(ctypes.byref(dense), ctypes.byref(a)) == 3
    assert "quantized weights" in last_error()
    c.split_k = 1
    assert lib.gemv_check_config(ctypes.byref(c), ctypes.byref(pygemv._registry.problem_args(64, 256, "float16"))) == 3


def test_q_mma_reads_x_in_place_only_when_contiguous_aligned_and_in_order():
    lib = _lib.load()
    q = qmatrix(4, 128, 1, 1, 64, 4096)
    unstaged = pygemv.Config("q_mma", 256, 1, pygemv.LOADS_ALIGNED, 1, False, 1).to_c()
    staged = pygemv.Config("q_mma", 256, 1, pygemv.LOADS_ALIGNED, 1, True, 1).to_c()
    assert lib.gemv_check_config(ctypes.byref(unstaged), ctypes.byref(args_for(q))) == 0, last_error()
    assert lib.gemv_workspace_size(ctypes.byref(unstaged), ctypes.byref(args_for(q))) == 0
    for change, needle in ((dict(incx=2), "incx = 1 (got 2)"), (dict(x=256 + 2), "x 16-byte aligned"),
                           (dict(x=256 + 8), "x 16-byte aligned")):
        a = args_for(q, **change)
        assert lib.gemv_check_config(ctypes.byref(unstaged), ctypes.byref(a)) == 3
        assert "x_in_smem = 0 reads x in place" in last_error() and needle in last_error()
        assert lib.gemv_check_config(ctypes.byref(staged), ctypes.byref(a)) == 0, last_error()
    q.perm = 16384
    assert lib.gemv_check_config(ctypes.byref(unstaged), ctypes.byref(args_for(q))) == 3
    assert "perm is set" in last_error()
    assert lib.gemv_check_config(ctypes.byref(staged), ctypes.byref(args_for(q))) == 0, last_error()


def test_q_mma_x_held_reads_x_in_place_and_walks_tiles():
    """q_mma_x_held: int4 of any group size, fp16 or bf16, any zeros; x in place (q_mma's legality and messages); unroll
    1 or 2 steps a warp, 1..64 tiles a block (any count) of threads_per_row threads (no p * rows bound),
    never staged; split slices take the two-pass workspace."""
    lib = _lib.load()
    q = qmatrix(4, 128, 1, 1, 64, 4096)
    ok = lambda c, a: lib.gemv_check_config(ctypes.byref(c.to_c()), ctypes.byref(a))
    C = lambda p, tiles, u, smem, s: pygemv.Config("q_mma_x_held", p, tiles, pygemv.LOADS_ALIGNED, u, smem, s)
    for p, tiles, u, s in ((32, 1, 1, 1), (256, 64, 2, 1), (256, 16, 1, 32), (64, 3, 2, 7), (128, 61, 2, 4)):
        assert ok(C(p, tiles, u, False, s), args_for(q)) == 0, last_error()  # any count of tiles
    for c in (C(256, 65, 1, False, 1), C(256, 0, 1, False, 1), C(512, 1, 1, False, 1), C(256, 4, 4, False, 1),
              C(256, 4, 1, True, 1)):
        assert ok(c, args_for(q)) == 1, c  # tiles, threads, unroll, staging out of range
    a = args_for(q, incx=2)
    assert ok(C(256, 8, 1, False, 1), a) == 3
    assert "q_mma_x_held reads x in place" in last_error() and "incx = 1 (got 2)" in last_error()
    assert ok(C(256, 8, 1, False, 1), args_for(q, x=256 + 2)) == 3 and "x 16-byte aligned" in last_error()
    # int8: fp16 with groups of 64 up (1024 + q is not exact in bf16; a 64-column step in one group)
    for bits, group, mode, dtype in ((8, 0, 0, 1), (8, 128, 1, 1), (8, 64, 2, 1)):
        assert ok(C(128, 8, 2, False, 4), args_for(qmatrix(bits, group, mode, dtype, 64, 4096))) == 0, last_error()
    for bad, needle in ((qmatrix(8, 0, 0, 2, 64, 4096), "got bf16"), (qmatrix(8, 32, 1, 1, 64, 4096), "group_size = 32")):
        assert ok(C(128, 8, 2, False, 4), args_for(bad)) == 3 and "int8 weights in fp16" in last_error() and needle in last_error()
    # bf16, every zero mode and group size (q_mma: fp16, symmetric or integer zeros, groups of 128 up).
    for bits, group, mode, dtype in ((4, 128, 2, 1), (4, 0, 2, 2), (4, 256, 0, 2), (4, 128, 1, 2), (4, 32, 1, 1),
                                     (4, 64, 2, 2)):
        assert ok(C(128, 8, 2, False, 4), args_for(qmatrix(bits, group, mode, dtype, 64, 4096))) == 0, last_error()
    assert ok(pygemv.Config("q_mma", 256, 1, pygemv.LOADS_ALIGNED, 1, False, 1), args_for(qmatrix(4, 128, 2, 1, 64, 4096))) == 3
    assert ok(pygemv.Config("q_mma", 256, 1, pygemv.LOADS_ALIGNED, 1, False, 1), args_for(qmatrix(4, 128, 1, 2, 64, 4096))) == 3
    assert lib.gemv_workspace_size(ctypes.byref(C(256, 8, 1, False, 1).to_c()), ctypes.byref(args_for(q))) == 0
    assert lib.gemv_workspace_size(ctypes.byref(C(256, 8, 1, False, 4).to_c()), ctypes.byref(args_for(q))) == 4 * 64 * 4


PROGRAM = '''
keep = []
rng = np.random.default_rng(SEED)
def q_problem():
    bits = int(rng.choice([4, 8]))
    mode = ["symmetric", "int", "float"][rng.integers(3)]
    group = [32, 64, 128, 1024, None][rng.integers(5)]
    dtype = ["float16", "bfloat16"][rng.integers(2)]
    m = int(2 ** rng.uniform(0, 15))
    k = int(2 ** rng.uniform(0, 15))
    W = pygemv.empty((m, k), dtype)
    Q = pygemv.quantize(W, bits=bits, group_size=group, zero_point=mode)   # the quantize kernel's plan
    inc = int(rng.choice([1, 1, 2]))
    x = pygemv.empty((k * inc,), dtype).view((k,), (inc,))
    y = pygemv.empty((m,), dtype)
    keep.extend([W, Q, x, y])
    return Q, x, y
'''


def test_quantized_plans_are_legal_through_the_api():
    """Random formats and shapes on the stand-in runtime: quantize, the dispatcher's GEMV and
    forced configs of every lane count, rows a thread and split, and dequantize; every plan
    checked against the limits and every address against the buffers' extents."""
    run("SEED = 4\n" + PROGRAM + textwrap.dedent("""
    ran_mma = 0
    for i in range(300):
        keep.clear()
        Q, x, y = q_problem()
        pygemv.gemv(Q, x, y)
        pygemv.gemv(Q, x, y, alpha=0.5, beta=2.0, workspace=(0, 0))   # no workspace: one slice
        p = int(rng.choice([1, 2, 4, 8, 16, 32]))
        u = int(rng.choice([1, 2, 4]))
        teams = max(1, int(rng.choice([32, 128, 512])) // p)
        while p * teams > (512 if u == 4 else 1024):
            teams //= 2
        c = pygemv.Config("q_rows", p, max(teams, 32 // p), 1, u, True, int(rng.choice([1, 2, 5, 64])))
        kw = int(rng.choice([1, 2, 4, 8]))  # K warps a 16-row tile; at most 256 threads a block
        staged = bool(rng.integers(2))  # q_mma stages x or reads it in place
        mma = pygemv.Config("q_mma", 32 * kw, int(rng.choice([1, 4, 8])) // kw or 1, 1, 1, staged, c.split_k)
        for forced in (c, mma):
            try:
                pygemv.gemv(Q, x, y, config=forced)
            except pygemv.InsufficientWorkspaceError:   # slices x rows past the pool's 4 MiB
                assert Q.shape[0] * c.split_k * 4 > pygemv.WORKSPACE_RECOMMENDED_BYTES
            except pygemv.NotSupportedError:            # q_mma: int4, fp16, no float zeros; in place: x contiguous
                assert forced is mma and not (Q.bits == 4 and Q.dtype == "float16" and Q.zero_point != "float"
                                              and (Q.group_size is None or Q.group_size >= 128)
                                              and (staged or x.strides[0] == 1))
            else:
                ran_mma += forced is mma
        out = pygemv.empty(Q.shape, "float32")
        keep.append(out)
        Q.dequantize(out)
    no_violations()
    assert fake.gemv_fake_launches() > 900
    assert ran_mma > 20, ran_mma
    """), timeout=300)


def test_checkpoint_repack_plans_are_legal():
    run("keep = []\n" + textwrap.dedent("""
    class Int32Array:   # an int32 CUDA array for the importers, on the stand-in's memory
        def __init__(self, shape):
            self.buf = pygemv.empty((int(np.prod(shape)) * 2,), "float16")
            self.__cuda_array_interface__ = {"shape": tuple(shape), "typestr": "<i4",
                                             "data": (self.buf.ptr, False), "version": 3}
    for bits, m, k, G in ((4, 64, 4096, 32), (8, 40, 384, 3), (4, 8, 8, 1)):
        per = 32 // bits
        qw, qz = Int32Array((k // per, m)), Int32Array((G, m // per))
        sc = pygemv.empty((G, m), "float16")
        Q = pygemv.QuantizedMatrix.from_gptq(qw, qz, sc, bits=bits)
        keep.append((qw, qz, sc, Q))
        if bits == 4:
            aw, az = Int32Array((k, m // 8)), Int32Array((G, m // 8))
            keep.append(pygemv.QuantizedMatrix.from_awq(aw, az, sc))
    no_violations()
    """), timeout=120)


def test_heuristic_lanes_rows_and_splits():
    """The fitted rule (dispatch.cpp, heuristic_quantized) on the stand-in H100 (132 SMs)."""
    run(textwrap.dedent("""
    lib = _lib.load()
    def pick(bits, m, k, ws=_lib.WORKSPACE_RECOMMENDED_BYTES, dtype=2, mode=1, incx=1, perm=None, group=128):
        q = _lib.QMatrix()
        assert lib.gemv_qmatrix_init(ctypes.byref(q), bits, group, mode, dtype, m, k) == 0
        q.perm = perm
        a = _lib.Args(0, dtype, m, k, 1.0, 0.0, None, k, 256, incx, 512, 1, None, ws, None, 0, 1, 0, 0, 0,
                      ctypes.addressof(q))
        c = _lib.Config()
        assert lib.gemv_select_config_ex(ctypes.byref(a), ctypes.byref(c), None) == 0, lib.gemv_last_error()
        name = pygemv.variant(c.variant).name
        if name == "q_mma_x_held":  # p threads a block walking rows_per_block tiles
            return (name, c.threads_per_row, c.rows_per_block, c.unroll, c.split_k)
        return (name, c.threads_per_row, c.threads_per_row * c.rows_per_block, c.unroll, c.split_k) + (
            (bool(c.x_in_smem),) if name == "q_mma" else ())  # q_mma: staged or in place
    def expect(want, *args, **kw):
        got = pick(*args, **kw)
        assert got[:len(want)] == want, (args, kw, got)
    # int8, x strided, int4 under 2048 rows or of groups under 128: q_rows.
    assert pick(4, 4096, 4096, incx=2) == ("q_rows", 8, 512, 4, 8)
    assert pick(4, 8192, 8192, incx=2) == ("q_rows", 8, 512, 4, 4)
    assert pick(4, 28672, 8192, incx=2) == ("q_rows", 8, 512, 4, 1)
    assert pick(8, 128256, 4096, dtype=1, incx=2) == ("q_rows", 16, 512, 4, 1)
    # int8 (fp16 or bf16, any zeros and groups), x in place, from 1024 rows and 2^21 codes:
    # q_block_rows (rows of 1536 codes up from 8192 rows), 2 rows a block; 256 threads under 2048 rows, 64 from 3072 rows on rows of up
    # to 4096 codes, else 128, at most a row's packs; 2 packs in flight past 2^26 codes; unsplit.
    assert pick(8, 4096, 4096, dtype=1) == ("q_block_rows", 64, 128, 1, 1)
    assert pick(8, 4096, 4096, mode=2) == ("q_block_rows", 64, 128, 1, 1)       # bf16, float zeros
    assert pick(8, 11008, 10944, dtype=1) == ("q_block_rows", 128, 256, 2, 1)   # 120M codes
    assert pick(8, 128256, 4096, dtype=1) == ("q_block_rows", 64, 128, 2, 1)
    assert pick(8, 8192, 8192, dtype=1) == ("q_block_rows", 128, 256, 1, 1)     # 2^26 codes
    assert pick(8, 2048, 4096, dtype=1) == ("q_block_rows", 128, 256, 1, 1)
    assert pick(8, 1024, 8192) == ("q_block_rows", 256, 512, 1, 1)
    assert pick(8, 1024, 2048, dtype=1) == ("q_block_rows", 128, 256, 1, 1)     # 128 packs a row
    assert pick(8, 2048, 1024, dtype=1) == ("q_block_rows", 64, 128, 1, 1)      # 64
    assert pick(8, 2051, 4099, dtype=1)[0] == pick(8, 2051, 4099)[0] == "q_block_rows"  # the GPU test's shape
    assert pick(8, 1023, 4096, dtype=1)[0] != "q_block_rows" and pick(8, 1024, 2047, dtype=1)[0] != "q_block_rows"
    # Rows under 1536 codes from 8192 rows: too little work a block (63577 x 1058 ran 0.68x).
    assert pick(8, 63577, 1058, dtype=1)[0] != "q_block_rows" and pick(8, 54814, 1536, dtype=1)[0] == "q_block_rows"
    assert pick(8, 8191, 1264, dtype=1)[0] == "q_block_rows" and pick(8, 8192, 1264, dtype=1)[0] != "q_block_rows"
    expect(("q_mma_x_held", 128), 8, 11097, 1264, dtype=1)   # there, up to 12288 rows, x held as before
    # int4 in groups of 128 up or one a row (fp16 or bf16, any zeros), x in place, 2048 to 4096
    # rows and 2048 columns (1024 past a tile an SM) up to 2^24 codes: q_mma_rounds, a tile a
    # block of 8 warps, unsplit (tiles of 16 rows: threads_per_row * rows_per_block is 256
    # here). Steps a round by tiles (132 SMs): 2 up to one an SM, 1 up to 1.5 an SM (symmetric
    # zeros 1.3), up to 2 an SM 2 for float or symmetric zeros or rows over 3072 columns (else
    # 1), 1 past 2 (s32).
    assert pick(4, 4096, 4096) == ("q_mma_rounds", 256, 256, 2, 1)            # bf16, integer zeros, 256 tiles
    assert pick(4, 4096, 4096, mode=2) == ("q_mma_rounds", 256, 256, 2, 1)    # bf16, float zeros (tinygemm's)
    assert pick(4, 4096, 4096, dtype=1, mode=0) == ("q_mma_rounds", 256, 256, 2, 1)
    assert pick(4, 3072, 2560, dtype=1, mode=2) == ("q_mma_rounds", 256, 256, 1, 1)   # 192 tiles: 1.45 an SM
    assert pick(4, 3168, 2560, mode=2) == ("q_mma_rounds", 256, 256, 1, 1)            # 198: 1.5 an SM
    assert pick(4, 3184, 2560, mode=2) == ("q_mma_rounds", 256, 256, 2, 1)            # 199, float zeros
    assert pick(4, 3184, 2560) == pick(4, 4096, 3072) == ("q_mma_rounds", 256, 256, 1, 1)  # integer zeros
    assert pick(4, 4096, 3073) == ("q_mma_rounds", 256, 256, 2, 1)                     # over 3072 columns
    assert pick(4, 2736, 3000, mode=0) == ("q_mma_rounds", 256, 256, 1, 1)            # symmetric: 171 tiles
    assert pick(4, 2752, 3000, mode=0) == pick(4, 4096, 2048, mode=0) == ("q_mma_rounds", 256, 256, 2, 1)  # 172
    assert pick(4, 2112, 4096) == ("q_mma_rounds", 256, 256, 2, 1)                     # 132 tiles
    assert pick(4, 2128, 4096) == ("q_mma_rounds", 256, 256, 1, 1)                     # 133
    assert pick(4, 2500, 1024) == pick(4, 4096, 1024, dtype=1) == ("q_mma_rounds", 256, 256, 1, 1)
    assert pick(4, 2112, 2047)[0] != "q_mma_rounds" and pick(4, 2128, 2047)[0] == "q_mma_rounds"
    assert pick(4, 4096, 1023) == ("q_mma_rounds", 256, 256, 1, 1)   # under 1024 columns: regime (f), below
    assert pick(4, 2048, 6144, group=0)[0] == pick(4, 4096, 4096, group=1024)[0] == "q_mma_rounds"
    # Up to a tile an SM, rows over 6144 columns go to x held's small form (s35: 2048 x 8192 7.36
    # against 7.79 us); from there to 1.25 an SM, over 4608 (s31).
    assert pick(4, 2048, 6145, group=0)[0] == pick(4, 2112, 7168)[0] == pick(4, 2128, 4609)[0] == "q_mma_x_held"
    assert pick(4, 4097, 2048) != ("q_mma_rounds", 256, 256, 2, 1)           # one step past 4096 rows (below)
    two_steps = ("q_mma_rounds", 256, 256, 2, 1)   # past 4096 rows only the one-step regime below
    assert pick(4, 8192, 2048, group=1024) != two_steps and pick(4, 5120, 3072) != two_steps
    assert pick(4, 5120, 3072, dtype=1, mode=2) != two_steps
    # Not where the tiles just pass one an SM (133 to 165 of them) on rows over 4608 columns:
    # the SMs with two tiles set the time (2130 x 7000 0.84x in s29, 0.88x at one step in s32);
    # 4600 columns still gain.
    assert pick(4, 2130, 7000)[0] != "q_mma_rounds" and pick(4, 2640, 4609)[0] != "q_mma_rounds"
    assert pick(4, 2130, 2048)[0] == pick(4, 2656, 5000)[0] == pick(4, 2112, 6144)[0] == "q_mma_rounds"
    assert pick(4, 2640, 4000)[0] == pick(4, 2300, 4600)[0] == "q_mma_rounds"
    # Symmetric or integer zeros (fp16 or bf16), 2.25 to 4 tiles an SM (297 to 528 tiles), 1024
    # to 4096 columns: one step a round (three blocks an SM). Float zeros only to 3 tiles an SM
    # (396): they lost at 8192 rows (s29).
    for m, k in [(4768, 2048), (8448, 2048), (8192, 1024), (6144, 4096), (7392, 4096)]:
        assert pick(4, m, k, dtype=1) == pick(4, m, k, dtype=1, mode=0) == ("q_mma_rounds", 256, 256, 1, 1), (m, k)
        assert pick(4, m, k) == pick(4, m, k, mode=0) == ("q_mma_rounds", 256, 256, 1, 1), (m, k)   # bf16
    for dtype in (1, 2):
        assert pick(4, 6336, 2048, dtype=dtype, mode=2) == ("q_mma_rounds", 256, 256, 1, 1)   # 396 tiles
        assert pick(4, 6352, 2048, dtype=dtype, mode=2)[0] != "q_mma_rounds"                  # 397
        assert pick(4, 8192, 2048, dtype=dtype, mode=2)[0] != "q_mma_rounds"
        assert pick(4, 8449, 2048, dtype=dtype)[0] != "q_mma_rounds"
    # Past those, up to 6 tiles an SM (792), on 1024 columns or 2049 to 4096 (not between: x held
    # keeps x's 9-16 steps in registers there, level or faster), one step: integer and symmetric
    # zeros from 4 tiles an SM; float zeros from 3 on 2177-3072 columns and on 1024 in groups of
    # 32 and 64, else from 4, over 3072 columns to 5 and not in groups of 32, not on 2049-2176 (s34).
    rounds1 = ("q_mma_rounds", 256, 256, 1, 1)
    assert pick(4, 8450, 1024, dtype=1) == pick(4, 12672, 2560, dtype=1) == pick(4, 9500, 2049, mode=0) == rounds1
    # Integer and symmetric zeros (fp16 or bf16, any group) on 2049-4096 columns to 10 tiles an SM
    # (s35: q_mma's formats, 12838 x 2049 9.60 against q_rows' 14.81 us; s36 the rest, bf16 g64
    # 12838 x 2560 11.00 against x held's 12.80); on 1024 columns past 6, x held's larger form
    # (14784 x 1024 5.86 against q_mma's 7.16). Float zeros not past 6.
    assert pick(4, 12688, 2560, dtype=1) == pick(4, 21120, 2049, dtype=1, mode=0) == rounds1
    assert pick(4, 12688, 2560) == pick(4, 21120, 4096, group=32) == pick(4, 16384, 3000, dtype=1, group=64) == rounds1
    assert pick(4, 12688, 2560, mode=2)[0] != "q_mma_rounds" and pick(4, 16384, 3000, mode=2, group=64)[0] != "q_mma_rounds"
    assert pick(4, 21136, 2560, dtype=1)[0] != "q_mma_rounds" and pick(4, 12688, 2048, dtype=1)[0] != "q_mma_rounds"
    assert pick(4, 21136, 4096, group=32)[0] != "q_mma_rounds"
    assert pick(4, 12688, 1024, dtype=1)[:2] == pick(4, 16383, 1024, dtype=1, mode=0)[:2] == ("q_mma_x_held", 128)
    assert pick(4, 9500, 1536, dtype=1)[0] != "q_mma_rounds" and pick(4, 9500, 1025)[0] != "q_mma_rounds"
    assert pick(4, 6750, 2560, mode=2)[:2] == pick(4, 6750, 3072, dtype=1, mode=2)[:2] == ("q_mma_rounds", 128)  # (h), below
    assert pick(4, 9500, 3073, mode=2) == rounds1
    # Float zeros on 3073-4096 columns from 3 to 4 tiles an SM (regime h, s37): 4 warps of 2
    # steps, a wave of 4 blocks an SM (bf16 g128 7600 x 3584 10.24 us against x held's 11.13,
    # 6500 x 3200 8.82 against 9.81; 104 changed cases 1.074x). Not to 3 tiles (8 warps of one
    # step there), past 4, over 4096 columns, on 3072 or fewer, nor integer zeros.
    h = ("q_mma_rounds", 128, 128, 2, 1)
    assert pick(4, 6750, 3073, mode=2) == pick(4, 6337, 3584, mode=2) == pick(4, 8448, 4096, dtype=1, mode=2) == h
    assert pick(4, 7600, 3584, mode=2, group=32) == pick(4, 7600, 3584, mode=2, group=64) == h
    assert pick(4, 6336, 3584, mode=2) == rounds1 and pick(4, 8449, 4096, mode=2) != h
    assert pick(4, 7600, 4097, mode=2)[0] != "q_mma_rounds" and pick(4, 8449, 3072, mode=2) == rounds1
    assert pick(4, 7600, 3584) == pick(4, 7600, 3584, dtype=1, mode=0) == rounds1
    # ... and on 2177-3072 columns (where (d) ran 8 warps of one step: 8000 x 2304 7.25 against
    # 8.36 us), there from 3.02 tiles an SM (6337 x 2560: 397 tiles, 7.29 against 7.67).
    assert pick(4, 7600, 3072, mode=2) == pick(4, 6416, 2265, mode=2) == pick(4, 8448, 2177, mode=2, group=64) == h
    assert pick(4, 6337, 2560, mode=2) == pick(4, 6337, 3072, mode=2) == rounds1 and pick(4, 6337, 3073, mode=2) == h
    assert pick(4, 7600, 2176, mode=2)[0] != "q_mma_rounds"
    # Rows of 4097-8192 columns (regime i, s37; groups of 32 and 64 to 7392) filling 90% or more
    # of a wave of 8-warp blocks of 2 steps (238 to 264 tiles): bf16 float zeros 4096 x 6144 8.58
    # us against x held's 10.12, fp16 4096 x 6144 8.11 against q_mma's 9.46.
    assert pick(4, 3793, 4097) == pick(4, 4224, 8192, mode=2) == pick(4, 4096, 7392, dtype=1, group=32) == two_steps
    assert pick(4, 4096, 6144, dtype=1) == pick(4, 4000, 6000, dtype=1, mode=0, group=64) == two_steps
    assert pick(4, 3792, 6000)[0] != "q_mma_rounds" and pick(4, 4225, 6000)[0] != "q_mma_rounds"
    assert pick(4, 4096, 8193)[0] != "q_mma_rounds" and pick(4, 4096, 7393, group=32)[0] != "q_mma_rounds"
    # Integer and symmetric zeros on 4097-7168 columns from 2.75 to 4 tiles an SM (regime j,
    # s37): 8 warps of one step (fp16 g32 8192 x 7000 16.94 us against x held's 19.31, 7600 x
    # 5000 11.44 against q_mma's 16.48); not on 8192 columns nor under 2.75 tiles an SM.
    assert pick(4, 5825, 4097, dtype=1) == pick(4, 8448, 7168, dtype=1, group=32) == pick(4, 7600, 5000, mode=0) == rounds1
    assert pick(4, 5808, 5000, dtype=1)[0] != "q_mma_rounds" and pick(4, 8449, 5000, dtype=1)[0] != "q_mma_rounds"
    assert pick(4, 7600, 7169, dtype=1)[0] != "q_mma_rounds" and pick(4, 7600, 5000, mode=2)[0] != "q_mma_rounds"
    # Longer rows need more tiles: past 5632 columns groups of 128 from 3.75 tiles an SM (7193 x
    # 7036 lost 2-3%), past 6144 groups of 32 and 64 from 3 (5822 x 6605 lost 2%).
    assert pick(4, 6149, 5632) == pick(4, 7937, 5633) == pick(4, 6353, 6145, group=32) == rounds1
    assert pick(4, 7920, 5633)[0] != "q_mma_rounds" and pick(4, 6336, 6145, group=64)[0] != "q_mma_rounds"
    assert pick(4, 6149, 6144, dtype=1, group=32) == rounds1
    # Groups of 32 to 8192 columns, past 7168 from 3.25 tiles an SM (8192 x 8192 fp16 21.08 ->
    # 19.23 us; 6337 x 8192 lost 2.5%); groups of 64 not (6600 x 8192 0.94x).
    assert pick(4, 8192, 8192, dtype=1, group=32) == pick(4, 6865, 7169, group=32, mode=0) == rounds1
    assert pick(4, 6864, 8192, dtype=1, group=32)[0] != "q_mma_rounds" and pick(4, 8192, 8193, dtype=1, group=32)[0] != "q_mma_rounds"
    assert pick(4, 8192, 7169, dtype=1, group=64)[0] != "q_mma_rounds" and pick(4, 6353, 7168, dtype=1, group=32) == rounds1
    assert pick(4, 7000, 1024, mode=2)[0] != "q_mma_rounds" and pick(4, 7000, 1024, mode=2, group=64) == rounds1
    assert pick(4, 9000, 1024, mode=2) == pick(4, 12672, 1024, mode=2) == rounds1
    assert pick(4, 10576, 4096, mode=2)[0] != "q_mma_rounds" and pick(4, 10576, 4096) == rounds1  # 661 tiles
    assert pick(4, 9500, 4096, mode=2, group=32)[0] != "q_mma_rounds" and pick(4, 9500, 4096, mode=2, group=64) == rounds1
    assert pick(4, 9500, 2176, mode=2)[0] != "q_mma_rounds" and pick(4, 9500, 2177, mode=2) == pick(4, 9500, 2176) == rounds1
    # Under 2048 rows (regime e, s35): 897 to 3072 columns (4096 from 1024 rows), groups of 32
    # and 64 to 2048 (4096 from 1536 rows); up to a tile an SM two steps, but one on 1024 columns
    # or fewer and in groups of 32 and 64 past 1536 (600 x 1024 bf16 float zeros 2.03 us against
    # q_rows' 4.21, 1000 x 2048 2.84 against 4.25).
    assert pick(4, 16, 1024) == pick(4, 600, 1024, mode=2) == pick(4, 2047, 897, dtype=1) == rounds1
    assert pick(4, 1000, 2048, mode=2) == pick(4, 1100, 3072, dtype=1) == pick(4, 1100, 4096, group=0) == two_steps
    assert pick(4, 100, 1536, group=32) == two_steps and pick(4, 100, 2048, group=32) == pick(4, 1536, 4096, group=64) == rounds1
    assert pick(4, 1000, 28672)[:2] == pick(4, 1535, 2049, group=32)[:2] == ("q_mma_x_held", 256)  # long rows, below
    assert pick(4, 600, 1024, incx=2)[0] != "q_mma_rounds"
    # Few tiles on long rows, K split (regime k, s38): up to half a tile an SM (66 tiles) from 20
    # steps, up to 0.75 (99 tiles) from 40, up to 256 steps and 2^24 codes; 4-warp blocks of one
    # step, K in slices of 4 steps, or 8, 12, ... where one wave of 6 blocks an SM (132 SMs: 792
    # blocks) holds no more. x held's small form, q_rows and (e) ran them before (bf16 float
    # zeros 128 x 4096 3.87 -> 2.94 us).
    def split(s):
        return ("q_mma_rounds", 128, 128, 1, s)
    for dtype, mode, g in [(1, 1, 128), (1, 0, 128), (2, 2, 128), (2, 2, 64), (1, 1, 32), (2, 1, 0)]:
        assert pick(4, 880, 4100, dtype=dtype, mode=mode, group=g) == split(9), (dtype, mode, g)  # 33 steps
        # 9 slices of 4 past 4 blocks an SM: 8 warps in 6 of 6 steps (3 blocks an SM)
        assert pick(4, 1000, 4100, dtype=dtype, mode=mode, group=g) == ("q_mma_rounds", 256, 256, 1, 6), (dtype, mode, g)
    assert pick(4, 128, 2433) == split(5) and pick(4, 128, 2432) == two_steps   # 20 steps; 19: (e)
    assert pick(4, 300, 28672) == split(28) and pick(4, 1, 2560) == split(5)    # 19 tiles: slices of 8 steps
    assert pick(4, 1056, 4992) == split(10) and pick(4, 1057, 4992)[0] == "q_mma_x_held"  # 66 tiles (7 of 6: 462 blocks); 67 under 40 steps
    assert pick(4, 720, 6144) == ("q_mma_rounds", 256, 256, 1, 8) and pick(4, 704, 6144) == split(12)  # 45 and 44 tiles
    assert pick(4, 1057, 4993) == split(10) and pick(4, 1584, 5120) == split(5)  # 40 steps: to 99 tiles (of 8 steps)
    assert pick(4, 1585, 5120)[0] == "q_mma_x_held" and pick(4, 1056, 8000) == split(8)  # 100 tiles; 63 steps: 8 of 8
    assert pick(4, 1000, 8192) == split(8) and pick(4, 768, 11008) == split(11)  # slices of 8 steps
    # Groups of 32 within 4.5 blocks an SM (594): 269 x 23141 in 23 slices of 8 steps, not 46 of 4.
    assert pick(4, 269, 23141, dtype=1, group=32) == split(23) and pick(4, 269, 23141, dtype=1) == split(46)
    assert pick(4, 880, 4100, dtype=1, group=32) == split(9) and pick(4, 1056, 4992, dtype=1, group=32) == split(5)
    assert pick(4, 1000, 16777) == split(11) and pick(4, 1000, 16778)[:2] == ("q_mma_x_held", 256)  # 2^24 codes; of 12 steps
    assert pick(4, 1000, 4100, ws=0)[4] == 1 and pick(4, 1000, 4100, incx=2)[0] == "q_rows"  # no workspace: unsplit
    # Rows of 65 to 1023 columns (regime f, s36): one step a round, up to one wave of blocks of 8
    # warps (4 an SM, 3 with float zeros); under 128 columns only whole 16-column packs (2827 x
    # 107 ran 0.88-0.97x). q_rows and q_mma ran them up to 2.8x slower (200 x 640 fp16 g32 5.61
    # against 1.97 us). A warp a block on rows of one step at any size (16384 x 96 1.12-1.53x,
    # 1048576 x 128 1.11-1.52x), two past the wave on two steps to 32 tiles an SM (33000 x 256
    # 1.41-1.70x; float zeros from 6 to 16: one warp taking both steps in a round), four on 3-4
    # steps to 8 tiles an SM.
    def rounds(warps):
        return ("q_mma_rounds", 32 * warps, 32 * warps, 1, 1)
    for m, k in [(16, 256), (2047, 896), (4096, 1000), (4500, 640), (300, 200)]:
        for dtype, mode, g in [(1, 1, 128), (1, 0, 128), (2, 2, 128), (2, 2, 64), (1, 1, 32), (2, 1, 0)]:
            assert pick(4, m, k, dtype=dtype, mode=mode, group=g) == rounds1, (m, k, dtype, mode, g)
    assert pick(4, 100, 128) == pick(4, 512, 80, mode=2) == pick(4, 1048576, 128, dtype=1, group=32) == rounds(1)
    assert pick(4, 3000, 384) == pick(4, 16896, 300) == pick(4, 16896, 512, mode=2) == rounds(4)
    assert pick(4, 16912, 512)[0] != "q_mma_rounds" and pick(4, 16912, 640)[0] != "q_mma_rounds"
    assert pick(4, 8448, 1000) == pick(4, 6336, 255, mode=2) == pick(4, 8448, 200) == rounds1   # 528 and 396 tiles
    assert pick(4, 8464, 1000)[0] != "q_mma_rounds" and pick(4, 6352, 640, mode=2)[0] != "q_mma_rounds"
    assert pick(4, 6352, 255, mode=2) == pick(4, 12672, 200, mode=2) == pick(4, 67584, 256, dtype=1) == rounds(2)
    assert pick(4, 12688, 200, mode=2) == pick(4, 33792, 256, mode=2, group=32) == ("q_mma_rounds", 32, 32, 2, 1)
    assert pick(4, 33808, 200, mode=2)[0] != "q_mma_rounds" and pick(4, 67600, 256, dtype=1)[0] != "q_mma_rounds"
    assert pick(4, 2048, 64)[0] == pick(4, 2827, 107)[0] == pick(4, 1265, 106, mode=2)[0] == "q_rows"
    assert pick(4, 2048, 64, dtype=1)[0] == pick(4, 2827, 107, dtype=1)[0] == "q_mma"
    assert pick(4, 2048, 112) == rounds(1)
    # Past those, on 513 to 896 columns, x held's small form (8 warps of one step, K unsplit) to 6
    # tiles an SM (9462 x 640 bf16 float zeros 4.58 against q_rows' 6.56 us), its larger form
    # beyond (14000 x 640 fp16 4.62 against q_mma's 5.54), as on 257-512 columns past 8 tiles an SM.
    expect(("q_mma_x_held", 256, 2, 1, 1), 4, 9462, 640, mode=2)
    expect(("q_mma_x_held", 128, 2, 2, 1), 4, 14000, 640, dtype=1)
    expect(("q_mma_x_held", 128, 3, 2, 1), 4, 20000, 384, mode=2)
    assert pick(4, 50000, 200, mode=2)[0] == "q_mma_x_held" and pick(4, 200000, 200, dtype=1)[0] == "q_mma_x_held"
    # Huge matrices whose x held slices outgrow the workspace (2^28 codes up, s35): K unsplit,
    # x held's 8 warps of 2 steps up to 16 steps, else rounds at one step.
    assert pick(4, 65536, 16400, dtype=1) == pick(4, 65536, 28672, mode=2) == rounds1
    expect(("q_mma_x_held", 256, 64, 2, 1), 4, 1048576, 1280, mode=2)
    expect(("q_mma_x_held", 256, 64, 2, 1), 4, 1048576, 1280, mode=2, ws=1 << 24)  # 9-16 steps: unsplit anyway
    # 9 to 16 steps past 2^25 codes (s36): x held's small form, K unsplit (262144 x 1280 bf16 74.4
    # us against the larger form's 89.7), to one wave of 64 tiles a block (128 tiles an SM); past
    # it integer and symmetric zeros take rounds at one step up to 200 tiles an SM (400000 x 1280
    # 138.7 against 166.7), float zeros keep the small form (147.7 against 168.1).
    expect(("q_mma_x_held", 256, 63, 2, 1), 4, 262144, 1280, dtype=1, group=32)
    expect(("q_mma_x_held", 256, 5, 2, 1), 4, 20000, 1700)
    assert pick(4, 400000, 1280) == pick(4, 280000, 1536, dtype=1, mode=0) == pick(4, 422400, 2048, group=64) == rounds1
    expect(("q_mma_x_held", 256, 64, 2, 1), 4, 400000, 1280, mode=2)
    expect(("q_mma_x_held", 256, 64, 2, 1), 4, 422416, 1280)
    # Between the two: past 4096 rows up to 297 tiles, 1024 to 4096 columns, every zero mode
    # (x held ran bf16 float zeros 4752 x 2048 at 6.11 us against 4.81, s31); past 264 tiles
    # over 3072 columns float zeros only (integer zeros lost at 4608 x 3584). Steps a round as
    # above: up to 264 tiles 2 for float or symmetric zeros or rows over 3072 columns.
    one_step, two_steps = ("q_mma_rounds", 256, 256, 1, 1), ("q_mma_rounds", 256, 256, 2, 1)
    for m, k in [(4097, 2048), (4752, 2048), (4200, 2560), (4352, 3072), (4400, 1024), (4700, 2047)]:
        for dtype in (1, 2):
            assert pick(4, m, k, dtype=dtype) == one_step, (m, k, dtype)
            for mode in (0, 2):
                assert pick(4, m, k, dtype=dtype, mode=mode) == (two_steps if m <= 4224 else one_step), (m, k, dtype)
    for m, k in [(4224, 3584), (4112, 4096), (4200, 3073)]:
        for mode in (0, 1, 2):
            assert pick(4, m, k, mode=mode) == two_steps, (m, k, mode)
    assert pick(4, 4608, 3584, dtype=1)[0] != "q_mma_rounds" and pick(4, 4352, 3073, dtype=1)[0] != "q_mma_rounds"
    assert pick(4, 4608, 3584, dtype=1, mode=2) == pick(4, 4752, 4096, mode=2) == one_step
    assert pick(4, 4400, 1023, dtype=1) == one_step and pick(4, 4240, 4097, mode=2)[0] != "q_mma_rounds"  # (f)
    assert pick(4, 8192, 4097, dtype=1) == one_step and pick(4, 8192, 1023, dtype=1) == one_step  # (j), (f)
    assert pick(4, 2051, 4099)[0] == "q_mma_rounds"                           # the GPU test's shape
    assert pick(4, 4096, 4097) == two_steps and pick(4, 1023, 4096) == ("q_mma_rounds", 128, 128, 1, 8)  # (i), (k)
    assert pick(4, 4096, 2047)[0] == "q_mma_rounds"
    # Groups of 32 and 64 (2 or 4 groups a step, in B's columns) take the same regimes up to 5632
    # columns (s35; 2048 x 8192 lost 0-13%, s32), integer zeros one step a round from 1.5 tiles an
    # SM whatever the columns (s32), and up to a tile an SM past 1536 columns (s35).
    assert pick(4, 4096, 4096, group=64) == pick(4, 4096, 4096, group=32, dtype=1) == ("q_mma_rounds", 256, 256, 1, 1)
    assert pick(4, 4096, 4096, group=64, mode=2) == pick(4, 4224, 3584, group=32, mode=0) == ("q_mma_rounds", 256, 256, 2, 1)
    assert pick(4, 2048, 4096, group=32) == pick(4, 2100, 5000, group=64, mode=2) == ("q_mma_rounds", 256, 256, 1, 1)
    assert pick(4, 6144, 4096, group=32, mode=2) == pick(4, 8192, 2048, group=64) == ("q_mma_rounds", 256, 256, 1, 1)
    assert pick(4, 2048, 8192, group=32)[0] != "q_mma_rounds" and pick(4, 2048, 5633, group=64)[0] != "q_mma_rounds"
    assert pick(4, 8192, 2048, group=64, mode=2)[0] != "q_mma_rounds"          # float zeros: to 396 tiles
    assert pick(4, 4096, 4096, incx=2)[0] != "q_mma_rounds" and pick(8, 4096, 4096)[0] != "q_mma_rounds"
    assert pick(8, 14336, 4096, dtype=1, incx=2)[0] == "q_rows"             # more rows: q_rows
    # Under 1024 rows, int8 in fp16 keeps x held's rule for smaller matrices.
    expect(("q_mma_x_held", 256, 2, 1, 9), 8, 1000, 4100, dtype=1)          # 65 steps of 64 columns, 9 slices
    expect(("q_mma_x_held", 256, 1, 1, 6), 8, 800, 2688, dtype=1)           # 42 steps, 6 slices
    assert pick(8, 4096, 4096, incx=2)[0] == "q_rows"                       # bf16: no int8 x held
    assert pick(8, 4096, 4096, dtype=1, incx=2)[0] == "q_rows"              # x strided
    # int4 of groups of 128 up in bf16 or with float zeros (which q_mma does not take) from
    # 2048 rows and 2^23 codes: x held in registers (its tiles and slices as in the rule below).
    expect(("q_mma_x_held", 128, 3, 2, 5), 4, 4800, 4224)                   # bf16 past 2^24 codes: 300 tiles
    expect(("q_mma_x_held", 128, 3, 2, 5), 4, 4240, 4224, dtype=1, mode=2)  # fp16, float zeros, past 4096 columns (past regime i)
    expect(("q_mma_x_held", 128, 3, 2, 5), 4, 4800, 4224, mode=2)       # 300 tiles over 105 blocks
    # Long rows on few tiles (s34, s35): under 2048 rows at any size, from 2048 to 4095 rows up to
    # 1.5 tiles an SM to 2^25 codes (groups of 32: 1.1) or past 2^24 codes (not groups of 32),
    # x held's smaller-matrix form (8 warps of one step, slices of 8 steps, 3 blocks an SM);
    # q_rows or q_mma ran them 1.1-2x slower (2008 x 8704 bf16 float zeros 13.97 us against
    # 7.84, fp16 640 x 28672 13.16 against 7.80, 2944 x 6144 9.02 against 7.44, 2300 x 20000
    # 26.83 against 13.67); up to 2^24 codes under 0.75 tiles an SM regime (k) runs them now.
    long_rows = ("q_mma_x_held", 256)
    expect(("q_mma_x_held", 256, 4, 1, 11), 4, 2048, 11008, mode=2)     # 128 tiles, 11 slices
    expect(("q_mma_x_held", 256, 3, 1, 9), 4, 2008, 8704, mode=2)
    for m, k, g in [(2008, 8704, 32), (640, 28672, 128), (1900, 16384, 64), (2944, 6144, 128), (2632, 6272, 128)]:
        for dtype, mode in [(1, 1), (1, 0), (2, 1), (2, 2)]:
            expect(long_rows, 4, m, k, dtype=dtype, mode=mode, group=g)
    expect(("q_mma_x_held", 128), 4, 2632, 6272, mode=2, group=32)      # groups of 32 past 1.1 tiles an SM
    assert pick(4, 2304, 7000, mode=2, group=32)[:2] == long_rows       # 144 tiles
    assert pick(4, 3800, 4400, mode=2)[:2] != long_rows                 # 238 tiles, 2^24 codes
    assert pick(4, 3780, 4440)[:2] == pick(4, 4095, 16384, dtype=1, mode=0)[:2] == long_rows  # past 2^24 (below regime i)
    assert pick(4, 3200, 6272, mode=2, group=32)[:2] != long_rows and pick(4, 4096, 16384, dtype=1)[:2] != long_rows
    assert pick(4, 3132, 16384, mode=2, group=64)[:2] == long_rows                  # float zeros g64 past 2^24
    assert pick(4, 3132, 16384, dtype=1, group=64)[:2] == ("q_mma_x_held", 128)      # integer zeros g64: 0.95x
    assert pick(4, 4000, 6000, mode=2)[:2] != long_rows and pick(4, 3500, 10000, mode=2)[:2] == long_rows  # 2^25
    assert pick(4, 2047, 16400, mode=2)[:2] == pick(4, 512, 131072, dtype=1)[:2] == long_rows  # under 2048 rows past 2^25 codes too
    assert pick(4, 3072, 11008, dtype=1)[:2] == pick(4, 1000, 28672, dtype=1)[:2] == long_rows
    assert pick(4, 100, 65536, mode=2)[:2] == pick(4, 3, 32897, dtype=1)[:2] == long_rows  # under 512 rows too (past regime k)
    assert pick(8, 600, 16384, dtype=1)[0] == pick(8, 1000, 8704, dtype=1)[0] == "q_rows"   # int8: not measured there
    expect(("q_mma_x_held", 128, 8, 2, 8), 4, 8192, 8192)                   # bf16, integer zeros
    expect(("q_mma_x_held", 128, 28, 2, 8), 4, 28672, 8192, mode=2)         # bf16, float zeros
    expect(("q_mma_x_held", 128, 8, 2, 8), 4, 8192, 8192, dtype=1, mode=2)  # fp16, float zeros
    # Smaller int4 matrices (512 rows up, 2^21 codes up), x contiguous: x held, 8 warps a
    # block, K unsplit in 8 to 16 steps (2 steps a warp past 8; up to 2^25 codes), else slices
    # of 8 steps (up to 2^23 codes, not q_mma's formats), the tiles shared out over a wave of
    # 3 blocks an SM at one step, 2 at two.
    expect(("q_mma_x_held", 256, 2, 1, 5), 4, 2000, 4100)                 # 33 steps: 5 slices, 2 tiles a block
    expect(("q_mma_x_held", 256, 3, 2, 1), 4, 9500, 1536, mode=2, group=32)  # groups of 32, 12 steps: one slice
    expect(("q_mma_x_held", 256, 2, 2, 1), 4, 6397, 1219, dtype=1, mode=2)  # 400 tiles over 264 blocks
    expect(("q_mma_x_held", 256, 2, 1, 5), 4, 1536, 4992, mode=2, group=64)  # 96 tiles x 5 slices: 2 a block
    expect(("q_mma_x_held", 256, 2, 1, 1), 4, 8192, 1024, mode=2)         # 8 steps (other zeros: q_mma_rounds)
    expect(("q_mma_x_held", 256, 5, 2, 1), 4, 16960, 1152, dtype=1)       # 9 steps, 1060 tiles
    expect(("q_mma_x_held", 256, 4, 2, 1), 4, 16384, 2048, mode=2)        # 16 steps, 2^25 codes
    expect(("q_mma_x_held", 128, 2, 2, 1), 4, 16384, 1024, mode=2)        # 8 steps past 2^23 codes: below
    expect(("q_rows",), 4, 1000, 4100, incx=2)                            # x strided: the rules below
    # Small matrices (512 rows up, at most 4 MB of codes) the rule above leaves SMs without a
    # block: one row a thread, 4 lanes a row for int4 (8 for int8), 32 rows a block, slices of
    # about two packs a lane, at most 4 blocks an SM.
    expect(("q_rows", 4, 128, 1, 1), 4, 1000, 4100, ws=0)    # no workspace for slices: q_rows unsplit
    expect(("q_rows", 4, 128, 1, 8), 4, 2048, 2048, incx=2)
    assert pick(8, 1024, 4096, dtype=1, incx=2) == ("q_rows", 8, 256, 1, 16)
    assert pick(4, 256, 4096, incx=2)[:4] == ("q_rows", 8, 128, 2)    # fewer rows: the rule above
    assert pick(4, 4096, 2048, incx=2) == ("q_rows", 4, 128, 1, 4)     # 4 MB of codes
    assert pick(4, 4096, 4224, incx=2)[:2] == ("q_rows", 8)            # over 4 MB: the rule above
    expect(("q_mma_rounds", 256, 256, 1, 1), 4, 4096, 2048)             # x contiguous: rounds (16 steps)
    assert pick(4, 8192, 28672, incx=2)[4] >= 3         # x in slices a block stages at once
    assert pick(4, 8192, 28672, ws=0) == ("q_rows", 8, 512, 4, 1)  # no workspace: one slice, staged in chunks
    # fp16 int4, groups of 128 up, symmetric or integer zeros, x contiguous and aligned, 4096
    # rows up and 2^25 codes up (or 16384 rows up): x held in registers, 4 warps of 2 steps, a
    # slice of 8 steps (split = steps / 8), the tiles shared out over one wave (4 blocks an SM).
    expect(("q_mma_x_held", 128, 8, 2, 8), 4, 8192, 8192, dtype=1)          # 64 blocks x 8 slices
    expect(("q_mma_x_held", 128, 11, 2, 4), 4, 21136, 4096, dtype=1)     # past q_mma_rounds' 10 tiles an SM
    expect(("q_mma_x_held", 128, 15, 2, 11), 4, 11008, 10944, dtype=1)      # 86 steps: 11 slices, 48 x 11 blocks
    expect(("q_mma_x_held", 128, 28, 2, 8), 4, 28672, 8192, dtype=1)
    expect(("q_mma_x_held", 128, 16, 2, 16), 4, 8192, 16384, dtype=1)
    expect(("q_mma_x_held", 128, 5, 2, 8), 4, 5003, 7392, dtype=1, mode=0)  # 313 tiles over 66 blocks
    expect(("q_mma_x_held", 128, 61, 2, 4), 4, 128256, 4096, dtype=1)       # 8016 tiles over 132 blocks
    expect(("q_mma_x_held", 128, 64, 2, 16), 4, 65536, 16384, dtype=1)      # past one wave: 64 tiles a block
    expect(("q_mma_x_held", 128, 2, 2, 1), 4, 16384, 1024, dtype=1)         # 16384 rows: 8 steps, one slice
    expect(("q_mma_x_held", 128, 8, 2, 1), 4, 65536, 1024, dtype=1)         # 4096 tiles over 528 blocks
    # Without the workspace for its slices: the rules below (x in place, unsplit).
    expect(("q_mma", 256, 256, 1, 1, False), 4, 8192, 8192, dtype=1, ws=0)
    # Under 2^25 codes, K up to 14336, tiles in near-equal shares (an SM's, or waves): tensor
    # cores reading x in place, a 16-row tile a block, 8 K warps (4 from 24576 rows), unsplit.
    # (Regimes i and j of q_mma_rounds took 4096 x 6144 and 6144 x 5120 from it in s37.)
    expect(("q_mma", 256, 256, 1, 1, False), 4, 5242, 6144, dtype=1)        # past 2^24 codes (q_mma_rounds below)
    expect(("q_mma", 256, 256, 1, 1, False), 4, 5453, 5120, dtype=1, mode=0)
    expect(("q_mma_rounds", 256, 256, 1, 1), 4, 4096, 2048, dtype=1)        # one wave of tiles: rounds
    expect(("q_mma_x_held", 128, 2, 2, 1), 4, 13000, 1024, dtype=1)         # past 6 tiles an SM on 8 steps: x held (s35)
    expect(("q_mma_rounds", 256, 256, 1, 1), 4, 9000, 1024, dtype=1)        # (rounds up to 6 tiles an SM on 1024 columns)
    expect(("q_mma_rounds", 256, 256, 2, 1), 4, 1536, 4096, dtype=1)        # fewer rows: rounds (s35)
    expect(("q_mma_x_held", 256, 6, 1, 16), 4, 2048, 16384, dtype=1)          # 2^25 codes: x held (long rows)
    expect(("q_mma_x_held", 256, 6, 1, 17), 4, 2048, 16512, dtype=1)         # past 2^25 codes too (s35)
    # x strided (or unaligned, or act-order): staged tensor cores up to 12288 rows, 4 warps
    # (64 rows a block), K split into about 512 blocks in all.
    assert pick(4, 4096, 4096, dtype=1, incx=2) == ("q_mma", 32, 128, 1, 8, True)
    assert pick(4, 11008, 10944, dtype=1, incx=2) == ("q_mma", 32, 128, 1, 4, True)
    assert pick(4, 1000, 4100, dtype=1, incx=2) == ("q_mma", 32, 128, 1, 16, True)   # 32 wanted, half the 33 steps
    assert pick(4, 1000, 4100, dtype=1, incx=2, ws=1 << 14)[4] == 4   # as many slices as the workspace holds
    # Act-order (a perm) reads x through it: never in place, even right after the same shape
    # without one (the thread's last choice must not serve it).
    assert pick(4, 8192, 8192, dtype=1)[0] == "q_mma_x_held"
    expect(("q_mma", 32), 4, 8192, 8192, dtype=1, perm=4096)
    assert pick(4, 8192, 8192, dtype=1)[0] == "q_mma_x_held"
    assert pick(4, 28672, 8192, dtype=1, incx=2)[0] == "q_rows"       # more rows: q_rows
    assert pick(4, 8192, 28672, dtype=1, incx=2)[0] == "q_rows"       # a longer K: q_rows
    assert pick(4, 4096, 4096, dtype=1, incx=2, ws=0)[4] == 1
    assert pick(4, 4096, 4096, dtype=1, mode=2, incx=2)[0] == "q_rows"  # float zeros
    q32 = _lib.QMatrix()
    assert lib.gemv_qmatrix_init(ctypes.byref(q32), 4, 32, 1, 1, 28672, 4096) == 0
    a32 = _lib.Args(0, 1, 28672, 4096, 1.0, 0.0, None, 4096, 256, 1, 512, 1, None, 1 << 22, None, 0, 1, 0, 0, 0,
                    ctypes.addressof(q32))
    c = _lib.Config()
    assert lib.gemv_select_config_ex(ctypes.byref(a32), ctypes.byref(c), None) == 0
    # groups of 32 (several a step) past q_mma_rounds' 10 tiles an SM: x held, in B's columns;
    # strided x: q_rows
    assert pygemv.variant(c.variant).name == "q_mma_x_held" and (c.rows_per_block, c.unroll, c.split_k) == (14, 2, 4), (
        pygemv.variant(c.variant).name, c.rows_per_block, c.unroll, c.split_k)
    a32.incx = 2
    assert lib.gemv_select_config_ex(ctypes.byref(a32), ctypes.byref(c), None) == 0
    assert pygemv.variant(c.variant).name == "q_rows"
    """), timeout=60)
