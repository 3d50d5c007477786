// Kernel family "row stream" (op N, single products): whole rows of A read as one run of
// aligned 16-byte packs, whatever each row's alignment. Rows whose starts are not 16-byte
// aligned (odd K or lda) otherwise need a scalar head and tail each, and short rows leave
// most lanes of a 16-byte load idle; a stream of rows has neither.
//
// A step covers rows_per_step whole rows: thread t loads packs t, t + threads, ... of the
// step (UNROLL of them, all in flight before any is used). A pack spans at most two rows
// (lda >= a pack's elements), so it leaves two sums in shared memory: its elements of the
// row it starts in, and of the next. x is staged once per block over lda + one pack, with
// the next row's x after the row's gap (zeros), so a pack's x is one window at its column,
// shifted into phase in registers like the realigned row kernels. Then p lanes sum each
// row's pack sums in fixed order: results are reproducible.
// Geometry (stream_plan): threads = p * rows_per_block a block, a grid-stride loop over steps.
#include "common.cuh"

namespace libgemv {

namespace {

// Aligned pack P (counted from the 16-byte boundary at or below A). The first pack may
// start before A and the last end past its last element: those two are read element by
// element, the elements outside A left zero (their sums belong to no row of the matrix).
template <typename T> __device__ __forceinline__ uint4 stream_pack(const uint4 *base, int64_t P, const StreamArgs &a) {
    constexpr int N = kPack<T>;
    const int64_t e = P * N - a.a_phase; // element of A at the pack's start
    if (e >= 0 && e + N <= a.a_end) return load_a_pack(base + P);
    using Bits = std::conditional_t<sizeof(T) == 4, unsigned int, unsigned short>;
    uint4 v = make_uint4(0, 0, 0, 0);
    Bits *b = reinterpret_cast<Bits *>(&v);
    const Bits *A = static_cast<const Bits *>(a.A);
#pragma unroll
    for (int j = 0; j < N; ++j)
        if (e + j >= 0 && e + j < a.a_end) b[j] = __ldg(A + e + j);
    return v;
}

// Where a step's rows lie: rows [r0, r0 + rows), row r0 starting at element e0 from the
// 16-byte boundary below A, in pack P0 at phase ph0; npk packs (0: past the last step).
struct StreamStep {
    int64_t r0, e0, P0;
    int rows, ph0, npk;
};

template <int N> __device__ __forceinline__ StreamStep stream_step(const StreamArgs &a, int64_t step) {
    constexpr int kLog2N = N == 8 ? 3 : 2;
    StreamStep g;
    g.r0 = step * a.rows_per_step;
    const int64_t left = a.m - g.r0;
    g.rows = left <= 0 ? 0 : left < a.rows_per_step ? (int)left : a.rows_per_step;
    g.e0 = a.a_phase + g.r0 * a.lda;
    g.P0 = g.e0 >> kLog2N;
    g.ph0 = (int)(g.e0 & (N - 1));
    g.npk = g.rows ? (int)(((g.e0 + (int64_t)(g.rows - 1) * a.lda + a.k - 1) >> kLog2N) - g.P0 + 1) : 0;
    return g;
}

// A step's packs: thread t takes t, t + threads, ... (UNROLL of them, all in flight).
template <typename T, int UNROLL>
__device__ __forceinline__ void load_step(uint4 (&ra)[UNROLL], const uint4 *base, const StreamStep &g,
                                          const StreamArgs &a) {
#pragma unroll
    for (int u = 0; u < UNROLL; ++u) {
        const int q = threadIdx.x + u * blockDim.x;
        ra[u] = q < g.npk ? stream_pack<T>(base, g.P0 + q, a) : make_uint4(0, 0, 0, 0);
    }
}

} // namespace

// At most 64 registers a thread: two blocks of 512 (unroll 4) or one of 1024 an SM.
template <typename T, int LOADS, int UNROLL>
__global__ void __launch_bounds__(max_block_threads(UNROLL), UNROLL == 4 ? 2 : 1) gemv_rowstream_kernel(const StreamArgs args) {
    constexpr int N = kPack<T>;
    constexpr int kLog2N = N == 8 ? 3 : 2;
    extern __shared__ uint4 smem[];
    const int threads = blockDim.x, tile = threads * UNROLL;
    uint4 *xs = smem;                                          // x_packs packs
    float *lo = reinterpret_cast<float *>(smem + args.x_packs); // a pack's sum in the row it starts in
    float *hi = lo + tile;                                      // and in the next row
    const int lda = (int)args.lda, k = (int)args.k;             // small: x fits shared memory
    pdl_prologue(args.pdl);

    // x over columns [0, lda + N): x[j] for a row's columns, 0 over its gap, x again from lda.
    {
        T *xe = reinterpret_cast<T *>(xs);
        const T *x = static_cast<const T *>(args.x);
        for (int c = threadIdx.x; c < args.x_packs * N; c += threads) {
            const int j = c % lda;
            xe[c] = j < k ? x[(int64_t)j * args.incx] : from_f32<T>(0.f);
        }
    }
    __syncthreads();

    const uint4 *base = reinterpret_cast<const uint4 *>(static_cast<const T *>(args.A) - args.a_phase);
    const int step_cols = (threads * N) % lda; // a thread's next pack is threads packs on
    const int p_log2 = args.p_log2, p = 1 << p_log2, lane = threadIdx.x & (p - 1), groups = threads >> p_log2;
    // The next step's packs are loaded as soon as this step's are used up: they are in
    // flight while the block sums rows (the registers are free by then).
    uint4 ra[UNROLL];
    StreamStep g = stream_step<N>(args, blockIdx.x);
    load_step<T, UNROLL>(ra, base, g, args);
    for (int64_t step = blockIdx.x; step < args.steps; step += gridDim.x) {
        int col = (threadIdx.x * N - g.ph0 + lda) % lda; // column of the thread's first pack
#pragma unroll
        for (int u = 0; u < UNROLL; ++u) {
            const int b = col >> kLog2N;
            uint4 xw;
            if constexpr (LOADS == kLoadsAligned) xw = xs[b]; // every row aligned: packs in phase
            else xw = shift_pack<T>(xs[b], xs[b + 1], (col & (N - 1)) * (int)sizeof(T));
            float l, h = 0.f;
            if (col + N <= k) {
                l = dot_pack<T>(ra[u], xw, 0.f); // inside one row's elements
            } else {
                // Elements j < k - col are the row's; j >= lda - col the next row's (while
                // j < lda - col + k); the rest lie in a gap and may hold anything (NaN):
                // selected out, never multiplied by zero.
                float af[N], xf[N];
                unpack<T>(ra[u], af);
                unpack<T>(xw, xf);
                const int bg = k - col, bn = lda - col;
                l = 0.f;
#pragma unroll
                for (int j = 0; j < N; ++j) {
                    const float v = af[j] * xf[j];
                    l += j < bg ? v : 0.f;
                    h += j >= bn && j < bn + k ? v : 0.f;
                }
            }
            const int q = threadIdx.x + u * threads;
            lo[q] = l;
            hi[q] = h;
            col += step_cols;
            if (col >= lda) col -= lda;
        }
        __syncthreads();
        const StreamStep next = stream_step<N>(args, step + gridDim.x);
        load_step<T, UNROLL>(ra, base, next, args);

        // p lanes a row; every lane runs every round, so the shuffles see whole warps.
        for (int rb = 0; rb < g.rows; rb += groups) {
            const int r = rb + (threadIdx.x >> p_log2);
            float v = 0.f;
            if (r < g.rows) {
                const int64_t s = g.e0 + (int64_t)r * args.lda; // row start, from base
                const int qf = (int)((s >> kLog2N) - g.P0), ql = (int)(((s + k - 1) >> kLog2N) - g.P0);
                const bool first_hi = (s & (N - 1)) != 0; // the first pack starts in the row before
                for (int q = qf + lane; q <= ql; q += p) v += q == qf && first_hi ? hi[q] : lo[q];
            }
            v = group_sum(v, p);
            if (lane == 0 && r < g.rows) {
                store_y(static_cast<T *>(args.y) + (g.r0 + r) * args.incy, args.alpha, args.beta, v);
            }
        }
        __syncthreads(); // lo and hi are rewritten by the next step
        g = next;
    }
}

cudaError_t launch_rowstream(const StreamLaunch &L, cudaStream_t stream) {
    return with_storage_type(L.dtype, [&](auto tag) -> cudaError_t {
        using T = typename decltype(tag)::type;
        auto go = [&](auto loads) -> cudaError_t {
            constexpr int LD = decltype(loads)::value;
            void (*kernel)(StreamArgs) = nullptr;
            switch (L.unroll) {
            case 1: kernel = gemv_rowstream_kernel<T, LD, 1>; break;
            case 2: kernel = gemv_rowstream_kernel<T, LD, 2>; break;
            case 4: kernel = gemv_rowstream_kernel<T, LD, 4>; break;
            default: return cudaErrorInvalidValue;
            }
            const LaunchPlan p = stream_plan(L);
            return launch_kernel(kernel, p.grid, p.block, p.dynamic_smem, stream, L.args.pdl != 0, L.args);
        };
        if (L.loads == kLoadsAligned) return go(std::integral_constant<int, kLoadsAligned>{});
        if (L.loads == kLoadsRealigned) return go(std::integral_constant<int, kLoadsRealigned>{});
        return cudaErrorInvalidValue;
    });
}

} // namespace libgemv
