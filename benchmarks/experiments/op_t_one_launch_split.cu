// Experiment (NOTES 63): how much a split-M op T in one launch would gain over the two-pass
// split (partials, then a PDL-overlapped reduce kernel) on small and medium matrices.
// op_t_read_pattern.cu showed the split's order of reads alone at op N's speed (fp32 512^2
// 1.74 us against op N's order 1.69; fp16 1024^2 2.14 against 2.08), while the library's
// split and one-pass kernels take 3.0-3.6 us there: the cost is around the reads.
// Three forms of the same split (a block: c 16-byte packs x `lanes` lanes over a slice of
// lanes x R rows, every row of the slice in flight, x[row] broadcast, lane sums in shared
// memory added in lane order), each launched with PDL as libgemv launches its kernels:
//   partials: the split kernel alone, writing its partials (no y: the floor of both forms);
//   two:      then a reduce kernel, a thread per column adding the slices in order (libgemv's
//             second pass, in short);
//   one:      the block that finishes a tile last (a counter a tile: fence, atomicAdd) adds
//             the tile's partials in slice order and writes y, then sets the counter back to
//             zero (the counters start at zero: cudaMemset once here).
// y is checked against a float64 reference (poisoned with NaN first) for every config of the
// two forms that write it. Timing as pygemv.timing (graph_timing.cuh: rotating copies of A,
// 4x L2 or more, graph replay, medians). Build and run (no libgemv):
//   nvcc -O3 -std=c++17 -arch=sm_90 benchmarks/experiments/op_t_one_launch_split.cu -o /tmp/ols && /tmp/ols
// `/tmp/ols feat` adds libgemv's column-kernel extras to the two-pass form one at a time (see
// kPrefetch ...) on six shapes; `/tmp/ols fp32|fp16 M K c lanes rows form` runs one config
// three times, untimed, for ncu. Results: NOTES 63.
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>
#include <vector>

#include "graph_timing.cuh"

__device__ __forceinline__ void pdl_start() {
    asm volatile("griddepcontrol.wait;" ::: "memory");
    asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
}

template <typename T> constexpr int kV = 16 / sizeof(T);

template <typename T> __device__ __forceinline__ void fma_pack(const uint4 &a, float xv, float *acc) {
    if constexpr (sizeof(T) == 4) {
        acc[0] = fmaf(__uint_as_float(a.x), xv, acc[0]);
        acc[1] = fmaf(__uint_as_float(a.y), xv, acc[1]);
        acc[2] = fmaf(__uint_as_float(a.z), xv, acc[2]);
        acc[3] = fmaf(__uint_as_float(a.w), xv, acc[3]);
    } else {
        const __half2 *h = reinterpret_cast<const __half2 *>(&a);
#pragma unroll
        for (int i = 0; i < 4; ++i) {
            const float2 f = __half22float2(h[i]);
            acc[2 * i] = fmaf(f.x, xv, acc[2 * i]);
            acc[2 * i + 1] = fmaf(f.y, xv, acc[2 * i + 1]);
        }
    }
}

template <typename T> __device__ __forceinline__ float to_f(T v) {
    if constexpr (sizeof(T) == 4) return v;
    else return __half2float(v);
}
template <typename T> __device__ __forceinline__ T from_f(float v) {
    if constexpr (sizeof(T) == 4) return v;
    else return __float2half_rn(v);
}

// libgemv's column kernel's extras, to add to the two-pass form one at a time (FEAT bits):
// its out-of-line L2 prefetch of the first rows before the PDL wait, its streaming loads of A
// (ld.global.cs, x by ld.global.nc), its final sums' runtime division, its grid-stride loops
// over products and tiles.
constexpr int kPrefetch = 1, kStreaming = 2, kDivision = 4, kLoops = 8;

template <typename T>
__device__ __noinline__ void prefetch_rows(const T *A, int64_t m, int64_t lda, int64_t row0, int rows, int64_t row_bytes,
                                          int lines) {
    for (int i = threadIdx.x; i < lines; i += blockDim.x) {
        const int64_t row = row0 + (int64_t)(i % rows);
        const int line = i / rows;
        if (row < m && (int64_t)line * 128 < row_bytes)
            asm volatile("prefetch.global.L2 [%0];" ::"l"(reinterpret_cast<const char *>(A + row * lda) + line * 128));
    }
}

// FORM 0: partials only; 1: partials (a reduce kernel follows); 2: one launch.
template <typename T, int R, int FORM, int FEAT = 0>
__global__ void split_kernel(const T *A, const T *x, int64_t m, int64_t k, int c, int lanes, float *acc,
                             unsigned *counters, T *y) {
    constexpr int V = kV<T>;
    extern __shared__ float sums[]; // [lanes][c * V]
    __shared__ bool last;
    if constexpr ((FEAT & kPrefetch) != 0) {
        const int64_t j0 = (int64_t)blockIdx.x * c * V;
        prefetch_rows<T>(A + j0, m, k, (int64_t)blockIdx.y * lanes * R, lanes * R, (int64_t)c * V * sizeof(T),
                         (int)min((int64_t)lanes * R / 2 * ((c * V * (int)sizeof(T) + 127) / 128), (int64_t)64));
    }
    pdl_start();
    if constexpr ((FEAT & kLoops) != 0) {
        for (int64_t b = blockIdx.z; b < 1; b += gridDim.z)
            for (int64_t tile = blockIdx.x; tile < (int64_t)gridDim.x; tile += gridDim.x) {
                const int pack = threadIdx.x % c, lane = threadIdx.x / c, cols = c * V;
                const int64_t row0 = (int64_t)blockIdx.y * lanes * R + lane;
                const int64_t j = (tile * c + pack) * V;
                float s[V] = {};
                int64_t r = row0;
                const int64_t r_end = min(m, (int64_t)(blockIdx.y + 1) * lanes * R);
                for (; r + (int64_t)(R - 1) * lanes < r_end; r += (int64_t)R * lanes) {
                    float xv[R];
                    uint4 a[R];
#pragma unroll
                    for (int u = 0; u < R; ++u) xv[u] = to_f(x[(r + u * lanes) * 1]);
#pragma unroll
                    for (int u = 0; u < R; ++u) a[u] = __ldg(reinterpret_cast<const uint4 *>(A + (r + u * lanes) * k + j));
#pragma unroll
                    for (int u = 0; u < R; ++u) fma_pack<T>(a[u], xv[u], s);
                }
                for (; r < r_end; r += lanes) fma_pack<T>(__ldg(reinterpret_cast<const uint4 *>(A + r * k + j)), to_f(x[r]), s);
#pragma unroll
                for (int v = 0; v < V; ++v) sums[lane * cols + pack * V + v] = s[v];
                __syncthreads();
                for (int t = threadIdx.x; t < cols; t += blockDim.x) {
                    float p = 0.f;
                    for (int l = 0; l < lanes; ++l) p += sums[l * cols + t];
                    acc[(int64_t)blockIdx.y * k + tile * cols + t] = p;
                }
                __syncthreads();
            }
        return;
    }
    const int pack = threadIdx.x % c, lane = threadIdx.x / c, cols = c * V;
    const int64_t row0 = (int64_t)blockIdx.y * lanes * R + lane;
    const int64_t j = ((int64_t)blockIdx.x * c + pack) * V;
    uint4 a[R];
    float xv[R];
#pragma unroll
    for (int r = 0; r < R; ++r) {
        if constexpr ((FEAT & kStreaming) != 0) {
            a[r] = __ldcs(reinterpret_cast<const uint4 *>(A + (row0 + (int64_t)r * lanes) * k + j));
            xv[r] = to_f(__ldg(x + row0 + (int64_t)r * lanes));
        } else {
            a[r] = __ldg(reinterpret_cast<const uint4 *>(A + (row0 + (int64_t)r * lanes) * k + j));
            xv[r] = to_f(x[row0 + (int64_t)r * lanes]);
        }
    }
    float s[V] = {};
#pragma unroll
    for (int r = 0; r < R; ++r) fma_pack<T>(a[r], xv[r], s);
#pragma unroll
    for (int v = 0; v < V; ++v) sums[lane * cols + pack * V + v] = s[v];
    __syncthreads();
    const int64_t col0 = (int64_t)blockIdx.x * cols;
    for (int t = threadIdx.x; t < cols; t += blockDim.x) {
        float p = 0.f;
        int tt = t;
        if constexpr ((FEAT & kDivision) != 0) tt = (t / c) * c + t % c; // as libgemv: v = t / c, cc = t % c
        for (int l = 0; l < lanes; ++l) p += sums[l * cols + tt];
        acc[(int64_t)blockIdx.y * k + col0 + tt] = p;
    }
    if constexpr (FORM == 2) {
        __threadfence(); // this block's partials before its ticket
        __syncthreads();
        if (threadIdx.x == 0) last = atomicAdd(&counters[blockIdx.x], 1u) == gridDim.y - 1;
        __syncthreads();
        if (!last) return;
        __threadfence(); // the other blocks' partials after their tickets
        // The tile's columns x the slices: thread t adds slices t / cols, + step, ... of
        // column t % cols; then the part sums in order (fixed: deterministic).
        const int step = blockDim.x / cols > 0 ? blockDim.x / cols : 1;
        const int slices = gridDim.y;
        __syncthreads();
        for (int t0 = 0; t0 < cols; t0 += blockDim.x) {
            const int t = t0 + (int)(threadIdx.x % cols), part = (int)threadIdx.x / cols;
            float p = 0.f;
            if (part < step && t < cols)
                for (int sl = part; sl < slices; sl += step) p += __ldcg(acc + (int64_t)sl * k + col0 + t);
            __syncthreads();
            if (part < step && t < cols) sums[part * cols + t] = p;
            __syncthreads();
            if (threadIdx.x < cols && t0 + (int)threadIdx.x < cols) {
                float q = 0.f;
                for (int pp = 0; pp < step; ++pp) q += sums[pp * cols + t0 + threadIdx.x];
                y[col0 + t0 + threadIdx.x] = from_f<T>(q);
            }
        }
        if (threadIdx.x == 0) counters[blockIdx.x] = 0;
    }
}

template <typename T> __global__ void reduce_kernel(const float *acc, int slices, int64_t k, T *y) {
    pdl_start();
    const int64_t j = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
    if (j >= k) return;
    float p = 0.f;
#pragma unroll 4
    for (int s = 0; s < slices; ++s) p += acc[(int64_t)s * k + j];
    y[j] = from_f<T>(p);
}

template <typename K, typename... Args>
cudaError_t launch_pdl(K kernel, dim3 grid, dim3 block, size_t smem, cudaStream_t s, Args... args) {
    cudaLaunchConfig_t cfg = {};
    cfg.gridDim = grid;
    cfg.blockDim = block;
    cfg.dynamicSmemBytes = smem;
    cfg.stream = s;
    cudaLaunchAttribute at[1];
    at[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
    at[0].val.programmaticStreamSerializationAllowed = 1;
    cfg.attrs = at;
    cfg.numAttrs = 1;
    return cudaLaunchKernelEx(&cfg, kernel, args...);
}

struct Config { int c, lanes, r, form, feat = 0; };

template <typename T, int R, int FORM, int FEAT = 0>
void enqueue_r(const Config &cf, const T *A, const T *x, int64_t m, int64_t k, float *acc, unsigned *cnt, T *y,
               cudaStream_t s) {
    if constexpr (FORM == 1 && FEAT == 0) {
        switch (cf.feat) { // the extras, for the two-pass form only
        case 0: break;
        case kPrefetch: return enqueue_r<T, R, 1, kPrefetch>(cf, A, x, m, k, acc, cnt, y, s);
        case kStreaming: return enqueue_r<T, R, 1, kStreaming>(cf, A, x, m, k, acc, cnt, y, s);
        case kDivision: return enqueue_r<T, R, 1, kDivision>(cf, A, x, m, k, acc, cnt, y, s);
        case kLoops: return enqueue_r<T, R, 1, kLoops>(cf, A, x, m, k, acc, cnt, y, s);
        default: return enqueue_r<T, R, 1, kPrefetch | kStreaming | kDivision>(cf, A, x, m, k, acc, cnt, y, s);
        }
    }
    const int cols = cf.c * kV<T>;
    const dim3 grid((unsigned)(k / cols), (unsigned)(m / ((int64_t)cf.lanes * R)));
    CK(launch_pdl(split_kernel<T, R, FORM, FEAT>, grid, dim3(cf.c * cf.lanes), (size_t)cf.lanes * cols * 4, s, A, x, m,
                  k, cf.c, cf.lanes, acc, cnt, y));
    if (FORM == 1)
        CK(launch_pdl(reduce_kernel<T>, dim3((unsigned)((k + 255) / 256)), dim3(256), 0, s, (const float *)acc,
                      (int)grid.y, k, y));
}

template <typename T, int FORM>
void enqueue_f(const Config &cf, const T *A, const T *x, int64_t m, int64_t k, float *acc, unsigned *cnt, T *y,
               cudaStream_t s) {
    switch (cf.r) {
    case 1: return enqueue_r<T, 1, FORM>(cf, A, x, m, k, acc, cnt, y, s);
    case 2: return enqueue_r<T, 2, FORM>(cf, A, x, m, k, acc, cnt, y, s);
    default: return enqueue_r<T, 4, FORM>(cf, A, x, m, k, acc, cnt, y, s);
    }
}

template <typename T>
void enqueue(const Config &cf, const T *A, const T *x, int64_t m, int64_t k, float *acc, unsigned *cnt, T *y,
             cudaStream_t s) {
    if (cf.form == 0) enqueue_f<T, 0>(cf, A, x, m, k, acc, cnt, y, s);
    else if (cf.form == 1) enqueue_f<T, 1>(cf, A, x, m, k, acc, cnt, y, s);
    else enqueue_f<T, 2>(cf, A, x, m, k, acc, cnt, y, s);
}

// only: run just this config a few times, untimed (for a profiler), instead of every config.
// list: time these configs instead of every config of the three forms.
template <typename T>
void run_shape(int64_t m, int64_t k, cudaStream_t s, const Config *only = nullptr, const std::vector<Config> *list = nullptr) {
    const int64_t bytes = m * k * (int64_t)sizeof(T);
    const int sets = (int)std::max<int64_t>(8, (200ll << 20) / bytes);
    std::mt19937 rng(42);
    std::uniform_real_distribution<float> u(-1.f, 1.f);
    std::vector<T> ha(m * k), hx(m);
    std::vector<double> fa(m * k), fx(m);
    for (int64_t i = 0; i < m * k; ++i) {
        ha[i] = (T)u(rng);
        fa[i] = (double)(float)ha[i];
    }
    for (int64_t i = 0; i < m; ++i) {
        hx[i] = (T)u(rng);
        fx[i] = (double)(float)hx[i];
    }
    std::vector<double> ref(k, 0.0), mag(k, 0.0);
    for (int64_t r = 0; r < m; ++r)
        for (int64_t j = 0; j < k; ++j) {
            ref[j] += fa[r * k + j] * fx[r];
            mag[j] += std::fabs(fa[r * k + j] * fx[r]);
        }
    std::vector<T *> a(sets);
    for (auto &p : a) {
        CK(cudaMalloc(&p, bytes));
        CK(cudaMemcpy(p, ha.data(), bytes, cudaMemcpyHostToDevice));
    }
    T *x, *y;
    float *acc;
    unsigned *cnt;
    CK(cudaMalloc(&x, m * sizeof(T)));
    CK(cudaMemcpy(x, hx.data(), m * sizeof(T), cudaMemcpyHostToDevice));
    CK(cudaMalloc(&y, k * sizeof(T)));
    CK(cudaMalloc(&acc, (size_t)m * k * 4)); // slices x K at most M x K
    CK(cudaMalloc(&cnt, 1 << 16));
    CK(cudaMemset(cnt, 0, 1 << 16));
    std::vector<Config> cs;
    for (int c : {8, 16, 32})
        for (int lanes : {4, 8, 16, 32})
            for (int r : {1, 2, 4})
                if (k % (c * kV<T>) == 0 && m % ((int64_t)lanes * r) == 0 && c * lanes <= 1024 && c * lanes >= 64 &&
                    m / ((int64_t)lanes * r) >= 2 && k / (c * kV<T>) <= 16384)
                    for (int form = 0; form < 3; ++form) cs.push_back({c, lanes, r, form});
    if (list) cs = *list;
    if (only) {
        for (int i = 0; i < 3; ++i) enqueue<T>(*only, a[0], x, m, k, acc, cnt, y, s);
        CK(cudaStreamSynchronize(s));
        return;
    }
    // Check every config that writes y.
    int bad = 0;
    std::vector<T> hy(k);
    for (const Config &cf : cs) {
        if (cf.form == 0) continue;
        CK(cudaMemset(y, 0xff, k * sizeof(T))); // NaN
        enqueue<T>(cf, a[0], x, m, k, acc, cnt, y, s);
        CK(cudaStreamSynchronize(s));
        CK(cudaMemcpy(hy.data(), y, k * sizeof(T), cudaMemcpyDeviceToHost));
        for (int64_t j = 0; j < k; ++j) {
            const double got = (double)(float)hy[j];
            const double tol = (sizeof(T) == 4 ? 1e-5 : 1e-3) * (mag[j] + 1.0);
            if (!(std::fabs(got - ref[j]) <= tol)) {
                if (bad++ < 5)
                    printf("  WRONG c %d lanes %d r %d form %d: y[%lld] %g against %g\n", cf.c, cf.lanes, cf.r, cf.form,
                           (long long)j, got, ref[j]);
                break;
            }
        }
    }
    const auto med = graph_medians_us((int)cs.size(), sets, s, [&](int mi, int e, cudaStream_t st) {
        enqueue<T>(cs[mi], a[e], x, m, k, acc, cnt, y, st);
    });
    const char *names[] = {"partials", "two", "one"};
    if (list) {
        printf("%s %lld x %lld, %d wrong:", sizeof(T) == 4 ? "fp32" : "fp16", (long long)m, (long long)k, bad);
        for (size_t i = 0; i < cs.size(); ++i)
            printf(" %dx%dx%d %s feat %d: %.2f;", cs[i].c, cs[i].lanes, cs[i].r, names[cs[i].form], cs[i].feat, med[i]);
        printf("\n");
        for (auto p : a) CK(cudaFree(p));
        return;
    }
    printf("%s %lld x %lld (%.2f MB), %d configs checked, %d wrong\n", sizeof(T) == 4 ? "fp32" : "fp16", (long long)m,
           (long long)k, bytes / 1e6, (int)cs.size() * 2 / 3, bad);
    int best[3] = {-1, -1, -1};
    for (size_t i = 0; i < cs.size(); ++i) {
        int &b = best[cs[i].form];
        if (b < 0 || med[i] < med[b]) b = (int)i;
    }
    for (int f = 0; f < 3; ++f) {
        const Config &b = cs[best[f]];
        printf("  best %-8s %.2f us (c %d x %d lanes, %d rows a lane, %lld slices)", names[f], med[best[f]], b.c, b.lanes,
               b.r, (long long)(m / ((int64_t)b.lanes * b.r)));
        if (f == 1) printf("; one at that config %.2f", med[best[f] + 1]);
        printf("\n");
    }
    printf("  all (c x lanes x rows: partials/two/one):");
    for (size_t i = 0; i + 2 < cs.size(); i += 3)
        printf(" %dx%dx%d:%.2f/%.2f/%.2f", cs[i].c, cs[i].lanes, cs[i].r, med[i], med[i + 1], med[i + 2]);
    printf("\n");
    for (auto p : a) CK(cudaFree(p));
    CK(cudaFree(x));
    CK(cudaFree(y));
    CK(cudaFree(acc));
    CK(cudaFree(cnt));
}

int main(int argc, char **argv) {
    cudaStream_t s;
    CK(cudaStreamCreate(&s));
    if (argc == 8) { // fp32|fp16 M K c lanes rows form: one config, untimed
        const Config cf{atoi(argv[4]), atoi(argv[5]), atoi(argv[6]), atoi(argv[7])};
        if (!strcmp(argv[1], "fp32")) run_shape<float>(atoll(argv[2]), atoll(argv[3]), s, &cf);
        else run_shape<__half>(atoll(argv[2]), atoll(argv[3]), s, &cf);
        return 0;
    }
    if (argc == 2 && !strcmp(argv[1], "feat")) { // libgemv's extras one at a time on the two-pass form
        auto feats = [](int c, int lanes, int r) {
            std::vector<Config> v = {{c, lanes, r, 0}};
            for (int f : {0, kPrefetch, kStreaming, kDivision, kLoops, kPrefetch | kStreaming | kDivision})
                v.push_back({c, lanes, r, 1, f});
            return v;
        };
        const auto a = feats(8, 16, 4), b = feats(8, 32, 4), c = feats(16, 16, 2);
        run_shape<float>(512, 512, s, nullptr, &a);
        run_shape<__half>(512, 512, s, nullptr, &b);
        run_shape<__half>(1024, 1024, s, nullptr, &b);
        run_shape<float>(1024, 1024, s, nullptr, &b);
        run_shape<__half>(2048, 2048, s, nullptr, &c);
        run_shape<__half>(4096, 4096, s, nullptr, &b);
        return 0;
    }
    run_shape<float>(256, 256, s);
    run_shape<float>(512, 512, s);
    run_shape<__half>(512, 512, s);
    run_shape<__half>(1024, 1024, s);
    run_shape<float>(1024, 1024, s);
    run_shape<__half>(2048, 2048, s);
    run_shape<float>(2048, 2048, s);
    run_shape<__half>(4096, 4096, s);
    return 0;
}
