// The automatic dispatcher: the device's tuned table where it has an entry that runs the
// problem, else the heuristic of the problem's op. op N: threads per row from the row
// length (fit to measurements), then wider rows (block per row) or split K until the whole
// GPU has work. op T: tiles of 8 or 16 16-byte packs across the columns, row lanes under
// them, then split-M until the GPU has about 4 blocks an SM. The heuristics choose only
// deterministic operations, like cuBLAS's default atomics mode.
#include <algorithm>
#include <numeric>
#include <cmath>

#include "internal.h"
#include "launch_plan.h"

namespace libgemv {

namespace {

int pow2_floor(int64_t v) {
    int p = 1;
    while ((int64_t)p * 2 <= v && p < (1 << 30)) p <<= 1;
    return p;
}

int pow2_ceil(int64_t v) {
    int p = 1;
    while (p < v && p < (1 << 30)) p <<= 1;
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
gemv_config_t row_config(int p, int64_t loads, int load_mode, bool smem) {
    const bool vec = load_mode != kLoadsScalar;
    gemv_config_t c = make_config(0, 0, 0, 0, 0, 0, 1);
    c.threads_per_row = p;
    c.rows_per_block = std::max(1, 128 / p);
    if (p <= 1) c.variant = GEMV_VARIANT_THREAD_PER_ROW;
    else if (p < 32) c.variant = GEMV_VARIANT_ROWS_PER_WARP;
    else if (p == 32) c.variant = GEMV_VARIANT_WARP_PER_ROW;
    else c.variant = GEMV_VARIANT_BLOCK_PER_ROW;
    c.unroll = loads >= 2 * (int64_t)p ? 2 : 1;
    if (!vec && loads >= 8 * (int64_t)p && p <= 32) c.unroll = 4; // widened rows lose with 4 (measured)
    c.vector_loads = load_mode;
    c.x_in_smem = smem;
    c.split_k = 1;
    return c;
}

bool runs(const gemv_config_t &c, const Problem &pb) {
    return validate_config(c) == GEMV_STATUS_SUCCESS && can_implement(c, pb) == GEMV_STATUS_SUCCESS;
}

// x's phase copies on p lanes a row (128-thread blocks, `unroll` loads in flight), where the
// workspace holds them and the problem runs so: the short-row rules' shared form.
bool row_copies_config(const Problem &pb, int p, gemv_config_t *out, int unroll = 1) {
    const gemv_config_t c = make_config(GEMV_VARIANT_ROWS_PER_WARP, p, 128 / p, kLoadsPhasedCopies, unroll, 0, 1);
    if (workspace_needed(c, pb) > pb.workspace_bytes || !runs(c, pb)) return false;
    *out = c;
    return true;
}

// Rows that do not start 16-byte aligned, up to 3.5 KB and packed (a gap under an eighth
// of lda): the row stream. On the H100 its best config took 0.40-0.95 of the time of this
// heuristic's row kernels on 20 of 21 such shapes, 1.03 on the last (fp16 3728270 x 9: 41.8
// against 103.9 us; 158044 x 1306: 160.8 against 209.8; benchmarks/results/
// h100-2026-11-23-s5-sweep-row-stream.txt); on longer rows and aligned ones the row kernels
// are faster. fp32 and rows over 1 KB take 512-thread blocks, short
// 16-bit rows 128; four packs a thread (fewer until the GPU has two steps for each SM);
// about six packs of a row for each of its lanes. Small matrices (under half a step an SM
// even at one pack a thread) stay with the row kernels: a block's x staging is not paid
// back there (fp16 4 x 257: 2.9 us streamed, 1.4 us in a tuned warp a row). Rows of 256
// bytes and more stream from 128 MB only: short_rows_config takes them from 8 MB, and
// below the row kernels beat the stream (fp32 1191 x 705: 5.3 us streamed, 3.5 in rows of
// 64 lanes; fp16 1262 x 476 3.6 against 2.6; results/h100-2026-11-24-s13-few-rows.txt).
// Short rows of odd pitch that short_rows_element_config takes (16-bit rows of up to 30 bytes
// among them, packed or not) read an element a load instead: it is asked first (s60).
// s66: rows under 256 bytes stream only in fp32 of 32-63 bytes (short_rows_past_stream_config).
bool stream_takes(const Problem &pb) {
    const int64_t esz = (int64_t)dtype_size(pb.dtype()), n = 16 / esz, row_bytes = pb.lda * esz;
    return !pb.batched() && pb.m >= 2 && !rows_aligned16(pb) && pb.lda >= n && row_bytes <= 3584 &&
           (pb.lda - pb.k) * 8 <= pb.lda;
}

bool stream_config(const Problem &pb, int sm_count, gemv_config_t *out) {
    const int64_t esz = (int64_t)dtype_size(pb.dtype()), row_bytes = pb.lda * esz;
    if (!stream_takes(pb) || (row_bytes >= 256 && mul_sat(pb.m, row_bytes) < (128 << 20))) return false;
    int threads = esz == 4 || row_bytes > 1024 ? 512 : 128, unroll = 4;
    auto steps = [&](int t, int u) {
        const int64_t r = stream_rows_per_step(pb.lda, (size_t)esz, t, u);
        return r < 1 ? int64_t(0) : (pb.m + r - 1) / r;
    };
    const int64_t want = 2 * (int64_t)std::max(sm_count, 1);
    while (unroll > 1 && steps(threads, unroll) < want) unroll /= 2;
    if (steps(threads, unroll) < want / 4) return false;
    const int p = std::clamp(pow2_round((double)((row_bytes + 15) / 16) / 6.0), 1, 32);
    *out = make_config(GEMV_VARIANT_ROW_STREAM, p, threads / p, kLoadsRealigned, unroll, 1, 1);
    return runs(*out, pb);
}

// Rows under 256 bytes where the stream took them (packed rows that do not start aligned, beyond
// small matrices): on an H200 the stream ran 1.08-1.51x the time of these row kernels on all 12
// such problems of 11-167 MB (benchmarks/NOTES.md section 86, results/h200-2026-11-29-s66-run1-n-
// short-rows.csv, -run2-n-short-rows-large.csv): rows under 32 bytes a thread a row, one element a
// load (16 bits: x staged, 4 rows in flight; fp32: x through L1, 2), fp32 601701 x 6 10.74 -> 7.11
// us, fp16 506574 x 9 8.87 -> 6.64, bf16 6147465 x 8 58.7 -> 54.1; rows of 32-63 bytes 2 lanes of
// element loads in 16 bits (bf16 235176 x 24 9.67 -> 7.57, 0.90x cuBLAS before; fp32 ones stay
// streamed: 3109131 x 9, lda 10, 49.7 us streamed, 56.9 so); longer ones 2 lanes (4 from 128
// bytes) on x's phase copies (bf16 151514 x 41 11.3 -> 9.3; fp32 179215 x 42, lda 45, 15.8 -> 14.1),
// element loads where the copies do not fit the workspace.
bool short_rows_past_stream_config(const Problem &pb, gemv_config_t *out) {
    const int64_t esz = (int64_t)dtype_size(pb.dtype()), row_bytes = pb.lda * esz;
    if (!stream_takes(pb) || row_bytes >= 256 || (esz == 4 && row_bytes >= 32 && row_bytes < 64)) return false;
    if (row_bytes < 32) {
        *out = esz == 4 ? make_config(GEMV_VARIANT_THREAD_PER_ROW, 1, 128, kLoadsScalar, 2, 0, 1)
                        : make_config(GEMV_VARIANT_THREAD_PER_ROW, 1, 128, kLoadsScalar, 4, 1, 1);
        return runs(*out, pb);
    }
    const int p = row_bytes < 128 ? 2 : 4; // lanes a row, 128-thread blocks
    if (row_bytes >= 64 && row_copies_config(pb, p, out)) return true;
    *out = make_config(GEMV_VARIANT_ROWS_PER_WARP, p, 128 / p, kLoadsScalar, 4, 0, 1);
    return runs(*out, pb);
}

// Rows that do not start 16-byte aligned, of 256 bytes to 3.5 KB, on matrices of 2048 rows
// and more from 8 MB to 128 MB: realigned rows with x staged, about ten packs a lane (4 to 16
// lanes), unroll 2 (below 8 MB the row kernels' own choice: fp16 2181 x 1614, 7 MB, 6.8 us
// here, 5.1 at 64 lanes; results/h100-2026-11-24-s13-few-rows2.txt). Fit to
// benchmarks/experiments/stream_vs_rows.sh on the H100 (results/
// h100-2026-11-24-s11-stream-vs-rows.txt, 28 shapes of 8-64 MB): these configs took 0.63-0.95
// of the time of the row stream (fp16 5983 x 701: 6.2 against 9.3 us) and 0.75-0.97 of the
// row kernels with x through the cache (fp32 18850 x 445: 15.8 against 20.4); the row stream
// keeps the large ones (fp16 1296187 x 108: 142 us streamed, 213 in rows).
// s68 (NOTES.md section 88, results/h200-2026-11-29-s68-run1/2-n-medium-rows.csv, 34 problems of
// 8-115 MB against 24-93 configs): phased rows on 8 lanes, x staged, one load in flight, as phased
// rows of 512 bytes up from 32 MB take them, where the realigned lanes ran 1.05-1.35x the best: 16-bit
// rows of 24-55 packs, of 56-79 from 20 MB (bf16 46723 x 318, lda 345, 16.9 -> 13.4 us); fp32 rows of
// 32-79 packs of 24-64 MB (39092 x 181, lda 227, 14.5 -> 12.7; 0.96x cuBLAS before). On fresh shapes 1.03x
// (fp32, 5) and 1.09x (16 bits, 12; -run4-vs-previous.txt); fp32 rows of 28 packs (70000 x 110: 0.92x)
// and 16-bit ones of 63 at 12 MB (0.88-0.91x) keep realigned lanes. s69 (NOTES.md section 89,
// results/h200-2026-11-29-s69-run1/2-n-fp32-phased-large*.csv, 24 problems of 67-145 MB): fp32 rows of
// 32-79 packs up to 128 MB too, before x's copies from 72 MB (short_copies_config): 1.00-1.12x
// (131072 x 128, lda 129, 22.4 -> 20.9 us; 119032 x 147 24.7 -> 22.1), at 130 MB 0.97x.
// 16 lanes take 128-thread blocks from 20 MB (bf16 9000 x 1400, lda 1409, 13.4 -> 9.9 us on blocks of
// 256; at 12 MB 0.90-0.93x: 5000 x 1200).
bool short_rows_config(const Problem &pb, gemv_config_t *out) {
    const int64_t esz = (int64_t)dtype_size(pb.dtype()), row_bytes = pb.k * esz, packs = (row_bytes + 15) / 16;
    const int64_t bytes = mul_sat(pb.m, pb.lda * esz);
    if (pb.batched() || pb.m < 2048 || rows_aligned16(pb) || row_bytes < 256 || row_bytes > 3584 ||
        bytes < (8 << 20) || bytes >= (128 << 20))
        return false;
    // Phased rows, x staged, 8 lanes (s68, above).
    const bool phased8 = esz == 2 ? packs >= 24 && packs < 80 && (packs < 56 || bytes >= (20 << 20))
                                  : packs >= 32 && packs < 80 && bytes >= (24 << 20);
    if (phased8) {
        *out = make_config(GEMV_VARIANT_ROWS_PER_WARP, 8, 32, kLoadsPhased, 1, 1, 1);
        if (runs(*out, pb)) return true;
    }
    const int p = std::clamp(pow2_round((double)packs / 10.0), 4, 16);
    const int rows = p == 4 || (p == 16 && bytes >= (20 << 20)) ? 128 / p : 256 / p;
    *out = make_config(GEMV_VARIANT_ROWS_PER_WARP, p, rows, kLoadsRealigned, 2, 1, 1);
    return runs(*out, pb);
}

} // namespace

// Phased rows (rows that do not start 16-byte aligned; each block walks rows of one phase
// with x staged in it) where they were measured to win (benchmarks/sweep_phased.py, the
// retune and the random draws on the H100, benchmarks/results/h100-2026-11-23-s7-*): single
// products of at least 2048 rows and 32 MB, with rows that fit shared memory and are 512
// bytes and more for 16-bit types (shorter: the row stream), longer than the row stream
// takes (3.5 KB) for fp32 (fp32 282737 x 338: 0.97x cuBLAS phased, 1.07x streamed; 32361 x
// 863: 1.05x against 1.09x; 93085 x 995: 1.00x phased, 0.83x realigned). On smaller matrices a block's
// staging of x is paid back over too few rows (fp16 4096 x 4097: 19.0 us phased, 14.7
// realigned; 1024 x 4097: 6.9 against 4.9).
bool phased_regime(const Problem &pb) {
    const int64_t esz = (int64_t)dtype_size(pb.dtype());
    return pb.op == GEMV_OP_N && !pb.batched() && !pb.quantized() && pb.m >= 2048 && !rows_aligned16(pb) &&
           pb.k * esz >= (esz == 4 ? 3585 : 512) && mul_sat(mul_sat(pb.m, pb.lda), esz) >= (32 << 20) &&
           staged_x_bytes(pb.k, (size_t)esz, kLoadsPhased) <= max_x_smem_bytes(128);
}

// Rows of 16 KB and more that start anywhere on 256 to 2047 rows, from 32 MiB: x's phase
// copies on 256 lanes a row (128 where those blocks pass one wave by under half), two loads
// in flight (phased_copies_config). Realigned packs on 512 lanes ran there before, 0.74-0.88x
// cuBLAS in fp32; on an H200 (benchmarks/NOTES.md section 83, results/h200-2026-11-29-s63-run1-
// n-long.*) the copies ran 1.18-1.41x as fast on 14 fresh shapes of 36-342 MB, 389 to 1839
// rows (fp32 568 x 98449 80.6 -> 60.3 us, cuBLAS 59.8; 839 x 10779 17.6 -> 12.5; bf16 389 x
// 72224 23.4 -> 18.6), within 5% of the best of 24 copies and 10 other configs but one: fp16
// 1141 x 21527 (1141 blocks of 256 on 1056 a wave) ran 1.30x the best on 256 lanes, 1.03x on
// 128. 16-bit rows of 8192 packs up on 256 lanes at four (2048 rows up) ran 1.01-1.27x the best
// here. fp32's band from 1024 rows (above) takes these lanes too: 1285 x 13969 22.0 -> 20.1 us.
namespace {
bool copies_band_under_2048_rows(const Problem &pb) {
    const int64_t esz = (int64_t)dtype_size(pb.dtype());
    return pb.m >= 256 && pb.m < 2048 && pb.k * esz >= 16384 && mul_sat(mul_sat(pb.m, pb.lda), esz) >= (32 << 20);
}
} // namespace

// Where the heuristic reads rows that do not start 16-byte aligned as phased rows with x's
// phase copies: single products of at least 2048 rows and 16 MB, rows of 4 KB and more (the
// shapes measured, benchmarks/experiments/phase_copies*.sh and the held-out check: fp16
// 2048 x 4097 8.4 us against 8.8 realigned, 3209 x 2998 9.6 against 11.1 tuned), with the
// copies within the workspace. Unlike staged x, the copies fit any row the workspace holds.
// fp32 from 1024 rows up to 128 MB too: there 128 realigned lanes a row ran 12 of 15 shapes
// 7-46% slower (1064 x 5241 13.9 us against 11.4, 0.79x cuBLAS; 2000 x 4501 22.9 against
// 15.7), 1024 x 65537 4.5% faster; 16-bit rows there gained and lost about as often (1200 x
// 9999 1.18x, 1064 x 9001 0.83x); benchmarks/NOTES.md section 34, results/h100-2026-11-26-
// s21-dense-copies-*. Since s63 also 256 to 2047 rows of 16 KB and more from 32 MiB, any dtype
// (copies_band_under_2048_rows); since s64 from 2 blocks an SM (264 rows on 132 SMs) before the
// row tiles (heuristic_rows), which ran 1.05-1.22x slower there (bf16 267 x 86482 20.1 us against
// 16.5; fp32 316 x 38113 18.2 against 15.3; NOTES.md section 84).
bool phased_copies_regime(const Problem &pb) {
    const int64_t esz = (int64_t)dtype_size(pb.dtype());
    const gemv_config_t c = make_config(GEMV_VARIANT_BLOCK_PER_ROW, 128, 1, kLoadsPhasedCopies, 1, 0, 1);
    const int64_t bytes = mul_sat(mul_sat(pb.m, pb.lda), esz);
    const bool rows_enough = pb.m >= 2048 || (esz == 4 && pb.m >= 1024 && bytes <= (128 << 20)) ||
                             copies_band_under_2048_rows(pb);
    return pb.op == GEMV_OP_N && !pb.batched() && !pb.quantized() && rows_enough && !rows_aligned16(pb) &&
           pb.k * esz >= 4096 && bytes >= (16 << 20) && workspace_needed(c, pb) <= pb.workspace_bytes;
}

namespace {

// Phased rows with x's phase copies (a pre-pass copies x into the workspace in each 16-byte
// phase; a block a row, consecutive rows, each reading its phase's copy through L1): no
// block waits on staging x, and every pack of A and x is one aligned load. On the H100
// (results/h100-2026-11-24-s15-phase-copies*.txt): 128 lanes, one load in flight (fp16
// 8191 x 8191 47.3 us against 49.1 staged, 45.4 for 8192 x 8192; bf16 16384 x 8193 91.9
// against 93.5, 88.1 aligned; bf16 61772 x 24429 1006 against 1124; fp16 20000 x 2049 30.8
// against 34.1; fp32 2048 x 4097 13.2 against 14.4 with 256 lanes and four, 20000 x 1001
// 31.2 against 47.6). 16-bit rows of 8192 packs and more: 256 lanes, four in flight (fp16
// 13191 x 130542: 1167 against 1197). fp32 rows of 16 KB and more on 4096 rows and more
// took 512 lanes, two in flight (8191 x 8191 89.7 against 92.7 with 256 and four, 93.8 with x
// through L1 and shifted, 88.0 aligned; 16384 x 8193 175.4 against 180.2, 171.9 aligned:
// -s15-phase-copies-fp32.txt); on an H200 128 lanes at one ran 1.0-1.32x as fast up to 4096
// packs (128256 x 4096 642.5 -> 489.0 us, 24205 x 4844 157.5 -> 112.7; 8192 x 16384 129.2; 4096 x
// 32768, 8192 packs, 133.4 against 132.4 on 512: NOTES.md section 79), so 512 lanes keep longer
// rows only. 16-bit rows spill at 32 registers with two in flight and ran 10-20% slower. Rows
// of 2 KB lost to staged phased rows (fp16 40000 x 1025: 34.7 against 31.8).
bool phased_copies_config(const Problem &pb, int sm_count, gemv_config_t *out) {
    if (!phased_copies_regime(pb)) return false;
    const int64_t esz = (int64_t)dtype_size(pb.dtype()), packs = (pb.k * esz + 15) / 16;
    int p = 128, unroll = 1;
    if (copies_band_under_2048_rows(pb)) {
        const int64_t sms = std::max(sm_count, 1), wave = 8 * sms; // blocks of 256 an SM at once
        // 512 lanes up to 3.5 blocks an SM (all resident; 256 ran 1.03-1.19x slower): at 4 in
        // flight up to 2.75 (bf16 349 x 115845 25.7 us, 1: 27.1), at 1 past it (fp16 431 x 220581
        // 53.5 us, 4: 71.5; NOTES.md section 84).
        if (4 * pb.m <= 11 * sms) p = 512, unroll = 4;
        else if (2 * pb.m <= 7 * sms) p = 512, unroll = 1;
        else p = pb.m > wave && 2 * pb.m < 3 * wave ? 128 : 256, unroll = 2;
    } else if (esz == 4 && pb.m >= 4096 && packs > 4096) p = 512, unroll = 2;
    else if (esz == 2 && packs >= 8192) p = 256, unroll = 4;
    *out = make_config(GEMV_VARIANT_BLOCK_PER_ROW, p, 1, kLoadsPhasedCopies, unroll, 0, 1);
    return runs(*out, pb);
}

// Shorter rows (48 bytes to 4 KB) that do not start 16-byte aligned, in single products:
// 16-bit rows from 12 MB (under 256 bytes, the stream's), 24 MB (256 to 511 bytes) or 64 MB
// (rows staged phased rows take), fp32 rows of 256 bytes up from 72 MB: phased rows with
// x's phase copies, as rows of 4 KB up take them, on few lanes, one load in flight.
// Measured on an H200 (benchmarks/NOTES.md section 76, results/h200-2026-11-28-s56-*):
// sweeps of 136 shapes of 4-256 MB, rows of 26 bytes to 4 KB (runs 4 and 7), and 90
// held-out shapes x 3 dtypes of 8-740 MB (runs 5, 6 and 8). From 64 MB the copies ran
// 1.02-1.65x the rules below (fp16 823421 x 163 89.6 us against 136.4 streamed; bf16 785743
// x 161 85.2 against 140.4; fp32 125847 x 777 98.0 against 122.2 streamed); at 12 MB
// 1.10-1.20x on 16-bit rows under 256 bytes (fp16 58799 x 107 8.04 against 9.65), at 8 MB
// 0.94-1.09x; 16-bit rows of 256 to 511 bytes from 24 MB 1.01-1.17x, at 8-12 MB 0.88-1.11x.
// fp32 rows under 72 MB lost (34135 x 261: 16.5 us against 14.3 realigned; 44697 x 379 at
// 64.6 MB 0.93x, 100531 x 83 0.89x; from 77 MB 1.03-1.25x). Where staged phased rows run
// they keep 8 lanes under 64 packs (bf16 445907 x 301: the copies 0.93-0.98x), a warp from
// 128 to 255 packs (fp16 17743 x 2011 0.89x, 69063 x 1861 0.94x, fp32 69457 x 971 0.97x) and
// their rows under 64 MB (fp16 16761 x 1001 0.96x); the copies take 64-127 packs (fp16
// 65923 x 509 1.32x) and 256 (1.26-1.37x against 128 lanes). fp32 rows under 256 bytes
// gained 1.02-1.17x and lost 0.65x once (5604515 x 31: 368 us against 240 streamed): they
// stream; so do rows of 26-28 bytes (the copies 0.69-0.86x). Lanes: the fastest of 2-128 in
// the sweep, 2 up to 11 packs, 4 up to 23, 8 up to 95, else 16; s67: 16-bit rows of 64 bytes up,
// 224 bytes apart or more, 4 (fp16 1233282 x 75, lda 195, 118.0 -> 91.0 us; bf16 110730 x 59,
// lda 119, 11.6 -> 10.4; 2 kept 2268232 x 55, lda 97, 194 bytes apart: 4 ran 1.09x its time;
// benchmarks/NOTES.md section 87). Tables tuned before the copies keep their entries here
// (unlike rows of 4 KB up: table.cpp). s69: fp32 rows of 32-79 packs under 128 MB take phased
// rows on 8 lanes instead (short_rows_config), and 16-bit rows of 80-127 packs of 24 MB to 256
// MiB mid_rows_16bit_config's reads (asked first).
bool short_copies_config(const Problem &pb, gemv_config_t *out) {
    const int64_t esz = (int64_t)dtype_size(pb.dtype()), row = pb.k * esz, packs = (row + 15) / 16;
    const int64_t bytes = mul_sat(mul_sat(pb.m, pb.lda), esz);
    // MB; fp32 rows of 32-79 packs from 128 (s69: phased rows on 8 lanes below, short_rows_config)
    const int64_t least = esz == 4 ? (packs >= 32 && packs < 80 ? 128 : 72) : row >= 512 ? 64 : row >= 256 ? 24 : 12;
    if (pb.op != GEMV_OP_N || pb.batched() || pb.quantized() || rows_aligned16(pb) || row < (esz == 4 ? 256 : 48) ||
        row >= 4096 || bytes < (least << 20) || (phased_regime(pb) && (packs < 64 || (packs >= 128 && packs < 256))))
        return false;
    int p = packs < 12 ? 2 : packs < 24 ? 4 : packs < 96 ? 8 : 16;
    if (p == 2 && esz == 2 && row >= 64 && pb.lda * esz >= 224) p = 4; // rows far apart (s67, above)
    return row_copies_config(pb, p, out);
}

// 16-bit rows of 80-127 packs that start anywhere, single products of 24 MB to 256 MiB (s69,
// benchmarks/NOTES.md section 89, results/h200-2026-11-29-s69-run2/3-n-16bit-*.csv: 46 problems of
// 9-265 MB against 14-17 configs): under 64 MB x's phase copies on 8 lanes, two loads in flight
// (1.045x the best on 22 problems of 16-64 MB, where realigned lanes and staged phased rows on a warp took
// 1.148x: bf16 17262 x 755 14.4 -> 11.2 us, 32461 x 650 19.3 -> 16.2), from 64 MB phased rows on
// 16 lanes with x staged, 256-thread blocks (1.005x, where the copies on 8 or 16 lanes at one took
// 1.040x: bf16 160782 x 798 80.9 -> 75.2). Under 24 MB realigned lanes keep them (the copies
// 0.86-1.06x under 16 MB and 1.00-1.20x at 17-24; against them fp16 14000 x 700, lda 705, 19.7 MB, ran
// 0.91x in run 4's A/B); rows of 65-79 packs keep phased rows on 8 lanes (short_rows_config; the
// copies 0.82-0.87x at 33 MB). A/B on 24 fresh cases 1.042x, 3 slower (fp16 16000 x 800, lda 807,
// 0.88x: realigned lanes ran that layout at 2.7 TB/s, the surveyed ones at 1.8-2.1).
bool mid_rows_16bit_config(const Problem &pb, gemv_config_t *out) {
    const int64_t esz = (int64_t)dtype_size(pb.dtype()), packs = (pb.k * esz + 15) / 16;
    const int64_t bytes = mul_sat(mul_sat(pb.m, pb.lda), esz);
    if (esz != 2 || pb.op != GEMV_OP_N || pb.batched() || pb.quantized() || rows_aligned16(pb) || packs < 80 ||
        packs >= 128 || bytes < (24 << 20) || bytes >= (256 << 20))
        return false;
    if (bytes < (64 << 20)) return row_copies_config(pb, 8, out, 2);
    *out = make_config(GEMV_VARIANT_ROWS_PER_WARP, 16, 16, kLoadsPhased, 1, 1, 1);
    return runs(*out, pb);
}

// The phased config (fit to phased_regime's measurements): lanes a row by its 16-byte loads, 128
// for rows of 256 and more (256-thread blocks, 512 for fp32), a warp from 64 (256-thread
// blocks below 8192 rows, else 1024), else 8 (1024-thread blocks); one load in flight a
// thread (fp16 16384 x 8193: 95.6 us against 106.5 realigned; fp32 3737 x 9949 ran 0.80x
// cuBLAS with four).
//
// fp32 rows of 16 KB and more read x through L1 instead, shifted into the row's phase in
// registers: no block waits on staging, a block a row, four loads in flight (fp32 8191 x
// 8191: 93.8 us against 97.3 staged, 16384 x 8193: 181.5 against 190.7). 16-bit rows lost
// that way (fp16 8191 x 8191: 54-60 us against 50.6; benchmarks/NOTES.md section 25).
bool phased_config(const Problem &pb, int sm_count, gemv_config_t *out) {
    // x's phase copies first: rows of 4 KB up, then 16-bit rows of 80-127 packs (copies or
    // phased, before the shorter rows' copies would take them), then shorter ones.
    if (phased_copies_config(pb, sm_count, out) || mid_rows_16bit_config(pb, out) || short_copies_config(pb, out))
        return true;
    if (!phased_regime(pb)) return false;
    const int64_t esz = (int64_t)dtype_size(pb.dtype()), loads = (pb.k * esz + 15) / 16;
    if (esz == 4 && pb.incx == 1 && pb.k >= 4096) {
        *out = make_config(GEMV_VARIANT_BLOCK_PER_ROW, 128, 1, kLoadsPhased, 4, 0, 1);
        if (runs(*out, pb)) return true;
    }
    const int p = loads >= 256 ? 128 : loads >= 64 ? 32 : 8;
    const int threads = p == 128 ? (esz == 4 ? 512 : 256) : p == 32 ? (pb.m < 8192 ? 256 : 1024) : 1024;
    const int variant = p == 128 ? GEMV_VARIANT_BLOCK_PER_ROW : p == 32 ? GEMV_VARIANT_WARP_PER_ROW : GEMV_VARIANT_ROWS_PER_WARP;
    *out = make_config(variant, p, threads / p, kLoadsPhased, 1, 1, 1);
    return runs(*out, pb);
}

// Large matrices (256 MB and more) of 16-bit rows of 200 to 511 bytes that do not start
// 16-byte aligned: phased rows with x read through L1, 2 lanes a row, 2 loads in flight
// (benchmarks/experiments/short_rows_l1.sh, -s14-short-rows-l1.txt: fp16 1296187 x 108
// 126.0 us against 141.9 streamed, fp16 700001 x 201 127.6 against 139.6, bf16 900001 x 150
// 135.1 against 145.9). Shorter rows (bf16 2000003 x 45: 116.8 against 97.7) and fp32 rows
// (600011 x 75: 83.1 against 68.2) stream faster.
bool short_phased_config(const Problem &pb, gemv_config_t *out) {
    const int64_t esz = (int64_t)dtype_size(pb.dtype()), row = pb.k * esz;
    if (esz != 2 || pb.op != GEMV_OP_N || pb.batched() || pb.quantized() || pb.incx != 1 || rows_aligned16(pb) ||
        row < 200 || row >= 512 ||
        mul_sat(mul_sat(pb.m, pb.lda), esz) < ((int64_t)256 << 20))
        return false;
    *out = make_config(GEMV_VARIANT_ROWS_PER_WARP, 2, 64, kLoadsPhased, 2, 0, 1);
    return runs(*out, pb);
}

// Few long rows (single products, contiguous x, rows of 64 KB and more, at most 320 of them):
// row tiles (rows_in_registers), x read once a tile of up to 4 rows, 4 packs in flight a
// thread, 128-thread blocks, K split into one slot a thread, at most 1024 slices. From 32
// MB (fit to benchmarks/sweep_row_tiles.py on the H100, -s10-*): the best config of every
// shape had 4 packs a thread and 64-256 threads; bf16 162 x 1640311 185 us against 256 in one
// block a row (cuBLAS 230), fp32 15 x 8929542 196 against 238 split (cuBLAS 207), fp16 2 x
// 1241717 8.0 against 10.7 (cuBLAS 13.1). Below, from 4 rows and 2 MB, at most 4 blocks an
// SM: latency-bound, where the tiles won once the edge slots no longer waited on memory
// twice (-s11-*: fp32 48 x 23714 5.7 us against 7.0 split, cuBLAS 5.5; bf16 9 x 215081 5.6
// against 6.9, cuBLAS 7.4); fewer rows or smaller matrices stay split (fp16 7 x 107041: 4.1
// split, 4.7 tiles).
// Realigned tiles (rows or x not 16-byte aligned) from 32 MiB since s65: whole slots a thread,
// as many as leave at least 64 slices and 6 blocks an SM (tiles times slices), where a slot a
// thread had run 1.05-1.21x slower; and rows that do not start aligned up to 480, past 320 where
// x's phase copies do not fit the workspace and 512 realigned lanes a row ran 1.23-1.65x slower
// (fp16 327 x 570819 153.6 -> 93.1 us; bf16 412 x 351435 101.5 -> 76.9; fp32 13 x 869968 17.6 ->
// 15.3 on 192 slices; benchmarks/NOTES.md section 85, results/h200-2026-11-29-s65-run1-n-past-
// copies.*, -run2-n-row-tiles.*, -run4-n-vs-previous.txt). Under 32 MiB 6 blocks an SM gained and
// lost alike (-run3-n-vs-previous.txt: fp16 14 x 156232 1.12x, fp32 62 x 47738 0.90x).
// s66: where one wave of resident blocks leaves 48 slices or more (up to 12 tiles in fp32, 22 in 16
// bits), exactly that many: a block past the wave waits for a whole block's time. The edge
// slots' issue-first form (tile_launch, up to 8 blocks an SM) holds 79 registers in fp32 (6 blocks
// of 128 threads an SM) and 64 in 16 bits (8; test_cpu_kernel_registers.py checks both). The rounding to whole slots had left fp32 a few
// blocks past the wave: 47 x 918792 63.4 -> 45.9 us (66 slices, 67 before), 35 x 487331 26.8 ->
// 20.8 (88, 96 before), 20 x 1037122 30.9 -> 24.0 (benchmarks/NOTES.md section 86,
// results/h200-2026-11-29-s66-run1-n-tiles-whole.csv).
// s68: whole slots a thread leave at least 4 waves of resident blocks, not 6 blocks an SM: a grid of
// 1.3-1.9 waves idles most of its last one (fp32 69 x 1611549: 65 slices, 1.48 waves, 132.1 us, 0.92x
// cuBLAS; 186 slices 113.2, 1.09x; 87 x 981327: 67 slices 90.5, 128-512 84.4-86.8; NOTES.md section
// 88, -s68-run2-n-few-long.csv, -run3-vs-previous.txt: 12 cases 1.026x, 0.977x at worst).
int64_t tile_blocks_an_sm(gemv_dtype_t dtype) { return dtype == GEMV_DTYPE_F32 ? 6 : 8; }

bool tile_config(const Problem &pb, int sm_count, gemv_config_t *out) {
    const int64_t esz = (int64_t)dtype_size(pb.dtype()), loads = (pb.k * esz + 15) / 16;
    const int64_t bytes = mul_sat(pb.m, pb.k * esz), sms = std::max(sm_count, 1);
    const bool large = bytes >= (32 << 20);
    const bool rows16 = rows_aligned16(pb), aligned = rows16 && (reinterpret_cast<uintptr_t>(pb.x) & 15u) == 0;
    if (pb.batched() || pb.incx != 1 || pb.m > (rows16 || !large ? 320 : 480) || loads < 4096 ||
        !(large || (pb.m >= 4 && bytes >= (2 << 20))))
        return false;
    const int rows = (int)std::min<int64_t>(4, pow2_floor(2 * pb.m - 1)); // the power of two >= m, at most 4
    const int p = 128, unroll = kTileMaxPacks / rows;
    const int64_t slots = tile_slots(pb.k, (size_t)esz, !aligned), tiles = (pb.m + rows - 1) / rows;
    int64_t want = (slots + p - 1) / p;
    if (!large) {
        want = std::min<int64_t>(want, std::max<int64_t>(1, 4 * sms / tiles));
    } else if (!aligned) {
        const int64_t wave = tile_blocks_an_sm(pb.dtype()) * sms; // resident blocks
        if (wave / tiles >= 48) {
            want = wave / tiles;
        } else { // whole slots a thread, as many as leave 64 slices and 4 waves of resident blocks (s68)
            const int64_t least = std::max<int64_t>(64, (4 * wave + tiles - 1) / tiles);
            const int64_t per_thread = std::max<int64_t>(1, slots / (p * least));
            want = (slots + p * per_thread - 1) / (p * per_thread);
        }
    }
    want = std::clamp<int64_t>(want, 1, 1024);
    gemv_config_t c = make_config(GEMV_VARIANT_ROWS_IN_REGISTERS, p, rows, aligned ? kLoadsAligned : kLoadsRealigned,
                                  unroll, 0, (int)want);
    while (c.split_k > 1 && workspace_needed(c, pb) > pb.workspace_bytes) c.split_k /= 2;
    // Without the workspace for most of the slices (a graph capture without one) the row
    // kernels' own choice, split or not, does better than a few long tiles.
    if (c.split_k * 4 < want) return false;
    *out = c;
    return runs(c, pb);
}

// Realigned rows of 4096-8191 packs (rows or x not 16-byte aligned), single products of 2-32
// MiB, up to 2 blocks of 512 lanes an SM (264 rows on 132 SMs): the row tiles above ran these
// 1.10-1.61x the best of 14 configs on an H200 (bf16 120 x 40001, lda 40002: 8.09 us, 5.04 on a
// block of 1024; fp32 48 x 23714, lda 23715: 5.58, 4.34 on 8 slices; benchmarks/NOTES.md section
// 92, results/h200-2026-11-29-s72-run1-n-realigned-4k-8k-rows.csv). Up to 4 blocks of 256 an SM in
// all, 256-lane slices at two in flight (4 an SM over the rows, a power of two, at most 16): past
// that the slices' second wave cost (fp32 75 x 17001 on 8 slices 6.35 us, on a block of 1024
// 4.41); then a block of 1024 lanes at one in flight, then of 512 at two. Past 264 rows the tiles
// held their own (fp32 280 x 21001: 10.72 us, 11.92 on a block of 256).
bool realigned_mid_rows_config(const Problem &pb, int sm_count, gemv_config_t *out) {
    const int64_t esz = (int64_t)dtype_size(pb.dtype()), loads = (pb.k * esz + 15) / 16;
    const int64_t bytes = mul_sat(pb.m, pb.k * esz), sms = std::max(sm_count, 1);
    const bool aligned = rows_aligned16(pb) && (reinterpret_cast<uintptr_t>(pb.x) & 15u) == 0;
    if (pb.op != GEMV_OP_N || pb.batched() || pb.quantized() || pb.incx != 1 || aligned || loads < 4096 ||
        loads >= 8192 || bytes < (2 << 20) || bytes >= (32 << 20) || pb.m > 2 * sms)
        return false;
    if (2 * pb.m <= sms) {
        gemv_config_t c = make_config(GEMV_VARIANT_SPLITK_TWOPASS, 256, 1, kLoadsRealigned, 2, 0,
                                      (int)std::clamp<int64_t>(pow2_floor(4 * sms / pb.m), 2, 16));
        while (c.split_k >= 2 && workspace_needed(c, pb) > pb.workspace_bytes) c.split_k /= 2;
        if (c.split_k >= 2 && runs(c, pb)) {
            *out = c;
            return true;
        }
    }
    *out = pb.m <= sms ? make_config(GEMV_VARIANT_BLOCK_PER_ROW, 1024, 1, kLoadsRealigned, 1, 0, 1)
                       : make_config(GEMV_VARIANT_BLOCK_PER_ROW, 512, 1, kLoadsRealigned, 2, 0, 1);
    return runs(*out, pb);
}

// Small matrices: rows of at most 2048 packs, and few enough of them that at 4 packs a lane
// they fill at most half the GPU's threads (about 8 MB). There every row is in flight at
// once, so the time is the latency of a few loads: a lane a pack up to half the GPU's
// threads, at most 4 packs a lane, unroll 1, x staged only where it must be; more loads a
// lane, a staged x or a stream of packs only add to the latency. Fit to two sweeps of
// 75 shapes (benchmarks/experiments/few_rows.py; results/h100-2026-11-24-s13-few-rows*.txt,
// -s13-short-rows.txt): bf16 122 x 1001 2.0 us against 3.75 (a warp a row, unroll 2),
// fp16 17 x 1391 1.84 against 2.83, bf16 6687 x 374 4.1 against 5.6 (16 lanes, not 32),
// fp32 1191 x 705 3.5 against 5.3 (the stream), fp16 67241 x 47 4.9 against 6.9 (the stream).
bool small_matrix(const Problem &pb, int64_t target_threads) {
    const int64_t esz = (int64_t)dtype_size(pb.dtype()), loads = (pb.k * esz + 15) / 16;
    return loads <= 2048 && mul_sat(mul_sat(pb.m, pb.batch), loads) <= 2 * target_threads;
}

// Lanes a row that keep all rows' lanes within half the GPU's threads (a power of two).
int half_gpu_lanes(int64_t rows, int64_t target_threads) {
    return pow2_floor(std::max<int64_t>(1, target_threads / 2 / std::max<int64_t>(rows, 1)));
}

// Lanes a row in a small matrix: a lane a pack (the power of two at or above, at most 512;
// 1024 for rows of more than 1024 packs), but no more lanes in all than half the GPU's
// threads (fp16 189 x 15606: 189 blocks of 1024 ran 6.4 us, of 512 4.4; bf16 4 x 15128 2.3
// in 1024, 2.9 in 512), and at most 4 packs a lane.
int small_matrix_lanes(int64_t loads, int64_t rows, int64_t target_threads) {
    const int one_load = loads > 1024 ? 1024 : std::min(512, pow2_ceil(loads));
    return std::max(std::min(one_load, half_gpu_lanes(rows, target_threads)), pow2_ceil((loads + 3) / 4));
}

// Element loads instead of realigned packs, in small matrices of misaligned rows: rows of
// at most 64 bytes, rows of at most 128 bytes up to 1 MB, and rows of at most 512 bytes up
// to 64 KB; a lane an element, up to 256 lanes and half the GPU's threads. A realigned
// pack's head, tail and shift cost more than they save there: fp32 210 x 7 1.09 us against
// 1.52, fp16 2 x 36 1.17 against 1.54, bf16 5890 x 41 1.96 against 2.40 (the stream), fp32
// 129733 x 9 3.35 against 4.37, fp16 85 x 195 1.62 against 1.84 (-s13-short-rows.txt,
// -s13-validate.txt); realigned packs win from 140-byte rows at 0.3 MB (fp32 2392 x 35),
// 94-byte rows at 6 MB (fp16 67241 x 47) and 684-byte rows (fp32 27 x 171).
bool short_rows_by_element(const Problem &pb) {
    const int64_t esz = (int64_t)dtype_size(pb.dtype()), row = pb.k * esz;
    const int64_t bytes = mul_sat(mul_sat(pb.m, pb.batch), pb.lda * esz);
    return !rows_aligned16(pb) &&
           (row <= 64 || (row <= 128 && bytes <= (1 << 20)) || (row <= 512 && bytes <= (64 << 10)));
}

// Aligned rows of at least 64 lanes each (a block a row, or two), x contiguous but not 16-byte
// aligned: staged, each block reads all of x again for its one or two rows; x beyond what a
// block may stage was realigned at two loads in flight. Instead, one load in flight: x
// realigned through L1 where the rows' lanes fit one wave of 1024 threads an SM, else x's
// phase copies (a pre-pass copies x, aligned, into the workspace; about 1 us). Past that
// wave the realigned rows slowed by a third (fp16 256 x 12288: 3.77 us, 296 x 9792: 6.46;
// on copies 4.81 and 4.71). On an H200 (benchmarks/NOTES.md section 78, results/
// h200-2026-11-29-s58-run2-, -run3-misaligned-x.txt: 72 such problems, 0.4-185 MB, against
// the best of realigned and copies at unroll 1-4 and staged) the pick took 1.002x the best
// time, at most 1.07x; before, staged or realigned at two took 1.00-2.04x. bf16 4096 x 14336:
// 64.0 us staged, 31.4 on copies (29.2 with x aligned); fp32 16384 x 16384 339.6 realigned at
// two, 251.3 on copies (246.2); fp32 230 x 392 2.66 staged, 1.90 realigned (1.62). Rows of
// fewer lanes share a staged x among 4-64 rows a block and keep it (fp32 60557 x 436: 31.1
// staged, 43.0 realigned, 28.8 aligned).
bool misaligned_x_config(const Problem &pb, int sm_count, const gemv_config_t &aligned, gemv_config_t *out) {
    if (pb.op != GEMV_OP_N || pb.batched() || pb.quantized() || pb.incx != 1 ||
        (reinterpret_cast<uintptr_t>(pb.x) & 15u) == 0 || !rows_aligned16(pb) || aligned.threads_per_row < 64 ||
        aligned.split_k != 1)
        return false;
    gemv_config_t c = aligned;
    c.x_in_smem = 0;
    c.unroll = 1;
    c.vector_loads = kLoadsPhasedCopies;
    if (mul_sat(pb.m, c.threads_per_row) > (int64_t)std::max(sm_count, 1) * 1024) {
        // fp32 copies of rows up to 4096 packs on 128 lanes, as rows that start anywhere read
        // them (phased_copies_config): 128256 x 4096 589.3 us on 512 lanes, 481.6 on 128;
        // 60000 x 2048 134.3 on 256, 117.9 (NOTES.md section 79).
        const gemv_config_t wide = c;
        const bool fp32_up_to_4096_packs = pb.dtype() == GEMV_DTYPE_F32 && (pb.k * 4 + 15) / 16 <= 4096;
        if (fp32_up_to_4096_packs && c.threads_per_row > 128) c.threads_per_row = 128;
        if (workspace_needed(c, pb) <= pb.workspace_bytes && runs(c, pb)) {
            *out = c;
            return true;
        }
        c = wide;
    }
    c.vector_loads = kLoadsRealigned;
    if (!runs(c, pb)) return false;
    *out = c;
    return true;
}

} // namespace

// Dense fp16/bf16 rows of 64 to 512 elements in whole aligned packs, 16 rows a product or
// more, large matrices or batches: row_mma, a warp a 16-row tile on the tensor cores, 4 warps a
// block, 4 steps of 32 columns in flight on rows of 80 to 127 elements (a round of 3-4 steps)
// and 2 elsewhere. There the row kernels are bound by issuing each row's own instructions,
// not by HBM: on an H200 (benchmarks/NOTES.md section 77, -s57-run3/4-*) fp16 296 x 112 x 4096
// ran 68.9 us against 97.9 (cuBLAS 70.7), 699051 x 384 125.0 against 189.7, 64 x 64 x 4096
// 9.7 against 12.9, 1.03-1.53x from 8 MB on rows up to 136 elements, 16 MB to 200, 32 MB to
// 448 and 48 MB to 512. Smaller matrices, shorter rows (32 elements: 0.89-1.00x), longer
// ones (768: 0.88-1.07x) and products of under 16 rows (3 x 64 x 100000: 0.47x) keep the
// row kernels. On held-out shapes: 1.16x the previous rules on 32 single products, 1.08x on
// 126 batched cases (-s57-run7-vs-previous.txt).
bool row_mma_config(const Problem &pb, gemv_config_t *out) {
    if (pb.op != GEMV_OP_N || pb.quantized() || pb.dtype() == GEMV_DTYPE_F32 || pb.k < 64 || pb.k > 512 || pb.m < 16)
        return false;
    const double bytes = (double)pb.m * (double)pb.batch * (double)pb.k * 2.0;
    const double need = pb.k <= 136 ? 8 : pb.k <= 200 ? 16 : pb.k <= 448 ? 32 : 48;
    if (bytes < need * (1 << 20)) return false;
    const gemv_config_t c =
        make_config(GEMV_VARIANT_ROW_MMA, 32, 4, kLoadsAligned, pb.k >= 80 && pb.k < 128 ? 4 : 2, 0, 1);
    // An x not in aligned packs is gathered into the workspace first (s59): bf16 1316786 x 136
    // with x 2 bytes off ran 129.2 us on the row kernels, 94.6 on row_mma with x aligned.
    if (can_implement(c, pb) != GEMV_STATUS_SUCCESS || workspace_needed(c, pb) > pb.workspace_bytes) return false;
    *out = c;
    return true;
}

namespace {

// Short rows, single products from 12 MB: one element a load, x staged, where rows of odd
// pitch start anywhere, or where 16-bit rows of 5-7 elements lie 64 bytes or more apart (any
// alignment).
// Realigned packs pay a scalar head and tail on every row and the stream reads the gaps;
// element loads a lane an element ran, on an H200 (benchmarks/NOTES.md section 80,
// results/h200-2026-11-29-s60-run7-n-rows.txt): 16-bit rows of up to 30 bytes (22 before s61), a
// thread a row at 4 in flight (bf16 1507581 x 11, lda 23: 51.4 -> 23.9 us; fp16 3728270 x 9 41.4
// -> 34.1, streamed before; s61: bf16 13194387 x 14, lda 30, 417.9 -> 233.5 on realigned rows
// before); 16-bit rows of 32-46 bytes (44 before s67: bf16 3586175 x 23, lda 30, 122.7 -> 86.1 us
// on realigned packs before; NOTES.md section 87) on 2 lanes at 2 where gaps are 2/5 of lda or
// more (bf16 528922 x 22, lda 41: 27.0 -> 17.6, cuBLAS 22.3; fp16 1048576 x 16, lda 62: 51.4 ->
// 32.9), a thread a row at 4 under it (s61, NOTES section 81: bf16 2000000 x 17, lda 19, 38.6
// -> 29.5; fp16 1048576 x 16, lda 17, 19.9 -> 16.2; at gaps of 0.46-0.58 of lda 2 lanes kept
// 0.90-0.79 of its time); fp32 rows of 48-80 bytes on 4 lanes at 2 (fp32 2000000 x 13, lda 33:
// 91.9 -> 76.9) where gaps are a quarter of lda or more, else phased rows on x's phase copies,
// 2 lanes at one (s61: 1500000 x 12, lda 13, 41.3 -> 28.8; 2191810 x 18, lda 19, 66.4 -> 55.2,
// streamed at 60.6 before s60; 3504034 x 16, lda 19, 96.7 -> 88.5). Rows of one phase (lda a
// multiple of a pack: fp16 1000000 x 16, lda 64, A off, 34.6 -> 40.0) and rows on 8 bytes
// (8-byte loads: bf16 4310267 x 16, lda 24, 52.5 against 62.3) keep their reads, unless they
// are 16-bit rows of 5-7 elements 64 bytes apart or more (s61, NOTES section 81): one aligned
// pack a row, one load in flight, left HBM idle (the row is all tail, loaded element by
// element in turn): bf16 25630907 x 5, lda 32, 880 -> 417 us (cuBLAS 546); bf16 8000000 x 7,
// lda 64, 535 -> 235; bf16 5000000 x 5, lda 36 (8-byte loads) 129 -> 93. fp32 rows of 1-3
// elements so lost (3000000 x 2, lda 29: 59.8 -> 98.1 us), and so did bf16 1953216 x 2, lda 40
// (32.3 -> 36.0).
// 16-bit rows of 8-46 bytes in one phase that is not on 8 bytes, gaps over an eighth of lda, from
// 12 MB (s67, NOTES.md section 87, results/h200-2026-11-29-s67-run5-n-one-phase-gaps.csv): 2 lanes
// of element loads at 2, x through L1, under 32 bytes (fp16 1905267 x 9, lda 48: 51.4 -> 34.6 us on
// realigned packs before; fp16 581143 x 9, lda 40, 0.80x cuBLAS so, 21.6 -> 13.3), x's phase copies
// on 2 lanes from 32 (fp16 382799 x 23, lda 32: 19.8 -> 11.0; bf16 553818 x 17, lda 64: 28.1 ->
// 17.6); rows 64 bytes apart or more (fp16 3154239 x 5, lda 16: 28.5 us a thread a row, 44.6 on 2
// lanes; -run6-*). Rows under 64 bytes apart (s68, NOTES.md section 88, results/h200-2026-11-29-s68-
// run1-n-one-phase-close.csv): a thread a row of element loads at 4, x through L1 (staged where rows
// lie 16 bytes apart: bf16 5991217 x 6, lda 8, 46.4 us staged, 59.4 not); these had taken 2 lanes
// of realigned packs or a thread a row at 2 by the row kernels' own rules, 1.00-2.09x the best of 47
// configs (fp16 4842187 x 11, lda 16, 131.2 -> 63.9 us); on fresh shapes 1.51x and 1.23x (fp16
// 4000000 x 11, lda 16, 106.8 -> 53.1; -run2-vs-previous.txt).
bool short_rows_element_config(const Problem &pb, gemv_config_t *out) {
    const int64_t esz = (int64_t)dtype_size(pb.dtype()), row = pb.k * esz, gap = pb.lda - pb.k;
    if (pb.op != GEMV_OP_N || pb.batched() || pb.quantized() || mul_sat(mul_sat(pb.m, pb.lda), esz) < (12 << 20))
        return false;
    const bool spread_under_a_pack = esz == 2 && row >= 10 && row < 16 && pb.lda * esz >= 64;
    const bool on8 = rows_aligned_to(pb, 8), one_phase = (pb.lda * esz) % 16 == 0; // on8: aligned rows too
    if (!spread_under_a_pack && one_phase && !on8 && esz == 2 && row >= 8 && row < 48 && 8 * gap > pb.lda) {
        // 16-bit rows of one phase, not on 8 bytes, past the stream's gaps (s67, above); under 64
        // bytes apart a thread a row at 4, x staged where rows lie 16 bytes apart (s68, above).
        if (pb.lda * esz < 64) {
            *out = make_config(GEMV_VARIANT_THREAD_PER_ROW, 1, 128, kLoadsScalar, 4, pb.lda * esz == 16, 1);
            return runs(*out, pb);
        }
        if (row >= 32 && row_copies_config(pb, 2, out)) return true;
        *out = make_config(GEMV_VARIANT_ROWS_PER_WARP, 2, 64, kLoadsScalar, 2, 0, 1);
        return runs(*out, pb);
    }
    if (!spread_under_a_pack && (on8 || one_phase)) return false;
    int p = 0, unroll = 2;
    if (spread_under_a_pack || (esz == 2 && row <= 30)) p = 1, unroll = 4;
    else if (esz == 2 && row >= 32 && row < 48) p = 5 * gap < 2 * pb.lda ? 1 : 2, unroll = p == 1 ? 4 : 2;
    else if (esz == 4 && row >= 48 && row <= 80) {
        if (4 * gap < pb.lda && row_copies_config(pb, 2, out)) return true;
        p = 4;
    }
    if (!p) return false;
    *out = make_config(p == 1 ? GEMV_VARIANT_THREAD_PER_ROW : GEMV_VARIANT_ROWS_PER_WARP, p, 128 / p, kLoadsScalar,
                       unroll, 1, 1);
    return runs(*out, pb);
}

// fp32 rows of 32-127 bytes that do not start 16-byte aligned, with gaps of a quarter of lda or
// more and 96 bytes apart or more, single products from 8 MB: 4 lanes a row, 2 loads in flight;
// 8-byte loads with x staged where rows lie on 8 bytes, else an element a load, x staged from rows
// of 64 bytes (a block's staging is paid back over too few bytes below: 4921171 x 12, lda 72,
// element loads 180.6 us through L1, 271 staged). These rows took a thread a row of 8-byte loads, 2
// lanes of realigned packs or 2 of element loads by their length and alignment; on an H200
// (benchmarks/NOTES.md section 87, results/h200-2026-11-29-s67-run1-n-wide-gaps.csv, 16 shapes of
// 10-1350 MB) those ran 1.22x the best of 47-57 configs on average, these 1.05x: 4921171 x 12, lda 72,
// 348.5 -> 186.6 us (cuBLAS 241); 861383 x 22, lda 46, 69.0 -> 39.1; 797309 x 8, lda 25, 28.3 ->
// 22.1. Rows of 128 bytes up keep 4 lanes of realigned packs (380554 x 39, lda 126: 30.1 us, 31.7
// so); narrower gaps keep the rules before (x's phase copies, the stream). Rows under 96 bytes apart
// (687220 x 9, lda 12: 12.6 us a thread a row, 20.2 on these 4 lanes; -s67-run2-n-one-phase-short.csv)
// of 32-48 bytes off 8 bytes take 2 lanes of element loads at 2, x through L1, since s68 (NOTES.md
// section 88): the rules before (a thread a row, 2 lanes of realigned packs, 4 of element loads) ran
// 1.03-1.34x the best of 47 configs on 13 drawn problems (-s68-run1-n-fp32-close-gaps.csv), these
// 1.00-1.10x; fresh shapes 1.23x and 1.14x (2000000 x 8, lda 12, 46.2 -> 31.1 us; -run2-, -run3-
// vs-previous.txt). Rows of 52-60 bytes so ran 0.94-1.00x (800000 x 13, lda 20): they keep theirs.
bool wide_gap_rows_config(const Problem &pb, gemv_config_t *out) {
    const int64_t row = pb.k * 4, gap = pb.lda - pb.k;
    if (pb.dtype() != GEMV_DTYPE_F32 || pb.op != GEMV_OP_N || pb.batched() || pb.quantized() || rows_aligned16(pb) ||
        row < 32 || row >= 128 || 4 * gap < pb.lda || mul_sat(pb.m, pb.lda * 4) < (8 << 20))
        return false;
    const bool on8 = rows_aligned_to(pb, 8);
    if (pb.lda * 4 < 96) { // rows of 32-48 bytes under 96 bytes apart: 2 lanes of element loads, x through L1 (s68)
        if (row > 48 || on8) return false;
        *out = make_config(GEMV_VARIANT_ROWS_PER_WARP, 2, 64, kLoadsScalar, 2, 0, 1);
        return runs(*out, pb);
    }
    *out = make_config(GEMV_VARIANT_ROWS_PER_WARP, 4, 32, kLoadsAligned8, 2, 1, 1);
    if (on8 && runs(*out, pb)) return true;
    *out = make_config(GEMV_VARIANT_ROWS_PER_WARP, 4, 32, kLoadsScalar, 2, row >= 64, 1);
    return runs(*out, pb);
}

gemv_config_t heuristic_rows(const Problem &pb, int sm_count) {
    const int esz = (int)dtype_size(pb.dtype());
    const int pack = 16 / esz;
    // Enough threads in flight to cover HBM latency: a full SM's worth on every SM.
    const int64_t sms = std::max(sm_count, 1);
    const int64_t target_threads = sms * 2048;
    const bool small = small_matrix(pb, target_threads);
    const int64_t rows = mul_sat(pb.m, pb.batch); // a batch counts all its rows
    gemv_config_t chosen;
    if (row_mma_config(pb, &chosen)) return chosen;
    // Rows that are not 16-byte aligned but start on 8 bytes (x too): 8-byte loads below, with
    // no phase to handle, rather than phased, realigned or streamed 16-byte packs
    // (benchmarks/experiments/aligned8.sh, -s14-aligned8.txt: fp32 16384 x 8194 176.8 us
    // against 183.7 phased, 97% of 16384 x 8192; fp16 16384 x 8196 90.2 against 95.7; fp16
    // 1296187 x 108 108.2 against 125.0, cuBLAS 115; bf16 700001 x 204 112.7 against 139.2;
    // fp32 62972 x 446 41.8 against 44.5). fp32 rows the stream takes stay streamed (282737 x
    // 338: 132.0 against 136.1), and so do 16-bit rows of 64-199 bytes (not measured). Rows of
    // 8-63 bytes take the 8-byte loads too, a thread a row, x staged where it is not on 8 bytes
    // (s67): the stream and short_rows_past_stream_config's element loads ran 1.24-1.76x their
    // time (fp16 3349358 x 24 83.0 -> 47.2 us; fp32 662052 x 12 16.3 -> 10.2; bf16 4374406 x 8
    // 40.1 -> 30.4; benchmarks/NOTES.md section 87).
    const bool on8 = !rows_aligned16(pb) && rows_aligned_to(pb, 8);
    const bool rows8 = on8 && pb.incx == 1 && (reinterpret_cast<uintptr_t>(pb.x) & 7u) == 0;
    const int64_t row_bytes = pb.k * esz;
    const bool short8 = on8 && row_bytes >= 8 && row_bytes < 64;
    const bool stream8 = (rows8 && esz == 2 && row_bytes >= 200) || short8; // 8-byte rows the stream lost
    if ((!rows8 && pb.m >= 2 * sms && copies_band_under_2048_rows(pb) &&
         phased_copies_config(pb, sm_count, &chosen)) ||
        realigned_mid_rows_config(pb, sm_count, &chosen) || tile_config(pb, sm_count, &chosen) ||
        (!rows8 && (phased_config(pb, sm_count, &chosen) || short_phased_config(pb, &chosen))) ||
        wide_gap_rows_config(pb, &chosen) || short_rows_element_config(pb, &chosen) ||
        (!small && ((!rows8 && short_rows_config(pb, &chosen)) || (!stream8 && (short_rows_past_stream_config(pb, &chosen) || stream_config(pb, sm_count, &chosen))))))
        return chosen;
    const bool by_element = small && short_rows_by_element(pb);

    // 16-byte loads first: aligned rows, then 8-byte loads of rows 8-byte aligned (no phase
    // to handle), then rows realigned in the kernel (a scalar head, x shifted in registers);
    // the can_implement check below drops what cannot run.
    for (const int mode : {kLoadsAligned, kLoadsAligned8, kLoadsRealigned, kLoadsScalar}) {
        const bool vec = mode != kLoadsScalar;
        const int per_load = mode == kLoadsAligned8 ? pack / 2 : pack; // elements a load
        // Rows shorter than a pack: element loads. Realigned, a row of 1-2 elements is
        // still a 16-byte load or two and a shift: bf16 425x2 1.22 us against 0.98, fp32
        // 902x1 1.22 against 1.00 (held-out, -s12-heldout.txt); the table's fp16
        // 1048576x3 entry is scalar too (8.6 us against 13.4 realigned).
        if ((mode == kLoadsRealigned || mode == kLoadsAligned8) && (pb.k < per_load || by_element)) continue;
        // Small matrices keep realigned packs and their lane rule: with 8-byte loads some ran
        // faster, some slower (random seed 1, -s14-aligned8-random-seed1.json: bf16 74 x 780
        // 2.00 -> 1.62 us, fp32 40 x 6666 2.77 -> 3.07).
        if (mode == kLoadsAligned8 && small) continue;
        const int64_t loads = vec ? (pb.k + per_load - 1) / per_load : pb.k; // loads per row
        // x staged in shared memory where the load mode needs it (aligned packs of a
        // misaligned or strided x; realigned rows of a strided x), and for realigned rows
        // of at most 256 bytes. Aligned rows of 64-256 bytes read x through L1 faster
        // than staged, 4-20% (fp16 131072x128 11.8 against 13.7 us; NOTES.md section 23).
        const uintptr_t x_align = mode == kLoadsAligned ? 16 : mode == kLoadsAligned8 ? 8 : 1; // aligned packs of x
        const bool x_unaligned = pb.incx != 1 || (reinterpret_cast<uintptr_t>(pb.x) & (x_align - 1));
        const bool smem = vec && (size_t)pb.k * esz <= max_x_smem_bytes(1024) && // for any p below
                          (x_unaligned || (mode == kLoadsRealigned && (size_t)pb.k * esz <= 256));
        int p = vec ? threads_per_row(loads, pb.dtype() != GEMV_DTYPE_F32) : scalar_threads_per_row(loads);
        // Single fp32 products of aligned rows of 512 to 2048 packs (8-32 KB), x aligned: about
        // 16 packs a lane (32 to 128 lanes), not 2. On an H200, whose HBM feeds an SM faster than
        // the H100's the 2 were fit on, 512 lanes spent a block's reduction on each 16 KB row:
        // fp32 128256 x 4096 564.1 us on 512 lanes, 466.0 on a warp (cuBLAS 506); 14336 x 4096
        // 66.2 against 56.1 on 128; 28672 x 8192 222.5 against 210.6 on 128; 60000 x 2048 127.9
        // against 112.7 on a warp. 16-bit rows gained nothing so (fp16 128256 x 4096: 242.5 on
        // 128, 237.9 at best). Longer rows keep 512 lanes (fp32 16384 x 16384 reads 96% of the
        // read ceiling at its size so). benchmarks/NOTES.md section 78, results/
        // h200-2026-11-29-s58-run6-fp32-rows.txt.
        if (mode == kLoadsAligned && esz == 4 && !x_unaligned && !pb.batched() && loads >= 512 && loads <= 2048)
            p = std::max(32, pow2_floor(loads / 16));
        // 8-byte loads: about six a lane (the best of aligned8.sh on every shape but one).
        if (mode == kLoadsAligned8) p = (int)std::clamp<int64_t>(pow2_floor(loads / 6), 1, 512);
        // Strided batches of rows of more than 8 packs, aligned or realigned: about 8 packs a
        // lane, packs / 8 rounded down to a power of two (4 to 32 lanes); fp32 realigned rows,
        // at one pack in flight, the nearest power of two. More lanes, as above, only where the
        // rows' lanes fill under the GPU's threads (realigned rows: under half of them). The
        // lanes above, fit to single products of few rows, left each lane 2-4 packs, and a
        // realigned lane pays a head and an x shift: on an H200, 71 drawn batches of 4 MiB to
        // 1 GiB ran 1.24x over the best of 45 configs at those lanes, 1.06x at these (fp16 14 x
        // 1065 x 4096: 64 lanes 77.3 us, 16 43.4; fp32 819 x 3097 x 64: 256 lanes 313.4, 32 at
        // one in flight 176.5). fp32 realigned rows at two in flight ran 0.78-0.94x of one on
        // 11 of 12 such batches; half the GPU's threads served realigned rows (bf16 449
        // x 4657 x 8: 32 lanes 12.0 us, 64 14.3) but not aligned rows (fp32 4 x 1336 x 512: 128
        // lanes 5.5 us, 64 6.0). Against the rule before, 108 cases 1.13x and 129 fresh ones
        // 1.10x (fp16 1052 x 1643 x 64 123.4 -> 66.0 us, cuBLAS 86.7; fp32 7 x 7095 x 4096 401.8
        // -> 244.1); fp32 286 x 947 x 8 lost (5.30 -> 5.98 us: 64 lanes ran 4.96).
        // benchmarks/NOTES.md section 75.
        const bool batch_lanes = pb.batched() && (mode == kLoadsAligned || mode == kLoadsRealigned) && loads > 8;
        const bool one_in_flight = batch_lanes && mode == kLoadsRealigned && esz == 4;
        if (batch_lanes)
            p = std::clamp(one_in_flight ? pow2_round((double)loads / 8) : pow2_floor(loads / 8), 4, 32);
        // Few rows: more threads a row, while each keeps two loads or more.
        const int64_t few_rows_threads = batch_lanes && mode == kLoadsRealigned ? target_threads / 2 : target_threads;
        if (mul_sat(rows, p) < few_rows_threads && loads > 2 * (int64_t)p) {
            const int64_t want = few_rows_threads / std::max<int64_t>(rows, 1);
            p = std::min<int>(1024, std::max(p, pow2_floor(std::min<int64_t>(want, loads / 2))));
        }
        // Realigned single products of 512-4095 packs a row, up to 16 MiB: lanes for half the GPU's
        // threads (as realigned batches, above), whatever the rules above gave. On an H200 the
        // full GPU's lanes (few rows) and fp32's 512 ran 100-800 such rows 1.2-1.5x as long as
        // these (fp32 400 x 6001, lda 6003: 6.47 us on 512 lanes, 4.89 on 256; fp32 800 x 5001
        // 10.48 on 512, 7.10 on 128; fp16 500 x 12001 7.07, 5.35; NOTES.md section 91).
        if (mode == kLoadsRealigned && !pb.batched() && loads >= 512 && loads < 4096 &&
            mul_sat(rows, loads) <= (int64_t(1) << 20)) {
            const int64_t half_gpu = target_threads / 2 / std::max<int64_t>(rows, 1);
            p = (int)std::clamp<int64_t>(pow2_floor(std::min<int64_t>(half_gpu, loads / 2)), 32, 1024);
        }
        // 64 threads a row whose rows just pass one full wave (up to 1.5): 128, so the last
        // wave is not a fifth-full one, while each keeps two loads or more. On the H100, 16-bit
        // rows of 375-480 packs at 5000-6000 rows: fp16 5003 x 3696 16.46 us at 64, 14.96 at
        // 128; 6000 x 3000 14.80 against 13.27 (1.01-1.17x on six such shapes). Doubling 128
        // to 256 the same way was mixed: 2500 x 8192 1.08x, 2200 x 7000 0.97x
        // (benchmarks/NOTES.md section 45).
        if (mode == kLoadsAligned && !small && p == 64 && mul_sat(rows, p) > target_threads &&
            2 * mul_sat(rows, p) <= 3 * target_threads && loads >= 4 * (int64_t)p)
            p *= 2;
        // Small matrices (small_matrix): lanes by small_matrix_lanes, unroll 1, x staged
        // only where it must be; element loads a lane an element (short_rows_by_element).
        if (small && vec) p = small_matrix_lanes(loads, rows, target_threads);
        if (by_element && !vec)
            p = std::min({pow2_ceil(loads), half_gpu_lanes(rows, target_threads), 256});
        // 8-byte loads of a misaligned x stage it in shared memory for each block; a block of
        // one row (128 lanes up) reads all of x for that row alone, as long as the row itself. Where
        // the GPU is not full (few rows) realigned packs, x shifted in registers, run instead: on an
        // H200 fp32 35 x 10606, lda 10616, x 3 elements off, 5.61 us staged, 3.33 realigned
        // (benchmarks/NOTES.md section 91).
        if (mode == kLoadsAligned8 && smem && x_unaligned && p >= 128 && !pb.batched() &&
            mul_sat(rows, p) <= target_threads)
            continue;
        gemv_config_t c = row_config(p, loads, mode, small && vec ? x_unaligned : smem);
        if (small && vec) c.unroll = 1;
        if (one_in_flight && !small) c.unroll = 1;
        // Realigned rows of 2-4 packs a lane on a block of 1024: one load in flight. On an H200
        // two ran 1.00-1.13x as long as one on 69 of 74 such rows (1088-4080 packs, 1-94 rows),
        // the rest within 0.6% (bf16 40 x 24601, lda 24602: 4.27 us at two, 3.79 at one;
        // NOTES.md section 91).
        if (mode == kLoadsRealigned && p == 1024 && !pb.batched() && loads < 4 * (int64_t)p) c.unroll = 1;

        // Still far from filling the GPU with one block a row: split K (deterministic), by
        // the row's 16-byte packs whatever the load width (8-byte loads split bf16 123 x 17924
        // and ran it in 5.44 us against 3.91 in one block a row). Latency-bound single products
        // (rows of under 4096 packs, or up to a load a lane of 3 blocks an SM in all, about 1.6
        // MB) split from 2048 packs a row (past two loads a lane of 1024): slices of 256 lanes at
        // two in flight, a load a lane or less (loads / 256 slices, a power of two up), at most 3
        // blocks an SM. On an H200 (benchmarks/NOTES.md section 90, 42 problems of 1-26 rows of
        // 16-128 KB, 72 configs) one block a row ran rows of 2049-4095 packs at 1.05-1.44x the
        // best (fp16 8 x 27671, lda 27734: 3.93 us, 3.18 so), the slices before (packs / 256 at
        // four in flight, 8 blocks an SM) 1.04-1.43x (fp32 3 x 32292: 3.86 us, 2.95 so); these
        // 1.00-1.09x. A fourth block an SM lost (17 x 25628 on 32 slices 1.47x), and so did
        // slices past 8 rows under 3072 packs (fp32 20 x 10000 2.86 -> 3.04 us), slices of more
        // than 256 packs (fp32 30 x 14001 on 13: 3.95 -> 4.06) and of nearly two loads a lane
        // (fp16 1 x 1500000 on 396: 4.50 -> 4.90).
        const int64_t packs16 = vec ? (pb.k + pack - 1) / pack : loads;
        const bool latency_bound = !pb.batched() && (packs16 < 4096 || mul_sat(rows, packs16) <= 3 * sms * 256);
        if (mul_sat(rows, 2 * p) < target_threads && packs16 > (latency_bound ? 2048 : 4095)) {
            gemv_config_t s = make_config(0, 0, 0, 0, 0, 0, 1);
            s.variant = GEMV_VARIANT_SPLITK_TWOPASS;
            s.threads_per_row = 256;
            s.rows_per_block = 1;
            s.unroll = latency_bound ? 2 : 4;
            s.vector_loads = mode;
            s.x_in_smem = 0;
            const int64_t per_sm = latency_bound ? 3 : 8;
            const int64_t by_gpu = per_sm * sms / std::max<int64_t>(rows, 1);
            // Larger problems: at least one load a thread a slice (the tuned split for fp16 1 x
            // 65536 was 64 slices, half a load a thread).
            const int64_t a_load_a_lane = (loads + 255) / 256; // slices of 256 lanes at a load a lane or less
            const int64_t by_work = latency_bound ? pow2_ceil(a_load_a_lane) : packs16 / 256;
            s.split_k = (int)std::clamp<int64_t>(std::min(by_gpu, by_work), 2, 1024);
            // Under 4096 packs one block a row of 1024 lanes holds its own past 24 rows (fewer than
            // 16 slices, which may pass 256 packs each) and, under 3072 packs (three loads a
            // lane), past 8.
            // Realigned rows past those cuts split finer where the slices fit 2 blocks an SM: a
            // load a lane or less, ceil(loads / 256) slices rounded up to even (10-12 slices of rows
            // of 2049-3071 packs, 9-26 rows). On an H200 one block a row ran these 1.00-1.15x as long
            // (bf16 12 x 16479, lda 16488: 3.60 us, 3.20 on 10; fp32 19 x 9490: 3.35, 2.91; NOTES.md
            // section 91); past 2 blocks an SM one block a row held its own (fp16 49 x 19827).
            if (packs16 < 4096 && (s.split_k < 16 || (packs16 < 3072 && rows > 8))) {
                const int64_t even = (a_load_a_lane + 1) / 2 * 2;
                s.split_k = mode == kLoadsRealigned && mul_sat(rows, even) <= 2 * sms ? (int)even : 1;
            }
            while (s.split_k >= 2 && workspace_needed(s, pb) > pb.workspace_bytes) s.split_k /= 2;
            if (s.split_k >= 2) {
                if (runs(s, pb)) return s;
                if (mode != kLoadsScalar) continue; // the split in the next load mode beats no split
            }
        }
        if (mode == kLoadsAligned && misaligned_x_config(pb, sm_count, c, &chosen)) return chosen;
        if (runs(c, pb)) return c;
        if (smem) {
            c.x_in_smem = 0;
            if (runs(c, pb)) return c;
        }
    }
    // Runs every problem: scalar loads, x through the cache, no workspace.
    return row_config(32, 1, kLoadsScalar, false);
}

// op T on rows that do not start 16-byte aligned: A as one stream of aligned packs
// (t_stream), from 1 MiB (rows of up to 256 bytes; 32 MiB for longer ones, where phased rows
// split by lane classes decline since s51: lane_classes_split_config), where its gaps
// are under half of lda (packs wholly in a gap are not read, the rest are: wider gaps ran
// 0.5-0.8x the column kernels, fp16 1000000 x 16, lda 56: 37.4 us against 22.7) and its pack
// period fits a block (else can_implement refuses). 16-bit rows under a pack (a pack reaches
// two or three rows), of at least half a pack, from 48 MiB: 1.07-1.59x the element loads
// on an H200 (bf16 8432200 x 7 74.0 -> 49.5 us, fp16 31839539 x 6 262.3 -> 165.2); smaller
// ones (fp16 1000000 x 5, lda 7: 12.4 against 11.2-17.2 on the stream), fp32 ones (3000000 x
// 2, lda 3: 15.5 against 16.7) and shorter ones (fp16 15747493 x 2, lda 4: 50.3 against
// 62.1) keep the element loads (benchmarks/NOTES.md section 80). On the H100 it took 0.30-0.88 of
// the time of one element a load on 28 of 30 such shapes (fp16 3985411 x 61: 182 against
// 484 us; fp32 97394 x 743: 111 against 126), 1.02 on the last two (fp16 20000 x 17: 4.30
// against 4.22; benchmarks/NOTES.md section 38, results/h100-2026-11-26-s24-op-t-stream-
// sweep.txt). Smaller matrices are latency-bound, and the stream's sums and second pass
// cost more than they save: 0.64-1.08x there (bf16 58 x 340: 4.77 against 3.05 us); so do
// they on longer rows of medium size, where the column kernels' element loads still read
// whole lines (bf16 2632 x 1910, 10 MB: 13.7 against 9.7 us; fp32 10941 x 483, 21 MB: 12.9
// against 11.5), though not at 64 MB (fp16 100000 x 333: 30.5 against 56.2). About
// 1024 threads an SM at 2 packs in flight: large matrices (8192 packs an SM and more) one
// block of 1024 an SM, the rest blocks of 256 at 4 packs in flight (2 where the period
// passes 512 threads), slices of at least 4 packs a thread, up to 2 blocks an SM. Large
// batches of at least a product an SM (a block a product, no split) take blocks of about 256
// threads (the period, where it is longer), at 4 packs in flight where each thread has 16 packs
// and the block at most 512 threads in fp32, 256 in 16 bits, else 2: blocks of 1024 ran fp16
// 300 x 107 x 512 at 26.2 us against 18.4, 1337 x 91 x 512 at 59.1 against 52.2, fp32 300 x 435
// x 512 at 79.7 against 66.6; 4 in flight on 435 threads lost in 16 bits (fp16 300 x 435 x 512
// 66.7 against 62.1 on 870 at 2; benchmarks/NOTES.md section 68).
// False where it does not apply (or finds no workspace for one slice).
bool t_stream_config(const Problem &pb, int sm_count, gemv_config_t *out) {
    const int64_t esz = (int64_t)dtype_size(pb.dtype()), v = 16 / esz, sms = std::max(sm_count, 1);
    if (pb.lda > 2 * pb.k) return false;
    gemv_config_t c = make_config(GEMV_VARIANT_T_STREAM, 256, 1, kLoadsAligned, 4, 0, 1);
    const int64_t packs = ((pb.m - 1) * pb.lda + pb.k) / v + 1, all = mul_sat(packs, pb.batch);
    if (all < (pb.lda * esz <= 256 ? (1 << 16) : (1 << 21))) return false; // 1 MiB, 32 MiB
    // Rows under a pack (x nearly as large as A): 16-bit rows of half a pack up, from 48 MiB.
    if (pb.lda < v && (esz == 4 || 2 * pb.k < v || all < 3 * (1 << 20))) return false;
    const int64_t period = pack_period(pb.lda, (size_t)esz);
    const bool large = all >= sms * 8192;
    c.threads_per_row = large ? 1024 : 256;
    c.unroll = large || period > 512 ? 2 : 4;
    if (large && pb.batch >= sms) {
        c.threads_per_row = 256;
        const int64_t block = stream_block_threads(period, c.threads_per_row);
        c.unroll = block <= (esz == 4 ? 512 : 256) && packs >= 16 * block ? 4 : 2;
    }
    const int64_t blocks = (large ? 1 : 2) * sms;
    const int64_t steps = packs / ((int64_t)c.threads_per_row * c.unroll); // of a product
    c.split_k = (int)std::clamp<int64_t>(std::min(blocks / pb.batch, steps), 1, 1024);
    if (!runs(c, pb)) return false;
    while (c.split_k > 1 && workspace_needed(c, pb) > pb.workspace_bytes) c.split_k /= 2;
    *out = c;
    return workspace_needed(c, pb) <= pb.workspace_bytes;
}

// Phased rows for op T (rows that do not start aligned, more than 48 of them, beyond the
// stream's regime): rows `period` apart share their 16-byte phase, so each slice walks one
// phase class and reads its aligned packs as they lie (columns shifted by the phase). On the
// H100 it gained 1.1-2.0x over one element a load on large matrices (fp16 4421 x 11465: 47.2
// against 73.1 us; bf16 113731 x 1109: 114 against 223; fp32 5272 x 13301: 99.6 against 117;
// benchmarks/NOTES.md section 39, results/h100-2026-11-26-s25-*), and lost on smaller ones
// and on few rows a phase class, where the partials and the second pass cost more than the
// loads save (bf16 469 x 1445, 1.4 MB: 6.5 against 4.4 us; fp32 2384 x 938, 8.9 MB: 8.1
// against 7.0; fp16 691 x 32839, 86 rows a class: 25.7 against 22.4); so 16-bit matrices
// from 24 MiB (8 MiB on rows of more than 64 columns an SM, where one element a load has more
// than 2 tiles an SM to share: fp16 595 x 9406 9.5 us phased, 12.2 on them; under 24 MiB, shorter
// rows ran faster on element loads over 8 blocks an SM, fp16 1539 x 3179 8.4 against 10.7,
// 3979 x 2087 11.4 against 13.1; NOTES.md section 41), fp32 from 32 MiB (its element loads
// read 4 bytes), rows of 512 bytes up (a
// pack a row of 2 bytes read 8 times the bytes; fp16 36021 x 153, 306-byte rows: 14.0 against
// 12.8 us, -s25-op-t-phased-vs-previous-d.txt; fp16 20249 x 309: 11.0 against 13.6) and at least 8 rows a lane
// in each phase class. Blocks of 256 threads, 16-pack tiles (8 on rows of fewer than 128
// packs: 20249 x 309 fp16 11.1 against 13.9 us) at 4 rows in flight in 16 bits from 24 MiB (fp16 4421 x
// 11465: 41.3 against 47.0 us at 2; 17382 x 8007: 104.0 against 110.2; at 24-32 MiB, s27:
// fp16 4421 x 3001 15.7 at 4 against 17.6, 2047 x 7001 16.7 against 18.2), else 2
// (fp32 8304 x 1341: 20.9 against 21.9 at 4; fp16 20249 x 309 10.9 against 12.4; -s25-op-t-
// phased-u2-u4.txt; fp16 1433 x 3611, 10 MB: 11.1 at 4 against 9.8; -s25-op-t-phased-u4-vs-previous.txt),
// slices of about 4 rows a lane (1433 x 3611 bf16: 10.0 us at 5.6, 11.3 at 1.4; 4421 x 11465:
// 47.5 at 4.3, 49.8 at 17; -s25-op-t-phased-sweep-2.txt), split_k a multiple of the period,
// halved until the partials fit the workspace; false where one slice a class does not.
// Since s50 its lanes (a multiple of every period) walk lane classes, not a slice a class, and
// it is asked only where lane_classes_split_config declines (few long rows: fp32 1503 x 29099,
// 54.0 us before, 54.7 now).
bool phased_columns_config(const Problem &pb, int sm_count, gemv_config_t *out) {
    const int64_t esz = (int64_t)dtype_size(pb.dtype()), v = 16 / esz;
    const bool long_rows = pb.k > 64 * (int64_t)std::max(sm_count, 1); // one element a load: over 2 tiles an SM
    const int64_t floor = esz == 4 ? 32 << 20 : long_rows ? 8 << 20 : 24 << 20;
    if (pb.batch > 1 || pb.k * esz < 512 || mul_sat(mul_sat(pb.m, pb.k), esz) < floor) return false;
    const int64_t packs = (pb.k + v - 1) / v + 1;
    const int c_threads = packs >= 128 ? 16 : 8, lanes = 256 / c_threads;
    const int period = phase_period(pb.lda, (size_t)esz);
    if (pb.m < 8 * (int64_t)period * lanes) return false;
    const int unroll = esz == 2 && c_threads == 16 && mul_sat(pb.m, pb.k) * esz >= (24 << 20) ? 4 : 2;
    gemv_config_t c = make_config(GEMV_VARIANT_T_SPLITM_TWOPASS, c_threads, lanes, kLoadsPhased, unroll, 0, 1);
    c.split_k = (int)std::clamp<int64_t>(pow2_floor(pb.m / (4 * (int64_t)lanes)), std::max(2, period), 1024);
    while (c.split_k > std::max(2, period) && workspace_needed(c, pb) > pb.workspace_bytes) c.split_k /= 2;
    if (!runs(c, pb) || workspace_needed(c, pb) > pb.workspace_bytes) return false;
    *out = c;
    return true;
}

// op T. Each thread owns one pack of columns (16 bytes, or one element); c threads span a
// tile's columns, r row lanes walk the rows under it, and x[r] is one broadcast load. Fit
// to a sweep of every op T config on 22 shapes of the H100 (0.990 of each shape's best, worst 0.945;
// benchmarks/results/h100-2026-11-23-sweep-op-t-all.csv):
// - 33 to 2048 rows up to 2 MiB of one element a load (rows that start anywhere, or aligned
//   rows of up to 128 bytes): one pass of narrow tiles, every row in flight (below, s39);
// - 16-bit rows that start anywhere on 2 to 8 MiB, 49 to 192 rows of few columns or 49 to 80
//   of many: one pass of realigned packs (below, s40);
// - rows that start anywhere past those rules, 33 rows up, at most 16 rows a lane: one pass of
//   one element a load, about 1024 threads an SM (below, s41);
// - a matrix of at most 256 KiB whose lanes walk at most 16 rows: one pass of 4-pack tiles
//   (fp16 256x256: 2.7 us, 3.0 split); more rows a lane split (fp16 1573 x 69 ran 24 us in
//   3 blocks of 196 rows a lane, NOTES 37);
// - else 16-pack tiles (8 when a row has at most 32 packs), 256-thread blocks (512 for
//   tall matrices of 2 to 4 tiles), 4 rows in flight (2 where that buys slices); fewer
//   rows than lanes trade the idle lanes for wider tiles;
// - the rows split (two-pass, deterministic) into about 4 blocks an SM in all, at most 64
//   slices unless one tile spans the row (the reduce adds slices one by one). Small
//   matrices are latency-bound: fp16 1024^2 ran 3.9 us in 256 blocks, 4.8 in 64.
// Packs are aligned where every row is, else realigned (cut from two aligned packs: rows
// that start anywhere) on up to 48 rows beyond 256 KiB; more rows of such rows take phased
// rows split by lane classes from 4 MiB and 256 rows (lane_classes_split_config), else the
// stream of packs where its period fits a block (t_stream_config), else phased_columns_config,
// else (rows under 512 bytes) short_rows_lane_classes_config; one element a load runs the
// rest. 3 to 96 such rows of many columns (16 tiles of 64 packs an SM) take one-lane tiles
// instead. Few long rows ahead of all these (33 to 1536 rows, 6 MiB up by dtype and rows; fp32
// not on one-lane tiles' rows) take phased rows in one pass (long_rows_lane_pass_config), and
// so do 3 to 32 from 1 MiB where a lane has a phase class's rows (few_rows_lane_classes_config).
// Few rows a thread walks alone (one-lane tiles, heuristic_columns): on realigned packs up
// to the first, one element a load beyond it up to the second.
constexpr int64_t kOneLaneRealignedRows = 8, kOneLaneRows = 96;
// One-lane tiles (64 threads across, a tile's thread a pack or an element) need rows of at
// least 16 tiles an SM: row_units packs or elements across a row.
bool one_lane_tiles_fill(int64_t row_units, int sm_count) {
    return (row_units + 63) / 64 >= 16 * (int64_t)std::max(sm_count, 1);
}

// Rows a lane keeps in flight (the unroll) for rows_per_lane rows to walk: 4, 2 or 1.
int rows_in_flight(int64_t rows_per_lane) { return rows_per_lane >= 4 ? 4 : rows_per_lane >= 2 ? 2 : 1; }

// Strided batches of aligned rows (64 rows up, rows past 256 bytes): one pass of 16-byte packs,
// a block a tile of one product (the column kernel's walks, columns.cu), no split. The rules
// below are for single products; on batches they split rows that the grid's products already
// spread over the GPU, and paid the second pass (fp16 96 x 4096 x 8 6.50 -> 4.36 us, fp32 96 x
// 256 x 8 4.52 -> 1.91, fp16 384 x 256 x 64 8.81 -> 6.51; benchmarks/NOTES.md section 67).
// - Tiles of 4 threads up to 64 packs a row, 8 up to 256, else 16; twice as wide (up to 16)
//   from 64 products. Unroll 2 in 16 bits, 4 in fp32.
// - Lanes from 128 (within max_block_threads; 64 on fewer blocks than 3/4 of the SMs, where 128
//   ran 16-bit 397 x 200 x 8 3.87 -> 3.99 us) halved, down to 8, until the grid is at most half a
//   wave of 2048 threads an SM and each lane has 2 rows.
// - Not taken where that leaves fewer than 32 lanes (8 on 16-bit tiles of 16 threads): fp32's
//   8-lane blocks and 16-bit 8-thread tiles of 8 lanes lost to the rules below at batches of
//   512 and 4096 (fp32 95 x 608 x 64 7.65 -> 8.53 us, fp16 119 x 128 x 4096 44.3 -> 47.2).
// - Nor where a lane walks more than 48 rows, or more than 4 on fewer blocks than 3/4 of the
//   SMs: the split's slices keep the SMs busy there (fp32 969 x 160 x 8, 80 blocks of 7.6 rows a
//   lane: 5.39 us split, 6.04 one pass; fp16 1536 x 256 x 8 5.36 against 6.07), while 3 rows
//   a lane on 80 blocks gained (fp16 96 x 616 x 8 3.79 -> 2.62).
bool batched_one_pass_config(const Problem &pb, int sm_count, gemv_config_t *out) {
    const int64_t esz = (int64_t)dtype_size(pb.dtype()), sms = std::max(sm_count, 1);
    if (pb.m < 64 || pb.k * esz <= 256) return false;
    const int64_t packs = (pb.k * esz + 15) / 16;
    int c_threads = packs <= 64 ? 4 : packs <= 256 ? 8 : 16;
    if (pb.batch >= 64) c_threads = std::min(2 * c_threads, 16);
    const int unroll = esz == 4 ? 4 : 2;
    const int64_t blocks = mul_sat((packs + c_threads - 1) / c_threads, pb.batch);
    const bool few_blocks = 4 * blocks < 3 * sms;
    int lanes = std::min(few_blocks ? 64 : 128, max_block_threads(unroll) / c_threads);
    while (lanes > 8 && (mul_sat(blocks, (int64_t)c_threads * lanes) > 1024 * sms || pb.m < 2 * (int64_t)lanes)) lanes /= 2;
    if (lanes < (esz == 2 && c_threads == 16 ? 8 : 32)) return false;
    const int64_t rows_per_lane = (pb.m + lanes - 1) / lanes;
    if (rows_per_lane > (few_blocks ? 4 : 48)) return false;
    *out = make_config(GEMV_VARIANT_T_COLUMNS, c_threads, lanes, kLoadsAligned, unroll, 0, 1);
    return true;
}

// Tiles across a row of k columns for lane classes of c threads (a tile writes c - 1 packs).
int64_t lane_class_row_tiles(int64_t k, int c, int64_t pack) { return (k + (c - 1) * pack - 1) / ((c - 1) * pack); }

// The phased split's slices for config c (its tiles, lanes and unroll): split_k from 4, doubled up to
// 512 while that adds slices and keeps the grid within half a wave of 2048 threads an SM (the
// fastest configs ran 500-1200 threads an SM), halved until the partials fit the workspace.
// False where 4 slices pass half a wave or do not fit.
bool lane_class_slices(const Problem &pb, int sm_count, gemv_config_t c, gemv_config_t *out) {
    const int64_t pack = 16 / (int64_t)dtype_size(pb.dtype()), wave = 2048 * (int64_t)std::max(sm_count, 1);
    const int64_t tiles = mul_sat(lane_class_row_tiles(pb.k, c.threads_per_row, pack), pb.batch);
    const auto slices = [&](int split) {
        const int64_t len = row_slice_len(pb.m, split, (int64_t)c.rows_per_block * c.unroll);
        return (pb.m + len - 1) / len;
    };
    const auto grid_threads = [&](int split) {
        return mul_sat(mul_sat(tiles, slices(split)), (int64_t)c.threads_per_row * c.rows_per_block);
    };
    c.split_k = 4;
    if (2 * grid_threads(4) > wave) return false;
    while (c.split_k < 512 && slices(2 * c.split_k) > slices(c.split_k) && 2 * grid_threads(2 * c.split_k) <= wave)
        c.split_k *= 2;
    while (c.split_k > 4 && workspace_needed(c, pb) > pb.workspace_bytes) c.split_k /= 2;
    if (!runs(c, pb) || workspace_needed(c, pb) > pb.workspace_bytes) return false;
    *out = c;
    return true;
}

// Rows that do not start aligned (odd K, lda or stride_a), 256 rows and 64 columns up, in single
// products of 4 MiB up of rows of 512 bytes up, or batches of 8 to 63 products: phased rows
// split (t_splitm_twopass, vector_loads 3, lanes a multiple of the period: lane classes, each
// row lane one phase class reading aligned packs as they lie, in slices of rows in any phase,
// so the partials are not multiplied by the period). On an H200 against the rules before it
// (benchmarks/NOTES.md section 70): fp16 4097^2 17.9 -> 12.2 us, bf16 2047 x 7001 17.2 -> 11.4,
// fp16 937 x 10031 16.8 -> 9.7 (one pass of element loads before), fp32 8304 x 1341 19.3 -> 13.7;
// fp16 2797 x 2267 x 8 50.9 -> 32.3, 670 x 113 x 8 5.18 -> 3.99 (the stream before), bf16 1746 x 961
// x 8 14.1 -> 10.9 (phased rows in one pass).
// - Tiles of 32 threads from 128 packs a row (8 lanes), else 16 (8 up to 16 packs; 16 lanes):
//   blocks of 256 (the fastest tiles were 16-32 threads of 8-16 lanes on every shape).
// - 4 rows in flight; slices (split_k, a power of two from 4 to 512) as many as keep the grid
//   within half a wave of 2048 threads an SM while they add slices: the fastest configs ran
//   500-1200 threads an SM. Until s53 they stopped at 64, which left single products of 2-4
//   tiles a row (fp32 128-240 columns, 16-bit 256-480) at 200-300 threads an SM: past 64, 36
//   held-out such products of 4 to 256 MiB ran 1.16x (fp32 247710 x 141 53.4 -> 39.1 us, bf16
//   96567 x 265 26.0 -> 18.7; one slower, fp16 7575 x 403 5.43 -> 5.76; NOTES.md section 73).
// - Declined where 4 slices pass half a wave (the batches' one pass, or few long rows) or the
//   partials do not fit the workspace at 4; and where it lost: under 256 rows (fp16 100 x 489 x
//   8 2.84 -> 3.80 us, fp32 229 x 245 x 8 2.95 -> 3.60), rows under 512 bytes (fp32 43475 x 115
//   9.71 -> 11.33 against the split of element loads), 64 products up (fp32 339 x 101 x 64 5.72 ->
//   6.50) and batches on 32-thread tiles under 1024 rows (fp16 547 x 1411 x 8 7.55 -> 8.43).
// - Single products ask it ahead of the stream (since s51; the stream runs rows of 512 bytes up
//   from 32 MiB only where it declines): on an H200, 15 held-out fp32/fp16/bf16 products of 32 to
//   256 MiB ran 1.13-1.57x the stream (bf16 56878 x 925 44.9 -> 28.7 us, fp32 78038 x 597 62.2 ->
//   47.4; benchmarks/NOTES.md section 71).
// lane_classes_split is the family alone (rows that do not start aligned, 256 rows and 64
// columns up), without the regime's bounds: batched_lane_classes_config also asks it for
// batches of 64 up of tall products.
bool lane_classes_split(const Problem &pb, int sm_count, gemv_config_t *out) {
    const int64_t esz = (int64_t)dtype_size(pb.dtype()), pack = 16 / esz;
    if (rows_aligned16(pb) || pb.m < 256 || pb.k < 64) return false;
    const int64_t packs = (pb.k + pack - 1) / pack;
    int c_threads = packs >= 128 ? 32 : packs > 16 ? 16 : 8;
    // Single 16-bit products under 4 MiB: tiles of 16 threads (120 columns, as fp32's 32), 8
    // lanes under 1536 rows. On 17 such products of 1.6-4 MiB they ran 0.94x the time of 32-thread
    // tiles (fp16 1024^2 3.92 us against 4.19; fp16 917 x 991 3.71 against 4.00 on 16 lanes; bf16
    // 1924 x 900 on 16 lanes 4.23 against 4.52 on 8; benchmarks/NOTES.md section 79).
    const bool small_16bit = pb.batch == 1 && esz == 2 && c_threads >= 16 && mul_sat(pb.m, pb.k) * esz < (4 << 20);
    if (small_16bit) c_threads = 16;
    // Batches: a tile half or twice as wide where it covers a row in a fifth fewer columns, the
    // last tile of a row mostly idle otherwise (fp16 5244 x 277 x 8, 3 tiles of 120 columns:
    // 11.20 us, 5 of 56: 10.08; bf16 4621 x 117 x 64, 3 of 56: 26.82, 1 of 120: 21.34). Single
    // products gained nothing (fp16 20011 x 263 8.01 -> 8.21 us; benchmarks/NOTES.md section 72).
    const auto covered = [&](int c) { return lane_class_row_tiles(pb.k, c, pack) * (c - 1) * pack; };
    if (pb.batch > 1)
        for (const int c : {c_threads / 2, c_threads * 2})
            if (c >= 8 && c <= (pb.m < 1024 ? 16 : 32) && 5 * covered(c) < 4 * covered(c_threads)) c_threads = c;
    const int lanes = c_threads == 32 || (small_16bit && pb.m < 1536) ? 8 : 16;
    if (pb.batch > 1 && c_threads == 32 && pb.m < 1024) return false;
    return lane_class_slices(pb, sm_count, make_config(GEMV_VARIANT_T_SPLITM_TWOPASS, c_threads, lanes, kLoadsPhased, 4, 0, 4), out);
}

// Few long rows that do not start aligned (single products of 97 to 1536 rows, 32 MiB up, at
// least a 32-thread tile an SM across a row): phased rows in one pass (t_columns, vector_loads
// 3: a row lane a phase class, 16-byte packs as they lie), 32-thread tiles, 8 lanes (16 from 512
// rows; fp32 only where a row has under 2 tiles an SM: past that 16 lanes ran 1.01-1.16x as long
// on an H200 in s66, 667 x 37766 33.2 against 28.6 us, 690 x 49082 38.5 against 35.5, and under
// it 8 lanes lost, 851 x 27665 25.7 against 28.0; NOTES.md section 86), 4 rows in flight, no
// split. The split above declines there (4 slices pass half a wave) and one element a load ran
// instead, or it split long rows and paid the second pass: on an H200, 12 such products ran
// 1.05-1.51x (fp16 786 x 109909 70.3 -> 46.6 us, cuBLAS 59.7; 1292 x 187258 174.6 -> 118.7; fp32
// 1503 x 29099 55.3 -> 45.4, split before), 33 fresh ones of up to
// 1118 rows 1.25x (min 0.988x); from 1696 rows the split ran up to 1.08x as fast (fp32 1696 x
// 33001: 64.3 us split, 69.7 here). benchmarks/NOTES.md section 80.
// Since s61 (NOTES section 81, results/h200-2026-11-29-s61-run2-t-few-rows.csv, -run3- and
// -run4-vs-previous.txt) also 33 to 96 rows from 6 MiB (16-bit ones from 8, past the realigned
// one pass), where one element a load ran: 16-bit 16-thread tiles of 8 lanes (fp16 81 x 67578
// 8.74 -> 6.00 us, 95 x 276943 29.8 -> 18.8, bf16 47 x 397239 18.5 -> 15.8); fp32 64-thread
// tiles of 4 (33 x 54307, lda + 19, 7.30 -> 4.30; 38 x 128687 13.8 -> 7.0) short of the rows
// that one-lane tiles take (heuristic_columns: 16 tiles of 64 columns an SM), where the lane
// pass ran 0.91-1.16x (61 x 534233 37.2 -> 40.9 us, 95 x 276943 37.4 -> 32.4); and 16-bit rows
// of 97 to 511 from 8 MiB on 16 lanes (bf16 253 x 37575 11.8 -> 9.5, fp16 298 x 48061 15.3 ->
// 11.2), where fp32 lost (120 x 27546 5.80 against 6.03).
bool long_rows_lane_pass_config(const Problem &pb, int sm_count, gemv_config_t *out) {
    const int64_t esz = (int64_t)dtype_size(pb.dtype()), pack = 16 / esz, bytes = mul_sat(mul_sat(pb.m, pb.k), esz);
    if (pb.batch > 1 || rows_aligned16(pb) || pb.m <= 32 || pb.m > 1536) return false;
    int c_threads = 32,
        lanes = pb.m >= 512 && (esz == 2 || lane_class_row_tiles(pb.k, 32, pack) < 2 * (int64_t)std::max(sm_count, 1)) ? 16 : 8;
    if (pb.m <= kOneLaneRows) {
        if (bytes < (esz == 4 ? 6 << 20 : 8 << 20)) return false; // 16 bits: past the realigned one pass (2-8 MiB)
        if (esz == 4 && one_lane_tiles_fill(pb.k, sm_count)) return false; // fp32: one-lane tiles
        c_threads = esz == 4 ? 64 : 16, lanes = esz == 4 ? 4 : 8;
    } else if (bytes < (32 << 20)) {
        if (esz == 4 || pb.m >= 512 || bytes < (8 << 20)) return false;
        lanes = 16;
    }
    if (lane_class_row_tiles(pb.k, c_threads, pack) < std::max(sm_count, 1)) return false;
    *out = make_config(GEMV_VARIANT_T_COLUMNS, c_threads, lanes, kLoadsPhased, 4, 0, 1);
    return runs(*out, pb);
}

// 3 to 32 long rows that do not start aligned (single products; s63 took them from 4 MiB with 4
// tiles an SM across a row, fp32 up to 21 rows; s64 from 1 MiB, below): phased rows in one pass
// (t_columns, vector_loads 3), a row lane a phase class (lanes the period P, 4 for fp32 rows 2
// apart from 8 rows; more on small matrices since s64), 32-thread tiles (64 on one lane), 4 rows in
// flight where a lane walks 3 or more, else 2. One-lane tiles ran there before, on realigned packs
// up to 8 rows, one element a load past them. On an H200 (benchmarks/NOTES.md section 83,
// results/h200-2026-11-29-s63-*): 30 fresh shapes of 5-259 MB, 3 to 29 rows (run 1), 1.239x as
// fast, within 6% of the best of 31 configs where it takes them (2% on the geomean of all 30): fp16
// 16 x 3704445, lda + 21, 71.9 -> 42.4 us; fp32 7 x 206209 5.77 -> 3.73; bf16 22 x 5864870 124.3 ->
// 100.3. Fewer rows than the period leave lanes idle (fp16 3 x 16786824, P 8: 2.1x the realigned
// one-lane tiles' time) and keep those; so do, from 16 MiB, a row a lane (bf16 4 x 11515264, P 4,
// 0.86x in run 3; fp32 4 x 1733607 0.92x) and 16-bit rows of P 8 on up to 16 rows, a lane's rows
// too few for its sums (bf16 16 x 8099415 1.08x, 12 x 2361412 1.12x, 8 x 1902038 at 30 MB 0.83x in
// run 2), where the one-lane tiles stay realigned past 8 rows too (12 x 2361412 45.7 -> 32.4 us on
// elements). fp32 lost from 22 rows (run 2: 23 x 2451364 0.83x, 27 x 159950 0.79x, against one
// element a load on one lane) and on 4 lanes for rows 2 apart under 8 rows (6 x 6193213 0.96x, 3 x
// 5453561 0.75x).
// s64 (NOTES.md section 84, results/h200-2026-11-29-s64-*): also from 1 MiB and under 4 tiles an
// SM, where one-lane tiles or 16 lanes of realigned packs ran 1.3-2.1x slower (fp16 23 x 72289 6.52
// -> 3.07 us; bf16 20 x 121373, lda + 1, 6.99 -> 4.16, 0.74x cuBLAS before): lanes doubled past P
// while a lane walks more than 4 rows and the doubled grid stays within 768 threads an SM (fp32 19
// x 29365 on 8 lanes 2.24 us, 4: 2.87); 16-bit tiles of 16 threads under 4 MiB or 4 tiles of 32 an
// SM (16 x 35930 2.48 against 2.62; past them 16 lost up to 0.90x). Not a row a lane under 4 MiB
// (bf16 8 x 140481, P 8: 3.75 us elsewhere, 4.43 here). fp32 past 21 rows under 16 MiB too, 2 in
// flight from 8 MiB (28 x 95572 8.61 -> 5.53; 23 x 147482 on 4 in flight 7.75, 2: 5.54); fp32 rows
// 2 apart under 8 rows under 8 MiB on 2 lanes (4 x 277290 5.41 -> 4.49).
// s65 (NOTES.md section 85, results/h200-2026-11-29-s65-run1-*, -run2-*): fp32 rows 2 apart under
// 8 rows up to 64 MiB on 64-thread tiles, where 32 had lost from 8 MiB and one-lane tiles ran
// 1.22-1.64x slower (6 x 884207 14.74 -> 9.62 us; 6 x 2281120, 55 MB, 28.6 -> 21.5; 3 x 2500001
// 21.2 -> 17.4 at 2 in flight).
bool few_rows_lane_classes_config(const Problem &pb, int sm_count, gemv_config_t *out) {
    const int64_t esz = (int64_t)dtype_size(pb.dtype()), pack = 16 / esz, bytes = mul_sat(mul_sat(pb.m, pb.k), esz);
    if (pb.batch > 1 || rows_aligned16(pb) || pb.m < 3 || pb.m > 32 || bytes < (1 << 20)) return false;
    if (esz == 4 && pb.m > 21 && bytes >= (16 << 20)) return false;
    const int period = phase_period(pb.lda, (size_t)esz);
    const bool f32_rows_2_apart = esz == 4 && period == 2 && pb.m < 8; // 2 lanes of 64-thread tiles
    if (pb.m < period || (f32_rows_2_apart && bytes >= (64 << 20))) return false;
    if (pb.m == period && bytes < (4 << 20)) return false; // a row a lane
    if (bytes >= (16 << 20) && (pb.m == period || (period == 8 && pb.m <= 16))) { // one-lane tiles, realigned
        if (pb.m <= kOneLaneRealignedRows) return false;                          // as they were
        *out = make_config(GEMV_VARIANT_T_COLUMNS, 64, 1, kLoadsRealigned, 2, 0, 1);
        return one_lane_tiles_fill((pb.k * esz + 15) / 16, sm_count) && runs(*out, pb);
    }
    // Lanes from the period (fp32 rows 2 apart: 4 from 8 rows), doubled on small matrices.
    const int64_t sms = std::max(sm_count, 1);
    const bool narrow = esz == 2 && (bytes < (4 << 20) || lane_class_row_tiles(pb.k, 32, pack) < 4 * sms);
    const auto tile_threads = [&](int lanes) { return lanes == 1 || f32_rows_2_apart ? 64 : narrow ? 16 : 32; };
    const auto grid_threads = [&](int lanes) {
        return mul_sat(lane_class_row_tiles(pb.k, tile_threads(lanes), pack), (int64_t)tile_threads(lanes) * lanes);
    };
    int lanes = esz == 4 && period == 2 && pb.m >= 8 ? 4 : period;
    while (lanes < 16 && (pb.m + lanes - 1) / lanes > 4 && grid_threads(2 * lanes) <= 768 * sms)
        lanes *= 2;
    const int unroll = (pb.m + lanes - 1) / lanes >= 3 && !(esz == 4 && pb.m > 21 && bytes >= (8 << 20)) ? 4 : 2;
    *out = make_config(GEMV_VARIANT_T_COLUMNS, tile_threads(lanes), lanes, kLoadsPhased, unroll, 0, 1);
    return runs(*out, pb);
}

// Fewer rows than the phase period P that start anywhere (single products of 2 to 7 rows: 16-bit
// rows of odd lda or lda 2 mod 4, fp32 rows of odd lda): lane classes of a row a lane (each lane
// its own phase class, which the registry allows where the lanes are at least M), one row in
// flight. Realigned packs on 2-4 lanes, or one-lane tiles, ran there, 1.1-1.6x slower. On an H200
// (benchmarks/NOTES.md section 85, results/h200-2026-11-29-s65-run1-t-below-period.*, -run2-*):
// - 2 rows, 512 KiB to 64 MiB: 2 lanes of 64-thread tiles (fp16 2 x 4985898 35.1 -> 22.8 us;
//   bf16 2 x 524942 5.69 -> 4.01; under it one element a load ran best).
// - 3 or 4 rows from 256 KiB, 3 under 12 MiB (from 15 MB the realigned one-lane tiles ran 1.02-
//   1.16x as fast), 4 under 64 MiB: 4 lanes of 32-thread tiles (fp16 4 x 469281 6.82 -> 4.91, 0.89x
//   cuBLAS before; bf16 3 x 132025 4.24 -> 2.62, 0.76x before; fp32 3 x 718221 9.40 -> 8.18).
// - 16-bit 5 to 7 rows (P 8) from 512 KiB: 8 lanes of 16-thread tiles under 4.75 MiB (fp16 6 x
//   393425 7.26 -> 6.02; bf16 7 x 275878 7.11 -> 5.29, 0.90x cuBLAS before), past it 2 lanes of
//   realigned packs, 64-thread tiles, short of the one-lane tiles' columns (fp16 5 x 636584 10.28
//   -> 7.32; bf16 5 x 997121 14.14 -> 11.34), where 8 lanes ran 1.18-1.29x slower.
// s66 (NOTES.md section 86, results/h200-2026-11-29-s66-run1-t-few-small.csv, -t-one-phase.csv):
// 2 rows of 256-512 KiB one element a load on 2 lanes of 128-thread tiles, where realigned packs ran
// 1.4-1.7x as long (fp16 2 x 71268 3.18 -> 2.04 us, 0.91x cuBLAS before; 2 x 100001 3.39 -> 2.17);
// and rows all in one phase that is not 0 (P 1: lda a whole number of packs, A not aligned) as
// rows fewer than P where few_rows_lane_classes_config does not take them (2 rows, 3-4 under 1
// MiB): fp16 3 x 79820, A 53 off, 3.85 -> 2.34 on realigned packs before (0.77x cuBLAS).
bool rows_below_period_config(const Problem &pb, int sm_count, gemv_config_t *out) {
    const int64_t esz = (int64_t)dtype_size(pb.dtype()), bytes = mul_sat(mul_sat(pb.m, pb.k), esz);
    const int period = phase_period(pb.lda, (size_t)esz);
    if (pb.batch > 1 || rows_aligned16(pb) || pb.m < 2 || (pb.m >= period && period > 1)) return false;
    if (period == 1 && (pb.m > 4 || (pb.m > 2 && bytes >= (1 << 20)))) return false;
    gemv_config_t c;
    if (pb.m == 2) {
        if (bytes < (256 << 10) || bytes >= (64 << 20)) return false;
        c = bytes < (512 << 10) ? make_config(GEMV_VARIANT_T_COLUMNS, 128, 2, kLoadsScalar, 1, 0, 1)
                                : make_config(GEMV_VARIANT_T_COLUMNS, 64, 2, kLoadsPhased, 1, 0, 1);
    } else if (pb.m <= 4) {
        if (bytes < (256 << 10) || bytes >= (pb.m == 3 ? 12 << 20 : 64 << 20)) return false;
        c = make_config(GEMV_VARIANT_T_COLUMNS, 32, 4, kLoadsPhased, 1, 0, 1);
    } else {
        if (bytes < (512 << 10) || one_lane_tiles_fill((pb.k * esz + 15) / 16, sm_count)) return false;
        c = bytes < (19 << 18) ? make_config(GEMV_VARIANT_T_COLUMNS, 16, 8, kLoadsPhased, 1, 0, 1)
                               : make_config(GEMV_VARIANT_T_COLUMNS, 64, 2, kLoadsRealigned, 1, 0, 1);
    }
    *out = c;
    return runs(c, pb);
}

// Few aligned rows (single products; s66, benchmarks/NOTES.md section 86, results/h200-2026-11-29-
// s66-run2-t-aligned-few.csv). 3 to 48 rows of at least 16 one-lane tiles an SM across a row
// (64 threads, a pack each): 2 lanes of 64-thread tiles, 2 rows in flight, where the rules below
// put 4-16 lanes on fewer columns (or one lane a row) and ran 1.2-1.6x as long: bf16 18 x 1394555
// 36.2 -> 22.1 us, 39 x 1213160 44.2 -> 29.0, 11 x 3292264 45.8 -> 34.0; fp16 30 x 1964048 51.3 ->
// 37.7, 4 x 3133640 25.3 -> 20.0 (within 5% of the best of 11 configs on all 8 such problems; the
// misaligned twins' lane classes had run them faster than these aligned rows; run 3, 16 fresh
// 16-bit ones 1.05-1.48x, bf16 33 x 1087280 35.4 -> 23.9). fp32 from 17 rows only: up to 16 rows it
// ran 0.88-1.14x (run 3: 7 x 2250016 24.5 -> 28.0 us, 11 x 5321832 90.5 -> 79.1; 33 x 1087280 55.7 ->
// 45.2). Shorter rows keep those rules (fp32 6 x 494928 and fp16 5 x 832040 ran 1.01-1.07x slower
// here). 3-4 rows of 256 KiB to 1 MiB: 4 lanes of 32-thread tiles, a row a lane, as
// rows_below_period_config reads such rows that do not start aligned (bf16 3 x 131183 2.82 -> 2.38;
// fp16 3 x 149773 2.98 -> 2.50); at 3.7 MB the 2 lanes of 128-thread tiles below ran 1.18x as fast.
bool aligned_few_rows_config(const Problem &pb, int sm_count, gemv_config_t *out) {
    const int64_t esz = (int64_t)dtype_size(pb.dtype()), bytes = mul_sat(mul_sat(pb.m, pb.k), esz);
    if (pb.batch > 1 || !rows_aligned16(pb) || pb.m < 3 || pb.m > 48) return false;
    if (pb.m <= 4 && bytes >= (256 << 10) && bytes < (1 << 20))
        *out = make_config(GEMV_VARIANT_T_COLUMNS, 32, 4, kLoadsAligned, 1, 0, 1);
    else if ((esz == 2 || pb.m > 16) && one_lane_tiles_fill((pb.k * esz + 15) / 16, sm_count))
        *out = make_config(GEMV_VARIANT_T_COLUMNS, 64, 2, kLoadsAligned, 2, 0, 1);
    else
        return false;
    return runs(*out, pb);
}

// Many short aligned rows (single products of more than 2048 rows of up to 128 bytes, up to 1
// MiB): 128 slices of 4-thread tiles of 64 lanes, about one row step a lane, where the split
// below (slices of at least 2 rows a lane) made 8-64 slices and ran 1.14-1.57x as long: fp32
// 3737 x 12 4.53 -> 3.04 us, 7563 x 8 4.95 -> 3.22; bf16 16048 x 17 6.42 -> 4.78, 4996 x 8 4.61
// -> 3.29 (s66, results/h200-2026-11-29-s66-run2-t-aligned-small.csv); from 1.2 MiB that split
// already made 128-256 slices (fp16 17247 x 48: 3.92 us on 256, 4.09 on 128).
bool aligned_short_rows_split_config(const Problem &pb, gemv_config_t *out) {
    const int64_t esz = (int64_t)dtype_size(pb.dtype());
    if (pb.batch > 1 || !rows_aligned16(pb) || pb.m <= 2048 || pb.k * esz > 128 ||
        mul_sat(mul_sat(pb.m, pb.k), esz) > (1 << 20))
        return false;
    // Rows of up to 48 bytes (3 packs): 256 slices; a tile of 4 lanes of packs left most of its
    // lanes idle there and ran 1.02-1.42x the best of 48 configs (fp32 20000 x 5, lda 8: 5.03 us,
    // 3.55 on a lane of packs a row; s71, NOTES.md section 91). Element loads, a column a tile of
    // 256 lanes up to 16 bytes, 2 columns of 64 lanes past them, 4 in flight: a row's last pack
    // short of 16 bytes is read an element at a time in a loop: the lane of packs ran the 29 such
    // rows 1.14x as long as these on average, 1.05-1.45x on 25 (fp32 40000 x 2, lda 4: 4.55 us,
    // 3.15; fp16 60000 x 4, lda 8: 5.04, 3.90), 0.97-1.03x on 4, three of one whole pack (s72,
    // NOTES.md section 92, results/h200-2026-11-29-s72-run1-t-short-aligned-gaps.csv). 16-bit rows of 2-3
    // whole packs with no gap keep the lane of packs (fp16 10000 x 24: 3.16 us, 3.53 so). Longer
    // rows that end short of a pack: element loads, 8 columns a tile of 32 lanes, 4 in flight, 256
    // slices; the packs ran 5 such rows 1.14-1.34x as long (fp32 3737 x 13, lda 16: 3.86 us, 2.89;
    // fp16 8000 x 30, lda 32: 4.52, 3.60; -s72-run3-t-aligned-rows-52-128.csv). Rows of whole packs
    // ran 0.90-1.19x as long, 1.00x on average: they keep the packs.
    const int64_t row = pb.k * esz;
    gemv_config_t c;
    if (row > 48)
        c = row % 16 ? make_config(GEMV_VARIANT_T_SPLITM_TWOPASS, 8, 32, kLoadsScalar, 4, 0, 256)
                     : make_config(GEMV_VARIANT_T_SPLITM_TWOPASS, 4, 64, kLoadsAligned, 2, 0, 128);
    else if (esz == 2 && row > 16 && row % 16 == 0 && pb.lda == pb.k)
        c = make_config(GEMV_VARIANT_T_SPLITM_TWOPASS, 1, 64, kLoadsAligned, 2, 0, 256);
    else
        c = row <= 16 ? make_config(GEMV_VARIANT_T_SPLITM_TWOPASS, 1, 256, kLoadsScalar, 4, 0, 256)
                      : make_config(GEMV_VARIANT_T_SPLITM_TWOPASS, 2, 64, kLoadsScalar, 4, 0, 256);
    while (c.split_k >= 2 && workspace_needed(c, pb) > pb.workspace_bytes) c.split_k /= 2;
    *out = c;
    return c.split_k >= 2 && runs(c, pb);
}

// Single products take it from 4 MiB, and from 1 MiB where the one pass of 16-byte tiles below
// (heuristic_columns, 512-thread blocks) would walk more than 8 rows a lane, or past 2 MiB,
// where one element a load split: on 24 products of 1-4 MiB (fp16 1024^2 5.53 -> 3.92 us, bf16
// 1924 x 900 5.09 -> 4.23, fp32 1662 x 211 3.65 -> 3.22; NOTES.md section 79) it ran within 5% of
// the best of 48 configs; under 1 MiB, or 8 rows a lane, the one pass ran 1.03-1.30x as fast.
bool lane_classes_split_config(const Problem &pb, int sm_count, gemv_config_t *out) {
    const int64_t esz = (int64_t)dtype_size(pb.dtype()), bytes = mul_sat(mul_sat(pb.m, pb.k), esz);
    const bool past_one_pass = bytes >= (1 << 20) && (bytes > (2 << 20) || pb.m > 8 * 32 * esz);
    if (pb.batch > 1 ? pb.batch < 8 || pb.batch >= 64 : (bytes < (4 << 20) && !past_one_pass) || pb.k * esz < 512)
        return false;
    return lane_classes_split(pb, sm_count, out);
}

// Short rows that do not start aligned (single products of rows of 16 to 511 bytes, 256 rows up,
// 32 bytes apart or more) where the stream declines (gaps past the row, or rows past 256 bytes
// under 32 MiB) and one element a load split before: phased rows split on lane classes, the
// narrowest tile of 4 to 32 threads that covers a row (c - 1 packs), blocks of 256 threads (512
// on tiles of 16 and 32: about 1% faster), split_k as lane_class_slices sizes it. On an H200
// (benchmarks/NOTES.md section 82, results/h200-2026-11-29-s62-*): fp16 2491753 x 56, lda 114,
// 307 -> 106 us (cuBLAS 141); fp16 628849 x 38, lda 128, 78.5 -> 23.2; bf16 85285 x 130, lda 135,
// 24.0 -> 12.0; fp32 319184 x 43, lda 243, 43.4 -> 21.5; 40 fresh cases at lda + 200 1.215x, 30
// of rows of 130-500 bytes at lda + 5 1.152x, 36 at lda + 90 1.288x. Floors by row bytes, where
// smaller matrices lost (run 1): 16-bit rows up to 32 bytes from 12 MiB (fp16 355816 x 8 at 5.4
// MB 0.80x; bf16 2500000 x 11, lda 23, 48.9 -> 34.8), fp32 ones not at all (147268 x 8 0.88x,
// 3000000 x 3 0.95x), up to 64 bytes from 8 MiB (bf16 78433 x 29 at 4.3 MB 0.96x), under 128 from
// 4, else 2 (fp16 12523 x 104 at 2.5 MB: 6.30 -> 4.89 in run 1). Rows under a pack ran 0.92-0.99x,
// and rows that need two 32-thread tiles lost (fp32 20178 x 125, packed, 6.20 -> 6.85): declined.
bool short_rows_lane_classes_config(const Problem &pb, int sm_count, gemv_config_t *out) {
    const int64_t esz = (int64_t)dtype_size(pb.dtype()), pack = 16 / esz, row_bytes = pb.k * esz;
    if (pb.batch > 1 || rows_aligned16(pb) || row_bytes < 16 || row_bytes >= 512 || pb.lda * esz < 32 || pb.m < 256 ||
        (row_bytes <= 32 && esz == 4))
        return false;
    const int64_t floor = row_bytes <= 32 ? 12 << 20 : row_bytes <= 64 ? 8 << 20 : row_bytes < 128 ? 4 << 20 : 2 << 20;
    if (mul_sat(pb.m, row_bytes) < floor) return false;
    int c_threads = 4;
    for (; lane_class_row_tiles(pb.k, c_threads, pack) > 1; c_threads *= 2)
        if (c_threads == 32) return false; // past one 32-thread tile (31 packs)
    const int lanes = (c_threads <= 8 ? 256 : 512) / c_threads;
    return lane_class_slices(pb, sm_count, make_config(GEMV_VARIANT_T_SPLITM_TWOPASS, c_threads, lanes, kLoadsPhased, 4, 0, 4), out);
}

// Registers of the batched lane-class one pass (t_columns, kLoadsLaneClasses; ptxas on sm_90,
// CUDA 13.0; tests/test_cpu_kernel_registers.py checks them): the loops at unroll 4 (56 in fp32
// and fp16, 48 in bf16), at unroll 2 (fp32: 44) or one tile (16 bits: 38-39); one step (every row of
// a lane asked for at once) 40 at unroll 4 in fp32, 49 fp16, 56 bf16, and 32 at unroll 2.
int lane_class_pass_registers(gemv_dtype_t dtype, int unroll, bool one_step) {
    const bool f32 = dtype == GEMV_DTYPE_F32, bf16 = dtype == GEMV_DTYPE_BF16;
    if (one_step) return unroll == 4 ? (f32 ? 40 : bf16 ? 56 : 49) : 32;
    return unroll == 4 ? (bf16 ? 48 : 56) : f32 ? 44 : bf16 ? 38 : 39;
}

// Blocks of `threads` an SM holds at those registers (64K an SM, allocated 256 a warp).
int lane_class_pass_blocks_an_sm(gemv_dtype_t dtype, int unroll, bool one_step, int threads) {
    const int per_warp = (lane_class_pass_registers(dtype, unroll, one_step) * 32 + 255) / 256 * 256;
    const int warps = threads / 32;
    return std::max(1, std::min((65536 / per_warp) / warps, 2048 / threads));
}

// Strided batches (8 products up) of rows that do not start aligned (32 rows and 64 columns
// up): phased rows in one pass (t_columns, vector_loads 3: a row lane a phase class, aligned
// packs as they lie, a tile writing c - 1 packs), in place of one element a load (the rule
// below), the stream, the split and, on 32 to 48 rows, realigned packs. On an H200
// (benchmarks/NOTES.md section 69): fp16 174 x 1223 x 512 86.3 -> 60.3 us (cuBLAS 75.0), 884 x
// 3489 x 64 146.3 -> 97.0, 178 x 79 x 4096 60.6 -> 37.3, 924 x 511 x 8 8.02 -> 7.50, fp32 83 x 525 x
// 8 3.85 -> 2.48. From 32 rows since s53 (64 before; section 73): of 345 cases of 32 to 63 rows
// (168 drawn fresh) the 198 moved ran 1.67x (fp16 36 x 97 x 4096 49.1 -> 14.7 us, 33 x 137 x 4096 76.2 ->
// 24.5, fp32 47 x 103 x 64 3.59 -> 2.18; two 0.95-0.97x where the stream ran before:
// fp32 54 x 205 x 4096 57.7 -> 60.7).
// - Tiles: the fewest packs, from 8 threads up to 32, whose c - 1 cover a row; halved (down to 8)
//   while there are fewer tiles than SMs in the batch; over 64 rows declined under half an SM a
//   tile (fp16 339 x 101 x 8, 16 tiles: 4.07 us against 2.79 on one element a load). Up to 64 rows
//   (16 lanes walk them in one step) tiles of 4 threads there, however few (since s54: 59 cases
//   of 8 products 1.24x, fp32 48 x 189 x 8 4.35 -> 1.96 us, fp16 60 x 403 x 8 3.57 -> 2.33; fp16 32 x
//   267 x 8 1.87 -> 1.95 and fp32 64 x 91 x 8 1.85 -> 1.99 lost; NOTES.md section 74). fp32 on 64 to
//   96 rows, or to 256 rows of up to 512 columns, past a wave keeps the stream on tiles past 8
//   threads (100 x 489 x 512: 29.1 us, 8 lanes 32.2); within the wave it gains since s54, on the
//   fewest lanes below (64 x 333 x 64 4.45 -> 3.54 us, 86 x 83 x 512 9.44 -> 6.69, 66 x 7815 x 8
//   7.30 -> 6.83, where 16 lanes had run 8.69).
// - A grid past a wave of 2048 threads an SM at 8 lanes (8 is a multiple of every phase
//   period): 8 lanes, 4 rows in flight from 64 rows a lane, else 2 (fp16 400 x 601 x 512, 50
//   rows a lane: 63.9 against 65.0 us; 924 x 511 x 512, 115: 126.3 against 128.0); fp32 under 64
//   rows 4 lanes (its period is 4) at 4 in flight: fewer lane sums (since s54: 46 cases of 512
//   and 4096 products ran 0.99-1.29x, 36 x 1121 x 4096 228.0 -> 187.8 us).
// - Else lanes doubled while the grid stays within the wave, blocks within 512 threads and
//   a lane more than 2 rows: the fewest lanes that fill 4 rows in flight, since each lane's sum
//   is added in shared memory (fp16 128 x 121 x 64: 64 lanes 4.25 us, 32 3.07; before s54 lanes
//   doubled to 2 rows each); 4 rows in flight (fp16 1746 x 961 x 8: 8 x 64 13.6 us, 8 x 128 at 2 in
//   flight 19.4; 1985 x 247 x 512 on 32 x 16 119.5, the stream 197.0). Then the form of the
//   fewest waves of blocks at the kernel's registers (lane_class_pass_blocks_an_sm) among those
//   lanes at 4 and at 2 rows in flight, and half the lanes (blocks of 256 threads up) at 4 and
//   at 2, ties in that order: 2 in flight where it takes fewer waves (fp16 293 x 1327 x 64, 384
//   blocks of 512, 2 waves at 4 in flight and 1 at 2, 19.68 -> 15.91 us; fp32 815 x 1201 x 64 71.6
//   -> 60.9; NOTES.md section 72), half the lanes where only they do (fp16 129 x 209 x 512, 32 x
//   16 13.28 us, 32 x 8 10.43; fp32 196 x 925 x 64 15.92 -> 14.37), but not at a tie with 2 in
//   flight (fp16 861 x 1025 x 64 on 32 x 16 at 2 32.02 us, 32 x 8 at 4 35.58; section 73). fp32
//   on batches under 64 where a lane has 5 to 32 rows takes 2 in flight (218 x 1367 x 8 5.90 ->
//   5.31; at 4 rows or fewer, one step at 4 in flight, 2 lost: 102 x 243 x 8 2.30 -> 3.13).
// - Where a grid under half the wave leaves a lane more than 32 rows (tall products; until s51
//   declined, unmeasured, to element loads and the stream): 64 products up split by lane
//   classes where 4 slices fit half a wave (lane_classes_split; bf16 13974 x 157 x 64 114.4 ->
//   80.1 us, 4605 x 93 x 64 27.1 -> 18.9), else the one pass stays (fp16 3108 x 433 x 64 75.0 ->
//   45.6, fp32 5358 x 483 x 64 170.8 -> 153.9; fp32 2614 x 2073 x 8 55.3 -> 45.9), but fp32 tiles
//   under 32 threads decline to the stream (fp32 11582 x 79 x 64: 16 x 32 in one pass 78.6 us,
//   the stream 66.4). Tiles of 32 threads kept at 2 a product (fewer than SMs) lost to the
//   stream (fp32 13974 x 157 x 64 149.6 -> 184.2 us): the halving stays. NOTES.md section 71.
bool batched_lane_classes_config(const Problem &pb, int sm_count, gemv_config_t *out) {
    const int64_t sms = std::max(sm_count, 1), wave = 2048 * sms;
    // Smaller problems were not measured; aligned rows take aligned packs.
    if (pb.batch < 8 || pb.m < 32 || pb.k < 64 || rows_aligned16(pb)) return false;
    const int64_t pack = 16 / (int64_t)dtype_size(pb.dtype());
    const auto tiles = [&](int c) { return mul_sat(lane_class_row_tiles(pb.k, c, pack), pb.batch); };
    int c_threads = 8;
    while (c_threads < 32 && (c_threads - 1) * pack < pb.k) c_threads *= 2;
    while (c_threads > 8 && tiles(c_threads) < sms) c_threads /= 2;
    // Up to 64 rows (16 lanes walk them in one step): tiles of 4 threads where 8 leave under half
    // an SM a tile, taken however few.
    const bool one_step_rows = pb.m <= 64;
    if (one_step_rows && 2 * tiles(c_threads) < sms) c_threads = 4;
    const int64_t blocks = tiles(c_threads);
    const bool fp32_few_rows = pb.m >= 64 && (pb.m <= kOneLaneRows || (pb.m <= 256 && pb.k <= 512));
    if (2 * blocks < sms && !one_step_rows) return false;
    int lanes = 8;
    if (mul_sat(blocks, (int64_t)c_threads * lanes) > wave) {
        // fp32 under 64 rows: 4 lanes (its period is 4), fewer lane sums.
        const gemv_config_t four = make_config(GEMV_VARIANT_T_COLUMNS, c_threads, 4, kLoadsPhased, 4, 0, 1);
        if (pack == 4 && pb.m < 64 && runs(four, pb)) {
            *out = four;
            return true;
        }
        if (pack == 4 && fp32_few_rows && c_threads > 8) return false; // the stream
        *out = make_config(GEMV_VARIANT_T_COLUMNS, c_threads, lanes, kLoadsPhased, pb.m >= 64 * lanes ? 4 : 2, 0, 1);
        return true;
    }
    // Lanes doubled while a lane keeps more than 2 rows: the fewest lanes that fill 4 rows in flight.
    while (c_threads * lanes * 2 <= 512 && mul_sat(blocks, (int64_t)c_threads * lanes * 2) <= wave &&
           pb.m > 4 * (int64_t)lanes)
        lanes *= 2;
    if (2 * mul_sat(blocks, (int64_t)c_threads * lanes) < wave && pb.m > 32 * (int64_t)lanes) {
        if (pb.batch >= 64 && lane_classes_split(pb, sm_count, out)) return true;
        if (pack == 4 && c_threads < 32) return false;
    }
    // The form of the fewest waves of blocks at the kernel's registers: the lanes at 4 and 2 rows
    // in flight, then half of them (blocks of 256 threads up); ties in that order. fp32 on small
    // batches with lanes of 5 to 32 rows takes 2 in flight (where 4 is not one step).
    const bool fp32_small = pack == 4 && pb.batch < 64 && pb.m > 4 * (int64_t)lanes && pb.m <= 32 * (int64_t)lanes;
    const auto waves = [&](int l, int unroll) {
        const int64_t slots = sms * lane_class_pass_blocks_an_sm(pb.dtype(), unroll, pb.m <= (int64_t)unroll * l, c_threads * l);
        return (blocks + slots - 1) / slots;
    };
    int best_lanes = lanes, unroll = fp32_small ? 2 : 4;
    int64_t fewest = waves(lanes, unroll);
    for (const int l : {lanes, lanes / 2}) {
        if (l < 8 || (l != lanes && c_threads * l < std::min(256, c_threads * lanes))) continue;
        for (const int u : {4, 2}) {
            if (fp32_small && u == 4) continue;
            const int64_t w = waves(l, u);
            if (w < fewest) fewest = w, best_lanes = l, unroll = u;
        }
    }
    lanes = best_lanes;
    *out = make_config(GEMV_VARIANT_T_COLUMNS, c_threads, lanes, kLoadsPhased, unroll, 0, 1);
    return true;
}

// Strided batches (8 products up) of rows that do not start aligned (64 rows and columns up; one
// element a load) where phased rows decline: one pass, a block a tile of one product, no split.
// The rules below are for single products: on batches they split rows that the grid's products
// already spread over the GPU, or walked 8 lanes of 32 columns whatever the grid (on an H200:
// fp16 96 x 435 x 8 3.72 -> 2.76 us, 77 x 1501 x 512 88.1 -> 48.7; fit to section 67's H100
// grid, benchmarks/NOTES.md section 68).
// - Tiles of 8 columns up to 128 a row, 16 up to 512, else 32; twice as wide (up to 32) from 64
//   products.
// - Lanes from 32 halved, down to 2, until the grid is at most a wave of 2048 threads an SM and
//   each lane has 2 rows; on 32-column tiles 12 rows, down to 8 lanes (more lanes on long rows at
//   2 rows in flight lost to 4: fp16 96 x 1501 x 8 3.62 against 4.43 us; and 4 lanes lost to 8
//   on 77 x 1501 x 8, 5.05 against 3.94). 4 rows in flight from 8 rows a lane (in blocks of at
//   most 512 threads), else 2. Batches under 64 on 16-column tiles then take tiles of 8 and twice
//   the lanes at 2 in flight, within the wave (below; s52).
// - A grid past a wave even at 2 lanes: one-lane tiles of 64 columns on up to 96 rows
//   (kOneLaneRows), each thread walking every row, except on 1 to 1.5 waves of those tiles (32
//   blocks an SM): 1.09 waves ran fp16 83 x 525 x 512 at 28.3 us against the stream's 22.2
//   (1.94 waves ran 68 x 967 x 512 at 29.9 against 34.9; 7.4, 72 x 3879 x 512, 210 us on 8 lanes,
//   cuBLAS 104); there the stream and the rules below. On 97 to 512 rows, products of up to 2
//   MiB whose pack period passes 512 (the stream's block one long period, or none): 2-lane tiles
//   of 64 columns (fp16 174 x 1223 x 512 108.4 -> 86.4 us on 8 lanes of 32, 273 x 723 x 512 87.0 ->
//   78.7 on the stream; 924 x 511 x 512 level with the stream at its 511 threads). Larger products
//   were not measured.
// - Not taken where a lane of a narrower tile walks more than 12 rows, or of a 32-column one more
//   than 64: the split and the stream keep more loads in flight there (fp16 1000 x 107 x 8: 5.25
//   us on the stream, 6.51 one pass), and taller products were not measured.
bool batched_element_config(const Problem &pb, int sm_count, gemv_config_t *out) {
    const int64_t sms = std::max(sm_count, 1), wave = 2048 * sms;
    if (pb.batch < 8 || pb.m < 64 || pb.k < 64) return false; // smaller problems were not measured
    int c_threads = pb.k <= 128 ? 8 : pb.k <= 512 ? 16 : 32;
    if (pb.batch >= 64) c_threads = std::min(2 * c_threads, 32);
    const int64_t blocks = mul_sat((pb.k + c_threads - 1) / c_threads, pb.batch);
    const auto past_a_wave = [&](int lanes) { return mul_sat(blocks, (int64_t)c_threads * lanes) > wave; };
    const auto too_few_rows = [&](int lanes) {
        return c_threads == 32 ? lanes > 8 && pb.m < 12 * (int64_t)lanes : pb.m < 2 * (int64_t)lanes;
    };
    int lanes = 32;
    while (lanes > 2 && (past_a_wave(lanes) || too_few_rows(lanes))) lanes /= 2;
    if (past_a_wave(lanes)) {
        if (pb.m > kOneLaneRows) {
            const size_t esz = dtype_size(pb.dtype());
            if (pb.m > 512 || mul_sat(pb.m * pb.lda, (int64_t)esz) > (2 << 20) || pack_period(pb.lda, esz) <= 512) return false;
            *out = make_config(GEMV_VARIANT_T_COLUMNS, 64, 2, kLoadsScalar, 4, 0, 1);
            return true;
        }
        const int64_t waves_x100 = mul_sat((pb.k + 63) / 64, pb.batch) * 100 / (32 * sms); // of one-lane tiles
        if (waves_x100 >= 100 && waves_x100 < 200 && waves_x100 % 100 < 50) return false;
        *out = make_config(GEMV_VARIANT_T_COLUMNS, 64, 1, kLoadsScalar, 4, 0, 1);
        return true;
    }
    int unroll = (pb.m + lanes - 1) / lanes >= 8 ? 4 : 2;
    if (unroll == 4) lanes = std::min(lanes, max_block_threads(unroll) / c_threads);
    if ((pb.m + lanes - 1) / lanes > (c_threads < 32 ? 12 : 64)) return false;
    // Small batches of 129 to 512 columns: tiles of 8 and twice the lanes, at 2 rows in flight
    // (at most 6 rows a lane), where the grid stays within the wave: twice the blocks, each
    // waiting on half the rows (fp16 241 x 219 x 8: 16 x 32 at 4 in flight 4.04 us, 8 x 64 at 2
    // 3.13; held out, 236 x 187 x 8 3.73 -> 2.69, 204 x 181 x 8 3.42 -> 2.66, and the one loss 174 x
    // 293 x 8 3.14 -> 3.24; benchmarks/NOTES.md section 72).
    if (pb.batch < 64 && c_threads == 16 && lanes <= 32 && pb.m >= 4 * (int64_t)lanes &&
        mul_sat(mul_sat((pb.k + 7) / 8, pb.batch), 16 * (int64_t)lanes) <= wave) {
        c_threads = 8;
        lanes *= 2;
        unroll = 2;
    }
    *out = make_config(GEMV_VARIANT_T_COLUMNS, c_threads, lanes, kLoadsScalar, unroll, 0, 1);
    return true;
}

gemv_config_t heuristic_columns(const Problem &pb, int sm_count) {
    const int esz = (int)dtype_size(pb.dtype());
    const bool small = mul_sat(mul_sat(mul_sat(pb.m, pb.k), esz), pb.batch) <= (256 << 10);
    gemv_config_t batched; // the batched rules' one pass (runs() refuses aligned packs on rows that are not)
    if (pb.batch > 1 && batched_one_pass_config(pb, sm_count, &batched) && runs(batched, pb)) return batched;
    gemv_config_t lane_pass; // the batched lane-class one pass, asked once for both of its uses below
    const bool lane_pass_applies = pb.batch > 1 && batched_lane_classes_config(pb, sm_count, &lane_pass);
    gemv_config_t whole_packs; // the stream's or phased rows' aligned packs, before element loads
    if (long_rows_lane_pass_config(pb, sm_count, &whole_packs) ||
        few_rows_lane_classes_config(pb, sm_count, &whole_packs) || rows_below_period_config(pb, sm_count, &whole_packs) ||
        aligned_few_rows_config(pb, sm_count, &whole_packs) || aligned_short_rows_split_config(pb, &whole_packs))
        return whole_packs;
    for (const int loads : {kLoadsAligned, kLoadsRealigned, kLoadsScalar}) {
        if (loads == kLoadsScalar && pb.batch > 1) {
            if (lane_classes_split_config(pb, sm_count, &batched)) return batched;
            if (lane_pass_applies && runs(lane_pass, pb)) return lane_pass;
            if (batched_element_config(pb, sm_count, &batched) && runs(batched, pb)) return batched;
        }
        if (loads == kLoadsScalar && pb.m > 48 &&
            ((pb.batch == 1 && lane_classes_split_config(pb, sm_count, &whole_packs)) || // batches asked it above
             t_stream_config(pb, sm_count, &whole_packs) ||
             phased_columns_config(pb, sm_count, &whole_packs) ||
             short_rows_lane_classes_config(pb, sm_count, &whole_packs)))
            return whole_packs;
        const bool vec = loads != kLoadsScalar;
        // Realigned packs load twice the bytes of a row through L1: they pay on few long rows
        // beyond small matrices (2 x 4452910 bf16 225 -> 31 us, 47 x 2202 fp32 4.1 -> 3.2), where
        // one element a load runs short of loads in flight; from 64 rows, L1 is the limit
        // (fp32 97394 x 743 128 -> 212 us; -s23-op-t-realigned-first-form.txt).
        // Batches of 32 to 48 rows take lane classes where those apply (fp16 33 x 137 x 4096: realigned
        // packs 76.0 us, 32 x 8 lane classes 24.3; NOTES.md section 73).
        if (loads == kLoadsRealigned && (pb.m > 48 || small || pb.k * esz < 64 || lane_pass_applies)) continue;
        const int64_t packs = vec ? (pb.k * esz + 15) / 16 : pb.k;
        // Few rows of many columns that do not start aligned: one row lane, 64 threads across
        // a tile, each thread walking every row, so no lane sums and no partials; the tiles
        // give the parallelism: at least 16 an SM (1024 threads; at 5-9 an SM, fp32 30 x 40001
        // ran 6.0 against 3.7 us, bf16 11 x 74499 4.0 against 3.6). On the H100 (NOTES section 40):
        // 3 to 8 rows on realigned packs (bf16 4 x 52562781 396 against 531 us, fp32 3 x
        // 2718414 26.5 against 30.1; 2 rows ran 0.93-1.14x and keep two lanes), 9 to 96 on
        // one element a load, which beat realigned packs there (fp32 21 x 305498 13.7 against
        // 23.6 us; one lane on realigned packs ran 33 x 261971 0.75x, 47 x 779470 0.89x) and
        // the lanes below (54 x 427342 fp32 37.4 against 52.1, bf16 25.7 against 50.0; 92 x
        // 590022 1.11-1.44x); from 120 rows one lane ran 0.88-0.97x. 16-bit ones of 33 rows up
        // from 8 MiB take the lane-class one pass before this (s61, long_rows_lane_pass_config).
        const auto many_tiles = [&](int64_t row_units) {
            return !small && pb.batch == 1 && one_lane_tiles_fill(row_units, sm_count);
        };
        const bool element_rows = pb.m > kOneLaneRealignedRows && pb.m <= kOneLaneRows && many_tiles(pb.k);
        if (loads == kLoadsRealigned && element_rows) continue; // one element a load, one lane (next)
        if ((loads == kLoadsRealigned && pb.m >= 3 && pb.m <= kOneLaneRealignedRows && many_tiles(packs)) ||
            (loads == kLoadsScalar && element_rows)) {
            const gemv_config_t c = make_config(GEMV_VARIANT_T_COLUMNS, 64, 1, loads, pb.m >= 8 ? 4 : 2, 0, 1);
            if (runs(c, pb)) return c;
        }
        // Small matrices of aligned rows past 128 bytes (65 rows up, one product, up to 4 MiB):
        // configs that run the column kernel's one-step form (each lane at most `unroll` rows of
        // its slice; columns.cu), 4 rows in flight. Up to 256 rows one pass: up to 256 KB the
        // 4-pack tiles of 64 lanes below, but every row at once (bf16 178 x 256 2.84 -> 1.97 us,
        // where 3 rows a lane took 2 steps); past it 8-pack tiles, 32 lanes up to 128 rows (bf16
        // 123 x 1168 4.67 -> 1.83), 64 up to 256. Beyond, slices of 64 rows on 16 lanes (bf16
        // 1121 x 96 4.56 -> 3.08, fp32 1203 x 488 4.88 -> 3.70). 8-pack tiles lost up to 256 KB
        // (fp32 238 x 144 2.29 against 2.00), and so did 4 rows in flight to 2 on up to 64 rows
        // (fp16 43 x 80 1.54 against 1.45; those take the rules below). NOTES.md section 64.
        if (loads == kLoadsAligned && pb.batch == 1 && pb.m > 64 && pb.k * esz > 128 &&
            mul_sat(mul_sat(pb.m, pb.k), esz) <= (4 << 20)) {
            const bool one_pass = pb.m <= 256;
            const gemv_config_t c =
                !one_pass ? make_config(GEMV_VARIANT_T_SPLITM_TWOPASS, 8, 16, kLoadsAligned, 4, 0, (int)((pb.m + 63) / 64))
                : small   ? make_config(GEMV_VARIANT_T_COLUMNS, 4, 64, kLoadsAligned, pb.m <= 128 ? 2 : 4, 0, 1)
                          : make_config(GEMV_VARIANT_T_COLUMNS, 8, pb.m <= 128 ? 32 : 64, kLoadsAligned, 4, 0, 1);
            if (runs(c, pb) && workspace_needed(c, pb) <= pb.workspace_bytes) return c;
        }
        // Latency-bound matrices (33 to 2048 rows, up to 2 MiB) of rows that start anywhere, or
        // of aligned rows of up to 128 bytes (a pack or few a row): one pass of 512-thread blocks
        // on one element a load, every row in flight at once, on tiles of 16 bytes of a row,
        // narrowed (to 2 columns, up to 1 MiB) until every SM has a block, at most 2 an SM. The
        // tiles below (32 columns, 8 lanes; 16-byte packs) walked each row in turn or split and
        // paid the second pass: bf16 244 x 81 4.17 -> 2.04 us, fp16 689 x 24 4.67 -> 2.85, bf16
        // 795 x 1057 6.68 -> 4.53, fp16 1169 x 169 4.49 -> 3.45 (cuBLAS 2.83, 3.71, 4.79, 3.87).
        // Past those bounds they lost: 4-byte tiles on 2 MB (fp16 2000 x 523 5.06 -> 7.19 us),
        // 3 or more blocks an SM (fp16 78 x 21673 5.45 -> 15.94, 40 x 3001 2.37 -> 2.80), 3.3 MB
        // (bf16 708 x 2340 5.80 -> 6.81). NOTES.md section 58.
        // Rows that start anywhere narrow only under half a block an SM (s59, NOTES.md section
        // 79): fp32 512^2 3.39 -> 2.90 us on 4-column tiles, 872 x 306 3.46 -> 2.97, 558 x 300 3.05 ->
        // 2.76 (cuBLAS 2.9-3.0); 16-bit 525 x 715 and 628 x 645 ran 0.97-1.00x.
        const int64_t bytes = mul_sat(mul_sat(pb.m, pb.k), esz), sms = std::max(sm_count, 1);
        if ((loads == kLoadsScalar || (loads == kLoadsAligned && pb.k * esz <= 128)) && pb.batch == 1 &&
            pb.m > 32 && pb.m <= 2048 && bytes <= (2 << 20)) {
            int cols = 16 / esz;
            while (cols > 2 && (pb.k + cols - 1) / cols < (rows_aligned16(pb) ? sms : sms / 2)) cols /= 2;
            const int lanes = 512 / cols;
            const gemv_config_t c = make_config(GEMV_VARIANT_T_COLUMNS, cols, lanes, kLoadsScalar,
                                                rows_in_flight((pb.m + lanes - 1) / lanes), 0, 1);
            if ((cols * esz == 16 || bytes <= (1 << 20)) && (pb.k + cols - 1) / cols <= 2 * sms && runs(c, pb)) return c;
        }
        // Beyond them (16-bit rows that start anywhere, 2 to 8 MiB, one product): one pass of
        // realigned packs, 8 threads across a tile, 2 rows in flight. Rows of at most 64 columns
        // an SM on at least 0.75 tiles an SM, where one element a load splits and pays the second
        // pass: 64 lanes, 49 to 192 rows (3 a lane); rows of more than 256 columns an SM, where
        // element loads run 32-column tiles of 8 lanes in more than two waves of 4 blocks an SM:
        // 16 lanes (the tiles, over 4 an SM, in 128-thread blocks), 49 to 80 rows (5 a lane).
        // fp16 184 x 8135 7.00 -> 4.28 us, 147 x 8009 6.16 -> 4.32, 49 x 71945 9.98 -> 6.27, 55 x
        // 59991 9.12 -> 6.33 (cuBLAS 4.85, 5.19, 6.47, 6.57). Outside those bounds it lost: more
        // rows a lane (fp16 194 x 6463 5.58 -> 6.36, 95 x 39607 7.95 -> 8.63), fewer tiles (202 x
        // 5809, 91 tiles, 5.70 -> 6.16), fewer waves (170 x 24173 7.40 -> 8.13), fp32 (230 x 5269
        // 5.41 -> 6.11, 97 x 18031 5.47 -> 6.93). NOTES.md section 59.
        if (loads == kLoadsScalar && esz == 2 && pb.batch == 1 && pb.m > 48 && bytes > (2 << 20) && bytes <= (8 << 20)) {
            const int64_t realigned_tiles = ((pb.k * esz + 15) / 16 + 7) / 8;
            const bool few_columns = pb.k <= 64 * sms && 4 * realigned_tiles >= 3 * sms && pb.m <= 192,
                       many_columns = pb.k > 256 * sms && pb.m <= 80;
            const gemv_config_t c = make_config(GEMV_VARIANT_T_COLUMNS, 8, few_columns ? 64 : 16, kLoadsRealigned, 2, 0, 1);
            if ((few_columns || many_columns) && runs(c, pb)) return c;
        }
        // Beyond them (rows that start anywhere, one product, 33 rows up): one pass of one element
        // a load where each lane walks at most 16 rows, about 1024 threads an SM in all (lanes
        // times K; 4 to 32 lanes, at least 3 rows a lane), 512-thread blocks from 16 lanes, else
        // 256, 4 rows in flight. The 32-column tiles of 8 lanes below split such matrices and paid
        // the second pass, or walked m / 8 rows a lane in one: on 59 of 155 shapes of 0.3-22 MB it
        // ran 1.03-1.66x as fast as them (fp16 64 x 2945 3.72 -> 2.25 us, 300 x 2173 5.51 -> 4.08,
        // 256 x 5813 5.15 -> 4.35; fp32 130 x 6242 5.56 -> 3.86, 53 x 104815 14.62 -> 11.91), 1.32x;
        // on 47 held-out cases 1.31x, min 1.015 (fp16 100 x 7475 6.10 -> 4.02). More rows a lane lost to
        // the split (fp16 475 x 4833 6.71 against 5.76 us), and so did fp32 past 8 rows a lane on
        // 32 lanes (457 x 3115 5.86 against 5.47; 16-bit there: 1.09-1.20x); fewer threads were
        // not measured past 8 rows a lane. NOTES.md section 60. On 4 lanes past 256 columns an
        // SM (lanes clamped up), to 24 rows a lane where the 64-column tiles fill their last wave
        // (8 blocks an SM) at least half: against the split's 32-column tiles of 8 lanes, 12
        // held-out cases 1.22x, min 1.06 (fp16 82 x 57493 9.90 -> 7.31 us); a last wave of 1-11%
        // lost (fp32 91 x 68539 13.71 -> 14.17), and so did 0.6 waves (96 x 40275 0.98x). NOTES 61.
        if (loads == kLoadsScalar && pb.batch == 1 && pb.m > 32) {
            const int64_t target = 1024 * sms;
            const int lanes = std::min(std::clamp(pow2_floor(target / pb.k), 4, 32), std::max(4, pow2_floor(pb.m / 3)));
            const int64_t rows_per_lane = (pb.m + lanes - 1) / lanes;
            const gemv_config_t c = make_config(GEMV_VARIANT_T_COLUMNS, (lanes >= 16 ? 512 : 256) / lanes, lanes, kLoadsScalar, 4, 0, 1);
            const int64_t blocks_an_sm = 2048 / (c.threads_per_row * c.rows_per_block); // 32 registers a thread
            const int64_t waves_x100 = (pb.k + c.threads_per_row - 1) / c.threads_per_row * 100 / (blocks_an_sm * sms);
            const bool last_wave_half_full = waves_x100 >= 85 && waves_x100 % 100 >= 50;
            const int64_t most_rows =
                esz == 4 && lanes == 32 ? 8 : lanes == 4 && pb.k > 256 * sms && last_wave_half_full ? 24 : 16;
            if (rows_per_lane <= most_rows && (rows_per_lane <= 8 || mul_sat(pb.k, lanes) >= target / 2) && runs(c, pb)) return c;
        }
        // Few rows (8 to 48) that start anywhere, one product, up to 8 MB, that no rule above took:
        // phased packs (each lane shifts its rows into phase), 128-thread blocks of 8 lanes up to 32
        // rows, 16 past them, 4 rows in flight. s69 (benchmarks/NOTES.md section 89, results/
        // h200-2026-11-29-s69-run4-t-few-rows.csv, 25 problems of 3-36 rows against 42 configs): where
        // the realigned tiles below (256 threads, 1-2 rows in flight) ran, 1.07x the best time
        // against their 1.39x (fp32 28 x 5305 3.04 -> 1.78 us; bf16 19 x 17377 3.60 -> 2.30; fp32 36 x
        // 33508 4.07 -> 3.25); 30 fresh cases of 8-48 rows 1.43x, 2.02x cuBLAS (-run5-vs-previous.txt).
        if (loads == kLoadsRealigned && pb.batch == 1 && pb.m >= 8 && bytes <= (8 << 20)) {
            const int lanes = pb.m > 32 ? 16 : 8;
            const gemv_config_t c = make_config(GEMV_VARIANT_T_COLUMNS, 128 / lanes, lanes, kLoadsPhased, 4, 0, 1);
            if (runs(c, pb)) return c;
        }
        int c_threads = (int)std::min<int64_t>(vec ? (small ? 4 : packs > 32 ? 16 : 8) : 32, pow2_ceil(packs));
        int64_t tiles = (packs + c_threads - 1) / c_threads;
        const int threads = tiles >= 2 && tiles <= 4 && pb.m >= 16384 ? 512 : 256;
        int lanes = threads / c_threads;
        if (pb.m < lanes) { // idle lanes: wider tiles instead, whole warps
            lanes = pow2_floor(pb.m); // every lane a row or two
            c_threads = (int)std::min<int64_t>(threads / lanes, pow2_ceil(packs));
            while (c_threads * lanes < 32) lanes *= 2;
            tiles = (packs + c_threads - 1) / c_threads;
        }
        const int64_t rows_per_lane = (pb.m + lanes - 1) / lanes;
        gemv_config_t c = make_config(GEMV_VARIANT_T_COLUMNS, c_threads, lanes, loads, rows_in_flight(rows_per_lane), 0, 1);
        if (!small || rows_per_lane > 16) {
            // One element a load (rows that start anywhere) on at most 2 tiles an SM wants
            // twice the blocks, 8 an SM (NOTES.md section 41: fp16 1539 x 3179, 100 tiles,
            // 8.4 against 10.7 us; 7083 x 655 8.3 against 11.6); more tiles keep 4 (bf16 421 x
            // 12810, 400 tiles, ran 10.4 against 9.4 us in 2 slices).
            const int64_t blocks = (!vec && mul_sat(tiles, pb.batch) <= 2 * sms ? 8 : 4) * sms;
            int64_t want = std::min<int64_t>(std::max<int64_t>(1, blocks / std::max<int64_t>(1, mul_sat(tiles, pb.batch))),
                                             tiles <= 1 ? 512 : 64);
            // Single products of aligned rows with gaps (lda > K) from 64 MiB on up to 3 tiles an
            // SM: 8 slices or more. On an H200 the 1-2 slices above ran such rows at up to half
            // speed (bf16 1621 x 34797, lda 34848, A 96 bytes past 256: 74.4 us on one slice, 40.0
            // on 8, cuBLAS 65.1; 1100 x 40005, lda 40056: 53.2 -> 32.3); 9 such problems ran 0.99-
            // 1.87x as fast on 8 (all had A off 256 bytes too: which of the two matters is not
            // known). Dense rows gained and lost alike (13 problems 0.89-1.17x: bf16 6000 x 12288
            // 40.5 -> 45.4 us, 2600 x 24000 37.4 -> 33.4), and so did more tiles (fp16 4096 x 65536
            // on 512: 125.6 -> 132.8 us) and smaller matrices (fp16 200 x 33000: 7.9 on 2 slices,
            // 9.2 on 8). benchmarks/NOTES.md section 92, results/h200-2026-11-29-s72-run3-t-large-
            // aligned.csv, -run4-t-mid-large-aligned.csv, -run5-vs-previous.txt.
            if (vec && pb.batch == 1 && pb.lda > pb.k && bytes >= (int64_t(64) << 20) && tiles <= 3 * sms)
                want = std::max<int64_t>(want, 8);
            gemv_config_t s = c;
            // Fewer rows in flight, more slices; but one element a load on 16 tiles up, one product,
            // keeps 4 in flight: at 2 it ran 1.18x as long on 41 shapes (fp32 640 x 1085 5.68
            // against 4.26 us; NOTES.md section 60). Fewer tiles and batches were not measured.
            if (s.unroll == 4 && pb.m / (lanes * 4) < want && (vec || tiles < 16 || pb.batch > 1)) s.unroll = 2;
            s.variant = GEMV_VARIANT_T_SPLITM_TWOPASS;
            s.split_k = pow2_floor(std::min<int64_t>(want, std::max<int64_t>(1, pb.m / ((int64_t)lanes * s.unroll))));
            while (s.split_k >= 2 && workspace_needed(s, pb) > pb.workspace_bytes) s.split_k /= 2;
            if (s.split_k >= 2 && runs(s, pb)) return s;
        }
        if (runs(c, pb)) return c;
    }
    return make_config(GEMV_VARIANT_T_COLUMNS, 32, 8, 0, 1, 0, 1); // scalar: runs every op T problem
}

// A quantized config with as many of its K slices as the workspace holds (one needs none).
gemv_config_t within_workspace(gemv_config_t c, const Problem &pb) {
    while (c.split_k > 1 && workspace_needed(c, pb) > pb.workspace_bytes) c.split_k = c.split_k > 2 ? c.split_k / 2 : 1;
    return c;
}

} // namespace

bool t_misaligned_regime(const Problem &pb, int sm_count) {
    gemv_config_t c;
    return pb.op == GEMV_OP_T && !pb.quantized() && pb.m > 48 && !rows_aligned16(pb) &&
           (t_stream_config(pb, sm_count, &c) || lane_classes_split_config(pb, sm_count, &c) ||
            phased_columns_config(pb, sm_count, &c));
}

bool qmma_in_place_shares_evenly(const gemv_config_t &c, const Problem &pb, int sm_count) {
    const int64_t tile_rows = 16 * (int64_t)c.rows_per_block, tiles = (pb.m + tile_rows - 1) / tile_rows;
    const double sms = std::max(sm_count, 1);
    const double slots = sms * std::max(1, 1024 / (c.threads_per_row * c.rows_per_block)); // 64 registers a thread
    const double share = tiles <= slots ? tiles / sms : tiles / slots; // blocks an SM, or waves
    return share / std::ceil(share) >= 0.8;
}

namespace {

// What the x-held rules read of a quantized problem.
struct XHeldShape {
    bool mma_format; // int4 in fp16, symmetric or integer zeros, groups of 128 up: q_mma's formats
    bool holds;      // q_mma_x_held takes it: int4, or int8 in fp16 with groups of 64 up (or one a
                     // row), and x in place
    int64_t codes, steps, tiles; // steps of 128 columns (int4) or 64 (int8), tiles of 16 rows
};
XHeldShape x_held_shape(const Problem &pb) {
    const bool f16 = pb.dtype() == GEMV_DTYPE_F16, int8 = pb.qw.bits == 8;
    const int64_t step_cols = int8 ? 64 : 128;
    return {pb.qw.bits == 4 && f16 && pb.qw.zero_mode != GEMV_QZERO_FLOAT && !q_groups_under_a_step(pb.qw),
            (pb.qw.bits == 4 || (int8 && f16 && (pb.qw.group_size == 0 || pb.qw.group_size >= 64))) && qmma_x_in_place_ok(pb),
            mul_sat(pb.m, pb.k), (pb.k + step_cols - 1) / step_cols, (pb.m + 15) / 16};
}

// q_mma_rounds: a 16-row tile a block of `warps` warps taking `round_steps` steps a round, K in
// `split` slices (1: unsplit).
gemv_config_t rounds_form(int warps, int round_steps, int split = 1) {
    return make_config(GEMV_VARIANT_Q_MMA_ROUNDS, 32 * warps, 1, kLoadsAligned, round_steps, 0, split);
}

// x held's smaller-matrix form: 8 warps of s steps, K in `split` slices, the tiles a block
// keeping the slices' blocks within one wave (3 blocks an SM at one step, 2 at two); rounding
// the share up must not spill a few blocks into a second wave (3193 x 27104: 405 blocks for 396
// slots ran 0.92x x held's larger form; s35).
gemv_config_t x_held_small_form(const XHeldShape &xs, int s, int split, int64_t sms) {
    const int64_t wave = (s == 1 ? 3 : 2) * sms;
    int64_t tpb = (xs.tiles * split + wave - 1) / wave;
    if ((xs.tiles + tpb - 1) / tpb * split > wave && split <= wave)
        tpb = (xs.tiles + wave / split - 1) / (wave / split);
    return make_config(GEMV_VARIANT_Q_MMA_X_HELD, 256, (int)std::clamp<int64_t>(tpb, 1, 64), kLoadsAligned, s, 0, split);
}

} // namespace

// Smaller int4 and int8 matrices (512 rows up, 2^21 codes up) are latency-bound: there x held
// runs 8 warps a block, and K in one slice where 8 warps of 1 or 2 steps cover it (9 to 16
// steps up to 2^25 codes, 8 up to 2^23), else in slices of 8 steps (up to 2^23 codes, not
// q_mma's formats), each warp one chunk; the tiles shared out over one wave of 2 blocks an SM
// at 2 steps a chunk (124 registers), 3 at one. At 8 steps and more rows the larger rule
// runs faster (16384 x 1024 fp16 6.5 against 7.2 us, 32768 x 1024 9.5 against 11.5;
// -s21-x-held-small-check.txt), at 16 steps this one (16384 x 2048 9.6 against 11.6). Against
// the previous rules, 78 cases (3 formats x 26 shapes; benchmarks/NOTES.md section 34,
// results/h100-2026-11-26-s21-x-held-small-vs-previous.txt): 1.13x, bf16 float zeros 6397 x
// 1219 5.5 against 8.1 us, 2560 x 1408 4.3 against 5.5, int4 g32 fp16 5000 x 1500 6.5 against
// 9.4, fp16 int4 g128 16960 x 1152 7.9 against 9.8. q_mma's formats keep q_mma past 16 steps
// (2048 x 4096 6.2 against 5.7 staged) and at one wave of in-place tiles (4096 x 2048 4.9
// against 4.8). int8 (fp16, a step 64 columns) against q_rows, 18 cases (-s21-int8-x-held-
// small-vs-previous.txt): 1.17x, min 0.99x (1800 x 2500 8.3 against 5.1 us, 2048 x 1024 4.4
// against 3.0). Long int4 rows on few tiles past 16 steps take it too (s34, NOTES.md section
// 52, -s34-long-rows-*.txt): under 2048 rows from 2^23 codes, where bf16, float zeros and
// groups under 128 fell to q_rows (2008 x 8704 bf16 float zeros 13.97 us against 7.84, 1536
// x 11008 15.96 against 7.69; 800 x 65536 fp16 39.5 against 15.4 in the benchmark) and q_mma's
// formats to q_mma or q_rows (fp16 640 x 28672 13.16 against 7.80, 1900 x 16384 20.59 against
// 10.75), and in groups of 128 up to 1.5 tiles an SM up to 2^25 codes (fp16 2944 x 6144 9.02
// against 7.44; bf16 float zeros 2048 x 11008 ran x held's larger form). s36 (NOTES.md section
// 54): int4 at 9 to 16 steps past 2^25 codes too, K unsplit where the larger form split it in
// two (262144 x 1280 bf16 74.4 us against 89.7, 32768 x 1152 11.2 against 13.4; past 128 tiles
// an SM, regime (g) of q_mma_rounds first); and int4 rows of 257 to 896 columns (3 to 7 steps)
// past rounds' regime (f) up to 6 tiles an SM (9462 x 640 bf16 float zeros 4.58 against q_rows'
// 6.56, 12672 x 896 fp16 5.16 against q_mma's 6.22; rounds' four warps keep 3 and 4 steps to 8
// tiles an SM). False where it does not apply (or its slices find no workspace).
bool x_held_small_config(const Problem &pb, int sm_count, gemv_config_t *out) {
    if (!pb.quantized()) return false;
    const XHeldShape xs = x_held_shape(pb);
    // Long int4 rows (past 16 steps) on few tiles (s34, s35): under 2048 rows at any size; from
    // 2048 to 4095 rows up to 1.5 tiles an SM (groups of 32: 1.1) to 2^25 codes, or past 2^24
    // codes (float zeros in groups of 128 up: 2^25; 4000 x 6000 0.97x) in groups of 128 up and
    // float zeros' groups of 64 (integer zeros g64 ran 0.95-0.97x, g32 0.97-1.0x); q_mma's
    // formats from 2048 rows only past 2^23 codes. int8 there was not measured: it keeps q_rows.
    // q_mma_rounds comes first (its regimes (a) and (e)).
    const int64_t sms = std::max(sm_count, 1);
    const bool few_tiles = pb.qw.group_size == 32 ? 10 * xs.tiles <= 11 * sms : 2 * xs.tiles <= 3 * sms;
    const bool sub_groups = q_groups_under_a_step(pb.qw), float_zeros = pb.qw.zero_mode == GEMV_QZERO_FLOAT;
    const bool float_g128 = float_zeros && !sub_groups, float_g64 = float_zeros && pb.qw.group_size == 64;
    const bool long_rows =
        pb.qw.bits == 4 &&
        (pb.m < 2048 || (pb.m < 4096 && (!xs.mma_format || xs.codes > ((int64_t)1 << 23)) &&
                         ((few_tiles && xs.codes <= ((int64_t)1 << 25)) ||
                          (xs.codes > ((int64_t)1 << (float_g128 ? 25 : 24)) && (!sub_groups || float_g64)))));
    bool small;
    if (!xs.holds || xs.steps < 3)
        small = false;
    else if (xs.steps <= 7) // int4 rows of 257 to 896 columns past rounds' regime (f), to 6 tiles an SM
        small = pb.qw.bits == 4 && xs.tiles <= 6 * sms;
    else if (xs.steps > 16) // int8 (int4: long rows)
        small = long_rows || (pb.m >= 512 && !xs.mma_format && xs.codes >= ((int64_t)1 << 21) &&
                              xs.codes <= ((int64_t)1 << 23));
    else // 8 to 16 steps (int4 past 8: past 2^25 codes too)
        small = pb.m >= 512 && xs.codes >= ((int64_t)1 << 21) &&
                (xs.codes <= ((int64_t)1 << (xs.steps <= 8 ? 23 : 25)) || (pb.qw.bits == 4 && xs.steps > 8)) &&
                !(xs.mma_format && pb.m >= 4096 && xs.tiles <= 2 * sms);
    if (!small) return false;
    const int s = xs.steps > 16 || xs.steps <= 8 ? 1 : 2;
    const int split = xs.steps <= 16 ? 1 : (int)std::min<int64_t>((xs.steps + 7) / 8, 1024);
    *out = x_held_small_form(xs, s, split, sms);
    return workspace_needed(*out, pb) <= pb.workspace_bytes;
}

// int8 weights (fp16 or bf16, any zero mode and group size), x contiguous and aligned, from
// 1024 rows and 2^21 codes (rows of 1536 codes up from 8192 rows): q_block_rows, the dense
// row kernels' skeleton, 2 rows a block, as many blocks as row pairs. Threads a block: 256
// under 2048 rows, 64 from 3072 rows on rows of up to 4096 codes, else 128 (at most a row's
// packs); 2 packs a row in flight past 2^26 codes, else 1. Fit to a sweep of its 18 configs
// on 26 shapes and formats (benchmarks/NOTES.md section 41,
// results/h100-2026-11-27-s27-q-block-rows-sweep.txt): within 3% of each shape's best but
// 5003 x 7392 (16.5 against 16.1 us) and 4096 x 2048 (5.4 against 4.9); against the
// dispatch it replaces (x held, q_rows): 1024 x 2048 2.6 against 3.7 us, 4096^2 7.8 against
// 8.8, 28672 x 8192 78 against 88, bf16 integer zeros 2048^2 3.6 against 5.1. Many short rows
// make blocks too small to pay for themselves (63577 x 1058: 49.2 against 33.4 us, 11097 x 1264
// 9.5 against 8.9; -s27-q-block-rows-first-rule-vs-previous.txt): they keep the rules below.
bool q_block_rows_config(const Problem &pb, int, gemv_config_t *out) {
    if (!pb.quantized() || pb.qw.bits != 8 || !qmma_x_in_place_ok(pb) || pb.m < 1024 ||
        mul_sat(pb.m, pb.k) < ((int64_t)1 << 21) || (pb.k < 1536 && pb.m >= 8192))
        return false;
    const int64_t packs = (pb.k + 15) / 16;
    const int want = pb.m < 2048 ? 256 : pb.m >= 3072 && pb.k <= 4096 ? 64 : 128;
    const int threads = (int)std::clamp<int64_t>(std::min<int64_t>(want, pow2_ceil(packs)), 32, want);
    *out = make_config(GEMV_VARIANT_Q_BLOCK_ROWS, threads, 2, kLoadsAligned, mul_sat(pb.m, pb.k) > ((int64_t)1 << 26) ? 2 : 1,
                       0, 1);
    return true;
}

// int4 weights, x contiguous and aligned: q_mma_rounds, a 16-row tile a block of 8 warps (fewer
// in (f), (h) and (k)), K unsplit but in (k), in the regimes below (T tiles, the H100's S = 132
// SMs). Steps a round: 2 (110-118 registers: two blocks an SM) or 1 (60-78: three). Groups of
// 32 and 64 (s32, NOTES.md section 49: x held or q_rows ran them before; bf16 float zeros g64
// 4096^2 9.63 -> 7.92 us, fp16 integer zeros g32 8192 x 2048 7.51 -> 6.26) take the same
// regimes to 4096 columns.
// (a) Any dtype and zero mode, 2048 to 4096 rows up to 2^24 codes, 2048 columns up (1024 past
//     a tile an SM); groups of 32 and 64 to 5632 columns (s35: 3500 x 4600 7.7 against x held's
//     8.5 us); up to a tile an SM not over 6144 columns, where x held's smaller form ran
//     faster (s35, NOTES.md section 53: 2048 x 8192 bf16 float zeros 7.63 against 8.59 us).
//     Its standalone form (benchmarks/experiments/qdmma.cu's qdm2_kernel,
//     benchmarks/NOTES.md section 42) ran bf16 float zeros 4096^2 in 6.35 us against the
//     dispatch's 7.48; in the library it won 1.01-1.38x (s29). Not where the tiles just pass
//     one an SM (up to 1.25 S) on rows over 4608 columns: the SMs with two tiles set the time
//     (bf16 float zeros 2130 x 7000 9.06 us against the dispatch's 7.98, 2500 x 6500 9.11
//     against 8.37; 2150 x 4400 and 2300 x 4600 still won 1.02-1.07x; NOTES.md section 48).
// (b) 2.25 to 4 tiles an SM (float zeros: to 3), 1024 to 4096 columns. The tuner's instrument
//     against the dispatch then: fp16 integer zeros 8192 x 4096 9.64 against 13.36 us, 8192 x
//     1024 3.63 against 4.50; bf16 integer zeros 8192 x 4096 9.78 against 11.25; fp16 float
//     zeros 5300 x 2092 5.73 against 7.65. It lost from 6 tiles an SM (16384 x 2048), on 7392
//     columns (5003 x 7392 15.6 against 12.8) and, with float zeros, from 3.5 tiles an SM
//     (8192 x 2048 7.18 against 6.41; -s29-q-mma-rounds-bf16-int-fp16-float-configs.txt).
// (c) Between them: past 4096 rows up to 2.25 tiles an SM, 1024 to 4096 columns; past 2 tiles
//     an SM over 3072 columns with float zeros only (integer zeros: 4608 x 3584 8.07-8.37 us
//     against x held's 7.71-7.76). x held ran them before: bf16 float zeros 4752 x 2048 6.11
//     -> 4.81 us, 4500 x 1536 5.65 -> 4.12, 4224 x 3584 8.07 -> 6.06 (NOTES.md sections 47-48).
// (d) Past (b), up to 6 tiles an SM, one step, on 1024 columns or 2049 to 4096 (s34, NOTES.md
//     section 52, -s34-rounds-sweep.txt: 240 timings of 5 formats on 8 row lengths at 3.2 to 6
//     tiles an SM): integer and symmetric zeros from 4 tiles an SM (fp16 8450 x 1024 4.19 us
//     against q_mma's 6.27, 12672 x 2560 9.97 against q_rows' 15.02, bf16 g64 8450 x 2560 8.18
//     against x held's 10.63); float zeros from 3 on 2049 to 3072 columns (6750 x 2560 8.27
//     against 9.00) and on 1024 in groups of 32 and 64, else from 4 (9500 x 1024 5.00 against
//     5.74), over 3072 columns only to 5 (12672 x 4096 g128 0.96x) and not in groups of 32 (9447
//     x 3525 0.97x), and not on 17 steps (2049 to 2176 columns: 0.975-1.04x). Not between 1025
//     and 2048 columns, where x held keeps x's 9 to 16 steps in registers and ran level or
//     faster (7600 x 1280 float zeros 5.43 against 6.08). Integer and symmetric zeros to 10
//     tiles an SM on 2049 to 4096 columns: q_mma's formats from s35 (12838 x 2049 9.60 us
//     against q_rows' 14.81, 21120 x 2560 14.76 against x held's 15.61), the rest (bf16, groups
//     of 32 and 64) from s36 (NOTES.md section 54: 12838 x 2560 bf16 g64 11.00 against x held's
//     12.80, fp16 g32 16384 x 3000 15.37 against 17.14; 48 timings, none over 0.3% slower).
// (e) Under 2048 rows (s35, NOTES.md section 53): 897 to 3072 columns, to 4096 from 1024 rows;
//     groups of 32 and 64 to 2048 columns, to 4096 from 1536 rows. One block a tile suits few
//     tiles on short rows: 600 x 1024 bf16 float zeros 2.03 us against q_rows' 4.21, 1000 x 2048
//     2.84 against 4.25, 2047 x 4096 fp16 4.72 against q_mma's 5.68; past those bounds x held's
//     slices won (512 x 4096 3.78 against 3.89, 100 x 3072 g32 3.88 against 4.14).
// (f) Rows of 65 to 1023 columns, any rows, up to one wave of blocks: 4 an SM, 3 with float
//     zeros, whose registers allow no more (s36, NOTES.md section 54, -s36-short-rows-sweep.txt).
//     q_rows and q_mma, which ran them, took up to 2.8x as long (4500 x 896 fp16 g32 7.05 us
//     against 3.29, 200 x 640 5.61 against 1.97, 8000 x 200 3.28 against 2.26); one block a
//     tile of one step, then a second wave, lost (6719 x 96 float zeros 3.73 against q_rows'
//     2.88). Under 128 columns only whole 16-column packs: 2827 x 107 ran 0.88-0.97x. Up to 64
//     columns q_rows stays (512 x 64 1.68 against rounds' 1.75). Fewer warps a tile where the
//     row has fewer steps (NOTES.md section 55, -s36-rounds-warps-*.txt): one a block on rows of
//     one step at any size (16384 x 96 fp16 3.69 -> 2.45 us, 1048576 x 128 88.8 -> 80.4; 512 x
//     96 1.10x over 8 warps); past the wave of 8 on two steps two warps to 32 tiles an SM (33000
//     x 256 5.73 -> 3.52; 200000 x 200 lost 2%; within the wave 8 warps stay, two ran 0.95-1.08x),
//     but with float zeros two only to 6 (16384 x 200 lost 3%) and from there to 16 one warp
//     taking both steps in a round (15244 x 203 1.24-1.31x over q_rows; groups of 64 lost 3-5%
//     from 17 tiles an SM); four on 3 and 4 steps to 8 tiles an SM (9462 x 384 3.76 -> 2.72
//     over x held's small form).
// (g) 9 to 16 steps (1025 to 2048 columns), integer and symmetric zeros, past x held's small
//     form's one wave (128 tiles an SM: 64 tiles a block, 2 blocks an SM) up to 200 (s36:
//     400000 x 1280 bf16 138.7 us against x held's 166.7, 280000 x 1536 110.0 against 138.4);
//     at 1048576 x 1152 rounds lost (372 against 297).
// (h) Float zeros on 2177 to 4096 columns from 3 to 4 tiles an SM, past 8-warp blocks' one wave
//     (3 an SM) and within one of 4-warp blocks of 2 steps (4 an SM), which run it (s37, NOTES.md
//     section 56, -s37-rounds-warps-sweep.txt): bf16 g128 7600 x 3584 10.24 us against x held's
//     11.13 (tinygemm's 10.5), 6500 x 3200 8.82 against 9.81, 7600 x 4096 10.42 against 11.10;
//     8 warps of one step ran 9.6-11.1; on 2177 to 3072 columns (where (d) ran 8 warps of one
//     step) 8000 x 2304 7.30 against 8.44, 6500 x 2560 7.73 against 8.19; there not to 3.02
//     tiles an SM, where 8 warps' second wave holds a tile or two (6337 x 2560 7.29 against 7.67).
// (i) Rows of 4097 to 8192 columns (groups of 32 and 64 to 7392) where the tiles fill 90% or
//     more of one wave of 8-warp blocks of 2 steps (1.8 to 2 tiles an SM), which x held and
//     q_mma ran (s37, -s37-rounds-warps-sweep.txt): bf16 float zeros 4096 x 6144 8.58 us
//     against x held's 10.12, 4150 x 5200 8.70 against 10.15; fp16 integer zeros 4096 x 6144
//     8.11 against q_mma's 9.46, 4200 x 8192 10.23 against x held's 11.13; groups of 32 lost
//     on 8192 columns (4200 x 8192 0.94x).
// (j) Integer and symmetric zeros on 4097 to 7168 columns from 2.75 to 4 tiles an SM, one wave
//     of 8-warp blocks of one step, which x held and q_mma ran (s37, -s37-rounds-warps-sweep.txt):
//     fp16 g32 8192 x 7000 16.94 us against x held's 19.31, 7600 x 5000 g128 11.44 against
//     q_mma's 16.48, bf16 6500 x 4500 10.62 against x held's 11.11; on 8192 columns (6600 x
//     8192 0.92-1.01x) and under 2.75
//     tiles an SM (5500 x 6000 0.93-0.97x) x held stays, but for groups of 32 from 3.25 tiles an
//     SM (8192 x 8192 fp16 21.08 -> 19.23 us, 7392 x 8192 19.35 -> 18.67 in pygemv-bench; 6337
//     x 8192 lost 2.5%, 6600 x 8192 up to 1.5%; g64 at 6600 x 8192 lost 6%).
//     Longer rows need more tiles: groups of
//     128 lost past 5632 columns under 3.75 tiles an SM (5822 x 6605 0.91x, 7193 x 7036 0.97x,
//     6052 x 5901 0.98x), groups of 32 past 6144 under 3 (5822 x 6605 0.98x).
// (k) Few tiles on long rows, K split (s38, NOTES.md section 57, -s38-split-*.txt): up to half
//     a tile an SM from 20 steps (2433 columns), up to 0.75 from 40 (4993), up to 256 steps
//     (32768 columns, as measured) and 2^24 codes. 4-warp blocks of one step a round, K in
//     slices of 4 steps (a step a warp), or of 8, 12, ... where one wave of 6 blocks an SM
//     (groups of 32: 4.5) holds no more; slices of 4 past 4 blocks an SM as 8-warp blocks in
//     slices of 6 where 3 an SM hold them. The two-pass reduce adds the slices' partials. Every
//     load of the matrix is in flight at once. x held's small form, q_rows and (e) ran them:
//     bf16 float zeros 128 x 4096 3.87 -> 2.94 us, fp16 g32 1000 x 3072 4.66 -> 3.67 (q_rows),
//     bf16 float zeros 600 x 3072 3.80 -> 3.18 ((e)); against 5d29356, 171 cases 1.124x. At 16
//     steps (e) stays (1000 x 2048 0.83-0.94x); past 2^24 codes (1000 x 25165: 0.96-1.04x) and
//     at a tile an SM (2000 rows) the slices lost or tied.
// Steps a round, by tiles (NOTES.md section 48, -s32-rounds-unroll-*.txt): 2 up to a tile an
// SM (2048 x 4096 4.79 against 5.04 us), but 1 on 1024 columns or fewer (16 x 1024 1.74
// against 1.89) and in groups of 32 and 64 past 1536 (2048 x 4096 g32 5.75 against 6.11; s35);
// 1 up to 1.5 (3072 x 2560 4.40 against 4.70, 2700 x 3000 4.73 against 5.30), symmetric zeros
// up to 1.3 (3072 x 4096 5.45 against 5.06); up to 2
// (one wave of two blocks an SM), 2 for float or symmetric zeros or rows over 3072 columns
// (bf16 float zeros 3584^2 5.86 against 7.20, 4224 x 2048 4.27 against 4.79; fp16 integer
// zeros 4200 x 3300 5.82 against 6.27), else 1 (3600 x 2600 4.87 against 5.19, 4150 x 3000
// 5.24 against 5.47); past 2, 1 (4300 x 2500 5.97 against 8.94: a second wave).
bool q_mma_rounds_config(const Problem &pb, int sm_count, gemv_config_t *out) {
    if (!pb.quantized() || pb.qw.bits != 4 || !qmma_x_in_place_ok(pb) || pb.k <= 64) return false;
    const int64_t tiles = (pb.m + 15) / 16, sms = std::max(sm_count, 1);
    const bool float_zeros = pb.qw.zero_mode == GEMV_QZERO_FLOAT;
    const bool sub_groups = q_groups_under_a_step(pb.qw);
    const int64_t steps = (pb.k + 127) / 128;
    // (k): where the workspace is short of the slices' partials, the regimes below run the
    // problem unsplit or pass it on.
    const bool regime_k = steps >= 20 && steps <= 256 && mul_sat(pb.m, pb.k) <= ((int64_t)1 << 24) &&
                          (2 * tiles <= sms || (4 * tiles <= 3 * sms && steps >= 40));
    if (regime_k) {
        // Slices of 4 r steps (r rounds of a step a warp), r the fewest that keep the blocks within
        // the wave: a slice of a few steps more than a multiple of 4 leaves warps idle in its last
        // round (1000 x 8192: 8 slices of 8 steps 4.91-5.43 us, 11 of 6 5.32-5.67). Groups of 32
        // (4 scales a step) within 4.5 blocks an SM: 269 x 23141 ran 46 slices of 4 steps in
        // 6.18-6.24 us, 23 of 8 in 5.82-5.87 (x held 5.93).
        // Slices of 4 that take more than 4 blocks an SM run as 8-warp blocks in slices of 6 where
        // 3 an SM hold them (1000 x 4100: 6 slices 4.24-4.48 us in four formats, 9 of 4 4.59-4.87;
        // 768 x 6144 1.01-1.03x).
        const int64_t wave2 = (pb.qw.group_size == 32 ? 9 : 12) * sms; // twice the blocks a wave takes
        int64_t split = 2, r = 1;
        for (; r <= steps; ++r) {
            split = std::max<int64_t>(2, (steps + 4 * r - 1) / (4 * r));
            if (2 * split * tiles <= wave2 || split == 2) break;
        }
        const int64_t of_6 = std::max<int64_t>(2, (steps + 5) / 6);
        const bool eight = r == 1 && split * tiles > 4 * sms && of_6 * tiles <= 3 * sms;
        const gemv_config_t form = rounds_form(eight ? 8 : 4, 1, (int)(eight ? of_6 : split));
        if (workspace_needed(form, pb) <= pb.workspace_bytes) {
            *out = form;
            return true;
        }
    }
    const bool wave_of_8 = tiles <= (float_zeros ? 3 : 4) * sms; // 8 warps: 4 blocks an SM, 3 with float zeros
    bool take;
    if (pb.k < 1024) // (f)
        take = (pb.k >= 128 || pb.k % 16 == 0) &&
               (wave_of_8 || steps == 1 || (steps == 2 && tiles <= (float_zeros ? 16 : 32) * sms) ||
                (steps >= 3 && steps <= 4 && tiles <= 8 * sms));
    else if (pb.m < 2048) // (e); groups of 32 and 64 lost to x held past 2048 columns under 1536 rows
        take = sub_groups ? pb.k <= 2048 || (pb.m >= 1536 && pb.k <= 4096)
                          : pb.k <= 3072 || (pb.m >= 1024 && pb.k <= 4096);
    else if (pb.m <= 4096) // (a); groups of 32 and 64 up to 5632 columns (2048 x 6144 lost 0-6%)
        take = mul_sat(pb.m, pb.k) <= ((int64_t)1 << 24) && (pb.k >= 2048 || tiles > sms) &&
               !(4 * tiles <= 5 * sms && pb.k > (tiles > sms ? 4608 : 6144)) && !(sub_groups && pb.k > 5632);
    else if (4 * tiles <= 9 * sms) // (c)
        take = pb.k <= 4096 && (pb.k <= 3072 || tiles <= 2 * sms || float_zeros);
    else if (tiles <= (float_zeros ? 3 : 4) * sms) // (b)
        take = pb.k <= 4096;
    else if (!float_zeros) // (d) past 4 tiles an SM, to 10 on 2049-4096 columns; (g)
        take = pb.k <= 1024   ? tiles <= 6 * sms
               : pb.k <= 2048 ? tiles > 128 * sms && tiles <= 200 * sms
                              : pb.k <= 4096 && tiles <= 10 * sms;
    else if (pb.k <= 1024) // (d), float zeros past 3 tiles an SM
        take = tiles <= 6 * sms && (tiles > 4 * sms || sub_groups);
    else if (pb.k <= 3072)
        take = tiles <= 6 * sms && pb.k > 2176;
    else // (h) 3 to 4 tiles an SM at 4 warps; (d) 4 to 5
        take = pb.k <= 4096 && tiles > 3 * sms && tiles <= 5 * sms && (tiles <= 4 * sms || pb.qw.group_size != 32);
    // (i) Rows of 4097 to 8192 columns (groups of 32 and 64 to 7392) filling 90% or more of one
    // wave of 8-warp blocks of 2 steps (2 an SM).
    const bool wave_of_2_full = 10 * tiles >= 18 * sms && tiles <= 2 * sms;
    const bool regime_i = wave_of_2_full && pb.k > 4096 && pb.k <= (sub_groups ? 7392 : 8192);
    // (j) Integer and symmetric zeros on 4097 to 7168 columns (groups of 32: 8192) up to 4 tiles
    // an SM, one wave of 8-warp blocks of one step: from 2.75 tiles an SM, on longer rows from 3
    // (groups of 32 and 64, past 6144 columns; 3.25 past 7168) or 3.75 (groups of 128 up, past
    // 5632).
    const int64_t j_from4 = pb.k <= (sub_groups ? 6144 : 5632) ? 11 // tiles an SM, times 4
                            : !sub_groups                         ? 15
                            : pb.k <= 7168                        ? 12
                                                                  : 13;
    const int64_t j_to = pb.qw.group_size == 32 ? 8192 : 7168; // groups of 32: to 8192
    const bool regime_j = !float_zeros && pb.k > 4096 && pb.k <= j_to && 4 * tiles > j_from4 * sms && tiles <= 4 * sms;
    if (!take && (regime_i || regime_j)) {
        *out = rounds_form(8, regime_i ? 2 : 1);
        return true;
    }
    if (!take) return false;
    const bool symmetric = pb.qw.zero_mode == GEMV_QZERO_SYMMETRIC;
    const bool one_step_band = symmetric ? 10 * tiles <= 13 * sms : 2 * tiles <= 3 * sms;
    const bool long_rows = pb.k > 3072 && !sub_groups; // groups of 32, 64: integer zeros ran 1 step 0-8% faster
    // Up to a tile an SM: one step on 1024 columns or fewer, and in groups of 32 and 64 past 1536.
    const bool two_steps = tiles <= sms ? pb.k > 1024 && (pb.k <= 1536 || !sub_groups)
                                        : !one_step_band && tiles <= 2 * sms && pb.k >= 1024 &&
                                              (float_zeros || symmetric || long_rows);
    // (h): past 3.02 tiles an SM on 3072 columns or fewer, where (d) takes the rows too.
    const bool regime_h = float_zeros && pb.k > 2176 && tiles > 3 * sms && tiles <= 4 * sms &&
                          (pb.k > 3072 || 50 * tiles > 151 * sms);
    int warps = 8, round_steps = two_steps ? 2 : 1;
    if (pb.k < 1024) { // (f): fewer warps on fewer steps
        if (steps == 1)
            warps = 1;
        else if (steps == 2 && float_zeros && tiles > 6 * sms)
            warps = 1, round_steps = 2; // one warp takes both steps
        else if (steps == 2 && !wave_of_8)
            warps = 2;
        else if (steps == 3 || steps == 4)
            warps = 4;
    } else if (regime_h) { // a wave of 4-warp blocks of 2 steps
        warps = 4, round_steps = 2;
    }
    *out = rounds_form(warps, round_steps);
    return true;
}

namespace {

// Quantized weights (q_rows). Fit to a sweep of lanes, rows a thread, splits and block
// sizes on 7 shapes of the H100 (benchmarks/results/h100-2026-11-23-s6-sweep-quantized.txt):
// the best configs had 8 lanes a row for int4 and 16 for int8 (a lane's pack is 32 or 16
// codes), 4 rows a thread and 512-thread blocks from 2048 rows (one resident an SM at ~128
// registers), and
// K split until the blocks make about one wave (4096^2: 8 slices, 8192^2: 4, 28672 x 8192
// and up: none), each slice keeping two packs a lane. Slices longer than a block's staged
// chunk are split further when the workspace allows; one slice always runs (x is then
// staged a chunk at a time).
gemv_config_t heuristic_quantized(const Problem &pb, int sm_count) {
    gemv_config_t block_rows, rounds;
    if (q_block_rows_config(pb, sm_count, &block_rows)) return block_rows;
    if (q_mma_rounds_config(pb, sm_count, &rounds)) return rounds;
    const XHeldShape xs = x_held_shape(pb);
    const bool mma_format = xs.mma_format;
    // The same formats with x contiguous, 16-byte aligned and in order, 4096 rows up and K up
    // to 14336: q_mma reading x in place (x_in_smem = 0), a 16-row tile a block, 8 warps on it
    // (4 from 24576 rows, where tiles are plenty), unsplit. A block is a whole tile's work, so
    // the tiles must share out evenly: within one wave (1024 threads an SM at 64 registers),
    // each SM's share within 80% of the largest; beyond it, the last wave 80% full (28672 x
    // 8192 and 14336 x 4096: 1.7 waves, 3-9% faster). 5008 x 7424 (313 tiles, 2.4 of 3 an SM)
    // ran 16.8 us against 13.4 staged, 11008 x 10944 (1.3 waves) 40.9 against 37.6. Measured
    // (benchmarks/NOTES.md section 32, results/h100-2026-11-26-s19-*): 4096^2 7.1 against 7.8 us, 8192^2 19.4 against 20.4, 14336 x 4096 18.3 against 19.7,
    // 128256 x 4096 120 against 127; longer rows (8192 x 16384 up) and fewer (2048 x 4096) ran
    // 2-8% slower.
    //
    // Before those rules: int4 of any group size and zero mode in fp16 or bf16, x contiguous
    // and aligned, held in registers (q_mma_x_held): 4 warps a block of 2 steps each, K split
    // so that each warp takes one chunk of a slice (8 steps a slice), and the tiles shared out
    // evenly over one wave of blocks (4 an SM at 124 registers), at most 64 a block. The
    // formats above from 4096 rows and 2^25 codes, or 16384 rows. Against the in-place rule
    // and the table (benchmarks/NOTES.md section 33, results/h100-2026-11-26-s20-*): 8192^2
    // 17.4 against 19.6 us, 28672 x 8192 51.0 against 59.1, 8192 x 28672 50.5 against 57.3
    // (q_rows), 11008 x 10944 29.4 against 39.3, 16384 x 1024 6.4 against 7.4; at 4096^2 and
    // 2048 x 4096 x held lost (8.2 against 7.1, 6.7 against 5.7 us). A grid just over a wave
    // ran 7488 x 8320 12% slower than the in-place kernel: hence the even share, not a power
    // of two. bf16, float zeros and groups of 32 or 64, which q_mma does not take, from 2048
    // rows and 2^23 codes: q_rows computes them a code at a time and ran 4096^2 (float zeros,
    // bf16) 10.6 us against 8.5, 8192 x 2048 11.4 against 6.9, int4 g32 fp16 11008 x 10944
    // 57.7 against 37.9, 4096^2 10.9 against 9.3 (-s20-x-held-sweep-float.txt, -g32.txt).
    gemv_config_t small;
    if (x_held_small_config(pb, sm_count, &small)) return small;
    // int8 (fp16, groups of 64 up or one a row; a step is 64 columns) the same way from 2048 to
    // 12288 rows and 2^23 codes up, where q_block_rows does not run (rows under 1536 codes from
    // 8192 rows): x held ran 1.09-1.23x q_rows there (4096^2 9.1 against 11.1 us, 5003 x 7392
    // 17.9 against 22.0, 11008 x 10944 49.2 against 55.3), level or slower beyond (14336 x 4096
    // 0.997x, 128256 x 4096 0.97x; results/h100-2026-11-26-s20-x-held-sweep-int8.txt; checked
    // in -s21-int8-x-held-vs-previous.txt). int4 past 6 tiles an SM from 3 steps (257 columns):
    // this form too, past x held's small one and rounds (s36: fp16 14000 x 640 4.62 us against
    // q_mma's 5.54; bf16 float zeros 20000 x 384, past rounds' 8 tiles an SM).
    const int64_t sms = std::max(sm_count, 1);
    const bool x_held_size = pb.qw.bits == 8 ? pb.m >= 2048 && pb.m <= 12288 && xs.codes >= ((int64_t)1 << 23)
                             : mma_format    ? pb.m >= 4096 && (xs.codes >= ((int64_t)1 << 25) || pb.m >= 16384 ||
                                                                 (xs.tiles > 6 * sms && xs.steps >= 3))
                                             : pb.m >= 2048 && (xs.codes >= ((int64_t)1 << 23) ||
                                                                (pb.qw.bits == 4 && xs.tiles > 6 * sms && xs.steps >= 3));
    if (xs.holds && x_held_size) {
        const int split = (int)std::clamp<int64_t>((xs.steps + 7) / 8, 1, 1024);
        const int64_t row_blocks = std::max<int64_t>(1, 4 * sms / split);
        const int tpb = (int)std::clamp<int64_t>((xs.tiles + row_blocks - 1) / row_blocks, 1, 64);
        const gemv_config_t c = make_config(GEMV_VARIANT_Q_MMA_X_HELD, 128, tpb, kLoadsAligned, 2, 0, split);
        if (workspace_needed(c, pb) <= pb.workspace_bytes) return c;
        // Huge int4 matrices whose slices outgrow the workspace (2^28 codes up) run K unsplit: x
        // held with 8 warps of 2 steps up to 16 steps, else q_mma_rounds at one step (s35, NOTES.md
        // section 53: 1048576 x 1280 fp16 327 us against q_mma's 399; 65536 x 16400 233 against
        // q_rows' 305, bf16 float zeros 268 against 391). Else the rules below.
        if (pb.qw.bits == 4 && xs.codes >= ((int64_t)1 << 28))
            return xs.steps <= 16 ? x_held_small_form(xs, 2, 1, sms)
                                  : rounds_form(8, 1);
    }
    if (mma_format && qmma_x_in_place_ok(pb) && pb.m >= 4096 && pb.k <= 14336) {
        const int64_t steps = (pb.k + 127) / 128, tiles = (pb.m + 15) / 16;
        const int kw = (int)std::clamp<int64_t>(pow2_floor(std::max<int64_t>(1, steps / 2)), 1, tiles >= 1536 ? 4 : 8);
        const gemv_config_t c = make_config(GEMV_VARIANT_Q_MMA, 32 * kw, 1, kLoadsAligned, 1, 0, 1);
        if (qmma_in_place_shares_evenly(c, pb, sm_count)) return c;
    }
    // Otherwise x staged. int4, fp16, symmetric or integer zeros in groups of 128 up, at most
    // 12288 rows and columns: tensor cores (q_mma), 4 warps a block (64 rows), K split into
    // about 512 blocks in all. Fit to the sweep (benchmarks/results/h100-2026-11-23-s6-sweep-qmma.txt) and the
    // benchmark: 4096^2 8.0 against 9.4 us in q_rows, 11008 x 10944 38 against 49, 5003 x 7392
    // 14 against 23, 1000 x 4100 5.5 against 6.2; 8192^2 and 7392 x 8192 about 10% slower.
    // With more rows or a longer K, q_rows was as fast or faster (8192 x 28672: 77 against 57).
    if (mma_format && pb.m <= 12288 && pb.k <= kQMaxSlice) {
        const int64_t steps = (pb.k + 127) / 128, tiles = (pb.m + 63) / 64;
        const int64_t want = pow2_round(512.0 / (double)tiles);
        const int split = (int)std::clamp<int64_t>(std::min(want, std::max<int64_t>(1, steps / 2)), 1, 1024);
        gemv_config_t c = make_config(GEMV_VARIANT_Q_MMA, 32, 4, kLoadsAligned, 1, 1, split);
        return within_workspace(c, pb);
    }
    const int64_t codes = q_pack_codes(pb.qw.bits), packs = (pb.k + codes - 1) / codes;
    const int p = (int)std::min<int64_t>(pb.qw.bits == 4 ? 8 : 16, pow2_floor(std::max<int64_t>(1, packs / 2)));
    // Fewer rows a block on smaller matrices, for more blocks (1000 x 4100 int4: 256
    // threads and 2 rows a thread ran 6.1 us, 512 and 4 rows 9.8).
    const int rows = pb.m >= 2048 ? 4 : pb.m >= 2 ? 2 : 1;
    const int threads = pb.m >= 2048 ? 512 : pb.m >= 512 ? 256 : 128;
    const int teams = threads / p;
    const int64_t tiles = (pb.m + (int64_t)teams * rows - 1) / ((int64_t)teams * rows);
    const int64_t by_chunk = (packs * codes + kQMaxSlice - 1) / kQMaxSlice;
    const int64_t by_wave = pow2_round((double)std::max(sm_count, 1) / (double)tiles);
    const int64_t by_work = std::max<int64_t>(1, packs / (2 * p));
    const int split = (int)std::clamp<int64_t>(std::max(by_chunk, std::min(by_wave, by_work)), 1, 1024);
    gemv_config_t c = make_config(GEMV_VARIANT_Q_ROWS, p, teams, kLoadsAligned, rows, 1, split);
    // Matrices of 512 rows and more and at most 4 MB of codes, where that leaves SMs without a
    // block (2048^2: 8 tiles of 256 rows in 4 slices, 32 blocks), are latency-bound (larger
    // ones keep the rule above: one wave of 512-thread blocks). There: one row a thread, 4
    // lanes a row for int4 (8 for int8), 32 rows a block, slices of about two packs a lane, at
    // most 4 blocks an SM. Measured (benchmarks/experiments/small_quantized.sh,
    // results/h100-2026-11-24-s16-small-quantized.txt): 2048^2 int4 g32 5.1 against 8.3 us,
    // bf16 float zeros 4.9 against 9.2; 1000 x 4100 int4 g32 6.3 against 6.9; int8 1024 x
    // 4096 5.1 against 5.5; within 8% of each of 9 cases' best of 12 configs.
    if (pb.m >= 512 && mul_sat(pb.m, packs) <= (4 << 20) / 16 && tiles * split < sm_count) {
        const int lanes = (int)std::min<int64_t>(pb.qw.bits == 4 ? 4 : 8, pow2_floor(packs));
        const int64_t small_tiles = (pb.m + 31) / 32;
        const int64_t cap = std::max<int64_t>(1, 4 * (int64_t)std::max(sm_count, 1) / small_tiles);
        const int64_t want = std::min<int64_t>(std::max<int64_t>(1, packs / (2 * lanes)), cap);
        c = make_config(GEMV_VARIANT_Q_ROWS, lanes, 32, kLoadsAligned, 1, 1,
                        (int)std::clamp<int64_t>(std::max<int64_t>(by_chunk, pow2_floor(want)), 1, 1024));
    }
    return within_workspace(c, pb);
}

// A config moved into op's ranges: the nearest legal threads and rows, split-K on or off.
gemv_config_t fit_to(const Operation &op, gemv_config_t c) {
    const gemv_variant_info_t &v = op.info;
    c.variant = v.variant;
    c.threads_per_row = std::clamp(c.threads_per_row, v.threads_per_row_min, v.threads_per_row_max);
    const int cap = max_block_threads(c.unroll);
    int r = std::clamp(c.rows_per_block, v.rows_per_block_min, v.rows_per_block_max);
    while ((int64_t)c.threads_per_row * r > cap && r > v.rows_per_block_min) r /= 2;
    while (c.threads_per_row * r < 32 && r < v.rows_per_block_max) r *= 2;
    c.rows_per_block = r;
    c.split_k = std::clamp(c.split_k > 1 ? c.split_k : 8, v.split_k_min, v.split_k_max);
    if (!v.stages_x) c.x_in_smem = 0;
    return c;
}

} // namespace

gemv_config_t heuristic_config(const Problem &pb, int sm_count) {
    if (pb.quantized()) return heuristic_quantized(pb, sm_count);
    return pb.op == GEMV_OP_T ? heuristic_columns(pb, sm_count) : heuristic_rows(pb, sm_count);
}

// An operation's default: the heuristic's own choice when it is this operation, else that
// choice moved into the operation's ranges (a starting point for the tuner).
gemv_config_t default_config(const Operation &op, const Problem &pb, int sm_count) {
    const gemv_config_t c = heuristic_config(pb, sm_count);
    return c.variant == op.info.variant ? c : fit_to(op, c);
}

namespace {

// What a choice depends on. Eager loops repeat one shape: the thread's last choice is
// reused when the next call's key is the same, which skips the table search (~0.4 us).
// A table is named by its serial number, never reused (a freed table's address may be).
struct ChoiceKey {
    uint64_t table;
    int device;
    gemv_op_t op;
    gemv_dtype_t dtype;
    int64_t m, k, lda, incx, incy, batch, stride_a, stride_x, stride_y;
    unsigned low_bits; // A, x and y addresses mod 16
    size_t workspace_bytes;
    uint32_t weights; // quantized: bits, zero mode and group size; 0 dense
    bool perm;        // quantized: act-order (x read through perm, never in place)
    bool operator==(const ChoiceKey &o) const {
        return weights == o.weights && perm == o.perm && table == o.table && device == o.device && op == o.op && dtype == o.dtype && m == o.m && k == o.k &&
               lda == o.lda && incx == o.incx && incy == o.incy && batch == o.batch && stride_a == o.stride_a &&
               stride_x == o.stride_x && stride_y == o.stride_y && low_bits == o.low_bits &&
               workspace_bytes == o.workspace_bytes;
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
    // The repeat check reads the table's serial number alone; the table itself (a shared
    // reference, two atomic counts) is only taken when the choice must be made again.
    ChoiceKey key{use_table ? device_table_serial(device) : 0, device, pb.op, pb.dtype(), pb.m, pb.k, pb.lda,
                  pb.incx, pb.incy, pb.batch, pb.stride_a, pb.stride_x, pb.stride_y,
                  low4(pb.A) | low4(pb.x) << 4 | low4(pb.y) << 8, pb.workspace ? pb.workspace_bytes : 0,
                  pb.quantized() ? (uint32_t)pb.qw.bits | (uint32_t)pb.qw.zero_mode << 8 | (uint32_t)pb.qw.group_size << 16
                                 : 0u,
                  pb.quantized() && pb.qw.perm != nullptr};
    LastChoice &last = t_last;
    if (!last.valid || !(last.key == key)) {
        const std::shared_ptr<const Table> t = use_table ? device_table(device) : nullptr;
        key.table = t ? table_serial(*t) : 0; // a reload in between: key what was used
        last.key = key;
        LazyHeuristic heuristic{pb, sm_count(device)};
        last.from_table = t && table_lookup(*t, pb, heuristic, &last.config, nullptr);
        if (!last.from_table) last.config = heuristic.get();
        last.valid = true;
    }
    if (from_table) *from_table = last.from_table;
    return last.config;
}

} // namespace libgemv
