// Kernel family "row block": p = 64..1024 threads per row (p/32 warps), for long rows
// and few of them. Each warp reduces with shuffles, then the first warp of each row
// sums the p/32 warp totals from shared memory.
// A batch is one run of batch * M rows (RowArgs), so a block may serve several products.
// Geometry: block = p * rows_per_block threads (<= max_block_threads(UNROLL)); grid.x blocks along M with a
// grid-stride loop; grid.y = K slices (split-K).
#include "common.cuh"

namespace libgemv {

template <typename T, int LOADS, int UNROLL, bool XSMEM, bool BATCHED>
__global__ void __launch_bounds__(max_block_threads(UNROLL), min_blocks_per_sm(UNROLL, BATCHED, LOADS, XSMEM)) gemv_rowblock_kernel(const RowArgs args) {
    extern __shared__ uint4 smem[];
    __shared__ float warp_sums[kMaxWarpsPerBlock];
    const int p = 1 << args.p_log2;
    const int lane = threadIdx.x & (p - 1);
    const int local_row = threadIdx.x >> args.p_log2;
    const int warp = threadIdx.x >> 5;
    const int warps_per_row = p >> 5;
    row_kernel_prologue<T, LOADS>(args);
    const RowWalk w = row_walk<LOADS>(args);
    const RowSlice<T> s = row_slice<T, LOADS, XSMEM>(args, w, smem);
    // v0 is block-uniform, so every thread reaches every barrier.
    for (int64_t v0 = w.first; v0 < w.rows; v0 += w.step) {
        const int64_t v = v0 + local_row, row = w.row(v);
        float dot = 0.f;
        if (v < w.rows) {
            const RowPos rp = row_pos<BATCHED>(args, row);
            dot = row_dot<T, LOADS, UNROLL, XSMEM>(args, s, rp, lane, p);
        }
        dot = group_sum(dot, 32);
        if ((threadIdx.x & 31) == 0) warp_sums[warp] = dot;
        __syncthreads();
        if ((warp & (warps_per_row - 1)) == 0) { // first warp of its row
            const int l = threadIdx.x & 31;
            float sum = l < warps_per_row ? warp_sums[warp + l] : 0.f;
            sum = group_sum(sum, 32);
            if (l == 0 && v < w.rows) write_row<T, BATCHED>(args, row, sum);
        }
        __syncthreads(); // warp_sums is reused by the next step
    }
}

struct RowBlockFamily {
    template <typename T, int LOADS, int UNROLL, bool XSMEM, bool BATCHED>
    static cudaError_t launch(const RowLaunch &L, cudaStream_t s) {
        return launch_row_kernel(gemv_rowblock_kernel<T, LOADS, UNROLL, XSMEM, BATCHED>, L, s);
    }
};

cudaError_t launch_rowblock(const RowLaunch &L, cudaStream_t stream) {
    return dispatch_row_family<RowBlockFamily>(L, stream);
}

} // namespace libgemv
