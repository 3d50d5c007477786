"""``pygemv-tune``: tune this GPU and write its dispatch table.

    pygemv-tune                  # default grids (op N, op T, strided batches), fp32/fp16/bf16,
                                 # into the user's table folder
    pygemv-tune --quick          # coarser grids (op N and op T, no batches) and fewer trials
    pygemv-tune --shapes 4096x4096,1x65536 --dtypes float16 --trials 60
    pygemv-tune --ops T --shapes 1024x1024 --batches 1,64
    pygemv-tune --quantized      # also int4/int8 weights (the formats of pygemv-bench --quantized)

Every study lives in an SQLite file (``--storage``): run the same command again after an
interruption and it resumes where it stopped. The table is written from every finished
study in that storage for this GPU and libgemv, so tuning more shapes later adds to it.
libgemv then finds the table by itself (see ``gemv.h``: tuned dispatch tables).
"""
from __future__ import annotations

import argparse
import ctypes
import fcntl
import json
import math
import sys
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path

import pygemv
from pygemv import _lib, bench
from pygemv._table import Entry, Fingerprint, user_table_dir, user_table_path, write_table

from pygemv.bench_quantized import FORMATS as QUANTIZED_BENCH_FORMATS

from . import grid
from .space import build_space
from .tuner import ShapeResult, tune_shape

DTYPES = ("float32", "float16", "bfloat16")


def generic_seeds(vector_loads: int, op: str = "N", weights: tuple | None = None,
                  aligned8: bool = False) -> list[pygemv.Config]:
    """Configs that are good across many shapes (the exhaustive searches in
    benchmarks/results/*-oracle* and, for op T, *-sweep-op-t-all), with the given loads
    (``gemv_loads_t``; True/False read as aligned/scalar): a study's budget is small, so it
    holds no seed the shape cannot use well."""
    C = pygemv.Config
    if weights is not None:  # the quantized heuristic's picks (benchmarks/results/*-s6-sweep-*)
        return [C("q_rows", 8, 64, True, 4, True, 1), C("q_rows", 8, 64, True, 4, True, 4),
                C("q_rows", 16, 32, True, 4, True, 1), C("q_rows", 8, 32, True, 2, True, 8),
                C("q_mma", 32, 4, True, 1, True, 8), C("q_mma", 32, 4, True, 1, True, 16),
                C("q_rows", 4, 32, True, 1, True, 16), C("q_rows", 8, 32, True, 1, True, 16),  # small (-s16-small-quantized)
                C("q_mma", 256, 1, True, 1, False, 1), C("q_mma", 128, 1, True, 1, False, 1),  # x in place (-s19-qmma-inplace)
                C("q_mma", 256, 1, True, 1, False, 2),
                C("q_mma_x_held", 128, 8, True, 2, False, 8), C("q_mma_x_held", 128, 32, True, 2, False, 8),  # x held
                C("q_mma_x_held", 128, 16, True, 2, False, 16), C("q_mma_x_held", 256, 16, True, 2, False, 1),  # (-s20-x-held-sweep)
                C("q_mma_x_held", 128, 4, True, 1, False, 8), C("q_mma_x_held", 256, 2, True, 1, False, 4),  # smaller
                C("q_mma_x_held", 256, 2, True, 2, False, 1),
                C("q_block_rows", 64, 2, True, 1, False, 1), C("q_block_rows", 128, 2, True, 1, False, 1),  # int8
                C("q_block_rows", 128, 2, True, 2, False, 1), C("q_block_rows", 256, 2, True, 1, False, 1),  # (-s27-sweep)
                C("q_mma_rounds", 256, 1, True, 2, False, 1), C("q_mma_rounds", 128, 1, True, 2, False, 1)]  # (-s28-qdmma-*)
    if op == "T":
        v = int(vector_loads)
        return [C("t_columns", 4, 64, v, 4), C("t_columns", 16, 16, v, 4), C("t_splitm_twopass", 16, 16, v, 4, False, 16),
                C("t_splitm_twopass", 8, 32, v, 4, False, 8), C("t_splitm_twopass", 16, 16, v, 2, False, 32),
                C("t_splitm_twopass", 4, 64, v, 4, False, 64)]
    out = [C("thread_per_row", 1, 128, True, 1), C("thread_per_row", 1, 256, True, 2),
           C("rows_per_warp", 2, 128, True, 2), C("rows_per_warp", 8, 16, True, 2), C("warp_per_row", 32, 4, True, 2),
           C("block_per_row", 64, 8, True, 1), C("block_per_row", 128, 4, True, 1), C("block_per_row", 128, 1, True, 2),
           C("block_per_row", 256, 1, True, 2), C("block_per_row", 512, 1, True, 2)]
    for split in (4, 16, 64):
        out.append(C("splitk_twopass", 256, 1, True, 4, False, split))
    if int(vector_loads) == pygemv.LOADS_ALIGNED:
        return out
    # Rows that start anywhere (realigned, or scalar): the seeds but the widest row blocks,
    # and beside realigned ones the phased configs that won benchmarks/sweep_phased.py.
    seeds = [C(c.variant, c.threads_per_row, c.rows_per_block, int(vector_loads), c.unroll, c.x_in_smem, c.split_k)
             for c in out if c.threads_per_row < 256]
    if int(vector_loads) == pygemv.LOADS_REALIGNED:
        P = pygemv.LOADS_PHASED
        X = pygemv.LOADS_PHASED_X_COPIES  # x's phase copies: benchmarks/experiments/phase_copies.sh
        seeds += [C("block_per_row", 128, 2, P, 1, True), C("block_per_row", 128, 2, P, 4, True),
                  C("warp_per_row", 32, 32, P, 1, True), C("rows_per_warp", 8, 128, P, 1, True),
                  C("block_per_row", 128, 1, P, 4, False), C("block_per_row", 128, 1, X, 1),
                  C("block_per_row", 256, 1, X, 4)]
    if aligned8:  # rows 8-byte aligned: the 8-byte configs that won benchmarks/experiments/aligned8.sh
        E = pygemv.LOADS_ALIGNED8
        seeds += [C("rows_per_warp", 4, 32, E, 2), C("rows_per_warp", 8, 32, E, 2), C("rows_per_warp", 16, 16, E, 2),
                  C("block_per_row", 256, 1, E, 2), C("block_per_row", 512, 1, E, 2)]
    return seeds


def neighbour_seeds(done: list[ShapeResult], dtype: str, m: int, k: int, n: int = 2, op: str = "N",
                    batch: int = 1, weights: tuple | None = None) -> list[pygemv.Config]:
    """The winners of the n nearest problems of the same op, dtype, kind (single or
    batched) and weights already tuned (log2 distance in M, K and batch)."""
    near = sorted((r for r in done if (r.dtype, r.op, r.batch > 1, r.weights) == (dtype, op, batch > 1, weights)),
                  key=lambda r: (math.log2(r.m / m)) ** 2 + (math.log2(r.k / k)) ** 2 +
                  (math.log2(r.batch / batch)) ** 2)
    return [r.config for r in near[:n]]


def plan_jobs(dtypes, *, ops=("N", "T"), shapes=None, batches=(1,), quick=False, batched=True,
              quantized=False, single=True, formats=None) -> list[tuple]:
    """The problems to tune, as (op, batch, dtype, M, K, weights): the given shapes at each
    batch count, or the grids (with ``single``, op N's default or quick grid and op T's; with
    ``batched`` and not ``quick``, the strided-batch grid of each op); with ``quantized``,
    also the quantized grid (weights (bits, group_size, zero_point); None for a dense A), of
    the ``formats`` named (pygemv-bench --quantized's names; None: all), or its formats at
    the given ``shapes`` (whose dense problems ``single`` = False then leaves out)."""
    jobs = []
    for op in ops:
        for d in dtypes:
            if shapes:
                jobs += [(op, b, d, m, k, None) for b in batches for m, k in shapes] if single or not quantized else []
                continue
            grid_single = (grid.quick_grid(d) if quick else grid.default_grid(d)) if op == "N" else grid.op_t_grid(d, quick)
            jobs += [(op, 1, d, m, k, None) for m, k in (grid_single if single else [])]
            if batched and not quick:
                jobs += [(op, b, d, m, k, None) for b, m, k in grid.batch_grid(d)]
    if quantized:
        named = {name: (bits, gs, zp, d) for name, bits, gs, zp, d in QUANTIZED_BENCH_FORMATS}
        wanted = None if formats is None else {named[f] for f in formats}
        qgrid = grid.quantized_grid()
        if shapes:  # the grid's formats at the given shapes
            qgrid = list(dict.fromkeys((w, d, m, k) for w, d, _, _ in qgrid for m, k in shapes))
        jobs += [("N", 1, d, m, k, w) for w, d, m, k in qgrid if d in dtypes and (wanted is None or (*w, d) in wanted)]
    return jobs


def study_name(prefix: str, op: str, batch: int, dtype: str, m: int, k: int, weights: tuple | None = None) -> str:
    """An op N single product keeps the name it had before op and batch were tuned (so a
    storage from then resumes)."""
    if weights is not None:
        bits, gs, zp = weights
        return f"{prefix}W{bits}G{gs or 0}-{zp}/{dtype}/{m}x{k}"
    if op == "N" and batch == 1:
        return f"{prefix}{dtype}/{m}x{k}"
    return f"{prefix}{op}/{dtype}/{batch}x{m}x{k}"


def entry_of(r: ShapeResult) -> Entry:
    """The table entry of a tuned problem (quantized weights: their bits and group size)."""
    bits, gs = (r.weights[0], r.weights[1] or 0) if r.weights else (0, 0)
    return Entry(r.dtype, r.m, r.k, r.config, r.us, r.heuristic_us, r.op, r.batch, bits, gs)


def study_prefix(fp: Fingerprint) -> str:
    return f"{fp.slug()}/libgemv-{fp.libgemv}/cuda-{fp.cuda_runtime}/"


def stored_results(storage, prefix: str) -> list[ShapeResult]:
    """Every finished study of this GPU and library in the storage."""
    out = []
    for s in storage.get_all_studies():
        if s.study_name.startswith(prefix) and "result" in s.user_attrs:
            out.append(ShapeResult.from_dict(s.user_attrs["result"]))
    return out


def lock_gpu(device: int):
    """One tuner per physical GPU: an exclusive lock named by its PCI address."""
    p = _lib.DeviceProps()
    _lib.check(_lib.load().gemv_device_props(device, ctypes.byref(p)), "device_props")
    path = Path(tempfile.gettempdir()) / f"pygemv-tune-{p.pci_domain:04x}-{p.pci_bus:02x}-{p.pci_device:02x}.lock"
    f = open(path, "w")
    try:
        fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        raise SystemExit(f"pygemv-tune: another tuner is running on GPU {device} ({path}); one tuner per GPU")
    return f


def summarize(results: list[ShapeResult], fp: Fingerprint, seconds: float, table: Path, n_entries: int) -> str:
    lines = [f"pygemv-tune: {fp.gpu} ({fp.sm_count} SMs, sm_{fp.cc_major}{fp.cc_minor}), libgemv {fp.libgemv}",
             f"{'op':<10} {'dtype':<9} {'shapes':>6} {'tuned vs heuristic':>19} {'best':>22} {'>3% faster':>11} "
             f"{'wrong':>6}"]
    kinds = [(op, batched, None) for op, batched in (("N", False), ("T", False), ("N", True), ("T", True))]
    kinds += sorted({(r.op, False, r.weights) for r in results if r.weights}, key=str)
    for op, batched, weights in kinds:
        for dtype in DTYPES:
            rs = [r for r in results if (r.op, r.batch > 1, r.dtype, r.weights) == (op, batched, dtype, weights)]
            if not rs:
                continue
            label = f"W{weights[0]}G{weights[1] or 0}" if weights else op + (" batched" if batched else "")
            gains = [r.heuristic_us / r.us for r in rs]
            geo = math.exp(sum(map(math.log, gains)) / len(gains))
            i = max(range(len(rs)), key=lambda j: gains[j])
            best = f"{gains[i]:.2f}x {rs[i].batch}x{rs[i].m}x{rs[i].k}" if batched else f"{gains[i]:.2f}x {rs[i].m}x{rs[i].k}"
            lines.append(f"{label:<10} {dtype:<9} {len(rs):>6} {geo:>18.3f}x {best:>22} "
                         f"{sum(g > 1.03 for g in gains):>11} {sum(len(r.wrong) for r in rs):>6}")
    lines.append(f"{len(results)} studies in {seconds:.0f} s; table {table} ({n_entries} entries)")
    return "\n".join(lines)


def main(argv=None) -> int:
    try:
        return tune_device(argv)
    except pygemv.GemvError as e:
        print(f"pygemv-tune: {e}", file=sys.stderr)
        return 2


def tune_device(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="pygemv-tune", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--version", action="version", version=pygemv.version_string("pygemv-tune"))
    ap.add_argument("--quick", action="store_true", help="coarse grids (M, K step 16; no batches) and 8 trials a shape")
    ap.add_argument("--shapes", default="", help="MxK,... instead of the grids (with --quantized, of its grid too; "
                                                 "add --no-single for the quantized shapes alone)")
    ap.add_argument("--ops", default="N,T", help="N (y = A x), T (y = A^T x), or both (default)")
    ap.add_argument("--batches", default="1", help="with --shapes: strided-batch counts to tune each shape at "
                                                    "(default 1: single products)")
    ap.add_argument("--no-batched", action="store_true", help="leave out the strided-batch grid")
    ap.add_argument("--no-single", action="store_true", help="leave out the single-product grids (a tune in "
                                                             "parts: batches or quantized weights alone)")
    ap.add_argument("--quantized", action="store_true", help="also tune int4/int8 weights (the formats of "
                                                             "pygemv-bench --quantized; needs torch)")
    ap.add_argument("--formats", default="", help="with --quantized: only these formats of pygemv-bench "
                                                  "--quantized (e.g. int4-g128,int8-row)")
    ap.add_argument("--dtypes", default=",".join(DTYPES))
    ap.add_argument("--trials", type=int, default=None, help="trials per shape (default 16; --quick: 8)")
    ap.add_argument("--timeout", type=float, default=None, help="seconds for the whole tune")
    ap.add_argument("--storage", default="", help="Optuna storage URL (default: an SQLite file per GPU "
                                                  "beside the user's tables)")
    ap.add_argument("--out", default="", help="table file (default: the user's table folder)")
    ap.add_argument("--device", type=int, default=None, help="GPU index (default: the current one)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--json", default="", help="write every shape's result here")
    ap.add_argument("--no-progress", action="store_true")
    args = ap.parse_args(argv)

    import optuna
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    if args.device is not None:
        pygemv.set_device(args.device)
    device = pygemv.current_device()
    lock = lock_gpu(device)  # noqa: F841 (held until exit)
    fp = Fingerprint.of_device(device)
    trials = args.trials or (8 if args.quick else 16)
    dtypes = [d for d in args.dtypes.split(",") if d]
    for d in dtypes:
        if d not in DTYPES:
            ap.error(f"--dtypes: {d!r} is not one of {', '.join(DTYPES)}")
    ops = [o for o in args.ops.split(",") if o]
    for o in ops:
        if o not in ("N", "T"):
            ap.error(f"--ops: {o!r} is not N or T")
    try:
        batches = [int(b) for b in args.batches.split(",") if b]
    except ValueError:
        ap.error(f"--batches: {args.batches!r} is not a list of integers")
    if not batches or min(batches) < 1:
        ap.error("--batches: give batch counts of 1 or more")
    formats = [f for f in args.formats.split(",") if f] or None
    known = [f[0] for f in QUANTIZED_BENCH_FORMATS]
    for f in formats or []:
        if f not in known:
            ap.error(f"--formats: {f!r} is not one of {', '.join(known)}")
    jobs = plan_jobs(dtypes, ops=ops, shapes=bench.parse_shapes(args.shapes) if args.shapes else None,
                     batches=batches, quick=args.quick, batched=not args.no_batched, quantized=args.quantized,
                     single=not args.no_single, formats=formats)

    storage_url = args.storage or f"sqlite:///{user_table_dir().parent / ('tune-' + fp.slug() + '.db')}"
    if storage_url.startswith("sqlite:///"):
        Path(storage_url[len("sqlite:///"):]).parent.mkdir(parents=True, exist_ok=True)
    storage = optuna.storages.RDBStorage(storage_url)
    prefix = study_prefix(fp)
    out = Path(args.out) if args.out else user_table_path(fp)

    from .measure import GpuContext, GpuMeasure
    ctx = GpuContext.create()
    try:
        from tqdm import tqdm
    except ImportError:  # tqdm comes with optuna; without it, no bar
        tqdm = None
    bar = tqdm(total=len(jobs), unit="shape", disable=args.no_progress, file=sys.stderr) if tqdm else None
    t0 = time.time()
    results: list[ShapeResult] = []
    skipped = 0
    for n, (op, batch, dtype, m, k, weights) in enumerate(jobs):
        left = None if args.timeout is None else args.timeout - (time.time() - t0)
        if left is not None and left <= 0:
            skipped = len(jobs) - n
            break
        what = f"{op} {dtype} {m}x{k}" + (f" batch {batch}" if batch > 1 else "") + (f" weights {weights}" if weights else "")
        if bar:
            bar.set_description(what)
        space = build_space(m, k, dtype, op=op, batch=batch, weights=weights)
        measure = GpuMeasure(m, k, dtype, ctx, op=op, batch=batch, weights=weights)
        try:
            # What dispatch runs today (the shipped table's entry, or the heuristic) comes first:
            # a tune of few trials then never ends on a config slower than it (a quick tune
            # picked p=128 for fp16 4096 x 4096, 13.0 us, over the shipped entry's 11.7).
            seeds = ([measure.dispatch()] + neighbour_seeds(results, dtype, m, k, op=op, batch=batch, weights=weights) +
                     generic_seeds(space.vector_loads[0], op, weights, pygemv.LOADS_ALIGNED8 in space.vector_loads))
            r = tune_shape(measure, space, storage=storage,
                           study_name=study_name(prefix, op, batch, dtype, m, k, weights),
                           trials=trials, timeout=None if left is None else left / (len(jobs) - n), seeds=seeds,
                           seed=args.seed)
        finally:
            measure.close()
        results.append(r)
        for w in r.wrong:
            print(f"pygemv-tune: WRONG result from {w['config']} on {what}: {w['why']}", file=sys.stderr)
        if bar:
            bar.update()
    if bar:
        bar.close()

    # One entry a table key: quantized weights by bits and group size (a later zero mode wins).
    everything = {(e.op, e.batch, e.dtype, e.m, e.k, e.bits, e.group): e
                  for e in map(entry_of, stored_results(storage, prefix))}
    entries = list(everything.values())
    write_table(out, fp, entries, info={
        "created": datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "tool": f"pygemv-tune {pygemv.__version__} ({'quick' if args.quick else 'custom' if args.shapes else 'default'}"
                f" grid, {trials} trials a shape)"})
    pygemv.load_table(out)
    seconds = time.time() - t0
    print(summarize(results, fp, seconds, out, len(entries)))
    if skipped:
        print(f"--timeout reached: {skipped} shapes not tuned (run again to resume)")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"fingerprint": fp.__dict__, "seconds": seconds, "trials": trials,
                       "results": [r.as_dict() for r in results]}, f, indent=1)
    return 1 if any(r.wrong for r in results) else 0


if __name__ == "__main__":
    sys.exit(main())
