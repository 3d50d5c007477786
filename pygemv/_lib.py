"""Loading libgemv and declaring every C symbol for ctypes.

Every exported function gets ``argtypes`` and ``restype`` once, at load time (an unset
``restype`` would truncate 64-bit pointers). The C prototype stands above each one.
"""
from __future__ import annotations

import ctypes
import os
import struct
import sys
import threading
from importlib import resources
from ctypes import POINTER, c_char_p, c_float, c_int, c_int32, c_int64, c_size_t, c_void_p
from pathlib import Path

from . import _errors

ENV_LIBRARY = "PYGEMV_LIBRARY"
LIBRARY_NAME = {"win32": "gemv.dll", "darwin": "libgemv.dylib"}.get(sys.platform, "libgemv.so")

# Mirrors of gemv.h's enums and structs; tests/test_cpu_library.py checks each value and
# layout against the header, so a change there that is not made here fails CI.
STATUS_SUCCESS = 0
DTYPES = {"float32": 0, "float16": 1, "bfloat16": 2}
DTYPE_SIZES = {"float32": 4, "float16": 2, "bfloat16": 2}
OP_N, OP_T = 0, 1
WORKSPACE_RECOMMENDED_BYTES = 4 << 20
QZERO_MODES = ("symmetric", "int", "float")  # gemv_qzero_t: GEMV_QZERO_<NAME> = index


class Extensible(ctypes.Structure):
    """A struct that starts with ``struct_size`` (gemv.h): set to its size on creation."""

    def __init__(self, *args, **kw):
        super().__init__(ctypes.sizeof(self), *args, **kw)


class Config(Extensible):
    """``gemv_config_t``: an explicit launch configuration (see :class:`pygemv.Config`)."""

    _fields_ = [
        ("struct_size", c_size_t),
        ("variant", c_int32),
        ("threads_per_row", c_int32),
        ("rows_per_block", c_int32),
        ("vector_loads", c_int32),
        ("unroll", c_int32),
        ("x_in_smem", c_int32),
        ("split_k", c_int32),
    ]


class VariantInfo(Extensible):
    """``gemv_variant_info_t``: one registry entry."""

    _fields_ = [
        ("struct_size", c_size_t),
        ("variant", c_int32),
        ("name", c_char_p),
        ("description", c_char_p),
        ("threads_per_row_min", c_int32),
        ("threads_per_row_max", c_int32),
        ("rows_per_block_min", c_int32),
        ("rows_per_block_max", c_int32),
        ("split_k_min", c_int32),
        ("split_k_max", c_int32),
        ("unroll_mask", c_int32),
        ("deterministic", c_int32),
        ("needs_workspace", c_int32),
        ("op", c_int32),
        ("dtype_mask", ctypes.c_uint32),
        ("batched", c_int32),
        ("stages_x", c_int32),
        ("weight_bits_mask", ctypes.c_uint32),
    ]


class QMatrix(Extensible):
    """``gemv_qmatrix_t``: quantized weights (format, sizes, device pointers, strides)."""

    _fields_ = [
        ("struct_size", c_size_t),
        ("bits", c_int32),
        ("group_size", c_int32),
        ("zero_mode", c_int32),
        ("dtype", c_int32),
        ("m", c_int64),
        ("k", c_int64),
        ("qweight", c_void_p),
        ("ldq", c_int64),
        ("scales", c_void_p),
        ("lds", c_int64),
        ("zeros", c_void_p),
        ("ldz", c_int64),
        ("perm", c_void_p),
    ]


class Args(Extensible):
    """``gemv_args_t``: every argument of one call (the torch fast path fills one).
    Positional arguments start after ``struct_size``; ``batch`` defaults to 1."""

    _fields_ = [
        ("struct_size", c_size_t),
        ("op", c_int32),
        ("dtype", c_int32),
        ("m", c_int64),
        ("k", c_int64),
        ("alpha", c_float),
        ("beta", c_float),
        ("A", c_void_p),
        ("lda", c_int64),
        ("x", c_void_p),
        ("incx", c_int64),
        ("y", c_void_p),
        ("incy", c_int64),
        ("workspace", c_void_p),
        ("workspace_bytes", c_size_t),
        ("stream", c_void_p),
        ("flags", ctypes.c_uint32),
        ("batch", c_int64),
        ("stride_a", c_int64),
        ("stride_x", c_int64),
        ("stride_y", c_int64),
        ("qweight", c_void_p),
    ]

    def __init__(self, *args, **kw):
        if len(args) < 17 and "batch" not in kw:
            kw["batch"] = 1
        super().__init__(*args, **kw)


FLAG_TRUSTED_POINTERS = 1
FLAG_NO_TABLE = 2
FLAG_LIBRARY_WORKSPACE = 4

# Args as a struct format (each ctypes type's own code, native alignment), for filling an
# Args in one pack_into: the eager hot path, ~0.2 us against ~1 us for Args(...).
ARGS_LAYOUT = struct.Struct("@" + "".join(t._type_ for _, t in Args._fields_))
ARGS_SIZE = ctypes.sizeof(Args)


class DeviceProps(ctypes.Structure):
    """``gemv_device_props_t``."""

    _fields_ = [
        ("name", ctypes.c_char * 256),
        ("sm_count", c_int32),
        ("cc_major", c_int32),
        ("cc_minor", c_int32),
        ("l2_bytes", c_int64),
        ("smem_per_block_optin", c_int64),
        ("global_mem_bytes", c_int64),
        ("runtime_version", c_int32),
        ("driver_version", c_int32),
        ("pci_domain", c_int32),
        ("pci_bus", c_int32),
        ("pci_device", c_int32),
    ]


class TableFingerprint(ctypes.Structure):
    """``gemv_table_fingerprint_t``: what a tuned table was tuned on."""

    _fields_ = [
        ("schema", c_int32),
        ("gpu", ctypes.c_char * 256),
        ("sm_count", c_int32),
        ("cc_major", c_int32),
        ("cc_minor", c_int32),
        ("cuda_runtime", c_int32),
        ("libgemv", ctypes.c_char * 32),
        ("entries", c_int64),
    ]


class TableStatus(ctypes.Structure):
    """``gemv_table_status_t``: the table a device dispatches with, and why."""

    _fields_ = [
        ("source", c_int32),
        ("problem", c_int32),
        ("entries", c_int64),
        ("path", ctypes.c_char * 1024),
        ("message", ctypes.c_char * 1024),
        ("fill_source", c_int32),
        ("fill_entries", c_int64),
        ("fill_path", ctypes.c_char * 1024),
    ]


TABLE_SOURCES = ("none", "explicit", "env", "user", "shipped")  # gemv_table_source_t
LOG_LEVELS = ("off", "error", "warning", "info", "trace")  # gemv_log_level_t: GEMV_LOG_<NAME> = index
# void (*gemv_logger_t)(gemv_log_level_t level, const char *message, void *user_data)
LOGGER = ctypes.CFUNCTYPE(None, c_int, c_char_p, c_void_p)

status_t = c_int
stream_t = c_void_p
table_t = c_void_p

# name -> (restype, argtypes); the C prototypes are in libgemv/include/gemv.h.
_GEMV_ARGS = [c_int, c_int, c_int64, c_int64, c_float, c_void_p, c_int64, c_void_p, c_int64,
              c_float, c_void_p, c_int64, c_void_p, c_size_t, stream_t]
SIGNATURES = {
    # int gemv_version(void);
    "gemv_version": (c_int, []),
    # const char *gemv_status_string(gemv_status_t status);
    "gemv_status_string": (c_char_p, [status_t]),
    # const char *gemv_last_error(void);
    "gemv_last_error": (c_char_p, []),
    # gemv_status_t gemv_set_log_level(gemv_log_level_t level);
    "gemv_set_log_level": (status_t, [c_int]),
    # gemv_log_level_t gemv_get_log_level(void);
    "gemv_get_log_level": (c_int, []),
    # void gemv_set_logger(gemv_logger_t logger, void *user_data);
    "gemv_set_logger": (None, [LOGGER, c_void_p]),
    # int gemv_variant_count(void);
    "gemv_variant_count": (c_int, []),
    # gemv_status_t gemv_variant_info(int index, gemv_variant_info_t *info);
    "gemv_variant_info": (status_t, [c_int, POINTER(VariantInfo)]),
    # gemv_status_t gemv(gemv_op_t op, gemv_dtype_t dtype, int64_t m, int64_t k, float alpha,
    #     const void *A, int64_t lda, const void *x, int64_t incx, float beta, void *y,
    #     int64_t incy, void *workspace, size_t workspace_bytes, gemv_stream_t stream);
    "gemv": (status_t, _GEMV_ARGS),
    # gemv_status_t gemv_strided_batched(gemv_op_t op, gemv_dtype_t dtype, int64_t m, int64_t k,
    #     float alpha, const void *A, int64_t lda, int64_t stride_a, const void *x, int64_t incx,
    #     int64_t stride_x, float beta, void *y, int64_t incy, int64_t stride_y, int64_t batch,
    #     void *workspace, size_t workspace_bytes, gemv_stream_t stream);
    "gemv_strided_batched": (status_t, [c_int, c_int, c_int64, c_int64, c_float, c_void_p, c_int64, c_int64,
                                        c_void_p, c_int64, c_int64, c_float, c_void_p, c_int64, c_int64, c_int64,
                                        c_void_p, c_size_t, stream_t]),
    # gemv_status_t gemv_with_config(const gemv_config_t *config, <the arguments of gemv>);
    "gemv_with_config": (status_t, [POINTER(Config)] + _GEMV_ARGS),
    # gemv_status_t gemv_ex(const gemv_args_t *args, const gemv_config_t *config);
    "gemv_ex": (status_t, [POINTER(Args), POINTER(Config)]),
    # gemv_status_t gemv_check_config(const gemv_config_t *config, const gemv_args_t *args);
    "gemv_check_config": (status_t, [POINTER(Config), POINTER(Args)]),
    # size_t gemv_workspace_size(const gemv_config_t *config, const gemv_args_t *args);
    "gemv_workspace_size": (c_size_t, [POINTER(Config), POINTER(Args)]),
    # gemv_status_t gemv_default_config(int variant, const gemv_args_t *args, gemv_config_t *config);
    "gemv_default_config": (status_t, [c_int, POINTER(Args), POINTER(Config)]),
    # gemv_status_t gemv_select_config(gemv_op_t op, gemv_dtype_t dtype, int64_t m, int64_t k,
    #     const void *A, int64_t lda, const void *x, int64_t incx, const void *y, int64_t incy,
    #     size_t workspace_bytes, gemv_config_t *config);
    "gemv_select_config": (status_t, [c_int, c_int, c_int64, c_int64, c_void_p, c_int64, c_void_p, c_int64,
                                      c_void_p, c_int64, c_size_t, POINTER(Config)]),
    # gemv_status_t gemv_select_config_ex(const gemv_args_t *args, gemv_config_t *config, int32_t *from_table);
    "gemv_select_config_ex": (status_t, [POINTER(Args), POINTER(Config), POINTER(c_int32)]),
    # gemv_status_t gemv_table_read(const char *path, gemv_table_t *table);
    "gemv_table_read": (status_t, [c_char_p, POINTER(table_t)]),
    # gemv_status_t gemv_table_destroy(gemv_table_t table);
    "gemv_table_destroy": (status_t, [table_t]),
    # gemv_status_t gemv_table_fingerprint(gemv_table_t table, gemv_table_fingerprint_t *fp);
    "gemv_table_fingerprint": (status_t, [table_t, POINTER(TableFingerprint)]),
    # gemv_status_t gemv_table_check(gemv_table_t table, const gemv_device_props_t *props);
    "gemv_table_check": (status_t, [table_t, POINTER(DeviceProps)]),
    # gemv_status_t gemv_table_lookup(gemv_table_t table, const gemv_args_t *args, gemv_config_t *config,
    #     double *distance);
    "gemv_table_lookup": (status_t, [table_t, POINTER(Args), POINTER(Config), POINTER(ctypes.c_double)]),
    # gemv_status_t gemv_load_table(const char *path);
    "gemv_load_table": (status_t, [c_char_p]),
    # gemv_status_t gemv_table_status(int device, gemv_table_status_t *status);
    "gemv_table_status": (status_t, [c_int, POINTER(TableStatus)]),
    # gemv_status_t gemv_qmatrix_init(gemv_qmatrix_t *W, int bits, int group_size, gemv_qzero_t zero_mode,
    #     gemv_dtype_t dtype, int64_t m, int64_t k);
    "gemv_qmatrix_init": (status_t, [POINTER(QMatrix), c_int, c_int, c_int, c_int, c_int64, c_int64]),
    # gemv_status_t gemv_quantized(const gemv_qmatrix_t *W, float alpha, const void *x, int64_t incx, float beta,
    #     void *y, int64_t incy, void *workspace, size_t workspace_bytes, gemv_stream_t stream);
    "gemv_quantized": (status_t, [POINTER(QMatrix), c_float, c_void_p, c_int64, c_float, c_void_p, c_int64,
                                  c_void_p, c_size_t, stream_t]),
    # gemv_status_t gemv_quantize(const gemv_qmatrix_t *W, const void *A, int64_t lda, gemv_stream_t stream);
    "gemv_quantize": (status_t, [POINTER(QMatrix), c_void_p, c_int64, stream_t]),
    # gemv_status_t gemv_repack_gptq(const gemv_qmatrix_t *W, const int32_t *qweight, const int32_t *qzeros,
    #     const void *scales, const int32_t *g_idx, int zero_offset, gemv_stream_t stream);
    "gemv_repack_gptq": (status_t, [POINTER(QMatrix), c_void_p, c_void_p, c_void_p, c_void_p, c_int, stream_t]),
    # gemv_status_t gemv_repack_awq(const gemv_qmatrix_t *W, const int32_t *qweight, const int32_t *qzeros,
    #     const void *scales, gemv_stream_t stream);
    "gemv_repack_awq": (status_t, [POINTER(QMatrix), c_void_p, c_void_p, c_void_p, stream_t]),
    # gemv_status_t gemv_dequantize(const gemv_qmatrix_t *W, float *out, int64_t ldo, gemv_stream_t stream);
    "gemv_dequantize": (status_t, [POINTER(QMatrix), c_void_p, c_int64, stream_t]),
    # gemv_status_t gemv_device_count(int *count);
    "gemv_device_count": (status_t, [POINTER(c_int)]),
    # gemv_status_t gemv_get_device(int *device);
    "gemv_get_device": (status_t, [POINTER(c_int)]),
    # gemv_status_t gemv_set_device(int device);
    "gemv_set_device": (status_t, [c_int]),
    # gemv_status_t gemv_device_name(int device, char *buf, size_t len);
    "gemv_device_name": (status_t, [c_int, c_char_p, c_size_t]),
    # gemv_status_t gemv_malloc(void **ptr, size_t bytes);
    "gemv_malloc": (status_t, [POINTER(c_void_p), c_size_t]),
    # gemv_status_t gemv_free(void *ptr);
    "gemv_free": (status_t, [c_void_p]),
    # gemv_status_t gemv_memcpy_to_device(void *dst, const void *src, size_t bytes);
    "gemv_memcpy_to_device": (status_t, [c_void_p, c_void_p, c_size_t]),
    # gemv_status_t gemv_memcpy_to_host(void *dst, const void *src, size_t bytes);
    "gemv_memcpy_to_host": (status_t, [c_void_p, c_void_p, c_size_t]),
    # gemv_status_t gemv_stream_create(gemv_stream_t *stream);
    "gemv_stream_create": (status_t, [POINTER(stream_t)]),
    # gemv_status_t gemv_stream_destroy(gemv_stream_t stream);
    "gemv_stream_destroy": (status_t, [stream_t]),
    # gemv_status_t gemv_stream_synchronize(gemv_stream_t stream);
    "gemv_stream_synchronize": (status_t, [stream_t]),
    # gemv_status_t gemv_stream_wait(gemv_stream_t stream, gemv_stream_t producer);
    "gemv_stream_wait": (status_t, [stream_t, stream_t]),
    # gemv_status_t gemv_stream_is_capturing(gemv_stream_t stream, int *capturing);
    "gemv_stream_is_capturing": (status_t, [stream_t, POINTER(c_int)]),
    # gemv_status_t gemv_device_props(int device, gemv_device_props_t *props);
    "gemv_device_props": (status_t, [c_int, POINTER(DeviceProps)]),
    # ---- gemv_experimental.h: the benchmark's and the tuner's instruments ----
    # gemv_status_t gemv_capture_begin(gemv_stream_t stream);
    "gemv_capture_begin": (status_t, [stream_t]),
    # gemv_status_t gemv_capture_end(gemv_stream_t stream, gemv_graph_t *graph);
    "gemv_capture_end": (status_t, [stream_t, POINTER(c_void_p)]),
    # gemv_status_t gemv_graph_replay_ms(gemv_graph_t graph, gemv_stream_t stream, int replays, float *ms);
    "gemv_graph_replay_ms": (status_t, [c_void_p, stream_t, c_int, POINTER(c_float)]),
    # gemv_status_t gemv_graph_destroy(gemv_graph_t graph);
    "gemv_graph_destroy": (status_t, [c_void_p]),
    # gemv_status_t gemv_read_ceiling(const void *data, size_t bytes, void *sink, gemv_stream_t stream);
    "gemv_read_ceiling": (status_t, [c_void_p, c_size_t, c_void_p, stream_t]),
}

_lock = threading.Lock()
_lib: ctypes.CDLL | None = None


def candidate_paths() -> list[Path]:
    """Where the library is looked for: the override alone when it is set (a wrong override
    is an error, not a silent fall-back), else inside the installed package."""
    override = os.environ.get(ENV_LIBRARY)
    if override:
        return [Path(override)]
    # The wheel installs libgemv beside the Python files; a package on disk is a real path.
    return [Path(str(resources.files(__package__).joinpath(LIBRARY_NAME)))]


def declare(lib: ctypes.CDLL) -> ctypes.CDLL:
    """Set argtypes and restype on every symbol in :data:`SIGNATURES`."""
    for name, (restype, argtypes) in SIGNATURES.items():
        fn = getattr(lib, name)
        fn.restype = restype
        fn.argtypes = argtypes
    return lib


def load() -> ctypes.CDLL:
    """The loaded, declared library; loaded once (thread-safe) on first use.

    Raises
    ------
    pygemv.LibraryNotFoundError
        Naming every path that was tried and why each failed.
    """
    global _lib
    if _lib is not None:
        return _lib
    with _lock:
        if _lib is None:
            tried = []
            for path in candidate_paths():
                if not path.is_file():
                    tried.append(f"{path} (no such file)")
                    continue
                try:
                    lib = ctypes.CDLL(str(path))
                except OSError as e:
                    tried.append(f"{path} ({e})")
                    continue
                _lib = declare(lib)
                from . import _log
                _log.route(_lib)  # libgemv's messages go to the logging module from here on
                break
            else:
                raise _errors.LibraryNotFoundError(
                    "could not load libgemv; tried: " + "; ".join(tried)
                    + f". Install pygemv with 'pip install .', or set {ENV_LIBRARY} to the library's path."
                )
    return _lib


def check(status: int, what: str = "") -> None:
    """Raise the exception class of a non-zero status, with the C library's messages."""
    if status == STATUS_SUCCESS:
        return
    lib = load()
    text = lib.gemv_status_string(status).decode()
    detail = lib.gemv_last_error().decode(errors="replace")
    msg = f"{what}: {text}" if what else text
    if detail:
        msg += f" ({detail})"
    raise _errors.error_class(status)(msg, status=status)
