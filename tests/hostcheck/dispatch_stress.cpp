// Threads dispatching while others load, reload and drop tuned tables and read the table
// status, on the stand-in runtime (two fake H100s): for ThreadSanitizer (data races) and
// AddressSanitizer (a table freed under a dispatch). Every call must succeed and every
// launch pass the launch-plan checker.
//
//   dispatch_stress TABLE SECONDS THREADS SEED
#include <atomic>
#include <chrono>
#include <cstdio>
#include <random>
#include <thread>
#include <vector>

#include "gemv.h"
#include "problems.h"


int main(int argc, char **argv) {
    if (argc != 5) {
        fprintf(stderr, "usage: dispatch_stress TABLE SECONDS THREADS SEED\n");
        return 2;
    }
    const char *table = argv[1];
    const double seconds = atof(argv[2]);
    const int threads = atoi(argv[3]);
    const unsigned long long seed = strtoull(argv[4], nullptr, 10);
    gemv_fake_reset(2);
    gemv_set_log_level(GEMV_LOG_OFF);
    std::atomic<bool> stop{false};
    std::atomic<long> calls{0}, failures{0}, loads{0};

    std::vector<std::thread> pool;
    for (int t = 0; t < threads; ++t)
        pool.emplace_back([&, t] {
            std::mt19937_64 rng(seed * 1000 + t);
            gemv_set_device(t % 2);
            gemv_stream_t s = nullptr;
            if (t % 3) gemv_stream_create(&s); // others use the legacy stream
            while (!stop.load()) {
                Operands o = random_problem(rng);
                if (!o.a || !o.x || !o.y) {
                    o.release();
                    continue;
                }
                o.args.stream = s;
                if (rng() % 2) { // the library's workspace pool instead of the caller's
                    o.args.workspace = nullptr;
                    o.args.workspace_bytes = 0;
                    o.args.flags |= GEMV_FLAG_LIBRARY_WORKSPACE;
                }
                if (gemv_ex(&o.args, nullptr) != GEMV_STATUS_SUCCESS && ++failures <= 5)
                    fprintf(stderr, "thread %d: %s\n", t, gemv_last_error());
                ++calls;
                o.release();
            }
            if (s) gemv_stream_destroy(s);
        });
    for (int t = 0; t < 2; ++t)
        pool.emplace_back([&, t] {
            std::mt19937_64 rng(seed + 7 * t);
            while (!stop.load()) {
                switch (rng() % 4) {
                case 0: gemv_load_table(nullptr); break;
                case 1: {
                    gemv_table_status_t st;
                    gemv_table_status((int)(rng() % 2), &st);
                    break;
                }
                default:
                    if (gemv_load_table(table) != GEMV_STATUS_SUCCESS && ++failures <= 5)
                        fprintf(stderr, "load: %s\n", gemv_last_error());
                }
                gemv_set_log_level(rng() % 2 ? GEMV_LOG_OFF : GEMV_LOG_ERROR);
                ++loads;
            }
        });
    std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
    stop = true;
    for (auto &th : pool) th.join();
    const long violations = report_violations();
    printf("dispatch stress (seed %llu, %.0f s, %d threads): %ld calls, %ld table loads, %ld failures, %ld launch-plan "
           "violations\n", seed, seconds, threads, calls.load(), loads.load(), failures.load(), violations);
    return failures || violations ? 1 : 0;
}
