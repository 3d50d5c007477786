// The automatic dispatcher: the device's tuned table where it has an entry that runs the
// problem, else a heuristic: threads per row from the row length (fit to measurements),
// then wider rows (block per row) or split K until the whole GPU has work. The heuristic
// chooses only deterministic variants, like cuBLAS's default atomics mode.
#include <algorithm>
#include <cmath>

#include "internal.h"

namespace libgemv {

namespace {

int pow2_floor(int64_t v) {
    int p = 1;
    while ((int64_t)p * 2 <= v && p < (1 << 30)) p <<= 1;
    return p;
}

// The nearest power of two in the log domain (45 -> 64, 40 -> 32).
int pow2_round(double v) {
    if (v <= 1) return 1;
    return 1 << std::min(30, (int)std::lround(std::log2(v)));
}

// Threads a row from L, the 16-byte loads a row needs. Fit to an exhaustive search on
// the H100 (benchmarks/results/h100-2026-11-21-oracle.txt): short rows (L <= 32) and
// fp32 rows want about 2 loads a thread; longer 16-bit rows about sqrt(L)/4 loads a
// thread (their conversions make each load costlier, and more rows in flight pay off).
int threads_per_row(int64_t loads, bool half) {
    if (loads <= 2) return (int)loads;
    if (loads <= 32 || !half) return std::min<int64_t>(512, pow2_floor(loads / 2));
    return std::min(512, pow2_round(4.0 * std::sqrt((double)loads)));
}

// Rows that forbid 16-byte loads (K * size not a multiple of 16) read one element a
// load: about 32 of them a thread, four in flight, and at most a warp a row while there
// are enough rows (fit to the searches on held-out shapes,
// benchmarks/results/h100-2026-11-21-heldout.txt).
int scalar_threads_per_row(int64_t k) { return (int)std::clamp<int64_t>(pow2_floor(k / 32), 1, 32); }

// A row-kernel config for p threads a row: blocks of at least 128 threads; two loads in
// flight once each thread has two (scalar rows: four once each has eight).
gemv_config_t row_config(int p, int64_t loads, bool vec, bool smem) {
    gemv_config_t c{};
    c.threads_per_row = p;
    c.rows_per_block = std::max(1, 128 / p);
    if (p <= 1) c.variant = GEMV_VARIANT_THREAD_PER_ROW;
    else if (p < 32) c.variant = GEMV_VARIANT_ROWS_PER_WARP;
    else if (p == 32) c.variant = GEMV_VARIANT_WARP_PER_ROW;
    else c.variant = GEMV_VARIANT_BLOCK_PER_ROW;
    c.unroll = loads >= 2 * (int64_t)p ? 2 : 1;
    if (!vec && loads >= 8 * (int64_t)p && p <= 32) c.unroll = 4; // widened rows lose with 4 (measured)
    c.vector_loads = vec;
    c.x_in_smem = smem;
    c.split_k = 1;
    return c;
}

bool runs(const gemv_config_t &c, const Problem &pb) {
    return validate_config(c) == GEMV_STATUS_SUCCESS && can_implement(c, pb) == GEMV_STATUS_SUCCESS;
}

} // namespace

gemv_config_t heuristic_config(const Problem &pb, int sm_count) {
    const int esz = (int)dtype_size(pb.dtype);
    const int pack = 16 / esz;
    // Enough threads in flight to cover HBM latency: a full SM's worth on every SM.
    const int64_t target_threads = (int64_t)std::max(sm_count, 1) * 2048;

    // Try vectorised loads first; the can_implement check below drops what cannot run.
    for (int vec = 1; vec >= 0; --vec) {
        const int64_t loads = vec ? (pb.k + pack - 1) / pack : pb.k; // loads per row
        // x staged in shared memory where that makes vector loads possible, and for
        // rows of at most 256 bytes (measured faster there than x through L1).
        const bool smem = vec && (size_t)pb.k * esz <= max_x_smem_bytes(1024) && // for any p below
                          (pb.incx != 1 || (reinterpret_cast<uintptr_t>(pb.x) & 15u) || (size_t)pb.k * esz <= 256);
        int p = vec ? threads_per_row(loads, pb.dtype != GEMV_DTYPE_F32) : scalar_threads_per_row(loads);
        // Few rows: more threads a row, while each keeps two loads or more.
        if ((int64_t)pb.m * p < target_threads && loads > 2 * (int64_t)p) {
            const int64_t want = target_threads / std::max<int64_t>(pb.m, 1);
            p = std::min<int>(1024, std::max(p, pow2_floor(std::min<int64_t>(want, loads / 2))));
        }
        gemv_config_t c = row_config(p, loads, vec, smem);

        // Still far from filling the GPU with one block a row: split K (deterministic).
        if ((int64_t)pb.m * p * 2 < target_threads && loads >= 4096) {
            gemv_config_t s{};
            s.variant = GEMV_VARIANT_SPLITK_TWOPASS;
            s.threads_per_row = 256;
            s.rows_per_block = 1;
            s.unroll = 4;
            s.vector_loads = vec;
            s.x_in_smem = 0;
            const int64_t by_gpu = target_threads / (std::max<int64_t>(pb.m, 1) * 256);
            const int64_t by_work = loads / (256 * 8); // >= 8 loads per thread per slice
            s.split_k = (int)std::clamp<int64_t>(std::min(by_gpu, by_work), 2, 1024);
            while (s.split_k >= 2 && workspace_needed(s, pb) > pb.workspace_bytes) s.split_k /= 2;
            if (s.split_k >= 2 && runs(s, pb)) return s;
        }
        if (runs(c, pb)) return c;
        if (smem) {
            c.x_in_smem = 0;
            if (runs(c, pb)) return c;
        }
    }
    // Runs every problem: scalar loads, x through the cache, no workspace.
    return row_config(32, 1, false, false);
}

namespace {

// What a choice depends on. Eager loops repeat one shape: the thread's last choice is
// reused when the next call's key is the same, which skips the table search (~0.4 us).
// Installed tables live until exit, so a table pointer names one table for good.
struct ChoiceKey {
    const Table *table;
    int device;
    gemv_dtype_t dtype;
    int64_t m, k, lda, incx, incy;
    unsigned low_bits; // A, x and y addresses mod 16
    size_t workspace_bytes;
    bool operator==(const ChoiceKey &o) const {
        return table == o.table && device == o.device && dtype == o.dtype && m == o.m && k == o.k && lda == o.lda &&
               incx == o.incx && incy == o.incy && low_bits == o.low_bits && workspace_bytes == o.workspace_bytes;
    }
};

struct LastChoice {
    bool valid = false;
    ChoiceKey key{};
    gemv_config_t config{};
    bool from_table = false;
};
thread_local LastChoice t_last;

unsigned low4(const void *p) { return (unsigned)(reinterpret_cast<uintptr_t>(p) & 15u); }

} // namespace

gemv_config_t select_config(const Problem &pb, int device, bool use_table, bool *from_table) {
    const Table *t = use_table ? device_table(device) : nullptr;
    const ChoiceKey key{t, device, pb.dtype, pb.m, pb.k, pb.lda, pb.incx, pb.incy,
                        low4(pb.A) | low4(pb.x) << 4 | low4(pb.y) << 8, pb.workspace ? pb.workspace_bytes : 0};
    LastChoice &last = t_last;
    if (!last.valid || !(last.key == key)) {
        last.key = key;
        last.from_table = t && table_lookup(*t, pb, &last.config, nullptr);
        if (!last.from_table) last.config = heuristic_config(pb, sm_count(device));
        last.valid = true;
    }
    if (from_table) *from_table = last.from_table;
    return last.config;
}

} // namespace libgemv
