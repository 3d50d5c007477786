// Table fuzzer: mutations of a seed table (usually the shipped one) through libgemv's
// parser, lookup and dispatch, against the stand-in runtime (one fake H100). Every mutant
// must be refused with a status or accepted; an accepted one must give, for random
// problems, only configs that can_implement accepts and whose workspace fits, and its
// dispatches must pass the launch-plan checker. Crashes and leaks are the sanitizers' to
// report.
//
//   table_fuzz SEED_TABLE SECONDS SEED WORKDIR
#include <chrono>
#include <cstdio>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "gemv.h"
#include "problems.h"


namespace {

std::vector<std::string> lines_of(const std::string &text) {
    std::vector<std::string> out;
    std::istringstream in(text);
    for (std::string l; std::getline(in, l);) out.push_back(l);
    return out;
}

std::string join(const std::vector<std::string> &lines) {
    std::string s;
    for (const auto &l : lines) s += l + "\n";
    return s;
}

const char *kExtremes[] = {"0", "-1", "1", "2147483648", "4294967296", "4294967328", "1099511627776",
                           "9223372036854775807", "9223372036854775808", "4294967305.0", "1e308", "nan", "inf",
                           "-0", "abc", "", "0x10", "1.5", "18446744073709551616", "  "};

std::string mutate(const std::string &seed, std::mt19937_64 &rng) {
    std::vector<std::string> lines = lines_of(seed);
    const int n = 1 + (int)(rng() % 4);
    for (int i = 0; i < n && !lines.empty(); ++i) {
        const size_t li = rng() % lines.size();
        std::string &line = lines[li];
        switch (rng() % 9) {
        case 0: // flip a byte
            if (!line.empty()) line[rng() % line.size()] = (char)(rng() % 256 ? rng() % 256 : 'x');
            break;
        case 1: lines.erase(lines.begin() + (long)li); break;
        case 2: lines.insert(lines.begin() + (long)li, line); break;
        case 3: { // a field becomes an extreme value
            std::istringstream in(line);
            std::vector<std::string> w;
            for (std::string t; in >> t;) w.push_back(t);
            if (w.empty()) break;
            w[rng() % w.size()] = kExtremes[rng() % (sizeof kExtremes / sizeof *kExtremes)];
            std::string out;
            for (const auto &t : w) out += (out.empty() ? "" : " ") + t;
            line = out;
            break;
        }
        case 4: std::swap(line, lines[rng() % lines.size()]); break;
        case 5: lines.insert(lines.begin() + (long)(rng() % lines.size()), lines[rng() % lines.size()]); break;
        case 6: lines.resize(li); break; // truncated
        case 7: line = std::string(rng() % 4, ' ') + line; break; // indented
        case 8: // a word from another line
        {
            const std::string &other = lines[rng() % lines.size()];
            const size_t a = line.find(' '), b = other.rfind(' ');
            if (a != std::string::npos && b != std::string::npos) line = line.substr(0, a + 1) + other.substr(b + 1);
            break;
        }
        }
    }
    std::string text = join(lines);
    if (rng() % 16 == 0) text = "\xEF\xBB\xBF" + text; // a byte-order mark
    return text;
}

// Lookups of an accepted table: each config found must run its problem within the workspace.
int check_lookups(gemv_table_t table, std::mt19937_64 &rng, int problems) {
    int bad = 0;
    for (int i = 0; i < problems; ++i) {
        Operands o = random_problem(rng);
        gemv_config_t c{};
        c.struct_size = sizeof c;
        double d = 0;
        if (gemv_table_lookup(table, &o.args, &c, &d) == GEMV_STATUS_SUCCESS) {
            if (gemv_check_config(&c, &o.args) != GEMV_STATUS_SUCCESS ||
                gemv_workspace_size(&c, &o.args) > o.args.workspace_bytes) {
                fprintf(stderr, "lookup gave a config that cannot run its problem: %s\n", gemv_last_error());
                ++bad;
            }
        }
        o.release();
    }
    return bad;
}

} // namespace

int main(int argc, char **argv) {
    if (argc != 5) {
        fprintf(stderr, "usage: table_fuzz SEED_TABLE SECONDS SEED WORKDIR\n");
        return 2;
    }
    std::ifstream f(argv[1]);
    std::stringstream ss;
    ss << f.rdbuf();
    const std::string seed_text = ss.str();
    if (seed_text.empty()) {
        fprintf(stderr, "table_fuzz: cannot read %s\n", argv[1]);
        return 2;
    }
    const double seconds = atof(argv[2]);
    const unsigned long long seed = strtoull(argv[3], nullptr, 10);
    const std::string path = std::string(argv[4]) + "/fuzz.gemvtable";
    std::mt19937_64 rng(seed);
    gemv_fake_reset(1);
    gemv_set_log_level(GEMV_LOG_OFF);

    long mutants = 0, accepted = 0, installed = 0, calls = 0, bad = 0;
    const auto start = std::chrono::steady_clock::now();
    while (std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() < seconds) {
        const std::string text = mutate(seed_text, rng);
        {
            std::ofstream out(path, std::ios::binary | std::ios::trunc);
            out << text;
        }
        ++mutants;
        gemv_table_t t = nullptr;
        const gemv_status_t st = gemv_table_read(path.c_str(), &t);
        if (st == GEMV_STATUS_SUCCESS) {
            ++accepted;
            bad += check_lookups(t, rng, 8);
            gemv_table_destroy(t);
        } else if (t) {
            fprintf(stderr, "a refused table came with a handle\n");
            ++bad;
        }
        // Dispatch through it (the fake H100 matches the shipped table's fingerprint).
        if (gemv_load_table(path.c_str()) == GEMV_STATUS_SUCCESS) {
            ++installed;
            for (int i = 0; i < 4; ++i) {
                Operands o = random_problem(rng);
                const gemv_status_t s = gemv_ex(&o.args, nullptr);
                if (s != GEMV_STATUS_SUCCESS && o.a && o.x && o.y) {
                    fprintf(stderr, "dispatch failed: %s (%s)\n", gemv_status_string(s), gemv_last_error());
                    ++bad;
                }
                ++calls;
                o.release();
            }
        }
    }
    gemv_load_table(nullptr);
    const long violations = report_violations();
    printf("table fuzz (seed %llu, %.0f s): %ld mutants, %ld accepted by the parser, %ld installed, %ld dispatches, "
           "%ld bad results, %ld launch-plan violations\n",
           seed, seconds, mutants, accepted, installed, calls, bad, violations);
    return bad || violations ? 1 : 0;
}
