// The variant registry: the one list of variants, their parameter ranges, the
// can_implement rule and the launch plan of each. The dispatcher, the C ABI enumeration
// (and through it pygemv, the tuner, the tests and the benchmark) all read this table.
#include <algorithm>

#include "internal.h"

namespace libgemv {

namespace {

enum SplitMode { kNoSplit, kSplitAtomic, kSplitTwoPass };

struct Entry {
    gemv_variant_info_t info;
    SplitMode split;
};

constexpr int kUnroll124 = (1 << 1) | (1 << 2) | (1 << 4);

// clang-format off
const Entry kRegistry[GEMV_VARIANT_COUNT] = {
    {{GEMV_VARIANT_THREAD_PER_ROW, "thread_per_row",
      "one thread a row; the naive baseline, good for tiny K",
      1, 1, 32, 1024, 1, 1, kUnroll124, 1, 0}, kNoSplit},
    {{GEMV_VARIANT_ROWS_PER_WARP, "rows_per_warp",
      "p = 2..16 threads a row, several rows a warp, shuffle reduction",
      2, 16, 2, 512, 1, 1, kUnroll124, 1, 0}, kNoSplit},
    {{GEMV_VARIANT_WARP_PER_ROW, "warp_per_row",
      "one warp a row, shuffle reduction",
      32, 32, 1, 32, 1, 1, kUnroll124, 1, 0}, kNoSplit},
    {{GEMV_VARIANT_BLOCK_PER_ROW, "block_per_row",
      "p = 64..1024 threads a row, shuffle then shared-memory reduction",
      64, 1024, 1, 16, 1, 1, kUnroll124, 1, 0}, kNoSplit},
    {{GEMV_VARIANT_SPLITK_ATOMIC, "splitk_atomic",
      "K split over blocks, slice sums added with fp32 atomics (not deterministic)",
      1, 1024, 1, 1024, 2, 1024, kUnroll124, 0, 1}, kSplitAtomic},
    {{GEMV_VARIANT_SPLITK_TWOPASS, "splitk_twopass",
      "K split over blocks, slice partials reduced in fixed order by a second kernel",
      1, 1024, 1, 1024, 2, 1024, kUnroll124, 1, 1}, kSplitTwoPass},
};
// clang-format on

bool is_pow2(int64_t v) { return v > 0 && (v & (v - 1)) == 0; }

int log2_int(int v) {
    int l = 0;
    while ((1 << l) < v) ++l;
    return l;
}

bool aligned16(const void *p) { return (reinterpret_cast<uintptr_t>(p) & 15u) == 0; }

// Elements per K slice for s requested slices: a multiple of kSliceGranule, so every
// slice starts 16-byte aligned when the row does.
int64_t slice_len(int64_t k, int s) {
    int64_t len = (k + s - 1) / s;
    len = (len + kSliceGranule - 1) / kSliceGranule * kSliceGranule;
    return std::min(len, k);
}

int slices(int64_t k, int64_t len) { return (int)((k + len - 1) / len); }

} // namespace

int variant_count() { return GEMV_VARIANT_COUNT; }

const gemv_variant_info_t *variant_info(int variant) {
    if (variant < 0 || variant >= GEMV_VARIANT_COUNT) return nullptr;
    return &kRegistry[variant].info;
}

gemv_status_t validate_config(const gemv_config_t &c) {
    const gemv_variant_info_t *v = variant_info(c.variant);
    if (!v) {
        set_error("config.variant = %d is not a variant id (0..%d)", c.variant, GEMV_VARIANT_COUNT - 1);
        return GEMV_STATUS_INVALID_VALUE;
    }
    const int p = c.threads_per_row, r = c.rows_per_block;
    if (!is_pow2(p) || p < v->threads_per_row_min || p > v->threads_per_row_max) {
        set_error("config.threads_per_row = %d: %s takes a power of two in [%d, %d]", p, v->name,
                  v->threads_per_row_min, v->threads_per_row_max);
        return GEMV_STATUS_INVALID_VALUE;
    }
    if (!is_pow2(r) || r < v->rows_per_block_min || r > v->rows_per_block_max) {
        set_error("config.rows_per_block = %d: %s takes a power of two in [%d, %d]", r, v->name,
                  v->rows_per_block_min, v->rows_per_block_max);
        return GEMV_STATUS_INVALID_VALUE;
    }
    // Whole warps (the shuffles assume full warps) and at most 1024 threads a block.
    if ((int64_t)p * r < 32 || (int64_t)p * r > 1024) {
        set_error("config: threads_per_row * rows_per_block = %lld must lie in [32, 1024]", (long long)p * r);
        return GEMV_STATUS_INVALID_VALUE;
    }
    if (c.unroll < 1 || c.unroll > 4 || !((v->unroll_mask >> c.unroll) & 1)) {
        set_error("config.unroll = %d: must be 1, 2 or 4", c.unroll);
        return GEMV_STATUS_INVALID_VALUE;
    }
    if ((int64_t)p * r > max_block_threads(c.unroll)) {
        set_error("config: unroll = %d allows at most %d threads a block (threads_per_row * rows_per_block = %lld)",
                  c.unroll, max_block_threads(c.unroll), (long long)p * r);
        return GEMV_STATUS_INVALID_VALUE;
    }
    if (c.vector_loads != 0 && c.vector_loads != 1) {
        set_error("config.vector_loads = %d: must be 0 or 1", c.vector_loads);
        return GEMV_STATUS_INVALID_VALUE;
    }
    if (c.x_in_smem != 0 && c.x_in_smem != 1) {
        set_error("config.x_in_smem = %d: must be 0 or 1", c.x_in_smem);
        return GEMV_STATUS_INVALID_VALUE;
    }
    if (c.split_k < v->split_k_min || c.split_k > v->split_k_max) {
        set_error("config.split_k = %d: %s takes [%d, %d]", c.split_k, v->name, v->split_k_min, v->split_k_max);
        return GEMV_STATUS_INVALID_VALUE;
    }
    return GEMV_STATUS_SUCCESS;
}

gemv_status_t can_implement(const gemv_config_t &c, const Problem &pb) {
    const gemv_variant_info_t *v = variant_info(c.variant);
    if (pb.op != GEMV_OP_N) {
        set_error("op = GEMV_OP_T: the transpose is not implemented yet");
        return GEMV_STATUS_NOT_SUPPORTED;
    }
    const size_t esz = dtype_size(pb.dtype);
    const int64_t chunk = kRegistry[c.variant].split == kNoSplit ? pb.k : slice_len(pb.k, c.split_k);
    if (c.vector_loads) {
        if (!aligned16(pb.A) || (pb.m > 1 && ((uint64_t)pb.lda * esz) % 16 != 0)) {
            set_error("%s with vector_loads needs A and every row 16-byte aligned (A = %p, lda = %lld)", v->name,
                      pb.A, (long long)pb.lda);
            return GEMV_STATUS_NOT_SUPPORTED;
        }
        if (!c.x_in_smem && (pb.incx != 1 || !aligned16(pb.x))) {
            set_error("%s with vector_loads and x read from global memory needs incx == 1 and x 16-byte aligned "
                      "(x = %p, incx = %lld); stage x in shared memory instead",
                      v->name, pb.x, (long long)pb.incx);
            return GEMV_STATUS_NOT_SUPPORTED;
        }
    }
    if (c.x_in_smem && (size_t)chunk * esz > max_x_smem_bytes(c.threads_per_row)) {
        set_error("%s with x_in_smem: a slice of x is %lld bytes, more than the %zu a block may stage", v->name,
                  (long long)(chunk * esz), max_x_smem_bytes(c.threads_per_row));
        return GEMV_STATUS_NOT_SUPPORTED;
    }
    return GEMV_STATUS_SUCCESS;
}

size_t workspace_needed(const gemv_config_t &c, const Problem &pb) {
    switch (kRegistry[c.variant].split) {
    case kSplitTwoPass: return (size_t)slices(pb.k, slice_len(pb.k, c.split_k)) * (size_t)pb.m * sizeof(float);
    case kSplitAtomic: return pb.dtype == GEMV_DTYPE_F32 ? 0 : (size_t)pb.m * sizeof(float);
    case kNoSplit: break;
    }
    return 0;
}

gemv_status_t launch(const gemv_config_t &c, const Problem &pb) {
    const SplitMode split = kRegistry[c.variant].split;
    RowLaunch L{};
    L.dtype = pb.dtype;
    L.vector_loads = c.vector_loads != 0;
    L.unroll = c.unroll;
    L.x_in_smem = c.x_in_smem != 0;
    RowArgs &a = L.args;
    a.A = pb.A;
    a.x = pb.x_first;
    a.y = pb.y_first;
    a.m = pb.m;
    a.k = pb.k;
    a.lda = pb.lda;
    a.incx = pb.incx;
    a.incy = pb.incy;
    a.alpha = pb.alpha;
    a.beta = pb.beta;
    a.p_log2 = log2_int(c.threads_per_row);
    a.rows_per_block = c.rows_per_block;
    a.k_chunk = split == kNoSplit ? pb.k : slice_len(pb.k, c.split_k);
    L.splits = slices(pb.k, a.k_chunk);
    // PDL (see common.cuh) pays where the grid is one wave or its blocks are long; with
    // many short blocks it was measured slower (fp16 65536x256, 2 KiB a block, 16384
    // blocks: 20.7 us with PDL, 13.5 us without), so such grids launch without it.
    const int threads = a.rows_per_block << a.p_log2;
    const int blocks_per_sm = std::clamp(2048 / threads, 1, 32); // resident at most (sm_90)
    const int64_t first_wave = (int64_t)sm_count(pb.device) * blocks_per_sm;
    const int64_t blocks = (pb.m + a.rows_per_block - 1) / a.rows_per_block * L.splits;
    const bool pdl = pb.pdl && (blocks <= first_wave ||
                                (int64_t)a.rows_per_block * a.k_chunk * (int64_t)dtype_size(pb.dtype) >= 4096);
    L.pdl = pdl;
    a.pdl = pdl;
    if (pdl && prefetch_kb_per_sm() > 0) {
        // Only blocks of the first wave start early under PDL; later blocks would fetch
        // the same lines twice, once as prefetch. Block-per-row kernels take the full
        // amount, the row-group kernels (short rows) half: measured best of 16/32/64 KiB.
        // At most half of a block's first step: a prefetch still in flight when the block's
        // own load comes may read the line twice (fp16 2048x2048, 128x1 blocks: whole-row
        // prefetch 5.3 us, half-row 4.8 us, none 4.8 us).
        const int kb = c.threads_per_row > 32 ? prefetch_kb_per_sm() : prefetch_kb_per_sm() / 2;
        const int64_t step_lines = a.rows_per_block * ((a.k_chunk * (int64_t)dtype_size(pb.dtype) + 127) / 128);
        a.prefetch_lines = (int)std::max<int64_t>(1, std::min<int64_t>(kb * 1024 / 128 / blocks_per_sm, step_lines / 2));
        a.prefetch_blocks = first_wave;
    }

    cudaError_t err = cudaSuccess;
    float *ws = static_cast<float *>(pb.workspace);
    switch (split) {
    case kNoSplit: a.epilogue = Epilogue::kStore; break;
    case kSplitTwoPass:
        a.epilogue = Epilogue::kPartial;
        a.acc = ws;
        break;
    case kSplitAtomic:
        a.epilogue = Epilogue::kAtomic;
        if (pb.dtype == GEMV_DTYPE_F32) {
            // Accumulate straight into y once beta has been applied to it.
            a.acc = static_cast<float *>(pb.y_first);
            a.acc_inc = pb.incy;
            if (pb.beta != 1.f) err = launch_scale_y(pb.dtype, pb.y_first, pb.m, pb.incy, pb.beta, pb.stream, pb.pdl);
        } else {
            // fp16/bf16 atomics would round every add: accumulate in fp32, convert once.
            a.acc = ws;
            a.acc_inc = 1;
            err = cudaMemsetAsync(ws, 0, (size_t)pb.m * sizeof(float), pb.stream);
        }
        break;
    }
    if (err == cudaSuccess) err = c.threads_per_row <= 32 ? launch_rowgroup(L, pb.stream) : launch_rowblock(L, pb.stream);
    if (err == cudaSuccess && split == kSplitTwoPass)
        err = launch_splitk_reduce(pb.dtype, ws, L.splits, pb.m, pb.alpha, pb.beta, pb.y_first, pb.incy, pb.stream, pb.pdl);
    if (err == cudaSuccess && split == kSplitAtomic && pb.dtype != GEMV_DTYPE_F32)
        err = launch_splitk_reduce(pb.dtype, ws, 1, pb.m, 1.f, pb.beta, pb.y_first, pb.incy, pb.stream, pb.pdl);
    if (err != cudaSuccess) {
        cudaGetLastError(); // launch errors are not sticky: leave none behind
        set_error("launching %s failed: %s (%s)", kRegistry[c.variant].info.name, cudaGetErrorString(err),
                  cudaGetErrorName(err));
        return GEMV_STATUS_CUDA_ERROR;
    }
    return GEMV_STATUS_SUCCESS;
}

} // namespace libgemv
