// Kernel family "columns": op T, y = alpha * A^T x + beta * y, A row-major M x K, so y has K
// entries and each is a dot product down a column.
//
// A block owns a tile of columns and a slice of rows. Its c = 1 << c_log2 threads across
// the tile each own one pack of columns (16 bytes with vector loads, else one element), so
// a warp reads whole runs of a row (coalesced); its r = row_lanes lanes walk the slice's
// rows, r apart, UNROLL rows in flight, each x[row] one broadcast load. The lanes' column
// sums are then added in a fixed order (deterministic): within a warp by a shuffle tree,
// then warp by warp through shared memory. Without split-M
// the block writes y; with it, slice s writes partials acc[(s * batch + b) * K + j] that
// columns_reduce adds in slice order.
// Loads (LOADS, gemv_loads_t): one element; 16-byte packs of aligned rows; realigned packs
// of rows that start anywhere (odd K, any lda or A): a thread's 16 bytes of a row are cut
// from the two aligned packs that hold them (the second mostly an L1 hit, its neighbour's
// first). On many rows they run 1.5-1.7x slower than element loads, for a reason not yet
// found (NOTES 37): the heuristic takes them for few long rows only. Or phased rows (split-M
// only): rows `period` apart start at the same 16-byte phase p, so slice s walks only the
// rows of class s % period and reads their aligned packs as they lie; a thread's pack then
// holds columns shifted by -p, and its partials are written shifted (each slice writes every
// column once). Aligned loads, period times the partials. Or lane classes (phased rows in
// one pass, or split where the lanes allow: kLoadsLaneClasses): the row lanes are a multiple
// of the period, so each lane walks rows of one phase class (of its slice, which may start
// in any phase) and reads their aligned packs as they lie, its thread holding columns
// shifted by its class's phase; a tile writes c - 1 packs of columns, which every lane's c
// packs cover whatever its shift, and the lanes' sums are added column by column in lane
// order. Aligned loads, one pack in c read twice (the tile's neighbour's), mostly from L2.
// Geometry: block = c * r threads (<= max_block_threads(UNROLL)); grid.x column tiles (of K
// + pack - 1 columns when phased; of c - 1 packs, lane classes), grid.y row slices (times the
// period when phased), grid.z products (each with a grid-stride loop, so any K and batch).
#include "common.cuh"

namespace libgemv {

namespace {

// acc[0..N) += a's N elements * xv (pairs converted together, as dot_pack does).
template <typename T> __device__ __forceinline__ void fma_pack(const uint4 &a, float xv, float *acc) {
    if constexpr (std::is_same_v<T, float>) {
        acc[0] = fmaf(__uint_as_float(a.x), xv, acc[0]);
        acc[1] = fmaf(__uint_as_float(a.y), xv, acc[1]);
        acc[2] = fmaf(__uint_as_float(a.z), xv, acc[2]);
        acc[3] = fmaf(__uint_as_float(a.w), xv, acc[3]);
    } else {
        using T2 = std::conditional_t<std::is_same_v<T, __half>, __half2, __nv_bfloat162>;
        const T2 *a2 = reinterpret_cast<const T2 *>(&a);
#pragma unroll
        for (int i = 0; i < 4; ++i) {
            float2 f;
            if constexpr (std::is_same_v<T, __half>) f = __half22float2(a2[i]);
            else f = __bfloat1622float2(a2[i]);
            acc[2 * i] = fmaf(f.x, xv, acc[2 * i]);
            acc[2 * i + 1] = fmaf(f.y, xv, acc[2 * i + 1]);
        }
    }
}

// The 16 bytes at p (any element alignment) from the two aligned packs that hold them, if
// both lie in A's extent [lo, hi); else element by element (the first row's head, the last
// row's tail), so that nothing outside A is read.
template <typename T> __device__ __forceinline__ uint4 load_realigned_pack(const T *p, const char *lo, const char *hi) {
    const uintptr_t a = reinterpret_cast<uintptr_t>(p);
    const int s = (int)(a & 15);
    const uint4 *q = reinterpret_cast<const uint4 *>(a - s);
    if (reinterpret_cast<const char *>(q) >= lo && reinterpret_cast<const char *>(q + 2) <= hi)
        return shift_pack<T>(__ldg(q), __ldg(q + 1), s);
    return gather_pack<T>(p, 0, kPack<T>);
}

// The aligned pack at p if it lies in A's extent [lo, hi), else its elements there (zeros
// around): lane classes' first pack of the first row may start before A, and the last
// row's last pack reach past it.
template <typename T> __device__ __forceinline__ uint4 load_pack_in_extent(const T *p, const char *lo, const char *hi) {
    const char *c = reinterpret_cast<const char *>(p);
    if (c >= lo && c + 16 <= hi) return load_a_pack(reinterpret_cast<const uint4 *>(p));
    return gather_pack<T>(p, c < lo ? (int)((lo - c) / (int)sizeof(T)) : 0,
                          (int)min((int64_t)kPack<T>, (int64_t)(hi - c) / (int64_t)sizeof(T)));
}

// How a block walks its work (launch_typed picks the walk). kLoops: any grid; loops over
// products, tiles grid-stride and row steps, then a remainder loop. kOneStep (element loads
// and aligned packs, a block a tile of one product, each lane at most UNROLL rows of its
// slice): every row of the lane asked for at once, those past the slice predicated off, no
// loop at all. kOneTile (the same, more rows a lane; element loads, and 16-bit packs at
// unroll 1-2): whole steps of UNROLL rows, then the rest as one predicated step, where a
// remainder loop waits on memory once a row. On small matrices the loops cost as much as the
// reads (NOTES 63: a split of fp16 1024^2, 4.45 us with them against 3.36 without, in
// experiments/op_t_one_launch_split.cu); kOneTile: NOTES 65; batches: NOTES 66.
enum ColumnWalk { kLoops = 0, kOneStep = 1, kOneTile = 2 };

// BATCHED (kOneStep and kOneTile): a block's one product is blockIdx.z; else product 0, so
// that the single-product kernels stay as they were measured (their registers move with it).
template <typename T, int LOADS, int UNROLL, int WALK, bool BATCHED = false>
__global__ void __launch_bounds__(max_block_threads(UNROLL)) gemv_columns_kernel(const ColumnArgs args) {
    constexpr bool VEC = LOADS != kLoadsScalar;
    constexpr bool PHASED = LOADS == kLoadsPhased;
    constexpr bool LANE_CLASSES = LOADS == kLoadsLaneClasses;
    constexpr int V = VEC ? kPack<T> : 1;
    extern __shared__ float lane_sums[]; // [row_lanes][V][c]
    const int c_threads = 1 << args.c_log2;
    const int col = threadIdx.x & (c_threads - 1);
    const int lane = threadIdx.x >> args.c_log2;
    const int lanes = args.row_lanes;
    const int tile_cols = (LANE_CLASSES ? c_threads - 1 : c_threads) * V; // columns a tile writes
    // Whole warps of c <= 16 columns of element loads (one sum a lane): lane sums go
    // through shuffles first (below); 16-byte loads (V sums a lane) lost with it.
    const bool shuffle_lanes = !VEC && c_threads < 32 && (blockDim.x & 31) == 0;
    // The slice's rows: [r_begin, r_end), of one phase class when phased (r_first its first,
    // a lane's rows `period` apart). Computed after the prefetch call, as before phased rows:
    // live across that call, they slowed the element-load kernels by up to 17%.
    const int period = PHASED ? args.period : 1; // a power of two
    const auto first_row = [&](int64_t r_begin) {
        return PHASED ? r_begin + (((int)blockIdx.y - (int)r_begin) & (period - 1)) : r_begin;
    };
    const auto slice_begin = [&] { return (int64_t)(PHASED ? blockIdx.y / (unsigned)period : blockIdx.y) * args.m_chunk; };
    if (args.prefetch_lines > 0 &&
        ((int64_t)blockIdx.z * gridDim.y + blockIdx.y) * gridDim.x + blockIdx.x < args.prefetch_blocks) {
        const int64_t j0 = (int64_t)blockIdx.x * tile_cols;              // the block's first tile
        const int64_t rows = min((int64_t)lanes * UNROLL, args.m_chunk); // its first step
        prefetch_first_rows(static_cast<const T *>(args.A) + j0, args.m, args.lda, first_row(slice_begin()), (int)rows,
                            period, min(args.k - j0, (int64_t)c_threads * V) * (int64_t)sizeof(T), args.prefetch_lines);
    }
    pdl_prologue(args.pdl);
    const int64_t r_begin = slice_begin();
    const int64_t r_end = min(args.m, r_begin + args.m_chunk);
    const int64_t r_first = first_row(r_begin);
    const int lane_step = lanes * period;
    // kOneStep and kOneTile serve one tile of one product a block (bounds the compiler sees: no loops).
    constexpr bool TILE_A_BLOCK = WALK != kLoops;
    const int64_t b_first = TILE_A_BLOCK && !BATCHED ? 0 : blockIdx.z;
    const int64_t b_end = TILE_A_BLOCK ? b_first + 1 : args.batch;
    for (int64_t b = b_first; b < b_end; b += TILE_A_BLOCK ? 1 : gridDim.z) {
        const T *A = static_cast<const T *>(args.A) + b * args.stride_a;
        const T *x = static_cast<const T *>(args.x) + b * args.stride_x;
        const char *a_lo = reinterpret_cast<const char *>(A); // A's extent, for realigned packs
        const char *a_hi = reinterpret_cast<const char *>(A + (args.m - 1) * args.lda + args.k);
        auto load_pack = [&](const T *p) {
            if constexpr (LOADS == kLoadsRealigned) return load_realigned_pack<T>(p, a_lo, a_hi);
            else if constexpr (LANE_CLASSES) return load_pack_in_extent<T>(p, a_lo, a_hi);
            else return load_a_pack(reinterpret_cast<const uint4 *>(p));
        };
        // Phased: the class's rows start `shift` elements into an aligned pack, so a thread's
        // aligned pack of a row holds columns j .. j + V - 1 with j = (its pack) * V - shift.
        // Lane classes: the lane's rows (r_first + lane, lanes apart) start `shift` elements
        // into an aligned pack, and tiles start at whole packs, so its pack of a row likewise.
        // e0: the phase of row r_first; row r_first + l's is (e0 + l * lda) mod V.
        const uint64_t e0 = reinterpret_cast<uintptr_t>(A) / sizeof(T) + (uint64_t)r_first * (uint64_t)args.lda;
        int shift = 0;
        if constexpr (PHASED) shift = (int)(e0 & (V - 1));
        if constexpr (LANE_CLASSES) shift = (int)((e0 + (uint64_t)lane * (uint64_t)args.lda) & (V - 1));
        for (int64_t tile = blockIdx.x; tile < (TILE_A_BLOCK ? (int64_t)blockIdx.x + 1 : args.tiles);
             tile += TILE_A_BLOCK ? 1 : gridDim.x) {
            const int64_t j = tile * tile_cols + col * V - shift; // the thread's first column
            float acc[V];
#pragma unroll
            for (int v = 0; v < V; ++v) acc[v] = 0.f;
            const int64_t cols_left = args.k - j;
            // The thread reads whole packs: lane classes, any pack holding a column below K
            // (its columns outside [0, K) are sums never written: padding, even NaN, stays there).
            const bool whole_packs = LANE_CLASSES ? cols_left > 0 : cols_left >= V && (!PHASED || j >= 0);
            if (TILE_A_BLOCK && whole_packs) {
                // A step: UNROLL rows of the lane from row r0 on, asked for at once; in the last
                // step (PARTIAL) the rows past the slice are off. kOneTile's packs walk pointers
                // (pa, px: row r0's pack and x entry); element loads and kOneStep index rows.
                // Each choice measured faster than the others (NOTES 65): every step predicated
                // ran 3-13% slower on many steps; packs indexed by row 7% (offsets recomputed a
                // step); element loads and one step on pointers up to 1.2x.
                constexpr bool ON_POINTERS = WALK == kOneTile && VEC;
                const int64_t a_lane = (int64_t)lanes * args.lda, x_lane = (int64_t)lanes * args.incx;
                const auto step = [&](int64_t r0, const T *pa, const T *px, auto partial) {
                    constexpr bool PARTIAL = decltype(partial)::value;
                    // Batched, rows are indexed from the parameters with the product an offset, not
                    // from its base pointers held in registers: bf16 256^2 x 8 in one step ran 1.06x
                    // faster than before so, 0.91x from the bases (NOTES 66).
                    const auto a_row = [&](int u) {
                        if constexpr (ON_POINTERS) return pa + u * a_lane;
                        else if constexpr (BATCHED)
                            return static_cast<const T *>(args.A) + ((r0 + u * lanes) * args.lda + (b * args.stride_a + j));
                        else return A + (r0 + u * lanes) * args.lda + j;
                    };
                    const auto x_row = [&](int u) {
                        if constexpr (ON_POINTERS) return px + u * x_lane;
                        else if constexpr (BATCHED)
                            return static_cast<const T *>(args.x) + ((r0 + u * lanes) * args.incx + b * args.stride_x);
                        else return x + (r0 + u * lanes) * args.incx;
                    };
                    float rx[UNROLL];
#pragma unroll
                    for (int u = 0; u < UNROLL; ++u)
                        rx[u] = !PARTIAL || r0 + u * lanes < r_end ? to_f32(load_readonly(x_row(u))) : 0.f;
                    if constexpr (VEC) {
                        uint4 ra[UNROLL];
#pragma unroll
                        for (int u = 0; u < UNROLL; ++u)
                            ra[u] = !PARTIAL || r0 + u * lanes < r_end ? load_pack(a_row(u)) : make_uint4(0, 0, 0, 0);
#pragma unroll
                        for (int u = 0; u < UNROLL; ++u) fma_pack<T>(ra[u], rx[u], acc);
                    } else {
                        float ra[UNROLL];
#pragma unroll
                        for (int u = 0; u < UNROLL; ++u)
                            ra[u] = !PARTIAL || r0 + u * lanes < r_end ? to_f32(load_a(a_row(u))) : 0.f;
#pragma unroll
                        for (int u = 0; u < UNROLL; ++u) acc[0] = fmaf(ra[u], rx[u], acc[0]);
                    }
                };
                int64_t r0 = r_first + lane;
                if constexpr (WALK == kOneStep) {
                    step(r0, A, x, std::true_type{});
                } else { // whole steps, then the rest as one partial step
                    const T *pa = A + r0 * args.lda + j, *px = x + r0 * args.incx;
                    for (; r0 + (int64_t)(UNROLL - 1) * lanes < r_end;
                         r0 += (int64_t)UNROLL * lanes, pa += UNROLL * a_lane, px += UNROLL * x_lane)
                        step(r0, pa, px, std::false_type{});
                    if (r0 < r_end) step(r0, pa, px, std::true_type{});
                }
            } else if (whole_packs) { // a whole pack (or, without vector loads, one element)
                int64_t r = r_first + lane * period;
                for (; r + (int64_t)(UNROLL - 1) * lane_step < r_end; r += (int64_t)UNROLL * lane_step) {
                    float rx[UNROLL];
#pragma unroll
                    for (int u = 0; u < UNROLL; ++u) rx[u] = to_f32(load_readonly(x + (r + u * lane_step) * args.incx));
                    if constexpr (VEC) {
                        uint4 ra[UNROLL];
#pragma unroll
                        for (int u = 0; u < UNROLL; ++u)
                            ra[u] = load_pack(A + (r + u * lane_step) * args.lda + j);
#pragma unroll
                        for (int u = 0; u < UNROLL; ++u) fma_pack<T>(ra[u], rx[u], acc);
                    } else {
                        float ra[UNROLL];
#pragma unroll
                        for (int u = 0; u < UNROLL; ++u) ra[u] = to_f32(load_a(A + (r + u * lane_step) * args.lda + j));
#pragma unroll
                        for (int u = 0; u < UNROLL; ++u) acc[0] = fmaf(ra[u], rx[u], acc[0]);
                    }
                }
                for (; r < r_end; r += lane_step) {
                    const float xv = to_f32(load_readonly(x + r * args.incx));
                    if constexpr (VEC) fma_pack<T>(load_pack(A + r * args.lda + j), xv, acc);
                    else acc[0] = fmaf(to_f32(load_a(A + r * args.lda + j)), xv, acc[0]);
                }
            } else if (!LANE_CLASSES && cols_left > 0 && (!PHASED || j + V > 0)) { // a row's partial first (phased) or last pack: element by element
                for (int64_t r = r_first + lane * period; r < r_end; r += lane_step) {
                    const float xv = to_f32(load_readonly(x + r * args.incx));
#pragma unroll
                    for (int v = 0; v < V; ++v)
                        if ((!PHASED || j + v >= 0) && v < cols_left) acc[v] = fmaf(to_f32(load_a(A + r * args.lda + j + v)), xv, acc[v]);
                }
            }
            // A warp holds 32 / c lanes of each of its columns: they add up by shuffles first
            // (a fixed tree), so that the serial sum below runs over warps, not lanes, and
            // blocks of many lanes (a few columns, every row in flight: the small matrices'
            // shape) stop paying a chain of `lanes` shared-memory adds a column.
            int groups = lanes, group = lane;
            if (shuffle_lanes) {
#pragma unroll
                for (int v = 0; v < V; ++v)
                    for (int o = c_threads; o < 32; o <<= 1) acc[v] += __shfl_xor_sync(0xffffffffu, acc[v], o);
                groups = lanes >> (5 - args.c_log2);
                group = lane >> (5 - args.c_log2);
            }
            if (!shuffle_lanes || (threadIdx.x & 31) < c_threads) {
#pragma unroll
                for (int v = 0; v < V; ++v) lane_sums[(group * V + v) * c_threads + col] = acc[v];
            }
            __syncthreads();
            for (int t = threadIdx.x; t < tile_cols; t += blockDim.x) {
                const int v = t / c_threads, cc = t % c_threads;
                const int64_t jj = LANE_CLASSES ? tile * tile_cols + t : (tile * c_threads + cc) * V + v - shift;
                if ((PHASED && jj < 0) || jj >= args.k) continue;
                float s = 0.f;
                if constexpr (LANE_CLASSES) { // column t of the tile: place t + (lane l's shift) of lane l
                    uint32_t e = (uint32_t)e0;
                    for (int l = 0; l < groups; ++l, e += (uint32_t)args.lda) {
                        const int place = t + (int)(e & (V - 1));
                        s += lane_sums[(l * V + place % V) * c_threads + place / V];
                    }
                } else {
                    for (int l = 0; l < groups; ++l) s += lane_sums[(l * V + v) * c_threads + cc];
                }
                if (args.acc) {
                    args.acc[((int64_t)blockIdx.y * args.batch + b) * args.k + jj] = s;
                } else {
                    store_y(static_cast<T *>(args.y) + b * args.stride_y + jj * args.incy, args.alpha, args.beta, s);
                }
            }
            __syncthreads(); // lane_sums is reused by the next tile
        }
    }
}

template <typename T, int LOADS, int UNROLL> cudaError_t launch_typed(const ColumnLaunch &L, cudaStream_t s) {
    const LaunchPlan p = column_plan(L);
    const ColumnArgs &a = L.args;
    // Batched element loads at unroll 4 keep the loops: in one tile their step issued two of
    // its loads after the first FMA (SASS; the single-product kernel issues all eight first)
    // and lanes of 5 steps up ran 1.1-1.5x slower; in one step 64^2 x 8 ran 3-5% slower (NOTES 66).
    constexpr bool BATCH_WALKS = !(LOADS == kLoadsScalar && UNROLL == 4);
    const auto launch = [&](auto walk) {
        constexpr int WALK = decltype(walk)::value;
        if constexpr (WALK != kLoops && BATCH_WALKS)
            if (a.batch > 1)
                return launch_kernel(gemv_columns_kernel<T, LOADS, UNROLL, WALK, true>, p.grid, p.block,
                                     p.dynamic_smem, s, a.pdl != 0, a);
        return launch_kernel(gemv_columns_kernel<T, LOADS, UNROLL, WALK>, p.grid, p.block, p.dynamic_smem, s,
                             a.pdl != 0, a);
    };
    if constexpr (LOADS == kLoadsScalar || LOADS == kLoadsAligned || LOADS == kLoadsLaneClasses) {
        // A block a tile of one product (batches past 65535 products loop).
        if (a.batch == (int64_t)p.grid.z && a.tiles == (int64_t)p.grid.x && (a.batch == 1 || BATCH_WALKS)) {
            if (a.m_chunk <= (int64_t)a.row_lanes * UNROLL) return launch(std::integral_constant<int, kOneStep>{});
            // Packs in one tile only for 16-bit rows at unroll 1-2: fp32 packs ran 4-29% slower
            // (40-45 registers against 32; held to 32 they spilled and lost as much), 16-bit
            // packs at unroll 4 0.93-1.06x of the loops (NOTES 65; batched alike, NOTES 66).
            if constexpr (LOADS == kLoadsScalar || (sizeof(T) == 2 && UNROLL <= 2))
                return launch(std::integral_constant<int, kOneTile>{});
        }
    }
    return launch(std::integral_constant<int, kLoops>{});
}

} // namespace

cudaError_t launch_columns(const ColumnLaunch &L, cudaStream_t s) {
    return with_storage_type(L.dtype, [&](auto tag) -> cudaError_t {
        using T = typename decltype(tag)::type;
        auto with_unroll = [&](auto loads) -> cudaError_t {
            constexpr int LOADS = decltype(loads)::value;
            switch (L.unroll) {
            case 1: return launch_typed<T, LOADS, 1>(L, s);
            case 2: return launch_typed<T, LOADS, 2>(L, s);
            case 4: return launch_typed<T, LOADS, 4>(L, s);
            default: return cudaErrorInvalidValue;
            }
        };
        switch (L.vector_loads) {
        case kLoadsScalar: return with_unroll(std::integral_constant<int, kLoadsScalar>{});
        case kLoadsAligned: return with_unroll(std::integral_constant<int, kLoadsAligned>{});
        case kLoadsRealigned: return with_unroll(std::integral_constant<int, kLoadsRealigned>{});
        case kLoadsPhased: return with_unroll(std::integral_constant<int, kLoadsPhased>{});
        case kLoadsLaneClasses: return with_unroll(std::integral_constant<int, kLoadsLaneClasses>{});
        default: return cudaErrorInvalidValue;
        }
    });
}

} // namespace libgemv
