// Experiment: a GEMV whose rows of A reach shared memory through TMA bulk copies
// (cp.async.bulk, sm_90), against libgemv's automatic dispatch, in one process.
// Why: the 16-byte-load kernels hold their in-flight bytes in registers, and one more
// register a thread costs occupancy (NOTES section 12). A bulk copy keeps up to
// STAGES x 8 KiB a block in flight with no register cost.
// Method (graph_timing.cuh) as pygemv.timing: CUDA-graph replay of one call per rotating
// input set (>= 4x L2), PDL launches, CUDA events, median of 15; random fp16 data; y poisoned
// (NaN) and the two results compared against a float64 host reference on a sample of rows.
//   nvcc -O3 -std=c++17 -arch=sm_90 benchmarks/experiments/bulk_copy_gemv.cu -Ilibgemv/include \
//        -L<libdir> -lgemv -Xlinker -rpath=<libdir> -o /tmp/bulk && /tmp/bulk
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

#include "gemv.h"
#include "graph_timing.cuh"


__device__ __forceinline__ int64_t lmin(int64_t a, int64_t b) { return a < b ? a : b; }
__device__ __forceinline__ uint32_t saddr(const void *p) { return (uint32_t)__cvta_generic_to_shared(p); }
__device__ __forceinline__ void mbar_init(uint64_t *b, int n) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(saddr(b)), "r"(n));
}
__device__ __forceinline__ void mbar_expect_tx(uint64_t *b, uint32_t bytes) {
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(saddr(b)), "r"(bytes) : "memory");
}
__device__ __forceinline__ void bulk_copy(void *dst, const void *src, uint32_t bytes, uint64_t *b, uint64_t policy) {
    asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes.L2::cache_hint [%0], [%1], %2, [%3], %4;"
                 ::"r"(saddr(dst)), "l"(src), "r"(bytes), "r"(saddr(b)), "l"(policy) : "memory");
}
__device__ __forceinline__ void mbar_wait(uint64_t *b, uint32_t parity) {
    asm volatile("{\n\t.reg .pred p;\n"
                 "WAIT%=:\n\t"
                 "mbarrier.try_wait.parity.shared::cta.b64 p, [%0], %1;\n\t"
                 "@!p bra WAIT%=;\n}" ::"r"(saddr(b)), "r"(parity) : "memory");
}

__device__ __forceinline__ float dot8(uint4 a, uint4 x, float acc) {
    const __half2 *a2 = reinterpret_cast<const __half2 *>(&a), *x2 = reinterpret_cast<const __half2 *>(&x);
#pragma unroll
    for (int i = 0; i < 4; ++i) {
        float2 af = __half22float2(a2[i]), xf = __half22float2(x2[i]);
        acc = fmaf(af.x, xf.x, acc);
        acc = fmaf(af.y, xf.y, acc);
    }
    return acc;
}

constexpr int kThreads = 256, kWarps = kThreads / 32;

// Persistent grid: block b takes rows b, b + G, ...; each row arrives in chunks of at most
// CHUNK elements, one bulk copy a chunk, STAGES chunks in flight a block. K % 8 == 0,
// A rows 16-byte aligned (lda % 8 == 0). y = A x (alpha 1, beta 0).
template <int CHUNK, int STAGES>
__global__ void __launch_bounds__(kThreads) bulk_gemv(const __half *A, const __half *x, __half *y, int64_t m,
                                                      int64_t k, int64_t lda) {
    extern __shared__ __align__(128) unsigned char smem[];
    __half *buf = reinterpret_cast<__half *>(smem);
    uint64_t *full = reinterpret_cast<uint64_t *>(smem + (size_t)STAGES * CHUNK * sizeof(__half));
    __shared__ float red[kWarps];
    const int chunks = (int)((k + CHUNK - 1) / CHUNK);
    const int64_t my_rows = m > blockIdx.x ? (m - 1 - blockIdx.x) / gridDim.x + 1 : 0;
    const int64_t units = my_rows * chunks;
    if (threadIdx.x == 0) {
        for (int s = 0; s < STAGES; ++s) mbar_init(&full[s], 1);
        asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
    }
    __syncthreads();
    asm volatile("griddepcontrol.wait;" ::: "memory");
    asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
    uint64_t policy;
    asm volatile("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;" : "=l"(policy));
    auto issue = [&](int64_t u) {
        const int s = (int)(u % STAGES), c = (int)(u % chunks);
        const int64_t row = blockIdx.x + (u / chunks) * gridDim.x, col0 = (int64_t)c * CHUNK;
        const uint32_t bytes = (uint32_t)(lmin(CHUNK, k - col0) * sizeof(__half));
        mbar_expect_tx(&full[s], bytes);
        bulk_copy(buf + (size_t)s * CHUNK, A + row * lda + col0, bytes, &full[s], policy);
    };
    if (threadIdx.x == 0)
        for (int64_t u = 0; u < lmin(STAGES, units); ++u) issue(u);
    float acc = 0.f;
    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
    for (int64_t u = 0; u < units; ++u) {
        const int s = (int)(u % STAGES), c = (int)(u % chunks);
        const int64_t row = blockIdx.x + (u / chunks) * gridDim.x, col0 = (int64_t)c * CHUNK;
        const int packs = (int)(lmin(CHUNK, k - col0) / 8);
        mbar_wait(&full[s], (uint32_t)((u / STAGES) & 1));
        const uint4 *a = reinterpret_cast<const uint4 *>(buf + (size_t)s * CHUNK);
        const uint4 *xv = reinterpret_cast<const uint4 *>(x + col0);
        for (int p = threadIdx.x; p < packs; p += kThreads) acc = dot8(a[p], __ldg(xv + p), acc);
        const bool last = c == chunks - 1;
        if (last) {
            for (int o = 16; o > 0; o >>= 1) acc += __shfl_xor_sync(0xffffffffu, acc, o);
            if (lane == 0) red[warp] = acc;
            acc = 0.f;
        }
        __syncthreads(); // stage s consumed; red complete
        if (threadIdx.x == 0) {
            if (u + STAGES < units) {
                asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
                issue(u + STAGES);
            }
            if (last) {
                float v = 0.f;
                for (int w = 0; w < kWarps; ++w) v += red[w];
                y[row] = __float2half_rn(v);
            }
        }
    }
}

struct Set {
    __half *A, *x, *y;
};

template <int CHUNK, int STAGES> struct Bulk {
    static size_t smem() { return (size_t)STAGES * CHUNK * sizeof(__half) + STAGES * 8; }
    static void setup() {
        CK(cudaFuncSetAttribute(bulk_gemv<CHUNK, STAGES>, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem()));
    }
    static int grid(int64_t m) {
        int dev, sms, per_sm;
        CK(cudaGetDevice(&dev));
        CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
        CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, bulk_gemv<CHUNK, STAGES>, kThreads, smem()));
        return (int)std::min<int64_t>(m, (int64_t)sms * per_sm);
    }
    static void launch(const Set &st, int64_t m, int64_t k, cudaStream_t s) {
        cudaLaunchAttribute attr[1];
        attr[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
        attr[0].val.programmaticStreamSerializationAllowed = 1;
        cudaLaunchConfig_t cfg{};
        cfg.gridDim = dim3(grid(m));
        cfg.blockDim = dim3(kThreads);
        cfg.dynamicSmemBytes = smem();
        cfg.stream = s;
        cfg.attrs = attr;
        cfg.numAttrs = 1;
        CK(cudaLaunchKernelEx(&cfg, bulk_gemv<CHUNK, STAGES>, (const __half *)st.A, (const __half *)st.x, st.y, m, k, k));
    }
};

using Launch = void (*)(const Set &, int64_t, int64_t, cudaStream_t);

static void libgemv_launch(const Set &st, int64_t m, int64_t k, cudaStream_t s) {
    gemv_status_t r = gemv(GEMV_OP_N, GEMV_DTYPE_F16, m, k, 1.0, st.A, k, st.x, 1, 0.0, st.y, 1, nullptr, 0, s);
    if (r != GEMV_STATUS_SUCCESS) {
        fprintf(stderr, "gemv: %s\n", gemv_status_string(r));
        exit(1);
    }
}

static float half_to_float(__half h) { return __half2float(h); }

int main(int argc, char **argv) {
    const std::vector<std::pair<int64_t, int64_t>> shapes = {
        {1024, 1024}, {2048, 2048}, {4096, 4096}, {8192, 8192}, {14336, 4096}, {4096, 14336}, {256, 65536}, {28672, 8192}};
    cudaStream_t s;
    CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    Bulk<4096, 8>::setup();
    Bulk<2048, 8>::setup();
    Bulk<4096, 4>::setup();
    Bulk<8192, 4>::setup();
    struct Method {
        const char *name;
        Launch fn;
    } methods[] = {{"libgemv", libgemv_launch},
                   {"bulk c4096 s8", Bulk<4096, 8>::launch},
                   {"bulk c2048 s8", Bulk<2048, 8>::launch},
                   {"bulk c4096 s4", Bulk<4096, 4>::launch},
                   {"bulk c8192 s4", Bulk<8192, 4>::launch}};
    const int nm = sizeof(methods) / sizeof(methods[0]);
    printf("grid (blocks) for 4096 rows: c4096s8 %d, c2048s8 %d, c4096s4 %d, c8192s4 %d\n", Bulk<4096, 8>::grid(4096),
           Bulk<2048, 8>::grid(4096), Bulk<4096, 4>::grid(4096), Bulk<8192, 4>::grid(4096));
    std::mt19937 rng(1234);
    std::uniform_real_distribution<float> U(-1.f, 1.f);
    for (auto [m, k] : shapes) {
        const size_t abytes = (size_t)m * k * 2;
        const int sets = (int)std::max<size_t>(2, (4 * 50ull * 1024 * 1024 + abytes - 1) / abytes + 1);
        std::vector<Set> st(sets);
        std::vector<__half> hA((size_t)m * k), hx(k);
        for (auto &v : hA) v = __float2half(U(rng));
        for (auto &v : hx) v = __float2half(U(rng));
        for (auto &e : st) {
            CK(cudaMalloc(&e.A, abytes));
            CK(cudaMalloc(&e.x, k * 2));
            CK(cudaMalloc(&e.y, m * 2));
            CK(cudaMemcpy(e.A, hA.data(), abytes, cudaMemcpyHostToDevice));
            CK(cudaMemcpy(e.x, hx.data(), k * 2, cudaMemcpyHostToDevice));
        }
        // Correctness: every method against a float64 reference on 64 sampled rows (and all of y finite).
        std::vector<__half> hy(m);
        bool ok = true;
        for (int mi = 0; mi < nm; ++mi) {
            CK(cudaMemset(st[0].y, 0xff, m * 2)); // NaN
            methods[mi].fn(st[0], m, k, s);
            CK(cudaStreamSynchronize(s));
            CK(cudaMemcpy(hy.data(), st[0].y, m * 2, cudaMemcpyDeviceToHost));
            double worst = 0;
            for (int64_t i = 0; i < m; ++i)
                if (!std::isfinite(half_to_float(hy[i]))) worst = INFINITY;
            for (int t = 0; t < 64; ++t) {
                const int64_t i = (int64_t)t * (m - 1) / 63;
                double ref = 0, mag = 0;
                for (int64_t j = 0; j < k; ++j) {
                    const double p = (double)half_to_float(hA[i * k + j]) * half_to_float(hx[j]);
                    ref += p;
                    mag += std::fabs(p);
                }
                worst = std::max(worst, std::fabs(half_to_float(hy[i]) - ref) / (mag + 1e-30));
            }
            if (!(worst < 2e-3)) {
                printf("WRONG %s %ldx%ld: worst scaled error %g\n", methods[mi].name, (long)m, (long)k, worst);
                ok = false;
            }
        }
        const std::vector<float> meds =
            graph_medians_us(nm, sets, s, [&, m = m, k = k](int mi, int e, cudaStream_t str) {
                methods[mi].fn(st[e], m, k, str);
            });
        printf("fp16 %6ldx%-6ld %s", (long)m, (long)k, ok ? "" : "(WRONG) ");
        for (int mi = 0; mi < nm; ++mi) {
            printf(" | %s %7.2f us %5.0f GB/s", methods[mi].name, meds[mi],
                   (abytes + k * 2 + m * 2) / (meds[mi] * 1e3));
            if (mi) printf(" (%.3f)", meds[mi] / meds[0]);
        }
        printf("\n");
        for (auto &e : st) {
            CK(cudaFree(e.A));
            CK(cudaFree(e.x));
            CK(cudaFree(e.y));
        }
    }
    return 0;
}
