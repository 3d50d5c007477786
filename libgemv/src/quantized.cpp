// The quantized-weight entry points: the descriptor's checks, gemv_quantized (a gemv_ex
// with args->qweight), and the conversions into and out of the packed layout (quantize,
// GPTQ and AWQ repacks, dequantize), checked in the contract's order: values, then NULLs
// and alignment, then the device, then what the pointers point at.
#include <cstring>
#include <vector>

#include "internal.h"

namespace libgemv {

namespace {

bool is_pow2(int64_t v) { return v > 0 && (v & (v - 1)) == 0; }
bool aligned(const void *p, uintptr_t bytes) { return (reinterpret_cast<uintptr_t>(p) & (bytes - 1)) == 0; }

gemv_status_t bad_value(const char *fmt, const char *name, long long v) {
    set_error(fmt, name, v);
    return GEMV_STATUS_INVALID_VALUE;
}

} // namespace

gemv_status_t check_qmatrix(const gemv_qmatrix_t *w, const char *name) {
    if (!w) return set_error("%s is NULL", name), GEMV_STATUS_INVALID_POINTER;
    if (w->struct_size != sizeof(gemv_qmatrix_t)) {
        set_error("%s->struct_size = %zu: expected sizeof(gemv_qmatrix_t) = %zu", name, w->struct_size,
                  sizeof(gemv_qmatrix_t));
        return GEMV_STATUS_INVALID_VALUE;
    }
    if (w->bits != 4 && w->bits != 8) return bad_value("%s->bits = %lld: must be 4 or 8", name, w->bits);
    if (w->group_size != 0 && (!is_pow2(w->group_size) || w->group_size < 32 || w->group_size > 1024))
        return bad_value("%s->group_size = %lld: must be a power of two from 32 to 1024, or 0 (one group a row)", name,
                         w->group_size);
    if (w->zero_mode < GEMV_QZERO_SYMMETRIC || w->zero_mode > GEMV_QZERO_FLOAT)
        return bad_value("%s->zero_mode = %lld: must be GEMV_QZERO_SYMMETRIC, _INT or _FLOAT", name, w->zero_mode);
    if (w->dtype != GEMV_DTYPE_F16 && w->dtype != GEMV_DTYPE_BF16)
        return bad_value("%s->dtype = %lld: scales are GEMV_DTYPE_F16 or GEMV_DTYPE_BF16", name, w->dtype);
    if (w->m < 0) return bad_value("%s->m = %lld: must be >= 0", name, w->m);
    if (w->k < 0) return bad_value("%s->k = %lld: must be >= 0", name, w->k);
    const int64_t row = std::max<int64_t>(16, q_row_bytes(w->bits, w->k)), groups = q_groups(*w);
    if (w->ldq < row || w->ldq % 16) {
        set_error("%s->ldq = %lld: must be a multiple of 16 and >= %lld (bytes of a packed row of k = %lld)", name,
                  (long long)w->ldq, (long long)row, (long long)w->k);
        return GEMV_STATUS_INVALID_VALUE;
    }
    if (w->lds < groups) {
        set_error("%s->lds = %lld: must be >= the %lld groups of a row", name, (long long)w->lds, (long long)groups);
        return GEMV_STATUS_INVALID_VALUE;
    }
    if (w->zero_mode != GEMV_QZERO_SYMMETRIC && w->ldz < groups) {
        set_error("%s->ldz = %lld: must be >= the %lld groups of a row", name, (long long)w->ldz, (long long)groups);
        return GEMV_STATUS_INVALID_VALUE;
    }
    // Every byte offset a kernel forms must fit in int64.
    const __int128 limit = INT64_MAX;
    if ((__int128)w->m * w->ldq > limit || (__int128)w->m * w->lds * 2 > limit || (__int128)w->m * w->ldz * 2 > limit) {
        set_error("%s spans more than 2^63 bytes (m and its strides)", name);
        return GEMV_STATUS_INVALID_VALUE;
    }
    return GEMV_STATUS_SUCCESS;
}

gemv_status_t check_qmatrix_pointers(const gemv_qmatrix_t &w, const char *name, int device) {
    const bool zeros = w.zero_mode != GEMV_QZERO_SYMMETRIC;
    const struct { const void *p; const char *field; uintptr_t align; bool used; } ptrs[] = {
        {w.qweight, "qweight", 16, true}, {w.scales, "scales", 2, true}, {w.zeros, "zeros", 2, zeros},
        {w.perm, "perm", 4, w.perm != nullptr}};
    for (const auto &o : ptrs) {
        if (!o.used) continue;
        if (!o.p) return set_error("%s->%s is NULL", name, o.field), GEMV_STATUS_INVALID_POINTER;
        if (!aligned(o.p, o.align)) {
            set_error("%s->%s = %p is not %zu-byte aligned", name, o.field, o.p, (size_t)o.align);
            return GEMV_STATUS_INVALID_POINTER;
        }
        if (device >= 0) {
            char what[64];
            snprintf(what, sizeof what, "%s->%s", name, o.field);
            const gemv_status_t st = check_device_pointer(o.p, what, device);
            if (st != GEMV_STATUS_SUCCESS) return st;
        }
    }
    return GEMV_STATUS_SUCCESS;
}

namespace {


struct Source {
    const void *p;
    const char *name;
    uintptr_t align;
};

// Non-NULL, aligned and on the device, each of the sources.
gemv_status_t check_sources(const std::vector<Source> &sources, int device) {
    for (const Source &s : sources) {
        if (!s.p) return set_error("%s is NULL", s.name), GEMV_STATUS_INVALID_POINTER;
        if (!aligned(s.p, s.align)) {
            set_error("%s = %p is not %zu-byte aligned", s.name, s.p, (size_t)s.align);
            return GEMV_STATUS_INVALID_POINTER;
        }
        if (device >= 0) {
            const gemv_status_t st = check_device_pointer(s.p, s.name, device);
            if (st != GEMV_STATUS_SUCCESS) return st;
        }
    }
    return GEMV_STATUS_SUCCESS;
}

// A conversion's pointers, in the contract's order: W's and the sources' NULLs and
// alignment, then the device and the stream, then that each is memory of that device.
gemv_status_t check_conversion_pointers(const gemv_qmatrix_t &w, const std::vector<Source> &sources,
                                        cudaStream_t stream) {
    gemv_status_t st;
    if ((st = check_qmatrix_pointers(w, "W", -1)) != GEMV_STATUS_SUCCESS) return st;
    if ((st = check_sources(sources, -1)) != GEMV_STATUS_SUCCESS) return st;
    int device = 0;
    if ((st = current_device(&device)) != GEMV_STATUS_SUCCESS) return st;
    if ((st = check_stream_device(stream, device)) != GEMV_STATUS_SUCCESS) return st;
    if ((st = check_qmatrix_pointers(w, "W", device)) != GEMV_STATUS_SUCCESS) return st;
    return check_sources(sources, device);
}

gemv_status_t launch_conversion(const QConvertArgs &a, cudaStream_t stream, const char *what) {
    const cudaError_t e = launch_qconvert(a, stream);
    return e == cudaSuccess ? GEMV_STATUS_SUCCESS : cuda_failure(e, what);
}

// GPTQ act-order: the packed column order that makes g_idx's groups contiguous (rows of
// qweight in increasing order within a group), checked to give every group group_size
// rows (the last one the rest). Reads g_idx to the host: synchronises the stream.
gemv_status_t gptq_perm(const gemv_qmatrix_t &w, const int32_t *g_idx, cudaStream_t stream) {
    const int64_t k = w.k, groups = q_groups(w), gs = w.group_size ? w.group_size : k;
    std::vector<int32_t> g(k), perm(k);
    cudaError_t e = cudaMemcpyAsync(g.data(), g_idx, (size_t)k * sizeof(int32_t), cudaMemcpyDeviceToHost, stream);
    if (e == cudaSuccess) e = cudaStreamSynchronize(stream);
    if (e != cudaSuccess) return cuda_failure(e, "reading g_idx");
    std::vector<int64_t> next(groups);
    for (int64_t j = 0; j < groups; ++j) next[j] = j * gs;
    for (int64_t i = 0; i < k; ++i) {
        if (g[i] < 0 || g[i] >= groups) {
            set_error("g_idx[%lld] = %d: groups are 0 .. %lld", (long long)i, g[i], (long long)(groups - 1));
            return GEMV_STATUS_INVALID_VALUE;
        }
        const int64_t end = std::min<int64_t>((int64_t)(g[i] + 1) * gs, k);
        if (next[g[i]] >= end) {
            set_error("g_idx: group %d has more than its %lld rows (group_size = %d)", g[i],
                      (long long)(end - (int64_t)g[i] * gs), w.group_size);
            return GEMV_STATUS_INVALID_VALUE;
        }
        perm[next[g[i]]++] = (int32_t)i;
    }
    // Every row placed, none twice: each group is exactly full.
    e = cudaMemcpyAsync(w.perm, perm.data(), (size_t)k * sizeof(int32_t), cudaMemcpyHostToDevice, stream);
    if (e == cudaSuccess) e = cudaStreamSynchronize(stream);
    return e == cudaSuccess ? GEMV_STATUS_SUCCESS : cuda_failure(e, "writing perm");
}

gemv_status_t repack(QConvert kind, const gemv_qmatrix_t *W, const int32_t *qweight, const int32_t *qzeros,
                     const void *scales, const int32_t *g_idx, int zero_offset, gemv_stream_t s) {
    const char *what = kind == QConvert::kGptq ? "gemv_repack_gptq" : "gemv_repack_awq";
    gemv_status_t st = check_qmatrix(W, "W");
    if (st != GEMV_STATUS_SUCCESS) return st;
    const gemv_qmatrix_t &w = *W;
    const int per_word = 32 / w.bits;
    if (w.zero_mode != GEMV_QZERO_INT)
        return bad_value("%s->zero_mode = %lld: checkpoints store integer zeros (GEMV_QZERO_INT)", "W", w.zero_mode);
    if (kind == QConvert::kAwq) {
        if (w.bits != 4) return bad_value("%s->bits = %lld: AWQ checkpoints are int4", "W", w.bits);
        if (w.m % 8) return bad_value("%s->m = %lld: AWQ packs M by 8 (a multiple of 8)", "W", w.m);
    } else {
        if (w.k % per_word)
            return set_error("W->k = %lld: GPTQ packs K by %d (a multiple of %d)", (long long)w.k, per_word, per_word),
                   GEMV_STATUS_INVALID_VALUE;
        if (w.m % per_word)
            return set_error("W->m = %lld: GPTQ packs the zeros along M by %d (a multiple of %d)", (long long)w.m,
                             per_word, per_word),
                   GEMV_STATUS_INVALID_VALUE;
        if (!g_idx && w.perm)
            return set_error("W->perm must be NULL without g_idx (it is written from g_idx)"), GEMV_STATUS_INVALID_VALUE;
    }
    if (w.m == 0 || w.k == 0) return GEMV_STATUS_SUCCESS;
    if (kind == QConvert::kGptq && g_idx && !w.perm)
        return set_error("W->perm is NULL: with g_idx it must point to k int32"), GEMV_STATUS_INVALID_POINTER;
    std::vector<Source> sources = {{qweight, "qweight", 4}, {qzeros, "qzeros", 4}, {scales, "scales", 2}};
    if (g_idx) sources.push_back({g_idx, "g_idx", 4});
    cudaStream_t stream = reinterpret_cast<cudaStream_t>(s);
    if ((st = check_conversion_pointers(w, sources, stream)) != GEMV_STATUS_SUCCESS) return st;
    if (g_idx && (st = gptq_perm(w, g_idx, stream)) != GEMV_STATUS_SUCCESS) return st;
    QConvertArgs a{};
    a.kind = kind;
    a.w = w;
    a.src_q = qweight;
    a.src_z = qzeros;
    a.src_s = scales;
    a.zero_offset = zero_offset;
    return launch_conversion(a, stream, what);
}

// Quantize (dense = A, the call's dtype, lda) or dequantize (dense = out, fp32, ldo): the
// checks in the contract's order, then the conversion on stream.
gemv_status_t convert_dense(QConvert kind, const gemv_qmatrix_t *W, const void *dense, int64_t ld, gemv_stream_t s) {
    const bool quantize = kind == QConvert::kQuantize;
    const char *name = quantize ? "A" : "out", *ld_name = quantize ? "lda" : "ldo";
    const uintptr_t esz = quantize ? 2 : 4;
    gemv_status_t st = check_qmatrix(W, "W");
    if (st != GEMV_STATUS_SUCCESS) return st;
    const gemv_qmatrix_t &w = *W;
    if (ld < std::max<int64_t>(1, w.k)) {
        set_error("%s = %lld: must be >= max(1, k) = %lld", ld_name, (long long)ld, (long long)std::max<int64_t>(1, w.k));
        return GEMV_STATUS_INVALID_VALUE;
    }
    if ((__int128)w.m * ld * (int64_t)esz > (__int128)INT64_MAX)
        return set_error("%s spans more than 2^63 bytes", name), GEMV_STATUS_INVALID_VALUE;
    if (quantize && w.perm)
        return set_error("W->perm must be NULL: quantize keeps A's column order"), GEMV_STATUS_INVALID_VALUE;
    if (w.m == 0 || w.k == 0) return GEMV_STATUS_SUCCESS;
    cudaStream_t stream = reinterpret_cast<cudaStream_t>(s);
    if ((st = check_conversion_pointers(w, {{dense, name, esz}}, stream)) != GEMV_STATUS_SUCCESS) return st;
    QConvertArgs a{};
    a.kind = kind;
    a.w = w;
    a.dense = dense;
    a.ld_dense = ld;
    return launch_conversion(a, stream, quantize ? "launching quantize" : "launching dequantize");
}

} // namespace

} // namespace libgemv

using namespace libgemv;

extern "C" {

gemv_status_t gemv_qmatrix_init(gemv_qmatrix_t *W, int bits, int group_size, gemv_qzero_t zero_mode,
                                gemv_dtype_t dtype, int64_t m, int64_t k) {
    clear_error();
    if (!W) return set_error("W is NULL"), GEMV_STATUS_INVALID_POINTER;
    gemv_qmatrix_t w{};
    w.struct_size = sizeof w;
    w.bits = bits;
    w.group_size = group_size;
    w.zero_mode = zero_mode;
    w.dtype = dtype;
    w.m = m;
    w.k = k;
    if (bits == 4 || bits == 8) w.ldq = std::max<int64_t>(16, q_row_bytes(bits, std::max<int64_t>(k, 0)));
    const bool valid_groups = k >= 0 && (group_size == 0 || (is_pow2(group_size) && group_size >= 32));
    w.lds = valid_groups ? q_groups(w) : 0;
    w.ldz = zero_mode == GEMV_QZERO_SYMMETRIC ? 0 : w.lds;
    const gemv_status_t st = check_qmatrix(&w, "W");
    if (st == GEMV_STATUS_SUCCESS) *W = w;
    return st;
}

gemv_status_t gemv_quantized(const gemv_qmatrix_t *W, float alpha, const void *x, int64_t incx, float beta, void *y,
                             int64_t incy, void *workspace, size_t workspace_bytes, gemv_stream_t stream) {
    clear_error();
    if (!W) return set_error("W is NULL"), GEMV_STATUS_INVALID_POINTER;
    if (W->struct_size != sizeof(gemv_qmatrix_t)) return check_qmatrix(W, "W");
    gemv_args_t a = blas_args(GEMV_OP_N, (gemv_dtype_t)W->dtype, W->m, W->k, alpha, nullptr, std::max<int64_t>(1, W->k), 0,
                              x, incx, 0, beta, y, incy, 0, 1, workspace, workspace_bytes, stream);
    a.qweight = W;
    return gemv_ex(&a, nullptr);
}

gemv_status_t gemv_quantize(const gemv_qmatrix_t *W, const void *A, int64_t lda, gemv_stream_t s) {
    clear_error();
    return guarded("gemv_quantize", [&] { return convert_dense(QConvert::kQuantize, W, A, lda, s); });
}

gemv_status_t gemv_repack_gptq(const gemv_qmatrix_t *W, const int32_t *qweight, const int32_t *qzeros,
                               const void *scales, const int32_t *g_idx, int zero_offset, gemv_stream_t stream) {
    clear_error();
    return guarded("gemv_repack_gptq", [&] {
        return repack(QConvert::kGptq, W, qweight, qzeros, scales, g_idx, zero_offset, stream);
    });
}

gemv_status_t gemv_repack_awq(const gemv_qmatrix_t *W, const int32_t *qweight, const int32_t *qzeros,
                              const void *scales, gemv_stream_t stream) {
    clear_error();
    return guarded("gemv_repack_awq",
                   [&] { return repack(QConvert::kAwq, W, qweight, qzeros, scales, nullptr, 0, stream); });
}

gemv_status_t gemv_dequantize(const gemv_qmatrix_t *W, float *out, int64_t ldo, gemv_stream_t s) {
    clear_error();
    return guarded("gemv_dequantize", [&] { return convert_dense(QConvert::kDequantize, W, out, ldo, s); });
}

} // extern "C"
