/*
 * libgemv: matrix-vector products on NVIDIA GPUs.
 *
 *     y = alpha * op(A) * x + beta * y
 *
 * A is M x K, row-major, element (i, j) at A[i*lda + j], lda >= max(1, K). op(A) is A
 * (GEMV_OP_N: x has K entries, y has M) or A^T (GEMV_OP_T: x has M entries, y has K).
 * gemv_strided_batched() runs `batch` such products at fixed strides.
 * Storage is fp32, fp16 or bf16 (A, x and y share one type); accumulation is fp32.
 * Semantics, argument checks and quick returns follow reference BLAS (see
 * docs/contract.md); in particular an empty op(A) (M == 0 or K == 0) is a quick return
 * that leaves y unscaled.
 *
 * Thread safety: every function may be called from several host threads at once,
 * provided concurrent calls use different streams or different workspaces.
 * Every gemv call is asynchronous on the given stream, allocates nothing and never
 * synchronises, so it can be captured in a CUDA graph.
 *
 * Programmatic dependent launch: on compute capability 9.0 and up, libgemv launches its
 * kernels with PDL. A kernel may then become resident while the previous kernel on the
 * stream is still running. Before it touches any memory that kernel may use, it waits
 * until that kernel has completed and its writes are visible, so stream order holds as
 * usual. It may prefetch its first rows of A into L2 before the wait. That is coherent
 * even when the previous kernel writes A.
 *
 * Kernels you launch after a gemv call with PDL yourself must likewise wait
 * (cudaGridDependencySynchronize) before reading y.
 *
 * Environment:
 *   GEMV_PDL=0                 launch without PDL;
 *   GEMV_PREFETCH_KB_PER_SM=N  L2 prefetch budget, in KiB per SM (default 64; 0 turns
 *                              it off);
 *   GEMV_TABLE                 the tuned table to use (see "tuned dispatch tables").
 * Each is read once, at first use.
 */
#ifndef GEMV_H
#define GEMV_H

#include <stddef.h>
#include <stdint.h>

#define GEMV_VERSION_MAJOR 0
#define GEMV_VERSION_MINOR 7
#define GEMV_VERSION_PATCH 0
#define GEMV_STRINGIFY_(x) #x
#define GEMV_STRINGIFY(x) GEMV_STRINGIFY_(x)
/* "MAJOR.MINOR.PATCH", derived from the numbers above (zstd's way): one place to bump. */
#define GEMV_VERSION_STRING \
    GEMV_STRINGIFY(GEMV_VERSION_MAJOR) "." GEMV_STRINGIFY(GEMV_VERSION_MINOR) "." GEMV_STRINGIFY(GEMV_VERSION_PATCH)
/* MAJOR*10000 + MINOR*100 + PATCH, as gemv_version() returns it. */
#define GEMV_VERSION (GEMV_VERSION_MAJOR * 10000 + GEMV_VERSION_MINOR * 100 + GEMV_VERSION_PATCH)

#if defined(_WIN32)
#  if defined(GEMV_BUILDING_LIBRARY)
#    define GEMV_API __declspec(dllexport)
#  else
#    define GEMV_API __declspec(dllimport)
#  endif
#else
#  define GEMV_API __attribute__((visibility("default")))
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* Same type as cudaStream_t, declared here so that this header needs no CUDA headers.
 * NULL is the legacy default stream. Work runs on the current device (cudaSetDevice);
 * a stream of another device is rejected with INVALID_VALUE (CUDA 12.8 and up; a stream
 * that is being captured into a graph is not checked). */
typedef struct CUstream_st *gemv_stream_t;

typedef enum gemv_status {
    GEMV_STATUS_SUCCESS = 0,                /* the call was queued (or needed no work) */
    GEMV_STATUS_INVALID_VALUE = 1,          /* a size, increment, lda, enum or config value is out of range,
                                               or a stream of another device */
    GEMV_STATUS_INVALID_POINTER = 2,        /* NULL, host or other-device pointer where device data is needed */
    GEMV_STATUS_NOT_SUPPORTED = 3,          /* the forced config cannot run this shape or alignment */
    GEMV_STATUS_INSUFFICIENT_WORKSPACE = 4, /* the forced config needs more workspace than was given */
    GEMV_STATUS_NO_DEVICE = 5,              /* the driver is there, but no CUDA device is visible */
    GEMV_STATUS_NO_DRIVER = 6,              /* no CUDA driver (libcuda) or one older than the runtime */
    GEMV_STATUS_CUDA_ERROR = 7,             /* a CUDA call or kernel launch failed; see gemv_last_error() */
    GEMV_STATUS_ALLOC_FAILED = 8,           /* device memory, or host memory (a table, the workspace pool), could not be allocated */
    GEMV_STATUS_TABLE_INVALID = 9,          /* a tuned table cannot be read, or is corrupt, truncated or names an unknown variant */
    GEMV_STATUS_TABLE_MISMATCH = 10,        /* a tuned table was made for another GPU, CUDA runtime, libgemv or schema */
    GEMV_STATUS_INTERNAL_ERROR = 11,        /* an unexpected failure inside libgemv; see gemv_last_error() */
} gemv_status_t;

typedef enum gemv_dtype {
    GEMV_DTYPE_F32 = 0,  /* float */
    GEMV_DTYPE_F16 = 1,  /* IEEE half */
    GEMV_DTYPE_BF16 = 2, /* bfloat16 */
} gemv_dtype_t;

typedef enum gemv_op {
    GEMV_OP_N = 0, /* y = alpha*A*x + beta*y: x has K entries, y has M */
    GEMV_OP_T = 1, /* y = alpha*A^T*x + beta*y: x has M entries, y has K */
} gemv_op_t;

/* Variant ids: the operations of the registry. Each one serves some problems (an op,
 * storage types, batched or not), says whether a config can run a problem
 * (can_implement), how much workspace it needs, and launches its kernels.
 * gemv_variant_count()/gemv_variant_info() enumerate them with their legal parameter
 * ranges: that registry is the one list the dispatcher, tuner, tests and benchmark
 * iterate. */
typedef enum gemv_variant {
    GEMV_VARIANT_AUTO = -1,          /* let the dispatcher choose (only in gemv_config_t) */
    GEMV_VARIANT_THREAD_PER_ROW = 0, /* one thread computes a row */
    GEMV_VARIANT_ROWS_PER_WARP = 1,  /* p = 2..16 threads a row, several rows a warp, shuffle reduction */
    GEMV_VARIANT_WARP_PER_ROW = 2,   /* p = 32: one warp a row */
    GEMV_VARIANT_BLOCK_PER_ROW = 3,  /* p = 64..1024 threads a row: shuffle then shared-memory reduction */
    GEMV_VARIANT_SPLITK_ATOMIC = 4,  /* K split over blocks, partial sums added with fp32 atomics */
    GEMV_VARIANT_SPLITK_TWOPASS = 5, /* K split over blocks, partials reduced in fixed order: deterministic */
    GEMV_VARIANT_T_COLUMNS = 6,      /* op T: a block owns a run of columns, rows read coalesced, x[r] broadcast */
    GEMV_VARIANT_T_SPLITM_TWOPASS = 7, /* op T: rows split over blocks, partials reduced in fixed order */
    GEMV_VARIANT_ROW_STREAM = 8,       /* op N: whole rows read as one stream of aligned 16-byte packs (rows
                                        * that start anywhere, short rows); p lanes sum each row's pack sums */
    GEMV_VARIANT_Q_ROWS = 9,           /* op N, quantized weights (gemv_qmatrix_t): p lanes a row team, `unroll`
                                        * rows a thread, 16-byte loads of packed codes, x staged as fp32; K split
                                        * into split_k slices reduced in fixed order */
    GEMV_VARIANT_Q_MMA = 10,           /* op N, int4 weights, symmetric or integer zeros in groups of 128 up
                                        * (or per row), fp16: tensor cores (mma.sync, fp32 accumulation), a
                                        * warp per 16 rows, rows_per_block warps a block; split_k slices
                                        * reduced in fixed order */
    GEMV_VARIANT_ROWS_IN_REGISTERS = 11, /* op N, few long rows: threads_per_row threads a block share a
                                        * tile of rows_per_block rows (1..4), each keeping every row's
                                        * sum over its 16-byte slots, so x is read once a tile; the block
                                        * has threads_per_row threads (32..512; rows * unroll <= 4); split_k slices reduced in fixed order */
    GEMV_VARIANT_Q_MMA_X_HELD = 12,    /* op N, int4 weights (any group size and zero mode), fp16 or
                                        * bf16, and int8 (groups of 64 up) in fp16, x contiguous and
                                        * 16-byte aligned: tensor cores, each warp
                                        * holding `unroll` steps of 128 (int8: 64) columns of x in
                                        * registers and walks the block's rows_per_block tiles of 16 rows;
                                        * threads_per_row / 32 warps a block take the slice's steps in turn;
                                        * split_k slices reduced in fixed order */
    GEMV_VARIANT_T_STREAM = 13,        /* op T, short rows: A read as one stream of aligned 16-byte packs
                                        * over its whole extent, rows and gaps alike (rows that start
                                        * anywhere); a block of about threads_per_row threads, a multiple
                                        * of the pack period lda / gcd(lda, 16 / esz) (at most the block),
                                        * keeps a sum a column of its packs; needs lda >= 16 / esz when
                                        * m > 1; split_k slices of the stream reduced in fixed order */
    GEMV_VARIANT_Q_BLOCK_ROWS = 14,    /* op N, int8 weights (any zero mode and group size), fp16 or bf16,
                                        * x contiguous and 16-byte aligned: a block of threads_per_row
                                        * threads (32..256) owns rows_per_block rows (1, 2 or 4), its
                                        * threads taking the rows' 16-byte code packs in turn, `unroll`
                                        * (1 or 2) a row in flight; x read in place; K unsplit */
    GEMV_VARIANT_Q_MMA_ROUNDS = 15,    /* op N, int4 weights (groups of 128 up or one a row, any zero
                                        * mode) in fp16 or bf16, x contiguous and 16-byte aligned:
                                        * tensor cores, a 16-row tile a block, its threads_per_row / 32
                                        * warps (1..8) taking the steps of 128 columns in rounds of
                                        * `unroll` (1 or 2), each round's codes, x, scales and zeros
                                        * asked for at once; K unsplit */
    GEMV_VARIANT_ROW_MMA = 16,         /* op N, fp16 or bf16, rows of whole aligned 16-byte packs (A, lda,
                                        * K and the batch strides multiples of 16 bytes), x contiguous
                                        * and 16-byte aligned, batches too: tensor cores, a warp a tile
                                        * of 16 rows of one product (threads_per_row 32), rows_per_block
                                        * warps (1..8) a block, `unroll` (1, 2 or 4) steps of 32 columns
                                        * in flight; K unsplit */
} gemv_variant_t;

#define GEMV_VARIANT_COUNT 17

/* How a kernel reads A and x (gemv_config_t.vector_loads). */
typedef enum gemv_loads {
    GEMV_LOADS_SCALAR = 0,      /* one element a load: any alignment, any incx */
    GEMV_LOADS_ALIGNED16 = 1,   /* 16-byte packs: A rows (and x read from global memory) 16-byte aligned */
    GEMV_LOADS_REALIGNED16 = 2, /* 16-byte packs of A rows that start anywhere. op N: a scalar head
                                 * up to each row's 16-byte boundary, x shifted into the row's
                                 * phase in registers; x contiguous or staged in shared memory.
                                 * op T: each thread's 16 bytes of a row cut from the two aligned
                                 * packs that hold them (element loads where those reach outside A) */
    GEMV_LOADS_PHASED16 = 3,    /* op N row kernels, single products: rows grouped by their 16-byte
                                 * phase. x_in_smem = 1: each block stages x once in its group's
                                 * phase, so every pack of A and of x is one aligned load;
                                 * x_in_smem = 0 (incx == 1): x's aligned packs through L1, shifted
                                 * into the group's phase by a shift compiled in. op T
                                 * (t_splitm_twopass): each row slice walks one phase group and
                                 * reads its aligned packs as they lie, its column sums written
                                 * shifted by the group's phase; op T (t_columns, batches too):
                                 * each row lane walks one phase group (rows_per_block a
                                 * multiple of the rows' phase period, threads_per_row >= 2),
                                 * a tile writing threads_per_row - 1 packs of columns */
    GEMV_LOADS_ALIGNED8 = 4,    /* op N row kernels: 8-byte packs, A rows (and x read from global
                                 * memory) 8-byte aligned: rows that are not 16-byte aligned but
                                 * start on 8 bytes (fp32 of even K, 16-bit of K = 4 mod 8) with no
                                 * phase to handle */
    GEMV_LOADS_PHASED16_X_COPIES = 5, /* op N row kernels, single products, K not split: rows that
                                 * start anywhere (or aligned, beside an x that is not), read as
                                 * phased rows (one aligned load of A a pack, the two edge packs
                                 * masked); a pre-pass copies x (any incx) into the workspace once
                                 * a call in each 16-byte phase, so a row's pack c meets pack c of
                                 * its phase's copy, one aligned load through L1; blocks take a
                                 * row step as aligned rows do.
                                 * x_in_smem = 0; needs gemv_workspace_size bytes */
} gemv_loads_t;

/* Extensible structs (gemv_config_t, gemv_args_t, gemv_variant_info_t) start with
 * struct_size, as libdeflate's options do: set it to sizeof the struct your program was
 * compiled with. Fields appended in later versions then keep their defaults for older
 * programs, and a struct_size this library does not know is INVALID_VALUE. */

/* An explicit launch configuration. Fields a variant does not use must be 0 (or
 * the single legal value that gemv_variant_info reports). For the op T variants the
 * row fields read: threads_per_row = threads across the columns of a tile (each owns one
 * 16-byte pack, or one element without vector loads), rows_per_block = row lanes, unroll
 * = rows in flight per thread, split_k = row slices (split-M); x_in_smem must be 0.
 * t_stream reads: threads_per_row = threads a block (rounded to a multiple of the pack
 * period), rows_per_block = 1, vector_loads = 1, unroll = packs in flight per thread,
 * split_k = slices of the stream. q_block_rows reads: threads_per_row = threads a block,
 * rows_per_block = rows a block, unroll = code packs a row in flight per thread,
 * vector_loads = 1, x_in_smem = 0, split_k = 1. */
typedef struct gemv_config {
    size_t struct_size;      /* sizeof(gemv_config_t) */
    int32_t variant;         /* gemv_variant_t */
    int32_t threads_per_row; /* p, a power of two */
    int32_t rows_per_block;  /* rows one block computes; threads per block = p * rows_per_block
                              * (rows_in_registers: p, every thread on every row;
                              * q_mma_x_held: tiles of 16 rows a block of p threads walks) */
    int32_t vector_loads;    /* gemv_loads_t: 0 scalar, 1 aligned, 2 realigned, 3 phased rows,
                              * 4 8-byte aligned, 5 phased rows
                              * with x's phase copies (4 and 5: op N only) */
    int32_t unroll;          /* loads in flight per thread: 1, 2 or 4 */
    int32_t x_in_smem;       /* 1: stage x in shared memory once per block, 0: read x through the cache */
    int32_t split_k;         /* split-K variants: number of K slices (2..1024); others: 1 */
} gemv_config_t;

/* One registry entry: what a variant is, the problems it serves and the ranges of its
 * parameters. The caller sets struct_size; the library fills the rest. */
typedef struct gemv_variant_info {
    size_t struct_size;              /* sizeof(gemv_variant_info_t) */
    int32_t variant;                 /* gemv_variant_t */
    const char *name;                /* stable identifier, e.g. "warp_per_row" */
    const char *description;         /* one line */
    int32_t threads_per_row_min, threads_per_row_max; /* powers of two */
    int32_t rows_per_block_min, rows_per_block_max;   /* powers of two; p * rows <= 1024 */
    int32_t split_k_min, split_k_max;
    int32_t unroll_mask;             /* bit u set: unroll u allowed (1, 2, 4) */
    int32_t deterministic;           /* 1: bit-identical results on every run */
    int32_t needs_workspace;         /* 1: may need a workspace (see gemv_workspace_size) */
    int32_t op;                      /* gemv_op_t it computes */
    uint32_t dtype_mask;             /* bit d set: serves storage type d (gemv_dtype_t) */
    int32_t batched;                 /* 1: serves batch > 1 as well as single products */
    int32_t stages_x;                /* 1: x_in_smem may be 1 */
    /* Appended in 0.5 (a struct_size of 0.4's layout still reads the fields above): */
    uint32_t weight_bits_mask;       /* 0: dense A of dtype; else bit b set: quantized weights of b bits */
} gemv_variant_info_t;

/* ---- versions and errors ------------------------------------------------------ */

/* Runtime version, GEMV_VERSION of the library that is loaded. */
GEMV_API int gemv_version(void);
/* A static, one-line description of a status; never NULL (unknown codes get one too). */
GEMV_API const char *gemv_status_string(gemv_status_t status);
/* The detail of the last failed call on this host thread (which argument, which CUDA
 * error); "" when none. Valid until the next libgemv call on this thread. */
GEMV_API const char *gemv_last_error(void);

/* ---- logging ------------------------------------------------------------------------ */

/* What libgemv reports, and how much. The level starts at $GEMV_LOG_LEVEL (0..4 or a
 * name: off, error, warning, info, trace), else GEMV_LOG_WARNING: only real problems
 * (a tuned table refused), once each. INFO adds the table each device dispatches with
 * and calls rejected for their arguments; TRACE adds, for every call, the operation and
 * config it dispatched to and where the config came from. */
typedef enum gemv_log_level {
    GEMV_LOG_OFF = 0,
    GEMV_LOG_ERROR = 1,   /* a kernel launch failed */
    GEMV_LOG_WARNING = 2, /* a problem the call survived: a tuned table not used */
    GEMV_LOG_INFO = 3,    /* the table in use; calls rejected for their arguments */
    GEMV_LOG_TRACE = 4,   /* every call: op, types, shape, the config and its source */
} gemv_log_level_t;

/* Receives each message (one line, no newline) at or below the level. It may be called
 * from any host thread that calls libgemv, and must not call gemv_set_logger. */
typedef void (*gemv_logger_t)(gemv_log_level_t level, const char *message, void *user_data);

/* GEMV_STATUS_INVALID_VALUE outside GEMV_LOG_OFF..GEMV_LOG_TRACE. */
GEMV_API gemv_status_t gemv_set_log_level(gemv_log_level_t level);
GEMV_API gemv_log_level_t gemv_get_log_level(void);
/* NULL restores the default: "libgemv: <level>: <message>" on stderr. */
GEMV_API void gemv_set_logger(gemv_logger_t logger, void *user_data);

/* ---- the registry ---------------------------------------------------------------- */

GEMV_API int gemv_variant_count(void);
/* Fills *info for registry entry index (0 <= index < gemv_variant_count()). */
GEMV_API gemv_status_t gemv_variant_info(int index, gemv_variant_info_t *info);

/* ---- GEMV -------------------------------------------------------------------------- */

/* Workspace: split-K variants keep per-slice partial sums in a caller-supplied device
 * buffer (the library never allocates). gemv() may pass workspace = NULL,
 * workspace_bytes = 0: the dispatcher then only picks configs that need none. Concurrent
 * calls must not share one workspace. GEMV_WORKSPACE_RECOMMENDED_BYTES lets the
 * dispatcher use split-K on every shape where it helps. */
#define GEMV_WORKSPACE_RECOMMENDED_BYTES ((size_t)4 << 20)

/* Automatic dispatch. Checks every argument first (nothing is read, written or launched
 * when a check fails), handles the BLAS quick returns, then picks a config.
 * Pointers A, x and y are device pointers (or managed); A and x may be NULL when
 * alpha == 0, and everything may be NULL when M == 0 or K == 0. incx and incy may be
 * negative (reference-BLAS order). Returns SUCCESS once the work is queued on stream. */
GEMV_API gemv_status_t gemv(gemv_op_t op, gemv_dtype_t dtype, int64_t m, int64_t k,
                            float alpha, const void *A, int64_t lda,
                            const void *x, int64_t incx, float beta, void *y, int64_t incy,
                            void *workspace, size_t workspace_bytes, gemv_stream_t stream);

/* `batch` products y_b = alpha * op(A_b) * x_b + beta * y_b, b = 0 .. batch-1, with
 * A_b = A + b*stride_a, x_b = x + b*stride_x, y_b = y + b*stride_y (strides in elements,
 * any sign; 0 reuses an operand: one matrix and many vectors, or the reverse). The
 * argument order of cuBLAS's gemvStridedBatched, with 64-bit sizes. batch == 0 is a quick
 * return; batch < 0 is INVALID_VALUE; so are y strides that make two outputs overlap. */
GEMV_API gemv_status_t gemv_strided_batched(gemv_op_t op, gemv_dtype_t dtype, int64_t m, int64_t k, float alpha,
                                            const void *A, int64_t lda, int64_t stride_a, const void *x,
                                            int64_t incx, int64_t stride_x, float beta, void *y, int64_t incy,
                                            int64_t stride_y, int64_t batch, void *workspace,
                                            size_t workspace_bytes, gemv_stream_t stream);

/* The same with an explicit config. A config the variant cannot run for this shape or
 * alignment returns NOT_SUPPORTED; a config outside the variant's ranges INVALID_VALUE. */
GEMV_API gemv_status_t gemv_with_config(const gemv_config_t *config, gemv_op_t op,
                                        gemv_dtype_t dtype, int64_t m, int64_t k,
                                        float alpha, const void *A, int64_t lda,
                                        const void *x, int64_t incx, float beta, void *y,
                                        int64_t incy, void *workspace,
                                        size_t workspace_bytes, gemv_stream_t stream);

/* Every argument of one call in a struct: one pointer instead of fifteen arguments, for
 * bindings where each argument costs (ctypes). Field meanings as in gemv() and
 * gemv_strided_batched(); batch = 1 (strides unused) is one product. */
typedef struct gemv_args {
    size_t struct_size; /* sizeof(gemv_args_t) */
    int32_t op;    /* gemv_op_t */
    int32_t dtype; /* gemv_dtype_t */
    int64_t m, k;
    float alpha, beta;
    const void *A;
    int64_t lda;
    const void *x;
    int64_t incx;
    void *y;
    int64_t incy;
    void *workspace;
    size_t workspace_bytes;
    gemv_stream_t stream;
    uint32_t flags; /* GEMV_FLAG_* */
    int64_t batch;  /* products in the batch (0: quick return) */
    int64_t stride_a, stride_x, stride_y; /* elements from one product's operand to the next's */
    /* Appended in 0.5 (a struct_size of 0.4's layout leaves it NULL): */
    const struct gemv_qmatrix *qweight; /* quantized weights as A (op N, batch 1; A must be NULL and lda is
                                           not read); dtype is then the type of x, y and W's scales */
} gemv_args_t;

/* The caller guarantees that A, x, y and workspace are device memory of the current
 * device (a framework's CUDA tensors, say): the cudaPointerGetAttributes checks are
 * skipped. Every other check still runs. */
#define GEMV_FLAG_TRUSTED_POINTERS 1u
/* Automatic dispatch ignores tuned tables: the built-in heuristic decides. */
#define GEMV_FLAG_NO_TABLE 2u
/* workspace NULL: split-K and split-M take a workspace from a pool libgemv keeps, one
   buffer of GEMV_WORKSPACE_RECOMMENDED_BYTES per (stream, host thread), at most 16 per
   device (the oldest idle one passes to a newcomer in stream order). A stream being
   captured gets none (a graph must not hold pool memory): the dispatcher then picks a
   config that needs none. pygemv passes this flag. */
#define GEMV_FLAG_LIBRARY_WORKSPACE 4u

/* gemv_strided_batched() (config NULL) or its forced-config form on a gemv_args_t. */
GEMV_API gemv_status_t gemv_ex(const gemv_args_t *args, const gemv_config_t *config);

/* can_implement: whether config can run the problem of args, without touching the GPU
 * (pointers are only inspected for alignment; scalars, stream and workspace are not
 * read). SUCCESS, INVALID_VALUE or NOT_SUPPORTED. */
GEMV_API gemv_status_t gemv_check_config(const gemv_config_t *config, const gemv_args_t *args);

/* Bytes of workspace config needs for the problem of args (0 for most; pointers, scalars
 * and the workspace fields are not read); config NULL: the most the automatic dispatcher
 * would use for it. 0 also when the arguments are invalid (see gemv_last_error). */
GEMV_API size_t gemv_workspace_size(const gemv_config_t *config, const gemv_args_t *args);

/* The config gemv() would pick for this problem (pointers matter for alignment; stream
 * and data are not touched). Runs no kernel; needs a device for its properties. */
GEMV_API gemv_status_t gemv_select_config(gemv_op_t op, gemv_dtype_t dtype, int64_t m,
                                          int64_t k, const void *A, int64_t lda,
                                          const void *x, int64_t incx, const void *y,
                                          int64_t incy, size_t workspace_bytes,
                                          gemv_config_t *config);

/* gemv_select_config on a gemv_args_t (flags honoured: GEMV_FLAG_NO_TABLE gives the
 * heuristic's choice). *from_table (may be NULL) is set to 1 when a tuned table decided. */
GEMV_API gemv_status_t gemv_select_config_ex(const gemv_args_t *args, gemv_config_t *config,
                                             int32_t *from_table);

/* One operation's default config for the problem of args: the heuristic's choice when it
 * is that operation, else that choice moved into the operation's ranges (the tuner's
 * starting point). NOT_SUPPORTED when the operation does not serve the problem (another
 * op, batched); the config may still be refused by gemv_check_config (alignment). Needs
 * a device (its SM count). */
GEMV_API gemv_status_t gemv_default_config(int variant, const gemv_args_t *args, gemv_config_t *config);

/* ---- weight-only quantized GEMV ---------------------------------------------------------
 * y = alpha * W * x + beta * y, with W an M x K matrix of 4- or 8-bit codes q, scales s and
 * zero points z per group of group_size consecutive columns of a row (group_size 0: one
 * group the whole row), and x, y, s, z of one 16-bit type (fp16 or bf16). W's values, the
 * "dequantized matrix", are exact fp32 numbers:
 *   GEMV_QZERO_SYMMETRIC  w = (q - 2^(bits-1)) * s            (int4: q - 8; int8: q - 128)
 *   GEMV_QZERO_INT        w = (q - z) * s, z an integer 0 .. 2^bits - 1 (AWQ, GPTQ)
 *   GEMV_QZERO_FLOAT      w = fma(q, s, z), one fp32 rounding (tinygemm, HQQ)
 * Accumulation is fp32. The packed layout (docs/quantized.md): row i's codes start at byte
 * i * ldq of qweight, column j of the row at code j (two codes a byte for int4, low nibble
 * first), the row padded with zero codes to a multiple of 16 bytes; scales and zeros are
 * M x groups, row-major, with leading dimensions lds and ldz (elements); perm, when not
 * NULL, says which entry of x each packed column multiplies (act-order checkpoints). */
typedef enum gemv_qzero {
    GEMV_QZERO_SYMMETRIC = 0,
    GEMV_QZERO_INT = 1,
    GEMV_QZERO_FLOAT = 2,
} gemv_qzero_t;

typedef struct gemv_qmatrix {
    size_t struct_size;  /* sizeof(gemv_qmatrix_t) */
    int32_t bits;        /* 4 or 8 */
    int32_t group_size;  /* a power of two from 32 to 1024, or 0: one group a row */
    int32_t zero_mode;   /* gemv_qzero_t */
    int32_t dtype;       /* gemv_dtype_t of scales and zeros (and of x and y): F16 or BF16 */
    int64_t m, k;
    void *qweight;       /* device, 16-byte aligned: m rows of ldq bytes */
    int64_t ldq;         /* bytes, a multiple of 16, >= the packed row (ceil(k / codes a 16-byte pack) * 16) */
    void *scales;        /* device: m x groups of dtype */
    int64_t lds;         /* >= groups = ceil(k / group_size) (1 for group_size 0) */
    void *zeros;         /* device: m x groups of dtype (integers for GEMV_QZERO_INT); NULL when symmetric */
    int64_t ldz;         /* >= groups when zeros are used */
    int32_t *perm;       /* device, k entries: packed column j multiplies x[perm[j]]; NULL: x in order */
} gemv_qmatrix_t;

/* Fills *W for a matrix of the given format with the packed layout's tight strides and
 * NULL pointers: allocate m * ldq bytes for qweight, m * lds and m * ldz elements for the
 * scales and zeros (ldz 0 when symmetric), k int32 for perm (act-order only). */
GEMV_API gemv_status_t gemv_qmatrix_init(gemv_qmatrix_t *W, int bits, int group_size, gemv_qzero_t zero_mode,
                                         gemv_dtype_t dtype, int64_t m, int64_t k);

/* Automatic dispatch of a quantized GEMV (gemv_ex with args->qweight is the general form,
 * and takes a forced config). x has K entries and y M, of W->dtype. */
GEMV_API gemv_status_t gemv_quantized(const gemv_qmatrix_t *W, float alpha, const void *x, int64_t incx, float beta,
                                      void *y, int64_t incy, void *workspace, size_t workspace_bytes,
                                      gemv_stream_t stream);

/* Quantizes the dense M x K matrix A (W->dtype, leading dimension lda) into W's buffers,
 * on stream: per group, round to nearest (ties to even) and clamp, with
 *   SYMMETRIC  s = max|a| / (2^(bits-1) - 1), q = rint(a / s) + 2^(bits-1);
 *   INT        s = (max - min) / (2^bits - 1), z = clamp(rint(-min / s)), q = rint(a / s) + z,
 *              over min = min(a, 0) and max = max(a, 0);
 *   FLOAT      s = (max - min) / (2^bits - 1), z = min, q = rint((a - z) / s);
 * s and z are rounded to dtype first, and q is computed from the rounded values, in fp32;
 * a group of zeros gets s = 0 (q = z, the midpoint, or 0 with float zeros). W->perm must
 * be NULL. */
GEMV_API gemv_status_t gemv_quantize(const gemv_qmatrix_t *W, const void *A, int64_t lda, gemv_stream_t stream);

/* Repacks a GPTQ checkpoint's tensors (device memory, as stored) into W (bits 4 or 8,
 * GEMV_QZERO_INT, W->group_size its group size, or 0 for one group): qweight int32
 * [K * bits / 32, M] packed along K (code j of word w is row 32 / bits * w + j, low bits
 * first), qzeros int32 [groups, M * bits / 32] packed along M the same way, scales
 * [groups, M] of W->dtype. zero_offset is added to every stored zero: 1 for the common
 * "v1" format (zero - 1 stored), 0 for "v2". g_idx (NULL without act-order), K int32:
 * the group of each row of qweight; then W->perm must hold K int32, and is written with
 * the order that makes groups contiguous (each group must have group_size rows, the last
 * one the rest). With g_idx the call reads it to the host first, so it synchronises. K and
 * M must be multiples of 32 / bits: 8 (int4) or 4 (int8). */
GEMV_API gemv_status_t gemv_repack_gptq(const gemv_qmatrix_t *W, const int32_t *qweight, const int32_t *qzeros,
                                        const void *scales, const int32_t *g_idx, int zero_offset,
                                        gemv_stream_t stream);

/* Repacks an AutoAWQ checkpoint (int4, GEMV_QZERO_INT): qweight int32 [K, M / 8], nibble
 * i of word c holding column 8c + (0, 2, 4, 6, 1, 3, 5, 7)[i]; qzeros int32 [groups, M / 8]
 * packed the same way; scales [groups, M] of W->dtype. M must be a multiple of 8. */
GEMV_API gemv_status_t gemv_repack_awq(const gemv_qmatrix_t *W, const int32_t *qweight, const int32_t *qzeros,
                                       const void *scales, gemv_stream_t stream);

/* The dequantized matrix (exact fp32 values, in the columns of x: perm undone) into the
 * M x K fp32 device matrix out with leading dimension ldo, on stream. */
GEMV_API gemv_status_t gemv_dequantize(const gemv_qmatrix_t *W, float *out, int64_t ldo, gemv_stream_t stream);

/* ---- device helpers (so that a program needs nothing but libgemv) ------------------ */

GEMV_API gemv_status_t gemv_device_count(int *count);
GEMV_API gemv_status_t gemv_get_device(int *device);
GEMV_API gemv_status_t gemv_set_device(int device);
/* NUL-terminated device name into buf (at most len bytes). */
GEMV_API gemv_status_t gemv_device_name(int device, char *buf, size_t len);
GEMV_API gemv_status_t gemv_malloc(void **ptr, size_t bytes);
GEMV_API gemv_status_t gemv_free(void *ptr); /* NULL is a no-op */
/* Synchronous copies between host and device memory. */
GEMV_API gemv_status_t gemv_memcpy_to_device(void *dst, const void *src, size_t bytes);
GEMV_API gemv_status_t gemv_memcpy_to_host(void *dst, const void *src, size_t bytes);
GEMV_API gemv_status_t gemv_stream_create(gemv_stream_t *stream);
GEMV_API gemv_status_t gemv_stream_destroy(gemv_stream_t stream);
GEMV_API gemv_status_t gemv_stream_synchronize(gemv_stream_t stream);
/* Work queued on stream after this call waits for the work queued on producer before it
 * (an event recorded on producer): the __cuda_array_interface__ v3 rule for an array
 * that belongs to another stream. */
GEMV_API gemv_status_t gemv_stream_wait(gemv_stream_t stream, gemv_stream_t producer);
/* *capturing = 1 while stream is being captured into a CUDA graph. */
GEMV_API gemv_status_t gemv_stream_is_capturing(gemv_stream_t stream, int *capturing);

/* What the dispatcher (and a tuned table's fingerprint) needs to know about a GPU. */
typedef struct gemv_device_props {
    char name[256];
    int32_t sm_count;
    int32_t cc_major, cc_minor;
    int64_t l2_bytes;
    int64_t smem_per_block_optin; /* shared memory a block may opt in to */
    int64_t global_mem_bytes;
    int32_t runtime_version;      /* CUDART_VERSION libgemv was built with */
    int32_t driver_version;       /* cudaDriverGetVersion */
    int32_t pci_domain, pci_bus, pci_device; /* tells physical GPUs apart, whatever CUDA_VISIBLE_DEVICES says */
} gemv_device_props_t;

GEMV_API gemv_status_t gemv_device_props(int device, gemv_device_props_t *props);

/* ---- tuned dispatch tables ----------------------------------------------------------
 * A table maps a problem descriptor (op, dtype, single or batched, M, K) to a config
 * measured fastest on one GPU (written by pygemv-tune; format in docs/tuning.md).
 * Automatic dispatch on a device uses the table loaded for it; a problem that is not in
 * the table takes the config of the nearest tuned shape (in log2 M, log2 K) of its op,
 * dtype, batch kind and row kind (rows that allow 16-byte loads or not) that can run it,
 * within a log2 distance of 1.5; with no table, or no such entry, the built-in heuristic
 * decides. A table of an older schema is refused (TABLE_MISMATCH, reported once).
 *
 * Each device's table is found once, on its first dispatch, and the first that matches
 * the device wins:
 *   1. the file or folder named by $GEMV_TABLE ("off" or "" disables tuned dispatch;
 *      when set, nothing else is searched);
 *   2. the user's tables: $XDG_CACHE_HOME/pygemv/tables (~/.cache/pygemv/tables);
 *   3. the tables installed with libgemv (<libdir>/tables, <libdir>/../share/gemv/tables).
 * A folder contributes its *.gemvtable files. Tables of other GPUs are passed over; a
 * table for this GPU that is corrupt or stale (other libgemv, CUDA runtime or schema)
 * is reported once on stderr and in gemv_table_status(), and never used. */
#define GEMV_TABLE_SCHEMA 2
#define GEMV_TABLE_ENV "GEMV_TABLE"

typedef struct gemv_table_st *gemv_table_t;

/* What a table was tuned on. */
typedef struct gemv_table_fingerprint {
    int32_t schema;
    char gpu[256];        /* device name */
    int32_t sm_count;
    int32_t cc_major, cc_minor;
    int32_t cuda_runtime; /* CUDART_VERSION of the libgemv that was tuned */
    char libgemv[32];     /* GEMV_VERSION_STRING of the libgemv that was tuned */
    int64_t entries;
} gemv_table_fingerprint_t;

/* Parse and validate a table file (no GPU needed). TABLE_INVALID names the file, line
 * and fault; TABLE_MISMATCH for a schema this library does not read. */
GEMV_API gemv_status_t gemv_table_read(const char *path, gemv_table_t *table);
GEMV_API gemv_status_t gemv_table_destroy(gemv_table_t table); /* NULL is a no-op */
GEMV_API gemv_status_t gemv_table_fingerprint(gemv_table_t table, gemv_table_fingerprint_t *fp);
/* SUCCESS when the table was tuned for this GPU (name, SMs, compute capability) with this
 * libgemv and CUDA runtime; else TABLE_MISMATCH, with the difference in gemv_last_error. */
GEMV_API gemv_status_t gemv_table_check(gemv_table_t table, const gemv_device_props_t *props);
/* The table's config for a problem (no GPU needed; pointers matter for alignment, and
 * args->workspace_bytes for split-K): SUCCESS, or NOT_SUPPORTED when no entry of the
 * dtype can run it, or when the entry in reach leaves the problem to the heuristic (it
 * speaks for its own shape alone: docs/tuning.md, "The lookup"). *distance (may be NULL):
 * the log2 distance to the entry used. */
GEMV_API gemv_status_t gemv_table_lookup(gemv_table_t table, const gemv_args_t *args,
                                         gemv_config_t *config, double *distance);

/* Use the table in path for every visible device it matches, instead of the table found
 * automatically. TABLE_MISMATCH when it matches none (nothing changes). path NULL: no
 * table for any device (the heuristic decides) until the next gemv_load_table. */
GEMV_API gemv_status_t gemv_load_table(const char *path);

typedef enum gemv_table_source {
    GEMV_TABLE_SOURCE_NONE = 0,     /* no table: the heuristic decides */
    GEMV_TABLE_SOURCE_EXPLICIT = 1, /* gemv_load_table() */
    GEMV_TABLE_SOURCE_ENV = 2,      /* $GEMV_TABLE */
    GEMV_TABLE_SOURCE_USER = 3,     /* the user's cache folder */
    GEMV_TABLE_SOURCE_SHIPPED = 4,  /* installed with libgemv */
} gemv_table_source_t;

/* The table a device dispatches with, and why. source, entries and path describe the
 * table whose entries win (entries: its own); fill_* the one filling in beside it. */
typedef struct gemv_table_status {
    int32_t source;     /* gemv_table_source_t */
    int32_t problem;    /* SUCCESS, or the status of the last table rejected for this device */
    int64_t entries;    /* entries of the table in use (0 when none) */
    char path[1024];    /* the table in use ("" when none) */
    char message[1024]; /* what was found and rejected, or "" */
    /* A user's table adds to the shipped one: the shipped entries fill every shape the
     * user's table has no entry for (both must match the GPU). */
    int32_t fill_source;  /* gemv_table_source_t of the table filling in, or NONE */
    int64_t fill_entries; /* entries it gives (those at shapes the table in use lacks) */
    char fill_path[1024]; /* that table ("" when none) */
} gemv_table_status_t;

/* Finds the device's table first if no dispatch has yet (device < 0: the current one). */
GEMV_API gemv_status_t gemv_table_status(int device, gemv_table_status_t *status);

#ifdef __cplusplus
}
#endif

#endif /* GEMV_H */
