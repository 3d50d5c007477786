// Kernel family "epilogues": the elementwise passes around the GEMV kernels, over every
// output of a batch (OutputMap: output g is entry g % n of product g / n).
//   scale_y        y = beta*y: the alpha == 0 quick return, and the pre-pass of atomic
//                  split-K into fp32 y (beta applied once, before the atomics).
//   splitk_reduce  y = alpha * sum of slice partials + beta*y, slices summed in a fixed
//                  order: the second pass of deterministic split-K (op N) and split-M
//                  (op T), and the finalize of atomic split-K into an fp32 workspace (one
//                  slice, alpha = 1).
//   x_phase_copies the pre-pass of phased rows with x's phase copies: x (any incx) into
//                  the workspace once in each 16-byte phase, zeros around it.
//   x_gather       the pre-pass of row_mma where x is not in aligned packs: every
//                  product's x (any incx, any stride) into the workspace, contiguous.
// Geometry: grid-stride over the outputs, 256 threads; scale_y puts consecutive threads on
// consecutive outputs, splitk_reduce 1 to 32 outputs a block with 256 to 8 lanes over the
// slices (reduce_plan).
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

// Short outputs with many slices (2 x 1241717 split 304, op T 256 outputs split 256) would
// leave one thread a long chain of L2 loads: 256 / O lanes share an output's slices (lane
// l takes l, l + lanes, ...; reduce_plan picks O), then the lane sums are added in a fixed
// order: a butterfly over the lanes within a warp, then the warps in order.
template <typename T>
__global__ void splitk_reduce_kernel(const float *__restrict__ acc, int splits, const OutputMap y, float alpha,
                                     float beta, int o_log2, bool pdl) {
    __shared__ float warp_sums[kEpilogueThreads / 32][kReduceMaxOutputs];
    pdl_prologue(pdl);
    const int64_t total = y.n * y.batch;
    const int outputs = 1 << o_log2, lanes = kEpilogueThreads >> o_log2;
    const int o = threadIdx.x & (outputs - 1), lane = threadIdx.x >> o_log2, warp = threadIdx.x >> 5;
    for (int64_t g0 = blockIdx.x * (int64_t)outputs; g0 < total; g0 += (int64_t)gridDim.x * outputs) {
        const int64_t g = g0 + o;
        float s = 0.f;
        if (g < total) {
#pragma unroll 4
            for (int j = lane; j < splits; j += lanes) s += acc[(int64_t)j * total + g];
        }
        for (int off = 16; off >= outputs; off >>= 1) s += __shfl_xor_sync(0xffffffffu, s, off);
        if ((threadIdx.x & 31) < outputs) warp_sums[warp][o] = s;
        __syncthreads();
        if ((int)threadIdx.x < outputs && g < total) {
            float t = warp_sums[0][o];
            for (int w = 1; w < kEpilogueThreads / 32; ++w) t += warp_sums[w][o];
            store_y(output<T>(y, g), alpha, beta, t);
        }
        __syncthreads();
    }
}

// Copy b of x is x in phase b: element j of copy b is x[j - b] for b <= j < b + k, else 0.
// One thread an element j of x (zero past k), written to all 16 / sizeof(T) copies at
// j + b; the first threads also zero each copy's head [0, b). (One thread an element of
// every copy, x read 8 times and a 64-bit division each, ran 0.1-0.5 us slower.)
template <typename T>
__global__ void x_phase_copies_kernel(const T *x, int64_t incx, int64_t k, T *copies, int64_t stride, bool pdl) {
    pdl_prologue(pdl);
    constexpr int kCopies = 16 / (int)sizeof(T);
    for (int64_t j = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; j < stride; j += (int64_t)gridDim.x * blockDim.x) {
        const T v = j < k ? load_readonly(x + j * incx) : from_f32<T>(0.f);
#pragma unroll
        for (int b = 0; b < kCopies; ++b) {
            T *copy = copies + b * stride;
            if (j + b < stride) copy[j + b] = v;
            if (j < b) copy[j] = from_f32<T>(0.f);
        }
    }
}

// One thread an element i = b * k + j of the gathered x (a 64-bit division each: a pre-pass
// of at most a few MB, bound by its loads).
template <typename T>
__global__ void x_gather_kernel(const T *x, int64_t incx, int64_t stride_x, int64_t k, int64_t n, T *out, bool pdl) {
    pdl_prologue(pdl);
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x) {
        const int64_t b = i / k, j = i - b * k;
        out[i] = load_readonly(x + b * stride_x + j * incx);
    }
}

} // namespace

cudaError_t launch_x_gather(gemv_dtype_t dtype, const void *x, int64_t incx, int64_t stride_x, int64_t k,
                            int64_t products, void *out, cudaStream_t s, bool pdl) {
    return with_storage_type(dtype, [&](auto tag) {
        using T = typename decltype(tag)::type;
        const LaunchPlan p = elementwise_plan(products * k);
        return launch_kernel(x_gather_kernel<T>, p.grid, p.block, 0, s, pdl, static_cast<const T *>(x), incx, stride_x,
                             k, products * k, static_cast<T *>(out), pdl);
    });
}

cudaError_t launch_x_phase_copies(gemv_dtype_t dtype, const void *x, int64_t incx, int64_t k, void *copies,
                                  int64_t stride, cudaStream_t s, bool pdl) {
    return with_storage_type(dtype, [&](auto tag) {
        using T = typename decltype(tag)::type;
        const LaunchPlan p = elementwise_plan(stride);
        return launch_kernel(x_phase_copies_kernel<T>, p.grid, p.block, 0, s, pdl, static_cast<const T *>(x), incx, k,
                             static_cast<T *>(copies), stride, pdl);
    });
}

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
        const LaunchPlan p = reduce_plan(y, splits);
        return launch_kernel(splitk_reduce_kernel<T>, p.grid, p.block, 0, s, pdl, acc, splits, y, alpha, beta,
                             reduce_outputs_log2(splits), pdl);
    });
}

} // namespace libgemv
