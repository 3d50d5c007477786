"""A reduced sweep of every variant and every compile-time combination, for
compute-sanitizer (memcheck, racecheck): numpy and pygemv.DeviceArray only, so the
sanitizer sees libgemv's kernels alone. Also checks results against float64.

    compute-sanitizer --tool memcheck --error-exitcode 1 python3 tests/sanitize_sweep.py [T]

With the argument T, only op T (single products and batches) runs, with NB only op N's strided
batches, with Q only the quantized weights, with MMA only row_mma (the tensor-core row tiles) on
the whole aligned packs it takes, with TS only the op T stream (t_stream) on rows shorter than a
pack and rows with wide gaps: racecheck of the whole sweep takes longer than one device call
allows.
"""
import os
import sys

import numpy as np

import pygemv

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # gpu_cases beside it, under python -P too
from gpu_cases import sample_configs  # noqa: E402

SHAPES = [(1, 1), (7, 33), (33, 129), (129, 1000), (5, 4097), (1573, 66)]
# op T also on rows of 16-byte multiples past 128 bytes (lda = K + 8), where the dispatch takes
# configs of the column kernel's one-step walk (dispatch.cpp heuristic_columns: one pass up to
# 256 rows, else split-M in slices of 64 rows), and with the rule's 8-pack configs forced
# (unroll 4), and 8-pack configs of many steps a lane and a short last one (columns.cu
# kOneTile at unroll 2), single and batched. (variant, row lanes, unroll, split)
ALIGNED_T = [(100, 72), (300, 200)]
ALIGNED_T_CONFIGS = [("t_columns", 32, 4, 1), ("t_columns", 64, 4, 1), ("t_splitm_twopass", 16, 4, 5),
                     ("t_columns", 8, 2, 1), ("t_splitm_twopass", 16, 2, 3)]
# op T's phased rows walked by lane classes (a row lane a phase class), one pass and split,
# forced on every shape: (variant, threads across a tile, row lanes, unroll, split); one
# step, one tile and the loops.
LANE_CLASS_T_CONFIGS = [("t_columns", 32, 8, 4, 1), ("t_columns", 4, 64, 2, 1), ("t_columns", 16, 16, 1, 1),
                        ("t_columns", 2, 128, 2, 1), ("t_splitm_twopass", 16, 8, 4, 4),
                        ("t_splitm_twopass", 8, 16, 2, 3)]


# row_mma: tiles past M, rounds past K, single products and batches, lda tight (A ends at the
# last row's last element) or padded by a pack; every block size and unroll.
MMA_SHAPES = [(1, 8), (17, 64), (33, 520), (300, 104), (5, 4096)]


def row_mma_sweep(rng) -> tuple[int, int]:
    runs = wrong = 0
    configs = [pygemv.Config("row_mma", 32, w, pygemv.LOADS_ALIGNED, u) for w in (1, 2, 8) for u in (1, 2, 4)]
    for dtype in ("float16", "bfloat16"):
        for m, k in MMA_SHAPES:
            for batch, pad in ((1, 0), (1, 8), (3, 0), (3, 8)):
                lda = k + pad
                sa, sx, sy = m * lda + pad, k + pad, m + 1
                # Exactly the elements the operands span: a read past them leaves the allocation.
                # Batches of 3: x one element off its packs (row_mma gathers it into the workspace).
                xo = int(batch == 3)
                A = rng.standard_normal((batch - 1) * sa + (m - 1) * lda + k).astype(np.float32)
                x = rng.standard_normal((batch - 1) * sx + k + xo).astype(np.float32)
                dA, dx = pygemv.to_device(A, dtype), pygemv.to_device(x, dtype)
                A64, x64 = dA.to_numpy().astype(np.float64), dx.to_numpy().astype(np.float64)[xo:]
                ref = np.stack([np.stack([A64[b * sa + i * lda:b * sa + i * lda + k] for i in range(m)])
                                @ x64[b * sx:b * sx + k] for b in range(batch)])
                for config in configs:
                    dy = pygemv.to_device(np.full((batch - 1) * sy + m, np.nan, np.float32), dtype)
                    pygemv.gemv(dA.ptr, dx.ptr + 2 * xo, dy.ptr, m=m, k=k, dtype=dtype, lda=lda, batch=batch,
                                stride_a=sa, stride_x=sx, stride_y=sy, config=config)
                    out = dy.to_numpy().astype(np.float64)
                    out = np.stack([out[b * sy:b * sy + m] for b in range(batch)])
                    tol = {"float16": 2e-2, "bfloat16": 5e-2}[dtype]
                    if not np.all(np.abs(out - ref) <= tol * (1 + np.abs(ref) + k ** 0.5)):
                        wrong += 1
                        print(f"WRONG {dtype} batch {batch} {m}x{k} lda {lda} {config}", file=sys.stderr)
                    runs += 1
    return runs, wrong


# t_stream: rows shorter than a pack (a pack reaching three rows) and rows with gaps of whole
# packs (threads that load nothing), A one element past its packs, single products and batches;
# (m, k, lda - k). Blocks of 32 to 1024 threads, every unroll, one slice to many.
T_STREAM_SHAPES = [(1000, 5, 0), (777, 2, 1), (300, 4, 0), (2000, 7, 0), (500, 22, 40), (97, 53, 33)]
T_STREAM_CONFIGS = [(32, 1, 1), (256, 4, 7), (1024, 2, 64), (64, 2, 3), (512, 4, 1024)]


def t_stream_sweep(rng, ws_arg) -> tuple[int, int]:
    runs = wrong = 0
    for dtype in ("float32", "float16", "bfloat16"):
        for m, k, pad in T_STREAM_SHAPES:
            for batch in (1, 3):
                lda = k + pad
                sa, sx, sy = m * lda + 1, m + 1, k + 2
                # Exactly the elements the operands span (from A's element 1): a read past them
                # leaves the allocation.
                A = rng.standard_normal(1 + (batch - 1) * sa + (m - 1) * lda + k).astype(np.float32)
                x = rng.standard_normal((batch - 1) * sx + m).astype(np.float32)
                dA, dx = pygemv.to_device(A, dtype), pygemv.to_device(x, dtype)
                A64, x64 = dA.to_numpy().astype(np.float64)[1:], dx.to_numpy().astype(np.float64)
                ref = np.stack([np.stack([A64[b * sa + i * lda:b * sa + i * lda + k] for i in range(m)]).T
                                @ x64[b * sx:b * sx + m] for b in range(batch)])
                es = {"float32": 4, "float16": 2, "bfloat16": 2}[dtype]
                problem = dict(trans=True, lda=lda, batch=batch, stride_a=sa, stride_x=sx, stride_y=sy,
                               a_ptr=dA.ptr + es, x_ptr=dx.ptr)
                for threads, unroll, split in T_STREAM_CONFIGS:
                    config = pygemv.Config("t_stream", threads, 1, pygemv.LOADS_ALIGNED, unroll, False, split)
                    if not pygemv.can_implement(config, m, k, dtype, **problem)[0]:
                        continue
                    dy = pygemv.to_device(np.full((batch - 1) * sy + k, np.nan, np.float32), dtype)
                    pygemv.gemv(dA.ptr + es, dx.ptr, dy.ptr, m=m, k=k, dtype=dtype, lda=lda, trans=True, batch=batch,
                                stride_a=sa, stride_x=sx, stride_y=sy, config=config, workspace=ws_arg)
                    out = dy.to_numpy().astype(np.float64)
                    out = np.stack([out[b * sy:b * sy + k] for b in range(batch)])
                    tol = {"float32": 1e-4, "float16": 2e-2, "bfloat16": 5e-2}[dtype]
                    if not np.all(np.abs(out - ref) <= tol * (1 + np.abs(ref) + m ** 0.5)):
                        wrong += 1
                        print(f"WRONG {dtype} t_stream batch {batch} {m}x{k} lda {lda} {config}", file=sys.stderr)
                    runs += 1
    return runs, wrong


def main(argv) -> int:
    only_t, only_q, only_nb, only_mma = argv == ["T"], argv == ["Q"], argv == ["NB"], argv == ["MMA"]
    rng = np.random.default_rng(0)
    ws = pygemv.empty((pygemv.WORKSPACE_RECOMMENDED_BYTES // 4,), "float32")
    ws_arg = (ws.ptr, pygemv.WORKSPACE_RECOMMENDED_BYTES)
    runs = wrong = 0
    if argv == ["TS"]:
        runs, wrong = t_stream_sweep(rng, ws_arg)
        print(f"{runs} runs, {wrong} wrong")
        return 1 if wrong else 0
    if not (only_t or only_q or only_nb):
        runs, wrong = row_mma_sweep(rng)
    if only_mma:
        print(f"{runs} runs, {wrong} wrong")
        return 1 if wrong else 0
    if not (only_q or only_nb):
        r, w = t_stream_sweep(rng, ws_arg)
        runs, wrong = runs + r, wrong + w
    for dtype in ("float32", "float16", "bfloat16") if not (only_t or only_q or only_nb) else ():
        for m, k in SHAPES:
            lda = k + 3
            A = rng.standard_normal((m, lda)).astype(np.float32)
            x = rng.standard_normal(2 * k).astype(np.float32)
            y0 = rng.standard_normal(m).astype(np.float32)
            dA = pygemv.to_device(A, dtype)
            dx = pygemv.to_device(x, dtype)
            # Reference from the rounded inputs.
            A64 = dA.to_numpy()[:, :k].astype(np.float64)
            x64 = dx.to_numpy()[::2].astype(np.float64)
            # x of exactly k elements (so a read past its end leaves the allocation), aligned
            # and one element in; strided.
            dx1 = pygemv.to_device(x[:k], dtype)
            dxo = pygemv.to_device(x[:k + 1], dtype)
            layouts = ((1, dx1.view((k,), (1,)), dx1.to_numpy()), (1, dxo.view((k,), (1,), offset=1), dxo.to_numpy()[1:]),
                       (2, dx.view((k,), (2,)), None))
            for li, (incx, x_view, x_host) in enumerate(layouts):
                xr = x64 if incx == 2 else x_host.astype(np.float64)
                ref = 1.5 * (A64 @ xr) - 0.5 * pygemv.to_device(y0, dtype).to_numpy().astype(np.float64)
                for v in pygemv.variants("N"):
                    for config in [None] + sample_configs(v):
                        if config is not None and not pygemv.can_implement(
                                config, m, k, dtype, lda=lda, incx=incx, a_ptr=dA.ptr, x_ptr=x_view.ptr)[0]:
                            continue
                        # The offset x: the loads that read x by aligned packs at any phase.
                        if li == 1 and config is not None and config.vector_loads not in (2, 3):
                            continue
                        dy = pygemv.to_device(y0, dtype)
                        pygemv.gemv(dA.view((m, k), (lda, 1)), x_view, dy, alpha=1.5, beta=-0.5, config=config,
                                    workspace=ws_arg)
                        out = dy.to_numpy().astype(np.float64)
                        tol = {"float32": 1e-4, "float16": 2e-2, "bfloat16": 5e-2}[dtype]
                        if not np.all(np.abs(out - ref) <= tol * (1 + np.abs(A64) @ np.abs(xr))):
                            wrong += 1
                            print(f"WRONG {dtype} {m}x{k} incx={incx} {config}", file=sys.stderr)
                        runs += 1
    # op T and strided batches: every operation of each op, batch 1 and 3 (padded strides).
    for dtype in ("float32", "float16", "bfloat16") if not only_q else ():
        for m, k in SHAPES + ([] if only_nb else ALIGNED_T):
            for trans in (True,) if only_t or (m, k) in ALIGNED_T else (False,) if only_nb else (False, True):
                for batch in (3,) if only_nb else (1, 3):
                    nx, ny = (m, k) if trans else (k, m)
                    lda = k + (8 if (m, k) in ALIGNED_T else 3)
                    # The aligned shapes' products stay 16-byte aligned (a block a product).
                    sa, sx, sy = m * lda + (8 if (m, k) in ALIGNED_T else 5), nx + 1, ny + 2
                    A = rng.standard_normal(batch * sa).astype(np.float32)
                    x = rng.standard_normal(batch * sx).astype(np.float32)
                    dA, dx = pygemv.to_device(A, dtype), pygemv.to_device(x, dtype)
                    A64, x64 = dA.to_numpy().astype(np.float64), dx.to_numpy().astype(np.float64)
                    ref = np.stack([(A64[b * sa:b * sa + m * lda].reshape(m, lda)[:, :k].T if trans else
                                     A64[b * sa:b * sa + m * lda].reshape(m, lda)[:, :k]) @ x64[b * sx:b * sx + nx]
                                    for b in range(batch)])
                    forced = [pygemv.Config(name, 8, lanes, pygemv.LOADS_ALIGNED, unroll, False, split)
                              for name, lanes, unroll, split in ALIGNED_T_CONFIGS] if trans else []
                    forced += [pygemv.Config(name, c, lanes, pygemv.LOADS_PHASED, unroll, False, split)
                               for name, c, lanes, unroll, split in LANE_CLASS_T_CONFIGS] if trans else []
                    for v in pygemv.variants("T" if trans else "N"):
                        for config in [None] + sample_configs(v) + [c for c in forced if c.variant == v.name]:
                            problem = dict(trans=trans, lda=lda, batch=batch, stride_a=sa, stride_x=sx, stride_y=sy,
                                           a_ptr=dA.ptr, x_ptr=dx.ptr)
                            if config is not None and not pygemv.can_implement(config, m, k, dtype, **problem)[0]:
                                continue
                            # Poisoned, not left uninitialised: the gaps between products are
                            # never written, and initcheck reports copying them back.
                            dy = pygemv.to_device(np.full(batch * sy, np.nan, np.float32), dtype)
                            pygemv.gemv(dA.ptr, dx.ptr, dy.ptr, m=m, k=k, dtype=dtype, lda=lda, trans=trans,
                                        batch=batch, stride_a=sa, stride_x=sx, stride_y=sy, config=config,
                                        workspace=ws_arg)
                            out = dy.to_numpy().astype(np.float64)
                            out = np.stack([out[b * sy:b * sy + ny] for b in range(batch)])
                            tol = {"float32": 1e-4, "float16": 2e-2, "bfloat16": 5e-2}[dtype]
                            if not np.all(np.abs(out - ref) <= tol * (1 + np.abs(ref) + nx ** 0.5)):
                                wrong += 1
                                print(f"WRONG {dtype} {'T' if trans else 'N'} batch {batch} {m}x{k} {config}",
                                      file=sys.stderr)
                            runs += 1
    # Quantized weights: quantize, dequantize, q_rows (forced configs: lanes, rows a thread,
    # splits, and K past one staged chunk), q_mma (x staged or read in place), q_mma_x_held,
    # q_block_rows (int8; blocks of 32 to 256 threads on 1 to 4 rows, 1 or 2 packs in flight) and
    # q_mma_rounds (int4, groups of 32 and 64 in B's columns; 1 to 8 warps a tile, 1 or 2 steps a round).
    qconfigs = [None] + [pygemv.Config("q_rows", p, max(1, (512 if u == 4 else 256) // p), 1, u, True, s)
                         for p, u, s in ((1, 1, 1), (4, 2, 3), (32, 4, 1), (32, 2, 16))]
    for dtype in ("float16", "bfloat16") if not (only_t or only_nb) else ():
        for bits, mode, gs in ((4, "symmetric", 32), (4, "float", 64), (4, "int", 128), (4, "symmetric", 256), (4, "float", None),
                               (8, "symmetric", None), (8, "int", 64), (8, "float", 32)):
            for m, k in ((7, 33), (33, 129), (5, 4097), (3, 13000)):
                W = pygemv.to_device(rng.standard_normal((m, k)).astype(np.float32), dtype)
                Q = pygemv.quantize(W, bits=bits, group_size=gs, zero_point=mode)
                D = Q.dequantize().to_numpy().astype(np.float64)
                dx = pygemv.to_device(rng.standard_normal(k).astype(np.float32), dtype)
                ref = D @ dx.to_numpy().astype(np.float64)
                mma = [pygemv.Config("q_mma", p, w, 1, 1, staged, s)  # x staged, or read in place
                       for p, w, s in ((32, 1, 1), (32, 4, 3), (32, 8, 1), (128, 2, 1), (256, 1, 3))
                       for staged in (True, False)]
                held = [pygemv.Config("q_mma_x_held", p, tiles, 1, u, False, s)  # x held in registers
                        for p, tiles, u, s in ((32, 1, 1, 1), (256, 4, 2, 1), (64, 64, 1, 3), (128, 3, 2, 3))]
                mma_runs = bits == 4 and (gs is None or gs >= 128) and dtype == "float16" and mode != "float"
                held_runs = bits == 4 or (dtype == "float16" and (gs is None or gs >= 64))  # int8: fp16, groups of 64 up
                block = [pygemv.Config("q_block_rows", p, r, 1, u, False, 1)
                         for p, r, u in ((32, 1, 1), (256, 4, 2), (64, 2, 2), (128, 2, 1))] if bits == 8 else []
                rounds = [pygemv.Config("q_mma_rounds", p, 1, 1, u, False, 1)
                          for p, u in ((32, 1), (256, 2), (64, 2), (128, 1))] if bits == 4 else []
                for config in qconfigs + (mma if mma_runs else []) + (held if held_runs else []) + block + rounds:
                    dy = pygemv.to_device(np.full(m, np.nan, np.float32), dtype)
                    pygemv.gemv(Q, dx, dy, config=config, workspace=ws_arg)
                    out = dy.to_numpy().astype(np.float64)
                    if not np.all(np.abs(out - ref) <= 5e-2 * (1 + np.abs(ref) + k ** 0.5)):
                        wrong += 1
                        print(f"WRONG quantized {dtype} int{bits} {mode} g{gs} {m}x{k} {config}", file=sys.stderr)
                    runs += 1
    pygemv.synchronize()
    print(f"sanitize sweep: {runs} runs, {wrong} wrong")
    return 1 if wrong else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
