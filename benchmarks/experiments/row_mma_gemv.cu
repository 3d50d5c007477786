// Experiment: op N GEMV of short 16-bit rows on the tensor cores (mma.sync m16n8k16, fp32
// accumulation), against libgemv's dispatch and cuBLAS's strided-batched GEMV, in one process.
// Why: the row-group kernels on fp16 296 x 112 x 4096 issue ~370 instructions a warp for 8 rows
// (issue slots 75% busy, ncu, batched_short_rows_ncu.sh): a row's own index math, conversions
// of A and x, shuffles and its store cost more than its 14 loads. An MMA takes 16 rows x 16
// columns in one instruction, with x the B operand in every column, so a warp sums a tile of
// 16 rows with 2 loads and 2 MMAs a thread per 32 columns.
// Layout: thread (g = lane / 4, c = lane % 4) loads the 16-byte packs of rows g and g + 8 at
// columns 32j + 8c; the pack's words 0,1 and 2,3 feed two MMAs (slots 2c, 2c+1 <- columns 8c,
// 8c+1; slots 2c+8, 2c+9 <- 8c+2, 8c+3; then 8c+4.. for the second), x alike: a permutation of
// the columns the A and B fragments share, so the sum is the row's dot product. Every column
// of D holds it; thread c = 0 stores row g, c = 1 row g + 8.
// Method (graph_timing.cuh): CUDA-graph replay over rotating input sets (>= 4x L2), CUDA
// events, median of 15; random data; y poisoned (NaN) and checked against a float64 host
// reference on sampled rows.
//   nvcc -O3 -std=c++17 -arch=sm_90 benchmarks/experiments/row_mma_gemv.cu -Ilibgemv/include \
//        -L<libdir> -lgemv -lcublas -Xlinker -rpath=<libdir> -o /tmp/rowmma && /tmp/rowmma
#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

#include "gemv.h"
#include "graph_timing.cuh"

struct Args {
    const void *A, *x;
    void *y;
    int64_t m, k, lda, stride_a, stride_x, stride_y, batch, tiles_per_product, tiles;
    float alpha, beta;
};

template <typename T> __device__ __forceinline__ void mma16816(float (&d)[4], uint32_t a0, uint32_t a1, uint32_t a2,
                                                               uint32_t a3, uint32_t b0, uint32_t b1) {
    if constexpr (std::is_same_v<T, __half>)
        asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
                     : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                     : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
    else
        asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
                     : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                     : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
}

template <typename T> __device__ __forceinline__ float tof(T v) {
    if constexpr (std::is_same_v<T, __half>) return __half2float(v);
    else return __bfloat162float(v);
}
template <typename T> __device__ __forceinline__ T fromf(float v) {
    if constexpr (std::is_same_v<T, __half>) return __float2half_rn(v);
    else return __float2bfloat16_rn(v);
}

// CH chunks of 32 columns in flight a thread (2 A packs and 1 x pack each). K % 8 == 0, A, x
// 16-byte aligned, lda and the strides multiples of 8.
template <typename T, int CH> __global__ void __launch_bounds__(256) row_mma(const Args a) {
    const int lane = threadIdx.x & 31, g = lane >> 2, c = lane & 3;
    const int64_t warps = (int64_t)gridDim.x * (blockDim.x >> 5);
    const T *A = static_cast<const T *>(a.A), *X = static_cast<const T *>(a.x);
    for (int64_t tile = (int64_t)blockIdx.x * (blockDim.x >> 5) + (threadIdx.x >> 5); tile < a.tiles; tile += warps) {
        const int64_t b = tile / a.tiles_per_product, r0 = (tile - b * a.tiles_per_product) * 16 + g, r1 = r0 + 8;
        // Rows past M read row M - 1 again (cached), and are not stored: no predicate on a load.
        const uint4 *p0 = reinterpret_cast<const uint4 *>(A + b * a.stride_a + min(r0, a.m - 1) * a.lda) + c;
        const uint4 *p1 = reinterpret_cast<const uint4 *>(A + b * a.stride_a + min(r1, a.m - 1) * a.lda) + c;
        const uint4 *px = reinterpret_cast<const uint4 *>(X + b * a.stride_x) + c;
        const int64_t packs = a.k / 8;
        float d[4] = {0.f, 0.f, 0.f, 0.f};
        int64_t q = 0; // the chunk's first pack
        for (; q + 4 * CH <= packs; q += 4 * CH) {
            uint4 ra[CH], rb[CH], rx[CH];
#pragma unroll
            for (int j = 0; j < CH; ++j) {
                ra[j] = __ldcs(p0 + q + 4 * j);
                rb[j] = __ldcs(p1 + q + 4 * j);
                rx[j] = __ldg(px + q + 4 * j);
            }
#pragma unroll
            for (int j = 0; j < CH; ++j) {
                mma16816<T>(d, ra[j].x, rb[j].x, ra[j].y, rb[j].y, rx[j].x, rx[j].y);
                mma16816<T>(d, ra[j].z, rb[j].z, ra[j].w, rb[j].w, rx[j].z, rx[j].w);
            }
        }
        if (q < packs) { // the last chunks, packs past K zero
            uint4 ra[CH], rb[CH], rx[CH];
#pragma unroll
            for (int j = 0; j < CH; ++j) {
                ra[j] = rb[j] = rx[j] = make_uint4(0, 0, 0, 0);
                if (q + 4 * j + c < packs) {
                    ra[j] = __ldcs(p0 + q + 4 * j);
                    rb[j] = __ldcs(p1 + q + 4 * j);
                    rx[j] = __ldg(px + q + 4 * j);
                }
            }
#pragma unroll
            for (int j = 0; j < CH; ++j) {
                if (q + 4 * j >= packs) break; // warp-uniform
                mma16816<T>(d, ra[j].x, rb[j].x, ra[j].y, rb[j].y, rx[j].x, rx[j].y);
                mma16816<T>(d, ra[j].z, rb[j].z, ra[j].w, rb[j].w, rx[j].z, rx[j].w);
            }
        }
        const int64_t r = c == 0 ? r0 : r1;
        if (c < 2 && r < a.m) {
            T *yp = static_cast<T *>(a.y) + b * a.stride_y + r;
            float v = a.alpha * (c == 0 ? d[0] : d[2]);
            if (a.beta != 0.f) v = fmaf(a.beta, tof(*yp), v);
            *yp = fromf<T>(v);
        }
    }
}

struct Set {
    void *A, *x, *y;
};
struct Shape {
    int64_t m, k, batch;
};

static cublasHandle_t g_cublas;

template <typename T> static float host_f(T v) {
    if constexpr (std::is_same_v<T, __half>) return __half2float(v);
    else return __bfloat162float(v);
}

template <typename T> static void run_shape(const Shape &sh, cudaStream_t s, int sms) {
    const int64_t m = sh.m, k = sh.k, B = sh.batch;
    const bool f16 = std::is_same_v<T, __half>;
    const size_t abytes = (size_t)m * k * B * 2;
    const int sets = (int)std::max<size_t>(2, (4 * 60ull * 1024 * 1024 + abytes - 1) / abytes + 1);
    std::vector<Set> st(sets);
    std::mt19937 rng(1234);
    std::uniform_real_distribution<float> U(-1.f, 1.f);
    std::vector<T> hA((size_t)m * k * B), hx((size_t)k * B);
    for (auto &v : hA) v = (T)U(rng);
    for (auto &v : hx) v = (T)U(rng);
    for (auto &e : st) {
        CK(cudaMalloc(&e.A, abytes));
        CK(cudaMalloc(&e.x, k * B * 2));
        CK(cudaMalloc(&e.y, m * B * 2));
        CK(cudaMemcpy(e.A, hA.data(), abytes, cudaMemcpyHostToDevice));
        CK(cudaMemcpy(e.x, hx.data(), k * B * 2, cudaMemcpyHostToDevice));
    }
    const gemv_dtype_t dt = f16 ? GEMV_DTYPE_F16 : GEMV_DTYPE_BF16;
    const int64_t tpp = (m + 15) / 16;
    auto proto = [&](int ch, int warps, int cap) {
        return [=](const Set &e, cudaStream_t str) {
            Args a{e.A, e.x, e.y, m, k, k, m * k, k, m, B, tpp, tpp * B, 1.f, 0.f};
            int64_t blocks = (a.tiles + warps - 1) / warps;
            if (cap) blocks = std::min<int64_t>(blocks, (int64_t)sms * cap);
            auto kern = ch == 1 ? row_mma<T, 1> : ch == 2 ? row_mma<T, 2> : row_mma<T, 4>;
            kern<<<(unsigned)blocks, warps * 32, 0, str>>>(a);
        };
    };
    struct M {
        std::string name;
        std::function<void(const Set &, cudaStream_t)> fn;
    };
    std::vector<M> ms;
    ms.push_back({"libgemv", [=](const Set &e, cudaStream_t str) {
                      gemv_status_t r = gemv_strided_batched(GEMV_OP_N, dt, m, k, 1.f, e.A, k, m * k, e.x, 1, k, 0.f,
                                                             e.y, 1, m, B, nullptr, 0, str);
                      if (r != GEMV_STATUS_SUCCESS) {
                          fprintf(stderr, "gemv: %s\n", gemv_status_string(r));
                          exit(1);
                      }
                  }});
    ms.push_back({"cublas", [=](const Set &e, cudaStream_t str) {
                      const float al = 1.f, be = 0.f;
                      CK((cudaError_t)0);
                      cublasSetStream(g_cublas, str);
                      cublasStatus_t r =
                          f16 ? cublasHSHgemvStridedBatched(g_cublas, CUBLAS_OP_T, k, m, &al, (const __half *)e.A, k,
                                                            m * k, (const __half *)e.x, 1, k, &be, (__half *)e.y, 1,
                                                            m, B)
                              : cublasTSTgemvStridedBatched(g_cublas, CUBLAS_OP_T, k, m, &al,
                                                            (const __nv_bfloat16 *)e.A, k, m * k,
                                                            (const __nv_bfloat16 *)e.x, 1, k, &be,
                                                            (__nv_bfloat16 *)e.y, 1, m, B);
                      if (r != CUBLAS_STATUS_SUCCESS) {
                          fprintf(stderr, "cublas %d\n", (int)r);
                          exit(1);
                      }
                  }});
    for (int ch : {1, 2, 4})
        for (int w : {4, 8})
            for (int cap : {0, 8})
                ms.push_back({"mma c" + std::to_string(ch) + " w" + std::to_string(w) + (cap ? " cap" + std::to_string(cap) : ""),
                              proto(ch, w, cap)});
    const int nm = (int)ms.size();
    // Correctness on sampled rows of sampled products.
    std::vector<T> hy((size_t)m * B);
    bool ok = true;
    for (int mi = 0; mi < nm; ++mi) {
        CK(cudaMemset(st[0].y, 0xff, m * B * 2));
        ms[mi].fn(st[0], s);
        CK(cudaStreamSynchronize(s));
        CK(cudaGetLastError());
        CK(cudaMemcpy(hy.data(), st[0].y, m * B * 2, cudaMemcpyDeviceToHost));
        double worst = 0;
        for (size_t i = 0; i < hy.size(); ++i)
            if (!std::isfinite(host_f(hy[i]))) worst = INFINITY;
        for (int t = 0; t < 256 && std::isfinite(worst); ++t) {
            const int64_t gi = (int64_t)t * (m * B - 1) / 255, b = gi / m, i = gi % m;
            double ref = 0, mag = 0;
            for (int64_t j = 0; j < k; ++j) {
                const double p = (double)host_f(hA[(b * m + i) * k + j]) * host_f(hx[b * k + j]);
                ref += p;
                mag += std::fabs(p);
            }
            worst = std::max(worst, std::fabs(host_f(hy[gi]) - ref) / (mag + 1e-30));
        }
        if (!(worst < 1e-2)) {
            printf("WRONG %s: worst scaled error %g\n", ms[mi].name.c_str(), worst);
            ok = false;
        }
    }
    const std::vector<float> meds =
        graph_medians_us(nm, sets, s, [&](int mi, int e, cudaStream_t str) { ms[mi].fn(st[e], str); });
    printf("%s %ldx%ldx%ld %.1f MB%s\n", f16 ? "fp16" : "bf16", (long)m, (long)k, (long)B, abytes / 1e6,
           ok ? "" : " (WRONG)");
    for (int mi = 0; mi < nm; ++mi)
        printf("  %-18s %8.2f us %6.0f GB/s  vs libgemv %.3fx  vs cublas %.3fx\n", ms[mi].name.c_str(), meds[mi],
               (abytes + (k + m) * B * 2) / (meds[mi] * 1e3), meds[0] / meds[mi], meds[1] / meds[mi]);
    for (auto &e : st) {
        CK(cudaFree(e.A));
        CK(cudaFree(e.x));
        CK(cudaFree(e.y));
    }
}

int main(int argc, char **argv) {
    std::vector<Shape> shapes = {{296, 112, 4096}, {1212416, 112, 1}, {540, 112, 4096}, {2029, 104, 512},
                                 {64, 64, 4096},   {296, 256, 4096},  {4096, 512, 64},  {16384, 1024, 1},
                                 {8192, 8192, 1},  {40, 360, 4096},   {131072, 128, 1}, {1048576, 32, 1}};
    cudaStream_t s;
    CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    cublasCreate(&g_cublas);
    int sms;
    CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
    for (const Shape &sh : shapes) run_shape<__half>(sh, s, sms);
    run_shape<__nv_bfloat16>({296, 112, 4096}, s, sms);
    return 0;
}
