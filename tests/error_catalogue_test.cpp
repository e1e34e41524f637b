// The error catalogue (docs/errors.md): every exception type of gpuplace, triggered the way a user
// would, with its exact message. A second test checks that docs/errors.md lists exactly these
// messages under the right type, so the catalogue cannot drift from the code.

#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <fstream>
#include <functional>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include <gpuplace/config.hpp>
#include <gpuplace/env.hpp>
#include <gpuplace/evaluate.hpp>
#include <gpuplace/level_topology.hpp>
#include <gpuplace/model_zoo.hpp>
#include <gpuplace/trace.hpp>
#include <gpuplace/vector_env.hpp>
#if __has_include(<gpuplace/rl/checkpoint.hpp>)
#include <gpuplace/rl/checkpoint.hpp>
#include "training_run.hpp"  // src/training_run/ (the gpuplace_training_run library)
#include <gpuplace/json.hpp>
#define GPUPLACE_CATALOGUE_CHECKPOINT 1
#endif

namespace gp = gpuplace;
using json = gp::detail::json;

namespace {

/// The most derived gpuplace type of an exception.
std::string type_of(const std::exception& e) {
    if (dynamic_cast<const gp::InvalidAction*>(&e)) return "InvalidAction";
    if (dynamic_cast<const gp::ConfigError*>(&e)) return "ConfigError";
    if (dynamic_cast<const gp::TraceError*>(&e)) return "TraceError";
    if (dynamic_cast<const gp::CheckpointError*>(&e)) return "CheckpointError";
    if (dynamic_cast<const gp::StateError*>(&e)) return "StateError";
    if (dynamic_cast<const gp::Error*>(&e)) return "Error";
    return "std::exception";
}

struct example {
    std::string type;
    std::string message;
    std::function<void()> trigger;
};

/// 4 GPUs (1 rack x 2 nodes x 2 GPUs), a fixed job list {submit, GPUs}, FIFO.
gp::scenario tiny_catalogue_scenario(std::vector<std::pair<double, int>> jobs, json env = json::object()) {
    json list = json::array();
    for (auto [t, k] : jobs) list.push_back({{"submit_time", t}, {"num_gpus", k}, {"model", 0}, {"work", 100}});
    return gp::scenario_from_json({{"topology", {{"preset", "custom"}, {"racks", 1}, {"nodes_per_rack", 2}, {"gpus_per_node", 2}}},
                                    {"workload", {{"kind", "jobs"}, {"jobs", list}}},
                                    {"env", env}});
}

gp::trace read_catalogue_trace(gp::trace_format f, const std::string& text, const std::string& source, gp::trace_options o = {}) {
    std::istringstream in(text);
    return gp::read_trace(f, in, source, gp::ModelZoo::builtin(), o);
}

const std::vector<example>& catalogue() {
    static const std::vector<example> all = [] {
        std::vector<example> list;
        auto add = [&list](std::string type, std::string message, std::function<void()> f) {
            list.push_back({std::move(type), std::move(message), std::move(f)});
        };
        // ---- ConfigError -------------------------------------------------------------------
        add("ConfigError",
            "config /env/bogus: unknown key \"bogus\" (allowed: queue_policy, backfill, allow_defer, queue_window, "
            "max_steps, max_time, action_mode, slots, placer, confine_type, round_idle, round_advisor)",
            [] { (void)gp::parse_scenario(R"({"env": {"queue_policy": "fifo", "bogus": 1}})"); });
        add("ConfigError", "config /env/queue_window: value 5000 out of range [0, 1024]",
            [] { (void)gp::parse_scenario(R"({"env": {"queue_window": 5000}})"); });
        add("ConfigError", "config /env/queue_policy: unknown queue policy \"lifo\" (allowed: fifo, sjf, fewest_gpus, las, 2d_las, gittins, srtf, capacity, drf, themis, edf, edf_ac)",
            [] { (void)gp::parse_scenario(R"({"env": {"queue_policy": "lifo"}})"); });
        add("ConfigError",
            "config /observation/exclude/0: unknown observation segment \"gpu_load\" (this env's: gpu_busy, gpu_picked, "
            "gpu_remaining, gpu_proximity, gpu_node_free, gpu_rack_free, job, queue, global)",
            [] { gp::env e(gp::parse_scenario(R"({"observation": {"exclude": ["gpu_load"]}})")); });
        add("ConfigError", "config /topology/racks: expected an integer, got \"two\"",
            [] { gp::env e(gp::parse_scenario(R"({"topology": {"racks": "two"}})")); });
        add("ConfigError", "config /comm/model: expected a string, got 5",
            [] { (void)gp::parse_scenario(R"({"comm": {"model": 5}})"); });
        add("ConfigError",
            "my.json: invalid JSON at byte 9: [json.exception.parse_error.101] parse error at line 1, column 9: syntax "
            "error while parsing value - unexpected '}'; expected '[', '{', or a literal",
            [] { (void)gp::parse_scenario(R"({"env": })", "my.json"); });
        add("ConfigError",
            "my.json: invalid JSON at byte 26: [json.exception.out_of_range.406] number overflow parsing '1e400' (a number "
            "too large for a double)",
            [] { (void)gp::parse_scenario(R"({"env": {"max_time": 1e400}})", "my.json"); });
        add("ConfigError", "my.json: config /env/queue_window: duplicate key \"queue_window\" (a key may appear only once in an object)",
            [] { (void)gp::parse_scenario(R"({"env": {"queue_window": 4, "queue_window": 8}})", "my.json"); });
        add("ConfigError", "my.json: not a JSON text file: byte 1 is 0x89, which is not UTF-8 text (a binary file?)",
            [] { (void)gp::parse_scenario("\x89PNG\r\n", "my.json"); });
        add("ConfigError", "scenario file / is a directory, not a file", [] { (void)gp::load_scenario("/"); });
        add("ConfigError",
            "scenario file /dev/zero is a character device, not a regular file (an input must be a file of at most 1 GiB (1073741824 bytes))",
            [] { (void)gp::load_scenario("/dev/zero"); });
        add("ConfigError", "config /preemption/restart_overhead: must be a finite number >= 0 (got nan)", [] {
            auto s = gp::default_scenario();
            s.env.order = gp::queue_order::las;
            s.preemption.enabled = true;
            s.preemption.restart_overhead = std::nan("");
            (void)gp::env{s};
        });
        add("ConfigError", "config /failures/mtbf_hours: must be a finite number > 0 (got nan)", [] {
            auto s = gp::default_scenario();
            s.failures.enabled = true;
            s.failures.mtbf_hours = std::nan("");
            (void)gp::env{s};
        });
        add("ConfigError", "config /failures/distribution: unknown value \"gamma\" (allowed: exponential, weibull)",
            [] { (void)gp::parse_scenario(R"({"failures": {"enabled": true, "distribution": "gamma"}})"); });
        add("ConfigError",
            "config /failures: hardware failures are not supported with rounds (/env/action_mode \"round\" or /rounds/enabled); use the "
            "gpu, placement or job action mode",
            [] { (void)gp::env{gp::parse_scenario(R"({"failures": {"enabled": true}, "env": {"action_mode": "round"}})")}; });
        add("ConfigError", "config /workload: kind \"trace\" needs \"format\" (philly, openb or csv)",
            [] { (void)gp::parse_scenario(R"({"workload": {"kind": "trace"}})"); });
        add("ConfigError", "config /workload/gpu_counts/8: jobs of 8 GPUs can never fit in a cluster of 4 GPUs", [] {
            gp::env e(gp::parse_scenario(R"({"topology": {"preset": "custom", "racks": 1, "nodes_per_rack": 2, "gpus_per_node": 2},
                                              "workload": {"gpu_counts": {"1": 0.5, "8": 0.5}}})"));
        });
        add("ConfigError",
            "config /comm: tree_route needs a tree of nodes, racks and a spine with nodes of one size and racks of one size (this "
            "topology has 2 levels)",
            [] { gp::basic_env<gp::LevelTopology> e(gp::LevelTopology::nvl72(2), gp::TreeRouteCost{}, gp::ModelZoo::builtin(), gp::default_scenario()); });
        add("ConfigError", "model zoo: unknown model \"GPT\" (known: a, b)", [] {
            const auto z = gp::zoo_from_json(json::parse(
                R"({"models": [{"name": "a", "throughput": {"1": [1, 1]}}, {"name": "b", "throughput": {"1": [2, 2]}}]})"));
            (void)z.find("GPT");
        });
        add("ConfigError", "topology: racks, nodes_per_rack and gpus_per_node must be >= 1 (got 0, 4, 8)", [] {
            gp::tree_params p;
            p.racks = 0;
            gp::TreeTopology t(p);
        });
        add("ConfigError", "unknown scenario preset \"big\" (allowed: default, proximity_drl, colocation, philly, heterogeneous, philly_hidden, nvl72, heterogeneous_gavel, elastic, failures, tenants, philly_tenants, spot, deadlines, philly:<file>, philly_hidden:<file>)",
            [] { (void)gp::preset_scenario("big"); });
        add("ConfigError", "cannot open scenario file \"/no/such/scenario.json\"",
            [] { (void)gp::load_scenario("/no/such/scenario.json"); });
        add("ConfigError", "trace options: time_scale must be > 0 (got 0.000000)", [] {
            gp::trace_options o;
            o.time_scale = 0;
            (void)read_catalogue_trace(gp::trace_format::csv, "submit_time,num_gpus,duration\n0,1,60\n", "jobs.csv", o);
        });
        add("ConfigError", "trace options: time_scale 1e+300 and target_load 0.0 overflow the submit time or work of job 0 of jobs.csv",
            [] {
                gp::trace_options o;
                o.time_scale = 1e300;
                (void)read_catalogue_trace(gp::trace_format::csv, "submit_time,num_gpus,steps\n0,1,1e10\n", "jobs.csv", o);
            });
        add("ConfigError", "vector env: num_envs must be >= 1", [] { gp::vector_env v(gp::default_scenario(), 0); });
        // ---- TraceError --------------------------------------------------------------------
        add("TraceError", "jobs.csv:3:3: num_gpus: zero GPUs",
            [] { (void)read_catalogue_trace(gp::trace_format::csv, "submit_time,num_gpus,duration\n0,1,60\n5,0,60\n", "jobs.csv"); });
        add("TraceError", "jobs.csv:2:5: duration: expected a number, got \"abc\"",
            [] { (void)read_catalogue_trace(gp::trace_format::csv, "submit_time,num_gpus,duration\n0,1,abc\n", "jobs.csv"); });
        add("TraceError", "jobs.csv:2:5: duration: value 1e308 is too large",
            [] { (void)read_catalogue_trace(gp::trace_format::csv, "submit_time,num_gpus,duration\n0,1,1e308\n", "jobs.csv"); });
        add("TraceError", "jobs.csv:2:5: duration: 1e-300 s is shorter than the 0.001 s minimum",
            [] { (void)read_catalogue_trace(gp::trace_format::csv, "submit_time,num_gpus,duration\n0,1,1e-300\n", "jobs.csv"); });
        add("TraceError", "jobs.csv:3:1: submit_time: 1e300 s is later than 1e10 s (about 317 years; trace times are in seconds)",
            [] { (void)read_catalogue_trace(gp::trace_format::csv, "submit_time,num_gpus,duration\n0,1,60\n1e300,1,60\n", "jobs.csv"); });
        add("TraceError", "/ is a directory, not a file",
            [] { (void)gp::load_trace(gp::trace_format::csv, "/", gp::ModelZoo::builtin()); });
        add("TraceError", "jobs.csv:1:1: the header has no column \"num_gpus\"",
            [] { (void)read_catalogue_trace(gp::trace_format::csv, "submit_time,duration\n0,60\n", "jobs.csv"); });
        add("TraceError", "x.trace:1:22: missing field 7 (GPU count): the row has 6 of 7 fields",
            [] { (void)read_catalogue_trace(gp::trace_format::philly, "A3C\tcmd\t-step\t1\t100\t5\n", "x.trace"); });
        add("TraceError", "x.trace:1:1: job type: unknown model \"GPT\" (not in the v100 zoo of 26 models)",
            [] { (void)read_catalogue_trace(gp::trace_format::philly, "GPT\tcmd\t-step\t1\t100\t5\t1\n", "x.trace"); });
        add("TraceError", "pods.csv:2:12: deletion_time: 5 is before scheduled_time 10", [] {
            (void)read_catalogue_trace(gp::trace_format::openb,
                       "name,num_gpu,gpu_milli,creation_time,deletion_time,scheduled_time\np,1,1000,0,5,10\n", "pods.csv");
        });
        add("TraceError", "/no/such.trace: cannot open the trace file",
            [] { (void)gp::load_trace(gp::trace_format::philly, "/no/such.trace", gp::ModelZoo::builtin()); });
        // ---- InvalidAction -----------------------------------------------------------------
        add("InvalidAction", "invalid action 7: out of range [0, 4] (4 GPUs, DEFER = 4)", [] {
            gp::env e(tiny_catalogue_scenario({{0, 2}}));
            e.reset(0);
            (void)e.step(7);
        });
        add("InvalidAction", "invalid action 0: GPU 0 is already picked (job 0 needs 2 GPUs, 1 picked)", [] {
            gp::env e(tiny_catalogue_scenario({{0, 2}}));
            e.reset(0);
            (void)e.step(0);
            (void)e.step(0);
        });
        add("InvalidAction", "invalid action 1: GPU 1 is busy with job 0 (job 1 needs 1 GPUs, 0 picked)", [] {
            gp::env e(tiny_catalogue_scenario({{0, 2}, {0, 1}}));
            e.reset(0);
            (void)e.step(0);
            (void)e.step(1);
            (void)e.step(1);
        });
        add("InvalidAction", "invalid action 4 (DEFER): DEFER is disabled (env.allow_defer = false)", [] {
            gp::env e(tiny_catalogue_scenario({{0, 2}}));
            e.reset(0);
            (void)e.step(4);
        });
        add("InvalidAction",
            "invalid action 4 (DEFER): DEFER is only allowed before the first GPU of a job is picked (job 0 needs 2 GPUs, 1 picked)",
            [] {
                gp::env e(tiny_catalogue_scenario({{0, 2}, {0, 1}}, {{"allow_defer", true}}));
                e.reset(0);
                (void)e.step(0);
                (void)e.step(4);
            });
        add("InvalidAction", "vector env: got 1 actions for 2 envs", [] {
            gp::vector_env v(tiny_catalogue_scenario({{0, 2}}), 2);
            v.reset(0);
            const std::int64_t a[] = {0};
            v.step(a);
        });
        add("InvalidAction", "vector env: env 1: invalid action -1: out of range [0, 4] (4 GPUs, DEFER = 4)", [] {
            gp::vector_env v(tiny_catalogue_scenario({{0, 2}}), 2);
            v.reset(0);
            const std::int64_t a[] = {0, -1};
            v.step(a);
        });
        // ---- StateError --------------------------------------------------------------------
        add("StateError", "step() called before reset()", [] {
            gp::env e(tiny_catalogue_scenario({{0, 1}}));
            (void)e.step(0);
        });
        add("StateError", "step() called on a finished episode; call reset()", [] {
            gp::env e(tiny_catalogue_scenario({{0, 1}}));
            e.reset(0);
            (void)e.step(0);  // the only job starts and runs to the end
            (void)e.step(0);
        });
        add("StateError", "vector env: step() called before reset()", [] {
            gp::vector_env v(tiny_catalogue_scenario({{0, 1}}), 1);
            const std::int64_t a[] = {0};
            v.step(a);
        });
        // ---- Error (the base, for misuse of the API) --------------------------------------
        add("Error", "bind(): buffer sizes 3/5 do not match observation_size 65 / num_actions 5", [] {
            gp::env e(tiny_catalogue_scenario({{0, 1}}));
            std::vector<float> obs(3);
            std::vector<std::uint8_t> mask(5);
            e.bind(obs, mask);
        });
        add("Error", "unknown metric \"speed\"", [] { (void)gp::metric_value(gp::metrics{}, "speed"); });
#ifdef GPUPLACE_CATALOGUE_CHECKPOINT
        // ---- CheckpointError ---------------------------------------------------------------
        add("CheckpointError", "checkpoint m.json: /format: expected \"gpuplace-ppo\", got \"x\"",
            [] { (void)gp::rl::parse_checkpoint(R"({"format": "x"})", "m.json"); });
        add("CheckpointError", "checkpoint m.json: /version: unsupported version 2 (this build reads version 1)",
            [] { (void)gp::rl::parse_checkpoint(R"({"format": "gpuplace-ppo", "version": 2})", "m.json"); });
        add("CheckpointError", "checkpoint m.json: /obs_spec: missing",
            [] { (void)gp::rl::parse_checkpoint(R"({"format": "gpuplace-ppo", "version": 1})", "m.json"); });
        add("CheckpointError",
            "checkpoint m.json: invalid or truncated JSON at byte 10 of 9: [json.exception.parse_error.101] parse error at "
            "line 1, column 10: syntax error while parsing object separator - unexpected end of input; expected ':'",
            [] { (void)gp::rl::parse_checkpoint(R"({"format")", "m.json"); });
        add("CheckpointError", "checkpoint no/such.ckpt: cannot open", [] { (void)gp::rl::load_checkpoint("no/such.ckpt"); });
        add("CheckpointError", "checkpoint / is a directory, not a file", [] { (void)gp::rl::load_checkpoint("/"); });
        add("CheckpointError", "checkpoint m.json: /format: duplicate key \"format\" (a key may appear only once in an object)",
            [] { (void)gp::rl::parse_checkpoint(R"({"format": "gpuplace-ppo", "format": "x"})", "m.json"); });
        // the training config (src/training_run/): a document merged over the default must be an object
        add("ConfigError", "train.json: config /: a training config must be an object {\"scenario\": ..., \"ppo\": {...}}, got [1,2,3]",
            [] { (void)gp::rl::run_config::from_layers(gp::rl::run_recipe("default"), {{json::parse("[1,2,3]"), "train.json"}}); });
        add("ConfigError", "train.json: config /ppo: expected an object, got null",
            [] { (void)gp::rl::run_config::from_layers(gp::rl::run_recipe("default"), {{json::parse(R"({"ppo": null})"), "train.json"}}); });
#endif
        return list;
    }();
    return all;
}

/// (type, message) pairs listed in docs/errors.md: each "## <Type>" section's ```text blocks.
std::set<std::pair<std::string, std::string>> documented() {
    std::ifstream in(std::string(GPUPLACE_SOURCE_DIR) + "/docs/errors.md");
    REQUIRE(in.good());
    std::set<std::pair<std::string, std::string>> out;
    std::string line, type;
    bool block = false;
    while (std::getline(in, line)) {
        if (line.rfind("## ", 0) == 0) type = line.substr(3, line.find(' ', 3) == std::string::npos ? std::string::npos : line.find(' ', 3) - 3);
        else if (line == "```text") block = true;
        else if (line == "```") block = false;
        else if (block && !line.empty()) out.insert({type, line});
    }
    return out;
}

}  // namespace

TEST_CASE("error catalogue: every example throws its type with its exact message") {
    for (const auto& ex : catalogue()) {
        INFO(ex.type << ": " << ex.message);
        bool threw = false;
        try {
            ex.trigger();
        } catch (const std::exception& e) {
            threw = true;
            CHECK(type_of(e) == ex.type);
            CHECK(std::string(e.what()) == ex.message);
        }
        CHECK(threw);
    }
}

TEST_CASE("error catalogue: docs/errors.md lists exactly the tested messages") {
    std::set<std::pair<std::string, std::string>> tested;
    for (const auto& ex : catalogue()) tested.insert({ex.type, ex.message});
    auto doc = documented();
#ifndef GPUPLACE_CATALOGUE_CHECKPOINT
    std::erase_if(doc, [](const auto& p) { return p.first == "CheckpointError" || p.second.rfind("train.json:", 0) == 0; });
#endif
    for (const auto& p : tested) {
        INFO(p.first << ": " << p.second);
        CHECK(doc.count(p) == 1);
    }
    for (const auto& p : doc) {
        INFO(p.first << ": " << p.second);
        CHECK(tested.count(p) == 1);
    }
    // every exception type has a section with examples
    for (const char* t : {"Error", "ConfigError", "InvalidAction", "TraceError", "CheckpointError", "StateError"}) {
        bool any = false;
        for (const auto& p : doc) any = any || p.first == t;
#ifndef GPUPLACE_CATALOGUE_CHECKPOINT
        if (std::string(t) == "CheckpointError") continue;
#endif
        CHECK_MESSAGE(any, t);
    }
}
