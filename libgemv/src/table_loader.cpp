// Which tuned table each device dispatches with. Each device's table is found once (on
// its first dispatch, std::call_once), from $GEMV_TABLE, the user's cache folder or the
// tables installed beside the library; gemv_load_table replaces it. Dispatch takes a
// shared reference (an atomic shared_ptr load), so a table replaced while another thread
// dispatches with it is freed when that dispatch is done, and reloads do not accumulate.
#include <dlfcn.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <functional>
#include <mutex>
#include <string>
#include <vector>

#include "internal.h"

namespace fs = std::filesystem;

namespace libgemv {

namespace {

constexpr int kMaxDevices = 64;

using TablePtr = std::shared_ptr<const Table>;

struct DeviceSlot {
    std::once_flag found;
    TablePtr table; // read and written with std::atomic_load / std::atomic_store only
    std::atomic<uint64_t> serial{0}; // table's serial number (0: none), written with it
    std::mutex mutex; // guards status
    gemv_table_status_t status{};
};

DeviceSlot g_slots[kMaxDevices];

TablePtr owned(Table *t) { return TablePtr(t, free_table); }

// What fills in beside the table in use (a shipped table under a user's).
struct Fill {
    int source = GEMV_TABLE_SOURCE_NONE;
    int64_t entries = 0;
    std::string path;
};

void install(DeviceSlot &s, const TablePtr &t, int source, const Fill &fill = Fill()) {
    {
        std::lock_guard<std::mutex> lock(s.mutex);
        std::atomic_store(&s.table, t);
        s.serial.store(t ? table_serial(*t) : 0, std::memory_order_release);
        s.status.source = t ? source : GEMV_TABLE_SOURCE_NONE;
        s.status.entries = t ? table_fingerprint(*t).entries - fill.entries : 0;
        snprintf(s.status.path, sizeof s.status.path, "%s", t ? table_path(*t) : "");
        s.status.fill_source = t ? fill.source : GEMV_TABLE_SOURCE_NONE;
        s.status.fill_entries = t ? fill.entries : 0;
        snprintf(s.status.fill_path, sizeof s.status.fill_path, "%s", t ? fill.path.c_str() : "");
    }
    if (t && fill.source != GEMV_TABLE_SOURCE_NONE)
        log_message(GEMV_LOG_INFO, "dispatch uses the tuned table %s (%lld entries), filled in by %s (%lld more)",
                    table_path(*t), (long long)s.status.entries, fill.path.c_str(), (long long)fill.entries);
    else if (t) // after the lock: a logger may ask for the table status
        log_message(GEMV_LOG_INFO, "dispatch uses the tuned table %s (%lld entries)", table_path(*t),
                    (long long)table_fingerprint(*t).entries);
}

void note_problem(DeviceSlot &s, gemv_status_t problem, const std::string &message) {
    std::lock_guard<std::mutex> lock(s.mutex);
    s.status.problem = problem;
    snprintf(s.status.message, sizeof s.status.message, "%s", message.c_str());
}

std::string user_dir() {
    const char *xdg = getenv("XDG_CACHE_HOME");
    if (xdg && xdg[0] == '/') return std::string(xdg) + "/pygemv/tables";
    const char *home = getenv("HOME");
    return home && *home ? std::string(home) + "/.cache/pygemv/tables" : std::string();
}

// The folder libgemv was loaded from (a wheel installs tables/ beside it; CMake installs
// them under share/gemv/tables).
std::string library_dir() {
    Dl_info info{};
    if (!dladdr(reinterpret_cast<void *>(&user_dir), &info) || !info.dli_fname) return "";
    std::error_code ec;
    fs::path p = fs::canonical(info.dli_fname, ec);
    return ec ? "" : p.parent_path().string();
}

// A file, or a folder's *.gemvtable files in name order.
std::vector<std::string> table_files(const std::string &place) {
    std::vector<std::string> out;
    std::error_code ec;
    if (place.empty() || !fs::exists(place, ec)) return out;
    if (!fs::is_directory(place, ec)) return {place};
    for (const auto &e : fs::directory_iterator(place, ec))
        if (e.path().extension() == ".gemvtable") out.push_back(e.path().string());
    std::sort(out.begin(), out.end());
    return out;
}

bool same_gpu(const gemv_table_fingerprint_t &fp, const gemv_device_props_t &props) {
    return strcmp(fp.gpu, props.name) == 0 && fp.sm_count == props.sm_count && fp.cc_major == props.cc_major &&
           fp.cc_minor == props.cc_minor;
}

void find_table(int device, DeviceSlot &s) {
    gemv_device_props_t props;
    gemv_status_t st = gemv_device_props(device, &props);
    if (st != GEMV_STATUS_SUCCESS) return note_problem(s, st, gemv_last_error());

    std::vector<std::pair<int, std::string>> places;
    const char *env = getenv(GEMV_TABLE_ENV);
    if (env) {
        if (!*env || !strcmp(env, "off") || !strcmp(env, "none"))
            return note_problem(s, GEMV_STATUS_SUCCESS, "tuned dispatch is off ($GEMV_TABLE)");
        places.push_back({GEMV_TABLE_SOURCE_ENV, env});
    } else {
        places.push_back({GEMV_TABLE_SOURCE_USER, user_dir()});
        const std::string lib = library_dir();
        if (!lib.empty()) {
            places.push_back({GEMV_TABLE_SOURCE_SHIPPED, lib + "/tables"});
            places.push_back({GEMV_TABLE_SOURCE_SHIPPED, lib + "/../share/gemv/tables"});
        }
    }
    // The first table of each source that fits the GPU. A user's table wins where it has
    // entries, and the shipped one fills the rest: a quick tune of a few shapes must not
    // throw away the shipped table's other shapes.
    TablePtr found[2];
    int found_source[2] = {GEMV_TABLE_SOURCE_NONE, GEMV_TABLE_SOURCE_NONE};
    int n_found = 0;
    for (const auto &[source, place] : places) {
        if (n_found == 2 || (n_found == 1 && (found_source[0] != GEMV_TABLE_SOURCE_USER || source == found_source[0])))
            continue;
        const std::vector<std::string> files = table_files(place);
        if (files.empty() && source == GEMV_TABLE_SOURCE_ENV) {
            const std::string why = "$GEMV_TABLE = " + place + ": no such table file or folder of *.gemvtable";
            note_problem(s, GEMV_STATUS_TABLE_INVALID, why);
            log_once(GEMV_LOG_WARNING, why + "; dispatch uses the heuristic");
        }
        for (const std::string &file : files) {
            // The header is checked before the entries are parsed: another GPU's table costs
            // a few lines, however long it is.
            Table *t = nullptr;
            st = read_table(file.c_str(), &t, &props);
            const TablePtr table = owned(t); // on a mismatch, the header alone
            if (st == GEMV_STATUS_SUCCESS) {
                found[n_found] = table;
                found_source[n_found++] = source;
                break;
            }
            // Tables of other GPUs are expected in a shared folder: pass them over.
            if (table && !same_gpu(table_fingerprint(*table), props) && source != GEMV_TABLE_SOURCE_ENV) continue;
            const std::string why = gemv_last_error();
            note_problem(s, st, why);
            log_once(GEMV_LOG_WARNING, why + "; it is not used");
        }
    }
    if (n_found == 1) return install(s, found[0], found_source[0]);
    if (n_found == 2) {
        Fill fill;
        fill.source = found_source[1];
        fill.path = table_path(*found[1]);
        const TablePtr merged = owned(merge_tables(*found[0], *found[1], &fill.entries));
        install(s, merged, found_source[0], fill);
    }
}

DeviceSlot *slot(int device) {
    if (device < 0 || device >= kMaxDevices) return nullptr;
    DeviceSlot &s = g_slots[device];
    std::call_once(s.found, find_table, device, std::ref(s));
    return &s;
}

} // namespace

std::shared_ptr<const Table> device_table(int device) {
    DeviceSlot *s = slot(device);
    return s ? std::atomic_load(&s->table) : nullptr;
}

uint64_t device_table_serial(int device) {
    DeviceSlot *s = slot(device);
    return s ? s->serial.load(std::memory_order_acquire) : 0;
}

} // namespace libgemv

using namespace libgemv;

extern "C" {

gemv_status_t gemv_load_table(const char *path) {
    clear_error();
    return guarded("gemv_load_table", [&] {
        int count = 0;
        cudaError_t e = cudaGetDeviceCount(&count);
        if (e != cudaSuccess) return cuda_failure(e, "cudaGetDeviceCount");
        count = std::min(count, kMaxDevices);
        if (!path) {
            for (int d = 0; d < count; ++d) {
                install(*slot(d), nullptr, GEMV_TABLE_SOURCE_NONE);
                note_problem(*slot(d), GEMV_STATUS_SUCCESS, "tuned dispatch is off (gemv_load_table(NULL))");
            }
            clear_error();
            return GEMV_STATUS_SUCCESS;
        }
        Table *raw = nullptr;
        gemv_status_t st = read_table(path, &raw, nullptr);
        const TablePtr t = owned(raw);
        if (st != GEMV_STATUS_SUCCESS) return st;
        // Every device is read before any is changed: a device that fails (an ECC error, a
        // GPU off the bus) leaves all of them as they were.
        std::vector<bool> fits(count);
        std::string mismatch;
        for (int d = 0; d < count; ++d) {
            slot(d); // first the automatic search, so that this load wins
            gemv_device_props_t props;
            if ((st = gemv_device_props(d, &props)) != GEMV_STATUS_SUCCESS) return st;
            fits[d] = check_table(*t, props) == GEMV_STATUS_SUCCESS;
            if (!fits[d] && mismatch.empty()) mismatch = gemv_last_error();
        }
        if (std::find(fits.begin(), fits.end(), true) == fits.end()) {
            set_error("%s", mismatch.empty() ? "no CUDA device" : mismatch.c_str());
            return GEMV_STATUS_TABLE_MISMATCH;
        }
        for (int d = 0; d < count; ++d)
            if (fits[d]) {
                install(*slot(d), t, GEMV_TABLE_SOURCE_EXPLICIT);
                note_problem(*slot(d), GEMV_STATUS_SUCCESS, "");
            }
        clear_error();
        return GEMV_STATUS_SUCCESS;
    });
}

gemv_status_t gemv_table_status(int device, gemv_table_status_t *status) {
    clear_error();
    return guarded("gemv_table_status", [&] {
        if (!status) return set_error("status is NULL"), GEMV_STATUS_INVALID_POINTER;
        gemv_status_t st;
        if (device < 0 && (st = current_device(&device)) != GEMV_STATUS_SUCCESS) return st;
        int count = 0;
        cudaError_t e = cudaGetDeviceCount(&count);
        if (e != cudaSuccess) return cuda_failure(e, "cudaGetDeviceCount");
        if (device >= count || device >= kMaxDevices) {
            set_error("device = %d: %d devices are visible", device, count);
            return GEMV_STATUS_INVALID_VALUE;
        }
        DeviceSlot &s = *slot(device);
        std::lock_guard<std::mutex> lock(s.mutex);
        *status = s.status;
        clear_error();
        return GEMV_STATUS_SUCCESS;
    });
}

} // extern "C"
