// Kernel family "row group": p = 1..32 threads per row, 32/p rows per warp.
//   p = 1        thread per row (the naive baseline when scalar, unroll 1)
//   p = 2..16    several rows per warp, shuffle reduction inside each aligned group
//   p = 32       warp per row
// Geometry: block = p * rows_per_block threads (a multiple of 32, <= max_block_threads(UNROLL)); grid.x
// blocks along M with a grid-stride loop (any M); grid.y = K slices (split-K).
#include "common.cuh"

namespace libgemv {

template <typename T, bool VEC, int UNROLL, bool XSMEM>
__global__ void __launch_bounds__(max_block_threads(UNROLL)) gemv_rowgroup_kernel(const RowArgs args) {
    extern __shared__ uint4 smem[];
    const int p = 1 << args.p_log2;
    const int lane = threadIdx.x & (p - 1);
    const int local_row = threadIdx.x >> args.p_log2;
    const int64_t k0 = (int64_t)blockIdx.y * args.k_chunk;
    const int64_t n = min(args.k - k0, args.k_chunk);
    const T *x = static_cast<const T *>(args.x) + k0 * args.incx;
    int64_t incx = args.incx;
    if constexpr (XSMEM) {
        x = stage_x(x, incx, n, smem);
        incx = 1;
    }
    const T *A = static_cast<const T *>(args.A) + k0;
    // Every lane stays in the loop (rows past M contribute 0) so the shuffles see full warps.
    for (int64_t row0 = (int64_t)blockIdx.x * args.rows_per_block; row0 < args.m;
         row0 += (int64_t)gridDim.x * args.rows_per_block) {
        const int64_t row = row0 + local_row;
        float dot = 0.f;
        if (row < args.m) dot = thread_dot<T, VEC, UNROLL, XSMEM>(A + row * args.lda, x, incx, n, lane, p);
        dot = group_sum(dot, p);
        if (lane == 0 && row < args.m) write_row<T>(args, row, dot);
    }
}

struct RowGroupFamily {
    template <typename T, bool VEC, int UNROLL, bool XSMEM>
    static cudaError_t launch(const RowLaunch &L, cudaStream_t s) {
        const dim3 grid(row_blocks(L.args), (unsigned)L.splits);
        const unsigned threads = (unsigned)(L.args.rows_per_block << L.args.p_log2);
        gemv_rowgroup_kernel<T, VEC, UNROLL, XSMEM><<<grid, threads, x_smem_bytes(L), s>>>(L.args);
        return cudaGetLastError();
    }
};

cudaError_t launch_rowgroup(const RowLaunch &L, cudaStream_t stream) {
    return dispatch_row_family<RowGroupFamily>(L, stream);
}

} // namespace libgemv
