// Kernel family "epilogues": the elementwise passes around the row kernels.
//   scale_y        y = beta*y: the alpha == 0 quick return, and the pre-pass of atomic
//                  split-K into fp32 y (beta applied once, before the atomics).
//   splitk_reduce  y = alpha * sum of slice partials + beta*y, slices summed in index
//                  order: the second pass of deterministic split-K, and the finalize of
//                  atomic split-K into an fp32 workspace (one slice, alpha = 1).
// Geometry: 1-D grid-stride over M, 256 threads, consecutive threads on consecutive rows.
#include "common.cuh"

namespace libgemv {

namespace {

constexpr int kThreads = 256;

unsigned elementwise_blocks(int64_t m) {
    int64_t b = (m + kThreads - 1) / kThreads;
    return (unsigned)(b < 65535 * 32 ? b : 65535 * 32);
}

template <typename T> __global__ void scale_y_kernel(T *y, int64_t m, int64_t incy, float beta, bool pdl) {
    pdl_prologue(pdl);
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < m; i += (int64_t)gridDim.x * blockDim.x) {
        T *p = y + i * incy;
        *p = from_f32<T>(beta == 0.f ? 0.f : beta * to_f32(*p));
    }
}

template <typename T>
__global__ void splitk_reduce_kernel(const float *__restrict__ acc, int splits, int64_t m, float alpha,
                                     float beta, T *y, int64_t incy, bool pdl) {
    pdl_prologue(pdl);
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < m; i += (int64_t)gridDim.x * blockDim.x) {
        float s = 0.f;
        for (int j = 0; j < splits; ++j) s += acc[(int64_t)j * m + i];
        T *p = y + i * incy;
        float v = alpha * s;
        if (beta != 0.f) v = fmaf(beta, to_f32(*p), v);
        *p = from_f32<T>(v);
    }
}

} // namespace

cudaError_t launch_scale_y(gemv_dtype_t dtype, void *y, int64_t m, int64_t incy, float beta, cudaStream_t s,
                           bool pdl) {
    return with_storage_type(dtype, [&](auto tag) {
        using T = typename decltype(tag)::type;
        return launch_kernel(scale_y_kernel<T>, elementwise_blocks(m), kThreads, 0, s, pdl, static_cast<T *>(y), m,
                             incy, beta, pdl);
    });
}

cudaError_t launch_splitk_reduce(gemv_dtype_t dtype, const float *acc, int splits, int64_t m, float alpha,
                                 float beta, void *y, int64_t incy, cudaStream_t s, bool pdl) {
    return with_storage_type(dtype, [&](auto tag) {
        using T = typename decltype(tag)::type;
        return launch_kernel(splitk_reduce_kernel<T>, elementwise_blocks(m), kThreads, 0, s, pdl, acc, splits, m,
                             alpha, beta, static_cast<T *>(y), incy, pdl);
    });
}

} // namespace libgemv
