// Tests of include/gpuplace/rounds/elastic.hpp (afs_l, greedy_gain) and of elastic jobs in the
// round front end (env/elastic_bounds.hpp, env/round_front.hpp): the grant bounds and their
// errors, the cap at the largest measured count, a resize's exact cost and metering, the
// interpolation of throughput between measured counts (exact values; a job at its request runs at
// exactly the measured rate), AFS-L and the greedy allocator on a two-job case solved by hand, and
// progress under random elastic grants.

#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include <gpuplace/detail/rng.hpp>
#include <gpuplace/json.hpp>
#include <gpuplace/policy_registry.hpp>
#include <gpuplace/round_env.hpp>
#include <gpuplace/round_policy_registry.hpp>
#include <gpuplace/rounds/elastic.hpp>

#include "test_util.hpp"

namespace gp = gpuplace;
using namespace gpuplace::test;

namespace {

constexpr const char* resnet = "ResNet-50 (batch size 64)";  // measured at 1, 2, 4 and 8 GPUs

/// One 8-GPU V100 server of the zoo's measurement hardware (NVLink 100 GB/s, its latency) running
/// `jobs` of the built-in zoo ({submit_time, num_gpus, model, work, min_gpus, max_gpus}, the bounds
/// optional), min_gpus / max_gpus declared as job fields (default 0: the request).
json elastic_server(const json& jobs, const json& rounds = json::object()) {
    return {{"topology", {{"preset", "custom"}, {"racks", 1}, {"nodes_per_rack", 1}, {"gpus_per_node", 8}, {"node_bandwidth", 100},
                          {"rack_bandwidth", 3.125}, {"spine_bandwidth", 3.125}, {"node_latency", 2e-6}, {"rack_latency", 20e-6},
                          {"spine_latency", 20e-6}}},
            {"comm", {{"model", "ring_allreduce"}}},
            {"job_fields", {{{"name", "min_gpus"}, {"default", 0}}, {{"name", "max_gpus"}, {"default", 0}}}},
            {"workload", {{"kind", "jobs"}, {"jobs", jobs}}},
            {"rounds", rounds}};
}
json job(double submit, int gpus, const std::string& model, double work, double lo = NAN, double hi = NAN) {
    json j = {{"submit_time", submit}, {"num_gpus", gpus}, {"model", model}, {"work", work}};
    if (lo == lo) j["min_gpus"] = lo;
    if (hi == hi) j["max_gpus"] = hi;
    return j;
}

/// Grants each active job (job, count) of grants[round], on type 0.
struct scripted {
    std::vector<std::vector<std::pair<std::uint32_t, std::uint32_t>>> grants;
    std::size_t round = 0;
    void operator()(const gp::round_view& v, gp::round_allocation& out) {
        const auto& g = round < grants.size() ? grants[round] : grants.back();
        ++round;
        for (const auto& [j, k] : g)
            for (const auto& a : v.jobs())
                if (a.job == j) out.grant(j, 0, k);
    }
};

bool close(double a, double b) { return std::abs(a - b) <= 1e-9 * std::abs(b); }

}  // namespace

TEST_CASE("elastic: a grant must lie in the job's bounds, the upper bound is capped at the largest measured count") {
    const auto s = gp::scenario_from_json(elastic_server(
        json::array({job(0, 2, resnet, 1e5, 1, 4), job(0, 1, resnet, 1e5), job(0, 2, resnet, 1e5, NAN, 16), job(0, 1, "A3C", 1e5, NAN, 4)})));
    gp::round_env e(s);
    e.reset(0);
    CHECK(e.gpu_bounds(0) == std::pair<std::uint32_t, std::uint32_t>{1, 4});
    CHECK(e.gpu_bounds(1) == std::pair<std::uint32_t, std::uint32_t>{1, 1});
    CHECK(e.gpu_bounds(2) == std::pair<std::uint32_t, std::uint32_t>{2, 8});  // 16 capped at 8, ResNet-50's largest measured count
    CHECK(e.gpu_bounds(3) == std::pair<std::uint32_t, std::uint32_t>{1, 1});  // A3C is measured at 1 GPU only
    CHECK(e.elastic_summary().elastic == 2);
    CHECK(e.elastic_summary().capped == 2);
    gp::round_allocation a;
    auto refused = [&](std::uint32_t j, std::uint32_t k, const std::string& why) {
        a.clear();
        a.grant(j, 0, k);
        CHECK(e.why_invalid(a) == why);
        CHECK_THROWS_WITH_AS(e.step(a), why.c_str(), gp::InvalidAction);
        CHECK(e.now() == 0.0);
    };
    const std::string bounds = "the job is elastic from 1 to 4 GPUs (its request 2; the upper bound at most its model's largest measured count)";
    refused(0, 5, "round allocation grant 0 (job 0): 5 GPUs, but " + bounds);
    refused(0, 0, "round allocation grant 0 (job 0): 0 GPUs, but " + bounds);
    refused(1, 2, "round allocation grant 0 (job 1): 2 GPUs, but the job requests 1 (it is not elastic)");
    refused(2, 9, "round allocation grant 0 (job 2): 9 GPUs, but the job is elastic from 2 to 8 GPUs (its request 2; the upper bound at "
                  "most its model's largest measured count)");
    for (std::uint32_t k = 1; k <= 4; ++k) {
        a.clear();
        a.grant(0, 0, k);
        CHECK(e.why_invalid(a).empty());
    }
    a.clear();
    a.grant(0, 0, 3);
    e.step(a);
    CHECK(e.held_gpus(0) == 3);
    CHECK(e.cluster().free_gpus() == 5);
}

TEST_CASE("elastic: bad bounds are ConfigErrors naming the job, the field and the key") {
    auto bad = [](const json& j) {
        gp::round_env e(gp::scenario_from_json(elastic_server(json::array({j}))));
        e.reset(0);
    };
    CHECK_THROWS_WITH_AS(bad(job(0, 2, resnet, 10, 3)),
                         "job 0 (in submit order): min_gpus 3 is above its request of 2 GPUs (job fields min_gpus / max_gpus, docs/rounds.md)",
                         gp::ConfigError);
    CHECK_THROWS_WITH_AS(bad(job(0, 2, resnet, 10, NAN, 1)), doctest::Contains("max_gpus 1 is below its request of 2 GPUs"), gp::ConfigError);
    CHECK_THROWS_WITH_AS(bad(job(0, 2, resnet, 10, 1.5)), doctest::Contains("min_gpus 1.500000: expected a whole number of GPUs >= 1"),
                         gp::ConfigError);
    CHECK_THROWS_WITH_AS((void)gp::scenario_from_json(elastic_server(json::array({job(0, 1, resnet, 10)}), {{"elastic", {{"share", 1.5}}}})),
                         "config /rounds/elastic/share: value 1.5 out of range [0.0, 1.0]", gp::ConfigError);
    CHECK_THROWS_WITH_AS((void)gp::scenario_from_json(elastic_server(json::array({job(0, 1, resnet, 10)}), {{"elastic", {{"max", 2}}}})),
                         doctest::Contains("config /rounds/elastic/max: unknown key \"max\""), gp::ConfigError);
    // the JSON form reads back to itself
    const auto s = gp::preset_scenario("elastic");
    CHECK(s.rounds.elastic.share == 0.5);
    CHECK(gp::rounds_from_json(gp::to_json(s.rounds)) == s.rounds);
}

TEST_CASE("elastic: throughput at k GPUs: the measurements at measured counts, per-GPU throughput linear between them") {
    const auto s = gp::scenario_from_json(elastic_server(json::array({job(0, 2, resnet, 1e5, 1, 8)})));
    gp::round_env e(s);
    e.reset(0);
    const auto v = e.view();
    REQUIRE(v.jobs().size() == 1);
    REQUIRE(v.elastic(0));
    const auto& p = e.zoo()[e.zoo().find(resnet)];
    auto T = [&](std::uint32_t k) { return p.at(k).consolidated; };
    const double t1 = p.points[0].consolidated, t2 = p.points[1].consolidated, t4 = p.points[2].consolidated, t8 = p.points[3].consolidated;
    CHECK(close(v.throughput_at(0, 0, 1), t1));
    CHECK(close(v.throughput_at(0, 0, 2), t2));
    CHECK(close(v.throughput_at(0, 0, 4), t4));
    CHECK(close(v.throughput_at(0, 0, 8), t8));
    CHECK(close(v.throughput_at(0, 0, 3), 3 * (0.5 * t2 / 2 + 0.5 * t4 / 4)));
    CHECK(close(v.throughput_at(0, 0, 5), 5 * (0.75 * t4 / 4 + 0.25 * t8 / 8)));
    CHECK(close(v.throughput_at(0, 0, 6), 6 * (0.5 * t4 / 4 + 0.5 * t8 / 8)));
    CHECK(close(v.throughput_at(0, 0, 7), 7 * (0.25 * t4 / 4 + 0.75 * t8 / 8)));
    CHECK(v.throughput_at(0, 0, 9) == 0.0);
    CHECK(close(T(3), v.throughput_at(0, 0, 3)));
    // the identity: granted its request, it runs at exactly the measured rate; granted 3 GPUs, at
    // exactly the interpolated one
    for (std::uint32_t k : {2u, 3u, 8u}) {
        CAPTURE(k);
        gp::pack_policy placer;
        e.reset(0);
        e.run([k](const gp::round_view& w, gp::round_allocation& a) { a.grant(w.jobs()[0].job, 0, k); }, placer);
        REQUIRE(e.terminated());
        CHECK(close(e.simulator().finished().front().end, 1e5 / T(k)));
        CHECK(e.round_records()[0].resizes == 0);  // started on k: not a resize
    }
}

TEST_CASE("elastic: a resize pays the restore time like a move, and is metered") {
    // job 0 (request 2, elastic 1..4): round 0 on 2 GPUs, then resized to 4 with a 60 s restore
    const double W = 1e5;
    const auto s = gp::scenario_from_json(elastic_server(json::array({job(0, 2, resnet, W, 1, 4)}), {{"restore", {{"seconds", 60}}}}));
    gp::round_env e(s);
    gp::pack_policy placer;
    scripted p{{{{0, 2}}, {{0, 4}}}};
    e.reset(0);
    e.run(p, placer);
    REQUIRE(e.terminated());
    const auto& prof = e.zoo()[e.zoo().find(resnet)];
    const double t2 = prof.at(2).consolidated, t4 = prof.at(4).consolidated;
    const double end = 360 + 60 + (W - 360 * t2) / t4;
    const auto& r = e.simulator().finished().front();
    CHECK(close(r.end, end));
    CHECK(r.num_gpus == 4);
    CHECK(r.lost_gpu_time == 4 * 60.0);  // the restore, on the 4 new GPUs
    CHECK(r.preemptions == 0);
    const auto& rr = e.round_records()[0];
    CHECK(rr.resizes == 1);
    CHECK(rr.moves == 0);
    CHECK(rr.restores == 1);
    CHECK(rr.restore_time == 60.0);
    CHECK(close(e.simulator().attained(0), 2 * 360 + 4 * (end - 360)));
    const auto m = e.episode_metrics();
    CHECK(m.avg_resizes == 1.0);
    CHECK(m.lost_gpu_hours == doctest::Approx(240.0 / 3600));
    // useful GPU-time: its request x its ideal duration (W / t2 on this, the measurement hardware)
    CHECK(m.gpu_time_efficiency == doctest::Approx(2 * (W / t2) / (2 * 360 + 4 * (end - 360))).epsilon(1e-9));
    CHECK(e.episode_return() == doctest::Approx(-end / 3600).epsilon(1e-12));
}

TEST_CASE("elastic: afs_l and greedy_gain on two jobs solved by hand") {
    // 5 GPUs of one type; jobs X and Y, elastic 1..4 at request 1. X: T = 10, 18, 24.75, 30 steps/s
    // at 1..4 GPUs, 1000 steps left (100 s at 1 GPU); Y: T = 10, 12, 14.25, 14, 500 steps (50 s).
    // AFS-L: first steps shortest first (Y, then X); then relative gains (T(n+1) - T(n)) / T(n+1):
    // X 1->2 0.444 > Y 1->2 0.167, X 2->3 0.273 > 0.167, X 3->4 0.175 > 0.167: X 4, Y 1.
    // greedy_gain: remaining time dropped per GPU, R (1/T(n) - 1/T(n+1)): X 1->2 44.4 > Y 8.33,
    // X 2->3 15.2 > 8.33, Y 1->2 8.33 > X 3->4 7.07: X 3, Y 2.
    std::vector<gp::round_job> jobs(2);
    for (std::uint32_t i = 0; i < 2; ++i) {
        jobs[i].job = i;
        jobs[i].gpus = 1;
        jobs[i].min_gpus = 1;
        jobs[i].max_gpus = 4;
        jobs[i].scaling = 4 * i;
    }
    jobs[0].remaining = 1000 * 0.1;  // ideal seconds on the reference type (0.1 s a step)
    jobs[1].remaining = 500 * 0.1;
    const std::vector<double> thr{10, 10}, step_ref{0.1, 0.1};
    const std::vector<double> scaling{10, 18, 24.75, 30, 10, 12, 14.25, 14};
    const std::vector<std::string> names{"v100"};
    std::vector<std::uint32_t> gpus{5};
    auto solve = [&](gp::elastic_rule rule, gp::duration_info info) {
        gp::round_view::state st;
        st.now = 0;
        st.round_length = 360;
        st.information = info;
        st.jobs = jobs;
        st.throughput = thr;
        st.step_time_ref = step_ref;
        st.scaling = scaling;
        st.type_names = names;
        st.type_gpus = gpus;
        gp::elastic_policy p(rule);
        p.reset(0);
        gp::round_allocation out;
        p.allocate(gp::round_view(st), out);
        std::vector<std::uint32_t> k(2, 0);
        for (const auto& g : out.grants()) k[g.job] = g.gpus;
        return k;
    };
    CHECK(solve(gp::elastic_rule::afs_l, gp::duration_info::oracle) == std::vector<std::uint32_t>{4, 1});
    CHECK(solve(gp::elastic_rule::greedy_gain, gp::duration_info::oracle) == std::vector<std::uint32_t>{3, 2});
    // one GPU: AFS-L gives it to the shorter job (Y); with durations hidden, to the least attained (X)
    gpus[0] = 1;
    CHECK(solve(gp::elastic_rule::afs_l, gp::duration_info::oracle) == std::vector<std::uint32_t>{0, 1});
    jobs[1].attained = 100;
    CHECK(solve(gp::elastic_rule::afs_l, gp::duration_info::hidden) == std::vector<std::uint32_t>{1, 0});
    // greedy_gain needs durations
    auto h = gp::preset_scenario("elastic");
    h.durations.mode = gp::duration_info::hidden;
    CHECK_THROWS_WITH_AS((void)gp::round_policy("greedy_gain", h), doctest::Contains("greedy_gain needs the jobs' remaining work"),
                         gp::ConfigError);
    CHECK_FALSE(gp::round_policy_needs_lp("afs_l"));
    CHECK_FALSE(gp::round_policy_needs_lp("greedy_gain"));
}

TEST_CASE("elastic: random elastic grants: every job finishes, the rewards sum to the JCTs, the records add up") {
    auto s = gp::preset_scenario("elastic");
    s.workload.synthetic.num_jobs = 30;
    s.rounds.enabled = true;
    s.rounds.restore.seconds = 90;
    gp::round_env e(s);
    for (std::uint64_t seed : {1u, 2u, 3u}) {
        CAPTURE(seed);
        gp::detail::rng r(seed);
        e.reset(seed);
        REQUIRE(e.elastic_summary().elastic > 0);
        gp::round_allocation a;
        while (!e.done()) {
            a.clear();
            const auto v = e.view();
            std::uint32_t left = v.type_gpus(0);
            for (const auto& j : v.jobs()) {
                const std::uint32_t k = j.locked ? j.held : j.min_gpus + std::uint32_t(r.below(j.max_gpus - j.min_gpus + 1));
                if ((j.locked || r.below(3) != 0) && k <= left) {
                    a.grant(j.job, 0, k);
                    left -= k;
                }
            }
            e.step(a);
        }
        REQUIRE(e.terminated());
        const auto done = e.simulator().finished();
        REQUIRE(done.size() == 30);
        double jct = 0, held = 0;
        std::size_t resizes = 0;
        for (const auto& f : done) {
            jct += f.jct();
            held += e.simulator().attained(std::uint32_t(f.id));
            const auto& rr = e.round_records()[f.id];
            resizes += rr.resizes;
            CHECK(rr.restore_time == 90.0 * rr.restores);
        }
        CHECK(resizes > 0);
        CHECK(e.episode_return() == doctest::Approx(-jct / 3600).epsilon(1e-9));
        CHECK(held == doctest::Approx(e.simulator().busy_gpu_time()).epsilon(1e-9));  // each run's GPUs counted
        const auto m = e.episode_metrics();
        CHECK(m.gpu_time_efficiency > 0);
    }
}

TEST_CASE("elastic: afs_l and greedy_gain finish the elastic preset, resizing jobs, the same seed gives the same episode") {
    auto s = gp::preset_scenario("elastic");
    s.workload.synthetic.num_jobs = 40;
    s.rounds.enabled = true;
    for (const char* name : {"afs_l", "greedy_gain"}) {
        CAPTURE(name);
        const auto pol = gp::round_policy(name, s);
        gp::round_env e(s);
        gp::pack_policy placer;
        e.reset(4);
        const double ret = e.run(pol.make(4), placer);
        REQUIRE(e.terminated());
        CHECK(e.simulator().finished().size() == 40);
        CHECK(e.episode_metrics().avg_resizes > 0);
        e.reset(4);
        CHECK(e.run(pol.make(4), placer) == ret);
    }
}
