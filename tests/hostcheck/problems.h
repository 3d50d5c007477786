// Random problems for the host-code fuzzers: shapes log-uniform over 1 .. 2^20, odd lda,
// increments of either sign, batches with dense, zero or negative strides, and operands at
// every element-aligned offset, each in an allocation of exactly its extent (the stand-in runtime
// then reports any access past it).
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <random>

#include "gemv.h"

// The stand-in runtime's controls (fake_cuda.cpp).
extern "C" void gemv_fake_reset(int devices);
extern "C" long gemv_fake_violations(void);
extern "C" size_t gemv_fake_violation_text(char *buf, size_t len);

// The launch-plan violations so far, described on stderr.
inline long report_violations() {
    const long n = gemv_fake_violations();
    if (n) {
        char text[4096];
        gemv_fake_violation_text(text, sizeof text);
        fprintf(stderr, "launch-plan violations:\n%s", text);
    }
    return n;
}

struct Operands {
    void *a = nullptr, *x = nullptr, *y = nullptr, *ws = nullptr;
    gemv_args_t args{};
    void release() {
        gemv_free(a), gemv_free(x), gemv_free(y), gemv_free(ws);
        a = x = y = ws = nullptr;
    }
};

inline int64_t log_uniform(std::mt19937_64 &rng, int64_t hi) {
    std::uniform_real_distribution<double> u(0.0, std::log2((double)hi));
    return std::max<int64_t>(1, (int64_t)std::exp2(u(rng)));
}

// Elements from the lowest to the highest of n entries at inc, for batch products stride apart.
inline void reach(int64_t n, int64_t inc, int64_t batch, int64_t stride, int64_t *lo, int64_t *hi) {
    *lo = std::min<int64_t>(0, (n - 1) * inc) + std::min<int64_t>(0, (batch - 1) * stride);
    *hi = std::max<int64_t>(0, (n - 1) * inc) + std::max<int64_t>(0, (batch - 1) * stride);
}

// Allocates exactly what the problem reaches (plus the offset), with the pointer at the
// lowest address as BLAS expects.
inline void *place(int64_t lo, int64_t hi, size_t esz, int offset) {
    void *p = nullptr;
    if (gemv_malloc(&p, (size_t)(hi - lo + 1) * esz + offset) != GEMV_STATUS_SUCCESS) return nullptr;
    return static_cast<char *>(p) + offset;
}

inline Operands random_problem(std::mt19937_64 &rng) {
    Operands o;
    gemv_args_t &a = o.args;
    a.struct_size = sizeof a;
    a.op = rng() % 2 ? GEMV_OP_T : GEMV_OP_N;
    a.dtype = (int32_t)(rng() % 3);
    const size_t esz = a.dtype == GEMV_DTYPE_F32 ? 4 : 2;
    const bool skinny = rng() % 4 == 0;
    a.m = skinny ? (int64_t)(rng() % 8 + 1) : log_uniform(rng, 1 << 20);
    a.k = log_uniform(rng, std::max<int64_t>(2, (int64_t(1) << 24) / a.m));
    a.lda = a.k + (rng() % 3 == 0 ? (int64_t)(rng() % 17) : 0);
    a.alpha = 1.5f;
    a.beta = rng() % 2 ? 0.f : 0.5f;
    const int64_t incs[] = {1, 1, 1, -1, 2, -3};
    a.incx = incs[rng() % 6];
    a.incy = incs[rng() % 6];
    const int64_t batches[] = {2, 3, 17, 64};
    a.batch = rng() % 3 == 0 ? batches[rng() % 4] : 1;
    const int64_t nx = a.op == GEMV_OP_N ? a.k : a.m, ny = a.op == GEMV_OP_N ? a.m : a.k;
    if (a.m * a.lda * a.batch > (int64_t(1) << 26)) a.batch = 1; // keep extents moderate
    const int64_t span_a = (a.m - 1) * a.lda + a.k, span_x = (nx - 1) * std::abs(a.incx) + 1,
                  span_y = (ny - 1) * std::abs(a.incy) + 1;
    a.stride_a = a.batch > 1 ? (rng() % 4 == 0 ? 0 : rng() % 4 == 1 ? -span_a : span_a + (int64_t)(rng() % 9)) : 0;
    a.stride_x = a.batch > 1 ? (rng() % 4 == 0 ? 0 : rng() % 4 == 1 ? -span_x : span_x) : 0;
    a.stride_y = a.batch > 1 ? (rng() % 4 == 1 ? -span_y : span_y + (int64_t)(rng() % 5)) : 0;
    // Each operand at its own element-aligned offset (half of them 16-byte aligned), so the
    // realigned loads meet x out of phase with A.
    int off[3];
    for (int &v : off) v = (int)((rng() % (16 / esz)) * esz * (rng() % 2));
    int64_t lo, hi;
    reach(a.m, a.lda, a.batch, a.stride_a, &lo, &hi);
    o.a = place(lo, hi + a.k - 1, esz, off[0]);
    a.A = o.a ? static_cast<char *>(o.a) - lo * (int64_t)esz : nullptr;
    reach(nx, std::abs(a.incx), a.batch, a.stride_x, &lo, &hi);
    o.x = place(lo, hi, esz, off[1]);
    a.x = o.x ? static_cast<char *>(o.x) - std::min<int64_t>(0, (a.batch - 1) * a.stride_x) * (int64_t)esz : nullptr;
    reach(ny, std::abs(a.incy), a.batch, a.stride_y, &lo, &hi);
    o.y = place(lo, hi, esz, off[2]);
    a.y = o.y ? static_cast<char *>(o.y) - std::min<int64_t>(0, (a.batch - 1) * a.stride_y) * (int64_t)esz : nullptr;
    const size_t ws_sizes[] = {0, 16, 4096, GEMV_WORKSPACE_RECOMMENDED_BYTES};
    a.workspace_bytes = ws_sizes[rng() % 4];
    if (a.workspace_bytes) gemv_malloc(&o.ws, a.workspace_bytes);
    a.workspace = o.ws;
    // Offsets were added to the allocation's start: free from there.
    o.a = o.a ? static_cast<char *>(o.a) - off[0] : nullptr;
    o.x = o.x ? static_cast<char *>(o.x) - off[1] : nullptr;
    o.y = o.y ? static_cast<char *>(o.y) - off[2] : nullptr;
    return o;
}
