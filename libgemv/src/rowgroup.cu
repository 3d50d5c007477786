// Kernel family "row group": p = 1..32 threads per row, 32/p rows per warp.
//   p = 1        thread per row (the naive baseline when scalar, unroll 1)
//   p = 2..16    several rows per warp, shuffle reduction inside each aligned group
//   p = 32       warp per row
// A batch is one run of batch * M rows (RowArgs), so a block may serve several products.
// Geometry: block = p * rows_per_block threads (a multiple of 32, <= max_block_threads(UNROLL)); grid.x
// blocks along M with a grid-stride loop (any M); grid.y = K slices (split-K).
#include "common.cuh"

namespace libgemv {

template <typename T, int LOADS, int UNROLL, bool XSMEM, bool BATCHED>
__global__ void __launch_bounds__(max_block_threads(UNROLL), min_blocks_per_sm(UNROLL, BATCHED, LOADS, XSMEM)) gemv_rowgroup_kernel(const RowArgs args) {
    extern __shared__ uint4 smem[];
    const int p = 1 << args.p_log2;
    const int lane = threadIdx.x & (p - 1);
    const int local_row = threadIdx.x >> args.p_log2;
    row_kernel_prologue<T, LOADS>(args);
    const RowWalk w = row_walk<LOADS>(args);
    const RowSlice<T> s = row_slice<T, LOADS, XSMEM>(args, w, smem);
    // Every lane stays in the loop (rows past M contribute 0) so the shuffles see full warps.
    for (int64_t v0 = w.first; v0 < w.rows; v0 += w.step) {
        const int64_t v = v0 + local_row, row = w.row(v);
        float dot = 0.f;
        if (v < w.rows) {
            const RowPos rp = row_pos<BATCHED>(args, row);
            dot = row_dot<T, LOADS, UNROLL, XSMEM>(args, s, rp, lane, p);
        }
        dot = group_sum(dot, p);
        if (lane == 0 && v < w.rows) write_row<T, BATCHED>(args, row, dot);
    }
}

struct RowGroupFamily {
    template <typename T, int LOADS, int UNROLL, bool XSMEM, bool BATCHED>
    static cudaError_t launch(const RowLaunch &L, cudaStream_t s) {
        return launch_row_kernel(gemv_rowgroup_kernel<T, LOADS, UNROLL, XSMEM, BATCHED>, L, s);
    }
};

cudaError_t launch_rowgroup(const RowLaunch &L, cudaStream_t stream) {
    return dispatch_row_family<RowGroupFamily>(L, stream);
}

} // namespace libgemv
