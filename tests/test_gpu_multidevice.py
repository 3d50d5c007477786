"""GPU, two or more devices: each call runs on its arrays' device whatever the current one
is, leaves the current device as it was, and keeps per-device state apart (workspaces,
streams, tables). Skipped, with the reason, where fewer than two GPUs are visible."""
import threading

import numpy as np
import pytest

import pygemv
from gpu_cases import close, ref64
from pygemv import _api

pytestmark = pytest.mark.gpu


@pytest.fixture(scope="module")
def torch2(torch):
    n = pygemv.device_count()
    if n < 2 or torch.cuda.device_count() < 2:
        pytest.skip(f"needs two GPUs; {n} visible")
    yield torch
    torch.cuda.set_device(0)


SPLIT = pygemv.Config("splitk_twopass", 128, 2, True, 2, False, 8)  # needs the default workspace


@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16"])
def test_arrays_on_either_device_from_either_current_device(torch2, dtype):
    torch = torch2
    dt = getattr(torch, dtype)
    # Square, few long rows (split-K by the dispatcher), many short rows.
    for m, k in [(1000, 1000), (8, 65536), (65536, 16)]:
        for dev in (0, 1):
            A = torch.randn(m, k, device=f"cuda:{dev}").to(dt)
            x = torch.randn(k, device=f"cuda:{dev}").to(dt)
            y0 = torch.randn(m, device=f"cuda:{dev}").to(dt)
            for cur in (0, 1):
                torch.cuda.set_device(cur)
                y = y0.clone()
                assert pygemv.gemv(A, x, y, alpha=0.5, beta=2.0) is y
                new = pygemv.gemv(A, x)  # allocated by torch, on the arrays' device
                forced = torch.full_like(y0, float("nan"))
                pygemv.gemv(A, x, forced, config=SPLIT)  # split-K: the workspace of the device
                assert torch.cuda.current_device() == cur and pygemv.current_device() == cur
                torch.cuda.synchronize(dev)
                where = f"{dtype} {m}x{k} on cuda:{dev}, current device {cur}"
                assert new.device == A.device, where
                assert close(y, ref64(A, x, 0.5, 2.0, y0)), where
                assert close(new, ref64(A, x)) and close(forced, ref64(A, x)), where


def test_the_eager_path_serves_the_current_device_and_hands_on_the_others(torch2):
    torch = torch2
    torch.cuda.set_device(1)
    # torch and libgemv (its own static CUDA runtime) agree on the thread's device.
    assert pygemv.current_device() == 1
    A = torch.randn(300, 200, device="cuda:1").half()
    x = torch.randn(200, device="cuda:1").half()
    y = torch.full((300,), float("nan"), device="cuda:1").half()
    assert _api._gemv_torch(A, x, y, 1.0, 0.0, False, None, None, None) is y
    torch.cuda.synchronize(1)
    assert close(y, ref64(A, x))
    torch.cuda.set_device(0)
    y.fill_(float("nan"))
    assert _api._gemv_torch(A, x, y, 1.0, 0.0, False, None, None, None) is None  # the general path switches
    torch.cuda.synchronize(1)
    assert torch.isnan(y).all()  # handed on untouched
    assert pygemv.gemv(A, x, y) is y and torch.cuda.current_device() == 0
    torch.cuda.synchronize(1)
    assert close(y, ref64(A, x))


def test_arrays_on_different_devices_are_rejected_and_nothing_is_written(torch2):
    torch = torch2
    torch.cuda.set_device(0)
    A = torch.randn(64, 32, device="cuda:0")
    x0, x1 = torch.randn(32, device="cuda:0"), torch.randn(32, device="cuda:1")
    y0, y1 = torch.full((64,), 7.0, device="cuda:0"), torch.full((64,), 7.0, device="cuda:1")
    for x, y in [(x1, y0), (x0, y1), (x1, y1)]:
        with pytest.raises(ValueError, match="different devices"):
            pygemv.gemv(A, x, y)
    torch.cuda.synchronize()
    assert bool((y0 == 7).all()) and bool((y1 == 7).all())
    assert pygemv.current_device() == 0


def test_streams_of_the_arrays_device_with_queued_work(torch2):
    torch = torch2
    torch.cuda.set_device(0)
    A = torch.randn(4096, 4096, device="cuda:1").half()
    x = torch.randn(4096, device="cuda:1").half()
    x_new = torch.randn(4096, device="cuda:1").half()
    s = torch.cuda.Stream(device=1)
    torch.cuda.synchronize(1)
    with torch.cuda.stream(s):
        torch.cuda._sleep(100_000_000)  # keep s busy; work on any other stream would run first
        x.copy_(x_new)
    torch.cuda.set_device(0)
    y = pygemv.gemv(A, x, stream=s)  # an explicit stream of the arrays' device
    s.synchronize()
    assert close(y, ref64(A, x_new))
    with torch.cuda.stream(s):  # s is now device 1's current stream, and device 1 the current device
        torch.cuda._sleep(50_000_000)
        x.copy_(-x_new)
        torch.cuda.set_device(0)
        y2 = pygemv.gemv(A, x)  # the default: torch's current stream of the arrays' device
        assert torch.cuda.current_device() == 0
    s.synchronize()
    assert close(y2, ref64(A, -x_new))


def test_a_stream_of_another_device_is_an_error_and_leaves_no_sticky_state(torch2):
    torch = torch2
    torch.cuda.set_device(0)
    s0 = torch.cuda.Stream(device=0)
    A = torch.randn(256, 256, device="cuda:1")
    x = torch.randn(256, device="cuda:1")
    y = torch.full((256,), 7.0, device="cuda:1")
    # CUDA would run the kernel on device 0, on device 1's pointers: an illegal address.
    with pytest.raises(pygemv.InvalidValueError, match="belongs to device 0, but the current device is 1"):
        pygemv.gemv(A, x, y, stream=s0)
    torch.cuda.synchronize(1)
    assert bool((y == 7).all())
    assert pygemv.gemv(A, x, y) is y and pygemv.current_device() == 0
    torch.cuda.synchronize(1)
    assert close(y, ref64(A, x))


def test_raw_pointers_run_on_the_current_device_only(torch2):
    torch = torch2
    A = torch.randn(100, 80, device="cuda:1")
    x = torch.randn(80, device="cuda:1")
    y = torch.full((100,), 7.0, device="cuda:1")
    args = dict(m=100, k=80, dtype="float32")
    pygemv.set_device(0)
    with pytest.raises(pygemv.InvalidPointerError, match="on device 1, but the current device is 0"):
        pygemv.gemv(A.data_ptr(), x.data_ptr(), y.data_ptr(), **args)
    torch.cuda.synchronize(1)
    assert bool((y == 7).all())
    pygemv.set_device(1)
    try:
        pygemv.gemv(A.data_ptr(), x.data_ptr(), y.data_ptr(), **args)
        torch.cuda.synchronize(1)
    finally:
        pygemv.set_device(0)
    assert close(y, ref64(A, x))


def test_each_device_gets_its_own_workspace(torch2):
    """libgemv's pool lends each device its own buffers: split-K right on both, in turn."""
    torch = torch2
    torch.cuda.set_device(0)
    for _ in range(2):
        for dev in (0, 1):
            A = torch.randn(16, 65536, device=f"cuda:{dev}").half()
            x = torch.randn(65536, device=f"cuda:{dev}").half()
            y = pygemv.gemv(A, x, config=SPLIT)
            torch.cuda.synchronize(dev)
            assert close(y, ref64(A, x))


def test_one_thread_per_device(torch2):
    torch = torch2
    errors = []

    def worker(dev):
        try:
            torch.cuda.set_device(dev)  # the eager path: arrays on the thread's device
            s = torch.cuda.Stream()
            with torch.cuda.stream(s):
                for j in range(40):
                    m, k = (3000 + 7 * j, 1024) if j % 2 else (16, 40000 + 8 * j)
                    A = torch.randn(m, k, device="cuda").half()
                    x = torch.randn(k, device="cuda").half()
                    y = pygemv.gemv(A, x)
                    if not close(y, ref64(A, x)):
                        errors.append(f"device {dev}, iteration {j}: wrong")
            s.synchronize()
        except Exception as e:  # pragma: no cover - reported below
            errors.append(f"device {dev}: {e!r}")

    threads = [threading.Thread(target=worker, args=(d,)) for d in (0, 1) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors


def test_every_device_has_its_own_table_slot(torch2):
    names = {pygemv.device_name(d) for d in (0, 1)}
    status = [pygemv.table_status(d) for d in (0, 1)]
    if len(names) == 1:  # the same GPU model: the same table, or the heuristic on both
        assert status[0] == status[1]
    with pytest.raises(pygemv.GemvError, match="devices are visible"):
        pygemv.table_status(pygemv.device_count())
    for d in (0, 1):
        pygemv.set_device(d)
        assert pygemv.select_config(4096, 4096, "float16") == pygemv.select_config(4096, 4096, "float16")
    pygemv.set_device(0)


def test_stream_checks_keep_graph_captures_intact(torch2):
    # The stream-device query is refused on a capturing stream and would end the capture:
    # captured calls, and calls on another stream while a capture runs, must not make it.
    torch = torch2
    torch.cuda.set_device(0)
    A = torch.randn(2048, 1024, device="cuda:0").half()
    x = torch.randn(1024, device="cuda:0").half()
    y_graph, y_side = torch.empty(2048, device="cuda:0").half(), torch.empty(2048, device="cuda:0").half()
    capture, side = torch.cuda.Stream(device=0), torch.cuda.Stream(device=0)
    for s in (capture, side):  # each stream's workspace is allocated outside the capture
        pygemv.gemv(A, x, y_graph, stream=s)
    torch.cuda.synchronize(0)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g, stream=capture):  # capture_error_mode "global": the strictest
        pygemv.gemv(A, x, y_graph)
        pygemv.gemv(A, x, y_side, stream=side)  # not captured: runs now, on side
    side.synchronize()
    assert close(y_side, ref64(A, x))
    for _ in range(2):
        x.copy_(torch.randn(1024, device="cuda:0").half())
        y_graph.fill_(float("nan"))
        g.replay()
        torch.cuda.synchronize(0)
        assert close(y_graph, ref64(A, x))


def test_cupy_arrays_on_another_device(torch2):
    cp = pytest.importorskip("cupy")
    torch2.cuda.set_device(0)
    with cp.cuda.Device(1):
        A = cp.random.randn(513, 300).astype(cp.float32)
        x = cp.random.randn(300).astype(cp.float32)[::-1]  # a negative stride
        y = cp.full(513, cp.nan, dtype=cp.float32)
        s = cp.cuda.Stream(non_blocking=True)
    out = pygemv.gemv(A, x)  # allocated by CuPy on device 1, on its current stream there
    pygemv.gemv(A, x, y, stream=s)  # a CuPy stream of the arrays' device
    assert pygemv.current_device() == 0 and cp.cuda.runtime.getDevice() == 0
    assert out.device.id == 1
    with cp.cuda.Device(1):
        cp.cuda.runtime.deviceSynchronize()
    ref = cp.asnumpy(A).astype(np.float64) @ cp.asnumpy(x).astype(np.float64)
    np.testing.assert_allclose(cp.asnumpy(out), ref, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(cp.asnumpy(y), ref, rtol=1e-4, atol=1e-4)
