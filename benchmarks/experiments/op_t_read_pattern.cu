// Experiment (NOTES 61, next (1); run in s43, NOTES 63): how fast the column kernel's pattern of reads can run by
// itself on small matrices, against op N's. Small op T (fp32 512^2: 2.99 us, op N 1.85, cuBLAS
// 2.67) is not waiting on its lane sums (section 61) but on its loads (section 13: few in
// flight). Here nothing but the loads: no x, no sums across lanes, no y. If the column pattern
// alone takes about 3 us at 512^2, the next op T kernel needs another order of reads; if it
// takes about op N's 1.8, the cost is in what the column kernel does around its loads.
// Patterns, each over an M x K matrix of B-byte elements (16-byte packs, rows aligned):
//   rows:    a block of 128 threads a row, each thread its row's packs in turn (op N's
//            block_per_row at 1-2 packs a thread);
//   columns: a block of c packs x `lanes` lanes, thread (pack, lane) reading rows lane,
//            lane + lanes, ... of its pack, all of them in flight (R = M / lanes rows a lane,
//            a compile-time count up to 8), as t_columns with unroll R.
//   split:   the same block over a slice of lanes x R rows only, slices on grid.y: wide
//            tiles (c = 8-32 packs, 128-512 bytes of a row) and few lanes, the split-M
//            kernel's order of reads without its partials or its reduce.
// Each thread folds what it read into one value and writes it only if it is NaN (never, on
// the data here), so no load is dead and nothing is written. Timing as pygemv.timing (graph
// replay over rotating copies, 4x L2 or more; graph_timing.cuh). Build and run (no libgemv):
//   nvcc -O3 -std=c++17 -arch=sm_90 benchmarks/experiments/op_t_read_pattern.cu -o /tmp/rp && /tmp/rp
#include <cuda_runtime.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <vector>

#include "graph_timing.cuh"

__device__ __forceinline__ float fold(uint4 v) {
    return __uint_as_float(v.x) + __uint_as_float(v.y) + __uint_as_float(v.z) + __uint_as_float(v.w);
}

// op N's order: 128 threads a row, each the row's packs 128 apart.
__global__ void read_rows(const uint4 *A, int64_t packs_a_row, float *sink) {
    const uint4 *row = A + (int64_t)blockIdx.x * packs_a_row;
    float s = 0.f;
    for (int64_t p = threadIdx.x; p < packs_a_row; p += blockDim.x) s += fold(__ldg(row + p));
    if (isnan(s)) sink[0] = s;
}

// t_columns' order: tile blockIdx.x of c packs, lane l reading rows l, l + lanes, ... (R of
// them, all issued before any is used).
template <int R> __global__ void read_columns(const uint4 *A, int64_t packs_a_row, int c, int lanes, float *sink) {
    const int pack = threadIdx.x % c, lane = threadIdx.x / c;
    const int64_t row0 = (int64_t)blockIdx.y * lanes * R; // the slice's first row (split)
    const uint4 *p = A + (int64_t)blockIdx.x * c + pack + (row0 + lane) * packs_a_row;
    uint4 v[R];
#pragma unroll
    for (int r = 0; r < R; ++r) v[r] = __ldg(p + (int64_t)r * lanes * packs_a_row);
    float s = 0.f;
#pragma unroll
    for (int r = 0; r < R; ++r) s += fold(v[r]);
    if (isnan(s)) sink[0] = s;
}

// lanes 0: every row in one slice (M / R lanes); else M / (lanes x R) slices.
template <int R> void enqueue_columns(const uint4 *A, int64_t m, int64_t packs, int c, int lanes, float *sink, cudaStream_t s) {
    if (lanes == 0) lanes = (int)(m / R);
    const dim3 grid((unsigned)(packs / c), (unsigned)(m / ((int64_t)lanes * R)));
    read_columns<R><<<grid, c * lanes, 0, s>>>(A, packs, c, lanes, sink);
}

int main() {
    struct Shape { int64_t m, k; int bytes; };
    const Shape shapes[] = {{256, 256, 4}, {512, 512, 4}, {512, 512, 2}, {1024, 1024, 2}, {1024, 1024, 4}, {2048, 2048, 2}};
    float *sink;
    CK(cudaMalloc(&sink, sizeof(float)));
    cudaStream_t s;
    CK(cudaStreamCreate(&s));
    for (const Shape &sh : shapes) {
        const int64_t packs = sh.k * sh.bytes / 16, bytes = sh.m * sh.k * sh.bytes;
        const int sets = (int)std::max<int64_t>(8, (200ll << 20) / bytes); // 200 MB: 4x L2
        std::vector<uint4 *> a(sets);
        std::vector<float> host(bytes / 4);
        for (size_t i = 0; i < host.size(); ++i) host[i] = (float)((i * 2654435761u) % 1000) * 1e-3f; // no NaN
        for (auto &p : a) {
            CK(cudaMalloc(&p, bytes));
            CK(cudaMemcpy(p, host.data(), bytes, cudaMemcpyHostToDevice));
        }
        // Methods: rows, then columns of c = 1..16 packs x lanes for R = 1, 2, 4, 8 rows a lane
        // (blocks of at most 1024 threads, lanes dividing M).
        struct Method { int c, r, lanes; }; // lanes 0: one slice
        std::vector<Method> ms = {{0, 0, 0}};
        for (int c : {1, 2, 4, 8, 16})
            for (int r : {1, 2, 4, 8})
                if (packs % c == 0 && sh.m % r == 0 && c * (sh.m / r) <= 1024 && c * (sh.m / r) >= 32) ms.push_back({c, r, 0});
        const size_t one_slice = ms.size();
        for (int c : {8, 16, 32})
            for (int lanes : {4, 8, 16, 32})
                for (int r : {1, 2, 4, 8})
                    if (packs % c == 0 && sh.m % ((int64_t)lanes * r) == 0 && c * lanes <= 1024 && c * lanes >= 64 &&
                        sh.m / ((int64_t)lanes * r) >= 2)
                        ms.push_back({c, r, lanes});
        const auto med = graph_medians_us((int)ms.size(), sets, s, [&](int mi, int e, cudaStream_t st) {
            const Method &me = ms[mi];
            if (me.c == 0) return read_rows<<<(unsigned)sh.m, 128, 0, st>>>(a[e], packs, sink);
            switch (me.r) {
            case 1: return enqueue_columns<1>(a[e], sh.m, packs, me.c, me.lanes, sink, st);
            case 2: return enqueue_columns<2>(a[e], sh.m, packs, me.c, me.lanes, sink, st);
            case 4: return enqueue_columns<4>(a[e], sh.m, packs, me.c, me.lanes, sink, st);
            default: return enqueue_columns<8>(a[e], sh.m, packs, me.c, me.lanes, sink, st);
            }
        });
        CK(cudaGetLastError());
        printf("%s %lld x %lld (%.2f MB): rows %.2f us", sh.bytes == 4 ? "fp32" : "16-bit", (long long)sh.m,
               (long long)sh.k, bytes / 1e6, med[0]);
        int best = 1, best_split = (int)one_slice;
        for (size_t i = 1; i < one_slice; ++i) best = med[i] < med[best] ? (int)i : best;
        for (size_t i = one_slice; i < ms.size(); ++i) best_split = med[i] < med[best_split] ? (int)i : best_split;
        printf("; columns best %.2f us (c %d, %d rows a lane, %lld lanes)", med[best], ms[best].c, ms[best].r,
               (long long)(sh.m / ms[best].r));
        if (best_split < (int)ms.size())
            printf("; split best %.2f us (c %d x %d lanes, %d rows a lane, %lld slices)", med[best_split],
                   ms[best_split].c, ms[best_split].lanes, ms[best_split].r,
                   (long long)(sh.m / ((int64_t)ms[best_split].lanes * ms[best_split].r)));
        printf("\n  columns (c x rows a lane):");
        for (size_t i = 1; i < one_slice; ++i) printf(" %dx%d:%.2f", ms[i].c, ms[i].r, med[i]);
        printf("\n  split (c x lanes x rows a lane):");
        for (size_t i = one_slice; i < ms.size(); ++i) printf(" %dx%dx%d:%.2f", ms[i].c, ms[i].lanes, ms[i].r, med[i]);
        printf("\n");
        for (auto p : a) CK(cudaFree(p));
    }
    return 0;
}
