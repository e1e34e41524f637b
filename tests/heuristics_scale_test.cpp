// Large clusters: every heuristic runs on 100k GPUs; topology_greedy and pack decide as their
// direct definitions (reference implementations below, a scan per candidate / per item taken) do;
// a vector env too large for the machine is refused before it is allocated; evaluate() reports
// progress.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdio>
#include <cstdint>
#include <string>
#include <vector>

#include <gpuplace/gpuplace.hpp>
#include <gpuplace/json.hpp>

using namespace gpuplace;

namespace {

/// The default scenario on racks x nodes_per_rack x gpus_per_node GPUs.
scenario on_cluster(std::size_t racks, std::size_t nodes_per_rack, std::size_t gpus_per_node) {
    auto s = default_scenario();
    s.topology = topology_config_from_json(
        {{"preset", "custom"}, {"racks", racks}, {"nodes_per_rack", nodes_per_rack}, {"gpus_per_node", gpus_per_node}});
    return s;
}

/// topology_greedy as defined: for each candidate, completion 1 (lowest-index available GPUs) and
/// completion 2 (the picks' nodes, then their racks, then the rest, scanning every node in index
/// order); the lower cost, then slowdown, then index.
struct reference_topology_greedy {
    template <class E>
    std::int64_t act(const E& e) {
        const auto& t = e.topology();
        const auto mask = e.action_mask();
        const std::size_t G = e.num_gpus(), N = t.num_nodes(), gpn = t.gpus_per_node();
        const auto picked = e.picked();
        const std::size_t rest = e.current_job().num_gpus - picked.size() - 1;
        const bool all_slots = t.params().fabric == node_fabric::cube_mesh;
        std::vector<std::uint8_t> node_used(N), rack_used(t.num_racks());
        for (auto g : picked) node_used[t.node_of(g)] = rack_used[t.rack_of(g)] = 1;
        detail::greedy_choice choice;  // the tie rules
        for (std::size_t g = 0; g < G; ++g) {
            if (!mask[g] || (!all_slots && first_avail_before(mask, t, g))) continue;
            auto eval = [&](auto&& in_order) {
                std::vector<gpu_id> set(picked.begin(), picked.end());
                set.push_back(gpu_id(g));
                in_order([&](std::size_t s) {
                    if (set.size() == picked.size() + 1 + rest) return;
                    if (mask[s] && s != g) set.push_back(gpu_id(s));
                });
                std::sort(set.begin(), set.end());
                return e.evaluate(set);
            };
            const auto r1 = eval([&](auto&& f) { for (std::size_t s = 0; s < G; ++s) f(s); });
            auto used = node_used;
            auto rused = rack_used;
            used[t.node_of(gpu_id(g))] = rused[t.rack_of(gpu_id(g))] = 1;
            const auto r2 = eval([&](auto&& f) {
                for (int cls = 0; cls < 3; ++cls)
                    for (std::size_t n = 0; n < N; ++n)
                        if ((used[n] ? 0 : rused[n / t.nodes_per_rack()] ? 1 : 2) == cls)
                            for (std::size_t s = n * gpn; s < (n + 1) * gpn; ++s) f(s);
            });
            choice.offer(std::int64_t(g), r1, r2);
        }
        return choice.gpu >= 0 ? choice.gpu : e.defer_action();
    }
    /// Whether an available GPU of g's node comes before g (g is not the node's lowest available).
    template <class M, class T>
    static bool first_avail_before(const M& mask, const T& t, std::size_t g) {
        for (std::size_t s = t.node_of(gpu_id(g)) * t.gpus_per_node(); s < g; ++s)
            if (mask[s]) return true;
        return false;
    }
};

/// Runs `decisions` decisions of p on e (from reset(seed)), each checked against the mask, and
/// returns how many jobs started.
template <class P>
std::size_t run_decisions(env& e, P& p, std::size_t decisions, std::uint64_t seed) {
    e.reset(seed);
    p.reset(seed);
    p.reserve(e.topology());
    for (std::size_t i = 0; i < decisions && !e.done(); ++i) {
        const auto a = p.act(e);
        REQUIRE(e.action_mask()[std::size_t(a)]);
        e.step(a);
    }
    return e.simulator().running() + e.finished().size();
}

}  // namespace

TEST_CASE("heuristics: each runs on 100k GPUs") {
    auto s = on_cluster(1000, 100, 1);  // 100k one-GPU nodes: topology_greedy's most candidates
    s.workload.synthetic.num_jobs = 400;
    env e(s);
    REQUIRE(e.num_gpus() == 100000);
    for (const auto& name : heuristic_names()) {
        CAPTURE(name);
        std::size_t started = 0;
        detail::with_heuristic(name, [&]<class P>(std::type_identity<P>) {
            P p;
            // topology_greedy evaluates two placements per node with room at every pick: fewer of
            // its decisions (each costs about 100k evaluations)
            started = run_decisions(e, p, name == "topology_greedy" ? 12 : 150, 5);
        });
        CHECK(started > 0);
    }
}

TEST_CASE("heuristics: topology_greedy decides as its definition does") {
    auto check = [](const scenario& s, int episodes) {
        env e(s);
        topology_greedy_policy p;
        p.reserve(e.topology());
        reference_topology_greedy ref;
        random_policy r;
        std::size_t decisions = 0;
        for (int ep = 0; ep < episodes; ++ep) {
            e.reset(std::uint64_t(ep));
            r.reset(std::uint64_t(ep));
            while (!e.done()) {
                const auto a = p.act(e);
                REQUIRE(a == ref.act(e));
                ++decisions;
                e.step(ep % 2 ? r.act(e) : a);  // its own trajectory, or states of random play
            }
        }
        CHECK(decisions > 0);
    };
    auto s = on_cluster(4, 3, 3);
    s.workload.synthetic.load = 2.0;
    s.workload.synthetic.num_jobs = 60;
    check(s, 4);
    s.workload.synthetic.gpu_counts = {{1, 0.3}, {5, 0.3}, {11, 0.2}, {20, 0.2}};  // jobs across nodes and racks
    check(s, 4);
    s.topology = topology_config::of("dgx1", 2, 2);  // cube mesh: every available GPU a candidate
    check(s, 4);
}

TEST_CASE("heuristics: pack fills racks and nodes best-fit when no rack holds the job") {
    // 3 racks x 2 nodes x 2 GPUs; a 2-GPU job on GPUs 0 (rack 0) and 8 (rack 2) leaves racks
    // with 3, 4, 3 GPUs; a job of 9: no rack holds it, so all of rack 1 (most); no rack holds the
    // remaining 5, so all of rack 0 (3, the lower index of the two with most); rack 2 holds the
    // last 2, on its node that holds them (node 5: GPUs 10, 11; node 4 has only GPU 9)
    auto s = on_cluster(3, 2, 2);
    s.workload.kind = "jobs";
    s.workload.jobs = {{0, 0.0, 2, 0, 1e6, 1.0}, {0, 0.0, 9, 0, 1e6, 1.0}};
    env e(s);
    e.reset(0);
    e.step(0);
    e.step(8);
    pack_policy p;
    p.reserve(e.topology());
    std::vector<gpu_id> got;
    while (e.has_current()) {
        const auto a = p.act(e);
        got.push_back(gpu_id(a));
        e.step(a);
    }
    std::sort(got.begin(), got.end());
    CHECK(got == std::vector<gpu_id>{1, 2, 3, 4, 5, 6, 7, 10, 11});
}

TEST_CASE("vector env: more envs than the machine's memory holds is a ConfigError before allocating them") {
    CHECK_THROWS_WITH_AS(vector_env(default_scenario(), std::size_t{1} << 40), doctest::Contains("GiB"), ConfigError);
}

TEST_CASE("evaluate: the progress callback sees every episode once and in order, and progress_line writes them") {
    std::vector<std::size_t> seen;
    std::size_t total = 0;
    const auto rep = evaluate(default_scenario(), {heuristic("pack"), heuristic("first_fit")}, held_out_seeds(3), 2,
                              [&](std::size_t done, std::size_t all) {
                                  seen.push_back(done);
                                  total = all;
                              });
    CHECK(total == 6);
    CHECK(seen == std::vector<std::size_t>{1, 2, 3, 4, 5, 6});
    CHECK(rep.table() == evaluate(default_scenario(), {heuristic("pack"), heuristic("first_fit")}, held_out_seeds(3), 2).table());

    std::FILE* f = std::tmpfile();
    REQUIRE(f);
    {
        detail::progress_line line(f, "episodes", 0.0, 0.0);  // not a terminal: a line per report
        line(1, 4);
        line(4, 4);
    }
    std::rewind(f);
    char buf[256] = {};
    const auto n = std::fread(buf, 1, sizeof buf - 1, f);
    std::fclose(f);
    const std::string out(buf, n);
    CHECK(out.find("episodes: 1 / 4 (25%)") == 0);
    CHECK(out.find(", ETA ") != std::string::npos);
    CHECK(out.find("episodes: 4 / 4 (100%)") != std::string::npos);
}
