"""Shared machinery of the GPU tests: problems laid out in raw buffers (padding, offsets,
strides of either sign), poisoned outputs, float64 references and the contract's bound."""
from __future__ import annotations

import itertools
from dataclasses import dataclass

import pygemv
from pygemv.bench import error_bound  # the contract's bound, one copy for the benchmark and the tests

GAP = 7.25  # what sits in y's gaps; it must still be there, bit for bit, afterwards


def ref64(A, x, alpha=1.0, beta=0.0, y=None):
    """float64 reference of alpha * A @ x + beta * y, for torch tensors."""
    r = alpha * (A.double() @ x.double())
    return r if y is None or beta == 0 else r + beta * y.double()


def close(y, ref, dtype_tol=1e-2):
    """A loose elementwise check against ref64, for tests of plumbing rather than bounds."""
    return bool(((y.double() - ref).abs() <= dtype_tol * (1 + ref.abs())).all())


def torch_dtype(torch, name):
    return {"float32": torch.float32, "float16": torch.float16, "bfloat16": torch.bfloat16}[name]


def pow2_range(lo, hi):
    return [1 << i for i in range(31) if lo <= (1 << i) <= hi]


def sample_configs(v: pygemv.Variant) -> list[pygemv.Config]:
    """Every compile-time combination (loads x unroll x x-in-smem) of the variant,
    with threads per row, rows per block and split-K cycling through their ranges."""
    ps = pow2_range(*v.threads_per_row)
    rows = pow2_range(*v.rows_per_block)
    splits = [s for s in (2, 3, 16, 64) if v.split_k[0] <= s <= v.split_k[1]] or [1]
    out = []
    smems = (False, True) if v.stages_x else (False,)
    loads = (pygemv.LOADS_ALIGNED, pygemv.LOADS_REALIGNED, pygemv.LOADS_PHASED, pygemv.LOADS_SCALAR,
             pygemv.LOADS_ALIGNED8, pygemv.LOADS_PHASED_X_COPIES) if v.op == "N" else (
        pygemv.LOADS_ALIGNED, pygemv.LOADS_REALIGNED, pygemv.LOADS_PHASED, pygemv.LOADS_SCALAR)
    for i, (vec, unroll, smem) in enumerate(itertools.product(loads, v.unrolls, smems)):
        cap = 512 if unroll == 4 else 1024
        legal = [(p, [r for r in rows if 32 <= p * r <= cap]) for p in ps]
        legal = [(p, rs) for p, rs in legal if rs]
        p, ok_rows = legal[i % len(legal)]
        r = ok_rows[(i // len(legal) + i) % len(ok_rows)]
        c = pygemv.Config(v.name, p, r, vec, unroll, smem, splits[i % len(splits)])
        # The row stream takes 16-byte loads and a staged x only; phased rows a contiguous x when not staged.
        if pygemv._registry.validate(c):
            out.append(c)
    return out


def all_sample_configs(op: str = "N") -> list[pygemv.Config]:
    return [c for v in pygemv.variants(op) for c in sample_configs(v)]


@dataclass
class Case:
    """How operands sit in memory: lda padding (filled with NaN), base offsets in elements
    (to misalign), increments (either sign), and the scalars."""
    lda_pad: int = 0
    a_off: int = 0
    incx: int = 1
    x_off: int = 0
    incy: int = 1
    y_off: int = 0
    alpha: float = 1.0
    beta: float = 0.0


CASES = [
    Case(),
    Case(lda_pad=5, alpha=-0.7, beta=1.3),
    Case(lda_pad=8, incx=2, incy=3, alpha=2.5),
    Case(a_off=1, x_off=1, y_off=1, beta=-2.0),            # misaligned base pointers
    Case(lda_pad=3, a_off=3, incx=-1, incy=-2, alpha=0.5, beta=1.0),
    Case(alpha=1.0, beta=1.0, incx=-3, x_off=2),
]


class Problem:
    """One GEMV problem in raw device buffers, with its float64 reference and bound."""

    def __init__(self, torch, m, k, dtype, case: Case, seed=0):
        self.torch, self.m, self.k, self.dtype, self.case = torch, m, k, dtype, case
        dt = torch_dtype(torch, dtype)
        dev = "cuda"
        g = torch.Generator(device=dev).manual_seed(seed * 1000003 + m * 7919 + k)
        nan = float("nan")
        self.lda = max(1, k) + case.lda_pad
        self.a_buf = torch.full((case.a_off + m * self.lda + 16,), nan, dtype=dt, device=dev)
        A = self.a_buf[case.a_off:case.a_off + m * self.lda].view(m, self.lda)[:, :k]
        A.copy_(torch.randn(m, k, generator=g, device=dev))
        # x: logical element j at x_idx[j] (reference-BLAS order for a negative increment).
        self.x_idx = self._indices(k, case.incx, case.x_off)
        self.x_buf = torch.full((case.x_off + (k - 1) * abs(case.incx) + 16,), nan, dtype=dt, device=dev)
        self.x_buf[self.x_idx] = torch.randn(k, generator=g, device=dev).to(dt)
        self.y_idx = self._indices(m, case.incy, case.y_off)
        self.y_init = torch.full((case.y_off + (m - 1) * abs(case.incy) + 16,), GAP, dtype=dt, device=dev)
        # beta == 0: poison y with NaN, which must not leak into the result.
        y0 = torch.randn(m, generator=g, device=dev).to(dt) if case.beta != 0 else torch.full((m,), nan, dtype=dt,
                                                                                              device=dev)
        self.y_init[self.y_idx] = y0
        self.y_buf = self.y_init.clone()
        gaps = torch.ones_like(self.y_init, dtype=torch.bool)
        gaps[self.y_idx] = False
        self.gaps = gaps
        A64, x64 = A.double(), self.x_buf[self.x_idx].double()
        by = case.beta * y0.double() if case.beta != 0 else torch.zeros(m, dtype=torch.float64, device=dev)
        self.ref = case.alpha * (A64 @ x64) + by
        g_mag = abs(case.alpha) * (A64.abs() @ x64.abs()) + by.abs()
        self.bound = error_bound(dtype, k, self.ref.abs(), g_mag)
        self.A = A

    def _indices(self, n, inc, off):
        torch = self.torch
        j = torch.arange(n, device="cuda")
        return off + (j * inc if inc > 0 else (n - 1 - j) * (-inc))

    def ptrs(self):
        c, es = self.case, self.a_buf.element_size()
        x_lo = self.x_buf.data_ptr() + c.x_off * es
        y_lo = self.y_buf.data_ptr() + c.y_off * es
        return self.a_buf.data_ptr() + c.a_off * es, x_lo, y_lo

    def run(self, config=None, workspace=None, stream=None):
        """Reset y (poisoned), run one gemv, return the logical y (the call is queued)."""
        self.y_buf.copy_(self.y_init)
        A, x, y = self.ptrs()
        c = self.case
        pygemv.gemv(A, x, y, m=self.m, k=self.k, dtype=self.dtype, lda=self.lda, incx=c.incx, incy=c.incy,
                    alpha=c.alpha, beta=c.beta, config=config, workspace=workspace,
                    stream=stream if stream is not None else self.torch.cuda.current_stream().cuda_stream)
        return self.y_buf[self.y_idx].double()

    def gaps_changed(self):
        """Count of y's gap elements that differ bitwise from before (a device tensor: no sync)."""
        t = self.torch
        bits = t.int16 if self.y_buf.element_size() == 2 else t.int32
        return (self.y_buf[self.gaps].view(bits) != self.y_init[self.gaps].view(bits)).sum()

    def gaps_untouched(self) -> bool:
        return int(self.gaps_changed()) == 0

    def violations_t(self, y):
        """Outputs outside the contract's bound, NaN counting as outside (a device tensor)."""
        return (~((y - self.ref).abs() <= self.bound)).sum()

    def violations(self, y) -> int:
        return int(self.violations_t(y))

    def can_run(self, config) -> tuple[bool, str]:
        A, x, y = self.ptrs()
        c = self.case
        return pygemv.can_implement(config, self.m, self.k, self.dtype, lda=self.lda, incx=c.incx, incy=c.incy,
                                    a_ptr=A, x_ptr=x, y_ptr=y)


def describe(p: Problem, config) -> str:
    return f"{p.dtype} m={p.m} k={p.k} {p.case} config={config}"


def workspace(torch, nbytes=pygemv.WORKSPACE_RECOMMENDED_BYTES):
    buf = torch.empty(nbytes, dtype=torch.uint8, device="cuda")
    return buf, (buf.data_ptr(), nbytes)


def chain_failures(torch, dtype, variant, n=1536, steps=24) -> list[str]:
    """Chains of calls that depend on each other, back to back; what came out wrong.

    1. Read after write: v[i+1] = A v[i], every step checked against the float64 product
       of its own input (the contract's bound).
    2. Ping-pong, where each call also overwrites the previous call's input, eager and as
       a replayed CUDA graph, against the same chain run one call at a time.
    variant: None (the dispatcher) or a variant forced with a fixed config."""
    buf, ws = workspace(torch)
    dt = torch_dtype(torch, dtype)
    g = torch.Generator(device="cuda").manual_seed(7)
    A = (torch.randn(n, n, device="cuda", generator=g) / n ** 0.5).to(dt)
    A64 = A.double()
    config = None if variant is None else {
        "splitk_twopass": pygemv.Config("splitk_twopass", 128, 1, True, 2, False, 6),
        "splitk_atomic": pygemv.Config("splitk_atomic", 128, 1, True, 2, False, 6),
        "block_per_row": pygemv.Config("block_per_row", 64, 2, True, 2, False, 1)}[variant]
    x0 = torch.randn(n, device="cuda", generator=g).to(dt)
    fails = []
    where = f"{dtype} {variant or 'dispatch'}"

    def nan_vec():
        return torch.full((n,), float("nan"), device="cuda", dtype=dt)

    v = [x0.clone()] + [nan_vec() for _ in range(steps)]
    for i in range(steps):
        pygemv.gemv(A, v[i], v[i + 1], config=config, workspace=ws)
    torch.cuda.synchronize()
    for i in range(steps):
        ref = A64 @ v[i].double()
        bound = error_bound(dtype, n, ref.abs(), A64.abs() @ v[i].double().abs())
        bad = int((~((v[i + 1].double() - ref).abs() <= bound)).sum())
        if bad:
            fails.append(f"{where}: step {i}: {bad} of {n} entries are not A @ (the previous call's output)")

    def same(a, b):
        if variant == "splitk_atomic":
            # The order of the atomic adds varies from run to run, and the chain carries each
            # rounding difference on, so a small entry can differ by more than its own size:
            # compare norm-wise. A race (a call reading an input the next one overwrites) is
            # off by the vector's own scale.
            a, b = a.double(), b.double()
            if not torch.equal(torch.isnan(a), torch.isnan(b)):
                return False
            ok = ~torch.isnan(b)
            if not bool(ok.any()):
                return True
            tol = 1e-2 if dtype == "float16" else 1e-4
            return bool((a[ok] - b[ok]).abs().max() <= tol * b[ok].abs().max())
        return torch.equal(a, b)

    one_by_one = [x0.clone(), nan_vec()]
    for i in range(steps):
        pygemv.gemv(A, one_by_one[i % 2], one_by_one[(i + 1) % 2], config=config, workspace=ws)
        torch.cuda.synchronize()
    expect = one_by_one[steps % 2]

    pp = [x0.clone(), nan_vec()]
    for i in range(steps):
        pygemv.gemv(A, pp[i % 2], pp[(i + 1) % 2], config=config, workspace=ws)
    torch.cuda.synchronize()
    if not same(pp[steps % 2], expect):
        fails.append(f"{where}: back-to-back ping-pong differs from one call at a time")

    pp = [x0.clone(), nan_vec()]
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.stream(side):
        with torch.cuda.graph(graph, stream=side):
            for i in range(steps):
                pygemv.gemv(A, pp[i % 2], pp[(i + 1) % 2], config=config, workspace=ws)
    for _ in range(2):  # replays start from x0 each time
        pp[0].copy_(x0)
        pp[1].fill_(float("nan"))
        graph.replay()
        torch.cuda.synchronize()
        if not same(pp[steps % 2], expect):
            fails.append(f"{where}: graph replay of the ping-pong differs from one call at a time")
    return fails


class OpProblem:
    """A problem of either op, single or a strided batch, in raw device buffers: lda padded
    with NaN, base offsets (misalignment), increments and batch strides of either sign
    (0 shares an operand), y poisoned with NaN when beta == 0 and gap sentinels elsewhere.
    The reference is float64 over the rounded inputs; the bound is the contract's, with
    the reduction length K for op N and M for op T."""

    def __init__(self, torch, m, k, dtype, *, trans=False, batch=1, lda_pad=0, a_off=0, x_off=0, y_off=0,
                 incx=1, incy=1, share_a=False, share_x=False, reverse_batch=False, batch_pad=3, alpha=1.0, beta=0.0,
                 seed=0):
        self.torch, self.m, self.k, self.dtype, self.trans, self.batch = torch, m, k, dtype, trans, batch
        self.alpha, self.beta, self.incx, self.incy = alpha, beta, incx, incy
        dt = torch_dtype(torch, dtype)
        g = torch.Generator(device="cuda").manual_seed(seed * 7919 + m * 31 + k + batch)
        nan = float("nan")
        nx, ny = (m, k) if trans else (k, m)
        self.nx, self.ny = nx, ny
        self.lda = max(1, k) + lda_pad
        span_a, span_x, span_y = m * self.lda, (nx - 1) * abs(incx) + 1, (ny - 1) * abs(incy) + 1
        # Batch strides: padded by batch_pad elements (3 by default, so products do not stay
        # aligned; 0 keeps A's products aligned where its rows are), or 0 (shared).
        self.stride_a = 0 if share_a else span_a + batch_pad
        self.stride_x = 0 if share_x else span_x + batch_pad
        self.stride_y = span_y + batch_pad
        if reverse_batch:  # negative strides: product b lies below product 0
            self.stride_a, self.stride_x, self.stride_y = -self.stride_a, -self.stride_x, -self.stride_y

        def buf(span, stride, off, fill):
            n = off + span + abs(stride) * (batch - 1) + 16
            return torch.full((n,), fill, dtype=dt, device="cuda")

        def base(stride, off):  # element index of product 0's lowest element
            return off + (abs(stride) * (batch - 1) if stride < 0 else 0)

        self.a_buf, self.x_buf = buf(span_a, self.stride_a, a_off, nan), buf(span_x, self.stride_x, x_off, nan)
        self.y_init = buf(span_y, self.stride_y, y_off, GAP)
        self.a0, self.x0, self.y0 = base(self.stride_a, a_off), base(self.stride_x, x_off), base(self.stride_y, y_off)
        j = torch.arange
        a_idx = (self.a0 + j(batch, device="cuda")[:, None, None] * self.stride_a
                 + j(m, device="cuda")[None, :, None] * self.lda + j(k, device="cuda")[None, None, :])

        def vec_idx(first, stride, n, inc):
            pos = j(n, device="cuda") * inc if inc > 0 else (n - 1 - j(n, device="cuda")) * -inc
            return first + j(batch, device="cuda")[:, None] * stride + pos[None, :]

        x_idx, self.y_idx = vec_idx(self.x0, self.stride_x, nx, incx), vec_idx(self.y0, self.stride_y, ny, incy)
        self.a_buf[a_idx.reshape(-1)] = torch.randn(a_idx.numel(), generator=g, device="cuda").to(dt)
        self.x_buf[x_idx.reshape(-1)] = torch.randn(x_idx.numel(), generator=g, device="cuda").to(dt)
        y0 = (torch.randn(self.y_idx.numel(), generator=g, device="cuda").to(dt) if beta != 0
              else torch.full((self.y_idx.numel(),), nan, dtype=dt, device="cuda"))
        self.y_init[self.y_idx.reshape(-1)] = y0
        self.y_buf = self.y_init.clone()
        self.gaps = torch.ones_like(self.y_init, dtype=torch.bool)
        self.gaps[self.y_idx.reshape(-1)] = False
        A64 = self.a_buf[a_idx].double()
        if trans:
            A64 = A64.transpose(1, 2)
        x64 = self.x_buf[x_idx].double()
        by = beta * y0.double().view(batch, ny) if beta != 0 else torch.zeros(batch, ny, dtype=torch.float64,
                                                                              device="cuda")
        self.ref = alpha * torch.bmm(A64, x64[:, :, None])[:, :, 0] + by
        mag = abs(alpha) * torch.bmm(A64.abs(), x64.abs()[:, :, None])[:, :, 0] + by.abs()
        self.bound = error_bound(dtype, nx, self.ref.abs(), mag)

    def ptrs(self):
        es = self.a_buf.element_size()
        return (self.a_buf.data_ptr() + self.a0 * es, self.x_buf.data_ptr() + self.x0 * es,
                self.y_buf.data_ptr() + self.y0 * es)

    def run(self, config=None, workspace=None, stream=None):
        """Reset y (poisoned), queue one call, return the logical y (batch, ny) in float64."""
        self.y_buf.copy_(self.y_init)
        A, x, y = self.ptrs()
        pygemv.gemv(A, x, y, m=self.m, k=self.k, dtype=self.dtype, lda=self.lda, incx=self.incx, incy=self.incy,
                    alpha=self.alpha, beta=self.beta, trans=self.trans, batch=self.batch, stride_a=self.stride_a,
                    stride_x=self.stride_x, stride_y=self.stride_y, config=config, workspace=workspace,
                    stream=stream if stream is not None else self.torch.cuda.current_stream().cuda_stream)
        return self.y_buf[self.y_idx].double()

    def can_run(self, config):
        A, x, y = self.ptrs()
        return pygemv.can_implement(config, self.m, self.k, self.dtype, trans=self.trans, lda=self.lda,
                                    incx=self.incx, incy=self.incy, a_ptr=A, x_ptr=x, y_ptr=y, batch=self.batch,
                                    stride_a=self.stride_a, stride_x=self.stride_x, stride_y=self.stride_y)

    def bad_counts(self, y):
        """(outputs outside the bound or NaN, gap elements changed), as a device tensor."""
        t = self.torch
        bits = t.int16 if self.y_buf.element_size() == 2 else t.int32
        gaps = (self.y_buf[self.gaps].view(bits) != self.y_init[self.gaps].view(bits)).sum()
        return t.stack([(~((y - self.ref).abs() <= self.bound)).sum(), gaps])

    def __repr__(self):
        return (f"{self.dtype} {'T' if self.trans else 'N'} m={self.m} k={self.k} batch={self.batch} lda={self.lda} "
                f"incx={self.incx} incy={self.incy} strides=({self.stride_a},{self.stride_x},{self.stride_y}) "
                f"alpha={self.alpha} beta={self.beta}")


def run_all(torch, p: OpProblem, configs, ws) -> tuple[list[str], int]:
    """The dispatcher and every config on p: runnable ones checked against the bound, the
    rest must refuse with NotSupportedError or InsufficientWorkspaceError."""
    ran, counts = [], []
    for config in [None] + list(configs):
        if config is not None and not p.can_run(config)[0]:
            try:
                p.run(config, workspace=ws)
            except pygemv.NotSupportedError:
                continue
            raise AssertionError(f"{p} {config}: can_implement said no, but the call ran")
        if config is not None and pygemv.workspace_size(
                config, p.m, p.k, p.dtype, trans=p.trans, batch=p.batch, stride_a=p.stride_a, stride_x=p.stride_x,
                stride_y=p.stride_y) > ws[1]:
            continue
        counts.append(p.bad_counts(p.run(config, workspace=ws)))
        ran.append(config)
    counts = torch.stack(counts).tolist()
    return [f"{p} config={c}: {bad} outputs outside the bound, {gaps} gap elements written"
            for c, (bad, gaps) in zip(ran, counts) if bad or gaps], len(ran)
