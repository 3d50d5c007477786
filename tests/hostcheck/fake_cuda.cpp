// A stand-in for the CUDA runtime and for the kernel launchers, so libgemv's host code (the
// checks, the dispatcher, the registry, the tables, the workspace pool) runs on a machine
// without a GPU, under AddressSanitizer, UBSan or ThreadSanitizer.
//
// The launchers do not run kernels: they check each launch plan (launch_plan.h, the same
// one the real launchers use) against the hardware limits, and every address the kernel
// would touch against the allocations this runtime handed out. A violation is counted and
// described (gemv_fake_violations, gemv_fake_violation_text); tests assert there are none.
//
// The fake world: GEMV_FAKE_DEVICES (default 0, so the library reports "no device" as on
// a CPU machine) H100s, or what gemv_fake_reset sets. Allocations up to 64 MiB are real
// host memory (copies work); larger ones are reserved address space that is never
// touched. Destroyed streams' handles are reused at once, as the driver may, while their
// ids (cudaStreamGetId) never are.
#include <cuda_runtime_api.h>
#include <sys/mman.h>

#include <atomic>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <new>
#include <string>
#include <vector>

#include "internal.h"
#include "launch_plan.h"

#define FAKE_API extern "C" __attribute__((visibility("default")))

namespace {

constexpr size_t kBackedLimit = 64u << 20;

struct Allocation {
    size_t bytes;
    bool backed;
    int device;
};

struct Stream {
    unsigned long long id;
    int device;
    bool capturing;
};

struct World {
    std::mutex mutex;
    bool ready = false;
    int devices = 0;
    int failing_props = -1; // a device whose properties cannot be read (an ECC error, a GPU off the bus)
    std::map<uintptr_t, Allocation> allocations;
    std::map<uintptr_t, Stream> streams;
    std::vector<uintptr_t> free_handles;
    uintptr_t next_handle = 0x10000;
    unsigned long long next_stream_id = 100;
    long launches = 0, violations = 0, waits = 0;
    std::string violation_text, log;
};

World &world() {
    static World *w = new World; // never destroyed: threads may still call at exit
    return *w;
}

void ensure_ready(World &w) {
    if (w.ready) return;
    const char *e = std::getenv("GEMV_FAKE_DEVICES");
    w.devices = e ? std::atoi(e) : 0;
    w.ready = true;
}

thread_local int t_device = 0;
thread_local cudaError_t t_last_error = cudaSuccess;
std::atomic<unsigned long long> g_thread_ids{0};
thread_local const unsigned long long t_per_thread_stream_id = 1000000 + ++g_thread_ids;

std::atomic<long> g_fail_new_after{-1};

void violation(World &w, const char *fmt, ...) {
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    ++w.violations;
    if (w.violation_text.size() < 8192) w.violation_text += std::string(buf) + "\n";
}

// Whether [p, p + bytes) lies inside one allocation (caller holds the mutex).
bool inside(World &w, uintptr_t p, uint64_t bytes) {
    auto it = w.allocations.upper_bound(p);
    if (it == w.allocations.begin()) return false;
    --it;
    return p >= it->first && p - it->first <= it->second.bytes && bytes <= it->second.bytes - (p - it->first);
}

bool backed(World &w, uintptr_t p) {
    auto it = w.allocations.upper_bound(p);
    return it != w.allocations.begin() && (--it)->second.backed;
}

// Elements reached by n entries at step inc, for batch products stride apart: the lowest
// and one past the highest offset, in elements (128-bit: the check must not wrap itself).
struct Span {
    __int128 lo, hi;
};
Span span(int64_t n, int64_t inc, int64_t batch, int64_t stride) {
    __int128 lo = 0, hi = 0;
    const __int128 last = (__int128)(n - 1) * inc, blast = (__int128)(batch - 1) * stride;
    lo += last < 0 ? last : 0;
    hi += last > 0 ? last : 0;
    lo += blast < 0 ? blast : 0;
    hi += blast > 0 ? blast : 0;
    return {lo, hi + 1};
}

void check_span(World &w, const char *kernel, const char *what, const void *base, Span s, size_t esz) {
    const __int128 lo = (__int128)(uintptr_t)base + s.lo * (__int128)esz;
    const __int128 bytes = (s.hi - s.lo) * (__int128)esz;
    if (lo < 0 || bytes < 0 || lo > (__int128)UINTPTR_MAX || bytes > (__int128)UINT64_MAX ||
        !inside(w, (uintptr_t)lo, (uint64_t)bytes))
        violation(w, "%s: %s reaches [%p + %lld, +%lld bytes), outside every allocation", kernel, what, base,
                  (long long)(s.lo * (__int128)esz), (long long)bytes);
}

bool aligned16(const void *p) { return ((uintptr_t)p & 15u) == 0; }

// n / d as the kernels divide by a DivideBy (common.cuh divided()), to check it on the host.
uint64_t divided(const libgemv::DivideBy &d, uint64_t n) {
    const uint64_t t = (uint64_t)(((unsigned __int128)d.magic * n) >> 64);
    return (t + ((n - t) >> d.shift1)) >> d.shift2;
}

void check_plan(World &w, const char *kernel, const libgemv::LaunchPlan &p, int max_threads) {
    const unsigned t = p.block.x * p.block.y * p.block.z;
    if (t < 32 || t > (unsigned)max_threads || t % 32)
        violation(w, "%s: %u threads a block (whole warps, at most %d)", kernel, t, max_threads);
    if (p.grid.x < 1 || p.grid.x > 0x7fffffffu || p.grid.y < 1 || p.grid.y > 65535 || p.grid.z < 1 || p.grid.z > 65535)
        violation(w, "%s: grid (%u, %u, %u) outside the limits", kernel, p.grid.x, p.grid.y, p.grid.z);
    if (p.dynamic_smem + p.static_smem > libgemv::kMaxSmemBytes)
        violation(w, "%s: %zu + %zu bytes of shared memory, more than %zu", kernel, p.dynamic_smem, p.static_smem,
                  libgemv::kMaxSmemBytes);
}

// A: batch products of m rows of k elements, lda apart, stride_a between products; with
// loads of aligned packs (pack bytes: 16 or 8; 0 for none) every row (and every K slice of
// slice elements) must start aligned to the pack.
void check_matrix(World &w, const char *kernel, const void *A, int64_t m, int64_t k, int64_t lda, int64_t batch,
                  int64_t stride_a, size_t esz, int pack, int64_t slice) {
    Span s = span(m, lda, batch, stride_a);
    s.hi += k - 1; // the last row's K elements
    check_span(w, kernel, "A", A, s, esz);
    if (pack && (((uintptr_t)A & (pack - 1)) || (m > 1 && lda * (int64_t)esz % pack) ||
                 (batch > 1 && stride_a * (int64_t)esz % pack) || (slice < k && slice * (int64_t)esz % pack)))
        violation(w, "%s: %d-byte loads of A on rows that are not %d-byte aligned", kernel, pack, pack);
}

void log_launch(World &w, const char *kernel, const libgemv::LaunchPlan &p, const void *acc) {
    ++w.launches;
    char buf[256];
    snprintf(buf, sizeof buf, "%s grid=%u,%u,%u block=%u smem=%zu acc=%p\n", kernel, p.grid.x, p.grid.y, p.grid.z,
             p.block.x, p.dynamic_smem + p.static_smem, acc);
    if (w.log.size() > (1u << 20)) w.log.clear();
    w.log += buf;
}

} // namespace

// ---- control, for tests ----------------------------------------------------------------

FAKE_API void gemv_fake_reset(int devices) {
    World &w = world();
    std::lock_guard<std::mutex> lock(w.mutex);
    w.ready = true;
    w.devices = devices;
    w.failing_props = -1;
    w.launches = w.violations = w.waits = 0;
    w.violation_text.clear();
    w.log.clear();
}
FAKE_API void gemv_fake_fail_props(int device) {
    World &w = world();
    std::lock_guard<std::mutex> lock(w.mutex);
    w.failing_props = device;
}
FAKE_API long gemv_fake_violations(void) { return world().violations; }
FAKE_API long gemv_fake_launches(void) { return world().launches; }
FAKE_API long gemv_fake_waits(void) { return world().waits; }
// The text is copied into buf (NUL-terminated); returns its full length.
FAKE_API size_t gemv_fake_violation_text(char *buf, size_t len) {
    World &w = world();
    std::lock_guard<std::mutex> lock(w.mutex);
    if (len) snprintf(buf, len, "%s", w.violation_text.c_str());
    return w.violation_text.size();
}
FAKE_API size_t gemv_fake_log(char *buf, size_t len) {
    World &w = world();
    std::lock_guard<std::mutex> lock(w.mutex);
    if (len) snprintf(buf, len, "%s", w.log.c_str());
    return w.log.size();
}
FAKE_API void gemv_fake_clear_log(void) {
    World &w = world();
    std::lock_guard<std::mutex> lock(w.mutex);
    w.log.clear();
}
// Bytes allocated with cudaMalloc and not freed.
FAKE_API size_t gemv_fake_live_bytes(void) {
    World &w = world();
    std::lock_guard<std::mutex> lock(w.mutex);
    size_t n = 0;
    for (const auto &a : w.allocations) n += a.second.bytes;
    return n;
}
// operator new throws std::bad_alloc after n more allocations (-1: never). Returns 0 where
// another operator new (a sanitizer's) is in charge and the injection cannot work.
FAKE_API int gemv_fake_fail_new_after(long n);
// (Weak: the checks also build against libgemv versions without the pool, to show that a
// test fails there.)
namespace libgemv {
int pool_size(int device) __attribute__((weak));
}
FAKE_API int gemv_libgemv_pool_size(int device) { return libgemv::pool_size ? libgemv::pool_size(device) : -1; }

// Injected allocation failures. A sanitizer's runtime brings its own operator new, which
// then wins over this one.
void *operator new(size_t n) {
    long left = g_fail_new_after.load(std::memory_order_relaxed);
    if (left >= 0) {
        if (left == 0) throw std::bad_alloc();
        g_fail_new_after.store(left - 1, std::memory_order_relaxed);
    }
    if (void *p = std::malloc(n ? n : 1)) return p;
    throw std::bad_alloc();
}
void operator delete(void *p) noexcept { std::free(p); }
void operator delete(void *p, size_t) noexcept { std::free(p); }

FAKE_API int gemv_fake_fail_new_after(long n) {
    g_fail_new_after.store(0);
    bool works = false;
    try {
        ::operator delete(::operator new(16)); // an explicit call: never elided, unlike new int
    } catch (const std::bad_alloc &) {
        works = true;
    }
    g_fail_new_after.store(works ? n : -1);
    return works;
}

// ---- the CUDA runtime calls libgemv makes ------------------------------------------------

extern "C" {

cudaError_t cudaGetLastError(void) {
    const cudaError_t e = t_last_error;
    t_last_error = cudaSuccess;
    return e;
}

const char *cudaGetErrorName(cudaError_t e) {
    switch (e) {
    case cudaSuccess: return "cudaSuccess";
    case cudaErrorNoDevice: return "cudaErrorNoDevice";
    case cudaErrorInvalidValue: return "cudaErrorInvalidValue";
    case cudaErrorInvalidDevice: return "cudaErrorInvalidDevice";
    case cudaErrorMemoryAllocation: return "cudaErrorMemoryAllocation";
    case cudaErrorECCUncorrectable: return "cudaErrorECCUncorrectable";
    default: return "cudaErrorUnknown";
    }
}

const char *cudaGetErrorString(cudaError_t e) {
    switch (e) {
    case cudaErrorNoDevice: return "no CUDA-capable device is detected (stand-in runtime)";
    case cudaErrorECCUncorrectable: return "uncorrectable ECC error encountered (stand-in runtime)";
    default: return cudaGetErrorName(e);
    }
}

static cudaError_t fail(cudaError_t e) { return t_last_error = e; }

static int device_count() {
    World &w = world();
    std::lock_guard<std::mutex> lock(w.mutex);
    ensure_ready(w);
    return w.devices;
}

cudaError_t cudaGetDeviceCount(int *count) {
    *count = device_count();
    if (*count == 0) return fail(cudaErrorNoDevice);
    return cudaSuccess;
}

cudaError_t cudaGetDevice(int *device) {
    if (device_count() == 0) return fail(cudaErrorNoDevice);
    *device = t_device;
    return cudaSuccess;
}

cudaError_t cudaSetDevice(int device) {
    const int n = device_count();
    if (n == 0) return fail(cudaErrorNoDevice);
    if (device < 0 || device >= n) return fail(cudaErrorInvalidDevice);
    t_device = device;
    return cudaSuccess;
}

cudaError_t cudaDeviceGetAttribute(int *value, enum cudaDeviceAttr attr, int device) {
    const int n = device_count();
    if (device < 0 || device >= n) return fail(n ? cudaErrorInvalidDevice : cudaErrorNoDevice);
    switch (attr) {
    case cudaDevAttrMultiProcessorCount: *value = 132; break;
    case cudaDevAttrComputeCapabilityMajor: *value = 9; break;
    case cudaDevAttrComputeCapabilityMinor: *value = 0; break;
    default: *value = 1; break;
    }
    return cudaSuccess;
}

cudaError_t cudaGetDeviceProperties(struct cudaDeviceProp *prop, int device) {
    World &w = world();
    {
        std::lock_guard<std::mutex> lock(w.mutex);
        ensure_ready(w);
        if (device < 0 || device >= w.devices) return fail(w.devices ? cudaErrorInvalidDevice : cudaErrorNoDevice);
        if (device == w.failing_props) return fail(cudaErrorECCUncorrectable);
    }
    std::memset(prop, 0, sizeof *prop);
    snprintf(prop->name, sizeof prop->name, "NVIDIA H100 80GB HBM3");
    prop->multiProcessorCount = 132;
    prop->major = 9;
    prop->minor = 0;
    prop->l2CacheSize = 50 << 20;
    prop->sharedMemPerBlockOptin = 227 << 10;
    prop->totalGlobalMem = (size_t)80 << 30;
    prop->pciBusID = device;
    return cudaSuccess;
}

cudaError_t cudaDriverGetVersion(int *v) {
    *v = CUDART_VERSION;
    return cudaSuccess;
}

cudaError_t cudaRuntimeGetVersion(int *v) {
    *v = CUDART_VERSION;
    return cudaSuccess;
}

cudaError_t cudaMalloc(void **p, size_t bytes) {
    World &w = world();
    {
        std::lock_guard<std::mutex> lock(w.mutex);
        ensure_ready(w);
        if (!w.devices) return fail(cudaErrorNoDevice);
    }
    if (!bytes) bytes = 1;
    const bool real = bytes <= kBackedLimit;
    void *q = real ? std::calloc(1, bytes)
                   : mmap(nullptr, bytes, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (!q || q == MAP_FAILED) return fail(cudaErrorMemoryAllocation);
    std::lock_guard<std::mutex> lock(w.mutex);
    w.allocations[(uintptr_t)q] = {bytes, real, t_device};
    *p = q;
    return cudaSuccess;
}

cudaError_t cudaFree(void *p) {
    if (!p) return cudaSuccess;
    World &w = world();
    std::lock_guard<std::mutex> lock(w.mutex);
    auto it = w.allocations.find((uintptr_t)p);
    if (it == w.allocations.end()) {
        violation(w, "cudaFree(%p): not an allocation", p);
        return fail(cudaErrorInvalidValue);
    }
    if (it->second.backed) std::free(p);
    else munmap(p, it->second.bytes);
    w.allocations.erase(it);
    return cudaSuccess;
}

cudaError_t cudaMemcpy(void *dst, const void *src, size_t n, enum cudaMemcpyKind kind) {
    World &w = world();
    std::lock_guard<std::mutex> lock(w.mutex);
    const void *dev = kind == cudaMemcpyHostToDevice ? dst : src;
    if (n && (!inside(w, (uintptr_t)dev, n) || !backed(w, (uintptr_t)dev))) {
        violation(w, "cudaMemcpy: %zu bytes at %p, outside every (backed) allocation", n, dev);
        return fail(cudaErrorInvalidValue);
    }
    if (n) std::memcpy(dst, src, n);
    return cudaSuccess;
}

cudaError_t cudaMemcpyAsync(void *dst, const void *src, size_t n, enum cudaMemcpyKind kind, cudaStream_t) {
    return cudaMemcpy(dst, src, n, kind);
}

cudaError_t cudaMemsetAsync(void *p, int value, size_t n, cudaStream_t) {
    World &w = world();
    std::lock_guard<std::mutex> lock(w.mutex);
    if (n && !inside(w, (uintptr_t)p, n)) {
        violation(w, "cudaMemsetAsync: %zu bytes at %p, outside every allocation", n, p);
        return fail(cudaErrorInvalidValue);
    }
    if (n && backed(w, (uintptr_t)p)) std::memset(p, value, n);
    return cudaSuccess;
}

cudaError_t cudaPointerGetAttributes(struct cudaPointerAttributes *at, const void *p) {
    World &w = world();
    std::lock_guard<std::mutex> lock(w.mutex);
    std::memset(at, 0, sizeof *at);
    auto it = w.allocations.upper_bound((uintptr_t)p);
    if (inside(w, (uintptr_t)p, 0)) {
        at->type = cudaMemoryTypeDevice;
        at->device = (--it)->second.device;
        at->devicePointer = const_cast<void *>(p);
    } else {
        at->type = cudaMemoryTypeUnregistered;
        at->hostPointer = const_cast<void *>(p);
    }
    return cudaSuccess;
}

static bool special(cudaStream_t s) { return s == nullptr || s == cudaStreamLegacy || s == cudaStreamPerThread; }

cudaError_t cudaStreamCreateWithFlags(cudaStream_t *s, unsigned int) {
    World &w = world();
    std::lock_guard<std::mutex> lock(w.mutex);
    uintptr_t h;
    if (!w.free_handles.empty()) { // reuse a destroyed stream's handle, as the driver may
        h = w.free_handles.back();
        w.free_handles.pop_back();
    } else {
        h = w.next_handle += 0x100;
    }
    w.streams[h] = {w.next_stream_id++, t_device, false};
    *s = reinterpret_cast<cudaStream_t>(h);
    return cudaSuccess;
}

cudaError_t cudaStreamDestroy(cudaStream_t s) {
    World &w = world();
    std::lock_guard<std::mutex> lock(w.mutex);
    if (!w.streams.erase((uintptr_t)s)) return fail(cudaErrorInvalidValue);
    w.free_handles.push_back((uintptr_t)s);
    return cudaSuccess;
}

static Stream *find_stream(World &w, cudaStream_t s) {
    auto it = w.streams.find((uintptr_t)s);
    return it == w.streams.end() ? nullptr : &it->second;
}

cudaError_t cudaStreamGetId(cudaStream_t s, unsigned long long *id) {
    if (s == nullptr || s == cudaStreamLegacy) return *id = 1, cudaSuccess;
    if (s == cudaStreamPerThread) return *id = t_per_thread_stream_id, cudaSuccess;
    World &w = world();
    std::lock_guard<std::mutex> lock(w.mutex);
    Stream *st = find_stream(w, s);
    if (!st) return fail(cudaErrorInvalidValue);
    *id = st->id;
    return cudaSuccess;
}

cudaError_t cudaStreamGetDevice(cudaStream_t s, int *device) {
    if (special(s)) return *device = t_device, cudaSuccess;
    World &w = world();
    std::lock_guard<std::mutex> lock(w.mutex);
    Stream *st = find_stream(w, s);
    if (!st) return fail(cudaErrorInvalidValue);
    *device = st->device;
    return cudaSuccess;
}

cudaError_t cudaStreamIsCapturing(cudaStream_t s, enum cudaStreamCaptureStatus *status) {
    *status = cudaStreamCaptureStatusNone;
    if (special(s)) return cudaSuccess;
    World &w = world();
    std::lock_guard<std::mutex> lock(w.mutex);
    Stream *st = find_stream(w, s);
    if (!st) return fail(cudaErrorInvalidValue);
    if (st->capturing) *status = cudaStreamCaptureStatusActive;
    return cudaSuccess;
}

cudaError_t cudaStreamBeginCapture(cudaStream_t s, enum cudaStreamCaptureMode) {
    World &w = world();
    std::lock_guard<std::mutex> lock(w.mutex);
    Stream *st = find_stream(w, s);
    if (!st) return fail(cudaErrorStreamCaptureUnsupported);
    st->capturing = true;
    return cudaSuccess;
}

cudaError_t cudaStreamEndCapture(cudaStream_t s, cudaGraph_t *g) {
    World &w = world();
    std::lock_guard<std::mutex> lock(w.mutex);
    Stream *st = find_stream(w, s);
    if (!st || !st->capturing) return fail(cudaErrorIllegalState);
    st->capturing = false;
    *g = reinterpret_cast<cudaGraph_t>(new int(0));
    return cudaSuccess;
}

cudaError_t cudaGraphInstantiate(cudaGraphExec_t *e, cudaGraph_t, unsigned long long) {
    *e = reinterpret_cast<cudaGraphExec_t>(new int(0));
    return cudaSuccess;
}
cudaError_t cudaGraphDestroy(cudaGraph_t g) {
    delete reinterpret_cast<int *>(g);
    return cudaSuccess;
}
cudaError_t cudaGraphExecDestroy(cudaGraphExec_t e) {
    delete reinterpret_cast<int *>(e);
    return cudaSuccess;
}
cudaError_t cudaGraphLaunch(cudaGraphExec_t, cudaStream_t) { return cudaSuccess; }
cudaError_t cudaStreamSynchronize(cudaStream_t) { return cudaSuccess; }

cudaError_t cudaEventCreate(cudaEvent_t *e) {
    *e = reinterpret_cast<cudaEvent_t>(new int(0));
    return cudaSuccess;
}
cudaError_t cudaEventCreateWithFlags(cudaEvent_t *e, unsigned int) { return cudaEventCreate(e); }
cudaError_t cudaEventDestroy(cudaEvent_t e) {
    delete reinterpret_cast<int *>(e);
    return cudaSuccess;
}
cudaError_t cudaEventRecord(cudaEvent_t e, cudaStream_t) {
    if (!e) return fail(cudaErrorInvalidResourceHandle);
    return cudaSuccess;
}
cudaError_t cudaEventSynchronize(cudaEvent_t) { return cudaSuccess; }
cudaError_t cudaEventElapsedTime(float *ms, cudaEvent_t, cudaEvent_t) {
    *ms = 0.001f;
    return cudaSuccess;
}
cudaError_t cudaStreamWaitEvent(cudaStream_t, cudaEvent_t e, unsigned int) {
    if (!e) return fail(cudaErrorInvalidResourceHandle);
    World &w = world();
    std::lock_guard<std::mutex> lock(w.mutex);
    ++w.waits;
    return cudaSuccess;
}

} // extern "C"

// ---- the launchers: plans and addresses checked, nothing run ----------------------------

namespace libgemv {

cudaError_t launch_rows(const char *kernel, const RowLaunch &L) {
    World &w = world();
    std::lock_guard<std::mutex> lock(w.mutex);
    const RowArgs &a = L.args;
    const LaunchPlan p = row_plan(L);
    const size_t esz = dtype_size(L.dtype);
    check_plan(w, kernel, p, max_block_threads(L.unroll));
    log_launch(w, kernel, p, a.acc);
    if (a.m < 1 || a.k < 1 || a.rows < a.m || a.rows % a.m)
        return violation(w, "%s: rows %lld is not a multiple of m %lld", kernel, (long long)a.rows, (long long)a.m),
               cudaSuccess;
    const int64_t batch = a.rows / a.m;
    if (p.block.x != (unsigned)(a.rows_per_block << a.p_log2))
        violation(w, "%s: block %u is not rows_per_block << p_log2", kernel, p.block.x);
    if (L.splits < 1 || a.k_chunk < 1 || (int64_t)(L.splits - 1) * a.k_chunk >= a.k ||
        (__int128)L.splits * a.k_chunk < a.k)
        violation(w, "%s: %d slices of %lld do not tile K = %lld", kernel, L.splits, (long long)a.k_chunk,
                  (long long)a.k);
    // The batched kernels' row -> product map (DivideBy) on the rows where it could go wrong.
    if (batch > 1)
        for (int64_t g : {int64_t(0), a.m - 1, a.m, a.rows / 2, a.rows - 1}) {
            const int64_t b = (int64_t)divided(a.m_div, (uint64_t)g);
            if (b != g / a.m) violation(w, "%s: row %lld maps to product %lld, not %lld", kernel, (long long)g,
                                        (long long)b, (long long)(g / a.m));
        }
    // Realigned rows (loads 2) read whole aligned packs inside each row: any alignment.
    const int pack = L.loads == libgemv::kLoadsAligned ? 16 : L.loads == libgemv::kLoadsAligned8 ? 8 : 0;
    check_matrix(w, kernel, a.A, a.m, a.k, a.lda, batch, a.stride_a, esz, pack, L.splits > 1 ? a.k_chunk : a.k);
    if ((reinterpret_cast<uintptr_t>(a.A) | reinterpret_cast<uintptr_t>(a.x) | reinterpret_cast<uintptr_t>(a.y)) &
        (esz - 1))
        violation(w, "%s: an operand not aligned to its elements", kernel);
    if (L.loads == libgemv::kLoadsPhasedCopies) // every phase's copy, each read in whole packs
        check_span(w, kernel, "x's phase copies", a.x, {0, (__int128)a.x_phase_stride * (16 / (int64_t)esz)}, esz);
    else
        check_span(w, kernel, "x", a.x, span(a.k, a.incx, batch, a.stride_x), esz);
    switch (a.epilogue) {
    case Epilogue::kStore: check_span(w, kernel, "y", a.y, span(a.m, a.incy, batch, a.stride_y), esz); break;
    case Epilogue::kAtomic: check_span(w, kernel, "acc", a.acc, span(a.rows, a.acc_inc, 1, 0), sizeof(float)); break;
    case Epilogue::kPartial:
        check_span(w, kernel, "partials", a.acc, {0, (__int128)L.splits * a.rows}, sizeof(float));
        break;
    }
    if (pack && !L.x_in_smem &&
        (((uintptr_t)a.x & (pack - 1)) || a.incx != 1 || (batch > 1 && a.stride_x * (int64_t)esz % pack)))
        violation(w, "%s: %d-byte loads of x that is not %d-byte aligned and contiguous", kernel, pack, pack);
    if (L.loads == libgemv::kLoadsRealigned && !L.x_in_smem && a.incx != 1)
        violation(w, "%s: realigned 16-byte loads of a strided x", kernel);
    if (L.x_in_smem && batch > 1 && a.stride_x != 0)
        violation(w, "%s: one staged x for a batch of x", kernel);
    // Phased rows: every block's rows share one phase, and x staged in it fits (single products:
    // one x in one phase), or, read through L1 (single products and batches: each row's own
    // product's x), is contiguous with slices the kernel's 32-bit pack indices count.
    if (L.loads == libgemv::kLoadsPhasedCopies) {
        if (batch > 1 || a.p_log2 < 1 || L.splits != 1 || L.x_in_smem || a.incx != 1 || L.max_blocks != 0)
            violation(w, "%s: x's phase copies with a batch, one thread a row, K slices, staging or a stride", kernel);
        if (a.x_phase_stride != x_phase_stride(a.k, esz) || (reinterpret_cast<uintptr_t>(a.x) & 15))
            violation(w, "%s: x's phase copies at %p, stride %lld for K = %lld", kernel, a.x,
                      (long long)a.x_phase_stride, (long long)a.k);
        if (a.period != 1) violation(w, "%s: x's phase copies with period %d", kernel, a.period);
    } else if (L.loads == libgemv::kLoadsPhased) {
        if ((batch > 1 && L.x_in_smem) || a.p_log2 < 1)
            violation(w, "%s: phased rows of a batch with x staged, or one thread a row", kernel);
        if (!L.x_in_smem && (a.incx != 1 || a.k_chunk > libgemv::kMaxPhasedSliceElements))
            violation(w, "%s: phased rows reading a strided x through L1, or a slice of %lld", kernel,
                      (long long)a.k_chunk);
        if (a.period != phase_period(a.lda, esz) || p.grid.x % (unsigned)a.period)
            violation(w, "%s: period %d (rows of one phase: %d), grid %u", kernel, a.period,
                      phase_period(a.lda, esz), p.grid.x);
        if (L.max_blocks > 0 && (int64_t)p.grid.x > std::max<int64_t>(L.max_blocks, a.period))
            violation(w, "%s: grid %u past its cap %lld", kernel, p.grid.x, (long long)L.max_blocks);
        if (L.x_in_smem && p.dynamic_smem < (size_t)(a.k_chunk + 16 / esz - 1) * esz)
            violation(w, "%s: %zu bytes of shared memory do not hold x in a phase", kernel, p.dynamic_smem);
    } else if (a.period != 1) {
        violation(w, "%s: period %d without phased rows", kernel, a.period);
    }
    return cudaSuccess;
}

cudaError_t launch_rowgroup(const RowLaunch &L, cudaStream_t) {
    if (L.args.p_log2 > 5) return launch_rows("rowgroup (p > 32!)", L);
    return launch_rows("rowgroup", L);
}

cudaError_t launch_rowblock(const RowLaunch &L, cudaStream_t) {
    if (L.args.p_log2 <= 5) return launch_rows("rowblock (p <= 32!)", L);
    return launch_rows("rowblock", L);
}

// op T's x (M entries) and its output: y (K entries) or, split, the partials of every slice.
template <typename Args> void check_op_t_vectors(World &w, const char *kernel, const Args &a, int splits, size_t esz) {
    check_span(w, kernel, "x", a.x, span(a.m, a.incx, a.batch, a.stride_x), esz);
    if (a.acc) check_span(w, kernel, "partials", a.acc, {0, (__int128)splits * a.batch * a.k}, sizeof(float));
    else check_span(w, kernel, "y", a.y, span(a.k, a.incy, a.batch, a.stride_y), esz);
}

cudaError_t launch_columns(const ColumnLaunch &L, cudaStream_t) {
    const char *kernel = "columns";
    World &w = world();
    std::lock_guard<std::mutex> lock(w.mutex);
    const ColumnArgs &a = L.args;
    const LaunchPlan p = column_plan(L);
    const size_t esz = dtype_size(L.dtype);
    check_plan(w, kernel, p, max_block_threads(L.unroll));
    log_launch(w, kernel, p, a.acc);
    const int64_t pack = L.vector_loads ? 16 / (int64_t)esz : 1;
    const bool phased = L.vector_loads == kLoadsPhased;
    // Lane classes: a tile writes c - 1 packs, each row lane walks one phase class (lanes a
    // multiple of the period, or a row a lane at most: one pass over m <= lanes rows).
    const bool lane_classes = L.vector_loads == kLoadsLaneClasses;
    const int64_t cols = (int64_t)((1 << a.c_log2) - (lane_classes ? 1 : 0)) * pack;
    const bool row_a_lane = L.splits == 1 && a.m <= a.row_lanes;
    if (lane_classes && (a.c_log2 < 1 || (a.row_lanes % phase_period(a.lda, esz) && !row_a_lane)))
        violation(w, "%s: lane classes on %d row lanes of %d threads (phase period %d)", kernel, a.row_lanes,
                  1 << a.c_log2, phase_period(a.lda, esz));
    // Phased rows' packs start up to a pack before column 0: their tiles span K + pack - 1.
    const int64_t extent = a.k + (phased ? pack - 1 : 0);
    if (a.tiles < 1 || (a.tiles - 1) * cols >= extent || (__int128)a.tiles * cols < extent)
        violation(w, "%s: %lld tiles of %lld columns do not tile K = %lld", kernel, (long long)a.tiles,
                  (long long)cols, (long long)a.k);
    if (a.period != (phased ? phase_period(a.lda, esz) : 1))
        violation(w, "%s: period %d for loads %d, lda %lld", kernel, a.period, L.vector_loads, (long long)a.lda);
    const int chunks = a.period > 0 ? L.splits / a.period : 0;
    if (L.splits < 1 || a.period < 1 || L.splits % a.period || a.m_chunk < 1 || (int64_t)(chunks - 1) * a.m_chunk >= a.m ||
        (__int128)chunks * a.m_chunk < a.m)
        violation(w, "%s: %d slices (period %d) of %lld rows do not tile M = %lld", kernel, L.splits, a.period,
                  (long long)a.m_chunk, (long long)a.m);
    if (phased && !a.acc)
        violation(w, "%s: phased rows write partials (split-M) only", kernel);
    if ((L.vector_loads < kLoadsScalar || L.vector_loads > kLoadsPhased) && !lane_classes)
        violation(w, "%s: loads %d (one element, aligned, realigned, phased packs or lane classes only)", kernel,
                  L.vector_loads);
    check_matrix(w, kernel, a.A, a.m, a.k, a.lda, a.batch, a.stride_a, esz, L.vector_loads == kLoadsAligned ? 16 : 0, a.k);
    check_op_t_vectors(w, kernel, a, L.splits, esz);
    return cudaSuccess;
}

cudaError_t launch_tstream(const TStreamLaunch &L, cudaStream_t) {
    const char *kernel = "tstream";
    World &w = world();
    std::lock_guard<std::mutex> lock(w.mutex);
    const TStreamArgs &a = L.args;
    const LaunchPlan p = t_stream_plan(L);
    const size_t esz = dtype_size(L.dtype);
    const int64_t n = 16 / (int64_t)esz;
    check_plan(w, kernel, p, max_block_threads(L.unroll));
    log_launch(w, kernel, p, a.acc);
    if (a.m < 1 || a.k < 1 || a.lda < a.k || (a.m > 1 && 2 * a.lda < n - 1) || a.threads < 1 || a.threads > (int)p.block.x ||
        (int)p.block.x - a.threads >= 32)
        return violation(w, "%s: m %lld, k %lld, lda %lld, %d threads of a block of %u", kernel, (long long)a.m,
                         (long long)a.k, (long long)a.lda, a.threads, p.block.x),
               cudaSuccess;
    // Every pack a thread reads holds the same columns: its steps are whole rows.
    if ((int64_t)a.threads * n % a.lda || a.rows_step * a.lda != (int64_t)a.threads * n)
        violation(w, "%s: %d threads of %lld-element packs are not whole rows of lda %lld (rows_step %lld)", kernel,
                  a.threads, (long long)n, (long long)a.lda, (long long)a.rows_step);
    // The slices (whole steps each) cover the packs of A's extent at any phase, none empty.
    const int64_t extent = (a.m - 1) * a.lda + a.k, packs = (extent + 2 * (n - 1)) / n;
    if (a.slice_packs < 1 || a.slice_packs % a.threads || (__int128)L.splits * a.slice_packs < packs ||
        (int64_t)(L.splits - 1) * a.slice_packs >= packs)
        violation(w, "%s: %d slices of %lld packs do not cover %lld packs", kernel, L.splits, (long long)a.slice_packs,
                  (long long)packs);
    if (L.splits > 1 && !a.acc) violation(w, "%s: %d slices without partials", kernel, L.splits);
    check_matrix(w, kernel, a.A, a.m, a.k, a.lda, a.batch, a.stride_a, esz, 0, a.k);
    if ((reinterpret_cast<uintptr_t>(a.A) | reinterpret_cast<uintptr_t>(a.x) | reinterpret_cast<uintptr_t>(a.y)) &
        (esz - 1))
        violation(w, "%s: an operand not aligned to its elements", kernel);
    check_op_t_vectors(w, kernel, a, L.splits, esz);
    return cudaSuccess;
}

cudaError_t launch_rowstream(const StreamLaunch &L, cudaStream_t) {
    const char *kernel = "rowstream";
    World &w = world();
    std::lock_guard<std::mutex> lock(w.mutex);
    const StreamArgs &a = L.args;
    const LaunchPlan p = stream_plan(L);
    const size_t esz = dtype_size(L.dtype);
    const int64_t n = 16 / (int64_t)esz;
    check_plan(w, kernel, p, max_block_threads(L.unroll));
    log_launch(w, kernel, p, nullptr);
    if (a.m < 1 || a.k < 1 || a.lda < a.k || (a.m > 1 && a.lda < n))
        return violation(w, "%s: m %lld, k %lld, lda %lld", kernel, (long long)a.m, (long long)a.k, (long long)a.lda),
               cudaSuccess;
    if (p.block.x != (unsigned)L.threads || a.p_log2 < 0 || (1 << a.p_log2) > 32 || L.threads % (1 << a.p_log2))
        violation(w, "%s: %d threads, %d lanes a row", kernel, L.threads, 1 << a.p_log2);
    // Every step's packs (its first row starting anywhere in a pack) fit the step's slots.
    const int64_t worst = ((n - 1) + (int64_t)(a.rows_per_step - 1) * a.lda + a.k - 1) / n + 1;
    if (a.rows_per_step < 1 || worst > (int64_t)L.threads * L.unroll)
        violation(w, "%s: %d rows a step need %lld packs, more than %d", kernel, a.rows_per_step, (long long)worst,
                  L.threads * L.unroll);
    if (a.steps < 1 || (__int128)a.steps * a.rows_per_step < a.m || (a.steps - 1) * a.rows_per_step >= a.m)
        violation(w, "%s: %lld steps of %d rows do not tile M = %lld", kernel, (long long)a.steps, a.rows_per_step,
                  (long long)a.m);
    if ((int64_t)a.x_packs * n < a.lda + n)
        violation(w, "%s: %d packs of staged x do not cover lda + a pack", kernel, a.x_packs);
    // Whole packs are read only inside A's elements (the first and last go element-wise).
    const int64_t phase = (int64_t)((uintptr_t)a.A & 15u) / (int64_t)esz;
    if (phase != a.a_phase || a.a_end != (a.m - 1) * a.lda + a.k)
        violation(w, "%s: a_phase %d or a_end %lld do not describe A", kernel, a.a_phase, (long long)a.a_end);
    check_span(w, kernel, "A", a.A, {0, (__int128)a.a_end}, esz);
    if ((reinterpret_cast<uintptr_t>(a.A) | reinterpret_cast<uintptr_t>(a.x) | reinterpret_cast<uintptr_t>(a.y)) &
        (esz - 1))
        violation(w, "%s: an operand not aligned to its elements", kernel);
    if (L.loads == libgemv::kLoadsAligned && (!aligned16(a.A) || (a.m > 1 && a.lda * (int64_t)esz % 16)))
        violation(w, "%s: unshifted x for rows that are not 16-byte aligned", kernel);
    check_span(w, kernel, "x", a.x, span(a.k, a.incx, 1, 0), esz);
    check_span(w, kernel, "y", a.y, span(a.m, a.incy, 1, 0), esz);
    return cudaSuccess;
}

cudaError_t launch_rowtile(const TileLaunch &L, cudaStream_t) {
    const char *kernel = "rowtile";
    World &w = world();
    std::lock_guard<std::mutex> lock(w.mutex);
    const TileArgs &a = L.args;
    const LaunchPlan p = tile_plan(L);
    const size_t esz = dtype_size(L.dtype);
    check_plan(w, kernel, p, tile_max_threads(L.rows));
    log_launch(w, kernel, p, a.acc);
    if (a.m < 1 || a.k < 1 || a.lda < a.k || L.rows < 1 || L.rows > 4 || L.rows * L.unroll > libgemv::kTileMaxPacks)
        return violation(w, "%s: m %lld, k %lld, lda %lld, rows %d, unroll %d", kernel, (long long)a.m, (long long)a.k,
                         (long long)a.lda, L.rows, L.unroll),
               cudaSuccess;
    if (p.block.x != (unsigned)L.threads || L.threads % 32 || (int64_t)L.threads * L.rows > 1024)
        violation(w, "%s: %d threads a block for %d rows", kernel, L.threads, L.rows);
    if (a.tiles != (a.m + L.rows - 1) / L.rows)
        violation(w, "%s: %lld tiles of %d rows do not tile M = %lld", kernel, (long long)a.tiles, L.rows, (long long)a.m);
    const int64_t slots = tile_slots(a.k, esz, L.loads == libgemv::kLoadsRealigned);
    if (a.slots != slots || a.slice < 1 || (int64_t)(L.splits - 1) * a.slice >= slots || (__int128)L.splits * a.slice < slots)
        violation(w, "%s: %d slices of %lld slots do not tile the %lld slots of a row", kernel, L.splits,
                  (long long)a.slice, (long long)slots);
    // Aligned packs are read only where a row's elements are (the kernel's edge slots go
    // element by element), so A's extent is all it touches.
    check_matrix(w, kernel, a.A, a.m, a.k, a.lda, 1, 0, esz, L.loads == libgemv::kLoadsAligned ? 16 : 0, a.k);
    if (L.loads == libgemv::kLoadsAligned && !aligned16(a.x))
        violation(w, "%s: aligned packs of an x that is not 16-byte aligned", kernel);
    if (L.loads != libgemv::kLoadsAligned && L.loads != libgemv::kLoadsRealigned)
        violation(w, "%s: loads %d", kernel, L.loads);
    if ((reinterpret_cast<uintptr_t>(a.A) | reinterpret_cast<uintptr_t>(a.x) | reinterpret_cast<uintptr_t>(a.y)) &
        (esz - 1))
        violation(w, "%s: an operand not aligned to its elements", kernel);
    check_span(w, kernel, "x", a.x, span(a.k, 1, 1, 0), esz);
    if (a.acc) check_span(w, kernel, "partials", a.acc, {0, (__int128)L.splits * a.m}, sizeof(float));
    else check_span(w, kernel, "y", a.y, span(a.m, a.incy, 1, 0), esz);
    if ((L.splits > 1) != (a.acc != nullptr)) violation(w, "%s: partials without a split, or a split without", kernel);
    return cudaSuccess;
}

cudaError_t launch_rowmma(const MmaRowLaunch &L, cudaStream_t) {
    const char *kernel = "rowmma";
    World &w = world();
    std::lock_guard<std::mutex> lock(w.mutex);
    const MmaRowArgs &a = L.args;
    const LaunchPlan p = mma_row_plan(L);
    const size_t esz = dtype_size(L.dtype);
    check_plan(w, kernel, p, 256);
    log_launch(w, kernel, p, nullptr);
    if (esz != 2 || L.warps < 1 || L.warps > 8 || (L.unroll != 1 && L.unroll != 2 && L.unroll != 4) ||
        p.block.x != 32u * L.warps)
        return violation(w, "%s: dtype %d, %d warps, unroll %d, block %u", kernel, (int)L.dtype, L.warps, L.unroll,
                         p.block.x),
               cudaSuccess;
    if (a.m < 1 || a.k < 1 || a.lda < a.k || a.tiles_per_product != (a.m + kMmaTileRows - 1) / kMmaTileRows ||
        a.incx != 1 || a.batch < 1 || a.tiles != a.tiles_per_product * a.batch ||
        L.blocks != (a.tiles + L.warps - 1) / L.warps)
        return violation(w, "%s: m %lld, k %lld, lda %lld, incx %lld, %lld tiles of %lld a product of %lld, %lld blocks",
                         kernel, (long long)a.m, (long long)a.k, (long long)a.lda, (long long)a.incx,
                         (long long)a.tiles, (long long)a.tiles_per_product, (long long)a.batch, (long long)L.blocks),
               cudaSuccess;
    // The kernel divides tile indices by tiles_per_product with the magic multiplier.
    const uint64_t probe[] = {0, (uint64_t)a.tiles_per_product - 1, (uint64_t)a.tiles_per_product,
                              (uint64_t)a.tiles - 1};
    for (uint64_t t : probe)
        if (divided(a.tile_div, t) != t / (uint64_t)a.tiles_per_product)
            violation(w, "%s: tile_div does not divide by %lld", kernel, (long long)a.tiles_per_product);
    // Whole aligned packs: every row, product and K; x's packs too.
    check_matrix(w, kernel, a.A, a.m, a.k, a.lda, a.batch, a.stride_a, esz, 16, a.k);
    if (a.k * (int64_t)esz % 16 || !aligned16(a.x) || (a.batch > 1 && a.stride_x * (int64_t)esz % 16))
        violation(w, "%s: packs of K or x that are not whole and aligned", kernel);
    if (reinterpret_cast<uintptr_t>(a.y) & (esz - 1)) violation(w, "%s: y not aligned to its elements", kernel);
    check_span(w, kernel, "x", a.x, span(a.k, 1, a.batch, a.stride_x), esz);
    check_span(w, kernel, "y", a.y, span(a.m, a.incy, a.batch, a.stride_y), esz);
    return cudaSuccess;
}

namespace {
cudaError_t check_quantized(const char *kernel, const QLaunch &L, const LaunchPlan &p, int max_threads, size_t x_bytes);
}

cudaError_t launch_qrows(const QLaunch &L, cudaStream_t) {
    if (L.args.p_log2 > 5 || (unsigned)(L.args.teams << L.args.p_log2) != qrow_plan(L).block.x)
        violation(world(), "qrows: block is not teams << p_log2 (p <= 32)");
    return check_quantized("qrows", L, qrow_plan(L), max_block_threads(L.rows), sizeof(float));
}

cudaError_t launch_qmma(const QLaunch &L, cudaStream_t) {
    const LaunchPlan p = qmma_plan(L);
    if (L.rounds) {
        // q_mma_rounds: int4 in fp16 or bf16, groups of 32 up (a step 4, 2 or one group; the
        // sub-step kernels from gs_log2 5), or one a row, a block of 2^p_log2 threads (32..256)
        // a 16-row tile, K in grid.y slices of whole 128-column steps, x read in place.
        if (L.bits != 4 || (L.dtype != GEMV_DTYPE_F16 && L.dtype != GEMV_DTYPE_BF16) || (L.unroll != 1 && L.unroll != 2) ||
            L.args.gs_log2 < 5 || L.x_held || L.x_staged)
            violation(world(), "qmma: rounds: int4 in fp16 or bf16, groups of 32 up, unroll 1 or 2, x in place");
        if (L.args.p_log2 < 5 || L.args.p_log2 > 8 || p.block.x != 1u << L.args.p_log2 || p.grid.y != (unsigned)L.splits ||
            L.args.slice % 128 != 0 || (L.splits - 1) * L.args.slice >= L.args.k || p.dynamic_smem != 0 ||
            (int64_t)p.grid.x != (L.args.m + 15) / 16)
            violation(world(), "qmma: rounds: block not 2^p_log2 threads (32..256), not a tile a block, or slices "
                               "not grid.y, of whole steps, each with a step of K");
        if (L.args.incx != 1 || !aligned16(L.args.x) || L.args.perm)
            violation(world(), "qmma: rounds: x read in place but strided, unaligned or permuted");
        return check_quantized("qmma", L, p, libgemv::kQmmaMaxThreads, 0);
    }
    // x held in registers: unroll (rows) 1 or 2 steps a chunk, a block of 2^p_log2 threads
    // walking teams tiles of 16 rows with a row of sums a warp in shared memory.
    // x held: fp16 or bf16, every zero mode.
    const bool types_ok = L.x_held ? (L.dtype == GEMV_DTYPE_F16 || L.dtype == GEMV_DTYPE_BF16)
                                   : (L.dtype == GEMV_DTYPE_F16 && L.zero_mode != GEMV_QZERO_FLOAT);
    const bool bits_ok = L.bits == 4 || (L.x_held && L.bits == 8 && L.dtype == GEMV_DTYPE_F16 && L.args.gs_log2 >= 6);
    if (!bits_ok || !types_ok || !(L.rows == 1 || (L.x_held && L.rows == 2)))
        violation(world(), "qmma: int4, fp16, symmetric or integer zeros, unroll 1 only (x held: bf16 too, any "
                           "zeros, unroll 1 or 2)");
    const unsigned threads = L.x_held ? 1u << L.args.p_log2 : (unsigned)(L.args.teams << L.args.p_log2);
    if (L.args.p_log2 < 5 || L.args.p_log2 > 8 || p.block.x != threads)
        violation(world(), "qmma: block is not teams tiles of 2^p_log2 threads (32..256)");
    if (L.x_held && (L.args.teams < 1 || L.args.teams > 64 || L.x_staged ||
                     p.dynamic_smem != (size_t)(threads / 32) * L.args.teams * 16 * sizeof(float) ||
                     p.grid.x != (unsigned)((L.args.m + 16 * L.args.teams - 1) / (16 * L.args.teams))))
        violation(world(), "qmma: x held, but not 1..64 tiles a block, each warp a row of sums, covering M");
    // Unstaged, x is read in place as 16-byte packs: contiguous, aligned, in order.
    if ((!L.x_staged || L.x_held) && (L.args.incx != 1 || !aligned16(L.args.x) || L.args.perm))
        violation(world(), "qmma: x read in place but strided, unaligned or permuted");
    return check_quantized("qmma", L, p, libgemv::kQmmaMaxThreads, L.x_staged && !L.x_held ? 2 : 0); // x staged as fp16
}

cudaError_t launch_qblock(const QLaunch &L, cudaStream_t) {
    const LaunchPlan p = qblock_plan(L);
    // int8 in fp16 or bf16, a block of 2^p_log2 threads (32..256) on L.rows rows, every row a
    // block's (grid-stride past the limit), K unsplit, x read in place, nothing staged.
    if (L.bits != 8 || (L.dtype != GEMV_DTYPE_F16 && L.dtype != GEMV_DTYPE_BF16) || (L.unroll != 1 && L.unroll != 2))
        violation(world(), "qblock: int8 in fp16 or bf16, unroll 1 or 2");
    if (L.args.p_log2 < 5 || L.args.p_log2 > 8 || p.block.x != 1u << L.args.p_log2 || L.splits != 1 || L.args.acc ||
        p.dynamic_smem != 0 || (int64_t)p.grid.x * L.rows < std::min<int64_t>(L.args.m, (int64_t)0x7fffffff * L.rows))
        violation(world(), "qblock: block not 2^p_log2 threads (32..256), K split, or the grid short of M");
    if (L.args.incx != 1 || !aligned16(L.args.x) || L.args.perm)
        violation(world(), "qblock: x read in place but strided, unaligned or permuted");
    return check_quantized("qblock", L, p, libgemv::kQBlockMaxThreads, 0);
}

namespace {
cudaError_t check_quantized(const char *kernel, const QLaunch &L, const LaunchPlan &p, int max_threads, size_t x_bytes) {
    World &w = world();
    std::lock_guard<std::mutex> lock(w.mutex);
    const QArgs &a = L.args;
    check_plan(w, kernel, p, max_threads);
    log_launch(w, kernel, p, a.acc);
    const int64_t codes = q_pack_codes(L.bits), kpad = (a.k + codes - 1) / codes * codes;
    if (a.m < 1 || a.k < 1 || (L.bits != 4 && L.bits != 8) || (L.rows != 1 && L.rows != 2 && L.rows != 4))
        return violation(w, "%s: m %lld, k %lld, bits %d, rows %d", kernel, (long long)a.m, (long long)a.k, L.bits,
                         L.rows),
               cudaSuccess;
    if (a.slice < 1 || a.slice % codes || a.chunk < codes || a.chunk % codes || (int64_t)(L.splits - 1) * a.slice >= kpad ||
        (__int128)L.splits * a.slice < kpad)
        violation(w, "%s: %d slices of %lld (chunks of %lld) do not tile the %lld packed columns in packs", kernel,
                  L.splits, (long long)a.slice, (long long)a.chunk, (long long)kpad);
    if (p.dynamic_smem < (size_t)std::min({a.slice, a.chunk, kpad}) * x_bytes)
        violation(w, "%s: %zu bytes of shared memory do not hold a staged chunk", kernel, p.dynamic_smem);
    if (!aligned16(a.q) || a.ldq % 16 || a.ldq < kpad * L.bits / 8)
        violation(w, "%s: code rows not 16-byte aligned or shorter than the packed row", kernel);
    check_span(w, kernel, "codes", a.q, {0, (__int128)(a.m - 1) * a.ldq + kpad * L.bits / 8}, 1);
    const int64_t groups = a.gs_log2 >= 62 ? 1 : (a.k + (int64_t(1) << a.gs_log2) - 1) >> a.gs_log2;
    // The last pack's group: padding columns fall in the last group.
    if (a.gs_log2 < 62 && ((kpad - 1) >> a.gs_log2) >= groups)
        violation(w, "%s: padding columns past the last group", kernel);
    check_span(w, kernel, "scales", a.scales, {0, (__int128)(a.m - 1) * a.lds + groups}, 2);
    if (L.zero_mode != GEMV_QZERO_SYMMETRIC)
        check_span(w, kernel, "zeros", a.zeros, {0, (__int128)(a.m - 1) * a.ldz + groups}, 2);
    if (a.perm) check_span(w, kernel, "perm", a.perm, {0, (__int128)a.k}, 4);
    check_span(w, kernel, "x", a.x, span(a.k, a.incx, 1, 0), 2);
    if (a.acc) check_span(w, kernel, "partials", a.acc, {0, (__int128)L.splits * a.m}, sizeof(float));
    else check_span(w, kernel, "y", a.y, span(a.m, a.incy, 1, 0), 2);
    if ((L.splits > 1) != (a.acc != nullptr)) violation(w, "%s: partials without a split, or a split without", kernel);
    // The first wave's L2 prefetch before the PDL wait (NOTES.md section 35): only under PDL,
    // x held's tiles (the kernel clamps them to its own) and q_rows' rows within a tile,
    // q_rows unsplit alone.
    const bool qrows = std::string(kernel) == "qrows";
    if (a.prefetch_tiles < 0 || a.prefetch_tiles > 64 || a.prefetch_rows < 0 || a.prefetch_blocks < 0)
        violation(w, "%s: prefetch fields out of range (%d tiles, %d rows, %lld blocks)", kernel, a.prefetch_tiles,
                  a.prefetch_rows, (long long)a.prefetch_blocks);
    if ((a.prefetch_tiles > 0 || a.prefetch_rows > 0) && !a.pdl)
        violation(w, "%s: a prefetch before a PDL wait in a launch without PDL", kernel);
    if (a.prefetch_tiles > 0 && (!L.x_held || a.prefetch_blocks < 1))
        violation(w, "%s: %d tiles prefetched by %lld blocks (x held alone)", kernel, a.prefetch_tiles,
                  (long long)a.prefetch_blocks);
    // Lines of the block's rows: q_block_rows with one group a row, or q_mma_rounds (a 16-row
    // tile), each at most half of its rows' codes (both ask for half a first step or round).
    const int64_t row_lines = (kpad * L.bits / 8 + 127) / 128;
    const bool qblock = std::string(kernel) == "qblock";
    const int64_t block_rows = qblock ? L.rows : 16;
    if (a.prefetch_lines < 0 ||
        (a.prefetch_lines > 0 && (!(qblock ? a.gs_log2 >= 62 : L.rounds && L.splits == 1) || !a.pdl || a.prefetch_blocks < 1 ||
                                  a.prefetch_lines > std::max<int64_t>(1, block_rows * row_lines / 2))))
        violation(w, "%s: %d lines prefetched (%lld blocks, group log2 %d, rows of %lld lines): q_block_rows with "
                  "one group a row or q_mma_rounds unsplit alone, with PDL, at most half of its rows",
                  kernel, a.prefetch_lines, (long long)a.prefetch_blocks, a.gs_log2, (long long)row_lines);
    if (a.prefetch_rows > 0 && (!qrows || a.prefetch_rows > (int64_t)a.teams * L.rows || L.splits != 1))
        violation(w, "%s: %d rows prefetched, tiles of %d rows, %d slices (q_rows unsplit alone)", kernel,
                  a.prefetch_rows, a.teams * L.rows, L.splits);
    return cudaSuccess;
}
} // namespace

cudaError_t launch_qconvert(const QConvertArgs &a, cudaStream_t) {
    const char *kernel = "qconvert";
    World &w = world();
    std::lock_guard<std::mutex> lock(w.mutex);
    const LaunchPlan p = qconvert_plan(a);
    check_plan(w, kernel, p, 1024);
    log_launch(w, kernel, p, nullptr);
    const gemv_qmatrix_t &q = a.w;
    const int64_t groups = q_groups(q), row = q_row_bytes(q.bits, q.k);
    check_span(w, kernel, "codes", q.qweight, {0, (__int128)(q.m - 1) * q.ldq + row}, 1);
    check_span(w, kernel, "scales", q.scales, {0, (__int128)(q.m - 1) * q.lds + groups}, 2);
    if (q.zero_mode != GEMV_QZERO_SYMMETRIC) check_span(w, kernel, "zeros", q.zeros, {0, (__int128)(q.m - 1) * q.ldz + groups}, 2);
    switch (a.kind) {
    case QConvert::kQuantize: check_span(w, kernel, "A", a.dense, {0, (__int128)(q.m - 1) * a.ld_dense + q.k}, 2); break;
    case QConvert::kDequantize: check_span(w, kernel, "out", a.dense, {0, (__int128)(q.m - 1) * a.ld_dense + q.k}, 4); break;
    case QConvert::kGptq:
    case QConvert::kAwq: {
        const int per = 32 / q.bits;
        const bool awq = a.kind == QConvert::kAwq;
        check_span(w, kernel, "checkpoint qweight", a.src_q, {0, awq ? (__int128)q.k * (q.m / 8) : (__int128)(q.k / per) * q.m}, 4);
        check_span(w, kernel, "checkpoint qzeros", a.src_z, {0, (__int128)groups * (q.m / per)}, 4);
        check_span(w, kernel, "checkpoint scales", a.src_s, {0, (__int128)groups * q.m}, 2);
        break;
    }
    }
    return cudaSuccess;
}

cudaError_t launch_scale_y(gemv_dtype_t dtype, const OutputMap &y, float, cudaStream_t, bool) {
    World &w = world();
    std::lock_guard<std::mutex> lock(w.mutex);
    const LaunchPlan p = scale_y_plan(y);
    check_plan(w, "scale_y", p, 1024);
    log_launch(w, "scale_y", p, nullptr);
    check_span(w, "scale_y", "y", y.y_first, span(y.n, y.incy, y.batch, y.stride_y), dtype_size(dtype));
    return cudaSuccess;
}

cudaError_t launch_x_phase_copies(gemv_dtype_t dtype, const void *x, int64_t incx, int64_t k, void *copies,
                                  int64_t stride, cudaStream_t, bool) {
    World &w = world();
    std::lock_guard<std::mutex> lock(w.mutex);
    const size_t esz = dtype_size(dtype);
    const int64_t n = 16 / (int64_t)esz;
    const LaunchPlan p = elementwise_plan(stride);
    check_plan(w, "x_phase_copies", p, 1024);
    log_launch(w, "x_phase_copies", p, nullptr);
    if (stride != x_phase_stride(k, esz) || (reinterpret_cast<uintptr_t>(copies) & 15))
        violation(w, "x_phase_copies: stride %lld for K = %lld, copies at %p", (long long)stride, (long long)k, copies);
    check_span(w, "x_phase_copies", "x", x, span(k, incx, 1, 0), esz);
    check_span(w, "x_phase_copies", "copies", copies, {0, (__int128)stride * n}, esz);
    return cudaSuccess;
}

cudaError_t launch_x_gather(gemv_dtype_t dtype, const void *x, int64_t incx, int64_t stride_x, int64_t k,
                            int64_t products, void *out, cudaStream_t, bool) {
    World &w = world();
    std::lock_guard<std::mutex> lock(w.mutex);
    const size_t esz = dtype_size(dtype);
    const LaunchPlan p = elementwise_plan(products * k);
    check_plan(w, "x_gather", p, 1024);
    log_launch(w, "x_gather", p, nullptr);
    if (k < 1 || products < 1 || (reinterpret_cast<uintptr_t>(out) & 15))
        violation(w, "x_gather: %lld products of K = %lld into %p", (long long)products, (long long)k, out);
    check_span(w, "x_gather", "x", x, span(k, incx, products, stride_x), esz);
    check_span(w, "x_gather", "out", out, span(k, 1, products, k), esz);
    return cudaSuccess;
}

cudaError_t launch_splitk_reduce(gemv_dtype_t dtype, const float *acc, int splits, const OutputMap &y, float, float,
                                 cudaStream_t, bool) {
    World &w = world();
    std::lock_guard<std::mutex> lock(w.mutex);
    const LaunchPlan p = reduce_plan(y, splits);
    check_plan(w, "splitk_reduce", p, 1024);
    const int lanes = kEpilogueThreads >> reduce_outputs_log2(splits);
    if (lanes < 8 || lanes > kEpilogueThreads || (splits > 4 * lanes && lanes < kEpilogueThreads))
        violation(w, "splitk_reduce: %d lanes an output for %d slices", lanes, splits);
    log_launch(w, "splitk_reduce", p, acc);
    check_span(w, "splitk_reduce", "partials", acc, {0, (__int128)splits * y.n * y.batch}, sizeof(float));
    check_span(w, "splitk_reduce", "y", y.y_first, span(y.n, y.incy, y.batch, y.stride_y), dtype_size(dtype));
    return cudaSuccess;
}

cudaError_t launch_read_ceiling(const void *data, size_t bytes, float *sink, int sm_count, cudaStream_t, bool) {
    World &w = world();
    std::lock_guard<std::mutex> lock(w.mutex);
    const LaunchPlan p = read_ceiling_plan(bytes, sm_count);
    check_plan(w, "read_ceiling", p, 1024);
    log_launch(w, "read_ceiling", p, nullptr);
    check_span(w, "read_ceiling", "data", data, {0, (__int128)(bytes / 16 * 16)}, 1);
    check_span(w, "read_ceiling", "sink", sink, {0, 1}, sizeof(float));
    return cudaSuccess;
}

} // namespace libgemv
