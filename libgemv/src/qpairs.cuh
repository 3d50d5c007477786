// Device helpers of the quantized kernels (qmma.cu, qblock.cu, through common.cuh), which the
// standalone experiments include too (benchmarks/experiments/qdevice.cuh): the code loads past
// L1, 16-bit pairs as words, a mask and an OR in one LOP3, PRMT, and a word's int4 code pairs
// in bf16.
#pragma once
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>

namespace libgemv {

// A 16-byte pack of codes past L1 (ld.global.nc.L1::no_allocate): streamed through it they
// would evict the x that every warp of the SM rereads there.
__device__ __forceinline__ uint4 load_codes_past_l1(const uint4 *p) {
    uint4 v;
    asm volatile("ld.global.nc.L1::no_allocate.v4.u32 {%0,%1,%2,%3}, [%4];"
                 : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
                 : "l"(p));
    return v;
}

__device__ __forceinline__ uint32_t as_u32(__half2 h) { return *reinterpret_cast<uint32_t *>(&h); }
__device__ __forceinline__ __half2 as_h2(uint32_t u) { return *reinterpret_cast<__half2 *>(&u); }

// (u & mask) | bits in one LOP3: written in C, the two immediates split it into an AND
// and an OR (a LOP3 takes one immediate; ptxas keeps `bits` in a register here).
template <uint32_t MASK, uint32_t BITS> __device__ __forceinline__ uint32_t and_or(uint32_t u) {
    uint32_t d;
    asm("lop3.b32 %0, %1, %2, %3, 0xEA;" : "=r"(d) : "r"(u), "n"(MASK), "r"(BITS));
    return d;
}

__device__ __forceinline__ uint32_t prmt(uint32_t a, uint32_t b, uint32_t sel) {
    uint32_t d;
    asm("prmt.b32 %0, %1, %2, %3;" : "=r"(d) : "r"(a), "r"(b), "r"(sel));
    return d;
}

// Word u's pairs (codes (0,4), (1,5), (2,6), (3,7)) minus z, exactly, in bf16 (7 mantissa
// bits: 1024 + 16 q does not fit): each nibble shifted down under 0x4300 (128 + q), one HADD2
// of -(128 + z).
__device__ __forceinline__ void bf16_code_pairs(uint32_t u, float z, uint32_t (&p)[4]) {
    const __nv_bfloat162 minus = __float2bfloat162_rn(-(128.f + z));
#pragma unroll
    for (int j = 0; j < 4; ++j) {
        const uint32_t v = and_or<0x000F000Fu, 0x43004300u>(u >> (4 * j)); // codes j and j + 4
        const __nv_bfloat162 d = __hadd2(*reinterpret_cast<const __nv_bfloat162 *>(&v), minus);
        p[j] = *reinterpret_cast<const uint32_t *>(&d);
    }
}

} // namespace libgemv
