// Tests of include/gpuplace/env/obs_selection.hpp (scenario key "observation"): the chosen
// segments are exactly the whole observation's, under random play in every action mode and in a
// vector env; bad choices are ConfigErrors naming the path and the name; a network records the
// inputs it was trained on and refuses an env whose inputs differ, naming them.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include <gpuplace/gpuplace.hpp>
#include <gpuplace/json.hpp>
#include <gpuplace/policy_registry.hpp>
#include <gpuplace/rl/rl.hpp>
#include <gpuplace/vector_env.hpp>

#include "test_util.hpp"

namespace gp = gpuplace;
using gp::test::same_bytes;

namespace {

gp::scenario small(const std::string& mode = "gpu") {
    auto s = gp::default_scenario();
    s.topology = gp::topology_config::of("dgx_a100", 1, 2);
    s.workload.synthetic.num_jobs = 24;
    s.env.mode = gp::parse_action_mode(mode, "/env/action_mode");
    return s;
}

gp::scenario choosing(gp::scenario s, std::vector<std::string> features, std::vector<std::string> exclude = {}) {
    s.observation.features = std::move(features);
    s.observation.exclude = std::move(exclude);
    return s;
}

/// The segment of `layout` named `name`.
const gp::obs_segment& segment(const std::vector<gp::obs_segment>& layout, const std::string& name) {
    for (const auto& s : layout)
        if (s.name == name) return s;
    FAIL("no segment " << name);
    return layout.front();
}

/// Plays the whole env and the choosing one side by side under the same random actions: every
/// kept segment equals the whole observation's, bit for bit, and so does the mask.
void check_side_by_side(const gp::scenario& whole_s, const gp::scenario& chosen_s) {
    gp::env whole(whole_s), chosen(chosen_s);
    const auto& lay = chosen.observation_layout();
    std::size_t size = 0;
    for (const auto& s : lay) size += s.size;
    REQUIRE(chosen.observation_size() == size);
    gp::detail::rng r(3);
    for (std::uint64_t seed : {1, 2}) {
        whole.reset(seed);
        chosen.reset(seed);
        for (std::size_t step = 0; !whole.done() && step < 3000; ++step) {
            REQUIRE(same_bytes(whole.action_mask(), chosen.action_mask()));
            const auto w = whole.observation(), c = chosen.observation();
            for (const auto& s : lay) {
                const auto& f = segment(whole.observation_layout(), s.name);
                REQUIRE(f.size == s.size);
                REQUIRE(same_bytes(w.subspan(f.offset, f.size), c.subspan(s.offset, s.size)));
            }
            const auto a = gp::test::random_action(whole, r, 0.1);
            const auto rw = whole.step(a), rc = chosen.step(a);
            REQUIRE(rw.reward == rc.reward);
        }
        CHECK(chosen.done());
    }
}

}  // namespace

TEST_CASE("obs_selection: no choice shows every segment, as the front end writes it") {
    gp::env e(small());
    e.reset(1);
    CHECK(e.observation_layout().front().name == "gpu_busy");
    CHECK(e.observation_layout().front().item == "gpu");
    CHECK(segment(e.observation_layout(), "queue").item.empty());
    CHECK(e.observation_size() == e.observation_layout().back().offset + e.observation_layout().back().size);
}

TEST_CASE("obs_selection: the kept segments equal the whole observation's under random play, in every action mode") {
    SUBCASE("gpu mode, exclude") {
        check_side_by_side(small(), choosing(small(), {}, {"gpu_remaining", "global"}));
    }
    SUBCASE("gpu mode, features") {
        const auto s = choosing(small(), {"job", "gpu_busy", "gpu_proximity"});
        gp::env e(s);
        // the layout's order, whatever the list's
        REQUIRE(e.observation_layout().size() == 3);
        CHECK(e.observation_layout()[0].name == "gpu_busy");
        CHECK(e.observation_layout()[1].name == "gpu_proximity");
        CHECK(e.observation_layout()[2].name == "job");
        CHECK(e.observation_layout()[2].offset == 2 * e.num_gpus());
        check_side_by_side(small(), s);
    }
    SUBCASE("placement mode") {
        gp::env e(small("placement"));
        const auto first = e.observation_layout().front().name;
        CHECK(e.observation_layout().front().item == "candidate");
        check_side_by_side(small("placement"), choosing(small("placement"), {}, {first, "queue"}));
    }
    SUBCASE("job mode") {
        check_side_by_side(small("job"), choosing(small("job"), {}, {"global"}));
    }
    SUBCASE("with preemption and hidden durations (the whole observation rewritten each step)") {
        auto s = gp::preset_scenario("philly_hidden");
        s.topology = gp::topology_config::of("dgx_a100", 1, 2);
        s.workload = small().workload;
        check_side_by_side(s, choosing(s, {}, {"gpu_picked"}));
    }
}

TEST_CASE("obs_selection: a vector env's rows are the single envs' chosen observations") {
    const auto s = choosing(small(), {}, {"gpu_node_free", "queue"});
    const std::size_t N = 3;
    gp::vector_env v(s, N, 2);
    std::vector<gp::env> ref(N, gp::env(s));
    v.reset(7);
    for (std::size_t i = 0; i < N; ++i) ref[i].reset(gp::episode_seed(7, i, 0));
    const std::size_t O = v.observation_size(), A = v.num_actions();
    REQUIRE(O == ref[0].observation_size());
    gp::detail::rng r(5);
    std::vector<std::int64_t> actions(N);
    for (int step = 0; step < 300; ++step) {
        for (std::size_t i = 0; i < N; ++i) {
            REQUIRE(same_bytes(v.observations().subspan(i * O, O), ref[i].observation()));
            REQUIRE(same_bytes(v.action_masks().subspan(i * A, A), ref[i].action_mask()));
            actions[i] = gp::test::random_action(ref[i], r, 0.1);
        }
        v.step(actions);
        for (std::size_t i = 0; i < N; ++i) {
            const auto res = ref[i].step(actions[i]);
            if (res.terminated || res.truncated) ref[i].reset(gp::episode_seed(7, i, v.episode(i)));
        }
    }
}

TEST_CASE("obs_selection: a fork and a copy keep the choice") {
    gp::env e(choosing(small(), {"gpu_busy", "job"}));
    e.reset(2);
    const auto f = e.fork(9);
    CHECK(f.observation_size() == e.observation_size());
    CHECK(same_bytes(f.observation(), e.observation()));  // the present is the same
    const gp::env c = e;
    CHECK(same_bytes(c.observation(), e.observation()));
    CHECK(c.observation().data() != e.observation().data());  // a copy owns its buffer
}

TEST_CASE("obs_selection: the JSON key round trips, bad choices are ConfigErrors naming the path and the name") {
    using json = gp::detail::json;
    auto j = gp::to_json(small());
    CHECK(!j.contains("observation"));  // other scenarios' JSON is unchanged
    j["observation"] = {{"exclude", {"gpu_remaining"}}};
    const auto s = gp::scenario_from_json(j);
    CHECK(s.observation.exclude == std::vector<std::string>{"gpu_remaining"});
    CHECK(gp::to_json(s)["observation"] == j["observation"]);

    auto bad = [&](const std::string& obs) {
        auto b = gp::to_json(small());
        b["observation"] = json::parse(obs);
        try {
            gp::env e(gp::scenario_from_json(b));
        } catch (const gp::ConfigError& e) {
            return std::string(e.what());
        }
        return std::string("no ConfigError");
    };
    CHECK(bad(R"({"features": ["gpu_busy", "gpu_speed"]})").find("config /observation/features/1: unknown observation segment "
                                                                "\"gpu_speed\" (this env's: gpu_busy, gpu_picked") != std::string::npos);
    CHECK(bad(R"({"exclude": ["queue", "queue"]})").find("/observation/exclude/1: \"queue\" is listed twice") != std::string::npos);
    CHECK(bad(R"({"features": ["job"], "exclude": ["queue"]})").find("config /observation: give \"features\"") != std::string::npos);
    CHECK(bad(R"({"features": []})").find("/observation/features: expected a segment name or a non-empty array of them, got []") !=
          std::string::npos);
    CHECK(bad(R"({"features": [1]})").find("/observation/features/0: expected a segment name, got 1") != std::string::npos);
    CHECK(bad(R"({"inputs": ["job"]})").find("config /observation/inputs: unknown key") != std::string::npos);
    json all = json::array();
    const gp::env whole(small());
    for (const auto& seg : whole.observation_layout()) all.push_back(seg.name);
    CHECK(bad(json{{"exclude", all}}.dump()).find("/observation/exclude: leaves no segment") != std::string::npos);
}

TEST_CASE("obs_selection: a network records its inputs and refuses an env whose inputs differ, naming them") {
    namespace rl = gp::rl;
    const auto a = choosing(small(), {}, {"gpu_busy"}), b = choosing(small(), {}, {"gpu_picked"});
    const gp::env ea(a), eb(b);
    const auto sa = rl::obs_spec::of(ea), sb = rl::obs_spec::of(eb);
    REQUIRE(sa.same_shape(sb));  // the same sizes: only the names tell them apart
    REQUIRE(sa.names.size() == sa.gpu_features + sa.context);
    CHECK(sa.names.front() == "gpu_picked");
    CHECK(std::find(sa.names.begin(), sa.names.end(), "queue.0.present") != sa.names.end());
    const auto net = std::make_shared<const rl::actor_critic>(sa, rl::network_config{}, 3);
    const auto why = net->incompatibility(sb);
    CHECK(why == "its observation differs: the network reads gpu_picked, which this env does not observe; this env observes "
                 "gpu_busy, which the network was not trained on");
    // the names travel with the checkpoint
    const auto ck = rl::parse_checkpoint(rl::checkpoint_json(*net, rl::ppo_config{}, a).dump(), "mem");
    CHECK(ck.network.spec().names == sa.names);
    // acting is refused before any decision, naming the difference
    gp::env e(b);
    e.reset(1);
    rl::network_policy p(std::make_shared<const rl::actor_critic>(ck.network));
    CHECK_THROWS_WITH_AS((void)p.act(e), doctest::Contains("network policy: its observation differs: the network reads gpu_picked"),
                         gp::Error);
    // the env it was trained on, and the same inputs on another cluster size, are fine
    gp::env same(a);
    same.reset(1);
    rl::network_policy ok(std::make_shared<const rl::actor_critic>(ck.network));
    CHECK_NOTHROW((void)ok.act(same));
    auto bigger = a;
    bigger.topology = gp::topology_config::of("dgx_a100", 2, 4);
    CHECK(net->incompatibility(rl::obs_spec::of(gp::env(bigger))).empty());
    // a checkpoint with a wrong number of names is refused
    auto j = rl::checkpoint_json(*net, rl::ppo_config{}, a);
    j["obs_spec"]["names"].erase(0);
    CHECK_THROWS_WITH_AS((void)rl::parse_checkpoint(j.dump(), "few.json"), doctest::Contains("/obs_spec/names"), gp::CheckpointError);
    // one without names (written before they were recorded) loads and acts on any env of its shape
    j = rl::checkpoint_json(*net, rl::ppo_config{}, a);
    j["obs_spec"].erase("names");
    const auto old = rl::parse_checkpoint(j.dump(), "old.json");
    CHECK(old.network.spec().names.empty());
    CHECK(old.network.incompatibility(sb).empty());
}

TEST_CASE("obs_selection: a rollout planner (lazy forks) decides the same with and without chosen segments") {
    // its forks copy the chosen segments when read, not at every step (a lazy env's episodes with
    // chosen segments: tests/action_mode_test.cpp)
    auto ws = small("placement");
    gp::apply_queue(ws, gp::heuristic<gp::env>("pack_wait+sjf").queue);
    const auto cs = choosing(ws, {}, {"global"});
    gp::env a(ws), b(cs);
    a.reset(6);
    b.reset(6);
    auto plan_a = gp::named_policy<gp::env>("rollout4:pack_wait").make(6);
    auto plan_b = gp::named_policy<gp::env>("rollout4:pack_wait").make(6);
    for (int i = 0; i < 12 && !a.done(); ++i) {
        const auto x = plan_a(a);
        REQUIRE(plan_b(b) == x);
        a.step(x);
        b.step(x);
    }
}
