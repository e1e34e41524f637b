// Tests of include/gpuplace/render.hpp: the text picture of the cluster.

#include <doctest/doctest.h>

#include <string>

#include <gpuplace/render.hpp>

#include "test_util.hpp"

namespace gp = gpuplace;
using namespace gpuplace::test;

TEST_CASE("render_ansi shows racks, nodes, job ids and picked GPUs") {
    // 2 racks x 2 nodes x 2 GPUs; jobs 0 (2 GPUs), 1 (3 GPUs) and 2 (1 GPU), all at time 0
    const json topo = {{"preset", "custom"}, {"racks", 2}, {"nodes_per_rack", 2}, {"gpus_per_node", 2}};
    json list = json::array();
    for (int k : {2, 3, 1}) list.push_back({{"submit_time", 0}, {"num_gpus", k}, {"model", 0}, {"work", 100}});
    const auto s = gp::scenario_from_json(json{{"topology", topo}, {"workload", {{"kind", "jobs"}, {"jobs", list}}}});
    gp::env e(s);
    e.reset(0);
    (void)e.step(2);
    (void)e.step(3);  // job 0 runs on node 1
    (void)e.step(5);  // job 1: one GPU picked
    const std::string model = e.zoo()[0].name;
    std::string expect = "t=0.0s  step 3  jobs: 1 running, 2 waiting, 0/3 done  GPUs busy 2/8\n";
    expect += "placing job 1: 3 GPUs of ";
    expect += model;
    expect += ", 1 picked\n"
              "rack 0\n"
              "  node 0   [ . . ]\n"
              "  node 1   [ 0 0 ]\n"
              "rack 1\n"
              "  node 2   [ . * ]\n"
              "  node 3   [ . . ]\n";
    CHECK(gp::render_ansi(e) == expect);
    (void)e.step(0);
    (void)e.step(7);  // job 1 starts on 0, 5, 7; job 2 is next
    const auto out = gp::render_ansi(e);
    CHECK(out.find("placing job 2: 1 GPUs of ") != std::string::npos);
    CHECK(out.find("  node 0   [ 1 . ]\n") != std::string::npos);
    CHECK(out.find("  node 2   [ . 1 ]\n") != std::string::npos);
    CHECK(out.find("  node 3   [ . 1 ]\n") != std::string::npos);
    while (!e.done()) (void)e.step(gp::first_fit_policy{}.act(e));
    const auto end = gp::render_ansi(e);
    CHECK(end.find("episode over\n") != std::string::npos);
    CHECK(end.find("3/3 done") != std::string::npos);
}

TEST_CASE("render_ansi widens cells for large job ids") {
    const auto s = small_scenario(tiny_topo::config(), {{"1", 1.0}}, 150, 5.0);
    gp::env e(s);
    e.reset(1);
    gp::first_fit_policy ff;
    while (!e.done() && e.current_index() < 120) (void)e.step(ff.act(e));
    const auto out = gp::render_ansi(e);
    // three-digit ids: every cell is 3 wide, so every node line is "  node N   [" + 2 x 4 + " ]"
    std::size_t lines = 0;
    for (std::size_t pos = 0; (pos = out.find("  node ", pos)) != std::string::npos; ++pos) {
        const auto eol = out.find('\n', pos);
        CHECK(eol - pos == 22);
        ++lines;
    }
    CHECK(lines == 2);
    bool big_id = false;
    for (std::size_t g = 0; g < 4; ++g)
        if (!e.cluster().is_free(gp::gpu_id(g))) {
            const auto id = e.simulator().job(e.cluster().holder(gp::gpu_id(g))).id;
            big_id = big_id || id >= 100;
            const std::string cell = std::to_string(id);
            CHECK(out.find(cell) != std::string::npos);
        }
    CHECK(big_id);
}
