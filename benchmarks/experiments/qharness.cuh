// The quantized experiments' harness (qskeleton.cu, qdense.cu, qdmma.cu): random fp16 (or, by
// a format's dtype, bf16) weights quantized by libgemv (gemv_quantize) into the packed layout
// of docs/quantized.md, copied into enough
// input sets for a cold L2; each method checked first (y poisoned with NaN, the contract's
// bound against a float64 reference of the exactly dequantized matrix on 64 sampled rows),
// then all timed in one process by graph_timing.cuh, beside libgemv's quantized dispatch and
// libgemv's dense kernel (the format's dtype) on the codes' bytes.
#pragma once
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "gemv.h"
#include "graph_timing.cuh"

#define GK(x)                                                                                          \
    do {                                                                                               \
        gemv_status_t s_ = (x);                                                                        \
        if (s_ != GEMV_STATUS_SUCCESS) {                                                               \
            fprintf(stderr, "%s:%d %s: %s (%s)\n", __FILE__, __LINE__, #x, gemv_status_string(s_),     \
                    gemv_last_error());                                                                \
            exit(1);                                                                                   \
        }                                                                                              \
    } while (0)

struct Set {
    gemv_qmatrix_t W;
    __half *x, *y, *dense; // 16-bit words of W.dtype; dense: M x (K bits / 16), the codes' bytes, for the dense kernel
};

// A set as the experiments' kernels take it: raw pointers and leading dimensions.
struct Args {
    const uint8_t *q;
    const __half *scales, *zeros, *x;
    __half *y;
    int64_t m, k, ldq, lds, ldz;
};
inline Args args_of(const Set &st, const __half *x = nullptr) { // x: another copy of it (qdmma's pair order)
    const gemv_qmatrix_t &W = st.W;
    return {static_cast<const uint8_t *>(W.qweight), static_cast<const __half *>(W.scales),
            static_cast<const __half *>(W.zeros), x ? x : st.x, st.y, W.m, W.k, W.ldq, W.lds, W.ldz};
}

using Launch = void (*)(const Set &, cudaStream_t);

struct Method {
    const char *name;
    Launch fn;
    bool checked; // false: a timing variant whose results are wrong by design
};

struct Format {
    int bits, group;
    gemv_qzero_t zmode;
    const char *name;
    gemv_dtype_t dtype = GEMV_DTYPE_F16; // x, y, scales, zeros; GEMV_DTYPE_BF16 too
};

// A 16-bit word of dtype to float and back.
inline float word_to_float(__half v, gemv_dtype_t dtype) {
    if (dtype == GEMV_DTYPE_F16) return __half2float(v);
    uint16_t u;
    memcpy(&u, &v, 2);
    return __bfloat162float(__ushort_as_bfloat16(u));
}
inline __half float_to_word(float f, gemv_dtype_t dtype) {
    if (dtype == GEMV_DTYPE_F16) return __float2half(f);
    const uint16_t u = __bfloat16_as_ushort(__float2bfloat16(f));
    __half v;
    memcpy(&v, &u, 2);
    return v;
}

inline void libgemv_quantized(const Set &st, cudaStream_t s) {
    static void *ws = nullptr;
    if (!ws) CK(cudaMalloc(&ws, GEMV_WORKSPACE_RECOMMENDED_BYTES));
    GK(gemv_quantized(&st.W, 1.f, st.x, 1, 0.f, st.y, 1, ws, GEMV_WORKSPACE_RECOMMENDED_BYTES, s));
}

inline void libgemv_dense(const Set &st, cudaStream_t s) {
    const int64_t cols = st.W.k * st.W.bits / 16; // 16-bit elements of a row's codes
    GK(gemv(GEMV_OP_N, (gemv_dtype_t)st.W.dtype, st.W.m, cols, 1.0, st.dense, cols, st.x, 1, 0.0, st.y, 1, nullptr, 0, s));
}

// The methods whose indices a comma list names ("0,3,7"), or all of them for nullptr.
inline std::vector<Method> pick_methods(const Method *all, int n, const char *only) {
    if (!only) return std::vector<Method>(all, all + n);
    std::vector<Method> picked;
    for (const char *p = only; *p;) {
        picked.push_back(all[atoi(p)]);
        while (*p && *p != ',') ++p;
        if (*p) ++p;
    }
    return picked;
}

// Shapes from argv (MxK ...) or the defaults; formats picked by index with QSK_FORMATS
// (e.g. "02"); shapes whose M or K is not a multiple of m_mult, k_mult are passed over.
inline int run_harness(int argc, char **argv, const Method *methods, int nm, const Format *formats, int nf,
                       int m_mult, int k_mult) {
    std::vector<std::pair<int64_t, int64_t>> shapes = {{4096, 4096},   {8192, 8192},   {14336, 4096},
                                                       {4096, 14336},  {28672, 8192},  {8192, 28672},
                                                       {128256, 4096}, {11008, 11008}};
    if (argc > 1) {
        shapes.clear();
        for (int i = 1; i < argc; ++i) {
            const char *xp = strchr(argv[i], 'x');
            if (!xp) return fprintf(stderr, "shapes are MxK\n"), 2;
            shapes.push_back({atoll(argv[i]), atoll(xp + 1)});
        }
    }
    cudaStream_t s;
    CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    std::mt19937 rng(1234);
    std::normal_distribution<float> N(0.f, 1.f);
    const char *only = getenv("QSK_FORMATS");
    for (int fi = 0; fi < nf; ++fi)
        for (auto [m, k] : shapes) {
            const Format &f = formats[fi];
            if (only && !strchr(only, '0' + fi)) continue;
            const gemv_qzero_t zmode = f.zmode;
            if (m % m_mult || k % k_mult) {
                printf("%ldx%ld: the prototypes take M %% %d == 0 and K %% %d == 0\n", (long)m, (long)k, m_mult, k_mult);
                continue;
            }
            gemv_qmatrix_t W0;
            GK(gemv_qmatrix_init(&W0, f.bits, f.group, zmode, f.dtype, m, k));
            const size_t qbytes = (size_t)m * W0.ldq, sbytes = (size_t)m * W0.lds * 2, zbytes = (size_t)m * W0.ldz * 2;
            const size_t bytes = qbytes + sbytes + zbytes;
            const int sets = (int)std::max<size_t>(2, (4 * 50ull * 1024 * 1024 + bytes - 1) / bytes + 1);
            // One random matrix, quantized once, copied into every set.
            std::vector<__half> hA((size_t)m * k), hx(k);
            for (auto &v : hA) v = float_to_word(N(rng), f.dtype);
            for (auto &v : hx) v = float_to_word(N(rng), f.dtype);
            __half *dA;
            CK(cudaMalloc(&dA, hA.size() * 2));
            CK(cudaMemcpy(dA, hA.data(), hA.size() * 2, cudaMemcpyHostToDevice));
            std::vector<Set> st(sets);
            for (auto &e : st) {
                e.W = W0;
                CK(cudaMalloc(&e.W.qweight, qbytes));
                CK(cudaMalloc(&e.W.scales, sbytes));
                if (zbytes) CK(cudaMalloc(&e.W.zeros, zbytes));
                CK(cudaMalloc(&e.x, k * 2));
                CK(cudaMalloc(&e.y, m * 2));
                CK(cudaMalloc(&e.dense, qbytes));
                CK(cudaMemcpy(e.x, hx.data(), k * 2, cudaMemcpyHostToDevice));
            }
            GK(gemv_quantize(&st[0].W, dA, k, s));
            CK(cudaStreamSynchronize(s));
            for (auto &e : st) {
                if (&e != &st[0]) {
                    CK(cudaMemcpy(e.W.qweight, st[0].W.qweight, qbytes, cudaMemcpyDeviceToDevice));
                    CK(cudaMemcpy(e.W.scales, st[0].W.scales, sbytes, cudaMemcpyDeviceToDevice));
                    if (zbytes) CK(cudaMemcpy(e.W.zeros, st[0].W.zeros, zbytes, cudaMemcpyDeviceToDevice));
                }
                CK(cudaMemcpy(e.dense, dA, qbytes, cudaMemcpyDeviceToDevice)); // any finite fp16 of those bytes
            }
            CK(cudaFree(dA));
            // The reference: 64 sampled rows of the exactly dequantized matrix, in float64.
            float *dD;
            CK(cudaMalloc(&dD, (size_t)m * k * 4));
            GK(gemv_dequantize(&st[0].W, dD, k, s));
            CK(cudaStreamSynchronize(s));
            std::vector<int64_t> rows(64);
            std::vector<float> hD((size_t)64 * k);
            for (int i = 0; i < 64; ++i) {
                rows[i] = (int64_t)i * (m - 1) / 63;
                CK(cudaMemcpy(hD.data() + (size_t)i * k, dD + rows[i] * k, k * 4, cudaMemcpyDeviceToHost));
            }
            CK(cudaFree(dD));
            std::vector<__half> hy(m);
            bool ok = true;
            for (int mi = 0; mi < nm; ++mi) {
                if (!methods[mi].checked) continue;
                CK(cudaMemset(st[0].y, 0xff, m * 2)); // NaN
                methods[mi].fn(st[0], s);
                CK(cudaStreamSynchronize(s));
                CK(cudaMemcpy(hy.data(), st[0].y, m * 2, cudaMemcpyDeviceToHost));
                int bad = 0;
                for (int64_t i = 0; i < m; ++i) bad += !std::isfinite(word_to_float(hy[i], f.dtype));
                for (int i = 0; i < 64; ++i) {
                    double ref = 0, mag = 0;
                    for (int64_t j = 0; j < k; ++j) {
                        const double p = (double)hD[(size_t)i * k + j] * word_to_float(hx[j], f.dtype);
                        ref += p, mag += std::fabs(p);
                    }
                    const bool f16 = f.dtype == GEMV_DTYPE_F16; // the output's rounding and subnormal spacing
                    const double bound = std::ldexp(std::fabs(ref), f16 ? -11 : -8) + 2.0 * k * std::ldexp(mag, -24) +
                                         std::ldexp(1.0, f16 ? -25 : -134);
                    bad += !(std::fabs(word_to_float(hy[rows[i]], f.dtype) - ref) <= bound);
                }
                if (bad) {
                    printf("WRONG %s %ldx%ld %s: %d outputs\n", methods[mi].name, (long)m, (long)k, f.name, bad);
                    ok = false;
                }
            }
            const std::vector<float> med =
                graph_medians_us(nm, sets, s, [&](int mi, int e, cudaStream_t str) { methods[mi].fn(st[e], str); });
            printf("%s %s %ldx%ld (%.1f MB read)%s\n", f.name, f.dtype == GEMV_DTYPE_F16 ? "fp16" : "bf16", (long)m, (long)k, bytes / 1e6, ok ? "" : " WRONG");
            for (int mi = 0; mi < nm; ++mi)
                printf("  %-40s %8.2f us %6.2f TB/s\n", methods[mi].name, med[mi],
                       (mi ? bytes : qbytes) / (med[mi] * 1e6)); // the dense method reads the codes' bytes
            for (auto &e : st) {
                CK(cudaFree(e.W.qweight));
                CK(cudaFree(e.W.scales));
                if (zbytes) CK(cudaFree(e.W.zeros));
                CK(cudaFree(e.x));
                CK(cudaFree(e.y));
                CK(cudaFree(e.dense));
            }
        }
    return 0;
}

