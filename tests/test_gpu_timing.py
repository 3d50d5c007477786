"""GPU: the timing module and the benchmark's pieces run and give sane numbers."""
import ctypes

import pytest

import pygemv
from pygemv import _lib, bench, timing

pytestmark = pytest.mark.gpu


def test_time_graph_and_read_ceiling():
    props = bench.device_props()
    assert props["sm_count"] > 0 and props["l2_bytes"] > 0 and props["name"]
    s = pygemv.Stream()
    sink = pygemv.empty((1,), "float32")
    ceiling = bench.measure_ceiling(props["l2_bytes"], s.handle, sink.ptr)
    assert 100 < ceiling["gbps"] < 20000
    A = pygemv.empty((512, 512), "float16")
    x = pygemv.empty((512,), "float16")
    y = pygemv.empty((512,), "float16")
    args = _lib.Args(0, 1, 512, 512, 1.0, 0.0, A.ptr, 512, x.ptr, 1, y.ptr, 1, 0, 0, s.handle, 1)
    lib = _lib.load()
    t = timing.time_graph(lambda i, st: lib.gemv_ex(ctypes.byref(args), None), 10, s.handle, repeats=5)
    assert 0 < t.min_us <= t.median_us <= t.max_us < 1000 and t.sets == 10


def test_bench_case_against_cublas(torch):
    from pygemv._cublas import WORKSPACE_BYTES, Cublas
    props = bench.device_props()
    s = pygemv.Stream()
    ws = pygemv.empty((pygemv.WORKSPACE_RECOMMENDED_BYTES // 4,), "float32")
    cws = pygemv.empty((WORKSPACE_BYTES // 4,), "float32")
    cublas = Cublas(cws.ptr)
    sink = pygemv.empty((1,), "float32")
    for dtype in ("float32", "float16", "bfloat16"):
        r = bench.bench_case(1000, 777, dtype, l2=props["l2_bytes"], ws=(ws.ptr, pygemv.WORKSPACE_RECOMMENDED_BYTES),
                             cublas=cublas, torch=torch, stream=s.handle, repeats=3, sink=sink.ptr)
        assert 0 < r["ceiling_at_size"]["median_us"] <= r["pygemv"]["median_us"] * 1.5
        assert r["pygemv"]["median_us"] > 0 and r["cublas"]["median_us"] > 0 and r["torch.mv"]["median_us"] > 0
        assert set(r["cublas_entries"]) == set(cublas.entry_points(dtype))


def test_quantized_bench_case_with_its_read_ceiling_at_size(torch):
    """pygemv-bench --quantized's case: checked, timed, the read ceiling over the same bytes
    (faster than pygemv's GEMV, never absurdly), cuBLAS on the dense weights, and tinygemm
    where torch has it (bf16 float zeros, K a multiple of the group)."""
    from pygemv import bench_quantized
    props = bench.device_props()
    s = pygemv.Stream()
    ws = pygemv.empty((pygemv.WORKSPACE_RECOMMENDED_BYTES // 4,), "float32")
    sink = pygemv.empty((1,), "float32")
    fmt = ("int4-g128-float", 4, 128, "float", "bfloat16")
    r = bench_quantized.bench_format(torch, 2048, 4096, fmt, props["l2_bytes"], s.handle,
                                     (ws.ptr, pygemv.WORKSPACE_RECOMMENDED_BYTES), 3, sink.ptr)
    c = r["ceiling_at_size"]
    assert c["bytes"] == r["bytes"] // 16 * 16 and c["sets"] == r["sets"]
    assert 0 < c["median_us"] <= r["pygemv"]["median_us"] * 1.5 and 100 < c["gbps"] < 20000
    summ = bench_quantized.summarize([r], 3000.0)
    assert 0 < r["of_ceiling_at_size"] < 1.5 and summ["int4-g128-float"]["cases"] == 1
    assert r["cublas_dense"]["median_us"] > 0
    if hasattr(torch, "_weight_int4pack_mm"):
        assert r["tinygemm"]["median_us"] > 0 and r["vs_tinygemm"] > 0


def test_bench_case_with_padded_lda_and_offset_operands(torch):
    """pygemv-bench --lda-pad/--offsets/--random-layout's case: pygemv checked against the
    float64 reference of the padded, offset operands, timed beside cuBLAS and torch given the
    same lda and pointers, and the layout recorded."""
    from pygemv._cublas import WORKSPACE_BYTES, Cublas
    props = bench.device_props()
    s = pygemv.Stream()
    ws = pygemv.empty((pygemv.WORKSPACE_RECOMMENDED_BYTES // 4,), "float32")
    cublas = Cublas(pygemv.empty((WORKSPACE_BYTES // 4,), "float32").ptr)
    sink = pygemv.empty((1,), "float32")
    for dtype, trans, batch, lda, offsets in (("float16", False, 1, 780, (1, 3, 5)), ("float32", True, 1, 778, (2, 1, 0)),
                                              ("bfloat16", False, 3, 777 + 64, (7, 0, 2))):
        r = bench.bench_case(300, 777, dtype, l2=props["l2_bytes"], ws=(ws.ptr, pygemv.WORKSPACE_RECOMMENDED_BYTES),
                             cublas=cublas, torch=torch, stream=s.handle, repeats=3, sink=sink.ptr, trans=trans,
                             batch=batch, lda=lda, offsets=offsets)
        assert r["lda"] == lda and r["offsets"] == list(offsets) and r["batch"] == batch
        assert r["pygemv"]["median_us"] > 0 and r["cublas"]["median_us"] > 0
        assert ("torch.bmm" if batch > 1 else "torch.mv") in r
        case = bench.Case(300, 777, dtype, l2=props["l2_bytes"], ws=(ws.ptr, pygemv.WORKSPACE_RECOMMENDED_BYTES),
                          stream=s.handle, torch=torch, trans=trans, batch=batch, lda=lda, offsets=offsets)
        assert case.args[1].A % 16 == (offsets[0] * _lib.DTYPE_SIZES[dtype]) % 16 and case.args[0].lda == lda
        assert case.check() == (True, "0 of 256 checked rows outside the error bound")
    with pytest.raises(ValueError, match="lda: 776 is less than K = 777"):
        bench.Case(10, 777, "float32", l2=props["l2_bytes"], ws=(0, 0), stream=s.handle, lda=776)
