// Kernel family "row mma" (op N, fp16/bf16, rows of whole aligned 16-byte packs, batches
// too): a warp sums a tile of 16 rows on the tensor cores (mma.sync m16n8k16, fp32
// accumulation) instead of a dot product a row on the CUDA cores. On short rows the row-group
// kernels spend more issue slots on each row's own work (its index, converting A and x,
// shuffles, its store) than on its loads: fp16 296 x 112 x 4096 issued ~400 instructions a
// warp for 8 rows, with issue slots 75% busy (benchmarks/NOTES.md section 77). An MMA takes
// 16 rows x 16 columns in one instruction, so a warp sums a tile with 2 loads of A, one of x
// and 2 MMAs a thread per 32 columns.
//
// Layout: thread (g = lane / 4, c = lane % 4) loads the 16-byte packs of rows g and g + 8 at
// columns 32s + 8c of step s. Words 0,1 of a pack feed the step's first MMA, words 2,3 its
// second: A's k slots 2c, 2c+1 take columns 8c, 8c+1 and slots 2c+8, 2c+9 take 8c+2, 8c+3
// (then 8c+4.. in the second). x, the B operand, is loaded the same way, so every column of B
// is x under the same permutation of the 32 columns as A's rows: each column of D is the rows'
// dot products. Thread c = 0 stores row g, c = 1 row g + 8. Fragment layouts: PTX ISA,
// "Matrix Fragments for mma.m16n8k16 with floating point type".
//
// A tile's rows past M read row M - 1 again (a cached line, never stored), so no load waits on
// a row predicate; steps past K (K need not be a multiple of 32) load zeros for A and x.
// Geometry (mma_row_plan): warps tiles a block, grid-stride over the batch's tiles.
#include "common.cuh"

namespace libgemv {

namespace {

template <typename T>
__device__ __forceinline__ void mma_16816(float (&d)[4], uint32_t a0, uint32_t a1, uint32_t a2, uint32_t a3,
                                          uint32_t b0, uint32_t b1) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    if constexpr (std::is_same_v<T, __half>)
        asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
                     "{%0,%1,%2,%3};"
                     : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                     : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
    else
        asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
                     "{%0,%1,%2,%3};"
                     : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                     : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
#endif
}

// One step of 32 columns: rows g (a) and g + 8 (b) against x, two MMAs.
template <typename T> __device__ __forceinline__ void mma_step(float (&d)[4], const uint4 &a, const uint4 &b, const uint4 &x) {
    mma_16816<T>(d, a.x, b.x, a.y, b.y, x.x, x.y);
    mma_16816<T>(d, a.z, b.z, a.w, b.w, x.z, x.w);
}

template <typename T, int UNROLL>
__global__ void __launch_bounds__(256) gemv_rowmma_kernel(const MmaRowArgs a) {
    pdl_prologue(a.pdl);
    const int lane = threadIdx.x & 31, g = lane >> 2, c = lane & 3;
    const int warps = blockDim.x >> 5;
    const int64_t packs = a.k / kPack<T>; // whole packs (can_implement)
    for (int64_t t = (int64_t)blockIdx.x * warps + (threadIdx.x >> 5); t < a.tiles; t += (int64_t)gridDim.x * warps) {
        const int64_t b = divided(a.tile_div, (uint64_t)t), r0 = (t - b * a.tiles_per_product) * kMmaTileRows + g;
        const T *A = static_cast<const T *>(a.A) + b * a.stride_a;
        const uint4 *p0 = reinterpret_cast<const uint4 *>(A + min(r0, a.m - 1) * a.lda) + c;
        const uint4 *p1 = reinterpret_cast<const uint4 *>(A + min(r0 + 8, a.m - 1) * a.lda) + c;
        const uint4 *px = reinterpret_cast<const uint4 *>(static_cast<const T *>(a.x) + b * a.stride_x) + c;
        float d[4] = {0.f, 0.f, 0.f, 0.f};
        int64_t q = 0; // the first pack of the round's first step
        for (; q + 4 * UNROLL <= packs; q += 4 * UNROLL) {
            uint4 ra[UNROLL], rb[UNROLL], rx[UNROLL];
#pragma unroll
            for (int u = 0; u < UNROLL; ++u) {
                ra[u] = load_a_pack(p0 + q + 4 * u);
                rb[u] = load_a_pack(p1 + q + 4 * u);
                rx[u] = __ldg(px + q + 4 * u);
            }
#pragma unroll
            for (int u = 0; u < UNROLL; ++u) mma_step<T>(d, ra[u], rb[u], rx[u]);
        }
        if (q < packs) { // the last steps: packs past K are zeros
            uint4 ra[UNROLL], rb[UNROLL], rx[UNROLL];
#pragma unroll
            for (int u = 0; u < UNROLL; ++u) {
                ra[u] = rb[u] = rx[u] = make_uint4(0u, 0u, 0u, 0u);
                if (q + 4 * u + c < packs) {
                    ra[u] = load_a_pack(p0 + q + 4 * u);
                    rb[u] = load_a_pack(p1 + q + 4 * u);
                    rx[u] = __ldg(px + q + 4 * u);
                }
            }
#pragma unroll
            for (int u = 0; u < UNROLL; ++u)
                if (q + 4 * u < packs) mma_step<T>(d, ra[u], rb[u], rx[u]); // warp-uniform
        }
        const int64_t row = c == 0 ? r0 : r0 + 8;
        if (c < 2 && row < a.m)
            store_y(static_cast<T *>(a.y) + b * a.stride_y + row * a.incy, a.alpha, a.beta, c == 0 ? d[0] : d[2]);
    }
}

template <typename T, int UNROLL> cudaError_t launch_typed(const MmaRowLaunch &L, cudaStream_t s) {
    const LaunchPlan p = mma_row_plan(L);
    return launch_kernel(gemv_rowmma_kernel<T, UNROLL>, p.grid, p.block, p.dynamic_smem, s, L.args.pdl != 0, L.args);
}

} // namespace

cudaError_t launch_rowmma(const MmaRowLaunch &L, cudaStream_t stream) {
    auto with_unroll = [&](auto tag) -> cudaError_t {
        using T = typename decltype(tag)::type;
        switch (L.unroll) {
        case 1: return launch_typed<T, 1>(L, stream);
        case 2: return launch_typed<T, 2>(L, stream);
        case 4: return launch_typed<T, 4>(L, stream);
        default: return cudaErrorInvalidValue;
        }
    };
    switch (L.dtype) {
    case GEMV_DTYPE_F16: return with_unroll(TypeTag<__half>{});
    case GEMV_DTYPE_BF16: return with_unroll(TypeTag<__nv_bfloat16>{});
    default: return cudaErrorInvalidValue;
    }
}

} // namespace libgemv
