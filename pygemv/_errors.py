"""Exceptions: one class per libgemv status, raised in one place (``_lib.check``)."""
from __future__ import annotations


class GemvError(RuntimeError):
    """Base class of every error libgemv reports. ``status`` holds the C status code."""

    status: int | None = None

    def __init__(self, message: str, status: int | None = None):
        super().__init__(message)
        if status is not None:
            self.status = status


class InvalidValueError(GemvError, ValueError):
    """A size, increment, leading dimension, enum or config value is out of range (status 1)."""

    status = 1


class InvalidPointerError(GemvError, ValueError):
    """NULL, host or other-device pointer where device data is needed (status 2)."""

    status = 2


class NotSupportedError(GemvError, NotImplementedError):
    """The forced config cannot run this shape or alignment (status 3)."""

    status = 3


class InsufficientWorkspaceError(GemvError):
    """The forced config needs more workspace than was given (status 4)."""

    status = 4


class NoDeviceError(GemvError):
    """The CUDA driver found no GPU (status 5)."""

    status = 5


class NoDriverError(GemvError):
    """No CUDA driver, or one older than the CUDA runtime (status 6)."""

    status = 6


class CudaError(GemvError):
    """A CUDA call or kernel launch failed (status 7)."""

    status = 7


class AllocationError(GemvError, MemoryError):
    """Device memory, or host memory for a table or the workspace pool, could not be allocated (status 8)."""

    status = 8


class TableInvalidError(GemvError, ValueError):
    """A tuned table cannot be read, or is corrupt, truncated or names an unknown variant (status 9)."""

    status = 9


class TableMismatchError(GemvError):
    """A tuned table was made for another GPU, CUDA runtime, libgemv version or schema (status 10)."""

    status = 10


class InternalError(GemvError):
    """An unexpected failure inside libgemv (status 11); the message says what failed."""

    status = 11


class LibraryNotFoundError(GemvError, OSError):
    """libgemv could not be loaded; the message names every path tried."""


_BY_STATUS = {cls.status: cls for cls in (InvalidValueError, InvalidPointerError, NotSupportedError,
                                          InsufficientWorkspaceError, NoDeviceError, NoDriverError,
                                          CudaError, AllocationError, TableInvalidError,
                                          TableMismatchError, InternalError)}


def error_class(status: int) -> type[GemvError]:
    """The exception class for a C status (``GemvError`` for unknown codes)."""
    return _BY_STATUS.get(status, GemvError)
