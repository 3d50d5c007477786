"""GPU correctness of 16-byte loads of rows that start anywhere (issue 14): every row
operation, forced with vector_loads = 2 (realigned), 3 (phased), 4 (8-byte) and 5 (phased, x's
phase copies), and the dispatcher, over every alignment phase of A, x and y (element
offsets 0..15 bytes), K and lda in every residue mod 8, split-K slices, strided x staged in
shared memory and batches; float64 reference, the contract's bound, poisoned outputs and
untouched gaps (gpu_cases)."""
import pytest

import pygemv
from pygemv import _lib
from gpu_cases import Case, Problem, workspace
from test_gpu_gemv import check_all_configs

pytestmark = pytest.mark.gpu

DTYPES = ["float32", "float16", "bfloat16"]
ES = _lib.DTYPE_SIZES  # bytes an element


def realigned_configs(k: int) -> list[pygemv.Config]:
    C, R = pygemv.Config, pygemv.LOADS_REALIGNED
    return [C("thread_per_row", 1, 64, R, 2), C("rows_per_warp", 2, 64, R, 4), C("rows_per_warp", 8, 16, R, 1),
            C("warp_per_row", 32, 4, R, 2), C("block_per_row", 128, 2, R, 4), C("block_per_row", 64, 1, R, 1),
            C("splitk_twopass", 64, 2, R, 2, False, 3), C("splitk_atomic", 32, 2, R, 1, False, 5),
            C("warp_per_row", 32, 8, R, 2, True), C("rows_per_warp", 4, 16, R, 4, True),
            C("row_stream", 1, 64, R, 1, True), C("row_stream", 4, 32, R, 2, True), C("row_stream", 32, 8, R, 4, True),
            *phased_configs(), *tile_configs(), *aligned8_configs()]


def aligned8_configs() -> list[pygemv.Config]:
    """8-byte packs (vector_loads = 4) in every row kernel, every unroll, x staged or not, split K."""
    C, E = pygemv.Config, pygemv.LOADS_ALIGNED8
    return [C("thread_per_row", 1, 64, E, 2), C("rows_per_warp", 4, 32, E, 4), C("warp_per_row", 32, 4, E, 1, True),
            C("block_per_row", 128, 1, E, 2), C("splitk_twopass", 64, 2, E, 2, False, 3),
            C("splitk_atomic", 32, 2, E, 4, True, 5)]


def tile_configs(loads: int = pygemv.LOADS_REALIGNED) -> list[pygemv.Config]:
    """Row tiles of 1 to 4 rows, every unroll they take, with and without K slices."""
    C = pygemv.Config
    return [C("rows_in_registers", 64, 4, loads, 1, False, 3), C("rows_in_registers", 32, 2, loads, 2, False, 1),
            C("rows_in_registers", 128, 1, loads, 4, False, 7), C("rows_in_registers", 512, 2, loads, 2, False, 2),
            C("rows_in_registers", 256, 1, loads, 1, False, 5), C("rows_in_registers", 32, 4, loads, 1, False, 64)]


def phased_configs() -> list[pygemv.Config]:
    """Phased rows (vector_loads = 3) in every row kernel that takes them, every unroll."""
    C, P = pygemv.Config, pygemv.LOADS_PHASED
    return [C("rows_per_warp", 2, 64, P, 4, True), C("rows_per_warp", 8, 16, P, 1, True),
            C("warp_per_row", 32, 4, P, 2, True), C("block_per_row", 128, 2, P, 4, True),
            C("block_per_row", 64, 1, P, 1, True), C("block_per_row", 512, 2, P, 2, True),
            C("splitk_twopass", 64, 2, P, 2, True, 3), C("splitk_atomic", 32, 2, P, 1, True, 5),
            # x through L1, shifted into the rows' phase (every unroll, K slices too)
            C("rows_per_warp", 2, 64, P, 4, False), C("rows_per_warp", 8, 16, P, 1, False),
            C("warp_per_row", 32, 4, P, 2, False), C("block_per_row", 128, 1, P, 4, False),
            C("block_per_row", 512, 2, P, 1, False), C("splitk_twopass", 64, 2, P, 2, False, 3),
            C("splitk_atomic", 32, 2, P, 4, False, 5), *phased_copies_configs()]


def phased_copies_configs() -> list[pygemv.Config]:
    """Phased rows reading x's phase copies (vector_loads = 5) in every row kernel, every
    unroll; a staged x refuses (as a shape-independent invalid value)."""
    C, X = pygemv.Config, pygemv.LOADS_PHASED_X_COPIES
    return [C("rows_per_warp", 2, 64, X, 4), C("rows_per_warp", 8, 16, X, 1), C("warp_per_row", 32, 4, X, 2),
            C("block_per_row", 256, 1, X, 2), C("block_per_row", 128, 2, X, 4), C("block_per_row", 1024, 1, X, 1),
            C("warp_per_row", 32, 1, X, 1), C("rows_per_warp", 16, 8, X, 2)]


def stream_configs() -> list[pygemv.Config]:
    """The row stream at every unroll, with 1 to 32 lanes a row and 64 to 1024 threads."""
    C, R = pygemv.Config, pygemv.LOADS_REALIGNED
    return [C("row_stream", 1, 64, R, 1, True), C("row_stream", 2, 64, R, 2, True), C("row_stream", 8, 16, R, 4, True),
            C("row_stream", 32, 32, R, 1, True), C("row_stream", 16, 32, R, 4, True), C("row_stream", 4, 256, R, 2, True)]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("k0", [0, 56, 1000])
def test_every_phase_of_a_x_and_y_for_every_k_and_lda_residue(torch, dtype, k0):
    """K = k0 + 1..8 (all residues mod 8) x lda = K + 0..7; A, x and y at offsets cycling
    through every element-aligned phase of 16 bytes, independently of each other."""
    buf, ws = workspace(torch)
    phases = 16 // ES[dtype]
    failures, runs = [], 0
    i = 0
    for kr in range(1, 9):
        k = k0 + kr
        for pad in range(8):
            case = Case(lda_pad=pad, a_off=i % phases, x_off=(i * 3 + 1) % phases, y_off=(i * 5 + 2) % phases,
                        alpha=(-0.75, 1.0, 2.0)[i % 3], beta=(0.0, 1.0, -0.5)[i % 3])
            p = Problem(torch, 37 + i % 5, k, dtype, case, seed=i)
            f, r = check_all_configs(torch, p, realigned_configs(k), ws)
            failures += f
            runs += r
            i += 1
    assert not failures, f"{len(failures)} of {runs} runs wrong:\n" + "\n".join(failures[:20])
    assert runs >= 64 * 9  # every layout ran the dispatcher and the realigned configs


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("m, k", [(1, 1), (3, 7), (5, 9), (2, 4097), (7, 20011), (33, 130), (1000, 17)])
def test_short_rows_long_rows_and_split_k_at_every_phase(torch, dtype, m, k):
    buf, ws = workspace(torch)
    phases = 16 // ES[dtype]
    failures = []
    for a_off in range(phases):
        for x_off in range(phases):
            case = Case(lda_pad=(a_off + x_off) % 3, a_off=a_off, x_off=x_off, y_off=x_off, beta=0.5 * (a_off % 2))
            p = Problem(torch, m, k, dtype, case, seed=a_off * 16 + x_off)
            failures += check_all_configs(torch, p, realigned_configs(k), ws)[0]
    assert not failures, "\n".join(failures[:20])


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("m, k, pad", [(9000, 37, 0), (20011, 9, 5), (4099, 1001, 3), (3, 12285, 0), (1, 5, 0)])
def test_phased_rows_walk_many_steps_of_every_phase_class(torch, dtype, m, k, pad):
    """Phased rows where each block walks many rows of its class (the grid is one wave),
    rows of one pack or less, the largest x that fits, a single row; A at every phase, NaN in
    the gaps and around A, strided x."""
    buf, ws = workspace(torch)
    phases = 16 // ES[dtype]
    C, P = pygemv.Config, pygemv.LOADS_PHASED
    configs = phased_configs() + [C("warp_per_row", 32, 1, P, 1, True), C("rows_per_warp", 2, 512, P, 2, True)]
    failures, runs = [], 0
    for a_off in range(0, phases, 3 if m > 5000 else 1):
        case = Case(lda_pad=pad, a_off=a_off, x_off=(a_off * 5) % phases, y_off=a_off % 3,
                    alpha=(1.0, -0.5)[a_off % 2], beta=(0.0, 0.75)[a_off % 2], incx=(1, -2)[a_off % 2])
        p = Problem(torch, m, k, dtype, case, seed=a_off)
        f, r = check_all_configs(torch, p, configs, ws)
        failures += f
        runs += r
    assert not failures, f"{len(failures)} of {runs} runs wrong:\n" + "\n".join(failures[:20])
    assert runs > 2 * len(range(0, phases, 3 if m > 5000 else 1))  # phased configs ran, not only the dispatcher


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("m, k", [(2, 1241717), (16, 100003), (48, 23714), (19, 65536), (3, 33), (1031, 2053)])
def test_row_tiles_on_long_rows_at_every_phase(torch, dtype, m, k):
    """Row tiles (rows_in_registers) over long rows: the inner slots, the edge slots at both
    ends of every row and K slice, A and x at several phases, NaN in the gaps and around A,
    alpha and beta; aligned packs too where the layout allows them. Grids of one wave issue
    the edge slots' loads first, larger ones (1031 rows) load and mask each in turn."""
    buf, ws = workspace(torch)
    phases = 16 // ES[dtype]
    C = pygemv.Config
    configs = tile_configs() + tile_configs(pygemv.LOADS_ALIGNED) + [C("rows_in_registers", 128, 2, 2, 2, False, 304),
                                                                      C("rows_in_registers", 64, 4, 2, 1, False, 1024)]
    failures, runs = [], 0
    for i, (a_off, x_off) in enumerate(((0, 0), (1, 3), (phases - 1, 1), (3, phases - 1))):
        case = Case(lda_pad=(0, 1, 7, 8)[i], a_off=a_off % phases, x_off=x_off % phases, y_off=i % 2,
                    alpha=(1.0, -0.5, 2.0, 1.0)[i], beta=(0.0, 0.75, 0.0, 1.0)[i])
        p = Problem(torch, m, k, dtype, case, seed=i)
        f, r = check_all_configs(torch, p, configs, ws)
        failures += f
        runs += r
    assert not failures, f"{len(failures)} of {runs} runs wrong:\n" + "\n".join(failures[:20])
    assert runs >= 4 * 9  # the dispatcher and the realigned row tiles ran on every layout


@pytest.mark.parametrize("dtype", DTYPES)
def test_strided_x_is_staged_for_realigned_rows(torch, dtype):
    buf, ws = workspace(torch)
    failures = []
    for incx, x_off in ((2, 1), (-3, 0), (5, 3)):
        p = Problem(torch, 129, 1001, dtype, Case(lda_pad=1, a_off=1, incx=incx, x_off=x_off, beta=1.0), seed=incx)
        C = pygemv.Config
        staged = [C("warp_per_row", 32, 8, 2, 2, True), C("block_per_row", 128, 2, 2, 4, True)]
        failures += check_all_configs(torch, p, staged, ws)[0]
        assert not p.can_run(C("warp_per_row", 32, 8, 2, 2, False))[0]
    assert not failures, "\n".join(failures)


def test_dispatch_takes_phased_or_realigned_loads_on_misaligned_rows(torch):
    """With the shipped table: phased rows on large matrices beyond the tuned grid (x's phase
    copies for rows of 4 KB and more), realigned
    (split K, the row stream) on few long rows and short rows, 8-byte loads where every row
    starts 8-byte aligned (fp32 of even K). fp32 40000 x 1023 and 16-bit 181524 x 126 read
    x's phase copies where no table entry serves them (the heuristic, benchmarks/NOTES.md
    section 76): a GPU with a table keeps its entries there."""
    X = pygemv.LOADS_PHASED_X_COPIES
    for dtype in DTYPES:
        es = ES[dtype]
        for m, k, loads in ((4559, 10455, {X}), (8191, 8191, {X}),
                            (40000, 1023, {pygemv.LOADS_PHASED} | ({X} if es == 4 else set())),
                            (7, 107041, {pygemv.LOADS_REALIGNED}),
                            (181524, 126, {pygemv.LOADS_REALIGNED} | ({X} if es == 2 else set()))):
            c = pygemv.select_config(m, k, dtype)
            want = {pygemv.LOADS_ALIGNED8} if dtype == "float32" and k % 2 == 0 else loads
            assert c.vector_loads in want, (dtype, m, k, c)
            if len(want) > 1:  # the heuristic alone: the copies
                assert pygemv.select_config(m, k, dtype, use_table=False).vector_loads == X, (dtype, m, k)


@pytest.mark.parametrize("dtype", DTYPES)
def test_dispatch_of_shorter_misaligned_rows_to_x_phase_copies_is_correct(torch, dtype):
    """Large matrices of rows of 48 bytes to 4 KB that start anywhere, where the heuristic
    reads x's phase copies (2 to 16 lanes a row, NOTES 76): the dispatcher's own choice
    against the float64 reference at three phases of A, padded lda (NaN in the gaps), x of
    either sign of increment, alpha and beta, y poisoned; the choice is the copies."""
    buf, ws = workspace(torch)
    es = ES[dtype]
    failures, runs = [], 0
    for k, mb in ((27, 33), (107, 33), (509, 65), (2047, 65)) if es == 2 else ((65, 73), (107, 73), (599, 73)):
        m = mb * (1 << 20) // (k * es) + 1
        for a_off in (0, 1, 16 // es - 1):
            case = Case(lda_pad=(0, 2)[a_off % 2], a_off=a_off, incx=(1, -2)[a_off % 2], x_off=a_off,
                        alpha=(1.0, -0.5)[a_off % 2], beta=(0.0, 0.75)[a_off % 2])
            p = Problem(torch, m, k, dtype, case, seed=a_off)
            A, x, y = p.ptrs()
            c = pygemv.select_config(m, k, dtype, lda=p.lda, incx=case.incx, a_ptr=A, x_ptr=x, use_table=False,
                                     workspace_bytes=ws[1])
            assert c.vector_loads == pygemv.LOADS_PHASED_X_COPIES, (dtype, m, k, case, c)
            f, r = check_all_configs(torch, p, [c], ws)
            failures += f
            runs += r
    assert not failures, f"{len(failures)} of {runs} runs wrong:\n" + "\n".join(failures[:20])


def check_dispatched(torch, dtype, m, k, pad, a_off, x_off, ws):
    """The dispatcher's own choice on m x k (lda = k + pad; A and x a_off and x_off elements off;
    alpha and beta by x_off's parity) against the float64 reference with NaN in the gaps and y
    poisoned: (the choice, failures, runs)."""
    case = Case(lda_pad=pad, a_off=a_off, x_off=x_off, alpha=(1.0, -0.5)[x_off % 2], beta=(0.0, 0.75)[x_off % 2])
    pr = Problem(torch, m, k, dtype, case, seed=k)
    A, x, y = pr.ptrs()
    c = pygemv.select_config(m, k, dtype, lda=pr.lda, a_ptr=A, x_ptr=x, use_table=False, workspace_bytes=ws[1])
    failures, runs = check_all_configs(torch, pr, [c], ws)
    return c, failures, runs


@pytest.mark.parametrize("dtype", DTYPES)
def test_dispatch_of_wide_gap_rows_and_short_rows_on_8_bytes_is_correct(torch, dtype):
    """The s67 rules (NOTES 87), the dispatcher's own choice against the float64 reference with
    NaN in the gaps, alpha and beta, y poisoned: fp32 rows of 32-127 bytes with wide gaps on 4
    lanes (8-byte loads on rows on 8 bytes, else element loads, x staged or not); rows on 8
    bytes under 64 bytes a thread a row of 8-byte loads (x on 8 bytes or not); 16-bit rows of 46
    bytes an element a load; 16-bit x's phase copies on 4 lanes for rows 224 bytes apart; 16-bit
    rows of one phase off 8 bytes on 2 lanes (element loads, or x's copies from 32 bytes)."""
    buf, ws = workspace(torch)
    es = ES[dtype]
    A8, X = pygemv.LOADS_ALIGNED8, pygemv.LOADS_PHASED_X_COPIES
    if es == 4:  # (k, lda pad, A off, x off, MB, (p, loads))
        cases = [(12, 60, 2, 3, 9, (4, A8)), (13, 24, 1, 0, 9, (4, 0)), (22, 24, 1, 1, 9, (4, 0)),
                 (10, 0, 2, 1, 9, (1, A8)), (14, 0, 2, 0, 9, (1, A8))]
    else:
        cases = [(12, 0, 4, 1, 9, (1, A8)), (8, 0, 4, 0, 9, (1, A8)), (23, 7, 1, 0, 13, (1, 0)),
                 (73, 100, 1, 0, 13, (4, X)), (9, 31, 3, 1, 13, (2, 0)), (17, 31, 3, 0, 13, (2, X))]
    failures, runs = [], 0
    for k, pad, a_off, x_off, mb, (p_want, loads) in cases:
        m = mb * (1 << 20) // ((k + pad) * es) + 1
        c, f, r = check_dispatched(torch, dtype, m, k, pad, a_off, x_off, ws)
        assert (c.threads_per_row, int(c.vector_loads)) == (p_want, loads), (dtype, m, k, pad, a_off, x_off, c)
        failures += f
        runs += r
    assert not failures, f"{len(failures)} of {runs} runs wrong:\n" + "\n".join(failures[:20])


@pytest.mark.parametrize("dtype", DTYPES)
def test_dispatch_of_s68_rules_is_correct(torch, dtype):
    """The s68 rules (NOTES 88), the dispatcher's own choice against the float64 reference with
    NaN in the gaps, alpha and beta, y poisoned: 16-bit rows of one phase off 8 bytes under 64
    bytes apart a thread a row (x staged at 16 bytes apart); fp32 rows of 32-48 bytes with wide
    gaps under 96 bytes apart on 2 lanes of element loads; rows of 24-79 packs phased on 8 lanes,
    x staged; 16 realigned lanes on 128-thread blocks; fp32 and 16-bit row tiles of 4 waves of
    slices."""
    buf, ws = workspace(torch)
    es = ES[dtype]
    P, R = pygemv.LOADS_PHASED, pygemv.LOADS_REALIGNED
    # (m or None for MB, k, lda pad, A off, x off, MB, want: (variant, p, rows a block, loads, x staged, least split))
    if es == 4:
        cases = [(None, 9, 4, 1, 0, 10, ("rows_per_warp", 2, 64, 0, False, 1)),
                 (None, 12, 5, 3, 1, 13, ("rows_per_warp", 2, 64, 0, False, 1)),
                 (None, 181, 46, 3, 1, 34, ("rows_per_warp", 8, 32, P, True, 1)),
                 (None, 521, 0, 6, 5, 20, ("rows_per_warp", 16, 8, R, True, 1)),
                 (72, 120000, 0, 3, 1, 0, ("rows_in_registers", 128, 4, R, False, 176))]
    else:
        cases = [(None, 11, 5, 1, 3, 13, ("thread_per_row", 1, 128, 0, False, 1)),
                 (None, 6, 2, 2, 2, 13, ("thread_per_row", 1, 128, 0, True, 1)),
                 (None, 300, 9, 1, 2, 12, ("rows_per_warp", 8, 32, P, True, 1)),
                 (None, 1400, 9, 1, 2, 25, ("rows_per_warp", 16, 8, R, True, 1)),
                 (100, 170000, 0, 3, 1, 0, ("rows_in_registers", 128, 4, R, False, 160))]
    failures, runs = [], 0
    for m, k, pad, a_off, x_off, mb, want in cases:
        m = m or mb * (1 << 20) // ((k + pad) * es) + 1
        c, f, r = check_dispatched(torch, dtype, m, k, pad, a_off, x_off, ws)
        got = (c.variant, c.threads_per_row, c.rows_per_block, int(c.vector_loads), bool(c.x_in_smem))
        assert got == want[:5] and c.split_k >= want[5], (dtype, m, k, pad, a_off, x_off, c)
        failures += f
        runs += r
    assert not failures, f"{len(failures)} of {runs} runs wrong:\n" + "\n".join(failures[:20])


@pytest.mark.parametrize("dtype", DTYPES)
def test_dispatch_of_s69_rules_is_correct(torch, dtype):
    """The s69 op N rules (NOTES 89), the dispatcher's own choice against the float64 reference
    with NaN in the gaps, alpha and beta, y poisoned: 16-bit rows of 80-127 packs on x's phase
    copies, 8 lanes at two in flight (24-64 MB), or phased on 16 lanes with x staged (64 MB to
    256 MiB); fp32 rows of 32-79 packs phased on 8 lanes with x staged up to 128 MB."""
    buf, ws = workspace(torch)
    es = ES[dtype]
    P, X = pygemv.LOADS_PHASED, pygemv.LOADS_PHASED_X_COPIES
    # (k, lda pad, A off, x off, MB, want: (variant, p, rows a block, loads, unroll, x staged))
    if es == 4:
        cases = [(170, 3, 2, 1, 69, ("rows_per_warp", 8, 32, P, 1, True)),
                 (301, 0, 1, 0, 100, ("rows_per_warp", 8, 32, P, 1, True))]
    else:
        cases = [(900, 5, 1, 2, 36, ("rows_per_warp", 8, 16, X, 2, False)),
                 (1001, 0, 3, 0, 50, ("rows_per_warp", 8, 16, X, 2, False)),
                 (750, 5, 1, 2, 70, ("rows_per_warp", 16, 16, P, 1, True))]
    failures, runs = [], 0
    for k, pad, a_off, x_off, mb, want in cases:
        m = mb * (1 << 20) // ((k + pad) * es) + 1
        c, f, r = check_dispatched(torch, dtype, m, k, pad, a_off, x_off, ws)
        got = (c.variant, c.threads_per_row, c.rows_per_block, int(c.vector_loads), c.unroll, bool(c.x_in_smem))
        assert got == want, (dtype, m, k, pad, a_off, x_off, c)
        failures += f
        runs += r
    assert not failures, f"{len(failures)} of {runs} runs wrong:\n" + "\n".join(failures[:20])


@pytest.mark.parametrize("dtype", DTYPES)
def test_dispatch_of_few_long_rows_on_slices_is_correct(torch, dtype):
    """The s70 split of few long rows (NOTES 90), the dispatcher's own choice against the float64
    reference with NaN in the gaps, alpha and beta, y poisoned: rows of more than 2048 packs, up to
    about 1.6 MB, on slices of 256 lanes at two in flight, a load a lane or less, at most 3 blocks
    an SM (the split a power of two, or the SMs' share where that caps it)."""
    buf, ws = workspace(torch)
    es = ES[dtype]
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    # (m, row bytes, lda pad, A off, x off): 2049-4095 packs (one block a row before), past
    # 4096 packs (13 rows: slices the SMs cap), and 24 rows of 3954 packs.
    cases = [(8, 55342, 63, 0, 0), (1, 57550, 0, 0, 0), (3, 42716, 3, 1, 0), (17, 51256, 0, 4 // es, 1),
             (13, 106106, 11, 1, 2), (24, 63252, 0, 2 // es, 1)]
    failures, runs = [], 0
    for m, row, pad, a_off, x_off in cases:
        k = row // es
        c, f, r = check_dispatched(torch, dtype, m, k, pad, a_off, x_off, ws)
        loads = -(-k * es // (8 if c.vector_loads == pygemv.LOADS_ALIGNED8 else 16))
        want = min(1 << max(0, (-(-loads // 256) - 1).bit_length()), 3 * sms // m)
        got = (c.variant, c.threads_per_row, c.unroll, c.split_k)
        assert got == ("splitk_twopass", 256, 2, want), (dtype, m, k, pad, a_off, x_off, c)
        failures += f
        runs += r
    assert not failures, f"{len(failures)} of {runs} runs wrong:\n" + "\n".join(failures[:20])


@pytest.mark.parametrize("dtype", DTYPES)
def test_dispatch_of_s71_realigned_rules_is_correct(torch, dtype):
    """The s71 op N rules for rows that do not start 16-byte aligned (NOTES 91), the dispatcher's
    own choice against the float64 reference with NaN in the gaps, alpha and beta, y poisoned:
    9-26 rows of 2049-3071 packs on even slices of at most a load a lane (ceil(packs / 256),
    up to 2 blocks an SM); one block a row of 1024 lanes at one load in flight; 100-800 rows
    of 512-4095 packs on lanes for half the GPU's threads; fp32 rows on 8 bytes with x off 8
    realigned, not 8-byte loads with x staged for each row."""
    buf, ws = workspace(torch)
    es = ES[dtype]
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    R = pygemv.LOADS_REALIGNED
    # (m, k, lda pad, A off, x off, want: (variant, p, loads, unroll, split))
    if es == 4:
        cases = [(12, 8241, 1, 1, 0, ("splitk_twopass", 256, R, 2, 10)),
                 (40, 12301, 1, 1, 0, ("block_per_row", 1024, R, 1, 1)),
                 (400, 6001, 2, 0, 1, ("block_per_row", 256, R, 2, 1)),
                 (35, 10606, 10, 2, 3, ("block_per_row", 1024, R, 1, 1))]
    else:
        cases = [(12, 16479, 9, 2, 6, ("splitk_twopass", 256, R, 2, 10)),
                 (40, 24601, 1, 0, 0, ("block_per_row", 1024, R, 1, 1)),
                 (500, 12001, 1, 1, 3, ("block_per_row", 256, R, 2, 1))]
    failures, runs = [], 0
    for m, k, pad, a_off, x_off, want in cases:
        if want[0] == "splitk_twopass" and m * want[4] > 2 * sms:  # a GPU of fewer SMs keeps a block a row
            want = ("block_per_row", 1024, R, 1, 1)
        if m >= 100:  # half the GPU's threads: lanes by its SMs
            packs = -(-k * es // 16)
            p = max(32, min(1024, 1 << (min(sms * 1024 // m, packs // 2).bit_length() - 1)))
            want = ("block_per_row", p, R, 2, 1)
        c, f, r = check_dispatched(torch, dtype, m, k, pad, a_off, x_off, ws)
        got = (c.variant, c.threads_per_row, int(c.vector_loads), c.unroll, c.split_k)
        assert got == want, (dtype, m, k, pad, a_off, x_off, c)
        failures += f
        runs += r
    assert not failures, f"{len(failures)} of {runs} runs wrong:\n" + "\n".join(failures[:20])


@pytest.mark.parametrize("dtype", DTYPES)
def test_dispatch_of_s72_realigned_mid_rows_is_correct(torch, dtype):
    """Realigned single products of 4096-8191 packs a row, 2-32 MiB (s72, NOTES 92): the
    dispatcher's own choice against the float64 reference with NaN in the gaps, alpha and beta,
    y poisoned: up to half the SMs' rows on 256-lane slices (4 an SM over the rows, a power of
    two, at most 16), up to the SMs' count on a block of 1024 lanes at one in flight, up to twice
    it on a block of 512 at two; rows off their packs, and aligned rows with x off its pack."""
    buf, ws = workspace(torch)
    es = ES[dtype]
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    R = pygemv.LOADS_REALIGNED
    # (m, k, lda pad, A off, x off)
    cases = ([(40, 24001, 1, 1, 0), (100, 20001, 3, 0, 1), (200, 17001, 1, 2, 0), (60, 24000, 0, 0, 3)] if es == 4 else
             [(50, 40001, 1, 1, 0), (120, 45001, 3, 0, 3), (230, 36001, 1, 3, 1), (64, 48000, 0, 0, 5)])
    failures, runs = [], 0
    for m, k, pad, a_off, x_off in cases:
        if 2 * m <= sms:
            want = ("splitk_twopass", 256, R, 2, max(2, min(16, 1 << ((4 * sms // m).bit_length() - 1))))
        elif m <= sms:
            want = ("block_per_row", 1024, R, 1, 1)
        elif m <= 2 * sms:
            want = ("block_per_row", 512, R, 2, 1)
        else:  # a GPU of fewer SMs: the row tiles
            want = ("rows_in_registers", 128, R)
        c, f, r = check_dispatched(torch, dtype, m, k, pad, a_off, x_off, ws)
        got = (c.variant, c.threads_per_row, int(c.vector_loads), c.unroll, c.split_k)
        assert got[:len(want)] == want, (dtype, m, k, pad, a_off, x_off, c)
        failures += f
        runs += r
    assert not failures, f"{len(failures)} of {runs} runs wrong:\n" + "\n".join(failures[:20])


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("m, k, pad", [(5000, 12, 0), (3001, 35, 3), (777, 1306, 1), (64, 8, 0), (100, 3, 6),
                                       (2, 3999, 0), (1, 5, 0), (9, 1, 7), (40000, 9, 0), (20011, 22, 19),
                                       (3001, 12, 42), (999, 5, 64)])
def test_row_stream_over_steps_gaps_and_phases(torch, dtype, m, k, pad):
    """The row stream: many steps (grid-stride), rows shorter than a pack in rows padded
    past one (NaN in the gaps), gaps of many packs, packs that span two rows,
    the matrix's first pack before A and its last past A's end, every phase of A."""
    buf, ws = workspace(torch)
    phases = 16 // ES[dtype]
    failures, runs = [], 0
    for a_off in range(phases):
        case = Case(lda_pad=pad, a_off=a_off, x_off=(a_off * 3) % phases, y_off=a_off % 2,
                    alpha=(1.0, -0.5)[a_off % 2], beta=(0.0, 0.75)[a_off % 2], incx=(1, -2)[a_off % 2])
        p = Problem(torch, m, k, dtype, case, seed=a_off)
        f, r = check_all_configs(torch, p, stream_configs(), ws)
        failures += f
        runs += r
    assert not failures, f"{len(failures)} of {runs} runs wrong:\n" + "\n".join(failures[:20])
    assert runs > phases  # the dispatcher and at least some stream configs ran


@pytest.mark.parametrize("dtype", DTYPES)
def test_dispatch_of_aligned_rows_with_a_misaligned_x(torch, dtype):
    """Aligned rows of 64 lanes and more, x contiguous at every phase but 0: the dispatcher's x
    realigned through L1 (one wave of rows' lanes or less) or x's phase copies (more), never
    staged (NOTES 78); lda padded by whole packs with NaN, alpha and beta, poisoned y. The
    configs the rule would not pick run too (each load form on the other's shapes)."""
    buf, ws = workspace(torch)
    es = ES[dtype]
    phases = 16 // es
    C = pygemv.Config
    picked, failures, runs = set(), [], 0
    for i, (m, k) in enumerate([(1024, 1024), (3000, 3000), (121, 9288), (700, 24576), (230, 392), (5, 7200)]):
        for x_off in range(1, phases):
            case = Case(lda_pad=phases * (i % 2), x_off=x_off, y_off=i % 3, alpha=(1.0, -1.5)[x_off % 2],
                        beta=(0.0, 0.5, 1.0)[i % 3])
            p = Problem(torch, m, k, dtype, case, seed=i * 16 + x_off)
            A, x, y = p.ptrs()
            c = pygemv.select_config(m, k, dtype, lda=p.lda, a_ptr=A, x_ptr=x, y_ptr=y, workspace_bytes=ws[1])
            if c.threads_per_row >= 64 and c.split_k == 1:
                assert int(c.vector_loads) in (2, 5) and not c.x_in_smem, (m, k, c)
                picked.add(int(c.vector_loads))
            others = [o for v in (2, 5) for u in (1, 4) if c.split_k == 1
                      for o in [C(c.variant, c.threads_per_row, c.rows_per_block, v, u)] if pygemv._registry.validate(o)]
            f, r = check_all_configs(torch, p, others, ws)
            failures += f
            runs += r
    assert picked == {2, 5}, picked  # both forms dispatched
    assert not failures, f"{len(failures)} of {runs} runs wrong:\n" + "\n".join(failures[:20])
