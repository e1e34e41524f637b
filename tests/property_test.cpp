// Property tests: thousands of random scenarios (topologies, comm models, workloads, queue
// policies, strict / backfill, DEFER, co-location on and off, step and time limits, reward
// weights) played by random valid policies (uniform with DEFER, and every heuristic). Checked:
//  - the core's invariants at every step (mask never all zero, mask = free unpicked GPUs without
//    co-location, DEFER only when allowed, features finite in [0, 1], time never goes back, a GPU
//    never holds more jobs than allowed, free counts per node and rack);
//  - conservation: busy GPU-time = sum over jobs of GPUs x run time (exclusive GPUs); with
//    co-location, memory-time = sum of memory x GPUs x run time and busy GPU-time <= sum of GPUs x
//    run time; run time = ideal x slowdown (exclusive) or >= it (co-location);
//  - the reward identity: the rewards sum to -(jct x sum of JCTs + makespan x makespan) /
//    time_scale - comm x total comm cost + placement x sum of placement scores;
//  - determinism: a second run of the same config and seed, on a copy of the env, is bit-identical;
//  - basic_vector_env gives the same bytes with 1, 2 and 3 threads, across autoresets.
//
// GPUPLACE_PROPERTY_CASES sets the number of random scenarios (default 2000; 200 in a sanitizer
// build); GPUPLACE_PROPERTY_SEED changes the base seed. A failure prints the scenario JSON, the
// seed and the policy, which reproduce it.

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include <gpuplace/colocation_policy.hpp>
#include <gpuplace/env.hpp>
#include <gpuplace/policy.hpp>
#include <gpuplace/vector_env.hpp>

#include "test_util.hpp"

namespace gp = gpuplace;
using namespace gpuplace::test;

namespace {

#if defined(__SANITIZE_ADDRESS__)
constexpr std::size_t default_cases = 200;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
constexpr std::size_t default_cases = 200;
#else
constexpr std::size_t default_cases = 2000;
#endif
#else
constexpr std::size_t default_cases = 2000;
#endif

std::uint64_t env_number(const char* name, std::uint64_t fallback) {
    const char* v = std::getenv(name);
    if (!v || !*v) return fallback;
    return std::strtoull(v, nullptr, 10);
}

/// A random scenario: its JSON, which comm model, which policy.
struct random_case {
    json scenario;
    bool tree_route = false;
    int policy = 0;  ///< 0 random (with DEFER when allowed), 1 first-fit, 2 pack, 3 load-balance,
                     ///< 4 topology-greedy, 5 co-location packer
    std::uint64_t seed = 0;
};

constexpr const char* orders[] = {"fifo", "sjf", "fewest_gpus"};
constexpr const char* policy_names[] = {"random", "first_fit", "pack", "load_balance", "topology_greedy", "coloc_packer"};

random_case make_case(gp::detail::rng& r, std::size_t zoo_size, double max_memory) {
    random_case c;
    auto pick = [&](std::uint64_t n) { return r.below(n); };
    json topo;
    std::size_t G = 0;
    switch (pick(6)) {
        case 0: topo = proximity_drl_topo::config(), G = 32; break;
        case 1: {
            const auto racks = 1 + pick(2), npr = 1 + pick(2);
            topo = {{"preset", "dgx1"}, {"racks", racks}, {"nodes_per_rack", npr}}, G = racks * npr * 8;
            break;
        }
        case 2: {
            const auto racks = 1 + pick(2), npr = 1 + pick(2);
            topo = {{"preset", "dgx_a100"}, {"racks", racks}, {"nodes_per_rack", npr}}, G = racks * npr * 8;
            break;
        }
        default: {
            const auto racks = 1 + pick(3), npr = 1 + pick(3), gpn = 1 + pick(6);
            topo = {{"preset", "custom"}, {"racks", racks}, {"nodes_per_rack", npr}, {"gpus_per_node", gpn}};
            G = racks * npr * gpn;
        }
    }
    c.tree_route = pick(3) == 0;
    json comm = {{"model", c.tree_route ? "tree_route" : "ring_allreduce"}};
    json work;
    switch (pick(3)) {
        case 0: {
            json counts = json::object();
            for (int i = 0, n = 1 + int(pick(3)); i < n; ++i) counts[std::to_string(1 + pick(std::min<std::size_t>(G, 8)))] = 1 + pick(4);
            const double dmin = double(10 + pick(1000));
            work = {{"kind", "synthetic"},   {"num_jobs", 1 + pick(30)}, {"load", 0.2 + 0.2 * double(pick(15))},
                    {"gpu_counts", counts},  {"duration_min", dmin},     {"duration_max", dmin * double(1 + pick(20))}};
            break;
        }
        case 1: {
            json jobs = json::array();
            double t = double(pick(3)) * 50.0;
            for (int i = 0, n = 1 + int(pick(16)); i < n; ++i) {
                if (pick(2)) t += double(pick(500));  // ties are common
                jobs.push_back({{"submit_time", t}, {"num_gpus", 1 + pick(G)}, {"model", pick(zoo_size)},
                                {"work", 1 + pick(20000)}});
            }
            work = {{"kind", "jobs"}, {"jobs", jobs}};
            break;
        }
        default:
            work = {{"kind", "proximity_drl"}, {"num_jobs", 1 + pick(30)}, {"max_length", 1 + pick(20)},
                    {"max_request", 1 + pick(std::min<std::size_t>(G, 8))}, {"time_step", 60},
                    {"arrival_rate", pick(2) ? 0.0 : 0.002 * double(1 + pick(10))}};
    }
    const bool defer = pick(2) == 0;
    json env = {{"queue_policy", orders[pick(3)]}, {"backfill", pick(3) != 0}, {"allow_defer", defer},
                {"queue_window", pick(5)}};
    if (pick(8) == 0) env["max_steps"] = 1 + pick(60);
    if (pick(8) == 0) env["max_time"] = 100.0 * double(1 + pick(100));
    json reward = json::object();
    if (pick(2)) {
        reward = {{"jct", 0.5 * double(pick(4))},     {"makespan", 0.5 * double(pick(4))}, {"comm", 0.05 * double(pick(4))},
                  {"placement", 0.5 * double(pick(3))}, {"time_scale", 60.0 * double(1 + pick(100))}};
    }
    c.scenario = {{"topology", topo}, {"comm", comm}, {"workload", work}, {"env", env}, {"reward", reward}};
    if (pick(3) == 0)
        c.scenario["colocation"] = {{"enabled", true}, {"max_jobs_per_gpu", 1 + pick(3)},
                                    {"gpu_memory_gb", max_memory * (1.0 + 0.5 * double(pick(3)))}};
    c.policy = int(pick(6));
    c.seed = r();
    return c;
}

/// What an episode leaves behind, for the determinism check.
struct outcome {
    std::uint64_t hash = 1469598103934665603ULL;  ///< FNV-1a over every observation, mask and reward
    double reward_sum = 0;
    std::size_t steps = 0;
    void mix(const void* p, std::size_t n) {
        const auto* b = static_cast<const unsigned char*>(p);
        for (std::size_t i = 0; i < n; ++i) hash = (hash ^ b[i]) * 1099511628211ULL;
    }
    template <class E>
    void mix_state(const E& e) {
        mix(e.observation().data(), e.observation().size() * sizeof(float));
        mix(e.action_mask().data(), e.action_mask().size());
    }
};

#define PROP_CHECK(cond, ...)                  \
    do {                                       \
        if (!(cond)) FAIL(#cond << ": " << __VA_ARGS__); \
    } while (0)

/// Every step-level invariant of the env's current state.
template <class E>
void check_state(const E& e, double last_time) {
    const std::size_t G = e.num_gpus();
    const auto& cl = e.cluster();
    const auto& topo = e.topology();
    const bool coloc = e.config().colocation.enabled;
    PROP_CHECK(e.now() >= last_time, "time went back from " << last_time << " to " << e.now());
    for (float v : e.observation()) PROP_CHECK(std::isfinite(v) && v >= 0.0f && v <= 1.0f, "feature " << v);
    std::size_t busy = 0;
    for (std::size_t g = 0; g < G; ++g) {
        const auto id = gp::gpu_id(g);
        busy += !cl.is_free(id);
        PROP_CHECK(cl.jobs_on_count(id) <= (coloc ? e.config().colocation.max_jobs_per_gpu : 1u),
                   "GPU " << g << " holds " << cl.jobs_on_count(id) << " jobs");
        PROP_CHECK(cl.is_free(id) == (cl.jobs_on_count(id) == 0), "GPU " << g << " free flag");
    }
    PROP_CHECK(busy == cl.busy_gpus(), "busy " << busy << " vs " << cl.busy_gpus());
    for (std::size_t n = 0; n < topo.num_nodes(); ++n) {
        std::uint32_t f = 0;
        for (std::size_t s = 0; s < topo.gpus_per_node(); ++s) f += cl.is_free(gp::gpu_id(n * topo.gpus_per_node() + s));
        PROP_CHECK(cl.node_free(n) == f, "node " << n << " free count");
    }
    if (e.done()) return;
    const auto mask = e.action_mask();
    PROP_CHECK(e.has_current(), "no current job during the episode");
    std::size_t valid = 0;
    for (auto m : mask) valid += m != 0;
    PROP_CHECK(valid > 0, "all-zero mask at step " << e.steps());
    PROP_CHECK(!mask[G] || (e.config().env.allow_defer && e.picked().empty()), "DEFER valid");
    for (std::size_t g = 0; g < G; ++g) {
        const auto id = gp::gpu_id(g);
        if (e.is_picked(id)) PROP_CHECK(!mask[g], "picked GPU " << g << " valid");
        if (!coloc) PROP_CHECK(bool(mask[g]) == (cl.is_free(id) && !e.is_picked(id)), "mask of GPU " << g);
        else if (mask[g]) PROP_CHECK(e.has_room(id, e.current_index()), "GPU " << g << " valid without room");
    }
}

/// Conservation and the reward identity of a terminated episode.
template <class E>
void check_end(const E& e, double reward_sum) {
    const auto& sim = e.simulator();
    const bool coloc = e.config().colocation.enabled;
    PROP_CHECK(sim.all_done(), sim.finished().size() << " of " << sim.jobs().size() << " jobs finished");
    double jct = 0, gpu_time = 0, mem_time = 0, cost = 0, score = 0, first = 1e300, last = -1e300;
    for (const auto& r : sim.finished()) {
        const double run = r.end - r.start;
        PROP_CHECK(r.start >= r.submit && run >= 0, "job " << r.id << " submit " << r.submit << " start " << r.start);
        const double want = r.ideal_duration * r.slowdown;
        if (!coloc) PROP_CHECK(close_rel(run, want, 1e-9) || std::abs(run - want) <= 1e-9 * r.end, "job " << r.id << " ran " << run << " for " << want);
        else PROP_CHECK(run >= want * (1 - 1e-9) - 1e-9 * r.end, "job " << r.id << " ran " << run << " < " << want);
        PROP_CHECK(r.num_gpus == sim.job(r.id).num_gpus, "job " << r.id << " GPU count");
        jct += r.end - r.submit;
        gpu_time += double(r.num_gpus) * run;
        mem_time += sim.memory_of(r.id) * double(r.num_gpus) * run;
        cost += r.comm_cost;
        const auto b = e.comm().bounds(e.topology(), e.zoo(), r.model, r.num_gpus);
        score += b.worst > b.best ? 1.0 - (r.comm_cost - b.best) / (b.worst - b.best) : 1.0;
        last = std::max(last, r.end);
    }
    for (const auto& j : sim.jobs()) first = std::min(first, double(j.submit_time));
    const double tol = 1e-9;
    if (!coloc) {
        PROP_CHECK(std::abs(sim.busy_gpu_time() - gpu_time) <= tol * std::max(1.0, gpu_time),
                   "busy GPU-time " << sim.busy_gpu_time() << " vs sum of GPUs x run time " << gpu_time);
    } else {
        PROP_CHECK(sim.busy_gpu_time() <= gpu_time * (1 + tol) + tol, "busy GPU-time " << sim.busy_gpu_time() << " > " << gpu_time);
        PROP_CHECK(std::abs(sim.memory_time() - mem_time) <= tol * std::max(1.0, mem_time),
                   "memory-time " << sim.memory_time() << " vs " << mem_time);
    }
    const auto& w = e.config().reward;
    const double makespan = sim.finished().empty() ? 0.0 : last - first;
    const double want = -(w.jct * jct + w.makespan * makespan) / w.time_scale - w.comm * cost + w.placement * score;
    const double scale = (std::abs(w.jct) * jct + std::abs(w.makespan) * makespan) / w.time_scale + std::abs(w.comm) * cost +
                         std::abs(w.placement) * score;
    PROP_CHECK(std::abs(reward_sum - want) <= 1e-9 * std::max(1.0, scale), "reward sum " << reward_sum << " vs identity " << want);
    const auto m = e.episode_metrics();
    PROP_CHECK(m.jobs_done == sim.jobs().size(), "metrics jobs_done " << m.jobs_done);
    PROP_CHECK(m.utilization >= 0 && m.utilization <= 1 + 1e-9, "utilization " << m.utilization);
}

/// Plays one episode with policy `kind`, checking every invariant; returns what the determinism
/// check compares.
template <class E>
outcome play(E& e, int kind, std::uint64_t seed) {
    e.reset(seed);
    gp::detail::rng r(gp::detail::mix_seed(seed, 17));
    gp::first_fit_policy ff;
    gp::pack_policy pack;
    gp::load_balance_policy lb;
    gp::topology_greedy_policy tg;
    gp::colocation_packer_policy cp;
    pack.reset(seed), lb.reset(seed), tg.reset(seed), cp.reset(seed);
    outcome o;
    double last = e.now();
    check_state(e, last);
    // a bound on the steps: every GPU pick, plus at most one DEFER per waiting job between two events
    const std::size_t n = e.simulator().jobs().size();
    std::size_t budget = 10 + n * (2 * n + 3);
    for (const auto& j : e.simulator().jobs()) budget += j.num_gpus;
    while (!e.done()) {
        std::int64_t a = 0;
        switch (kind) {
            case 0: a = random_action(e, r, 0.2); break;
            case 1: a = ff.act(e); break;
            case 2: a = pack.act(e); break;
            case 3: a = lb.act(e); break;
            case 4: a = tg.act(e); break;
            default: a = cp.act(e); break;
        }
        const auto res = e.step(a);
        PROP_CHECK(std::isfinite(res.reward), "reward " << res.reward);
        o.reward_sum += res.reward;
        o.mix(&res.reward, sizeof res.reward);
        o.mix_state(e);
        check_state(e, last);
        last = e.now();
        PROP_CHECK(++o.steps <= budget, "the episode does not end after " << o.steps << " steps");
    }
    PROP_CHECK(o.reward_sum == e.episode_return(), "episode_return " << e.episode_return() << " vs " << o.reward_sum);
    if (e.terminated()) check_end(e, o.reward_sum);
    return o;
}

template <class E>
void run_case(const random_case& c, const gp::scenario& s) {
    E e(s);
    const auto a = play(e, c.policy, c.seed);
    E copy(e);  // a copy, reset with the same seed, plays the same episode bit for bit
    const auto b = play(copy, c.policy, c.seed);
    PROP_CHECK(a.hash == b.hash && a.steps == b.steps && std::memcmp(&a.reward_sum, &b.reward_sum, sizeof(double)) == 0,
               "second run differs: " << a.steps << " vs " << b.steps << " steps, return " << a.reward_sum << " vs "
                                      << b.reward_sum);
}

double max_model_memory(const gp::ModelZoo& z) {
    double m = 0;
    for (const auto& p : z.models()) m = std::max(m, p.memory_gb);
    return m;
}

}  // namespace

TEST_CASE("property: invariants, conservation, reward identity and determinism over random scenarios") {
    const auto cases = env_number("GPUPLACE_PROPERTY_CASES", default_cases);
    const auto zoo = gp::ModelZoo::builtin();
    gp::detail::rng r(env_number("GPUPLACE_PROPERTY_SEED", 20240607));
    std::size_t rejected = 0, terminated = 0;
    for (std::size_t i = 0; i < cases; ++i) {
        const auto c = make_case(r, zoo.size(), max_model_memory(zoo));
        const std::string info = "case " + std::to_string(i) + " seed " + std::to_string(c.seed) + " policy " + policy_names[c.policy] + " scenario " + c.scenario.dump();
        INFO(info);
        gp::scenario s;
        s = gp::scenario_from_json(c.scenario);
        try {
            if (c.tree_route) run_case<gp::tree_route_env>(c, s);
            else run_case<gp::env>(c, s);
        } catch (const gp::ConfigError& e) {
            // only a job list with a model unknown to the zoo or a job larger than the cluster may be refused
            const std::string what = e.what();
            const bool expected = what.find("can never fit") != std::string::npos;
            if (!expected) FAIL("unexpected ConfigError: " << what);
            ++rejected;
            continue;
        }
        terminated += !c.scenario["env"].contains("max_steps") && !c.scenario["env"].contains("max_time");
    }
    MESSAGE(cases << " random scenarios (" << rejected << " refused at construction)");
    CHECK(rejected <= cases / 10);
    CHECK(terminated > cases / 2);
}

TEST_CASE("property: VectorEnv gives the same bytes with 1, 2 and 3 threads, across autoresets") {
    const auto cases = std::max<std::uint64_t>(4, env_number("GPUPLACE_PROPERTY_CASES", default_cases) / 50);
    const auto zoo = gp::ModelZoo::builtin();
    gp::detail::rng r(env_number("GPUPLACE_PROPERTY_SEED", 20240607) + 1);
    for (std::size_t i = 0; i < cases; ++i) {
        auto c = make_case(r, zoo.size(), max_model_memory(zoo));
        c.tree_route = false;
        c.scenario["comm"] = {{"model", "ring_allreduce"}};
        if (c.scenario["workload"]["kind"] == "jobs") continue;  // a fixed list may not fit: covered above
        const std::string info = "case " + std::to_string(i) + " seed " + std::to_string(c.seed) + " scenario " + c.scenario.dump();
        INFO(info);
        const auto s = gp::scenario_from_json(c.scenario);
        const std::size_t N = 5, steps = 300;
        std::vector<std::vector<std::uint8_t>> runs;
        for (std::size_t threads : {1u, 2u, 3u}) {
            gp::vector_env v(s, N, threads);
            REQUIRE(v.num_threads() == threads);
            v.reset(c.seed);
            gp::detail::rng ar(c.seed);
            std::vector<std::int64_t> actions(N);
            std::vector<std::uint8_t> bytes;
            auto append = [&bytes](auto span) {
                const auto* p = reinterpret_cast<const std::uint8_t*>(span.data());
                bytes.insert(bytes.end(), p, p + span.size_bytes());
            };
            for (std::size_t t = 0; t < steps; ++t) {
                for (std::size_t k = 0; k < N; ++k) actions[k] = random_action(v.env(k), ar, 0.2);
                v.step(actions);
                append(v.observations());
                append(v.action_masks());
                append(v.rewards());
                append(v.terminated());
                append(v.truncated());
                for (std::size_t k = 0; k < N; ++k) {
                    if (!(v.terminated()[k] || v.truncated()[k])) continue;
                    const auto& f = v.final(k);
                    append(std::span<const double>(&f.episode_return, 1));
                    append(std::span<const double>(&f.m.avg_jct, 1));
                    REQUIRE(f.seed == gp::episode_seed(c.seed, k, v.episode(k) - 1));
                }
            }
            append(v.final_observations());
            runs.push_back(std::move(bytes));
        }
        CHECK(runs[0] == runs[1]);
        CHECK(runs[0] == runs[2]);
    }
}
