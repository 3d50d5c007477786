// Experiment (issue 15, s27): quantized GEMV on the dense kernel's skeleton, on CUDA cores.
//
// Why: NOTES 31 found the quantized kernels 1.3-1.45x slower than the dense kernel on the
// same bytes even with their arithmetic removed, and blamed the skeleton (one wave of big
// blocks, ~15 warps an SM, x staged per block); int8's arithmetic was free there. The
// skeleton tried since (qskeleton.cu, x held) kept the MMA, whose x fragments and 16-row
// tiles cost their own. This one is the dense row kernel with codes: blocks of 32 KW
// threads own R rows each, as many blocks as rows / R, lanes take the rows' 16-byte packs
// (ld.global.nc.L1::no_allocate, U packs a row in flight), x comes through L1 as fp32 from
// a pre-pass copy (int4: times 16^-e, as q_rows stages it) or, for int8, as fp16 converted
// in the kernel, and a code costs PRMT/LOP3 + FADD + FFMA (q_rows' exact arithmetic: the
// code under the mantissa of 2^23, q - z by one FADD). The pre-pass runs first in the same
// stream with programmatic dependent launch: the main kernel asks for its first codes
// before it waits for x.
// Prediction: int8 within 5% of the dense kernel on the codes' bytes (8192^2: 23 us, 2.9
// TB/s) if the skeleton is what costs; int4 3 instructions a code (6 a byte) may be issue-
// bound near 2.2 TB/s. FLOOR methods (loads alone, unchecked) give the skeleton's floor.
//
// int8 per channel (symmetric or integer zeros) and int4 groups of 128 (integer zeros),
// fp16; the harness (qharness.cuh) checks each method against the contract's bound.
//   nvcc -O3 -std=c++17 -arch=sm_90 benchmarks/experiments/qdense.cu -Ilibgemv/include \
//        -L<libdir> -lgemv -Xlinker -rpath=<libdir> -o /tmp/qdense && [QSK_FORMATS=01] /tmp/qdense [MxK ...]
#include "qdevice.cuh"
#include "qharness.cuh"

namespace {

constexpr uint32_t kMagicBits = 0x4B000000u; // 2^23
constexpr float kMagic = 8388608.f;
enum { FULL = 0, FLOOR = 1 };

__host__ __device__ constexpr int nibble_exp(int j) { return j < 5 ? j : j - 3; }
__device__ __forceinline__ float pow16(int e) { return __uint_as_float((uint32_t)(127 + 4 * e) << 23); }

struct QdArgs {
    const uint8_t *q;
    const __half *scales, *zeros, *x;
    const float *x32;
    __half *y;
    int64_t m, k, ldq, lds, ldz;
};

// x as fp32 (int4: column c times 16^-nibble_exp(c % 8), so a nibble masked in place at 16^e
// times its value still multiplies x). Lets the next kernel start at once (PDL).
template <int BITS> __global__ void qd_x_kernel(const __half *x, float *x32, int64_t k) {
    asm volatile("griddepcontrol.launch_dependents;");
    const int64_t c = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (c >= k) return;
    float v = __half2float(x[c]);
    if (BITS == 4) v *= __uint_as_float((uint32_t)(127 - 4 * nibble_exp((int)(c & 7))) << 23);
    x32[c] = v;
}

template <int J> __device__ __forceinline__ float byte_code(uint32_t u) { // 2^23 + byte J
    return __uint_as_float(__byte_perm(u, kMagicBits, 0x7440 | J));
}
template <int J> __device__ __forceinline__ float nibble(uint32_t u, uint32_t h) { // 2^23 + q 16^e
    if constexpr (J < 5) return __uint_as_float((u & (0xFu << (4 * J))) | kMagicBits);
    else return __uint_as_float((h & (0xFu << (4 * (J - 3)))) | kMagicBits);
}

// 16 (int8) or 32 (int4) fp32 x of pack p.
template <int BITS, int XM> struct XPack {
    float v[128 / BITS];
    __device__ __forceinline__ void load(const QdArgs &a, int64_t p) {
        constexpr int N = 128 / BITS;
        if constexpr (XM == 1) {
            const float4 *xp = reinterpret_cast<const float4 *>(a.x32 + p * N);
#pragma unroll
            for (int i = 0; i < N / 4; ++i) {
                const float4 f = __ldg(xp + i);
                v[4 * i] = f.x, v[4 * i + 1] = f.y, v[4 * i + 2] = f.z, v[4 * i + 3] = f.w;
            }
        } else { // fp16 x through L1, converted here (int8 only)
            const uint4 *xp = reinterpret_cast<const uint4 *>(a.x + p * N);
#pragma unroll
            for (int i = 0; i < N / 8; ++i) {
                const uint4 h = __ldg(xp + i);
                const uint32_t w[4] = {h.x, h.y, h.z, h.w};
#pragma unroll
                for (int j = 0; j < 4; ++j) {
                    const float2 f = __half22float2(*reinterpret_cast<const __half2 *>(&w[j]));
                    v[8 * i + 2 * j] = f.x, v[8 * i + 2 * j + 1] = f.y;
                }
            }
        }
    }
};

// One pack's sum of (q - z) x; c = 2^23 + z (int8) or c[e] = 2^23 + z 16^e (int4).
__device__ __forceinline__ float pack_dot8(const uint4 &w, const float *x, float c, float d) {
    const uint32_t u[4] = {w.x, w.y, w.z, w.w};
#pragma unroll
    for (int i = 0; i < 4; ++i) {
        d = fmaf(byte_code<0>(u[i]) - c, x[4 * i], d);
        d = fmaf(byte_code<1>(u[i]) - c, x[4 * i + 1], d);
        d = fmaf(byte_code<2>(u[i]) - c, x[4 * i + 2], d);
        d = fmaf(byte_code<3>(u[i]) - c, x[4 * i + 3], d);
    }
    return d;
}
__device__ __forceinline__ float pack_dot4(const uint4 &w, const float *x, const float (&c)[5]) {
    const uint32_t u[4] = {w.x, w.y, w.z, w.w};
    float d = 0.f;
#pragma unroll
    for (int i = 0; i < 4; ++i) {
        const uint32_t h = u[i] >> 12;
        const float *xi = x + 8 * i;
        d = fmaf(nibble<0>(u[i], h) - c[0], xi[0], d);
        d = fmaf(nibble<1>(u[i], h) - c[1], xi[1], d);
        d = fmaf(nibble<2>(u[i], h) - c[2], xi[2], d);
        d = fmaf(nibble<3>(u[i], h) - c[3], xi[3], d);
        d = fmaf(nibble<4>(u[i], h) - c[4], xi[4], d);
        d = fmaf(nibble<5>(u[i], h) - c[2], xi[5], d);
        d = fmaf(nibble<6>(u[i], h) - c[3], xi[6], d);
        d = fmaf(nibble<7>(u[i], h) - c[4], xi[7], d);
    }
    return d;
}

// Blocks of 32 KW threads own R rows; thread t takes packs t, t + 32 KW, ... of each row, U
// packs a row loaded before any is summed. int4: groups of 128 (4 packs a group), K a
// multiple of 32; int8: one group a row, K a multiple of 16.
template <int BITS, bool IZ, int R, int KW, int U, int XM, int MODE>
__global__ void __launch_bounds__(32 * KW) qd_kernel(const QdArgs a) {
    constexpr int T = 32 * KW;
    const int64_t packs = a.k * BITS / 128;
    const int64_t row0 = (int64_t)blockIdx.x * R;
    const uint4 *qr[R];
    float acc[R], c8[R];
#pragma unroll
    for (int r = 0; r < R; ++r) {
        const int64_t row = min(row0 + r, a.m - 1); // rows past M read row m - 1, never stored
        qr[r] = reinterpret_cast<const uint4 *>(a.q + row * a.ldq);
        acc[r] = 0.f;
        c8[r] = kMagic + (BITS == 8 && IZ ? __half2float(a.zeros[row * a.ldz]) : 128.f);
    }
    bool waited = XM == 0;
    for (int64_t p0 = threadIdx.x; p0 < packs; p0 += (int64_t)T * U) {
        uint4 w[U][R];
#pragma unroll
        for (int u = 0; u < U; ++u)
#pragma unroll
            for (int r = 0; r < R; ++r) w[u][r] = p0 + u * T < packs ? load_codes_past_l1(qr[r] + p0 + u * T) : make_uint4(0, 0, 0, 0);
        if (!waited) { // x32 is the pre-pass's: the first codes are on their way already
            asm volatile("griddepcontrol.wait;" ::: "memory");
            waited = true;
        }
        if constexpr (MODE == FLOOR) {
#pragma unroll
            for (int u = 0; u < U; ++u)
#pragma unroll
                for (int r = 0; r < R; ++r) acc[r] += __uint_as_float((w[u][r].x ^ w[u][r].y ^ w[u][r].z ^ w[u][r].w) & 0x3FFFFFFFu);
            continue;
        }
#pragma unroll
        for (int u = 0; u < U; ++u) {
            const int64_t p = p0 + u * T;
            if (p >= packs) break;
            XPack<BITS, XM> x;
            x.load(a, p);
#pragma unroll
            for (int r = 0; r < R; ++r) {
                if constexpr (BITS == 8) {
                    acc[r] = pack_dot8(w[u][r], x.v, c8[r], acc[r]);
                } else {
                    const int64_t row = min(row0 + r, a.m - 1), g = p >> 2;
                    const float s = __half2float(__ldg(a.scales + row * a.lds + g));
                    const float z = IZ ? __half2float(__ldg(a.zeros + row * a.ldz + g)) : 8.f;
                    float c[5];
#pragma unroll
                    for (int e = 0; e < 5; ++e) c[e] = fmaf(z, pow16(e), kMagic);
                    acc[r] = fmaf(s, pack_dot4(w[u][r], x.v, c), acc[r]);
                }
            }
        }
    }
    if (!waited) asm volatile("griddepcontrol.wait;" ::: "memory");
    __shared__ float sums[KW][R];
#pragma unroll
    for (int r = 0; r < R; ++r) {
        float v = acc[r];
#pragma unroll
        for (int o = 16; o > 0; o /= 2) v += __shfl_xor_sync(0xffffffffu, v, o);
        if ((threadIdx.x & 31) == 0) sums[threadIdx.x >> 5][r] = v;
    }
    __syncthreads();
    if (threadIdx.x < R && row0 + threadIdx.x < a.m) {
        const int64_t row = row0 + threadIdx.x;
        float v = 0.f;
        for (int i = 0; i < KW; ++i) v += sums[i][threadIdx.x]; // warp order: deterministic
        if (BITS == 8) v *= __half2float(a.scales[row * a.lds]);
        a.y[row] = __float2half_rn(v);
    }
}

// One x32 buffer for every method: grown by the checked calls, which run before any capture.
float *x32_buffer(int64_t k) {
    static float *x32 = nullptr;
    static int64_t x32_k = 0;
    if (x32_k < k) {
        if (x32) CK(cudaFree(x32));
        CK(cudaMalloc(&x32, k * 4));
        x32_k = k;
    }
    return x32;
}

template <int BITS, bool IZ, int R, int KW, int U, int XM, int MODE> void launch_qd(const Set &st, cudaStream_t s) {
    const gemv_qmatrix_t &W = st.W;
    float *x32 = x32_buffer(W.k);
    const QdArgs a{static_cast<const uint8_t *>(W.qweight), static_cast<const __half *>(W.scales),
                   static_cast<const __half *>(W.zeros), st.x, x32, st.y, W.m, W.k, W.ldq, W.lds, W.ldz};
    if (XM == 1) qd_x_kernel<BITS><<<(unsigned)((W.k + 255) / 256), 256, 0, s>>>(st.x, x32, W.k);
    cudaLaunchConfig_t cfg = {};
    cfg.gridDim = dim3((unsigned)((W.m + R - 1) / R));
    cfg.blockDim = dim3(32 * KW);
    cfg.stream = s;
    cudaLaunchAttribute attr;
    attr.id = cudaLaunchAttributeProgrammaticStreamSerialization;
    attr.val.programmaticStreamSerializationAllowed = 1;
    cfg.attrs = &attr;
    cfg.numAttrs = XM == 1 ? 1 : 0;
    CK(cudaLaunchKernelEx(&cfg, qd_kernel<BITS, IZ, R, KW, U, XM, MODE>, a));
}

// Picks the kernel for the format (int4: XM 1 always).
template <int R, int KW, int U, int XM, int MODE = FULL> void qdense(const Set &st, cudaStream_t s) {
    const bool iz = st.W.zero_mode == GEMV_QZERO_INT;
    if (st.W.bits == 8) {
        if (iz) launch_qd<8, true, R, KW, U, XM, MODE>(st, s);
        else launch_qd<8, false, R, KW, U, XM, MODE>(st, s);
    } else {
        if (iz) launch_qd<4, true, R, KW, U, 1, MODE>(st, s);
        else launch_qd<4, false, R, KW, U, 1, MODE>(st, s);
    }
}

} // namespace

int main(int argc, char **argv) {
    const Method methods[] = {{"libgemv dense fp16 on the codes' bytes", libgemv_dense, false},
                              {"libgemv quantized dispatch", libgemv_quantized, true},
                              {"qdense R1 KW4 U4 x32", qdense<1, 4, 4, 1>, true},
                              {"qdense R2 KW4 U2 x32", qdense<2, 4, 2, 1>, true},
                              {"qdense R2 KW4 U4 x32", qdense<2, 4, 4, 1>, true},
                              {"qdense R4 KW4 U1 x32", qdense<4, 4, 1, 1>, true},
                              {"qdense R4 KW4 U2 x32", qdense<4, 4, 2, 1>, true},
                              {"qdense R2 KW8 U2 x32", qdense<2, 8, 2, 1>, true},
                              {"qdense R4 KW2 U2 x32", qdense<4, 2, 2, 1>, true},
                              {"qdense R8 KW4 U1 x32", qdense<8, 4, 1, 1>, true},
                              {"qdense R1 KW4 U4 x16", qdense<1, 4, 4, 0>, true},
                              {"qdense R2 KW4 U2 x16", qdense<2, 4, 2, 0>, true},
                              {"qdense R4 KW4 U2 x16", qdense<4, 4, 2, 0>, true},
                              {"qdense floor R2 KW4 U4", qdense<2, 4, 4, 1, FLOOR>, false},
                              {"qdense floor R4 KW4 U2", qdense<4, 4, 2, 1, FLOOR>, false},
                              {"qdense floor R1 KW4 U4", qdense<1, 4, 4, 1, FLOOR>, false}};
    const Format formats[] = {{8, 0, GEMV_QZERO_SYMMETRIC, "int8 per channel sym"},
                              {4, 128, GEMV_QZERO_INT, "int4 g128 int"},
                              {8, 0, GEMV_QZERO_INT, "int8 per channel int"}};
    return run_harness(argc, argv, methods, sizeof(methods) / sizeof(methods[0]), formats, 3, 1, 32);
}
