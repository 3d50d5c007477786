// The registry: the one list of operations. Each entry is an Operation (internal.h): its
// description (name, the problems it serves, parameter ranges), can_implement, workspace
// size, default config and launch. The dispatcher, the table, the C ABI enumeration (and
// through it pygemv, the tuner, the tests and the benchmark) all iterate this list; a new
// kernel family registers here and nowhere else.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <numeric>

#include "internal.h"
#include "launch_plan.h"

namespace libgemv {

DivideBy divide_by(uint64_t d) {
    int l = 0; // ceil(log2 d)
    while (l < 64 && (uint64_t(1) << l) < d) ++l;
    // magic = floor(2^64 * (2^l - d) / d) + 1, which fits 64 bits since 2^l - d < d.
    const unsigned __int128 two_l = (unsigned __int128)1 << l;
    const uint64_t magic = (uint64_t)((((unsigned __int128)(two_l - d)) << 64) / d) + 1;
    return {magic, l < 1 ? l : 1, l > 1 ? l - 1 : 0};
}

namespace {

enum SplitMode { kNoSplit = 0, kSplitAtomic = 1, kSplitTwoPass = 2 };

constexpr int kUnroll124 = (1 << 1) | (1 << 2) | (1 << 4);
constexpr uint32_t kAllTypes = (1u << GEMV_DTYPE_F32) | (1u << GEMV_DTYPE_F16) | (1u << GEMV_DTYPE_BF16);

bool is_pow2(int64_t v) { return v > 0 && (v & (v - 1)) == 0; }

int log2_int(int v) {
    int l = 0;
    while ((1 << l) < v) ++l;
    return l;
}

// Alignment to `bytes` (a power of two) of an address, and of a run of elements.
bool aligned_to(const void *p, unsigned bytes) { return (reinterpret_cast<uintptr_t>(p) & (bytes - 1)) == 0; }
bool multiple_of(int64_t elements, size_t esz, unsigned bytes) { return ((uint64_t)elements * esz) % bytes == 0; }
bool aligned16(const void *p) { return aligned_to(p, 16); }


// Elements per K slice for s requested slices: a multiple of kSliceGranule, so every
// slice starts 16-byte aligned when the row does.
} // namespace

bool rows_aligned_to(const Problem &pb, unsigned bytes) {
    const size_t esz = dtype_size(pb.dtype());
    return aligned_to(pb.A, bytes) && (pb.m <= 1 || multiple_of(pb.lda, esz, bytes)) &&
           (!pb.batched() || multiple_of(pb.stride_a, esz, bytes));
}
bool rows_aligned16(const Problem &pb) { return rows_aligned_to(pb, 16); }
bool qmma_x_in_place_ok(const Problem &pb) {
    return pb.incx == 1 && aligned_to(pb.x_first, 16) && !pb.qw.perm && pb.k <= ((int64_t)1 << 36);
}

int64_t split_slice_len(int64_t k, int s) {
    int64_t len = (k + s - 1) / s;
    len = (len + kSliceGranule - 1) / kSliceGranule * kSliceGranule;
    return std::min(len, k);
}

namespace {

int slices(int64_t k, int64_t len) { return (int)((k + len - 1) / len); }

// Blocks of `threads` threads resident on an SM at once at `regs` registers a thread (sm_90:
// 2048 threads, 64K registers), at least one.
int resident_blocks(int threads, int regs) { return std::max(1, std::min(2048 / threads, 65536 / (threads * regs))); }

// 128-byte lines of prefetch each of per_sm blocks gets of kb KiB an SM.
int64_t prefetch_lines_a_block(int64_t per_sm, int kb = prefetch_kb_per_sm()) {
    return (int64_t)kb * 1024 / 128 / per_sm;
}

// Prefetch before the PDL wait, into a launch's prefetch_lines and prefetch_blocks (the dense
// and the quantized arguments alike): only the first wave's blocks (per_sm an SM) start
// early, so only they ask (later blocks would fetch their lines twice); each asks for at most
// `wanted` lines of its first step, within its share of kb KiB an SM, and at least one.
template <typename Args>
void plan_first_wave_prefetch(Args &a, const Problem &pb, int per_sm, int64_t wanted, int kb = prefetch_kb_per_sm()) {
    a.prefetch_lines = (int)std::max<int64_t>(1, std::min(prefetch_lines_a_block(per_sm, kb), wanted));
    a.prefetch_blocks = (int64_t)sm_count(pb.device) * per_sm;
}

// PDL (see common.cuh) pays where the grid is one wave or its blocks are long; with many
// short blocks it was measured slower (fp16 65536x256, 2 KiB a block, 16384 blocks: 20.7 us
// with PDL, 13.5 us without), so such grids launch without it.
bool pdl_pays(const Problem &pb, int64_t blocks, int threads, int64_t block_bytes) {
    const int64_t first_wave = (int64_t)sm_count(pb.device) * std::clamp(2048 / threads, 1, 32); // resident (sm_90)
    return pb.pdl && (blocks <= first_wave || block_bytes >= 4096);
}

// n floats, saturated at SIZE_MAX: a size that cannot be allocated fails the workspace check
// instead of wrapping to a small one (2^52 rows x 1024 slices x 4 bytes is 2^64).
size_t float_bytes(unsigned __int128 n) {
    const unsigned __int128 b = n * sizeof(float);
    return b > SIZE_MAX ? SIZE_MAX : (size_t)b;
}

// op T partials: a float per column of each slice and product.
size_t op_t_partials_bytes(int slices, const Problem &pb) {
    return float_bytes((unsigned __int128)(unsigned)slices * (uint64_t)pb.k * (uint64_t)pb.batch);
}

// ---- op N: the row operations (rowgroup.cu, rowblock.cu) -------------------------------

gemv_status_t rows_can_implement(const Operation &op, const gemv_config_t &c, const Problem &pb) {
    const char *name = op.info.name;
    const size_t esz = dtype_size(pb.dtype());
    const int64_t chunk = op.split_mode == kNoSplit ? pb.k : split_slice_len(pb.k, c.split_k);
    // Packs of aligned rows (16 or 8 bytes): A, every row and an x read from global memory
    // aligned to the pack.
    if (c.vector_loads == kLoadsAligned || c.vector_loads == kLoadsAligned8) {
        const unsigned bytes = c.vector_loads == kLoadsAligned ? 16 : 8;
        if (!rows_aligned_to(pb, bytes)) {
            set_error("%s with vector_loads = %d needs A and every row %u-byte aligned (A = %p, lda = %lld%s); "
                      "vector_loads = 2 realigns rows that start anywhere",
                      name, c.vector_loads, bytes, pb.A, (long long)pb.lda, pb.batched() ? ", and stride_a" : "");
            return GEMV_STATUS_NOT_SUPPORTED;
        }
        if (!c.x_in_smem &&
            (pb.incx != 1 || !aligned_to(pb.x, bytes) || (pb.batched() && !multiple_of(pb.stride_x, esz, bytes)))) {
            set_error("%s with vector_loads = %d and x read from global memory needs incx == 1 and x %u-byte aligned "
                      "(x = %p, incx = %lld%s); stage x in shared memory or realign (vector_loads = 2) instead",
                      name, c.vector_loads, bytes, pb.x, (long long)pb.incx, pb.batched() ? ", and stride_x" : "");
            return GEMV_STATUS_NOT_SUPPORTED;
        }
    }
    if (c.vector_loads == kLoadsRealigned && !c.x_in_smem && pb.incx != 1) {
        set_error("%s with vector_loads = 2 and x read from global memory needs incx == 1 (incx = %lld); stage x "
                  "in shared memory instead", name, (long long)pb.incx);
        return GEMV_STATUS_NOT_SUPPORTED;
    }
    // A block stages one x, in one phase, for all the rows it walks, which in a batch span products.
    if (c.vector_loads == kLoadsPhased && c.x_in_smem && pb.batched()) {
        set_error("%s with vector_loads = 3 (phased rows) and x_in_smem computes single products; x read through "
                  "L1 (x_in_smem = 0) takes batches", name);
        return GEMV_STATUS_NOT_SUPPORTED;
    }
    // Phased rows reading x through L1 shift its aligned packs into the rows' phase, and
    // count a slice's packs in 32 bits.
    if (c.vector_loads == kLoadsPhased && !c.x_in_smem && (pb.incx != 1 || chunk > kMaxPhasedSliceElements)) {
        set_error("%s with vector_loads = 3 and x read from global memory needs incx == 1 and slices of at most %lld "
                  "elements (incx = %lld, slice %lld); stage x in shared memory instead",
                  name, (long long)kMaxPhasedSliceElements, (long long)pb.incx, (long long)chunk);
        return GEMV_STATUS_NOT_SUPPORTED;
    }
    // x's phase copies: one copy of all of x a phase, in a 16-byte aligned workspace.
    if (c.vector_loads == kLoadsPhasedCopies) {
        if (pb.batched()) {
            set_error("%s with vector_loads = 5 (x's phase copies) computes single products; vector_loads = 2 "
                      "realigns the rows of a batch", name);
            return GEMV_STATUS_NOT_SUPPORTED;
        }
        if (pb.k > kMaxPhasedCopiesElements) {
            set_error("%s with vector_loads = 5 takes K of at most %lld elements (K = %lld); vector_loads = 3 "
                      "takes any K", name, (long long)kMaxPhasedCopiesElements, (long long)pb.k);
            return GEMV_STATUS_NOT_SUPPORTED;
        }
        if (pb.workspace && !aligned16(pb.workspace)) {
            set_error("%s with vector_loads = 5 keeps x's phase copies in the workspace, which must be 16-byte "
                      "aligned (workspace = %p)", name, pb.workspace);
            return GEMV_STATUS_NOT_SUPPORTED;
        }
    }
    if (c.x_in_smem) {
        const size_t staged = staged_x_bytes(chunk, esz, c.vector_loads);
        if (staged > max_x_smem_bytes(c.threads_per_row)) {
            set_error("%s with x_in_smem: a slice of x takes %zu bytes staged, more than the %zu a block may stage",
                      name, staged, max_x_smem_bytes(c.threads_per_row));
            return GEMV_STATUS_NOT_SUPPORTED;
        }
        // A block stages one x and walks rows of several products: only one x may exist.
        if (pb.batched() && pb.stride_x != 0) {
            set_error("%s with x_in_smem needs one x for the whole batch (stride_x == 0)", name);
            return GEMV_STATUS_NOT_SUPPORTED;
        }
    }
    return GEMV_STATUS_SUCCESS;
}

// fp32 atomics add straight into a single fp32 y; otherwise into an fp32 accumulator.
bool atomic_into_y(const Problem &pb) { return pb.dtype() == GEMV_DTYPE_F32 && !pb.batched(); }

size_t rows_workspace(const Operation &op, const gemv_config_t &c, const Problem &pb) {
    const unsigned __int128 rows = (unsigned __int128)pb.m * (uint64_t)pb.batch;
    if (c.vector_loads == kLoadsPhasedCopies) { // x in each of the 16 / esz phases
        const size_t esz = dtype_size(pb.dtype());
        return (size_t)x_phase_stride(pb.k, esz) * (16 / esz) * esz;
    }
    switch (op.split_mode) {
    case kSplitTwoPass: return float_bytes(rows * (unsigned)slices(pb.k, split_slice_len(pb.k, c.split_k)));
    case kSplitAtomic: return atomic_into_y(pb) ? 0 : float_bytes(rows);
    default: return 0;
    }
}

gemv_status_t launch_failed(const Operation &op, cudaError_t err) {
    cudaGetLastError(); // launch errors are not sticky: leave none behind
    set_error("launching %s failed: %s (%s)", op.info.name, cudaGetErrorString(err), cudaGetErrorName(err));
    return GEMV_STATUS_CUDA_ERROR;
}

// After a kernel that wrote `splits` slices of partials to acc (none when acc is null): their
// fixed-order reduce into y, and the call's status.
gemv_status_t finish_partials(const Operation &op, cudaError_t err, float *acc, int splits, const Problem &pb) {
    if (err == cudaSuccess && acc)
        err = launch_splitk_reduce(pb.dtype(), acc, splits, output_map(pb), pb.alpha, pb.beta, pb.stream, pb.pdl);
    return err == cudaSuccess ? GEMV_STATUS_SUCCESS : launch_failed(op, err);
}

gemv_status_t rows_launch(const Operation &op, const gemv_config_t &c, const Problem &pb) {
    const int split = op.split_mode;
    const size_t esz = dtype_size(pb.dtype());
    RowLaunch L{};
    L.dtype = pb.dtype();
    L.loads = c.vector_loads;
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
    a.rows = pb.m * pb.batch;
    a.m_div = divide_by((uint64_t)std::max<int64_t>(pb.m, 1));
    a.stride_a = pb.batched() ? pb.stride_a : 0;
    a.stride_x = pb.batched() ? pb.stride_x : 0;
    a.stride_y = pb.batched() ? pb.stride_y : 0;
    a.alpha = pb.alpha;
    a.beta = pb.beta;
    a.p_log2 = log2_int(c.threads_per_row);
    a.rows_per_block = c.rows_per_block;
    a.k_chunk = split == kNoSplit ? pb.k : split_slice_len(pb.k, c.split_k);
    L.splits = slices(pb.k, a.k_chunk);
    const int threads = a.rows_per_block << a.p_log2;
    const int blocks_per_sm = std::clamp(2048 / threads, 1, 32); // resident at most (sm_90)
    a.period = c.vector_loads == kLoadsPhased ? phase_period(pb.lda, esz) : 1;
    if (c.x_in_smem && (c.vector_loads == kLoadsPhased || c.vector_loads == kLoadsScalar)) {
        // One wave of blocks (by threads and by the staged x, shared by the K slices), each
        // staging x once for the rows it walks (of its phase class when phased): a block
        // stages before its first load of A. Scalar rows of 17-18 elements ran 3-5% faster
        // so (fp16 1048576x17 22.0 -> 21.3 us); 16-byte rows ran slower (1048576x32 26.1
        // -> 27.0) and keep a block a step (benchmarks/NOTES.md section 23).
        const size_t per_block = x_smem_bytes(L) + 1024; // and the 1 KB an SM reserves a block
        const int by_smem = (int)std::max<size_t>(1, kSmemPerSm / per_block);
        const int64_t wave = (int64_t)sm_count(pb.device) * std::min(blocks_per_sm, by_smem);
        L.max_blocks = std::max<int64_t>(a.period, wave / L.splits);
    }
    const int64_t blocks = (int64_t)row_plan(L).grid.x * L.splits;
    const bool pdl = pdl_pays(pb, blocks, threads, (int64_t)a.rows_per_block * a.k_chunk * (int64_t)esz);
    L.pdl = pdl;
    a.pdl = pdl;
    if (pdl && prefetch_kb_per_sm() > 0 && !pb.batched()) {
        // Only blocks of the first wave start early under PDL; later blocks would fetch
        // the same lines twice, once as prefetch. Block-per-row kernels take the full
        // amount, the row-group kernels (short rows) half: measured best of 16/32/64 KiB.
        // At most half of a block's first step: a prefetch still in flight when the block's
        // own load comes may read the line twice (fp16 2048x2048, 128x1 blocks: whole-row
        // prefetch 5.3 us, half-row 4.8 us, none 4.8 us). The prefetch addresses rows of
        // product 0 only, so batches skip it.
        // x's phase copies: twice that, while the pre-pass runs (fp16 8191 x 8191 46.4 us
        // against 47.1; none: 48.5; benchmarks/experiments/phase_copies_prepass.sh).
        const int kb = c.vector_loads == kLoadsPhasedCopies ? 2 * prefetch_kb_per_sm()
                       : c.threads_per_row > 32            ? prefetch_kb_per_sm()
                                                           : prefetch_kb_per_sm() / 2;
        const int64_t step_lines = a.rows_per_block * ((a.k_chunk * (int64_t)esz + 127) / 128);
        plan_first_wave_prefetch(a, pb, blocks_per_sm, step_lines / 2, kb);
    }

    const OutputMap ymap = output_map(pb);
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
        if (atomic_into_y(pb)) {
            // Accumulate straight into y once beta has been applied to it.
            a.acc = static_cast<float *>(pb.y_first);
            a.acc_inc = pb.incy;
            if (pb.beta != 1.f) err = launch_scale_y(pb.dtype(), ymap, pb.beta, pb.stream, pb.pdl);
        } else {
            // fp16/bf16 atomics would round every add: accumulate in fp32, convert once.
            a.acc = ws;
            a.acc_inc = 1;
            err = cudaMemsetAsync(ws, 0, (size_t)a.rows * sizeof(float), pb.stream);
        }
        break;
    }
    if (c.vector_loads == kLoadsPhasedCopies) { // the row kernel reads x's copies (unit stride)
        a.x_phase_stride = x_phase_stride(pb.k, esz);
        err = launch_x_phase_copies(pb.dtype(), pb.x_first, pb.incx, pb.k, pb.workspace, a.x_phase_stride, pb.stream,
                                    pb.pdl);
        a.x = pb.workspace;
        a.incx = 1;
    }
    if (err == cudaSuccess) err = c.threads_per_row <= 32 ? launch_rowgroup(L, pb.stream) : launch_rowblock(L, pb.stream);
    if (err == cudaSuccess && split == kSplitTwoPass)
        err = launch_splitk_reduce(pb.dtype(), ws, L.splits, ymap, pb.alpha, pb.beta, pb.stream, pb.pdl);
    if (err == cudaSuccess && split == kSplitAtomic && !atomic_into_y(pb))
        err = launch_splitk_reduce(pb.dtype(), ws, 1, ymap, 1.f, pb.beta, pb.stream, pb.pdl);
    return err == cudaSuccess ? GEMV_STATUS_SUCCESS : launch_failed(op, err);
}

// ---- op N: the row stream (rowstream.cu) ----------------------------------------------

gemv_status_t stream_can_implement(const Operation &op, const gemv_config_t &c, const Problem &pb) {
    const char *name = op.info.name;
    const size_t esz = dtype_size(pb.dtype());
    const int64_t n = 16 / (int64_t)esz;
    if (c.vector_loads == kLoadsAligned && !rows_aligned16(pb)) {
        set_error("%s with vector_loads = 1 needs A and every row 16-byte aligned (A = %p, lda = %lld); "
                  "vector_loads = 2 streams rows that start anywhere", name, pb.A, (long long)pb.lda);
        return GEMV_STATUS_NOT_SUPPORTED;
    }
    // One row boundary a pack at most (the sums it leaves are for two rows).
    if (pb.m > 1 && pb.lda < n) {
        set_error("%s needs lda >= %lld (a 16-byte pack of %s) when m > 1 (lda = %lld)", name, (long long)n,
                  dtype_name(pb.dtype()), (long long)pb.lda);
        return GEMV_STATUS_NOT_SUPPORTED;
    }
    const int threads = c.threads_per_row * c.rows_per_block;
    const int64_t lda = std::max(pb.lda, n);
    if (stream_rows_per_step(lda, esz, threads, c.unroll) < 1) {
        set_error("%s: a step of %d threads x %d packs holds no whole row of lda = %lld %s elements", name, threads,
                  c.unroll, (long long)pb.lda, dtype_name(pb.dtype()));
        return GEMV_STATUS_NOT_SUPPORTED;
    }
    if (stream_smem_bytes(lda, esz, threads, c.unroll) > kMaxSmemBytes) {
        set_error("%s: x over lda = %lld and the pack sums of a step take %zu bytes of shared memory, more than "
                  "the %zu a block may use", name, (long long)pb.lda, stream_smem_bytes(lda, esz, threads, c.unroll),
                  kMaxSmemBytes);
        return GEMV_STATUS_NOT_SUPPORTED;
    }
    return GEMV_STATUS_SUCCESS;
}

size_t no_workspace(const Operation &, const gemv_config_t &, const Problem &) { return 0; }

gemv_status_t stream_launch(const Operation &op, const gemv_config_t &c, const Problem &pb) {
    const size_t esz = dtype_size(pb.dtype());
    const int64_t n = 16 / (int64_t)esz;
    StreamLaunch L{};
    L.dtype = pb.dtype();
    L.loads = c.vector_loads;
    L.unroll = c.unroll;
    L.threads = c.threads_per_row * c.rows_per_block;
    StreamArgs &a = L.args;
    a.A = pb.A;
    a.x = pb.x_first;
    a.y = pb.y_first;
    a.m = pb.m;
    a.k = pb.k;
    a.lda = std::max(pb.lda, n); // one row (m == 1): its lda is never stepped over
    a.incx = pb.incx;
    a.incy = pb.incy;
    a.a_end = (pb.m - 1) * pb.lda + pb.k;
    a.a_phase = (int)((reinterpret_cast<uintptr_t>(pb.A) & 15u) / esz);
    a.rows_per_step = (int)std::min<int64_t>(stream_rows_per_step(a.lda, esz, L.threads, c.unroll), pb.m);
    a.steps = (pb.m + a.rows_per_step - 1) / a.rows_per_step;
    a.x_packs = x_stream_packs(a.lda, esz);
    a.p_log2 = log2_int(c.threads_per_row);
    a.alpha = pb.alpha;
    a.beta = pb.beta;
    a.pdl = pb.pdl;
    // A wave of blocks, each staging x once and then walking steps.
    L.blocks = std::min<int64_t>(a.steps, (int64_t)sm_count(pb.device) * std::max(1, 2048 / L.threads));
    const cudaError_t err = launch_rowstream(L, pb.stream);
    return err == cudaSuccess ? GEMV_STATUS_SUCCESS : launch_failed(op, err);
}

// ---- op N: row tiles (rowtile.cu) --------------------------------------------------------

// Slots a K slice for s requested slices.
int64_t tile_slice(const gemv_config_t &c, const Problem &pb) {
    const int64_t q = tile_slots(pb.k, dtype_size(pb.dtype()), c.vector_loads == kLoadsRealigned);
    return (q + c.split_k - 1) / c.split_k;
}
int tile_splits(const gemv_config_t &c, const Problem &pb) {
    return slices(tile_slots(pb.k, dtype_size(pb.dtype()), c.vector_loads == kLoadsRealigned), tile_slice(c, pb));
}

// x is read as 16-byte packs of a contiguous x (aligned with aligned rows, any phase when
// realigned); rows_per_block * unroll packs in flight were checked with the ranges.
gemv_status_t tile_can_implement(const Operation &op, const gemv_config_t &c, const Problem &pb) {
    const char *name = op.info.name;
    if (pb.incx != 1) {
        set_error("%s reads x as 16-byte packs and needs incx == 1 (incx = %lld)", name, (long long)pb.incx);
        return GEMV_STATUS_NOT_SUPPORTED;
    }
    if (c.vector_loads == kLoadsAligned && (!rows_aligned16(pb) || !aligned16(pb.x))) {
        set_error("%s with vector_loads = 1 needs A, every row and x 16-byte aligned (A = %p, lda = %lld, x = %p); "
                  "vector_loads = 2 takes rows and x that start anywhere", name, pb.A, (long long)pb.lda, pb.x);
        return GEMV_STATUS_NOT_SUPPORTED;
    }
    return GEMV_STATUS_SUCCESS;
}

size_t tile_workspace(const Operation &, const gemv_config_t &c, const Problem &pb) {
    const int s = tile_splits(c, pb);
    return s > 1 ? float_bytes((unsigned __int128)pb.m * (unsigned)s) : 0;
}

gemv_status_t tile_launch(const Operation &op, const gemv_config_t &c, const Problem &pb) {
    TileLaunch L{};
    L.dtype = pb.dtype();
    L.loads = c.vector_loads;
    L.rows = c.rows_per_block;
    L.unroll = c.unroll;
    L.threads = c.threads_per_row;
    L.splits = tile_splits(c, pb);
    TileArgs &a = L.args;
    a.A = pb.A;
    a.x = pb.x_first;
    a.y = pb.y_first;
    a.m = pb.m;
    a.k = pb.k;
    a.lda = pb.lda;
    a.incy = pb.incy;
    a.tiles = (pb.m + c.rows_per_block - 1) / c.rows_per_block;
    a.slots = tile_slots(pb.k, dtype_size(pb.dtype()), c.vector_loads == kLoadsRealigned);
    a.slice = tile_slice(c, pb);
    a.alpha = pb.alpha;
    a.beta = pb.beta;
    a.acc = L.splits > 1 ? static_cast<float *>(pb.workspace) : nullptr;
    // One wave (up to 8 blocks of 128 threads an SM at 64 registers): its slowest block's
    // edge slots are the critical path (fp32 66 x 32383, 17 tiles x 33 slices: 7.7 us
    // loading and masking in turn, 6.7 issuing first). Realigned fp32 tiles of 4 rows hold 79
    // registers so, 6 blocks an SM: the dispatcher's split stays within that wave
    // (dispatch.cpp tile_blocks_an_sm); a grid of 7-8 an SM runs two (NOTES.md section 86).
    const int64_t blocks = mul_sat(a.tiles, L.splits);
    L.issue_first = blocks <= 8 * (int64_t)sm_count(pb.device);
    L.pdl = pdl_pays(pb, blocks, L.threads, a.slice * 16 * c.rows_per_block);
    a.pdl = L.pdl;
    return finish_partials(op, launch_rowtile(L, pb.stream), a.acc, L.splits, pb);
}

// The operands of a kernel's args (ColumnArgs, TStreamArgs, MmaRowArgs): x and y at their logical
// element 0, batch strides only for a batch.
template <typename Args> void set_operands(Args &a, const Problem &pb) {
    a.A = pb.A;
    a.x = pb.x_first;
    a.y = pb.y_first;
    a.m = pb.m;
    a.k = pb.k;
    a.lda = pb.lda;
    a.incx = pb.incx;
    a.incy = pb.incy;
    a.batch = pb.batch;
    a.stride_a = pb.batched() ? pb.stride_a : 0;
    a.stride_x = pb.batched() ? pb.stride_x : 0;
    a.stride_y = pb.batched() ? pb.stride_y : 0;
    a.alpha = pb.alpha;
    a.beta = pb.beta;
}

// ---- op N: row tiles on the tensor cores (rowmma.cu) -------------------------------------

// x in whole aligned packs as it lies: contiguous, 16-byte aligned, and so is every product's.
bool mma_x_in_place(const Problem &pb) {
    return pb.incx == 1 && aligned16(pb.x) && (!pb.batched() || multiple_of(pb.stride_x, dtype_size(pb.dtype()), 16));
}
// The products whose x row_mma gathers: one where the batch shares x (stride_x 0).
int64_t mma_x_products(const Problem &pb) { return pb.batched() && pb.stride_x != 0 ? pb.batch : 1; }

// Whole aligned packs of A: A, every row and product, and K. Any other x is gathered first,
// contiguous, into the workspace (x_gather: K elements a product, K whole packs).
gemv_status_t mma_rows_can_implement(const Operation &op, const gemv_config_t &, const Problem &pb) {
    const size_t esz = dtype_size(pb.dtype());
    if (!rows_aligned16(pb) || !multiple_of(pb.k, esz, 16)) {
        set_error("%s needs A, every row and K in whole 16-byte packs (A = %p, lda = %lld, K = %lld%s)", op.info.name,
                  pb.A, (long long)pb.lda, (long long)pb.k, pb.batched() ? ", and stride_a" : "");
        return GEMV_STATUS_NOT_SUPPORTED;
    }
    if (!mma_x_in_place(pb) && pb.workspace && !aligned16(pb.workspace)) {
        set_error("%s gathers an x that is not in aligned packs (x = %p, incx = %lld) into the workspace, which must "
                  "be 16-byte aligned (workspace = %p)", op.info.name, pb.x, (long long)pb.incx, pb.workspace);
        return GEMV_STATUS_NOT_SUPPORTED;
    }
    return GEMV_STATUS_SUCCESS;
}

size_t mma_rows_workspace(const Operation &, const gemv_config_t &, const Problem &pb) {
    if (mma_x_in_place(pb)) return 0;
    const unsigned __int128 bytes = (unsigned __int128)mma_x_products(pb) * (uint64_t)pb.k * dtype_size(pb.dtype());
    return bytes > SIZE_MAX ? SIZE_MAX : (size_t)bytes;
}

gemv_status_t mma_rows_launch(const Operation &op, const gemv_config_t &c, const Problem &pb) {
    MmaRowLaunch L{};
    L.dtype = pb.dtype();
    L.warps = c.rows_per_block;
    L.unroll = c.unroll;
    MmaRowArgs &a = L.args;
    set_operands(a, pb);
    cudaError_t err = cudaSuccess;
    if (!mma_x_in_place(pb)) { // x gathered into the workspace (can_implement), read from there
        err = launch_x_gather(pb.dtype(), pb.x_first, pb.incx, a.stride_x, pb.k, mma_x_products(pb), pb.workspace,
                              pb.stream, pb.pdl);
        a.x = pb.workspace;
        a.incx = 1;
        a.stride_x = mma_x_products(pb) > 1 ? pb.k : 0;
    }
    a.tiles_per_product = (pb.m + kMmaTileRows - 1) / kMmaTileRows;
    a.tiles = mul_sat(a.tiles_per_product, pb.batch);
    a.tile_div = divide_by((uint64_t)a.tiles_per_product);
    L.blocks = (a.tiles + L.warps - 1) / L.warps;
    a.pdl = pdl_pays(pb, L.blocks, 32 * L.warps, a.k * (int64_t)dtype_size(pb.dtype()) * kMmaTileRows * L.warps);
    if (err == cudaSuccess) err = launch_rowmma(L, pb.stream);
    return err == cudaSuccess ? GEMV_STATUS_SUCCESS : launch_failed(op, err);
}

// ---- op N, quantized weights: the quantized rows (qrows.cu) ------------------------------

// Columns a K slice: a multiple of the operation's granule (q_rows: a pack's codes; q_mma: a
// step of 128 columns, so that a step lies in one group).
int64_t q_granule(const Operation &op, const Problem &pb) {
    return op.info.variant == GEMV_VARIANT_Q_ROWS ? q_pack_codes(pb.qw.bits) : 128;
}
int64_t q_slice_len(const Operation &op, const Problem &pb, int s) {
    const int64_t g = q_granule(op, pb), units = (pb.k + g - 1) / g;
    return (units + s - 1) / s * g;
}
int q_slices(const Operation &op, const Problem &pb, int s) { return slices(pb.k, q_slice_len(op, pb, s)); }

// Any range-valid config runs any quantized problem: a slice longer than shared memory
// holds is staged a chunk at a time.
gemv_status_t q_can_implement(const Operation &, const gemv_config_t &, const Problem &) { return GEMV_STATUS_SUCCESS; }

size_t q_workspace(const Operation &op, const gemv_config_t &c, const Problem &pb) {
    const int s = q_slices(op, pb, c.split_k);
    return s > 1 ? float_bytes((unsigned __int128)pb.m * (unsigned)s) : 0;
}

// The launch of a quantized operation: its args, slices and one wave of blocks over row
// tiles of rows_per_tile rows (a block stages its slice of x once and walks tiles).
QLaunch q_plan(const Operation &op, const gemv_config_t &c, const Problem &pb, int64_t rows_per_tile) {
    const gemv_qmatrix_t &w = pb.qw;
    QLaunch L{};
    L.dtype = pb.dtype();
    L.bits = w.bits;
    L.zero_mode = w.zero_mode;
    L.rows = c.unroll;
    QArgs &a = L.args;
    a.q = static_cast<const uint8_t *>(w.qweight);
    a.scales = w.scales;
    a.zeros = w.zeros;
    a.perm = w.perm;
    a.x = pb.x_first;
    a.y = pb.y_first;
    a.m = pb.m;
    a.k = pb.k;
    a.ldq = w.ldq;
    a.lds = w.lds;
    a.ldz = w.ldz;
    a.incx = pb.incx;
    a.incy = pb.incy;
    a.slice = q_slice_len(op, pb, c.split_k);
    a.chunk = kQMaxSlice;
    a.gs_log2 = w.group_size ? log2_int(w.group_size) : 62;
    a.p_log2 = log2_int(c.threads_per_row);
    a.teams = c.rows_per_block;
    a.alpha = pb.alpha;
    a.beta = pb.beta;
    a.pdl = pb.pdl;
    L.splits = q_slices(op, pb, c.split_k);
    a.acc = L.splits > 1 ? static_cast<float *>(pb.workspace) : nullptr;
    const int threads = c.threads_per_row * c.rows_per_block;
    const int64_t tiles = (pb.m + rows_per_tile - 1) / rows_per_tile;
    const int per_sm = std::max(1, std::min(2048 / threads, (int)(kSmemPerSm / std::max<size_t>(1024, q_smem_bytes(a.slice)))));
    L.blocks = std::min<int64_t>(tiles, (int64_t)sm_count(pb.device) * per_sm / L.splits + 1);
    return L;
}

gemv_status_t q_finish(const Operation &op, const QLaunch &L, cudaError_t err, const Problem &pb) {
    return finish_partials(op, err, L.args.acc, L.splits, pb);
}

// Tiles of codes q_mma_x_held's first-wave blocks prefetch before the PDL wait
// (QArgs::prefetch_tiles; q_rows prefetches its first packs while it is not 0);
// GEMV_Q_PREFETCH overrides it (0 turns both off). NOTES.md section 35.
int q_prefetch_tiles() {
    static const int n = [] {
        const char *e = std::getenv("GEMV_Q_PREFETCH");
        return e ? std::clamp(std::atoi(e), 0, 64) : 1;
    }();
    return n;
}
// Whether a quantized launch of pb may prefetch before its PDL wait at all.
bool q_prefetch_on(const Problem &pb) { return pb.pdl && prefetch_kb_per_sm() > 0 && q_prefetch_tiles() > 0; }

// 128-byte lines of a packed row of codes.
int64_t q_row_lines(const Problem &pb) { return (q_row_bytes(pb.qw.bits, pb.k) + 127) / 128; }

gemv_status_t q_launch(const Operation &op, const gemv_config_t &c, const Problem &pb) {
    QLaunch L = q_plan(op, c, pb, (int64_t)c.rows_per_block * c.unroll);
    if (q_prefetch_on(pb) && L.splits == 1) {
        // One wave of blocks (q_plan), each asking for its first tile's first packs, within
        // its share of the per-SM amount. Split grids (small M) ran 5-20% slower with it
        // (int8 256 x 4096 4.92 -> 5.57 us, bf16 float zeros 384 x 11008 9.47 -> 11.02) where
        // unsplit walks gained (int8 38347 x 1920 40.5 -> 37.5; NOTES.md section 35).
        const int64_t per_sm = std::max<int64_t>(1, L.blocks / sm_count(pb.device));
        const int64_t lines = (c.threads_per_row * 16 + 127) / 128;
        const int64_t budget_rows = prefetch_lines_a_block(per_sm) / lines;
        L.args.prefetch_rows = (int)std::min<int64_t>((int64_t)c.rows_per_block * c.unroll, budget_rows);
    }
    return q_finish(op, L, launch_qrows(L, pb.stream), pb);
}

// Why a kernel that reads x in place (qmma_x_in_place_ok) refuses pb; `how` names the config.
gemv_status_t refuse_x_in_place(const Operation &op, const Problem &pb, const char *how) {
    if (pb.k > ((int64_t)1 << 36))
        set_error("%s%s takes K up to 2^36 (got %lld)", op.info.name, how, (long long)pb.k);
    else
        set_error("%s%s reads x in place: it needs incx = 1 (got %lld), x 16-byte aligned (x = %p) and no "
                  "act-order perm%s",
                  op.info.name, how, (long long)pb.incx, pb.x_first, pb.qw.perm ? " (perm is set)" : "");
    return GEMV_STATUS_NOT_SUPPORTED;
}

// Tensor cores: a tile of 16 rows, threads_per_row / 32 warps taking its steps of 128 columns
// (each in one group) in turn. Float zeros (fma(q, s, z) per code) and groups under 128 stay
// on q_rows.
gemv_status_t qmma_can_implement(const Operation &op, const gemv_config_t &c, const Problem &pb) {
    if (pb.qw.zero_mode == GEMV_QZERO_FLOAT) {
        set_error("%s computes symmetric and integer zeros; float zeros (fma(q, s, z)) take q_rows", op.info.name);
        return GEMV_STATUS_NOT_SUPPORTED;
    }
    if ((int64_t)c.threads_per_row * c.rows_per_block > kQmmaMaxThreads) {
        set_error("%s runs at most %d threads a block: threads_per_row * rows_per_block = %d", op.info.name,
                  kQmmaMaxThreads, c.threads_per_row * c.rows_per_block);
        return GEMV_STATUS_NOT_SUPPORTED;
    }
    if (q_groups_under_a_step(pb.qw)) {
        set_error("%s takes groups of 128 columns or more (or one a row); group_size = %d takes q_rows", op.info.name,
                  pb.qw.group_size);
        return GEMV_STATUS_NOT_SUPPORTED;
    }
    // Unstaged, x is read in place as 16-byte packs (its step counters are 32-bit).
    if (!c.x_in_smem && !qmma_x_in_place_ok(pb)) return refuse_x_in_place(op, pb, " with x_in_smem = 0");
    return GEMV_STATUS_SUCCESS;
}

// x held in registers: int4 in fp16 or bf16, any zero mode and group size (groups of 32 and
// 64 in B's columns); int8 in fp16 (1024 + q is exact there, not in bf16) with groups of 64
// up (a 64-column step in one group); x in place (as q_mma's x_in_smem = 0).
gemv_status_t qmma_x_held_can_implement(const Operation &op, const gemv_config_t &, const Problem &pb) {
    if (pb.qw.bits == 8 && (pb.dtype() != GEMV_DTYPE_F16 || (pb.qw.group_size != 0 && pb.qw.group_size < 64))) {
        set_error("%s takes int8 weights in fp16 with groups of 64 columns or more (or one a row); got %s, "
                  "group_size = %d: q_rows runs them",
                  op.info.name, pb.dtype() == GEMV_DTYPE_F16 ? "fp16" : "bf16", pb.qw.group_size);
        return GEMV_STATUS_NOT_SUPPORTED;
    }
    return qmma_x_in_place_ok(pb) ? GEMV_STATUS_SUCCESS : refuse_x_in_place(op, pb, "");
}

gemv_status_t qmma_x_held_launch(const Operation &op, const gemv_config_t &c, const Problem &pb) {
    QLaunch L = q_plan(op, c, pb, (int64_t)c.rows_per_block * 16);
    L.x_staged = false;
    L.x_held = true;
    L.blocks = (pb.m + (int64_t)c.rows_per_block * 16 - 1) / ((int64_t)c.rows_per_block * 16);
    // Split grids of int4 whose blocks walk one or two tiles ran 1-9% slower with the
    // prefetch (bf16 float zeros 1000 x 4100, split 5: 4.88 -> 5.34 us; int4 g32 3072 x 2560
    // 6.38 -> 6.52), as q_rows' split grids did; int8 there and unsplit grids gained
    // (int8 4096^2, split 4: 9.66 -> 8.87; NOTES.md section 35).
    const bool prefetch_pays = L.splits == 1 || c.rows_per_block >= 3 || pb.qw.bits == 8;
    if (q_prefetch_on(pb) && prefetch_pays) {
        // The first wave: blocks of threads_per_row threads at the kernel's register bound
        // (64 a thread at one step a chunk, 80 for groups under 128, 128 at two steps), each
        // prefetching at most its share of the per-SM amount.
        const bool sub = pb.qw.bits == 4 && q_groups_under_a_step(pb.qw);
        const int regs = c.unroll == 2 ? 128 : sub ? 80 : 64;
        const int per_sm = resident_blocks(c.threads_per_row, regs);
        const int64_t chunk_bytes = std::min<int64_t>(L.args.slice, (int64_t)(c.threads_per_row / 32) * c.unroll *
                                                                        (512 / pb.qw.bits)) * pb.qw.bits / 8;
        const int64_t tile_lines = 16 * ((chunk_bytes + 127) / 128);
        L.args.prefetch_tiles = (int)std::clamp<int64_t>(prefetch_lines_a_block(per_sm) / tile_lines, 0, q_prefetch_tiles());
        L.args.prefetch_blocks = (int64_t)sm_count(pb.device) * per_sm;
    }
    return q_finish(op, L, launch_qmma(L, pb.stream), pb);
}

gemv_status_t qmma_launch(const Operation &op, const gemv_config_t &c, const Problem &pb) {
    QLaunch L = q_plan(op, c, pb, (int64_t)c.rows_per_block * 16);
    if (!c.x_in_smem) {
        // Every tile a block: nothing is staged, so more blocks cost nothing, and the
        // hardware keeps as many resident as registers allow.
        L.x_staged = false;
        L.blocks = (pb.m + (int64_t)c.rows_per_block * 16 - 1) / ((int64_t)c.rows_per_block * 16);
    }
    return q_finish(op, L, launch_qmma(L, pb.stream), pb);
}

// Rounds (qmma.cu): int4 of any group size (groups of 32 and 64 in B's columns, as x held),
// x read in place, a tile a block (grid.x: at most 2^31 - 1 tiles; grid.y its K slices, whose
// partials take the workspace).
gemv_status_t qmma_rounds_can_implement(const Operation &op, const gemv_config_t &, const Problem &pb) {
    if (pb.qw.bits != 4) {
        set_error("%s takes int4 weights; got int%d: q_block_rows and q_mma_x_held run int8", op.info.name,
                  pb.qw.bits);
        return GEMV_STATUS_NOT_SUPPORTED;
    }
    if (pb.m > (int64_t)16 * 0x7fffffff) {
        set_error("%s runs a block a 16-row tile: M up to 16 (2^31 - 1) (got %lld)", op.info.name, (long long)pb.m);
        return GEMV_STATUS_NOT_SUPPORTED;
    }
    return qmma_x_in_place_ok(pb) ? GEMV_STATUS_SUCCESS : refuse_x_in_place(op, pb, "");
}

gemv_status_t qmma_rounds_launch(const Operation &op, const gemv_config_t &c, const Problem &pb) {
    QLaunch L = q_plan(op, c, pb, 16);
    L.x_staged = false;
    L.rounds = true;
    L.unroll = c.unroll;
    L.blocks = (pb.m + 15) / 16;
    if (q_prefetch_on(pb) && L.splits == 1 && L.blocks > sm_count(pb.device)) {
        // The first wave (3 blocks an SM at one step a round, 2 at two: the kernel's launch
        // bounds) asks L2 for half of its first round (kw * unroll steps of 64 bytes a row), as
        // q_block_rows does. Measured (NOTES.md section 47): a half or a third of the round 1.037x
        // on 52 cases, none slower; the whole round lost up to 2.4% (2048 x 8192). A grid of
        // at most a tile an SM lost with it (2048^2 3.00 -> 3.12 us), so it goes without.
        const int64_t round_lines = 16 * std::min<int64_t>(q_row_lines(pb),
                                                           (int64_t)(c.threads_per_row / 32) * c.unroll * 64 / 128);
        plan_first_wave_prefetch(L.args, pb, c.unroll == 1 ? 3 : 2, round_lines / 2);
    }
    return q_finish(op, L, launch_qmma(L, pb.stream), pb);
}

// Block rows (qblock.cu): int8 codes, x read in place; no slices, so no workspace.
gemv_status_t qblock_can_implement(const Operation &op, const gemv_config_t &, const Problem &pb) {
    return qmma_x_in_place_ok(pb) ? GEMV_STATUS_SUCCESS : refuse_x_in_place(op, pb, "");
}

gemv_status_t qblock_launch(const Operation &op, const gemv_config_t &c, const Problem &pb) {
    QLaunch L = q_plan(op, c, pb, c.rows_per_block);
    L.rows = c.rows_per_block;
    L.unroll = c.unroll;
    L.x_staged = false;
    L.blocks = (pb.m + c.rows_per_block - 1) / c.rows_per_block;
    if (q_prefetch_on(pb) && pb.qw.group_size == 0) {
        // One group a row (int8 per channel): the first wave's blocks ask L2 for half of their
        // first step (the dense kernels' rule, NOTES.md section 5), within 64 KiB an SM.
        // Blocks past the first wave must not prefetch (they would read their lines twice),
        // so the wave counts registers: at most 64 a thread for 1 or 2 rows, 80 for 4 rows at
        // unroll 1, 128 at unroll 2 (test_cpu_kernel_registers.py holds the kernels to that).
        // Measured (NOTES.md section 46): per-row int8 1.01-1.17x; a whole step or more lost up
        // to 13% on small grouped matrices (scales and zeros a pack), which stay without it.
        const int regs = c.rows_per_block <= 2 ? 64 : c.unroll == 1 ? 80 : 128;
        const int per_sm = resident_blocks(c.threads_per_row, regs);
        const int64_t step_lines = std::min<int64_t>(q_row_lines(pb), (int64_t)c.threads_per_row * c.unroll * 16 / 128);
        plan_first_wave_prefetch(L.args, pb, per_sm, c.rows_per_block * step_lines / 2);
    }
    return q_finish(op, L, launch_qblock(L, pb.stream), pb);
}

// ---- op T: the column operations (columns.cu) --------------------------------------------

// op T's phased rows (vector_loads 3) walk lane classes (columns.cu: each row lane one phase
// class, a tile c - 1 packs of columns): the only walk of the column operation that does not
// split M, and split-M's where its lanes are a multiple of the rows' phase period on tiles of
// 2 threads up; split-M's other phased configs walk a phase class a slice (period times the
// partials).
bool phased_one_pass(const Operation &op, const gemv_config_t &c) {
    return op.info.op == GEMV_OP_T && c.vector_loads == kLoadsPhased && op.split_mode == kNoSplit;
}
bool lane_classes(const Operation &op, const gemv_config_t &c, const Problem &pb) {
    return phased_one_pass(op, c) ||
           (op.info.op == GEMV_OP_T && c.vector_loads == kLoadsPhased && c.threads_per_row >= 2 &&
            c.rows_per_block % phase_period(pb.lda, dtype_size(pb.dtype())) == 0);
}

gemv_status_t columns_can_implement(const Operation &op, const gemv_config_t &c, const Problem &pb) {
    if (c.vector_loads == kLoadsAligned && !rows_aligned16(pb)) {
        set_error("%s with vector_loads = 1 needs A and every row 16-byte aligned (A = %p, lda = %lld%s); "
                  "vector_loads = 2 takes rows that start anywhere", op.info.name, pb.A, (long long)pb.lda,
                  pb.batched() ? ", and stride_a" : "");
        return GEMV_STATUS_NOT_SUPPORTED;
    }
    // Lane classes: each row lane one phase class: lanes a multiple of the period, or at most a
    // row a lane (each lane's shift is its first row's).
    if (phased_one_pass(op, c)) {
        const int period = phase_period(pb.lda, dtype_size(pb.dtype()));
        if (c.rows_per_block % period != 0 && pb.m > c.rows_per_block) {
            set_error("%s with vector_loads = 3 (phased rows, a row lane a phase class) needs rows_per_block a "
                      "multiple of the rows' phase period %d, or at least m (lda = %lld; rows_per_block = %d, "
                      "m = %lld)", op.info.name, period, (long long)pb.lda, c.rows_per_block, (long long)pb.m);
            return GEMV_STATUS_NOT_SUPPORTED;
        }
    }
    return GEMV_STATUS_SUCCESS;
}

// Split-M: about split_k slices of rows. Chunks of whole steps of the row lanes times the
// unroll; phased a slice a class (period > 1: column_period), each chunk is cut into its
// period phase classes (split_k / period chunks, at least one).
int column_period(const Operation &op, const gemv_config_t &c, const Problem &pb) {
    return c.vector_loads == kLoadsPhased && !lane_classes(op, c, pb) ? phase_period(pb.lda, dtype_size(pb.dtype())) : 1;
}
int64_t column_chunk(const gemv_config_t &c, const Problem &pb, int period) {
    return row_slice_len(pb.m, std::max(1, c.split_k / period), c.rows_per_block * c.unroll * period);
}
int column_slices(const gemv_config_t &c, const Problem &pb, int period) {
    return slices(pb.m, column_chunk(c, pb, period)) * period;
}

size_t columns_workspace(const Operation &op, const gemv_config_t &c, const Problem &pb) {
    if (op.split_mode != kSplitTwoPass) return 0;
    return op_t_partials_bytes(column_slices(c, pb, column_period(op, c, pb)), pb);
}

gemv_status_t columns_launch(const Operation &op, const gemv_config_t &c, const Problem &pb) {
    ColumnLaunch L{};
    L.dtype = pb.dtype();
    const bool lanes_a_class = lane_classes(op, c, pb);
    L.vector_loads = lanes_a_class ? kLoadsLaneClasses : c.vector_loads;
    L.unroll = c.unroll;
    ColumnArgs &a = L.args;
    set_operands(a, pb);
    a.c_log2 = log2_int(c.threads_per_row);
    a.row_lanes = c.rows_per_block;
    const int64_t pack = c.vector_loads ? 16 / (int64_t)dtype_size(pb.dtype()) : 1;
    // Lane classes write c - 1 packs of columns a tile; phased slices' packs start up to
    // pack - 1 columns before column 0.
    const int64_t cols_per_tile = (int64_t)(c.threads_per_row - (lanes_a_class ? 1 : 0)) * pack;
    const int64_t span = pb.k + (c.vector_loads == kLoadsPhased && !lanes_a_class ? pack - 1 : 0);
    a.tiles = (span + cols_per_tile - 1) / cols_per_tile;
    a.period = lanes_a_class ? 1 : column_period(op, c, pb); // lane classes walk every row of the slice
    a.m_chunk = op.split_mode == kNoSplit ? pb.m : column_chunk(c, pb, a.period);
    L.splits = op.split_mode == kNoSplit ? 1 : column_slices(c, pb, a.period);
    a.acc = op.split_mode == kSplitTwoPass ? static_cast<float *>(pb.workspace) : nullptr;
    a.pdl = pb.pdl;
    if (pb.pdl && prefetch_kb_per_sm() > 0 && !pb.batched()) {
        // As the row kernels (rows_launch): the first wave's blocks ask L2 for half of their
        // first step (lanes * unroll rows of the tile), at most the per-SM amount. fp16
        // 4096^2 op T: 14.61 us without, 13.93 with half the amount, 13.63 with all of it
        // (op N: 11.6); 256 x 65536: 14.18, 13.58, 13.11.
        const int threads = c.rows_per_block * c.threads_per_row;
        const int blocks_per_sm = std::clamp(2048 / threads, 1, 32);
        const int64_t tile_lines = (cols_per_tile * (int64_t)dtype_size(pb.dtype()) + 127) / 128;
        const int64_t step_lines = std::min<int64_t>((int64_t)c.rows_per_block * c.unroll, a.m_chunk) * tile_lines;
        plan_first_wave_prefetch(a, pb, blocks_per_sm, step_lines / 2);
    }
    return finish_partials(op, launch_columns(L, pb.stream), a.acc, L.splits, pb); // acc only when split-M
}

// ---- op T: the stream of packs (tstream.cu) ---------------------------------------------

// How t_stream runs pb under c: lda as the kernel steps it (one row: any run of at least a
// pack, so that a row of fewer elements than a pack has a period), the pack period, the
// block (a multiple of the period near threads_per_row; 0 when the period exceeds a block)
// and the slices (packs a slice: a multiple of the block).
struct TStreamPlan {
    int64_t lda, period, slice_packs;
    int threads, splits;
};
TStreamPlan tstream_geometry(const gemv_config_t &c, const Problem &pb) {
    const int64_t v = 16 / (int64_t)dtype_size(pb.dtype());
    TStreamPlan p{};
    p.lda = pb.m == 1 ? std::max(pb.k, v) : pb.lda;
    p.period = pack_period(p.lda, dtype_size(pb.dtype()));
    if (p.period > max_block_threads(c.unroll)) return p;
    p.threads = (int)stream_block_threads(p.period, c.threads_per_row);
    const int64_t packs = ((pb.m - 1) * pb.lda + pb.k + 2 * (v - 1)) / v; // of A's extent at any phase
    int64_t slice = (packs + c.split_k - 1) / c.split_k;
    p.slice_packs = (slice + p.threads - 1) / p.threads * p.threads;
    p.splits = slices(packs, p.slice_packs);
    return p;
}

gemv_status_t tstream_can_implement(const Operation &op, const gemv_config_t &c, const Problem &pb) {
    const int64_t v = 16 / (int64_t)dtype_size(pb.dtype());
    if (pb.m > 1 && 2 * pb.lda < v - 1) {
        set_error("%s reads packs of %lld %s elements reaching at most three rows: it needs lda >= %lld when m > 1 "
                  "(lda = %lld)", op.info.name, (long long)v, dtype_name(pb.dtype()), (long long)(v / 2), (long long)pb.lda);
        return GEMV_STATUS_NOT_SUPPORTED;
    }
    const TStreamPlan p = tstream_geometry(c, pb);
    if (!p.threads) {
        set_error("%s: the columns of its packs repeat every %lld packs (lda = %lld), more than the %d threads a "
                  "block of unroll %d may have", op.info.name, (long long)p.period, (long long)p.lda,
                  max_block_threads(c.unroll), c.unroll);
        return GEMV_STATUS_NOT_SUPPORTED;
    }
    return GEMV_STATUS_SUCCESS;
}

size_t tstream_workspace(const Operation &, const gemv_config_t &c, const Problem &pb) {
    const TStreamPlan p = tstream_geometry(c, pb);
    return p.splits > 1 ? op_t_partials_bytes(p.splits, pb) : 0;
}

gemv_status_t tstream_launch(const Operation &op, const gemv_config_t &c, const Problem &pb) {
    const TStreamPlan p = tstream_geometry(c, pb);
    TStreamLaunch L{};
    L.dtype = pb.dtype();
    L.unroll = c.unroll;
    L.splits = p.splits;
    TStreamArgs &a = L.args;
    set_operands(a, pb);
    a.lda = p.lda;
    a.slice_packs = p.slice_packs;
    a.threads = p.threads;
    a.rows_step = (int64_t)p.threads * (16 / (int64_t)dtype_size(pb.dtype())) / p.lda;
    a.acc = p.splits > 1 ? static_cast<float *>(pb.workspace) : nullptr;
    a.pdl = pb.pdl;
    return finish_partials(op, launch_tstream(L, pb.stream), a.acc, L.splits, pb);
}

// One entry of each kernel family: its description, then its rules and launch.
// x_in_smem is open to the row operations alone: the column kernels read each x[r] once
// a row, as a broadcast.
constexpr gemv_variant_info_t info(int id, const char *name, const char *desc, int pmin, int pmax, int rmin, int rmax,
                                   int smin, int smax, int deterministic, int workspace, gemv_op_t op,
                                   int batched = 1, uint32_t types = kAllTypes, uint32_t weight_bits = 0) {
    return {sizeof(gemv_variant_info_t), id, name, desc, pmin, pmax, rmin, rmax, smin, smax, kUnroll124,
            deterministic, workspace, op, types, batched, op == GEMV_OP_N, weight_bits};
}
// An operation that never stages x (x_in_smem is 0).
constexpr gemv_variant_info_t no_staging(gemv_variant_info_t i) {
    i.stages_x = 0;
    return i;
}
// An operation whose unroll is 1 or 2.
constexpr gemv_variant_info_t unroll_1_2(gemv_variant_info_t i) {
    i.unroll_mask = (1 << 1) | (1 << 2);
    return i;
}
// An operation without a loads-in-flight choice: unroll is 1.
constexpr gemv_variant_info_t one_unroll(gemv_variant_info_t i) {
    i.unroll_mask = 1 << 1;
    return i;
}
constexpr Operation rows(gemv_variant_info_t i, SplitMode split) {
    return {i, rows_can_implement, rows_workspace, rows_launch, split};
}
// The row stream reads 16-byte packs (aligned or realigned) and always stages x (it is
// stored with its wrap).
constexpr Operation stream(gemv_variant_info_t i) {
    return {i, stream_can_implement, no_workspace, stream_launch, kNoSplit, (1u << kLoadsAligned) | (1u << kLoadsRealigned),
            true};
}
// Packed codes are whole aligned 16-byte packs, and x is always staged.
constexpr Operation quantized_rows(gemv_variant_info_t i) {
    return {i, q_can_implement, q_workspace, q_launch, kSplitTwoPass, 1u << kLoadsAligned, true};
}
// q_mma stages x (x_in_smem = 1) or reads it in place (0), as its config says.
constexpr Operation quantized_mma(gemv_variant_info_t i) {
    return {i, qmma_can_implement, q_workspace, qmma_launch, kSplitTwoPass, 1u << kLoadsAligned, false};
}
constexpr Operation quantized_mma_x_held(gemv_variant_info_t i) {
    return {i, qmma_x_held_can_implement, q_workspace, qmma_x_held_launch, kSplitTwoPass, 1u << kLoadsAligned, false, 0, true};
}
constexpr Operation quantized_block_rows(gemv_variant_info_t i) {
    return {i, qblock_can_implement, q_workspace, qblock_launch, kNoSplit, 1u << kLoadsAligned, false};
}
constexpr Operation quantized_mma_rounds(gemv_variant_info_t i) {
    return {i, qmma_rounds_can_implement, q_workspace, qmma_rounds_launch, kSplitTwoPass, 1u << kLoadsAligned, false};
}
// Tensor-core row tiles read aligned 16-byte packs (fixed) and never stage x.
constexpr Operation mma_rows(gemv_variant_info_t i) {
    return {i, mma_rows_can_implement, mma_rows_workspace, mma_rows_launch, kNoSplit, 1u << kLoadsAligned};
}
// Row tiles read 16-byte packs (aligned or realigned), never stage x, and keep at most
// kTileMaxPacks packs in flight a thread.
constexpr Operation tiles(gemv_variant_info_t i) {
    return {i, tile_can_implement, tile_workspace, tile_launch, kSplitTwoPass,
            (1u << kLoadsAligned) | (1u << kLoadsRealigned), false, kTileMaxPacks};
}
// The op T stream reads aligned 16-byte packs only (fixed) and never stages x.
constexpr Operation t_stream(gemv_variant_info_t i) {
    return {i, tstream_can_implement, tstream_workspace, tstream_launch, kSplitTwoPass, 1u << kLoadsAligned};
}
// Phased rows walk one phase class a slice (split-M) or a row lane (one pass).
constexpr Operation columns(gemv_variant_info_t i, SplitMode split) {
    return {i, columns_can_implement, columns_workspace, columns_launch, split,
            (1u << kLoadsScalar) | (1u << kLoadsAligned) | (1u << kLoadsRealigned) | (1u << kLoadsPhased)};
}

// clang-format off
const Operation kRegistry[GEMV_VARIANT_COUNT] = {
    rows(info(GEMV_VARIANT_THREAD_PER_ROW, "thread_per_row", "op N: one thread a row; the naive baseline, good for tiny K",
              1, 1, 32, 1024, 1, 1, 1, 0, GEMV_OP_N), kNoSplit),
    rows(info(GEMV_VARIANT_ROWS_PER_WARP, "rows_per_warp", "op N: p = 2..16 threads a row, several rows a warp, shuffle reduction",
              2, 16, 2, 512, 1, 1, 1, 0, GEMV_OP_N), kNoSplit),
    rows(info(GEMV_VARIANT_WARP_PER_ROW, "warp_per_row", "op N: one warp a row, shuffle reduction",
              32, 32, 1, 32, 1, 1, 1, 0, GEMV_OP_N), kNoSplit),
    rows(info(GEMV_VARIANT_BLOCK_PER_ROW, "block_per_row", "op N: p = 64..1024 threads a row, shuffle then shared-memory reduction",
              64, 1024, 1, 16, 1, 1, 1, 0, GEMV_OP_N), kNoSplit),
    rows(info(GEMV_VARIANT_SPLITK_ATOMIC, "splitk_atomic", "op N: K split over blocks, slice sums added with fp32 atomics (not deterministic)",
              1, 1024, 1, 1024, 2, 1024, 0, 1, GEMV_OP_N), kSplitAtomic),
    rows(info(GEMV_VARIANT_SPLITK_TWOPASS, "splitk_twopass", "op N: K split over blocks, slice partials reduced in fixed order by a second kernel",
              1, 1024, 1, 1024, 2, 1024, 1, 1, GEMV_OP_N), kSplitTwoPass),
    columns(info(GEMV_VARIANT_T_COLUMNS, "t_columns", "op T: c threads across a tile of columns, r row lanes; rows read coalesced, x[r] broadcast",
                 1, 1024, 1, 1024, 1, 1, 1, 0, GEMV_OP_T), kNoSplit),
    columns(info(GEMV_VARIANT_T_SPLITM_TWOPASS, "t_splitm_twopass", "op T: rows split over blocks (split-M), column partials reduced in fixed order",
                 1, 1024, 1, 1024, 2, 1024, 1, 1, GEMV_OP_T), kSplitTwoPass),
    stream(info(GEMV_VARIANT_ROW_STREAM, "row_stream", "op N: whole rows read as one stream of aligned 16-byte packs, x staged; p lanes sum each row's pack sums",
                1, 32, 1, 1024, 1, 1, 1, 0, GEMV_OP_N, /*batched=*/0)),
    quantized_rows(info(GEMV_VARIANT_Q_ROWS, "q_rows", "op N, int4/int8 weights: p lanes a team of `unroll` rows, 16-byte code packs, x staged as fp32; split_k slices reduced in fixed order",
                        1, 32, 1, 1024, 1, 1024, 1, 1, GEMV_OP_N, /*batched=*/0,
                        (1u << GEMV_DTYPE_F16) | (1u << GEMV_DTYPE_BF16), (1u << 4) | (1u << 8))),
    quantized_mma(one_unroll(info(GEMV_VARIANT_Q_MMA, "q_mma", "op N, int4 weights with symmetric or integer zeros, fp16: mma.sync tensor cores, tiles of 16 rows, threads_per_row / 32 warps a tile, rows_per_block tiles; x staged (warps take a tile's steps in turn) or, x_in_smem = 0, read in place through L1 (each warp a contiguous range of steps); split_k slices reduced in fixed order",
                                  32, 256, 1, 8, 1, 1024, 1, 1, GEMV_OP_N, /*batched=*/0, 1u << GEMV_DTYPE_F16, 1u << 4))),
    tiles(no_staging(info(GEMV_VARIANT_ROWS_IN_REGISTERS, "rows_in_registers", "op N, few long rows: p threads a block share a tile of rows_per_block rows, each keeping every row's sum over its 16-byte slots (x read once a tile); split_k slices reduced in fixed order",
               32, 512, 1, 4, 1, 1024, 1, 1, GEMV_OP_N, /*batched=*/0))),
    quantized_mma_x_held(unroll_1_2(no_staging(info(GEMV_VARIANT_Q_MMA_X_HELD, "q_mma_x_held", "op N, int4 weights (any group size and zero mode) in fp16 or bf16, int8 (groups of 64 up) in fp16, x contiguous and 16-byte aligned: mma.sync tensor cores, each warp holding unroll steps of 128 columns of x in registers and walking the block's rows_per_block tiles of 16 rows; threads_per_row / 32 warps a block take the slice's steps in turn; split_k slices reduced in fixed order",
                                  32, 256, 1, 64, 1, 1024, 1, 1, GEMV_OP_N, /*batched=*/0,
                                  (1u << GEMV_DTYPE_F16) | (1u << GEMV_DTYPE_BF16), (1u << 4) | (1u << 8))))),
    t_stream(no_staging(info(GEMV_VARIANT_T_STREAM, "t_stream", "op T, short rows: A read as one stream of aligned 16-byte packs over its whole extent (rows that start anywhere); a block of about threads_per_row threads (a multiple of the pack period lda / gcd(lda, 16 / esz)) keeps a sum per column of its packs; split_k slices of the stream reduced in fixed order",
                             32, 1024, 1, 1, 1, 1024, 1, 1, GEMV_OP_T))),
    quantized_block_rows(unroll_1_2(no_staging(info(GEMV_VARIANT_Q_BLOCK_ROWS, "q_block_rows", "op N, int8 weights (any zero mode and group size) in fp16 or bf16, x contiguous and 16-byte aligned: a block of threads_per_row threads owns rows_per_block rows, as many blocks as row groups, its threads taking the rows' 16-byte code packs in turn (unroll a row in flight) and reading x in place through L1; K unsplit",
                                  32, kQBlockMaxThreads, 1, 4, 1, 1, 1, 0, GEMV_OP_N, /*batched=*/0,
                                  (1u << GEMV_DTYPE_F16) | (1u << GEMV_DTYPE_BF16), 1u << 8)))),
    quantized_mma_rounds(unroll_1_2(no_staging(info(GEMV_VARIANT_Q_MMA_ROUNDS, "q_mma_rounds", "op N, int4 weights (any group size and zero mode) in fp16 or bf16, x contiguous and 16-byte aligned: mma.sync tensor cores, a 16-row tile a block (rows_per_block 1), its threads_per_row / 32 warps taking the steps of 128 columns in rounds of unroll steps, each round's codes, x, scales and zeros asked for at once; split_k slices reduced in fixed order",
                                  32, kQmmaMaxThreads, 1, 1, 1, 64, 1, 1, GEMV_OP_N, /*batched=*/0,
                                  (1u << GEMV_DTYPE_F16) | (1u << GEMV_DTYPE_BF16), 1u << 4)))),
    mma_rows(no_staging(info(GEMV_VARIANT_ROW_MMA, "row_mma", "op N, fp16/bf16 rows of whole aligned 16-byte packs (A, lda, K, batch strides), x of any alignment and increment (else gathered into the workspace): mma.sync tensor cores, a warp a tile of 16 rows of one product (threads_per_row 32), rows_per_block warps a block, unroll steps of 32 columns in flight; K unsplit",
                             32, 32, 1, 8, 1, 1, 1, 0, GEMV_OP_N, /*batched=*/1,
                             (1u << GEMV_DTYPE_F16) | (1u << GEMV_DTYPE_BF16)))),
};
// clang-format on

} // namespace

bool Operation::serves(const Problem &pb) const {
    const bool weights = pb.quantized() ? ((info.weight_bits_mask >> pb.qw.bits) & 1u) : info.weight_bits_mask == 0;
    return weights && pb.op == info.op && pb.a_type == pb.x_type && pb.x_type == pb.y_type &&
           ((info.dtype_mask >> pb.a_type) & 1u) && (info.batched || !pb.batched());
}

int variant_count() { return GEMV_VARIANT_COUNT; }

const Operation *operation(int variant) {
    if (variant < 0 || variant >= GEMV_VARIANT_COUNT) return nullptr;
    return &kRegistry[variant];
}

const gemv_variant_info_t *variant_info(int variant) {
    const Operation *op = operation(variant);
    return op ? &op->info : nullptr;
}

gemv_config_t make_config(int variant, int p, int rows, int vec, int unroll, int smem, int split) {
    return gemv_config_t{sizeof(gemv_config_t), variant, p, rows, vec, unroll, smem, split};
}

gemv_status_t read_config(const gemv_config_t *in, gemv_config_t *out) {
    // The first layout with struct_size is this one: nothing older to default from.
    if (in->struct_size != sizeof(gemv_config_t)) {
        set_error("config->struct_size = %zu: expected sizeof(gemv_config_t) = %zu", in->struct_size,
                  sizeof(gemv_config_t));
        return GEMV_STATUS_INVALID_VALUE;
    }
    *out = *in;
    return GEMV_STATUS_SUCCESS;
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
    // A block that walks tiles takes any number of them (the heuristic shares them out evenly).
    const bool walks = kRegistry[c.variant].block_walks_tiles;
    if ((!walks && !is_pow2(r)) || r < v->rows_per_block_min || r > v->rows_per_block_max) {
        set_error("config.rows_per_block = %d: %s takes %s in [%d, %d]", r, v->name, walks ? "a count" : "a power of two",
                  v->rows_per_block_min, v->rows_per_block_max);
        return GEMV_STATUS_INVALID_VALUE;
    }
    // Whole warps (the shuffles assume full warps) and at most 1024 threads a block.
    const int64_t threads = walks ? p : (int64_t)p * r;
    if (threads < 32 || threads > 1024) {
        set_error("config: threads_per_row * rows_per_block = %lld must lie in [32, 1024]", (long long)threads);
        return GEMV_STATUS_INVALID_VALUE;
    }
    if (c.unroll < 1 || c.unroll > 4 || !((v->unroll_mask >> c.unroll) & 1)) {
        set_error("config.unroll = %d: %s takes %s", c.unroll, v->name, v->unroll_mask == (1 << 1) ? "1" : "1, 2 or 4");
        return GEMV_STATUS_INVALID_VALUE;
    }
    if (threads > max_block_threads(c.unroll)) {
        set_error("config: unroll = %d allows at most %d threads a block (%s = %lld)", c.unroll,
                  max_block_threads(c.unroll), walks ? "threads_per_row" : "threads_per_row * rows_per_block",
                  (long long)threads);
        return GEMV_STATUS_INVALID_VALUE;
    }
    // 8-byte packs and x's phase copies are row-kernel paths; the column kernels take one
    // element, aligned packs, realigned packs (a column pack cut from two aligned ones) or
    // phased rows.
    const int max_loads = v->op == GEMV_OP_N ? kLoadsPhasedCopies : kLoadsPhased;
    if (c.vector_loads < 0 || c.vector_loads > max_loads) {
        set_error("config.vector_loads = %d: %s takes %s", c.vector_loads, v->name,
                  max_loads == kLoadsPhasedCopies
                      ? "0 (scalar), 1 (16-byte, aligned rows), 2 (16-byte, realigned rows), 3 (16-byte, phased rows), "
                        "4 (8-byte, rows 8-byte aligned) or 5 (16-byte, phased rows with x's phase copies)"
                      : "0 (scalar), 1 (16-byte, aligned rows), 2 (16-byte, realigned rows) or 3 (16-byte, phased rows)");
        return GEMV_STATUS_INVALID_VALUE;
    }
    // Lanes 0 and 1 of a phased row take its edge packs; op T's phased rows in one pass
    // write c - 1 packs of columns a tile.
    if (phased_loads(c.vector_loads) && p < 2 && (v->op == GEMV_OP_N || phased_one_pass(kRegistry[c.variant], c))) {
        set_error("config.vector_loads = %d (phased rows) takes 2 threads a %s or more (threads_per_row = %d)",
                  c.vector_loads, v->op == GEMV_OP_N ? "row" : "tile", p);
        return GEMV_STATUS_INVALID_VALUE;
    }
    // x's phase copies: one pre-pass for all of K, read through L1.
    if (c.vector_loads == kLoadsPhasedCopies && (c.x_in_smem || kRegistry[c.variant].split_mode != kNoSplit)) {
        set_error("config.vector_loads = 5 (x's phase copies) takes x_in_smem = 0 and a variant that does not split "
                  "K (%s, x_in_smem = %d)", v->name, c.x_in_smem);
        return GEMV_STATUS_INVALID_VALUE;
    }
    if (c.x_in_smem != 0 && c.x_in_smem != 1) {
        set_error("config.x_in_smem = %d: must be 0 or 1", c.x_in_smem);
        return GEMV_STATUS_INVALID_VALUE;
    }
    if (c.x_in_smem && !v->stages_x) {
        set_error("config.x_in_smem = 1: %s does not stage x (it must be 0)", v->name);
        return GEMV_STATUS_INVALID_VALUE;
    }
    // Operations that fix how they read (the row stream, the quantized ones).
    const Operation &op = kRegistry[c.variant];
    if ((op.loads_mask && !((op.loads_mask >> c.vector_loads) & 1)) || (op.stages_x_always && !c.x_in_smem)) {
        char loads[32] = "";
        for (int l = 0, n = 0; l < 8; ++l)
            if ((op.loads_mask >> l) & 1) n += std::snprintf(loads + n, sizeof loads - n, n ? ", %d" : "%d", l);
        set_error("config: %s takes vector_loads in {%s}%s (vector_loads = %d, x_in_smem = %d)", v->name, loads,
                  op.stages_x_always ? " and x_in_smem = 1" : "", c.vector_loads, c.x_in_smem);
        return GEMV_STATUS_INVALID_VALUE;
    }
    if (op.max_packs && r * c.unroll > op.max_packs) {
        set_error("config: %s keeps rows_per_block * unroll packs in flight a thread, at most %d (%d x %d)", v->name,
                  op.max_packs, r, c.unroll);
        return GEMV_STATUS_INVALID_VALUE;
    }
    if (c.split_k < v->split_k_min || c.split_k > v->split_k_max) {
        set_error("config.split_k = %d: %s takes [%d, %d]", c.split_k, v->name, v->split_k_min, v->split_k_max);
        return GEMV_STATUS_INVALID_VALUE;
    }
    return GEMV_STATUS_SUCCESS;
}

gemv_status_t can_implement(const gemv_config_t &c, const Problem &pb) {
    const Operation &op = kRegistry[c.variant];
    if (!op.serves(pb)) {
        const uint32_t bits = op.info.weight_bits_mask;
        const char *weights = bits == (1u << 4) ? " of int4 weights" : bits == (1u << 8) ? " of int8 weights" : bits ? " of quantized weights" : "";
        char got[48] = "";
        if (pb.quantized()) std::snprintf(got, sizeof got, ", quantized weights of %d bits", pb.qw.bits);
        set_error("%s computes op %s%s%s; this problem is op %s%s%s", op.info.name, op.info.op == GEMV_OP_N ? "N" : "T",
                  op.info.batched ? "" : " (single products)", weights, pb.op == GEMV_OP_N ? "N" : "T",
                  pb.batched() ? ", batched" : "", got);
        return GEMV_STATUS_NOT_SUPPORTED;
    }
    return op.can_implement(op, c, pb);
}

size_t workspace_needed(const gemv_config_t &c, const Problem &pb) {
    const Operation &op = kRegistry[c.variant];
    return op.workspace(op, c, pb);
}

gemv_status_t launch(const gemv_config_t &c, const Problem &pb) {
    const Operation &op = kRegistry[c.variant];
    return op.launch(op, c, pb);
}

} // namespace libgemv
