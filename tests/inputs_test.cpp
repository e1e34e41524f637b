// Bad input to the library readers (JSON documents, trace files, training configs, checkpoints and
// run folders): each case is refused with a message naming the value and where it came from
// (JSON path, file:line:column, the file or the flag), and nothing is built or changed.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <vector>

#include <gpuplace/gpuplace.hpp>
#include <gpuplace/input_file.hpp>
#include <gpuplace/json.hpp>
#include <gpuplace/rl/rl.hpp>

#include "training_run.hpp"  // src/training_run/ (the gpuplace_training_run library)

namespace {
namespace gp = gpuplace;
using json = gp::detail::json;

/// The message of what `f` throws as E, or "" (and a failed check) when it throws nothing or another type.
template <class E>
std::string inputs_error(const std::function<void()>& f) {
    try {
        f();
    } catch (const E& e) {
        return e.what();
    } catch (const std::exception& e) {
        FAIL_CHECK("another exception type: " << e.what());
        return {};
    }
    FAIL_CHECK("nothing thrown");
    return {};
}

gp::trace inputs_csv(const std::string& text, gp::trace_format f = gp::trace_format::csv) {
    std::istringstream in(text);
    return gp::read_trace(f, in, "jobs.csv", gp::ModelZoo::builtin());
}

/// A fresh folder under the system's temporary folder.
std::string inputs_dir(const std::string& name) {
    const auto d = std::filesystem::temp_directory_path() / ("gpuplace_inputs_test_" + name);
    std::filesystem::remove_all(d);
    std::filesystem::create_directories(d);
    return d.string();
}

struct inputs_case {
    std::string text, message;
};

}  // namespace

TEST_CASE("inputs: a JSON key that appears twice is refused with its JSON path") {
    for (const auto& c : std::vector<inputs_case>{
             {R"({"a": 1, "a": 2})", "my.json: config /a: duplicate key \"a\" (a key may appear only once in an object)"},
             {R"({"env": {"queue_window": 4, "queue_window": 8}})",
              "my.json: config /env/queue_window: duplicate key \"queue_window\" (a key may appear only once in an object)"},
             {R"({"x": [1, {"b": 0}, {"b": 1, "b": 2}]})",
              "my.json: config /x/2/b: duplicate key \"b\" (a key may appear only once in an object)"},
             {R"([[], [{"k": [{}], "k": 0}]])", "my.json: config /1/0/k: duplicate key \"k\" (a key may appear only once in an object)"},
         }) {
        INFO(c.text);
        CHECK(inputs_error<gp::ConfigError>([&] { (void)gp::detail::parse_json(c.text, "my.json"); }) == c.message);
    }
    // the same key in different objects, and keys that differ only in case, are fine
    CHECK(gp::detail::parse_json(R"({"a": {"b": 1}, "c": {"b": 2}, "B": 3, "b": [{"b": 1}, {"b": 2}]})", "ok.json")["c"]["b"] == 2);
    CHECK(inputs_error<gp::ConfigError>([] { (void)gp::parse_scenario(R"({"env": {"allow_defer": true, "allow_defer": false}})", "s.json"); }) ==
          "s.json: config /env/allow_defer: duplicate key \"allow_defer\" (a key may appear only once in an object)");
    CHECK(inputs_error<gp::CheckpointError>([] { (void)gp::rl::parse_checkpoint(R"({"format": "gpuplace-ppo", "format": "x"})", "m.json"); }) ==
          "checkpoint m.json: /format: duplicate key \"format\" (a key may appear only once in an object)");
}

TEST_CASE("inputs: a binary (non-UTF-8) file is not JSON text, named by its first bad byte") {
    for (const auto& c : std::vector<inputs_case>{
             {std::string("\x89PNG\r\n", 6), "s.bin: not a JSON text file: byte 1 is 0x89, which is not UTF-8 text (a binary file?)"},
             {std::string("{\"a\": 1}\0", 9), "s.bin: not a JSON text file: byte 9 is 0x00, which is not UTF-8 text (a binary file?)"},
             {"{\"name\": \"caf\xc3\"}", "s.bin: not a JSON text file: byte 14 is 0xC3, which is not UTF-8 text (a binary file?)"},
             {"{\"name\": \"\xed\xa0\x80\"}", "s.bin: not a JSON text file: byte 11 is 0xED, which is not UTF-8 text (a binary file?)"},
         }) {
        CHECK(inputs_error<gp::ConfigError>([&] { (void)gp::parse_scenario(c.text, "s.bin"); }) == c.message);
    }
    // UTF-8 text of 2, 3 and 4 bytes is text
    CHECK(gp::parse_scenario("{\"name\": \"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x9a\x80\"}").name == "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x9a\x80");
    CHECK(inputs_error<gp::CheckpointError>([] { (void)gp::rl::parse_checkpoint(std::string("\x1f\x8b\x08\x00", 4), "m.json.gz"); }) ==
          "checkpoint m.json.gz: not a JSON text file: byte 2 is 0x8B, which is not UTF-8 text (a binary file?)");
    const auto d = inputs_dir("binary");
    std::ofstream(d + "/s.json", std::ios::binary) << std::string("\x89PNG\r\n\x1a\n", 8);
    CHECK(inputs_error<gp::ConfigError>([&] { (void)gp::load_scenario(d + "/s.json"); }) ==
          d + "/s.json: not a JSON text file: byte 1 is 0x89, which is not UTF-8 text (a binary file?)");
}

TEST_CASE("inputs: a directory given as a file says so") {
    const auto d = inputs_dir("directory");
    CHECK(inputs_error<gp::TraceError>([&] { (void)gp::load_trace(gp::trace_format::csv, d, gp::ModelZoo::builtin()); }) ==
          d + " is a directory, not a file");
    CHECK(inputs_error<gp::ConfigError>([&] { (void)gp::load_scenario(d); }) == "scenario file " + d + " is a directory, not a file");
    CHECK(inputs_error<gp::CheckpointError>([&] { (void)gp::rl::load_checkpoint(d); }) == "checkpoint " + d + " is a directory, not a file");
    CHECK(inputs_error<gp::CheckpointError>([&] { (void)gp::rl::read_state_file(d); }) == "state " + d + " is a directory, not a file");
    CHECK(inputs_error<gp::ConfigError>([&] { (void)gp::load_zoo(d); }) == "model zoo: " + d + " is a directory, not a file");
}

TEST_CASE("inputs: a device, a FIFO or a file past the size cap is refused before it is read, by every reader") {
    const auto d = inputs_dir("special");
    const std::string fifo = d + "/fifo", big = d + "/big.json";
    REQUIRE(std::system(("mkfifo '" + fifo + "'").c_str()) == 0);  // (sys/stat.h's stat clashes with gpuplace::stat in a unity build)
    std::ofstream(big) << "{}";
    std::filesystem::resize_file(big, gp::max_input_bytes + 1);  // sparse: no disk used
    const std::string cap = "1 GiB (1073741824 bytes)";
    const std::string zero = "/dev/zero is a character device, not a regular file (an input must be a file of at most " + cap + ")";
    const std::string pipe = fifo + " is a named pipe (FIFO), not a regular file (an input must be a file of at most " + cap + ")";
    const std::string large = big + " has 1073741825 bytes, more than the " + cap + " an input file may have";
    for (const auto& [file, why] : {std::pair{std::string("/dev/zero"), zero}, {fifo, pipe}, {big, large}}) {
        INFO(file);
        CHECK(inputs_error<gp::ConfigError>([&] { (void)gp::load_scenario(file); }) == "scenario file " + why);
        CHECK(inputs_error<gp::ConfigError>([&] { (void)gp::load_zoo(file); }) == "model zoo: " + why);
        CHECK(inputs_error<gp::ConfigError>([&] { (void)gp::topology_config_of(file, "--topology"); }) == "--topology: " + why);
        CHECK(inputs_error<gp::TraceError>([&] { (void)gp::load_trace(gp::trace_format::csv, file, gp::ModelZoo::builtin()); }) == why);
        CHECK(inputs_error<gp::ConfigError>([&] { (void)gp::interference_table::load_profile(file, gp::ModelZoo::builtin(), gp::interference_table(gp::ModelZoo::builtin().size())); }) ==
              "co-location profile: " + why);
        CHECK(inputs_error<gp::CheckpointError>([&] { (void)gp::rl::load_checkpoint(file); }) == "checkpoint " + why);
        CHECK(inputs_error<gp::CheckpointError>([&] { (void)gp::rl::read_state_file(file); }) == "state " + why);
        CHECK(inputs_error<gp::ConfigError>([&] { (void)gp::read_input_file<gp::ConfigError>(file, "config file"); }) == "config file " + why);
    }
    CHECK(inputs_error<gp::Error>([&] { (void)gp::read_input_file(d + "/none.json", "result file"); }) ==
          "cannot open result file \"" + d + "/none.json\"");
    std::ofstream(d + "/small.json") << "{\"name\": \"x\"}";
    CHECK(gp::read_input_file(d + "/small.json", "result file") == "{\"name\": \"x\"}");
    // the cap holds while reading too: a file that grows past it (here: a smaller cap)
    std::string out;
    CHECK(inputs_error<gp::Error>([&] { (void)gp::detail::read_input_file<gp::Error>("/proc/self/status", out, "status", "", 16); }) ==
          "status has more than the 16 bytes an input file may have");
}

TEST_CASE("inputs: trace times and durations are bounded, with file:line:column") {
    for (const auto& c : std::vector<inputs_case>{
             {"submit_time,num_gpus,duration\n0,1,60\n1e300,1,60\n",
              "jobs.csv:3:1: submit_time: 1e300 s is later than 1e10 s (about 317 years; trace times are in seconds)"},
             {"submit_time,num_gpus,duration\n0,1,1e-300\n", "jobs.csv:2:5: duration: 1e-300 s is shorter than the 0.001 s minimum"},
             {"submit_time,num_gpus,duration\n0,1,2e10\n", "jobs.csv:2:5: duration: 2e10 s is longer than the 1e10 s maximum"},
             {"submit_time,num_gpus,steps,model\n0,1,1e-300,ResNet-18 (batch size 16)\n",
              "jobs.csv:2:5: steps: a job of 1e-300 steps (3.09087e-302 s at the model's consolidated throughput) is shorter than the 0.001 s "
              "minimum"},
         }) {
        INFO(c.text);
        CHECK(inputs_error<gp::TraceError>([&] { (void)inputs_csv(c.text); }) == c.message);
    }
    CHECK(inputs_error<gp::TraceError>([] { (void)inputs_csv("A3C\tcmd\t-step\t1\t100\t1e11\t1\n", gp::trace_format::philly); }) ==
          "jobs.csv:1:21: arrival time: 1e11 s is later than 1e10 s (about 317 years; trace times are in seconds)");
    CHECK(inputs_error<gp::TraceError>([] {
              (void)inputs_csv("name,num_gpu,gpu_milli,creation_time,deletion_time,scheduled_time\np,1,1000,0,10.0001,10\n",
                               gp::trace_format::openb);
          }) == "jobs.csv:2:12: deletion_time: a run time of 0.0001 s is shorter than the 0.001 s minimum");
    // the bounds themselves, and a Unix timestamp in seconds, are accepted
    const auto t = inputs_csv("submit_time,num_gpus,duration\n1700000000,1,0.001\n1700000060,1,1e10\n");
    CHECK(t.jobs.size() == 2);
    CHECK(t.jobs[1].submit_time == 60);
    // the same bounds in JSON workloads
    CHECK(inputs_error<gp::ConfigError>([] {
              (void)gp::workload_from_json(json::parse(R"({"kind": "jobs", "jobs": [{"submit_time": 1e300, "num_gpus": 1, "model": 0, "work": 1}]})"));
          }) == "config /workload/jobs/0/submit_time: value 1e+300 out of range [0.0, 10000000000.0]");
    CHECK(inputs_error<gp::ConfigError>([] { (void)gp::workload_from_json(json::parse(R"({"duration_min": 1e-300})")); }) ==
          "config /workload/duration_min: value 1e-300 out of range [0.001, 10000000000.0]");
    CHECK(inputs_error<gp::ConfigError>([] {
              (void)gp::workload_from_json(json::parse(R"({"kind": "trace", "format": "csv", "path": "x.csv", "time_scale": 1e300})"));
          }) == "config /workload/time_scale: value 1e+300 out of range [1e-12, 1000000000000.0]");
}

TEST_CASE("inputs: episode_jobs above a trace's jobs replays the whole trace (a preset's default on a short file)") {
    const auto d = inputs_dir("episode_jobs");
    std::ofstream(d + "/two.csv") << "submit_time,num_gpus,duration\n0,1,60\n10,1,60\n";
    auto s = gp::default_scenario();
    s.workload = gp::workload_from_json(json{{"kind", "trace"}, {"format", "csv"}, {"path", d + "/two.csv"}, {"episode_jobs", 100}});
    gp::env e(s);
    e.reset(1);
    CHECK(e.simulator().jobs().size() == 2);
}

TEST_CASE("inputs: a training config must be an object, ppo and ppo/network too, no nulls") {
    using layer = gp::rl::run_config::layer;
    const auto base = gp::rl::run_recipe("default");
    for (const auto& c : std::vector<inputs_case>{
             {"[1,2,3]", "f.json: config /: a training config must be an object {\"scenario\": ..., \"ppo\": {...}}, got [1,2,3]"},
             {"null", "f.json: config /: a training config must be an object {\"scenario\": ..., \"ppo\": {...}}, got null"},
             {"\"default\"", "f.json: config /: a training config must be an object {\"scenario\": ..., \"ppo\": {...}}, got \"default\""},
             {"42", "f.json: config /: a training config must be an object {\"scenario\": ..., \"ppo\": {...}}, got 42"},
             {R"({"ppo": null})", "f.json: config /ppo: expected an object, got null"},
             {R"({"ppo": [1]})", "f.json: config /ppo: expected an object, got [1]"},
             {R"({"ppo": {"network": 3}})", "f.json: config /ppo/network: expected an object, got 3"},
             {R"({"ppo": {"seed": null}})", "f.json: config /ppo/seed: null is not a value here (leave the key out for its default)"},
             {R"({"validation_seeds": 0})", "f.json: config /validation_seeds: value 0 out of range [1, 100000]"},
             {R"({"ppo": {"epochs": 0}})", "f.json: config /ppo/epochs: value 0 out of range [1, 1000]"},
         }) {
        INFO(c.text);
        CHECK(inputs_error<gp::ConfigError>([&] {
                  (void)gp::rl::run_config::from_layers(base, {layer{gp::detail::parse_json(c.text, "f.json"), "f.json"}});
              }) == c.message);
    }
    // a flag's layer names the flag; an error outside every layer has no prefix
    CHECK(inputs_error<gp::ConfigError>([&] {
              (void)gp::rl::run_config::from_layers(base, {layer{json{{"restarts", 2}}, "f.json"}, layer{json{{"queue", "lifo"}}, "--queue"}});
          }).rfind("--queue: config /queue: ", 0) == 0);
    CHECK(inputs_error<gp::ConfigError>([] { (void)gp::rl::run_config::from_json(json{{"validation_seeds", 0}}); }) ==
          "config /validation_seeds: value 0 out of range [1, 100000]");
    // train_reward may be null (no override)
    CHECK(gp::rl::run_config::from_layers(base, {layer{json{{"train_reward", nullptr}}, "f.json"}}).train_reward.is_null());
}

TEST_CASE("inputs: a resumed run keeps its config, what the user changes is named with its source") {
    using layer = gp::rl::run_config::layer;
    const auto d = inputs_dir("resume");
    const auto rc = gp::rl::run_config::defaults();
    const json run = {{"format", "gpuplace-run"}, {"version", gp::rl::run_state_version}, {"gpuplace", gp::version_string},
                      {"config", rc.to_json()}, {"base_dir", ""}};
    std::ofstream(d + "/run.json") << run.dump(2);
    // nothing changed, or a value given again as it is: the run's own config
    CHECK(gp::rl::resumed_config(d, {}).to_json() == rc.to_json());
    CHECK(gp::rl::resumed_config(d, {layer{json{{"scenario", "default"}}, "--scenario"}}).to_json() == rc.to_json());
    CHECK(inputs_error<gp::CheckpointError>([&] {
              (void)gp::rl::resumed_config(d, {layer{json{{"scenario", "proximity_drl"}}, "--scenario"},
                                               layer{json{{"ppo", {{"total_steps", 1000}}}}, "--steps"}});
          }) == "resume: the run in " + d + " was made with another config: /ppo/total_steps (the run's 1200000, --steps 1000), "
                                           "/scenario (the run's \"default\", --scenario \"proximity_drl\"); a resumed run keeps its "
                                           "config (drop these, or start a new run in another folder)");
    CHECK(inputs_error<gp::CheckpointError>([&] { (void)gp::rl::resumed_config(d + "/nothing", {}); }) ==
          "resume: " + d + "/nothing holds no run to resume (" + d + "/nothing/run.json does not exist)");
}

TEST_CASE("inputs: an error inside a config's scenario object names its path in the config and the file") {
    using layer = gp::rl::run_config::layer;
    const auto base = gp::rl::run_recipe("default");
    CHECK(inputs_error<gp::ConfigError>([&] {
              (void)gp::rl::run_config::from_layers(base, {layer{json::parse(R"({"scenario": {"env": {"queue_window": 5000}}})"), "f.json"}});
          }) == "f.json: config /scenario/env/queue_window: value 5000 out of range [0, 1024]");
    CHECK(inputs_error<gp::ConfigError>([&] {
              (void)gp::rl::run_config::from_layers(base, {layer{json::parse(R"({"compare_on": ["default", {"env": {"bogus": 1}}]})"), "f.json"}});
          }).rfind("f.json: config /compare_on/1/env/bogus: unknown key \"bogus\"", 0) == 0);
    // a preset or a file by name is not an object: its own messages stand
    CHECK(inputs_error<gp::ConfigError>([&] {
              (void)gp::rl::run_config::from_layers(base, {layer{json{{"scenario", "big"}}, "--scenario"}});
          }).rfind("cannot open scenario file \"", 0) == 0);
}

TEST_CASE("inputs: every training recipe reads as a run config, the distilled ones label with the fair planner") {
    for (const auto& name : gp::rl::run_recipe_names()) {
        CAPTURE(name);
        const auto rc = gp::rl::run_config::from_json(gp::rl::run_recipe(name), "");
        CHECK(rc.to_json().is_object());
        if (name.ends_with("_distilled")) {
            CHECK(rc.action_mode == "placement");
            CHECK(rc.ppo.dagger_iterations >= 10);
            CHECK((rc.ppo.dagger_teacher.starts_with("rollout16:") || rc.ppo.dagger_teacher.starts_with("rollout32:")));
            CHECK_FALSE(gp::is_hindsight_policy(rc.ppo.dagger_teacher));  // a causal teacher
            CHECK(rc.ppo.total_steps == 0);
            CHECK(rc.train_scenarios().size() == (name == "sizes_distilled" ? 2u : 1u));
        }
        if (name == "philly_distilled") {  // validated on training files that no training env replays, and on no held-out file
            const auto file = [](const std::string& p) { return std::filesystem::path(p).stem().string(); };
            std::vector<std::string> val, train;
            for (const auto& p : rc.eval_scenario().workload.trace_paths()) val.push_back(file(p));
            for (const auto& p : rc.train_scenarios()[0].workload.trace_paths()) train.push_back(file(p));
            CHECK(val == std::vector<std::string>{"103959", "b436b2"});
            CHECK(val.size() + train.size() == gp::philly_training_files().size());
            for (const auto& f : gp::philly_training_files())
                CHECK((std::count(val.begin(), val.end(), f) + std::count(train.begin(), train.end(), f)) == 1);
        }
    }
    CHECK_THROWS_WITH_AS((void)gp::rl::run_config::from_json(json::parse(R"({"train_on": [3]})")),
                         "config /train_on/0: expected a preset name, a scenario file or an object, got 3", gp::ConfigError);
    CHECK_THROWS_WITH_AS((void)gp::rl::run_config::from_json(json::parse(R"({"train_on": "default"})")),
                         "config /train_on: expected a list of scenarios, got \"default\"", gp::ConfigError);
    CHECK_THROWS_WITH_AS((void)gp::rl::run_recipe("distilled"),
                         "unknown training recipe \"distilled\" (allowed: colocation_distilled, default, default_distilled, heterogeneous_distilled, "
                         "philly, philly_distilled, philly_hidden, proximity_drl, sizes_distilled)",
                         gp::ConfigError);
}
