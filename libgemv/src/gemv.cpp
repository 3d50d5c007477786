// The C entry points: argument checks (in the contract's order: values, then NULLs,
// then the device, then what the pointers point at), BLAS quick returns, then the
// dispatcher or the forced config. Also status strings and the device helpers.
#include <algorithm>
#include <atomic>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "internal.h"

namespace libgemv {

namespace {
thread_local char g_error[512] = "";

// Device properties the dispatcher needs, cached per device (read once, lock-free).
constexpr int kMaxDevices = 64;
std::atomic<int> g_sm_count[kMaxDevices];
std::atomic<int> g_cc_major[kMaxDevices];

// A device attribute whose valid values are >= 1 (0 marks "not read yet"); 0 when the
// device is out of range or the attribute cannot be read.
int cached_attribute(std::atomic<int> (&cache)[kMaxDevices], cudaDeviceAttr attr, int device) {
    if (device < 0 || device >= kMaxDevices) return 0;
    int v = cache[device].load(std::memory_order_relaxed);
    if (v == 0) {
        if (cudaDeviceGetAttribute(&v, attr, device) != cudaSuccess) {
            cudaGetLastError();
            return 0;
        }
        cache[device].store(v, std::memory_order_relaxed);
    }
    return v;
}
} // namespace

int sm_count(int device) {
    if (device < 0 || device >= kMaxDevices) return 0;
    const int v = cached_attribute(g_sm_count, cudaDevAttrMultiProcessorCount, device);
    return v > 0 ? v : 1;
}

bool pdl_supported(int device) {
    static const bool disabled = [] {
        const char *e = std::getenv("GEMV_PDL");
        return e && std::strcmp(e, "0") == 0;
    }();
    return !disabled && cached_attribute(g_cc_major, cudaDevAttrComputeCapabilityMajor, device) >= 9;
}

int prefetch_kb_per_sm() {
    static const int n = [] {
        const char *e = std::getenv("GEMV_PREFETCH_KB_PER_SM");
        return e ? std::max(0, std::atoi(e)) : 64; // see registry.cpp's launch and benchmarks/NOTES.md
    }();
    return n;
}

void set_error(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(g_error, sizeof g_error, fmt, ap);
    va_end(ap);
}

void clear_error() { g_error[0] = '\0'; }

// Maps a failed CUDA call to a status, clears the (non-sticky) error state, and names
// the cause in the detail message.
gemv_status_t cuda_failure(cudaError_t e, const char *what) {
    cudaGetLastError();
    switch (e) {
    case cudaErrorNoDevice:
        set_error("%s: no CUDA device is visible (cudaErrorNoDevice); check the GPU, the driver and "
                  "CUDA_VISIBLE_DEVICES", what);
        return GEMV_STATUS_NO_DEVICE;
    case cudaErrorInsufficientDriver:
    case cudaErrorSystemDriverMismatch:
    case cudaErrorCallRequiresNewerDriver:
        set_error("%s: no usable CUDA driver (%s: %s); libcuda.so.1 is missing or older than the CUDA "
                  "runtime %d this library was built with", what, cudaGetErrorName(e), cudaGetErrorString(e),
                  CUDART_VERSION);
        return GEMV_STATUS_NO_DRIVER;
    case cudaErrorMemoryAllocation:
        set_error("%s: out of device memory", what);
        return GEMV_STATUS_ALLOC_FAILED;
    default:
        set_error("%s failed: %s (%s)", what, cudaGetErrorString(e), cudaGetErrorName(e));
        return GEMV_STATUS_CUDA_ERROR;
    }
}

// A launch into another device's stream runs on that device (seen with CUDA 13 on two
// H200s), where this call's pointers are an illegal address: a sticky error. So the stream
// must be the current device's. The default streams always are; with one device every
// stream is, and nothing is queried. cudaStreamGetDevice (CUDA 12.8 and up) is refused on
// a capturing stream and would end its capture, so a capturing stream is not checked.
gemv_status_t check_stream_device(cudaStream_t stream, int device) {
#if CUDART_VERSION >= 12080
    if (stream == nullptr || stream == cudaStreamLegacy || stream == cudaStreamPerThread) return GEMV_STATUS_SUCCESS;
    static const int devices = [] {
        int n = 0;
        if (cudaGetDeviceCount(&n) != cudaSuccess) cudaGetLastError();
        return n;
    }();
    if (devices == 1) return GEMV_STATUS_SUCCESS;
    cudaStreamCaptureStatus capture = cudaStreamCaptureStatusNone;
    cudaError_t e = cudaStreamIsCapturing(stream, &capture);
    if (e != cudaSuccess) return cuda_failure(e, "cudaStreamIsCapturing(stream)");
    if (capture != cudaStreamCaptureStatusNone) return GEMV_STATUS_SUCCESS;
    int owner = -1;
    if ((e = cudaStreamGetDevice(stream, &owner)) != cudaSuccess) return cuda_failure(e, "cudaStreamGetDevice(stream)");
    if (owner != device) {
        set_error("stream = %p belongs to device %d, but the current device is %d", static_cast<void *>(stream),
                  owner, device);
        return GEMV_STATUS_INVALID_VALUE;
    }
#else
    (void)stream, (void)device;
#endif
    return GEMV_STATUS_SUCCESS;
}

gemv_status_t current_device(int *device) {
    // Initialises the runtime on first use: no driver or no device fails here.
    cudaError_t e = cudaGetDevice(device);
    return e == cudaSuccess ? GEMV_STATUS_SUCCESS : cuda_failure(e, "cudaGetDevice");
}

Problem make_problem(const gemv_args_t &a) {
    Problem pb{};
    pb.op = (gemv_op_t)a.op;
    pb.a_type = pb.x_type = pb.y_type = (gemv_dtype_t)a.dtype;
    pb.m = a.m;
    pb.k = a.k;
    pb.lda = a.lda;
    pb.batch = a.batch > 1 ? a.batch : 1;
    pb.stride_a = a.stride_a;
    pb.stride_x = a.stride_x;
    pb.stride_y = a.stride_y;
    pb.alpha = a.alpha;
    pb.beta = a.beta;
    pb.A = a.A;
    pb.x = a.x;
    pb.y = a.y;
    pb.incx = a.incx;
    pb.incy = a.incy;
    // Reference BLAS: with a negative increment the vector starts at its far end.
    const size_t esz = dtype_size(pb.dtype());
    const int64_t nx = pb.len_x(), ny = pb.len_y();
    // (n > 1 only: -inc overflows for INT64_MIN, which a one-element vector may have; for
    // n > 1 the extent check has bounded (n-1) * |inc| * size by INT64_MAX.)
    pb.x_first = a.x ? static_cast<const char *>(a.x) + (a.incx < 0 && nx > 1 ? (nx - 1) * -a.incx * (int64_t)esz : 0)
                     : nullptr;
    pb.y_first = a.y ? static_cast<char *>(a.y) + (a.incy < 0 && ny > 1 ? (ny - 1) * -a.incy * (int64_t)esz : 0)
                     : nullptr;
    pb.workspace = a.workspace;
    pb.workspace_bytes = a.workspace ? a.workspace_bytes : 0;
    pb.stream = reinterpret_cast<cudaStream_t>(a.stream);
    if (a.qweight) pb.qw = *a.qweight;
    return pb;
}

const char *dtype_name(gemv_dtype_t t) {
    switch (t) {
    case GEMV_DTYPE_F32: return "float32";
    case GEMV_DTYPE_F16: return "float16";
    case GEMV_DTYPE_BF16: return "bfloat16";
    }
    return "unknown";
}

namespace {

gemv_status_t invalid(const char *fmt, long long v) {
    set_error(fmt, v);
    return GEMV_STATUS_INVALID_VALUE;
}

using wide = __int128;
constexpr wide kMaxBytes = INT64_MAX;

// Bytes from the lowest to the highest element of n entries at step inc (0 when empty).
wide span_bytes(int64_t n, int64_t inc, size_t esz) {
    return n > 0 ? ((wide)(n - 1) * (inc < 0 ? -(wide)inc : (wide)inc) + 1) * (wide)esz : 0;
}

// Checks of values alone, before any pointer or the GPU is looked at.
gemv_status_t check_values(const gemv_args_t &a) {
    if (a.op != GEMV_OP_N && a.op != GEMV_OP_T)
        return invalid("op = %lld: must be GEMV_OP_N (0) or GEMV_OP_T (1)", a.op);
    if (a.dtype != GEMV_DTYPE_F32 && a.dtype != GEMV_DTYPE_F16 && a.dtype != GEMV_DTYPE_BF16)
        return invalid("dtype = %lld: must be GEMV_DTYPE_F32, _F16 or _BF16", a.dtype);
    const int64_t m = a.m, k = a.k;
    if (m < 0) return invalid("m = %lld: must be >= 0", m);
    if (k < 0) return invalid("k = %lld: must be >= 0", k);
    if (a.qweight) {
        gemv_status_t st = check_qmatrix(a.qweight, "W");
        if (st != GEMV_STATUS_SUCCESS) return st;
        const gemv_qmatrix_t &w = *a.qweight;
        if (a.op != GEMV_OP_N) return invalid("op = %lld: quantized weights take GEMV_OP_N only", a.op);
        if (a.batch > 1) return invalid("batch = %lld: quantized weights take single products (batch 0 or 1)", a.batch);
        if (a.dtype != w.dtype) {
            set_error("dtype = %s, but W->dtype = %s: x, y and the scales share one type",
                      dtype_name((gemv_dtype_t)a.dtype), dtype_name((gemv_dtype_t)w.dtype));
            return GEMV_STATUS_INVALID_VALUE;
        }
        if (m != w.m || k != w.k) {
            set_error("m, k = %lld, %lld, but the quantized W is %lld x %lld", (long long)m, (long long)k, (long long)w.m,
                      (long long)w.k);
            return GEMV_STATUS_INVALID_VALUE;
        }
        if (a.A) return set_error("A must be NULL when qweight is given (the weights are qweight)"), GEMV_STATUS_INVALID_VALUE;
    } else if (a.lda < (k > 1 ? k : 1)) {
        set_error("lda = %lld: must be >= max(1, k) = %lld", (long long)a.lda, (long long)(k > 1 ? k : 1));
        return GEMV_STATUS_INVALID_VALUE;
    }
    if (a.incx == 0) return invalid("incx = %lld: must be nonzero", a.incx);
    if (a.incy == 0) return invalid("incy = %lld: must be nonzero", a.incy);
    if (a.batch < 0) return invalid("batch = %lld: must be >= 0", a.batch);
    // Every byte offset a kernel forms must fit in int64, batch strides included.
    const size_t esz = dtype_size((gemv_dtype_t)a.dtype);
    const int64_t nx = a.op == GEMV_OP_N ? k : m, ny = a.op == GEMV_OP_N ? m : k;
    const wide extent_a = m > 0 && k > 0 && !a.qweight ? ((wide)(m - 1) * a.lda + k) * (wide)esz : 0;
    const wide extent_x = span_bytes(nx, a.incx, esz), extent_y = span_bytes(ny, a.incy, esz);
    const int64_t batch = a.batch > 1 ? a.batch : 1;
    const struct { const char *name; wide extent; int64_t stride; } ops[] = {
        {"A", extent_a, a.stride_a}, {"x", extent_x, a.stride_x}, {"y", extent_y, a.stride_y}};
    for (const auto &o : ops) {
        const wide reach = o.extent + (batch > 1 ? span_bytes(batch, o.stride, esz) - (wide)esz : 0);
        if (reach > kMaxBytes) {
            set_error("%s spans more than 2^63 bytes (sizes, lda, increments%s)", o.name,
                      batch > 1 ? ", batch and its stride" : "");
            return GEMV_STATUS_INVALID_VALUE;
        }
    }
    // Two products writing the same y would race: outputs must be disjoint, either as
    // blocks (|stride_y| past one product's span) or interleaved (|incy| past the batch's
    // span of stride_y, as in a transposed (batch, n) view).
    if (batch > 1 && ny > 0) {
        const wide sy = a.stride_y < 0 ? -(wide)a.stride_y : a.stride_y, iy = a.incy < 0 ? -(wide)a.incy : a.incy;
        const bool blocks = sy * (wide)esz >= extent_y, interleaved = ny == 1 ? sy > 0 : sy > 0 && iy >= (wide)(batch - 1) * sy + 1;
        if (!blocks && !interleaved) {
            set_error("stride_y = %lld with incy = %lld: outputs of different products overlap", (long long)a.stride_y,
                      (long long)a.incy);
            return GEMV_STATUS_INVALID_VALUE;
        }
    }
    return GEMV_STATUS_SUCCESS;
}

} // namespace

// Device memory (or managed, or mapped pinned host memory) on the current device.
gemv_status_t check_device_pointer(const void *p, const char *name, int device) {
    cudaPointerAttributes at{};
    cudaError_t e = cudaPointerGetAttributes(&at, p);
    if (e != cudaSuccess) {
        cudaGetLastError();
        set_error("%s = %p: not a pointer CUDA knows (%s)", name, p, cudaGetErrorName(e));
        return GEMV_STATUS_INVALID_POINTER;
    }
    switch (at.type) {
    case cudaMemoryTypeDevice:
        if (at.device != device) {
            set_error("%s = %p is on device %d, but the current device is %d", name, p, at.device, device);
            return GEMV_STATUS_INVALID_POINTER;
        }
        return GEMV_STATUS_SUCCESS;
    case cudaMemoryTypeManaged: return GEMV_STATUS_SUCCESS;
    case cudaMemoryTypeHost:
        if (at.devicePointer == p) return GEMV_STATUS_SUCCESS; // mapped pinned memory, same address
        set_error("%s = %p is pinned host memory that the device cannot address directly", name, p);
        return GEMV_STATUS_INVALID_POINTER;
    default:
        set_error("%s = %p is a host pointer; a device pointer is needed", name, p);
        return GEMV_STATUS_INVALID_POINTER;
    }
}

namespace {


gemv_status_t run(const gemv_args_t &a, const gemv_config_t *config) {
    gemv_status_t st;
    gemv_config_t c{};
    if (config && ((st = read_config(config, &c)) != GEMV_STATUS_SUCCESS || (st = validate_config(c)) != GEMV_STATUS_SUCCESS))
        return st;
    // Quick returns, as reference BLAS: nothing read or written.
    if (a.batch == 0 || a.m == 0 || a.k == 0 || (a.alpha == 0.f && a.beta == 1.f)) return GEMV_STATUS_SUCCESS;
    const bool reads_ax = a.alpha != 0.f;
    if (reads_ax && !a.A && !a.qweight) return set_error("A is NULL"), GEMV_STATUS_INVALID_POINTER;
    if (reads_ax && a.qweight && (st = check_qmatrix_pointers(*a.qweight, "W", -1)) != GEMV_STATUS_SUCCESS)
        return st;
    if (reads_ax && !a.x) return set_error("x is NULL"), GEMV_STATUS_INVALID_POINTER;
    if (!a.y) return set_error("y is NULL"), GEMV_STATUS_INVALID_POINTER;
    // An element that straddles its size's alignment faults the kernel (a sticky
    // misaligned-address error): refuse it here. Any element-aligned offset runs.
    const uintptr_t emask = dtype_size((gemv_dtype_t)a.dtype) - 1;
    const struct { const void *p; const char *name; bool used; } ptrs[] = {{a.A, "A", reads_ax}, {a.x, "x", reads_ax}, {a.y, "y", true}};
    for (const auto &o : ptrs)
        if (o.used && (reinterpret_cast<uintptr_t>(o.p) & emask)) {
            set_error("%s = %p is not aligned to its %zu-byte elements", o.name, o.p, (size_t)emask + 1);
            return GEMV_STATUS_INVALID_POINTER;
        }
    if (a.workspace && a.workspace_bytes && (reinterpret_cast<uintptr_t>(a.workspace) & 3u)) { // fp32 partials
        set_error("workspace = %p is not 4-byte aligned (it holds fp32 partial sums)", a.workspace);
        return GEMV_STATUS_INVALID_POINTER;
    }

    int device = 0;
    if ((st = current_device(&device)) != GEMV_STATUS_SUCCESS) return st;
    if ((st = check_stream_device(reinterpret_cast<cudaStream_t>(a.stream), device)) != GEMV_STATUS_SUCCESS) return st;
    if (!(a.flags & GEMV_FLAG_TRUSTED_POINTERS)) {
        if (reads_ax && !a.qweight && (st = check_device_pointer(a.A, "A", device)) != GEMV_STATUS_SUCCESS) return st;
        if (reads_ax && a.qweight && (st = check_qmatrix_pointers(*a.qweight, "W", device)) != GEMV_STATUS_SUCCESS)
            return st;
        if (reads_ax && (st = check_device_pointer(a.x, "x", device)) != GEMV_STATUS_SUCCESS) return st;
        if ((st = check_device_pointer(a.y, "y", device)) != GEMV_STATUS_SUCCESS) return st;
        if (a.workspace && a.workspace_bytes &&
            (st = check_device_pointer(a.workspace, "workspace", device)) != GEMV_STATUS_SUCCESS)
            return st;
    }

    Problem pb = make_problem(a);
    pb.device = device;
    pb.pdl = pdl_supported(device);
    if (!reads_ax) { // y = beta*y; A and x are never read
        cudaError_t e = launch_scale_y(pb.dtype(), output_map(pb), pb.beta, pb.stream, pb.pdl);
        return e == cudaSuccess ? GEMV_STATUS_SUCCESS : cuda_failure(e, "launching scale_y");
    }
    // The pool's buffer is only fetched once a config turns out to need one: most calls
    // do not, and pay nothing for it.
    const bool pool = (a.flags & GEMV_FLAG_LIBRARY_WORKSPACE) && !a.workspace;
    if (pool) {
        pb.workspace = kStandInWorkspace; // the pool's buffer, fetched below if needed
        pb.workspace_bytes = GEMV_WORKSPACE_RECOMMENDED_BYTES;
    }
    bool from_table = false;
    if (config) {
        if ((st = can_implement(c, pb)) != GEMV_STATUS_SUCCESS) return st;
    } else {
        c = select_config(pb, device, !(a.flags & GEMV_FLAG_NO_TABLE), &from_table);
        clear_error();
    }
    void *pooled = nullptr;
    if (pool && workspace_needed(c, pb) > 0) {
        bool capturing = false;
        if ((st = pool_workspace(device, pb.stream, &pooled, &pb.workspace_bytes, &capturing)) != GEMV_STATUS_SUCCESS)
            return st;
        pb.workspace = pooled;
        if (!pooled && !config) { // capturing (a graph must not hold pool memory) or all busy
            c = select_config(pb, device, !(a.flags & GEMV_FLAG_NO_TABLE), &from_table);
            clear_error();
        }
    } else if (pool) {
        pb.workspace = nullptr;
        pb.workspace_bytes = 0;
    }
    if (config) {
        const size_t need = workspace_needed(c, pb);
        if (need > pb.workspace_bytes) {
            set_error("%s needs %zu bytes of workspace for this problem; %zu given%s", variant_info(c.variant)->name,
                      need, pb.workspace_bytes,
                      pool && !pooled ? " (the library's pool lends none to a stream being captured)" : "");
            return GEMV_STATUS_INSUFFICIENT_WORKSPACE;
        }
    }
    if (log_level() >= GEMV_LOG_TRACE)
        log_message(GEMV_LOG_TRACE, "op %s %s batch %lld %lldx%lld lda %lld incx %lld incy %lld on device %d: %s "
                    "p=%d r=%d vector_loads=%d unroll=%d x_in_smem=%d split=%d (%s)", pb.op == GEMV_OP_T ? "T" : "N",
                    dtype_name(pb.dtype()), (long long)pb.batch, (long long)pb.m, (long long)pb.k, (long long)pb.lda,
                    (long long)pb.incx, (long long)pb.incy, device, variant_info(c.variant)->name, c.threads_per_row,
                    c.rows_per_block, c.vector_loads, c.unroll, c.x_in_smem, c.split_k,
                    config ? "caller's config" : from_table ? "tuned table" : "heuristic");
    st = launch(c, pb);
    if (pooled) {
        const gemv_status_t done = pool_workspace_done(device, pb.stream, pooled, st == GEMV_STATUS_SUCCESS);
        if (st == GEMV_STATUS_SUCCESS) st = done;
    }
    return st;
}


// Checked arguments, or the status of the first check that fails.
gemv_status_t run_checked(const gemv_args_t &in, const gemv_config_t *config) {
    clear_error();
    gemv_args_t a;
    gemv_status_t st = read_args(&in, &a);
    if (st == GEMV_STATUS_SUCCESS) st = guarded("gemv", [&] { return run(a, config); });
    // A failed launch is a real problem; a rejected argument is the caller's to handle.
    if (st != GEMV_STATUS_SUCCESS)
        log_message(st == GEMV_STATUS_CUDA_ERROR ? GEMV_LOG_ERROR : GEMV_LOG_INFO, "call failed: %s (%s)",
                    gemv_status_string(st), gemv_last_error());
    return st;
}

} // namespace

gemv_args_t blas_args(gemv_op_t op, gemv_dtype_t dtype, int64_t m, int64_t k, float alpha, const void *A, int64_t lda,
                      int64_t stride_a, const void *x, int64_t incx, int64_t stride_x, float beta, void *y,
                      int64_t incy, int64_t stride_y, int64_t batch, void *workspace, size_t workspace_bytes,
                      gemv_stream_t stream) {
    gemv_args_t a{};
    a.struct_size = sizeof a;
    a.op = op;
    a.dtype = dtype;
    a.m = m;
    a.k = k;
    a.alpha = alpha;
    a.beta = beta;
    a.A = A;
    a.lda = lda;
    a.x = x;
    a.incx = incx;
    a.y = y;
    a.incy = incy;
    a.workspace = workspace;
    a.workspace_bytes = workspace_bytes;
    a.stream = stream;
    a.batch = batch;
    a.stride_a = stride_a;
    a.stride_x = stride_x;
    a.stride_y = stride_y;
    return a;
}

gemv_status_t read_args(const gemv_args_t *in, gemv_args_t *out) {
    // 0.4's layout ends before qweight: its fields are read, qweight stays NULL.
    constexpr size_t kSize04 = offsetof(gemv_args_t, qweight);
    if (in->struct_size != sizeof(gemv_args_t) && in->struct_size != kSize04) {
        set_error("args->struct_size = %zu: expected sizeof(gemv_args_t) = %zu (or %zu, libgemv 0.4's)",
                  in->struct_size, sizeof(gemv_args_t), kSize04);
        return GEMV_STATUS_INVALID_VALUE;
    }
    *out = gemv_args_t{};
    memcpy(out, in, in->struct_size);
    out->struct_size = sizeof(gemv_args_t);
    return check_values(*out);
}

gemv_status_t problem_of(const gemv_args_t *in, Problem *pb) {
    if (!in) return set_error("args is NULL"), GEMV_STATUS_INVALID_POINTER;
    gemv_args_t a;
    gemv_status_t st = read_args(in, &a);
    if (st != GEMV_STATUS_SUCCESS) return st;
    if (!a.workspace && a.workspace_bytes) a.workspace = kStandInWorkspace;
    *pb = make_problem(a);
    return GEMV_STATUS_SUCCESS;
}

} // namespace libgemv

using namespace libgemv;

extern "C" {

int gemv_version(void) { return GEMV_VERSION; }

const char *gemv_status_string(gemv_status_t status) {
    switch (status) {
    case GEMV_STATUS_SUCCESS: return "success";
    case GEMV_STATUS_INVALID_VALUE: return "invalid value: a size, increment, leading dimension, enum or config is out of range";
    case GEMV_STATUS_INVALID_POINTER: return "invalid pointer: NULL, host or other-device pointer where device data is needed";
    case GEMV_STATUS_NOT_SUPPORTED: return "not supported: this config cannot run this shape or alignment";
    case GEMV_STATUS_INSUFFICIENT_WORKSPACE: return "insufficient workspace for this config";
    case GEMV_STATUS_NO_DEVICE: return "no CUDA device: the driver found no GPU";
    case GEMV_STATUS_NO_DRIVER: return "no CUDA driver: libcuda is missing or older than the CUDA runtime";
    case GEMV_STATUS_CUDA_ERROR: return "CUDA error";
    case GEMV_STATUS_ALLOC_FAILED: return "memory allocation failed (device memory, or host memory for a table or the workspace pool)";
    case GEMV_STATUS_TABLE_INVALID: return "invalid tuned table: it cannot be read, or is corrupt, truncated or names an unknown variant";
    case GEMV_STATUS_TABLE_MISMATCH: return "tuned table mismatch: made for another GPU, CUDA runtime, libgemv version or schema";
    case GEMV_STATUS_INTERNAL_ERROR: return "internal error: an unexpected failure inside libgemv";
    }
    return "unknown status";
}

const char *gemv_last_error(void) { return g_error; }

int gemv_variant_count(void) { return variant_count(); }

gemv_status_t gemv_variant_info(int index, gemv_variant_info_t *info) {
    clear_error();
    const gemv_variant_info_t *v = variant_info(index);
    if (!v) return invalid("index = %lld: not a registry index", index);
    if (!info) return set_error("info is NULL"), GEMV_STATUS_INVALID_POINTER;
    // 0.4's layout ends before weight_bits_mask: the fields it has are filled.
    constexpr size_t kSize04 = offsetof(gemv_variant_info_t, weight_bits_mask);
    if (info->struct_size != sizeof(gemv_variant_info_t) && info->struct_size != kSize04) {
        set_error("info->struct_size = %zu: expected sizeof(gemv_variant_info_t) = %zu (or %zu, libgemv 0.4's)",
                  info->struct_size, sizeof(gemv_variant_info_t), kSize04);
        return GEMV_STATUS_INVALID_VALUE;
    }
    const size_t size = info->struct_size;
    memcpy(info, v, size);
    info->struct_size = size;
    return GEMV_STATUS_SUCCESS;
}

gemv_status_t gemv(gemv_op_t op, gemv_dtype_t dtype, int64_t m, int64_t k, float alpha, const void *A, int64_t lda,
                   const void *x, int64_t incx, float beta, void *y, int64_t incy, void *workspace,
                   size_t workspace_bytes, gemv_stream_t stream) {
    return run_checked(blas_args(op, dtype, m, k, alpha, A, lda, 0, x, incx, 0, beta, y, incy, 0, 1, workspace,
                                 workspace_bytes, stream), nullptr);
}

gemv_status_t gemv_strided_batched(gemv_op_t op, gemv_dtype_t dtype, int64_t m, int64_t k, float alpha, const void *A,
                                   int64_t lda, int64_t stride_a, const void *x, int64_t incx, int64_t stride_x,
                                   float beta, void *y, int64_t incy, int64_t stride_y, int64_t batch,
                                   void *workspace, size_t workspace_bytes, gemv_stream_t stream) {
    return run_checked(blas_args(op, dtype, m, k, alpha, A, lda, stride_a, x, incx, stride_x, beta, y, incy, stride_y,
                                 batch, workspace, workspace_bytes, stream), nullptr);
}

gemv_status_t gemv_ex(const gemv_args_t *a, const gemv_config_t *config) {
    if (!a) {
        clear_error();
        set_error("args is NULL");
        return GEMV_STATUS_INVALID_POINTER;
    }
    return run_checked(*a, config);
}

gemv_status_t gemv_with_config(const gemv_config_t *config, gemv_op_t op, gemv_dtype_t dtype, int64_t m, int64_t k,
                               float alpha, const void *A, int64_t lda, const void *x, int64_t incx, float beta,
                               void *y, int64_t incy, void *workspace, size_t workspace_bytes,
                               gemv_stream_t stream) {
    if (!config) {
        clear_error();
        set_error("config is NULL");
        return GEMV_STATUS_INVALID_POINTER;
    }
    return run_checked(blas_args(op, dtype, m, k, alpha, A, lda, 0, x, incx, 0, beta, y, incy, 0, 1, workspace,
                                 workspace_bytes, stream), config);
}

namespace {

gemv_status_t select_config_ex(const gemv_args_t *a, gemv_config_t *config, int32_t *from_table) {
    if (!config) return set_error("config is NULL"), GEMV_STATUS_INVALID_POINTER;
    Problem pb;
    gemv_status_t st = problem_of(a, &pb);
    if (st != GEMV_STATUS_SUCCESS) return st;
    int device = 0;
    if ((st = current_device(&device)) != GEMV_STATUS_SUCCESS) return st;
    bool tabled = false;
    *config = select_config(pb, device, !(a->flags & GEMV_FLAG_NO_TABLE), &tabled);
    if (from_table) *from_table = tabled;
    clear_error();
    return GEMV_STATUS_SUCCESS;
}

} // namespace

gemv_status_t gemv_check_config(const gemv_config_t *config, const gemv_args_t *args) {
    clear_error();
    if (!config) return set_error("config is NULL"), GEMV_STATUS_INVALID_POINTER;
    gemv_config_t c;
    Problem pb;
    gemv_status_t st = problem_of(args, &pb);
    if (st == GEMV_STATUS_SUCCESS) st = read_config(config, &c);
    if (st == GEMV_STATUS_SUCCESS) st = validate_config(c);
    return st == GEMV_STATUS_SUCCESS ? can_implement(c, pb) : st;
}

// 0 with the detail set when args or config is invalid; SIZE_MAX when the need does not
// fit a size_t (no workspace can hold it).
size_t gemv_workspace_size(const gemv_config_t *config, const gemv_args_t *args) {
    clear_error();
    Problem pb;
    if (problem_of(args, &pb) != GEMV_STATUS_SUCCESS) return 0;
    if (!config) return GEMV_WORKSPACE_RECOMMENDED_BYTES;
    gemv_config_t c;
    if (read_config(config, &c) != GEMV_STATUS_SUCCESS || validate_config(c) != GEMV_STATUS_SUCCESS) return 0;
    return workspace_needed(c, pb);
}

gemv_status_t gemv_select_config_ex(const gemv_args_t *a, gemv_config_t *config, int32_t *from_table) {
    clear_error();
    return guarded("gemv_select_config_ex", [&] { return select_config_ex(a, config, from_table); });
}


gemv_status_t gemv_select_config(gemv_op_t op, gemv_dtype_t dtype, int64_t m, int64_t k, const void *A, int64_t lda,
                                 const void *x, int64_t incx, const void *y, int64_t incy, size_t workspace_bytes,
                                 gemv_config_t *config) {
    const gemv_args_t a = blas_args(op, dtype, m, k, 1.f, A, lda, 0, x, incx, 0, 0.f, const_cast<void *>(y), incy, 0,
                                    1, nullptr, workspace_bytes, nullptr);
    return gemv_select_config_ex(&a, config, nullptr);
}

gemv_status_t gemv_default_config(int variant, const gemv_args_t *args, gemv_config_t *config) {
    clear_error();
    const Operation *op = operation(variant);
    if (!op) return invalid("variant = %lld: not a variant id", variant);
    if (!config) return set_error("config is NULL"), GEMV_STATUS_INVALID_POINTER;
    Problem pb;
    gemv_status_t st = problem_of(args, &pb);
    if (st != GEMV_STATUS_SUCCESS) return st;
    if (!op->serves(pb)) {
        set_error("%s does not serve this problem", op->info.name);
        return GEMV_STATUS_NOT_SUPPORTED;
    }
    int device = 0;
    if ((st = current_device(&device)) != GEMV_STATUS_SUCCESS) return st;
    *config = default_config(*op, pb, sm_count(device));
    clear_error();
    return GEMV_STATUS_SUCCESS;
}

// ---- device helpers ----------------------------------------------------------------

gemv_status_t gemv_device_count(int *count) {
    clear_error();
    if (!count) return set_error("count is NULL"), GEMV_STATUS_INVALID_POINTER;
    cudaError_t e = cudaGetDeviceCount(count);
    if (e != cudaSuccess) {
        *count = 0;
        return cuda_failure(e, "cudaGetDeviceCount");
    }
    return GEMV_STATUS_SUCCESS;
}

gemv_status_t gemv_get_device(int *device) {
    clear_error();
    if (!device) return set_error("device is NULL"), GEMV_STATUS_INVALID_POINTER;
    return current_device(device);
}

gemv_status_t gemv_set_device(int device) {
    clear_error();
    cudaError_t e = cudaSetDevice(device);
    return e == cudaSuccess ? GEMV_STATUS_SUCCESS : cuda_failure(e, "cudaSetDevice");
}

gemv_status_t gemv_device_name(int device, char *buf, size_t len) {
    clear_error();
    if (!buf || !len) return set_error("buf is NULL or empty"), GEMV_STATUS_INVALID_POINTER;
    cudaDeviceProp prop;
    cudaError_t e = cudaGetDeviceProperties(&prop, device);
    if (e != cudaSuccess) return cuda_failure(e, "cudaGetDeviceProperties");
    snprintf(buf, len, "%s", prop.name);
    return GEMV_STATUS_SUCCESS;
}

gemv_status_t gemv_malloc(void **ptr, size_t bytes) {
    clear_error();
    if (!ptr) return set_error("ptr is NULL"), GEMV_STATUS_INVALID_POINTER;
    *ptr = nullptr;
    cudaError_t e = cudaMalloc(ptr, bytes ? bytes : 1);
    if (e != cudaSuccess) {
        *ptr = nullptr;
        gemv_status_t st = cuda_failure(e, "cudaMalloc");
        return st == GEMV_STATUS_CUDA_ERROR ? GEMV_STATUS_ALLOC_FAILED : st;
    }
    return GEMV_STATUS_SUCCESS;
}

gemv_status_t gemv_free(void *ptr) {
    clear_error();
    if (!ptr) return GEMV_STATUS_SUCCESS;
    cudaError_t e = cudaFree(ptr);
    return e == cudaSuccess ? GEMV_STATUS_SUCCESS : cuda_failure(e, "cudaFree");
}

gemv_status_t gemv_memcpy_to_device(void *dst, const void *src, size_t bytes) {
    clear_error();
    if (bytes && (!dst || !src)) return set_error("dst or src is NULL"), GEMV_STATUS_INVALID_POINTER;
    cudaError_t e = cudaMemcpy(dst, src, bytes, cudaMemcpyHostToDevice);
    return e == cudaSuccess ? GEMV_STATUS_SUCCESS : cuda_failure(e, "cudaMemcpy (host to device)");
}

gemv_status_t gemv_memcpy_to_host(void *dst, const void *src, size_t bytes) {
    clear_error();
    if (bytes && (!dst || !src)) return set_error("dst or src is NULL"), GEMV_STATUS_INVALID_POINTER;
    cudaError_t e = cudaMemcpy(dst, src, bytes, cudaMemcpyDeviceToHost);
    return e == cudaSuccess ? GEMV_STATUS_SUCCESS : cuda_failure(e, "cudaMemcpy (device to host)");
}

gemv_status_t gemv_stream_create(gemv_stream_t *stream) {
    clear_error();
    if (!stream) return set_error("stream is NULL"), GEMV_STATUS_INVALID_POINTER;
    cudaStream_t s = nullptr;
    cudaError_t e = cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
    if (e != cudaSuccess) return cuda_failure(e, "cudaStreamCreate");
    *stream = reinterpret_cast<gemv_stream_t>(s);
    return GEMV_STATUS_SUCCESS;
}

gemv_status_t gemv_stream_destroy(gemv_stream_t stream) {
    clear_error();
    cudaError_t e = cudaStreamDestroy(reinterpret_cast<cudaStream_t>(stream));
    return e == cudaSuccess ? GEMV_STATUS_SUCCESS : cuda_failure(e, "cudaStreamDestroy");
}

gemv_status_t gemv_stream_synchronize(gemv_stream_t stream) {
    clear_error();
    cudaError_t e = cudaStreamSynchronize(reinterpret_cast<cudaStream_t>(stream));
    return e == cudaSuccess ? GEMV_STATUS_SUCCESS : cuda_failure(e, "cudaStreamSynchronize");
}

gemv_status_t gemv_stream_wait(gemv_stream_t stream, gemv_stream_t producer) {
    clear_error();
    if (stream == producer) return GEMV_STATUS_SUCCESS;
    cudaEvent_t ev = nullptr;
    cudaError_t e = cudaEventCreateWithFlags(&ev, cudaEventDisableTiming);
    if (e != cudaSuccess) return cuda_failure(e, "cudaEventCreate");
    e = cudaEventRecord(ev, reinterpret_cast<cudaStream_t>(producer));
    if (e == cudaSuccess) e = cudaStreamWaitEvent(reinterpret_cast<cudaStream_t>(stream), ev, 0);
    cudaEventDestroy(ev); // the wait has already taken the recorded point
    return e == cudaSuccess ? GEMV_STATUS_SUCCESS : cuda_failure(e, "cudaStreamWaitEvent");
}

gemv_status_t gemv_stream_is_capturing(gemv_stream_t stream, int *capturing) {
    clear_error();
    if (!capturing) return set_error("capturing is NULL"), GEMV_STATUS_INVALID_POINTER;
    cudaStreamCaptureStatus cs = cudaStreamCaptureStatusNone;
    cudaError_t e = cudaStreamIsCapturing(reinterpret_cast<cudaStream_t>(stream), &cs);
    if (e != cudaSuccess) return cuda_failure(e, "cudaStreamIsCapturing");
    *capturing = cs == cudaStreamCaptureStatusActive;
    return GEMV_STATUS_SUCCESS;
}

} // extern "C"
