"""Quantized weights on the GPU: quantize, the GPTQ and AWQ repacks and dequantize against the
numpy references (exactly), and the quantized GEMV against the float64 product of the
dequantized matrix within the contract's bound, for every bits x group x zero mode x dtype,
on odd shapes, with poisoned outputs, forced configs, strided vectors and graph capture."""
from __future__ import annotations

import itertools

import numpy as np
import pytest

import pygemv
import quant_reference as qr
from gpu_cases import torch_dtype
from pygemv.bench import error_bound

pytestmark = pytest.mark.gpu

GROUPS = (32, 64, 128, None)
SHAPES = ((37, 300), (1, 1), (3, 4104), (130, 31))


def weights(torch, m, k, dtype, seed):
    g = torch.Generator(device="cuda").manual_seed(seed)
    return torch.randn(m, k, dtype=torch_dtype(torch, dtype), device="cuda", generator=g)


def dense(Q) -> np.ndarray:
    out = Q.dequantize()
    pygemv.synchronize()
    return out.to_numpy()


def check_gemv(torch, Q, D, dtype, *, alpha=1.0, beta=0.0, incx=1, incy=1, config=None, seed=0):
    """Q x against the float64 product of D (the dequantized matrix): poisoned y (beta 0) or
    random y, strided views; the gaps of a strided y are left as they were."""
    m, k = Q.shape
    g = torch.Generator(device="cuda").manual_seed(seed)
    dt = torch_dtype(torch, dtype)
    xs = torch.randn(k * incx, dtype=dt, device="cuda", generator=g)
    ys = torch.randn(m * incy, dtype=dt, device="cuda", generator=g)
    x, y = xs[::incx], ys[::incy]
    if beta == 0:
        y.fill_(float("nan"))
    before = ys.clone()
    y0 = y.double().cpu().numpy()
    pygemv.gemv(Q, x, y, alpha=alpha, beta=beta, config=config)
    torch.cuda.synchronize()
    xd = x.double().cpu().numpy()
    D64 = D.astype(np.float64)
    ref = alpha * (D64 @ xd) + (beta * y0 if beta else 0)
    mag = abs(alpha) * (np.abs(D64) @ np.abs(xd)) + (abs(beta) * np.abs(y0) if beta else 0)
    got = y.double().cpu().numpy()
    bad = ~(np.abs(got - ref) <= error_bound(dtype, k, np.abs(ref), mag))
    assert not bad.any(), f"{Q} {config}: {bad.sum()} of {m} outside the bound, e.g. row {np.argmax(bad)}: " \
                          f"{got[bad][:3]} vs {ref[bad][:3]}"
    if incy > 1:
        mask = torch.ones_like(ys, dtype=torch.bool)
        mask[::incy] = False
        assert torch.equal(ys[mask], before[mask]), "a gap of y was written"


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize("mode", qr.MODES)
@pytest.mark.parametrize("group_size", GROUPS)
@pytest.mark.parametrize("bits", [4, 8])
def test_every_format_quantizes_exactly_and_multiplies_within_the_bound(torch, bits, group_size, mode, dtype):
    for i, (m, k) in enumerate(SHAPES):
        W = weights(torch, m, k, dtype, seed=i)
        Q = pygemv.quantize(W, bits=bits, group_size=group_size, zero_point=mode)
        codes, S, Z = qr.quantize(W.float().cpu().numpy(), bits, group_size, mode, dtype)
        D = qr.dequantize(codes, S, Z, bits, group_size, mode)
        got = dense(Q)
        # The dequantization is exact: bit for bit the reference's fp32 values.
        assert np.array_equal(got, D), f"{Q} {m}x{k}: {np.sum(got != D)} values differ from the numpy quantizer"
        check_gemv(torch, Q, D, dtype, seed=i)
        check_gemv(torch, Q, D, dtype, alpha=-0.75, beta=1.5, seed=i + 100)


@pytest.mark.parametrize("bits", [4, 8])
def test_forced_configs_split_and_chunked_slices_agree(torch, bits):
    """Every rows-a-thread, lanes from 1 to 32, several splits, and K past what shared memory
    stages at once (13000 columns in one slice: x staged a chunk at a time)."""
    for (m, k), mode in zip(((77, 13000), (300, 4100), (5, 70), (1000, 12300)), qr.MODES + ("int",)):
        W = weights(torch, m, k, "float16", seed=k)
        Q = pygemv.quantize(W, bits=bits, group_size=64, zero_point=mode)
        D = dense(Q)
        for p, unroll, split in itertools.product((1, 4, 32), (1, 2, 4), (1, 3, 16)):
            teams = max(1, (512 if unroll == 4 else 256) // p)
            c = pygemv.Config("q_rows", p, teams, pygemv.LOADS_ALIGNED, unroll, True, split)
            check_gemv(torch, Q, D, "float16", config=c, seed=p + unroll)
        if bits == 4 and mode != "float":  # the tensor-core operation (groups of 128 up): tiles x splits
            for gs in (128, 256, None):
                Qm = pygemv.quantize(W, bits=4, group_size=gs, zero_point=mode)
                Dm = dense(Qm)
                for tiles, split in itertools.product((1, 4, 8), (1, 3, 16)):
                    c = pygemv.Config("q_mma", 32, tiles, pygemv.LOADS_ALIGNED, 1, True, split)
                    check_gemv(torch, Qm, Dm, "float16", config=c, seed=tiles + split)
                # K warps a tile (32 each) taking the steps in turn: more warps than steps, a
                # turn's last step past the slice, several tiles a block.
                for p, tiles, split in ((64, 4, 1), (128, 2, 3), (256, 1, 1), (256, 1, 16), (128, 1, 1)):
                    c = pygemv.Config("q_mma", p, tiles, pygemv.LOADS_ALIGNED, 1, True, split)
                    check_gemv(torch, Qm, Dm, "float16", config=c, seed=p + split)
                # x read in place (x_in_smem = 0): each K warp a contiguous range of a slice's
                # steps, partial last steps (x zero past K), more warps than steps.
                for p, tiles, split in ((32, 1, 1), (256, 1, 1), (256, 1, 16), (128, 2, 3), (64, 4, 1), (32, 8, 3)):
                    c = pygemv.Config("q_mma", p, tiles, pygemv.LOADS_ALIGNED, 1, False, split)
                    check_gemv(torch, Qm, Dm, "float16", config=c, seed=p + split + 1)
                c = pygemv.Config("q_mma", 128, 1, pygemv.LOADS_ALIGNED, 1, False, 3)
                check_gemv(torch, Qm, Dm, "float16", alpha=-0.75, beta=1.5, config=c, seed=5)
                # x held in registers: chunks of 1 or 2 steps taken in turn by 1-8 warps, more
                # warps than chunks, a chunk's second step past the slice, a block's last tile
                # past M (clamped rows), blocks of 1-64 tiles (any count), splits.
                for p, tiles, unroll, split in ((32, 1, 1, 1), (256, 4, 1, 1), (256, 64, 2, 1), (64, 4, 2, 3),
                                                (128, 8, 1, 16), (32, 64, 2, 7), (256, 2, 2, 5), (128, 5, 2, 3)):
                    c = pygemv.Config("q_mma_x_held", p, tiles, pygemv.LOADS_ALIGNED, unroll, False, split)
                    check_gemv(torch, Qm, Dm, "float16", config=c, seed=p + tiles + split)
                c = pygemv.Config("q_mma_x_held", 128, 4, pygemv.LOADS_ALIGNED, 2, False, 3)
                check_gemv(torch, Qm, Dm, "float16", alpha=-0.75, beta=1.5, config=c, seed=6)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize("mode", qr.MODES)
def test_block_rows_every_zero_mode_group_and_dtype(torch, dtype, mode):
    """q_block_rows (int8): fp16 and bf16, symmetric, integer and float zeros, groups of 32 to
    256 and one a row, K not a multiple of a pack (the last pack's x read element by element,
    zero past K) nor of a group, a block's last rows past M, blocks of 32 to 256 threads on 1,
    2 or 4 rows, 1 or 2 packs a row in flight (more threads than packs included); NaN-poisoned
    y, alpha and beta; and the dispatcher's own choice on a matrix of its regime."""
    for (m, k), gs in itertools.product(((77, 13000), (301, 4100), (5, 70), (1000, 1667)), (32, 64, 128, 256, None)):
        W = weights(torch, m, k, dtype, seed=m + k + 1)
        Q = pygemv.quantize(W, bits=8, group_size=gs, zero_point=mode)
        D = dense(Q)
        for p, rows, unroll in ((128, 2, 2), (32, 1, 1), (256, 4, 2), (64, 4, 1), (256, 1, 2)):
            c = pygemv.Config("q_block_rows", p, rows, pygemv.LOADS_ALIGNED, unroll, False, 1)
            check_gemv(torch, Q, D, dtype, config=c, seed=p + rows)
        c = pygemv.Config("q_block_rows", 128, 4, pygemv.LOADS_ALIGNED, 2, False, 1)
        check_gemv(torch, Q, D, dtype, alpha=-0.75, beta=1.5, config=c, seed=8)
    W = weights(torch, 2051, 4099, dtype, seed=9)  # the dispatcher's q_block_rows (test_cpu_quantized)
    Q = pygemv.quantize(W, bits=8, group_size=None, zero_point=mode)
    check_gemv(torch, Q, dense(Q), dtype, seed=9)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize("mode", qr.MODES)
def test_rounds_every_zero_mode_group_and_dtype(torch, dtype, mode):
    """q_mma_rounds (int4): fp16 and bf16, symmetric, integer and float zeros (float: a step's
    sum of x by MMAs of an all-ones A), groups of 32 and 64 (several a step, in B's columns),
    128, 256 and one a row, K not a multiple of a pack (the last pack's x read element by
    element, zero past K) nor of a step or a group (a last step of fewer groups),
    M not a multiple of the 16-row tile, 1 to 8 warps a tile (more warps than steps included),
    1 or 2 steps a round, K split into slices (a short last slice, more slices than steps, more
    warps than a slice's steps); NaN-poisoned y, alpha and beta; and the dispatcher's own
    choice on a matrix of its regime."""
    for (m, k), gs in itertools.product(((77, 13000), (301, 4100), (5, 70), (1000, 1667)), (32, 64, 128, 256, None)):
        W = weights(torch, m, k, dtype, seed=m + k + 2)
        Q = pygemv.quantize(W, bits=4, group_size=gs, zero_point=mode)
        D = dense(Q)
        for p, unroll, split in ((256, 2, 1), (32, 1, 1), (128, 2, 1), (64, 1, 1), (256, 1, 1),
                                 (256, 1, 2), (128, 2, 3), (64, 2, 7), (256, 2, 64)):
            c = pygemv.Config("q_mma_rounds", p, 1, pygemv.LOADS_ALIGNED, unroll, False, split)
            check_gemv(torch, Q, D, dtype, config=c, seed=p + unroll + split)
        for split in (1, 3):
            c = pygemv.Config("q_mma_rounds", 128, 1, pygemv.LOADS_ALIGNED, 2, False, split)
            check_gemv(torch, Q, D, dtype, alpha=-0.75, beta=1.5, config=c, seed=8 + split)
    W = weights(torch, 2051, 4099, dtype, seed=10)  # the dispatcher's q_mma_rounds (test_cpu_quantized)
    Q = pygemv.quantize(W, bits=4, group_size=128, zero_point=mode)
    check_gemv(torch, Q, dense(Q), dtype, seed=10)
    for (m, k), gs in (((1000, 4100), 32), ((300, 4999), 128)):  # its regime (k): K in slices of 4 r steps
        Q = pygemv.quantize(weights(torch, m, k, dtype, seed=11), bits=4, group_size=gs, zero_point=mode)
        check_gemv(torch, Q, dense(Q), dtype, alpha=0.5, beta=-1.25, seed=11)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize("mode", qr.MODES)
def test_x_held_every_zero_mode_and_dtype(torch, dtype, mode):
    """q_mma_x_held in fp16 and bf16 with symmetric, integer and float zeros (float zeros as
    s (q . x) + z (sum of x) a group): groups of 32 and 64 (several a step, in B's columns),
    128, 256 and one a row, K not a multiple of the step or the group, NaN-poisoned y, alpha
    and beta, 1 or 2 steps a chunk, splits."""
    for (m, k), gs in itertools.product(((77, 13000), (300, 4100), (5, 70), (1000, 1664)), (32, 64, 128, 256, None)):
        W = weights(torch, m, k, dtype, seed=m + k)
        Q = pygemv.quantize(W, bits=4, group_size=gs, zero_point=mode)
        D = dense(Q)
        for p, tiles, unroll, split in ((128, 5, 2, 3), (32, 1, 1, 1), (256, 8, 1, 16), (64, 64, 2, 1)):
            c = pygemv.Config("q_mma_x_held", p, tiles, pygemv.LOADS_ALIGNED, unroll, False, split)
            check_gemv(torch, Q, D, dtype, config=c, seed=p + split)
        c = pygemv.Config("q_mma_x_held", 128, 3, pygemv.LOADS_ALIGNED, 2, False, 2)
        check_gemv(torch, Q, D, dtype, alpha=-0.75, beta=1.5, config=c, seed=7)


@pytest.mark.parametrize("mode", qr.MODES)
def test_x_held_int8(torch, mode):
    """q_mma_x_held on int8 weights (fp16; per row, groups of 64 and 128): a word's byte pairs
    under 0x64, steps of 64 columns, K not a multiple of the step, poisoned y, alpha and beta."""
    for (m, k), gs in itertools.product(((77, 13000), (300, 4100), (5, 70), (1000, 1664)), (64, 128, None)):
        W = weights(torch, m, k, "float16", seed=m + k + 1)
        Q = pygemv.quantize(W, bits=8, group_size=gs, zero_point=mode)
        D = dense(Q)
        for p, tiles, unroll, split in ((128, 5, 2, 3), (32, 1, 1, 1), (256, 8, 1, 16), (64, 64, 2, 1)):
            c = pygemv.Config("q_mma_x_held", p, tiles, pygemv.LOADS_ALIGNED, unroll, False, split)
            check_gemv(torch, Q, D, "float16", config=c, seed=p + split)
        c = pygemv.Config("q_mma_x_held", 128, 3, pygemv.LOADS_ALIGNED, 2, False, 2)
        check_gemv(torch, Q, D, "float16", alpha=-0.75, beta=1.5, config=c, seed=7)


def test_q_mma_reads_x_in_place_only_when_contiguous_and_aligned(torch):
    """x_in_smem = 0 needs x contiguous and 16-byte aligned: otherwise the config is refused
    (nothing written) and the dispatcher's own choice stages x."""
    m, k = 300, 4100
    W = weights(torch, m, k, "float16", seed=5)
    Q = pygemv.quantize(W, bits=4, group_size=128, zero_point="int")
    D = dense(Q).astype(np.float64)
    xs = torch.randn(k + 1, dtype=torch.float16, device="cuda")
    x = xs[1:]  # 2 bytes past a 16-byte boundary
    y = torch.full((m,), 3.0, dtype=torch.float16, device="cuda")
    for unstaged in (pygemv.Config("q_mma", 256, 1, pygemv.LOADS_ALIGNED, 1, False, 1),
                     pygemv.Config("q_mma_x_held", 256, 8, pygemv.LOADS_ALIGNED, 1, False, 2)):
        with pytest.raises(pygemv.NotSupportedError, match="x 16-byte aligned"):
            pygemv.gemv(Q, x, y, config=unstaged)
        torch.cuda.synchronize()
        assert bool((y == 3.0).all())
    y.fill_(float("nan"))
    pygemv.gemv(Q, x, y)
    torch.cuda.synchronize()
    xd = x.double().cpu().numpy()
    ref, mag = D @ xd, np.abs(D) @ np.abs(xd)
    assert (np.abs(y.double().cpu().numpy() - ref) <= error_bound("float16", k, np.abs(ref), mag)).all()


def test_strided_vectors_and_graph_capture(torch):
    W = weights(torch, 257, 1000, "bfloat16", seed=3)
    Q = pygemv.quantize(W, bits=4, group_size=32, zero_point="float")
    D = dense(Q)
    check_gemv(torch, Q, D, "bfloat16", incx=3, incy=2, alpha=2.0, beta=-1.0)
    x = torch.randn(1000, dtype=torch.bfloat16, device="cuda")
    y = torch.empty(257, dtype=torch.bfloat16, device="cuda")
    s = torch.cuda.Stream()
    with torch.cuda.stream(s):
        pygemv.gemv(Q, x, y)  # warm up outside the capture
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g, stream=s):
            pygemv.gemv(Q, x, y)
    y.fill_(float("nan"))
    g.replay()
    torch.cuda.synchronize()
    ref = D.astype(np.float64) @ x.double().cpu().numpy()
    assert np.allclose(y.double().cpu().numpy(), ref, rtol=2e-2, atol=1e-2)


def _checkpoint(rng, m, k, bits, gs):
    codes = rng.integers(0, 2**bits, (m, k), dtype=np.uint8)
    G = qr.groups_of(k, gs)
    zeros = rng.integers(1, 2**bits, (m, G))  # v1 stores zero - 1: a zero of 0 does not round-trip
    scales = (rng.random((G, m)) * 0.02 + 0.001).astype(np.float16)
    return codes, zeros, scales


@pytest.mark.parametrize("bits", [4, 8])
def test_gptq_repack_matches_the_numpy_unpacker_and_awq(torch, bits):
    rng = np.random.default_rng(bits)
    m, k, gs = 64, 384, 128
    codes, zeros, scales = _checkpoint(rng, m, k, bits, gs)
    qweight, qzeros = qr.gptq_pack(codes, zeros, bits)
    c2, z2 = qr.gptq_unpack(qweight, qzeros, bits)  # the hand-written unpacker inverts the packer
    assert np.array_equal(c2, codes) and np.array_equal(z2, zeros)
    t = lambda a: torch.as_tensor(a, device="cuda")  # noqa: E731
    Q = pygemv.QuantizedMatrix.from_gptq(t(qweight), t(qzeros), t(scales), bits=bits)
    D = qr.dequantize(codes, scales.T.astype(np.float32), zeros.astype(np.float32), bits, gs, "int")
    assert np.array_equal(dense(Q), D)
    check_gemv(torch, Q, D, "float16")
    if bits == 4:  # the same weights through AWQ's packing give the same matrix
        aq, az = qr.awq_pack(codes, zeros)
        c3, z3 = qr.awq_unpack(aq, az)
        assert np.array_equal(c3, codes) and np.array_equal(z3, zeros)
        Qa = pygemv.QuantizedMatrix.from_awq(t(aq), t(az), t(scales))
        assert np.array_equal(dense(Qa), dense(Q))
    # v2 stores the zeros themselves.
    qweight2, qzeros2 = qr.gptq_pack(codes, zeros, bits, zero_offset=0)
    Q2 = pygemv.QuantizedMatrix.from_gptq(t(qweight2), t(qzeros2), t(scales), bits=bits, format="v2")
    assert np.array_equal(dense(Q2), D)


def test_gptq_act_order_permutes_x_not_the_result(torch):
    rng = np.random.default_rng(7)
    m, k, gs = 32, 512, 128
    codes, zeros, scales = _checkpoint(rng, m, k, 4, gs)
    order = rng.permutation(k)  # GPTQ's processing order: row order[i] is in group i // gs
    g_idx = np.empty(k, np.int32)
    g_idx[order] = np.arange(k) // gs
    qweight, qzeros = qr.gptq_pack(codes, zeros, 4)
    t = lambda a: torch.as_tensor(a, device="cuda")  # noqa: E731
    Q = pygemv.QuantizedMatrix.from_gptq(t(qweight), t(qzeros), t(scales), t(g_idx))
    s = scales.T.astype(np.float32)[:, g_idx]
    D = ((codes.astype(np.float32) - zeros[:, g_idx].astype(np.float32)) * s).astype(np.float32)
    assert np.array_equal(dense(Q), D)  # dequantize gives x's column order back
    check_gemv(torch, Q, D, "float16")
    bad = g_idx.copy()
    bad[:2] = 0  # group 0 now has more than group_size rows
    with pytest.raises(pygemv.InvalidValueError, match="g_idx"):
        pygemv.QuantizedMatrix.from_gptq(t(qweight), t(qzeros), t(scales), t(bad))


def test_bad_input_is_refused_and_writes_nothing(torch):
    W = weights(torch, 40, 96, "float16", seed=1)
    Q = pygemv.quantize(W, bits=4, group_size=32)
    x = torch.randn(96, dtype=torch.float16, device="cuda")
    y = torch.full((40,), 3.0, dtype=torch.float16, device="cuda")
    with pytest.raises(TypeError, match="x has dtype bfloat16"):
        pygemv.gemv(Q, x.bfloat16(), y)
    with pytest.raises(ValueError, match="x must have shape"):
        pygemv.gemv(Q, x[:95], y)
    with pytest.raises(ValueError, match="op N only"):
        pygemv.gemv(Q, x, y, trans=True)
    with pytest.raises(pygemv.NotSupportedError, match="q_rows"):
        pygemv.gemv(W, x, y, config=pygemv.Config("q_rows", 32, 8, 1, 2, True, 1))
    with pytest.raises(ValueError, match="group_size"):
        pygemv.quantize(W, group_size=48)
    with pytest.raises(TypeError, match="float32"):
        pygemv.quantize(W.float())
    torch.cuda.synchronize()
    assert bool((y == 3.0).all())


def test_more_than_2_to_the_31_codes(torch):
    """64-bit indexing: 65539 x 32832 int8 codes (2.15e9), per-row symmetric; rows checked
    against the numpy quantizer of the same rows."""
    m, k = 65539, 32832
    W = weights(torch, m, k, "float16", seed=11)
    Q = pygemv.quantize(W, bits=8, group_size=None, zero_point="symmetric")
    x = torch.randn(k, dtype=torch.float16, device="cuda")
    y = torch.full((m,), float("nan"), dtype=torch.float16, device="cuda")
    pygemv.gemv(Q, x, y)
    torch.cuda.synchronize()
    rows = np.r_[0:4, m // 2:m // 2 + 4, m - 4:m]
    codes, S, Z = qr.quantize(W[torch.as_tensor(rows, device="cuda")].float().cpu().numpy(), 8, None, "symmetric", "float16")
    D = qr.dequantize(codes, S, Z, 8, None, "symmetric").astype(np.float64)
    xd = x.double().cpu().numpy()
    ref = D @ xd
    got = y[rows].double().cpu().numpy()
    assert np.all(np.abs(got - ref) <= error_bound("float16", k, np.abs(ref), np.abs(D) @ np.abs(xd)))
    del Q, W
    torch.cuda.empty_cache()


def test_c_entry_points_quantize_and_multiply(torch):
    """The C calls a program without Python makes: gemv_qmatrix_init, gemv_quantize,
    gemv_quantized, gemv_dequantize, on buffers the caller allocates."""
    import ctypes
    from pygemv import _lib
    lib = _lib.load()
    m, k = 100, 1000
    W = weights(torch, m, k, "float16", seed=5)
    q = _lib.QMatrix()
    assert lib.gemv_qmatrix_init(ctypes.byref(q), 4, 64, 1, _lib.DTYPES["float16"], m, k) == 0
    codes = torch.empty(m * q.ldq, dtype=torch.uint8, device="cuda")
    scales = torch.empty(m * q.lds, dtype=torch.float16, device="cuda")
    zeros = torch.empty(m * q.ldz, dtype=torch.float16, device="cuda")
    q.qweight, q.scales, q.zeros = codes.data_ptr(), scales.data_ptr(), zeros.data_ptr()
    assert lib.gemv_quantize(ctypes.byref(q), W.data_ptr(), k, None) == 0
    out = torch.empty(m, k, dtype=torch.float32, device="cuda")
    assert lib.gemv_dequantize(ctypes.byref(q), out.data_ptr(), k, None) == 0
    x = torch.randn(k, dtype=torch.float16, device="cuda")
    y = torch.full((m,), float("nan"), dtype=torch.float16, device="cuda")
    torch.cuda.synchronize()
    assert lib.gemv_quantized(ctypes.byref(q), 1.0, x.data_ptr(), 1, 0.0, y.data_ptr(), 1, None, 0, None) == 0
    torch.cuda.synchronize()
    codes_ref, S, Z = qr.quantize(W.float().cpu().numpy(), 4, 64, "int", "float16")
    D = qr.dequantize(codes_ref, S, Z, 4, 64, "int")
    assert np.array_equal(out.cpu().numpy(), D)
    ref = D.astype(np.float64) @ x.double().cpu().numpy()
    mag = np.abs(D.astype(np.float64)) @ np.abs(x.double().cpu().numpy())
    assert np.all(np.abs(y.double().cpu().numpy() - ref) <= error_bound("float16", k, np.abs(ref), mag))
