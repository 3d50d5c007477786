// Device helpers shared by the kernel families: type conversion, 16-byte packs,
// the per-thread dot product over a row segment, and warp reductions.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <type_traits>

#include "internal.h"
#include "launch_plan.h"
#include "qpairs.cuh"

namespace libgemv {

template <typename T> __device__ __forceinline__ float to_f32(T v);
template <> __device__ __forceinline__ float to_f32<float>(float v) { return v; }
template <> __device__ __forceinline__ float to_f32<__half>(__half v) { return __half2float(v); }
template <> __device__ __forceinline__ float to_f32<__nv_bfloat16>(__nv_bfloat16 v) {
    return __bfloat162float(v);
}

template <typename T> __device__ __forceinline__ T from_f32(float v);
template <> __device__ __forceinline__ float from_f32<float>(float v) { return v; }
template <> __device__ __forceinline__ __half from_f32<__half>(float v) { return __float2half_rn(v); }
template <> __device__ __forceinline__ __nv_bfloat16 from_f32<__nv_bfloat16>(float v) {
    return __float2bfloat16_rn(v);
}

// Every kernel's final store: *y = alpha * sum + beta * y. beta == 0 assigns, so NaN or Inf
// already in y does not leak in (the contract).
template <typename T> __device__ __forceinline__ void store_y(T *yp, float alpha, float beta, float sum) {
    float v = alpha * sum;
    if (beta != 0.f) v = fmaf(beta, to_f32(*yp), v);
    *yp = from_f32<T>(v);
}

// Elements in one 16-byte pack.
template <typename T> constexpr int kPack = 16 / sizeof(T);

// The elements of a 16-byte pack as floats.
template <typename T> __device__ __forceinline__ void unpack(const uint4 &v, float (&f)[kPack<T>]) {
    if constexpr (std::is_same_v<T, float>) {
        f[0] = __uint_as_float(v.x), f[1] = __uint_as_float(v.y), f[2] = __uint_as_float(v.z), f[3] = __uint_as_float(v.w);
    } else {
        using T2 = std::conditional_t<std::is_same_v<T, __half>, __half2, __nv_bfloat162>;
        const T2 *h = reinterpret_cast<const T2 *>(&v);
#pragma unroll
        for (int i = 0; i < 4; ++i) {
            float2 t;
            if constexpr (std::is_same_v<T, __half>) t = __half22float2(h[i]);
            else t = __bfloat1622float2(h[i]);
            f[2 * i] = t.x, f[2 * i + 1] = t.y;
        }
    }
}

// fp32 dot product of two packs (uint4: 16 bytes, uint2: 8), in a fixed order.
template <typename T, typename P> __device__ __forceinline__ float dot_pack(const P &a, const P &x, float acc) {
    constexpr int W = sizeof(P) / 4; // 32-bit words
    if constexpr (std::is_same_v<T, float>) {
        const float *af = reinterpret_cast<const float *>(&a), *xf = reinterpret_cast<const float *>(&x);
#pragma unroll
        for (int i = 0; i < W; ++i) acc = fmaf(af[i], xf[i], acc);
    } else {
        using T2 = std::conditional_t<std::is_same_v<T, __half>, __half2, __nv_bfloat162>;
        const T2 *a2 = reinterpret_cast<const T2 *>(&a);
        const T2 *x2 = reinterpret_cast<const T2 *>(&x);
#pragma unroll
        for (int i = 0; i < W; ++i) {
            float2 af, xf;
            if constexpr (std::is_same_v<T, __half>) {
                af = __half22float2(a2[i]);
                xf = __half22float2(x2[i]);
            } else {
                af = __bfloat1622float2(a2[i]);
                xf = __bfloat1622float2(x2[i]);
            }
            acc = fmaf(af.x, xf.x, acc);
            acc = fmaf(af.y, xf.y, acc);
        }
    }
    return acc;
}

// A is read exactly once: stream it past L1 (evict-first). x is re-read by every row:
// keep it on the read-only cached path.
__device__ __forceinline__ uint4 load_a_pack(const uint4 *p) { return __ldcs(p); }
__device__ __forceinline__ uint2 load_a_pack(const uint2 *p) { return __ldcs(p); }
// One element through the read-only cached path (ld.global.nc). Explicit, because a plain
// load's caching is the compiler's guess, and that guess changed with unrelated code
// (scalar rows ran 20-27% slower). No __ldg overload for 2-byte types: load the bits.
template <typename T> __device__ __forceinline__ T load_readonly(const T *p) {
    if constexpr (std::is_same_v<T, float>) {
        return __ldg(p);
    } else if constexpr (std::is_same_v<T, __half>) {
        return __ushort_as_half(__ldg(reinterpret_cast<const unsigned short *>(p)));
    } else {
        return __ushort_as_bfloat16(__ldg(reinterpret_cast<const unsigned short *>(p)));
    }
}
template <typename T> __device__ __forceinline__ T load_a(const T *p) {
    if constexpr (std::is_same_v<T, float>) return __ldcs(p); // no 2-byte __ldcs: those take the cached path
    else return load_readonly(p);
}
// One element of x: shared memory when staged, else the read-only path.
template <bool XSMEM, typename T> __device__ __forceinline__ T load_x(const T *p) {
    if constexpr (XSMEM) return *p;
    else return load_readonly(p);
}

// Programmatic dependent launch (PDL, sm_90 and up; compiled out for older GPUs). A kernel launched with it may start while the previous kernel on
// the stream still runs, so it must wait for that kernel (complete, its writes visible)
// before it touches global memory that kernel may use. Signalling "let the next kernel
// start" right away lets our successor get resident during our tail: the launch gap
// between back-to-back kernels is hidden. The successor still waits for our completion.
__device__ __forceinline__ void wait_for_previous_kernel() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}
__device__ __forceinline__ void let_next_kernel_start() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
}
// Both, only in a kernel launched with PDL: in a plain launch the instructions are not
// free (measured: short blocks ran 1.5x slower with them).
__device__ __forceinline__ void pdl_prologue(bool pdl) {
    if (pdl) {
        wait_for_previous_kernel();
        let_next_kernel_start();
    }
}

// Before waiting, a block may ask L2 for the first 128-byte lines of its rows of A: the
// fetch overlaps the previous kernel's tail. Safe even if that kernel writes A, since L2
// is where writes land (the prefetch never fills L1).
template <typename T>
__device__ __noinline__ void prefetch_first_rows(const T *A, int64_t m, int64_t lda, int64_t row0, int rows,
                                                 int row_step, int64_t row_bytes, int lines) {
    for (int i = threadIdx.x; i < lines; i += blockDim.x) {
        const int64_t row = row0 + (int64_t)(i % rows) * row_step;
        const int line = i / rows;
        if (row < m && (int64_t)line * 128 < row_bytes)
            asm volatile("prefetch.global.L2 [%0];" ::"l"(reinterpret_cast<const char *>(A + row * lda) + line * 128));
    }
}

// The rows a block walks: rows_per_block at a time, grid-stride. Phased rows (period > 1)
// walk the rows of class blockIdx.x % period only (row = v * period + class for v < rows),
// so all of a block's rows share one 16-byte phase. With x's phase copies each row finds its
// own phase's copy: consecutive rows, as for aligned rows (grouped by class, a block's rows
// 8 apart, fp16 8191 x 8191 ran 48.0 us against 47.3; NOTES.md section 27).
struct RowWalk {
    int64_t first, step, rows; // in v, the index within the class
    int period, cls;
    __device__ __forceinline__ int64_t row(int64_t v) const { return v * period + cls; }
};
template <int LOADS> __device__ __forceinline__ RowWalk row_walk(const RowArgs &args) {
    RowWalk w;
    if constexpr (LOADS == kLoadsPhased) {
        w.period = args.period;
        w.cls = (int)(blockIdx.x % (unsigned)w.period);
        w.first = (int64_t)(blockIdx.x / (unsigned)w.period) * args.rows_per_block;
        w.step = (int64_t)(gridDim.x / (unsigned)w.period) * args.rows_per_block;
        w.rows = args.rows > w.cls ? (args.rows - w.cls + w.period - 1) / w.period : 0;
    } else {
        w.period = 1;
        w.cls = 0;
        w.first = (int64_t)blockIdx.x * args.rows_per_block;
        w.step = (int64_t)gridDim.x * args.rows_per_block;
        w.rows = args.rows;
    }
    return w;
}

// The start of every row kernel: prefetch, wait for the previous kernel, release the next.
// The prefetch stays out of line: inlined, the short-row kernels ran 4-8% slower (fp16
// 1048576x32 25.1 against 24.1 us, 131072x128 12.7 against 11.7; NOTES.md section 9). The
// call costs the 16-bit unroll-4 row-group kernels an 8-byte register save (ptxas warns),
// measured harmless. It takes scalars: a reference to the kernel's parameter struct moved
// the whole struct to local memory (1.5-3.6x slower).
template <typename T, int LOADS> __device__ __forceinline__ void row_kernel_prologue(const RowArgs &args) {
    if (args.prefetch_lines > 0 && (int64_t)blockIdx.y * gridDim.x + blockIdx.x < args.prefetch_blocks) {
        const int64_t k0 = (int64_t)blockIdx.y * args.k_chunk;
        const RowWalk w = row_walk<LOADS>(args);
        prefetch_first_rows(static_cast<const T *>(args.A) + k0, args.m, args.lda, w.row(w.first),
                            args.rows_per_block, w.period, min(args.k - k0, args.k_chunk) * (int64_t)sizeof(T),
                            args.prefetch_lines);
    }
    pdl_prologue(args.pdl);
}

// Launch with PDL when asked (cudaLaunchKernelEx with the attribute; plain otherwise).
template <typename... Params, typename... Args>
cudaError_t launch_kernel(void (*kernel)(Params...), dim3 grid, dim3 block, size_t smem, cudaStream_t stream,
                          bool pdl, Args... args) {
    cudaLaunchAttribute attr[1];
    attr[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
    attr[0].val.programmaticStreamSerializationAllowed = 1;
    cudaLaunchConfig_t cfg{};
    cfg.gridDim = grid;
    cfg.blockDim = block;
    cfg.dynamicSmemBytes = smem;
    cfg.stream = stream;
    cfg.attrs = attr;
    cfg.numAttrs = pdl ? 1 : 0;
    return cudaLaunchKernelEx(&cfg, kernel, args...);
}

// Quantized codes as floats without a conversion (qrows.cu, qblock.cu): a code masked under
// the mantissa of 2^23 is the float 2^23 + q, and one FADD of 2^23 + z leaves q - z exactly.
constexpr uint32_t kCodeMagicBits = 0x4B000000u; // 2^23
constexpr float kCodeMagic = 8388608.f;
// The float 2^23 + byte J of u (an int8 code): PRMT moves it under the exponent byte.
template <int J> __device__ __forceinline__ float byte_code(uint32_t u) {
    return __uint_as_float(__byte_perm(u, kCodeMagicBits, 0x7440 | J));
}

// The quantized operations (qrows.cu, qmma.cu, qblock.cu): entry c of x through perm (act-order), and a
// row's finished sum, stored as its slice partial (split K) or as y = alpha * sum + beta * y.
template <typename T> __device__ __forceinline__ T q_x_at(const QArgs &a, int64_t c) {
    return load_readonly(static_cast<const T *>(a.x) + (a.perm ? (int64_t)a.perm[c] : c) * a.incx);
}
template <typename T> __device__ __forceinline__ void q_store_row(const QArgs &a, int64_t row, float sum) {
    if (a.acc) {
        a.acc[(int64_t)blockIdx.y * a.m + row] = sum;
    } else {
        store_y(static_cast<T *>(a.y) + row * a.incy, a.alpha, a.beta, sum);
    }
}

// One 16-byte (or 8-byte) pack of x: shared memory when staged, else the read-only path.
template <bool XSMEM, typename P> __device__ __forceinline__ P load_x_pack(const P *p) {
    if constexpr (XSMEM) {
        return *p; // shared memory: ld.global.nc would be wrong here
    } else {
        return __ldg(p);
    }
}

// Bytes [s, s + 16) of the 32 bytes lo:hi (s < 16, a multiple of the element size), in
// registers: an 8-byte then a 4-byte word select (SEL, no divergence when rows of one warp
// have different phases), then a 2-byte funnel shift for 16-bit types.
template <typename T> __device__ __forceinline__ uint4 shift_pack(const uint4 &lo, const uint4 &hi, int s) {
    const uint32_t w[8] = {lo.x, lo.y, lo.z, lo.w, hi.x, hi.y, hi.z, hi.w};
    uint32_t v[6], u[5];
#pragma unroll
    for (int j = 0; j < 6; ++j) v[j] = (s & 8) ? w[j + 2] : w[j];
#pragma unroll
    for (int j = 0; j < 5; ++j) u[j] = (s & 4) ? v[j + 1] : v[j];
    if constexpr (sizeof(T) == 4) {
        return make_uint4(u[0], u[1], u[2], u[3]);
    } else {
        const unsigned bits = (s & 2) * 8;
        return make_uint4(__funnelshift_r(u[0], u[1], bits), __funnelshift_r(u[1], u[2], bits),
                          __funnelshift_r(u[2], u[3], bits), __funnelshift_r(u[3], u[4], bits));
    }
}

// Partial dot product of one thread over a row segment of n elements.
// The p threads of a row take 16-byte packs lane, lane+p, lane+2p, ... (coalesced
// across the group); UNROLL packs are loaded before any is used, so UNROLL loads are
// in flight per thread. x points to shared memory when XSMEM (then contiguous, 16-byte
// aligned). LOADS (gemv_loads_t):
//   kLoadsScalar    one element a load, any alignment and incx;
//   kLoadsAligned   16-byte packs; a and x 16-byte aligned, incx == 1 (can_implement);
//   kLoadsAligned8  the same with 8-byte packs: a and x 8-byte aligned;
//   kLoadsRealigned 16-byte packs of a row that starts anywhere: a scalar head up to a's
//                   first 16-byte boundary, then aligned packs of a; x (incx == 1, any
//                   element-aligned address) is read as the two aligned packs around
//                   each pack's elements and shifted into a's phase in registers.
// A scalar tail covers what no whole pack does. Phased rows: phased_dot.
template <typename T, int LOADS, int UNROLL, bool XSMEM>
__device__ __forceinline__ float thread_dot(const T *__restrict__ a, const T *__restrict__ x,
                                            int64_t incx, int64_t n, int lane, int p) {
    constexpr int N = kPack<T>;
    float acc = 0.f;
    int64_t tail_start = 0;
    if constexpr (LOADS == kLoadsRealigned) {
        // Head: the elements before a's first 16-byte boundary.
        const int64_t h = min((int64_t)(((16 - (reinterpret_cast<uintptr_t>(a) & 15)) & 15) / sizeof(T)), n);
        const T *a1 = a + h, *x1 = x + h;
        const int64_t n1 = n - h;
        const int s = (int)(reinterpret_cast<uintptr_t>(x1) & 15); // x's phase against a's packs
        const uint4 *av = reinterpret_cast<const uint4 *>(a1);
        const uint4 *xv = reinterpret_cast<const uint4 *>(reinterpret_cast<const char *>(x1) - s);
        const int next = s != 0; // a pack of x spans two aligned ones unless in phase
        // Whole packs whose aligned x packs lie inside x: no read past x's last element.
        int64_t packs = n1 / N;
        if (s) packs = max((int64_t)0, min(packs, (s + n1 * (int64_t)sizeof(T)) / 16 - 1));
        // The head and the tail (at most 2 packs' worth) are one list of scalar elements.
        // A thread's first one is loaded before the packs: read after them, the head and
        // the tail were two more round trips to memory a row (fp32 8191 x 8191 ran at 73%
        // of the aligned shape's bandwidth).
        const int64_t tail0 = h + packs * N, n_scalar = h + (n - tail0);
        auto scalar_at = [&](int64_t i) { return i < h ? i : tail0 + (i - h); };
        float sa = 0.f, sx = 0.f;
        if (lane < n_scalar) {
            const int64_t j = scalar_at(lane);
            sa = to_f32(load_a(a + j));
            sx = to_f32(load_x<XSMEM>(x + j));
        }
        int64_t c = lane;
        for (; c + (UNROLL - 1) * (int64_t)p < packs; c += UNROLL * (int64_t)p) {
            uint4 ra[UNROLL], rx[UNROLL], rn[UNROLL];
#pragma unroll
            for (int u = 0; u < UNROLL; ++u) ra[u] = load_a_pack(av + c + u * p);
#pragma unroll
            for (int u = 0; u < UNROLL; ++u) {
                rx[u] = load_x_pack<XSMEM>(xv + c + u * p);
                rn[u] = load_x_pack<XSMEM>(xv + c + u * p + next);
            }
#pragma unroll
            for (int u = 0; u < UNROLL; ++u) acc = dot_pack<T>(ra[u], shift_pack<T>(rx[u], rn[u], s), acc);
        }
        for (; c < packs; c += p)
            acc = dot_pack<T>(load_a_pack(av + c),
                              shift_pack<T>(load_x_pack<XSMEM>(xv + c), load_x_pack<XSMEM>(xv + c + next), s), acc);
        acc = fmaf(sa, sx, acc);
        for (int64_t i = lane + p; i < n_scalar; i += p) { // only when p is below the list's length
            const int64_t j = scalar_at(i);
            acc = fmaf(to_f32(load_a(a + j)), to_f32(load_x<XSMEM>(x + j)), acc);
        }
        return acc;
    } else if constexpr (LOADS == kLoadsAligned || LOADS == kLoadsAligned8) {
        // 16-byte packs, or 8-byte ones for rows (and x) 8-byte aligned.
        using P = std::conditional_t<LOADS == kLoadsAligned, uint4, uint2>;
        constexpr int E = (int)(sizeof(P) / sizeof(T));
        const P *av = reinterpret_cast<const P *>(a);
        const P *xv = reinterpret_cast<const P *>(x);
        const int64_t packs = n / E;
        int64_t c = lane;
        for (; c + (UNROLL - 1) * (int64_t)p < packs; c += UNROLL * (int64_t)p) {
            P ra[UNROLL], rx[UNROLL];
#pragma unroll
            for (int u = 0; u < UNROLL; ++u) ra[u] = load_a_pack(av + c + u * p);
#pragma unroll
            for (int u = 0; u < UNROLL; ++u) rx[u] = load_x_pack<XSMEM>(xv + c + u * p);
#pragma unroll
            for (int u = 0; u < UNROLL; ++u) acc = dot_pack<T>(ra[u], rx[u], acc);
        }
        for (; c < packs; c += p) acc = dot_pack<T>(load_a_pack(av + c), load_x_pack<XSMEM>(xv + c), acc);
        tail_start = packs * E;
    } else {
        int64_t j = lane;
        for (; j + (UNROLL - 1) * (int64_t)p < n; j += UNROLL * (int64_t)p) {
            float ra[UNROLL], rx[UNROLL];
#pragma unroll
            for (int u = 0; u < UNROLL; ++u) ra[u] = to_f32(load_a(a + j + u * p));
#pragma unroll
            for (int u = 0; u < UNROLL; ++u) rx[u] = to_f32(load_x<XSMEM>(x + (j + u * p) * incx));
#pragma unroll
            for (int u = 0; u < UNROLL; ++u) acc = fmaf(ra[u], rx[u], acc);
        }
        tail_start = j - lane; // continue below with the same lane offsets
    }
    for (int64_t j = tail_start + lane; j < n; j += p) acc = fmaf(to_f32(load_a(a + j)), to_f32(load_x<XSMEM>(x + j * incx)), acc);
    return acc;
}

// Zeroes the elements of a pack outside [lo, hi).
template <typename T> __device__ __forceinline__ uint4 keep_elements(const uint4 &v, int lo, int hi) {
    uint32_t w[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
    for (int i = 0; i < 4; ++i) {
        if constexpr (sizeof(T) == 4) {
            w[i] = i >= lo && i < hi ? w[i] : 0u;
        } else {
            w[i] &= (2 * i >= lo && 2 * i < hi ? 0xffffu : 0u) | (2 * i + 1 >= lo && 2 * i + 1 < hi ? 0xffff0000u : 0u);
        }
    }
    return make_uint4(w[0], w[1], w[2], w[3]);
}

// Elements [lo, hi) of the aligned pack at p, the others zero. Element by element where
// the pack reaches outside A's extent [begin, end): the first row of an A that does not
// start aligned, and the last row. Nothing outside A is read.
template <typename T>
__device__ __forceinline__ uint4 load_edge_pack(const T *p, int lo, int hi, const T *begin, const T *end) {
    if (p >= begin && p + kPack<T> <= end) return keep_elements<T>(load_a_pack(reinterpret_cast<const uint4 *>(p)), lo, hi);
    uint32_t w[4] = {0u, 0u, 0u, 0u};
#pragma unroll
    for (int i = 0; i < kPack<T>; ++i) {
        if (i < lo || i >= hi) continue;
        if constexpr (sizeof(T) == 4) w[i] = __float_as_uint(load_a(p + i));
        else w[i / 2] |= (uint32_t)__ldg(reinterpret_cast<const unsigned short *>(p) + i) << (16 * (i % 2));
    }
    return make_uint4(w[0], w[1], w[2], w[3]);
}

// Edge packs in two steps, so that all of a thread's loads are in flight before the first
// one is used: edge_pack_issue loads the aligned pack at p where it lies inside [begin, end)
// (zeros elsewhere), edge_pack_finish zeroes its elements outside [lo, hi), or gathers the
// rare pack that reaches outside [begin, end) element by element. (load_edge_pack in one
// step put each pack's load and its use in one branch: a row tile's edge slots waited on 5
// DRAM round trips in turn, and fp32 48 x 23714 took 6.4 us against 4.5 with aligned rows.)
template <typename T> __device__ __forceinline__ bool pack_inside(const T *p, const T *begin, const T *end) {
    return p >= begin && p + kPack<T> <= end;
}
template <typename T> __device__ __forceinline__ uint4 edge_pack_issue(const T *p, const T *begin, const T *end) {
    uint4 v = make_uint4(0u, 0u, 0u, 0u);
    if (pack_inside(p, begin, end)) v = load_a_pack(reinterpret_cast<const uint4 *>(p));
    return v;
}
template <typename T>
__device__ __forceinline__ uint4 edge_pack_finish(const uint4 &v, const T *p, int lo, int hi, const T *begin, const T *end) {
    if (lo >= hi) return make_uint4(0u, 0u, 0u, 0u);
    return pack_inside(p, begin, end) ? keep_elements<T>(v, lo, hi) : load_edge_pack<T>(p, lo, hi, begin, end);
}

// Partial dot product of one thread over a phased row (kLoadsPhased, p >= 2): the row
// a[0, n) is packs 0..last of the aligned stream from a - b (b = a's phase in elements),
// and xs is x staged so that its pack c goes with A's pack c, zero outside the row
// (stage_x_phased; or its phase's copy in global memory, read through L1 when !XSMEM).
// The inner packs are one aligned load of each, as for aligned rows; the
// two edge packs, with the elements outside the row zeroed, are loaded by lanes 0 and 1,
// first (in flight during the loop) or, EDGES_LAST, after the loop (4 fewer registers
// live in it), and added last. n fits 32 bits, so pack indices are 32-bit: about the
// registers of aligned rows.
// A's extent [begin, end) is read from the kernel's parameters where an edge is loaded, so
// it holds no register through the loop.
template <typename T, int UNROLL, bool XSMEM, bool EDGES_LAST = false>
__device__ __forceinline__ float phased_dot(const T *__restrict__ a, const T *__restrict__ xs, int n, int lane, int p,
                                            const RowArgs &args) {
    constexpr int N = kPack<T>;
    const int b = (int)((reinterpret_cast<uintptr_t>(a) & 15) / sizeof(T));
    const int last = (b + n - 1) / N;
    const uint4 *av = reinterpret_cast<const uint4 *>(a - b);
    const uint4 *xv = reinterpret_cast<const uint4 *>(xs);
    const bool edge_lane = lane == 0 || (lane == 1 && last > 0);
    const auto edge_pack = [&]() {
        const T *begin = static_cast<const T *>(args.A), *end = begin + (args.m - 1) * args.lda + args.k;
        const T *pk = reinterpret_cast<const T *>(av) + (lane == 0 ? 0 : last * N);
        return load_edge_pack<T>(pk, lane == 0 ? b : 0, lane == 0 && last > 0 ? N : b + n - last * N, begin, end);
    };
    uint4 edge = make_uint4(0u, 0u, 0u, 0u);
    if (!EDGES_LAST && edge_lane) edge = edge_pack();
    float acc = 0.f;
    int c = 1 + lane; // packs 1 .. last - 1
    for (; c + (UNROLL - 1) * p < last; c += UNROLL * p) {
        uint4 ra[UNROLL], rx[UNROLL];
#pragma unroll
        for (int u = 0; u < UNROLL; ++u) ra[u] = load_a_pack(av + c + u * p);
#pragma unroll
        for (int u = 0; u < UNROLL; ++u) rx[u] = load_x_pack<XSMEM>(xv + c + u * p);
#pragma unroll
        for (int u = 0; u < UNROLL; ++u) acc = dot_pack<T>(ra[u], rx[u], acc);
    }
    for (; c < last; c += p) acc = dot_pack<T>(load_a_pack(av + c), load_x_pack<XSMEM>(xv + c), acc);
    if (edge_lane) acc = dot_pack<T>(EDGES_LAST ? edge_pack() : edge, load_x_pack<XSMEM>(xv + (lane == 0 ? 0 : last)), acc);
    return acc;
}

// The 16 bytes at element S of the 32 bytes lo:hi, S a compile-time shift: register
// selects, and for an odd 16-bit shift four funnel shifts.
template <typename T, int S> __device__ __forceinline__ uint4 shift_pack_by(const uint4 &lo, const uint4 &hi) {
    const uint32_t w[8] = {lo.x, lo.y, lo.z, lo.w, hi.x, hi.y, hi.z, hi.w};
    if constexpr (sizeof(T) == 4) {
        return make_uint4(w[S], w[S + 1], w[S + 2], w[S + 3]);
    } else if constexpr (S % 2 == 0) {
        return make_uint4(w[S / 2], w[S / 2 + 1], w[S / 2 + 2], w[S / 2 + 3]);
    } else {
        constexpr int i = S / 2;
        return make_uint4(__funnelshift_r(w[i], w[i + 1], 16), __funnelshift_r(w[i + 1], w[i + 2], 16),
                          __funnelshift_r(w[i + 2], w[i + 3], 16), __funnelshift_r(w[i + 3], w[i + 4], 16));
    }
}

// Elements [lo, hi) of the pack at p (any alignment), one load each through the read-only
// path; the others zero.
template <typename T> __device__ __forceinline__ uint4 gather_pack(const T *p, int lo, int hi) {
    uint32_t w[4] = {0u, 0u, 0u, 0u};
#pragma unroll
    for (int i = 0; i < kPack<T>; ++i) {
        if (i < lo || i >= hi) continue;
        if constexpr (sizeof(T) == 4) w[i] = __float_as_uint(__ldg(reinterpret_cast<const float *>(p) + i));
        else w[i / 2] |= (uint32_t)__ldg(reinterpret_cast<const unsigned short *>(p) + i) << (16 * (i % 2));
    }
    return make_uint4(w[0], w[1], w[2], w[3]);
}

// The inner packs [c, end) of a phased row with x read through L1 (phased_dot_l1): A's
// aligned pack c goes with x's aligned packs c and c + 1 of xq, shifted by S elements.
template <typename T, int UNROLL, int S>
__device__ __forceinline__ float phased_l1_packs(const uint4 *av, const uint4 *xq, int c, int end, int p, float acc) {
    for (; c + (UNROLL - 1) * p < end; c += UNROLL * p) {
        uint4 ra[UNROLL], rx[UNROLL], rn[UNROLL];
#pragma unroll
        for (int u = 0; u < UNROLL; ++u) ra[u] = load_a_pack(av + c + u * p);
#pragma unroll
        for (int u = 0; u < UNROLL; ++u) {
            rx[u] = __ldg(xq + c + u * p);
            if constexpr (S != 0) rn[u] = __ldg(xq + c + u * p + 1);
        }
#pragma unroll
        for (int u = 0; u < UNROLL; ++u) {
            if constexpr (S != 0) acc = dot_pack<T>(ra[u], shift_pack_by<T, S>(rx[u], rn[u]), acc);
            else acc = dot_pack<T>(ra[u], rx[u], acc);
        }
    }
    for (; c < end; c += p) {
        const uint4 ra = load_a_pack(av + c), rx = __ldg(xq + c);
        if constexpr (S != 0) acc = dot_pack<T>(ra, shift_pack_by<T, S>(rx, __ldg(xq + c + 1)), acc);
        else acc = dot_pack<T>(ra, rx, acc);
    }
    return acc;
}

// Phased rows with x read through L1, not staged (kLoadsPhased, x_in_smem = 0): A's row is
// packs 0..last of the aligned stream from a - b, as in phased_dot, and x (incx == 1, any
// element address) is read as the two aligned packs around each pack's elements, shifted
// by the phase difference S. The block's rows share b (RowWalk), so S is block-uniform: a
// switch picks a loop with S compiled in, a few register selects a pack where the
// realigned path (thread_dot) pays two word selects and a funnel shift for a run-time S.
// No staging, so no block waits on x before its first load of A, and the grid needs not
// be one wave. x packs that would reach outside x, and the two edge packs, are gathered
// element by element: nothing outside A or x is read.
template <typename T, int UNROLL>
__device__ __forceinline__ float phased_dot_l1(const T *__restrict__ a, const T *__restrict__ x, int64_t n, int lane,
                                               int p, const T *begin, const T *end) {
    constexpr int N = kPack<T>;
    const int b = (int)((reinterpret_cast<uintptr_t>(a) & 15) / sizeof(T));
    const int bx = (int)((reinterpret_cast<uintptr_t>(x) & 15) / sizeof(T));
    const int last = (int)((b + n - 1) / N);
    const uint4 *av = reinterpret_cast<const uint4 *>(a - b);
    // Pack c's elements are x[cN - b, cN - b + N): stream position cN + d of x's aligned
    // packs xv, so x packs c + q0 and c + q0 + 1 at shift s.
    const int d = bx - b, q0 = d < 0 ? -1 : 0, s = d - q0 * N;
    const uint4 *xq = reinterpret_cast<const uint4 *>(x - bx) + q0;
    // Inner packs whose x packs lie inside x: (c + q0) N >= bx and (c + q0 + 2) N <= bx + n
    // (+ 1 when s == 0, one pack).
    const int64_t inside_end = (bx + n) / N - (s ? 2 : 1) - q0 + 1;
    const int lo = max(1, (bx > 0) - q0), hi = (int)max((int64_t)lo, min((int64_t)last, inside_end));
    uint4 edge = make_uint4(0u, 0u, 0u, 0u), xedge = edge;
    if (lane == 0) {
        edge = load_edge_pack<T>(a - b, b, last == 0 ? (int)(b + n) : N, begin, end);
        xedge = gather_pack<T>(x - b, b, last == 0 ? (int)(b + n) : N);
    } else if (lane == 1 && last > 0) {
        const int tail = (int)(b + n - (int64_t)last * N);
        edge = load_edge_pack<T>(a - b + (int64_t)last * N, 0, tail, begin, end);
        xedge = gather_pack<T>(x - b + (int64_t)last * N, 0, tail);
    }
    float acc = 0.f;
    switch (s) {
#define LIBGEMV_PHASED_L1_CASE(S)                                                                                     \
    case S:                                                                                                            \
        if constexpr (S < N) acc = phased_l1_packs<T, UNROLL, S>(av, xq, lo + lane, hi, p, acc);                        \
        break;
        LIBGEMV_PHASED_L1_CASE(0)
        LIBGEMV_PHASED_L1_CASE(1)
        LIBGEMV_PHASED_L1_CASE(2)
        LIBGEMV_PHASED_L1_CASE(3)
        LIBGEMV_PHASED_L1_CASE(4)
        LIBGEMV_PHASED_L1_CASE(5)
        LIBGEMV_PHASED_L1_CASE(6)
        LIBGEMV_PHASED_L1_CASE(7)
#undef LIBGEMV_PHASED_L1_CASE
    }
    // The few inner packs at either end whose x packs would reach outside x.
    for (int c = 1 + lane; c < min(lo, last); c += p)
        acc = dot_pack<T>(load_a_pack(av + c), gather_pack<T>(x - b + (int64_t)c * N, 0, N), acc);
    for (int c = hi + lane; c < last; c += p)
        acc = dot_pack<T>(load_a_pack(av + c), gather_pack<T>(x - b + (int64_t)c * N, 0, N), acc);
    if (lane == 0 || (lane == 1 && last > 0)) acc = dot_pack<T>(edge, xedge, acc);
    return acc;
}

// Sum over aligned groups of p lanes (p a power of two <= 32); every lane of the warp
// must call it. Fixed butterfly order, so results are reproducible.
__device__ __forceinline__ float group_sum(float v, int p) {
    for (int o = p >> 1; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
    return v;
}

// Copy x[0, n) (stride incx) to xs[0, n) in shared memory with U loads in flight a thread.
// One at a time, each element a thread copies cost a round trip to L2 (the compiler cannot
// move a load past the previous store): 32 for fp16 x of 8192 in 256 threads.
template <typename T, int U> __device__ __forceinline__ void copy_x(const T *x, int64_t incx, int64_t n, T *xs) {
    const int64_t t = blockDim.x;
    int64_t j = threadIdx.x;
    for (; j + (U - 1) * t < n; j += U * t) {
        T v[U];
#pragma unroll
        for (int u = 0; u < U; ++u) v[u] = load_readonly(x + (j + u * t) * incx);
#pragma unroll
        for (int u = 0; u < U; ++u) xs[j + u * t] = v[u];
    }
    for (; j < n; j += t) xs[j] = load_readonly(x + j * incx);
}

// Stage x[0, n) (strided) into shared memory as a contiguous, 16-byte aligned array.
template <typename T>
__device__ __forceinline__ const T *stage_x(const T *x, int64_t incx, int64_t n, void *smem) {
    T *xs = static_cast<T *>(smem);
    copy_x<T, sizeof(T) == 4 ? 2 : 4>(x, incx, n, xs); // fp32 rows of 2 packs kept 32 registers with 2, not 4
    __syncthreads();
    return xs;
}

// Stage x[0, n) for phased rows of phase b: at elements [b, b + n) of whole packs, zero
// around it (the edge packs multiply zeroed elements of A by these zeros).
template <typename T>
__device__ __forceinline__ const T *stage_x_phased(const T *x, int64_t incx, int64_t n, int b, void *smem) {
    T *xs = static_cast<T *>(smem);
    const int64_t end = (b + n + kPack<T> - 1) / kPack<T> * kPack<T>;
    const int pad = (int)(end - b - n); // < kPack
    if (threadIdx.x < b) xs[threadIdx.x] = from_f32<T>(0.f);
    if (threadIdx.x < pad) xs[b + n + threadIdx.x] = from_f32<T>(0.f);
    copy_x<T, 8>(x, incx, n, xs + b); // every block stages at its start: fp16 8192^2 2.56 -> 2.68 TB/s with 8
    __syncthreads();
    return xs;
}

// The K slice a block works on (split-K: slice blockIdx.y; otherwise all of K), with x
// staged in shared memory first when XSMEM.
template <typename T> struct RowSlice {
    const T *A; // column k0 of row 0
    const T *x; // element k0 of x (shared memory when staged)
    int64_t incx;
    int64_t n; // elements in the slice
};

// Phased rows stage x in the phase b of the rows the block walks (all share it).
template <typename T, int LOADS, bool XSMEM>
__device__ __forceinline__ RowSlice<T> row_slice(const RowArgs &args, const RowWalk &w, void *smem) {
    const int64_t k0 = (int64_t)blockIdx.y * args.k_chunk;
    RowSlice<T> s;
    s.n = min(args.k - k0, args.k_chunk);
    s.x = static_cast<const T *>(args.x) + k0 * args.incx;
    s.incx = args.incx;
    s.A = static_cast<const T *>(args.A) + k0;
    if constexpr (LOADS == kLoadsPhased && XSMEM) {
        const int b = (int)((reinterpret_cast<uintptr_t>(s.A + w.cls * args.lda) & 15) / sizeof(T));
        s.x = stage_x_phased(s.x, s.incx, s.n, b, smem);
        s.incx = 1;
    } else if constexpr (XSMEM) {
        s.x = stage_x(s.x, s.incx, s.n, smem);
        s.incx = 1;
    }
    return s;
}

// Where global row g of a batch lies: row i of product b (g = b * m + i), by DivideBy's
// multiply-high (a 64-bit division spilled the batched kernels held to 32 registers). The
// batch is a compile-time choice, so single products skip even that.
struct RowPos {
    int64_t b, i;
};
// n / d for the d of divide_by(d), n < 2^63.
__device__ __forceinline__ int64_t divided(const DivideBy &d, uint64_t n) {
    const uint64_t t = __umul64hi(d.magic, n);
    return (int64_t)((t + ((n - t) >> d.shift1)) >> d.shift2);
}
template <bool BATCHED> __device__ __forceinline__ RowPos row_pos(const RowArgs &args, int64_t g) {
    if constexpr (!BATCHED) return {0, g};
    const int64_t b = divided(args.m_div, (uint64_t)g);
    return {b, g - b * args.m};
}

// Row g's slice of A and its product's x (a staged x is shared: stride_x is 0 then).
template <typename T>
__device__ __forceinline__ const T *row_a(const RowArgs &args, const RowSlice<T> &s, const RowPos &rp) {
    return s.A + rp.b * args.stride_a + rp.i * args.lda;
}
template <typename T>
__device__ __forceinline__ const T *row_x(const RowArgs &args, const RowSlice<T> &s, const RowPos &rp) {
    return s.x + rp.b * args.stride_x;
}

// Row rp's dot product over the slice, by the launch's load mode.
template <typename T, int LOADS, int UNROLL, bool XSMEM>
__device__ __forceinline__ float row_dot(const RowArgs &args, const RowSlice<T> &s, const RowPos &rp, int lane, int p) {
    if constexpr (LOADS == kLoadsPhased && XSMEM) {
        return phased_dot<T, UNROLL, true>(row_a(args, s, rp), s.x, (int)s.n, lane, p, args);
    } else if constexpr (LOADS == kLoadsPhased) {
        // Edge packs stay within the row's product's A; x is the product's own.
        const T *A = static_cast<const T *>(args.A) + rp.b * args.stride_a;
        return phased_dot_l1<T, UNROLL>(row_a(args, s, rp), row_x(args, s, rp), s.n, lane, p, A,
                                        A + (args.m - 1) * args.lda + args.k);
    } else if constexpr (LOADS == kLoadsPhasedCopies) {
        // The copy of x in this row's phase b (single products, K not split: s is all of K),
        // read through L1; the edges after the loop, which then fits 32 registers at unroll
        // 1 (edges first spilled 16-88 bytes there: fp16 8191 x 8191 53.1 us against 48.2).
        const T *a = row_a(args, s, rp);
        const int b = (int)((reinterpret_cast<uintptr_t>(a) & 15) / sizeof(T));
        return phased_dot<T, UNROLL, false, true>(a, s.x + b * args.x_phase_stride, (int)s.n, lane, p, args);
    } else {
        return thread_dot<T, LOADS, UNROLL, XSMEM>(row_a(args, s, rp), row_x(args, s, rp), s.incx, s.n, lane, p);
    }
}

template <typename T, bool BATCHED>
__device__ __forceinline__ void write_row(const RowArgs &args, int64_t row, float dot) {
    switch (args.epilogue) {
    case Epilogue::kStore: {
        const RowPos rp = row_pos<BATCHED>(args, row);
        store_y(static_cast<T *>(args.y) + rp.b * args.stride_y + rp.i * args.incy, args.alpha, args.beta, dot);
        break;
    }
    case Epilogue::kAtomic:
        atomicAdd(args.acc + row * args.acc_inc, args.alpha * dot);
        break;
    case Epilogue::kPartial:
        args.acc[(int64_t)blockIdx.y * args.rows + row] = dot;
        break;
    }
}

// Calls f(TypeTag<T>{}) with the storage type T of dtype.
template <typename T> struct TypeTag { using type = T; };

template <typename F> cudaError_t with_storage_type(gemv_dtype_t dtype, F &&f) {
    switch (dtype) {
    case GEMV_DTYPE_F32: return f(TypeTag<float>{});
    case GEMV_DTYPE_F16: return f(TypeTag<__half>{});
    case GEMV_DTYPE_BF16: return f(TypeTag<__nv_bfloat16>{});
    }
    return cudaErrorInvalidValue;
}

// Instantiates Family::launch<T, LOADS, UNROLL, XSMEM, BATCHED> for the launch's
// compile-time choices: 3 dtypes x (4 x 3 x 2 x 2 + 3 x 4 phased) = 180 kernels a family, the
// bound on build time.
template <typename Family> cudaError_t dispatch_row_family(const RowLaunch &L, cudaStream_t s) {
    return with_storage_type(L.dtype, [&](auto tag) -> cudaError_t {
        using T = typename decltype(tag)::type;
        auto with_unroll = [&](auto loads, auto smem, auto batched) -> cudaError_t {
            constexpr int LD = decltype(loads)::value;
            constexpr bool S = decltype(smem)::value, B = decltype(batched)::value;
            switch (L.unroll) {
            case 1: return Family::template launch<T, LD, 1, S, B>(L, s);
            case 2: return Family::template launch<T, LD, 2, S, B>(L, s);
            case 4: return Family::template launch<T, LD, 4, S, B>(L, s);
            default: return cudaErrorInvalidValue;
            }
        };
        auto with_batch = [&](auto loads, auto smem) -> cudaError_t {
            return L.args.rows != L.args.m ? with_unroll(loads, smem, std::true_type{})
                                           : with_unroll(loads, smem, std::false_type{});
        };
        auto with_smem = [&](auto loads) -> cudaError_t {
            return L.x_in_smem ? with_batch(loads, std::true_type{}) : with_batch(loads, std::false_type{});
        };
        switch (L.loads) {
        case kLoadsScalar: return with_smem(std::integral_constant<int, kLoadsScalar>{});
        case kLoadsAligned: return with_smem(std::integral_constant<int, kLoadsAligned>{});
        case kLoadsAligned8: return with_smem(std::integral_constant<int, kLoadsAligned8>{});
        case kLoadsRealigned: return with_smem(std::integral_constant<int, kLoadsRealigned>{});
        case kLoadsPhasedCopies: // single products, x from its copies
            if (L.args.rows != L.args.m || L.x_in_smem) return cudaErrorInvalidValue;
            return with_unroll(std::integral_constant<int, kLoadsPhasedCopies>{}, std::false_type{}, std::false_type{});
        case kLoadsPhased: // x staged: single products (can_implement); 27 kernels, not 36
            if (L.x_in_smem)
                return L.args.rows != L.args.m ? cudaErrorInvalidValue
                                               : with_unroll(std::integral_constant<int, kLoadsPhased>{}, std::true_type{}, std::false_type{});
            return with_batch(std::integral_constant<int, kLoadsPhased>{}, std::false_type{});
        default: return cudaErrorInvalidValue;
        }
    });
}

// The row families launch row_plan's geometry (launch_plan.h).
inline cudaError_t launch_row_kernel(void (*kernel)(RowArgs), const RowLaunch &L, cudaStream_t stream) {
    const LaunchPlan p = row_plan(L);
    return launch_kernel(kernel, p.grid, p.block, p.dynamic_smem, stream, L.pdl, L.args);
}

} // namespace libgemv
