"""The tuner's search space for one problem (op, batch, M, K, dtype), built from the registry.

Optuna parameters are conditional: ``threads_per_row[<variant>]`` exists only for its
variant, ``rows_per_block[<variant>,p=<p>]`` only for that variant and p (so each
parameter keeps one fixed set of choices, as Optuna requires), ``split_k[<variant>]``
only for split-K variants. Choices that cannot help this shape are left out (more
threads a row than the row has loads, more rows a block than M, split slices of under
8 elements); the rest of legality is the registry's ``can_implement``, asked before
anything is launched.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import pygemv
from pygemv import _lib
from pygemv._registry import _pow2_range
from pygemv._registry import validate as _valid

UNROLLS = (1, 2, 4)


def _pow2_ceil(v: int) -> int:
    p = 1
    while p < v:
        p *= 2
    return p


@dataclass
class Space:
    """The choices for one shape; ``suggest`` draws a Config from an Optuna trial."""

    m: int
    k: int
    dtype: str
    variants: list[str]
    vector_loads: list[int]  # gemv_loads_t
    threads_per_row: dict[str, list[int]] = field(default_factory=dict)
    rows_per_block: dict[tuple[str, int], list[int]] = field(default_factory=dict)
    split_k: dict[str, list[int]] = field(default_factory=dict)
    # Variants that take 16-byte loads and a staged x only (the row stream): those two are
    # fixed for them, not drawn.
    packs_only: set[str] = field(default_factory=set)
    # Variants that never stage x (the op T column kernels): x_in_smem is 0, not drawn.
    no_staging: set[str] = field(default_factory=set)
    # Variants with loads of their own: one (the op T stream: aligned packs) is fixed, not
    # drawn; several (op T's split-M, which alone takes phased rows) are drawn as
    # ``vector_loads[<variant>]``.
    variant_loads: dict[str, list[int]] = field(default_factory=dict)
    op: str = "N"
    batch: int = 1
    weights: tuple | None = None  # quantized: (bits, group_size, zero_point)

    def suggest(self, trial) -> pygemv.Config:
        v = trial.suggest_categorical("variant", self.variants)
        p = trial.suggest_categorical(f"threads_per_row[{v}]", self.threads_per_row[v])
        r = trial.suggest_categorical(f"rows_per_block[{v},p={p}]", self.rows_per_block[(v, p)])
        if v in self.packs_only:
            vec, smem = self.vector_loads[0], True
            unroll = trial.suggest_categorical("unroll", UNROLLS)
        else:
            own = self.variant_loads.get(v)
            vec = (own[0] if own and len(own) == 1 else
                   trial.suggest_categorical(f"vector_loads[{v}]", own) if own else
                   trial.suggest_categorical("vector_loads", self.vector_loads))
            unroll = trial.suggest_categorical("unroll", UNROLLS)
            smem = False if v in self.no_staging else trial.suggest_categorical("x_in_smem", [False, True])
        split = trial.suggest_categorical(f"split_k[{v}]", self.split_k[v]) if v in self.split_k else 1
        return pygemv.Config(v, p, r, vec, unroll, smem, split)

    def params(self, c: pygemv.Config) -> dict | None:
        """The trial parameters that make ``c`` (for ``enqueue_trial``); None when ``c``
        lies outside this space."""
        v = c.variant if isinstance(c.variant, str) else pygemv.variant(c.variant).name
        if (v not in self.variants or c.threads_per_row not in self.threads_per_row[v]
                or c.rows_per_block not in self.rows_per_block.get((v, c.threads_per_row), ())
                or c.vector_loads not in self.variant_loads.get(v, self.vector_loads)
                or (v in self.split_k and c.split_k not in self.split_k[v])):
            return None
        out = {"variant": v, f"threads_per_row[{v}]": c.threads_per_row,
               f"rows_per_block[{v},p={c.threads_per_row}]": c.rows_per_block, "unroll": c.unroll}
        if v in self.packs_only:
            if (c.vector_loads, c.x_in_smem) != (self.vector_loads[0], True):
                return None
        elif v in self.no_staging:
            if c.x_in_smem:
                return None
            own = self.variant_loads.get(v)
            if not own:
                out["vector_loads"] = c.vector_loads
            elif len(own) > 1:
                out[f"vector_loads[{v}]"] = c.vector_loads
        else:
            out.update({"vector_loads": c.vector_loads, "x_in_smem": c.x_in_smem})
        if v in self.split_k:
            out[f"split_k[{v}]"] = c.split_k
        return out

    def add(self, name: str, ps: list[int], rows: int, tile_rows: int = 0) -> bool:
        """Add a variant with these threads per row, each with the blocks of 32 to 1024
        threads of at most ``rows`` rows (or the fewest rows such a block takes); False (and
        its split choices dropped) when none is left. ``tile_rows``: rows_per_block counts
        tiles of that many rows a block of p threads walks (q_mma_x_held)."""
        var = pygemv.variant(name)
        rows_of = {}
        for p in ps:
            if tile_rows:
                legal = list(_pow2_range(*var.rows_per_block))
                useful = [r for r in legal if r * tile_rows <= _pow2_ceil(rows)] or legal[:1]
            else:
                legal = [r for r in _pow2_range(*var.rows_per_block) if 32 <= p * r <= 1024]
                useful = [r for r in legal if r <= _pow2_ceil(rows)] or legal[:1]
            if useful:
                rows_of[p] = useful
        if not rows_of:
            self.split_k.pop(name, None)
            return False
        self.variants.append(name)
        self.threads_per_row[name] = sorted(rows_of)
        for p, rs in rows_of.items():
            self.rows_per_block[(name, p)] = rs
        return True

    def configs(self):
        """Every config of the space (for tests and the exhaustive oracle)."""
        for v in self.variants:
            for p in self.threads_per_row[v]:
                for r in self.rows_per_block[(v, p)]:
                    for split in self.split_k.get(v, [1]):
                        fixed = v in self.packs_only
                        smems = (True,) if fixed else (False,) if v in self.no_staging else (False, True)
                        vecs = self.variant_loads.get(v, self.vector_loads[:1] if fixed else self.vector_loads)
                        for vec in vecs:
                            for u in UNROLLS:
                                for smem in smems:
                                    yield pygemv.Config(v, p, r, vec, u, smem, split)


def build_space(m: int, k: int, dtype: str, *, op: str = "N", batch: int = 1, weights: tuple | None = None,
                deterministic_only: bool = True, lda: int | None = None, a_offset: int = 0) -> Space:
    """The search space of one problem (dense batch strides; dense rows unless ``lda`` says).

    Parameters
    ----------
    m, k : int
        The shape (>= 1).
    dtype : str
        float32, float16 or bfloat16.
    op : str
        ``"N"`` or ``"T"``.
    batch : int
        Products of a strided batch (1: a single product); only operations that serve
        batches are searched then.
    weights : (bits, group_size, zero_point), optional
        Quantized weights (op N, a single product): the quantized operations are searched.
    deterministic_only : bool
        Leave out variants whose results may differ run to run (split-K with atomics), as
        the dispatcher does.
    lda : int, optional
        The rows' pitch in elements (default ``k``): the load modes searched follow the rows'
        alignment, so padded rows that all start 16-byte aligned search aligned packs.
    a_offset : int
        A's first element this many elements past a 16-byte boundary (0: aligned).

    Raises
    ------
    ValueError
        If ``lda`` is under ``k`` or ``a_offset`` is negative.
    """
    if lda is not None and lda < k:
        raise ValueError(f"lda ({lda}) must be at least k ({k})")
    if a_offset < 0:
        raise ValueError(f"a_offset must be >= 0, got {a_offset}")
    es = _lib.DTYPE_SIZES[dtype]
    pitch, start = (k if lda is None else lda) * es, a_offset * es  # bytes
    # 16-byte loads: aligned when every row (of every product) starts 16-byte aligned, else
    # realigned in the kernel or phased (op N; x staged in the rows' phase, or read through
    # L1 and shifted, by x_in_smem drawn alongside: batches take the second alone, can_implement
    # refuses the first; x's phase copies in the workspace, single products), and 8-byte packs
    # where rows start 8-byte aligned; scalar loads stay in the space for tiny rows.
    vec_ok = start % 16 == 0 and ((m == 1 and batch == 1) or pitch % 16 == 0)
    loads = -(-k * es // 16)
    if weights is not None:
        return _quantized_space(m, k, dtype, weights)
    if op == "T":
        return _columns_space(m, k, dtype, batch, vec_ok, deterministic_only)
    vector = ([pygemv.LOADS_ALIGNED] if vec_ok else [pygemv.LOADS_REALIGNED, pygemv.LOADS_PHASED] if batch > 1 else
              [pygemv.LOADS_REALIGNED, pygemv.LOADS_PHASED, pygemv.LOADS_PHASED_X_COPIES])
    if not vec_ok and start % 8 == 0 and pitch % 8 == 0:  # rows 8-byte aligned: 8-byte packs too
        vector.append(pygemv.LOADS_ALIGNED8)
    space = Space(m, k, dtype, [], vector + [pygemv.LOADS_SCALAR], batch=batch)
    for var in pygemv.variants("N"):
        if (deterministic_only and not var.deterministic) or (batch > 1 and not var.batched):
            continue
        if dtype not in var.dtypes:
            continue
        if var.name == "row_mma":
            # Tensor-core tiles of 16 rows: rows of whole aligned packs, up to 1 KB (NOTES 77: 0.31-1.07x
            # at 768 elements), blocks of 1 to 8 tiles; aligned packs (fixed), x read in place.
            if not vec_ok or (k * es) % 16 or k * es > 1024:
                continue
            if space.add(var.name, [32], m * batch, tile_rows=16):
                space.variant_loads[var.name] = [pygemv.LOADS_ALIGNED]
                space.no_staging.add(var.name)
            continue
        split = var.split_k[1] > 1
        packs_only = not _valid(pygemv.Config(var.name, var.threads_per_row[0], max(1, 32 // var.threads_per_row[0]),
                                              pygemv.LOADS_SCALAR, 1, False, var.split_k[0]))
        if packs_only and not var.stages_x:
            # Row tiles (16-byte packs, x never staged): few rows of 8 KB and more.
            if m * batch > 1024 or loads < 512:
                continue
        elif packs_only:
            # The row stream: rows up to 4 KB (a step holds whole rows), blocks of 64-512.
            if k * es > 4096 or k * es < 16:
                continue
            ps = [p for p in _pow2_range(*var.threads_per_row) if p <= _pow2_ceil(loads)]
            space.variants.append(var.name)
            space.packs_only.add(var.name)
            space.threads_per_row[var.name] = ps
            for p in ps:
                space.rows_per_block[(var.name, p)] = [t // p for t in (64, 128, 256, 512) if t >= p]
            continue
        if split:
            # An operation whose range starts at 1 (row tiles) runs unsplit too.
            choices = [s for s in _pow2_range(var.split_k[0], var.split_k[1]) if s * 8 <= k or s == 1]
            if not choices:
                continue
            space.split_k[var.name] = choices
        lo, hi = var.threads_per_row
        # p beyond the loads of a row (of a slice for split-K) leaves threads idle.
        span = loads if not split else max(1, loads // 2)
        ps = [p for p in _pow2_range(lo, hi) if p <= max(lo, _pow2_ceil(span))]
        if space.add(var.name, ps, m * batch) and not var.stages_x:
            space.no_staging.add(var.name)  # x_in_smem is 0, not drawn
    return space


def _columns_space(m: int, k: int, dtype: str, batch: int, vec_ok: bool, deterministic_only: bool) -> Space:
    """op T: c threads across a tile of columns (2 to 64, at most the row's packs: the op T
    sweep's best configs all had 4 to 32, benchmarks/results/h100-2026-11-23-sweep-op-t-all),
    row lanes up to M (or the fewest a block of 32 takes), blocks of 32 to 1024 threads, and
    for split-M slices of 8 rows or more. The column kernels read x as a broadcast:
    x_in_smem is 0. Rows that do not start aligned: realigned packs, phased rows or one
    element a load. The stream of packs (aligned packs, fixed) on rows of half a pack to 2 KB
    (its pack period must fit a block; can_implement has the last word): blocks of 64 to 1024
    threads, slices of at least 64 packs a block."""
    es = _lib.DTYPE_SIZES[dtype]
    units = -(-k * es // 16) if vec_ok else k  # packs (or, with element loads in the space, elements) across a row
    space = Space(m, k, dtype, [], [pygemv.LOADS_ALIGNED if vec_ok else pygemv.LOADS_REALIGNED, pygemv.LOADS_SCALAR],
                  op="T", batch=batch)
    for var in pygemv.variants("T"):
        if (deterministic_only and not var.deterministic) or (batch > 1 and not var.batched):
            continue
        if not _valid(pygemv.Config(var.name, max(32, var.threads_per_row[0]), var.rows_per_block[0],
                                    pygemv.LOADS_SCALAR, 1, False, var.split_k[0])):  # aligned packs only: the stream
            if k * es > 2048 or (m > 1 and 2 * k < 16 // es - 1):  # a pack reaches at most three rows
                continue
            packs = -(-m * k * es // 16)
            space.split_k[var.name] = [s for s in _pow2_range(var.split_k[0], min(1024, var.split_k[1]))
                                       if s == 1 or s * 64 * 64 <= packs]
            if space.add(var.name, _pow2_range(max(64, var.threads_per_row[0]), var.threads_per_row[1]), m):
                space.no_staging.add(var.name)
                space.variant_loads[var.name] = [pygemv.LOADS_ALIGNED]
            continue
        if var.split_k[1] > 1:
            choices = [s for s in _pow2_range(max(2, var.split_k[0]), min(512, var.split_k[1])) if s * 8 <= m]
            if not choices:
                continue
            space.split_k[var.name] = choices
        if not vec_ok:  # phased rows: a row lane a phase class (lanes a multiple of the period), else a slice a class
            space.variant_loads[var.name] = [pygemv.LOADS_REALIGNED, pygemv.LOADS_PHASED, pygemv.LOADS_SCALAR]
        lo, hi = var.threads_per_row
        cs = [c for c in _pow2_range(max(lo, 2), min(hi, 64)) if c <= max(2, _pow2_ceil(units))]
        if space.add(var.name, cs, m):
            space.no_staging.add(var.name)
    return space


def _quantized_space(m: int, k: int, dtype: str, weights: tuple) -> Space:
    """Quantized weights: the operations that take them (q_rows, q_mma where the bits and
    dtype suit), their packs aligned (fixed), lanes up to a row's packs (tensor-core warps up
    to its 128-column steps), K slices of one to
    64 (at least a 128-column step each). x is staged for q_rows (fixed); q_mma stages it or
    reads it in place, drawn (x_in_smem); q_mma_x_held reads it in place (fixed) and draws
    the tiles a block walks (rows_per_block); q_mma_rounds (int4, any group size) reads it in
    place, a 16-row tile a block; q_block_rows reads it in place and never splits K."""
    bits = weights[0]
    packs = -(-k * bits // 128)
    space = Space(m, k, dtype, [], [pygemv.LOADS_ALIGNED], weights=tuple(weights))
    for var in pygemv.variants("N", quantized=True):
        if dtype not in var.dtypes or bits not in var.weight_bits:
            continue
        lo, hi = var.threads_per_row
        # Lanes up to a row's packs; the tensor-core operations' warps (32 lanes) take steps
        # of 128 columns: up to a warp a step. q_mma's steps lie in one group (128 up).
        if var.name == "q_mma" and weights[1] is not None and weights[1] < 128:
            continue
        if var.split_k[1] == 1:  # q_block_rows: K unsplit, x in place
            space.split_k[var.name] = [1]
            # Blocks of up to a row's packs.
            if space.add(var.name, [p for p in _pow2_range(lo, hi) if p <= max(lo, _pow2_ceil(packs))], m):
                space.no_staging.add(var.name)
            continue
        space.split_k[var.name] = [s for s in _pow2_range(1, 64) if s == 1 or s * 128 <= k]
        most = 32 * -(-k // 128) if lo >= 32 else packs
        ps = [p for p in _pow2_range(lo, hi) if p <= max(lo, _pow2_ceil(most))]
        if not var.stages_x:  # x held, rounds: rows_per_block counts 16-row tiles (rounds: one)
            if space.add(var.name, ps, m, tile_rows=16):
                space.no_staging.add(var.name)
            continue
        if space.add(var.name, ps, m) and not _valid(pygemv.Config(var.name, ps[0], space.rows_per_block[(var.name, ps[0])][0],
                                                                   pygemv.LOADS_ALIGNED, 1, False, 1)):
            space.packs_only.add(var.name)  # x staged always: vector_loads and x_in_smem fixed
    return space
