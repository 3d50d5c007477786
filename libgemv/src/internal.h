// Internal types shared by the entry points, the registry and the kernel launchers.
// Data flows: gemv.cpp (checks, quick returns) -> dispatch.cpp (config) ->
// registry.cpp (the operations: legality, workspace, launch plan) -> one family's
// launcher (*.cu) -> kernel.
#pragma once

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <new>
#include <numeric>
#include <stdexcept>
#include <string>
#include <type_traits>

#include "gemv.h"
#include "gemv_experimental.h"

namespace libgemv {

// One validated call: the problem descriptor (what the registry, the dispatcher and the
// tuned table are keyed by: op, operand types, batch) plus the call's pointers and scalars.
// x_first / y_first point at logical element 0 of product 0, so element j of product b
// is x_first[b * stride_x + j * incx] for either sign of incx (reference-BLAS order).
struct Problem {
    gemv_op_t op;
    gemv_dtype_t a_type, x_type, y_type; // storage type of each operand (all equal today)
    int64_t m, k, lda;
    int64_t batch;                        // >= 1
    int64_t stride_a, stride_x, stride_y; // elements; only read when batch > 1
    float alpha, beta;
    const void *A;
    const void *x, *x_first;
    void *y, *y_first;
    int64_t incx, incy;
    void *workspace;
    size_t workspace_bytes;
    cudaStream_t stream;
    int device;
    bool pdl; // launch with programmatic dependent launch (see common.cuh)
    // Quantized weights (args->qweight): a copy of the descriptor; qw.bits == 0 for a dense A.
    gemv_qmatrix_t qw;

    gemv_dtype_t dtype() const { return a_type; } // of A; of x, y and the scales when quantized
    bool quantized() const { return qw.bits != 0; }
    int64_t len_x() const { return op == GEMV_OP_N ? k : m; }
    int64_t len_y() const { return op == GEMV_OP_N ? m : k; }
    bool batched() const { return batch > 1; }
};

// What the row kernels do with a row's dot product.
enum class Epilogue : int {
    kStore = 0,   // y = alpha*dot + beta*y, converted to T
    kAtomic = 1,  // atomicAdd(acc[row*acc_inc], alpha*dot) into fp32
    kPartial = 2, // acc[slice*m + row] = dot (unscaled, reduced later in fixed order)
};

// Arguments of one row-kernel launch (both families), passed by value. A batch is
// batch * m rows: row g is row g % m of product g / m (so a block may serve several
// small matrices); partial sums are indexed by g.
// Unsigned division of n < 2^63 by a fixed d >= 1 as a multiply-high and two shifts
// (Granlund and Montgomery, "Division by invariant integers using multiplication", 1994):
// a 64-bit division in a row kernel costs it 10-20 registers, half its occupancy.
struct DivideBy {
    uint64_t magic;
    int shift1, shift2;
};
DivideBy divide_by(uint64_t d);

struct RowArgs {
    const void *A;
    const void *x; // logical element 0 of product 0
    void *y;       // logical element 0 of product 0
    float *acc;    // fp32 target of kAtomic / kPartial
    int64_t m, k, lda, incx, incy, acc_inc;
    int64_t rows;                         // m * batch
    DivideBy m_div;                       // g / m without a 64-bit division (batched kernels)
    int64_t stride_a, stride_x, stride_y; // elements between products (batch > 1)
    int64_t k_chunk; // K elements per slice (k when not split)
    float alpha, beta;
    int p_log2;         // threads per row = 1 << p_log2
    int rows_per_block; // rows one block computes per grid-stride step
    int prefetch_lines;     // 128-byte lines of its first rows a block asks L2 for before it waits,
    int64_t prefetch_blocks; // in blocks of the first wave only (linear block index below this)
    int pdl;                 // launched with PDL: wait for the previous kernel first
    // Phased rows (kLoadsPhased): rows period apart share their 16-byte phase. Block b takes
    // rows of class b % period only, and stages x once in that class's phase. 1 otherwise.
    int period;
    // Phased rows with x's phase copies (kLoadsPhasedCopies): x is the workspace's copies,
    // copy b (x in phase b: element j at b + j, zeros around) at x + b * x_phase_stride.
    int64_t x_phase_stride;
    Epilogue epilogue;
};

// Compile-time choices of a row kernel; launch geometry follows from RowArgs.
struct RowLaunch {
    gemv_dtype_t dtype;
    int loads; // gemv_loads_t
    int unroll;
    bool x_in_smem;
    int splits; // grid.y
    bool pdl;
    int64_t max_blocks; // grid.x cap (a multiple of args.period), 0 for one block a row step
    RowArgs args;
};

// How a row kernel reads A and x (gemv_config_t.vector_loads, gemv_loads_t).
constexpr int kLoadsScalar = GEMV_LOADS_SCALAR, kLoadsAligned = GEMV_LOADS_ALIGNED16,
              kLoadsRealigned = GEMV_LOADS_REALIGNED16, kLoadsPhased = GEMV_LOADS_PHASED16,
              kLoadsAligned8 = GEMV_LOADS_ALIGNED8, kLoadsPhasedCopies = GEMV_LOADS_PHASED16_X_COPIES;
// op T's column kernel on phased rows without split-M (ColumnLaunch.vector_loads only, not a
// gemv_loads_t): each row lane walks one phase class (row lanes a multiple of the period).
constexpr int kLoadsLaneClasses = 16;
// Either kind of phased rows (edge packs masked, one aligned load of A a pack).
constexpr bool phased_loads(int loads) { return loads == kLoadsPhased || loads == kLoadsPhasedCopies; }
// Elements between x's phase copies: room for x at any phase b < 16 / esz, whole packs.
inline int64_t x_phase_stride(int64_t k, size_t esz) {
    const int64_t pack = 16 / (int64_t)esz;
    return (k + pack - 1) / pack * pack + pack;
}

// Rows of a matrix whose 16-byte phases repeat every phase_period(...) rows: the smallest
// P with P * lda * esz a multiple of 16 (1, 2, 4, 8 or 16).
inline int phase_period(int64_t lda, size_t esz) {
    int p = 1;
    while (((uint64_t)lda * esz * (uint64_t)p) % 16 != 0) p *= 2;
    return p;
}

// op T's stream (tstream.cu): the columns of A's aligned 16-byte packs repeat every
// lda / gcd(lda, 16 / esz) packs (the pack period), and a block holds a multiple of the
// period near the threads asked for (at least one period).
inline int64_t pack_period(int64_t lda, size_t esz) { return lda / std::gcd(lda, (int64_t)(16 / esz)); }
inline int64_t stream_block_threads(int64_t period, int64_t threads) { return period * std::max<int64_t>(1, threads / period); }

inline size_t dtype_size(gemv_dtype_t t) { return t == GEMV_DTYPE_F32 ? 4 : 2; }

// Largest x slice staged in shared memory: the default 48 KB a block gets without
// an opt-in attribute call (keeps calls free of per-device setup), less the kernel's own
// static shared memory. The row-block kernel keeps one float a warp for its reduction;
// a slice that fills all 48 KB fails to launch there (cudaErrorInvalidValue).
constexpr size_t kMaxSmemBytes = 48 * 1024;
// Shared memory an SM holds (sm_90), for the one-wave grids of kernels that stage x.
constexpr size_t kSmemPerSm = 228 * 1024;
constexpr int kMaxWarpsPerBlock = 32;
constexpr size_t max_x_smem_bytes(int threads_per_row) {
    return threads_per_row > 32 ? kMaxSmemBytes - kMaxWarpsPerBlock * sizeof(float) : kMaxSmemBytes;
}
// Threads a block may have: 4 packs in flight per thread need more than the 64
// registers a 1024-thread block leaves each thread (ptxas spills), so unroll 4 caps
// blocks at 512 threads. Both the kernels' launch bounds and the registry use this.
constexpr int max_block_threads(int unroll) { return unroll >= 4 ? 512 : 1024; }
// Blocks of max_block_threads an SM must hold, as __launch_bounds__' second argument (0:
// no bound). The 16-byte single-product kernels fit 32 registers with unroll <= 2 (2048
// threads an SM) and 40 with 4 by themselves, and stay as compiled. The batched ones took
// 44-50 (per-row x and product offsets): half the occupancy, 0.67x cuBLAS on 8 x 4096^2
// fp32. They are held to the same occupancy (32 and 42 registers; at most 8 bytes spill).
// Realigned rows (two x packs and a shift a pack, the head and tail loaded up front) take
// 50-64 registers; held to 40 they spilled 16-76 bytes, to 32 (batched) 40-52: they stay
// as compiled. Phased rows are held to 32 and 40 (left alone, ptxas took 47-76): unroll 1
// spills at most 8 bytes there, 2 and 4 up to 72 (phased_dot reads A's extent from the
// parameters, not registers: before, unroll 1 spilled 16-48 bytes); with x read through L1
// and shifted (two x packs a pack) they stay as compiled.
constexpr int min_blocks_per_sm(int unroll, bool batched, int loads, bool x_in_smem) {
    if (loads == GEMV_LOADS_PHASED16) return x_in_smem ? (unroll <= 2 ? 2 : 3) : 0;
    if (loads == GEMV_LOADS_PHASED16_X_COPIES) return unroll <= 2 ? 2 : 3; // phased_dot, x from L1
    return !batched || loads == GEMV_LOADS_REALIGNED16 ? 0 : unroll <= 2 ? 2 : 3;
}

// Phased rows reading x through L1 index a slice's packs in 32 bits (common.cuh).
constexpr int64_t kMaxPhasedSliceElements = (int64_t)1 << 32;
// Phased rows with x's phase copies count a row's elements in 32 bits (phased_dot).
constexpr int64_t kMaxPhasedCopiesElements = (int64_t)1 << 30;

// Split-K slices are multiples of this many elements, so slices keep 16-byte alignment.
constexpr int64_t kSliceGranule = 8;
// Every row of every product starts 16-byte aligned (registry.cpp).
struct Problem;
bool rows_aligned16(const Problem &pb);
// ... aligned to `bytes` (a power of two): 8 for 8-byte loads.
bool rows_aligned_to(const Problem &pb, unsigned bytes);
// q_mma can read this quantized problem's x in place (x_in_smem = 0): x contiguous, 16-byte
// aligned, in order (no act-order perm), and K within its 32-bit step counters (registry.cpp).
bool qmma_x_in_place_ok(const Problem &pb);
// Where the heuristic reads rows that do not start 16-byte aligned as phased rows: large
// single products (dispatch.cpp). The table does not stretch smaller entries over them.
bool phased_regime(const Problem &pb);
// Where the heuristic reads op T as one stream of packs (t_stream) or as phased rows: more
// than 48 rows that do not start 16-byte aligned (dispatch.cpp). The table does not stretch
// entries of other reads over them.
bool t_misaligned_regime(const Problem &pb, int sm_count);
// Where the heuristic runs int8 weights on q_block_rows (dispatch.cpp), and its config
// there; false elsewhere. The table does not stretch other operations' entries over it.
bool q_block_rows_config(const Problem &pb, int sm_count, gemv_config_t *out);
// ... int4 weights on q_mma_rounds (small and medium matrices), the same way.
bool q_mma_rounds_config(const Problem &pb, int sm_count, gemv_config_t *out);
// ... dense 16-bit op N rows of 128 bytes to 1 KB on row_mma (the tensor cores), the same way.
bool row_mma_config(const Problem &pb, gemv_config_t *out);
// ... as phased rows with x's phase copies, where the workspace holds them (dispatch.cpp).
// Tuned entries of another config do not apply there (tables tuned before the copies).
bool phased_copies_regime(const Problem &pb);
// The heuristic's x-held rule for smaller int4 and int8 matrices (dispatch.cpp): its config
// in *out where it applies and its slices fit the workspace.
bool x_held_small_config(const Problem &pb, int sm_count, gemv_config_t *out);
// Elements of each K slice when k is split s ways (registry.cpp): a multiple of kSliceGranule.
int64_t split_slice_len(int64_t k, int s);

// Where a batch of outputs lives: n entries a product at incy, products stride_y apart;
// output g (0 <= g < n * batch) is entry g % n of product g / n.
struct OutputMap {
    void *y_first;
    int64_t n, incy, batch, stride_y;
};
inline OutputMap output_map(const Problem &pb) { return {pb.y_first, pb.len_y(), pb.incy, pb.batch, pb.stride_y}; }

// Arguments of one op-T (column) kernel launch. A block owns a tile of columns
// (threads_per_row threads across it, each one pack wide) and a slice of rows
// (rows_per_block row lanes); split-M slices write partials acc[(slice * batch + b) * k + j].
struct ColumnArgs {
    const void *A;
    const void *x; // logical element 0 of product 0
    void *y;       // logical element 0 of product 0
    float *acc;    // partials when splits > 1
    int64_t m, k, lda, incx, incy, batch, stride_a, stride_x, stride_y;
    int64_t m_chunk; // rows per slice (per period slices when phased)
    int64_t tiles;   // column tiles
    float alpha, beta;
    int c_log2; // threads across the tile's columns = 1 << c_log2
    int row_lanes;
    int period; // phased slices: rows of one 16-byte phase lie period apart (1 otherwise, lane classes too)
    int pdl;
    // 128-byte lines of its first tile's first rows a block asks L2 for before it waits on
    // the previous kernel (0: none), in blocks of the first wave only (linear index below).
    int prefetch_lines;
    int64_t prefetch_blocks;
};

struct ColumnLaunch {
    gemv_dtype_t dtype;
    int vector_loads; // kLoadsScalar, kLoadsAligned, kLoadsRealigned, kLoadsPhased (split-M, a slice a class) or kLoadsLaneClasses
    int unroll;
    int splits; // row slices (grid.y): chunks of m_chunk rows, times the period when phased
    ColumnArgs args;
};

// Arguments of one op-T stream launch (tstream.cu). A is read as one run of aligned 16-byte
// packs over its whole extent (rows and their gaps alike): a block of `threads` threads (a
// multiple of the pack period, so every pack a thread reads holds the same columns) walks a
// slice of slice_packs packs (a multiple of threads) of each product; slice s writes
// partials acc[(s * batch + b) * k + j] (splits > 1) or y.
struct TStreamArgs {
    const void *A;
    const void *x; // logical element 0 of product 0
    void *y;       // logical element 0 of product 0
    float *acc;    // partials when splits > 1
    int64_t m, k, lda, incx, incy, batch, stride_a, stride_x, stride_y;
    int64_t slice_packs;
    int64_t rows_step; // rows a thread's next pack lies below its last: threads * pack / lda
    int threads;       // that walk the stream (the block has whole warps: the rest idle)
    float alpha, beta;
    int pdl;
};

struct TStreamLaunch {
    gemv_dtype_t dtype;
    int unroll;
    int splits; // slices (grid.x)
    TStreamArgs args;
};

// Arguments of one row-stream launch (rowstream.cu). A block streams whole rows as one run
// of aligned 16-byte packs of A (the rows' gaps, lda - k, included), so a row's alignment
// does not matter; each step covers rows_per_step rows, one pack a thread UNROLL times.
struct StreamArgs {
    const void *A;
    const void *x; // logical element 0
    void *y;       // logical element 0
    int64_t m, k, lda, incx, incy;
    int64_t a_end;     // (m - 1) * lda + k: elements of A from A
    int64_t steps;     // ceil(m / rows_per_step)
    int a_phase;       // elements from the 16-byte boundary at or below A up to A
    int rows_per_step; // whole rows a step's packs cover
    int x_packs;       // 16-byte packs of x staged with its wrap (x_stream_packs)
    int p_log2;        // lanes summing a row's pack sums = 1 << p_log2
    float alpha, beta;
    int pdl;
};

struct StreamLaunch {
    gemv_dtype_t dtype;
    int loads; // kLoadsAligned (every row aligned: x needs no shift) or kLoadsRealigned
    int unroll;
    int threads; // a block
    int64_t blocks;
    StreamArgs args;
};

// Arguments of one row-tile launch (rowtile.cu, rows_in_registers): a block sums a tile of
// R rows over one K slice, each thread keeping R sums over its 16-byte slots (slot q of a
// row is the aligned pack q from the 16-byte boundary at or below the row's start).
struct TileArgs {
    const void *A;
    const void *x; // element 0 (incx == 1)
    void *y;       // logical element 0
    float *acc;    // partials acc[slice * m + row] when split, else null
    int64_t m, k, lda, incy;
    int64_t tiles; // ceil(m / R)
    int64_t slots; // slots a row spans (tile_slots)
    int64_t slice; // slots a K slice
    float alpha, beta;
    int pdl;
};

struct TileLaunch {
    gemv_dtype_t dtype;
    int loads;   // kLoadsAligned or kLoadsRealigned
    int rows;    // R, rows a tile (and sums a thread)
    int unroll;  // slots in flight a thread
    int threads; // a block
    int splits;  // grid.y
    bool issue_first; // edge slots issue every load before the first is used (rowtile.cu)
    bool pdl;
    TileArgs args;
};
// Slots a row spans: aligned rows ceil(K / N); rows of any phase one more where the phase
// pushes the last element into the next pack (the most: phase N - 1).
inline int64_t tile_slots(int64_t k, size_t esz, bool realigned) {
    const int64_t n = 16 / (int64_t)esz;
    return realigned ? (k + 2 * n - 2) / n : (k + n - 1) / n;
}
// Packs of A a row-tile thread has in flight: R rows times UNROLL slots, at most 4. More ran
// slower on the H100, not faster (4 rows x 4 slots: 893 us on bf16 162 x 1640311 against 185
// for 4 x 1; 16 x 1: 239), so only these kernels are built.
constexpr int kTileMaxPacks = 4;
constexpr int tile_max_threads(int rows) { return rows <= 1 ? 512 : 1024 / rows; }

// Row tiles on the tensor cores (rowmma.cu, op N, fp16/bf16 rows of whole aligned packs): a
// warp sums a tile of 16 rows of one product, 32 columns an mma step pair; tile t of the
// batch is tile t % tiles_per_product of product t / tiles_per_product.
struct MmaRowArgs {
    const void *A;
    const void *x; // element 0 of product 0 (incx == 1)
    void *y;       // logical element 0 of product 0
    int64_t m, k, lda, incx, incy, batch, stride_a, stride_x, stride_y;
    int64_t tiles;          // tiles_per_product * batch
    int64_t tiles_per_product; // ceil(m / 16)
    DivideBy tile_div;      // division by tiles_per_product
    float alpha, beta;
    int pdl;
};
struct MmaRowLaunch {
    gemv_dtype_t dtype;
    int warps;  // tiles a block at once
    int unroll; // steps of 32 columns in flight a thread (1, 2 or 4)
    int64_t blocks;
    MmaRowArgs args;
};
constexpr int kMmaTileRows = 16;

// The row stream's shared memory: x staged over lda + one pack (a pack that starts in the
// last columns of a row ends in the next row, whose x is x again), and a float pair
// (the pack's sums for the row it starts in and the next) for every pack of a step.
inline int x_stream_packs(int64_t lda, size_t esz) { return (int)((lda - 1) / (int64_t)(16 / esz) + 2); }
inline size_t stream_smem_bytes(int64_t lda, size_t esz, int threads, int unroll) {
    return (size_t)x_stream_packs(lda, esz) * 16 + (size_t)threads * unroll * 2 * sizeof(float);
}
// Whole rows a step of threads * unroll packs covers (0: not even one row fits).
inline int64_t stream_rows_per_step(int64_t lda, size_t esz, int threads, int unroll) {
    const int64_t n = 16 / (int64_t)esz;
    return std::max<int64_t>(0, ((int64_t)threads * unroll * n - n) / lda);
}

// ---- quantized weights (qrows.cu, qconvert.cu; layout in docs/quantized.md) ----
#if defined(__CUDACC__)
#define GEMV_HOST_DEVICE __host__ __device__
#else
#define GEMV_HOST_DEVICE
#endif
// Codes in one 16-byte pack of a packed row: 32 int4 or 16 int8.
GEMV_HOST_DEVICE constexpr int q_pack_codes(int bits) { return 128 / bits; }
// Groups of a row (group_size 0: one).
GEMV_HOST_DEVICE inline int64_t q_groups(const gemv_qmatrix_t &w) {
    return w.group_size == 0 ? 1 : (w.k + w.group_size - 1) / w.group_size;
}
// Groups of 32 or 64 columns: shorter than an int4 MMA step of 128, so a step holds 2 or 4
// of them (group_size 0: one a row).
inline bool q_groups_under_a_step(const gemv_qmatrix_t &w) { return w.group_size != 0 && w.group_size < 128; }
// Bytes of a packed row without padding beyond its last 16-byte pack.
GEMV_HOST_DEVICE inline int64_t q_row_bytes(int bits, int64_t k) {
    return (k + q_pack_codes(bits) - 1) / q_pack_codes(bits) * 16;
}
// Columns of x a quantized row block stages at once (fp32): 48 KB.
constexpr int64_t kQMaxSlice = kMaxSmemBytes / sizeof(float);

// Arguments of one quantized row-kernel launch: teams of 2^p_log2 lanes, each team `rows`
// (the config's unroll) consecutive rows; blocks grid-stride over row tiles (grid.x) of one
// K slice (grid.y) each. A slice stages its x once a block, as fp32.
struct QArgs {
    const uint8_t *q;           // packed codes
    const void *scales, *zeros; // m x groups
    const int32_t *perm;        // x index of each packed column, or null
    const void *x;              // logical element 0
    void *y;                    // logical element 0
    float *acc;                 // slice partials acc[slice * m + row] when split
    int64_t m, k, ldq, lds, ldz, incx, incy;
    int64_t slice;              // columns a slice: a multiple of the pack's codes
    int64_t chunk;              // columns staged at once (kQMaxSlice): a slice longer than that
                                // restages x for each row tile
    int gs_log2;                // group of column j: j >> gs_log2 (62 for one group a row)
    int p_log2, teams;          // lanes a team, teams a block
    float alpha, beta;
    int pdl;
    // q_mma_x_held: blocks of the first wave (linear index below prefetch_blocks) ask L2,
    // before the PDL wait, for the codes of their first prefetch_tiles tiles (0: none).
    int64_t prefetch_blocks;
    int prefetch_tiles;
    int prefetch_rows; // q_rows: rows of the block's first tile whose first packs it prefetches
    int prefetch_lines; // q_block_rows, q_mma_rounds: lines of its rows' first codes a block asks for
};

struct QLaunch {
    gemv_dtype_t dtype; // of x, y, scales, zeros
    int bits, zero_mode, rows; // rows a team (1, 2 or 4)
    int splits;
    int64_t blocks;
    bool x_staged = true; // q_mma with x_in_smem = 0: x read in place through L1
    bool x_held = false;  // q_mma_x_held: x in registers, teams = tiles a block, rows = steps a chunk
    bool rounds = false;  // q_mma_rounds: a tile a block, unroll steps a round
    int unroll = 1;       // q_block_rows: packs a row in flight a thread (rows: rows a block); q_mma_rounds: steps a round
    QArgs args;
};
// q_block_rows: a block of at most this many threads owns rows_per_block rows.
constexpr int kQBlockMaxThreads = 256;
// q_mma's block: kw warps a 16-row tile (threads_per_row = 32 kw) times rows_per_block tiles.
constexpr int kQmmaMaxThreads = 256;
// The staged columns of x (fp32, padded to whole packs) a block keeps in shared memory.
inline size_t q_smem_bytes(int64_t cols) { return (size_t)std::min(cols, kQMaxSlice) * sizeof(float); }

// One conversion into or out of the packed layout (qconvert.cu): quantize a dense matrix,
// repack a GPTQ or AWQ checkpoint, or dequantize. Every pointer is a device pointer.
enum class QConvert : int { kQuantize = 0, kGptq = 1, kAwq = 2, kDequantize = 3 };
struct QConvertArgs {
    QConvert kind;
    gemv_qmatrix_t w;
    const void *dense; int64_t ld_dense; // kQuantize: A (w.dtype); kDequantize: out (fp32)
    const int32_t *src_q, *src_z;        // checkpoint qweight and qzeros
    const void *src_s;                   // checkpoint scales [groups, m] (w.dtype)
    int zero_offset;                     // GPTQ: added to stored zeros
};
cudaError_t launch_qconvert(const QConvertArgs &a, cudaStream_t stream);

// Launchers, one per kernel family (rowgroup.cu, rowblock.cu, rowstream.cu, rowtile.cu, rowmma.cu, columns.cu, qrows.cu,
// qmma.cu, epilogue.cu).
cudaError_t launch_rowgroup(const RowLaunch &L, cudaStream_t stream);
cudaError_t launch_rowblock(const RowLaunch &L, cudaStream_t stream);
cudaError_t launch_columns(const ColumnLaunch &L, cudaStream_t stream);
cudaError_t launch_tstream(const TStreamLaunch &L, cudaStream_t stream);
cudaError_t launch_rowstream(const StreamLaunch &L, cudaStream_t stream);
cudaError_t launch_rowtile(const TileLaunch &L, cudaStream_t stream);
cudaError_t launch_rowmma(const MmaRowLaunch &L, cudaStream_t stream);
cudaError_t launch_qrows(const QLaunch &L, cudaStream_t stream);
cudaError_t launch_qmma(const QLaunch &L, cudaStream_t stream);
cudaError_t launch_qblock(const QLaunch &L, cudaStream_t stream);
// y = beta*y (y = 0 when beta == 0) over every output of the map.
cudaError_t launch_scale_y(gemv_dtype_t dtype, const OutputMap &y, float beta, cudaStream_t stream, bool pdl);
// The 16 / esz copies of x[j * incx] (j < k) in each 16-byte phase, stride elements apart
// (RowArgs.x_phase_stride), into copies (16-byte aligned).
cudaError_t launch_x_phase_copies(gemv_dtype_t dtype, const void *x, int64_t incx, int64_t k, void *copies,
                                  int64_t stride, cudaStream_t stream, bool pdl);
// out[b * k + j] = x[b * stride_x + j * incx] for b < products, j < k: one product's x or a
// batch's, contiguous and in order, for kernels that need x in aligned packs (row_mma).
cudaError_t launch_x_gather(gemv_dtype_t dtype, const void *x, int64_t incx, int64_t stride_x, int64_t k,
                            int64_t products, void *out, cudaStream_t stream, bool pdl);
// y_g = alpha * sum_{s<splits} acc[s*G + g] + beta*y_g (G = n * batch), summed in slice order.
cudaError_t launch_splitk_reduce(gemv_dtype_t dtype, const float *acc, int splits, const OutputMap &y,
                                 float alpha, float beta, cudaStream_t stream, bool pdl);

// Streaming-read kernel of the bandwidth ceiling (read_ceiling.cu).
cudaError_t launch_read_ceiling(const void *data, size_t bytes, float *sink, int sm_count, cudaStream_t stream,
                                bool pdl);

// Error detail of the last failed call on this thread (gemv_last_error()).
void set_error(const char *fmt, ...);
// Logging (log.cpp): a message at level goes to the logger when the level allows it.
int log_level();
void log_message(gemv_log_level_t level, const char *fmt, ...) noexcept;
void log_once(gemv_log_level_t level, const std::string &message) noexcept; // each distinct message once
void clear_error();

// The registry (registry.cpp): one Operation an entry. Each owns its description (name,
// the problems it serves, parameter ranges), its legality rule, its workspace size, its
// default config and its launch; everything else iterates the list.
struct Operation {
    gemv_variant_info_t info;
    // can_implement for a range-valid config and a problem the operation serves:
    // SUCCESS or NOT_SUPPORTED (detail set).
    gemv_status_t (*can_implement)(const Operation &op, const gemv_config_t &c, const Problem &pb);
    size_t (*workspace)(const Operation &op, const gemv_config_t &c, const Problem &pb);
    // Queue the kernels on pb.stream; c has passed can_implement.
    gemv_status_t (*launch)(const Operation &op, const gemv_config_t &c, const Problem &pb);
    int split_mode; // 0 none, 1 atomic, 2 two-pass
    // Operations whose kernels fix how they read: bit l set, vector_loads = l is allowed
    // (0: any the op allows); with stages_x_always, x_in_smem must be 1.
    uint32_t loads_mask = 0;
    bool stages_x_always = false;
    // Operations that keep rows_per_block * unroll packs in flight a thread: at most this
    // many (0: no such bound).
    int max_packs = 0;
    // Operations whose block is threads_per_row threads walking rows_per_block tiles
    // (q_mma_x_held): the block-size rules read p, not p * rows_per_block.
    bool block_walks_tiles = false;

    bool serves(const Problem &pb) const; // op, storage types, batch
};

int variant_count();
const Operation *operation(int variant);
const gemv_variant_info_t *variant_info(int variant);
// A config as the library reads it: struct_size checked, fields beyond it defaulted.
gemv_status_t read_config(const gemv_config_t *in, gemv_config_t *out);
gemv_config_t make_config(int variant, int p, int rows, int vec, int unroll, int smem, int split);
// Range checks of config against its variant: SUCCESS or INVALID_VALUE (detail set).
gemv_status_t validate_config(const gemv_config_t &c);
// Whether the config's operation serves pb, and can_implement: SUCCESS or NOT_SUPPORTED.
gemv_status_t can_implement(const gemv_config_t &c, const Problem &pb);
size_t workspace_needed(const gemv_config_t &c, const Problem &pb);
// Rows per op T split-M slice of about m / s rows: whole multiples of step (the row lanes
// times the unroll), so every thread of a slice but the last runs full unrolled steps.
inline int64_t row_slice_len(int64_t m, int s, int64_t step) {
    int64_t len = (m + s - 1) / s;
    len = (len + step - 1) / step * step;
    return std::max<int64_t>(1, std::min(len, m));
}
// Queue the config's kernels on pb.stream; the config must have passed can_implement.
gemv_status_t launch(const gemv_config_t &c, const Problem &pb);

// Shared by the entry points (gemv.cpp, timing.cpp): map a CUDA error to a status, with
// the cause in the detail message; read the current device; SM count, cached.
gemv_status_t cuda_failure(cudaError_t e, const char *what);
gemv_status_t current_device(int *device);
// SUCCESS when stream queues work on device; INVALID_VALUE when it belongs to another one.
gemv_status_t check_stream_device(cudaStream_t stream, int device);
int sm_count(int device);
// Whether kernels on this device launch with programmatic dependent launch: compute
// capability 9.0 and up, unless GEMV_PDL=0 (cached per device).
bool pdl_supported(int device);
// KiB of A each SM's first wave of blocks prefetches into L2 before waiting on the
// previous kernel, for block-per-row kernels (row-group kernels: half). GEMV_PREFETCH_KB_PER_SM
// overrides the default 64 (0: no prefetch); read once.
int prefetch_kb_per_sm();

// The workspace pool (workspace.cpp, GEMV_FLAG_LIBRARY_WORKSPACE). pool_workspace gives the
// calling thread's buffer for stream (ptr NULL while the stream is capturing, or when every
// pooled buffer is busy); pool_workspace_done ends the use, recording it in stream order
// when launched.
gemv_status_t pool_workspace(int device, cudaStream_t stream, void **ptr, size_t *bytes, bool *capturing);
gemv_status_t pool_workspace_done(int device, cudaStream_t stream, void *ptr, bool launched);
int pool_size(int device); // buffers the pool holds for device

// SUCCESS when p is device memory of device (or managed, or mapped pinned host memory);
// INVALID_POINTER with the detail naming `name` otherwise.
gemv_status_t check_device_pointer(const void *p, const char *name, int device);
// A quantized matrix descriptor (quantized.cpp): struct_size and values (bits, group size,
// zero mode, type, sizes, strides, extents): SUCCESS or INVALID_VALUE, detail naming `name`.
gemv_status_t check_qmatrix(const gemv_qmatrix_t *w, const char *name);
// Its pointers: NULL and alignment (INVALID_POINTER); with device >= 0 also that each is
// device memory of that device.
gemv_status_t check_qmatrix_pointers(const gemv_qmatrix_t &w, const char *name, int device);

// A gemv_args_t as the library reads it: struct_size checked (INVALID_VALUE, detail set),
// then the checks of values alone (sizes, lda, increments, batch, strides, enums).
gemv_status_t read_args(const gemv_args_t *in, gemv_args_t *out);

// The gemv_args_t of a BLAS-shaped call (gemv.cpp): every field set, flags 0, qweight NULL.
gemv_args_t blas_args(gemv_op_t op, gemv_dtype_t dtype, int64_t m, int64_t k, float alpha, const void *A, int64_t lda,
                      int64_t stride_a, const void *x, int64_t incx, int64_t stride_x, float beta, void *y,
                      int64_t incy, int64_t stride_y, int64_t batch, void *workspace, size_t workspace_bytes,
                      gemv_stream_t stream);

// One Problem from checked arguments (gemv.cpp); no checks.
Problem make_problem(const gemv_args_t &a);

// A workspace pointer that stands in where only the size matters (the queries that read no
// data, and dispatch before the pool lends its buffer).
inline void *const kStandInWorkspace = reinterpret_cast<void *>(uintptr_t(256));
// The Problem of args for those queries (read_args' checks first): a workspace of
// workspace_bytes without a pointer gets the stand-in.
gemv_status_t problem_of(const gemv_args_t *in, Problem *pb);

// The storage type's name ("float32", ...), for messages and tables.
const char *dtype_name(gemv_dtype_t t);

// The dispatcher (dispatch.cpp): always returns a config that can_implement accepts and
// whose workspace fits. The device's tuned table decides where it has an entry that runs
// the problem (unless use_table is false), else the heuristic.
gemv_config_t select_config(const Problem &pb, int device, bool use_table, bool *from_table);
// The heuristic of pb's op; it always returns a config that runs pb within its workspace.
gemv_config_t heuristic_config(const Problem &pb, int sm_count);
// Whether q_mma reading x in place (x_in_smem = 0: a block a tile of c's rows, whole K) shares
// pb's tiles out evenly on sm_count SMs: within one wave each SM's share at least 80% of the
// largest, beyond it the last wave at least 80% full (the heuristic's rule, and a table
// entry's at another M).
bool qmma_in_place_shares_evenly(const gemv_config_t &c, const Problem &pb, int sm_count);
// An operation's default config for pb (a problem it serves): the heuristic's choice moved
// into the operation's ranges; it may still not run pb (callers ask can_implement).
gemv_config_t default_config(const Operation &op, const Problem &pb, int sm_count);

// Tuned tables: the format and the nearest-shape lookup (table.cpp); which table each
// device uses, found once per device (table_loader.cpp). Tables are immutable once read.
struct Table;
// Detail set on failure. With expect, a table whose header is for another GPU, libgemv or
// runtime is refused (TABLE_MISMATCH) before its entries are parsed.
gemv_status_t read_table(const char *path, Table **out, const gemv_device_props_t *expect);
void free_table(const Table *t);
// A new table: primary's entries, and fill's at every shape primary has no entry for (its
// path and fingerprint are primary's). *filled: the entries fill gave.
Table *merge_tables(const Table &primary, const Table &fill, int64_t *filled);
const gemv_table_fingerprint_t &table_fingerprint(const Table &t);
const char *table_path(const Table &t);
uint64_t table_serial(const Table &t); // unique per table read by this process
// SUCCESS or TABLE_MISMATCH (detail names the difference).
gemv_status_t check_table(const Table &t, const gemv_device_props_t &props);
// The heuristic's config for a problem, computed at most once: the table lookup may need it
// to judge an entry, and dispatch needs it when no entry applies.
struct LazyHeuristic {
    const Problem &pb;
    int sm_count;
    bool done = false;
    gemv_config_t config{};
    const gemv_config_t &get() {
        if (!done) config = heuristic_config(pb, sm_count), done = true;
        return config;
    }
};
// The config of the nearest entry (log2 M, log2 K) of pb's descriptor (op, dtype, batched,
// row kind) that can run pb within its workspace; false when none can, or when the entry
// leaves pb to the heuristic (docs/tuning.md, "The lookup").
bool table_lookup(const Table &t, const Problem &pb, LazyHeuristic &heuristic, gemv_config_t *config,
                  double *distance);
// The table device dispatches with (null: none); the first call per device finds it. A
// table replaced by gemv_load_table is freed once the last dispatch holding it is done.
std::shared_ptr<const Table> device_table(int device);
// The serial number of that table (0: none): one atomic load, for the dispatch cache.
uint64_t device_table_serial(int device);

// a * b for non-negative a and b, saturated at INT64_MAX (sizes a check has not bounded).
inline int64_t mul_sat(int64_t a, int64_t b) {
    const __int128 p = (__int128)a * b;
    return p > INT64_MAX ? INT64_MAX : (int64_t)p;
}

// Every exported function runs its body through this: no C++ exception (an allocation
// failure, a failed mutex) crosses the C ABI, where it would abort the caller.
template <typename F> auto guarded(const char *what, F &&body) noexcept -> decltype(body()) {
    try {
        return body();
    } catch (const std::bad_alloc &) {
        set_error("%s: out of host memory", what);
        if constexpr (std::is_same_v<decltype(body()), gemv_status_t>) return GEMV_STATUS_ALLOC_FAILED;
        else return decltype(body())();
    } catch (const std::exception &e) {
        set_error("%s: internal error: %s", what, e.what());
        if constexpr (std::is_same_v<decltype(body()), gemv_status_t>) return GEMV_STATUS_INTERNAL_ERROR;
        else return decltype(body())();
    } catch (...) {
        set_error("%s: internal error", what);
        if constexpr (std::is_same_v<decltype(body()), gemv_status_t>) return GEMV_STATUS_INTERNAL_ERROR;
        else return decltype(body())();
    }
}

} // namespace libgemv
