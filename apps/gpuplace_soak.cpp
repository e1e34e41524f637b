// gpuplace-soak: a long-run soak test. Steps a vector env with random valid actions (DEFER
// included when the scenario allows it) for many steps, through thousands of autoresets, and
// reports the resident memory (/proc/self/statm) at the start, after warm-up and at the end.
// Memory must not grow once every env has seen its largest episode: the exit status is 1 when the
// growth from warm-up to the end exceeds --max-growth-kb.
//
// Run with --help for the options. Defaults: 10,000,000 steps (summed over envs), 16 envs, 1 thread, the default scenario, a
// report every 1,000,000 steps, 1024 kB allowed growth.

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <new>
#include <string>
#include <vector>

#include <unistd.h>

#include <gpuplace/random.hpp>
#include <gpuplace/scenario_source.hpp>
#include <gpuplace/json.hpp>
#include <gpuplace/vector_env.hpp>

#include "cli.hpp"

namespace gp = gpuplace;

namespace {

/// Resident set size in kB (from /proc/self/statm), 0 where unavailable.
long rss_kb() {
    std::FILE* f = std::fopen("/proc/self/statm", "r");
    if (!f) return 0;
    long size = 0, resident = 0;
    const int n = std::fscanf(f, "%ld %ld", &size, &resident);
    std::fclose(f);
    return n == 2 ? resident * (sysconf(_SC_PAGESIZE) / 1024) : 0;
}

/// Memory the kernel can give without swapping, in kB: MemAvailable from /proc/meminfo, else the
/// free physical pages (sysconf); 0 where neither is known. GPUPLACE_TEST_AVAILABLE_KB=<kB> (tests
/// only) stands for it.
long available_kb() {
    if (const char* t = std::getenv("GPUPLACE_TEST_AVAILABLE_KB"); t && *t) return std::atol(t);
    if (std::FILE* f = std::fopen("/proc/meminfo", "r")) {
        char key[64];
        long kb = 0;
        while (std::fscanf(f, "%63s %ld kB", key, &kb) == 2)
            if (std::string(key) == "MemAvailable:") {
                std::fclose(f);
                return kb;
            }
        std::fclose(f);
    }
    const long pages = sysconf(_SC_AVPHYS_PAGES), size = sysconf(_SC_PAGESIZE);
    return pages > 0 && size > 0 ? pages * (size / 1024) : 0;
}

/// `kb` kilobytes as "12.3 MB" or "4.5 GB".
std::string size_text(double kb) {
    char b[32];
    if (kb >= 1024.0 * 1024) std::snprintf(b, sizeof b, "%.1f GB", kb / 1024 / 1024);
    else if (kb >= 1024) std::snprintf(b, sizeof b, "%.1f MB", kb / 1024);
    else std::snprintf(b, sizeof b, "%.0f kB", kb);
    return b;
}

/// Envs built to measure an env's memory before a large vector env is built.
constexpr std::uint64_t probe_envs = 64;

}  // namespace

int main(int argc, char** argv) try {
    CLI::App app{"A long-run soak test of the vector env: random valid actions (DEFER included when the scenario allows "
                 "it) through thousands of autoresets; exits 1 when the resident memory grows from warm-up to the end by "
                 "more than --max-growth-kb.",
                 "gpuplace-soak"};
    app.footer("Example: gpuplace-soak --scenario default --envs 8 --steps 1000000\n");
    std::uint64_t steps = 10'000'000, envs = 16, threads = 1, seed = 0, report = 1'000'000, max_growth = 1024;
    std::string scenario_name = "default";
    app.add_option("--steps", steps, "env steps, summed over the envs")->capture_default_str()->check(gpuplace::apps::whole(1));
    app.add_option("--envs", envs, "envs of the vector env")->capture_default_str()->check(gpuplace::apps::whole(1, std::uint64_t{1} << 20));
    app.add_option("--threads", threads, "stepping threads")->capture_default_str()->check(gpuplace::apps::whole(0, 4096));
    app.add_option("--scenario", scenario_name, "a preset scenario or a scenario file")->capture_default_str();
    app.add_option("--seed", seed, "the vector env's seed and the actions'")->capture_default_str()->check(gpuplace::apps::whole(0));
    app.add_option("--report", report, "steps between reports")->capture_default_str()->check(gpuplace::apps::whole(1));
    app.add_option("--max-growth-kb", max_growth, "allowed growth of the resident memory from warm-up to the end (kB)")
        ->capture_default_str()->check(gpuplace::apps::whole(0));
    if (const int rc = gpuplace::apps::parse(app, argc, argv); rc >= 0) return rc;
    const long rss_begin = rss_kb();
    const auto s = gp::read_scenario(scenario_name);
    if (envs > probe_envs) {  // an estimate from a few envs before the whole vector env is allocated
        const long before = rss_kb();
        double per_env_kb = 0;
        {
            gp::vector_env probe(s, probe_envs, 1);
            probe.reset(seed);
            per_env_kb = std::max(1.0, double(rss_kb() - before) / double(probe_envs));
        }
        const double need_kb = per_env_kb * double(envs);
        const long avail = available_kb();
        if (avail > 0 && need_kb > double(avail))
            return gpuplace::apps::failure(app, "--envs " + std::to_string(envs) + " needs about " + size_text(need_kb) + " (" +
                                                    size_text(per_env_kb) + " per env of scenario " + s.name + ", measured on " +
                                                    std::to_string(probe_envs) + " envs); this machine has " + size_text(double(avail)) +
                                                    " available (MemAvailable in /proc/meminfo)");
        std::printf("building %llu envs (about %s)...\n", static_cast<unsigned long long>(envs), size_text(need_kb).c_str());
        std::fflush(stdout);
    }
    if (steps < envs)
        gpuplace::apps::warning(app, "--steps " + std::to_string(steps) + " is less than one step of each of the " + std::to_string(envs) +
                                         " envs: each env steps once (" + std::to_string(envs) + " steps in all)");
    gp::vector_env v(s, envs, threads);
    v.reset(seed);
    const long rss_start = rss_kb();
    const std::size_t N = v.num_envs(), A = v.num_actions();
    std::printf("soak: scenario %s, %zu envs, %zu threads, %zu actions, %llu steps\n", s.name.c_str(), N, v.num_threads(), A,
                static_cast<unsigned long long>(steps));
    std::printf("rss: %ld kB at program start, %ld kB after construction and reset\n", rss_begin, rss_start);

    gp::rng r(seed);
    std::vector<std::int64_t> actions(N);
    std::uint64_t done = 0, episodes = 0, next_report = report, jobs_done = 0;
    long rss_warm = -1, rss_peak = rss_start;
    double return_sum = 0;
    const std::uint64_t warmup = std::max<std::uint64_t>(steps / 10, N);
    const auto t0 = std::chrono::steady_clock::now();
    while (done < steps) {
        const auto masks = v.action_masks();
        for (std::size_t i = 0; i < N; ++i) {
            const std::uint8_t* m = masks.data() + i * A;
            std::size_t n = 0;
            for (std::size_t a = 0; a < A; ++a) n += m[a];
            auto k = r.below(n);  // the mask is never all zero
            std::int64_t pick = 0;
            for (std::size_t a = 0; a < A; ++a)
                if (m[a] && k-- == 0) {
                    pick = std::int64_t(a);
                    break;
                }
            actions[i] = pick;
        }
        v.step(actions);
        done += N;
        for (std::size_t i = 0; i < N; ++i)
            if (v.terminated()[i] || v.truncated()[i]) {
                ++episodes;
                return_sum += v.final(i).episode_return;
                jobs_done += v.final(i).m.jobs_done;
            }
        if (rss_warm < 0 && done >= warmup) rss_warm = rss_kb();
        if (done >= next_report || done >= steps) {
            const long now = rss_kb();
            rss_peak = std::max(rss_peak, now);
            const double sec = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
            std::printf("  %12llu steps  %8llu episodes  rss %7ld kB  %.0f steps/s\n", static_cast<unsigned long long>(done),
                        static_cast<unsigned long long>(episodes), now, double(done) / sec);
            std::fflush(stdout);
            next_report += report;
        }
    }
    const double sec = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    const long rss_end = rss_kb();
    if (rss_warm < 0) rss_warm = rss_end;
    std::printf("done: %llu steps in %.1f s (%.0f steps/s), %llu episodes, %llu jobs finished, mean return %.4f\n",
                static_cast<unsigned long long>(done), sec, double(done) / sec, static_cast<unsigned long long>(episodes),
                static_cast<unsigned long long>(jobs_done), episodes ? return_sum / double(episodes) : 0.0);
    std::printf("rss: start %ld kB, after warm-up (%llu steps) %ld kB, end %ld kB, peak %ld kB; growth after warm-up %ld kB\n",
                rss_start, static_cast<unsigned long long>(warmup), rss_warm, rss_end, rss_peak, rss_end - rss_warm);
    if (rss_end - rss_warm > long(max_growth)) {
        std::printf("FAIL: memory grew by %ld kB after warm-up (allowed %llu kB)\n", rss_end - rss_warm,
                    static_cast<unsigned long long>(max_growth));
        return 1;
    }
    return 0;
} catch (const std::bad_alloc&) {
    std::fprintf(stderr, "gpuplace-soak: error: out of memory (std::bad_alloc); try fewer --envs or a smaller --scenario\n");
    return 1;
} catch (const std::exception& e) {
    std::fprintf(stderr, "gpuplace-soak: error: %s\n", e.what());
    return 1;
}
