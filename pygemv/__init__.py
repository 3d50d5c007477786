"""pygemv: fast GEMV (``y = alpha * A @ x + beta * y``) on NVIDIA GPUs.

A ctypes binding of libgemv. ``pygemv.gemv`` takes torch, CuPy, Numba or DLPack arrays,
:class:`DeviceArray` (numpy only), or raw device pointers, on the caller's stream.
"""
from __future__ import annotations

from pathlib import Path

from . import _errors as errors
from ._api import gemv, select_config
from ._device import (DeviceArray, Stream, current_device, device_count, device_name, empty, set_device,
                      synchronize, to_device)
from ._errors import (AllocationError, CudaError, GemvError, InsufficientWorkspaceError, InvalidPointerError,
                      InvalidValueError, LibraryNotFoundError, NoDeviceError, NoDriverError, NotSupportedError,
                      TableInvalidError, TableMismatchError, InternalError)
from ._lib import WORKSPACE_RECOMMENDED_BYTES
from ._log import get_log_level, set_log_level
from ._quant import QuantizedMatrix, quantize
from ._registry import (LOADS_ALIGNED, LOADS_ALIGNED8, LOADS_PHASED, LOADS_PHASED_X_COPIES, LOADS_REALIGNED,
                        LOADS_SCALAR, Config, Variant, can_implement, variant, variants, workspace_size)
from ._table import Fingerprint, Table, TableStatus, load_table, table_status

__version__ = "0.7.0"


def library_version() -> str:
    """The loaded libgemv's version, from ``gemv_version()``."""
    from . import _lib
    v = _lib.load().gemv_version()
    return f"{v // 10000}.{v // 100 % 100}.{v % 100}"


def version_string(prog: str) -> str:
    """``<prog> <pygemv version> (libgemv <version>)``, for the commands' ``--version``;
    says so when the library cannot be loaded instead of failing."""
    try:
        lib = f"libgemv {library_version()}"
    except GemvError as e:
        lib = f"libgemv not loaded: {e}"
    return f"{prog} {__version__} ({lib})"


def cmake_prefix() -> str:
    """A CMAKE_PREFIX_PATH entry under which ``find_package(gemv)`` finds this install.

    Raises
    ------
    LibraryNotFoundError
        When the imported pygemv is a source tree (no CMake package inside), naming it.
    """
    here = Path(__file__).resolve().parent
    if not (here / "lib" / "cmake" / "gemv" / "gemvConfig.cmake").is_file():
        raise LibraryNotFoundError(
            f"the pygemv being imported ({here}) is the source tree, not the installed package, so it holds no "
            "gemvConfig.cmake; run the command from another folder (cd / && python -m pygemv --cmake-prefix) or "
            "with python -P, which leaves the current folder off sys.path")
    return str(here)


def include_dir() -> str:
    """The folder that holds ``gemv.h``."""
    return str(Path(__file__).resolve().parent / "include")


__all__ = [
    "gemv", "select_config", "variants", "variant", "Variant", "Config", "LOADS_SCALAR", "LOADS_ALIGNED",
    "LOADS_REALIGNED", "LOADS_PHASED", "LOADS_ALIGNED8", "LOADS_PHASED_X_COPIES", "can_implement", "workspace_size",
    "DeviceArray", "Stream", "to_device", "empty", "synchronize", "device_count", "current_device",
    "set_device", "device_name", "library_version", "cmake_prefix", "include_dir", "errors",
    "WORKSPACE_RECOMMENDED_BYTES", "GemvError", "InvalidValueError", "InvalidPointerError",
    "NotSupportedError", "InsufficientWorkspaceError", "NoDeviceError", "NoDriverError", "CudaError",
    "AllocationError", "LibraryNotFoundError", "TableInvalidError", "TableMismatchError", "InternalError",
    "Table", "Fingerprint", "TableStatus", "load_table", "table_status", "set_log_level", "get_log_level",
    "QuantizedMatrix", "quantize",
]
