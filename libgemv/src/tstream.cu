// Kernel family "t_stream": op T, y = alpha * A^T x + beta * y, over a matrix of short rows
// read as one run of aligned 16-byte packs: the whole extent of A, rows and their gaps
// (lda - k) alike, whatever each row's alignment. The column kernels read a row of 61 fp16
// elements (122 bytes, rows that start anywhere) an element a load, two tiles of 32
// columns a row, at a third of the read ceiling; a stream of packs has no row edges.
//
// Element i of A (from A, rows of lda) lies in column i mod lda. A pack holds V = 16 / esz
// elements, so the columns of pack q repeat every P = lda / gcd(lda, V) packs (the pack
// period). A block has a multiple of P threads and walks its slice (a multiple of its
// threads, in packs) threads apart: every pack a thread reads holds the same V columns, and
// it keeps one sum a column in registers. A pack reaches at most ROWS rows (2 where lda >=
// V - 1, else 3: lda > (V - 2) / 2): its elements take x[r], x[r + 1] or x[r + 2]. Shorter
// rows (x as large as A) are left to the column kernels' element loads.
// Padding columns (k <= column < lda) are skipped, never multiplied (they may hold NaN),
// and a thread whose packs hold padding alone loads none: gaps of whole sectors are not
// read from memory. The first and last packs, which reach outside A, are read element by
// element.
// The block then adds its threads' sums column by column in a fixed order (deterministic):
// `parts` threads a column each add every parts-th of its places in shared memory, then one
// adds those. The slice writes y, or its partials for the reduce (epilogue.cu).
// Geometry (t_stream_plan): grid.x slices, grid.y products (a grid-stride loop, so any batch);
// the block is rounded up to whole warps, the threads past a.threads idle.
#include "common.cuh"

namespace libgemv {

namespace {

template <typename T, int UNROLL, int ROWS>
__global__ void __launch_bounds__(max_block_threads(UNROLL)) gemv_t_stream_kernel(const TStreamArgs a) {
    constexpr int V = kPack<T>;
    extern __shared__ float sums[]; // [threads][V] pack-column sums, then [k][parts]
    const int t = threadIdx.x, threads = a.threads; // the block's last warp may have more
    const int64_t extent = (a.m - 1) * a.lda + a.k; // elements of one product
    const int lda = (int)a.lda, k = (int)a.k;      // <= V * 1024 (can_implement)
    // Threads a column in the block's sum: a power of two, at most a warp, within the block.
    const int places = threads * V / lda; // a column's places among the threads' sums
    int parts = 1;
    while (parts < 32 && k * parts * 2 <= threads && parts * 2 <= places) parts *= 2;
    pdl_prologue(a.pdl);
    for (int64_t b = blockIdx.y; b < a.batch; b += gridDim.y) {
        const T *A = static_cast<const T *>(a.A) + b * a.stride_a;
        const T *x = static_cast<const T *>(a.x) + b * a.stride_x;
        const int phase = (int)((reinterpret_cast<uintptr_t>(A) & 15) / sizeof(T)); // elements before A in its pack
        const uint4 *base = reinterpret_cast<const uint4 *>(A - phase);
        const int64_t whole_lo = phase ? 1 : 0, whole_hi = (phase + extent) / V; // packs wholly inside A
        const int64_t packs = (phase + extent + V - 1) / V;
        const int64_t p_begin = (int64_t)blockIdx.x * a.slice_packs;
        const int64_t p_end = min(packs, p_begin + a.slice_packs);
        // Element 0 of the thread's first pack: element i0 of A (-phase <= i0, and i0 < 0 only
        // before A's first row), in row r (rounded down) and column c0.
        const int64_t i0 = (p_begin + t) * V - phase;
        int64_t r = i0 >= 0 ? i0 / lda : -((-i0 + lda - 1) / lda);
        const int c0 = (int)(i0 - r * lda);
        // Bit e: element e is a column of y (valid), lies in row r + j (in_row[j], j < ROWS).
        // Masks, not an index array: a select by index became a local-memory load (0.7x,
        // benchmarks/NOTES.md section 80).
        uint32_t valid = 0, in_row[ROWS] = {};
        int spans = 0; // rows past r that the thread's packs reach
#pragma unroll
        for (int e = 0; e < V; ++e) {
            const int d = ROWS == 2 ? c0 + e >= lda : (c0 + e) / lda;
            valid |= (uint32_t)(c0 + e - d * lda < k) << e;
#pragma unroll
            for (int j = 1; j < ROWS; ++j) in_row[j] |= (uint32_t)(d == j) << e;
            spans = d;
        }
        float acc[V];
#pragma unroll
        for (int e = 0; e < V; ++e) acc[e] = 0.f;
        for (int64_t p = t < threads && valid ? p_begin + t : p_end; p < p_end; p += (int64_t)UNROLL * threads,
                                                                    r += UNROLL * a.rows_step) {
            uint4 v[UNROLL];
            float xr[UNROLL][ROWS]; // x of each row a pack reaches (broadcast loads)
#pragma unroll
            for (int u = 0; u < UNROLL; ++u) {
                const int64_t q = p + (int64_t)u * threads;
                if (q >= whole_lo && q < whole_hi && q < p_end) {
                    v[u] = load_a_pack(base + q);
                } else if (q < p_end) { // the first or last pack: A's elements alone, zeros around
                    const int64_t i = q * V - phase;
                    v[u] = gather_pack<T>(A + i, i < 0 ? (int)-i : 0, extent - i < V ? (int)(extent - i) : V);
                }
            }
#pragma unroll
            for (int u = 0; u < UNROLL; ++u) {
#pragma unroll
                for (int j = 0; j < ROWS; ++j) {
                    const int64_t rj = r + u * a.rows_step + j;
                    xr[u][j] = j <= spans && rj >= 0 && rj < a.m ? to_f32(load_readonly(x + rj * a.incx)) : 0.f;
                }
            }
#pragma unroll
            for (int u = 0; u < UNROLL; ++u) {
                if (p + (int64_t)u * threads >= p_end) break;
                float f[V];
                unpack<T>(v[u], f);
#pragma unroll
                for (int e = 0; e < V; ++e) {
                    if (!((valid >> e) & 1)) continue;
                    float xe = xr[u][0];
#pragma unroll
                    for (int j = 1; j < ROWS; ++j) xe = (in_row[j] >> e) & 1 ? xr[u][j] : xe;
                    acc[e] = fmaf(f[e], xe, acc[e]);
                }
            }
        }
        // Place t * V + e holds column (t * V + e - phase) mod lda: a column's places are
        // lda apart from its first, (column + phase) mod lda.
        if (t < threads) {
#pragma unroll
            for (int e = 0; e < V; ++e) sums[t * V + e] = acc[e];
        }
        __syncthreads();
        auto finish = [&](int c, float s) {
            if (a.acc) a.acc[((int64_t)blockIdx.x * a.batch + b) * a.k + c] = s;
            else store_y(static_cast<T *>(a.y) + b * a.stride_y + c * a.incy, a.alpha, a.beta, s);
        };
        auto first_place = [&](int c) { return (c + phase) % lda; };
        if (parts == 1) {
            for (int c = t < threads ? t : k; c < k; c += threads) { // each column once (idle threads none)
                float s = 0.f;
                for (int j = first_place(c); j < threads * V; j += lda) s += sums[j];
                finish(c, s);
            }
        } else { // k * parts <= threads: one pass
            float *part_sums = sums + threads * V;
            if (t < k * parts) {
                const int c = t / parts, part = t % parts;
                float s = 0.f;
                for (int j = first_place(c) + part * lda; j < threads * V; j += parts * lda) s += sums[j];
                part_sums[t] = s;
            }
            __syncthreads();
            if (t < k) {
                float s = 0.f;
                for (int j = 0; j < parts; ++j) s += part_sums[t * parts + j];
                finish(t, s);
            }
        }
        __syncthreads(); // sums is reused by the next product
    }
}

template <typename T, int UNROLL> cudaError_t launch_typed(const TStreamLaunch &L, cudaStream_t s) {
    const LaunchPlan p = t_stream_plan(L);
    // Rows a pack reaches: 2 from lda = V - 1 up, else 3 (lda > (V - 2) / 2: can_implement).
    auto kernel = L.args.lda >= kPack<T> - 1 ? gemv_t_stream_kernel<T, UNROLL, 2> : gemv_t_stream_kernel<T, UNROLL, 3>;
    return launch_kernel(kernel, p.grid, p.block, p.dynamic_smem, s, L.args.pdl != 0, L.args);
}

} // namespace

cudaError_t launch_tstream(const TStreamLaunch &L, cudaStream_t s) {
    return with_storage_type(L.dtype, [&](auto tag) -> cudaError_t {
        using T = typename decltype(tag)::type;
        switch (L.unroll) {
        case 1: return launch_typed<T, 1>(L, s);
        case 2: return launch_typed<T, 2>(L, s);
        case 4: return launch_typed<T, 4>(L, s);
        default: return cudaErrorInvalidValue;
        }
    });
}

} // namespace libgemv
