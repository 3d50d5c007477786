// Kernel family "quantized rows" (variant q_rows): y = alpha * W x + beta * y for weights of
// 4- or 8-bit codes with a scale and a zero point per group (gemv_qmatrix_t, packed layout
// in docs/quantized.md).
//
// A team of P lanes owns ROWS consecutive rows; its lanes take the rows' 16-byte packs of
// codes lane, lane + P, ... (coalesced across the team), so each pack of x (read from shared
// memory) serves ROWS rows. A block stages its K slice of x once, as fp32 (a slice longer
// than shared memory holds: a chunk at a time, for each row tile), and grid-strides over
// row tiles. Codes become floats without a conversion instruction: a code masked into
// the mantissa of 2^23 is the float 2^23 + q, and one FADD of 2^23 + z leaves q - z exactly.
//   int4: nibble j of a word is masked in place (j < 5) or after a 12-bit shift (j >= 5), so
//         it lands at 16^e times its value, e = nibble_exp(j); x is staged times 16^-e (exact,
//         a power of two), so the FFMA still sees (q - z) * x: LOP3 + FADD + FFMA a code.
//   int8: PRMT moves byte j under the exponent byte: PRMT + FADD + FFMA a code.
// Symmetric and integer zeros sum (q - z) * x over a pack in fp32 and scale the sum by s (the
// products are exact dequantized values times x). Float zeros form w = fma(q, s, z) per code,
// the dequantized value itself, then FFMA it with x.
#include "common.cuh"

namespace libgemv {

namespace {


__host__ __device__ constexpr int nibble_exp(int j) { return j < 5 ? j : j - 3; }
__device__ __forceinline__ float pow16_neg(int e) { return __uint_as_float((uint32_t)(127 - 4 * e) << 23); }

// The float 2^23 + q * 16^nibble_exp(j) for nibble j of u (h = u >> 12).
template <int J> __device__ __forceinline__ float nibble(uint32_t u, uint32_t h) {
    if constexpr (J < 5) return __uint_as_float((u & (0xFu << (4 * J))) | kCodeMagicBits);
    else return __uint_as_float((h & (0xFu << (4 * (J - 3)))) | kCodeMagicBits);
}

// Stage columns [k0, k0 + n) of x (n: whole packs; columns past K are 0) as fp32, through
// perm when the columns are permuted, times 16^-e for int4 codes summed as q - z. Stored
// by float4 slot, then pack: slot f of pack p at float4 f * packs + p, so the lanes of a
// team (consecutive packs) read consecutive float4s. Pack-major order put the lanes 128
// bytes apart: an 8-way bank conflict on every x load.
template <typename T, int BITS, int ZMODE>
__device__ __forceinline__ void stage_x(float *xs, const QArgs &a, int64_t k0, int n) {
    constexpr int CODES = 128 / BITS;
    const int packs = n / CODES;
    for (int j = threadIdx.x; j < n; j += blockDim.x) {
        const int64_t c = k0 + j;
        float v = 0.f;
        if (c < a.k) {
            v = to_f32(q_x_at<T>(a, c));
            if constexpr (BITS == 4 && ZMODE != GEMV_QZERO_FLOAT) v *= pow16_neg(nibble_exp((int)(c & 7)));
        }
        xs[((j % CODES) / 4 * packs + j / CODES) * 4 + (j & 3)] = v;
    }
}

// A row's group parameters, as the dot of one pack uses them.
template <int BITS, int ZMODE> struct GroupParams {
    // q - z: 2^23 + z * 16^e to subtract (int4: e = 0..4; int8: [0] only).
    // Float zeros: [e] = s * 16^-e, z in zf.
    float c[BITS == 4 ? 5 : 1];
    float s, zf;
};

template <typename T, int BITS, int ZMODE>
__device__ __forceinline__ GroupParams<BITS, ZMODE> group_params(const QArgs &a, int64_t row, int64_t g) {
    GroupParams<BITS, ZMODE> p;
    const float s = to_f32(load_readonly(static_cast<const T *>(a.scales) + row * a.lds + g));
    float z = float(1 << (BITS - 1));
    if constexpr (ZMODE != GEMV_QZERO_SYMMETRIC) z = to_f32(load_readonly(static_cast<const T *>(a.zeros) + row * a.ldz + g));
    p.s = s;
    p.zf = z;
    constexpr int E = BITS == 4 ? 5 : 1;
#pragma unroll
    for (int e = 0; e < E; ++e) {
        if constexpr (ZMODE == GEMV_QZERO_FLOAT) p.c[e] = s * pow16_neg(e);
        else p.c[e] = fmaf(z, __uint_as_float((uint32_t)(127 + 4 * e) << 23), kCodeMagic); // exact: < 2^24
    }
    return p;
}

// One code's contribution: (q - z) * x, or fma(q, s, z) * x for float zeros. f is the
// masked float 2^23 + q * 16^e.
template <int ZMODE, int E>
__device__ __forceinline__ float code_dot(float f, float x, const GroupParams<4, ZMODE> &p, float d) {
    if constexpr (ZMODE == GEMV_QZERO_FLOAT) return fmaf(fmaf(f - kCodeMagic, p.c[E], p.zf), x, d);
    else return fmaf(f - p.c[E], x, d);
}
template <int ZMODE>
__device__ __forceinline__ float byte_dot(float f, float x, const GroupParams<8, ZMODE> &p, float d) {
    if constexpr (ZMODE == GEMV_QZERO_FLOAT) return fmaf(fmaf(f - kCodeMagic, p.s, p.zf), x, d);
    else return fmaf(f - p.c[0], x, d);
}

// One word (8 int4 or 4 int8 codes) against its columns of staged x.
template <int BITS, int ZMODE>
__device__ __forceinline__ float word_dot(uint32_t u, const float4 &x0, const float4 &x1,
                                          const GroupParams<BITS, ZMODE> &p, float d) {
    if constexpr (BITS == 4) {
        const uint32_t h = u >> 12;
        d = code_dot<ZMODE, 0>(nibble<0>(u, h), x0.x, p, d);
        d = code_dot<ZMODE, 1>(nibble<1>(u, h), x0.y, p, d);
        d = code_dot<ZMODE, 2>(nibble<2>(u, h), x0.z, p, d);
        d = code_dot<ZMODE, 3>(nibble<3>(u, h), x0.w, p, d);
        d = code_dot<ZMODE, 4>(nibble<4>(u, h), x1.x, p, d);
        d = code_dot<ZMODE, 2>(nibble<5>(u, h), x1.y, p, d);
        d = code_dot<ZMODE, 3>(nibble<6>(u, h), x1.z, p, d);
        d = code_dot<ZMODE, 4>(nibble<7>(u, h), x1.w, p, d);
    } else {
        d = byte_dot<ZMODE>(byte_code<0>(u), x0.x, p, d);
        d = byte_dot<ZMODE>(byte_code<1>(u), x0.y, p, d);
        d = byte_dot<ZMODE>(byte_code<2>(u), x0.z, p, d);
        d = byte_dot<ZMODE>(byte_code<3>(u), x0.w, p, d);
    }
    return d;
}

template <typename T, int BITS, int ZMODE, int ROWS>
__global__ void __launch_bounds__(max_block_threads(ROWS)) gemv_qrows_kernel(const QArgs a) {
    extern __shared__ float4 smem4[];
    float *xs = reinterpret_cast<float *>(smem4);
    constexpr int CODES = 128 / BITS;     // a 16-byte pack
    constexpr int WORD_CODES = 32 / BITS; // a 32-bit word
    const int64_t kpad = (a.k + CODES - 1) / CODES * CODES;
    const int64_t k0 = (int64_t)blockIdx.y * a.slice, k1 = min(k0 + a.slice, kpad);
    if (a.prefetch_rows > 0) {
        // Before the PDL wait, L2 is asked for the first pack of every lane on the block's
        // first rows (the grid is one wave): they then arrive while x is staged.
        const int64_t row0 = (int64_t)blockIdx.x * a.teams * ROWS;
        const int rows = (int)min((int64_t)a.prefetch_rows, a.m - row0);
        const int lines = (int)((min((int64_t)1 << a.p_log2, (k1 - k0) / CODES) * 16 + 127) / 128);
        const uint8_t *base = a.q + k0 / CODES * 16;
        for (int i = threadIdx.x; i < rows * lines; i += blockDim.x)
            asm volatile("prefetch.global.L2 [%0];" ::"l"(base + (row0 + i % rows) * a.ldq + (int64_t)(i / rows) * 128));
    }
    pdl_prologue(a.pdl);
    // A slice of at most a chunk is staged once; a longer one a chunk at a time, per tile.
    const bool staged_once = k1 - k0 <= a.chunk;
    if (staged_once) {
        stage_x<T, BITS, ZMODE>(xs, a, k0, (int)(k1 - k0));
        __syncthreads();
    }

    const int P = 1 << a.p_log2;
    const int lane = threadIdx.x & (P - 1), team = threadIdx.x >> a.p_log2;
    // The team's lanes within its warp: shuffles stay inside the team.
    const unsigned mask = P >= 32 ? 0xffffffffu : ((1u << P) - 1) << ((threadIdx.x & 31) & ~(P - 1));
    const int64_t tile_rows = (int64_t)a.teams * ROWS;
    // Block-uniform tile loop (the chunked path synchronises inside it).
    for (int64_t tile = (int64_t)blockIdx.x * tile_rows; tile < a.m; tile += (int64_t)gridDim.x * tile_rows) {
        const int64_t row0 = tile + (int64_t)team * ROWS;
        float acc[ROWS];
        const uint4 *q[ROWS];
#pragma unroll
        for (int r = 0; r < ROWS; ++r) {
            acc[r] = 0.f;
            // A row past M reads row m - 1 again (in bounds) and is never stored.
            const int64_t row = min(row0 + r, a.m - 1);
            q[r] = reinterpret_cast<const uint4 *>(a.q + row * a.ldq);
        }
        for (int64_t c0 = k0; c0 < k1; c0 += a.chunk) {
            const int n = (int)min(a.chunk, k1 - c0);
            if (!staged_once) {
                __syncthreads();
                stage_x<T, BITS, ZMODE>(xs, a, c0, n);
                __syncthreads();
            }
            if (row0 >= a.m) continue;
            const int64_t pk0 = c0 / CODES; // the chunk's first pack in the row
            const int packs = n / CODES;
            // Software-pipelined: the next pack's codes load while this one is summed (a
            // pack's sums are ~100 instructions a row; without the overlap the loads ran
            // one pack at a time per thread).
            uint4 w[ROWS], wn[ROWS];
            if (lane < packs) {
#pragma unroll
                for (int r = 0; r < ROWS; ++r) w[r] = load_a_pack(q[r] + pk0 + lane);
            }
            for (int pk = lane; pk < packs; pk += P) {
                if (pk + P < packs) {
#pragma unroll
                    for (int r = 0; r < ROWS; ++r) wn[r] = load_a_pack(q[r] + pk0 + pk + P);
                }
                const int64_t g = (c0 + (int64_t)pk * CODES) >> a.gs_log2;
                GroupParams<BITS, ZMODE> gp[ROWS];
#pragma unroll
                for (int r = 0; r < ROWS; ++r) gp[r] = group_params<T, BITS, ZMODE>(a, min(row0 + r, a.m - 1), g);
                float d[ROWS];
#pragma unroll
                for (int r = 0; r < ROWS; ++r) d[r] = 0.f;
                const float4 *xp = reinterpret_cast<const float4 *>(xs) + pk; // slot f at xp[f * packs]
#pragma unroll
                for (int i = 0; i < 4; ++i) {
                    const float4 x0 = xp[(i * (WORD_CODES / 4)) * packs];
                    const float4 x1 = BITS == 4 ? xp[(i * 2 + 1) * packs] : x0;
#pragma unroll
                    for (int r = 0; r < ROWS; ++r) {
                        const uint32_t u = i == 0 ? w[r].x : i == 1 ? w[r].y : i == 2 ? w[r].z : w[r].w;
                        d[r] = word_dot<BITS, ZMODE>(u, x0, x1, gp[r], d[r]);
                    }
                }
#pragma unroll
                for (int r = 0; r < ROWS; ++r) {
                    acc[r] = ZMODE == GEMV_QZERO_FLOAT ? acc[r] + d[r] : fmaf(gp[r].s, d[r], acc[r]);
                    w[r] = wn[r];
                }
            }
        }
        if (row0 >= a.m) continue;
#pragma unroll
        for (int r = 0; r < ROWS; ++r)
            for (int o = P / 2; o > 0; o /= 2) acc[r] += __shfl_xor_sync(mask, acc[r], o);
        // Lane r stores row r: the stores of a team go out together.
#pragma unroll
        for (int r = 0; r < ROWS; ++r) {
            const int64_t row = row0 + r;
            if (lane == r % P && row < a.m) q_store_row<T>(a, row, acc[r]);
        }
    }
}

template <typename T, int BITS, int ZMODE>
cudaError_t launch_rows_of(const QLaunch &L, cudaStream_t stream) {
    const LaunchPlan p = qrow_plan(L);
    switch (L.rows) {
    case 1: return launch_kernel(gemv_qrows_kernel<T, BITS, ZMODE, 1>, p.grid, p.block, p.dynamic_smem, stream, L.args.pdl, L.args);
    case 2: return launch_kernel(gemv_qrows_kernel<T, BITS, ZMODE, 2>, p.grid, p.block, p.dynamic_smem, stream, L.args.pdl, L.args);
    default: return launch_kernel(gemv_qrows_kernel<T, BITS, ZMODE, 4>, p.grid, p.block, p.dynamic_smem, stream, L.args.pdl, L.args);
    }
}

template <typename T, int BITS> cudaError_t launch_zero_mode(const QLaunch &L, cudaStream_t stream) {
    switch (L.zero_mode) {
    case GEMV_QZERO_SYMMETRIC: return launch_rows_of<T, BITS, GEMV_QZERO_SYMMETRIC>(L, stream);
    case GEMV_QZERO_INT: return launch_rows_of<T, BITS, GEMV_QZERO_INT>(L, stream);
    default: return launch_rows_of<T, BITS, GEMV_QZERO_FLOAT>(L, stream);
    }
}

template <typename T> cudaError_t launch_bits(const QLaunch &L, cudaStream_t stream) {
    return L.bits == 4 ? launch_zero_mode<T, 4>(L, stream) : launch_zero_mode<T, 8>(L, stream);
}

} // namespace

cudaError_t launch_qrows(const QLaunch &L, cudaStream_t stream) {
    return L.dtype == GEMV_DTYPE_BF16 ? launch_bits<__nv_bfloat16>(L, stream) : launch_bits<__half>(L, stream);
}

} // namespace libgemv
