// gpuplace-eval: evaluates heuristic policies on held-out seeds of a scenario or a trace and
// prints a table of mean +- standard error; writes per-seed CSV, summary CSV and JSON.
// Run with --help for the options.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include <gpuplace/detail/atomic_file.hpp>
#include <gpuplace/gpuplace.hpp>
#include <gpuplace/json.hpp>

namespace {
std::vector<std::string> split(const std::string& s) {
    std::vector<std::string> out;
    std::size_t b = 0;
    while (b <= s.size()) {
        auto e = s.find(',', b);
        if (e == std::string::npos) e = s.size();
        if (e > b) out.push_back(s.substr(b, e - b));
        b = e + 1;
    }
    return out;
}
constexpr const char* usage_text =
    "usage: gpuplace-eval [options]\n"
    "  --scenario FILE|default|proximity_drl|colocation   scenario (default: default)\n"
    "  --trace FILE --format philly|openb|csv  replay a trace on the scenario's cluster\n"
    "     [--max-jobs N] [--window START,END] [--time-scale X] [--target-load X]\n"
    "     [--max-gpus N] [--drop-oversized] [--skip-bad-rows] [--model NAME] [--episode-jobs N]\n"
    "  --seeds N                 held-out seeds 1000000.. (default 20)\n"
    "  --policies a,b,...        heuristics, each optionally '+queue' (default: all)\n"
    "  --queue q1,q2,...         run every policy under each queue policy (fifo, backfill, sjf, fewest_gpus)\n"
    "  --csv FILE  --summary-csv FILE  --json FILE   write per-seed CSV, summary CSV, JSON\n"
    "  --threads N               worker threads (0 = all cores)\n"
    "  --calibration             print the zoo's calibration error on its measurement cluster and exit\n"
    "  --list                    list policies and queue policies and exit\n";
int usage(int code) {
    std::fprintf(code ? stderr : stdout, "%s", usage_text);
    return code;
}

/// Calibration report: for each model and measured GPU count, the measured throughputs and the
/// ones RingAllReduce reproduces on the measurement cluster (consolidated in one node, spread one
/// GPU per node).
int calibration(const gpuplace::scenario& s) {
    using namespace gpuplace;
    const env e(s);
    const auto& z = e.zoo();
    const auto& ref = z.reference();
    tree_params p;
    p.racks = 1;
    p.nodes_per_rack = 8;
    p.gpus_per_node = 8;
    p.node_bandwidth = ref.node_bandwidth;
    p.rack_bandwidth = p.spine_bandwidth = ref.network_bandwidth;
    p.node_latency = ref.node_latency;
    p.rack_latency = p.spine_latency = ref.network_latency;
    const TreeTopology t(p);
    const RingAllReduce c;
    std::printf("%-34s %4s %12s %12s %12s %12s %9s\n", "model", "gpus", "meas_cons", "model_cons", "meas_spread",
                "model_spread", "max_err%");
    for (std::size_t m = 0; m < z.size(); ++m) {
        for (const auto& pt : z[model_id(m)].points) {
            std::vector<gpu_id> cons, spread;
            for (std::uint32_t i = 0; i < pt.gpus; ++i) {
                cons.push_back(i);
                spread.push_back(i * 8);
            }
            const double best = c.ideal_step_time(t, z, model_id(m), pt.gpus);
            const double tc = best * c.evaluate(t, z, model_id(m), cons).slowdown;
            const double ts = best * c.evaluate(t, z, model_id(m), spread).slowdown;
            const double ec = std::abs(1 / tc / pt.consolidated - 1), es = std::abs(1 / ts / pt.spread - 1);
            std::printf("%-34s %4u %12.4f %12.4f %12.4f %12.4f %9.2e\n", z[model_id(m)].name.c_str(), pt.gpus,
                        pt.consolidated, 1 / tc, pt.spread, 1 / ts, 100 * std::max(ec, es));
        }
    }
    return 0;
}

/// Output files of an evaluation.
struct outputs {
    std::string csv, summary_csv, json;
};

/// Evaluates the heuristics (each under each queue policy, if any) on held-out seeds and prints the table.
template <class Env>
void run_eval(const gpuplace::scenario& s, const std::vector<std::string>& policies, const std::vector<std::string>& queues,
              std::size_t seeds, std::size_t threads, const outputs& o) {
    std::vector<gpuplace::any_policy<Env>> ps;
    for (const auto& p : policies) {
        if (queues.empty()) ps.push_back(gpuplace::heuristic<Env>(p));
        else
            for (const auto& q : queues) ps.push_back(gpuplace::heuristic<Env>(p + "+" + q));
    }
    const auto t0 = std::chrono::steady_clock::now();
    const auto rep = gpuplace::evaluate(s, ps, gpuplace::held_out_seeds(seeds), threads);
    const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::printf("scenario %s: %zu policies x %zu seeds in %.2f s\n", s.name.c_str(), ps.size(), seeds, secs);
    if (s.workload.kind == "trace") {
        const Env probe(s);  // the zoo and cluster size the env used
        const auto tr = gpuplace::load_trace(s.workload.format, s.workload.path, probe.zoo(), s.workload.trace_opts,
                                             probe.num_gpus());
        const auto* t = &tr;
        std::printf("trace %s: %zu rows, %zu jobs (%zu filtered, %zu bad rows skipped, %zu outside window, %zu capped, "
                        "%zu dropped), arrival scale %.4g\n",
                        t->source.c_str(), t->rows, t->jobs.size(), t->filtered, t->skipped_bad, t->outside, t->capped,
                        t->dropped, t->arrival_scale);
    }
    std::printf("%s", rep.table().c_str());
    // reports are written atomically: a file is the whole old report or the whole new one
    if (!o.csv.empty()) gpuplace::detail::write_file_atomic(o.csv, rep.csv());
    if (!o.summary_csv.empty()) gpuplace::detail::write_file_atomic(o.summary_csv, rep.summary_csv());
    if (!o.json.empty()) gpuplace::detail::write_file_atomic(o.json, gpuplace::to_json(rep).dump(2) + "\n");
}
}  // namespace

int main(int argc, char** argv) {
    std::string scen = "default", csv, summary_csv, json_out, trace_file, trace_format;
    std::size_t seeds = 20, threads = 0, episode_jobs = 0;
    std::vector<std::string> policies = gpuplace::heuristic_names(), queues;
    gpuplace::trace_options topt;
    bool calib = false, list = false;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        auto next = [&]() -> std::string {
            if (i + 1 >= argc) throw gpuplace::ConfigError("missing value after " + a);
            return argv[++i];
        };
        try {
            if (a == "--scenario") scen = next();
            else if (a == "--seeds") seeds = std::stoul(next());
            else if (a == "--policies") policies = split(next());
            else if (a == "--queue") queues = split(next());
            else if (a == "--csv") csv = next();
            else if (a == "--summary-csv") summary_csv = next();
            else if (a == "--json") json_out = next();
            else if (a == "--threads") threads = std::stoul(next());
            else if (a == "--trace") trace_file = next();
            else if (a == "--format") trace_format = next();
            else if (a == "--max-jobs") topt.max_jobs = std::stoul(next());
            else if (a == "--time-scale") topt.time_scale = std::stod(next());
            else if (a == "--target-load") topt.target_load = std::stod(next());
            else if (a == "--max-gpus") topt.max_gpus = static_cast<std::uint32_t>(std::stoul(next()));
            else if (a == "--drop-oversized") topt.drop_oversized = true;
            else if (a == "--skip-bad-rows") topt.skip_bad_rows = true;
            else if (a == "--model") topt.model = next();
            else if (a == "--episode-jobs") episode_jobs = std::stoul(next());
            else if (a == "--window") {
                const auto w = split(next());
                if (w.size() != 2) throw gpuplace::ConfigError("--window expects START,END");
                topt.window_start = std::stod(w[0]);
                topt.window_end = std::stod(w[1]);
            } else if (a == "--calibration") calib = true;
            else if (a == "--list") list = true;
            else if (a == "-h" || a == "--help") return usage(0);
            else {
                std::fprintf(stderr, "unknown argument %s\n", a.c_str());
                return usage(2);
            }
        } catch (const std::exception& e) {
            std::fprintf(stderr, "error: %s: %s\n", a.c_str(), e.what());
            return 2;
        }
    }
    try {
        if (list) {
            for (const auto& n : gpuplace::heuristic_names()) std::printf("policy %s\n", n.c_str());
            for (const auto& n : gpuplace::queue_names()) std::printf("queue %s\n", n.c_str());
            return 0;
        }
        const auto presets = gpuplace::preset_names();
        auto s = std::find(presets.begin(), presets.end(), scen) != presets.end() ? gpuplace::preset_scenario(scen)
                                                                                   : gpuplace::load_scenario(scen);
        const outputs outs{csv, summary_csv, json_out};
        if (calib) return calibration(s);
        if (!trace_file.empty()) {
            if (trace_format.empty()) throw gpuplace::ConfigError("--trace needs --format philly|openb|csv");
            gpuplace::workload_config w;
            w.kind = "trace";
            w.format = gpuplace::parse_trace_format(trace_format, "--format");
            w.path = trace_file;
            w.trace_opts = topt;
            w.episode_jobs = episode_jobs;
            s.workload = w;
            s.name = s.name + " + trace " + trace_file;
        }
        // the environment type follows the scenario's comm model
        gpuplace::visit_env(s, [&](auto type) { run_eval<typename decltype(type)::type>(s, policies, queues, seeds, threads, outs); });
    } catch (const gpuplace::Error& e) {
        std::fprintf(stderr, "error: %s\n", e.what());
        return 1;
    }
    return 0;
}
