// rl/ppo.hpp: the trainer is deterministic by seed, whatever the number of env threads.
#include <doctest/doctest.h>

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include <gpuplace/gpuplace.hpp>
#include <gpuplace/rl/rl.hpp>
#include <gpuplace/rl/state_file.hpp>

#include "rl_test_util.hpp"

namespace {
using namespace gpuplace;

using test::tiny_ppo_scenario;
using test::tiny_ppo_config;
}  // namespace

TEST_CASE("rl ppo: deterministic by seed and independent of the number of env threads") {
    const auto s = tiny_ppo_scenario();
    rl::ppo a(s, tiny_ppo_config(1)), b(s, tiny_ppo_config(1)), c(s, tiny_ppo_config(3));
    while (!a.done()) a.iterate();
    while (!b.done()) b.iterate();
    while (!c.done()) c.iterate();
    auto pa = a.network().parts(), pb = b.network().parts(), pc = c.network().parts();
    REQUIRE(pa.size() == pc.size());
    for (std::size_t i = 0; i < pa.size(); ++i) {
        CHECK(pa[i]->params() == pb[i]->params());
        CHECK(pa[i]->params() == pc[i]->params());
    }
    rl::ppo_config other = tiny_ppo_config(1);
    other.seed = 99;
    rl::ppo d(s, other);
    while (!d.done()) d.iterate();
    CHECK(d.network().parts()[0]->params() != pa[0]->params());
}

namespace {
/// The tiny scenario in the placement action mode (3 candidates and DEFER).
scenario tiny_placement_scenario() {
    auto s = tiny_ppo_scenario();
    s.env.mode = action_mode::placement;
    s.env.slots = 3;
    return s;
}

/// Expert iteration alone: `iterations` rollouts of the network labelled by `teacher`, no PPO.
rl::ppo_config dagger_config(const std::string& teacher, std::size_t iterations, std::size_t threads = 1) {
    auto c = tiny_ppo_config(threads);
    c.dagger_teacher = teacher;
    c.dagger_iterations = iterations;
    c.imitation_learning_rate = 3e-3;
    c.total_steps = 0;
    return c;
}
}  // namespace

TEST_CASE("rl expert iteration: the network's own states, labelled by the teacher and aggregated, teach it the teacher") {
    const auto s = tiny_placement_scenario();
    rl::ppo p(s, dagger_config("pack", 8));
    CHECK(p.dagger_iterations() == 8);
    CHECK(p.ppo_iterations() == 0);
    CHECK(p.total_iterations() == 8);
    const auto TN = p.config().num_envs * p.config().num_steps;
    rl::ppo_stats st;
    for (std::size_t k = 1; !p.done(); ++k) {
        st = p.iterate();
        CHECK(st.dagger);
        CHECK_FALSE(st.imitation);
        CHECK(st.demonstrations == k * TN);  // every rollout's states are kept
        CHECK(p.demonstrations() == k * TN);
    }
    MESSAGE("argmax agreement with pack over every demonstration: ", st.teacher_agreement);
    CHECK(st.teacher_agreement > 0.9);
    // the network, acting greedily, places as pack does on unseen seeds
    auto net = std::make_shared<const rl::actor_critic>(p.network());
    double student = 0, teacher = 0;
    for (std::uint64_t seed : {201, 202, 203}) {
        env a(s), b(s);
        rl::network_policy pol(net);
        auto pk = heuristic<env>("pack").make(seed);
        student += run_episode(a, pol, seed).episode_return;
        b.reset(seed);
        while (!b.done()) b.step(pk(b));
        teacher += b.episode_return();
    }
    CHECK(student >= 1.05 * teacher);  // returns are negative: within 5% of the teacher's
}

TEST_CASE("rl expert iteration: deterministic by seed and thread count, with a hindsight planner as the teacher") {
    const auto s = tiny_placement_scenario();
    rl::ppo a(s, dagger_config("hindsight:pack", 2, 1)), b(s, dagger_config("hindsight:pack", 2, 2));
    while (!a.done()) (void)a.iterate();
    while (!b.done()) (void)b.iterate();
    CHECK(a.demonstrations() == 2 * 128);
    CHECK(test::network_params(a) == test::network_params(b));
    // then PPO continues from the distilled network
    auto c = dagger_config("hindsight:pack", 2);
    c.total_steps = 128;
    rl::ppo d(s, c);
    CHECK(d.total_iterations() == 3);
    rl::ppo_stats st;
    while (!d.done()) st = d.iterate();
    CHECK_FALSE(st.dagger);
    CHECK(st.demonstrations == 2 * 128);
}

TEST_CASE("rl expert iteration: a trainer saved between expert iterations continues bit for bit") {
    const auto s = tiny_placement_scenario();
    auto c = dagger_config("pack_wait", 3);
    c.teacher = "pack";
    c.imitation_steps = 128;
    c.total_steps = 128;
    rl::ppo ref(s, c);
    while (!ref.done()) (void)ref.iterate();
    for (const std::size_t at : {std::size_t{1}, std::size_t{2}, std::size_t{4}}) {  // imitation, expert iteration, its last
        CAPTURE(at);
        rl::ppo a(s, c);
        for (std::size_t i = 0; i < at; ++i) (void)a.iterate();
        const auto file = (std::filesystem::temp_directory_path() / "gpuplace_rl_dagger_state_test.bin").string();
        rl::write_state_file(file, a.save_state());
        rl::ppo b(s, c);
        b.load_state(rl::read_state_file(file), file);
        CHECK(b.demonstrations() == a.demonstrations());
        while (!b.done()) (void)b.iterate();
        CHECK(test::network_params(b) == test::network_params(ref));
        // a label that is no valid action of its state is refused, naming it
        if (at == 2) {
            auto j = a.save_state();
            auto labels = rl::detail::from_bytes<std::int64_t>(j["demonstrations"]["labels"], "mem", "/demonstrations/labels");
            labels[5] = 99;
            j["demonstrations"]["labels"] = rl::detail::to_bytes<std::int64_t>(labels);
            rl::ppo e(s, c);
            CHECK_THROWS_WITH_AS(e.load_state(j, "mem"), "state mem: /demonstrations/labels/5: 99 is not a valid action of its state",
                                 CheckpointError);
        }
        std::filesystem::remove(file);
    }
}

TEST_CASE("rl expert iteration: dagger_moved_weight weighs the labels a planner moves off its base") {
    const auto s = tiny_placement_scenario();
    // a hindsight planner that never moves a label (no gain is large enough): every weight is 1, and
    // the network is the unweighted one bit for bit
    auto still = dagger_config("hindsight:pack_wait", 2);
    still.dagger_min_gain = 1e12;
    auto still_weighted = still;
    still_weighted.dagger_moved_weight = 5;
    rl::ppo a(s, still), b(s, still_weighted);
    while (!a.done()) (void)a.iterate();
    while (!b.done()) (void)b.iterate();
    CHECK(a.moved_demonstrations() == 0);  // not counted at weight 1
    CHECK(b.moved_demonstrations() == 0);
    CHECK(b.demonstrations() == 2 * 128);
    CHECK(test::network_params(a) == test::network_params(b));
    // moving labels: some are off the base's action, and their weight changes the network
    auto moving = dagger_config("hindsight:pack_wait", 2), moving_weighted = moving;
    moving_weighted.dagger_moved_weight = 5;
    rl::ppo c(s, moving), d(s, moving_weighted);
    while (!c.done()) (void)c.iterate();
    rl::ppo_stats st;
    for (std::size_t k = 1; !d.done(); ++k) {
        st = d.iterate();
        CHECK(d.demonstrations() == k * 128);
        CHECK(st.moved_demonstrations == d.moved_demonstrations());
    }
    MESSAGE("labels off pack_wait's action: ", d.moved_demonstrations(), " of ", d.demonstrations());
    CHECK(d.moved_demonstrations() > 0);
    CHECK(d.moved_demonstrations() < d.demonstrations());
    CHECK(test::network_params(c) != test::network_params(d));
    // saved after the first expert iteration, it continues bit for bit (the flags are in the state)
    rl::ppo e(s, moving_weighted);
    (void)e.iterate();
    const auto saved = e.save_state();
    CHECK(saved["demonstrations"].contains("moved"));
    rl::ppo f(s, moving_weighted);
    f.load_state(saved, "mem");
    CHECK(f.moved_demonstrations() == e.moved_demonstrations());
    while (!f.done()) (void)f.iterate();
    CHECK(test::network_params(f) == test::network_params(d));
    auto without = saved;
    without["demonstrations"].erase("moved");
    rl::ppo g(s, moving_weighted);
    CHECK_THROWS_WITH_AS(g.load_state(without, "mem"), doctest::Contains("/demonstrations"), CheckpointError);
}

TEST_CASE("rl expert iteration: dagger_draws labels each state with several draws of futures") {
    const auto s = tiny_placement_scenario();
    const auto one = dagger_config("rollout2m0:pack_wait", 2);  // margin 0: a draw's labels move easily
    auto three = one;
    three.dagger_draws = 3;
    rl::ppo a(s, one), b(s, three);
    (void)a.iterate();
    const auto st = b.iterate();
    CHECK(st.demonstrations == 128);  // one demonstration a state, whatever the draws
    // the same network visits the same states, and the first draw labels them as the teacher of one draw does
    const auto ja = a.save_state(), jb = b.save_state();
    CHECK(jb["demonstrations"]["labels"] == ja["demonstrations"]["labels"]);
    CHECK_FALSE(ja["demonstrations"].contains("draws"));
    const auto labels = rl::detail::from_bytes<std::int64_t>(jb["demonstrations"]["labels"], "mem", "/demonstrations/labels");
    const auto draws = rl::detail::from_bytes<std::int64_t>(jb["demonstrations"]["draws"], "mem", "/demonstrations/draws", 2 * 128);
    std::size_t split = 0;
    for (std::size_t k = 0; k < 128; ++k) split += draws[2 * k] != labels[k] || draws[2 * k + 1] != labels[k];
    MESSAGE("states whose three draws disagree: ", split, " of 128");
    CHECK(st.split_demonstrations == split);
    CHECK(b.split_demonstrations() == split);
    CHECK(a.split_demonstrations() == 0);
    CHECK(split > 0);
    CHECK(split < 128);
    CHECK(test::network_params(a) != test::network_params(b));  // the other draws' labels are trained on
    // saved after the first expert iteration, it continues bit for bit (the other draws' labels are in the state)
    rl::ppo ref(s, three);
    while (!ref.done()) (void)ref.iterate();
    rl::ppo c(s, three);
    c.load_state(jb, "mem");
    CHECK(c.split_demonstrations() == split);
    while (!c.done()) (void)c.iterate();
    CHECK(test::network_params(c) == test::network_params(ref));
    auto without = jb;
    without["demonstrations"].erase("draws");
    rl::ppo d(s, three);
    CHECK_THROWS_WITH_AS(d.load_state(without, "mem"), doctest::Contains("/demonstrations"), CheckpointError);
    auto bad = jb;
    auto wrong = draws;
    wrong[3] = 99;
    bad["demonstrations"]["draws"] = rl::detail::to_bytes<std::int64_t>(wrong);
    rl::ppo e(s, three);
    CHECK_THROWS_WITH_AS(e.load_state(bad, "mem"), "state mem: /demonstrations/draws/3: 99 is not a valid action of its state",
                         CheckpointError);
    // PPO after it, pulled towards a heuristic teacher, asks that teacher once a state, not once a draw
    auto then_ppo = three;
    then_ppo.teacher = "pack";
    then_ppo.teacher_coef = 0.1;
    then_ppo.total_steps = 256;
    rl::ppo f(s, then_ppo);
    while (!f.done()) (void)f.iterate();
    CHECK(f.iterations() == 4);
    CHECK(f.split_demonstrations() > 0);
}

TEST_CASE("rl expert iteration: the weighted cross-entropy is the mean over a batch that repeats each sample by its weight") {
    const Eigen::Index A = 3;
    Eigen::MatrixXd logits(A, 2), repeated(A, 3);
    logits << 0.3, -1.2, 0.5, 1.1, -0.4, 0.2;
    repeated << logits.col(0), logits.col(0), logits.col(1);
    const std::vector<std::uint8_t> masks{1, 1, 1, 1, 0, 1}, masks3{1, 1, 1, 1, 1, 1, 1, 0, 1};
    const std::vector<std::int64_t> labels{2, 0}, labels3{2, 2, 0};
    const std::vector<double> weights{2.0, 1.0};
    double agree = 0, agree3 = 0;
    const auto w = rl::imitation_loss<double>(logits, masks, labels, agree, weights);
    const auto r = rl::imitation_loss<double>(repeated, masks3, labels3, agree3);
    CHECK(w.policy == doctest::Approx(r.policy).epsilon(1e-12));
    for (Eigen::Index a = 0; a < A; ++a) {
        CHECK(w.dlogits(a, 0) == doctest::Approx(r.dlogits(a, 0) + r.dlogits(a, 1)).epsilon(1e-12));
        CHECK(w.dlogits(a, 1) == doctest::Approx(r.dlogits(a, 2)).epsilon(1e-12));
    }
    // equal weights: the unweighted loss, bit for bit
    double agree1 = 0, agree2 = 0;
    const std::vector<double> ones{1.0, 1.0};
    const auto u = rl::imitation_loss<double>(logits, masks, labels, agree1);
    const auto o = rl::imitation_loss<double>(logits, masks, labels, agree2, ones);
    CHECK(u.policy == o.policy);
    CHECK(u.dlogits == o.dlogits);
}

TEST_CASE("rl expert iteration: config errors name the path and the value") {
    using nlohmann::json;
    CHECK_THROWS_WITH_AS((void)rl::ppo_config::from_json(json::parse(R"({"dagger_iterations": 3})")),
                         "config /ppo/dagger_iterations: needs a dagger_teacher", ConfigError);
    CHECK_THROWS_WITH_AS((void)rl::ppo_config::from_json(json::parse(R"({"dagger_teacher": "rollout0:pack", "dagger_iterations": 3})")),
                         "config /ppo/dagger_teacher: policy \"rollout0:pack\": rollout<F>h<H> takes a number of futures F from 1 to 4096, got \"0\"",
                         ConfigError);
    const auto c = rl::ppo_config::from_json(json::parse(R"({"dagger_teacher": "hindsight:pack_wait+sjf", "dagger_iterations": 3, "total_steps": 0})"));
    CHECK(c.dagger_teacher == "hindsight:pack_wait+sjf");
    CHECK(rl::ppo_config::from_json(c.to_json()).to_json() == c.to_json());
    CHECK_FALSE(rl::ppo_config{}.to_json().contains("dagger_teacher"));  // a config without it keeps its document
    // the fair planner's margin: stated only where it is not the planner's own (1 standard error)
    const auto m = rl::ppo_config::from_json(json::parse(R"({"dagger_teacher": "rollout16:pack_wait+sjf", "dagger_iterations": 3, "dagger_margin": 3})"));
    CHECK(m.dagger_margin == 3.0);
    CHECK(rl::ppo_config::from_json(m.to_json()).dagger_margin == 3.0);
    CHECK_FALSE(c.to_json().contains("dagger_margin"));
    // a planner over several bases (parallel rollout) labels, and its scores are not one base's
    CHECK(rl::ppo_config::from_json(json::parse(R"({"dagger_teacher": "rollout16:pack_wait/topology_greedy+sjf", "dagger_iterations": 3})"))
              .dagger_teacher == "rollout16:pack_wait/topology_greedy+sjf");
    CHECK_THROWS_WITH_AS((void)rl::ppo_config::from_json(json::parse(
                             R"({"dagger_teacher": "rollout4:pack/first_fit", "dagger_iterations": 3, "dagger_loss": "advantage"})")),
                         "config /ppo/dagger_loss: \"advantage\" reads the scores of a planner over one base heuristic, and "
                         "\"rollout4:pack/first_fit\" has several",
                         ConfigError);
    // the weight of moved labels: stated where it is not 1, and only for a planner over one base with the label loss
    const auto mw = rl::ppo_config::from_json(json::parse(R"({"dagger_teacher": "rollout16:pack_wait+sjf", "dagger_iterations": 3, "dagger_moved_weight": 4})"));
    CHECK(mw.dagger_moved_weight == 4.0);
    CHECK(rl::ppo_config::from_json(mw.to_json()).to_json() == mw.to_json());
    CHECK_FALSE(m.to_json().contains("dagger_moved_weight"));
    CHECK_THROWS_WITH_AS((void)rl::ppo_config::from_json(json::parse(R"({"dagger_teacher": "pack", "dagger_iterations": 3, "dagger_moved_weight": 4})")),
                         "config /ppo/dagger_moved_weight: 4.0 weighs the labels a rollout planner over one base heuristic moves off its "
                         "base's action, and the dagger_teacher is \"pack\"",
                         ConfigError);
    CHECK_THROWS_WITH_AS((void)rl::ppo_config::from_json(json::parse(
                             R"({"dagger_teacher": "rollout4:pack", "dagger_iterations": 3, "dagger_loss": "advantage", "dagger_moved_weight": 2})")),
                         "config /ppo/dagger_moved_weight: 2.0 weighs the \"label\" loss's demonstrations, and dagger_loss is \"advantage\"",
                         ConfigError);
    CHECK_THROWS_WITH_AS((void)rl::ppo_config::from_json(json::parse(R"({"dagger_moved_weight": 0})")),
                         "config /ppo/dagger_moved_weight: value 0 out of range [0.001, 1000.0]", ConfigError);
    auto several_moved = dagger_config("rollout2:pack/first_fit", 1);  // a config made in code is refused as well
    several_moved.dagger_moved_weight = 3;
    CHECK_THROWS_WITH_AS(rl::ppo(tiny_placement_scenario(), several_moved),
                         "ppo: dagger_moved_weight 3.0 weighs the labels a rollout planner over one base heuristic moves off its base's "
                         "action, and the dagger_teacher is \"rollout2:pack/first_fit\"",
                         ConfigError);
    auto no_weight = dagger_config("rollout2:pack", 1);
    no_weight.dagger_moved_weight = 0;
    CHECK_THROWS_WITH_AS(rl::ppo(tiny_placement_scenario(), no_weight), "ppo: dagger_moved_weight 0.0 is out of range [0.001, 1000.0]",
                         ConfigError);
    // draws of futures: stated where not 1, and only for a drawing planner with the label loss and no moved weight
    const auto dr = rl::ppo_config::from_json(json::parse(R"({"dagger_teacher": "rollout16:pack_wait+sjf", "dagger_iterations": 3, "dagger_draws": 4})"));
    CHECK(dr.dagger_draws == 4);
    CHECK(rl::ppo_config::from_json(dr.to_json()).to_json() == dr.to_json());
    CHECK_FALSE(m.to_json().contains("dagger_draws"));
    CHECK_THROWS_WITH_AS((void)rl::ppo_config::from_json(json::parse(R"({"dagger_teacher": "pack", "dagger_iterations": 3, "dagger_draws": 4})")),
                         "config /ppo/dagger_draws: 4 draws of futures need a rollout planner that draws them (rollout<F>:...) as the "
                         "dagger_teacher, and it is \"pack\"",
                         ConfigError);
    CHECK_THROWS_WITH_AS((void)rl::ppo_config::from_json(json::parse(R"({"dagger_teacher": "hindsight:pack", "dagger_iterations": 3, "dagger_draws": 2})")),
                         "config /ppo/dagger_draws: 2 draws of futures need a rollout planner that draws them (rollout<F>:...) as the "
                         "dagger_teacher, and it is \"hindsight:pack\"",
                         ConfigError);
    CHECK_THROWS_WITH_AS((void)rl::ppo_config::from_json(json::parse(
                             R"({"dagger_teacher": "rollout4:pack", "dagger_iterations": 3, "dagger_moved_weight": 2, "dagger_draws": 2})")),
                         "config /ppo/dagger_draws: 2 draws and a dagger_moved_weight other than 1: give one of them", ConfigError);
    CHECK_THROWS_WITH_AS((void)rl::ppo_config::from_json(json::parse(R"({"dagger_draws": 65})")),
                         "config /ppo/dagger_draws: value 65 out of range [1, 64]", ConfigError);
    auto advantage_draws = dagger_config("rollout2:pack", 1);  // a config made in code is refused as well
    advantage_draws.dagger_loss = "advantage";
    advantage_draws.dagger_draws = 2;
    CHECK_THROWS_WITH_AS(rl::ppo(tiny_placement_scenario(), advantage_draws),
                         "ppo: dagger_draws 2 draws label the \"label\" loss's demonstrations, and dagger_loss is \"advantage\"", ConfigError);
    CHECK_THROWS_WITH_AS((void)rl::ppo_config::from_json(json::parse(R"({"dagger_margin": -1})")),
                         "config /ppo/dagger_margin: value -1 out of range [0.0, 1000000.0]", ConfigError);
    auto several = dagger_config("rollout2:pack/first_fit", 1);  // the same refusal for a config made in code
    several.dagger_loss = "advantage";
    CHECK_THROWS_WITH_AS(rl::ppo(tiny_placement_scenario(), several),
                         "ppo: dagger_loss \"advantage\" reads the scores of a planner over one base heuristic, and "
                         "\"rollout2:pack/first_fit\" has several",
                         ConfigError);
    // a planner chooses among whole placements or jobs, not GPUs
    CHECK_THROWS_WITH_AS(rl::ppo(tiny_ppo_scenario(), dagger_config("hindsight:pack", 1)),
                         "ppo: dagger_teacher \"hindsight:pack\" is a rollout planner, which chooses among the candidates of the "
                         "placement or job action mode; the scenario's action_mode is gpu",
                         ConfigError);
}

TEST_CASE("rl ppo: a mixture of cluster sizes trains one network in the placement mode, the gpu mode refuses it") {
    auto small = tiny_placement_scenario(), large = tiny_placement_scenario();
    large.name = "tiny@16";
    large.topology.nodes_per_rack = 4;  // 16 GPUs
    auto c = dagger_config("pack", 2);
    c.total_steps = 128;
    rl::ppo p({small, large}, c);
    CHECK(p.mixture().size() == 2);
    for (std::size_t i = 0; i < c.num_envs; ++i) CHECK(p.vector_env().env(i).num_gpus() == (i % 2 == 0 ? 8u : 16u));
    (void)p.iterate();
    // the state names the mixture: a trainer of another mixture refuses it
    const auto st = p.save_state();
    rl::ppo q({small, large}, c), r(small, c);
    q.load_state(st, "mem");
    CHECK(q.iterations() == 1);
    CHECK_THROWS_WITH_AS(r.load_state(st, "mem"), doctest::Contains("made for another mixture of scenarios"), CheckpointError);
    while (!p.done()) (void)p.iterate();
    while (!q.done()) (void)q.iterate();
    CHECK(test::network_params(p) == test::network_params(q));
    // in the gpu mode the observation has a part per GPU: sizes cannot share a batch
    auto g = tiny_ppo_scenario(), g16 = tiny_ppo_scenario();
    g16.topology.nodes_per_rack = 4;
    CHECK_THROWS_WITH_AS(rl::ppo({g, g16}, tiny_ppo_config()), doctest::Contains("the scenarios of a mixture need observations and actions of one size"),
                         ConfigError);
}

TEST_CASE("rl expert iteration: the counterfactual loss and its logit gradient against finite differences") {
    const Eigen::Index A = 4, M = 3;
    Eigen::MatrixXd logits(A, M);
    logits << 0.3, -1.2, 0.5, 1.1, 0.4, -0.7, -0.2, 0.9, 0.0, 0.6, -0.3, 2.0;
    const std::vector<std::uint8_t> masks{1, 1, 0, 1, 1, 1, 1, 1, 0, 1, 1, 0};  // column-major, A per sample
    const std::vector<float> adv{0.5f, -1.0f, 9.0f, 0.25f, 2.0f, 0.0f, -2.0f, 1.0f, 7.0f, -0.5f, 0.5f, 3.0f};  // masked entries ignored
    const std::vector<std::int64_t> chosen{1, 0, 2};
    double agreement = 0;
    const auto L = rl::advantage_loss<double>(logits, masks, adv, chosen, agreement);
    // minus the mean over samples of the expected advantage under the masked softmax
    auto loss = [&](const Eigen::MatrixXd& z) {
        double total = 0;
        for (Eigen::Index j = 0; j < M; ++j) {
            double norm = 0, expected = 0;
            for (Eigen::Index a = 0; a < A; ++a)
                if (masks[std::size_t(j * A + a)]) norm += std::exp(z(a, j));
            for (Eigen::Index a = 0; a < A; ++a)
                if (masks[std::size_t(j * A + a)]) expected += std::exp(z(a, j)) / norm * adv[std::size_t(j * A + a)];
            total -= expected / double(M);
        }
        return total;
    };
    CHECK(L.policy == doctest::Approx(loss(logits)).epsilon(1e-12));
    const double h = 1e-6;
    for (Eigen::Index a = 0; a < A; ++a)
        for (Eigen::Index j = 0; j < M; ++j) {
            CAPTURE(a);
            CAPTURE(j);
            Eigen::MatrixXd up = logits, down = logits;
            up(a, j) += h;
            down(a, j) -= h;
            const double fd = (loss(up) - loss(down)) / (2 * h);
            if (masks[std::size_t(j * A + a)]) CHECK(L.dlogits(a, j) == doctest::Approx(fd).epsilon(1e-6));
            else CHECK(L.dlogits(a, j) == 0.0);  // a masked action never moves
        }
    // argmax agreement with the teacher's choice: valid argmaxes 1, 2, 2 against 1, 0, 2
    CHECK(agreement == doctest::Approx(2.0 / 3.0));
}
