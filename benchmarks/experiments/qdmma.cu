// Experiment (issue 15, s28): int4 on tensor cores with the dense kernel's skeleton.
//
// Why: qdense.cu (NOTES 41) read int4 codes at the dense kernel's speed with its arithmetic
// removed (8192^2: 13.2 us against 13.0), but CUDA-core dequantization made it issue-bound
// (23.1 us). The shipped MMA kernels pay for their skeletons instead: x held walks tiles in
// one wave with split-K and a second kernel (its floor 15.0 us, NOTES 34); the in-place q_mma
// (qskeleton.cu's A16: one tile a block, warps on contiguous K ranges, one step in flight) read
// 12-20% slower than the dense kernel even with only its loads left (NOTES 32). Here the MMA
// arithmetic of q_mma (W the A operand: 16 rows a warp, one LOP3 and one HADD2/HFMA2 a code
// pair, x pairs by PRMT in lanes g = 0, fp32 sums scaled a group of 128) sits on the dense
// kernel's order of reads: the KW warps of a block take the tile's steps of 128 columns in
// turn (warp w: steps w, w + KW, ...), U steps a warp issued before any is summed, so a block
// asks for KW * U consecutive 64-byte runs of each of its 16 rows at once; with DB, the next
// U steps are asked for before the current ones are summed. x comes through L1 in place (no
// staging), codes bypass L1.
// Prediction: the LOADS floor within 5% of the dense kernel on the codes' bytes, and the full
// kernel within 10% of its floor (the MMA path is ~1.5 instructions a code: not issue-bound).
// Outcome (NOTES 42): the floor held (8192^2 13.2-13.9 us, the dense kernel 13.2-13.6); the
// full kernel did not (16.5-16.8 at best, 22% over its floor in one wave, 8% over it on
// 128256 x 4096). Later forms tested what the gap is: L1 prefetches of x and the scales (PF,
// run 2), every load of a round issued before any is used (qdm2_kernel, run 3), the codes
// through a cp.async ring (qdm3_kernel, run 4), a warp's steps consecutive (CONTIG, run 5),
// Nsight Compute (qdmma_ncu.sh) and the SM clock (qdmma_clocks.sh); x in the MMA's pair order
// (PAIRED, run 6: 2-4% off, as the instruction stream predicts); float zeros (FZ, run 7: a
// step's sum of x by MMAs of an all-ones A), where 8 warps a tile ran the small matrices
// 1.1-1.35x faster than libgemv's dispatch; bf16 (BF, run 8: the same).
//
// int4 groups of 128: fp16 integer, symmetric or float zeros (QSK_FORMATS 0, 1, 2), bf16 float
// or integer zeros (3, 4); formats 2-4 take the qdmma2 methods only. M a multiple of 16, K of 128.
//   OUT=dir PROG=qdmma [QDM_RUN=1..8 | QDM_ONLY=i,j,...] [QSK_FORMATS=0|2|34] bash benchmarks/experiments/qskeleton.sh [MxK ...]
#include "qdevice.cuh"
#include "qharness.cuh"

namespace {

enum { FULL = 0, LOADS = 1 };

__device__ __forceinline__ void prefetch_l1(const void *p) { asm volatile("prefetch.global.L1 [%0];" ::"l"(p)); }

// step_mmas in bf16 (x held's pairs: each nibble shifted down under 0x4300, 128 + q, and one
// HADD2 of -(128 + z); the bf16 MMA), with the float-zero sum of x (SUMX) as above.
__device__ __forceinline__ void mma_bf16(float (&c)[4], uint32_t a0, uint32_t a1, uint32_t a2, uint32_t a3, uint32_t b0,
                                         uint32_t b1) {
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
                 "{%0,%1,%2,%3};"
                 : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
                 : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
}
template <bool SUMX, typename XW>
__device__ __forceinline__ void step_mmas_bf16(const uint4 &ca, const uint4 &cb, float fa, float fb, XW xw,
                                               float (&c)[2][4], float (&sx)[4]) {
    const uint32_t ua[4] = {ca.x, ca.y, ca.z, ca.w}, ub[4] = {cb.x, cb.y, cb.z, cb.w};
#pragma unroll
    for (int w = 0; w < 4; ++w) {
        const uint4 X = xw(w);
        uint32_t pa[4], pb[4];
        bf16_code_pairs(ua[w], fa, pa);
        bf16_code_pairs(ub[w], fb, pb);
        const uint32_t b0 = prmt(X.x, X.z, 0x5410), b1 = prmt(X.x, X.z, 0x7632);
        const uint32_t b2 = prmt(X.y, X.w, 0x5410), b3 = prmt(X.y, X.w, 0x7632);
        mma_bf16(c[0], pa[0], pb[0], pa[1], pb[1], b0, b1);
        mma_bf16(c[1], pa[2], pb[2], pa[3], pb[3], b2, b3);
        if (SUMX) {
            constexpr uint32_t one2 = 0x3F803F80u; // (1, 1) in bf16
            mma_bf16(sx, one2, one2, one2, one2, b0, b1);
            mma_bf16(sx, one2, one2, one2, one2, b2, b3);
        }
    }
}

// x in the MMA's pair order: each 8 columns as (x0, x4), (x1, x5), (x2, x6), (x3, x7).
__global__ void xpair_kernel(const __half *x, __half *xp, int64_t k) {
    const int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (8 * i + 7 >= k) return;
#pragma unroll
    for (int j = 0; j < 4; ++j) xp[8 * i + 2 * j] = x[8 * i + j], xp[8 * i + 2 * j + 1] = x[8 * i + j + 4];
}

// The tile's 16 sums: lanes t = 0 of each warp hold rows g (acc0) and g + 8 (acc1); the warps
// are added in order (deterministic).
template <int KW, bool BF = false> __device__ __forceinline__ void write_tile(float acc0, float acc1, __half *y) {
    const int lane = threadIdx.x & 31, wi = threadIdx.x >> 5, g = lane >> 2, t = lane & 3;
    __shared__ float sums[KW][16];
    if (t == 0) sums[wi][g] = acc0, sums[wi][g + 8] = acc1;
    __syncthreads();
    if (wi == 0 && lane < 16) {
        float v = 0.f;
#pragma unroll
        for (int i = 0; i < KW; ++i) v += sums[i][lane];
        if (BF) {
            const unsigned short b = __bfloat16_as_ushort(__float2bfloat16_rn(v));
            y[lane] = *reinterpret_cast<const __half *>(&b);
        } else {
            y[lane] = __float2half_rn(v);
        }
    }
}


// Block: KW warps on one 16-row tile; thread (g, t) reads rows g and g + 8, pack 4 s + t at
// step s. Lanes t = 0 hold column 0 of D: row g in c[0], row g + 8 in c[2].
template <bool IZ, int KW, int U, bool DB, bool XW, bool PF, int MODE, int MINB>
__global__ void __launch_bounds__(32 * KW, MINB) qdm_kernel(const Args a) {
    const int lane = threadIdx.x & 31, wi = threadIdx.x >> 5, g = lane >> 2, t = lane & 3;
    const int64_t row0 = (int64_t)blockIdx.x * 16, row = row0 + g, steps = a.k >> 7;
    const uint4 *qa = reinterpret_cast<const uint4 *>(a.q + row * a.ldq) + t; // step s: qa[4 s]
    const uint4 *qb = reinterpret_cast<const uint4 *>(a.q + (row + 8) * a.ldq) + t;
    const uint4 *xp = reinterpret_cast<const uint4 *>(a.x) + 4 * t; // step s: xp[16 s + i]
    const __half *sa = a.scales + row * a.lds, *sb = sa + 8 * a.lds;
    const __half *za = IZ ? a.zeros + row * a.ldz : nullptr, *zb = IZ ? za + 8 * a.ldz : nullptr;
    float acc0 = 0.f, acc1 = 0.f;
    uint32_t fold = 0;
    const uint4 zero4 = make_uint4(0, 0, 0, 0);
    uint4 ca[U], cb[U];
    auto load = [&](int64_t s0) {
#pragma unroll
        for (int u = 0; u < U; ++u) {
            const int64_t s = s0 + (int64_t)u * KW;
            ca[u] = s < steps ? load_codes_past_l1(qa + 4 * s) : zero4;
            cb[u] = s < steps ? load_codes_past_l1(qb + 4 * s) : zero4;
        }
        if (PF && MODE == FULL) { // the round's x, scales and zeros into L1 while the codes travel
#pragma unroll
            for (int u = 0; u < U; ++u) {
                const int64_t s = s0 + (int64_t)u * KW;
                if (s >= steps) break;
                if (g == 0) prefetch_l1(xp + 16 * s);
                if (t == 1) prefetch_l1(sa + s), prefetch_l1(sb + s);
                if (IZ && t == 2) prefetch_l1(za + s), prefetch_l1(zb + s);
            }
        }
    };
    constexpr int64_t ROUND = (int64_t)KW * U;
    load(wi);
#pragma unroll 1
    for (int64_t s0 = wi; s0 < steps; s0 += ROUND) {
        uint4 da[U], db[U];
#pragma unroll
        for (int u = 0; u < U; ++u) da[u] = ca[u], db[u] = cb[u];
        if (DB) load(s0 + ROUND); // the next round's codes before this round's sums
        if constexpr (MODE == LOADS) {
#pragma unroll
            for (int u = 0; u < U; ++u) fold ^= da[u].x ^ da[u].y ^ da[u].z ^ da[u].w ^ db[u].x ^ db[u].y ^ db[u].z ^ db[u].w;
        } else {
#pragma unroll
            for (int u = 0; u < U; ++u) {
                const int64_t s = s0 + (int64_t)u * KW;
                if (s >= steps) break;
                uint4 X[4] = {zero4, zero4, zero4, zero4};
                if (!XW && g == 0) {
#pragma unroll
                    for (int i = 0; i < 4; ++i) X[i] = ldg_x(xp + 16 * s + i);
                }
                float fa = 8.f, fb = 8.f;
                if (IZ) fa = __half2float(__ldg(za + s)), fb = __half2float(__ldg(zb + s));
                float c[2][4] = {};
                step_mmas(da[u], db[u], fa, fb, [&](int w) { // XW: a word's x just before its MMAs
                    if (XW && g == 0) X[w] = ldg_x(xp + 16 * s + w);
                    return X[w];
                }, c);
                if (t == 0) {
                    acc0 = fmaf(__half2float(__ldg(sa + s)), c[0][0] + c[1][0], acc0);
                    acc1 = fmaf(__half2float(__ldg(sb + s)), c[0][2] + c[1][2], acc1);
                }
            }
        }
        if (!DB && s0 + ROUND < steps) load(s0 + ROUND);
    }
    if (MODE == LOADS) acc0 = __uint_as_float(fold & 0x3fffffffu);
    write_tile<KW>(acc0, acc1, a.y + row0);
}

__device__ __forceinline__ uint32_t ldg_u16(const __half *p) {
    unsigned short v;
    asm volatile("ld.global.nc.u16 %0, [%1];" : "=h"(v) : "l"(p));
    return v;
}

// What one round of U steps reads, all asked for at once: the codes, and (lanes g = 0) x,
// (lanes t = 0) the rows' scales, the rows' zeros.
template <int U> struct Round {
    uint4 ca[U], cb[U], X[U][4];
    uint32_t sc[U][2], zz[U][2];
};

// qdm_kernel with everything a round reads issued before any of it is used (s28's second
// form: the first showed the full kernel 22% over its loads at 8192^2 in one wave, and its x,
// scale and zero loads went out only after the codes had come). DB: two rounds in flight.
template <bool IZ, int KW, int U, bool DB, int MINB, bool CONTIG, bool PAIRED = false, bool FZ = false, bool BF = false>
__global__ void __launch_bounds__(32 * KW, MINB) qdm2_kernel(const Args a) {
    // BF: bf16 x, scales, zeros and output (step_mmas_bf16).
    // FZ: float zeros (w = q s + z; IZ loads the zeros): pairs of q, and z times the step's sum of x.
    // CONTIG: warp w's U steps of a round are consecutive (U 64-byte runs of a row in one
    // piece) instead of every KW-th.
    constexpr int64_t SU = CONTIG ? 1 : KW;
    const int lane = threadIdx.x & 31, wi = threadIdx.x >> 5, g = lane >> 2, t = lane & 3;
    const int64_t row0 = (int64_t)blockIdx.x * 16, row = row0 + g, steps = a.k >> 7;
    const uint4 *qa = reinterpret_cast<const uint4 *>(a.q + row * a.ldq) + t; // step s: qa[4 s]
    const int64_t qb = 8 * a.ldq / 16;                                          // row g + 8, in packs
    const uint4 *xp = reinterpret_cast<const uint4 *>(a.x) + 4 * t;             // step s: xp[16 s + i]
    const __half *sa = a.scales + row * a.lds, *za = IZ ? a.zeros + row * a.ldz : nullptr;
    const int64_t sb = 8 * a.lds, zb = 8 * a.ldz;
    const uint4 zero4 = make_uint4(0, 0, 0, 0);
    constexpr int64_t ROUND = (int64_t)KW * U;
    auto load = [&](Round<U> &r, int64_t s0) {
#pragma unroll
        for (int u = 0; u < U; ++u) {
            const int64_t s = s0 + (int64_t)u * SU;
            const bool in = s < steps;
            r.ca[u] = in ? load_codes_past_l1(qa + 4 * s) : zero4;
            r.cb[u] = in ? load_codes_past_l1(qa + qb + 4 * s) : zero4;
        }
#pragma unroll
        for (int u = 0; u < U; ++u) {
            const int64_t s = s0 + (int64_t)u * SU;
            const bool in = s < steps;
#pragma unroll
            for (int i = 0; i < 4; ++i) r.X[u][i] = in && g == 0 ? ldg_x(xp + 16 * s + i) : zero4;
            r.sc[u][0] = in && t == 0 ? ldg_u16(sa + s) : 0u;
            r.sc[u][1] = in && t == 0 ? ldg_u16(sa + sb + s) : 0u;
            if (IZ) {
                r.zz[u][0] = in ? ldg_u16(za + s) : 0u;
                r.zz[u][1] = in ? ldg_u16(za + zb + s) : 0u;
            }
        }
    };
    float acc0 = 0.f, acc1 = 0.f;
    auto process = [&](const Round<U> &r, int64_t s0) {
#pragma unroll
        for (int u = 0; u < U; ++u) {
            if (s0 + (int64_t)u * SU >= steps) break;
            float c[2][4] = {};
            if constexpr (BF) {
                const float fa = IZ ? __uint_as_float(r.zz[u][0] << 16) : 8.f, fb = IZ ? __uint_as_float(r.zz[u][1] << 16) : 8.f;
                float sx[4] = {};
                step_mmas_bf16<FZ>(r.ca[u], r.cb[u], FZ ? 0.f : fa, FZ ? 0.f : fb, [&](int w) { return r.X[u][w]; }, c, sx);
                if (FZ) acc0 = fmaf(fa, sx[0], acc0), acc1 = fmaf(fb, sx[0], acc1);
                acc0 = fmaf(__uint_as_float(r.sc[u][0] << 16), c[0][0] + c[1][0], acc0);
                acc1 = fmaf(__uint_as_float(r.sc[u][1] << 16), c[0][2] + c[1][2], acc1);
                continue;
            }
            const float fa = IZ ? h2f(r.zz[u][0]) : 8.f, fb = IZ ? h2f(r.zz[u][1]) : 8.f;
            if constexpr (FZ) {
                float sx[4] = {};
                step_mmas<false, true>(r.ca[u], r.cb[u], 0.f, 0.f, [&](int w) { return r.X[u][w]; }, c, sx);
                acc0 = fmaf(fa, sx[0], acc0); // lanes t != 0: sums of zero columns, never stored
                acc1 = fmaf(fb, sx[0], acc1);
            } else {
                step_mmas<PAIRED>(r.ca[u], r.cb[u], fa, fb, [&](int w) { return r.X[u][w]; }, c);
            }
            acc0 = fmaf(h2f(r.sc[u][0]), c[0][0] + c[1][0], acc0); // lanes t != 0: scale 0
            acc1 = fmaf(h2f(r.sc[u][1]), c[0][2] + c[1][2], acc1);
        }
    };
    Round<U> r0;
    const int64_t first = CONTIG ? (int64_t)wi * U : wi;
    load(r0, first);
    if constexpr (DB) {
        Round<U> r1;
        for (int64_t s0 = first;;) {
            if (s0 + ROUND < steps) load(r1, s0 + ROUND);
            process(r0, s0);
            if ((s0 += ROUND) >= steps) break;
            if (s0 + ROUND < steps) load(r0, s0 + ROUND);
            process(r1, s0);
            if ((s0 += ROUND) >= steps) break;
        }
    } else {
#pragma unroll 1
        for (int64_t s0 = first; s0 < steps; s0 += ROUND) {
            if (s0 != first) load(r0, s0);
            process(r0, s0);
        }
    }
    write_tile<KW, BF>(acc0, acc1, a.y + row0);
}

// PAIRED: the kernel reads x in pair order from a copy made once, at the first (checked,
// uncaptured) call, outside the timed graphs: every set holds the same x. It times the kernel
// without its PRMTs, not the pre-pass that would make the copy.
template <int KW, int U, bool DB, int MINB = 1, bool CONTIG = false, bool PAIRED = false>
void qdmma2(const Set &st, cudaStream_t s) {
    if (st.W.dtype == GEMV_DTYPE_BF16) { // x in natural order; float zeros' sum of x by MMA
        const gemv_qmatrix_t &W = st.W;
        const Args a = args_of(st);
        const dim3 grid((unsigned)(W.m / 16)), block(32 * KW);
        if (W.zero_mode == GEMV_QZERO_FLOAT)
            qdm2_kernel<true, KW, U, DB, MINB, CONTIG, false, true, true><<<grid, block, 0, s>>>(a);
        else if (W.zero_mode == GEMV_QZERO_INT)
            qdm2_kernel<true, KW, U, DB, MINB, CONTIG, false, false, true><<<grid, block, 0, s>>>(a);
        else
            qdm2_kernel<false, KW, U, DB, MINB, CONTIG, false, false, true><<<grid, block, 0, s>>>(a);
        CK(cudaGetLastError());
        return;
    }
    if (st.W.zero_mode == GEMV_QZERO_FLOAT) { // float zeros: x in natural order, the sum of x by MMA
        const gemv_qmatrix_t &W = st.W;
        const Args a = args_of(st);
        qdm2_kernel<true, KW, U, DB, MINB, CONTIG, false, true><<<(unsigned)(W.m / 16), 32 * KW, 0, s>>>(a);
        CK(cudaGetLastError());
        return;
    }
    const gemv_qmatrix_t &W = st.W;
    static __half *xpaired = nullptr;
    static int64_t xpaired_k = 0;
    cudaStreamCaptureStatus capturing = cudaStreamCaptureStatusNone;
    if (PAIRED) CK(cudaStreamIsCapturing(s, &capturing));
    if (PAIRED && capturing == cudaStreamCaptureStatusNone) { // a new shape's checked call
        if (xpaired_k < W.k) {
            if (xpaired) CK(cudaFree(xpaired));
            CK(cudaMalloc(&xpaired, W.k * 2));
            xpaired_k = W.k;
        }
        xpair_kernel<<<(unsigned)((W.k / 8 + 255) / 256), 256, 0, s>>>(st.x, xpaired, W.k);
    }
    const Args a = args_of(st, PAIRED ? xpaired : nullptr);
    const dim3 grid((unsigned)(W.m / 16)), block(32 * KW);
    if (W.zero_mode == GEMV_QZERO_INT) qdm2_kernel<true, KW, U, DB, MINB, CONTIG, PAIRED><<<grid, block, 0, s>>>(a);
    else qdm2_kernel<false, KW, U, DB, MINB, CONTIG, PAIRED><<<grid, block, 0, s>>>(a);
    CK(cudaGetLastError());
}

// The codes through a per-warp cp.async ring D steps deep (s28's third form): D KB of codes a
// warp in flight without registers. Each lane copies its own two packs of a step and reads
// them back itself, so no barrier is needed; the slot is refilled (step + D KW) once its
// codes have been used.
__device__ __forceinline__ void cp_async16(void *smem, const void *g, bool in) {
    const uint32_t sa = (uint32_t)__cvta_generic_to_shared(smem);
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;" ::"r"(sa), "l"(g), "r"(in ? 16 : 0));
}
template <bool IZ, int KW, int D, int MINB>
__global__ void __launch_bounds__(32 * KW, MINB) qdm3_kernel(const Args a) {
    __shared__ uint4 ring[KW][D][2][32];
    const int lane = threadIdx.x & 31, wi = threadIdx.x >> 5, g = lane >> 2, t = lane & 3;
    const int64_t row0 = (int64_t)blockIdx.x * 16, row = row0 + g, steps = a.k >> 7;
    const uint4 *qa = reinterpret_cast<const uint4 *>(a.q + row * a.ldq) + t; // step s: qa[4 s]
    const int64_t qb = 8 * a.ldq / 16;
    const uint4 *xp = reinterpret_cast<const uint4 *>(a.x) + 4 * t;
    const __half *sa = a.scales + row * a.lds, *za = IZ ? a.zeros + row * a.ldz : nullptr;
    const int64_t sb = 8 * a.lds, zb = 8 * a.ldz;
    auto issue = [&](int slot, int64_t s) {
        const bool in = s < steps;
        const int64_t sc = in ? s : 0;
        cp_async16(&ring[wi][slot][0][lane], qa + 4 * sc, in);
        cp_async16(&ring[wi][slot][1][lane], qa + qb + 4 * sc, in);
        asm volatile("cp.async.commit_group;");
    };
#pragma unroll
    for (int j = 0; j < D; ++j) issue(j, wi + (int64_t)j * KW);
    float acc0 = 0.f, acc1 = 0.f;
    int slot = 0;
#pragma unroll 1
    for (int64_t s = wi; s < steps; s += KW) {
        asm volatile("cp.async.wait_group %0;" ::"n"(D - 1) : "memory");
        const uint4 ca = ring[wi][slot][0][lane], cb = ring[wi][slot][1][lane];
        uint4 X[4] = {};
        if (g == 0) {
#pragma unroll
            for (int i = 0; i < 4; ++i) X[i] = ldg_x(xp + 16 * s + i);
        }
        const float fa = IZ ? h2f(ldg_u16(za + s)) : 8.f, fb = IZ ? h2f(ldg_u16(za + zb + s)) : 8.f;
        float c[2][4] = {};
        step_mmas(ca, cb, fa, fb, [&](int w) { return X[w]; }, c);
        issue(slot, s + (int64_t)D * KW); // after the MMAs: ca and cb are read by then
        if (t == 0) {
            acc0 = fmaf(h2f(ldg_u16(sa + s)), c[0][0] + c[1][0], acc0);
            acc1 = fmaf(h2f(ldg_u16(sa + sb + s)), c[0][2] + c[1][2], acc1);
        }
        slot = slot + 1 == D ? 0 : slot + 1;
    }
    asm volatile("cp.async.wait_group 0;" ::: "memory");
    write_tile<KW>(acc0, acc1, a.y + row0);
}

template <int KW, int D, int MINB = 1> void qdmma3(const Set &st, cudaStream_t s) {
    const gemv_qmatrix_t &W = st.W;
    const Args a = args_of(st);
    const dim3 grid((unsigned)(W.m / 16)), block(32 * KW);
    if (W.zero_mode == GEMV_QZERO_INT) qdm3_kernel<true, KW, D, MINB><<<grid, block, 0, s>>>(a);
    else qdm3_kernel<false, KW, D, MINB><<<grid, block, 0, s>>>(a);
    CK(cudaGetLastError());
}

template <int KW, int U, bool DB, bool XW = false, bool PF = false, int MODE = FULL, int MINB = 1> void qdmma(const Set &st, cudaStream_t s) {
    const gemv_qmatrix_t &W = st.W;
    const Args a = args_of(st);
    const dim3 grid((unsigned)(W.m / 16)), block(32 * KW);
    if (W.zero_mode == GEMV_QZERO_INT) qdm_kernel<true, KW, U, DB, XW, PF, MODE, MINB><<<grid, block, 0, s>>>(a);
    else qdm_kernel<false, KW, U, DB, XW, PF, MODE, MINB><<<grid, block, 0, s>>>(a);
    CK(cudaGetLastError());
}

} // namespace

int main(int argc, char **argv) {
    // Every method of the s28 runs, at fixed indices; QDM_RUN=n times run n's set (the results
    // files h100-2026-11-27-s28-qdmma-n-*.txt), QDM_ONLY="i,j,..." any set.
    const Method methods[] = {
        {"libgemv dense fp16 on the codes' bytes", libgemv_dense, false}, // 0
        {"libgemv quantized dispatch", libgemv_quantized, true},
        {"qdmma KW4 U2", qdmma<4, 2, false>, true}, // 2: run 1, the first form
        {"qdmma KW4 U2 xw", qdmma<4, 2, false, true>, true},
        {"qdmma KW4 U4 xw", qdmma<4, 4, false, true>, true},
        {"qdmma KW4 U2 DB xw", qdmma<4, 2, true, true>, true},
        {"qdmma KW8 U2", qdmma<8, 2, false>, true},
        {"qdmma KW8 U2 xw", qdmma<8, 2, false, true>, true},
        {"qdmma KW8 U4 xw", qdmma<8, 4, false, true>, true},
        {"qdmma KW8 U2 DB xw", qdmma<8, 2, true, true>, true},
        {"qdmma KW8 U2 xw <=64 regs", qdmma<8, 2, false, true, false, FULL, 4>, true},
        {"qdmma KW8 U2 DB xw <=64 regs", qdmma<8, 2, true, true, false, FULL, 4>, true},
        {"qdmma KW16 U2 xw", qdmma<16, 2, false, true>, true},
        {"qdmma KW16 U1 DB xw", qdmma<16, 1, true, true>, true},
        {"qdmma KW16 U2 xw <=64 regs", qdmma<16, 2, false, true, false, FULL, 2>, true},
        {"qdmma KW4 U2 pf", qdmma<4, 2, false, false, true>, true}, // 15: run 2, L1 prefetches
        {"qdmma KW4 U2 xw pf", qdmma<4, 2, false, true, true>, true},
        {"qdmma KW4 U2 DB xw pf", qdmma<4, 2, true, true, true>, true},
        {"qdmma KW4 U4 xw pf", qdmma<4, 4, false, true, true>, true},
        {"qdmma KW4 U2 xw pf <=64 regs", qdmma<4, 2, false, true, true, FULL, 8>, true},
        {"qdmma KW4 U1 DB xw pf", qdmma<4, 1, true, true, true>, true},
        {"qdmma KW2 U2 xw pf", qdmma<2, 2, false, true, true>, true},
        {"qdmma KW2 U2 DB xw pf", qdmma<2, 2, true, true, true>, true},
        {"qdmma KW8 U2 xw pf", qdmma<8, 2, false, true, true>, true},
        {"qdmma KW8 U1 DB xw pf", qdmma<8, 1, true, true, true>, true},
        {"qdmma KW8 U2 xw pf <=64 regs", qdmma<8, 2, false, true, true, FULL, 4>, true},
        {"early KW4 U1", qdmma2<4, 1, false>, true}, // 26: run 3, a round's loads all issued first
        {"early KW4 U2", qdmma2<4, 2, false>, true},
        {"early KW4 U1 DB", qdmma2<4, 1, true>, true},
        {"early KW4 U2 DB", qdmma2<4, 2, true>, true},
        {"early KW8 U1", qdmma2<8, 1, false>, true},
        {"early KW8 U2", qdmma2<8, 2, false>, true},
        {"early KW8 U1 DB", qdmma2<8, 1, true>, true},
        {"early KW8 U1 DB <=64 regs", qdmma2<8, 1, true, 4>, true},
        {"early KW2 U2 DB", qdmma2<2, 2, true>, true},
        {"early KW16 U1", qdmma2<16, 1, false>, true},
        {"ring KW4 D2", qdmma3<4, 2>, true}, // 36: run 4, the cp.async ring
        {"ring KW4 D4", qdmma3<4, 4>, true},
        {"ring KW4 D8", qdmma3<4, 8>, true},
        {"ring KW4 D4 <=64 regs", qdmma3<4, 4, 8>, true},
        {"ring KW8 D2", qdmma3<8, 2>, true},
        {"ring KW8 D4", qdmma3<8, 4>, true},
        {"ring KW8 D4 <=64 regs", qdmma3<8, 4, 4>, true},
        {"ring KW2 D8", qdmma3<2, 8>, true},
        {"ring KW2 D4", qdmma3<2, 4>, true},
        {"early contig KW4 U2", qdmma2<4, 2, false, 1, true>, true}, // 45: run 5, a warp's steps consecutive
        {"early contig KW4 U4", qdmma2<4, 4, false, 1, true>, true},
        {"early contig KW8 U2", qdmma2<8, 2, false, 1, true>, true},
        {"early contig KW8 U4", qdmma2<8, 4, false, 1, true>, true},
        {"early contig KW4 U2 DB", qdmma2<4, 2, true, 1, true>, true},
        {"early contig KW2 U4", qdmma2<2, 4, false, 1, true>, true},
        {"early contig KW16 U2", qdmma2<16, 2, false, 1, true>, true},
        {"qdmma loads KW4 U4", qdmma<4, 4, false, false, false, LOADS>, false}, // 52: the floors
        {"qdmma loads KW8 U2", qdmma<8, 2, false, false, false, LOADS>, false},
        {"qdmma loads KW8 U4", qdmma<8, 4, false, false, false, LOADS>, false},
        {"qdmma loads KW8 U2 DB", qdmma<8, 2, true, false, false, LOADS>, false},
        {"qdmma loads KW16 U2", qdmma<16, 2, false, false, false, LOADS>, false},
        {"qdmma loads KW4 U2", qdmma<4, 2, false, false, false, LOADS>, false},
        {"early paired KW4 U2", qdmma2<4, 2, false, 1, false, true>, true}, // 58: run 6, x in pair order
        {"early paired KW8 U2", qdmma2<8, 2, false, 1, false, true>, true},
        {"early paired KW4 U1", qdmma2<4, 1, false, 1, false, true>, true},
        {"early paired contig KW4 U2", qdmma2<4, 2, false, 1, true, true>, true}};
    const char *runs[] = {"0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,52,53,54,56",
                          "0,1,3,15,16,17,18,19,20,21,22,23,24,25,57,53",
                          "0,1,3,7,26,27,28,29,30,31,32,33,34,35,57,53",
                          "0,1,3,27,31,36,37,38,39,40,41,42,43,44,57,53",
                          "0,1,3,27,31,40,45,46,47,48,49,50,51,57,53",
                          "0,1,3,27,31,26,45,58,59,60,61,57,53",
                          "0,1,27,31,26,45,47,57,53",
                          "0,1,27,31,26,45,47"};
    const Format formats[] = {{4, 128, GEMV_QZERO_INT, "int4 g128 int"},
                              {4, 128, GEMV_QZERO_SYMMETRIC, "int4 g128 sym"},
                              {4, 128, GEMV_QZERO_FLOAT, "int4 g128 float"},  // 2..4: qdmma2 methods only
                              {4, 128, GEMV_QZERO_FLOAT, "int4 g128 float", GEMV_DTYPE_BF16},
                              {4, 128, GEMV_QZERO_INT, "int4 g128 int", GEMV_DTYPE_BF16}};
    const char *only = getenv("QDM_ONLY");
    if (!only && getenv("QDM_RUN")) only = runs[std::min(7, std::max(0, atoi(getenv("QDM_RUN")) - 1))];
    const std::vector<Method> picked = pick_methods(methods, sizeof(methods) / sizeof(methods[0]), only);
    return run_harness(argc, argv, picked.data(), (int)picked.size(), formats, 5, 16, 128);
}
