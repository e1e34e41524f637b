// Tests of include/gpuplace/cluster.hpp: GPU holders and free counts per node, rack and cluster.

#include <doctest/doctest.h>

#include <concepts>
#include <vector>

#include <gpuplace/cluster.hpp>

#include "test_util.hpp"

namespace gp = gpuplace;
using namespace gpuplace::test;

// A copy must not ask whether cluster_state is a Topology (the constructor from a topology is a
// constrained template; clang rejects the recursive constraint check).
static_assert(std::copyable<gp::cluster_state>);
static_assert(!gp::Topology<gp::cluster_state>);

TEST_CASE("cluster_state: allocate and release keep every count") {
    const auto t = gp::TreeTopology::proximity_drl();
    gp::cluster_state c(t);
    CHECK(c.num_gpus() == 32);
    CHECK(c.free_gpus() == 32);
    CHECK(c.busy_gpus() == 0);
    CHECK(c.hierarchy().uniform_size(1) == 4);
    CHECK(c.hierarchy().uniform_size(2) == 16);
    CHECK(c.free_on(1).size() == 8);
    for (std::size_t n = 0; n < 8; ++n) CHECK(c.node_free(n) == 4);
    for (std::size_t r = 0; r < 2; ++r) CHECK(c.rack_free(r) == 16);

    c.allocate(5, 7, 100.0);
    CHECK(!c.is_free(5));
    CHECK(c.holder(5) == 7);
    CHECK(c.end_time(5) == 100.0);
    CHECK(c.holder(4) == gp::cluster_state::no_job);
    CHECK(c.free_gpus() == 31);
    CHECK(c.busy_gpus() == 1);
    CHECK(c.node_free(1) == 3);
    CHECK(c.rack_free(0) == 15);
    CHECK(c.rack_free(1) == 16);
    c.allocate(20, 8, 50.0);
    CHECK(c.node_free(5) == 3);
    CHECK(c.rack_free(1) == 15);
    // exclusive mode (one job per GPU, no change log): a busy GPU's share is 1, its memory 0, and
    // its job list is its holder
    CHECK(c.exclusive());
    CHECK(c.share_used(5) == 1.0);
    CHECK(c.share_used(4) == 0.0);
    CHECK(c.memory_used(5) == 0.0);
    CHECK(c.jobs_on_count(5) == 1);
    REQUIRE(c.jobs_on(5).size() == 1);
    CHECK(c.jobs_on(5)[0] == 7);
    CHECK(c.jobs_on(4).empty());
    CHECK(c.gpus_with_free_slot() == 30);
    c.release(5);
    CHECK(c.jobs_on(5).empty());
    CHECK(c.share_used(5) == 0.0);
    CHECK(c.is_free(5));
    CHECK(c.holder(5) == gp::cluster_state::no_job);
    CHECK(c.node_free(1) == 4);
    CHECK(c.rack_free(0) == 16);
    CHECK(c.free_gpus() == 31);
    c.clear();
    CHECK(c.free_gpus() == 32);
    CHECK(c.is_free(20));
    CHECK(c.node_free(5) == 4);
    CHECK(c.rack_free(1) == 16);
}

TEST_CASE_TEMPLATE("cluster_state agrees with a recount under random changes", P, dgx_a100_2x4, odd_topo, tiny_topo) {
    const auto t = P::make();
    gp::cluster_state c;
    c.resize(t);
    std::vector<std::uint32_t> holder(t.num_gpus(), gp::cluster_state::no_job);
    gp::detail::rng r(11);
    for (int i = 0; i < 2000; ++i) {
        const auto g = static_cast<gp::gpu_id>(r.below(t.num_gpus()));
        if (holder[g] == gp::cluster_state::no_job) {
            holder[g] = static_cast<std::uint32_t>(i);
            c.allocate(g, holder[g], double(i));
        } else {
            holder[g] = gp::cluster_state::no_job;
            c.release(g);
        }
        if (i % 97 == 0 || i == 1999) {
            std::size_t free = 0;
            for (std::size_t x = 0; x < t.num_gpus(); ++x) {
                REQUIRE(c.holder(gp::gpu_id(x)) == holder[x]);
                free += holder[x] == gp::cluster_state::no_job;
            }
            REQUIRE(c.free_gpus() == free);
            REQUIRE(c.busy_gpus() == t.num_gpus() - free);
            for (std::size_t n = 0; n < t.num_nodes(); ++n) {
                std::uint32_t f = 0;
                for (std::size_t s = 0; s < t.gpus_per_node(); ++s)
                    f += holder[n * t.gpus_per_node() + s] == gp::cluster_state::no_job;
                REQUIRE(c.node_free(n) == f);
            }
            for (std::size_t rk = 0; rk < t.num_racks(); ++rk) {
                std::uint32_t f = 0;
                for (std::size_t n = 0; n < t.nodes_per_rack(); ++n) f += c.node_free(rk * t.nodes_per_rack() + n);
                REQUIRE(c.rack_free(rk) == f);
            }
        }
    }
}

TEST_CASE("cluster_state: with several jobs per GPU, free-slot counts and the change log agree with a recount") {
    const auto t = gp::TreeTopology::proximity_drl();
    gp::cluster_state c;
    c.set_max_jobs_per_gpu(3);
    c.track_changes(true);
    c.resize(t);
    const std::size_t G = t.num_gpus();
    std::vector<std::vector<std::uint32_t>> jobs(G);
    std::vector<std::uint32_t> seen(G, 0);  // job counts as of the reader's last look
    std::uint64_t gen = c.change_generation();
    std::size_t pos = c.changes().size();
    gp::detail::rng r(5);
    std::size_t rescans = 0;
    for (int i = 0; i < 5000; ++i) {
        const auto g = static_cast<gp::gpu_id>(r.below(G));
        if (!jobs[g].empty() && (jobs[g].size() == 3 || r.below(2) == 0)) {
            const auto k = r.below(jobs[g].size());
            c.release(g, jobs[g][k], 1.0, 0.25);
            jobs[g].erase(jobs[g].begin() + std::ptrdiff_t(k));
        } else {
            jobs[g].push_back(static_cast<std::uint32_t>(i));
            c.allocate(g, jobs[g].back(), double(i), 1.0, 0.25);
        }
        if (r.below(7) == 0) {
            // a reader replaying the log sees every GPU whose jobs changed, or is told to rescan
            std::vector<std::uint8_t> replayed(G, 0);
            const bool rescan = c.change_generation() != gen;
            if (!rescan)
                for (std::size_t p = pos; p < c.changes().size(); ++p) replayed[c.changes()[p]] = 1;
            rescans += rescan;
            std::size_t slot_free = 0;
            for (std::size_t x = 0; x < G; ++x) {
                const auto n = c.jobs_on_count(gp::gpu_id(x));
                REQUIRE(n == jobs[x].size());
                if (!rescan && n != seen[x]) REQUIRE(replayed[x]);
                seen[x] = n;
                slot_free += n < 3;
            }
            REQUIRE(c.gpus_with_free_slot() == slot_free);
            gen = c.change_generation();
            pos = c.changes().size();
        }
    }
    CHECK(rescans > 0);  // the log (4 G + 64 entries) filled up and was cleared at least once
    c.clear();
    CHECK(c.gpus_with_free_slot() == G);
    CHECK(c.changes().empty());
}

TEST_CASE("cluster_state: one job per GPU with a change log (co-location) keeps memory and share") {
    gp::cluster_state c;
    c.track_changes(true);
    c.resize(gp::TreeTopology::proximity_drl());
    CHECK(!c.exclusive());
    c.allocate(3, 9, 10.0, 12.5, 0.5);
    CHECK(c.memory_used(3) == 12.5);
    CHECK(c.share_used(3) == 0.5);
    CHECK(c.memory_used_total() == 12.5);
    REQUIRE(c.jobs_on(3).size() == 1);
    CHECK(c.jobs_on(3)[0] == 9);
    REQUIRE(c.changes().size() == 1);
    CHECK(c.changes()[0] == 3);
    c.release(3, 9, 12.5, 0.5);
    CHECK(c.is_free(3));
    CHECK(c.memory_used_total() == 0.0);
    CHECK(c.changes().size() == 2);
}
