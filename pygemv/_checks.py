"""Range and type checks of Python values before they reach ctypes.

ctypes converts a Python int to a C integer modulo 2^N without a word (``m=2**64+8``
would run as 8, a workspace size of -1 as SIZE_MAX), and a float too large for float32
to inf. Every value pygemv passes to libgemv goes through one of these first, and a bad
one raises ``TypeError`` or ``ValueError`` naming the argument.
"""
from __future__ import annotations

import math
import operator
import os

INT32 = (-(1 << 31), (1 << 31) - 1)
INT64 = (-(1 << 63), (1 << 63) - 1)
UINT64 = (0, (1 << 64) - 1)
FLOAT32_MAX = 3.4028234663852886e38


def integer(name: str, value, lo: int = INT64[0], hi: int = INT64[1]) -> int:
    """``value`` as an int within [lo, hi] (int64 by default); numpy integers are ints."""
    if isinstance(value, bool) or not hasattr(type(value), "__index__"):
        raise TypeError(f"{name} must be an integer, got {type(value).__name__} {value!r}")
    v = operator.index(value)
    if not lo <= v <= hi:
        raise ValueError(f"{name} = {v} is out of range [{lo}, {hi}]")
    return v


def pointer(name: str, value) -> int:
    """A device address (None is 0)."""
    return 0 if value is None else integer(name, value, *UINT64)


def size(name: str, value) -> int:
    """A byte count: 0 .. 2^64 - 1."""
    return integer(name, value, *UINT64)


def scalar(name: str, value) -> float:
    """A real number that float32 can hold; inf and NaN pass as themselves."""
    if isinstance(value, (complex, str, bytes)) or not hasattr(type(value), "__float__"):
        raise TypeError(f"{name} must be a real number, got {type(value).__name__} {value!r}")
    v = float(value)
    if math.isfinite(v) and abs(v) > FLOAT32_MAX:
        raise ValueError(f"{name} = {v!r} overflows float32 (|{name}| <= {FLOAT32_MAX:.6g})")
    return v


def path(name: str, value) -> bytes:
    """A file path as bytes for C, which would silently stop at a NUL."""
    try:
        b = os.fsencode(value)
    except TypeError:
        raise TypeError(f"{name} must be a path (str, bytes or os.PathLike), got {type(value).__name__}") from None
    if b"\0" in b:
        raise ValueError(f"{name} contains a NUL character: {value!r}")
    return b
