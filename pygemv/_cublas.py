"""cuBLAS through ctypes, found the way users have it (the CUDA toolkit, or the
nvidia-cublas wheel, torch's included): the benchmark's peer.

Our A is row-major M x K with leading dimension lda, which cuBLAS (column-major) sees as
the K x M matrix A^T: y = A x is a transposed GEMV (or GEMM with op(A) = T) there.
"""
from __future__ import annotations

import ctypes
import glob
import os
import sys
from ctypes import POINTER, byref, c_float, c_int, c_longlong, c_size_t, c_void_p
from pathlib import Path

OP_N, OP_T = 0, 1
CUDA_TYPES = {"float32": 0, "float16": 2, "bfloat16": 14}  # cudaDataType_t
COMPUTE_32F = 68      # cublasComputeType_t CUBLAS_COMPUTE_32F
GEMM_DEFAULT = -1     # cublasGemmAlgo_t
WORKSPACE_BYTES = 32 << 20


def candidate_paths() -> list[str]:
    """Where libcublas is looked for: $PYGEMV_CUBLAS, the CUDA toolkit, nvidia wheels."""
    out = []
    if os.environ.get("PYGEMV_CUBLAS"):
        out.append(os.environ["PYGEMV_CUBLAS"])
    for root in filter(None, [os.environ.get("CUDA_HOME"), os.environ.get("CUDA_PATH"), "/usr/local/cuda"]):
        out += sorted(glob.glob(os.path.join(root, "lib64", "libcublas.so*")), reverse=True)
    for site in sys.path:
        out += sorted(glob.glob(os.path.join(site, "nvidia", "*", "lib", "libcublas.so*")), reverse=True)
    return [p for p in out if "Lt" not in Path(p).name]


class CublasNotFound(RuntimeError):
    pass


class Cublas:
    """A cuBLAS handle with its own workspace, and the GEMV entry points that fit."""

    def __init__(self, workspace_ptr: int | None = None):
        tried = []
        for path in candidate_paths():
            try:
                self.lib = ctypes.CDLL(path)
                self.path = path
                break
            except OSError as e:
                tried.append(f"{path} ({e})")
        else:
            raise CublasNotFound("libcublas not found; tried: " + ("; ".join(tried) or "nothing")
                                 + ". Set PYGEMV_CUBLAS, CUDA_HOME, or install nvidia-cublas.")
        L = self.lib
        L.cublasCreate_v2.argtypes = [POINTER(c_void_p)]
        L.cublasSetStream_v2.argtypes = [c_void_p, c_void_p]
        L.cublasSetWorkspace_v2.argtypes = [c_void_p, c_void_p, c_size_t]
        L.cublasGetVersion_v2.argtypes = [c_void_p, POINTER(c_int)]
        # cublasStatus_t cublasSgemv_v2(handle, trans, m, n, const float *alpha, const float *A, lda,
        #                               const float *x, incx, const float *beta, float *y, incy)
        L.cublasSgemv_v2.argtypes = [c_void_p, c_int, c_int, c_int, POINTER(c_float), c_void_p, c_int, c_void_p,
                                     c_int, POINTER(c_float), c_void_p, c_int]
        # cublasStatus_t cublasGemmEx(handle, transa, transb, m, n, k, const void *alpha, A, Atype, lda,
        #     B, Btype, ldb, const void *beta, C, Ctype, ldc, computeType, algo)
        L.cublasGemmEx.argtypes = [c_void_p, c_int, c_int, c_int, c_int, c_int, c_void_p, c_void_p, c_int, c_int,
                                   c_void_p, c_int, c_int, c_void_p, c_void_p, c_int, c_int, c_int, c_int]
        # cublas{HSH,TST}gemvStridedBatched(handle, trans, m, n, const float *alpha, A, lda, long long strideA,
        #     x, incx, long long stridex, const float *beta, y, incy, long long stridey, int batchCount)
        batched = [c_void_p, c_int, c_int, c_int, POINTER(c_float), c_void_p, c_int, c_longlong, c_void_p, c_int,
                   c_longlong, POINTER(c_float), c_void_p, c_int, c_longlong, c_int]
        L.cublasHSHgemvStridedBatched.argtypes = batched
        L.cublasTSTgemvStridedBatched.argtypes = batched
        L.cublasSgemvStridedBatched.argtypes = batched
        # cublasGemmStridedBatchedEx(handle, transa, transb, m, n, k, alpha, A, Atype, lda, long long strideA,
        #     B, Btype, ldb, long long strideB, beta, C, Ctype, ldc, long long strideC, batchCount, computeType, algo)
        L.cublasGemmStridedBatchedEx.argtypes = [c_void_p, c_int, c_int, c_int, c_int, c_int, c_void_p, c_void_p, c_int,
                                                 c_int, c_longlong, c_void_p, c_int, c_int, c_longlong, c_void_p,
                                                 c_void_p, c_int, c_int, c_longlong, c_int, c_int, c_int]
        for fn in ("cublasCreate_v2", "cublasSetStream_v2", "cublasSetWorkspace_v2", "cublasGetVersion_v2",
                   "cublasSgemv_v2", "cublasGemmEx", "cublasHSHgemvStridedBatched", "cublasTSTgemvStridedBatched",
                   "cublasSgemvStridedBatched", "cublasGemmStridedBatchedEx"):
            getattr(L, fn).restype = c_int
        self.handle = c_void_p()
        self._check(L.cublasCreate_v2(byref(self.handle)), "cublasCreate")
        v = c_int()
        self._check(L.cublasGetVersion_v2(self.handle, byref(v)), "cublasGetVersion")
        self.version = v.value
        self.workspace_ptr = workspace_ptr

    @staticmethod
    def _check(status: int, what: str) -> None:
        if status != 0:
            raise RuntimeError(f"{what} failed with cublasStatus_t {status}")

    def set_stream(self, stream: int) -> None:
        """Queue on stream. cublasSetStream resets the workspace, so the fixed one (with
        which cuBLAS allocates nothing while a graph is captured) is set again after it."""
        self._check(self.lib.cublasSetStream_v2(self.handle, stream), "cublasSetStream")
        if self.workspace_ptr:
            self._check(self.lib.cublasSetWorkspace_v2(self.handle, self.workspace_ptr, WORKSPACE_BYTES),
                        "cublasSetWorkspace")

    def entry_points(self, dtype: str, batch: int = 1) -> list[str]:
        """The GEMV-capable entry points for a dtype (strided-batched ones for a batch)."""
        if batch > 1:
            return {"float32": ["SgemvStridedBatched", "GemmStridedBatchedEx"],
                    "float16": ["HSHgemvStridedBatched", "GemmStridedBatchedEx"],
                    "bfloat16": ["TSTgemvStridedBatched", "GemmStridedBatchedEx"]}[dtype]
        return {"float32": ["Sgemv", "GemmEx"], "float16": ["HSHgemvStridedBatched", "GemmEx"],
                "bfloat16": ["TSTgemvStridedBatched", "GemmEx"]}[dtype]

    def gemv(self, entry: str, dtype: str, m: int, k: int, A: int, lda: int, x: int, y: int,
             alpha: float = 1.0, beta: float = 0.0, *, trans: bool = False, batch: int = 1, stride_a: int = 0,
             stride_x: int = 0, stride_y: int = 0) -> None:
        """y = alpha * op(A) @ x + beta * y, A row-major M x K: cuBLAS (column-major) sees the
        K x M matrix A^T, so our op N is its OP_T and our op T its OP_N. Batched entries
        take the batch strides (elements)."""
        L, h = self.lib, self.handle
        a, b = c_float(alpha), c_float(beta)
        op = OP_N if trans else OP_T
        ny = k if trans else m  # outputs
        nx = m if trans else k
        t = CUDA_TYPES[dtype]
        if entry == "Sgemv":
            st = L.cublasSgemv_v2(h, op, k, m, byref(a), A, lda, x, 1, byref(b), y, 1)
        elif entry == "GemmEx":  # C (ny x 1) = op(B) (ny x nx) @ x (nx x 1)
            st = L.cublasGemmEx(h, op, OP_N, ny, 1, nx, ctypes.addressof(a), A, t, lda, x, t, nx,
                                ctypes.addressof(b), y, t, ny, COMPUTE_32F, GEMM_DEFAULT)
        elif entry == "GemmStridedBatchedEx":
            st = L.cublasGemmStridedBatchedEx(h, op, OP_N, ny, 1, nx, ctypes.addressof(a), A, t, lda, stride_a, x, t,
                                              nx, stride_x, ctypes.addressof(b), y, t, ny, stride_y, batch,
                                              COMPUTE_32F, GEMM_DEFAULT)
        else:
            fn = getattr(L, "cublas" + entry)
            st = fn(h, op, k, m, byref(a), A, lda, stride_a, x, 1, stride_x, byref(b), y, 1, stride_y, batch)
        self._check(st, entry)
