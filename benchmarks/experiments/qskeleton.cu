// Experiment (NOTES 31's next step): a quantized GEMV skeleton with many warps, against
// libgemv's quantized dispatch and libgemv's dense fp16 kernel on the same bytes, in one
// process. int4 codes in groups of 128 with symmetric or integer zeros, and int8 per channel
// (symmetric or integer zeros), fp16 (the packed layout of docs/quantized.md, filled by
// gemv_quantize).
//
// Why: with their arithmetic removed, q_rows and q_mma still read the codes 1.3-1.45x slower
// than the dense kernel reads the same bytes, at ~15 warps an SM against its 56. Here W is
// the MMA's B operand (m16n8k16: n = 8 rows a warp, twice q_mma's warps) and x its A (row 0
// only: threads g = 0 load x through L1, int4 pairing it with PRMT; the other rows are zero), so
// no block stages x and every block is small: kw warps share an 8-row tile, each taking a
// contiguous K range, summed through shared memory in warp order (deterministic). The
// products are exact fp16 (q - z) times x with fp32 sums, as in q_mma (int8: a byte pair
// under 0x64 by one PRMT, one HADD2 of -(1024 + z); a word's 4 codes are 4 consecutive
// columns, so x's pairs are in natural order).
// FLOOR variants feed the raw code words to the MMAs (wrong results, not checked): the
// skeleton's time without dequantization. The rule from NOTES 31: keep the skeleton only if
// its floor is within 5% of the dense kernel on the same bytes.
// s19 (NOTES 32): the B-operand kernel takes a D-step code ring and modes that strip it down
// (NOX: no x or scale loads; LOADS: the code loads alone); qsk16_kernel puts W in the A
// operand (16 rows a warp: half the MMAs and x loads a byte), the structure that shipped as
// q_mma with x_in_smem = 0. QSK_FORMATS picks formats by index (0 int4 int, 1 int4 sym, 2 int8).
//
// Method (graph_timing.cuh) as pygemv.timing: CUDA-graph replay of one call per rotating
// input set (>= 4x L2), CUDA events, median of 15; random data; y poisoned (NaN) before the checked call; the
// check is the contract's bound against a float64 reference of the exactly dequantized
// matrix (gemv_dequantize) on 64 sampled rows.
//   nvcc -O3 -std=c++17 -arch=sm_90 benchmarks/experiments/qskeleton.cu -Ilibgemv/include \
//        -L<libdir> -lgemv -Xlinker -rpath=<libdir> -o /tmp/qsk && [QSK_FORMATS=02] /tmp/qsk [MxK ...]
#include "qdevice.cuh"
#include "qharness.cuh"

namespace {

__device__ __forceinline__ void mma_16816(float (&c)[4], uint32_t a0, uint32_t a2, uint32_t b0, uint32_t b1) {
    const uint32_t zero = 0; // A's rows 8..15 (a1, a3): x is row 0 alone
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
                 "{%0,%1,%2,%3};"
                 : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
                 : "r"(a0), "r"(zero), "r"(a2), "r"(zero), "r"(b0), "r"(b1));
}


// Word u's pairs of codes (0, 4), (1, 5), (2, 6), (3, 7) minus the zero, exact fp16 (q_mma's
// word_pairs: one LOP3 under 0x6400 and one HADD2 or HFMA2 a pair).
__device__ __forceinline__ void word_pairs(uint32_t u, __half2 zlow, __half2 zhigh, uint32_t (&p)[4]) {
    const __half2 sixteenth = __float2half2_rn(1.f / 16.f);
    const uint32_t h = u >> 8;
    p[0] = as_u32(__hadd2(as_h2(and_or<0x000F000Fu, 0x64006400u>(u)), zlow));
    p[1] = as_u32(__hfma2(as_h2(and_or<0x00F000F0u, 0x64006400u>(u)), sixteenth, zhigh));
    p[2] = as_u32(__hadd2(as_h2(and_or<0x000F000Fu, 0x64006400u>(h)), zlow));
    p[3] = as_u32(__hfma2(as_h2(and_or<0x00F000F0u, 0x64006400u>(h)), sixteenth, zhigh));
}


__device__ __forceinline__ uint32_t prmt_pinned(uint32_t a, uint32_t b, uint32_t sel) {
    uint32_t d;
    asm volatile("prmt.b32 %0, %1, %2, %3;" : "=r"(d) : "r"(a), "r"(b), "r"(sel));
    return d;
}


// int8: bytes (0, 1) or (2, 3) of u (SEL 0x4140 or 0x4342) under 0x64, minus the zero.
template <uint32_t SEL> __device__ __forceinline__ uint32_t byte_pair(uint32_t u, __half2 zero_add) {
    uint32_t d;
    asm("prmt.b32 %0, %1, %2, %3;" : "=r"(d) : "r"(u), "r"(0x64646464u), "n"(SEL));
    return as_u32(__hadd2(as_h2(d), zero_add));
}


// Block: KW warps on one tile of 8 rows; thread (g, t) of a warp reads row g's pack 4s + t
// at step s (a quad: 4 consecutive packs, 128 int4 or 64 int8 columns), each byte once.
// int4: a step is one group of 128; int8: one group a row (scaled at the end). K is a
// multiple of 128 and M of 8 here (a prototype). Codes come through a ring D steps deep;
// x and the scales one step ahead (so no step waits on an L1 or L2 round trip).
// MODE (s19): FULL; FLOOR raw codes into the MMAs (x and scales still read); NOX raw codes,
// no x or scale loads; LOADS the code loads alone (xor-folded, no MMA). Only FULL is right.
enum Mode { FULL, FLOOR, NOX, LOADS };
template <int BITS, int KW, int MODE, bool INT_ZEROS, int D>
__global__ void __launch_bounds__(32 * KW) qsk_kernel(const Args a) {
    static_assert(D % 2 == 0, "the x and scale double buffers alternate with the ring's slots");
    constexpr int STEP = BITS == 4 ? 128 : 64, XV = BITS == 4 ? 4 : 2;
    constexpr bool RAW = MODE != FULL, READ_X = MODE == FULL || MODE == FLOOR;
    __shared__ float sums[KW][8];
    const int lane = threadIdx.x & 31, kwi = threadIdx.x >> 5, g = lane >> 2, t = lane & 3;
    const int64_t row0 = (int64_t)blockIdx.x * 8, row = row0 + g;
    const int64_t steps = a.k / STEP;
    const int64_t s0 = steps * kwi / KW, s1 = steps * (kwi + 1) / KW;
    const uint4 *qp = reinterpret_cast<const uint4 *>(a.q + row * a.ldq) + t; // step s: qp[4 s]
    // x of this thread's pack: int4 32 columns (4 uint4, xp[16 s + w]), int8 16 (2, xp[8 s + i])
    const uint4 *xp = reinterpret_cast<const uint4 *>(a.x) + XV * t;
    const __half *zp = INT_ZEROS ? a.zeros + row * a.ldz : nullptr;
    const __half *sp0 = a.scales + (row0 + 2 * t) * a.lds, *sp1 = sp0 + a.lds; // rows 2t, 2t + 1 (g = 0)
    float acc0 = 0.f, acc1 = 0.f;
    uint32_t fold = 0; // LOADS
    const uint4 zero4 = make_uint4(0, 0, 0, 0);
    uint4 ring[D];
#pragma unroll
    for (int i = 0; i < D; ++i) ring[i] = s0 + i < s1 ? load_codes_past_l1(qp + 4 * (s0 + i)) : zero4;
    uint4 X[2][XV] = {};
    float sc[2][2] = {};
    auto fetch_xs = [&](int b, int64_t s) { // x and scales of step s into buffer b (g = 0 alone)
        if (READ_X && g == 0 && s < s1) {
#pragma unroll
            for (int w = 0; w < XV; ++w) X[b][w] = __ldg(xp + 4 * XV * s + w);
            if (BITS == 4) sc[b][0] = __half2float(sp0[s]), sc[b][1] = __half2float(sp1[s]);
        }
    };
    fetch_xs(0, s0);
    for (int64_t sb = s0; sb < s1; sb += D) {
#pragma unroll
        for (int i = 0; i < D; ++i) {
            const int64_t s = sb + i;
            if (s >= s1) break;
            const int b = i & 1;
            const uint4 c0 = ring[i];
            ring[i] = s + D < s1 ? load_codes_past_l1(qp + 4 * (s + D)) : zero4;
            fetch_xs(b ^ 1, s + 1);
            if constexpr (MODE == LOADS) {
                fold ^= c0.x ^ c0.y ^ c0.z ^ c0.w;
                continue;
            }
            if constexpr (!READ_X) {
#pragma unroll
                for (int w = 0; w < XV; ++w) X[b][w] = make_uint4(0x3c003c00u, 0x3c003c00u, 0x3c003c00u, 0x3c003c00u);
            }
            const uint32_t u[4] = {c0.x, c0.y, c0.z, c0.w};
            float c[4] = {0.f, 0.f, 0.f, 0.f};
            if constexpr (BITS == 8) {
                // One group a row: the zero is the row's, the scale applied once at the end.
                const float z = INT_ZEROS && !RAW ? __half2float(zp[0]) : 128.f;
                const __half2 zadd = __float2half2_rn(-(1024.f + z));
                const uint32_t *xw = reinterpret_cast<const uint32_t *>(X[b]); // (x0, x1), (x2, x3), ...
#pragma unroll
                for (int w = 0; w < 4; ++w) { // word w: columns 4w .. 4w + 3 of the pack
                    const uint32_t b0 = RAW ? u[w] : byte_pair<0x4140>(u[w], zadd);
                    const uint32_t b1 = RAW ? u[w] >> 8 : byte_pair<0x4342>(u[w], zadd);
                    mma_16816(c, xw[2 * w], xw[2 * w + 1], b0, b1);
                }
                acc0 += c[0], acc1 += c[1];
                continue;
            }
            __half2 zlow = __float2half2_rn(-1032.f), zhigh = __float2half2_rn(-72.f); // symmetric: z = 8
            if (INT_ZEROS && !RAW) {
                const float z = __half2float(zp[s]);
                zlow = __float2half2_rn(-(1024.f + z));
                zhigh = __float2half2_rn(-(64.f + z));
            }
#pragma unroll
            for (int w = 0; w < 4; ++w) {
                uint32_t p[4];
                if constexpr (RAW) {
                    p[0] = u[w], p[1] = u[w] ^ 1u, p[2] = u[w] >> 8, p[3] = u[w] << 8;
                } else {
                    word_pairs(u[w], zlow, zhigh, p);
                }
                // x pairs in the codes' order: (x0, x4), (x1, x5), (x2, x6), (x3, x7).
                const uint4 xv = X[b][w];
                mma_16816(c, prmt(xv.x, xv.z, 0x5410), prmt(xv.x, xv.z, 0x7632), p[0], p[1]);
                mma_16816(c, prmt(xv.y, xv.w, 0x5410), prmt(xv.y, xv.w, 0x7632), p[2], p[3]);
            }
            if (MODE == NOX) {
                acc0 += c[0], acc1 += c[1];
            } else if (g == 0) { // D's row 0: c[0], c[1] are rows 2t, 2t + 1 of the tile over this group
                acc0 = fmaf(sc[b][0], c[0], acc0);
                acc1 = fmaf(sc[b][1], c[1], acc1);
            }
        }
    }
    if (MODE == LOADS) acc0 = __uint_as_float(fold & 0x3fffffffu);
    if (BITS == 8 && MODE != NOX && g == 0) acc0 *= __half2float(sp0[0]), acc1 *= __half2float(sp1[0]);
    if (g == 0) sums[kwi][2 * t] = acc0, sums[kwi][2 * t + 1] = acc1;
    __syncthreads();
    if (kwi == 0 && lane < 8) {
        float total = 0.f;
#pragma unroll
        for (int i = 0; i < KW; ++i) total += sums[i][lane];
        a.y[row0 + lane] = __float2half_rn(total);
    }
}


// s19: W as the MMA's A operand (16 rows a warp: thread (g, t) reads rows g and g + 8), x its B
// (column 0: lanes g = 0), so one MMA takes 256 codes (twice the B layout's) and a step's x
// serves 16 rows. D's column 0 (lanes t = 0) holds rows g (c[0]) and g + 8 (c[2]). Codes through
// a ring D steps deep; x, scales and zeros one step ahead; two accumulators alternate words.
// XPF: x, scales and zeros fetched a step ahead (else at the step's start). MINB: blocks an SM
// must hold (caps the registers).
template <int BITS, int KW, int MODE, bool INT_ZEROS, int D, bool XPF, int MINB>
__global__ void __launch_bounds__(32 * KW, MINB) qsk16_kernel(const Args a) {
    static_assert(!XPF || D % 2 == 0, "the x and scale double buffers alternate with the ring's slots");
    constexpr int STEP = BITS == 4 ? 128 : 64, XV = BITS == 4 ? 4 : 2;
    constexpr bool RAW = MODE != FULL, READ_X = MODE == FULL || MODE == FLOOR;
    __shared__ float sums[KW][16];
    const int lane = threadIdx.x & 31, kwi = threadIdx.x >> 5, g = lane >> 2, t = lane & 3;
    const int64_t row0 = (int64_t)blockIdx.x * 16, row = row0 + g;
    const int64_t steps = a.k / STEP;
    const int64_t s0 = steps * kwi / KW, s1 = steps * (kwi + 1) / KW;
    const uint4 *qa = reinterpret_cast<const uint4 *>(a.q + row * a.ldq) + t; // step s: qa[4 s]
    const uint4 *qb = reinterpret_cast<const uint4 *>(a.q + (row + 8) * a.ldq) + t;
    const uint4 *xp = reinterpret_cast<const uint4 *>(a.x) + XV * t;
    const __half *za = INT_ZEROS ? a.zeros + row * a.ldz : nullptr, *zb = INT_ZEROS ? za + 8 * a.ldz : nullptr;
    const __half *sa = a.scales + row * a.lds, *sb8 = sa + 8 * a.lds; // t = 0 lanes
    float acc0 = 0.f, acc1 = 0.f;
    uint32_t fold = 0;
    const uint4 zero4 = make_uint4(0, 0, 0, 0);
    uint4 ra[D], rb[D];
#pragma unroll
    for (int i = 0; i < D; ++i) {
        ra[i] = s0 + i < s1 ? load_codes_past_l1(qa + 4 * (s0 + i)) : zero4;
        rb[i] = s0 + i < s1 ? load_codes_past_l1(qb + 4 * (s0 + i)) : zero4;
    }
    uint4 X[2][XV] = {};
    float sc[2][2] = {}, zz[2][2] = {};
    auto fetch = [&](int b, int64_t s) { // step s's x (g = 0), scales (t = 0), zeros (all) into buffer b
        if (s >= s1) return;
        if (READ_X && g == 0) {
#pragma unroll
            for (int w = 0; w < XV; ++w) X[b][w] = ldg_x(xp + 4 * XV * s + w);
        }
        if (BITS == 4 && READ_X && t == 0) sc[b][0] = __half2float(sa[s]), sc[b][1] = __half2float(sb8[s]);
        if (BITS == 4 && INT_ZEROS && !RAW) zz[b][0] = __half2float(za[s]), zz[b][1] = __half2float(zb[s]);
    };
    if (XPF) fetch(0, s0);
    float z8[2] = {128.f, 128.f}; // int8: the rows' zeros, per channel
    if (BITS == 8 && INT_ZEROS && !RAW) z8[0] = __half2float(za[0]), z8[1] = __half2float(zb[0]);
#pragma unroll 1 // one ring turn a trip: unrolling further only raises the registers
    for (int64_t sbk = s0; sbk < s1; sbk += D) {
#pragma unroll
        for (int i = 0; i < D; ++i) {
            const int64_t s = sbk + i;
            if (s >= s1) break;
            const int b = i & 1;
            const uint4 ca = ra[i], cb = rb[i];
            ra[i] = s + D < s1 ? load_codes_past_l1(qa + 4 * (s + D)) : zero4;
            rb[i] = s + D < s1 ? load_codes_past_l1(qb + 4 * (s + D)) : zero4;
            if (XPF) fetch(b ^ 1, s + 1);
            else fetch(b, s);
            if constexpr (MODE == LOADS) {
                fold ^= ca.x ^ ca.y ^ ca.z ^ ca.w ^ cb.x ^ cb.y ^ cb.z ^ cb.w;
                continue;
            }
            if constexpr (!READ_X) {
#pragma unroll
                for (int w = 0; w < XV; ++w) X[b][w] = make_uint4(0x3c003c00u, 0x3c003c00u, 0x3c003c00u, 0x3c003c00u);
            }
            const uint32_t ua[4] = {ca.x, ca.y, ca.z, ca.w}, ub[4] = {cb.x, cb.y, cb.z, cb.w};
            float c[2][4] = {};
            if constexpr (BITS == 8) {
                const __half2 zaa = __float2half2_rn(-(1024.f + z8[0])), zbb = __float2half2_rn(-(1024.f + z8[1]));
                const uint32_t *xw = reinterpret_cast<const uint32_t *>(X[b]);
#pragma unroll
                for (int w = 0; w < 4; ++w) {
                    const uint32_t a0 = RAW ? ua[w] : byte_pair<0x4140>(ua[w], zaa);
                    const uint32_t a2 = RAW ? ua[w] >> 8 : byte_pair<0x4342>(ua[w], zaa);
                    const uint32_t a1 = RAW ? ub[w] : byte_pair<0x4140>(ub[w], zbb);
                    const uint32_t a3 = RAW ? ub[w] >> 8 : byte_pair<0x4342>(ub[w], zbb);
                    mma_16816_full(c[w & 1], a0, a1, a2, a3, xw[2 * w], xw[2 * w + 1]);
                }
                acc0 += c[0][0] + c[1][0], acc1 += c[0][2] + c[1][2];
                continue;
            }
            __half2 zla = __float2half2_rn(-1032.f), zha = __float2half2_rn(-72.f), zlb = zla, zhb = zha;
            if (INT_ZEROS && !RAW) {
                zla = __float2half2_rn(-(1024.f + zz[b][0])), zha = __float2half2_rn(-(64.f + zz[b][0]));
                zlb = __float2half2_rn(-(1024.f + zz[b][1])), zhb = __float2half2_rn(-(64.f + zz[b][1]));
            }
#pragma unroll
            for (int w = 0; w < 4; ++w) {
                uint32_t pa[4], pb[4];
                if constexpr (RAW) {
                    pa[0] = ua[w], pa[1] = ua[w] ^ 1u, pa[2] = ua[w] >> 8, pa[3] = ua[w] << 8;
                    pb[0] = ub[w], pb[1] = ub[w] ^ 1u, pb[2] = ub[w] >> 8, pb[3] = ub[w] << 8;
                } else {
                    word_pairs_pinned(ua[w], as_u32(zla), as_u32(zha), pa);
                    word_pairs_pinned(ub[w], as_u32(zlb), as_u32(zhb), pb);
                }
                const uint4 xv = X[b][w];
                mma_16816_full(c[0], pa[0], pb[0], pa[1], pb[1], prmt_pinned(xv.x, xv.z, 0x5410),
                               prmt_pinned(xv.x, xv.z, 0x7632));
                mma_16816_full(c[1], pa[2], pb[2], pa[3], pb[3], prmt_pinned(xv.y, xv.w, 0x5410),
                               prmt_pinned(xv.y, xv.w, 0x7632));
            }
            if (MODE == NOX) {
                acc0 += c[0][0] + c[1][0], acc1 += c[0][2] + c[1][2];
            } else if (t == 0) {
                acc0 = fmaf(sc[b][0], c[0][0] + c[1][0], acc0);
                acc1 = fmaf(sc[b][1], c[0][2] + c[1][2], acc1);
            }
        }
    }
    if (MODE == LOADS) acc0 = __uint_as_float(fold & 0x3fffffffu);
    if (BITS == 8 && MODE != NOX && t == 0) acc0 *= __half2float(sa[0]), acc1 *= __half2float(sb8[0]);
    if (t == 0) sums[kwi][g] = acc0, sums[kwi][g + 8] = acc1;
    __syncthreads();
    if (kwi == 0 && lane < 16) {
        float total = 0.f;
#pragma unroll
        for (int i = 0; i < KW; ++i) total += sums[i][lane];
        a.y[row0 + lane] = __float2half_rn(total);
    }
}

// s19, for the next run (NOTES 32's next step; not yet timed): int4 only, W as the A operand
// and RT 16-row tiles a warp (rows g, g + 8 of each) sharing one step's x fragment, so a
// byte's x loads and PRMTs fall by RT. One step ahead for the codes (D = 1), x, scales and
// zeros at the step. Block: KW warps on RT x 16 rows, each a contiguous K range.
template <int KW, int RT, bool INT_ZEROS>
__global__ void __launch_bounds__(32 * KW) qsk_tiles_kernel(const Args a) {
    constexpr int STEP = 128;
    __shared__ float sums[KW][RT * 16];
    const int lane = threadIdx.x & 31, kwi = threadIdx.x >> 5, g = lane >> 2, t = lane & 3;
    const int64_t row0 = (int64_t)blockIdx.x * 16 * RT;
    const int64_t steps = a.k / STEP;
    const int64_t s0 = steps * kwi / KW, s1 = steps * (kwi + 1) / KW;
    const uint4 *q[RT][2];
    const __half *sp[RT][2], *zp[RT][2];
#pragma unroll
    for (int r = 0; r < RT; ++r)
#pragma unroll
        for (int h = 0; h < 2; ++h) {
            const int64_t row = row0 + 16 * r + g + 8 * h;
            q[r][h] = reinterpret_cast<const uint4 *>(a.q + row * a.ldq) + t;
            sp[r][h] = a.scales + row * a.lds;
            zp[r][h] = INT_ZEROS ? a.zeros + row * a.ldz : nullptr;
        }
    const uint4 *xp = reinterpret_cast<const uint4 *>(a.x) + 4 * t;
    float acc[RT][2] = {};
    uint4 cur[RT][2], nxt[RT][2];
    const uint4 zero4 = make_uint4(0, 0, 0, 0);
#pragma unroll
    for (int r = 0; r < RT; ++r)
#pragma unroll
        for (int h = 0; h < 2; ++h) cur[r][h] = s0 < s1 ? load_codes_past_l1(q[r][h] + 4 * s0) : zero4;
#pragma unroll 1
    for (int64_t s = s0; s < s1; ++s) {
#pragma unroll
        for (int r = 0; r < RT; ++r)
#pragma unroll
            for (int h = 0; h < 2; ++h) nxt[r][h] = s + 1 < s1 ? load_codes_past_l1(q[r][h] + 4 * (s + 1)) : zero4;
        uint4 X[4] = {};
        if (g == 0) {
#pragma unroll
            for (int w = 0; w < 4; ++w) X[w] = ldg_x(xp + 16 * s + w);
        }
        uint32_t b[4][4]; // word w's two B fragments (x pairs in the codes' order), shared by the tiles
#pragma unroll
        for (int w = 0; w < 4; ++w) {
            b[w][0] = prmt(X[w].x, X[w].z, 0x5410), b[w][1] = prmt(X[w].x, X[w].z, 0x7632);
            b[w][2] = prmt(X[w].y, X[w].w, 0x5410), b[w][3] = prmt(X[w].y, X[w].w, 0x7632);
        }
#pragma unroll
        for (int r = 0; r < RT; ++r) {
            __half2 zl[2], zh[2];
#pragma unroll
            for (int h = 0; h < 2; ++h) {
                const float z = INT_ZEROS ? __half2float(zp[r][h][s]) : 8.f;
                zl[h] = __float2half2_rn(-(1024.f + z)), zh[h] = __float2half2_rn(-(64.f + z));
            }
            const uint32_t ua[4] = {cur[r][0].x, cur[r][0].y, cur[r][0].z, cur[r][0].w};
            const uint32_t ub[4] = {cur[r][1].x, cur[r][1].y, cur[r][1].z, cur[r][1].w};
            float c[2][4] = {};
#pragma unroll
            for (int w = 0; w < 4; ++w) {
                uint32_t pa[4], pb[4];
                word_pairs(ua[w], zl[0], zh[0], pa);
                word_pairs(ub[w], zl[1], zh[1], pb);
                mma_16816_full(c[0], pa[0], pb[0], pa[1], pb[1], b[w][0], b[w][1]);
                mma_16816_full(c[1], pa[2], pb[2], pa[3], pb[3], b[w][2], b[w][3]);
            }
            if (t == 0) {
                acc[r][0] = fmaf(__half2float(sp[r][0][s]), c[0][0] + c[1][0], acc[r][0]);
                acc[r][1] = fmaf(__half2float(sp[r][1][s]), c[0][2] + c[1][2], acc[r][1]);
            }
        }
#pragma unroll
        for (int r = 0; r < RT; ++r) cur[r][0] = nxt[r][0], cur[r][1] = nxt[r][1];
    }
    if (t == 0) {
#pragma unroll
        for (int r = 0; r < RT; ++r) sums[kwi][16 * r + g] = acc[r][0], sums[kwi][16 * r + g + 8] = acc[r][1];
    }
    __syncthreads();
    if (kwi == 0 && lane < 16) {
#pragma unroll
        for (int r = 0; r < RT; ++r) {
            float total = 0.f;
#pragma unroll
            for (int i = 0; i < KW; ++i) total += sums[i][16 * r + lane];
            a.y[row0 + 16 * r + lane] = __float2half_rn(total);
        }
    }
}

// s20: x held in registers ("x-stationary"). Each warp owns S steps of K (its x fragments,
// 16 S registers, loaded once) and walks row tiles through a ring D tiles deep, so a code byte
// costs no x load or PRMT at all. Block: KW warps side by side along K (KW S steps); a grid
// column (blockIdx.y) a K slice, a grid row a run of tiles. A warp's tile partials go to shared
// memory; after the run the block adds its warps in order and writes the slice's fp32 partials,
// and a second kernel adds the slices in order (deterministic, as libgemv's split-K reduce).
// int4 only; M a multiple of 16 and K of 128 KW S.
template <int KW, int S, int D, bool INT_ZEROS>
__global__ void __launch_bounds__(32 * KW) qsk_xs_kernel(const Args a, float *ws, int64_t tiles_per_block) {
    constexpr int STEP = 128;
    extern __shared__ float part[]; // [KW][tiles_per_block * 16]
    const int lane = threadIdx.x & 31, kwi = threadIdx.x >> 5, g = lane >> 2, t = lane & 3;
    const int64_t tiles = a.m / 16, tb0 = (int64_t)blockIdx.x * tiles_per_block;
    const int64_t tb1 = min(tb0 + tiles_per_block, tiles), nt = tb1 - tb0;
    const int64_t s0 = ((int64_t)blockIdx.y * KW + kwi) * S; // this warp's first step
    uint32_t b[S][4][4];
#pragma unroll
    for (int i = 0; i < S; ++i) {
        const uint4 *xp = reinterpret_cast<const uint4 *>(a.x) + 16 * (s0 + i) + 4 * t;
#pragma unroll
        for (int w = 0; w < 4; ++w) {
            const uint4 X = g == 0 ? ldg_x(xp + w) : make_uint4(0, 0, 0, 0);
            b[i][w][0] = prmt(X.x, X.z, 0x5410), b[i][w][1] = prmt(X.x, X.z, 0x7632);
            b[i][w][2] = prmt(X.y, X.w, 0x5410), b[i][w][3] = prmt(X.y, X.w, 0x7632);
        }
    }
    auto codes = [&](int64_t tile, int i, int h) { // step s0 + i of row g + 8 h of the tile
        const int64_t row = tile * 16 + g + 8 * h;
        return load_codes_past_l1(reinterpret_cast<const uint4 *>(a.q + row * a.ldq) + 4 * (s0 + i) + t);
    };
    const uint4 zero4 = make_uint4(0, 0, 0, 0);
    uint4 ring[D][S][2];
#pragma unroll
    for (int d = 0; d < D; ++d)
#pragma unroll
        for (int i = 0; i < S; ++i)
#pragma unroll
            for (int h = 0; h < 2; ++h) ring[d][i][h] = d < nt ? codes(tb0 + d, i, h) : zero4;
#pragma unroll 1
    for (int64_t j0 = 0; j0 < nt; j0 += D) {
#pragma unroll
        for (int d = 0; d < D; ++d) {
            const int64_t j = j0 + d;
            if (j >= nt) break;
            uint4 cur[S][2];
#pragma unroll
            for (int i = 0; i < S; ++i)
#pragma unroll
                for (int h = 0; h < 2; ++h) {
                    cur[i][h] = ring[d][i][h];
                    ring[d][i][h] = j + D < nt ? codes(tb0 + j + D, i, h) : zero4;
                }
            const int64_t ra = (tb0 + j) * 16 + g, rb = ra + 8;
            float acc0 = 0.f, acc1 = 0.f;
#pragma unroll
            for (int i = 0; i < S; ++i) {
                const int64_t s = s0 + i;
                const float za = INT_ZEROS ? __half2float(a.zeros[ra * a.ldz + s]) : 8.f;
                const float zb = INT_ZEROS ? __half2float(a.zeros[rb * a.ldz + s]) : 8.f;
                const __half2 zla = __float2half2_rn(-(1024.f + za)), zha = __float2half2_rn(-(64.f + za));
                const __half2 zlb = __float2half2_rn(-(1024.f + zb)), zhb = __float2half2_rn(-(64.f + zb));
                const uint32_t ua[4] = {cur[i][0].x, cur[i][0].y, cur[i][0].z, cur[i][0].w};
                const uint32_t ub[4] = {cur[i][1].x, cur[i][1].y, cur[i][1].z, cur[i][1].w};
                float c[2][4] = {};
#pragma unroll
                for (int w = 0; w < 4; ++w) {
                    uint32_t pa[4], pb[4];
                    word_pairs(ua[w], zla, zha, pa);
                    word_pairs(ub[w], zlb, zhb, pb);
                    mma_16816_full(c[0], pa[0], pb[0], pa[1], pb[1], b[i][w][0], b[i][w][1]);
                    mma_16816_full(c[1], pa[2], pb[2], pa[3], pb[3], b[i][w][2], b[i][w][3]);
                }
                if (t == 0) {
                    acc0 = fmaf(__half2float(a.scales[ra * a.lds + s]), c[0][0] + c[1][0], acc0);
                    acc1 = fmaf(__half2float(a.scales[rb * a.lds + s]), c[0][2] + c[1][2], acc1);
                }
            }
            if (t == 0) part[kwi * tiles_per_block * 16 + j * 16 + g] = acc0,
                        part[kwi * tiles_per_block * 16 + j * 16 + g + 8] = acc1;
        }
    }
    __syncthreads();
    for (int64_t r = threadIdx.x; r < nt * 16; r += blockDim.x) {
        float total = 0.f;
#pragma unroll
        for (int i = 0; i < KW; ++i) total += part[i * tiles_per_block * 16 + r];
        ws[(int64_t)blockIdx.y * a.m + tb0 * 16 + r] = total;
    }
}

__global__ void qsk_slices_kernel(const float *ws, int slices, int64_t m, __half *y) {
    const int64_t r = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= m) return;
    float total = 0.f;
    for (int i = 0; i < slices; ++i) total += ws[i * m + r];
    y[r] = __float2half_rn(total);
}

template <int KW, int MODE, int D> void skeleton(const Set &st, cudaStream_t s) {
    const gemv_qmatrix_t &W = st.W;
    const Args a = args_of(st);
    const dim3 grid((unsigned)(W.m / 8)), block(32 * KW);
    const bool iz = W.zero_mode == GEMV_QZERO_INT;
    if (W.bits == 8) {
        if (iz) qsk_kernel<8, KW, MODE, true, D><<<grid, block, 0, s>>>(a);
        else qsk_kernel<8, KW, MODE, false, D><<<grid, block, 0, s>>>(a);
    } else {
        if (iz) qsk_kernel<4, KW, MODE, true, D><<<grid, block, 0, s>>>(a);
        else qsk_kernel<4, KW, MODE, false, D><<<grid, block, 0, s>>>(a);
    }
    CK(cudaGetLastError());
}

template <int KW, int MODE, int D, bool XPF = false, int MINB = 1> void skeleton16(const Set &st, cudaStream_t s) {
    const gemv_qmatrix_t &W = st.W;
    const Args a = args_of(st);
    const dim3 grid((unsigned)(W.m / 16)), block(32 * KW);
    const bool iz = W.zero_mode == GEMV_QZERO_INT;
    if (W.bits == 8) {
        if (iz) qsk16_kernel<8, KW, MODE, true, D, XPF, MINB><<<grid, block, 0, s>>>(a);
        else qsk16_kernel<8, KW, MODE, false, D, XPF, MINB><<<grid, block, 0, s>>>(a);
    } else {
        if (iz) qsk16_kernel<4, KW, MODE, true, D, XPF, MINB><<<grid, block, 0, s>>>(a);
        else qsk16_kernel<4, KW, MODE, false, D, XPF, MINB><<<grid, block, 0, s>>>(a);
    }
    CK(cudaGetLastError());
}

// int4 only (int8 runs the one-tile A16 kernel in its place); M a multiple of 16 RT.
template <int KW, int RT> void skeleton_tiles(const Set &st, cudaStream_t s) {
    const gemv_qmatrix_t &W = st.W;
    if (W.bits == 8 || W.m % (16 * RT)) return skeleton16<KW, FULL, 1>(st, s);
    const Args a = args_of(st);
    const dim3 grid((unsigned)(W.m / (16 * RT))), block(32 * KW);
    if (W.zero_mode == GEMV_QZERO_INT) qsk_tiles_kernel<KW, RT, true><<<grid, block, 0, s>>>(a);
    else qsk_tiles_kernel<KW, RT, false><<<grid, block, 0, s>>>(a);
    CK(cudaGetLastError());
}

// x-stationary launcher: about 4 blocks an SM in all (the grid's columns the K slices).
template <int KW, int S, int D> void skeleton_xs(const Set &st, cudaStream_t s) {
    const gemv_qmatrix_t &W = st.W;
    const int64_t cols = 128 * KW * S, slices = W.k / cols, tiles = W.m / 16;
    if (W.bits == 8 || W.k % cols) return skeleton16<8, FULL, 1>(st, s);
    static float *ws = nullptr;
    static size_t ws_bytes = 0;
    if (ws_bytes < (size_t)(slices * W.m * 4)) {
        if (ws) CK(cudaFree(ws));
        ws_bytes = slices * W.m * 4;
        CK(cudaMalloc(&ws, ws_bytes));
    }
    const int64_t row_blocks = std::min<int64_t>(tiles, std::max<int64_t>(1, (132 * 4 + slices - 1) / slices));
    const int64_t tpb = (tiles + row_blocks - 1) / row_blocks;
    const Args a = args_of(st);
    const dim3 grid((unsigned)((tiles + tpb - 1) / tpb), (unsigned)slices), block(32 * KW);
    const size_t smem = (size_t)KW * tpb * 16 * 4;
    auto kern = W.zero_mode == GEMV_QZERO_INT ? qsk_xs_kernel<KW, S, D, true> : qsk_xs_kernel<KW, S, D, false>;
    static bool opted = false;
    if (!opted) {
        CK(cudaFuncSetAttribute(qsk_xs_kernel<KW, S, D, true>, cudaFuncAttributeMaxDynamicSharedMemorySize, 160 * 1024));
        CK(cudaFuncSetAttribute(qsk_xs_kernel<KW, S, D, false>, cudaFuncAttributeMaxDynamicSharedMemorySize, 160 * 1024));
        opted = true;
    }
    kern<<<grid, block, smem, s>>>(a, ws, tpb);
    CK(cudaGetLastError());
    qsk_slices_kernel<<<(unsigned)((W.m + 255) / 256), 256, 0, s>>>(ws, (int)slices, W.m, st.y);
    CK(cudaGetLastError());
}

} // namespace

int main(int argc, char **argv) {
    const Method methods[] = {{"libgemv dense fp16 on the codes' bytes", libgemv_dense, false},
                              {"libgemv quantized dispatch", libgemv_quantized, true},
                              {"B8 full kw=4 D=2", skeleton<4, FULL, 2>, true},
                              {"A16 full kw=4 D=1", skeleton16<4, FULL, 1>, true},
                              {"A16 full kw=8 D=1", skeleton16<8, FULL, 1>, true},
                              {"A16 full kw=16 D=1", skeleton16<16, FULL, 1>, true},
                              {"A16 full kw=8 D=2", skeleton16<8, FULL, 2>, true},
                              {"A16 full kw=8 D=2 <=85 regs", skeleton16<8, FULL, 2, false, 3>, true},
                              {"A16 floor kw=8 D=1", skeleton16<8, FLOOR, 1>, false},
                              {"A16 no x kw=8 D=1", skeleton16<8, NOX, 1>, false},
                              {"A16 loads kw=8 D=1", skeleton16<8, LOADS, 1>, false},
                              {"A16 loads kw=8 D=2", skeleton16<8, LOADS, 2>, false},
                              {"A16 x 2 tiles kw=8", skeleton_tiles<8, 2>, true},
                              {"A16 x 2 tiles kw=4", skeleton_tiles<4, 2>, true},
                              {"x-stationary kw=8 S=1 D=1", skeleton_xs<8, 1, 1>, true},
                              {"x-stationary kw=8 S=1 D=2", skeleton_xs<8, 1, 2>, true},
                              {"x-stationary kw=4 S=2 D=1", skeleton_xs<4, 2, 1>, true},
                              {"x-stationary kw=4 S=1 D=2", skeleton_xs<4, 1, 2>, true},
                              {"x-stationary kw=8 S=2 D=1", skeleton_xs<8, 2, 1>, true}};
    const Format formats[] = {{4, 128, GEMV_QZERO_INT, "int4 g128 int"},
                              {4, 128, GEMV_QZERO_SYMMETRIC, "int4 g128 sym"},
                              {8, 0, GEMV_QZERO_SYMMETRIC, "int8 per channel sym"}};
    return run_harness(argc, argv, methods, sizeof(methods) / sizeof(methods[0]), formats, 3, 16, 128);
}
