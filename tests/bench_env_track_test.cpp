// bench/env_track.hpp: the benchmark on an env type of one's own scores as a scenario track does.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include <gpuplace/json.hpp>

#include "bench/env_track.hpp"
#include "bench/run.hpp"

#include "rl_test_util.hpp"

namespace bench_env_track_test {
using namespace gpuplace;

/// run() on one thread.
bench::run_options one_thread() {
    bench::run_options o;
    o.threads = 1;
    return o;
}

/// An env type of one's own: the default env under another name (its fork() returns an env, so
/// it is no ForkableEnv; the heuristics act in it through the inherited heuristic_action()).
struct own_env : env {
    explicit own_env(const scenario& s) : env(s) {}
};
static_assert(HeuristicEnv<own_env> && !ForkableEnv<own_env>);

TEST_CASE("bench env track: the episodes and the paired differences of the same env as a scenario track") {
    auto s = test::tiny_ppo_scenario();
    const bench::env_track<own_env> t{"own", "the tiny scenario as an env of one's own", [s] { return own_env(s); }, 3, 1'000'000,
                                      heuristic<own_env>("pack")};
    const auto mine = bench::run(t, heuristic<own_env>("first_fit"), {"first_fit", "heuristic", {}, {}}, one_thread());
    const auto theirs = bench::run(bench::scenario_track(s, 3, "pack"), "first_fit", one_thread());
    REQUIRE(mine.episodes.size() == 3);
    for (std::size_t i = 0; i < 3; ++i) {
        CHECK(mine.episodes[i].seed == theirs.episodes[i].seed);
        CHECK(mine.episodes[i].actions == theirs.episodes[i].actions);
        CHECK(mine.episodes[i].episode_return == theirs.episodes[i].episode_return);
        CHECK(mine.best[i].m.avg_jct == theirs.best[i].m.avg_jct);
    }
    CHECK(mine.versus_best(&metrics::avg_jct).diff.mean == theirs.versus_best(&metrics::avg_jct).diff.mean);
    const auto j = bench::to_json(mine);
    CHECK(j.at("track").at("version") == "env");
    CHECK(j.at("track").at("best_heuristic") == "pack");
    const auto v = bench::validate(j);
    CHECK_FALSE(v.valid);
    CHECK(v.message == "track own runs an env type of a program's own (version env): only that program can reproduce it");
    // the best policy's episodes are not run twice when the policy is it
    const auto same = bench::run(t, heuristic<own_env>("pack"), {"pack", "heuristic", {}, {}}, one_thread());
    CHECK(same.best[0].actions == same.episodes[0].actions);
}

TEST_CASE("bench env track: a track without a factory or a best policy is refused by name") {
    bench::env_track<own_env> t{"empty", "", {}, 2, 1'000'000, heuristic<own_env>("pack")};
    CHECK_THROWS_WITH_AS((void)bench::run(t, heuristic<own_env>("pack"), {"pack", "heuristic", {}, {}}),
                         "env track empty: needs a factory (make), at least one episode and a best policy (best)", ConfigError);
}

}  // namespace bench_env_track_test
