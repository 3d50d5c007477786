// The geometry of every kernel launch (grid, block, shared memory), host code only. The
// launchers (*.cu) launch exactly these plans, and the CPU launch-plan checker
// (tests/hostcheck) checks the same plans against the hardware limits and the operands'
// extents without a GPU.
#pragma once

#include <algorithm>

#include "internal.h"

namespace libgemv {

struct LaunchPlan {
    dim3 grid, block;
    size_t dynamic_smem; // bytes; the kernel's static shared memory is static_smem
    size_t static_smem;
};

// grid.x of n blocks: at least one, at most 2^31 - 1 (past it the kernels grid-stride, or can_implement refuses the problem).
inline unsigned grid_x(int64_t n) { return (unsigned)std::max<int64_t>(1, std::min<int64_t>(n, 0x7fffffff)); }

// Shared-memory bytes for staging a slice of x (16-byte multiple), 0 without staging.
// Phased rows stage it shifted by up to one pack less an element.
inline size_t staged_x_bytes(int64_t elements, size_t esz, int loads) {
    const size_t b = (size_t)elements * esz + (loads == kLoadsPhased ? 16 - esz : 0);
    return (b + 15) & ~size_t(15);
}
inline size_t x_smem_bytes(const RowLaunch &L) {
    return L.x_in_smem ? staged_x_bytes(L.args.k_chunk, dtype_size(L.dtype), L.loads) : 0;
}

// Row kernels: p * rows_per_block threads a block; blocks along the rows of all products
// (grid.x, a grid-stride loop past the hardware limit, so any M and batch); K slices
// (grid.y). The row-block kernel keeps one float a warp for its reduction. Staged x: at
// most max_blocks along the rows, so each block's staging of x serves many rows; phased
// rows in period classes of rows, the same number of blocks each (a multiple of period).
inline LaunchPlan row_plan(const RowLaunch &L) {
    const RowArgs &a = L.args;
    const int period = std::max(1, a.period);
    const int64_t class_rows = (a.rows + period - 1) / period;
    int64_t per_class = std::min<int64_t>((class_rows + a.rows_per_block - 1) / a.rows_per_block, 0x7fffffff / period);
    if (L.max_blocks > 0 && per_class > L.max_blocks / period) {
        // As many blocks as give each the same number of steps (ceil(steps / cap)): fewer
        // blocks, and no wave of a few blocks at the end.
        const int64_t cap = std::max<int64_t>(1, L.max_blocks / period), steps = (per_class + cap - 1) / cap;
        per_class = (per_class + steps - 1) / steps;
    }
    const int64_t blocks = per_class * period;
    const bool row_block = a.p_log2 > 5;
    return {dim3((unsigned)blocks, (unsigned)L.splits),
            dim3((unsigned)(a.rows_per_block << a.p_log2)), x_smem_bytes(L),
            row_block ? kMaxWarpsPerBlock * sizeof(float) : 0};
}

// Row stream: threads a block, blocks (at most a wave's worth, grid-stride over steps).
inline LaunchPlan stream_plan(const StreamLaunch &L) {
    return {dim3(grid_x(L.blocks)), dim3((unsigned)L.threads),
            stream_smem_bytes(L.args.lda, dtype_size(L.dtype), L.threads, L.unroll), 0};
}

// The op T stream: slices (grid.x) x products (grid.y, grid-stride past the limit); whole
// warps of threads (those past args.threads idle); shared memory for every thread's pack
// sums and the column part sums (at most a block of them).
inline LaunchPlan t_stream_plan(const TStreamLaunch &L) {
    const unsigned block = (unsigned)(L.args.threads + 31) / 32 * 32;
    return {dim3((unsigned)L.splits, (unsigned)std::min<int64_t>(L.args.batch, 65535)), dim3(block),
            (size_t)block * (16 / dtype_size(L.dtype) + 1) * sizeof(float), 0};
}

// Row tiles: p threads a block (all on every row of the tile), row tiles (grid.x, grid-stride
// past the limit) x K slices (grid.y); warp sums in static shared memory.
inline LaunchPlan tile_plan(const TileLaunch &L) {
    return {dim3(grid_x(L.args.tiles), (unsigned)L.splits),
            dim3((unsigned)L.threads), 0, (size_t)L.rows * kMaxWarpsPerBlock * sizeof(float)};
}

// Tensor-core row tiles: warps tiles a block, blocks up to the grid's limit (grid-stride past it).
inline LaunchPlan mma_row_plan(const MmaRowLaunch &L) {
    return {dim3(grid_x(L.blocks)), dim3((unsigned)(32 * L.warps)), 0, 0};
}

// Quantized rows: teams of 2^p_log2 lanes, blocks (grid-stride over row tiles) x K slices;
// the staged slice of x (fp32) in dynamic shared memory.
inline LaunchPlan qrow_plan(const QLaunch &L) {
    const QArgs &a = L.args;
    const int64_t codes = q_pack_codes(L.bits), kpad = (a.k + codes - 1) / codes * codes;
    return {dim3(grid_x(L.blocks), (unsigned)L.splits),
            dim3((unsigned)(a.teams << a.p_log2)), q_smem_bytes(std::min(a.slice, kpad)), 0};
}

// Quantized tensor-core rows: tiles of 16 rows, each 2^p_log2 / 32 warps taking its steps in
// turn (block = teams << p_log2 threads); x staged as fp16
// pairs, 18 four-byte slots a pack of 32 columns, whole steps of 4 packs.
// Unstaged (x_in_smem = 0): no dynamic shared memory.
inline LaunchPlan qmma_plan(const QLaunch &L) {
    const QArgs &a = L.args;
    if (L.rounds) // q_mma_rounds: a tile a block (grid.y: its K slices); the warps' row sums in static shared memory
        return {dim3(grid_x(L.blocks), (unsigned)L.splits), dim3(1u << a.p_log2), 0,
                kQmmaMaxThreads / 32 * 16 * sizeof(float)};
    if (L.x_held) // q_mma_x_held: kw warps a block over its teams tiles, each warp a row of sums
        return {dim3(grid_x(L.blocks), (unsigned)L.splits),
                dim3(1u << a.p_log2), (size_t)(1 << (a.p_log2 - 5)) * a.teams * 16 * sizeof(float), 0};
    const int64_t kpad = (a.k + 31) / 32 * 32;
    const size_t staged = L.x_staged ? (size_t)((std::min({a.slice, a.chunk, kpad}) / 32 + 3) / 4 * 4) * 18 * 4 : 0;
    return {dim3(grid_x(L.blocks), (unsigned)L.splits),
            dim3((unsigned)(a.teams << a.p_log2)), staged,
            kQmmaMaxThreads / 32 * 16 * sizeof(float)}; // and the K warps' row sums
}

// Quantized block rows: a block of 2^p_log2 threads a group of L.rows rows (grid-stride past
// the limit); warp sums in static shared memory.
inline LaunchPlan qblock_plan(const QLaunch &L) {
    return {dim3(grid_x(L.blocks)), dim3(1u << L.args.p_log2), 0,
            (size_t)(kQBlockMaxThreads / 32) * L.rows * sizeof(float)};
}

// Conversions into and out of the packed layout: 256 threads, grid-stride (quantize: a
// warp a group; the others a thread a word or an element).
inline LaunchPlan qconvert_plan(const QConvertArgs &a) {
    const gemv_qmatrix_t &w = a.w;
    const int64_t words = q_row_bytes(w.bits, w.k) / 4;
    const int64_t threads = a.kind == QConvert::kQuantize ? mul_sat(mul_sat(w.m, q_groups(w)), 32)
                            : a.kind == QConvert::kDequantize ? mul_sat(w.m, w.k)
                                                              : mul_sat(w.m, std::max(words, q_groups(w)));
    return {dim3((unsigned)std::clamp<int64_t>((threads + 255) / 256, 1, 1 << 16)), dim3(256), 0, 0};
}

// Column kernels: c * row_lanes threads; column tiles (grid.x), row slices (grid.y),
// products (grid.z), each with a grid-stride loop; lane sums [row_lanes][pack][c] floats.
inline LaunchPlan column_plan(const ColumnLaunch &L) {
    const ColumnArgs &a = L.args;
    const int v = L.vector_loads ? 16 / (int)dtype_size(L.dtype) : 1;
    const unsigned threads = (unsigned)(a.row_lanes << a.c_log2);
    return {dim3((unsigned)std::min<int64_t>(a.tiles, 0x7fffffff), (unsigned)L.splits,
                 (unsigned)std::min<int64_t>(a.batch, 65535)),
            dim3(threads), (size_t)threads * v * sizeof(float), 0};
}

// Epilogues: 256 threads, grid-stride over every output of the batch. The reduce takes
// 2^o_log2 outputs a block (consecutive threads on consecutive outputs, so partial loads
// coalesce) and 256 / 2^o_log2 lanes an output, each adding every lanes-th slice: about 4
// slices a lane, at least 8 lanes (32 outputs a block) and at most 256 (one output), so
// few outputs of many slices do not leave a lane a long chain of L2 loads.
constexpr int kEpilogueThreads = 256;
constexpr int kReduceMaxOutputs = 32;

// One thread an element (grid-stride past the cap): scale_y over every output, x's phase
// copies over the elements of one copy (each thread writes its element to every copy).
inline LaunchPlan elementwise_plan(int64_t elements) {
    const int64_t b = (elements + kEpilogueThreads - 1) / kEpilogueThreads;
    return {dim3((unsigned)std::max<int64_t>(1, std::min<int64_t>(b, 65535 * 32))), dim3(kEpilogueThreads), 0, 0};
}
inline LaunchPlan scale_y_plan(const OutputMap &y) { return elementwise_plan(y.n * y.batch); }

inline int reduce_outputs_log2(int splits) {
    int lanes = 8;
    while (lanes < kEpilogueThreads && (int64_t)lanes * 4 < splits) lanes *= 2;
    int l = 0;
    while ((kEpilogueThreads >> l) > lanes) ++l;
    return l; // outputs a block = 256 / lanes
}

inline LaunchPlan reduce_plan(const OutputMap &y, int splits) {
    const int64_t outputs = int64_t(1) << reduce_outputs_log2(splits);
    const int64_t b = (y.n * y.batch + outputs - 1) / outputs;
    return {dim3((unsigned)std::min<int64_t>(b, 65535 * 32)), dim3(kEpilogueThreads), 0,
            (kEpilogueThreads / 32) * kReduceMaxOutputs * sizeof(float)};
}

// The read-ceiling kernel: 512 threads, a few full waves, grid-stride over 16-byte packs.
constexpr int kCeilingThreads = 512;
inline LaunchPlan read_ceiling_plan(size_t bytes, int sm_count) {
    const int64_t packs = (int64_t)(bytes / 16);
    const int64_t max_blocks = (int64_t)sm_count * (2048 / kCeilingThreads) * 4;
    const int64_t need = (packs + kCeilingThreads - 1) / kCeilingThreads;
    return {dim3((unsigned)std::max<int64_t>(1, std::min(max_blocks, need))), dim3(kCeilingThreads), 0, 0};
}

} // namespace libgemv
