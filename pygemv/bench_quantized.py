"""``pygemv-bench --quantized``: weight-only quantized GEMV against its peers, in one run.

For each shape and format: pygemv's quantized GEMV (``pygemv.quantize`` of a random fp16/bf16
weight) is checked against the float64 product of its dequantized matrix, then timed by
CUDA-graph replay with a cold L2 (rotating copies of the weights, x and y), beside
  - cuBLAS on the dense weights (``torch.mv``, same dtype), and
  - tinygemm (``torch._weight_int4pack_mm``, bf16, int4 with float zeros) where the
    installed torch has it and the shape suits it.
Bandwidth is on the bytes actually read: codes, scales and zeros (plus x and y). Each case
also times libgemv's streaming-read kernel over that many bytes in the same rotation (the
read ceiling at its size: launch, ramp and tail count alike), so a figure can be set against
what the memory system gives a pure read of the same size.
"""
from __future__ import annotations

import ctypes
import json
import math
import sys
import time
from dataclasses import asdict

import numpy as np

from . import _lib, timing
from .bench import Case, error_bound
from ._quant import quantize

SHAPES = [(4096, 4096), (14336, 4096), (4096, 14336), (8192, 8192), (28672, 8192), (8192, 28672), (128256, 4096),
          (7392, 8192), (11008, 10944), (5003, 7392), (1000, 4100)]
# (name, bits, group_size, zero_point, dtype)
FORMATS = [("int4-g128", 4, 128, "int", "float16"), ("int4-g32", 4, 32, "int", "float16"),
           ("int8-row", 8, None, "symmetric", "float16"), ("int4-g128-float", 4, 128, "float", "bfloat16")]
# More formats, timed when --formats names them: int8 in bf16, in groups, with float zeros;
# int4 in groups of 128 in the other dtype and zero modes; tinygemm's format (bf16 float
# zeros) in groups of 64 (HQQ's default) and 32, with tinygemm alongside.
MORE_FORMATS = [("int8-row-bf16", 8, None, "symmetric", "bfloat16"), ("int8-g128", 8, 128, "int", "float16"),
                ("int8-g64-float-bf16", 8, 64, "float", "bfloat16"), ("int4-g128-bf16", 4, 128, "int", "bfloat16"),
                ("int4-g128-sym", 4, 128, "symmetric", "float16"), ("int4-g128-sym-bf16", 4, 128, "symmetric", "bfloat16"),
                ("int4-g128-float-fp16", 4, 128, "float", "float16"), ("int4-g64-float", 4, 64, "float", "bfloat16"),
                ("int4-g32-float", 4, 32, "float", "bfloat16"), ("int4-g32-sym", 4, 32, "symmetric", "float16"),
                ("int4-g64", 4, 64, "int", "float16")]


def _tinygemm(torch, codes, scales, zeros, group_size):
    """torch's int4 weight and scale-and-zero tensors for our codes (uint8 [M, K]) and float
    zeros (w = q s + z), or None when this torch or shape has no tinygemm. tinygemm reads
    w = (q - 8) s + z', so z' = z + 8 s."""
    m, k = codes.shape
    if not hasattr(torch, "_weight_int4pack_mm") or k % group_size:  # its scales are [K / g, M, 2]
        return None
    packed = (codes[:, ::2] << 4 | codes[:, 1::2]).to(torch.uint8)
    sz = torch.stack([scales.T, (zeros + 8 * scales).T], dim=-1).contiguous()  # [K / g, M, 2]
    for tiles in (8, 4, 2):
        try:
            w = torch._convert_weight_to_int4pack(packed, tiles)
            x = torch.randn(1, k, dtype=torch.bfloat16, device="cuda")
            torch._weight_int4pack_mm(x, w, group_size, sz)
            torch.cuda.synchronize()
            return w, sz
        except (RuntimeError, TypeError):
            continue
    return None


class QCase(Case):
    """The rotating inputs of one quantized problem (``pygemv.quantize`` of a random fp16/bf16
    weight, copies of it, x and y), the gemv_args_t of each set, and the float64 product of
    set 0's dequantized first rows: what the benchmark and the tuner both time (``call`` is
    :class:`pygemv.bench.Case`'s: the weights ride in each set's args).

    fmt is (bits, group_size, zero_point, dtype), as ``quantize`` takes them."""

    def __init__(self, torch, m, k, fmt, *, l2, ws, stream):
        bits, gs, zp, dtype = fmt
        self.m, self.k, self.dtype, self.torch = m, k, dtype, torch
        dt = {"float16": torch.float16, "bfloat16": torch.bfloat16}[dtype]
        g = torch.Generator(device="cuda").manual_seed(m * 7 + k)
        self.W = torch.randn(m, k, dtype=dt, device="cuda", generator=g)
        self.Q0 = quantize(self.W, bits, gs, zp)
        self.moved = self.Q0.nbytes + (k + m) * 2
        self.sets = timing.rotation_sets(self.moved, l2)
        self.Qs = [self.Q0] + [quantize(self.W, bits, gs, zp) for _ in range(self.sets - 1)]
        # Every set's x and y start 256-byte aligned (as Buffers'), so a config that runs set
        # 0 runs every set (q_mma reading x in place needs it 16-byte aligned).
        pad = lambda n: -(-n // 128) * 128  # noqa: E731
        self.X = torch.randn(self.sets, pad(k), dtype=dt, device="cuda", generator=g)[:, :k]
        self.Y = torch.empty(self.sets, pad(m), dtype=dt, device="cuda")[:, :m]
        torch.cuda.synchronize()
        self.args = [_lib.Args(_lib.OP_N, _lib.DTYPES[dtype], m, k, 1.0, 0.0, None, k, self.X[i].data_ptr(), 1,
                               self.Y[i].data_ptr(), 1, ws[0], ws[1], stream, _lib.FLAG_TRUSTED_POINTERS, 1, 0, 0, 0,
                               ctypes.addressof(self.Qs[i].descriptor)) for i in range(self.sets)]
        rows = min(m, 512)
        D = torch.as_tensor(self.Q0.dequantize(), device="cuda")[:rows].double()
        self.ref = D @ self.X[0].double()
        self.bound = error_bound(dtype, k, self.ref.abs(), D.abs() @ self.X[0].double().abs())

    def check(self, config=None) -> tuple[bool, str]:
        """Poisoned y, one call on set 0, its first rows against the float64 reference."""
        self.Y[0].fill_(float("nan"))
        self.torch.cuda.synchronize()
        self.call(config)(0, 0)
        _lib.check(_lib.load().gemv_stream_synchronize(0), "sync")
        rows = len(self.ref)
        bad = int((~((self.Y[0][:rows].double() - self.ref).abs() <= self.bound)).sum())
        return bad == 0, f"{bad} of {rows} checked rows outside the error bound"


def bench_format(torch, m, k, fmt, l2, stream, ws, repeats, sink=None):
    """One case: pygemv checked then timed, the read ceiling at its size (with ``sink``, a
    device float the read kernel may write), cuBLAS on the dense weights and tinygemm."""
    name, bits, gs, zp, dtype = fmt
    lib = _lib.load()
    case = QCase(torch, m, k, (bits, gs, zp, dtype), l2=l2, ws=ws, stream=stream)
    W, Q0, X, Y, sets, moved, args = case.W, case.Q0, case.X, case.Y, case.sets, case.moved, case.args
    call = case.call()
    # Checked first: poisoned y against the float64 product of the dequantized matrix.
    ok, why = case.check()
    if not ok:
        raise AssertionError(f"pygemv wrong on {name} {m}x{k}: {why}")
    cfg = _lib.Config()
    _lib.check(lib.gemv_select_config_ex(ctypes.byref(args[0]), ctypes.byref(cfg), None), "select_config")
    from ._registry import Config
    row = {"format": name, "bits": bits, "group_size": gs, "zero_point": zp, "dtype": dtype, "m": m, "k": k,
           "bytes": moved, "weight_bytes": Q0.nbytes, "sets": sets, "config": Config.from_c(cfg).as_dict()}
    row["pygemv"] = asdict(timing.time_graph(call, sets, stream, repeats=repeats))
    del case, call, args  # the weights' copies: free before the dense ones
    if sink is not None:
        # The read ceiling at this size: the streaming-read kernel over the case's bytes, one
        # 256-byte aligned chunk a set, rotated over as many sets as pygemv's.
        nb = moved // 16 * 16
        stride = -(-nb // 256) * 256
        R = torch.empty(sets * stride, dtype=torch.uint8, device="cuda")

        def read(i, s):
            _lib.check(lib.gemv_read_ceiling(R.data_ptr() + i * stride, nb, sink, s), "read_ceiling")

        t = asdict(timing.time_graph(read, sets, stream, repeats=repeats))
        row["ceiling_at_size"] = dict(t, bytes=nb, gbps=nb / (t["median_us"] * 1e3))
        del R

    # cuBLAS on the dense weights (copies for a cold L2).
    dsets = timing.rotation_sets(m * k * 2, l2)
    Wd = [W] + [W.clone() for _ in range(dsets - 1)]
    row["cublas_dense"] = asdict(timing.time_torch_graph(
        lambda i: torch.mv(Wd[i % dsets], X[i % sets], out=Y[i % sets]), max(dsets, 1), repeats=repeats))
    del Wd
    if zp == "float" and bits == 4 and gs and dtype == "bfloat16":
        Qf = Q0
        codes, S, Z = _codes_of(torch, Qf)
        tg = _tinygemm(torch, codes, S, Z, gs)
        if tg is not None:
            tw = [tg] + [(tg[0].clone(), tg[1].clone()) for _ in range(sets - 1)]
            Xb = X.unsqueeze(1)  # (sets, 1, k): each set a contiguous row
            row["tinygemm"] = asdict(timing.time_torch_graph(
                lambda i: torch._weight_int4pack_mm(Xb[i], tw[i][0], gs, tw[i][1]), sets, repeats=repeats))
    return row


def _codes_of(torch, Q):
    """(codes uint8 [M, K], scales, zeros as float32 [M, G]) of a quantized matrix, read back
    through dequantize: for float zeros q = round((w - z) / s) recovers each code exactly."""
    m, k = Q.shape
    D = torch.as_tensor(Q.dequantize(), device="cuda")
    # scales and zeros straight from the descriptor's buffers
    d = Q.descriptor
    G = d.lds
    dt = torch.bfloat16 if Q.dtype == "bfloat16" else torch.float16
    S = torch.empty(m, G, dtype=dt, device="cuda")
    Z = torch.empty(m, G, dtype=dt, device="cuda")
    lib = _lib.load()
    torch.cuda.synchronize()
    for dst, src in ((S, d.scales), (Z, d.zeros)):
        host = torch.empty(m * G, dtype=torch.int16)
        _lib.check(lib.gemv_memcpy_to_host(host.data_ptr(), src, m * G * 2), "download")
        dst.copy_(host.view(dt).view(m, G))
    gidx = torch.arange(k, device="cuda") // Q.group_size
    s = S.float()[:, gidx]
    z = Z.float()[:, gidx]
    codes = torch.where(s == 0, torch.zeros_like(D), torch.round((D - z) / s)).clamp(0, 15).to(torch.int32)
    return codes, S.to(torch.bfloat16), Z.to(torch.bfloat16)


def summarize(rows, ceiling_gbps):
    """Per-case TB/s and ratios to the peers (added to each row), and per format: the least
    TB/s from 32 MB of weights up, the median, the least ratios to cuBLAS and tinygemm, and
    the least fraction of the read ceiling at the case's size from 32 MB up."""
    out = {}
    for r in rows:
        t = r["pygemv"]["median_us"]
        r["tbps"] = r["bytes"] / (t * 1e6)
        if "ceiling_at_size" in r:
            r["of_ceiling_at_size"] = r["ceiling_at_size"]["median_us"] / t
        r["vs_cublas_dense"] = r["cublas_dense"]["median_us"] / t
        if "tinygemm" in r:
            r["vs_tinygemm"] = r["tinygemm"]["median_us"] / t
    for fmt in sorted({r["format"] for r in rows}):
        fr = [r for r in rows if r["format"] == fmt]
        big = [r for r in fr if r["weight_bytes"] >= 32 << 20]
        out[fmt] = {"cases": len(fr), "min_tbps_from_32MB": min((r["tbps"] for r in big), default=None),
                    "median_tbps": sorted(r["tbps"] for r in fr)[len(fr) // 2],
                    "min_vs_cublas_dense": min(r["vs_cublas_dense"] for r in fr),
                    "min_vs_tinygemm": min((r["vs_tinygemm"] for r in fr if "vs_tinygemm" in r), default=None),
                    "min_of_ceiling_at_size_from_32MB": min(
                        (r["of_ceiling_at_size"] for r in big if "of_ceiling_at_size" in r), default=None)}
    if ceiling_gbps:
        out["read_ceiling_tbps"] = ceiling_gbps / 1000
    return out


def random_weight_shapes(n: int, seed: int, *, max_codes: int, min_codes: int = 1 << 21,
                         k_multiple: int = 32) -> list[tuple[int, int]]:
    """n (M, K) weight shapes as users meet them: M x K codes log-uniform in [min_codes,
    max_codes], M log-uniform from 16 rows up to what leaves K at least 256, and K rounded to a
    multiple of ``k_multiple`` (32: whole groups of 32 for every format, as tensor-parallel
    shards such as 7392 or 10944 have; 128: whole groups for tinygemm in every group size).

    Parameters
    ----------
    n, seed : int
        How many shapes, and the seed (numpy's default generator).
    max_codes, min_codes : int
        The range of M * K (before K is rounded).
    k_multiple : int
        K is a positive multiple of it.
    """
    if k_multiple < 1:
        raise ValueError(f"k_multiple = {k_multiple}: must be at least 1")
    if not 0 < min_codes <= max_codes:
        raise ValueError(f"min_codes = {min_codes}, max_codes = {max_codes}: need 0 < min_codes <= max_codes")
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(n):
        codes = 2 ** rng.uniform(math.log2(min_codes), math.log2(max_codes))
        m = max(16, int(round(2 ** rng.uniform(4, max(4.0, math.log2(codes / 256))))))
        k = max(k_multiple, int(round(codes / m / k_multiple)) * k_multiple)
        out.append((m, k))
    return out


def run(argv_args, *, l2, stream, ws, ceiling, info, props, sink=None) -> int:
    """The --quantized mode of pygemv-bench (arguments already parsed)."""
    try:
        import torch
    except ImportError:
        print("pygemv-bench --quantized needs torch (data, cuBLAS dense and tinygemm peers)", file=sys.stderr)
        return 2
    from .bench import parse_shapes
    if argv_args.random:
        shapes = random_weight_shapes(argv_args.random, argv_args.seed, max_codes=int(argv_args.max_mb * (1 << 21)),
                                      k_multiple=argv_args.k_multiple)
        print(f"# {len(shapes)} random shapes (seed {argv_args.seed}, K a multiple of {argv_args.k_multiple}): "
              + ",".join(f"{m}x{k}" for m, k in shapes))
    else:
        shapes = parse_shapes(argv_args.shapes) or SHAPES
    formats = FORMATS if not argv_args.formats else [
        f for f in FORMATS + MORE_FORMATS if f[0] in argv_args.formats.split(",")]
    rows, t0 = [], time.time()
    jobs = [(s, f) for s in shapes for f in formats]
    for n, ((m, k), fmt) in enumerate(jobs, 1):
        rows.append(bench_format(torch, m, k, fmt, l2, stream, ws, argv_args.repeats, sink))
        torch.cuda.empty_cache()
        print(f"\r[{n}/{len(jobs)}] {fmt[0]} {m}x{k} {time.time() - t0:.0f}s   ", end="", file=sys.stderr, flush=True)
    print(file=sys.stderr)
    summ = summarize(rows, ceiling["gbps"])
    # ceil: the read ceiling at the case's size (TB/s), and pygemv's fraction of it.
    print(f"{'format':16} {'M':>7} {'K':>6} {'MB':>7} {'us':>8} {'TB/s':>6} {'ceil':>5} {'of':>4} {'dense':>6} "
          f"{'tiny':>6}  config")
    for r in rows:
        c = r["config"]
        ceil = (f"{r['ceiling_at_size']['gbps'] / 1000:5.2f} {100 * r['of_ceiling_at_size']:3.0f}%"
                if "ceiling_at_size" in r else f"{'-':>5} {'-':>4}")
        print(f"{r['format']:16} {r['m']:7} {r['k']:6} {r['weight_bytes'] / 2**20:7.1f} {r['pygemv']['median_us']:8.2f} "
              f"{r['tbps']:6.2f} {ceil} {r['vs_cublas_dense']:5.2f}x "
              f"{(str(round(r['vs_tinygemm'], 2)) + 'x') if 'vs_tinygemm' in r else '-':>6}  "
              f"{c['variant']} p={c['threads_per_row']} r={c['rows_per_block']} u={c['unroll']} s={c['split_k']}")
    print("\nsummary: " + json.dumps(summ, default=float))
    if argv_args.json:
        with open(argv_args.json, "w") as f:
            json.dump({"device": props, "run": info, "argv": sys.argv, "torch": torch.__version__,
                       "ceiling": ceiling, "summary": summ, "cases": rows}, f, indent=1)
    if argv_args.plot:
        plot(rows, ceiling, argv_args.plot, f"{props['name']}: quantized GEMV, pygemv {info['pygemv']}")
    return 0


def plot(rows, ceiling, path, title):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(figsize=(8, 5))
    color = {}
    for fmt in sorted({r["format"] for r in rows}):
        fr = sorted((r for r in rows if r["format"] == fmt), key=lambda r: r["weight_bytes"])
        line, = ax.plot([r["weight_bytes"] / 2**20 for r in fr], [r["tbps"] for r in fr], "o-", label=f"pygemv {fmt}")
        color[fmt] = line.get_color()
    for fmt in sorted({r["format"] for r in rows if "tinygemm" in r}):  # its formats: bf16, float zeros
        tg = sorted((r for r in rows if "tinygemm" in r and r["format"] == fmt), key=lambda r: r["weight_bytes"])
        ax.plot([r["weight_bytes"] / 2**20 for r in tg], [r["bytes"] / (r["tinygemm"]["median_us"] * 1e6) for r in tg],
                "s--", color=color[fmt], mfc="none", label=f"tinygemm on {fmt}")
    at = sorted((r for r in rows if "ceiling_at_size" in r), key=lambda r: r["weight_bytes"])
    if at:
        ax.plot([r["weight_bytes"] / 2**20 for r in at], [r["ceiling_at_size"]["gbps"] / 1000 for r in at],
                color="gray", ls="--", lw=1, label="read ceiling at the case's size")
    ax.axhline(ceiling["gbps"] / 1000, color="gray", ls=":", label="read ceiling")
    ax.set_xscale("log")
    ax.set_xlabel("weight bytes read (codes, scales, zeros), MiB")
    ax.set_ylabel("TB/s")
    ax.set_title(title, fontsize=9)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
