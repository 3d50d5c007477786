// Internal types shared by the entry points, the registry and the kernel launchers.
// Data flows: gemv.cpp (checks, quick returns) -> dispatch.cpp (config) ->
// registry.cpp (legality, launch plan) -> one family's launcher (*.cu) -> kernel.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>
#include <string>

#include "gemv.h"

namespace libgemv {

// One validated call. x_first / y_first point at logical element 0, so element j is
// x_first[j * incx] for either sign of incx (reference-BLAS order).
struct Problem {
    gemv_op_t op;
    gemv_dtype_t dtype;
    int64_t m, k, lda;
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
};

// What the row kernels do with a row's dot product.
enum class Epilogue : int {
    kStore = 0,   // y = alpha*dot + beta*y, converted to T
    kAtomic = 1,  // atomicAdd(acc[row*acc_inc], alpha*dot) into fp32
    kPartial = 2, // acc[slice*m + row] = dot (unscaled, reduced later in fixed order)
};

// Arguments of one row-kernel launch (both families), passed by value.
struct RowArgs {
    const void *A;
    const void *x; // logical element 0
    void *y;       // logical element 0
    float *acc;    // fp32 target of kAtomic / kPartial
    int64_t m, k, lda, incx, incy, acc_inc;
    int64_t k_chunk; // K elements per slice (k when not split)
    float alpha, beta;
    int p_log2;         // threads per row = 1 << p_log2
    int rows_per_block; // rows one block computes per grid-stride step
    int prefetch_lines;     // 128-byte lines of its first rows a block asks L2 for before it waits,
    int64_t prefetch_blocks; // in blocks of the first wave only (linear block index below this)
    int pdl;                 // launched with PDL: wait for the previous kernel first
    Epilogue epilogue;
};

// Compile-time choices of a row kernel; launch geometry follows from RowArgs.
struct RowLaunch {
    gemv_dtype_t dtype;
    bool vector_loads;
    int unroll;
    bool x_in_smem;
    int splits; // grid.y
    bool pdl;
    RowArgs args;
};

inline size_t dtype_size(gemv_dtype_t t) { return t == GEMV_DTYPE_F32 ? 4 : 2; }

// Largest x slice staged in shared memory: the default 48 KB a block gets without
// an opt-in attribute call (keeps calls free of per-device setup), less the kernel's own
// static shared memory. The row-block kernel keeps one float a warp for its reduction;
// a slice that fills all 48 KB fails to launch there (cudaErrorInvalidValue).
constexpr size_t kMaxSmemBytes = 48 * 1024;
constexpr int kMaxWarpsPerBlock = 32;
constexpr size_t max_x_smem_bytes(int threads_per_row) {
    return threads_per_row > 32 ? kMaxSmemBytes - kMaxWarpsPerBlock * sizeof(float) : kMaxSmemBytes;
}
// Threads a block may have: 4 packs in flight per thread need more than the 64
// registers a 1024-thread block leaves each thread (ptxas spills), so unroll 4 caps
// blocks at 512 threads. Both the kernels' launch bounds and the registry use this.
constexpr int max_block_threads(int unroll) { return unroll >= 4 ? 512 : 1024; }
// Split-K slices are multiples of this many elements, so slices keep 16-byte alignment.
constexpr int64_t kSliceGranule = 8;

// Launchers, one per kernel family (rowgroup.cu, rowblock.cu, epilogue.cu).
cudaError_t launch_rowgroup(const RowLaunch &L, cudaStream_t stream);
cudaError_t launch_rowblock(const RowLaunch &L, cudaStream_t stream);
// y = beta*y (y = 0 when beta == 0), m strided elements.
cudaError_t launch_scale_y(gemv_dtype_t dtype, void *y_first, int64_t m, int64_t incy,
                           float beta, cudaStream_t stream, bool pdl);
// y = alpha * sum_{s<splits} acc[s*m + i] + beta*y, summed in slice order.
cudaError_t launch_splitk_reduce(gemv_dtype_t dtype, const float *acc, int splits, int64_t m,
                                 float alpha, float beta, void *y_first, int64_t incy,
                                 cudaStream_t stream, bool pdl);

// Streaming-read kernel of the bandwidth ceiling (read_ceiling.cu).
cudaError_t launch_read_ceiling(const void *data, size_t bytes, float *sink, int sm_count, cudaStream_t stream,
                                bool pdl);

// Error detail of the last failed call on this thread (gemv_last_error()).
void set_error(const char *fmt, ...);
void clear_error();

// The registry (registry.cpp).
int variant_count();
const gemv_variant_info_t *variant_info(int variant);
// Range checks of config against its variant: SUCCESS or INVALID_VALUE (detail set).
gemv_status_t validate_config(const gemv_config_t &c);
// can_implement for a range-valid config: SUCCESS or NOT_SUPPORTED (detail set).
gemv_status_t can_implement(const gemv_config_t &c, const Problem &pb);
size_t workspace_needed(const gemv_config_t &c, const Problem &pb);
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

// The checks of values alone (sizes, lda, increments, enums) of a gemv_args_t (gemv.cpp).
gemv_status_t check_args_values(const gemv_args_t *a);

// One Problem from the arguments of a call (gemv.cpp); no checks.
Problem make_problem(gemv_op_t op, gemv_dtype_t dtype, int64_t m, int64_t k, float alpha, const void *A,
                     int64_t lda, const void *x, int64_t incx, float beta, const void *y, int64_t incy,
                     void *workspace, size_t workspace_bytes, gemv_stream_t stream);

// The dispatcher (dispatch.cpp): always returns a config that can_implement accepts and
// whose workspace fits. The device's tuned table decides where it has an entry that runs
// the problem (unless use_table is false), else the heuristic.
gemv_config_t select_config(const Problem &pb, int device, bool use_table, bool *from_table);
gemv_config_t heuristic_config(const Problem &pb, int sm_count);

// Tuned tables: the format and the nearest-shape lookup (table.cpp); which table each
// device uses, found once per device (table_loader.cpp). Tables are immutable once read.
struct Table;
gemv_status_t read_table(const char *path, Table **out); // detail set on failure
void free_table(const Table *t);
const gemv_table_fingerprint_t &table_fingerprint(const Table &t);
const char *table_path(const Table &t);
// SUCCESS or TABLE_MISMATCH (detail names the difference).
gemv_status_t check_table(const Table &t, const gemv_device_props_t &props);
// The config of the nearest entry (log2 M, log2 K) of pb's dtype that can run pb within its
// workspace; false when none can.
bool table_lookup(const Table &t, const Problem &pb, gemv_config_t *config, double *distance);
// The table device dispatches with (nullptr: none); the first call per device finds it.
const Table *device_table(int device);

} // namespace libgemv
