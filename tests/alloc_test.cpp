// Proves that env.step() and vector_env.step() (either autoreset mode) allocate nothing once the
// buffers exist: this test file replaces the global operator new / delete with counting versions
// (they apply to the whole test program but count only while a test switches counting on).

#include <doctest/doctest.h>

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <new>
#include <vector>

#include <gpuplace/policy.hpp>
#include <gpuplace/vector_env.hpp>

#include "test_util.hpp"

// The replacements below pair malloc with free by design; GCC cannot see that across inlining.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
#endif

namespace {
std::atomic<bool> counting{false};
std::atomic<std::int64_t> allocations{0};

void* counted_alloc(std::size_t n) {
    if (counting.load(std::memory_order_relaxed)) allocations.fetch_add(1, std::memory_order_relaxed);
    return std::malloc(n ? n : 1);
}
void* counted_aligned_alloc(std::size_t n, std::align_val_t a) {
    if (counting.load(std::memory_order_relaxed)) allocations.fetch_add(1, std::memory_order_relaxed);
    const auto al = static_cast<std::size_t>(a);
    const std::size_t size = (n + al - 1) / al * al;
    return std::aligned_alloc(al, size ? size : al);
}

/// Counts allocations made while alive (from every thread).
class alloc_counter {
public:
    alloc_counter() {
        allocations.store(0);
        counting.store(true);
    }
    ~alloc_counter() { counting.store(false); }
    alloc_counter(const alloc_counter&) = delete;
    alloc_counter& operator=(const alloc_counter&) = delete;
    std::int64_t stop() {
        counting.store(false);
        return allocations.load();
    }
};

/// Allocations while random valid actions (random_policy) play episodes of seeds 1 and 2
/// of `e` to their ends, counted from after each reset(); each episode ends with `jobs` jobs
/// finished when given.
template <class E>
std::int64_t random_play_allocations(E& e, std::size_t jobs = 0) {
    gpuplace::random_policy rp(1);
    std::int64_t n = 0;
    for (std::uint64_t seed = 1; seed <= 2; ++seed) {
        e.reset(seed);
        rp.reset(seed);
        alloc_counter c;
        while (!e.done()) (void)e.step(rp.act(e));
        n += c.stop();
        if (jobs) CHECK(e.finished().size() == jobs);
    }
    return n;
}
}  // namespace

void* operator new(std::size_t n) {
    if (void* p = counted_alloc(n)) return p;
    throw std::bad_alloc();
}
void* operator new[](std::size_t n) {
    if (void* p = counted_alloc(n)) return p;
    throw std::bad_alloc();
}
void* operator new(std::size_t n, const std::nothrow_t&) noexcept { return counted_alloc(n); }
void* operator new[](std::size_t n, const std::nothrow_t&) noexcept { return counted_alloc(n); }
void* operator new(std::size_t n, std::align_val_t a) {
    if (void* p = counted_aligned_alloc(n, a)) return p;
    throw std::bad_alloc();
}
void* operator new[](std::size_t n, std::align_val_t a) {
    if (void* p = counted_aligned_alloc(n, a)) return p;
    throw std::bad_alloc();
}
void* operator new(std::size_t n, std::align_val_t a, const std::nothrow_t&) noexcept { return counted_aligned_alloc(n, a); }
void* operator new[](std::size_t n, std::align_val_t a, const std::nothrow_t&) noexcept {
    return counted_aligned_alloc(n, a);
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }
void operator delete(void* p, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete[](void* p, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete(void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete(void* p, std::size_t, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t, std::align_val_t) noexcept { std::free(p); }
void operator delete(void* p, std::align_val_t, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete[](void* p, std::align_val_t, const std::nothrow_t&) noexcept { std::free(p); }

namespace gp = gpuplace;
using namespace gpuplace::test;

TEST_CASE("alloc: the counter sees allocations") {
    alloc_counter c;
    auto* v = new std::vector<int>(100);
    const auto n = c.stop();
    delete v;
    CHECK(n == 2);
}

TEST_CASE_TEMPLATE("alloc: env.step() allocates nothing after reset()", E, gp::env, gp::tree_route_env) {
    auto s = std::is_same_v<E, gp::env> ? gp::default_scenario()
                                        : with(gp::default_scenario(), {{"comm", {{"model", "tree_route"}}}});
    s = with(s, {{"workload", {{"num_jobs", 60}}}});
    for (const bool defer : {false, true}) {
        E e(with(s, {{"env", {{"allow_defer", defer}}}, {"reward", {{"comm", 0.1}, {"placement", 0.5}, {"makespan", 1.0}}}}));
        gp::first_fit_policy ff;
        gp::random_policy rp(1);
        gp::detail::rng r(2);
        for (std::uint64_t seed = 1; seed <= 3; ++seed) {
            INFO("defer ", defer, " seed ", seed);
            // first-fit
            e.reset(seed);
            {
                alloc_counter c;
                while (!e.done()) (void)e.step(ff.act(e));
                CHECK(c.stop() == 0);
            }
            CHECK(e.terminated());
            // the random policy
            e.reset(seed);
            rp.reset(seed);
            {
                alloc_counter c;
                while (!e.done()) (void)e.step(rp.act(e));
                CHECK(c.stop() == 0);
            }
            // random valid actions with DEFER
            e.reset(seed + 10);
            {
                alloc_counter c;
                while (!e.done()) (void)e.step(random_action(e, r, 0.3));
                CHECK(c.stop() == 0);
            }
            CHECK(e.finished().size() == 60);
        }
    }
}

TEST_CASE("alloc: env.step() allocates nothing after reset() on a heterogeneous cluster, with confine_type too") {
    for (const bool confine : {false, true}) {
        auto s = gp::preset_scenario("heterogeneous");
        s.workload.synthetic.num_jobs = 60;
        s.env.confine_type = confine;
        gp::env e(s);
        gp::detail::rng r(3);
        for (std::uint64_t seed = 1; seed <= 3; ++seed) {
            INFO("confine ", confine, " seed ", seed);
            e.reset(seed);
            {
                alloc_counter c;
                while (!e.done()) (void)e.step(random_action(e, r, 0.3));
                CHECK(c.stop() == 0);
            }
            CHECK(e.finished().size() == 60);
        }
    }
}

TEST_CASE("alloc: with the observation's segments chosen (scenario key \"observation\") env.step() allocates nothing") {
    for (const char* mode : {"gpu", "placement"}) {
        auto s = with(gp::default_scenario(), {{"workload", {{"num_jobs", 60}}}, {"observation", {{"exclude", {"queue", "global"}}}}});
        s.env.mode = gp::parse_action_mode(mode);
        gp::env e(s);
        gp::detail::rng r(4);
        for (std::uint64_t seed = 1; seed <= 2; ++seed) {
            INFO(mode, " seed ", seed);
            e.reset(seed);
            {
                alloc_counter c;
                while (!e.done()) (void)e.step(random_action(e, r, 0.3));
                CHECK(c.stop() == 0);
            }
            CHECK(e.finished().size() == 60);
        }
    }
}

TEST_CASE("alloc: vector_env.step() allocates nothing once every env has finished an episode") {
    const auto s = with(small_scenario(dgx_a100_2x4::config(), {{"1", .4}, {"2", .2}, {"4", .2}, {"8", .2}}, 20),
                        {{"env", {{"allow_defer", true}}}});
    for (const auto mode : {gp::autoreset_mode::same_step, gp::autoreset_mode::next_step})
    for (const std::size_t threads : {1, 2}) {
        INFO("threads ", threads, ", autoreset ", gp::to_string(mode));
        gp::vector_env v(s, 4, threads, mode);
        v.reset(3);
        std::vector<gp::detail::rng> rngs;
        for (std::size_t i = 0; i < 4; ++i) rngs.emplace_back(i);
        std::vector<std::int64_t> a(4);
        auto step = [&] {
            for (std::size_t i = 0; i < 4; ++i) a[i] = random_action(v.env(i), rngs[i], 0.2);
            v.step(a);
        };
        auto min_episode = [&] {
            std::uint64_t m = ~std::uint64_t{0};
            for (std::size_t i = 0; i < 4; ++i) m = std::min(m, v.episode(i));
            return m;
        };
        while (min_episode() < 1) step();
        std::int64_t n = 0;
        {
            alloc_counter c;
            while (min_episode() < 4) step();  // three more episodes each, autoresets included
            n = c.stop();
        }
        CHECK(n == 0);
    }
}

TEST_CASE_TEMPLATE("alloc: env.step() allocates nothing after reset() in the placement and job action modes", E, gp::env,
                   gp::tree_route_env) {
    auto s = std::is_same_v<E, gp::env> ? gp::default_scenario()
                                        : with(gp::default_scenario(), {{"comm", {{"model", "tree_route"}}}});
    s = with(s, {{"workload", {{"num_jobs", 60}}}});
    for (const char* mode : {"placement", "job"})
        for (const char* placer : {"pack", "topology_greedy"}) {
            E e(with(s, {{"env", {{"action_mode", mode}, {"placer", placer}}}}));
            gp::pack_wait_policy pw;
            pw.reserve(e.topology());  // the policy's own buffers
            gp::random_policy rp(1);
            for (std::uint64_t seed = 1; seed <= 3; ++seed) {
                INFO(std::string(mode), " placer ", std::string(placer), " seed ", seed);
                e.reset(seed);
                {
                    alloc_counter c;
                    while (!e.done()) (void)e.step(e.heuristic_action(pw));  // pack_wait through the planning view
                    CHECK(c.stop() == 0);
                }
                e.reset(seed + 10);
                rp.reset(seed);
                {
                    alloc_counter c;
                    while (!e.done()) (void)e.step(rp.act(e));  // uniformly random valid actions
                    CHECK(c.stop() == 0);
                }
                CHECK(e.finished().size() == 60);
            }
        }
}

TEST_CASE("alloc: env.step() allocates nothing after reset() in the round action mode") {
    for (const char* placer : {"pack", "topology_greedy"})
        for (const char* advisor : {"", "class_gittins"}) {
            INFO(std::string(placer), " advisor ", std::string(advisor));
            auto s = with(gp::default_scenario(), {{"workload", {{"num_jobs", 60}}},
                                                   {"env", {{"action_mode", "round"}, {"placer", placer}, {"round_advisor", advisor}}}});
            s.durations.mode = gp::duration_info::hidden;
            gp::env e(s);
            CHECK(random_play_allocations(e, 60) == 0);
        }
}

TEST_CASE("alloc: with preemption and hidden durations env.step() allocates nothing after reset()") {
    for (auto order : {gp::queue_order::las, gp::queue_order::two_d_las, gp::queue_order::gittins})
        for (const char* mode : {"gpu", "placement", "job"}) {
            INFO(std::string(gp::to_string(order)), " ", std::string(mode));
            auto s = with(gp::default_scenario(), {{"workload", {{"num_jobs", 60}}}});
            s.env.order = order;
            s.env.mode = gp::parse_action_mode(mode);
            s.preemption.enabled = true;
            s.preemption.round = 360;
            s.preemption.starvation = 2;
            s.durations.mode = gp::duration_info::hidden;
            gp::env e(s);
            CHECK(random_play_allocations(e) == 0);
        }
}

TEST_CASE("alloc: with hardware failures env.step() allocates nothing after reset()") {
    for (auto order : {gp::queue_order::fifo, gp::queue_order::las})
        for (const char* mode : {"gpu", "placement", "job"}) {
            INFO(std::string(gp::to_string(order)), " ", std::string(mode));
            auto s = with(gp::default_scenario(), {{"workload", {{"num_jobs", 60}}},
                                                   {"failures", {{"enabled", true}, {"mtbf_hours", 2}, {"repair_hours", 1},
                                                                 {"checkpoint_interval", "young_daly"}, {"checkpoint_cost", 60}}}});
            s.env.order = order;
            s.env.mode = gp::parse_action_mode(mode);
            s.preemption.enabled = gp::is_preemptive(order);
            s.durations.mode = order == gp::queue_order::las ? gp::duration_info::hidden : gp::duration_info::oracle;
            gp::env e(s);
            CHECK(random_play_allocations(e, 60) == 0);
            gp::avoid_failed_policy af;
            e.reset(4);
            af.reserve(e.topology());
            alloc_counter c;
            while (!e.done()) (void)e.step(af.act(e));
            CHECK(c.stop() == 0);
            CHECK(e.failure_state().failures() > 0);
        }
}

TEST_CASE("alloc: tenants, spot and deadlines: env.step() allocates nothing after reset() under their disciplines") {
    for (const char* preset : {"tenants", "spot", "deadlines"})
        for (const char* queue : {"capacity", "drf", "themis", "edf", "edf_ac", "las", "backfill"}) {
            auto s = gp::preset_scenario(preset);
            if ((std::string(queue) == "capacity" || std::string(queue) == "drf") && !s.tenants.enabled) continue;
            if (std::string(queue).starts_with("edf") && !s.deadlines.enabled) continue;
            INFO(preset, " ", queue);
            s.workload.synthetic.num_jobs = 60;
            gp::apply_queue(s, queue);
            s.preemption.round = 360;
            s.durations.mode = gp::duration_info::hidden;
            if (std::string(queue) == "backfill") s.durations.mode = gp::duration_info::oracle;
            gp::env e(s);
            CHECK(random_play_allocations(e, 60) == 0);
        }
}
