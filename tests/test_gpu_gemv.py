"""GPU correctness: every variant x dtype x shape, against a float64 reference, with
padded lda, misaligned pointers, strides of either sign, poisoned outputs; special values,
quick returns, determinism, 64-bit sizes, and error paths that leave no sticky error."""
import json
import os
import subprocess
import sys

import pytest

import pygemv
from gpu_cases import CASES, Case, Problem, all_sample_configs, chain_failures, describe, sample_configs, workspace

pytestmark = pytest.mark.gpu

SIZES = [1, 2, 3, 7, 31, 32, 33, 127, 128, 129, 1000, 4096, 4097]
DTYPES = ["float32", "float16", "bfloat16"]


def check_all_configs(torch, p: Problem, configs, ws):
    """Run every config that can run p (and the dispatcher); the rest must refuse."""
    ran, counts = [], []
    for config in [None] + configs:
        ok, _ = (True, "") if config is None else p.can_run(config)
        if not ok:
            with pytest.raises(pygemv.NotSupportedError):
                p.run(config, workspace=ws)
            continue
        if config is not None and pygemv.workspace_size(config, p.m, p.k, p.dtype) > ws[1]:
            with pytest.raises(pygemv.InsufficientWorkspaceError):
                p.run(config, workspace=ws)
            continue
        y = p.run(config, workspace=ws)
        counts.append(torch.stack([p.violations_t(y), p.gaps_changed()]))
        ran.append(config)
    counts = torch.stack(counts).tolist()  # one sync for the whole batch
    failures = [f"{describe(p, c)}: {bad} outputs outside the bound, {gaps} gap elements written"
                for c, (bad, gaps) in zip(ran, counts) if bad or gaps]
    return failures, len(ran)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("m", SIZES)
def test_every_variant_on_the_size_grid(torch, dtype, m):
    configs = all_sample_configs()
    buf, ws = workspace(torch)
    failures, ran = [], 0
    for ik, k in enumerate(SIZES):
        case = CASES[(SIZES.index(m) * len(SIZES) + ik) % len(CASES)]
        p = Problem(torch, m, k, dtype, case, seed=ik)
        f, r = check_all_configs(torch, p, configs, ws)
        failures += f
        ran += r
    torch.cuda.synchronize()
    assert not failures, f"{len(failures)} of {ran} runs wrong:\n" + "\n".join(failures[:20])
    assert ran >= len(SIZES) * len(pygemv.variants("N"))


@pytest.mark.parametrize("dtype", ["float32", "float16"])
def test_the_largest_staged_slice_of_x_runs_in_both_families(torch, dtype):
    """x staged in shared memory up to the limit can_implement allows, and one element past
    it refused, for the row-group and the row-block kernel, plain and split-K."""
    buf, ws = workspace(torch)
    es = 4 if dtype == "float32" else 2
    failures, ran = [], 0
    for c in (pygemv.Config("warp_per_row", 32, 4, False, 2, True), pygemv.Config("block_per_row", 128, 1, False, 2, True),
              pygemv.Config("splitk_twopass", 32, 4, False, 2, True, 4),
              pygemv.Config("splitk_twopass", 256, 1, False, 4, True, 4)):
        limit = 48 * 1024 - (128 if c.threads_per_row > 32 else 0)  # bytes of one staged slice
        k_max = limit // es * c.split_k
        for k in (k_max, k_max + 8 * c.split_k + 1):
            p = Problem(torch, 37, k, dtype, Case(alpha=1.5, beta=0.5), seed=k)
            f, r = check_all_configs(torch, p, [c], ws)
            failures += f
            ran += r
    assert not failures, "\n".join(failures)
    assert ran == 8 + 4  # the dispatcher each time, and each config at its limit


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("m, k", [(16384, 16384), (1048576, 16), (256, 65536)])
def test_large_and_skewed_shapes(torch, dtype, m, k):
    if dtype == "float32" and m == 16384:
        pass  # 1 GiB of A: fine on the test GPU
    buf, ws = workspace(torch)
    p = Problem(torch, m, k, dtype, Case(alpha=0.75, beta=-1.25))
    configs = [c for v in pygemv.variants("N") for c in sample_configs(v)[:: 3]]
    failures, ran = check_all_configs(torch, p, configs, ws)
    assert not failures, "\n".join(failures[:20])
    assert ran >= len(pygemv.variants("N"))


@pytest.mark.parametrize("dtype", DTYPES)
def test_lda_padding_with_nan_and_misaligned_pointers_for_every_variant(torch, dtype):
    buf, ws = workspace(torch)
    for case in (Case(lda_pad=1, a_off=1, x_off=3, y_off=5, alpha=1.5, beta=0.25),
                 Case(lda_pad=7, incx=2, incy=2, alpha=-3.0, beta=0.5)):
        p = Problem(torch, 301, 517, dtype, case)
        failures, ran = check_all_configs(torch, p, all_sample_configs(), ws)
        assert not failures, "\n".join(failures[:20])
        # The dispatcher still runs everything: misaligned A falls back to scalar loads.
        assert ran > len(pygemv.variants("N"))


def one_config_per_variant():
    return [None] + [sample_configs(v)[0] for v in pygemv.variants("N")] + \
        [sample_configs(v)[-1] for v in pygemv.variants("N")]


@pytest.mark.parametrize("dtype", DTYPES)
def test_nan_and_inf_propagate(torch, dtype):
    buf, ws = workspace(torch)
    p = Problem(torch, 64, 300, dtype, Case())
    p.A[3, 5] = float("nan")
    p.A[10, 299] = float("inf")
    for config in one_config_per_variant():
        if config is not None and not p.can_run(config)[0]:
            continue
        y = p.run(config, workspace=ws)
        assert torch.isnan(y[3]), describe(p, config)
        assert not torch.isfinite(y[10]), describe(p, config)
        others = torch.ones(64, dtype=torch.bool, device="cuda")
        others[[3, 10]] = False
        assert torch.isfinite(y[others]).all(), describe(p, config)
    # NaN in x reaches every row: no zero-skipping, even where A is 0.
    p.A.zero_()
    p.x_buf[p.x_idx[7]] = float("nan")
    for config in one_config_per_variant():
        if config is None or p.can_run(config)[0]:
            assert torch.isnan(p.run(config, workspace=ws)).all(), describe(p, config)


@pytest.mark.parametrize("dtype", DTYPES)
def test_beta_zero_assigns_and_clears_nan_in_y(torch, dtype):
    buf, ws = workspace(torch)
    p = Problem(torch, 200, 96, dtype, Case(beta=0.0, incy=2))
    assert torch.isnan(p.y_init[p.y_idx]).all()
    for config in one_config_per_variant():
        if config is None or p.can_run(config)[0]:
            y = p.run(config, workspace=ws)
            assert torch.isfinite(y).all() and p.violations(y) == 0, describe(p, config)


def test_quick_returns(torch):
    y = torch.randn(100, device="cuda")
    before = y.clone()
    A = torch.randn(100, 50, device="cuda")
    x = torch.randn(50, device="cuda")
    nan = torch.full((100,), float("nan"), device="cuda")
    # alpha == 0, beta == 1: y untouched bit for bit; A and x may be NULL.
    pygemv.gemv(0, 0, y.data_ptr(), m=100, k=50, dtype="float32", alpha=0.0, beta=1.0)
    # K == 0: reference BLAS returns at once, y is not even scaled.
    pygemv.gemv(A.data_ptr(), x.data_ptr(), y.data_ptr(), m=100, k=0, dtype="float32", beta=0.5)
    pygemv.gemv(0, 0, 0, m=0, k=50, lda=50, dtype="float32")
    torch.cuda.synchronize()
    assert torch.equal(y.view(torch.int32), before.view(torch.int32))
    # alpha == 0: y = beta*y, A and x never read (NULL here).
    pygemv.gemv(0, 0, y.data_ptr(), m=100, k=50, dtype="float32", alpha=0.0, beta=2.0)
    torch.cuda.synchronize()
    assert torch.equal(y, 2 * before)
    pygemv.gemv(0, 0, nan.data_ptr(), m=100, k=50, dtype="float32", alpha=0.0, beta=0.0)
    torch.cuda.synchronize()
    assert torch.equal(nan, torch.zeros_like(nan))


@pytest.mark.parametrize("m, k", [(64, 65536), (7, 100000), (1000, 4097)])
def test_deterministic_split_k_is_bit_identical_over_20_runs(torch, m, k):
    buf, ws = workspace(torch)
    p = Problem(torch, m, k, "float32", Case(alpha=1.0, beta=0.5))
    configs = [pygemv.Config("splitk_twopass", pp, 1, vec, 4, False, s) for pp, s in ((256, 64), (32, 7))
               for vec in (True, False)]
    for config in [None] + [c for c in configs if p.can_run(c)[0]]:
        first = p.run(config, workspace=ws).clone()
        assert p.violations(first) == 0
        for _ in range(19):
            assert torch.equal(p.run(config, workspace=ws), first), f"{config} differs between runs"
    # The dispatcher splits K there, deterministically: the H100 table's splitk_twopass, the
    # heuristic's row tile with K slices elsewhere (an H200 has no table).
    chosen = pygemv.select_config(64, 65536, "float32")
    assert chosen.split_k > 1 and pygemv.variant(chosen.variant).deterministic, chosen


def test_repeated_selection_follows_every_input_of_the_choice():
    # libgemv reuses a thread's last choice when the inputs repeat: each input that can
    # change the choice must still change it, in any order of calls.
    def pick(m=64, k=65536, dtype="float32", **kw):
        return pygemv.select_config(m, k, dtype, **kw)
    split, plain = pick(), pick(workspace_bytes=0)
    # Few long rows split K (a workspace: the table's splitk_twopass or the heuristic's row
    # tile); without a workspace the choice cannot.
    assert split.split_k > 1 and pygemv.workspace_size(split, 64, 65536, "float32") > 0 and split.vector_loads, split
    assert plain.split_k == 1, plain
    for _ in range(2):
        assert pick() == split
        assert pick(workspace_bytes=0) == plain
        assert pick(a_ptr=260).vector_loads == pygemv.LOADS_REALIGNED  # A not 16-byte aligned
        assert pick() == split
        assert pick(lda=65537).vector_loads == pygemv.LOADS_REALIGNED  # rows not 16-byte aligned
        assert pick() == split
        assert pick(k=65537).vector_loads == pygemv.LOADS_REALIGNED
        assert pick(m=100000) != split  # enough rows to fill the GPU
        assert pick() == split


def test_atomic_split_k_applies_beta_once(torch):
    buf, ws = workspace(torch)
    for dtype in ("float32", "float16", "bfloat16"):
        for beta in (0.0, 1.0, -0.5):
            p = Problem(torch, 33, 5000, dtype, Case(alpha=1.25, beta=beta, incy=2))
            for s in (2, 16, 64):
                config = pygemv.Config("splitk_atomic", 128, 2, True, 2, False, s)
                y = p.run(config, workspace=ws)
                assert p.violations(y) == 0 and p.gaps_untouched(), describe(p, config)


def test_sizes_past_2_to_the_31_elements(torch):
    # M * lda > 2^31: 64-bit offsets, checked on the first and the last rows.
    m, k, lda = (1 << 19) + 3, 4096, 4104
    assert m * lda > 2**31
    A = torch.empty(m, lda, dtype=torch.float16, device="cuda")
    A[:, :k].uniform_(-1, 1)
    A[:, k:] = float("nan")
    x = torch.randn(k, device="cuda").half()
    y = torch.full((m,), float("nan"), dtype=torch.float16, device="cuda")
    rows = torch.cat([torch.arange(0, 500), torch.arange(m - 500, m)]).cuda()
    ref = A[rows, :k].double() @ x.double()
    bound = 2.0**-11 * ref.abs() + 2 * k * 2.0**-24 * (A[rows, :k].double().abs() @ x.double().abs())
    for config in [None, pygemv.Config("warp_per_row", 32, 8, True, 4, False, 1),
                   pygemv.Config("thread_per_row", 1, 256, True, 1, False, 1),
                   pygemv.Config("block_per_row", 256, 1, False, 2, True, 1)]:
        y.fill_(float("nan"))
        pygemv.gemv(A[:, :k], x, y, config=config)
        assert ((y[rows].double() - ref).abs() <= bound).all(), config
    del A


def test_errors_leave_no_sticky_state(torch):
    import numpy as np
    A = torch.randn(64, 64, device="cuda")
    x = torch.randn(64, device="cuda")
    y = torch.zeros(64, device="cuda")
    host = np.zeros(64 * 64, dtype=np.float32)
    with pytest.raises(pygemv.InvalidPointerError, match="A = .* host pointer"):
        pygemv.gemv(host.ctypes.data, x.data_ptr(), y.data_ptr(), m=64, k=64, dtype="float32")
    with pytest.raises(pygemv.InvalidPointerError, match="y = .* host pointer"):
        pygemv.gemv(A.data_ptr(), x.data_ptr(), host.ctypes.data, m=64, k=64, dtype="float32")
    with pytest.raises(pygemv.NotSupportedError):  # vector loads on a misaligned A
        pygemv.gemv(A.data_ptr() + 4, x.data_ptr(), y.data_ptr(), m=63, k=63, lda=64, dtype="float32",
                    config=pygemv.Config("warp_per_row", 32, 8, True, 1, False, 1))
    with pytest.raises(pygemv.InsufficientWorkspaceError, match="needs .* bytes"):
        pygemv.gemv(A, x, y, config=pygemv.Config("splitk_twopass", 32, 8, True, 1, False, 4), workspace=(0, 0))
    assert torch.equal(y, torch.zeros_like(y))  # nothing written by the failed calls
    pygemv.gemv(A, x, y)
    torch.cuda.synchronize()  # raises if any CUDA error were pending
    assert torch.allclose(y, A @ x, rtol=1e-4, atol=1e-4)


CHAIN_VARIANTS = [None, "splitk_twopass", "splitk_atomic", "block_per_row"]


@pytest.mark.parametrize("dtype", ["float32", "float16"])
@pytest.mark.parametrize("variant", CHAIN_VARIANTS)
def test_back_to_back_calls_see_each_others_results(torch, dtype, variant):
    # Kernels may start before the previous one on the stream ends (programmatic dependent
    # launch on sm_90+). Chains where each call reads the previous call's output (and, in
    # ping-pong, overwrites the previous call's input) must come out as if run one by one.
    assert chain_failures(torch, dtype, variant) == []


@pytest.mark.parametrize("env", [{"GEMV_PDL": "0"}, {"GEMV_PREFETCH_KB_PER_SM": "0"},
                                 {"GEMV_PREFETCH_KB_PER_SM": "4096"}])
def test_chains_stay_correct_with_every_launch_setting(torch, env, tmp_path):
    # The launch knobs (gemv.h: environment) are read once per process: one child each,
    # outside the source tree so that it imports the installed pygemv.
    code = ("import json, sys, torch; sys.path.insert(0, %r)\n"
            "from gpu_cases import chain_failures\n"
            "print(json.dumps([f for d in ('float32', 'float16') for v in %r for f in chain_failures(torch, d, v)]))"
            % (os.path.dirname(__file__), CHAIN_VARIANTS))
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300,
                       env={**os.environ, **env}, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout.strip().splitlines()[-1]) == []
