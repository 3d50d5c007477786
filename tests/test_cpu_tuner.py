"""The tuner's logic on a CPU, with a fake timer: the search space is legal, illegal
configs are never launched or timed, wrong ones never chosen, seeds go first, a study
resumes from SQLite after an interruption, the winner is confirmed against the runner-up,
and the result reaches libgemv's dispatcher through a table."""
import ctypes
import math
import subprocess
import sys

import pytest

optuna = pytest.importorskip("optuna", reason="the tuner needs optuna (pip install '.[tune]')")

import pygemv  # noqa: E402
from pygemv import _lib  # noqa: E402
from pygemv._registry import can_run, validate  # noqa: E402
from pygemv._table import Entry, Fingerprint, write_table  # noqa: E402
from pygemv.tuning import grid, heldout  # noqa: E402
from pygemv.tuning.space import build_space  # noqa: E402
from pygemv.tuning.tuner import config_key, tune_shape  # noqa: E402

C = pygemv.Config
optuna.logging.set_verbosity(optuna.logging.WARNING)


class FakeMeasure:
    """A timer with a known optimum: cost grows with the distance of each parameter from
    ``best``. Legality is the real registry's; ``wrong`` configs fail the check; a ``lucky``
    config reads fast once, then at its true cost."""

    def __init__(self, m, k, dtype, best, wrong=(), lucky=None, interrupt_after=None, op="N", batch=1, weights=None):
        self.m, self.k, self.dtype, self.best = m, k, dtype, best
        self.op, self.batch, self.weights = op, batch, weights
        nx, ny = (m, k) if op == "T" else (k, m)
        self.problem = dict(trans=op == "T", batch=batch, stride_a=m * k, stride_x=nx, stride_y=ny)
        if weights is not None:  # a quantized problem: its args carry the weight descriptor
            self.q = _lib.QMatrix()
            bits, gs, zp = weights
            assert _lib.load().gemv_qmatrix_init(ctypes.byref(self.q), bits, gs or 0, _lib.QZERO_MODES.index(zp),
                                                 _lib.DTYPES[dtype], m, k) == 0
            self.args = _lib.Args(0, _lib.DTYPES[dtype], m, k, 1.0, 0.0, None, k, 256, 1, 512, 1, None,
                                  pygemv.WORKSPACE_RECOMMENDED_BYTES, None, 0, 1, 0, 0, 0, ctypes.addressof(self.q))
        self.wrong = {config_key(c) for c in wrong}
        self.lucky = config_key(lucky) if lucky else None
        self.interrupt_after = interrupt_after
        self.timed, self.checked, self.illegal = [], [], []

    def can_run(self, c):
        if self.weights is not None:
            return can_run(c, self.args)
        return pygemv.can_implement(c, self.m, self.k, self.dtype, **self.problem)

    def workspace(self, c):
        if self.weights is not None:
            return _lib.load().gemv_workspace_size(ctypes.byref(c.to_c()), ctypes.byref(self.args))
        return pygemv.workspace_size(c, self.m, self.k, self.dtype, **self.problem)

    def heuristic(self):
        if self.weights is not None:
            return C("q_rows", 8, 64, True, 4, True, 1)
        if self.op == "T":
            return C("t_columns", 32, 8, self.k % 8 == 0, 1)
        return C("warp_per_row", 32, 4, self.k % 8 == 0, 1)

    def legal(self, c):
        ok, why = self.can_run(c)
        if ok and self.workspace(c) > pygemv.WORKSPACE_RECOMMENDED_BYTES:
            ok, why = False, "workspace"
        if not ok:
            self.illegal.append(c)
        return ok, why

    def check(self, c):
        assert self.can_run(c)[0], "an illegal config reached the GPU"
        self.checked.append(c)
        return config_key(c) not in self.wrong, "3 of 256 rows outside the bound"

    def cost(self, c):
        b = self.best
        return (10.0 + 2.0 * abs(math.log2(c.threads_per_row) - math.log2(b.threads_per_row))
                + 1.0 * abs(math.log2(c.rows_per_block) - math.log2(b.rows_per_block))
                + 3.0 * (c.variant != b.variant) + 1.5 * (c.unroll != b.unroll) + 1.0 * (c.x_in_smem != b.x_in_smem)
                + 2.0 * (c.vector_loads != b.vector_loads) + 0.5 * abs(math.log2(c.split_k) - math.log2(b.split_k)))

    def time_us(self, c):
        assert config_key(c) not in self.wrong, "a wrong config was timed"
        if self.interrupt_after is not None and len(self.timed) >= self.interrupt_after:
            raise KeyboardInterrupt
        first = all(config_key(t) != config_key(c) for t in self.timed)
        self.timed.append(c)
        return 1.0 if first and config_key(c) == self.lucky else self.cost(c)


BEST = C("block_per_row", 128, 2, True, 2)


def tune(measure, trials, storage="sqlite:///:memory:", seeds=(), name="t"):
    space = build_space(measure.m, measure.k, measure.dtype, op=measure.op, batch=measure.batch,
                        weights=measure.weights)
    return tune_shape(measure, space, storage=storage, study_name=name, trials=trials, seeds=seeds)


@pytest.mark.parametrize("m, k, dtype", [(1, 1, "float32"), (7, 3, "float16"), (1000, 4097, "bfloat16"),
                                         (4096, 4096, "float16"), (1, 65536, "float32"), (1048576, 16, "float16"),
                                         (1000, 108, "float16"), (300, 1002, "float32")])
def test_search_space_is_legal_and_conditional(m, k, dtype):
    space = build_space(m, k, dtype)
    assert space.variants and "splitk_atomic" not in space.variants  # deterministic only, like dispatch
    es = {"float32": 4, "float16": 2, "bfloat16": 2}[dtype]
    aligned = m == 1 or k * es % 16 == 0
    vector = [pygemv.LOADS_ALIGNED] if aligned else [pygemv.LOADS_REALIGNED, pygemv.LOADS_PHASED, pygemv.LOADS_PHASED_X_COPIES]
    if not aligned and k * es % 8 == 0:  # rows 8-byte aligned
        vector.append(pygemv.LOADS_ALIGNED8)
    assert space.vector_loads == vector + [pygemv.LOADS_SCALAR]
    n_valid = 0
    for c in space.configs():
        v = pygemv.variant(c.variant)
        assert v.threads_per_row[0] <= c.threads_per_row <= v.threads_per_row[1]
        assert 32 <= c.threads_per_row * c.rows_per_block <= 1024
        assert (c.split_k > 1) == (v.split_k[1] > 1) or v.split_k[0] == 1  # row tiles run unsplit too
        if c.split_k > 1:
            assert c.split_k * 8 <= k
        n_valid += validate(c)
    assert n_valid > 0
    # Parameters are conditional: p and rows are named by the variant (and p) they belong to.
    params = space.params(next(iter(space.configs())))
    assert set(params) >= {"variant", "vector_loads", "unroll", "x_in_smem"}
    assert any(key.startswith("threads_per_row[") for key in params)


def test_search_space_follows_the_rows_pitch_and_a_offset():
    """build_space(lda=, a_offset=): padded rows that all start 16-byte aligned search aligned
    packs (op N and op T); rows or A off 16 bytes search realigned and phased packs, 8-byte packs
    where both are on 8 bytes; row_mma only on aligned rows; bad lda or a_offset raise."""
    A, R, P, A8 = pygemv.LOADS_ALIGNED, pygemv.LOADS_REALIGNED, pygemv.LOADS_PHASED, pygemv.LOADS_ALIGNED8
    def splits_loads(**kw):  # the split-M column kernels' loads (the op T stream's are fixed, aligned)
        space = build_space(5262, 6, "float32", op="T", **kw)
        return {int(c.vector_loads) for c in space.configs() if c.variant == "t_splitm_twopass"}
    # fp32 5262 x 6, lda 20 (80-byte rows): aligned packs, where dense rows of 24 bytes are not.
    assert A in splits_loads(lda=20) and R not in splits_loads(lda=20), splits_loads(lda=20)
    assert A not in splits_loads() and R in splits_loads(), splits_loads()
    assert A not in splits_loads(lda=20, a_offset=1), splits_loads(lda=20, a_offset=1)
    assert build_space(1000, 6, "float32", lda=8).vector_loads == [A, pygemv.LOADS_SCALAR]
    assert build_space(1000, 8, "float32", lda=10).vector_loads[-2:] == [A8, pygemv.LOADS_SCALAR]  # 40-byte rows
    assert A8 not in build_space(1000, 8, "float32", lda=10, a_offset=1).vector_loads
    assert build_space(1000, 8, "float32", lda=8, a_offset=2).vector_loads[:2] == [R, P]          # A 8 bytes off
    assert build_space(1, 6, "float32", a_offset=1).vector_loads[0] == R                            # one row off 4 bytes
    assert build_space(1000, 8, "float32").vector_loads == build_space(1000, 8, "float32", lda=8).vector_loads
    assert "row_mma" in build_space(1000, 64, "float16", lda=72).variants                          # 144-byte rows
    assert "row_mma" not in build_space(1000, 64, "float16", lda=68).variants
    with pytest.raises(ValueError, match="lda"):
        build_space(10, 64, "float16", lda=63)
    with pytest.raises(ValueError, match="a_offset"):
        build_space(10, 64, "float16", a_offset=-1)


def test_row_stream_in_the_space_only_for_rows_it_can_hold_with_its_fixed_loads():
    space = build_space(100000, 35, "float16")
    assert "row_stream" in space.variants and space.packs_only == {"row_stream"}
    stream = [c for c in space.configs() if c.variant == "row_stream"]
    assert stream and all(validate(c) and c.x_in_smem and c.vector_loads == pygemv.LOADS_REALIGNED for c in stream)
    assert {c.threads_per_row * c.rows_per_block for c in stream} == {64, 128, 256, 512}
    for c in stream[:5]:
        params = space.params(c)
        assert "vector_loads" not in params and "x_in_smem" not in params  # fixed, not drawn
    assert space.params(pygemv.Config("row_stream", 1, 64, pygemv.LOADS_REALIGNED, 1, False)) is None
    assert "row_stream" not in build_space(1000, 4097, "bfloat16").variants  # 8 KB rows: no whole row a step


def test_row_mma_in_the_space_only_for_16_bit_rows_of_whole_aligned_packs_up_to_1_kb():
    """row_mma (NOTES 77): fp16/bf16 rows of whole 16-byte packs up to 1 KB, single or batched;
    a warp a tile of 16 rows, 1 to 8 tiles a block (no more than the rows fill), aligned packs
    and x in place fixed, every unroll drawn."""
    space = build_space(299593, 112, "bfloat16")
    assert "row_mma" in space.variants and "row_mma" in space.no_staging
    assert space.threads_per_row["row_mma"] == [32] and space.rows_per_block[("row_mma", 32)] == [1, 2, 4, 8]
    mma = [c for c in space.configs() if c.variant == "row_mma"]
    assert len(mma) == 4 * 3 and all(validate(c) and not c.x_in_smem and c.vector_loads == pygemv.LOADS_ALIGNED
                                      for c in mma)
    assert {c.unroll for c in mma} == {1, 2, 4}
    params = space.params(mma[0])
    assert "vector_loads" not in params and "x_in_smem" not in params and params["unroll"] == mma[0].unroll
    assert build_space(20, 64, "float16").rows_per_block[("row_mma", 32)] == [1, 2]     # 20 rows: 2 tiles at most
    assert "row_mma" in build_space(64, 64, "float16", batch=4096).variants
    assert "row_mma" in build_space(1000, 512, "float16").variants
    for m, k, dtype in ((299593, 112, "float32"), (299593, 108, "float16"), (1000, 520, "float16")):
        assert "row_mma" not in build_space(m, k, dtype).variants, (m, k, dtype)


def test_illegal_configs_are_pruned_before_any_launch_and_never_timed():
    m = FakeMeasure(1000, 1001, "float16", C("rows_per_warp", 8, 16, False, 2))  # odd K: no aligned loads
    r = tune(m, 40)
    assert all(pygemv.can_implement(c, 1000, 1001, "float16")[0] for c in m.timed)
    assert not any(config_key(c) in {config_key(i) for i in m.illegal} for c in m.timed + m.checked)
    assert r.config.vector_loads == pygemv.LOADS_SCALAR and pygemv.can_implement(r.config, 1000, 1001, "float16")[0]


def test_search_finds_the_optimum_and_beats_the_heuristic():
    m = FakeMeasure(2048, 4096, "float16", BEST)
    r = tune(m, 60)
    assert r.us <= m.cost(BEST) * 1.15
    assert r.us < r.heuristic_us
    assert r.timed > 10 and r.trials == 60


def test_seeds_and_the_heuristic_are_tried_first():
    m = FakeMeasure(2048, 4096, "float16", BEST)
    r = tune(m, 3, seeds=[BEST, C("warp_per_row", 32, 2, True, 2)])
    assert config_key(m.timed[0]) == config_key(m.heuristic())
    assert config_key(m.timed[1]) == config_key(BEST)
    assert r.config == BEST  # a budget of 3 trials already has the seed's winner


def test_a_wrong_config_is_never_chosen_even_when_fastest():
    m = FakeMeasure(2048, 4096, "float16", BEST, wrong=[BEST])
    r = tune(m, 20, seeds=[BEST])
    assert config_key(r.config) != config_key(BEST)
    assert [w["config"] for w in r.wrong] == [BEST.as_dict()]


def test_a_lucky_sample_does_not_win_the_confirmation():
    lucky = C("warp_per_row", 32, 2, True, 2)
    m = FakeMeasure(2048, 4096, "float16", BEST, lucky=lucky)
    r = tune(m, 4, seeds=[lucky, BEST])
    assert r.config == BEST and r.runner_up is not None
    assert r.us == pytest.approx(m.cost(BEST)) and r.runner_up_us > r.us


class NearHeuristic(FakeMeasure):
    """The heuristic's config costs ``ratio`` times the optimum."""

    def __init__(self, ratio, *args, **kw):
        super().__init__(*args, **kw)
        self.ratio = ratio

    def cost(self, c):
        if config_key(c) == config_key(self.heuristic()):
            return super().cost(self.best) * self.ratio
        return super().cost(c)


@pytest.mark.parametrize("ratio, keeps_heuristic", [(1.0, True), (1.015, True), (1.05, False)])
def test_the_heuristic_stays_unless_clearly_beaten(ratio, keeps_heuristic):
    m = NearHeuristic(ratio, 2048, 4096, "float16", BEST)
    r = tune(m, 6, seeds=[BEST])
    assert config_key(r.config) == config_key(m.heuristic() if keeps_heuristic else BEST)
    assert r.heuristic_us == pytest.approx(m.cost(BEST) * ratio)


def test_an_interrupted_tune_resumes_from_sqlite(tmp_path):
    url = f"sqlite:///{tmp_path / 'tune.db'}"
    m1 = FakeMeasure(2048, 4096, "float16", BEST, interrupt_after=6)
    with pytest.raises(KeyboardInterrupt):
        tune(m1, 30, storage=url, seeds=[BEST])
    study = optuna.load_study(study_name="t", storage=url)
    done_before = [t for t in study.trials if t.state.is_finished()]
    assert 6 <= len(done_before) < 30
    m2 = FakeMeasure(2048, 4096, "float16", BEST)
    r = tune(m2, 30, storage=url, seeds=[BEST])
    study = optuna.load_study(study_name="t", storage=url)
    finished = [t for t in study.trials if t.state.is_finished()]
    assert len(finished) >= 30
    assert sum(1 for t in finished if t.user_attrs.get("seed")) == 2  # seeds queued once, not again
    # Configs timed before the interruption are not timed again (only the confirmation re-times).
    before = {config_key(c) for c in m1.timed}
    search_times = m2.timed[:len(m2.timed) - 3 * 2]  # 2 confirmation rounds of at most 3 configs
    assert not any(config_key(c) in before for c in search_times)
    assert r.config == BEST
    assert study.user_attrs["result"]["config"] == BEST.as_dict()


def test_tuned_results_reach_the_c_dispatcher_through_a_table(tmp_path):
    fp = Fingerprint("Fake GPU", 4, 9, 0, 13000, pygemv.library_version())
    results = []
    for (mm, kk), best in [((64, 64), C("rows_per_warp", 4, 32, True, 1)), ((4096, 4096), BEST),
                           ((1, 65536), C("splitk_twopass", 256, 1, True, 4, False, 64))]:
        r = tune(FakeMeasure(mm, kk, "float16", best), 30, seeds=[best], name=f"{mm}x{kk}")
        results.append(r)
        assert r.config == best
    path = write_table(tmp_path / "fake.gemvtable", fp,
                       [Entry(r.dtype, r.m, r.k, r.config, r.us, r.heuristic_us) for r in results])
    with pygemv.Table(path) as t:
        t.check(fp)
        for r in results:
            assert t.lookup(r.m, r.k, "float16") == (r.config, 0.0)
        assert t.lookup(3000, 5000, "float16")[0] == BEST
        assert t.lookup(2, 50000, "float16")[0].variant == "splitk_twopass"


def test_grids_and_held_out_shapes():
    for dtype in ("float32", "float16", "bfloat16"):
        g = grid.default_grid(dtype)
        assert (1, 1) in g and (1, 1 << 20) in g and (1 << 20, 1) in g and (128256, 4096) in g
        assert all(m * k * 2 <= grid.CAP_BYTES for m, k in g if (m, k) not in grid.NAMED_SHAPES)
        assert len(set(g)) == len(g)
        assert set(grid.quick_grid(dtype)) < set(g) | {(4096, 4096), (14336, 4096)}
    shapes = heldout.draw_shapes(30)
    assert len(shapes) == 30 and {d for d, _, _ in shapes} == {"float32", "float16", "bfloat16"}
    for d, m, k in shapes:
        assert 1 <= m <= 1 << 17 and 1 <= k <= 1 << 17 and (m, k) not in grid.default_grid(d)


def test_tune_command_without_a_gpu_says_so(tmp_path):
    from conftest import gpu_absent_reason
    if gpu_absent_reason() is None:
        pytest.skip("this machine has a GPU")
    r = subprocess.run([sys.executable, "-m", "pygemv.tuning.cli", "--quick"], capture_output=True, text=True,
                       cwd=tmp_path)
    assert r.returncode == 2
    assert "pygemv-tune:" in r.stderr and ("driver" in r.stderr or "device" in r.stderr)
    assert "Traceback" not in r.stderr


@pytest.mark.parametrize("vector_loads", [1, 2, 0])
def test_generic_seeds_are_valid_and_match_the_load_width(vector_loads):
    from pygemv.tuning.cli import generic_seeds
    seeds = generic_seeds(vector_loads)
    assert seeds and len({config_key(c) for c in seeds}) == len(seeds)
    for c in seeds:
        assert validate(c), c
        # No trial of a small budget spent on the other width; rows that start anywhere also
        # try phased rows, x staged, shifted or in its phase copies.
        assert c.vector_loads == vector_loads or (vector_loads == 2 and c.vector_loads in (3, 5)), c
    assert any(c.vector_loads == 3 for c in seeds) == (vector_loads == 2)
    assert any(c.vector_loads == 5 for c in seeds) == (vector_loads == 2)
    # A shape with 16-byte rows takes every aligned seed into its space; odd K takes the
    # realigned and the scalar ones.
    space = build_space(4096, 4096 if vector_loads == 1 else 4097, "float16")
    assert all(space.params(c) is not None for c in seeds)


def test_rows_8_byte_aligned_are_seeded_with_8_byte_configs():
    from pygemv.tuning.cli import generic_seeds
    space = build_space(100000, 108, "float16")  # rows of 216 bytes
    assert pygemv.LOADS_ALIGNED8 in space.vector_loads
    seeds = generic_seeds(space.vector_loads[0], aligned8=True)
    eight = [c for c in seeds if c.vector_loads == pygemv.LOADS_ALIGNED8]
    assert len(eight) == 5 and all(validate(c) for c in eight)
    # Each seed lies in the space of the shapes it was measured on: a few lanes on short rows,
    # a block a row on long ones (the tuner skips seeds outside a study's space).
    assert all(space.params(c) is not None for c in eight if c.threads_per_row <= 16)
    long_rows = build_space(16384, 8196, "float16")
    assert all(long_rows.params(c) is not None for c in eight if c.threads_per_row >= 256)
    assert not any(c.vector_loads == pygemv.LOADS_ALIGNED8 for c in generic_seeds(space.vector_loads[0]))


@pytest.mark.parametrize("m, k, dtype", [(1, 1, "float32"), (4096, 4096, "float16"), (1048576, 16, "float32"),
                                         (256, 65536, "bfloat16"), (1000, 1001, "float16"), (100000, 61, "bfloat16"),
                                         (100000, 4, "float16"), (100000, 3, "float16"), (100000, 2, "float32"),
                                         (100000, 1, "float32")])
def test_op_t_space_is_the_column_operations_without_staging(m, k, dtype):
    """op T searches the column operations: c of 2..64 threads across a tile (no more than
    the row's packs), split-M slices of 8 rows or more, aligned 16-byte packs for aligned
    rows and realigned ones or phased rows for the rest (drawn as each operation's own
    parameter), one element a load for both, and x_in_smem never
    drawn (the column kernels read x as a broadcast). The stream of packs (aligned packs,
    fixed) joins on rows of half a pack to 2 KB (any short single row)."""
    space = build_space(m, k, dtype, op="T")
    es = {"float32": 4, "float16": 2, "bfloat16": 2}[dtype]
    stream = k * es <= 2048 and (m == 1 or 2 * k >= 16 // es - 1)
    assert space.op == "T" and set(space.variants) <= {"t_columns", "t_splitm_twopass", "t_stream"} and space.variants
    aligned = (m == 1) or k * es % 16 == 0
    own = {"t_stream": [1]} if stream else {}
    if not aligned:  # phased rows: a slice or a row lane a phase class
        for name in {"t_columns", "t_splitm_twopass"} & set(space.variants):
            own[name] = [pygemv.LOADS_REALIGNED, pygemv.LOADS_PHASED, pygemv.LOADS_SCALAR]
    assert ("t_stream" in space.variants) == stream and space.variant_loads == own
    assert space.no_staging == set(space.variants)
    assert space.vector_loads == [pygemv.LOADS_ALIGNED if aligned else pygemv.LOADS_REALIGNED, pygemv.LOADS_SCALAR]
    if not aligned:
        assert {c.vector_loads for c in space.configs() if c.variant == "t_splitm_twopass"} == {0, 2, 3}
        assert {c.vector_loads for c in space.configs() if c.variant == "t_columns"} == {0, 2, 3}
    assert ("t_splitm_twopass" in space.variants) == (m >= 16)
    configs = list(space.configs())
    n_valid = 0
    for c in configs:
        # Unroll is drawn on its own: 4 of it with a block over 512 threads is pruned by legal().
        assert not c.x_in_smem and (validate(c) or (c.unroll == 4 and c.threads_per_row * c.rows_per_block > 512)), c
        n_valid += validate(c)
        if c.variant == "t_stream":  # blocks of 64 to 1024 threads, slices of 64 packs a block and more
            assert c.vector_loads == pygemv.LOADS_ALIGNED and c.rows_per_block == 1 and 64 <= c.threads_per_row
            assert c.split_k == 1 or c.split_k * 64 * 64 <= m * k * es / 16
            assert space.params(c) is not None and "vector_loads" not in space.params(c)
            continue
        assert 2 <= c.threads_per_row <= 64 and 32 <= c.threads_per_row * c.rows_per_block <= 1024
        if c.split_k > 1:
            assert c.split_k * 8 <= m
        params = space.params(c)
        assert params is not None and "x_in_smem" not in params
    assert n_valid > 0
    assert space.params(C("t_columns", 4, 64, True, 4, True)) is None  # staged x: outside the space
    assert space.params(C("warp_per_row", 32, 4, True, 1)) is None       # an op N operation


def test_batched_space_leaves_out_what_serves_single_products_only():
    """A strided batch: no row stream, no x's phase copies and no staged phased rows (single
    products only), phased rows with x through L1 kept; op T keeps both column operations."""
    n = build_space(100000 // 64, 35, "float16", batch=64)
    assert "row_stream" not in n.variants and n.batch == 64
    assert pygemv.LOADS_PHASED_X_COPIES not in n.vector_loads
    assert pygemv.LOADS_PHASED in n.vector_loads and pygemv.LOADS_REALIGNED in n.vector_loads
    phased = [c for c in n.configs() if c.vector_loads == pygemv.LOADS_PHASED and validate(c)]
    assert phased and {c.x_in_smem for c in phased} == {False, True}
    for c in phased:  # the staged form refuses the batch, the form through L1 takes it
        ok, why = pygemv.can_implement(c, 100000 // 64, 35, "float16", batch=64, stride_a=(100000 // 64) * 35,
                                       stride_x=35, stride_y=100000 // 64)
        assert ok != c.x_in_smem, (c, why)
        assert c.x_in_smem == ("x_in_smem computes single products" in why), (c, why)
    assert "row_stream" in build_space(100000, 35, "float16").variants
    # A single row per product: product 1's row starts where K ends, so aligned loads need K aligned.
    assert build_space(1, 35, "float16", batch=8).vector_loads[0] == pygemv.LOADS_REALIGNED
    assert build_space(1, 35, "float16").vector_loads[0] == pygemv.LOADS_ALIGNED
    t = build_space(256, 256, "float32", op="T", batch=512)
    assert set(t.variants) == {"t_columns", "t_splitm_twopass", "t_stream"} and t.batch == 512
    runnable = [c for c in t.configs() if validate(c)]
    assert runnable and all(pygemv.can_implement(c, 256, 256, "float32", trans=True, batch=512)[0] for c in runnable)


def test_op_t_and_batched_tunes_find_the_optimum_and_never_time_an_illegal_config():
    best_t = C("t_splitm_twopass", 8, 32, True, 4, False, 8)
    m = FakeMeasure(4096, 4096, "float16", best_t, op="T")
    r = tune(m, 40, seeds=[best_t])
    assert r.config == best_t and (r.op, r.batch) == ("T", 1)
    assert all(pygemv.can_implement(c, 4096, 4096, "float16", trans=True)[0] for c in m.timed)
    best_b = C("rows_per_warp", 4, 32, True, 2)
    mb = FakeMeasure(64, 64, "bfloat16", best_b, batch=4096)
    rb = tune(mb, 30)
    # Unseeded, 30 trials of TPE land on the optimum or one step from it (rows 32 or 64,
    # depending on the sampler's draws): the tune keeps the fastest config it timed.
    assert rb.config == min(mb.timed, key=mb.cost) and mb.cost(rb.config) <= mb.cost(best_b) + 1.0
    assert (rb.op, rb.batch) == ("N", 4096)
    assert all(pygemv.can_implement(c, 64, 64, "bfloat16", batch=4096)[0] for c in mb.timed)
    # The result keeps its problem through storage (older results read as op N singles).
    from pygemv.tuning.tuner import ShapeResult
    assert ShapeResult.from_dict(rb.as_dict()) == rb
    old = rb.as_dict()
    del old["op"], old["batch"]
    assert (ShapeResult.from_dict(old).op, ShapeResult.from_dict(old).batch) == ("N", 1)


def test_op_t_and_batched_entries_reach_the_c_dispatcher_through_a_table(tmp_path):
    fp = Fingerprint("Fake GPU", 4, 9, 0, 13000, pygemv.library_version())
    t_cfg = C("t_splitm_twopass", 16, 16, True, 4, False, 16)
    b_cfg = C("rows_per_warp", 4, 32, True, 2)
    n_cfg = C("block_per_row", 128, 2, True, 2)
    entries = [Entry("float16", 4096, 4096, t_cfg, 13.6, 14.0, "T"),
               Entry("float32", 64, 64, b_cfg, 20.0, 25.0, "N", 4096),  # (16-bit: row_mma's regime, NOTES 77)
               Entry("float16", 4096, 4096, n_cfg, 11.6, 11.9)]
    path = write_table(tmp_path / "fake.gemvtable", fp, entries)
    with pygemv.Table(path) as t:
        t.check(fp)
        assert t.lookup(4096, 4096, "float16", trans=True)[0] == t_cfg
        assert t.lookup(4096, 4096, "float16")[0] == n_cfg
        assert t.lookup(64, 64, "float32", batch=4096)[0] == b_cfg
        assert t.lookup(64, 64, "float32", batch=3000)[0] == b_cfg  # nearest batched entry
        assert t.lookup(64, 64, "float32", batch=2048) is None     # one octave: beyond a batched entry's reach
        assert t.lookup(64, 64, "float16", batch=4096) is None     # no 16-bit batched entry


def test_tune_jobs_cover_each_op_and_batches_and_keep_old_study_names():
    from pygemv.tuning.cli import plan_jobs, study_name
    jobs = plan_jobs(["float16"])
    assert all(w is None for *_, w in jobs)
    jobs = [j[:5] for j in jobs]
    ops = {(op, b > 1) for op, b, _, _, _ in jobs}
    assert ops == {("N", False), ("T", False), ("N", True), ("T", True)}
    assert len(jobs) == len(set(jobs))
    single_t = [(m, k) for op, b, _, m, k in jobs if op == "T" and b == 1]
    assert (4096, 4096) in single_t and (1, 1) in single_t and (1 << 18, 64) in single_t
    assert not any(k in grid.UNALIGNED_K for _, k in single_t) and len(single_t) < 60
    for op, b, d, m, k in jobs:
        if b > 1:
            assert b * m * k * 2 <= grid.CAP_BYTES and (b, m, k) in grid.batch_grid(d)
    quick = plan_jobs(["float32"], quick=True)
    assert {b for _, b, *_ in quick} == {1} and {op for op, *_ in quick} == {"N", "T"}
    assert plan_jobs(["float16"], ops=["T"], shapes=[(512, 512)], batches=[1, 64]) == [
        ("T", 1, "float16", 512, 512, None), ("T", 64, "float16", 512, 512, None)]
    assert not any(b > 1 for _, b, *_ in plan_jobs(["float16"], batched=False))
    # A tune in parts: the batches alone, or the quantized grid alone.
    only_batches = plan_jobs(["float16"], single=False)
    assert only_batches and all(b > 1 for _, b, *_ in only_batches)
    assert len(only_batches) == 2 * len(grid.batch_grid("float16"))
    only_q = plan_jobs(["float16"], ops=["N"], single=False, batched=False, quantized=True)
    assert only_q and all(w is not None and (op, b) == ("N", 1) for op, b, *_, w in only_q)
    # --formats: one format's shapes alone (int4 g128 fp16 of the three fp16 formats).
    g128 = plan_jobs(["float16"], ops=["N"], single=False, batched=False, quantized=True, formats=["int4-g128"])
    assert g128 and {w for *_, w in g128} == {(4, 128, "int")} and 3 * len(g128) == len(only_q)
    # --shapes with --quantized: the formats at those shapes instead of the grid (and the
    # dense shapes too unless --no-single).
    at = plan_jobs(["bfloat16"], ops=["N"], shapes=[(4096, 1024), (3000, 2000)], single=False, batched=False,
                   quantized=True, formats=["int4-g128-float"])
    assert at == [("N", 1, "bfloat16", 4096, 1024, (4, 128, "float")), ("N", 1, "bfloat16", 3000, 2000, (4, 128, "float"))]
    both = plan_jobs(["bfloat16"], ops=["N"], shapes=[(4096, 1024)], batched=False, quantized=True,
                     formats=["int4-g128-float"])
    assert both == [("N", 1, "bfloat16", 4096, 1024, None), ("N", 1, "bfloat16", 4096, 1024, (4, 128, "float"))]
    # An op N single product keeps its study name: a storage from before resumes.
    assert study_name("gpu/lib/cuda/", "N", 1, "float16", 4096, 4096) == "gpu/lib/cuda/float16/4096x4096"
    names = {study_name("p/", op, b, d, m, k) for op, b, d, m, k in jobs}
    assert len(names) == len(jobs)


def test_op_t_generic_seeds_are_valid_column_configs():
    from pygemv.tuning.cli import generic_seeds
    for vec in (1, 0):
        seeds = generic_seeds(vec, "T")
        assert seeds and len({config_key(c) for c in seeds}) == len(seeds)
        assert all(validate(c) and pygemv.variant(c.variant).op == "T" and c.vector_loads == vec for c in seeds)
        space = build_space(4096, 4096 if vec else 4097, "float16", op="T")
        assert all(space.params(c) is not None for c in seeds)


def test_the_gpu_measure_of_op_t_and_batches_launches_within_its_operands():
    """The tuner's GPU instrument (bench.Case under GpuMeasure) on the stand-in runtime:
    for op N and op T, single and batched, dispatch and a forced config launch only within
    the operands and the workspace (the stand-in computes nothing, so the check fails)."""
    from hostcheck_lib import run
    run("""
    sys.path.insert(0, ".")
    from tuning.measure import GpuMeasure, GpuContext
    ws = pygemv.empty((1 << 20,), "float32")
    ctx = GpuContext(0, ws.ptr, 4 << 20, 1 << 20)
    for op, batch, forced in (("N", 1, pygemv.Config("splitk_twopass", 32, 8, True, 2, False, 4)),
                              ("T", 1, pygemv.Config("t_splitm_twopass", 8, 32, True, 4, False, 8)),
                              ("N", 64, pygemv.Config("rows_per_warp", 4, 32, True, 2)),
                              ("T", 8, pygemv.Config("t_splitm_twopass", 4, 64, True, 2, False, 4))):
        m = GpuMeasure(64, 256, "float16", ctx, op=op, batch=batch)
        assert m.case.args[0].op == (1 if op == "T" else 0) and m.case.args[0].batch == batch
        for c in (m.dispatch(), forced):
            assert m.legal(c)[0], (op, batch, c)
            before = fake.gemv_fake_launches()
            ok, why = m.check(c)
            assert fake.gemv_fake_launches() > before and "outside the error bound" in why, why
        m.close()
    assert fake.gemv_fake_violations() == 0
    """)



@pytest.mark.parametrize("weights, dtype, ops", [((4, 128, "int"), "float16", {"q_rows", "q_mma", "q_mma_x_held", "q_mma_rounds"}),
                                                 ((4, 128, "float"), "bfloat16", {"q_rows", "q_mma_x_held", "q_mma_rounds"}),
                                                 ((8, None, "symmetric"), "float16", {"q_rows", "q_mma_x_held", "q_block_rows"}),
                                                 ((8, 64, "float"), "bfloat16", {"q_rows", "q_mma_x_held", "q_block_rows"}),
                                                 ((4, 32, "int"), "bfloat16", {"q_rows", "q_mma_x_held", "q_mma_rounds"})])
def test_quantized_space_is_the_quantized_operations_with_fixed_loads(weights, dtype, ops):
    space = build_space(4096, 4096, dtype, weights=weights)
    # q_rows always stages x; q_mma stages it or reads it in place (x_in_smem drawn); q_mma_x_held
    # never stages it, and walks 1..64 tiles of 16 rows whatever its threads.
    assert set(space.variants) == ops and space.packs_only == {"q_rows"} and space.weights == weights
    assert space.no_staging == ops & {"q_mma_x_held", "q_block_rows", "q_mma_rounds"}
    if "q_mma_x_held" in ops:
        assert space.threads_per_row["q_mma_x_held"] == [32, 64, 128, 256]
        assert all(space.rows_per_block[("q_mma_x_held", p)] == [1, 2, 4, 8, 16, 32, 64] for p in (32, 256))
        assert {c.unroll for c in space.configs() if c.variant == "q_mma_x_held" and validate(c)} == {1, 2}
        assert not any(c.x_in_smem for c in space.configs() if c.variant == "q_mma_x_held")
        small = build_space(40, 4096, dtype, weights=weights)  # 3 tiles: blocks of up to 4
        assert small.rows_per_block[("q_mma_x_held", 256)] == [1, 2, 4]
    if "q_block_rows" in ops:  # blocks of 32 to 256 threads on 1, 2 or 4 rows, unroll 1 or 2, K unsplit
        assert space.threads_per_row["q_block_rows"] == [32, 64, 128, 256] and space.split_k["q_block_rows"] == [1]
        assert all(space.rows_per_block[("q_block_rows", p)] == [1, 2, 4] for p in (32, 256))
        block = [c for c in space.configs() if c.variant == "q_block_rows" and validate(c)]
        assert {c.unroll for c in block} == {1, 2} and not any(c.x_in_smem for c in block)
        assert build_space(4096, 512, dtype, weights=weights).threads_per_row["q_block_rows"] == [32]  # 32 packs a row
    if "q_mma_rounds" in ops:  # a 16-row tile a block of 1 to 8 warps, unroll 1 or 2, K in slices; groups of 32 too
        assert space.threads_per_row["q_mma_rounds"] == [32, 64, 128, 256]
        assert space.split_k["q_mma_rounds"] == [1, 2, 4, 8, 16, 32]
        assert all(space.rows_per_block[("q_mma_rounds", p)] == [1] for p in (32, 256))
        rounds = [c for c in space.configs() if c.variant == "q_mma_rounds" and validate(c)]
        assert {c.unroll for c in rounds} == {1, 2} and not any(c.x_in_smem for c in rounds)
        assert build_space(4096, 256, dtype, weights=weights).threads_per_row["q_mma_rounds"] == [32, 64]  # 2 steps
    assert space.vector_loads == [pygemv.LOADS_ALIGNED]
    for v in ops - {"q_block_rows"}:
        assert 1 in space.split_k[v] and max(space.split_k[v]) == 32  # 64 slices of 4096 are under a 128-column step
    configs = [c for c in space.configs() if validate(c)]
    assert configs and all(c.vector_loads == pygemv.LOADS_ALIGNED for c in configs)
    assert all(c.x_in_smem for c in configs if c.variant == "q_rows")
    assert {c.x_in_smem for c in configs if c.variant == "q_mma"} == ({False, True} if "q_mma" in ops else set())
    rows = next(c for c in configs if c.variant == "q_rows")
    params = space.params(rows)
    assert "vector_loads" not in params and "x_in_smem" not in params
    if "q_mma" in ops:
        unstaged = next(c for c in configs if c.variant == "q_mma" and not c.x_in_smem)
        assert space.params(unstaged)["x_in_smem"] is False
    assert space.params(C("warp_per_row", 32, 4, True, 1)) is None  # a dense operation


def test_quantized_tune_finds_the_optimum_and_writes_entries_keyed_by_bits_and_group(tmp_path):
    from pygemv.tuning.cli import entry_of, plan_jobs, study_name
    best = C("q_rows", 16, 32, True, 2, True, 4)
    m = FakeMeasure(900, 32768, "float16", best, weights=(4, 128, "int"))  # not q_mma_rounds' shape
    r = tune(m, 40, seeds=[best])
    assert r.config == best and r.weights == (4, 128, "int")
    assert all(m.can_run(c)[0] for c in m.timed)
    from pygemv.tuning.tuner import ShapeResult
    assert ShapeResult.from_dict(r.as_dict()) == r
    e = entry_of(r)
    assert (e.op, e.bits, e.group) == ("N", 4, 128) and e.line().startswith("W4G128 float16 1 900 32768 q_rows ")
    fp = Fingerprint("Fake GPU", 4, 9, 0, 13000, pygemv.library_version())
    path = write_table(tmp_path / "q.gemvtable", fp, [e])
    with pygemv.Table(path) as t:
        assert t.lookup(900, 32768, "float16", weights=(4, 128, 1))[0] == best
        # Where the heuristic runs q_mma_rounds (int4 of 2048 to 4096 rows, 2048 columns up, to 2^24 codes), other
        # operations' entries serve no shape (they were tuned before it).
        assert t.lookup(2048, 4096, "float16", weights=(4, 128, 1)) is None
    # The quantized grid: opt-in, each format its own table key, names apart from the dense ones.
    jobs = plan_jobs(["float16", "bfloat16"], quantized=True)
    q = [j for j in jobs if j[5] is not None]
    assert q and not any(j[5] for j in plan_jobs(["float16"]))
    keys = {(d, w[0], w[1]) for _, _, d, _, _, w in q}
    assert len(keys) == len(grid.QUANTIZED_FORMATS)
    assert (4096, 4096) in {(mm, kk) for _, _, _, mm, kk, _ in q} and (7392, 8192) in {(mm, kk) for *_, mm, kk, _ in q}
    names = {study_name("p/", *j) for j in jobs}
    assert len(names) == len(jobs)
    assert study_name("p/", "N", 1, "float16", 64, 64, (8, None, "symmetric")) == "p/W8G0-symmetric/float16/64x64"


def test_q_mma_k_warps_take_at_most_256_threads_a_block():
    """q_mma's threads_per_row is 32 x the K warps of a 16-row tile (1..8); a block holds at
    most 256 threads (its launch bound), whatever the split of warps between K and tiles."""
    m = FakeMeasure(4096, 4096, "float16", C("q_mma", 64, 2, True, 1, True, 4), weights=(4, 128, "int"))
    for p, r in ((32, 8), (64, 4), (128, 2), (256, 1)):
        assert m.can_run(C("q_mma", p, r, True, 1, True, 4)) == (True, "")
    for p, r in ((64, 8), (256, 2)):
        ok, why = m.can_run(C("q_mma", p, r, True, 1, True, 4))
        assert not ok and "at most 256 threads a block" in why
    assert not validate(C("q_mma", 512, 1, True, 1, True, 4))  # beyond 8 K warps
    space = build_space(4096, 4096, "float16", weights=(4, 128, "int"))
    legal = {(c.threads_per_row, c.rows_per_block) for c in space.configs()
             if c.variant == "q_mma" and validate(c) and m.can_run(c)[0]}
    assert {p for p, _ in legal} == {32, 64, 128, 256} and all(p * r <= 256 for p, r in legal)  # 32 steps a row


def test_merge_later_tables_win_and_the_result_parses(tmp_path):
    """python -m pygemv.tuning.merge: a table tuned in parts becomes one; a later part's
    entry replaces the same descriptor's, the rest is kept, comments survive, and another
    GPU's table or a truncated one is refused without writing anything."""
    from pygemv.tuning.merge import MergeError, merge
    from test_cpu_table import H100, entries as table_entries
    base = write_table(tmp_path / "base.gemvtable", H100, table_entries())
    faster = C("block_per_row", 128, 1, True, 2)
    part = [Entry("float16", 1024, 1024, faster, 2.5, 3.5),                                       # replaces
            Entry("float16", 4096, 4096, C("t_splitm_twopass", 16, 16, True, 4, False, 16), 13.6, 14.0, "T"),
            Entry("float16", 900, 32768, C("q_mma", 32, 4, True, 1, True, 16), 5.0, 5.4, bits=4, group=128)]
    new = write_table(tmp_path / "part.gemvtable", H100, part, info={"tool": "pygemv-tune part"})
    text = new.read_text().replace("# libgemv tuned", "# part two\n# libgemv tuned")
    new.write_text(text)
    out = tmp_path / "merged.gemvtable"
    assert merge([base, new], out) == (len(table_entries()) + 2, 1)
    merged = out.read_text()
    assert "# part two" in merged and "# part.gemvtable: tool pygemv-tune part" in merged
    with pygemv.Table(out) as t:
        assert len(t) == len(table_entries()) + 2
        assert t.lookup(1024, 1024, "float16") == (faster, 0.0)
        assert t.lookup(1024, 1024, "float16", trans=True)[0] == C("t_columns", 32, 8, True, 4)
        assert t.lookup(4096, 4096, "float16", trans=True)[0].variant == "t_splitm_twopass"
        assert t.lookup(900, 32768, "float16", weights=(4, 128, 1))[0].variant == "q_mma"
        assert t.lookup(16, 17, "float32")[0] == C("rows_per_warp", 4, 16, False, 2)
    other = write_table(tmp_path / "other.gemvtable", Fingerprint("NVIDIA H200", 132, 9, 0, 13000,
                                                                   pygemv.library_version()), part)
    with pytest.raises(MergeError, match="fingerprint differs"):
        merge([base, other], tmp_path / "bad.gemvtable")
    cut = tmp_path / "cut.gemvtable"
    cut.write_text(new.read_text().replace("\nend\n", "\n"))
    with pytest.raises(MergeError, match="truncated"):
        merge([base, cut], tmp_path / "bad.gemvtable")
    assert not (tmp_path / "bad.gemvtable").exists()
    r = subprocess.run([sys.executable, "-m", "pygemv.tuning.merge", str(base), str(new), "-o", str(out)],
                       capture_output=True, text=True, cwd="/")
    assert r.returncode == 0 and f"{len(table_entries()) + 2} entries (1 replaced" in r.stdout
