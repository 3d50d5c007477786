"""The timing module's and the benchmark's logic, without a GPU."""
import math

import pytest

from pygemv import bench, timing


def test_rotation_sets_cover_four_times_l2():
    l2 = 50 << 20
    assert timing.rotation_sets(256 * 256 * 2, l2) == 1600           # 128 KiB sets
    assert timing.rotation_sets(2 << 30, l2) == 1                    # one set dwarfs L2
    assert timing.rotation_sets(60 << 20, l2) == 4                   # 240 MiB >= 200 MiB
    assert timing.rotation_sets(1, l2) == timing.MAX_SETS            # capped
    for size in (1000, 123457, 10 << 20, 51 << 20):
        n = timing.rotation_sets(size, l2)
        assert n * size >= 4 * l2 or n == timing.MAX_SETS
        assert (n - 1) * size < 4 * l2


def test_summarize_takes_the_median():
    t = timing.summarize([5.0, 1.0, 3.0, 100.0, 2.0], sets=7)
    assert (t.median_us, t.min_us, t.max_us, t.repeats, t.sets) == (3.0, 1.0, 100.0, 5, 7)


def test_host_call_us_reports_best_loop():
    calls = []
    us = timing.host_call_us(lambda: calls.append(1), lambda: None, calls=10, repeats=3, warmup=4)
    assert len(calls) == 4 + 30 and 0 < us < 1e5


def test_capture_is_always_ended_even_when_a_call_fails(monkeypatch):
    log = []

    class FakeLib:
        def gemv_capture_begin(self, s):
            log.append("begin")
            return 0

        def gemv_capture_end(self, s, g):
            log.append("end")
            return 0

    monkeypatch.setattr(timing._lib, "load", lambda: FakeLib())

    def boom(i, s):
        raise RuntimeError("kernel refused")

    with pytest.raises(RuntimeError, match="kernel refused"):
        timing.time_graph(boom, 3, stream=0)
    assert log == ["begin", "end"]


def row(dtype, m, k, ours, cublas, gbps=1000.0, at_size_gbps=2950.0):
    return {"dtype": dtype, "m": m, "k": k, "bytes": m * k * 2, "pygemv": {"median_us": ours, "gbps": gbps},
            "speedup_vs_cublas": cublas / ours, "ceiling_at_size": {"gbps": at_size_gbps}}


def test_summary_of_targets():
    rows = [row("float16", 1024, 1024, 2.0, 4.0), row("float32", 8192, 8192, 10.0, 9.0, gbps=2900.0),
            row("bfloat16", 4096, 4096, 5.0, 10.0)]
    s = bench.summary(rows, {"gbps": 3000.0})
    assert math.isclose(s["geomean_vs_cublas"], (2.0 * 0.9 * 2.0) ** (1 / 3))
    assert s["min_vs_cublas"] == 0.9 and s["slower_than_cublas"] == ["float32 8192x8192"]
    assert s["min_vs_cublas_half_squares_le_4096"] == 2.0
    assert math.isclose(s["min_fraction_of_ceiling_64MB_up"], 2900 / 3000)
    assert math.isclose(s["min_fraction_of_ceiling_at_size_64MB_up"], 2900 / 2950)
    assert math.isclose(bench.at_size(rows[0]), 1000 / 2950) and math.isnan(bench.at_size({"pygemv": {"gbps": 1}}))


def test_quantized_summary_sets_each_case_against_the_read_ceiling_at_its_size():
    from pygemv import bench_quantized

    def qrow(fmt, wmb, us, dense_us, ceil_us=None, tiny_us=None):
        r = {"format": fmt, "weight_bytes": wmb << 20, "bytes": (wmb << 20) + 4096, "pygemv": {"median_us": us},
             "cublas_dense": {"median_us": dense_us}}
        if ceil_us is not None:
            r["ceiling_at_size"] = {"median_us": ceil_us}
        if tiny_us is not None:
            r["tinygemm"] = {"median_us": tiny_us}
        return r

    rows = [qrow("int8-row", 8, 5.0, 9.0, 3.0), qrow("int8-row", 32, 14.0, 26.0, 12.0),
            qrow("int8-row", 64, 25.0, 48.0, 23.0), qrow("int4-g128-float", 34, 17.0, 50.0, 12.5, tiny_us=20.0),
            qrow("int4-g32", 40, 20.0, 50.0)]
    s = bench_quantized.summarize(rows, 3100.0)
    assert math.isclose(rows[1]["tbps"], ((32 << 20) + 4096) / 14e6)
    assert math.isclose(rows[1]["of_ceiling_at_size"], 12.0 / 14.0) and "of_ceiling_at_size" not in rows[4]
    i8 = s["int8-row"]
    assert i8["cases"] == 3 and math.isclose(i8["min_tbps_from_32MB"], rows[1]["tbps"])   # not the 8 MB case
    assert math.isclose(i8["min_of_ceiling_at_size_from_32MB"], 12.0 / 14.0)              # not the 8 MB case's 0.6
    assert math.isclose(i8["min_vs_cublas_dense"], 9.0 / 5.0) and i8["min_vs_tinygemm"] is None
    assert math.isclose(s["int4-g128-float"]["min_vs_tinygemm"], 20.0 / 17.0)
    assert s["int4-g32"]["min_of_ceiling_at_size_from_32MB"] is None   # no ceiling measured
    assert s["read_ceiling_tbps"] == 3.1


def test_random_weight_shapes_are_reproducible_and_within_their_bounds():
    from pygemv import bench_quantized

    a = bench_quantized.random_weight_shapes(200, 7, max_codes=1 << 27)
    assert a == bench_quantized.random_weight_shapes(200, 7, max_codes=1 << 27)        # the seed fixes them
    assert a != bench_quantized.random_weight_shapes(200, 8, max_codes=1 << 27)
    assert all(m >= 16 and k >= 32 and k % 32 == 0 for m, k in a)
    # M * K within the range but for K's rounding (at most half a multiple a row).
    assert all((1 << 21) - 16 * m <= m * k <= (1 << 27) + 16 * m for m, k in a)
    assert any(k % 128 for _, k in a) and len({m for m, _ in a}) > 150                   # odd groups, spread rows
    b = bench_quantized.random_weight_shapes(50, 7, max_codes=1 << 24, k_multiple=128)
    assert all(k % 128 == 0 for _, k in b)
    for kw in ({"k_multiple": 0}, {"min_codes": 1 << 25}):
        with pytest.raises(ValueError):
            bench_quantized.random_weight_shapes(1, 0, max_codes=1 << 24, **kw)


def test_quantized_bench_runs_random_shapes_and_names_each_variant(monkeypatch, capsys):
    """pygemv-bench --quantized --random: the shapes drawn, every format on each, the config's
    variant printed (the case runner and torch are stubs: no GPU needed)."""
    import argparse
    import sys
    import types

    from pygemv import bench_quantized

    torch = types.ModuleType("torch")
    torch.__version__ = "stub"
    torch.cuda = types.SimpleNamespace(empty_cache=lambda: None)
    monkeypatch.setitem(sys.modules, "torch", torch)
    ran = []

    def bench_format(torch, m, k, fmt, l2, stream, ws, repeats, sink=None):
        ran.append((m, k, fmt[0]))
        return {"format": fmt[0], "m": m, "k": k, "weight_bytes": m * k // 2, "bytes": m * k // 2 + 64,
                "pygemv": {"median_us": 10.0}, "cublas_dense": {"median_us": 20.0},
                "config": {"variant": "q_mma_rounds", "threads_per_row": 256, "rows_per_block": 1, "unroll": 1,
                           "split_k": 1}}

    monkeypatch.setattr(bench_quantized, "bench_format", bench_format)
    args = argparse.Namespace(random=3, seed=5, max_mb=16, k_multiple=128, shapes="", repeats=3, json="", plot="",
                              formats="int4-g128-float,int4-g32")
    assert bench_quantized.run(args, l2=1, stream=0, ws=(0, 0), ceiling={"gbps": 3000.0}, info={"pygemv": "x"},
                               props={"name": "stub"}) == 0
    shapes = bench_quantized.random_weight_shapes(3, 5, max_codes=16 << 21, k_multiple=128)
    assert ran == [(m, k, f) for m, k in shapes for f in ("int4-g32", "int4-g128-float")]   # the formats' own order
    out = capsys.readouterr().out
    assert ",".join(f"{m}x{k}" for m, k in shapes) in out and out.count("q_mma_rounds p=256") == 6


def test_suite_matches_the_issue():
    assert len(bench.SUITE["square"]) == 7 and len(bench.SUITE["llm"]) == 7 and len(bench.SUITE["skewed"]) == 5
    assert (128256, 4096) in bench.SUITE["llm"] and (1048576, 16) in bench.SUITE["skewed"]
    assert bench.parse_shapes("4096x4096,1x2") == [(4096, 4096), (1, 2)]


def test_oracle_search_space_is_legal_and_deterministic():
    import importlib.util
    from pathlib import Path

    import pygemv
    path = Path(__file__).resolve().parents[1] / "tuning" / "oracle.py"
    spec = importlib.util.spec_from_file_location("oracle", path)
    oracle = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(oracle)
    ws = pygemv.WORKSPACE_RECOMMENDED_BYTES
    space = list(oracle.search_space(8192, 8192, "float16", ws))
    assert 100 < len(space) < 1000
    names = {c.variant for c in space}
    assert names == {"thread_per_row", "rows_per_warp", "warp_per_row", "block_per_row", "splitk_twopass",
                     "row_stream", "rows_in_registers", "row_mma"}  # 16 KB rows: one a step of 512 x 4 packs
    for c in space:
        assert pygemv.can_implement(c, 8192, 8192, "float16")[0]
        assert 64 <= c.threads_per_row * c.rows_per_block <= 512 and c.vector_loads
        assert pygemv.workspace_size(c, 8192, 8192, "float16") <= ws
    # Odd K: rows that start anywhere, realigned or phased (x staged or through L1), since
    # aligned loads cannot run.
    odd = list(oracle.search_space(100, 1001, "float16", ws))
    assert {c.vector_loads for c in odd} == {pygemv.LOADS_REALIGNED, pygemv.LOADS_PHASED, pygemv.LOADS_PHASED_X_COPIES}
    assert not any(c.x_in_smem for c in odd if c.vector_loads == pygemv.LOADS_PHASED_X_COPIES)
    assert {c.x_in_smem for c in odd if c.vector_loads == pygemv.LOADS_PHASED} == {False, True}


def test_random_layouts_are_reproducible_and_reach_every_phase():
    dtypes = ["float32", "float16", "bfloat16"] * 40
    a = bench.case_layouts(120, lambda i: dtypes[i], random_seed=7)
    assert a == bench.case_layouts(120, lambda i: dtypes[i], random_seed=7)
    assert a != bench.case_layouts(120, lambda i: dtypes[i], random_seed=8)
    pads = [p for p, _ in a]
    assert 0 in pads and min(pads) >= 0 and max(pads) <= 64 and 25 < sum(p == 0 for p in pads) < 60
    for i, (_, offs) in enumerate(a):
        assert len(offs) == 3 and all(0 <= o < 128 // (4 if dtypes[i] == "float32" else 2) for o in offs)
    # Every 16-byte phase of A comes up for each element size.
    for es, dts in ((4, ("float32",)), (2, ("float16", "bfloat16"))):
        phases = {offs[0] % (16 // es) for (_, offs), d in zip(a, dtypes) if d in dts}
        assert phases == set(range(16 // es))
    assert bench.case_layouts(3, lambda i: "float16", lda_pad=5, offsets=(1, 2, 3)) == [(5, (1, 2, 3))] * 3


def test_layout_names_and_options_are_checked_before_any_device_work(capsys):
    r = {"dtype": "float16", "op": "N", "batch": 1, "m": 64, "k": 100}
    assert bench.case_name(r) == "float16 64x100" and bench.layout_name(r) == ""
    r.update(lda=103, offsets=[1, 0, 5])
    assert bench.case_name(r) == "float16 64x100 lda+3 @1,0,5"
    for argv, why in ((["--lda-pad", "-1"], "--lda-pad: -1"), (["--offsets", "1,2"], "--offsets: '1,2'"),
                      (["--offsets", "a"], "--offsets: 'a'"), (["--offsets", "-1"], "--offsets: '-1'"),
                      (["--quantized", "--random-layout"], "not --quantized")):
        with pytest.raises(SystemExit) as e:
            bench.main(argv)
        assert e.value.code == 2 and why in capsys.readouterr().err


def test_benchmark_data_draws_a_chunk_for_each_operand(monkeypatch):
    """Without torch, A, x and y tile random chunks of their own: from one chunk, A's row 0 was x
    where both start alike, its dot product about K (fp16 inf from K = 65505; s64's run 3)."""
    uploaded = []

    class Fake:
        def __init__(self, host):
            self.host, self.ptr = host, 4096 * (len(uploaded) + 1)

    def from_numpy(host, dtype):
        uploaded.append(Fake(host))
        return uploaded[-1]

    monkeypatch.setattr(bench.DeviceArray, "from_numpy", staticmethod(from_numpy))
    k = 70000
    buf = bench.Buffers(3, k, "float16", sets=1, torch=None, lda=k + 7)
    a, x, y = (u.host for u in uploaded)
    assert buf.ptr == tuple(u.ptr for u in uploaded)
    row0 = a[:k].astype("float64")
    assert not (a[:k] == x[:k]).all() and abs(row0 @ x[:k].astype("float64")) < 20 * k ** 0.5
    assert not (a[:3] == y[:3]).all() and x.std() > 0.5 and a.std() > 0.5
