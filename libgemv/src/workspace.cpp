// The library's workspace pool (GEMV_FLAG_LIBRARY_WORKSPACE): split-K and split-M
// partials in buffers libgemv keeps, one per stream in use, at most kPoolPerDevice per
// device.
//
// A buffer belongs to one (stream, host thread). A stream is known by cudaStreamGetId, not
// by its handle: a destroyed stream's handle may be reused by a new stream while the old
// one still has split-K work queued, and the per-thread default stream has one handle in
// every thread but is a different stream in each. The thread is part of the key because
// two threads queueing on one stream interleave their kernels (partials, partials,
// reduce, reduce), so one buffer would mix their sums. When the pool is full, the least
// recently used idle buffer passes to the newcomer in stream order: an event recorded
// after the buffer's last use, which the new stream waits on. So nothing is freed while in
// use, no call blocks the host, and the pool never grows past its bound (the buffers live
// until exit).
#include <atomic>
#include <cstdint>
#include <mutex>
#include <vector>

#include "internal.h"

namespace libgemv {

namespace {

constexpr int kPoolPerDevice = 16;

struct PoolEntry {
    int device;
    unsigned long long stream_id;
    uint64_t thread;
    void *ptr;
    cudaEvent_t last_use; // recorded after each launch that used ptr
    uint64_t tick;        // for least-recently-used
    int in_use;           // calls between pool_workspace and pool_workspace_done
};

std::mutex g_mutex;
// Never destroyed: the buffers live until exit, and a thread may still call during it.
std::vector<PoolEntry> &g_pool = *new std::vector<PoolEntry>;
uint64_t g_tick = 0;
std::atomic<uint64_t> g_threads{0};
thread_local const uint64_t t_thread = ++g_threads;

} // namespace

gemv_status_t pool_workspace(int device, cudaStream_t stream, void **ptr, size_t *bytes, bool *capturing) {
    *ptr = nullptr;
    *bytes = 0;
    cudaStreamCaptureStatus cs = cudaStreamCaptureStatusNone;
    cudaError_t e = cudaStreamIsCapturing(stream, &cs);
    if (e != cudaSuccess) return cuda_failure(e, "cudaStreamIsCapturing(stream)");
    *capturing = cs != cudaStreamCaptureStatusNone;
    if (*capturing) return GEMV_STATUS_SUCCESS; // a graph must not hold pool memory: no workspace
    unsigned long long id = 0;
    if ((e = cudaStreamGetId(stream, &id)) != cudaSuccess) return cuda_failure(e, "cudaStreamGetId(stream)");

    std::lock_guard<std::mutex> lock(g_mutex);
    PoolEntry *use = nullptr, *lru = nullptr;
    int on_device = 0;
    for (PoolEntry &p : g_pool) {
        if (p.device != device) continue;
        if (p.stream_id == id && p.thread == t_thread) {
            use = &p;
            break;
        }
        ++on_device;
        if (!p.in_use && (!lru || p.tick < lru->tick)) lru = &p;
    }
    if (!use && on_device >= kPoolPerDevice) { // hand the oldest idle buffer over, after its last use
        if (!lru) return GEMV_STATUS_SUCCESS;    // all busy on other threads: run without one
        if ((e = cudaStreamWaitEvent(stream, lru->last_use, 0)) != cudaSuccess)
            return cuda_failure(e, "cudaStreamWaitEvent (workspace handover)");
        lru->stream_id = id;
        lru->thread = t_thread;
        use = lru;
    }
    if (!use) {
        g_pool.reserve((size_t)kPoolPerDevice * 64); // 64 devices at most: the push_back below cannot throw
        PoolEntry p{device, id, t_thread, nullptr, nullptr, 0, 0};
        if ((e = cudaMalloc(&p.ptr, GEMV_WORKSPACE_RECOMMENDED_BYTES)) != cudaSuccess) {
            const gemv_status_t st = cuda_failure(e, "cudaMalloc (workspace pool)");
            return st == GEMV_STATUS_CUDA_ERROR ? GEMV_STATUS_ALLOC_FAILED : st;
        }
        if ((e = cudaEventCreateWithFlags(&p.last_use, cudaEventDisableTiming)) != cudaSuccess) {
            cudaFree(p.ptr);
            return cuda_failure(e, "cudaEventCreate (workspace pool)");
        }
        g_pool.push_back(p);
        use = &g_pool.back();
    }
    use->tick = ++g_tick;
    ++use->in_use;
    *ptr = use->ptr;
    *bytes = GEMV_WORKSPACE_RECOMMENDED_BYTES;
    return GEMV_STATUS_SUCCESS;
}

gemv_status_t pool_workspace_done(int device, cudaStream_t stream, void *ptr, bool launched) {
    std::lock_guard<std::mutex> lock(g_mutex);
    for (PoolEntry &p : g_pool)
        if (p.device == device && p.ptr == ptr) {
            --p.in_use;
            if (!launched) return GEMV_STATUS_SUCCESS;
            const cudaError_t e = cudaEventRecord(p.last_use, stream);
            return e == cudaSuccess ? GEMV_STATUS_SUCCESS : cuda_failure(e, "cudaEventRecord (workspace pool)");
        }
    return GEMV_STATUS_SUCCESS;
}

int pool_size(int device) {
    std::lock_guard<std::mutex> lock(g_mutex);
    int n = 0;
    for (const PoolEntry &p : g_pool) n += p.device == device;
    return n;
}

} // namespace libgemv
