"""``pygemv-bench``: pygemv's automatic dispatch against cuBLAS (called directly), torch
(``torch.mv``, ``F.linear``) and the read-bandwidth ceiling, in one run.

Every figure is kernel time from CUDA-graph replay with a cold L2 (``pygemv.timing``),
the median of repeats; the peers run in the same process, case by case. Before timing,
pygemv's output (poisoned with NaN first) is checked against a float64 reference.
"""
from __future__ import annotations

import argparse
import ctypes
import json
import math
import platform
import sys
import time
from dataclasses import asdict

import numpy as np

from . import _lib, timing, version_string
from ._device import DeviceArray, bfloat16_bits_to_float32

SUITE = {
    "square": [(n, n) for n in (256, 512, 1024, 2048, 4096, 8192, 16384)],
    "llm": [(4096, 4096), (14336, 4096), (4096, 14336), (8192, 8192), (28672, 8192), (8192, 28672),
            (128256, 4096)],
    "skewed": [(256, 65536), (65536, 256), (1048576, 16), (1048576, 32), (131072, 128)],
}
# Strided batches: small to large matrices, each at every batch whose A fits BATCH_CAP_BYTES.
BATCH_SHAPES = [(64, 64), (256, 256), (1024, 1024), (4096, 4096)]
BATCHES = (8, 64, 512, 4096)
BATCH_CAP_BYTES = 1 << 30
DTYPES = ("float32", "float16", "bfloat16")
U_OUT = {"float32": 2.0**-24, "float16": 2.0**-11, "bfloat16": 2.0**-8}
# Half the output type's subnormal spacing: the absolute error of rounding an output that
# underflows, which the contract's relative bound alone cannot cover (fp16 1048576x1 has a
# few products below 2^-14; no fp16 store can do better).
UNDERFLOW = {"float32": 2.0**-150, "float16": 2.0**-25, "bfloat16": 2.0**-134}
NP_STORE = {"float32": np.float32, "float16": np.float16, "bfloat16": np.uint16}


def error_bound(dtype: str, k: int, ref_abs, magnitude):
    """The contract's bound on |y - ref| for K-term dot products (numpy or torch arrays).

    ref_abs is |ref|; magnitude is |alpha| |A| @ |x| + |beta y|, in float64."""
    return U_OUT[dtype] * ref_abs + 2 * k * 2.0**-24 * magnitude + UNDERFLOW[dtype]


def device_props(device: int = 0) -> dict:
    p = _lib.DeviceProps()
    _lib.check(_lib.load().gemv_device_props(device, ctypes.byref(p)), "device_props")
    d = {f: getattr(p, f) for f, _ in p._fields_}
    d["name"] = p.name.decode()
    return d


class Buffers:
    """Rotating input sets of one case: A (sets x M x K, rows lda apart), x (sets x K), y
    (sets x M), as torch tensors when torch is there (its peers need them), else
    DeviceArrays. Each set's A, x and y start ``offsets`` elements past a 256-byte boundary
    (0: aligned), the same in every set, so a config that runs set 0 runs every set."""

    ALIGN = 256

    def __init__(self, m, k, dtype, sets, torch=None, seed=0, nx=None, ny=None, lda=None, offsets=(0, 0, 0)):
        nx, ny = k if nx is None else nx, m if ny is None else ny  # x and y lengths (op T, batches)
        self.m, self.k, self.dtype, self.sets, self.torch, self.nx, self.ny = m, k, dtype, sets, torch, nx, ny
        self.lda, self.offsets = k if lda is None else lda, tuple(offsets)
        self.es = _lib.DTYPE_SIZES[dtype]
        per = self.ALIGN // self.es
        # Elements from one set to the next: each operand's extent past its offset, rounded up.
        ext = (m * self.lda, nx, ny)
        self.stride = tuple(-(-(n + o) // per) * per for n, o in zip(ext, self.offsets))
        if torch is not None:
            dt = {"float32": torch.float32, "float16": torch.float16, "bfloat16": torch.bfloat16}[dtype]
            g = torch.Generator(device="cuda").manual_seed(seed)
            flat = [torch.empty(sets * st, dtype=dt, device="cuda").normal_(generator=g) for st in self.stride]
            oa, ox, oy = self.offsets
            self.A = flat[0].as_strided((sets, m, k), (self.stride[0], self.lda, 1), oa)
            self.x = flat[1].as_strided((sets, nx), (self.stride[1], 1), ox)
            self.y = flat[2].as_strided((sets, ny), (self.stride[2], 1), oy)
            self.ptr = tuple(f.data_ptr() for f in flat)
            torch.cuda.synchronize()  # the timing stream does not wait for torch's
        else:
            # Random values, tiled, a chunk for each operand: from one chunk, A's row 0 was x
            # itself where A and x start alike, its dot product about K (fp16 from K = 65505:
            # inf, outside the bound). The chunks' lengths are coprime (2^20 and 2^20 - 3): of one
            # length, a row and x repeat in step every 2^20 columns and their dot product grows
            # as K, not its square root (fp16 4 x 52787018 had a row past 65504, inf; s66).
            rng = np.random.default_rng(seed)
            self.A, self.x, self.y = (self._random((sets * st,), rng.standard_normal(n).astype(np.float32))
                                      for st, n in zip(self.stride, ((1 << 20), (1 << 20) - 3, (1 << 20) - 5)))
            self.ptr = (self.A.ptr, self.x.ptr, self.y.ptr)

    def _random(self, shape, chunk):
        n = shape[0]
        host = np.resize(chunk, n)
        return DeviceArray.from_numpy(host, self.dtype)

    def a(self, i):
        return self.ptr[0] + (i * self.stride[0] + self.offsets[0]) * self.es

    def xp(self, i):
        return self.ptr[1] + (i * self.stride[1] + self.offsets[1]) * self.es

    def yp(self, i):
        return self.ptr[2] + (i * self.stride[2] + self.offsets[2]) * self.es

    def rows_of_a(self, rows) -> np.ndarray:
        """Set 0's first rows of A (rows x K, float64; a set holds M * lda elements)."""
        return self.download(self.a(0), rows * self.lda).reshape(rows, self.lda)[:, :self.k]

    def download(self, ptr, n) -> np.ndarray:
        store = np.empty(n, dtype=NP_STORE[self.dtype])
        _lib.check(_lib.load().gemv_memcpy_to_host(store.ctypes.data, ptr, n * self.es), "download")
        return (bfloat16_bits_to_float32(store) if self.dtype == "bfloat16" else store).astype(np.float64)

    def poison_y0(self):
        nan = np.full(self.ny, np.nan, dtype=np.float32)
        host = nan.astype(np.float16) if self.dtype == "float16" else nan
        if self.dtype == "bfloat16":
            host = np.full(self.ny, 0x7FC0, dtype=np.uint16)
        _lib.check(_lib.load().gemv_memcpy_to_device(self.yp(0), host.ctypes.data, self.ny * self.es), "poison")


def reference(buf: Buffers, rows: int = 256):
    """float64 reference and the contract's bound for the first rows of set 0."""
    rows = min(buf.m, rows)
    A = buf.rows_of_a(rows)
    x = buf.download(buf.xp(0), buf.k)
    ref = A @ x
    return ref, error_bound(buf.dtype, buf.k, np.abs(ref), np.abs(A) @ np.abs(x))


def reference_t(buf: Buffers, m: int, cols: int = 256):
    """float64 reference and bound of op T for the first columns of product 0 of set 0 (a
    column slice of A on the GPU through torch when it is there, else downloaded)."""
    cols = min(buf.k, cols)
    if buf.torch is not None:
        A = buf.A[0][:m, :cols].double()
        x = buf.x[0][:m].double()
        ref, mag = (A.T @ x).cpu().numpy(), (A.abs().T @ x.abs()).cpu().numpy()
    else:
        A = buf.rows_of_a(m)[:, :cols]
        x = buf.download(buf.xp(0), m)
        ref, mag = A.T @ x, np.abs(A).T @ np.abs(x)
    return ref, error_bound(buf.dtype, m, np.abs(ref), mag)


def check_pygemv(buf: Buffers, call0, ref=None) -> tuple[bool, str]:
    """Poison y, run a call on set 0, compare the first rows with the float64 reference."""
    ref, bound = ref if ref is not None else reference(buf)
    buf.poison_y0()
    call0()
    _lib.check(_lib.load().gemv_stream_synchronize(0), "sync")
    y = buf.download(buf.yp(0), len(ref))
    bad = int(np.sum(~(np.abs(y - ref) <= bound)))
    return bad == 0, f"{bad} of {len(ref)} checked rows outside the error bound"


class Case:
    """The rotating inputs of one problem (op, batch, M, K, dtype, lda, the operands' offsets;
    alpha = 1, beta = 0, dense vectors and batch strides), the gemv_args_t of each set, and
    the float64 reference of set 0's first outputs: what the benchmark and the tuner both
    time. ``lda`` defaults to K; ``offsets`` (A, x, y) in elements past a 256-byte boundary."""

    def __init__(self, m, k, dtype, *, l2, ws, stream, torch=None, trans=False, batch=1, lda=None,
                 offsets=(0, 0, 0)):
        lda = k if lda is None else lda
        if lda < max(k, 1):
            raise ValueError(f"lda: {lda} is less than K = {k}")
        self.m, self.k, self.dtype, self.trans, self.batch, self.lda = m, k, dtype, trans, batch, lda
        es = _lib.DTYPE_SIZES[dtype]
        nx, ny = (m, k) if trans else (k, m)
        self.moved = batch * (m * k + nx + ny) * es  # A and x read once, y written once (beta = 0)
        self.sets = timing.rotation_sets(self.moved, l2)
        # A batch is one run of batch * M rows lda apart, x and y runs of batch vectors.
        self.buf = Buffers(batch * m, k, dtype, self.sets, torch, nx=batch * nx, ny=batch * ny, lda=lda,
                           offsets=offsets)
        op = _lib.OP_T if trans else _lib.OP_N
        self.args = [_lib.Args(op, _lib.DTYPES[dtype], m, k, 1.0, 0.0, self.buf.a(i), lda, self.buf.xp(i), 1,
                               self.buf.yp(i), 1, ws[0], ws[1], stream, _lib.FLAG_TRUSTED_POINTERS, batch, m * lda,
                               nx, ny)
                     for i in range(self.sets)]
        self.ref = reference_t(self.buf, m) if trans else reference(self.buf, rows=min(m, 256))

    def call(self, config=None):
        """``call(i, stream)``: one gemv on set i (``config``: a ``_lib.Config``, or None to dispatch)."""
        lib = _lib.load()
        c = None if config is None else ctypes.byref(config)

        def run(i, s):
            self.args[i].stream = s
            st = lib.gemv_ex(ctypes.byref(self.args[i]), c)
            if st:
                _lib.check(st, "gemv")
        run.keep = config  # the config outlives every call
        return run

    def check(self, config=None) -> tuple[bool, str]:
        run = self.call(config)
        return check_pygemv(self.buf, lambda: run(0, 0), self.ref)


def bench_case(m, k, dtype, *, l2, ws, cublas, torch, stream, repeats, sink=None, trans=False, batch=1,
               lda=None, offsets=(0, 0, 0)) -> dict:
    """One case (op, batch, M, K, dtype, lda, offsets): pygemv checked, then timed beside the peers."""
    lib = _lib.load()
    es = _lib.DTYPE_SIZES[dtype]
    case = Case(m, k, dtype, l2=l2, ws=ws, stream=stream, torch=torch, trans=trans, batch=batch, lda=lda,
                offsets=offsets)
    lda = case.lda
    buf, args, sets, moved = case.buf, case.args, case.sets, case.moved
    nx, ny = (m, k) if trans else (k, m)
    pygemv_call = case.call()
    ok, why = case.check()
    if not ok:
        raise AssertionError(f"pygemv wrong on {dtype} {'T' if trans else 'N'} {m}x{k} batch {batch} lda {lda} "
                             f"offsets {tuple(offsets)}: {why}")
    cfg = _lib.Config()
    sel = _lib.Args.from_buffer_copy(args[0])
    _lib.check(lib.gemv_select_config_ex(ctypes.byref(sel), ctypes.byref(cfg), None), "select_config")
    from ._registry import Config
    row = {"dtype": dtype, "op": "T" if trans else "N", "batch": batch, "m": m, "k": k, "bytes": moved,
           "sets": sets, "config": Config.from_c(cfg).as_dict()}
    if lda != k or any(offsets):
        row.update(lda=lda, offsets=list(offsets))
    row["pygemv"] = asdict(timing.time_graph(pygemv_call, sets, stream, repeats=repeats))
    if sink is not None:
        # The read ceiling at this size: the streaming-read kernel over as many bytes from
        # each set's aligned start (the same rotation), so fixed costs (launch, ramp, tail)
        # count alike.
        nb = (batch * m * k * es) // 16 * 16

        def read_a(i, s):
            _lib.check(lib.gemv_read_ceiling(buf.a(i) - buf.offsets[0] * es, nb, sink, s), "read_ceiling")

        if nb:
            t = asdict(timing.time_graph(read_a, sets, stream, repeats=repeats))
            row["ceiling_at_size"] = dict(t, bytes=nb, gbps=nb / (t["median_us"] * 1e3))

    if cublas is not None:
        entries = {}
        cublas.set_stream(stream)
        for entry in cublas.entry_points(dtype, batch):
            def cublas_call(i, s, entry=entry):
                cublas.gemv(entry, dtype, m, k, buf.a(i), lda, buf.xp(i), buf.yp(i), trans=trans, batch=batch,
                            stride_a=m * lda, stride_x=nx, stride_y=ny)
            entries[entry] = asdict(timing.time_graph(cublas_call, sets, stream, repeats=repeats))
        best = min(entries, key=lambda e: entries[e]["median_us"])
        row["cublas"] = dict(entries[best], entry=best)
        row["cublas_entries"] = entries
    if torch is not None:
        A3 = buf.A.view(sets, batch, m, k)
        x3, y3 = buf.x.view(sets, batch, nx), buf.y.view(sets, batch, ny)
        if batch == 1:
            A2 = (lambda i: A3[i, 0].t()) if trans else (lambda i: A3[i, 0])
            row["torch.mv"] = asdict(timing.time_torch_graph(
                lambda i: torch.mv(A2(i), x3[i, 0], out=y3[i, 0]), sets, repeats=repeats))
            if not trans:
                F = torch.nn.functional
                row["F.linear"] = asdict(timing.time_torch_graph(lambda i: F.linear(x3[i, 0], A3[i, 0]), sets,
                                                                 repeats=repeats))
        else:
            Ab = (lambda i: A3[i].transpose(1, 2)) if trans else (lambda i: A3[i])
            row["torch.bmm"] = asdict(timing.time_torch_graph(
                lambda i: torch.bmm(Ab(i), x3[i][..., None], out=y3[i][..., None]), sets, repeats=repeats))
    for peer in PEERS:
        if peer in row:
            row[peer]["gbps"] = moved / (row[peer]["median_us"] * 1e3)
    for peer in PEERS[1:]:
        if peer in row:
            row[f"speedup_vs_{peer}"] = row[peer]["median_us"] / row["pygemv"]["median_us"]
    return row


PEERS = ("pygemv", "cublas", "torch.mv", "F.linear", "torch.bmm")


def measure_ceiling(l2, stream, sink) -> dict:
    """GB/s of libgemv's streaming-read kernel over a buffer of 4 x L2 and at least 1 GiB
    (sink: a device float the kernel may write)."""
    lib = _lib.load()
    nbytes = max(timing.L2_FACTOR * l2, 1 << 30)
    data = DeviceArray.empty((nbytes // 4,), "float32")

    def read(i, s):
        _lib.check(lib.gemv_read_ceiling(data.ptr, nbytes, sink, s), "read_ceiling")

    t = timing.time_graph(read, 1, stream, repeats=15)
    return {"bytes": nbytes, "median_us": t.median_us, "gbps": nbytes / (t.median_us * 1e3)}


def host_overhead(torch) -> dict:
    """Eager per-call host cost on torch tensors, 1024x1024 fp16: pygemv.gemv vs torch.mv."""
    import pygemv
    A = torch.randn(1024, 1024, device="cuda").half()
    x = torch.randn(1024, device="cuda").half()
    y = torch.empty(1024, device="cuda").half()
    sync = torch.cuda.synchronize
    return {"pygemv.gemv_us": timing.host_call_us(lambda: pygemv.gemv(A, x, y), sync),
            "torch.mv_us": timing.host_call_us(lambda: torch.mv(A, x, out=y), sync)}


def geomean(v):
    return math.exp(sum(math.log(a) for a in v) / len(v)) if v else float("nan")


def at_size(r) -> float:
    """pygemv's bandwidth as a fraction of the read ceiling measured at the case's size."""
    c = r.get("ceiling_at_size")
    return r["pygemv"]["gbps"] / c["gbps"] if c else float("nan")


def print_table(rows, ceiling):
    lay = any("lda" in r for r in rows)  # a layout column only where some case has one
    head = (f"{'dtype':<8} {'op':>2} {'batch':>5} {'M x K':>16} " + (f"{'layout':<16} " if lay else "") +
            f"{'pygemv us':>10} {'GB/s':>6} {'%ceil':>6} {'%size':>6} {'cuBLAS us':>10} "
            f"{'entry':<22} {'mv us':>8} {'linear us':>9} {'vs cuBLAS':>9} {'vs mv':>6}  config")
    print(head)
    print("-" * len(head))
    for r in rows:
        c = r["config"]
        cfg = (f"{c['variant']} p={c['threads_per_row']} r={c['rows_per_block']} v={int(c['vector_loads'])} "
               f"u={c['unroll']} s={int(c['x_in_smem'])} k={c['split_k']}")
        cb = r.get("cublas", {})
        print(f"{r['dtype']:<8} {r.get('op', 'N'):>2} {r.get('batch', 1):>5} {r['m']:>7} x {r['k']:<6} "
              + (f"{layout_name(r):<16} " if lay else "") + f"{r['pygemv']['median_us']:>10.2f} "
              f"{r['pygemv']['gbps']:>6.0f} {100 * r['pygemv']['gbps'] / ceiling['gbps']:>5.1f}% "
              f"{100 * at_size(r):>5.1f}% "
              f"{cb.get('median_us', float('nan')):>10.2f} {cb.get('entry', '-'):<22} "
              f"{r.get('torch.mv', r.get('torch.bmm', {})).get('median_us', float('nan')):>8.2f} "
              f"{r.get('F.linear', {}).get('median_us', float('nan')):>9.2f} "
              f"{r.get('speedup_vs_cublas', float('nan')):>8.2f}x {r.get('speedup_vs_torch.mv', float('nan')):>5.2f}x"
              f"  {cfg}")


def case_name(r) -> str:
    """'float16 4096x4096'; op T and batches say so: 'float16 T 4096x4096', 'float16 N 64x1024x1024';
    so do a padded lda and offset operands: 'float16 4096x4096 lda+3 @1,0,5'."""
    op, batch = r.get("op", "N"), r.get("batch", 1)
    if op == "N" and batch == 1:
        name = f"{r['dtype']} {r['m']}x{r['k']}"
    else:
        name = f"{r['dtype']} {op} " + (f"{batch}x" if batch > 1 else "") + f"{r['m']}x{r['k']}"
    return name + (f" {layout_name(r)}" if "lda" in r else "")


def layout_name(r) -> str:
    """'lda+3 @1,0,5': lda past K, and A's, x's and y's offsets in elements ('' when dense and aligned)."""
    if "lda" not in r:
        return ""
    return f"lda+{r['lda'] - r['k']} @" + ",".join(str(o) for o in r["offsets"])


def case_layouts(n: int, dtype_of, *, lda_pad: int = 0, offsets=(0, 0, 0), random_seed=None):
    """(lda_pad, offsets) of n cases: the fixed ones, or with ``random_seed`` drawn as users
    meet them: lda padded by 0 (a third of cases) or 1-64 elements, and each pointer 0 to
    127 bytes (in elements) past a 256-byte boundary."""
    if random_seed is None:
        return [(lda_pad, tuple(offsets))] * n
    rng = np.random.default_rng(random_seed)
    out = []
    for i in range(n):
        per = 128 // _lib.DTYPE_SIZES[dtype_of(i)]
        pad = 0 if rng.random() < 1 / 3 else int(rng.integers(1, 65))
        out.append((pad, tuple(int(v) for v in rng.integers(0, per, 3))))
    return out


def summary(rows, ceiling) -> dict:
    """The whole run's figures, and the same for each (op, single or batched) group."""
    s = _summary(rows, ceiling)
    groups = sorted({(r.get("op", "N"), r.get("batch", 1) > 1) for r in rows})
    if len(groups) > 1:
        for op, batched in groups:
            s[f"op {op}{' batched' if batched else ''}"] = _summary(
                [r for r in rows if (r.get("op", "N"), r.get("batch", 1) > 1) == (op, batched)], ceiling)
    return s


def _summary(rows, ceiling) -> dict:
    s = {"cases": len(rows), "ceiling_gbps": ceiling["gbps"]}
    sp = [r["speedup_vs_cublas"] for r in rows if "speedup_vs_cublas" in r]
    if sp:
        s.update(geomean_vs_cublas=geomean(sp), min_vs_cublas=min(sp),
                 slower_than_cublas=[case_name(r) for r in rows if r.get("speedup_vs_cublas", 2) < 1.0])
        sq = [r["speedup_vs_cublas"] for r in rows if r["dtype"] != "float32" and r["m"] == r["k"] <= 4096
              and "speedup_vs_cublas" in r]
        if sq:
            s["min_vs_cublas_half_squares_le_4096"] = min(sq)
    big = [r["pygemv"]["gbps"] / ceiling["gbps"] for r in rows if r["bytes"] >= 64 << 20]
    if big:
        s["min_gbps_64MB_up"] = min(r["pygemv"]["gbps"] for r in rows if r["bytes"] >= 64 << 20)
        s["min_fraction_of_ceiling_64MB_up"] = min(big)
        s["min_fraction_of_ceiling_at_size_64MB_up"] = min(at_size(r) for r in rows if r["bytes"] >= 64 << 20)
    return s


def plot(rows, ceiling, path, title=""):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    dtypes = sorted({r["dtype"] for r in rows}, key=DTYPES.index)
    fig, axes = plt.subplots(1, len(dtypes), figsize=(6 * len(dtypes), 4.5), squeeze=False)
    for ax, dt in zip(axes[0], dtypes):
        rs = sorted((r for r in rows if r["dtype"] == dt), key=lambda r: r["bytes"])
        # Markers only: different shapes can move the same number of bytes.
        for peer, marker in (("pygemv", "o"), ("cublas", "s"), ("torch.mv", "^"), ("F.linear", "v")):
            pts = [(r["bytes"], r[peer]["gbps"]) for r in rs if peer in r]
            if pts:
                ax.plot(*zip(*pts), marker, linestyle="none", label=peer, markersize=5 if peer == "pygemv" else 4,
                        alpha=0.9 if peer == "pygemv" else 0.6)
        ax.axhline(ceiling["gbps"], color="k", lw=1, label=f"read ceiling {ceiling['gbps']:.0f} GB/s")
        ax.set_xscale("log")
        ax.set_xlabel("bytes moved per call (A + x + y)")
        ax.set_ylabel("GB/s")
        ax.set_title(dt)
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=8)
    if title:
        fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=120)


def parse_shapes(text):
    return [tuple(int(v) for v in s.lower().split("x")) for s in text.split(",") if s]


def random_cases(n: int, seed: int, dtypes, min_bytes: int = 16 << 10, max_bytes: int = 512 << 20):
    """n (dtype, M, K) as users meet them: the dtype uniform, A's size log-uniform in
    [min_bytes, max_bytes], and M log-uniform up to what that size allows (so K is too).
    Dense rows (lda = K): most shapes then have rows that are not 16-byte multiples."""
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(n):
        dtype = dtypes[int(rng.integers(len(dtypes)))]
        elements = 2 ** rng.uniform(math.log2(min_bytes), math.log2(max_bytes)) / _lib.DTYPE_SIZES[dtype]
        m = max(1, int(round(2 ** rng.uniform(0, math.log2(elements)))))
        k = max(1, int(round(elements / m)))
        out.append((dtype, m, k))
    return out


def worst_cases(rows, n: int = 10) -> list[str]:
    """The n cases slowest against cuBLAS, with the config that ran."""
    rs = sorted((r for r in rows if "speedup_vs_cublas" in r), key=lambda r: r["speedup_vs_cublas"])[:n]
    out = []
    for r in rs:
        c = r["config"]
        out.append(f"{case_name(r)}: {r['speedup_vs_cublas']:.2f}x ({r['pygemv']['median_us']:.1f} us against "
                   f"{r['cublas']['median_us']:.1f}; {c['variant']} p={c['threads_per_row']} r={c['rows_per_block']} "
                   f"v={c['vector_loads']} u={c['unroll']} s={int(c['x_in_smem'])} k={c['split_k']})")
    return out


def run_info() -> dict:
    """What produced the figures: pygemv's version, the commit when known, the table in use."""
    import subprocess
    from pathlib import Path

    from . import __version__, library_version
    from ._table import table_status
    commit = None
    try:
        here = Path(__file__).resolve().parent.parent
        r = subprocess.run(["git", "-C", str(here), "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                           timeout=5)
        commit = r.stdout.strip() or None
    except (OSError, subprocess.SubprocessError):
        pass
    import os
    commit = os.environ.get("GEMV_COMMIT", commit)
    st = table_status()
    return {"pygemv": __version__, "libgemv": library_version(), "commit": commit,
            "table": {"source": st.source, "path": st.path, "entries": st.entries, "sources": st.sources}}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="pygemv-bench", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--version", action="version", version=version_string("pygemv-bench"))
    ap.add_argument("--dtypes", default=",".join(DTYPES), help="comma-separated: float32,float16,bfloat16")
    ap.add_argument("--groups", default=",".join(SUITE), help="suite groups: " + ",".join(SUITE))
    ap.add_argument("--shapes", default="", help="MxK,... instead of the suite")
    ap.add_argument("--ops", default="N", help="comma-separated: N (y = A x), T (y = A^T x)")
    ap.add_argument("--batched", action="store_true",
                    help=f"strided batches instead: {BATCH_SHAPES} (or --shapes) at batches {BATCHES}")
    ap.add_argument("--random", type=int, default=0, metavar="N",
                    help="N random shapes instead of the suite: M and K log-uniform, A of 16 KB to --max-mb "
                         "(--quantized: 2^21 codes to --max-mb MiB of int4 codes, K a multiple of --k-multiple)")
    ap.add_argument("--seed", type=int, default=0, help="seed of --random")
    ap.add_argument("--max-mb", type=float, default=512, help="--random: largest A in MiB")
    ap.add_argument("--k-multiple", type=int, default=32,
                    help="--random --quantized: K a multiple of this (128: tinygemm runs every group size)")
    ap.add_argument("--quantized", action="store_true",
                    help="weight-only quantized GEMV (int4/int8) against cuBLAS dense and tinygemm instead "
                         "(pygemv/bench_quantized.py; --shapes or --random, and --formats select)")
    ap.add_argument("--formats", default="", help="--quantized: comma-separated of int4-g128,int4-g32,int8-row,"
                                                  "int4-g128-float (the default: all four), int8-row-bf16, int8-g128, "
                                                  "int8-g64-float-bf16")
    ap.add_argument("--lda-pad", type=int, default=0, metavar="P", help="lda = K + P elements (dense rows: 0)")
    ap.add_argument("--offsets", default="0,0,0", metavar="A,X,Y",
                    help="A's, x's and y's pointers this many elements past a 256-byte boundary (one value: all three)")
    ap.add_argument("--random-layout", action="store_true",
                    help="each case draws its lda padding and offsets (seeded by --seed; see case_layouts)")
    ap.add_argument("--repeats", type=int, default=15, help="timed samples per measurement (median taken)")
    ap.add_argument("--json", default="", help="write the results here")
    ap.add_argument("--plot", default="", help="draw bandwidth against size to this PNG (needs matplotlib)")
    ap.add_argument("--no-torch", action="store_true", help="leave torch out even if it is installed")
    ap.add_argument("--no-cublas", action="store_true", help="leave cuBLAS out")
    args = ap.parse_args(argv)
    if args.lda_pad < 0:
        ap.error(f"--lda-pad: {args.lda_pad}: must be at least 0")
    try:
        offsets = tuple(int(v) for v in args.offsets.split(","))
    except ValueError:
        offsets = ()
    offsets = offsets * 3 if len(offsets) == 1 else offsets
    if len(offsets) != 3 or min(offsets) < 0:
        ap.error(f"--offsets: {args.offsets!r}: give A,X,Y (or one value) of elements, each at least 0")
    if args.quantized and (args.lda_pad or any(offsets) or args.random_layout):
        ap.error("--lda-pad, --offsets and --random-layout are for dense cases, not --quantized")

    torch = None
    if not args.no_torch:
        try:
            import torch
        except ImportError:
            torch = None
    lib = _lib.load()
    props = device_props()
    l2 = props["l2_bytes"]
    ws_buf = DeviceArray.empty((_lib.WORKSPACE_RECOMMENDED_BYTES // 4,), "float32")
    ws = (ws_buf.ptr, _lib.WORKSPACE_RECOMMENDED_BYTES)
    cublas = None
    if not args.no_cublas:
        from ._cublas import WORKSPACE_BYTES, Cublas
        cublas_ws = DeviceArray.empty((WORKSPACE_BYTES // 4,), "float32")
        cublas = Cublas(cublas_ws.ptr)
    s = ctypes.c_void_p()
    _lib.check(lib.gemv_stream_create(ctypes.byref(s)), "stream")
    stream = s.value

    dtypes = args.dtypes.split(",")
    if args.k_multiple < 1:
        ap.error(f"--k-multiple: {args.k_multiple}: must be at least 1")
    ops = [o for o in args.ops.split(",") if o]
    if any(o not in ("N", "T") for o in ops):
        ap.error(f"--ops: {args.ops!r}: use N, T or N,T")
    if args.batched:
        cases = [("batched", (m, k), b) for (m, k) in (parse_shapes(args.shapes) or BATCH_SHAPES) for b in BATCHES
                 if b * m * k * max(_lib.DTYPE_SIZES[d] for d in dtypes) <= BATCH_CAP_BYTES]
    elif args.random:
        cases = None
    else:
        cases = [("custom", s, 1) for s in parse_shapes(args.shapes)] or \
            [(g, s, 1) for g in args.groups.split(",") for s in SUITE[g]]
    print(f"# {props['name']}, {props['sm_count']} SMs, L2 {l2 >> 20} MiB, driver {props['driver_version']}, "
          f"cuBLAS {cublas.version if cublas else '-'} ({cublas.path if cublas else 'off'}), "
          f"torch {torch.__version__ if torch else '-'}")
    sink = DeviceArray.empty((1,), "float32")
    ceiling = measure_ceiling(l2, stream, sink.ptr)
    print(f"# read ceiling: {ceiling['gbps']:.0f} GB/s")
    rows = []
    info = run_info()
    print(f"# pygemv {info['pygemv']} (commit {info['commit'] or 'unknown'}), table: {info['table']['sources'] or 'none'}")
    if args.quantized:  # its own shapes (--shapes, --random) and formats
        from . import bench_quantized
        return bench_quantized.run(args, l2=l2, stream=stream, ws=ws, ceiling=ceiling, info=info, props=props,
                                   sink=sink.ptr)
    if cases is None:
        jobs = [(op, (f"random seed {args.seed}", (m, k), 1), d)
                for op in ops for d, m, k in random_cases(args.random, args.seed, dtypes,
                                                          max_bytes=int(args.max_mb * (1 << 20)))]
    else:
        jobs = [(op, c, d) for op in ops for c in cases for d in dtypes]
    layouts = case_layouts(len(jobs), lambda i: jobs[i][2], lda_pad=args.lda_pad, offsets=offsets,
                           random_seed=args.seed if args.random_layout else None)
    t0 = time.time()
    for n, ((op, (group, (m, k), batch), dtype), (pad, offs)) in enumerate(zip(jobs, layouts), 1):
        row = bench_case(m, k, dtype, l2=l2, ws=ws, cublas=cublas, torch=torch, stream=stream,
                         repeats=args.repeats, sink=sink.ptr, trans=op == "T", batch=batch, lda=k + pad,
                         offsets=offs)
        row["group"] = group
        rows.append(row)
        left = (time.time() - t0) / n * (len(jobs) - n)
        print(f"\r[{n}/{len(jobs)}] {op} {dtype} {batch}x{m}x{k} {time.time() - t0:.0f}s, ETA {left:.0f}s   ", end="",
              file=sys.stderr, flush=True)
    print(file=sys.stderr)
    overhead = host_overhead(torch) if torch is not None else None
    print_table(rows, ceiling)
    summ = summary(rows, ceiling)
    if overhead:
        summ["host_us"] = overhead
    worst = worst_cases(rows)
    if worst:
        summ["worst"] = worst
        print("\nslowest against cuBLAS:\n  " + "\n  ".join(worst))
    print("\nsummary: " + json.dumps(summ, default=float))
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"device": props, "run": info, "platform": platform.platform(), "argv": sys.argv,
                       "cublas": {"path": cublas.path, "version": cublas.version} if cublas else None,
                       "torch": torch.__version__ if torch else None, "ceiling": ceiling,
                       "host_overhead": overhead, "summary": summ, "cases": rows}, f, indent=1)
    if args.plot:
        plot(rows, ceiling, args.plot, title=f"{props['name']}: pygemv {info['pygemv']}"
             f"{' (' + info['commit'] + ')' if info['commit'] else ''}, driver {props['driver_version']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
