// Host cost of one launch, layer by layer, from C (no Python): where gemv_ex's time goes.
//   nvcc -O2 -arch=sm_90 scripts/host_cost.cu -Ilibgemv/include -L<libdir> -lgemv -lcuda -o host_cost
// Prints microseconds per call: best of 5 loops of 2000 calls, synchronised between loops;
// three rounds, the rows interleaved, so that drift shows.
#include <chrono>
#include <cstdio>
#include <functional>
#include <vector>
#include <cuda.h>
#include <cuda_runtime.h>

#include "gemv.h"

__global__ void empty_kernel(const void *, int) {}

struct Params136 { char bytes[136]; }; // the size of libgemv's row-kernel parameter struct
__global__ void empty_kernel_136(Params136) {}

double per_call_us(const std::function<void()> &f) {
    for (int i = 0; i < 200; ++i) f();
    cudaDeviceSynchronize();
    double best = 1e30;
    for (int r = 0; r < 5; ++r) {
        auto t0 = std::chrono::steady_clock::now();
        for (int i = 0; i < 2000; ++i) f();
        auto t1 = std::chrono::steady_clock::now();
        best = std::min(best, std::chrono::duration<double, std::micro>(t1 - t0).count() / 2000);
        cudaDeviceSynchronize();
    }
    return best;
}

int main() {
    const int64_t n = 1024;
    void *A, *x, *y, *ws;
    cudaMalloc(&A, n * n * 2);
    cudaMalloc(&x, n * 2);
    cudaMalloc(&y, n * 2);
    cudaMalloc(&ws, GEMV_WORKSPACE_RECOMMENDED_BYTES);
    cudaMemset(A, 0x3c, n * n * 2);
    cudaMemset(x, 0x3c, n * 2);
    cudaStream_t s;
    cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
    const void *p = A;
    int v = 1;
    cudaFunction_t rt_fn;
    cudaGetFuncBySymbol(&rt_fn, (const void *)empty_kernel);
    CUfunction fn = (CUfunction)rt_fn;
    void *params[] = {&p, &v};
    cudaLaunchAttribute rattr[1];
    rattr[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
    rattr[0].val.programmaticStreamSerializationAllowed = 1;
    cudaLaunchAttribute rattr_off[1];
    rattr_off[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
    rattr_off[0].val.programmaticStreamSerializationAllowed = 0;
    CUlaunchAttribute dattr[1];
    dattr[0].id = CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION;
    dattr[0].value.programmaticStreamSerializationAllowed = 1;
    gemv_args_t args{GEMV_OP_N, GEMV_DTYPE_F16, n, n, 1.f, 0.f, A, n, x, 1, y, 1, ws,
                     GEMV_WORKSPACE_RECOMMENDED_BYTES, (gemv_stream_t)s, GEMV_FLAG_TRUSTED_POINTERS};
    gemv_args_t untrusted = args;
    untrusted.flags = 0;
    gemv_config_t cfg;

    gemv_args_t quick = args; // alpha 0, beta 1: the BLAS quick return, no launch
    quick.alpha = 0.f;
    quick.beta = 1.f;
    gemv_config_t forced;
    gemv_select_config_ex(&args, &forced, nullptr);
    Params136 big{};

    struct Row { const char *name; std::function<void()> f; double us[3]; };
    std::vector<Row> rows = {
        {"cudaGetDevice", [&] { int d; cudaGetDevice(&d); }, {}},
        {"empty<<<1,32>>> (runtime, triple chevron)", [&] { empty_kernel<<<1, 32, 0, s>>>(p, v); }, {}},
        {"cudaLaunchKernelEx, no attribute", [&] {
             cudaLaunchConfig_t c{dim3(1), dim3(32), 0, s, nullptr, 0};
             cudaLaunchKernelEx(&c, empty_kernel, p, v);
         }, {}},
        {"cudaLaunchKernelEx, PDL attribute", [&] {
             cudaLaunchConfig_t c{dim3(1), dim3(32), 0, s, rattr, 1};
             cudaLaunchKernelEx(&c, empty_kernel, p, v);
         }, {}},
        {"cudaLaunchKernelEx, PDL attribute set to 0", [&] {
             cudaLaunchConfig_t c{dim3(1), dim3(32), 0, s, rattr_off, 1};
             cudaLaunchKernelEx(&c, empty_kernel, p, v);
         }, {}},
        {"cudaLaunchKernelEx, PDL, 136-byte params", [&] {
             cudaLaunchConfig_t c{dim3(256), dim3(128), 0, s, rattr, 1};
             cudaLaunchKernelEx(&c, empty_kernel_136, big);
         }, {}},
        {"cuLaunchKernel (driver)", [&] {
             cuLaunchKernel(fn, 1, 1, 1, 32, 1, 1, 0, (CUstream)s, params, nullptr);
         }, {}},
        {"cuLaunchKernelEx (driver), PDL attribute", [&] {
             CUlaunchConfig c{};
             c.gridDimX = c.gridDimY = c.gridDimZ = 1;
             c.blockDimX = 32;
             c.blockDimY = c.blockDimZ = 1;
             c.hStream = (CUstream)s;
             c.attrs = dattr;
             c.numAttrs = 1;
             cuLaunchKernelEx(&c, fn, params, nullptr);
         }, {}},
        {"gemv_select_config_ex (cached choice)", [&] { gemv_select_config_ex(&args, &cfg, nullptr); }, {}},
        {"gemv_ex quick return (no launch)", [&] { gemv_ex(&quick, nullptr); }, {}},
        {"gemv_ex 1024^2 fp16, trusted pointers", [&] { gemv_ex(&args, nullptr); }, {}},
        {"gemv_ex 1024^2 fp16, trusted, forced config", [&] { gemv_ex(&args, &forced); }, {}},
        {"gemv_ex 1024^2 fp16, pointer checks", [&] { gemv_ex(&untrusted, nullptr); }, {}},
    };
    for (int round = 0; round < 3; ++round)
        for (Row &r : rows) r.us[round] = per_call_us(r.f);
    printf("%-44s %s\n", "per call, us", "round 1, 2, 3");
    for (const Row &r : rows) printf("%-44s %6.2f %6.2f %6.2f\n", r.name, r.us[0], r.us[1], r.us[2]);
    printf("last error: %s\n", cudaGetErrorString(cudaGetLastError()));
    return 0;
}
