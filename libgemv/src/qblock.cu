// Kernel family "quantized block rows" (variant q_block_rows): y = alpha * W x + beta * y for
// int8 weights (gemv_qmatrix_t, any zero mode and group size) on the dense row kernels'
// skeleton: a block of threads_per_row threads owns rows_per_block rows, as many blocks as
// rows / rows_per_block, its threads taking the rows' 16-byte packs t, t + p, ... with
// `unroll` packs a row loaded before any is summed. Nothing is staged: x is read in place
// through L1 (the codes bypass it, ld.global.nc.L1::no_allocate, so x stays there), and each
// pack of x serves the block's rows. NOTES.md section 41: with the same arithmetic as q_rows,
// the one-wave skeletons ran int8 8-20% slower than the dense kernel on the same bytes; this
// one runs within 1-3% of it.
// A code is exact in fp32 without a conversion: PRMT puts byte j under the exponent of 2^23
// (the float 2^23 + q), one FADD of 2^23 + z leaves q - z, one FFMA adds (q - z) x; a pack's
// sum is scaled by its group's s. Float zeros form the dequantized value fma(q, s, z) per
// code and FFMA it with x.
#include "common.cuh"

namespace libgemv {

namespace {

constexpr int kCodes = 16; // int8 codes a 16-byte pack

__device__ __forceinline__ float2 pair_f32(uint32_t u, __half) {
    return __half22float2(*reinterpret_cast<const __half2 *>(&u));
}
__device__ __forceinline__ float2 pair_f32(uint32_t u, __nv_bfloat16) {
    return make_float2(__uint_as_float(u << 16), __uint_as_float(u & 0xFFFF0000u));
}

// The 16 x of pack p as floats: two 16-byte loads through L1, or, for the pack that runs
// past K, element by element with zeros beyond it.
template <typename T> __device__ __forceinline__ void load_x(const QArgs &a, int64_t p, float (&x)[kCodes]) {
    const T *xp = static_cast<const T *>(a.x) + p * kCodes;
    if ((p + 1) * kCodes <= a.k) {
        const uint4 *v = reinterpret_cast<const uint4 *>(xp);
#pragma unroll
        for (int h = 0; h < 2; ++h) {
            const uint4 w = __ldg(v + h);
            const uint32_t u[4] = {w.x, w.y, w.z, w.w};
#pragma unroll
            for (int i = 0; i < 4; ++i) {
                const float2 f = pair_f32(u[i], T{});
                x[8 * h + 2 * i] = f.x;
                x[8 * h + 2 * i + 1] = f.y;
            }
        }
    } else {
#pragma unroll
        for (int i = 0; i < kCodes; ++i) x[i] = p * kCodes + i < a.k ? to_f32(load_readonly(xp + i)) : 0.f;
    }
}

// A row's group: s, and 2^23 + z (symmetric: z = 128) or, for float zeros, z itself.
template <typename T, int ZMODE> struct Group {
    float s, c;
    __device__ __forceinline__ void load(const QArgs &a, int64_t row, int64_t g) {
        s = to_f32(load_readonly(static_cast<const T *>(a.scales) + row * a.lds + g));
        const float z = ZMODE == GEMV_QZERO_SYMMETRIC
                            ? 128.f
                            : to_f32(load_readonly(static_cast<const T *>(a.zeros) + row * a.ldz + g));
        c = ZMODE == GEMV_QZERO_FLOAT ? z : kCodeMagic + z;
    }
};

// One pack of a row: sum (q - z) x scaled by s, or sum fma(q, s, z) x for float zeros.
template <typename T, int ZMODE>
__device__ __forceinline__ float pack_dot(const uint4 &w, const float (&x)[kCodes], const Group<T, ZMODE> &g, float acc) {
    const uint32_t u[4] = {w.x, w.y, w.z, w.w};
    float d = 0.f;
#pragma unroll
    for (int i = 0; i < 4; ++i) {
        const float f[4] = {byte_code<0>(u[i]), byte_code<1>(u[i]), byte_code<2>(u[i]), byte_code<3>(u[i])};
#pragma unroll
        for (int j = 0; j < 4; ++j) {
            if constexpr (ZMODE == GEMV_QZERO_FLOAT) d = fmaf(fmaf(f[j] - kCodeMagic, g.s, g.c), x[4 * i + j], d);
            else d = fmaf(f[j] - g.c, x[4 * i + j], d);
        }
    }
    return ZMODE == GEMV_QZERO_FLOAT ? acc + d : fmaf(g.s, d, acc);
}

template <typename T, int ZMODE, int R, int U>
__global__ void __launch_bounds__(kQBlockMaxThreads) gemv_qblock_kernel(const QArgs a) {
    __shared__ float sums[kQBlockMaxThreads / 32][R];
    const int threads = blockDim.x, warp = threadIdx.x >> 5;
    const int64_t packs = (a.k + kCodes - 1) / kCodes;
    const bool one_group = a.gs_log2 >= 62;
    // The first wave asks L2 for its rows' first codes before the PDL wait, as the dense row
    // kernels do (prefetch_first_rows: out of line, scalars only).
    if (a.prefetch_lines > 0 && (int64_t)blockIdx.x < a.prefetch_blocks)
        prefetch_first_rows(a.q, a.m, a.ldq, (int64_t)blockIdx.x * R, R, 1, packs * kCodes, a.prefetch_lines);
    pdl_prologue(a.pdl);
    // Block-uniform walk over groups of R rows (grid-stride past the grid's limit).
    for (int64_t row0 = (int64_t)blockIdx.x * R; row0 < a.m; row0 += (int64_t)gridDim.x * R) {
        const uint4 *q[R];
        float acc[R];
        Group<T, ZMODE> grp[R];
#pragma unroll
        for (int r = 0; r < R; ++r) {
            const int64_t row = min(row0 + r, a.m - 1); // a row past M reads row m - 1, never stored
            q[r] = reinterpret_cast<const uint4 *>(a.q + row * a.ldq);
            acc[r] = 0.f;
            if (one_group) grp[r].load(a, row, 0);
        }
        for (int64_t p0 = threadIdx.x; p0 < packs; p0 += (int64_t)threads * U) {
            uint4 w[U][R];
#pragma unroll
            for (int u = 0; u < U; ++u)
#pragma unroll
                for (int r = 0; r < R; ++r)
                    w[u][r] = p0 + u * threads < packs ? load_codes_past_l1(q[r] + p0 + u * threads) : make_uint4(0, 0, 0, 0);
#pragma unroll
            for (int u = 0; u < U; ++u) {
                const int64_t p = p0 + (int64_t)u * threads;
                if (p >= packs) break;
                float x[kCodes];
                load_x<T>(a, p, x);
#pragma unroll
                for (int r = 0; r < R; ++r) {
                    if (!one_group) grp[r].load(a, min(row0 + r, a.m - 1), (p * kCodes) >> a.gs_log2);
                    acc[r] = pack_dot<T, ZMODE>(w[u][r], x, grp[r], acc[r]);
                }
            }
        }
#pragma unroll
        for (int r = 0; r < R; ++r) {
            const float v = group_sum(acc[r], 32);
            if ((threadIdx.x & 31) == 0) sums[warp][r] = v;
        }
        __syncthreads();
        if (threadIdx.x < R && row0 + threadIdx.x < a.m) {
            float v = 0.f;
            for (int i = 0; i < threads / 32; ++i) v += sums[i][threadIdx.x]; // warp order: deterministic
            q_store_row<T>(a, row0 + threadIdx.x, v);
        }
        __syncthreads(); // sums is reused by the next rows
    }
}

template <typename T, int ZMODE, int R>
cudaError_t launch_unroll(const QLaunch &L, const LaunchPlan &p, cudaStream_t s) {
    if (L.unroll == 2) return launch_kernel(gemv_qblock_kernel<T, ZMODE, R, 2>, p.grid, p.block, 0, s, L.args.pdl, L.args);
    return launch_kernel(gemv_qblock_kernel<T, ZMODE, R, 1>, p.grid, p.block, 0, s, L.args.pdl, L.args);
}

template <typename T, int ZMODE> cudaError_t launch_rows(const QLaunch &L, const LaunchPlan &p, cudaStream_t s) {
    switch (L.rows) {
    case 1: return launch_unroll<T, ZMODE, 1>(L, p, s);
    case 2: return launch_unroll<T, ZMODE, 2>(L, p, s);
    default: return launch_unroll<T, ZMODE, 4>(L, p, s);
    }
}

template <typename T> cudaError_t launch_zero_mode(const QLaunch &L, const LaunchPlan &p, cudaStream_t s) {
    switch (L.zero_mode) {
    case GEMV_QZERO_SYMMETRIC: return launch_rows<T, GEMV_QZERO_SYMMETRIC>(L, p, s);
    case GEMV_QZERO_INT: return launch_rows<T, GEMV_QZERO_INT>(L, p, s);
    default: return launch_rows<T, GEMV_QZERO_FLOAT>(L, p, s);
    }
}

} // namespace

cudaError_t launch_qblock(const QLaunch &L, cudaStream_t stream) {
    const LaunchPlan p = qblock_plan(L);
    return L.dtype == GEMV_DTYPE_BF16 ? launch_zero_mode<__nv_bfloat16>(L, p, stream) : launch_zero_mode<__half>(L, p, stream);
}

} // namespace libgemv
