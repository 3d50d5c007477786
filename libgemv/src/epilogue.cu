// Kernel family "epilogues": the elementwise passes around the GEMV kernels, over every
// output of a batch (OutputMap: output g is entry g % n of product g / n).
//   scale_y        y = beta*y: the alpha == 0 quick return, and the pre-pass of atomic
//                  split-K into fp32 y (beta applied once, before the atomics).
//   splitk_reduce  y = alpha * sum of slice partials + beta*y, slices summed in index
//                  order: the second pass of deterministic split-K (op N) and split-M
//                  (op T), and the finalize of atomic split-K into an fp32 workspace (one
//                  slice, alpha = 1).
// Geometry: grid-stride over the outputs, 256 threads; scale_y puts consecutive threads on
// consecutive outputs, splitk_reduce 32 outputs a block with 8 lanes over the slices.
#include "common.cuh"

namespace libgemv {

namespace {

// Output g's element; a single product (batch 1) skips the division.
template <typename T> __device__ __forceinline__ T *output(const OutputMap &y, int64_t g) {
    int64_t b = 0, i = g;
    if (y.batch > 1) {
        b = g / y.n;
        i = g - b * y.n;
    }
    return static_cast<T *>(y.y_first) + b * y.stride_y + i * y.incy;
}

template <typename T> __global__ void scale_y_kernel(const OutputMap y, float beta, bool pdl) {
    pdl_prologue(pdl);
    const int64_t total = y.n * y.batch;
    for (int64_t g = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; g < total; g += (int64_t)gridDim.x * blockDim.x) {
        T *p = output<T>(y, g);
        *p = from_f32<T>(beta == 0.f ? 0.f : beta * to_f32(*p));
    }
}

// Short outputs with many slices (1 x 65536 split 64, op T 256 outputs split 256) would
// leave one thread a long chain of L2 loads: 8 lanes share an output's slices (lane l
// takes l, l + 8, ...), then lane sums are added in lane order. A fixed order either way.

template <typename T>
__global__ void splitk_reduce_kernel(const float *__restrict__ acc, int splits, const OutputMap y, float alpha,
                                     float beta, bool pdl) {
    __shared__ float lane_sums[kReduceLanes][kReduceOutputs + 1];
    pdl_prologue(pdl);
    const int64_t total = y.n * y.batch;
    const int o = threadIdx.x % kReduceOutputs, lane = threadIdx.x / kReduceOutputs;
    for (int64_t g0 = blockIdx.x * (int64_t)kReduceOutputs; g0 < total; g0 += (int64_t)gridDim.x * kReduceOutputs) {
        const int64_t g = g0 + o;
        float s = 0.f;
        if (g < total) {
#pragma unroll 4
            for (int j = lane; j < splits; j += kReduceLanes) s += acc[(int64_t)j * total + g];
        }
        lane_sums[lane][o] = s;
        __syncthreads();
        if (lane == 0 && g < total) {
            float t = lane_sums[0][o];
            for (int l = 1; l < kReduceLanes; ++l) t += lane_sums[l][o];
            T *p = output<T>(y, g);
            float v = alpha * t;
            if (beta != 0.f) v = fmaf(beta, to_f32(*p), v);
            *p = from_f32<T>(v);
        }
        __syncthreads();
    }
}

} // namespace

cudaError_t launch_scale_y(gemv_dtype_t dtype, const OutputMap &y, float beta, cudaStream_t s, bool pdl) {
    return with_storage_type(dtype, [&](auto tag) {
        using T = typename decltype(tag)::type;
        const LaunchPlan p = scale_y_plan(y);
        return launch_kernel(scale_y_kernel<T>, p.grid, p.block, 0, s, pdl, y, beta, pdl);
    });
}

cudaError_t launch_splitk_reduce(gemv_dtype_t dtype, const float *acc, int splits, const OutputMap &y, float alpha,
                                 float beta, cudaStream_t s, bool pdl) {
    return with_storage_type(dtype, [&](auto tag) {
        using T = typename decltype(tag)::type;
        const LaunchPlan p = reduce_plan(y);
        return launch_kernel(splitk_reduce_kernel<T>, p.grid, p.block, 0, s, pdl, acc, splits, y, alpha, beta, pdl);
    });
}

} // namespace libgemv
