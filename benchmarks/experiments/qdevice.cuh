// Device helpers the standalone quantized experiments share (qskeleton.cu, qdense.cu,
// qdmma.cu): x's load, and q_mma's int4 pair arithmetic and MMA as inline PTX; the code load
// and the bit helpers are the library's (qpairs.cuh).
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
