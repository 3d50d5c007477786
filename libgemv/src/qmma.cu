// Kernel family "quantized tensor-core rows" (variants q_mma and q_mma_x_held): y = alpha * W
// x + beta * y for int4 weights on mma.sync (m16n8k16, fp32 accumulation). q_mma: symmetric or
// integer zeros in groups of 128 or more (or one a row), fp16; q_mma_x_held (at the end of
// the file): every zero mode and group size, fp16 or bf16, x held in registers.
//
// W is the MMA's A (16 rows a warp), x its B (every column of B is x, so every column of D
// holds the 16 rows' dot products). Codes become exact fp16 (q - z) with one LOP3 and one
// HADD2/HFMA2 a pair, straight from the natural layout (docs/quantized.md): a pair is two
// codes of one word, 4 apart, and x is staged in that same pair order, which the MMA allows
// (any column order works while A and B agree). Each byte of W is loaded by one thread; ncu
// counts 4.6 instructions a code against q_rows' 5.9 (28672 x 8192), and the kernel is
// issue-bound (benchmarks/NOTES.md section 21).
//
// threads_per_row = 32 kw: kw warps share a tile's 16 rows and take its steps in turn, so a
// block reads kw x 64 contiguous bytes of each row at once (their sums are added in turn
// order). kw = 2 ran 4-9% faster on some large shapes (128256 x 4096, 11008 x 10944), kw >= 4
// slower everywhere (benchmarks/results/h100-2026-11-24-s9-qmma-kwarps.txt): the tuner
// searches it, the heuristic keeps kw = 1.
#include "common.cuh"

namespace libgemv {

namespace {

__device__ __forceinline__ void mma_16816(float (&c)[4], uint32_t a0, uint32_t a1, uint32_t a2, uint32_t a3,
                                          uint32_t b0, uint32_t b1) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
                 "{%0,%1,%2,%3};"
                 : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
                 : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
#endif
}

constexpr int kPairsPadded = 18; // a pack's 16 x pairs, padded: the quad's 4 packs hit 4 bank pairs

// int8: bytes (0, 1) or (2, 3) of u (SEL 0x4140 or 0x4342) under 0x64 (1024 + q, exact), plus
// zero_add = -(1024 + z).
template <uint32_t SEL> __device__ __forceinline__ uint32_t byte_pair(uint32_t u, __half2 zero_add) {
    uint32_t d;
    asm("prmt.b32 %0, %1, %2, %3;" : "=r"(d) : "r"(u), "r"(0x64646464u), "n"(SEL));
    const __half2 v = __hadd2(*reinterpret_cast<const __half2 *>(&d), zero_add);
    return *reinterpret_cast<const uint32_t *>(&v);
}

// The 4 pairs of word u (codes (0,4), (1,5), (2,6), (3,7)) minus the zero, exactly, as fp16:
// LOP3 puts two nibbles under 0x6400 (1024 + q, or 1024 + 16 q for the high nibbles).
struct ZeroAdd {
    __half2 low, high; // (-(1024 + z)) and (-(64 + z)), both halves
};
__device__ __forceinline__ void word_pairs(uint32_t u, const ZeroAdd &z, uint32_t (&p)[4]) {
    const __half2 sixteenth = __float2half2_rn(1.f / 16.f);
    const uint32_t h = u >> 8;
    p[0] = as_u32(__hadd2(as_h2(and_or<0x000F000Fu, 0x64006400u>(u)), z.low));
    p[1] = as_u32(__hfma2(as_h2(and_or<0x00F000F0u, 0x64006400u>(u)), sixteenth, z.high));
    p[2] = as_u32(__hadd2(as_h2(and_or<0x000F000Fu, 0x64006400u>(h)), z.low));
    p[3] = as_u32(__hfma2(as_h2(and_or<0x00F000F0u, 0x64006400u>(h)), sixteenth, z.high));
}

// Both rows' zero terms from (z of row g, z of row g + 8), through fp32 (exact: integers).
// In fp16 arithmetic (two HADD2, four PRMT) ptxas gave the kernel 100 registers against 80
// and the larger shapes' best configs ran 7-12% slower (benchmarks/NOTES.md section 29; a CPU
// test holds 80).
__device__ __forceinline__ void zero_adds(__half2 z01, ZeroAdd &z0, ZeroAdd &z1) {
    z0 = {__float2half2_rn(-(1024.f + __low2float(z01))), __float2half2_rn(-(64.f + __low2float(z01)))};
    z1 = {__float2half2_rn(-(1024.f + __high2float(z01))), __float2half2_rn(-(64.f + __high2float(z01)))};
}

// x staged in the codes' pair order: pair j of pack p (word j / 4, codes j % 4 and j % 4 + 4)
// at xs2[p * kPairsPadded + j], through perm; zero past K and past the n staged columns, up
// to whole steps of 4 packs (a quad's packs past the slice read zero codes and zero x).
__device__ __forceinline__ void stage_x_pairs(uint32_t *xs2, const QArgs &a, int64_t k0, int n) {
    const int64_t end = min(k0 + n, a.k);
    auto at = [&](int64_t c) { return c < end ? q_x_at<__half>(a, c) : __float2half(0.f); };
    const int packs = (n / 32 + 3) / 4 * 4;
    for (int i = threadIdx.x; i < packs * 16; i += blockDim.x) {
        const int p = i >> 4, j = i & 15;
        const int64_t c = k0 + p * 32 + (j >> 2) * 8 + (j & 3);
        xs2[p * kPairsPadded + j] = as_u32(__halves2half2(at(c), at(c + 4)));
    }
}

// A 16-row tile's sums stored (acc0: row g, acc1: row g + 8, held by lanes t = 0 of each of
// its kw K warps): one K warp stores its own; several are added in warp order (deterministic)
// by the first. Every thread of the block calls it (it synchronizes when kw > 1).
template <typename T = __half>
__device__ __forceinline__ void store_tile_sums(const QArgs &a, float (*warp_sums)[16], int64_t row0, bool active,
                                                int kw, float acc0, float acc1) {
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, kwi = warp & (kw - 1), g = lane >> 2, t = lane & 3;
    if (kw == 1) {
        if (active && t == 0) {
            if (row0 + g < a.m) q_store_row<T>(a, row0 + g, acc0);
            if (row0 + g + 8 < a.m) q_store_row<T>(a, row0 + g + 8, acc1);
        }
        return;
    }
    if (active && t == 0) warp_sums[warp][g] = acc0, warp_sums[warp][g + 8] = acc1;
    __syncthreads();
    if (active && kwi == 0 && lane < 16 && row0 + lane < a.m) {
        float sum = 0.f;
        for (int j = 0; j < kw; ++j) sum += warp_sums[warp + j][lane];
        q_store_row<T>(a, row0 + lane, sum);
    }
    __syncthreads();
}

// A warp owns 16 rows; thread (g, t) reads pack 4s + t of rows g and g + 8 at step s (the quad
// covers 128 columns a step, every byte loaded once), and its 16 pairs a row feed 8 MMAs.
// Which columns a pair holds does not matter to the MMA as long as x's pair holds the same
// ones, so x is staged in the codes' order and the natural layout needs no byte shuffles.
// A step lies in one group (groups of 128 or more, slices of whole steps): its sum is
// scaled once.
template <int ZMODE> __global__ void __launch_bounds__(kQmmaMaxThreads) gemv_qmma_kernel(const QArgs a) {
    extern __shared__ float4 smem4[];
    uint32_t *xs2 = reinterpret_cast<uint32_t *>(smem4);
    __shared__ float warp_sums[kQmmaMaxThreads / 32][16]; // each K warp's sums of its tile's rows
    constexpr int STEP = 128;
    pdl_prologue(a.pdl);
    const int64_t kpad = (a.k + 31) / 32 * 32;
    const int64_t k0 = (int64_t)blockIdx.y * a.slice, k1 = min(k0 + a.slice, kpad);
    const bool staged_once = k1 - k0 <= a.chunk;
    if (staged_once) {
        stage_x_pairs(xs2, a, k0, (int)(k1 - k0));
        __syncthreads();
    }
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const int kw_log2 = a.p_log2 - 5, kw = 1 << kw_log2;
    const int kwi = warp & (kw - 1), rw = warp >> kw_log2; // this warp's turn among the K warps, and its tile
    const int g = lane >> 2, t = lane & 3;
    const int64_t tile_rows = (int64_t)a.teams * 16;
    const __half *sc = static_cast<const __half *>(a.scales), *zc = static_cast<const __half *>(a.zeros);
    for (int64_t tile = (int64_t)blockIdx.x * tile_rows; tile < a.m; tile += (int64_t)gridDim.x * tile_rows) {
        const int64_t row0 = tile + (int64_t)rw * 16;
        const bool active = row0 < a.m;
        const int64_t r0 = min(row0 + g, a.m - 1), r1 = min(row0 + g + 8, a.m - 1);
        const uint4 *q0 = reinterpret_cast<const uint4 *>(a.q + r0 * a.ldq);
        const uint4 *q1 = reinterpret_cast<const uint4 *>(a.q + r1 * a.ldq);
        const __half *s0p = sc + r0 * a.lds, *s1p = sc + r1 * a.lds;
        const __half *z0p = ZMODE == GEMV_QZERO_INT ? zc + r0 * a.ldz : nullptr;
        const __half *z1p = ZMODE == GEMV_QZERO_INT ? zc + r1 * a.ldz : nullptr;
        float acc0 = 0.f, acc1 = 0.f;
        for (int64_t c0 = k0; c0 < k1; c0 += a.chunk) {
            const int n = (int)min(a.chunk, k1 - c0), packs = n / 32, steps = (n + STEP - 1) / STEP;
            if (!staged_once) {
                __syncthreads();
                stage_x_pairs(xs2, a, c0, n);
                __syncthreads();
            }
            if (!active) continue;
            const uint4 *c0p = q0 + c0 / 32 + t, *c1p = q1 + c0 / 32 + t; // this thread's pack of step 0
            const int packs_left = packs - t;
            // Step s's group: c0 is a multiple of the step (slices and chunks are), so in 32 bits
            // (group_size 2^62: one group a row, shifted out).
            const uint32_t step0 = (uint32_t)(c0 / STEP), gshift = (uint32_t)min(a.gs_log2 - 7, 31);
            // Step s's codes (zero past the slice) and its group's scales and zeros (of rows g
            // and g + 8), two steps ahead of their use.
            auto load_step = [&](int st, uint4 &w0, uint4 &w1, __half2 &s01, __half2 &z01) {
                const bool in = 4 * st < packs_left;
                w0 = in ? load_a_pack(c0p + 4 * st) : make_uint4(0, 0, 0, 0);
                w1 = in ? load_a_pack(c1p + 4 * st) : make_uint4(0, 0, 0, 0);
                const uint32_t gi = (step0 + (uint32_t)min(st, steps - 1)) >> gshift;
                s01 = __halves2half2(load_readonly(s0p + gi), load_readonly(s1p + gi));
                z01 = ZMODE == GEMV_QZERO_INT ? __halves2half2(load_readonly(z0p + gi), load_readonly(z1p + gi))
                                              : __float2half2_rn(8.f);
            };
            uint4 w0, w1, n0, n1, m0, m1;
            __half2 s01, z01, ns01, nz01, ms01, mz01; // scales and zeros of rows (g, g + 8)
            load_step(kwi, w0, w1, s01, z01);
            load_step(kwi + kw, n0, n1, ns01, nz01);
            for (int st = kwi; st < steps; st += kw) {
                load_step(st + 2 * kw, m0, m1, ms01, mz01);
                ZeroAdd z0, z1;
                zero_adds(z01, z0, z1);
                uint32_t a0[16], a1[16]; // pairs of rows g and g + 8
                word_pairs(w0.x, z0, *reinterpret_cast<uint32_t(*)[4]>(a0 + 0));
                word_pairs(w0.y, z0, *reinterpret_cast<uint32_t(*)[4]>(a0 + 4));
                word_pairs(w0.z, z0, *reinterpret_cast<uint32_t(*)[4]>(a0 + 8));
                word_pairs(w0.w, z0, *reinterpret_cast<uint32_t(*)[4]>(a0 + 12));
                word_pairs(w1.x, z1, *reinterpret_cast<uint32_t(*)[4]>(a1 + 0));
                word_pairs(w1.y, z1, *reinterpret_cast<uint32_t(*)[4]>(a1 + 4));
                word_pairs(w1.z, z1, *reinterpret_cast<uint32_t(*)[4]>(a1 + 8));
                word_pairs(w1.w, z1, *reinterpret_cast<uint32_t(*)[4]>(a1 + 12));
                const uint2 *xp = reinterpret_cast<const uint2 *>(xs2 + (st * 4 + t) * kPairsPadded);
                float c[4] = {0.f, 0.f, 0.f, 0.f};
#pragma unroll
                for (int i = 0; i < 8; ++i) {
                    const uint2 b = xp[i];
                    mma_16816(c, a0[2 * i], a1[2 * i], a0[2 * i + 1], a1[2 * i + 1], b.x, b.y);
                }
                acc0 = fmaf(__low2float(s01), c[0], acc0);
                acc1 = fmaf(__high2float(s01), c[2], acc1);
                w0 = n0, w1 = n1, s01 = ns01, z01 = nz01;
                n0 = m0, n1 = m1, ns01 = ms01, nz01 = mz01;
            }
        }
        store_tile_sums(a, warp_sums, row0, active, kw, acc0, acc1);
    }
}

// x_in_smem = 0: x read in place through L1, no block stages it (incx 1, 16-byte aligned, no
// perm: can_implement). Stripped to loads alone, q_mma's kernel above read its codes 1.3-1.45x
// slower than the dense kernels read the same bytes, with ~15 warps an SM; here blocks are
// small and every warp streams one contiguous range of its slice's steps (the kw warps of a
// tile split them in order), so many more warps stay resident (benchmarks/NOTES.md section
// 32: int4 g128 8192^2 19.4 against 20.5 us staged). Threads g = 0 load their pack's 32 columns of x
// (4 x 16 bytes) at the step and pair them as the codes with PRMT: lanes g > 0 leave B's other
// columns zero. Codes, scales and zeros come one step ahead; two accumulators take alternate
// words (shorter MMA chains).
__device__ __forceinline__ uint4 x_pack_at(const __half *x, int64_t c, int64_t k) {
    if (c + 8 <= k) return __ldg(reinterpret_cast<const uint4 *>(x + c));
    uint32_t w[4];
#pragma unroll
    for (int j = 0; j < 4; ++j) {
        const __half lo = c + 2 * j < k ? x[c + 2 * j] : __float2half(0.f);
        const __half hi = c + 2 * j + 1 < k ? x[c + 2 * j + 1] : __float2half(0.f);
        w[j] = as_u32(__halves2half2(lo, hi));
    }
    return make_uint4(w[0], w[1], w[2], w[3]);
}

template <int ZMODE> __global__ void __launch_bounds__(kQmmaMaxThreads, 4) gemv_qmma_inplace_kernel(const QArgs a) {
    __shared__ float warp_sums[kQmmaMaxThreads / 32][16];
    constexpr int STEP = 128;
    pdl_prologue(a.pdl);
    const int64_t k0 = (int64_t)blockIdx.y * a.slice, k1 = min(k0 + a.slice, a.k);
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const int kw_log2 = a.p_log2 - 5, kw = 1 << kw_log2;
    const int kwi = warp & (kw - 1), rw = warp >> kw_log2;
    const int g = lane >> 2, t = lane & 3;
    const int64_t packs = (a.k + 31) / 32, steps = (k1 - k0 + STEP - 1) / STEP;
    // This warp's steps (32 bits: can_implement takes K up to 2^36 here).
    const int s_begin = (int)(steps * kwi / kw), s_end = (int)(steps * (kwi + 1) / kw);
    const int64_t tile_rows = (int64_t)a.teams * 16;
    const __half *x = static_cast<const __half *>(a.x);
    const __half *sc = static_cast<const __half *>(a.scales), *zc = static_cast<const __half *>(a.zeros);
    const uint32_t gshift = (uint32_t)min(a.gs_log2, 62);
    for (int64_t tile = (int64_t)blockIdx.x * tile_rows; tile < a.m; tile += (int64_t)gridDim.x * tile_rows) {
        const int64_t row0 = tile + (int64_t)rw * 16;
        const bool active = row0 < a.m;
        const int64_t r0 = min(row0 + g, a.m - 1), r1 = min(row0 + g + 8, a.m - 1);
        const uint4 *q0 = reinterpret_cast<const uint4 *>(a.q + r0 * a.ldq) + t;
        const uint4 *q1 = reinterpret_cast<const uint4 *>(a.q + r1 * a.ldq) + t;
        const __half *s0p = sc + r0 * a.lds, *s1p = sc + r1 * a.lds;
        const __half *z0p = ZMODE == GEMV_QZERO_INT ? zc + r0 * a.ldz : nullptr;
        const __half *z1p = ZMODE == GEMV_QZERO_INT ? zc + r1 * a.ldz : nullptr;
        float acc0 = 0.f, acc1 = 0.f;
        // Step s (columns k0 + 128 s on): this thread's pack of rows g and g + 8 (zero past the
        // row's packs) and its group's scales and zeros.
        auto load_step = [&](int s, uint4 &w0, uint4 &w1, __half2 &s01, __half2 &z01) {
            const int64_t c = k0 + (int64_t)s * STEP, pack = c / 32;
            const bool in = s < s_end && pack + t < packs;
            w0 = in ? load_codes_past_l1(q0 + pack) : make_uint4(0, 0, 0, 0);
            w1 = in ? load_codes_past_l1(q1 + pack) : make_uint4(0, 0, 0, 0);
            const int64_t gi = min(c, a.k - 1) >> gshift;
            s01 = __halves2half2(load_readonly(s0p + gi), load_readonly(s1p + gi));
            z01 = ZMODE == GEMV_QZERO_INT ? __halves2half2(load_readonly(z0p + gi), load_readonly(z1p + gi))
                                          : __float2half2_rn(8.f);
        };
        uint4 w0, w1, n0, n1;
        __half2 s01, z01, ns01, nz01;
        if (active && s_begin < s_end) load_step(s_begin, w0, w1, s01, z01);
        for (int s = s_begin; active && s < s_end; ++s) {
            load_step(s + 1, n0, n1, ns01, nz01);
            uint4 X[4] = {}; // x of this thread's pack (lanes g = 0: B's column 0)
            if (g == 0) {
                const int64_t c = k0 + (int64_t)s * STEP + 32 * t;
#pragma unroll
                for (int j = 0; j < 4; ++j) X[j] = x_pack_at(x, c + 8 * j, a.k);
            }
            ZeroAdd z0, z1;
            zero_adds(z01, z0, z1);
            const uint32_t u0[4] = {w0.x, w0.y, w0.z, w0.w}, u1[4] = {w1.x, w1.y, w1.z, w1.w};
            float c[2][4] = {};
#pragma unroll
            for (int j = 0; j < 4; ++j) {
                uint32_t p0[4], p1[4]; // word j's pairs (0,4), (1,5), (2,6), (3,7) of rows g and g + 8
                word_pairs(u0[j], z0, p0);
                word_pairs(u1[j], z1, p1);
                mma_16816(c[0], p0[0], p1[0], p0[1], p1[1], prmt(X[j].x, X[j].z, 0x5410), prmt(X[j].x, X[j].z, 0x7632));
                mma_16816(c[1], p0[2], p1[2], p0[3], p1[3], prmt(X[j].y, X[j].w, 0x5410), prmt(X[j].y, X[j].w, 0x7632));
            }
            acc0 = fmaf(__low2float(s01), c[0][0] + c[1][0], acc0);
            acc1 = fmaf(__high2float(s01), c[0][2] + c[1][2], acc1);
            w0 = n0, w1 = n1, s01 = ns01, z01 = nz01;
        }
        store_tile_sums(a, warp_sums, row0, active, kw, acc0, acc1);
    }
}


// Variant q_mma_x_held: x held in registers. Each warp loads the B fragments of `S` steps of x
// once (S = unroll: 16 S registers) and walks the block's rows_per_block tiles with them, so a
// code byte costs no x load or PRMT; the x-in-place kernel above loads and pairs a step's x for
// every tile. The block's kw warps take its slice's chunks of S steps in turn, each adding its
// tiles' sums into its own row of shared memory (chunk order), and the block adds its warps in
// order at the end: deterministic. The grid covers the tiles with few blocks a column
// (blockIdx.x) and the K slices with its rows (blockIdx.y), so split_k, not a long tile walk,
// fills the GPU. Standalone, int4 g128 8192^2 ran 17.6 us against the in-place kernel's 18.9
// and the dispatch's 20.2 (benchmarks/NOTES.md section 33). Codes, scales and zeros come one
// tile ahead, a chunk's first tile asked for before its x (the two round trips overlap).
//
// fp16 or bf16 (T), and every zero mode. A pair of codes becomes (q - z) exactly in T (|q - z|
// <= 15 fits either mantissa): fp16 as the kernels above; bf16 has 7 mantissa bits, so each
// nibble is shifted down to bits 0-3 under 0x4300 (128 + q) and one HADD2 takes 128 + z off.
// Float zeros (w = q s + z) enter as q, and a group's sum is s (q . x) + z (sum of x): the sum
// of a step's x is taken once a chunk, so they cost one FFMA a row and step more.
template <typename T> struct MmaOf;
template <> struct MmaOf<__half> {
    using T2 = __half2;
    static constexpr uint32_t kMagic = 0x64006400u; // 1024 in both halves
    static constexpr uint32_t kOnes = 0x3C003C00u;  // (1, 1)
    __device__ static T2 pair(float v) { return __float2half2_rn(v); }
    __device__ static float low(T2 v) { return __low2float(v); }
    __device__ static float high(T2 v) { return __high2float(v); }
    __device__ static T2 halves(const void *p0, const void *p1) {
        return __halves2half2(load_readonly(static_cast<const __half *>(p0)), load_readonly(static_cast<const __half *>(p1)));
    }
    __device__ static void mma(float (&c)[4], uint32_t a0, uint32_t a1, uint32_t a2, uint32_t a3, uint32_t b0, uint32_t b1) {
        mma_16816(c, a0, a1, a2, a3, b0, b1);
    }
    // Word u's pairs (codes (0,4), (1,5), (2,6), (3,7)) minus z: low nibbles under 0x6400
    // plus -(1024 + z), high ones times 1/16 plus -(64 + z).
    __device__ static void pairs(uint32_t u, float z, uint32_t (&p)[4]) {
        word_pairs(u, ZeroAdd{pair(-(1024.f + z)), pair(-(64.f + z))}, p);
    }
};
template <> struct MmaOf<__nv_bfloat16> {
    using T2 = __nv_bfloat162;
    static constexpr uint32_t kOnes = 0x3F803F80u; // (1, 1)
    __device__ static T2 pair(float v) { return __float2bfloat162_rn(v); }
    __device__ static float low(T2 v) { return __low2float(v); }
    __device__ static float high(T2 v) { return __high2float(v); }
    __device__ static T2 halves(const void *p0, const void *p1) {
        return __halves2bfloat162(load_readonly(static_cast<const __nv_bfloat16 *>(p0)),
                                  load_readonly(static_cast<const __nv_bfloat16 *>(p1)));
    }
    __device__ static void mma(float (&c)[4], uint32_t a0, uint32_t a1, uint32_t a2, uint32_t a3, uint32_t b0, uint32_t b1) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
        asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
                     "{%0,%1,%2,%3};"
                     : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
                     : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
#endif
    }
    __device__ static void pairs(uint32_t u, float z, uint32_t (&p)[4]) { bf16_code_pairs(u, z, p); }
};

// Groups of 32 or 64 (PPG = 1 or 2 packs a group; 0: a step lies in one group): a step holds
// 4 or 2 groups, and B's columns keep them apart. Pack t of a step (thread t's 32 columns) is
// group t / PPG of it, and its x goes to B's column 2 (t / PPG), the other lanes' columns
// zero, so D's column 2n sums group n alone, for the same MMAs. Lane t holds D's columns 2t
// and 2t + 1 (c[0], c[1] of row g, c[2], c[3] of row g + 8) and scales column 2t by group t's
// scale, as a group of 128 is scaled, and the lanes' sums join lane t = 0's at the end: one
// scale (and zero) a lane, not two, ran groups of 64 and 32 1.02-1.22x faster (NOTES.md
// sections 50-51). A lane's codes are in one group: their zero is that group's.
//
// int8 (BITS 8, fp16, groups of 64 up or one a row): a pack is 16 columns, a step 64; a word's
// bytes (0, 1) and (2, 3) go under 0x64 with one PRMT (1024 + q, exact) and one HADD2 takes
// 1024 + z off: a word feeds one MMA, whose x pairs are in natural order.
//
// Before the PDL wait, the first wave's blocks ask L2 for the codes of their first
// prefetch_tiles tiles in every warp's first chunk: on a small matrix every warp has one
// chunk and one or two tiles, so that round trip is most of the kernel. Inline: as an
// out-of-line call (prefetch_first_rows' form) it cost the two-step kernels 5-10% on large
// matrices (28672 x 8192 int4 g128 55.5 against 50.6 us; NOTES.md section 35).
// Groups of 32 or 64 (PPG packs a group): lane t scaled D's column 2t, group t of the step
// (SPREAD: pack t of a group of 64, group t / 2); the lanes that hold one join lane t = 0.
// Lanes t = 2, 3 of groups of 64 hold zero columns and are left out.
template <int PPG, bool SPREAD = false> __device__ __forceinline__ void join_group_lanes(float &acc0, float &acc1) {
    if constexpr (PPG == 1 || SPREAD) {
        acc0 += __shfl_down_sync(0xffffffffu, acc0, 2);
        acc1 += __shfl_down_sync(0xffffffffu, acc1, 2);
    }
    if constexpr (PPG > 0) {
        acc0 += __shfl_down_sync(0xffffffffu, acc0, 1);
        acc1 += __shfl_down_sync(0xffffffffu, acc1, 1);
    }
}

template <typename T, int ZMODE, int S, int PPG, int BITS>
__global__ void __launch_bounds__(kQmmaMaxThreads, S == 1 ? (PPG ? 3 : 4) : 2) gemv_qmma_x_held_kernel(const QArgs a) {
    constexpr bool SUB = PPG > 0; // several groups a step
    static_assert(PPG >= 0 && PPG <= 2 && (BITS == 4 || (BITS == 8 && !SUB && std::is_same_v<T, __half>)),
                  "int4 in groups of 32 (PPG 1), 64 (2) or a step up (0); int8: fp16, a group a step");
    using M = MmaOf<T>;
    using T2 = typename M::T2;
    extern __shared__ float warp_rows[]; // [kw][teams * 16]: each K warp's sums of the block's rows
    constexpr int CPP = 128 / BITS, STEP = 4 * CPP, XV = CPP / 8; // codes a pack, columns a step, x packs a pack
    constexpr float SYMMETRIC_ZERO = BITS == 4 ? 8.f : 128.f;
    constexpr bool FLOAT_ZEROS = ZMODE == GEMV_QZERO_FLOAT;
    const int lane = threadIdx.x & 31, kwi = threadIdx.x >> 5, kw = blockDim.x >> 5;
    const int g = lane >> 2, t = lane & 3;
    const int64_t k0 = (int64_t)blockIdx.y * a.slice, k1 = min(k0 + a.slice, a.k);
    const int steps = (int)((k1 - k0 + STEP - 1) / STEP); // slices are at most 2^36 columns (can_implement)
    const int64_t packs = (a.k + CPP - 1) / CPP, row_base = (int64_t)blockIdx.x * a.teams * 16;
    const int tiles = (int)min((int64_t)a.teams, (a.m - row_base + 15) / 16), rows = tiles * 16;
    if (a.prefetch_tiles > 0 && (int64_t)blockIdx.y * gridDim.x + blockIdx.x < a.prefetch_blocks) {
        const int64_t cols = min((int64_t)kw * S * STEP, k1 - k0); // every warp's first chunk
        const int ahead = (int)min(a.m - row_base, (int64_t)min(rows, 16 * a.prefetch_tiles));
        const int lines = (int)((cols * BITS / 8 + 127) / 128);
        for (int i = threadIdx.x; i < ahead * lines; i += blockDim.x)
            asm volatile("prefetch.global.L2 [%0];" ::"l"(a.q + (row_base + i % ahead) * a.ldq + k0 * BITS / 8 +
                                                          (int64_t)(i / ahead) * 128));
    }
    pdl_prologue(a.pdl);
    float *mine = warp_rows + kwi * a.teams * 16;
    for (int i = lane; i < rows; i += 32) mine[i] = 0.f;
    __syncwarp();
    const __half *x = static_cast<const __half *>(a.x); // 16-bit words: the PRMTs do not care which type
    const T *sc = static_cast<const T *>(a.scales), *zc = static_cast<const T *>(a.zeros);
    const uint32_t gshift = (uint32_t)min(a.gs_log2, 62);
    const int x_col = SUB ? 2 * (t / (SUB ? PPG : 1)) : 0; // B's column of this thread's pack
    const int64_t last_group = (a.k - 1) >> gshift;
    for (int cs = kwi * S; cs < steps; cs += kw * S) {
        // Tile j's codes of rows g and g + 8 (clamped; zero past the slice or the row's packs),
        // the zero of this thread's pack (its group's), and the scale (and float zero) of this
        // thread's D column 2t (SUB: group t of the step; else column 0's, the step's group).
        struct Scaled {
            T2 s0, z0; // rows (g, g + 8); z0: the pack's zero (float: column 2t's)
        };
        auto load_tile = [&](int j, uint4 (&w)[S][2], Scaled (&f)[S]) {
            const int64_t r0 = min(row_base + 16 * j + g, a.m - 1), r1 = min(row_base + 16 * j + g + 8, a.m - 1);
#pragma unroll
            for (int i = 0; i < S; ++i) {
                const int64_t c = k0 + (int64_t)(cs + i) * STEP, pack = c / CPP + t;
                const bool in = cs + i < steps && pack < packs;
                w[i][0] = in ? load_codes_past_l1(reinterpret_cast<const uint4 *>(a.q + r0 * a.ldq) + pack) : make_uint4(0, 0, 0, 0);
                w[i][1] = in ? load_codes_past_l1(reinterpret_cast<const uint4 *>(a.q + r1 * a.ldq) + pack) : make_uint4(0, 0, 0, 0);
                const int64_t step_group = min(c, a.k - 1) >> gshift;
                const int64_t ga = SUB ? min(step_group + t, last_group) : step_group;
                f[i].s0 = M::halves(sc + r0 * a.lds + ga, sc + r1 * a.lds + ga);
                if constexpr (ZMODE == GEMV_QZERO_SYMMETRIC) {
                    f[i].z0 = M::pair(SYMMETRIC_ZERO);
                } else if constexpr (FLOAT_ZEROS) {
                    f[i].z0 = M::halves(zc + r0 * a.ldz + ga, zc + r1 * a.ldz + ga);
                } else {
                    const int64_t own = SUB ? min((min(c, a.k - 1) + 32 * t) >> gshift, last_group) : step_group;
                    f[i].z0 = M::halves(zc + r0 * a.ldz + own, zc + r1 * a.ldz + own);
                }
            }
        };
        uint4 w[S][2], nw[S][2];
        Scaled f[S], nf[S];
        load_tile(0, w, f); // before x
        uint32_t b[S][4][4]; // steps cs .. cs + S - 1: word j's two B fragments (x pairs in the codes' order)
        float xsum[S];       // float zeros: the sum of x of this thread's D column 2t
#pragma unroll
        for (int i = 0; i < S; ++i) {
            const int64_t c = k0 + (int64_t)(cs + i) * STEP + CPP * t;
            float part = 0.f;
#pragma unroll
            for (int j = 0; j < XV; ++j) {
                const uint4 X = g == x_col && cs + i < steps ? x_pack_at(x, c + 8 * j, a.k) : make_uint4(0, 0, 0, 0);
                if constexpr (BITS == 4) {
                    b[i][j][0] = prmt(X.x, X.z, 0x5410), b[i][j][1] = prmt(X.x, X.z, 0x7632);
                    b[i][j][2] = prmt(X.y, X.w, 0x5410), b[i][j][3] = prmt(X.y, X.w, 0x7632);
                } else { // words 2j, 2j + 1 of the pack: columns (8j .. 8j + 3), (8j + 4 .. 8j + 7)
                    b[i][2 * j][0] = X.x, b[i][2 * j][1] = X.y, b[i][2 * j + 1][0] = X.z, b[i][2 * j + 1][1] = X.w;
                }
                if constexpr (FLOAT_ZEROS) {
                    const uint32_t w[4] = {X.x, X.y, X.z, X.w};
#pragma unroll
                    for (int h = 0; h < 4; ++h) {
                        const T2 v = *reinterpret_cast<const T2 *>(&w[h]);
                        part += M::low(v) + M::high(v);
                    }
                }
            }
            if constexpr (FLOAT_ZEROS) {
                // Column n's sum of x: over the lanes g = n (SUB), or over all of them (column 0).
#pragma unroll
                for (int o = 1; o < (SUB ? 4 : 32); o <<= 1) part += __shfl_xor_sync(0xffffffffu, part, o);
                xsum[i] = SUB ? __shfl_sync(0xffffffffu, part, 8 * t) : part; // SUB: lane (g = 2t, 0)
            }
        }
        for (int j = 0; j < tiles; ++j) {
            if (j + 1 < tiles) load_tile(j + 1, nw, nf);
            float acc0 = 0.f, acc1 = 0.f;
#pragma unroll
            for (int i = 0; i < S; ++i) {
                // Pairs hold q - z (integer zeros), q - 8 (symmetric) or q (float zeros).
                const float za = FLOAT_ZEROS ? 0.f : M::low(f[i].z0), zb = FLOAT_ZEROS ? 0.f : M::high(f[i].z0);
                const uint32_t u0[4] = {w[i][0].x, w[i][0].y, w[i][0].z, w[i][0].w};
                const uint32_t u1[4] = {w[i][1].x, w[i][1].y, w[i][1].z, w[i][1].w};
                float c[2][4] = {};
#pragma unroll
                for (int q = 0; q < 4; ++q) {
                    if constexpr (BITS == 4) {
                        uint32_t p0[4], p1[4]; // word q's pairs of rows g and g + 8
                        M::pairs(u0[q], za, p0);
                        M::pairs(u1[q], zb, p1);
                        M::mma(c[0], p0[0], p1[0], p0[1], p1[1], b[i][q][0], b[i][q][1]);
                        M::mma(c[1], p0[2], p1[2], p0[3], p1[3], b[i][q][2], b[i][q][3]);
                    } else {
                        const __half2 za2 = __float2half2_rn(-(1024.f + za)), zb2 = __float2half2_rn(-(1024.f + zb));
                        const uint32_t a0 = byte_pair<0x4140>(u0[q], za2), a2 = byte_pair<0x4342>(u0[q], za2);
                        const uint32_t a1 = byte_pair<0x4140>(u1[q], zb2), a3 = byte_pair<0x4342>(u1[q], zb2);
                        M::mma(c[q & 1], a0, a1, a2, a3, b[i][q][0], b[i][q][1]);
                    }
                }
                if constexpr (FLOAT_ZEROS) {
                    acc0 = fmaf(M::low(f[i].z0), xsum[i], acc0);
                    acc1 = fmaf(M::high(f[i].z0), xsum[i], acc1);
                }
                acc0 = fmaf(M::low(f[i].s0), c[0][0] + c[1][0], acc0);
                acc1 = fmaf(M::high(f[i].s0), c[0][2] + c[1][2], acc1);
            }
            join_group_lanes<PPG>(acc0, acc1);
            if (t == 0) mine[16 * j + g] += acc0, mine[16 * j + g + 8] += acc1;
#pragma unroll
            for (int i = 0; i < S; ++i) w[i][0] = nw[i][0], w[i][1] = nw[i][1], f[i] = nf[i];
        }
    }
    __syncthreads();
    for (int i = threadIdx.x; i < rows; i += blockDim.x) {
        if (row_base + i >= a.m) continue;
        float sum = 0.f;
        for (int j = 0; j < kw; ++j) sum += warp_rows[j * a.teams * 16 + i];
        q_store_row<T>(a, row_base + i, sum);
    }
}

template <typename T, int S, int PPG, int BITS = 4>
cudaError_t launch_x_held(const QLaunch &L, const LaunchPlan &p, cudaStream_t stream) {
    auto kernel = L.zero_mode == GEMV_QZERO_INT     ? gemv_qmma_x_held_kernel<T, GEMV_QZERO_INT, S, PPG, BITS>
                  : L.zero_mode == GEMV_QZERO_FLOAT ? gemv_qmma_x_held_kernel<T, GEMV_QZERO_FLOAT, S, PPG, BITS>
                                                    : gemv_qmma_x_held_kernel<T, GEMV_QZERO_SYMMETRIC, S, PPG, BITS>;
    return launch_kernel(kernel, p.grid, p.block, p.dynamic_smem, stream, L.args.pdl, L.args);
}
// int8: fp16, a group a step. int4 groups of 32 and 64 (gs_log2 5, 6): 1 and 2 packs a group.
template <typename T, int S> cudaError_t launch_x_held(const QLaunch &L, const LaunchPlan &p, cudaStream_t stream) {
    if constexpr (std::is_same_v<T, __half>) {
        if (L.bits == 8) return launch_x_held<T, S, 0, 8>(L, p, stream);
    }
    if (L.args.gs_log2 == 5) return launch_x_held<T, S, 1>(L, p, stream);
    return L.args.gs_log2 == 6 ? launch_x_held<T, S, 2>(L, p, stream) : launch_x_held<T, S, 0>(L, p, stream);
}

// Variant q_mma_rounds: a 16-row tile a block, its kw warps taking the steps of 128 columns
// in rounds (warp w: steps w, w + kw, ... ; `unroll` of them a round), every load of a round
// (codes, x, scales, zeros) asked for before any of it is used; K unsplit (no workspace) or, in
// the SPLIT instance, in slices whose partials the two-pass reduce adds. It
// is q_mma's in-place arithmetic on x held's formats (int4, groups of 128 up or one a row,
// every zero mode, fp16 or bf16) with the loop of benchmarks/experiments/qdmma.cu's
// qdm2_kernel, which ran the small and medium matrices 1.1-1.35x faster than the kernels
// here (bf16 float zeros 4096^2 6.35 us against x held's 7.48; NOTES.md section 42). Float
// zeros: the pairs hold q, and a step's sum of x comes from two more MMAs a word of an
// all-ones A on the same B fragments (it lands in D's column 0 of lanes t = 0, every row).
// Groups of 32 or 64 (PPG 1 or 2 packs a group, a step 4 or 2 groups): as x held, x of pack t
// goes to B's column 2 (t / PPG), so D's column 2n sums group n alone; lane t scales column
// 2t by group t's scale (and float zero), and the lanes' sums join lane t = 0's at the end.
// SPREAD (groups of 64): x of pack t in column 2t, which lane t scales by group t / 2's.
// SPLIT (its own instance, so the unsplit one stays as measured): block (x, y) takes slice y's
// steps of its tile (a.slice columns, whole steps) and writes partials for the reduce.
template <typename T, int ZMODE, int U, int PPG, bool SPREAD, bool SPLIT = false>
__global__ void __launch_bounds__(kQmmaMaxThreads, U == 1 ? 3 : 2) gemv_qmma_rounds_kernel(const QArgs a) {
    constexpr bool SUB = PPG > 0; // several groups a step
    static_assert(PPG >= 0 && PPG <= 2 && (!SPREAD || PPG == 2), "groups of 32 (PPG 1), 64 (2) or a step up (0)");
    using M = MmaOf<T>;
    using T2 = typename M::T2;
    constexpr int STEP = 128;
    constexpr bool FLOAT_ZEROS = ZMODE == GEMV_QZERO_FLOAT;
    __shared__ float warp_sums[kQmmaMaxThreads / 32][16];
    const int64_t row0 = (int64_t)blockIdx.x * 16;
    // Before the PDL wait, the first wave asks L2 for the start of its tile's first round
    // (prefetch_lines over the 16 rows), inline as x held's prefetch (NOTES.md section 35).
    if (!SPLIT && a.prefetch_lines > 0 && (int64_t)blockIdx.x < a.prefetch_blocks) {
        const int rows = (int)min((int64_t)16, a.m - row0);
        const int64_t row_bytes = (a.k + 31) / 32 * 16;
        for (int i = threadIdx.x; i < a.prefetch_lines; i += blockDim.x) {
            const int64_t line = i / rows;
            if (line * 128 < row_bytes)
                asm volatile("prefetch.global.L2 [%0];" ::"l"(a.q + (row0 + i % rows) * a.ldq + line * 128));
        }
    }
    pdl_prologue(a.pdl);
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, kw = blockDim.x >> 5;
    const int g = lane >> 2, t = lane & 3;
    const int64_t r0 = min(row0 + g, a.m - 1), r1 = min(row0 + g + 8, a.m - 1); // rows past M: never stored
    const int64_t packs = (a.k + 31) / 32;
    const int all_steps = (int)((a.k + STEP - 1) / STEP); // K up to 2^36 (can_implement)
    const int first_step = SPLIT ? (int)blockIdx.y * (int)(a.slice / STEP) : 0;
    const int steps = SPLIT ? min(all_steps, first_step + (int)(a.slice / STEP)) : all_steps; // the slice's end
    const uint4 *q0 = reinterpret_cast<const uint4 *>(a.q + r0 * a.ldq) + t;
    const uint4 *q1 = reinterpret_cast<const uint4 *>(a.q + r1 * a.ldq) + t;
    const __half *x = static_cast<const __half *>(a.x); // 16-bit words: the PRMTs do not care which type
    const T *sc = static_cast<const T *>(a.scales), *zc = static_cast<const T *>(a.zeros);
    const uint32_t gshift = (uint32_t)min(a.gs_log2, 62);
    // B's column of this thread's pack, and the step's group that D's column 2t sums (SUB)
    const int x_col = !SUB ? 0 : SPREAD ? 2 * t : 2 * (t / (SUB ? PPG : 1));
    const int lane_group = SPREAD ? t / 2 : t;
    const int64_t last_group = (a.k - 1) >> gshift;
    struct Round {
        uint4 w0[U], w1[U], X[U][4]; // step u's packs of rows g and g + 8; x of this thread's pack (lanes g = x_col)
        T2 s[U], z[U];               // scales and zeros, rows (g, g + 8): the step's group's, or (SUB) D column 2t's
    };
    auto load = [&](Round &r, int s0) {
#pragma unroll
        for (int u = 0; u < U; ++u) {
            const int s = s0 + u * kw;
            const int64_t pack = (int64_t)s * 4;
            const bool in = s < steps && pack + t < packs;
            r.w0[u] = in ? load_codes_past_l1(q0 + pack) : make_uint4(0, 0, 0, 0);
            r.w1[u] = in ? load_codes_past_l1(q1 + pack) : make_uint4(0, 0, 0, 0);
        }
#pragma unroll
        for (int u = 0; u < U; ++u) {
            const int s = s0 + u * kw;
            const int64_t c = (int64_t)s * STEP;
#pragma unroll
            for (int j = 0; j < 4; ++j)
                r.X[u][j] = g == x_col && s < steps ? x_pack_at(x, c + 32 * t + 8 * j, a.k) : make_uint4(0, 0, 0, 0);
            const int64_t gi = min(c, a.k - 1) >> gshift;
            if constexpr (SUB) {
                // Groups past the row's last (columns of a short last step, or t's beyond the
                // step's groups) clamp to it: their D columns are zero and never scaled.
                const int64_t ga = min(gi + lane_group, last_group);
                r.s[u] = M::halves(sc + r0 * a.lds + ga, sc + r1 * a.lds + ga);
                if constexpr (ZMODE == GEMV_QZERO_SYMMETRIC) {
                    r.z[u] = M::pair(8.f);
                } else if constexpr (FLOAT_ZEROS) {
                    r.z[u] = M::halves(zc + r0 * a.ldz + ga, zc + r1 * a.ldz + ga);
                } else { // integer zeros go into the pairs: this thread's pack's own group
                    const int64_t own = min((min(c, a.k - 1) + 32 * t) >> gshift, last_group);
                    r.z[u] = M::halves(zc + r0 * a.ldz + own, zc + r1 * a.ldz + own);
                }
            } else {
                r.s[u] = M::halves(sc + r0 * a.lds + gi, sc + r1 * a.lds + gi);
                r.z[u] = ZMODE == GEMV_QZERO_SYMMETRIC ? M::pair(8.f) : M::halves(zc + r0 * a.ldz + gi, zc + r1 * a.ldz + gi);
            }
        }
    };
    // acc1 declared first: so nvcc numbers the registers as the kernels measured before (with
    // acc0 first, the same code ran groups of 32 at one step 2-4% slower; NOTES.md section 51).
    float acc1 = 0.f, acc0 = 0.f;
    Round r;
    for (int s0 = first_step + warp; s0 < steps; s0 += kw * U) {
        load(r, s0);
#pragma unroll
        for (int u = 0; u < U; ++u) {
            if (s0 + u * kw >= steps) break;
            // Pairs hold q - z (integer zeros), q - 8 (symmetric) or q (float zeros).
            const float za = FLOAT_ZEROS ? 0.f : M::low(r.z[u]), zb = FLOAT_ZEROS ? 0.f : M::high(r.z[u]);
            const uint32_t u0[4] = {r.w0[u].x, r.w0[u].y, r.w0[u].z, r.w0[u].w};
            const uint32_t u1[4] = {r.w1[u].x, r.w1[u].y, r.w1[u].z, r.w1[u].w};
            float c[2][4] = {}, sx[4] = {};
#pragma unroll
            for (int j = 0; j < 4; ++j) {
                uint32_t p0[4], p1[4]; // word j's pairs of rows g and g + 8
                M::pairs(u0[j], za, p0);
                M::pairs(u1[j], zb, p1);
                const uint4 X = r.X[u][j];
                const uint32_t b0 = prmt(X.x, X.z, 0x5410), b1 = prmt(X.x, X.z, 0x7632);
                const uint32_t b2 = prmt(X.y, X.w, 0x5410), b3 = prmt(X.y, X.w, 0x7632);
                M::mma(c[0], p0[0], p1[0], p0[1], p1[1], b0, b1);
                M::mma(c[1], p0[2], p1[2], p0[3], p1[3], b2, b3);
                if constexpr (FLOAT_ZEROS) {
                    M::mma(sx, M::kOnes, M::kOnes, M::kOnes, M::kOnes, b0, b1);
                    M::mma(sx, M::kOnes, M::kOnes, M::kOnes, M::kOnes, b2, b3);
                }
            }
            if (PPG != 2 || SPREAD || t < 2) { // groups of 64 in columns 0 and 2: lanes t = 2, 3 hold none
                if constexpr (FLOAT_ZEROS) {
                    acc0 = fmaf(M::low(r.z[u]), sx[0], acc0);
                    acc1 = fmaf(M::high(r.z[u]), sx[0], acc1);
                }
                acc0 = fmaf(M::low(r.s[u]), c[0][0] + c[1][0], acc0);
                acc1 = fmaf(M::high(r.s[u]), c[0][2] + c[1][2], acc1);
            }
        }
    }
    join_group_lanes<PPG, SPREAD>(acc0, acc1);
    store_tile_sums<T>(a, warp_sums, row0, true, kw, acc0, acc1);
}

template <typename T, int U, int PPG, bool SPLIT>
cudaError_t launch_rounds(const QLaunch &L, const LaunchPlan &p, cudaStream_t stream) {
    auto kernel = L.zero_mode == GEMV_QZERO_INT     ? gemv_qmma_rounds_kernel<T, GEMV_QZERO_INT, U, PPG, false, SPLIT>
                  : L.zero_mode == GEMV_QZERO_FLOAT ? gemv_qmma_rounds_kernel<T, GEMV_QZERO_FLOAT, U, PPG, false, SPLIT>
                                                    : gemv_qmma_rounds_kernel<T, GEMV_QZERO_SYMMETRIC, U, PPG, false, SPLIT>;
    return launch_kernel(kernel, p.grid, p.block, p.dynamic_smem, stream, L.args.pdl, L.args);
}
// Groups of 32 and 64 (gs_log2 5, 6): 1 and 2 packs a group. Groups of 64 with float zeros at
// one step a round spread (x of pack t in B's column 2t, as groups of 32): in columns 0 and 2
// they ran 0.90-0.97x the two-columns-a-lane form before (2560 x 3072 bf16 6.13 against 5.51
// us; NOTES.md section 51).
template <typename T, int U, bool SPLIT> cudaError_t launch_rounds(const QLaunch &L, const LaunchPlan &p, cudaStream_t stream) {
    if constexpr (U == 1) {
        if (L.args.gs_log2 == 6 && L.zero_mode == GEMV_QZERO_FLOAT)
            return launch_kernel(gemv_qmma_rounds_kernel<T, GEMV_QZERO_FLOAT, 1, 2, true, SPLIT>, p.grid, p.block,
                                 p.dynamic_smem, stream, L.args.pdl, L.args);
    }
    if (L.args.gs_log2 == 5) return launch_rounds<T, U, 1, SPLIT>(L, p, stream);
    return L.args.gs_log2 == 6 ? launch_rounds<T, U, 2, SPLIT>(L, p, stream) : launch_rounds<T, U, 0, SPLIT>(L, p, stream);
}
template <typename T, int U> cudaError_t launch_rounds(const QLaunch &L, const LaunchPlan &p, cudaStream_t stream) {
    return L.splits > 1 ? launch_rounds<T, U, true>(L, p, stream) : launch_rounds<T, U, false>(L, p, stream);
}

} // namespace

cudaError_t launch_qmma(const QLaunch &L, cudaStream_t stream) {
    const LaunchPlan p = qmma_plan(L);
    if (L.rounds) {
        if (L.dtype == GEMV_DTYPE_BF16)
            return L.unroll == 2 ? launch_rounds<__nv_bfloat16, 2>(L, p, stream) : launch_rounds<__nv_bfloat16, 1>(L, p, stream);
        return L.unroll == 2 ? launch_rounds<__half, 2>(L, p, stream) : launch_rounds<__half, 1>(L, p, stream);
    }
    if (L.x_held) {
        if (L.dtype == GEMV_DTYPE_BF16)
            return L.rows == 2 ? launch_x_held<__nv_bfloat16, 2>(L, p, stream) : launch_x_held<__nv_bfloat16, 1>(L, p, stream);
        return L.rows == 2 ? launch_x_held<__half, 2>(L, p, stream) : launch_x_held<__half, 1>(L, p, stream);
    }
    if (!L.x_staged) {
        if (L.zero_mode == GEMV_QZERO_INT)
            return launch_kernel(gemv_qmma_inplace_kernel<GEMV_QZERO_INT>, p.grid, p.block, 0, stream, L.args.pdl, L.args);
        return launch_kernel(gemv_qmma_inplace_kernel<GEMV_QZERO_SYMMETRIC>, p.grid, p.block, 0, stream, L.args.pdl, L.args);
    }
    if (L.zero_mode == GEMV_QZERO_INT)
        return launch_kernel(gemv_qmma_kernel<GEMV_QZERO_INT>, p.grid, p.block, p.dynamic_smem, stream, L.args.pdl, L.args);
    return launch_kernel(gemv_qmma_kernel<GEMV_QZERO_SYMMETRIC>, p.grid, p.block, p.dynamic_smem, stream, L.args.pdl,
                         L.args);
}

} // namespace libgemv
