// Logging: levels, a switch ($GEMV_LOG_LEVEL, gemv_set_log_level) and a logger callback
// (gemv_set_logger), as cuBLAS has cublasSetLoggerCallback. The default logger writes
// "libgemv: <level>: <message>" to stderr. A disabled level costs one relaxed atomic load.
#include <atomic>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <set>
#include <string>

#include "internal.h"

namespace libgemv {

namespace {

const char *level_name(gemv_log_level_t level) {
    switch (level) {
    case GEMV_LOG_ERROR: return "error";
    case GEMV_LOG_WARNING: return "warning";
    case GEMV_LOG_INFO: return "info";
    case GEMV_LOG_TRACE: return "trace";
    default: return "off";
    }
}

// $GEMV_LOG_LEVEL: a number 0..4 or a level's name; anything else keeps the default (and
// says so, once).
int level_from_env() {
    const char *e = std::getenv("GEMV_LOG_LEVEL");
    if (!e || !*e) return GEMV_LOG_WARNING;
    for (int l = GEMV_LOG_OFF; l <= GEMV_LOG_TRACE; ++l)
        if (!std::strcmp(e, level_name((gemv_log_level_t)l)) || (e[0] == '0' + l && !e[1])) return l;
    std::fprintf(stderr, "libgemv: warning: GEMV_LOG_LEVEL = '%s' is not 0..4, off, error, warning, info or "
                 "trace; using warning\n", e);
    return GEMV_LOG_WARNING;
}

std::atomic<int> g_level{-1}; // -1: not read from the environment yet

struct Sink {
    std::mutex mutex;
    gemv_logger_t logger = nullptr; // nullptr: stderr
    void *user_data = nullptr;
};
Sink &sink() {
    static Sink s;
    return s;
}

} // namespace

int log_level() {
    int l = g_level.load(std::memory_order_relaxed);
    if (l < 0) {
        int unset = -1;
        g_level.compare_exchange_strong(unset, level_from_env(), std::memory_order_relaxed);
        l = g_level.load(std::memory_order_relaxed);
    }
    return l;
}

// Logging never throws (it runs inside the exported functions' error paths): a message
// that cannot be delivered is dropped.
void log_text(gemv_log_level_t level, const char *message) noexcept {
    if (level > log_level()) return;
    gemv_logger_t logger;
    void *user_data;
    try {
        std::lock_guard<std::mutex> lock(sink().mutex);
        logger = sink().logger;
        user_data = sink().user_data;
    } catch (...) {
        return;
    }
    if (logger) logger(level, message, user_data); // outside the lock: it may call back in
    else std::fprintf(stderr, "libgemv: %s: %s\n", level_name(level), message);
}

void log_message(gemv_log_level_t level, const char *fmt, ...) noexcept {
    if (level > log_level()) return;
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    std::vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    log_text(level, buf);
}

void log_once(gemv_log_level_t level, const std::string &message) noexcept {
    static std::mutex m;
    static std::set<std::string> said;
    try {
        std::lock_guard<std::mutex> lock(m);
        if (!said.insert(message).second) return;
    } catch (...) {
        return;
    }
    log_text(level, message.c_str());
}

} // namespace libgemv

using namespace libgemv;

extern "C" {

gemv_status_t gemv_set_log_level(gemv_log_level_t level) {
    clear_error();
    if ((int)level < GEMV_LOG_OFF || (int)level > GEMV_LOG_TRACE) {
        set_error("level = %d: expected GEMV_LOG_OFF (0) .. GEMV_LOG_TRACE (4)", (int)level);
        return GEMV_STATUS_INVALID_VALUE;
    }
    g_level.store((int)level, std::memory_order_relaxed);
    return GEMV_STATUS_SUCCESS;
}

gemv_log_level_t gemv_get_log_level(void) { return (gemv_log_level_t)log_level(); }

void gemv_set_logger(gemv_logger_t logger, void *user_data) {
    try {
        std::lock_guard<std::mutex> lock(sink().mutex);
        sink().logger = logger;
        sink().user_data = user_data;
    } catch (...) { // a mutex that cannot lock (never seen): the logger stays as it was
    }
}

} // extern "C"
