// The standalone experiments' timing (bulk_copy_gemv.cu, qskeleton.cu), as pygemv.timing
// does it: one CUDA graph a method holding two calls per rotating input set, replays of the
// methods interleaved, CUDA events, the median of 15 (GRAPH_REPS sets another count).
#pragma once
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

#define CK(x)                                                                                          \
    do {                                                                                               \
        cudaError_t e_ = (x);                                                                          \
        if (e_ != cudaSuccess) {                                                                       \
            fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_));         \
            exit(1);                                                                                   \
        }                                                                                              \
    } while (0)

// Median microseconds a call of each of `methods`; enqueue(method, set, stream) queues one.
template <typename Enqueue>
std::vector<float> graph_medians_us(int methods, int sets, cudaStream_t s, Enqueue enqueue) {
    std::vector<cudaGraphExec_t> ex(methods);
    for (int mi = 0; mi < methods; ++mi) {
        cudaGraph_t g;
        CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
        for (int r = 0; r < 2; ++r)
            for (int e = 0; e < sets; ++e) enqueue(mi, e, s);
        CK(cudaStreamEndCapture(s, &g));
        CK(cudaGraphInstantiate(&ex[mi], g, 0));
        CK(cudaGraphDestroy(g));
        CK(cudaGraphLaunch(ex[mi], s)); // warm-up
    }
    CK(cudaStreamSynchronize(s));
    cudaEvent_t e0, e1;
    CK(cudaEventCreate(&e0));
    CK(cudaEventCreate(&e1));
    std::vector<std::vector<float>> us(methods);
    const int reps = getenv("GRAPH_REPS") ? atoi(getenv("GRAPH_REPS")) : 15; // more: a longer run to watch
    for (int rep = 0; rep < reps; ++rep)
        for (int mi = 0; mi < methods; ++mi) {
            CK(cudaEventRecord(e0, s));
            CK(cudaGraphLaunch(ex[mi], s));
            CK(cudaEventRecord(e1, s));
            CK(cudaEventSynchronize(e1));
            float ms;
            CK(cudaEventElapsedTime(&ms, e0, e1));
            us[mi].push_back(ms * 1000.f / (2 * sets));
        }
    std::vector<float> med(methods);
    for (int mi = 0; mi < methods; ++mi) {
        std::sort(us[mi].begin(), us[mi].end());
        med[mi] = us[mi][us[mi].size() / 2];
    }
    for (auto &x : ex) CK(cudaGraphExecDestroy(x));
    CK(cudaEventDestroy(e0));
    CK(cudaEventDestroy(e1));
    return med;
}
