// Drives the environment with arbitrary action sequences (valid and invalid) over arbitrary small
// configs built from the input: topology (custom tree or DGX-1 cube-mesh), comm model (ring
// all-reduce or tree route), workload (synthetic, a fixed job list with ties, Proximity-DRL),
// queue order, backfill, DEFER, co-location, observation window, step/time limits, reward weights.
//
// Checked at every step:
//  - a valid action (mask set) steps; an invalid one (masked, out of range, negative) throws
//    InvalidAction and leaves observation, mask, info, picks, queue and time unchanged; a twin env
//    that never saw the invalid actions stays bit-identical (so no hidden state changed either);
//  - step() after the episode ended throws StateError and changes nothing;
//  - during an episode the mask is never all zero, DEFER is set only when enabled and nothing is
//    picked, a picked GPU is never valid again, without co-location the mask is exactly the free
//    unpicked GPUs; observation features are finite and in [0, 1]; rewards are finite;
//  - the observation step() leaves equals a full rewrite (refresh_observation(), when the env has it);
//  - time never goes back; episodes end: once the input is used up, first-fit finishes the
//    episode within (sum of GPU requests) steps;
//  - at termination: every job finished, start >= submit, end >= start; with only the JCT weight
//    the rewards sum to -(sum of JCTs) / time_scale; without co-location, busy GPU-time equals
//    the sum over jobs of GPUs x run time.

#include <fuzzer/FuzzedDataProvider.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include <gpuplace/env.hpp>
#include <gpuplace/json.hpp>

#include "fuzz_check.hpp"

namespace gp = gpuplace;
using json = gp::detail::json;

namespace {

const gp::ModelZoo& zoo() {
    static const gp::ModelZoo z = gp::ModelZoo::builtin();
    return z;
}

double max_memory() {
    double m = 0;
    for (const auto& p : zoo().models()) m = std::max(m, p.memory_gb);
    return m;
}

/// A small scenario drawn from the input.
json make_scenario(FuzzedDataProvider& in, bool& tree_route, bool& jct_only) {
    json topo;
    std::size_t G = 0;
    if (in.ConsumeIntegralInRange(0, 7) == 0) {
        const int racks = in.ConsumeIntegralInRange(1, 2), npr = in.ConsumeIntegralInRange(1, 2);
        topo = {{"preset", "dgx1"}, {"racks", racks}, {"nodes_per_rack", npr}};
        G = std::size_t(racks * npr * 8);
    } else {
        const int racks = in.ConsumeIntegralInRange(1, 3), npr = in.ConsumeIntegralInRange(1, 3),
                  gpn = in.ConsumeIntegralInRange(1, 8);
        topo = {{"preset", "custom"}, {"racks", racks}, {"nodes_per_rack", npr}, {"gpus_per_node", gpn}};
        G = std::size_t(racks * npr * gpn);
    }
    tree_route = in.ConsumeBool();
    json comm = {{"model", tree_route ? "tree_route" : "ring_allreduce"}};

    json work;
    switch (in.ConsumeIntegralInRange(0, 2)) {
        case 0: {
            json counts = json::object();
            const int n = in.ConsumeIntegralInRange(1, 3);
            for (int i = 0; i < n; ++i)
                counts[std::to_string(in.ConsumeIntegralInRange<std::size_t>(1, G))] = in.ConsumeIntegralInRange(1, 4);
            const double dmin = in.ConsumeIntegralInRange(1, 3600);
            work = {{"kind", "synthetic"},
                    {"num_jobs", in.ConsumeIntegralInRange(1, 24)},
                    {"load", 0.1 * in.ConsumeIntegralInRange(1, 100)},
                    {"gpu_counts", counts},
                    {"duration_min", dmin},
                    {"duration_max", dmin * in.ConsumeIntegralInRange(1, 10)}};
            break;
        }
        case 1: {
            json jobs = json::array();
            const int n = in.ConsumeIntegralInRange(1, 16);
            double t = 0;
            for (int i = 0; i < n; ++i) {
                if (in.ConsumeBool()) t += in.ConsumeIntegralInRange(0, 1000);  // ties are common
                jobs.push_back({{"submit_time", t},
                                {"num_gpus", in.ConsumeIntegralInRange<std::size_t>(1, G)},
                                {"model", in.ConsumeIntegralInRange<std::size_t>(0, zoo().size() - 1)},
                                {"work", in.ConsumeIntegralInRange(1, 100000)}});
            }
            work = {{"kind", "jobs"}, {"jobs", jobs}};
            break;
        }
        default:
            work = {{"kind", "proximity_drl"},
                    {"num_jobs", in.ConsumeIntegralInRange(1, 30)},
                    {"max_length", in.ConsumeIntegralInRange(1, 20)},
                    {"max_request", in.ConsumeIntegralInRange<std::size_t>(1, G)},
                    {"time_step", 60},
                    {"arrival_rate", in.ConsumeBool() ? 0.0 : 0.001 * in.ConsumeIntegralInRange(1, 100)}};
    }
    static const char* orders[] = {"fifo", "sjf", "fewest_gpus"};
    json env = {{"queue_policy", orders[in.ConsumeIntegralInRange(0, 2)]},
                {"backfill", in.ConsumeBool()},
                {"allow_defer", in.ConsumeBool()},
                {"queue_window", in.ConsumeIntegralInRange(0, 4)},
                {"max_steps", in.ConsumeBool() ? 0 : in.ConsumeIntegralInRange(1, 300)},
                {"max_time", in.ConsumeBool() ? 0.0 : 100.0 * in.ConsumeIntegralInRange(1, 1000)}};
    json reward = {{"jct", 1.0}, {"time_scale", 3600}};
    jct_only = true;
    if (in.ConsumeBool()) {
        jct_only = false;
        reward = {{"jct", 0.5 * in.ConsumeIntegralInRange(0, 4)},
                  {"makespan", 0.5 * in.ConsumeIntegralInRange(0, 4)},
                  {"comm", 0.1 * in.ConsumeIntegralInRange(0, 4)},
                  {"placement", 0.5 * in.ConsumeIntegralInRange(0, 4)},
                  {"time_scale", 60.0 * in.ConsumeIntegralInRange(1, 100)}};
    }
    json s = {{"topology", topo}, {"comm", comm}, {"workload", work}, {"env", env}, {"reward", reward}};
    if (in.ConsumeBool())
        s["colocation"] = {{"enabled", true},
                           {"max_jobs_per_gpu", in.ConsumeIntegralInRange(1, 4)},
                           {"gpu_memory_gb", max_memory() * (1.0 + 0.25 * in.ConsumeIntegralInRange(0, 4))}};
    // the action mode last, so that the bytes before it mean what they meant before the modes
    if (const auto m = in.ConsumeIntegralInRange(0, 3); m >= 2) {
        static constexpr const char* placers[] = {"pack", "first_fit", "load_balance", "topology_greedy"};
        s["env"]["action_mode"] = m == 2 ? "placement" : "job";
        s["env"]["slots"] = in.ConsumeIntegralInRange(1, 6);
        s["env"]["placer"] = placers[in.ConsumeIntegralInRange(0, 3)];
    }
    return s;
}

/// Everything visible about an env, to compare before and after a rejected action.
struct snapshot {
    std::vector<float> obs;
    std::vector<std::uint8_t> mask;
    std::vector<gp::gpu_id> picked;
    std::vector<std::uint32_t> queue;
    gp::env_info info;
    std::uint32_t current;
    double now;
    bool done;

    template <class E>
    explicit snapshot(const E& e)
        : obs(e.observation().begin(), e.observation().end()), mask(e.action_mask().begin(), e.action_mask().end()),
          picked(e.picked().begin(), e.picked().end()), queue(e.queue().begin(), e.queue().end()), info(e.info()),
          current(e.current_index()), now(e.now()), done(e.done()) {}

    bool operator==(const snapshot& o) const {
        return obs.size() == o.obs.size() && std::memcmp(obs.data(), o.obs.data(), obs.size() * sizeof(float)) == 0 &&
               mask == o.mask && picked == o.picked && queue == o.queue && info.time == o.info.time &&
               info.steps == o.info.steps && info.jobs_done == o.info.jobs_done && info.jobs_total == o.info.jobs_total &&
               info.queued == o.info.queued && info.running == o.info.running &&
               std::memcmp(&info.episode_return, &o.info.episode_return, sizeof(double)) == 0 && current == o.current &&
               std::memcmp(&now, &o.now, sizeof(double)) == 0 && done == o.done;
    }
};

template <class E>
void check_state(const E& e, bool coloc, bool defer) {
    const std::size_t G = e.num_gpus();
    const auto mask = e.action_mask();
    FUZZ_CHECK(mask.size() == e.num_actions(), "mask size %zu, %zu actions", mask.size(), e.num_actions());
    for (float x : e.observation()) FUZZ_CHECK(std::isfinite(x) && x >= 0.0f && x <= 1.0f, "feature %g", double(x));
    if constexpr (requires(E& x) { x.refresh_observation(); }) {
        // step() may update the observation incrementally: it must equal a full rewrite
        E full = e;
        full.refresh_observation();
        FUZZ_CHECK(snapshot(full) == snapshot(e), "incremental observation differs from a full rewrite at step %zu", e.steps());
    }
    if (e.done()) return;
    FUZZ_CHECK(e.has_current(), "no current job during an episode");
    std::size_t valid = 0;
    for (auto m : mask) valid += m != 0;
    FUZZ_CHECK(valid > 0, "all-zero mask at step %zu", e.steps());
    if (e.mode() != gp::action_mode::gpu) {  // the GPU-level checks below are the GPU mode's
        FUZZ_CHECK(e.picked().empty(), "%zu picks between decisions of the %s mode", e.picked().size(), std::string(to_string(e.mode())).c_str());
        FUZZ_CHECK(!mask[e.num_actions() - 1] || defer, "DEFER / wait valid with allow_defer off");
        return;
    }
    FUZZ_CHECK(!mask[G] || (defer && e.picked().empty()), "DEFER valid (allow_defer %d, %zu picked)", int(defer),
               e.picked().size());
    for (std::size_t g = 0; g < G; ++g) {
        const auto id = gp::gpu_id(g);
        if (e.is_picked(id)) FUZZ_CHECK(!mask[g], "picked GPU %zu is valid", g);
        if (!coloc) FUZZ_CHECK(bool(mask[g]) == (e.cluster().is_free(id) && !e.is_picked(id)), "mask of GPU %zu", g);
    }
    FUZZ_CHECK(e.picked().size() < e.current_job().num_gpus, "%zu picks for a %u-GPU job", e.picked().size(),
               e.current_job().num_gpus);
}

template <class E>
void check_end(const E& e, double reward_sum, bool jct_only, bool coloc) {
    if (!e.terminated()) return;
    const auto& sim = e.simulator();
    FUZZ_CHECK(sim.all_done(), "terminated with %zu of %zu jobs finished", sim.finished().size(), sim.jobs().size());
    double jct = 0, gpu_time = 0;
    for (const auto& r : sim.finished()) {
        FUZZ_CHECK(r.start >= r.submit && r.end >= r.start, "job %u: submit %g start %g end %g", r.id, r.submit, r.start, r.end);
        jct += r.end - r.submit;
        gpu_time += double(r.num_gpus) * (r.end - r.start);
    }
    const auto& rc = e.config().reward;
    if (jct_only) {
        const double want = -jct / rc.time_scale;
        FUZZ_CHECK(std::abs(reward_sum - want) <= 1e-9 * std::max(1.0, std::abs(want)), "reward sum %.17g, -(sum JCT)/scale %.17g",
                   reward_sum, want);
    }
    if (!coloc)
        FUZZ_CHECK(std::abs(sim.busy_gpu_time() - gpu_time) <= 1e-9 * std::max(1.0, gpu_time),
                   "busy GPU-time %.17g, sum of GPUs x run time %.17g", sim.busy_gpu_time(), gpu_time);
}

template <class E>
void run(const gp::scenario& s, FuzzedDataProvider& in, bool jct_only) {
    std::unique_ptr<E> e;
    try {
        e = std::make_unique<E>(s);
    } catch (const gp::ConfigError&) {
        return;
    }
    const bool coloc = s.colocation.enabled, defer = s.env.allow_defer;
    const std::size_t G = e->num_actions() - 1;  // GPUs, or the placement / job mode's slots
    std::uint64_t seed = in.ConsumeIntegral<std::uint8_t>();
    try {
        e->reset(seed);
    } catch (const gp::ConfigError&) {
        return;  // a drawn job the cluster or zoo cannot take
    }
    E twin = *e;  // sees only the valid actions
    double reward_sum = 0;
    check_state(*e, coloc, defer);
    while (in.remaining_bytes() > 0) {
        const auto op = in.ConsumeIntegral<std::uint8_t>();
        std::int64_t a;
        if (op < 64) {  // any action, often invalid
            switch (op % 4) {
                case 0: a = in.ConsumeIntegral<std::int64_t>(); break;
                case 1: a = -1 - std::int64_t(op); break;
                default: a = in.ConsumeIntegralInRange<std::int64_t>(0, std::int64_t(G)); break;
            }
        } else if (op < 72) {  // start the next episode
            seed = op + 1000 * seed;
            e->reset(seed);
            twin.reset(seed);
            reward_sum = 0;
            check_state(*e, coloc, defer);
            continue;
        } else {  // a valid action, DEFER included
            const auto mask = e->action_mask();
            std::size_t n = 0;
            for (auto m : mask) n += m != 0;
            if (n == 0) {
                a = 0;
            } else {
                std::size_t k = op % n;
                a = 0;
                for (std::size_t i = 0; i <= G; ++i)
                    if (mask[i] && k-- == 0) {
                        a = std::int64_t(i);
                        break;
                    }
            }
        }
        const bool ok = !e->done() && a >= 0 && a <= std::int64_t(G) && e->action_mask()[std::size_t(a)];
        const snapshot before(*e);
        if (!ok) {
            bool threw = false;
            try {
                (void)e->step(a);
            } catch (const gp::InvalidAction& x) {
                FUZZ_CHECK(!e->done(), "InvalidAction after the episode ended: %s", x.what());
                FUZZ_CHECK(std::string(x.what()).rfind("invalid action " + std::to_string(a), 0) == 0, "message: %s", x.what());
                threw = true;
            } catch (const gp::StateError&) {
                FUZZ_CHECK(e->done(), "StateError during an episode");
                threw = true;
            }
            FUZZ_CHECK(threw, "invalid action %lld accepted", static_cast<long long>(a));
            FUZZ_CHECK(snapshot(*e) == before, "rejected action %lld changed the env", static_cast<long long>(a));
            continue;
        }
        const auto r = e->step(a);
        const auto r2 = twin.step(a);
        FUZZ_CHECK(std::isfinite(r.reward), "reward %g", r.reward);
        FUZZ_CHECK(std::memcmp(&r.reward, &r2.reward, sizeof(double)) == 0 && r.terminated == r2.terminated &&
                       r.truncated == r2.truncated,
                   "twin diverged: reward %.17g vs %.17g", r.reward, r2.reward);
        FUZZ_CHECK(snapshot(*e) == snapshot(twin), "twin diverged after action %lld", static_cast<long long>(a));
        FUZZ_CHECK(e->now() >= before.now, "time went back from %g to %g", before.now, e->now());
        reward_sum += r.reward;
        check_state(*e, coloc, defer);
        check_end(*e, reward_sum, jct_only, coloc);
    }
    // finish the episode with first-fit (never DEFER): at most one step per remaining GPU pick
    if (e->done()) return;
    std::size_t budget = 1;
    for (const auto& j : e->simulator().jobs()) budget += j.num_gpus;
    while (!e->done()) {
        FUZZ_CHECK(budget-- > 0, "the episode does not end (%zu steps, time %g)", e->steps(), e->now());
        const auto mask = e->action_mask();
        std::int64_t a = -1;
        for (std::size_t g = 0; g < G && a < 0; ++g)
            if (mask[g]) a = std::int64_t(g);
        FUZZ_CHECK(a >= 0, "no valid GPU (or slot) at step %zu", e->steps());
        reward_sum += e->step(a).reward;
        check_state(*e, coloc, defer);
    }
    check_end(*e, reward_sum, jct_only, coloc);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    FuzzedDataProvider in(data, size);
    bool tree_route = false, jct_only = true;
    const json j = make_scenario(in, tree_route, jct_only);
    gp::scenario s;
    try {
        s = gp::scenario_from_json(j);
    } catch (const gp::ConfigError& e) {
        FUZZ_CHECK(false, "generated scenario rejected: %s\n%s", e.what(), j.dump().c_str());
    }
    FUZZ_CHECK(gp::comm_model_name(s) == (tree_route ? "tree_route" : "ring_allreduce"), "comm model %s",
               gp::comm_model_name(s).c_str());
    run<gp::env>(s, in, jct_only);
    return 0;
}
