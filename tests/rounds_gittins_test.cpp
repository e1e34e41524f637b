// Tests of include/gpuplace/rounds/gittins.hpp and rounds/gittins_sample.hpp (class_gittins): the
// index against its definition (exact values on a two-point distribution, the sup over every
// quantum on random samples, the restore cost), the class fallbacks, the smoothed survival, the
// episode's scale recovered from censored jobs, the durations it draws for a planner's futures
// (draw_duration), and whole episodes of the policy by name on the
// hidden-duration Philly preset: every job finishes, the same seed gives the same episode, and
// nothing it does depends on durations it is not shown (oracle and hidden play alike).

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include <gpuplace/detail/rng.hpp>
#include <gpuplace/json.hpp>
#include <gpuplace/policy_registry.hpp>
#include <gpuplace/round_env.hpp>
#include <gpuplace/round_policy_registry.hpp>
#include <gpuplace/rounds/gittins.hpp>

namespace gp = gpuplace;

namespace {

/// The index by its definition: the ratio at every candidate quantum D (each sample above a, and
/// points between them), the largest.
double index_by_definition(const std::vector<double>& w, double a, double r) {
    double best = 0;
    std::vector<double> ds;
    for (double x : w)
        if (x > a) ds.push_back(x - a), ds.push_back((x - a) * 0.5), ds.push_back((x - a) * 1.5);
    for (double d : ds) {
        double done = 0, e = 0, above = 0;
        for (double x : w) {
            if (x <= a) continue;
            ++above;
            if (x <= a + d) ++done;
            e += std::min(x, a + d) - a;
        }
        if (above > 0) best = std::max(best, (done / above) / (e / above + r));
    }
    return best;
}

std::vector<gp::gittins_prior::sample> one_class(const std::vector<double>& steps, gp::model_id m = 0, std::uint32_t g = 1) {
    std::vector<gp::gittins_prior::sample> s;
    for (double x : steps) s.push_back({m, g, x});
    return s;
}

/// A round view of `jobs` (each of 1 GPU, ideal step time 1 s) on one type of 64 GPUs.
struct fake_round {
    std::vector<gp::round_job> jobs;
    std::vector<double> thr, step;
    std::vector<std::string> names{"v100"};
    std::vector<std::uint32_t> gpus{64};
    gp::round_view view(double now) {
        thr.assign(jobs.size(), 1.0);
        step.assign(jobs.size(), 1.0);
        gp::round_view::state s;
        s.now = now;
        s.round_length = 360;
        s.information = gp::duration_info::hidden;
        s.jobs = jobs;
        s.throughput = thr;
        s.step_time_ref = step;
        s.type_names = names;
        s.type_gpus = gpus;
        return gp::round_view(s);
    }
};

}  // namespace

TEST_CASE("gittins_prior: the index of a two-point distribution, by hand") {
    // sizes 1 and 10, half each. At a = 0: D = 1 gives 0.5 / (0.5 x 1 + 0.5 x 1) = 0.5; D = 10 gives
    // 1 / 5.5. At a = 1 only the 10 is left: 1 / 9. With a restore of 2: 0.5 / 3 and 1 / 11.
    const gp::gittins_prior p(one_class({1, 10}), 1);
    CHECK(p.index(0, 1, 0.0, 0.0) == doctest::Approx(0.5));
    CHECK(p.index(0, 1, 1.0, 0.0) == doctest::Approx(1.0 / 9));
    CHECK(p.index(0, 1, 0.0, 2.0) == doctest::Approx(0.5 / 3));
    CHECK(p.index(0, 1, 1.0, 2.0) == doctest::Approx(1.0 / 11));
    // past every sampled size: the work done is taken as the work left
    CHECK(p.index(0, 1, 20.0, 0.0) == doctest::Approx(1.0 / 20));
    CHECK(p.index(0, 1, 20.0, 5.0) == doctest::Approx(1.0 / 25));
}

TEST_CASE("gittins_prior: the index is the sup over every quantum, on random samples") {
    gp::detail::rng r(7);
    for (int trial = 0; trial < 20; ++trial) {
        std::vector<double> w;
        const auto n = 1 + r.below(40);
        for (std::size_t i = 0; i < n; ++i) w.push_back(std::exp(4 * r.uniform()) * (r.below(3) == 0 ? 30 : 1));
        const gp::gittins_prior p(one_class(w), 1);
        std::vector<double> sorted = w;
        std::sort(sorted.begin(), sorted.end());
        for (double a : {0.0, sorted[n / 2] * 0.9, sorted[n / 3] + 0.5})
            for (double cost : {0.0, 3.0})
                if (a < sorted.back()) CHECK(p.index(0, 1, a, cost) == doctest::Approx(index_by_definition(w, a, cost)).epsilon(1e-12));
    }
}

TEST_CASE("gittins_prior: in the top 5% of a class's sizes the index is the heavy tail's 1 / (a + r)") {
    std::vector<double> w;
    for (int i = 1; i <= 40; ++i) w.push_back(100.0 * i);
    const gp::gittins_prior p(one_class(w), 1);
    // above 3850 two sizes are left (5% of 40): still the sample's index; above 3950, one: the tail
    CHECK(p.index(0, 1, 3850.0, 0.0) == doctest::Approx(index_by_definition(w, 3850.0, 0.0)).epsilon(1e-12));
    CHECK(p.index(0, 1, 3850.0, 0.0) == doctest::Approx(1.0 / 100));  // half finish within 50: 0.5 / 50 (1 / 100); all within 150: 1 / 100
    CHECK(p.index(0, 1, 3950.0, 0.0) == doctest::Approx(1.0 / 3950));
    CHECK(p.index(0, 1, 3950.0, 50.0) == doctest::Approx(1.0 / 4000));
    CHECK(index_by_definition(w, 3950.0, 0.0) == doctest::Approx(1.0 / 50));  // what the sample alone would say
}

TEST_CASE("gittins_prior: a class with too few jobs takes its model's, a model with too few every job") {
    auto s = one_class({100, 100, 100}, 0, 1);   // class (0, 1): 3 jobs
    for (double x : {5.0, 5.0, 5.0}) s.push_back({0, 8, x});  // class (0, 8): 3 jobs
    for (double x : {1.0, 1.0}) s.push_back({1, 1, x});       // model 1: 2 jobs
    const gp::gittins_prior p(s, 3);
    CHECK(p.sizes(0, 1) == std::vector<double>{100, 100, 100});
    CHECK(p.sizes(0, 8) == std::vector<double>{5, 5, 5});
    CHECK(p.sizes(0, 2) == std::vector<double>{5, 5, 5, 100, 100, 100});  // no such class: model 0's
    CHECK(p.sizes(1, 1).size() == 8);                                       // model 1 has 2 < 3: every job
    CHECK(p.sizes(7, 4).size() == 8);
    CHECK(p.classes() == 2);
    const gp::gittins_prior none(std::vector<gp::gittins_prior::sample>{{0, 1, 0.0}, {0, 1, std::nan("")}});
    CHECK(none.empty());
}

TEST_CASE("gittins_prior: the smoothed survival falls from 1 to 0 around the sampled sizes") {
    const gp::gittins_prior p(one_class(std::vector<double>(50, 1000.0)), 1);
    CHECK(p.log_survival(0, 1, std::log(1.0)) == doctest::Approx(0.0).epsilon(1e-9));
    CHECK(std::exp(p.log_survival(0, 1, std::log(1000.0))) == doctest::Approx(0.5).epsilon(0.05));
    CHECK(p.log_survival(0, 1, std::log(1000.0) + 2) < std::log(1e-10));
    double last = 0;
    for (double lx = -5; lx < 30; lx += 0.01) {
        const double v = p.log_survival(0, 1, lx);
        CHECK(v <= last + 1e-12);
        last = v;
    }
}

TEST_CASE("class_gittins: the episode's scale from censored jobs, and the order it grants") {
    // The sample: class (0, 1) of sizes around 1000 steps. The episode's 40 jobs have done 8,000
    // steps each (right-censored: the scale grows past 8), then all finish in the next round
    // (interval-censored in [8000, 8360]): the scale settles near 8.
    std::vector<double> w;
    for (int i = 0; i < 200; ++i) w.push_back(1000.0 * std::exp(0.3 * std::sin(i)));
    auto prior = std::make_shared<const gp::gittins_prior>(one_class(w), 1);
    gp::gittins_round_policy p([prior](std::size_t) { return prior; }, 30.0);
    p.reset(0);
    fake_round f;
    for (std::uint32_t j = 0; j < 40; ++j) {
        gp::round_job r;
        r.job = j;
        r.gpus = r.min_gpus = r.max_gpus = 1;
        f.jobs.push_back(r);
    }
    gp::round_allocation out;
    p.allocate(f.view(0), out);  // nothing done yet: the prior's scale
    CHECK(p.log_scale() == doctest::Approx(0.0).epsilon(1e-12));
    CHECK(out.size() == 40);
    for (auto& r : f.jobs) r.done = 8000, r.held = 1, r.type = 0;
    out.clear();
    p.allocate(f.view(360), out);
    CHECK(p.log_scale() > std::log(8000.0 / 1000.0));
    f.jobs.clear();  // all finished during that round
    out.clear();
    p.allocate(f.view(720), out);
    CHECK(std::exp(p.log_scale()) == doctest::Approx(8.0).epsilon(0.1));
    CHECK(out.empty());
}

TEST_CASE("class_gittins: draw_duration is a size of the job's class above what it has done, at the episode's scale") {
    std::vector<double> w;
    for (int i = 1; i <= 100; ++i) w.push_back(double(i));  // steps 1..100
    auto prior = std::make_shared<const gp::gittins_prior>(one_class(w), 1);
    gp::gittins_round_policy p([prior](std::size_t) { return prior; }, 30.0);
    p.reset(0);
    gp::round_job r;
    r.gpus = r.min_gpus = r.max_gpus = 1;
    CHECK(std::isnan(p.draw_duration(r, 1.0, 0.5)));  // before the first allocate(): no prior
    fake_round f;
    f.jobs.push_back(r);
    gp::round_allocation out;
    p.allocate(f.view(0), out);
    const double k = std::exp(p.log_scale());
    // the sizes above done / step / k, at quantile u: w[lo + floor(u m)] k step seconds
    for (double step : {1.0, 2.5}) {
        for (double done_steps : {0.0, 40.0, 90.0}) {
            r.done = done_steps * step * k;
            const auto lo = std::size_t(std::upper_bound(w.begin(), w.end(), r.done / step / k) - w.begin());
            const std::size_t m = w.size() - lo;
            double last = 0;
            for (double u : {0.0, 0.3, 0.5, 0.999999}) {
                const double d = p.draw_duration(r, step, u);
                CHECK(d == doctest::Approx(w[lo + std::size_t(u * double(m))] * k * step).epsilon(1e-12));
                CHECK(d > r.done);
                CHECK(d >= last);  // a quantile: non-decreasing in u
                last = d;
            }
            CHECK(p.draw_duration(r, step, 0.0) == doctest::Approx(w[lo] * k * step).epsilon(1e-12));
            CHECK(p.draw_duration(r, step, 0.999999) == doctest::Approx(w.back() * k * step).epsilon(1e-12));
        }
        // in the tail (fewer than 5% of the sizes above) or past every size: NaN, the fork's draw is kept
        r.done = 96.5 * step * k;
        CHECK(std::isnan(p.draw_duration(r, step, 0.5)));
        r.done = 150 * step * k;
        CHECK(std::isnan(p.draw_duration(r, step, 0.5)));
    }
    CHECK(std::isnan(p.draw_duration(r, 0.0, 0.5)));  // no step time
}

TEST_CASE("class_gittins: grants by index per GPU-second, running before resuming, locked jobs kept") {
    // class (0, 1): sizes 1 and 10 half each; class (0, 4) the same sizes on 4 GPUs.
    auto s = one_class({1, 10, 1, 10});
    for (double x : {1.0, 10.0, 1.0, 10.0}) s.push_back({0, 4, x});
    auto prior = std::make_shared<const gp::gittins_prior>(s, 1);
    gp::gittins_round_policy p([prior](std::size_t) { return prior; }, 3.0);
    p.reset(0);
    fake_round f;
    f.gpus = {5};
    auto job = [](std::uint32_t j, std::uint32_t g, double done, std::uint32_t held) {
        gp::round_job r;
        r.job = j;
        r.gpus = r.min_gpus = r.max_gpus = g;
        r.done = done;
        r.held = held;
        r.type = held ? 0 : gp::round_job::none;
        return r;
    };
    // 5 GPUs; job 0: 4 GPUs, new; job 1: 1 GPU at 1.5 steps, suspended (it pays the restore); job 2:
    // the same, running; job 3: 1 GPU, new. The two jobs that did 1.5 steps move the scale k above 1.
    f.jobs = {job(0, 4, 0, 0), job(1, 1, 1.5, 0), job(2, 1, 1.5, 1), job(3, 1, 0, 0)};
    auto expected = [&](std::size_t gpus) {  // the index at scale k per GPU-second, then a greedy fill
        const double k = std::exp(p.log_scale());
        std::vector<std::pair<double, std::uint32_t>> key;
        std::vector<gp::round_grant> want;
        for (const auto& r : f.jobs) {
            if (r.locked) {
                want.push_back({r.job, r.type, r.held});
                gpus -= r.held;
                continue;
            }
            const double cost = r.held == 0 && r.done > 0 ? 3.0 : 0.0;
            const double v = prior->index(0, r.gpus, r.done / k, cost / k) / (k * r.gpus);
            CHECK(p.priority(r, 1.0) == doctest::Approx(v).epsilon(1e-12));
            key.push_back({-v, r.job});
        }
        std::stable_sort(key.begin(), key.end(), [](const auto& x, const auto& y) { return x.first < y.first; });
        for (const auto& [v, j] : key)
            if (f.jobs[j].gpus <= gpus) want.push_back({j, gp::round_grant::any_type, f.jobs[j].gpus}), gpus -= f.jobs[j].gpus;
        return want;
    };
    gp::round_allocation out;
    p.allocate(f.view(0), out);
    CHECK(p.log_scale() > 0.0);
    CHECK(p.priority(f.jobs[2], 1.0) > p.priority(f.jobs[1], 1.0));  // running before resuming
    CHECK(std::vector<gp::round_grant>(out.grants().begin(), out.grants().end()) == expected(5));
    CHECK(out.size() == 3);  // three 1-GPU jobs first (job 2, at 1.5 of k x {1, 10}, is likely done soon); job 0 does not fit
    // a locked job keeps its GPUs first, on its type
    f.jobs[0].locked = true, f.jobs[0].held = 4, f.jobs[0].type = 0;
    out.clear();
    p.allocate(f.view(360), out);
    CHECK(out.grants()[0] == gp::round_grant{0, 0, 4});
    CHECK(std::vector<gp::round_grant>(out.grants().begin(), out.grants().end()) == expected(5));
    CHECK(out.size() == 2);
}

TEST_CASE("class_gittins: whole episodes on hidden-duration Philly finish, repeat by seed, and read no duration") {
    auto s = gp::preset_scenario("philly_hidden:e13805");
    gp::apply_queue(s, "class_gittins");
    REQUIRE(s.rounds.enabled);
    REQUIRE(s.rounds.policy == "class_gittins");
    const auto policy = gp::round_policy("class_gittins", s);
    auto play = [&](gp::scenario sc, std::uint64_t seed) {
        gp::round_env e(sc);
        gp::pack_policy placer;
        e.reset(seed);
        auto fn = policy.make(seed);
        e.run(fn, placer);
        CHECK(e.terminated());
        CHECK(e.simulator().finished().size() == e.simulator().jobs().size());
        std::vector<double> ends;
        for (const auto& r : e.simulator().finished()) ends.push_back(r.end);
        return ends;
    };
    const auto a = play(s, 1000000), b = play(s, 1000000);
    CHECK(a == b);
    auto oracle = s;
    oracle.durations.mode = gp::duration_info::oracle;  // shown the durations: it does not read them
    CHECK(play(oracle, 1000000) == a);
    CHECK(play(s, 1000001) != a);
}
