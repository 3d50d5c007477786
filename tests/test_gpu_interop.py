"""GPU: CUDA arrays of every library, the numpy-only path, streams, graph capture,
threads, and the eager call overhead."""
import threading

import numpy as np
import pytest

import pygemv
from gpu_cases import close, ref64, workspace
from pygemv.timing import host_call_us

pytestmark = pytest.mark.gpu


@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16"])
def test_torch_arrays_with_strides(torch, dtype):
    dt = getattr(torch, dtype)
    big = torch.randn(300, 520, device="cuda").to(dt)
    A = big[:, 3:503]                      # lda 520, misaligned base
    xs = torch.randn(1000, device="cuda").to(dt)
    x = xs[::2]                            # incx 2
    ys = torch.randn(600, device="cuda").to(dt)
    y = ys[1::2]                           # incy 2, offset
    y0 = y.clone()
    out = pygemv.gemv(A, x, y, alpha=0.5, beta=2.0)
    assert out is y
    torch.cuda.synchronize()
    assert close(y, ref64(A, x, 0.5, 2.0, y0))
    assert torch.equal(ys[0::2], ys[0::2].clone())  # gaps: compared below bitwise
    new = pygemv.gemv(A, x)                # y allocated by torch
    assert isinstance(new, torch.Tensor) and new.dtype == dt and new.shape == (300,)
    torch.cuda.synchronize()
    assert close(new, ref64(A, x))


def test_torch_layouts_of_the_eager_path(torch):
    # The eager torch path reads contiguity instead of strides: each layout it takes or
    # hands to the general path must give the same product.
    big = torch.randn(64, 100, device="cuda").half()
    vec = torch.randn(300, device="cuda").half()
    cases = {
        "contiguous": (big[:, :], vec[:100]),
        "row slice, offset": (big[5:9], vec[1:101]),
        "lda > K": (big[:, 3:50], vec[:47]),
        "every other row": (big[::2], vec[:100]),
        "one column of a wider A": (big[:, 7:8], vec[:1]),
        "one row": (big[3:4], vec[:100]),
        "strided x": (big[:, :40], vec[::3][:40]),
        "x of one strided entry": (big[:, 2:3], vec[5::7][:1]),
    }
    for name, (A, x) in cases.items():
        for y_stride in (1, 2):
            y = torch.full((A.shape[0] * y_stride,), float("nan"), device="cuda").half()[::y_stride]
            pygemv.gemv(A, x, y)
            torch.cuda.synchronize()
            assert close(y, ref64(A, x)), (name, y_stride)
    with pytest.raises(ValueError, match="x has stride 0"):
        pygemv.gemv(big[:, :4], vec[:1].expand(4))
    with pytest.raises(ValueError, match="y has stride 0"):
        pygemv.gemv(big[:, :4], vec[:4], vec[:1].expand(64))
    with pytest.raises(ValueError, match="^x has 2 entries"):  # a 2-D x is a batch of vectors
        pygemv.gemv(big[:, :4], vec[:4].reshape(2, 2))
    with pytest.raises(ValueError, match="^x must be 1-D, or 2-D"):
        pygemv.gemv(big[:, :4], vec[:8].reshape(2, 1, 4))


def test_torch_argument_errors_name_the_argument(torch):
    A = torch.randn(8, 4, device="cuda")
    with pytest.raises(ValueError, match="^x has 3 entries"):
        pygemv.gemv(A, torch.randn(3, device="cuda"))
    with pytest.raises(TypeError, match="^x has dtype float16"):
        pygemv.gemv(A, torch.randn(4, device="cuda").half())
    with pytest.raises(ValueError, match=r"^y must have shape \(8,\)"):
        pygemv.gemv(A, torch.randn(4, device="cuda"), torch.empty(9, device="cuda"))
    with pytest.raises(ValueError, match="^x is on cpu"):
        pygemv.gemv(A, torch.randn(4))
    with pytest.raises(TypeError, match="^A: dtype torch.float64"):
        pygemv.gemv(A.double(), torch.randn(4, device="cuda"))
    with pytest.raises(ValueError, match="unit stride along its last axis.*trans=True"):
        pygemv.gemv(torch.randn(4, 8, device="cuda").t(), torch.randn(4, device="cuda"))
    with pytest.raises(ValueError, match="^y: omitted, so beta must be 0"):
        pygemv.gemv(A, torch.randn(4, device="cuda"), beta=1.0)
    with pytest.raises(TypeError, match="^A: expected a CUDA array"):
        pygemv.gemv([[1.0]], torch.randn(1, device="cuda"))


def test_cupy_arrays_and_negative_strides(torch):
    cp = pytest.importorskip("cupy")
    A = cp.random.randn(129, 77).astype(cp.float32)
    x = cp.random.randn(77 * 3).astype(cp.float32)[::-3]     # negative stride
    y = cp.random.randn(129 * 2).astype(cp.float32)[::-2]
    y0 = y.copy()
    pygemv.gemv(A, x, y, alpha=1.5, beta=-1.0)
    cp.cuda.get_current_stream().synchronize()
    ref = 1.5 * (cp.asnumpy(A).astype(np.float64) @ cp.asnumpy(x).astype(np.float64)) - cp.asnumpy(y0)
    np.testing.assert_allclose(cp.asnumpy(y), ref, rtol=1e-4, atol=1e-4)
    out = pygemv.gemv(A, x)
    assert isinstance(out, cp.ndarray)
    with cp.cuda.Stream(non_blocking=True) as s:           # CuPy's current stream is used
        out2 = pygemv.gemv(A, x)
        s.synchronize()
    np.testing.assert_allclose(cp.asnumpy(out2), cp.asnumpy(out), rtol=0, atol=0)


def test_numba_arrays(torch):
    cuda = pytest.importorskip("numba.cuda")
    A = np.random.randn(50, 40).astype(np.float32)
    x = np.random.randn(40).astype(np.float32)
    dA, dx = cuda.to_device(A), cuda.to_device(x)
    out = pygemv.gemv(dA, dx)
    assert type(out).__module__.startswith("numba")
    np.testing.assert_allclose(out.copy_to_host(), A.astype(np.float64) @ x, rtol=1e-4, atol=1e-4)


def test_dlpack_only_producer(torch):
    class OnlyDLPack:  # exposes nothing but the DLPack protocol
        def __init__(self, t):
            self.t = t

        def __dlpack__(self, stream=None):
            return self.t.__dlpack__()

        def __dlpack_device__(self):
            return self.t.__dlpack_device__()

    for dt in (torch.bfloat16, torch.float16):
        A = torch.randn(33, 65, device="cuda").to(dt)
        x = torch.randn(65, device="cuda").to(dt)
        y = torch.empty(33, device="cuda").to(dt)
        pygemv.gemv(OnlyDLPack(A), OnlyDLPack(x), OnlyDLPack(y))
        torch.cuda.synchronize()
        assert close(y, ref64(A, x))


def test_numpy_only_quickstart():
    A = np.random.rand(1000, 512).astype(np.float32)
    x = np.random.rand(512).astype(np.float32)
    dA, dx = pygemv.to_device(A), pygemv.to_device(x)
    y = pygemv.gemv(dA, dx)
    assert isinstance(y, pygemv.DeviceArray)
    np.testing.assert_allclose(y.to_numpy(), A.astype(np.float64) @ x, rtol=1e-5)
    # bfloat16 and fp16 through the same helpers.
    for dt in ("bfloat16", "float16"):
        y = pygemv.gemv(pygemv.to_device(A, dt), pygemv.to_device(x, dt))
        np.testing.assert_allclose(y.to_numpy(), A.astype(np.float64) @ x, rtol=2e-2)
    # A padded matrix through a view.
    store = pygemv.to_device(np.random.rand(100, 72).astype(np.float32))
    view = store.view((100, 70), (72, 1))
    y = pygemv.gemv(view, pygemv.to_device(x[:70]))
    np.testing.assert_allclose(y.to_numpy(), store.to_numpy()[:, :70].astype(np.float64) @ x[:70], rtol=1e-5)


def test_non_default_stream_with_queued_work(torch):
    A = torch.randn(4096, 4096, device="cuda").half()
    x = torch.randn(4096, device="cuda").half()
    x_new = torch.randn(4096, device="cuda").half()
    s = torch.cuda.Stream()
    torch.cuda.synchronize()
    with torch.cuda.stream(s):
        torch.cuda._sleep(100_000_000)   # keep s busy; anything on another stream runs first
        x.copy_(x_new)
        y = pygemv.gemv(A, x)            # torch's current stream: s
    s.synchronize()
    assert close(y, ref64(A, x_new))
    # An explicit stream object, any library's.
    y2 = torch.empty_like(y)
    with torch.cuda.stream(s):
        torch.cuda._sleep(50_000_000)
        x.copy_(-x_new)
    pygemv.gemv(A, x, y2, stream=s)
    s.synchronize()
    assert close(y2, ref64(A, -x_new))


@pytest.mark.parametrize("m, k", [(4096, 4096), (64, 65536)])
def test_cuda_graph_capture_and_replay(torch, m, k):
    A = torch.randn(m, k, device="cuda").half()
    x = torch.randn(k, device="cuda").half()
    y = torch.empty(m, device="cuda").half()
    buf, ws = workspace(torch)
    split = pygemv.Config("splitk_twopass", 256, 1, True, 4, False, 16)
    y_split = torch.empty_like(y)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        pygemv.gemv(A, x, y)                                        # no cached workspace: non-split
        pygemv.gemv(A, x, y_split, config=split, workspace=ws)      # split-K with a given workspace
    for _ in range(3):
        x.copy_(torch.randn(k, device="cuda").half())
        y.fill_(float("nan"))
        y_split.fill_(float("nan"))
        g.replay()
        torch.cuda.synchronize()
        assert close(y, ref64(A, x)) and close(y_split, ref64(A, x))


def test_eight_threads_on_separate_streams(torch):
    errors = []

    def worker(i):
        try:
            torch.cuda.set_device(0)
            s = torch.cuda.Stream()
            with torch.cuda.stream(s):
                m, k = 500 + 37 * i, 3000 + 112 * i  # rows stay 16-byte aligned for the forced vector config
                A = torch.randn(m, k, device="cuda").half()
                ws = torch.empty(pygemv.WORKSPACE_RECOMMENDED_BYTES, dtype=torch.uint8, device="cuda")
                for j in range(25):
                    x = torch.randn(k, device="cuda").half()
                    y = pygemv.gemv(A, x)
                    y2 = pygemv.gemv(A, x, config=pygemv.Config("splitk_twopass", 128, 2, True, 2, False, 8),
                                     workspace=(ws.data_ptr(), ws.numel()))
                    if not (close(y, ref64(A, x)) and torch.equal(y, pygemv.gemv(A, x)) and close(y2, ref64(A, x))):
                        errors.append(f"thread {i} iteration {j} wrong")
            s.synchronize()
        except Exception as e:  # pragma: no cover - reported below
            errors.append(f"thread {i}: {e!r}")

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors


def test_threads_on_their_per_thread_default_streams_get_their_own_split_k_workspace(torch):
    """Handle 2 (cudaStreamPerThread) is a different stream in every thread: one shared
    workspace mixed their split-K partials (issue 16, defect 7). libgemv's pool keys
    buffers by stream id and thread."""
    errors = []
    split = pygemv.Config("splitk_twopass", 256, 1, True, 4, False, 16)
    barrier = threading.Barrier(6)

    def worker(i):
        try:
            torch.cuda.set_device(0)
            A = torch.randn(64, 32768, device="cuda").half()
            xs = [torch.randn(32768, device="cuda").half() for _ in range(20)]
            ys = [torch.full((64,), float("nan"), device="cuda").half() for _ in range(20)]
            torch.cuda.synchronize()
            barrier.wait()
            for x, y in zip(xs, ys):
                pygemv.gemv(A, x, y, stream=2, config=split)
            pygemv.synchronize(2)
            for j, (x, y) in enumerate(zip(xs, ys)):
                if not close(y, ref64(A, x)):
                    errors.append(f"thread {i} product {j} wrong")
        except Exception as e:  # pragma: no cover - reported below
            errors.append(f"thread {i}: {e!r}")

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors[:5]


@pytest.mark.timing
def test_eager_call_overhead_on_torch_tensors(torch):
    A = torch.randn(1024, 1024, device="cuda").half()
    x = torch.randn(1024, device="cuda").half()
    y = torch.empty(1024, device="cuda").half()

    def per_call(fn):
        return host_call_us(fn, torch.cuda.synchronize)

    ours = per_call(lambda: pygemv.gemv(A, x, y))
    theirs = per_call(lambda: torch.mv(A, x, out=y))
    print(f"\neager host cost per call: pygemv.gemv {ours:.2f} us, torch.mv {theirs:.2f} us")
    # A bare kernel launch alone costs ~4.5 us on the test VM (scripts/host_overhead.py), so
    # the fair bar is eager torch.mv, measured here in the same process.
    assert ours < theirs, f"pygemv.gemv costs {ours:.1f} us a call, torch.mv {theirs:.1f} us"
