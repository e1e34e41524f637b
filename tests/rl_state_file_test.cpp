// include/gpuplace/rl/state_file.hpp and basic_ppo::save_state()/load_state(): a trainer saved at
// any iteration and loaded into a new one continues bit for bit; state files detect corruption.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <string>
#include <vector>

#include <gpuplace/gpuplace.hpp>
#include <gpuplace/rl/rl.hpp>
#include <gpuplace/json.hpp>

#include "rl_test_util.hpp"

namespace {
using namespace gpuplace;

scenario state_test_scenario() {
    return parse_scenario(R"({
      "name": "state_test",
      "topology": {"preset": "custom", "racks": 1, "nodes_per_rack": 2, "gpus_per_node": 4},
      "workload": {"kind": "synthetic", "num_jobs": 40, "load": 1.3, "gpu_counts": {"1": 0.5, "2": 0.25, "4": 0.25},
                   "duration_min": 600, "duration_max": 3600},
      "env": {"allow_defer": true}
    })");
}

rl::ppo_config state_test_config() {
    rl::ppo_config c;
    c.total_steps = 1024;
    c.num_envs = 4;
    c.num_steps = 32;  // episodes span several iterations: the envs are saved mid-episode
    c.minibatches = 2;
    c.epochs = 2;
    c.teacher = "pack";
    c.imitation_steps = 256;
    c.value_warmup = 1;
    c.network.hidden = {16, 16};
    c.network.value_hidden = {16};
    c.network.normalize_obs = true;
    c.network.node_features = true;
    c.seed = 5;
    return c;
}
}  // namespace

TEST_CASE("rl state: a trainer saved at any iteration and loaded into a new one continues bit for bit") {
    const auto s = state_test_scenario();
    const auto c = state_test_config();
    rl::ppo ref(s, c);
    std::vector<rl::ppo_stats> ref_stats;
    while (!ref.done()) ref_stats.push_back(ref.iterate());
    for (const std::size_t at : {std::size_t{1}, std::size_t{2}, std::size_t{5}}) {  // imitation, its last, PPO
        CAPTURE(at);
        rl::ppo a(s, c);
        for (std::size_t i = 0; i < at; ++i) (void)a.iterate();
        // through the bytes of a state file, as a run saves it
        const auto file = (std::filesystem::temp_directory_path() / "gpuplace_rl_state_test.bin").string();
        rl::write_state_file(file, a.save_state());
        rl::ppo b(s, c);
        b.load_state(rl::read_state_file(file), file);
        CHECK(b.iterations() == at);
        CHECK(b.env_steps() == a.env_steps());
        std::size_t k = at;
        while (!b.done()) {
            const auto st = b.iterate();
            CHECK(st.mean_return == ref_stats[k].mean_return);
            CHECK(st.policy_loss == ref_stats[k].policy_loss);
            ++k;
        }
        CHECK(test::network_params(b) == test::network_params(ref));
        std::filesystem::remove(file);
    }
}

TEST_CASE("rl state: a state of another config or scenario is refused, naming what differs") {
    const auto s = state_test_scenario();
    auto c = state_test_config();
    rl::ppo a(s, c);
    (void)a.iterate();
    const auto st = a.save_state();
    auto c2 = c;
    c2.learning_rate = 1e-3;
    rl::ppo b(s, c2);
    CHECK_THROWS_WITH_AS(b.load_state(st, "f.bin"), doctest::Contains("state f.bin: made with another PPO config: /learning_rate"),
                         CheckpointError);
    auto s2 = s;
    s2.workload.synthetic.num_jobs = 41;
    rl::ppo d(s2, c);
    CHECK_THROWS_WITH_AS(d.load_state(st, "f.bin"), doctest::Contains("made for another scenario: /workload/num_jobs (stored 40, now 41)"),
                         CheckpointError);
    auto c3 = c;
    c3.threads = 2;  // results do not depend on the threads: accepted
    rl::ppo e(s, c3);
    e.load_state(st, "f.bin");
    CHECK(e.iterations() == 1);
    auto broken = st;
    broken["envs"]["actions"][0] = gpuplace::detail::json::binary({1, 2, 3});
    rl::ppo f(s, c);
    CHECK_THROWS_WITH_AS(f.load_state(broken, "f.bin"), doctest::Contains("/envs/actions/0: has 3 bytes"), CheckpointError);
}

TEST_CASE("rl state file: values round trip exactly, truncation and corruption are named") {
    using gpuplace::detail::json;
    const std::vector<double> d = {0.1, -0.0, std::numeric_limits<double>::infinity(), 1e-310, std::nan("")};
    const std::vector<float> f = {1.5f, -3e-40f, std::numeric_limits<float>::max()};
    const std::vector<std::int64_t> i = {-1, 0, std::numeric_limits<std::int64_t>::max()};
    const json doc = {{"d", rl::detail::to_bytes<double>(d)}, {"f", rl::detail::to_bytes<float>(f)},
                      {"i", rl::detail::to_bytes<std::int64_t>(i)}, {"text", "x"}};
    const auto file = (std::filesystem::temp_directory_path() / "gpuplace_state_file_test.bin").string();
    rl::write_state_file(file, doc);
    const auto back = rl::read_state_file(file);
    const auto d2 = rl::detail::from_bytes<double>(back["d"], file, "/d", d.size());
    for (std::size_t k = 0; k < d.size(); ++k) CHECK(std::memcmp(&d[k], &d2[k], sizeof(double)) == 0);
    CHECK(rl::detail::from_bytes<float>(back["f"], file, "/f") == f);
    CHECK(rl::detail::from_bytes<std::int64_t>(back["i"], file, "/i") == i);
    CHECK_THROWS_WITH_AS(rl::detail::from_bytes<float>(back["f"], file, "/f", 4),
                         (std::string("state ") + file + ": /f: has 3 values, expected 4").c_str(), CheckpointError);
    const auto size = std::filesystem::file_size(file);
    std::filesystem::resize_file(file, size - 5);
    CHECK_THROWS_WITH_AS(rl::read_state_file(file), doctest::Contains(": corrupted or truncated"), CheckpointError);
    {
        std::ofstream out(file, std::ios::binary | std::ios::trunc);
        out << "not a state";
    }
    CHECK_THROWS_WITH_AS(rl::read_state_file(file), doctest::Contains("not a gpuplace state file"), CheckpointError);
    std::filesystem::remove(file);
    CHECK_THROWS_WITH_AS(rl::read_state_file(file), doctest::Contains(": cannot open"), CheckpointError);
}
