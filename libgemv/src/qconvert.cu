// Kernel family "quantized conversions": into and out of the packed layout of quantized
// weights (docs/quantized.md), run once per matrix, not per GEMV.
//   quantize    a dense matrix: one warp a (row, group): min/max, the scale and zero (rounded
//               to the scale type first), then the codes from the rounded values;
//   gptq / awq  a checkpoint's tensors, one thread a packed word, scale and zero;
//   dequantize  the exact fp32 values, one thread an element.
// All grid-stride with 64-bit indices. Every kernel writes every code word of the packed
// rows, padding included (zero codes), so a repacked matrix never holds stale bytes.
#include "common.cuh"

namespace libgemv {

namespace {

__device__ __forceinline__ int64_t grid_start() { return (int64_t)blockIdx.x * blockDim.x + threadIdx.x; }
__device__ __forceinline__ int64_t grid_step() { return (int64_t)gridDim.x * blockDim.x; }

template <int BITS> constexpr int kWordCodes = 32 / BITS;
template <int BITS> constexpr int kMaxCode = (1 << BITS) - 1;

// Columns of a row's packed codes (whole 16-byte packs).
__host__ __device__ inline int64_t packed_cols(int bits, int64_t k) { return q_row_bytes(bits, k) * 8 / bits; }

template <typename T> __device__ __forceinline__ T *at(void *base, int64_t i) { return static_cast<T *>(base) + i; }
__device__ __forceinline__ uint32_t *word_at(const gemv_qmatrix_t &w, int64_t row, int64_t word) {
    return reinterpret_cast<uint32_t *>(static_cast<uint8_t *>(w.qweight) + row * w.ldq) + word;
}
// Group size in columns (one group a row: the whole packed row).
__device__ __forceinline__ int64_t group_cols(const gemv_qmatrix_t &w) {
    return w.group_size ? w.group_size : packed_cols(w.bits, w.k);
}

// ---- quantize ------------------------------------------------------------------------

// The scale and zero of a group with extremes lo, hi (fp32), rounded to T.
template <typename T, int BITS, int ZMODE> __device__ void group_scale(float lo, float hi, float *s, float *z) {
    constexpr float maxq = float(kMaxCode<BITS>);
    if constexpr (ZMODE == GEMV_QZERO_SYMMETRIC) {
        *s = to_f32(from_f32<T>(fmaxf(fabsf(lo), fabsf(hi)) / float((1 << (BITS - 1)) - 1)));
        *z = float(1 << (BITS - 1));
    } else if constexpr (ZMODE == GEMV_QZERO_INT) {
        lo = fminf(lo, 0.f);
        hi = fmaxf(hi, 0.f);
        *s = to_f32(from_f32<T>((hi - lo) / maxq));
        *z = *s == 0.f ? 0.f : fminf(fmaxf(rintf(-lo / *s), 0.f), maxq);
    } else {
        *s = to_f32(from_f32<T>((hi - lo) / maxq));
        *z = to_f32(from_f32<T>(lo));
    }
}

template <int BITS, int ZMODE> __device__ __forceinline__ uint32_t code_of(float v, float s, float z) {
    constexpr float maxq = float(kMaxCode<BITS>);
    float q;
    if (s == 0.f) q = ZMODE == GEMV_QZERO_FLOAT ? 0.f : z;
    else if constexpr (ZMODE == GEMV_QZERO_FLOAT) q = rintf((v - z) / s);
    else q = rintf(v / s) + z;
    return (uint32_t)fminf(fmaxf(q, 0.f), maxq); // NaN clamps to 0
}

template <typename T, int BITS, int ZMODE> __global__ void quantize_kernel(const QConvertArgs a) {
    const gemv_qmatrix_t &w = a.w;
    const T *A = static_cast<const T *>(a.dense);
    const int lane = threadIdx.x & 31;
    const int64_t groups = q_groups(w), gs = group_cols(w), cols = packed_cols(BITS, w.k);
    const int64_t warp0 = grid_start() >> 5, warps = grid_step() >> 5;
    for (int64_t item = warp0; item < w.m * groups; item += warps) {
        const int64_t row = item / groups, g = item - row * groups;
        const int64_t c0 = g * gs, c1 = min(c0 + gs, w.k);
        float lo = INFINITY, hi = -INFINITY;
        for (int64_t c = c0 + lane; c < c1; c += 32) {
            const float v = to_f32(A[row * a.ld_dense + c]);
            lo = fminf(lo, v);
            hi = fmaxf(hi, v);
        }
        for (int o = 16; o > 0; o /= 2) {
            lo = fminf(lo, __shfl_xor_sync(0xffffffffu, lo, o));
            hi = fmaxf(hi, __shfl_xor_sync(0xffffffffu, hi, o));
        }
        float s, z;
        group_scale<T, BITS, ZMODE>(lo, hi, &s, &z);
        if (lane == 0) {
            *at<T>(w.scales, row * w.lds + g) = from_f32<T>(s);
            if (ZMODE != GEMV_QZERO_SYMMETRIC) *at<T>(w.zeros, row * w.ldz + g) = from_f32<T>(z);
        }
        // The last group also writes the row's padding codes.
        const int64_t end = g == groups - 1 ? cols : c0 + gs;
        for (int64_t word = c0 / kWordCodes<BITS> + lane; word < end / kWordCodes<BITS>; word += 32) {
            uint32_t u = 0;
#pragma unroll
            for (int j = 0; j < kWordCodes<BITS>; ++j) {
                const int64_t c = word * kWordCodes<BITS> + j;
                if (c < w.k) u |= code_of<BITS, ZMODE>(to_f32(A[row * a.ld_dense + c]), s, z) << (BITS * j);
            }
            *word_at(w, row, word) = u;
        }
    }
}

// ---- checkpoints -------------------------------------------------------------------------

// AutoAWQ's nibble of column t (mod 8) within a word packed along M.
__device__ __forceinline__ int awq_nibble(int64_t t) { return (int)((0x73625140u >> (4 * (t & 7))) & 15u); }

// The code of (row, packed column c) in a checkpoint (c < k).
template <int BITS, bool AWQ> __device__ __forceinline__ uint32_t checkpoint_code(const QConvertArgs &a, int64_t row, int64_t c) {
    const gemv_qmatrix_t &w = a.w;
    if constexpr (AWQ) {
        const uint32_t u = (uint32_t)a.src_q[c * (w.m / 8) + row / 8];
        return (u >> (4 * awq_nibble(row))) & 15u;
    } else {
        const int64_t src = w.perm ? (int64_t)w.perm[c] : c;
        const uint32_t u = (uint32_t)a.src_q[(src / kWordCodes<BITS>) * w.m + row];
        return (u >> (BITS * (src % kWordCodes<BITS>))) & (uint32_t)kMaxCode<BITS>;
    }
}

template <typename T, int BITS, bool AWQ> __global__ void repack_codes_kernel(const QConvertArgs a) {
    const gemv_qmatrix_t &w = a.w;
    const int64_t words = packed_cols(BITS, w.k) / kWordCodes<BITS>;
    for (int64_t i = grid_start(); i < w.m * words; i += grid_step()) {
        const int64_t row = i / words, word = i - row * words;
        uint32_t u = 0;
#pragma unroll
        for (int j = 0; j < kWordCodes<BITS>; ++j) {
            const int64_t c = word * kWordCodes<BITS> + j;
            if (c < w.k) u |= checkpoint_code<BITS, AWQ>(a, row, c) << (BITS * j);
        }
        *word_at(w, row, word) = u;
    }
}

// Scales [groups, m] -> [m, groups]; zeros unpacked along M, plus GPTQ's offset.
template <typename T, int BITS, bool AWQ> __global__ void repack_groups_kernel(const QConvertArgs a) {
    const gemv_qmatrix_t &w = a.w;
    const int64_t groups = q_groups(w);
    const T *src_s = static_cast<const T *>(a.src_s);
    for (int64_t i = grid_start(); i < w.m * groups; i += grid_step()) {
        const int64_t g = i / w.m, row = i - g * w.m; // consecutive threads read consecutive rows
        *at<T>(w.scales, row * w.lds + g) = src_s[g * w.m + row];
        uint32_t z;
        if constexpr (AWQ) {
            z = ((uint32_t)a.src_z[g * (w.m / 8) + row / 8] >> (4 * awq_nibble(row))) & 15u;
        } else {
            const uint32_t u = (uint32_t)a.src_z[g * (w.m / kWordCodes<BITS>) + row / kWordCodes<BITS>];
            z = (u >> (BITS * (row % kWordCodes<BITS>))) & (uint32_t)kMaxCode<BITS>;
        }
        *at<T>(w.zeros, row * w.ldz + g) = from_f32<T>(float((int)z + a.zero_offset));
    }
}

// ---- dequantize ------------------------------------------------------------------------

template <typename T, int BITS, int ZMODE> __global__ void dequantize_kernel(const QConvertArgs a) {
    const gemv_qmatrix_t &w = a.w;
    const int64_t groups = q_groups(w), gs = group_cols(w);
    float *out = static_cast<float *>(const_cast<void *>(a.dense));
    for (int64_t i = grid_start(); i < w.m * w.k; i += grid_step()) {
        const int64_t row = i / w.k, c = i - row * w.k, g = min(c / gs, groups - 1);
        const uint32_t u = *word_at(w, row, c / kWordCodes<BITS>);
        const float q = float((u >> (BITS * (c % kWordCodes<BITS>))) & (uint32_t)kMaxCode<BITS>);
        const float s = to_f32(*at<const T>(w.scales, row * w.lds + g));
        float v;
        if constexpr (ZMODE == GEMV_QZERO_FLOAT) v = fmaf(q, s, to_f32(*at<const T>(w.zeros, row * w.ldz + g)));
        else if constexpr (ZMODE == GEMV_QZERO_INT) v = (q - to_f32(*at<const T>(w.zeros, row * w.ldz + g))) * s;
        else v = (q - float(1 << (BITS - 1))) * s;
        out[row * a.ld_dense + (w.perm ? (int64_t)w.perm[c] : c)] = v;
    }
}

template <typename T, int BITS, int ZMODE> cudaError_t launch_format(const QConvertArgs &a, cudaStream_t s) {
    const LaunchPlan p = qconvert_plan(a);
    switch (a.kind) {
    case QConvert::kQuantize: return launch_kernel(quantize_kernel<T, BITS, ZMODE>, p.grid, p.block, 0, s, false, a);
    case QConvert::kDequantize: return launch_kernel(dequantize_kernel<T, BITS, ZMODE>, p.grid, p.block, 0, s, false, a);
    case QConvert::kGptq:
    case QConvert::kAwq: {
        // Codes, then the scales and zeros: two launches (different index spaces).
        const bool awq = a.kind == QConvert::kAwq;
        cudaError_t e = awq ? launch_kernel(repack_codes_kernel<T, BITS, true>, p.grid, p.block, 0, s, false, a)
                            : launch_kernel(repack_codes_kernel<T, BITS, false>, p.grid, p.block, 0, s, false, a);
        if (e != cudaSuccess) return e;
        return awq ? launch_kernel(repack_groups_kernel<T, BITS, true>, p.grid, p.block, 0, s, false, a)
                   : launch_kernel(repack_groups_kernel<T, BITS, false>, p.grid, p.block, 0, s, false, a);
    }
    }
    return cudaErrorInvalidValue;
}

template <typename T, int BITS> cudaError_t launch_mode(const QConvertArgs &a, cudaStream_t s) {
    switch (a.w.zero_mode) {
    case GEMV_QZERO_SYMMETRIC: return launch_format<T, BITS, GEMV_QZERO_SYMMETRIC>(a, s);
    case GEMV_QZERO_INT: return launch_format<T, BITS, GEMV_QZERO_INT>(a, s);
    default: return launch_format<T, BITS, GEMV_QZERO_FLOAT>(a, s);
    }
}

template <typename T> cudaError_t launch_type(const QConvertArgs &a, cudaStream_t s) {
    return a.w.bits == 4 ? launch_mode<T, 4>(a, s) : launch_mode<T, 8>(a, s);
}

} // namespace

cudaError_t launch_qconvert(const QConvertArgs &a, cudaStream_t s) {
    return a.w.dtype == GEMV_DTYPE_BF16 ? launch_type<__nv_bfloat16>(a, s) : launch_type<__half>(a, s);
}

} // namespace libgemv
