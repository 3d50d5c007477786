// Tuned tables: the text format (docs/tuning.md), its strict parser, the fingerprint
// check and the nearest-shape lookup. Nothing here touches the GPU, so all of it can be
// tested on a machine without one.
//
//     gemv-table 2
//     gpu NVIDIA H100 80GB HBM3
//     sm_count 132
//     compute_capability 9.0
//     cuda_runtime 13000
//     libgemv 0.3.0
//     entries 3
//     N float16 1 1024 1024 block_per_row 128 1 1 2 0 1 3.12 3.40
//     N float32 1 1 65536 splitk_twopass 256 1 1 4 0 64 4.70 5.01
//     T float16 64 64 64 t_columns 8 32 1 2 0 1 5.10 5.10
//     W4G128 float16 1 4096 4096 q_mma 32 4 1 1 1 16 5.02 5.40
//     end
//
// Entry fields: the problem descriptor op dtype batch m k | variant threads_per_row
// rows_per_block vector_loads unroll x_in_smem split_k | tuned_us heuristic_us. The op is
// N, T, or W<bits>G<group> for op N on quantized weights of that many bits in groups of
// that many columns (G0: one group a row); dtype is then that of x, y and the scales. '#'
// starts a comment line. The entry count and the closing "end" make a truncated file an
// error rather than a shorter table. Schema 1 (no op, no batch) is refused.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <memory>
#include <sstream>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "internal.h"

namespace libgemv {

struct TableEntry {
    int64_t m, k, batch;
    int bits;      // quantized weights (0: dense A)
    int64_t group; // their group size (0: one group a row)
    gemv_dtype_t dtype;
    double log_m, log_k, log_batch;
    bool dense16; // tuned on rows that allow 16-byte loads (K * size % 16 == 0, or M == 1)
    double gain;  // heuristic_us / tuned_us: how much the config beat the heuristic at its shape
    gemv_config_t config;
};

// The order of each key's entries (parse sorts by it, merge_tables keeps it).
static bool shape_less(const TableEntry &a, const TableEntry &b) {
    return std::tie(a.m, a.k, a.batch, a.group) < std::tie(b.m, b.k, b.batch, b.group);
}

// The descriptor's discrete part, which an entry must match exactly: op, storage type,
// single or batched, and for quantized weights their bits (a key of its own) and group
// size (matched in the lookup). Within a key, the nearest shape (log2 M, log2 K, log2
// batch) decides.
constexpr int kDenseKeys = 2 * 3 * 2;
constexpr int kKeys = kDenseKeys + 3 * 2;
int key_of(gemv_op_t op, gemv_dtype_t dtype, bool batched) { return ((int)op * 3 + (int)dtype) * 2 + (batched ? 1 : 0); }
int quantized_key_of(gemv_dtype_t dtype, int bits) { return kDenseKeys + (int)dtype * 2 + (bits == 8 ? 1 : 0); }

// Each key's entries sorted by (m, k, batch): duplicates are neighbours, and a lookup
// binary-searches K within each M in reach instead of scanning the table.
struct Table {
    std::string path;
    uint64_t serial = 0; // unique per table read in this process (the dispatch cache's key)
    bool header_only = false; // refused after its header (read_table's expect): no entries
    gemv_table_fingerprint_t fp{};
    std::vector<TableEntry> by_key[kKeys];
};

namespace {

// Limits (docs/contract.md, "Tuned tables"): a full tune of every op, dtype and batch on
// a fine grid is a few thousand entries; these leave a wide margin and bound the work a
// hostile file can cause (parsing 65536 entries takes about 0.1 s).
constexpr size_t kMaxFileBytes = 16u << 20;
// An entry speaks for the cell around it: shapes within this log2 distance (the default
// grid is a factor of 4 apart in M and K, so every shape inside it has an entry within
// sqrt(2)), and only shapes whose rows are of the kind it was tuned on: rows that allow
// 16-byte loads, or rows that do not. Farther out a config tuned for another regime
// loses to the heuristic: on 30 held-out shapes a reach of 2 gave 0.94 of the oracle,
// 1.5 gave 0.975 (benchmarks/results/h100-2026-11-21-heldout.txt).
constexpr double kMaxDistance = 1.5;
// Rows that are not 16-byte multiples are tuned at K = 3, 17, 257, 4097, 65537 (and 18, 260,
// 4102): 16x apart, so an entry 1.5 away is mostly another row length, and with the
// heuristic's one-load rows (2026-11-24) those lost to it: fp16 10208 x 636 took the
// 16384 x 260 entry (1.46 away) at 9.0 us against the heuristic's 7.9, fp32 1191 x 705 the
// 1024 x 257 entry at 3.7 against 3.5. Their entries reach 1.0 (held-out: 0.966 -> 0.972 of
// the oracle, benchmarks/results/h100-2026-11-24-s13-heldout-*).
constexpr double kMaxDistanceUnaligned = 1.0;
// op T, batches and quantized weights are tuned on coarser grids (op T a factor of 8
// apart, quantized a factor of 4, batches 8x in count) whose neighbours often sit in
// another regime: at a reach of 1.5 fp16 op T 16384^2 took 8192 x 28672's entry at 1.29
// (196 against the heuristic's 178 us), int4 g128 11008 x 10944 took 8192^2's q_rows at
// 0.60 (49 against q_mma's 38 us); benchmarks/results/h100-2026-11-24-s9-*. Their entries
// speak for their own shape and its near neighbours alone (within sqrt(2) along one axis),
// and the heuristic, fit to each kind's sweep, runs the rest.
constexpr double kMaxDistanceCoarse = 0.5;
// An op N entry whose config beat the heuristic at its own shape by less than this speaks
// for its shape alone: between grid points the heuristic, which follows the shape, runs
// the call. Such an entry says that the heuristic is as good in its cell; its config, fit
// to the grid point, may not be (fp32 6972 x 1004 took the 4096 x 1024 entry, 1.00 over
// the heuristic there: 12.7 us against the heuristic's 11.5; benchmarks/results/
// h100-2026-11-24-s13-few-rows2.txt). 1.0 gave 0.929 of the best config on those 30
// shapes, 1.03 0.946, 1.05 0.946, 1.1 0.949 (NOTES.md section 24).
constexpr double kMinGainAway = 1.05;
constexpr int64_t kMaxEntries = 1 << 16;

std::atomic<uint64_t> g_serial{0};

struct Parser {
    const char *path;
    int line = 0;
    gemv_status_t fail(const char *what, const std::string &text = "") {
        set_error("tuned table %s, line %d: %s%s%s", path, line, what, text.empty() ? "" : ": ", text.c_str());
        return GEMV_STATUS_TABLE_INVALID;
    }
};

bool parse_int(const std::string &s, int64_t lo, int64_t hi, int64_t *out) {
    if (s.empty() || s.size() > 19) return false;
    char *end = nullptr;
    long long v = strtoll(s.c_str(), &end, 10);
    if (*end || v < lo || v > hi) return false;
    *out = v;
    return true;
}

bool parse_us(const std::string &s, double *out) {
    char *end = nullptr;
    double v = strtod(s.c_str(), &end);
    *out = v;
    return !s.empty() && !*end && std::isfinite(v) && v >= 0;
}

int dtype_of(const std::string &s) {
    if (s == "float32") return GEMV_DTYPE_F32;
    if (s == "float16") return GEMV_DTYPE_F16;
    if (s == "bfloat16") return GEMV_DTYPE_BF16;
    return -1;
}

int variant_of(const std::string &s) {
    for (int v = 0; v < variant_count(); ++v)
        if (s == variant_info(v)->name) return v;
    return -1;
}

std::vector<std::string> split_words(const std::string &line) {
    std::istringstream in(line);
    std::vector<std::string> w;
    for (std::string t; in >> t;) w.push_back(t);
    return w;
}

// "key rest of line" -> rest (trimmed), for header values that may hold spaces.
std::string value_after_key(const std::string &line, const std::string &key) {
    std::string v = line.substr(key.size());
    const size_t b = v.find_first_not_of(" \t"), e = v.find_last_not_of(" \t");
    return b == std::string::npos ? "" : v.substr(b, e - b + 1);
}

// "W<bits>G<group>": quantized weights (bits 4 or 8; group 0 or a power of two 32..1024).
bool parse_weights(const std::string &s, int *bits, int64_t *group) {
    const size_t g = s.find('G');
    int64_t b = 0;
    if (s.size() < 4 || s[0] != 'W' || g == std::string::npos || !parse_int(s.substr(1, g - 1), 4, 8, &b) ||
        (b != 4 && b != 8) || !parse_int(s.substr(g + 1), 0, 1024, group))
        return false;
    *bits = (int)b;
    return *group == 0 || (*group >= 32 && (*group & (*group - 1)) == 0);
}

gemv_status_t parse_entry(Parser &ps, const std::vector<std::string> &w, Table &t) {
    if (w.size() != 14) return ps.fail("an entry has 14 fields", std::to_string(w.size()) + " found");
    TableEntry e{};
    if (w[0] != "N" && w[0] != "T" && !parse_weights(w[0], &e.bits, &e.group))
        return ps.fail("op must be N, T or W<bits>G<group> (bits 4 or 8; group 0 or a power of two 32..1024)", w[0]);
    const gemv_op_t op = w[0] == "T" ? GEMV_OP_T : GEMV_OP_N;
    const int dtype = dtype_of(w[1]);
    if (dtype < 0) return ps.fail("unknown dtype (float32, float16 or bfloat16)", w[1]);
    if (!parse_int(w[2], 1, int64_t(1) << 40, &e.batch)) return ps.fail("batch must be an integer in [1, 2^40]", w[2]);
    if (e.bits && (e.batch != 1 || dtype == GEMV_DTYPE_F32))
        return ps.fail("quantized weights take single products of float16 or bfloat16", w[0] + " " + w[1] + " " + w[2]);
    if (!parse_int(w[3], 1, int64_t(1) << 40, &e.m) || !parse_int(w[4], 1, int64_t(1) << 40, &e.k))
        return ps.fail("m and k must be integers in [1, 2^40]", w[3] + " " + w[4]);
    const int variant = variant_of(w[5]);
    if (variant < 0) return ps.fail("unknown variant", w[5]);
    if (variant_info(variant)->op != op) return ps.fail("the variant computes the other op", w[0] + " " + w[5]);
    const uint32_t mask = variant_info(variant)->weight_bits_mask;
    if (e.bits ? !((mask >> e.bits) & 1u) : mask != 0)
        return ps.fail(e.bits ? "the variant does not take weights of these bits" : "the variant takes quantized weights",
                       w[0] + " " + w[5]);
    int64_t f[6];
    for (int i = 0; i < 6; ++i)
        if (!parse_int(w[6 + i], 0, 1024, &f[i])) return ps.fail("config fields must be integers in [0, 1024]", w[6 + i]);
    e.config = make_config(variant, (int)f[0], (int)f[1], (int)f[2], (int)f[3], (int)f[4], (int)f[5]);
    if (validate_config(e.config) != GEMV_STATUS_SUCCESS) {
        std::string why = gemv_last_error();
        return ps.fail("invalid config", why);
    }
    double tuned_us = 0, heuristic_us = 0;
    if (!parse_us(w[12], &tuned_us) || !parse_us(w[13], &heuristic_us))
        return ps.fail("times must be non-negative numbers", w[12] + " " + w[13]);
    e.gain = tuned_us > 0 ? heuristic_us / tuned_us : 1.0;
    auto &list = t.by_key[e.bits ? quantized_key_of((gemv_dtype_t)dtype, e.bits)
                                 : key_of(op, (gemv_dtype_t)dtype, e.batch > 1)];
    e.dtype = (gemv_dtype_t)dtype;
    // Packed codes are whole 16-byte packs whatever K is.
    e.dense16 = e.bits || e.m == 1 || (e.k * (int64_t)dtype_size((gemv_dtype_t)dtype)) % 16 == 0;
    e.log_m = std::log2((double)e.m);
    e.log_k = std::log2((double)e.k);
    e.log_batch = std::log2((double)e.batch);
    list.push_back(e);
    return GEMV_STATUS_SUCCESS;
}

gemv_status_t parse(const char *path, const std::string &text, Table &t, const gemv_device_props_t *expect) {
    Parser ps{path};
    // A UTF-8 byte-order mark (some editors write one) is not part of the first line.
    std::istringstream in(text.compare(0, 3, "\xEF\xBB\xBF") == 0 ? text.substr(3) : text);
    enum { kMagic, kHeader, kEntries, kEnd, kDone } stage = kMagic;
    int64_t expected = -1, seen = 0;
    std::set<std::string> seen_keys;
    for (std::string line; std::getline(in, line);) {
        ++ps.line;
        if (!line.empty() && line.back() == '\r') line.pop_back();
        const std::vector<std::string> w = split_words(line);
        if (w.empty() || w[0][0] == '#') continue;
        line.erase(0, line.find_first_not_of(" \t")); // an indented line reads like any other
        if (stage == kDone) return ps.fail("text after \"end\"", line);
        if (stage == kMagic) {
            int64_t schema = 0;
            if (w.size() != 2 || w[0] != "gemv-table" || !parse_int(w[1], 1, 1 << 20, &schema))
                return ps.fail("not a gemv table: the first line must be \"gemv-table <schema>\"", line);
            if (schema != GEMV_TABLE_SCHEMA) {
                set_error("tuned table %s has schema %lld; this libgemv reads schema %d", path, (long long)schema,
                          GEMV_TABLE_SCHEMA);
                return GEMV_STATUS_TABLE_MISMATCH;
            }
            t.fp.schema = (int32_t)schema;
            stage = kHeader;
        } else if (stage == kHeader) {
            int64_t v = 0;
            const std::string &key = w[0];
            const bool known = key == "gpu" || key == "sm_count" || key == "compute_capability" ||
                               key == "cuda_runtime" || key == "libgemv";
            if (known && !seen_keys.insert(key).second) return ps.fail("duplicate header key", key);
            if (key == "gpu") {
                const std::string name = value_after_key(line, "gpu");
                if (name.empty() || name.size() >= sizeof t.fp.gpu) return ps.fail("bad gpu name", name);
                snprintf(t.fp.gpu, sizeof t.fp.gpu, "%s", name.c_str());
            } else if (key == "sm_count") {
                if (w.size() != 2 || !parse_int(w[1], 1, 1 << 20, &v)) return ps.fail("bad sm_count", line);
                t.fp.sm_count = (int32_t)v;
            } else if (key == "compute_capability") {
                const size_t dot = w.size() == 2 ? w[1].find('.') : std::string::npos;
                int64_t major = 0, minor = 0;
                if (dot == std::string::npos || !parse_int(w[1].substr(0, dot), 1, 99, &major) ||
                    !parse_int(w[1].substr(dot + 1), 0, 99, &minor))
                    return ps.fail("bad compute_capability (major.minor, each 0-99)", line);
                t.fp.cc_major = (int32_t)major;
                t.fp.cc_minor = (int32_t)minor;
            } else if (key == "cuda_runtime") {
                if (w.size() != 2 || !parse_int(w[1], 1, 1 << 30, &v)) return ps.fail("bad cuda_runtime", line);
                t.fp.cuda_runtime = (int32_t)v;
            } else if (key == "libgemv") {
                if (w.size() != 2 || w[1].size() >= sizeof t.fp.libgemv) return ps.fail("bad libgemv version", line);
                snprintf(t.fp.libgemv, sizeof t.fp.libgemv, "%s", w[1].c_str());
            } else if (key == "entries") {
                if (w.size() != 2 || !parse_int(w[1], 0, INT64_MAX, &expected))
                    return ps.fail("bad entry count", line);
                if (expected > kMaxEntries)
                    return ps.fail("too many entries", std::to_string(expected) + " > " + std::to_string(kMaxEntries));
                if (seen_keys.size() != 5)
                    return ps.fail("the header needs gpu, sm_count, compute_capability, cuda_runtime and libgemv "
                                   "before entries");
                // A table of another GPU (or a stale one) is refused before its entries are read.
                if (expect) {
                    const gemv_status_t st = check_table(t, *expect);
                    if (st != GEMV_STATUS_SUCCESS) {
                        t.header_only = true;
                        return st;
                    }
                }
                stage = expected ? kEntries : kEnd;
            }
            // Other header keys (created, tool, ...) are for people; readers skip them.
        } else if (stage == kEntries) {
            gemv_status_t st = parse_entry(ps, w, t);
            if (st != GEMV_STATUS_SUCCESS) return st;
            if (++seen == expected) stage = kEnd;
        } else if (stage == kEnd) {
            if (w.size() != 1 || w[0] != "end") return ps.fail("expected \"end\" after the entries", line);
            stage = kDone;
        }
    }
    if (stage != kDone) {
        ++ps.line;
        if (stage == kEntries)
            return ps.fail("truncated", std::to_string(seen) + " of " + std::to_string(expected) + " entries");
        return ps.fail(stage == kEnd ? "truncated: no closing \"end\"" : "truncated: the header is incomplete");
    }
    t.fp.entries = expected;
    // Sorted once: duplicates become neighbours, and lookups can binary-search.
    for (auto &list : t.by_key) {
        std::sort(list.begin(), list.end(), shape_less);
        for (size_t i = 1; i < list.size(); ++i) {
            const TableEntry &a = list[i - 1], &b = list[i];
            if (a.m == b.m && a.k == b.k && a.batch == b.batch && a.group == b.group) {
                const std::string op = a.bits ? "W" + std::to_string(a.bits) + "G" + std::to_string(a.group)
                                       : variant_info(a.config.variant)->op == GEMV_OP_N ? "N" : "T";
                set_error("tuned table %s: duplicate entry for op %s %s batch %lld %lldx%lld", path, op.c_str(),
                          dtype_name(a.dtype), (long long)a.batch, (long long)a.m, (long long)a.k);
                return GEMV_STATUS_TABLE_INVALID;
            }
        }
    }
    return GEMV_STATUS_SUCCESS;
}

} // namespace

gemv_status_t read_table(const char *path, Table **out, const gemv_device_props_t *expect) {
    *out = nullptr;
    // Non-blocking open and a regular file only: a FIFO, a terminal or /dev/stdin would
    // block the first dispatch forever.
    const int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) {
        set_error("tuned table %s: cannot open it (%s)", path, strerror(errno));
        return GEMV_STATUS_TABLE_INVALID;
    }
    struct FdCloser {
        int fd;
        ~FdCloser() { close(fd); }
    } closer{fd};
    struct stat st_buf{};
    if (fstat(fd, &st_buf) != 0 || !S_ISREG(st_buf.st_mode)) {
        set_error("tuned table %s: not a regular file", path);
        return GEMV_STATUS_TABLE_INVALID;
    }
    if ((uint64_t)st_buf.st_size > kMaxFileBytes) {
        set_error("tuned table %s: larger than %zu bytes", path, kMaxFileBytes);
        return GEMV_STATUS_TABLE_INVALID;
    }
    std::string text;
    char buf[1 << 16];
    for (;;) {
        const ssize_t n = read(fd, buf, sizeof buf);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) {
            set_error("tuned table %s: read error (%s)", path, strerror(errno));
            return GEMV_STATUS_TABLE_INVALID;
        }
        if (n == 0) break;
        text.append(buf, (size_t)n);
        if (text.size() > kMaxFileBytes) { // it grew while being read
            set_error("tuned table %s: larger than %zu bytes", path, kMaxFileBytes);
            return GEMV_STATUS_TABLE_INVALID;
        }
    }
    if (text.find('\0') != std::string::npos) {
        set_error("tuned table %s: binary data, not a text table", path);
        return GEMV_STATUS_TABLE_INVALID;
    }
    std::unique_ptr<Table> t(new Table);
    t->path = path;
    t->serial = ++g_serial;
    const gemv_status_t st = parse(path, text, *t, expect);
    if (st == GEMV_STATUS_SUCCESS || t->header_only) *out = t.release(); // the header tells whose table it is
    return st;
}

Table *merge_tables(const Table &primary, const Table &fill, int64_t *filled) {
    std::unique_ptr<Table> t(new Table);
    t->path = primary.path;
    t->serial = ++g_serial;
    t->fp = primary.fp;
    int64_t added = 0;
    for (int key = 0; key < kKeys; ++key) {
        const std::vector<TableEntry> &a = primary.by_key[key], &b = fill.by_key[key];
        std::vector<TableEntry> &out = t->by_key[key];
        out.reserve(a.size() + b.size());
        // Both lists are sorted and free of duplicates: one merge, primary's entry kept on a tie.
        size_t i = 0, j = 0;
        while (i < a.size() || j < b.size()) {
            if (j == b.size() || (i < a.size() && !shape_less(b[j], a[i]))) {
                if (j < b.size() && !shape_less(a[i], b[j])) ++j; // same shape: the primary's entry wins
                out.push_back(a[i++]);
            } else {
                out.push_back(b[j++]);
                ++added;
            }
        }
    }
    t->fp.entries = primary.fp.entries + added;
    if (filled) *filled = added;
    return t.release();
}

void free_table(const Table *t) { delete t; }

const gemv_table_fingerprint_t &table_fingerprint(const Table &t) { return t.fp; }

const char *table_path(const Table &t) { return t.path.c_str(); }

uint64_t table_serial(const Table &t) { return t.serial; }

gemv_status_t check_table(const Table &t, const gemv_device_props_t &props) {
    const gemv_table_fingerprint_t &fp = t.fp;
    if (strcmp(fp.gpu, props.name) != 0 || fp.sm_count != props.sm_count || fp.cc_major != props.cc_major ||
        fp.cc_minor != props.cc_minor) {
        set_error("tuned table %s is for %s (%d SMs, sm_%d%d), not this %s (%d SMs, sm_%d%d)", t.path.c_str(), fp.gpu,
                  fp.sm_count, fp.cc_major, fp.cc_minor, props.name, props.sm_count, props.cc_major, props.cc_minor);
        return GEMV_STATUS_TABLE_MISMATCH;
    }
    if (strcmp(fp.libgemv, GEMV_VERSION_STRING) != 0) {
        set_error("tuned table %s is stale: tuned with libgemv %s, this is %s (retune: pygemv-tune)", t.path.c_str(),
                  fp.libgemv, GEMV_VERSION_STRING);
        return GEMV_STATUS_TABLE_MISMATCH;
    }
    if (fp.cuda_runtime != props.runtime_version) {
        set_error("tuned table %s is stale: tuned with CUDA runtime %d, this libgemv was built with %d (retune: "
                  "pygemv-tune)", t.path.c_str(), fp.cuda_runtime, props.runtime_version);
        return GEMV_STATUS_TABLE_MISMATCH;
    }
    return GEMV_STATUS_SUCCESS;
}

namespace {

// Loads a row (or its split-K slice) of k elements takes under config c.
int64_t row_loads(const gemv_config_t &c, int64_t k, gemv_dtype_t dtype) {
    const int64_t chunk = variant_info(c.variant)->split_k_min > 1 ? split_slice_len(k, c.split_k) : k;
    const int64_t per_load = c.vector_loads ? 16 / (int64_t)dtype_size(dtype) : 1;
    return std::max<int64_t>(1, (chunk + per_load - 1) / per_load);
}

// The waves a row kernel's blocks make on `rows` rows: its blocks over the slots resident at
// once (2048 threads and 32 blocks an SM). 0 for other variants.
double row_waves(const gemv_config_t &c, int64_t rows, int sm_count) {
    if (c.variant != GEMV_VARIANT_THREAD_PER_ROW && c.variant != GEMV_VARIANT_ROWS_PER_WARP &&
        c.variant != GEMV_VARIANT_WARP_PER_ROW && c.variant != GEMV_VARIANT_BLOCK_PER_ROW)
        return 0.0;
    const int64_t threads = std::max<int64_t>(1, (int64_t)c.threads_per_row * c.rows_per_block);
    const int64_t per_sm = std::min<int64_t>(32, std::max<int64_t>(1, 2048 / threads));
    const int64_t blocks = (rows + c.rows_per_block - 1) / std::max(1, c.rows_per_block); // unsplit variants
    return (double)blocks / (double)(per_sm * std::max(sm_count, 1));
}

// Whether an entry's config, tuned at its own shape, fits pb: it runs pb within the
// workspace, and a config of more than a warp a row that gave each thread of a row a load at
// its own shape does so at pb's. A neighbour tuned on longer rows may give a row more threads than it has loads:
// one 512-thread block on a row of 384 16-byte packs ran 0.66x cuBLAS, where the
// heuristic's own choice fits. Such an entry is passed over for the next one, then the
// heuristic. (A config with idle threads at its own shape was measured best there: it stays.)
// Nor does an entry of rows that do not start aligned stretch to a matrix of more than
// twice its elements in the heuristic's phased regime: the grid stops at 64 MB, and the
// realigned configs tuned there ran large misaligned matrices slower than phased rows
// (fp16 8191 x 8191: 54.6 us with the 4096 x 4097 entry, 50.1 phased).
bool fits(const TableEntry &e, const Problem &pb, int sm_count) {
    const gemv_config_t &c = e.config;
    if (can_implement(c, pb) != GEMV_STATUS_SUCCESS || workspace_needed(c, pb) > pb.workspace_bytes) return false;
    // q_mma reading x in place runs a whole tile a block: its speed turns on how the tiles
    // share out, which an entry at another M does not tell (the 8192^2 entry ran 11008 x 10944
    // 8% slower than the staged heuristic).
    if (pb.quantized() && c.variant == GEMV_VARIANT_Q_MMA && !c.x_in_smem && !qmma_in_place_shares_evenly(c, pb, sm_count))
        return false;
    // Nor does q_mma_x_held's grid: its tiles a block and slices set a wave at the entry's
    // shape alone (the 8192^2 entry's 8 x 8 ran 7488 x 8320 as 1.14 waves, 12% slower than
    // the kernel it replaced). Elsewhere the heuristic shares the tiles out for the shape.
    if (c.variant == GEMV_VARIANT_Q_MMA_X_HELD && (pb.m != e.m || pb.k != e.k)) return false;
    // Entries of other operations were tuned before q_block_rows: where the heuristic runs
    // it (int8, NOTES.md section 41) they serve no shape, their own included.
    gemv_config_t heuristic;
    if (c.variant != GEMV_VARIANT_Q_BLOCK_ROWS && q_block_rows_config(pb, sm_count, &heuristic)) return false;
    // Likewise q_mma_rounds for small and medium int4 matrices (NOTES.md sections 42-43).
    if (c.variant != GEMV_VARIANT_Q_MMA_ROUNDS && q_mma_rounds_config(pb, sm_count, &heuristic)) return false;
    // And row_mma for large dense 16-bit op N matrices of short aligned rows (NOTES.md section 77).
    if (c.variant != GEMV_VARIANT_ROW_MMA && row_mma_config(pb, &heuristic)) return false;
    // Nor do op T entries of other reads stretch over the regime of the stream and phased
    // rows (rows that do not start aligned): they were tuned on aligned rows (the element-load
    // entries at K of 1 and 8 among them), where neither is the heuristic's choice.
    if (pb.op == GEMV_OP_T && !pb.quantized() && c.variant != GEMV_VARIANT_T_STREAM &&
        c.vector_loads != kLoadsPhased && (pb.m != e.m || pb.k != e.k) && t_misaligned_regime(pb, sm_count))
        return false;
    if (pb.op != GEMV_OP_N || pb.quantized()) return true;
    // A row-kernel grid of aligned 16-byte loads that ran in one wave at the entry's shape does
    // not serve a shape where it needs a second, mostly empty one, when its blocks are coarse
    // (512 threads up: 4 an SM or fewer) or its rows shorter (fewer loads a thread than it
    // was tuned for). The fp16 4096^2 entry (512 blocks of 512 threads, 0.97 of a wave) ran
    // 4800 x 4096 at 17.25 us, the heuristic's config 15.14; the 4096 x 1024 entry (64 threads
    // a row, two rows a block) ran bf16 6700 x 664 at 7.05, the heuristic's warp a row 4.42.
    // Finer blocks on rows as long stay: the 2048^2 entry ran 2500 x 2048 at 5.30 us in 1.18
    // waves, the heuristic 6.01 (benchmarks/NOTES.md section 45).
    if (c.vector_loads == kLoadsAligned && (pb.m != e.m || pb.k != e.k) && row_waves(c, e.m * e.batch, sm_count) <= 1.0 &&
        row_waves(c, pb.m * pb.batch, sm_count) > 1.0 &&
        ((int64_t)c.threads_per_row * c.rows_per_block >= 512 || pb.k < e.k))
        return false;
    // A phased entry does not stretch to shorter rows outside the heuristic's phased regime
    // (fp16 50084 x 153 ran 0.97x cuBLAS with the 65536 x 257 entry's config).
    if (phased_loads(c.vector_loads) && pb.k < e.k && !phased_regime(pb)) return false;
    if (!e.dense16 && (double)pb.m * pb.k > 2.0 * (double)e.m * e.k && phased_regime(pb)) return false;
    // Idle lanes within a warp cost little: the held-out shapes ran a warp a row on 18-28
    // packs (fp16 31 x 219: 1.76 us) where the heuristic took 3.18.
    return c.threads_per_row <= 32 || c.threads_per_row <= row_loads(c, pb.k, pb.dtype()) ||
           c.threads_per_row > row_loads(c, e.k, e.dtype);
}
} // namespace

namespace {

bool lookup_in(const std::vector<TableEntry> &list, const Problem &pb, int64_t m, int64_t batch, double max_distance,
               LazyHeuristic *single_n, int sm_count, gemv_config_t *config, double *distance);

} // namespace

bool table_lookup(const Table &t, const Problem &pb, LazyHeuristic &heuristic, gemv_config_t *config,
                  double *distance) {
    if (pb.dtype() < 0 || pb.dtype() > 2 || pb.a_type != pb.x_type || pb.x_type != pb.y_type) return false;
    if (pb.quantized())
        return (pb.qw.bits == 4 || pb.qw.bits == 8) &&
               lookup_in(t.by_key[quantized_key_of(pb.dtype(), pb.qw.bits)], pb, pb.m, 1, kMaxDistanceCoarse,
                         nullptr, heuristic.sm_count, config, distance);
    const bool single_n = pb.op == GEMV_OP_N && !pb.batched();
    if (lookup_in(t.by_key[key_of(pb.op, pb.dtype(), pb.batched())], pb, pb.m, pb.batch,
                  single_n ? kMaxDistance : kMaxDistanceCoarse, single_n ? &heuristic : nullptr, heuristic.sm_count,
                  config, distance))
        return true;
    // The row kernels run a batch as one run of batch * M rows, so a batched op N problem
    // with no batched entry in reach takes the single-product entry at (batch * M, K): the
    // same kernels on the same rows (8 x 4096 x 4096 fp32: 268.7 us with the heuristic,
    // a table at 32768 x 4096 says 180).
    return pb.op == GEMV_OP_N && pb.batched() &&
           lookup_in(t.by_key[key_of(pb.op, pb.dtype(), false)], pb, pb.m * pb.batch, 1, kMaxDistance, &heuristic,
                     heuristic.sm_count, config, distance);
}

namespace {

// Calls f(entry) for each entry of a sorted list within reach of (m, k) in log2 M and
// log2 K: a binary search for the M range, then one for the K range within each M.
template <typename F>
void for_each_in_reach(const std::vector<TableEntry> &list, int64_t m, int64_t k, double max_distance, F &&f) {
    const double reach = std::exp2(max_distance);
    auto bound = [](double v) { return v >= 0x1p62 ? (int64_t)1 << 62 : (int64_t)v; }; // entries are <= 2^40
    const int64_t m_lo = bound(std::floor(m / reach)), m_hi = bound(std::ceil(m * reach));
    const int64_t k_lo = bound(std::floor(k / reach)), k_hi = bound(std::ceil(k * reach));
    auto it = std::lower_bound(list.begin(), list.end(), m_lo, [](const TableEntry &e, int64_t v) { return e.m < v; });
    while (it != list.end() && it->m <= m_hi) {
        const int64_t em = it->m;
        const auto group_end =
            std::upper_bound(it, list.end(), em, [](int64_t v, const TableEntry &e) { return v < e.m; });
        auto e = std::lower_bound(it, group_end, k_lo, [](const TableEntry &x, int64_t v) { return x.k < v; });
        for (; e != group_end && e->k <= k_hi; ++e) f(*e);
        it = group_end;
    }
}

// Whether the heuristic reads the rows of the entry's shape as it reads pb's (the same load
// mode: 16-byte aligned, realigned, phased or by element). An entry's gain was measured
// against the heuristic at its own shape; across a change of the heuristic's load mode it
// says nothing: fp16 31 x 219 (element loads, 1.40 us) took the 16 x 257 entry (a realigned
// warp a row, 1.24x the heuristic's realigned rows there) at 1.69 us (benchmarks/results/
// h100-2026-11-24-s13-heldout-*).
bool same_heuristic_loads(const TableEntry &e, LazyHeuristic &heuristic) {
    Problem at = heuristic.pb;
    at.m = e.m;
    at.k = e.k;
    at.lda = e.k;
    at.batch = 1;
    return heuristic_config(at, heuristic.sm_count).vector_loads == heuristic.get().vector_loads;
}

// single_n (the problem's heuristic), for a list of op N single-product entries: a gain under
// kMinGainAway keeps an entry to its own shape, as does a change of the heuristic's load
// mode, and entries of unaligned rows reach kMaxDistanceUnaligned.
bool lookup_in(const std::vector<TableEntry> &list, const Problem &pb, int64_t m, int64_t batch, double max_distance,
               LazyHeuristic *single_n, int sm_count, gemv_config_t *config, double *distance) {
    m = std::max<int64_t>(m, 1);
    const int64_t k = std::max<int64_t>(pb.k, 1);
    const double lm = std::log2((double)m), lk = std::log2((double)k), lb = std::log2((double)batch);
    auto dist2 = [&](const TableEntry &e) {
        return (e.log_m - lm) * (e.log_m - lm) + (e.log_k - lk) * (e.log_k - lk) + (e.log_batch - lb) * (e.log_batch - lb);
    };
    const size_t esz = dtype_size(pb.dtype());
    const bool dense16 = pb.quantized() || ((reinterpret_cast<uintptr_t>(pb.A) & 15u) == 0 &&
                                            (pb.m == 1 || ((uint64_t)pb.lda * esz) % 16 == 0) &&
                                            (!pb.batched() || ((uint64_t)pb.stride_a * esz) % 16 == 0));
    const int64_t group = pb.quantized() ? pb.qw.group_size : 0; // an entry serves its group size only
    if (single_n && !dense16) max_distance = std::min(max_distance, kMaxDistanceUnaligned);
    const double max_d2 = max_distance * max_distance;
    // Where the heuristic reads x's phase copies, only entries of those apply: tables tuned
    // before them hold realigned or staged configs there, which the copies beat by 2-11%.
    // Under 2048 rows (fp32's band, and since s63 rows of 16 KB up from 32 MiB; docs/variants.md)
    // an entry at the problem's own shape still serves it: fp32 1024 x 4097's realigned entry ran
    // 7.4 us, the copies 9.3. From 2048 rows the copies beat the entries at their own shapes too.
    const bool copies_only = single_n && phased_copies_regime(pb);
    // Where the x-held rule for smaller quantized matrices runs, an entry of groups of 128 up
    // (or one a row) speaks for its own shape alone: the entries were tuned against earlier
    // rules, and at their neighbours the rule ran faster (bf16 float zeros 1000 x 4100: 5.85 us
    // with the 1024 x 4096 entry, 4.87 with the rule; int8 1200 x 4096 6.97 against 5.11).
    // Groups of 32 and 64 keep their neighbours: there the q_rows entries won about as often
    // (int4 g32 1024 x 3500 4.94 against 5.32, 1000 x 4100 6.37 against 5.19; benchmarks/
    // NOTES.md section 34).
    gemv_config_t held;
    const bool own_shape_only = pb.quantized() && !q_groups_under_a_step(pb.qw) &&
                                x_held_small_config(pb, sm_count, &held);
    auto kind = [&](const TableEntry &e) {
        const bool own_shape = e.m == m && e.k == k && e.batch == batch;
        return e.dense16 == dense16 && e.group == group && (!own_shape_only || own_shape) &&
               (!copies_only || e.config.vector_loads == kLoadsPhasedCopies || (pb.m < 2048 && own_shape));
    };
    // The nearest entry of the problem's kind usually runs it: one pass, no allocation.
    const TableEntry *best = nullptr;
    double best_d2 = max_d2;
    for_each_in_reach(list, m, k, max_distance, [&](const TableEntry &e) {
        if (!kind(e)) return;
        const double d2 = dist2(e);
        if (d2 <= best_d2 && (!best || d2 < best_d2)) best = &e, best_d2 = d2;
    });
    if (!best) return false;
    const TableEntry *use = fits(*best, pb, sm_count) ? best : nullptr;
    if (!use) { // alignment, K, fit or workspace rule the nearest out: try the others in reach, in order
        std::vector<const TableEntry *> order;
        for_each_in_reach(list, m, k, max_distance, [&](const TableEntry &e) {
            if (kind(e) && dist2(e) <= max_d2) order.push_back(&e);
        });
        std::stable_sort(order.begin(), order.end(),
                         [&](const TableEntry *a, const TableEntry *b) { return dist2(*a) < dist2(*b); });
        for (const TableEntry *e : order)
            if (fits(*e, pb, sm_count)) {
                use = e;
                break;
            }
    }
    const bool keep = use && !(single_n && dist2(*use) > 0 &&
                               (use->gain < kMinGainAway || !same_heuristic_loads(*use, *single_n)));
    clear_error(); // can_implement's detail of a skipped entry (or the heuristic's) is no error of the call
    if (!keep) return false;
    *config = use->config;
    if (distance) *distance = std::sqrt(dist2(*use));
    return true;
}

} // namespace

} // namespace libgemv

using namespace libgemv;

extern "C" {

gemv_status_t gemv_table_read(const char *path, gemv_table_t *table) {
    clear_error();
    if (!table) return set_error("table is NULL"), GEMV_STATUS_INVALID_POINTER;
    *table = nullptr;
    if (!path) return set_error("path is NULL"), GEMV_STATUS_INVALID_POINTER;
    return guarded("gemv_table_read", [&] {
        Table *t = nullptr;
        const gemv_status_t st = read_table(path, &t, nullptr);
        *table = reinterpret_cast<gemv_table_t>(t);
        return st;
    });
}

gemv_status_t gemv_table_destroy(gemv_table_t table) {
    clear_error();
    free_table(reinterpret_cast<Table *>(table));
    return GEMV_STATUS_SUCCESS;
}

gemv_status_t gemv_table_fingerprint(gemv_table_t table, gemv_table_fingerprint_t *fp) {
    clear_error();
    if (!table) return set_error("table is NULL"), GEMV_STATUS_INVALID_POINTER;
    if (!fp) return set_error("fp is NULL"), GEMV_STATUS_INVALID_POINTER;
    *fp = table_fingerprint(*reinterpret_cast<Table *>(table));
    return GEMV_STATUS_SUCCESS;
}

gemv_status_t gemv_table_check(gemv_table_t table, const gemv_device_props_t *props) {
    clear_error();
    if (!table) return set_error("table is NULL"), GEMV_STATUS_INVALID_POINTER;
    if (!props) return set_error("props is NULL"), GEMV_STATUS_INVALID_POINTER;
    return check_table(*reinterpret_cast<Table *>(table), *props);
}

gemv_status_t gemv_table_lookup(gemv_table_t table, const gemv_args_t *a, gemv_config_t *config, double *distance) {
    clear_error();
    if (!table) return set_error("table is NULL"), GEMV_STATUS_INVALID_POINTER;
    if (!a) return set_error("args is NULL"), GEMV_STATUS_INVALID_POINTER;
    if (!config) return set_error("config is NULL"), GEMV_STATUS_INVALID_POINTER;
    Problem pb;
    gemv_status_t st = problem_of(a, &pb);
    if (st != GEMV_STATUS_SUCCESS) return st;
    bool found = false;
    if ((st = guarded("gemv_table_lookup", [&] {
             const Table &t = *reinterpret_cast<Table *>(table);
             LazyHeuristic heuristic{pb, t.fp.sm_count};
             found = table_lookup(t, pb, heuristic, config, distance);
             return GEMV_STATUS_SUCCESS;
         })) != GEMV_STATUS_SUCCESS)
        return st;
    if (!found) {
        set_error("no entry of the table can run this op %s %s batch %lld %lldx%lld problem",
                  pb.op == GEMV_OP_T ? "T" : "N", dtype_name(pb.dtype()), (long long)pb.batch, (long long)pb.m,
                  (long long)pb.k);
        return GEMV_STATUS_NOT_SUPPORTED;
    }
    return GEMV_STATUS_SUCCESS;
}

} // extern "C"
