// Device properties and the timing support the benchmark and the tuner share: graph
// capture of queued work and event-timed replays (kernel time without launch gaps).
#include <cstdio>

#include "internal.h"

using namespace libgemv;

extern "C" {

gemv_status_t gemv_device_props(int device, gemv_device_props_t *props) {
    clear_error();
    if (!props) return set_error("props is NULL"), GEMV_STATUS_INVALID_POINTER;
    cudaDeviceProp p;
    cudaError_t e = cudaGetDeviceProperties(&p, device);
    if (e != cudaSuccess) return cuda_failure(e, "cudaGetDeviceProperties");
    *props = gemv_device_props_t{};
    snprintf(props->name, sizeof props->name, "%s", p.name);
    props->sm_count = p.multiProcessorCount;
    props->cc_major = p.major;
    props->cc_minor = p.minor;
    props->l2_bytes = p.l2CacheSize;
    props->smem_per_block_optin = (int64_t)p.sharedMemPerBlockOptin;
    props->global_mem_bytes = (int64_t)p.totalGlobalMem;
    props->runtime_version = CUDART_VERSION;
    props->pci_domain = p.pciDomainID;
    props->pci_bus = p.pciBusID;
    props->pci_device = p.pciDeviceID;
    int driver = 0;
    if ((e = cudaDriverGetVersion(&driver)) != cudaSuccess) return cuda_failure(e, "cudaDriverGetVersion");
    props->driver_version = driver;
    return GEMV_STATUS_SUCCESS;
}

gemv_status_t gemv_capture_begin(gemv_stream_t stream) {
    clear_error();
    cudaError_t e = cudaStreamBeginCapture(reinterpret_cast<cudaStream_t>(stream), cudaStreamCaptureModeThreadLocal);
    return e == cudaSuccess ? GEMV_STATUS_SUCCESS : cuda_failure(e, "cudaStreamBeginCapture");
}

gemv_status_t gemv_capture_end(gemv_stream_t stream, gemv_graph_t *graph) {
    clear_error();
    if (!graph) return set_error("graph is NULL"), GEMV_STATUS_INVALID_POINTER;
    *graph = nullptr;
    cudaGraph_t g = nullptr;
    cudaError_t e = cudaStreamEndCapture(reinterpret_cast<cudaStream_t>(stream), &g);
    if (e != cudaSuccess) return cuda_failure(e, "cudaStreamEndCapture");
    cudaGraphExec_t exec = nullptr;
    e = cudaGraphInstantiate(&exec, g, 0);
    cudaGraphDestroy(g);
    if (e != cudaSuccess) return cuda_failure(e, "cudaGraphInstantiate");
    *graph = reinterpret_cast<gemv_graph_t>(exec);
    return GEMV_STATUS_SUCCESS;
}

gemv_status_t gemv_graph_replay_ms(gemv_graph_t graph, gemv_stream_t stream, int replays, float *ms) {
    clear_error();
    if (!graph || !ms) return set_error("graph or ms is NULL"), GEMV_STATUS_INVALID_POINTER;
    if (replays < 1) {
        set_error("replays = %d: must be >= 1", replays);
        return GEMV_STATUS_INVALID_VALUE;
    }
    cudaStream_t s = reinterpret_cast<cudaStream_t>(stream);
    cudaGraphExec_t exec = reinterpret_cast<cudaGraphExec_t>(graph);
    cudaEvent_t start = nullptr, stop = nullptr;
    cudaError_t e = cudaEventCreate(&start);
    if (e == cudaSuccess) e = cudaEventCreate(&stop);
    if (e == cudaSuccess) e = cudaEventRecord(start, s);
    for (int i = 0; i < replays && e == cudaSuccess; ++i) e = cudaGraphLaunch(exec, s);
    if (e == cudaSuccess) e = cudaEventRecord(stop, s);
    if (e == cudaSuccess) e = cudaEventSynchronize(stop);
    if (e == cudaSuccess) e = cudaEventElapsedTime(ms, start, stop);
    if (start) cudaEventDestroy(start);
    if (stop) cudaEventDestroy(stop);
    return e == cudaSuccess ? GEMV_STATUS_SUCCESS : cuda_failure(e, "timing a graph replay");
}

gemv_status_t gemv_graph_destroy(gemv_graph_t graph) {
    clear_error();
    if (!graph) return GEMV_STATUS_SUCCESS;
    cudaError_t e = cudaGraphExecDestroy(reinterpret_cast<cudaGraphExec_t>(graph));
    return e == cudaSuccess ? GEMV_STATUS_SUCCESS : cuda_failure(e, "cudaGraphExecDestroy");
}

gemv_status_t gemv_read_ceiling(const void *data, size_t bytes, void *sink, gemv_stream_t stream) {
    clear_error();
    if (!data || !sink) return set_error("data or sink is NULL"), GEMV_STATUS_INVALID_POINTER;
    if (bytes % 16 || (reinterpret_cast<uintptr_t>(data) & 15u)) {
        set_error("read_ceiling needs 16-byte aligned data and a multiple of 16 bytes (bytes = %zu)", bytes);
        return GEMV_STATUS_INVALID_VALUE;
    }
    int device = 0;
    gemv_status_t st = current_device(&device);
    if (st != GEMV_STATUS_SUCCESS) return st;
    if ((st = check_stream_device(reinterpret_cast<cudaStream_t>(stream), device)) != GEMV_STATUS_SUCCESS) return st;
    cudaError_t e = launch_read_ceiling(data, bytes, static_cast<float *>(sink), sm_count(device),
                                        reinterpret_cast<cudaStream_t>(stream), pdl_supported(device));
    return e == cudaSuccess ? GEMV_STATUS_SUCCESS : cuda_failure(e, "launching read_ceiling");
}

} // extern "C"
