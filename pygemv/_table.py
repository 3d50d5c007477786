"""Tuned dispatch tables.

Python writes the text format (``docs/tuning.md``); libgemv reads it. Reading, the
fingerprint check and the nearest-shape lookup all go through libgemv itself
(``gemv_table_*``), so what Python reports is what C dispatch does.
"""
from __future__ import annotations

import ctypes
import os
import re
import tempfile
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable

from . import _checks, _lib
from ._registry import Config, problem_args

SCHEMA = 2
SUFFIX = ".gemvtable"
ENV_TABLE = "GEMV_TABLE"
DTYPE_NAMES = {v: k for k, v in _lib.DTYPES.items()}


@dataclass(frozen=True)
class Fingerprint:
    """What a table was tuned on; libgemv uses a table only where all of it matches."""

    gpu: str
    sm_count: int
    cc_major: int
    cc_minor: int
    cuda_runtime: int
    libgemv: str
    schema: int = SCHEMA

    @classmethod
    def of_device(cls, device: int | None = None) -> "Fingerprint":
        """The fingerprint of a GPU (the current one by default) with the loaded libgemv."""
        from ._device import current_device
        from . import library_version
        p = _lib.DeviceProps()
        _lib.check(_lib.load().gemv_device_props(current_device() if device is None else device, ctypes.byref(p)),
                   "device_props")
        return cls(p.name.decode(), p.sm_count, p.cc_major, p.cc_minor, p.runtime_version, library_version())

    def device_props(self) -> _lib.DeviceProps:
        """A ``gemv_device_props_t`` carrying this fingerprint (for ``gemv_table_check``)."""
        return _lib.DeviceProps(name=self.gpu.encode(), sm_count=self.sm_count, cc_major=self.cc_major,
                                cc_minor=self.cc_minor, runtime_version=self.cuda_runtime)

    def slug(self) -> str:
        """A file-name stem that tells GPUs apart, e.g. ``NVIDIA-H100-80GB-HBM3-sm90-132sm``."""
        name = re.sub(r"[^A-Za-z0-9]+", "-", self.gpu).strip("-")
        return f"{name}-sm{self.cc_major}{self.cc_minor}-{self.sm_count}sm"


@dataclass(frozen=True)
class Entry:
    """One tuned problem (the descriptor: op, dtype, batch, M, K): the config written for
    it and the times behind the choice."""

    dtype: str
    m: int
    k: int
    config: Config
    us: float
    heuristic_us: float
    op: str = "N"
    batch: int = 1
    bits: int = 0   # quantized weights (op N): 4 or 8; 0 for a dense A
    group: int = 0  # their group size (0: one group a row)

    def line(self) -> str:
        c = self.config
        name = c.variant if isinstance(c.variant, str) else Config.from_c(c.to_c()).variant
        op = f"W{self.bits}G{self.group}" if self.bits else self.op
        return (f"{op} {self.dtype} {self.batch} {self.m} {self.k} {name} {c.threads_per_row} {c.rows_per_block} "
                f"{int(c.vector_loads)} {c.unroll} {int(c.x_in_smem)} {c.split_k} {self.us:.3f} "
                f"{self.heuristic_us:.3f}")


def write_table(path: str | os.PathLike, fingerprint: Fingerprint, entries: Iterable[Entry],
                info: dict[str, str] | None = None) -> Path:
    """Write a table (atomically: a reader never sees half a file).

    Parameters
    ----------
    path : path-like
        The file to write; its folder is created.
    fingerprint : Fingerprint
        What the entries were tuned on.
    entries : iterable of Entry
        One per (dtype, m, k); sorted on writing.
    info : dict, optional
        Extra header lines (``key value``) for people, e.g. when and how it was tuned;
        libgemv skips them.
    """
    path = Path(path)
    entries = sorted(entries, key=lambda e: (e.op, _lib.DTYPES[e.dtype], e.batch, e.m, e.k))
    lines = [
        "# libgemv tuned dispatch table (format: docs/tuning.md). Entry fields:",
        "# op dtype batch m k variant threads_per_row rows_per_block vector_loads unroll x_in_smem split_k "
        "tuned_us heuristic_us",
        f"gemv-table {fingerprint.schema}",
        f"gpu {fingerprint.gpu}",
        f"sm_count {fingerprint.sm_count}",
        f"compute_capability {fingerprint.cc_major}.{fingerprint.cc_minor}",
        f"cuda_runtime {fingerprint.cuda_runtime}",
        f"libgemv {fingerprint.libgemv}",
    ]
    for key, value in (info or {}).items():
        if not re.fullmatch(r"[a-z_]+", key) or key in ("gpu", "sm_count", "compute_capability", "cuda_runtime",
                                                          "libgemv", "entries", "end", "gemv-table"):
            raise ValueError(f"info: {key!r} is not a free header key")
        lines.append(f"{key} {' '.join(str(value).split())}")
    lines.append(f"entries {len(entries)}")
    lines += [e.line() for e in entries]
    lines.append("end")
    return write_atomically(path, "\n".join(lines) + "\n")


def write_atomically(path: str | os.PathLike, text: str, check=None) -> Path:
    """Write text to path through a temporary file beside it, so that a reader never sees
    half a file; ``check(tmp_path)``, if given, runs before the file takes its name (and the
    temporary file is removed when it raises)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=path.name, suffix=".tmp")
    with os.fdopen(fd, "w") as f:
        f.write(text)
    try:
        if check is not None:
            check(tmp)
    except BaseException:
        os.unlink(tmp)
        raise
    os.replace(tmp, path)
    return path


def user_table_dir() -> Path:
    """Where ``pygemv-tune`` writes and libgemv first looks: ``$XDG_CACHE_HOME/pygemv/tables``
    (``~/.cache/pygemv/tables``)."""
    xdg = os.environ.get("XDG_CACHE_HOME", "")
    base = Path(xdg) if xdg.startswith("/") else Path.home() / ".cache"
    return base / "pygemv" / "tables"


def user_table_path(fingerprint: Fingerprint) -> Path:
    return user_table_dir() / (fingerprint.slug() + SUFFIX)


def shipped_table_dir() -> Path:
    """The tables installed with the package (``<package>/tables``)."""
    return Path(__file__).resolve().parent / "tables"


class Table:
    """A table file, read and validated by libgemv (``gemv_table_read``).

    Raises
    ------
    pygemv.TableInvalidError
        Unreadable, corrupt or truncated file, or an unknown variant (the message names
        the line).
    pygemv.TableMismatchError
        A schema this libgemv does not read.
    """

    def __init__(self, path: str | os.PathLike):
        encoded = _checks.path("path", path)
        self.path = Path(path)
        self._lib = _lib.load()
        # ctypes releases the GIL during each C call: the lock keeps close() from freeing
        # the table while another thread's lookup is inside C, and two closes from both freeing it.
        self._lock = threading.Lock()
        self._handle = None
        handle = _lib.table_t()
        _lib.check(self._lib.gemv_table_read(encoded, ctypes.byref(handle)), "table")
        self._handle = handle

    def close(self) -> None:
        """Free the table; later queries raise ``ValueError``. Safe to call twice, or from
        another thread while one queries."""
        lock = getattr(self, "_lock", None)
        if lock is None:
            return
        with lock:
            if self._handle:
                self._lib.gemv_table_destroy(self._handle)
            self._handle = None

    __del__ = close

    def _call(self, fn, *args) -> int:
        with self._lock:
            if not self._handle:
                raise ValueError(f"table {self.path} is closed")
            return fn(self._handle, *args)

    def __enter__(self) -> "Table":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def _fp(self) -> _lib.TableFingerprint:
        fp = _lib.TableFingerprint()
        _lib.check(self._call(self._lib.gemv_table_fingerprint, ctypes.byref(fp)), "table")
        return fp

    @property
    def fingerprint(self) -> Fingerprint:
        fp = self._fp()
        return Fingerprint(fp.gpu.decode(), fp.sm_count, fp.cc_major, fp.cc_minor, fp.cuda_runtime,
                           fp.libgemv.decode(), fp.schema)

    def __len__(self) -> int:
        return self._fp().entries

    def check(self, fingerprint: Fingerprint | None = None) -> None:
        """Raise ``TableMismatchError`` unless the table was tuned for ``fingerprint`` (the
        current GPU and library by default)."""
        fp = Fingerprint.of_device() if fingerprint is None else fingerprint
        _lib.check(self._call(self._lib.gemv_table_check, ctypes.byref(fp.device_props())), "table")

    def lookup(self, m: int, k: int, dtype: str = "float32", *,
               workspace_bytes: int = _lib.WORKSPACE_RECOMMENDED_BYTES, weights: tuple[int, int, int] | None = None,
               **problem) -> tuple[Config, float] | None:
        """The config libgemv's dispatcher takes from this table for a problem, and the log2
        distance to the entry it came from; ``None`` when no entry of the problem's
        descriptor (op, dtype, batched, weights) can run it, or when the entry in reach
        leaves it to the heuristic (docs/tuning.md, "The lookup"). ``weights``: quantized weights
        as (bits, group_size, zero_mode), ``zero_mode`` a ``gemv_qzero_t``. ``problem``:
        ``trans``, ``lda``, ``incx``, ``a_ptr``, ``x_ptr``, ``batch``, ...
        (:func:`pygemv._registry.problem_args`)."""
        args = problem_args(m, k, dtype, workspace_bytes=workspace_bytes, **problem)
        if weights is not None:
            q = _lib.QMatrix()
            _lib.check(self._lib.gemv_qmatrix_init(ctypes.byref(q), *weights, _lib.DTYPES[dtype], m, k), "weights")
            args.A, args.qweight = None, ctypes.addressof(q)
        c, dist = _lib.Config(), ctypes.c_double()
        st = self._call(self._lib.gemv_table_lookup, ctypes.byref(args), ctypes.byref(c), ctypes.byref(dist))
        if st == 3:  # NOT_SUPPORTED: nothing in the table runs it
            return None
        _lib.check(st, "table lookup")
        return Config.from_c(c), dist.value


def load_table(path: str | os.PathLike | None) -> None:
    """Dispatch with this table on every visible GPU it was tuned for (``gemv_load_table``);
    ``None``: no tuned table, the heuristic decides.

    Raises
    ------
    pygemv.TableInvalidError, pygemv.TableMismatchError
    """
    _lib.check(_lib.load().gemv_load_table(None if path is None else _checks.path("path", path)), "load_table")


@dataclass(frozen=True)
class TableStatus:
    """The table a device dispatches with (``source`` is ``none`` when the heuristic
    decides) and what was found and rejected for it (``problem``, ``message``).

    A user's table adds to the shipped one: its ``entries`` win where they exist, and the
    shipped table (``fill_source``, ``fill_path``) gives ``fill_entries`` more at the
    shapes the user's table lacks.
    """

    source: str
    path: str
    entries: int
    problem: int
    message: str
    fill_source: str = "none"
    fill_path: str = ""
    fill_entries: int = 0

    @property
    def sources(self) -> dict[str, int]:
        """Entries each source in use gives, e.g. ``{'user': 81, 'shipped': 402}``."""
        out = {self.source: self.entries} if self.source != "none" else {}
        if self.fill_source != "none":
            out[self.fill_source] = self.fill_entries
        return out


def table_status(device: int | None = None) -> TableStatus:
    """Which tuned table a GPU (the current one by default) dispatches with."""
    s = _lib.TableStatus()
    dev = -1 if device is None else _checks.integer("device", device, 0, _checks.INT32[1])
    _lib.check(_lib.load().gemv_table_status(dev, ctypes.byref(s)), "table_status")
    return TableStatus(_lib.TABLE_SOURCES[s.source], s.path.decode(), s.entries, s.problem, s.message.decode(),
                       _lib.TABLE_SOURCES[s.fill_source], s.fill_path.decode(), s.fill_entries)
