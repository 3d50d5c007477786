// Device helpers the standalone quantized experiments share (qskeleton.cu, qdense.cu,
// qdmma.cu, qtma.cu): x's load, and q_mma's int4 pair arithmetic, MMA and a step's 8 MMAs as
// inline PTX; the code load and the bit helpers are the library's (qpairs.cuh).
#pragma once
#include <cuda_fp16.h>

#include <cstdint>

#include "../../libgemv/src/qpairs.cuh"

__device__ __forceinline__ uint4 ldg_x(const uint4 *p) { // x: kept in L1, in program order
    uint4 v;
    asm volatile("ld.global.nc.v4.u32 {%0,%1,%2,%3}, [%4];" : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "l"(p));
    return v;
}
using libgemv::and_or; // the library's own (libgemv/src/qpairs.cuh)
using libgemv::as_h2;
using libgemv::as_u32;
using libgemv::bf16_code_pairs;
using libgemv::load_codes_past_l1; // codes streamed past L1, leaving it to x
using libgemv::prmt;
// Word u's code pairs (0, 4), (1, 5), (2, 6), (3, 7) minus the zero, exact in fp16: one LOP3
// under 0x6400 and one HADD2 (or HFMA2 by 1/16) a pair (zlow = -(1024 + z), zhigh = -(64 +
// z) in both halves). asm volatile keeps it beside its MMAs (else the compiler computes every
// pair of a step first: registers).
__device__ __forceinline__ void word_pairs_pinned(uint32_t u, uint32_t zlow, uint32_t zhigh, uint32_t (&p)[4]) {
    asm volatile("{\n\t.reg .b32 t0, t1, t2, t3, h;\n\t"
                 "shr.u32 h, %4, 8;\n\t"
                 "lop3.b32 t0, %4, 0x000F000F, 0x64006400, 0xEA;\n\t"
                 "lop3.b32 t1, %4, 0x00F000F0, 0x64006400, 0xEA;\n\t"
                 "lop3.b32 t2, h, 0x000F000F, 0x64006400, 0xEA;\n\t"
                 "lop3.b32 t3, h, 0x00F000F0, 0x64006400, 0xEA;\n\t"
                 "add.rn.f16x2 %0, t0, %5;\n\t"
                 "fma.rn.f16x2 %1, t1, %7, %6;\n\t"
                 "add.rn.f16x2 %2, t2, %5;\n\t"
                 "fma.rn.f16x2 %3, t3, %7, %6;\n\t}"
                 : "=r"(p[0]), "=r"(p[1]), "=r"(p[2]), "=r"(p[3])
                 : "r"(u), "r"(zlow), "r"(zhigh), "r"(0x2C002C00u)); // 1/16 in both halves
}
__device__ __forceinline__ void mma_16816_full(float (&c)[4], uint32_t a0, uint32_t a1, uint32_t a2, uint32_t a3,
                                               uint32_t b0, uint32_t b1) {
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
                 "{%0,%1,%2,%3};"
                 : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
                 : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
}

__device__ __forceinline__ float h2f(uint32_t v) { return __half2float(__ushort_as_half((unsigned short)v)); }

// The 8 MMAs of a step: row g's pack ca and row g + 8's cb, their zeros fa and fb, word w's x
// from xw(w) (zero in lanes g != 0); D's column 0 into c[0] and c[1] (words alternate).
// PAIRED: x already in pair order (xpair_kernel): a word's 16 bytes are the B fragments.
// SUMX (float zeros): also the step's sum of x, by MMAs of an all-ones A on the same B, into sx
// (column 0 in lanes t = 0, every row).
template <bool PAIRED = false, bool SUMX = false, typename XW>
__device__ __forceinline__ void step_mmas(const uint4 &ca, const uint4 &cb, float fa, float fb, XW xw, float (&c)[2][4],
                                          float *sx = nullptr) {
    const __half2 zla = __float2half2_rn(-(1024.f + fa)), zha = __float2half2_rn(-(64.f + fa));
    const __half2 zlb = __float2half2_rn(-(1024.f + fb)), zhb = __float2half2_rn(-(64.f + fb));
    const uint32_t ua[4] = {ca.x, ca.y, ca.z, ca.w}, ub[4] = {cb.x, cb.y, cb.z, cb.w};
#pragma unroll
    for (int w = 0; w < 4; ++w) {
        const uint4 X = xw(w);
        uint32_t pa[4], pb[4];
        word_pairs_pinned(ua[w], as_u32(zla), as_u32(zha), pa);
        word_pairs_pinned(ub[w], as_u32(zlb), as_u32(zhb), pb);
        if (PAIRED) {
            mma_16816_full(c[0], pa[0], pb[0], pa[1], pb[1], X.x, X.y);
            mma_16816_full(c[1], pa[2], pb[2], pa[3], pb[3], X.z, X.w);
        } else if (SUMX) {
            constexpr uint32_t one2 = 0x3C003C00u; // (1, 1) in fp16
            const uint32_t b0 = prmt(X.x, X.z, 0x5410), b1 = prmt(X.x, X.z, 0x7632);
            const uint32_t b2 = prmt(X.y, X.w, 0x5410), b3 = prmt(X.y, X.w, 0x7632);
            mma_16816_full(c[0], pa[0], pb[0], pa[1], pb[1], b0, b1);
            mma_16816_full(c[1], pa[2], pb[2], pa[3], pb[3], b2, b3);
            mma_16816_full(*reinterpret_cast<float(*)[4]>(sx), one2, one2, one2, one2, b0, b1);
            mma_16816_full(*reinterpret_cast<float(*)[4]>(sx), one2, one2, one2, one2, b2, b3);
        } else {
            mma_16816_full(c[0], pa[0], pb[0], pa[1], pb[1], prmt(X.x, X.z, 0x5410), prmt(X.x, X.z, 0x7632));
            mma_16816_full(c[1], pa[2], pb[2], pa[3], pb[3], prmt(X.y, X.w, 0x5410), prmt(X.y, X.w, 0x7632));
        }
    }
}
