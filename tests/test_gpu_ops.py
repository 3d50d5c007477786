"""GPU correctness of op T and strided batches, every operation that serves them, against
a float64 reference and the contract's bound: odd shapes, padded lda (NaN), misaligned
pointers, increments and batch strides of either sign, shared operands, alpha and beta,
poisoned outputs, untouched gaps; graph capture, batches past 65535, more than 2^31
elements, and the array API (3-D arrays, trans=True, the torch fast path)."""
import pytest

import pygemv
from pygemv import _lib
from gpu_cases import OpProblem, all_sample_configs, run_all, workspace

pytestmark = pytest.mark.gpu

DTYPES = ["float32", "float16", "bfloat16"]
ES = _lib.DTYPE_SIZES  # bytes an element
SHAPES_T = [(1, 1), (1, 7), (7, 1), (3, 33), (33, 129), (127, 1000), (1000, 17), (4097, 65), (65, 4097),
            (2049, 2051), (16384, 256)]
LAYOUTS = [dict(), dict(lda_pad=5, alpha=-0.7, beta=1.3), dict(a_off=1, x_off=3, y_off=1, beta=-2.0),
           dict(lda_pad=3, incx=-2, incy=3, alpha=0.5, beta=1.0), dict(incx=3, incy=-1, x_off=2)]
# Strided batches whose products stay 16-byte aligned where the rows are (so aligned packs
# run a block a product): dense strides, negative ones, a shared A, a shared x with padded lda
# (NaN); with the unaligned batch of LAYOUTS' kind, where they are refused.
BATCH_LAYOUTS = [dict(batch=3, batch_pad=0), dict(batch=4, batch_pad=0, reverse_batch=True, alpha=-0.5, beta=1.5),
                 dict(batch=3, share_a=True, incx=-2, incy=2), dict(batch=5, batch_pad=0, lda_pad=8, share_x=True,
                                                                   beta=1.0),
                 dict(batch=2, a_off=1, y_off=3, beta=-1.0)]


def check_layouts(torch, m, k, dtype, trans, layouts, configs=None) -> int:
    """Every operation of the op (or the configs given) and the dispatcher on each layout;
    returns the runs."""
    buf, ws = workspace(torch)
    configs = all_sample_configs("T" if trans else "N") if configs is None else configs
    failures, ran = [], 0
    for i, layout in enumerate(layouts):
        f, r = run_all(torch, OpProblem(torch, m, k, dtype, trans=trans, seed=i, **layout), configs, ws)
        failures += f
        ran += r
    assert not failures, f"{len(failures)} of {ran} runs wrong:\n" + "\n".join(failures[:20])
    return ran


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("m, k", SHAPES_T)
def test_op_t_every_operation(torch, dtype, m, k):
    assert check_layouts(torch, m, k, dtype, True, LAYOUTS) >= len(LAYOUTS) * 2


def phase_layouts(dtype) -> list[dict]:
    """A at every element phase of 16 bytes, with lda padded (NaN), x and y offset, strided
    and reversed x, alpha and beta, and batches whose odd strides move every product's phase."""
    phases = 16 // {"float32": 4, "float16": 2, "bfloat16": 2}[dtype]
    layouts = []
    for a_off in range(phases):
        layout = dict(lda_pad=a_off % 3, a_off=a_off, x_off=(a_off * 3) % phases, y_off=a_off % 2,
                      alpha=(1.0, -0.5)[a_off % 2], beta=(0.0, 0.75)[a_off % 2], incx=(1, -2)[a_off % 2])
        if a_off % 4 == 3:
            layout.update(batch=3, reverse_batch=a_off % 8 == 7)
        layouts.append(layout)
    return layouts


def realigned_op_t_configs() -> list[pygemv.Config]:
    """Realigned packs (vector_loads = 2) in both column operations: tiles of 1 to 128
    threads, 2 to 256 row lanes, every unroll, split-M slices."""
    C, R = pygemv.Config, pygemv.LOADS_REALIGNED
    return [C("t_columns", 4, 64, R, 4), C("t_columns", 16, 16, R, 2), C("t_columns", 128, 2, R, 1),
            C("t_columns", 32, 8, R, 1), C("t_splitm_twopass", 8, 32, R, 2, False, 4),
            C("t_splitm_twopass", 16, 16, R, 4, False, 3), C("t_splitm_twopass", 1, 256, R, 2, False, 8)]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("m, k", [(1, 9), (2, 4097), (5, 1001), (37, 65), (300, 257), (1573, 69), (4099, 33)])
def test_op_t_realigned_packs_at_every_phase(torch, dtype, m, k):
    """op T's realigned packs: A at every element phase of 16 bytes, lda padded with NaN, the
    first row's head before A and the last row's tail past its end (read element by
    element), the last partial pack of each row, strided and reversed x, alpha and beta,
    and batches whose odd strides move every product's phase."""
    layouts = phase_layouts(dtype)
    phases = len(layouts)
    ran = check_layouts(torch, m, k, dtype, True, layouts, realigned_op_t_configs())
    assert ran >= phases * 2  # realigned configs ran, not only the dispatcher


def one_step_op_t_configs() -> list[pygemv.Config]:
    """Configs whose lanes hold at most `unroll` rows of their slice on the shapes below, so
    each product's blocks take the column kernel's one-step walk (columns.cu, kOneStep):
    element loads (batches at unroll 1-2) and aligned packs, one pass and split-M, every
    unroll, slices cut short by M."""
    C, S, A = pygemv.Config, pygemv.LOADS_SCALAR, pygemv.LOADS_ALIGNED
    return [C("t_columns", 8, 64, S, 4), C("t_columns", 4, 128, A, 2), C("t_columns", 32, 16, S, 1),
            C("t_splitm_twopass", 8, 16, A, 4, False, 8), C("t_splitm_twopass", 16, 16, S, 2, False, 32),
            C("t_splitm_twopass", 32, 8, A, 1, False, 64), C("t_splitm_twopass", 2, 128, A, 4, False, 3)]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("m, k", [(1, 9), (5, 1001), (16, 8), (37, 65), (200, 257), (255, 40), (511, 129),
                                  (1000, 96)])
def test_op_t_one_step_form(torch, dtype, m, k):
    """op T where each lane asks for all its rows at once (rows past the slice and past M
    predicated off): odd shapes, the last slice short, the last pack partial, padded lda
    (NaN), misaligned pointers (aligned packs refused), increments of either sign, alpha
    and beta; strided batches of every sign and shared operands (a block a product)."""
    ran = check_layouts(torch, m, k, dtype, True, LAYOUTS + BATCH_LAYOUTS, one_step_op_t_configs())
    assert ran >= len(LAYOUTS + BATCH_LAYOUTS) * 4  # one-step configs ran, not only the dispatcher


def one_tile_op_t_configs() -> list[pygemv.Config]:
    """Configs whose lanes walk several steps of `unroll` rows on the shapes below, the last
    step cut short by the slice or by M (columns.cu, kOneTile: a block a tile of one product):
    element loads at every unroll (batches at unroll 1-2) and aligned packs at unroll 1-2
    (16-bit rows; fp32 packs keep the loops), one pass and split-M."""
    C, S, A = pygemv.Config, pygemv.LOADS_SCALAR, pygemv.LOADS_ALIGNED
    return [C("t_columns", 8, 16, S, 4), C("t_columns", 4, 32, A, 2), C("t_columns", 32, 8, S, 1),
            C("t_splitm_twopass", 8, 16, A, 2, False, 3), C("t_splitm_twopass", 16, 8, S, 2, False, 5),
            C("t_splitm_twopass", 2, 64, A, 1, False, 2)]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("m, k", [(203, 1001), (1000, 96), (777, 257), (4099, 40)])
def test_op_t_one_tile_form(torch, dtype, m, k):
    """op T where each lane walks its rows in steps of `unroll`, the last step predicated (no
    remainder loop): odd shapes, slices and steps cut short, the last pack partial, padded
    lda (NaN), misaligned pointers (aligned packs refused), increments of either sign, alpha
    and beta; strided batches of every sign and shared operands (a block a product)."""
    ran = check_layouts(torch, m, k, dtype, True, LAYOUTS + BATCH_LAYOUTS, one_tile_op_t_configs())
    assert ran >= len(LAYOUTS + BATCH_LAYOUTS) * 4  # the configs ran, not only the dispatcher


def phased_op_t_configs() -> list[pygemv.Config]:
    """Phased rows (vector_loads = 3, split-M only): tiles of 1 to 128 threads, 2 to 256
    row lanes, every unroll, one chunk of rows to many (each cut into its phase classes)."""
    C, P = pygemv.Config, pygemv.LOADS_PHASED
    return [C("t_splitm_twopass", 32, 8, P, 4, False, 2), C("t_splitm_twopass", 8, 32, P, 2, False, 5),
            C("t_splitm_twopass", 1, 256, P, 1, False, 3), C("t_splitm_twopass", 128, 2, P, 4, False, 64),
            C("t_splitm_twopass", 16, 16, P, 1, False, 1024)]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("m, k", [(1, 9), (2, 4097), (5, 1001), (9, 7), (37, 65), (300, 257), (1573, 69), (4099, 33),
                                  (517, 2049)])
def test_op_t_phased_rows_at_every_phase(torch, dtype, m, k):
    """op T's phased rows: A at every element phase of 16 bytes, so each slice's rows start
    at its own shift (the first pack of a row partly before column 0, the last partly past
    K, both read element by element), lda padded with NaN, fewer rows than phase classes,
    strided and reversed x, alpha and beta, and batches whose odd strides move every
    product's phase."""
    layouts = phase_layouts(dtype)
    phases = len(layouts)
    ran = check_layouts(torch, m, k, dtype, True, layouts, phased_op_t_configs())
    assert ran >= phases * 3  # phased configs ran, not only the dispatcher


def lane_class_op_t_configs() -> list[pygemv.Config]:
    """Phased rows walked by lane classes (vector_loads = 3: a row lane a phase class), in one
    pass (t_columns) and split (t_splitm_twopass, slices of rows in any phase): tiles of 2
    to 64 threads (c - 1 packs of columns written), 8 to 128 row lanes (a multiple of every
    period), every unroll, so that the one-step, one-tile and looping walks all run; and 2 or 4
    lanes, which one pass takes on at most a row a lane (each lane its own class)."""
    C, P = pygemv.Config, pygemv.LOADS_PHASED
    return [C("t_columns", 32, 8, P, 4), C("t_columns", 2, 64, P, 2), C("t_columns", 16, 16, P, 1),
            C("t_columns", 64, 8, P, 2), C("t_columns", 4, 32, P, 4), C("t_columns", 8, 128, P, 1),
            C("t_columns", 32, 4, P, 1), C("t_columns", 64, 2, P, 1), C("t_columns", 16, 2, P, 2),
            C("t_splitm_twopass", 16, 8, P, 4, False, 4), C("t_splitm_twopass", 2, 32, P, 2, False, 64),
            C("t_splitm_twopass", 8, 16, P, 1, False, 3)]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("m, k", [(1, 9), (2, 4097), (3, 1031), (5, 1001), (9, 7), (37, 65), (300, 257), (1573, 69),
                                  (4099, 33), (517, 2049), (174, 1223)])
def test_op_t_lane_classes_at_every_phase(torch, dtype, m, k):
    """op T's phased rows by lane classes, one pass and split: A at every element phase of 16 bytes, so each row
    lane's packs start at its own shift (the first row's first pack partly before A and the
    last row's last pack partly past it, read element by element; packs across a row's end
    summed into columns never written), lda padded with NaN, fewer rows than lanes, K below
    a pack, strided and reversed x, alpha and beta, and batches whose odd strides move every
    product's phase."""
    layouts = phase_layouts(dtype)
    phases = len(layouts)
    ran = check_layouts(torch, m, k, dtype, True, layouts, lane_class_op_t_configs())
    assert ran >= phases * 4  # lane-class configs ran, not only the dispatcher


def stream_op_t_configs() -> list[pygemv.Config]:
    """The op T stream (t_stream): blocks of 32 to 1024 threads (rounded to the pack period),
    every unroll, one slice to many."""
    C, A = pygemv.Config, pygemv.LOADS_ALIGNED
    return [C("t_stream", 32, 1, A, 1), C("t_stream", 256, 1, A, 4, False, 7), C("t_stream", 1024, 1, A, 2, False, 64),
            C("t_stream", 64, 1, A, 2, False, 3), C("t_stream", 512, 1, A, 4, False, 1024)]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("m, k", [(1, 3), (1, 1001), (2, 8), (7, 9), (37, 61), (300, 100), (1573, 69), (4099, 33),
                                  (20011, 17), (333, 515)])
def test_op_t_stream_at_every_phase(torch, dtype, m, k):
    """The op T stream of packs: A at every element phase of 16 bytes (its first and last
    packs read element by element), lda padded with NaN (padding columns skipped, never
    multiplied), periods from 1 to more than a block (refused), strided and reversed x,
    alpha and beta, and batches whose odd strides move every product's phase."""
    layouts = phase_layouts(dtype)
    phases = len(layouts)
    ran = check_layouts(torch, m, k, dtype, True, layouts, stream_op_t_configs())
    assert ran >= phases * 3  # stream configs ran, not only the dispatcher


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("m, k", [(4099, 1), (20011, 3), (1000, 7), (3001, 22), (777, 53)])
def test_op_t_stream_over_wide_gaps_and_rows_shorter_than_a_pack(torch, dtype, m, k):
    """The op T stream where a pack reaches two or three rows (lda under a pack's elements; lda
    under half a pack is refused, and the dispatcher's element loads run) and where whole packs
    lie in a row's gap (NaN there: not read), at phases of A, x and y, strided x, alpha and
    beta, and batches."""
    phases = 16 // {"float32": 4, "float16": 2, "bfloat16": 2}[dtype]
    layouts = []
    for i, pad in enumerate((0, 1, phases, 2 * phases + 3, 41, 2 * k + 5)):
        layout = dict(lda_pad=pad, a_off=(3 * i + 1) % phases, x_off=i % phases, y_off=i % 2,
                      alpha=(1.0, -0.5)[i % 2], beta=(0.0, 0.75)[i % 2], incx=(1, -2, 3)[i % 3])
        if i % 3 == 2:
            layout.update(batch=3, reverse_batch=i == 5)
        layouts.append(layout)
    ran = check_layouts(torch, m, k, dtype, True, layouts, stream_op_t_configs())
    assert ran >= len(layouts) * 3  # stream configs ran, not only the dispatcher


@pytest.mark.parametrize("dtype", DTYPES)
def test_dispatch_of_few_long_rows_that_start_anywhere(torch, dtype):
    """Few long rows that do not start aligned (131 rows of 131071 columns, 32 MiB up): the
    dispatcher's phased rows in one pass (t_columns, lane classes, no split) at several phases
    of A, padded lda (NaN), strided and reversed x, alpha and beta, poisoned y."""
    m, k, es = 131, 131071, {"float32": 4, "float16": 2, "bfloat16": 2}[dtype]
    c = pygemv.select_config(m, k, dtype, a_ptr=(1 << 32) + es, x_ptr=1 << 40, trans=True, use_table=False)
    assert (c.variant, c.rows_per_block, int(c.vector_loads), c.split_k) == ("t_columns", 8, 3, 1), c
    layouts = [dict(a_off=1, x_off=3, y_off=1, beta=0.5), dict(lda_pad=3, incx=-2, alpha=-1.5),
               dict(lda_pad=5, a_off=2, incy=2, beta=1.0)]
    assert check_layouts(torch, m, k, dtype, True, layouts, []) >= len(layouts)


def test_dispatch_takes_realigned_packs_for_op_t_on_misaligned_rows(torch):
    """op T on rows that do not start 16-byte aligned: realigned packs on up to 7 long rows
    beyond small matrices (8 to 48 rows up to 8 MB: phased packs since s69, test below), phased
    rows on matrices of 4 MiB up of more than 96 rows, on 16-bit matrices of 33 rows up from 8
    MiB and on fewer rows than the phase period (2 x
    4452911: a row a lane), one element a load on fewer rows (fp32 87 x 517781: one-lane
    tiles), on small matrices and on rows under 64 bytes; aligned packs where every row is
    aligned."""
    for dtype in DTYPES:
        for m, k, loads in ((2, 4452911, pygemv.LOADS_PHASED), (5, 60011 // ES[dtype], pygemv.LOADS_REALIGNED),
                            (87, 517781, pygemv.LOADS_SCALAR if dtype == "float32" else pygemv.LOADS_PHASED),
                            (2318, 6081, pygemv.LOADS_PHASED),
                            (500, 6081, pygemv.LOADS_PHASED), (500, 1001, pygemv.LOADS_SCALAR),
                            (11, 2999, pygemv.LOADS_SCALAR), (22518, 1, pygemv.LOADS_SCALAR),
                            (4096, 4096, pygemv.LOADS_ALIGNED)):
            c = pygemv.select_config(m, k, dtype, trans=True, use_table=False)
            assert c.vector_loads == loads, (dtype, m, k, c)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("m, k", [(8, 30011), (19, 13001), (33, 5970), (48, 4403)])
def test_dispatch_of_op_t_few_rows_that_start_anywhere(torch, dtype, m, k):
    """op T on 8 to 48 rows that start anywhere, up to 8 MB, that the other rules take not
    (s69, NOTES 89): the dispatcher's phased packs on 128-thread blocks (8 lanes up to 32 rows,
    16 past them, 4 rows in flight) at several phases of A, padded lda (NaN), strided and
    reversed x, alpha and beta, poisoned y."""
    es = ES[dtype]
    c = pygemv.select_config(m, k, dtype, lda=k + 3, a_ptr=(1 << 32) + es, x_ptr=1 << 40, trans=True, use_table=False)
    lanes = 16 if m > 32 else 8
    assert (c.variant, c.threads_per_row, c.rows_per_block, int(c.vector_loads), c.unroll) == (
        "t_columns", 128 // lanes, lanes, pygemv.LOADS_PHASED, 4), c
    layouts = [dict(lda_pad=3, a_off=1, x_off=3, y_off=1, beta=0.5), dict(lda_pad=1, a_off=2, incx=-2, alpha=-1.5),
               dict(lda_pad=5, a_off=3, incy=2, beta=1.0), dict(a_off=1)]
    assert check_layouts(torch, m, k, dtype, True, layouts, [c]) >= 2 * len(layouts)


@pytest.mark.parametrize("dtype", DTYPES)
def test_dispatch_of_short_aligned_op_t_rows_on_256_slices_is_correct(torch, dtype):
    """op T on more than 2048 aligned rows of up to 48 bytes, up to 1 MiB (s71, s72; NOTES 91,
    92): the dispatcher's 256 slices, element loads at four in flight (a column a tile of 256
    lanes up to 16 bytes, 2 of 64 lanes past them) or, for 16-bit rows of 2-3 whole packs with
    no gap, a lane of packs a row at two; rows of 49-128 bytes ending short of a pack on element
    loads, 8 columns a tile of 32 lanes; checked against the float64 reference with y poisoned,
    alpha and beta, padded lda (NaN gaps), x and y off their packs, strided and reversed x."""
    es = ES[dtype]
    shapes = ([(5262, 6, 14), (20000, 5, 3), (3737, 12, 0), (15000, 2, 2), (3737, 13, 3)] if es == 4 else
              [(16048, 17, 7), (4996, 8, 0), (2051, 24, 0), (30000, 4, 4), (8000, 30, 2)])
    for m, k, pad in shapes:
        c = pygemv.select_config(m, k, dtype, lda=k + pad, a_ptr=1 << 32, x_ptr=1 << 40, trans=True, use_table=False)
        if es == 2 and k * es in (32, 48) and not pad:
            want = (1, 64, pygemv.LOADS_ALIGNED, 2)
        elif k * es > 48:  # rows of 49-128 bytes ending short of a pack
            want = (8, 32, 0, 4)
        else:
            want = (1, 256, 0, 4) if k * es <= 16 else (2, 64, 0, 4)
        assert (c.variant, c.threads_per_row, c.rows_per_block, int(c.vector_loads), c.unroll, c.split_k) == (
            ("t_splitm_twopass",) + want + (256,)), (m, k, pad, c)
        layouts = [dict(lda_pad=pad, beta=0.5), dict(lda_pad=pad, x_off=1, y_off=3, alpha=-1.5),
                   dict(lda_pad=pad, incx=-2, incy=2, beta=1.0), dict(lda_pad=pad)]
        assert check_layouts(torch, m, k, dtype, True, layouts, [c]) >= 2 * len(layouts)


@pytest.mark.parametrize("dtype", DTYPES)
def test_dispatch_of_large_aligned_op_t_on_8_slices_is_correct(torch, dtype):
    """op T single products of aligned rows with gaps from 64 MiB on up to 3 tiles an SM (s72, NOTES 92):
    the dispatcher's 8 slices of 16-thread tiles of 16 lanes at four rows in flight, checked
    against the float64 reference with y poisoned: lda padded (NaN gaps) with A 96 bytes past
    256 (the layout one slice ran at half speed), x and y off their packs, alpha and beta."""
    es = ES[dtype]
    m, k, pad = (1100, 17399, 25) if es == 4 else (1100, 34797, 51)  # 272 tiles, 76 MB
    c = pygemv.select_config(m, k, dtype, lda=k + pad, a_ptr=(1 << 32) + 96, x_ptr=1 << 40, trans=True,
                             use_table=False)
    assert (c.variant, c.threads_per_row, c.rows_per_block, int(c.vector_loads), c.unroll, c.split_k) == (
        "t_splitm_twopass", 16, 16, pygemv.LOADS_ALIGNED, 4, 8), c
    layouts = [dict(lda_pad=pad, a_off=96 // es, x_off=3, y_off=1, beta=0.5), dict(lda_pad=pad, alpha=-1.5)]
    assert check_layouts(torch, m, k, dtype, True, layouts, [c]) >= 2 * len(layouts)


BATCHES = [dict(batch=3), dict(batch=5, reverse_batch=True, lda_pad=1, incy=2, beta=0.5),
           dict(batch=4, share_a=True, alpha=2.0), dict(batch=6, share_x=True, x_off=1, incx=-1, beta=1.0),
           dict(batch=2, a_off=3, y_off=5, incx=2, incy=-2, alpha=-1.5, beta=-0.25)]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("trans", [False, True])
@pytest.mark.parametrize("m, k", [(1, 1), (7, 33), (64, 64), (129, 1000), (1000, 17), (5, 4097)])
def test_strided_batches_every_operation(torch, dtype, trans, m, k):
    assert check_layouts(torch, m, k, dtype, trans, BATCHES) >= len(BATCHES)


def phased_batch_configs() -> list[pygemv.Config]:
    """op N's phased rows with x read through L1 (vector_loads = 3, x_in_smem = 0), the form
    that takes batches: every row kernel that runs it, every unroll, K slices."""
    C, P = pygemv.Config, pygemv.LOADS_PHASED
    return [C("rows_per_warp", 2, 64, P, 4), C("rows_per_warp", 8, 16, P, 1), C("rows_per_warp", 16, 8, P, 2),
            C("warp_per_row", 32, 4, P, 2), C("warp_per_row", 32, 8, P, 1), C("block_per_row", 128, 1, P, 4),
            C("block_per_row", 512, 2, P, 1), C("splitk_twopass", 64, 2, P, 2, False, 3),
            C("splitk_atomic", 32, 2, P, 4, False, 5)]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("m, k", [(1, 9), (5, 1001), (37, 65), (300, 257), (1573, 69), (3, 4099), (129, 2051)])
def test_batched_phased_rows_at_every_phase(torch, dtype, m, k):
    """Batches of op N on phased rows: A at every element phase of 16 bytes, batch strides
    padded so each product starts at its own phase (and x at its own), negative strides, a
    shared x or A, lda padded with NaN, alpha and beta; the staged form refuses batches."""
    phases = 16 // {"float32": 4, "float16": 2, "bfloat16": 2}[dtype]
    layouts = [dict(batch=3 + a_off % 3, a_off=a_off, x_off=(a_off * 3 + 1) % phases, y_off=a_off % 2,
                    lda_pad=a_off % 3, reverse_batch=a_off % 2 == 1, share_x=a_off == 2, share_a=a_off == 5,
                    alpha=(1.0, -0.5)[a_off % 2], beta=(0.0, 0.75)[a_off % 2]) for a_off in range(phases)]
    configs = phased_batch_configs()
    ran = check_layouts(torch, m, k, dtype, False, layouts, configs)
    assert ran >= phases * (len(configs) + 1)  # every phased config ran on every layout, and the dispatcher
    staged = pygemv.Config("warp_per_row", 32, 4, pygemv.LOADS_PHASED, 1, True)
    with pytest.raises(pygemv.NotSupportedError, match="x_in_smem computes single products"):
        p = OpProblem(torch, m, k, dtype, batch=2, share_x=True)
        p.run(staged)


def row_mma_configs() -> list[pygemv.Config]:
    """row_mma (tensor-core tiles of 16 rows): every block of 1 to 8 warps at every unroll."""
    return [pygemv.Config("row_mma", 32, w, pygemv.LOADS_ALIGNED, u) for w in (1, 2, 4, 8) for u in (1, 2, 4)]


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize("m, k", [(1, 8), (15, 64), (16, 112), (17, 8), (33, 520), (300, 104), (77, 1024), (5, 4096)])
def test_row_mma_tiles_rounds_and_batches(torch, dtype, m, k):
    """row_mma: tiles past M (rows that are not stored), rounds of steps past K (K not a
    multiple of 32 or of a round), single products and strided batches with lda padded (NaN
    in the gaps), products 16 bytes apart or reversed (negative strides), a shared x or A,
    y offset and strided either way, alpha and beta; an x off its packs (offset, increment of
    either sign, products' stride, shared), gathered into the workspace; layouts whose packs of A
    are not whole or aligned are refused (NotSupportedError), and every config runs on the rest."""
    layouts = [dict(), dict(lda_pad=8, y_off=1, incy=-2, alpha=-0.5, beta=0.75),
               dict(batch=5, batch_pad=0, alpha=1.5, beta=0.5), dict(batch=4, batch_pad=8, lda_pad=8, reverse_batch=True),
               dict(batch=3, batch_pad=8, share_x=True, y_off=3, incy=3), dict(batch=3, batch_pad=0, share_a=True),
               dict(a_off=8, x_off=16, batch=2, batch_pad=8),
               # x gathered: off its packs, strided, reversed, products' x off theirs, shared
               dict(x_off=3), dict(incx=-2, y_off=1, alpha=-0.5, beta=0.75),
               dict(batch=3, batch_pad=8, x_off=5, alpha=1.5, beta=0.5), dict(batch=4, batch_pad=8, incx=3, reverse_batch=True),
               dict(batch=3, batch_pad=8, share_x=True, x_off=1),
               dict(a_off=1), dict(lda_pad=3, batch=2)]
    configs = row_mma_configs()
    ran = check_layouts(torch, m, k, dtype, False, layouts, configs)
    assert ran >= 12 * (len(configs) + 1) + 2  # every config on the 12 layouts of whole packs of A, the dispatcher on all
    p = OpProblem(torch, m, k, dtype, a_off=1)
    with pytest.raises(pygemv.NotSupportedError, match="row_mma needs A, every row and K in whole 16-byte packs"):
        p.run(configs[0])


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_dispatch_of_short_aligned_rows_to_row_mma_is_correct(torch, dtype):
    """The dispatcher's row_mma on large matrices and batches of 16-bit rows of 64 to 512
    elements (NOTES 77): its choice, checked against the float64 reference with y poisoned,
    alpha and beta, a batch past 65535 products, one with a padded lda (NaN gaps), and x off
    its packs, gathered into the workspace (NOTES 79)."""
    buf, ws = workspace(torch)
    failures = []
    for m, k, batch, kw in ((296, 112, 4096, {}), (524288, 64, 1, dict(alpha=-2.0)), (16, 96, 70000, dict(beta=0.5)),
                            (40, 360, 2048, dict(lda_pad=8, batch_pad=8, beta=-1.0)), (65537, 512, 1, {}),
                            # x gathered first (NOTES 79): off its packs, reversed, products' x off theirs
                            (1316786, 136, 1, dict(x_off=1)), (524288, 64, 1, dict(incx=-1, beta=0.5)),
                            (296, 112, 4096, dict(x_off=3, batch_pad=8))):
        kw.setdefault("batch_pad", 0)  # products 16-byte aligned unless the case pads them by a pack
        p = OpProblem(torch, m, k, dtype, batch=batch, **kw)
        A, x, _ = p.ptrs()
        c = pygemv.select_config(m, k, dtype, lda=p.lda, a_ptr=A, x_ptr=x, use_table=False, batch=batch,
                                 stride_a=p.stride_a, stride_x=p.stride_x, stride_y=p.stride_y)
        assert (c.variant, c.threads_per_row, c.rows_per_block) == ("row_mma", 32, 4), (p, c)
        f, ran = run_all(torch, p, [], ws)
        failures += f
    assert not failures, "\n".join(failures)


@pytest.mark.parametrize("trans", [False, True])
def test_batches_past_the_grid_limit_and_tiny_matrices(torch, trans):
    """70000 products (grid.z and grid-y limits are 65535) and 64 x 64 x 4096."""
    buf, ws = workspace(torch)
    failures = []
    for m, k, batch in ((4, 8, 70000), (64, 64, 4096), (1, 33, 66000)):
        p = OpProblem(torch, m, k, "float16", trans=trans, batch=batch, alpha=1.5, beta=0.5)
        f, ran = run_all(torch, p, [], ws)
        failures += f
    assert not failures, "\n".join(failures)


def test_op_t_past_2_to_the_31_elements(torch):
    """A of 65537 x 32769 fp16 (2^31 + 98306 elements, 4 GiB): 64-bit offsets in the column
    kernels; checked on the last 64 columns and a sampled reference."""
    m, k = 65537, 32769
    A = torch.empty(m, k, dtype=torch.float16, device="cuda").normal_()
    x = torch.randn(m, device="cuda").half()
    y = torch.full((k,), float("nan"), dtype=torch.float16, device="cuda")
    buf, ws = workspace(torch)
    pygemv.gemv(A, x, y, trans=True, workspace=ws)
    cols = torch.cat([torch.arange(64, device="cuda"), torch.arange(k - 64, k, device="cuda")])
    ref = (A[:, cols].double().T @ x.double())
    mag = A[:, cols].double().abs().T @ x.double().abs()
    from pygemv.bench import error_bound
    bad = int((~((y[cols].double() - ref).abs() <= error_bound("float16", m, ref.abs(), mag))).sum())
    assert bad == 0
    del A


@pytest.mark.parametrize("dtype", DTYPES)
def test_op_t_nan_and_inf_propagate_and_beta_zero_assigns(torch, dtype):
    buf, ws = workspace(torch)
    for config in [None] + all_sample_configs("T")[::5]:
        p = OpProblem(torch, 300, 70, dtype, trans=True)
        if config is not None and not p.can_run(config)[0]:
            continue
        p.a_buf[p.a0 + 5 * p.lda + 3] = float("nan")   # row 5, column 3
        p.a_buf[p.a0 + 299 * p.lda + 69] = float("inf")  # row 299, column 69 (x[299] may be negative)
        y = p.run(config, workspace=ws)[0]
        assert torch.isnan(y[3]) and not torch.isfinite(y[69]), config
        assert int(torch.isnan(y).sum()) <= 2, config  # the NaN poison in y did not leak


def test_op_t_and_batches_capture_into_a_graph(torch):
    buf, ws = workspace(torch)
    ps = [OpProblem(torch, 2049, 300, "bfloat16", trans=True, alpha=0.5, beta=1.0),
          OpProblem(torch, 100, 256, "float16", batch=33, beta=-1.0),
          OpProblem(torch, 300, 4100, "float32", trans=True, batch=3)]
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.stream(side):
        with torch.cuda.graph(graph, stream=side):
            for p in ps:
                A, x, y = p.ptrs()
                pygemv.gemv(A, x, y, m=p.m, k=p.k, dtype=p.dtype, lda=p.lda, incx=p.incx, incy=p.incy,
                            alpha=p.alpha, beta=p.beta, trans=p.trans, batch=p.batch, stride_a=p.stride_a,
                            stride_x=p.stride_x, stride_y=p.stride_y, workspace=ws, stream=side.cuda_stream)
    for _ in range(2):
        for p in ps:
            p.y_buf.copy_(p.y_init)
        graph.replay()
        torch.cuda.synchronize()
        for p in ps:
            bad, gaps = p.bad_counts(p.y_buf[p.y_idx].double()).tolist()
            assert bad == 0 and gaps == 0, p


@pytest.mark.parametrize("dtype", DTYPES)
def test_array_api_trans_and_3d(torch, dtype):
    dt = {"float32": torch.float32, "float16": torch.float16, "bfloat16": torch.bfloat16}[dtype]
    from pygemv.bench import error_bound

    def check(y, A64, x64, alpha=1.0, beta=0.0, y0=None):
        ref = alpha * (A64 @ x64[..., None])[..., 0] + (beta * y0 if y0 is not None else 0)
        mag = abs(alpha) * (A64.abs() @ x64.abs()[..., None])[..., 0] + (abs(beta) * y0.abs() if y0 is not None else 0)
        assert bool(((y.double() - ref).abs() <= error_bound(dtype, A64.shape[-1], ref.abs(), mag)).all())

    A = torch.randn(300, 513, device="cuda").to(dt)
    x = torch.randn(300, device="cuda").to(dt)
    check(pygemv.gemv(A, x, trans=True), A.double().T, x.double())          # the torch fast path
    y0 = torch.randn(513, device="cuda").to(dt)
    y = y0.clone()
    pygemv.gemv(A[:, :513], x, y, trans=True, alpha=0.5, beta=2.0)
    check(y, A.double().T, x.double(), 0.5, 2.0, y0.double())
    ys = torch.empty(1026, device="cuda").to(dt)[::2]                        # strided y on the fast path
    pygemv.gemv(A, x, ys, trans=True)
    check(ys, A.double().T, x.double())
    A3 = torch.randn(7, 65, 130, device="cuda").to(dt)
    x2 = torch.randn(7, 130, device="cuda").to(dt)
    check(pygemv.gemv(A3, x2), A3.double(), x2.double())                      # (batch, M, K) @ (batch, K)
    x2t = torch.randn(7, 65, device="cuda").to(dt)
    check(pygemv.gemv(A3, x2t, trans=True), A3.double().transpose(1, 2), x2t.double())
    shared = torch.randn(130, device="cuda").to(dt)                            # one x for every product
    check(pygemv.gemv(A3, shared), A3.double(), shared.double().expand(7, 130))
    A2 = torch.randn(65, 130, device="cuda").to(dt)                            # one A, many x
    check(pygemv.gemv(A2, x2), A2.double().expand(7, 65, 130), x2.double())
    ycol = torch.empty(65, 7, device="cuda").to(dt).T                          # a transposed (batch, M) y
    pygemv.gemv(A3, x2, ycol)
    check(ycol, A3.double(), x2.double())
