// Tests of include/gpuplace/observation.hpp: the layout, the features, the rows written from a
// hand-made state (exact values), what after_pick() and update_gpus() + flush() rewrite against a
// full rewrite, the job / queue / global tail, and bind().

#include <doctest/doctest.h>

#include <cstdint>
#include <string>
#include <vector>

#include <gpuplace/observation.hpp>

#include "test_util.hpp"

namespace gp = gpuplace;
using namespace gpuplace::test;

namespace {

/// A simulator on hierarchy h with n single-GPU jobs submitted at time 0, all arrived.
struct obs_fixture {
    gp::level_hierarchy topo;
    gp::simulator sim;
    gp::env_detail::pick_set picks;
    gp::env_detail::wait_queue queue;

    explicit obs_fixture(const gp::TreeTopology& t, std::size_t n = 4) : obs_fixture(t.hierarchy(), n) {}
    explicit obs_fixture(gp::level_hierarchy h, std::size_t n = 4) : topo(std::move(h)) {
        sim.resize(topo);
        picks.resize(topo);
        std::vector<gp::TrainingJob> jobs(n);
        for (std::size_t i = 0; i < n; ++i) jobs[i].id = static_cast<gp::job_id>(i);
        sim.reset(jobs, std::vector<double>(n, 3600.0));
        queue.reset(n);
        const auto ev = sim.advance();
        for (std::uint32_t j = ev.first_arrival; j < ev.first_arrival + ev.arrivals; ++j)
            queue.insert(j, 1, [](std::uint32_t a, std::uint32_t b) { return a < b; });
        for (std::uint32_t j = 0; j < n; ++j) queue.info(j) = {0.25f, 0.5f, 0.75f, 0.0, 0};
    }
    /// Everything, as an env's reset() writes it, with job 0 current.
    void write_all(gp::observation_writer& w) {
        w.gpu_rows(sim, picks, true);
        w.defer(false);
        w.tail(sim, queue, 0, 1, picks.size());
    }
};

bool same(const gp::observation_writer& a, const gp::observation_writer& b) {
    return same_bytes<float>(a.obs(), b.obs()) && same_bytes<std::uint8_t>(a.mask(), b.mask());
}

}  // namespace

TEST_CASE("observation: the layout tiles the vector, co-location adds three per-GPU segments") {
    for (const bool coloc : {false, true}) {
        const auto L = gp::observation_layout(32, 3, coloc);
        const gp::observation_writer w(gp::TreeTopology::proximity_drl().hierarchy(), 3, coloc, 3600.0);
        std::size_t off = 0;
        for (const auto& s : L) {
            CHECK(s.offset == off);
            if (!s.fields.empty()) CHECK(s.fields.size() == s.size);
            off += s.size;
        }
        CHECK(off == w.size());
        CHECK(w.obs().size() == w.size());
        CHECK(w.mask().size() == 33);
        CHECK(L.size() == (coloc ? 12u : 9u));
        CHECK(L[3].name == "gpu_proximity");
        CHECK(L[L.size() - 2].name == "queue");
        CHECK(L[L.size() - 2].fields[5] == "1.request");
        CHECK(L.back().fields == std::vector<std::string>{"load", "queue_length", "time", "progress"});
        if (coloc) CHECK(L[8].name == "gpu_interference");
    }
}

TEST_CASE("observation: every segment is found by its handle, at the offset the names give") {
    using gp::gpu_feature, gp::obs_part;
    for (const bool coloc : {false, true})
        for (const bool het : {false, true})
            for (const std::size_t K : {0u, 1u, 3u}) {
                const gp::obs_layout L(32, K, coloc, het);
                const auto segs = L.segments();
                CHECK(segs.size() == 6 + (coloc ? 3 : 0) + (het ? 2 : 0) + 3 + (het ? 1 : 0));
                CHECK(L.num_gpu_segments() == 6 + (coloc ? 3 : 0) + (het ? 2 : 0));
                CHECK(segs.back().offset + segs.back().size == L.size());
                std::size_t i = 0;
                for (std::size_t f = 0; f <= std::size_t(gpu_feature::type); ++f) {
                    const auto feat = gpu_feature(f);
                    const bool present = f < 5 || (f < 8 ? coloc : het);
                    CHECK(L.has(feat) == present);
                    if (!present) continue;
                    for (std::size_t level = 1; level <= (feat == gpu_feature::domain_free ? 2u : 1u); ++level) {
                        CHECK(segs[i].name == "gpu_" + L.name(feat, level));
                        CHECK(segs[i].offset == L.offset(feat, level));
                        CHECK(segs[i].size == 32);
                        ++i;
                    }
                }
                CHECK(segs[4].name == "gpu_node_free");
                CHECK(segs[5].name == "gpu_rack_free");
                CHECK(L.context_offset() == segs[i].offset);
                for (const auto p : {obs_part::job, obs_part::queue, obs_part::global, obs_part::job_type}) {
                    CHECK(L.has(p) == (p != obs_part::job_type || het));
                    if (!L.has(p)) continue;
                    CHECK(segs[i].name == gp::obs_layout::name(p));
                    CHECK(segs[i].offset == L.offset(p));
                    CHECK(segs[i].size == L.size(p));
                    ++i;
                }
                CHECK(L.size(obs_part::queue) == 4 * K);
                // the writer writes at these offsets: its size and its layout are the same object's
                const gp::observation_writer w(gp::TreeTopology::proximity_drl().hierarchy(), K, coloc, 3600.0, het);
                CHECK(w.size() == L.size());
                CHECK(w.layout().segments().size() == segs.size());
            }
}

TEST_CASE("observation: features") {
    const gp::observation_writer w(tiny_topo::make().hierarchy(), 2, false, 3600.0);
    CHECK(w.squash(3600.0) == 0.5f);
    CHECK(w.squash(-5.0) == 0.0f);
    CHECK(w.remaining(3600.0) == 0.5f);
    CHECK(w.remaining(-1.0) == 0.0f);
    CHECK(w.request(0) == 0.0f);
    CHECK(w.request(4) == 1.0f);  // 4 GPUs
    CHECK(w.request(1) == doctest::Approx(1.0 / std::log2(5.0)));
}

TEST_CASE("observation: rows from a hand-made state") {
    obs_fixture f(tiny_topo::make());  // 1 rack x 2 nodes x 2 GPUs
    gp::observation_writer w(f.topo, 2, false, 3600.0);
    const std::vector<gp::gpu_id> g3 = {3};
    f.sim.start(1, g3, 1.0, 0.0);  // GPU 3 busy until 3600
    f.picks.add(0);                // job 0 has picked GPU 0
    f.write_all(w);
    const auto o = w.obs();
    const std::size_t G = 4;
    CHECK(std::vector<float>(o.begin(), o.begin() + G) == std::vector<float>{0, 0, 0, 1});              // busy
    CHECK(std::vector<float>(o.begin() + G, o.begin() + 2 * G) == std::vector<float>{1, 0, 0, 0});      // picked
    CHECK(o[2 * G + 3] == 0.5f);                                                                       // remaining
    CHECK(std::vector<float>(o.begin() + 3 * G, o.begin() + 4 * G) == std::vector<float>{1, 1, 0.5, 0.5});  // proximity
    CHECK(std::vector<float>(o.begin() + 4 * G, o.begin() + 5 * G) == std::vector<float>{1, 1, 0.5, 0.5});  // node free
    CHECK(o[5 * G] == 0.75f);                                                                          // rack free
    CHECK(std::vector<std::uint8_t>(w.mask().begin(), w.mask().end()) == std::vector<std::uint8_t>{0, 1, 1, 0, 0});
    // job 0: request, remaining picks 0 of 1, ideal, comm, wait
    const std::size_t job = 6 * G;
    CHECK(std::vector<float>(o.begin() + job, o.begin() + job + 5) == std::vector<float>{0.25f, 0.0f, 0.5f, 0.75f, 0.0f});
    // the queue window: the waiting jobs other than the current one (jobs 1 and 2)
    CHECK(o[job + 5] == 1.0f);
    CHECK(o[job + 6] == 0.25f);
    // global: load 1/4, queue length 4 / (4 + 2), time 0, progress 0
    const auto gl = job + 5 + 2 * 4;
    CHECK(o[gl] == 0.25f);
    CHECK(o[gl + 1] == static_cast<float>(4.0 / 6.0));
    CHECK(o[gl + 3] == 0.0f);
}

namespace {
/// Picks GPUs 0, 1 and G - 1 one by one (the first pick in a top domain, another in the same
/// level-1 domain, one in another), then starts them and lets time run to their end: the writer
/// updated after each change equals a full rewrite.
void check_incremental(obs_fixture& f) {
    gp::observation_writer inc(f.topo, 3, false, 600.0);
    f.write_all(inc);
    const std::size_t G = f.topo.num_gpus();
    for (const gp::gpu_id g : {gp::gpu_id(0), gp::gpu_id(1), gp::gpu_id(G - 1)}) {
        f.picks.add(g);
        inc.after_pick(f.picks, g, 4);
        gp::observation_writer full(f.topo, 3, false, 600.0);
        full.gpu_rows(f.sim, f.picks, true);
        full.defer(false);
        full.tail(f.sim, f.queue, 0, 4, f.picks.size());
        CHECK(same(inc, full));
    }
    // a decision: the picked GPUs start a job; only they (and their domains) are rewritten
    std::vector<gp::gpu_id> started(f.picks.gpus().begin(), f.picks.gpus().end());
    std::sort(started.begin(), started.end());
    f.sim.start(0, started, 1.0, 0.0);
    f.picks.clear();
    inc.update_gpus(f.sim.cluster(), started, f.sim.now());
    inc.flush(f.sim.cluster(), f.picks, f.sim.now(), false);
    inc.tail(f.sim, f.queue, 1, 1, 0);
    auto full_rewrite = [&] {
        gp::observation_writer full(f.topo, 3, false, 600.0);
        full.gpu_rows(f.sim, f.picks, true);
        full.tail(f.sim, f.queue, 1, 1, 0);
        return full;
    };
    CHECK(same(inc, full_rewrite()));
    // time moves to the job's end: its GPUs are free again, every remaining time changes
    const auto ev = f.sim.advance();
    REQUIRE(ev.finished.size() == 1);
    inc.update_gpus(f.sim.cluster(), f.sim.gpus_of(ev.finished[0]), f.sim.now());
    inc.flush(f.sim.cluster(), f.picks, f.sim.now(), true);
    inc.tail(f.sim, f.queue, 1, 1, 0);
    CHECK(same(inc, full_rewrite()));
}
}  // namespace

TEST_CASE_TEMPLATE("observation: what one action changed, rewritten, equals a full rewrite", P, tiny_topo, odd_topo, dgx_a100_2x4) {
    obs_fixture f(P::make(), 6);
    check_incremental(f);
}

TEST_CASE("observation: on hierarchies of two and four levels with domains of different sizes too") {
    // four levels: switches of 4, 2 and 4 GPUs, boxes of 6 and 4, one rack, the spine
    obs_fixture deep(gp::level_hierarchy({{"switch", 16, 0}, {"box", 8, 0}, {"rack", 4, 0}, {"spine", 2, 0}}, {{4, 2, 4}, {6, 4}, {10}}), 6);
    check_incremental(deep);
    const auto segs = gp::observation_writer(deep.topo, 3, false, 600.0).layout().segments();
    CHECK(segs[4].name == "gpu_switch_free");
    CHECK(segs[6].name == "gpu_rack_free");
    // two levels: racks of 12 GPUs in one NVLink domain under a spine
    obs_fixture flat(gp::level_hierarchy::uniform({{"nvl", 900, 1e-6}, {"spine", 50, 5e-6}}, {12, 3}), 6);
    check_incremental(flat);
}

TEST_CASE("observation: proximity on four levels falls by level: 1, 2/3, 1/3, 0") {
    obs_fixture f(gp::level_hierarchy({{"switch", 16, 0}, {"box", 8, 0}, {"rack", 4, 0}, {"spine", 2, 0}}, {{2, 2, 2, 2}, {4, 4}, {8}}), 2);
    gp::observation_writer w(f.topo, 1, false, 600.0);
    f.picks.add(0);
    f.write_all(w);
    const auto prox = w.obs().subspan(w.layout().offset(gp::gpu_feature::proximity), 8);
    CHECK(std::vector<float>(prox.begin(), prox.end()) == std::vector<float>{1, 1, 2.0f / 3, 2.0f / 3, 1.0f / 3, 1.0f / 3, 1.0f / 3, 1.0f / 3});
}

TEST_CASE("observation: bind() copies the contents and checks the sizes") {
    obs_fixture f(tiny_topo::make());
    gp::observation_writer w(f.topo, 2, false, 3600.0);
    f.write_all(w);
    const auto copy = w;  // a copy owns its buffers
    std::vector<float> obs(w.size());
    std::vector<std::uint8_t> mask(5);
    w.bind(obs, mask);
    CHECK(w.obs().data() == obs.data());
    CHECK(same(w, copy));
    std::vector<float> small(3);
    CHECK_THROWS_WITH_AS(w.bind(small, mask),
                         ("bind(): buffer sizes 3/5 do not match observation_size " + std::to_string(w.size()) + " / num_actions 5").c_str(),
                         gp::Error);
}
