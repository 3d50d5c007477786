// Kernel family "row tile" (rows_in_registers): op N for few rows of a long K. A block sums
// a tile of R rows over one K slice; each of its p threads owns 16-byte slots of the slice
// and keeps the R rows' sums in registers, so x is read once for the tile, not once a row
// (15 x 8929542 fp32 has an x of 36 MB: read once a row, it was as much traffic as A), and
// a thread has R loads of A in flight per slot (times UNROLL slots, R * UNROLL <= 4).
//
// Slots: slot q of a row is the aligned 16-byte pack q from the boundary at or below the
// row's start, so every load of A is one aligned pack whatever the row's phase b (in
// elements). Its elements are row columns [qN - b, qN - b + N). x is read as aligned packs
// too, from the boundary at or below x (phase bx): the slot's x is packs q and q + 1 shifted
// by bx - b elements when that is >= 0, else packs q - 1 and q shifted by N + bx - b, in
// registers. Slots whose elements or x packs reach outside [0, K) (the first two and the
// last two) load their packs whole where they lie inside A's extent and x (else element by
// element), with the elements outside the row and outside x set to zero: nothing outside A
// or x is read, and a row's gap (lda - K, which may hold NaN) is never multiplied. With aligned rows and x
// (LOADS = kLoadsAligned) b = bx = 0 and the shifts compile away.
//
// The block then adds each row's thread sums in a fixed order (warp butterfly, then warps
// in order) and writes y, or with split-K the partial acc[slice * m + row] that
// splitk_reduce adds in slice order: deterministic either way. (Adding the slices within a
// thread-block cluster instead, in one kernel, was slower: at most 8 slices a cluster left
// too few blocks; benchmarks/experiments/splitk-cluster.patch.)
// Geometry: block = p threads (p * R <= 1024, p <= 512), grid.x row tiles (grid-stride), grid.y K
// slices of `slice` slots each.
#include "common.cuh"

namespace libgemv {

namespace {

template <typename T, int LOADS, int R, int UNROLL, bool ISSUE_FIRST>
__global__ void __launch_bounds__(tile_max_threads(R)) gemv_rowtile_kernel(const TileArgs a) {
    constexpr int N = kPack<T>;
    constexpr bool kShift = LOADS == kLoadsRealigned;
    __shared__ float warp_sums[R][kMaxWarpsPerBlock];
    pdl_prologue(a.pdl);
    const T *x = static_cast<const T *>(a.x);
    const int bx = kShift ? (int)((reinterpret_cast<uintptr_t>(x) & 15) / sizeof(T)) : 0;
    const uint4 *xv = reinterpret_cast<const uint4 *>(x - bx);
    const int p = blockDim.x, warp = threadIdx.x >> 5;
    const int64_t q_begin = (int64_t)blockIdx.y * a.slice, q_end = min(q_begin + a.slice, a.slots);
    // Slots whose elements lie in every row and whose x packs lie in x (see above).
    const int64_t q_lo = kShift ? 2 : 0, q_hi = kShift ? (a.k - 2 * N) / N : a.k / N - 1; // inclusive
    const T *a_begin = static_cast<const T *>(a.A), *a_end = a_begin + (a.m - 1) * a.lda + a.k; // A's extent
    for (int64_t tile = blockIdx.x; tile < a.tiles; tile += gridDim.x) {
        const int64_t row0 = tile * R;
        const int rows = (int)min((int64_t)R, a.m - row0);
        // Per row: its aligned base, and (phase b) | (x shift in bytes) << 8 | (x from pack q - 1) << 16.
        const uint4 *av[R];
        int code[R];
        bool need_below = false, need_above = false;
#pragma unroll
        for (int r = 0; r < R; ++r) {
            const T *start = static_cast<const T *>(a.A) + (row0 + min(r, rows - 1)) * a.lda;
            const int b = kShift ? (int)((reinterpret_cast<uintptr_t>(start) & 15) / sizeof(T)) : 0;
            av[r] = reinterpret_cast<const uint4 *>(start - b);
            const int d = bx - b;
            code[r] = b | ((d < 0 ? d + N : d) * (int)sizeof(T)) << 8 | (d < 0) << 16;
            need_below |= r < rows && d < 0;
            need_above |= r < rows && d > 0;
        }
        float acc[R];
#pragma unroll
        for (int r = 0; r < R; ++r) acc[r] = 0.f;

        // UNROLL slots, p apart: R * UNROLL packs of A and the x packs around them in flight
        // at once. EDGE: slots that reach outside a row or x (the first two and the last two of
        // a row) load so that nothing outside A's extent or x is read, and the elements outside
        // the row (a gap may hold NaN) and outside x are zeros. ISSUE_FIRST: all their loads
        // first, then the masks (edge_pack_issue/finish); else each load with its mask
        // (load_edge_pack), which waits on memory once a pack but holds fewer registers (bf16 4
        // rows: 48 against 64). A grid of one wave (registry.cpp: up to 8 blocks an SM) waits
        // on its slowest block, whose edge slots are the critical path (fp32 48 x 23714: 5.7 us
        // issuing first, 6.0 not); many waves hide that and want the occupancy (bf16 167 x
        // 1210399: 164 us, 180 issuing first).
        auto slots_at = [&](int64_t q, auto edge) {
            constexpr bool EDGE = decltype(edge)::value;
            uint4 ra[UNROLL][R], x0[UNROLL];
            [[maybe_unused]] uint4 xlo[UNROLL], xhi[UNROLL];
            // x's aligned pack j: its first element, and [lo, hi) of it inside x.
            auto x_at = [&](int64_t j) { return x - bx + j * N; };
            auto x_lo = [&](int64_t j) { return (int)max((int64_t)0, min((int64_t)N, bx - j * N)); };
            auto x_hi = [&](int64_t j) { return (int)max((int64_t)0, min((int64_t)N, bx + a.k - j * N)); };
            auto x_issue = [&](int64_t j) { // edge slots: whole packs inside x now, the rest in x_finish
                if constexpr (!EDGE) return __ldg(xv + j);
                if constexpr (!ISSUE_FIRST) return x_lo(j) < x_hi(j) ? load_edge_pack<T>(x_at(j), x_lo(j), x_hi(j), x, x + a.k)
                                                                      : make_uint4(0u, 0u, 0u, 0u);
                return edge_pack_issue<T>(x_at(j), x, x + a.k);
            };
            auto x_finish = [&](const uint4 &v, int64_t j) {
                if constexpr (!EDGE || !ISSUE_FIRST) return v;
                return edge_pack_finish<T>(v, x_at(j), x_lo(j), x_hi(j), x, x + a.k);
            };
            // Row r's slot qu: its aligned pack, and [lo, hi) of it inside the row (edge slots).
            auto a_at = [&](int r, int64_t qu) { return reinterpret_cast<const T *>(av[r] + qu); };
            auto a_lo = [&](int r, int64_t qu) { return (int)max((int64_t)0, min((int64_t)N, (int64_t)(code[r] & 0xff) - qu * N)); };
            auto a_hi = [&](int r, int64_t qu) {
                return (int)max((int64_t)0, min((int64_t)N, a.k + (code[r] & 0xff) - qu * N));
            };
#pragma unroll
            for (int u = 0; u < UNROLL; ++u)
#pragma unroll
                for (int r = 0; r < R; ++r) {
                    const int64_t qu = q + (int64_t)u * p;
                    ra[u][r] = make_uint4(0u, 0u, 0u, 0u);
                    if constexpr (EDGE && ISSUE_FIRST) {
                        if (r < rows && qu < q_end) ra[u][r] = edge_pack_issue<T>(a_at(r, qu), a_begin, a_end);
                    } else if constexpr (EDGE) { // load and mask in one step: fewer registers
                        const int lo = a_lo(r, qu), hi = a_hi(r, qu);
                        if (r < rows && qu < q_end && lo < hi) ra[u][r] = load_edge_pack<T>(a_at(r, qu), lo, hi, a_begin, a_end);
                    } else if (r < rows) {
                        ra[u][r] = load_a_pack(av[r] + qu);
                    }
                }
#pragma unroll
            for (int u = 0; u < UNROLL; ++u) {
                const int64_t qu = q + (int64_t)u * p;
                x0[u] = x_issue(qu);
                if constexpr (kShift) {
                    xlo[u] = need_below ? x_issue(qu - 1) : x0[u];
                    xhi[u] = need_above ? x_issue(qu + 1) : x0[u];
                }
            }
            if constexpr (EDGE && ISSUE_FIRST) { // every load is in flight: now the masks (and the rare gathers)
#pragma unroll
                for (int u = 0; u < UNROLL; ++u) {
                    const int64_t qu = q + (int64_t)u * p;
#pragma unroll
                    for (int r = 0; r < R; ++r)
                        if (r < rows && qu < q_end)
                            ra[u][r] = edge_pack_finish<T>(ra[u][r], a_at(r, qu), a_lo(r, qu), a_hi(r, qu), a_begin, a_end);
                    x0[u] = x_finish(x0[u], qu);
                    if constexpr (kShift) {
                        xlo[u] = need_below ? x_finish(xlo[u], qu - 1) : x0[u];
                        xhi[u] = need_above ? x_finish(xhi[u], qu + 1) : x0[u];
                    }
                }
            }
#pragma unroll
            for (int u = 0; u < UNROLL; ++u) {
                // A slot of the next slice has zeros of A but x there may be Inf or NaN: skip it.
                if (EDGE && q + (int64_t)u * p >= q_end) continue;
#pragma unroll
                for (int r = 0; r < R; ++r) {
                    if constexpr (kShift) {
                        const int sh = (code[r] >> 8) & 0xff;
                        const uint4 xs = (code[r] >> 16) ? shift_pack<T>(xlo[u], x0[u], sh) : shift_pack<T>(x0[u], xhi[u], sh);
                        acc[r] = dot_pack<T>(ra[u][r], xs, acc[r]);
                    } else {
                        acc[r] = dot_pack<T>(ra[u][r], x0[u], acc[r]);
                    }
                }
            }
        };

        int64_t q = q_begin + threadIdx.x;
        for (; q < q_end; q += (int64_t)UNROLL * p) {
            const bool edge = !(q >= q_lo && q + (int64_t)(UNROLL - 1) * p <= min(q_hi, q_end - 1));
            // A warp takes one path (the edge path serves inner slots too): with a few edge
            // slots in one branch and the rest in another, it waited on memory twice.
            if (__any_sync(__activemask(), edge)) slots_at(q, std::true_type{}); // slots past q_end are skipped there
            else slots_at(q, std::false_type{});
        }

        // Each row's sum over the block: butterfly within warps, then warps in order.
#pragma unroll
        for (int r = 0; r < R; ++r) {
            const float s = group_sum(acc[r], 32);
            if ((threadIdx.x & 31) == 0) warp_sums[r][warp] = s;
        }
        __syncthreads();
        if ((int)threadIdx.x < rows) {
            const int r = threadIdx.x;
            float s = 0.f;
            for (int w = 0; w < (p >> 5); ++w) s += warp_sums[r][w];
            const int64_t row = row0 + r;
            if (a.acc) a.acc[(int64_t)blockIdx.y * a.m + row] = s;
            else store_y(static_cast<T *>(a.y) + row * a.incy, a.alpha, a.beta, s);
        }
        __syncthreads(); // warp_sums is reused by the next tile
    }
}

} // namespace

// The kernels: 3 dtypes x 2 load modes x the (R, UNROLL) pairs with R * UNROLL <= kTileMaxPacks
// x the two ways of loading edge slots.
cudaError_t launch_rowtile(const TileLaunch &L, cudaStream_t stream) {
    return with_storage_type(L.dtype, [&](auto tag) -> cudaError_t {
        using T = typename decltype(tag)::type;
        auto go = [&](auto loads, auto issue_first) -> cudaError_t {
            constexpr int LD = decltype(loads)::value;
            constexpr bool IF = decltype(issue_first)::value;
            const LaunchPlan pl = tile_plan(L);
            auto run = [&](auto kernel) {
                return launch_kernel(kernel, pl.grid, pl.block, 0, stream, L.pdl, L.args);
            };
            switch (L.rows * 8 + L.unroll) {
            case 1 * 8 + 1: return run(gemv_rowtile_kernel<T, LD, 1, 1, IF>);
            case 1 * 8 + 2: return run(gemv_rowtile_kernel<T, LD, 1, 2, IF>);
            case 1 * 8 + 4: return run(gemv_rowtile_kernel<T, LD, 1, 4, IF>);
            case 2 * 8 + 1: return run(gemv_rowtile_kernel<T, LD, 2, 1, IF>);
            case 2 * 8 + 2: return run(gemv_rowtile_kernel<T, LD, 2, 2, IF>);
            case 4 * 8 + 1: return run(gemv_rowtile_kernel<T, LD, 4, 1, IF>);
            default: return cudaErrorInvalidValue;
            }
        };
        auto with_edges = [&](auto loads) -> cudaError_t {
            return L.issue_first ? go(loads, std::true_type{}) : go(loads, std::false_type{});
        };
        switch (L.loads) {
        case kLoadsAligned: return with_edges(std::integral_constant<int, kLoadsAligned>{});
        case kLoadsRealigned: return with_edges(std::integral_constant<int, kLoadsRealigned>{});
        default: return cudaErrorInvalidValue;
        }
    });
}

} // namespace libgemv
