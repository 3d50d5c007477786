// Experiment (issue 15, s30): int4 on tensor cores with the codes and x brought in by TMA bulk
// copies from a producer warp, the MMA warps reading them from shared memory.
//
// Why: NOTES 42 found the in-place MMA kernel (qdmma.cu) at its loads-only floor only when its
// arithmetic was gone; with it, each warp's stream of ~130 instructions a step, half its
// cycles waiting on L1TEX (codes and x from global), set the time at 8192^2 (16.5-17 us
// against a floor of 13.4-14). Every form that kept the loads in the MMA warps (L1 prefetch,
// all loads of a round first, a per-warp cp.async ring, consecutive steps) left that wait in
// place. Here the MMA warps issue no global load but the scales' and zeros' (fetched a stage
// ahead into registers): one warp a block copies each stage (C columns of the tile's 16 rows,
// 16 bulk copies of a row's run, and the same C columns of x) into a ring of S stages that an
// mbarrier pair guards (full: the copy's bytes landed; empty: its MMA warp has read it), and
// the KW MMA warps take the stages in turn (warp w: stages w, w + KW, ...), q_mma's step
// arithmetic on codes and x read from shared memory. Rows are padded so that lanes g and g + 1
// fall on other banks.
// Prediction: the loads-only form (MODE 1) within 5% of the dense kernel on the codes' bytes,
// and the full kernel within 10% of it at 8192^2 (about 14 us against the dispatch's 17).
// Outcome: NOTES 44.
//
// int4 groups of 128, fp16, integer or symmetric zeros (QSK_FORMATS 0, 1); M a multiple of 16,
// K of 256 (a row's scales 4-byte aligned for their cp.async).
//   OUT=dir PROG=qtma [QTMA_ONLY=i,j,...] [QSK_FORMATS=0] bash benchmarks/experiments/qskeleton.sh [MxK ...]
#include "qdevice.cuh"
#include "qharness.cuh"

namespace {

__device__ __forceinline__ uint32_t smem_u32(const void *p) { return (uint32_t)__cvta_generic_to_shared(p); }
__device__ __forceinline__ void mbar_init(uint64_t *b, uint32_t count) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(smem_u32(b)), "r"(count));
}
__device__ __forceinline__ void mbar_expect_tx(uint64_t *b, uint32_t bytes) {
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(smem_u32(b)), "r"(bytes) : "memory");
}
__device__ __forceinline__ void mbar_arrive(uint64_t *b) {
    asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" ::"r"(smem_u32(b)) : "memory");
}
__device__ __forceinline__ void mbar_wait(uint64_t *b, uint32_t parity) {
    asm volatile("{\n\t.reg .pred p;\n\t"
                 "WAIT:\n\t"
                 "mbarrier.try_wait.parity.shared::cta.b64 p, [%0], %1;\n\t"
                 "@!p bra WAIT;\n\t}" ::"r"(smem_u32(b)),
                 "r"(parity)
                 : "memory");
}
// bytes (a multiple of 16, both addresses 16-byte aligned) from global into shared memory,
// counted against bar's transaction count.
__device__ __forceinline__ void bulk_copy(void *dst, const void *src, uint32_t bytes, uint64_t *bar) {
    asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];" ::"r"(
                     smem_u32(dst)),
                 "l"(src), "r"(bytes), "r"(smem_u32(bar))
                 : "memory");
}

// 4 bytes (src_bytes of them read, the rest zero) by cp.async, and an arrive on bar once this
// thread's cp.asyncs so far have landed (noinc: counted in bar's expected arrivals).
__device__ __forceinline__ void cp_async4(uint32_t dst, const void *src, uint32_t src_bytes) {
    asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;" ::"r"(dst), "l"(src), "r"(src_bytes) : "memory");
}
__device__ __forceinline__ void cp_async_arrive(uint64_t *bar) {
    asm volatile("cp.async.mbarrier.arrive.noinc.shared::cta.b64 [%0];" ::"r"(smem_u32(bar)) : "memory");
}
__device__ __forceinline__ uint32_t lds_u16(uint32_t addr) {
    unsigned short v;
    asm volatile("ld.shared.u16 %0, [%1];" : "=h"(v) : "r"(addr));
    return v;
}

// A 16-byte shared-memory read that stays where it is written among the asm volatile pair
// arithmetic and MMAs (a plain load is hoisted: every step's x and codes at once, 86-148
// registers).
__device__ __forceinline__ uint4 lds16(uint32_t addr) {
    uint4 v;
    asm volatile("ld.shared.v4.u32 {%0,%1,%2,%3}, [%4];" : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "r"(addr));
    return v;
}

// A stage: C columns of the tile's 16 rows (a row's run padded by 64 bytes: rows g and g + 1
// on other banks for the 16-byte reads of lanes (g, t)), the same C columns of x, then the 16
// rows' scales and zeros of its C / 128 steps.
template <int C> struct StageShape {
    static constexpr int STEPS = C / 128, ROW = C / 2 + 64, X = 16 * ROW, SC = X + 2 * C, ZZ = SC + 32 * STEPS,
                         BYTES = ZZ + 32 * STEPS;
};

enum { FULL = 0, LOADS = 1 };

template <bool IZ, int KW, int C, int S, int MODE, int MINB>
__global__ void __launch_bounds__(32 * (KW + 1), MINB) qtma_kernel(const Args a) {
    using St = StageShape<C>;
    extern __shared__ __align__(128) uint8_t smem[];
    uint64_t *full = reinterpret_cast<uint64_t *>(smem + S * St::BYTES), *empty = full + S;
    __shared__ float sums[KW][16];
    const int lane = threadIdx.x & 31, wi = threadIdx.x >> 5;
    const int64_t row0 = (int64_t)blockIdx.x * 16, steps = a.k >> 7, stages = (a.k + C - 1) / C;
    if (threadIdx.x == 0) {
        for (int i = 0; i < S; ++i) mbar_init(&full[i], 33), mbar_init(&empty[i], 1); // full: lane 0's expect_tx, 32 cp.async arrives
        asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
    }
    __syncthreads();
    if (wi == KW) { // the producer: stage i into slot i % S once its last reader let it go
        for (int64_t i = 0; i < stages; ++i) {
            const int slot = (int)(i % S);
            if (i >= S) mbar_wait(&empty[slot], (uint32_t)((i / S - 1) & 1));
            const int64_t c0 = i * C;
            const uint32_t cols = (uint32_t)(a.k - c0 < C ? a.k - c0 : C);
            uint8_t *st = smem + slot * St::BYTES;
            if (lane == 0) mbar_expect_tx(&full[slot], 16 * (cols / 2) + 2 * cols);
            __syncwarp();
            if (lane < 16) bulk_copy(st + lane * St::ROW, a.q + (row0 + lane) * a.ldq + c0 / 2, cols / 2, &full[slot]);
            else if (lane == 16) bulk_copy(st + St::X, a.x + c0, 2 * cols, &full[slot]);
            // Lanes r and 16 + r: row r's scales and zeros of the stage's steps, 2 a copy.
            const int r = lane & 15;
            const int64_t s0 = i * St::STEPS, n = (cols + 127) / 128;
            if (lane < 16 || IZ) {
                const __half *src = (lane < 16 ? a.scales + (row0 + r) * a.lds : a.zeros + (row0 + r) * a.ldz) + s0;
                const uint32_t dst = smem_u32(st + (lane < 16 ? St::SC : St::ZZ) + 2 * St::STEPS * r);
#pragma unroll
                for (int p = 0; p < St::STEPS / 2; ++p)
                    if (2 * p < n) cp_async4(dst + 4 * p, src + 2 * p, 2 * p + 1 < n ? 4 : 2);
            }
            cp_async_arrive(&full[slot]);
        }
        asm volatile("cp.async.wait_all;" ::: "memory");
        return;
    }
    const int g = lane >> 2, t = lane & 3;
    float acc0 = 0.f, acc1 = 0.f;
#pragma unroll 1
    for (int64_t i = wi; i < stages; i += KW) {
        const int slot = (int)(i % S);
        mbar_wait(&full[slot], (uint32_t)((i / S) & 1));
        const uint32_t st = smem_u32(smem + slot * St::BYTES);
        if (MODE == FULL) { // a step's codes read one step ahead
            const uint32_t qa = st + g * St::ROW + 16 * t, qb = qa + 8 * St::ROW, xs = st + St::X + 64 * t;
            const uint32_t sa = st + St::SC + 2 * St::STEPS * g, za = st + St::ZZ + 2 * St::STEPS * g;
            uint4 na = lds16(qa), nb = lds16(qb);
#pragma unroll
            for (int j = 0; j < St::STEPS; ++j) {
                if (i * St::STEPS + j >= steps) break;
                const uint4 ca = na, cb = nb;
                if (j + 1 < St::STEPS) na = lds16(qa + 64 * (j + 1)), nb = lds16(qb + 64 * (j + 1));
                const float fa = IZ ? h2f(lds_u16(za + 2 * j)) : 8.f, fb = IZ ? h2f(lds_u16(za + 16 * St::STEPS + 2 * j)) : 8.f;
                float c[2][4] = {};
                step_mmas(ca, cb, fa, fb, [&](int w) { return lds16(xs + 256 * j + 16 * w); }, c); // every lane reads x (a broadcast): D's other columns are never used
                const float sca = h2f(lds_u16(sa + 2 * j)), scb = h2f(lds_u16(sa + 16 * St::STEPS + 2 * j));
                acc0 = fmaf(sca, c[0][0] + c[1][0], acc0); // lanes t != 0: other columns, never stored
                acc1 = fmaf(scb, c[0][2] + c[1][2], acc1);
            }
        }
        __syncwarp();
        if (lane == 0) mbar_arrive(&empty[slot]);
    }
    if (t == 0) sums[wi][g] = acc0, sums[wi][g + 8] = acc1;
    asm volatile("bar.sync 1, %0;" ::"n"(32 * KW) : "memory"); // the MMA warps only
    if (wi == 0 && lane < 16) {
        float v = 0.f;
#pragma unroll
        for (int w = 0; w < KW; ++w) v += sums[w][lane];
        a.y[row0 + lane] = __float2half_rn(v);
    }
}

template <int KW, int C, int S, int MODE = FULL, int MINB = 1> void qtma(const Set &st, cudaStream_t s) {
    const gemv_qmatrix_t &W = st.W;
    const size_t smem = (size_t)S * StageShape<C>::BYTES + 16 * S;
    static bool sized = false;
    if (!sized) {
        CK(cudaFuncSetAttribute(qtma_kernel<true, KW, C, S, MODE, MINB>, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem));
        CK(cudaFuncSetAttribute(qtma_kernel<false, KW, C, S, MODE, MINB>, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem));
        sized = true;
    }
    const Args a = args_of(st);
    const dim3 grid((unsigned)(W.m / 16)), block(32 * (KW + 1));
    if (W.zero_mode == GEMV_QZERO_INT) qtma_kernel<true, KW, C, S, MODE, MINB><<<grid, block, smem, s>>>(a);
    else qtma_kernel<false, KW, C, S, MODE, MINB><<<grid, block, smem, s>>>(a);
    CK(cudaGetLastError());
}

} // namespace

int main(int argc, char **argv) {
    const Method methods[] = {
        {"libgemv dense fp16 on the codes' bytes", libgemv_dense, false}, // 0
        {"libgemv quantized dispatch", libgemv_quantized, true},
        {"tma KW4 C512 S8", qtma<4, 512, 8>, true}, // 2
        {"tma KW4 C512 S4", qtma<4, 512, 4>, true},
        {"tma KW8 C512 S8", qtma<8, 512, 8>, true},
        {"tma KW2 C1024 S4", qtma<2, 1024, 4>, true},
        {"tma KW4 C1024 S4", qtma<4, 1024, 4>, true},
        {"tma KW8 C256 S16", qtma<8, 256, 16>, true},
        {"tma KW4 C256 S8", qtma<4, 256, 8>, true},
        {"tma KW2 C512 S4", qtma<2, 512, 4>, true},
        {"tma loads KW4 C512 S8", qtma<4, 512, 8, LOADS>, false}, // 10: the floors
        {"tma loads KW4 C1024 S4", qtma<4, 1024, 4, LOADS>, false},
        {"tma loads KW8 C256 S16", qtma<8, 256, 16, LOADS>, false}};
    const Format formats[] = {{4, 128, GEMV_QZERO_INT, "int4 g128 int"}, {4, 128, GEMV_QZERO_SYMMETRIC, "int4 g128 sym"}};
    const std::vector<Method> picked = pick_methods(methods, sizeof(methods) / sizeof(methods[0]), getenv("QTMA_ONLY"));
    return run_harness(argc, argv, picked.data(), (int)picked.size(), formats, 2, 16, 256);
}
