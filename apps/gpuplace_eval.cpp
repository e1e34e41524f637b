// gpuplace-eval: evaluates heuristic policies on held-out seeds of a scenario or a trace and
// prints a table of mean +- standard error; writes per-seed CSV, summary CSV and JSON.
// Run with --help for the options.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <limits>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include <gpuplace/atomic_file.hpp>
#include <gpuplace/calibration.hpp>
#include <gpuplace/progress.hpp>
#include <gpuplace/gpuplace.hpp>
#include <gpuplace/json.hpp>
#include <gpuplace/json/registry.hpp>
#include <gpuplace/policy_registry.hpp>
#include <gpuplace/scenario_source.hpp>

#include "cli.hpp"

namespace {

/// Calibration report (calibration.hpp): for each model and measured GPU count, the measured
/// throughputs and the ones RingAllReduce reproduces on the measurement cluster.
int calibration(const gpuplace::scenario& s) {
    const gpuplace::env e(s);
    std::printf("%-34s %4s %12s %12s %12s %12s %9s\n", "model", "gpus", "meas_cons", "model_cons", "meas_spread",
                "model_spread", "max_err%");
    for (const auto& r : gpuplace::calibration_rows(e.zoo()))
        std::printf("%-34s %4u %12.4f %12.4f %12.4f %12.4f %9.2e\n", r.model.c_str(), r.gpus, r.measured_consolidated,
                    r.model_consolidated, r.measured_spread, r.model_spread, r.max_error_percent);
    return 0;
}

/// Output files of an evaluation.
struct outputs {
    std::string csv, summary_csv, json;
};

/// Evaluates the heuristics (each under each queue policy, if any) on held-out seeds and prints the table.
template <class Env>
void run_eval(const gpuplace::scenario& s, const std::vector<std::string>& policies, const std::vector<std::string>& queues,
              std::size_t seeds, std::size_t threads, const outputs& o, bool episode_jobs_flag) {
    std::vector<gpuplace::any_policy<Env>> ps;
    gpuplace::rollout_options planner;  // a rollout planner's long episode shows its progress (planner.hpp)
    planner.progress = stderr;
    for (const auto& p : policies) {
        if (queues.empty()) ps.push_back(gpuplace::named_policy<Env>(p, planner));
        else
            for (const auto& q : queues) ps.push_back(gpuplace::named_policy<Env>(p + "+" + q, planner));
    }
    std::optional<gpuplace::trace> tr;
    std::size_t probe_gpus = 0;
    if (s.workload.kind == "trace") {
        auto whole = s;
        whole.rounds.enabled = false;  // the probe is a plain env (rounds run in round_env)
        whole.workload.episode_jobs = 0;
        const Env probe(whole);  // the zoo and cluster size the env uses
        probe_gpus = probe.num_gpus();
        if (const auto* merged = s.workload.merge_as.empty() ? nullptr : probe.loaded_trace()) {
            tr = *merged;  // its files merged into one (merge_as)
        } else {
            auto opts = s.workload.trace_opts;
            opts.fields = s.job_fields;  // the declared job fields the trace may hold
            tr = gpuplace::load_trace(s.workload.format, s.workload.path, probe.zoo(), opts, probe.num_gpus());
        }
        const std::string jobs = "the trace " + tr->source + " has " + std::to_string(tr->jobs.size()) + " jobs (after the trace options)";
        if (episode_jobs_flag && s.workload.episode_jobs > tr->jobs.size())
            throw gpuplace::ConfigError("--episode-jobs " + std::to_string(s.workload.episode_jobs) + ": " + jobs + "; give at most " +
                                        std::to_string(tr->jobs.size()));
        if (s.workload.episode_jobs > tr->jobs.size())  // a scenario's own episode_jobs, e.g. a preset's on a short file
            std::fprintf(stderr, "gpuplace-eval: warning: the scenario asks for episodes of %zu jobs (episode_jobs), but %s: each "
                                 "episode replays the whole trace\n", s.workload.episode_jobs, jobs.c_str());
    }
    const auto t0 = std::chrono::steady_clock::now();
    gpuplace::progress_line progress(stderr, "gpuplace-eval: episodes");  // long runs only
    const auto rep = gpuplace::evaluate(s, ps, gpuplace::held_out_seeds(seeds), threads, std::ref(progress));
    const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::printf("scenario %s: %zu policies x %zu seeds in %.2f s\n", s.name.c_str(), ps.size(), seeds, secs);
    if (tr) {
        const auto* t = &*tr;
        std::printf("trace %s: %zu rows, %zu jobs (%zu filtered, %zu bad rows skipped, %zu outside window, %zu capped, "
                        "%zu dropped, %zu of a model not measured at their GPU count: %s), arrival scale %.4g\n",
                        t->source.c_str(), t->rows, t->jobs.size(), t->filtered, t->skipped_bad, t->outside, t->capped,
                        t->dropped, t->unmeasured,
                        s.workload.trace_opts.unmeasured == gpuplace::unmeasured_size::drop ? "dropped" : "throughput extrapolated",
                        t->arrival_scale);
        if (t->capped > 0) {
            const auto cap = s.workload.trace_opts.max_gpus ? std::size_t(s.workload.trace_opts.max_gpus) : probe_gpus;
            std::printf("warning: %zu job(s) of the trace ask for more than %zu GPUs (%s) and were capped to %zu; --drop-oversized "
                        "leaves them out instead\n", t->capped, cap, s.workload.trace_opts.max_gpus ? "--max-gpus" : "the cluster's GPUs",
                        cap);
        }
        if (t->models_assigned > 0) {  // rows that gave no model: how they got one is the scenario's choice, said here
            const auto& topts = s.workload.trace_opts;
            const std::string how = !topts.model.empty() ? "model \"" + topts.model + "\""
                                    : topts.mix.mix.empty() ? std::string("model_mix by_row (the default)")
                                                        : "model_mix " + topts.mix.mix + " (seed " + std::to_string(topts.mix.seed) + ")";
            std::printf("trace %s: %zu of the %zu jobs gave no model and were assigned one by %s\n", t->source.c_str(), t->models_assigned,
                        t->jobs.size(), how.c_str());
        }
    }
    // elastic jobs (docs/rounds.md): how many, and how many had their upper bound capped at their
    // model's largest measured GPU count (no throughput is extrapolated past it), on the first seed
    if (s.rounds.elastic.share > 0 || gpuplace::field_index(s.job_fields, "min_gpus") != std::string::npos ||
        gpuplace::field_index(s.job_fields, "max_gpus") != std::string::npos) {
        auto r = s;
        r.rounds.enabled = true;
        r.preemption.enabled = false;
        r.colocation.enabled = false;
        gpuplace::round_env e(r);
        const auto seed = gpuplace::held_out_seeds(seeds).front();
        e.reset(seed);
        const auto sum = e.elastic_summary();
        std::printf("elastic jobs (seed %llu, round policies only): %zu of %zu, %zu with max_gpus capped at their model's largest "
                    "measured GPU count\n", static_cast<unsigned long long>(seed), sum.elastic, e.simulator().jobs().size(), sum.capped);
    }
    if (s.tenants.enabled) {  // the tenant<i>_jct columns by name (tenancy.hpp): the field's declared categories
        const auto f = gpuplace::field_index(s.job_fields, s.tenants.field);
        std::string names;
        if (f != std::string::npos)
            for (std::size_t t = 0; t < std::min(s.job_fields[f].categories.size(), gpuplace::max_metric_tenants); ++t)
                names += (names.empty() ? "" : ", ") + ("tenant" + std::to_string(t)) + " = " + s.job_fields[f].categories[t];
        std::printf("tenants (field \"%s\", in category order): %s\n", s.tenants.field.c_str(), names.empty() ? "as they appear" : names.c_str());
    }
    std::printf("%s", rep.table().c_str());
    for (const auto& p : policies)
        if (gpuplace::is_hindsight_policy(p)) {
            std::printf("hindsight rows (hindsight:, hindsighth<H>:) plan on the episode's own future (arrivals and durations to come): not causal, "
                        "an estimate of the headroom above their heuristic\n");
            break;
        }
    // reports are written atomically: a file is the whole old report or the whole new one
    if (!o.csv.empty()) gpuplace::write_file_atomic(o.csv, rep.csv());
    if (!o.summary_csv.empty()) gpuplace::write_file_atomic(o.summary_csv, rep.summary_csv());
    if (!o.json.empty()) gpuplace::write_file_atomic(o.json, gpuplace::to_json(rep).dump(2) + "\n");
}
}  // namespace

int main(int argc, char** argv) {
    CLI::App app{"Evaluates heuristic policies on held-out seeds of a scenario (or of a trace replayed on its cluster) "
                 "and prints mean +- standard error; writes per-seed CSV, summary CSV and JSON.",
                 "gpuplace-eval"};
    app.footer("Example: gpuplace-eval --scenario default --policies pack,topology_greedy --queue sjf,las --seeds 20\n");
    std::string scen = "default", csv, summary_csv, json_out, trace_file, trace_format;
    std::size_t seeds = 20, threads = 0, episode_jobs = 0;
    std::vector<std::string> policies = gpuplace::heuristic_names(), queues;
    std::vector<double> window;
    gpuplace::trace_options topt;
    bool calib = false, list = false;
    app.add_option("--scenario", scen, "scenario: a preset (" + [] {
        std::string s;
        for (const auto& p : gpuplace::preset_names()) s += (s.empty() ? "" : ", ") + p;
        return s;
    }() + ", philly:<file>, philly_hidden:<file>) or a scenario file")->capture_default_str();
    std::string topology;
    app.add_option("--topology", topology, "the cluster instead of the scenario's: a topology preset (--list), a JSON file "
                                           "or JSON text of a topology (e.g. {\"levels\": [...]}; docs/extending.md)");
    app.add_option("--seeds", seeds, "held-out seeds 1000000..")->capture_default_str()->check(gpuplace::apps::whole(1, 1000000));
    app.add_option("--policies", policies, "heuristics, each optionally '+queue' (default: every one that applies: "
                                           "on GPUs of several types the type-aware ones too), or rollout planners over "
                                           "one: rollout:H, rollout<F>:H (F futures), hindsight:H (not causal), or over several: "
                                           "rollout<F>:H1/H2+queue (docs/planning.md)")
        ->delimiter(',');
    std::string action_mode;
    app.add_option("--action-mode", action_mode, "what an action chooses: gpu, placement, job or round (default: the scenario's; "
                                                 "the planners need placement or job)")
        ->check(CLI::IsMember({"gpu", "placement", "job", "round"}));
    std::vector<std::string> queue_args;  // split below: CLI11's delimiter drops empty items silently
    app.add_option("--queue", queue_args, "run every policy under each queue policy (" + [] {
        std::string s;
        for (const auto& q : gpuplace::all_queue_names()) s += (s.empty() ? "" : ", ") + q;
        return s;
    }() + "; las, 2d_las and gittins preempt, and capacity, drf, themis (tenants), edf and edf_ac (deadlines), the *_oracle ones read true durations, the round policies (Gavel's) "
          "decide in rounds who runs on which GPU type)")->type_name("LIST");
    std::string durations;
    double restart_overhead = -1, round = -1, restore = -1;
    app.add_option("--durations", durations, "what the scheduler knows of durations: oracle, hidden or predicted "
                                             "(default: the scenario's; docs/information.md)")
        ->check(CLI::IsMember({"oracle", "hidden", "predicted"}));
    app.add_option("--restart-overhead", restart_overhead, "preemption: seconds a resumed job loses (default: the scenario's)")
        ->check(gpuplace::apps::number(0, 1e7));
    app.add_option("--round", round, "the round length of the round policies (default: the scenario's, 360 s), and for "
                                     "preemption a decision point every this many seconds too (0 = events only)")
        ->check(gpuplace::apps::number(0, 1e9));
    app.add_option("--restore", restore, "round policies: seconds a move or resume of a job costs (its checkpoint-restore; "
                                         "default: the scenario's, 30 s)")->check(gpuplace::apps::number(0, 1e7));
    app.add_option("--csv", csv, "write the per-seed metrics (CSV)");
    app.add_option("--summary-csv", summary_csv, "write the summary (CSV)");
    app.add_option("--json", json_out, "write the report (JSON)");
    app.add_option("--threads", threads, "worker threads (0 = all cores)")->capture_default_str()->check(gpuplace::apps::whole(0, 4096));
    auto* trace_opt = app.add_option("--trace", trace_file, "replay a trace file on the scenario's cluster");
    app.add_option("--format", trace_format, "the trace's format")->check(CLI::IsMember({"philly", "openb", "csv"}))->needs(trace_opt);
    app.add_option("--max-jobs", topt.max_jobs, "trace: at most this many jobs (0 = all)")->check(gpuplace::apps::whole(0))->needs(trace_opt);
    app.add_option("--window", window, "trace: only jobs submitted in [START, END) seconds")
        ->delimiter(',')->expected(2)->type_name("START,END")->check(gpuplace::apps::number(0, std::numeric_limits<double>::max()))
        ->needs(trace_opt);
    app.add_option("--time-scale", topt.time_scale, "trace: multiply submit times and durations")
        ->check(gpuplace::apps::number(gpuplace::min_time_scale, gpuplace::max_time_scale))->needs(trace_opt);
    app.add_option("--target-load", topt.target_load, "trace: compress arrivals to this offered load (0 = as recorded)")
        ->check(gpuplace::apps::number(0, 1e6))->needs(trace_opt);
    app.add_option("--max-gpus", topt.max_gpus, "trace: cap each job's GPUs (0 = the cluster size)")->check(gpuplace::apps::whole(0, 1 << 24))
        ->needs(trace_opt);
    app.add_flag("--drop-oversized", topt.drop_oversized, "trace: drop jobs larger than the cluster")->needs(trace_opt);
    std::string unmeasured;
    app.add_option("--unmeasured", unmeasured, "trace: a job whose model has no measured throughput at its GPU count: extrapolate "
                                              "(default: per-GPU throughput interpolated between measured counts, linear past the "
                                              "largest), drop, or refuse (an error naming the row)")
        ->check(CLI::IsMember({"extrapolate", "drop", "refuse"}))->needs(trace_opt);
    app.add_flag("--skip-bad-rows", topt.skip_bad_rows, "trace: skip malformed rows instead of failing")->needs(trace_opt);
    app.add_option("--model", topt.model, "trace: give every job this zoo model")->needs(trace_opt);
    app.add_option("--episode-jobs", episode_jobs, "trace: each episode replays a seed-chosen run of this many jobs (0 = all)")
        ->check(gpuplace::apps::whole(0))->needs(trace_opt);
    app.add_flag("--calibration", calib, "print the zoo's calibration error on its measurement cluster and exit");
    app.add_flag("--list", list, "list what can be named, by kind (placers, queue policies, planners, topologies, ...), and exit");
    if (const int rc = gpuplace::apps::parse(app, argc, argv); rc >= 0) return rc;
    if (app.count("--queue")) {  // an empty name would run the scenario's own queue policy without a word
        std::string known;
        for (const auto& q : gpuplace::all_queue_names()) known += (known.empty() ? "" : ", ") + q;
        for (const auto& arg : queue_args) {
            if (arg.empty())
                return gpuplace::apps::usage_failure(app, "--queue \"\": no queue policy named (give one or more of " + known + ", separated by commas)");
            std::stringstream items(arg + ",");
            std::size_t n = 0;
            for (std::string item; std::getline(items, item, ',');) {
                ++n;
                if (item.empty())
                    return gpuplace::apps::usage_failure(app, "--queue \"" + arg + "\": item " + std::to_string(n) +
                                                                  " is empty (give one or more of " + known + ", separated by commas)");
                queues.push_back(item);
            }
        }
    }
    if (!trace_file.empty() && trace_format.empty()) return gpuplace::apps::usage_failure(app, "--trace needs --format philly|openb|csv");
    if (window.size() == 2 && !(window[0] < window[1]))
        return gpuplace::apps::usage_failure(app, "--window " + gpuplace::apps::readable(window[0]) + "," +
                                                      gpuplace::apps::readable(window[1]) + ": START must be below END");
    if (window.size() == 2) {
        topt.window_start = window[0];
        topt.window_end = window[1];
    }
    if (!unmeasured.empty()) topt.unmeasured = gpuplace::parse_unmeasured_size(unmeasured, "--unmeasured");
    try {
        if (list) {
            // everything that can be named, by kind (registry.hpp): a policy is "<placer>+<queue>",
            // optionally "<type_rule>:<placer>+<queue>" or a planner over one
            for (const auto& e : gpuplace::all_registry_entries())
                std::printf("%s %s: %s\n", e.kind.c_str(), e.name.c_str(), e.about.c_str());
            if (!gpuplace::have_lp_solver())
                std::printf("note: this build has no LP solver, so the round policies that need one refuse to run: install "
                            "coinor-libclp-dev and configure with -DGPUPLACE_WITH_LP=ON\n");
            return 0;
        }
        auto s = gpuplace::read_scenario(scen);  // a preset, a file or JSON text; neither: the presets listed
        if (!topology.empty()) {
            s.topology = gpuplace::topology_config_of(topology, "--topology");
            (void)gpuplace::TreeTopology::from_config(s.topology);  // its checks, now
        }
        if (!action_mode.empty()) s.env.mode = gpuplace::parse_action_mode(action_mode, "--action-mode");
        if (!durations.empty()) s.durations.mode = gpuplace::parse_duration_info(durations, "--durations");
        if (app.count("--restart-overhead")) s.preemption.restart_overhead = restart_overhead;
        if (app.count("--round")) s.preemption.round = round;
        if (app.count("--round") && round > 0) s.rounds.length = round;
        if (app.count("--restore")) s.rounds.restore.seconds = restore;
        const outputs outs{csv, summary_csv, json_out};
        if (calib) return calibration(s);
        // every output is checked before any work starts
        for (const auto& [flag, file] : {std::pair{"--csv", csv}, {"--summary-csv", summary_csv}, {"--json", json_out}})
            if (app.count(flag))
                if (const auto why = gpuplace::apps::output_file_problem(flag, file); !why.empty()) return gpuplace::apps::failure(app, why);
        if (!trace_file.empty()) {
            gpuplace::workload_config w;
            w.kind = "trace";
            w.format = gpuplace::parse_trace_format(trace_format, "--format");
            w.path = trace_file;
            w.trace_opts = topt;
            w.episode_jobs = episode_jobs;
            s.workload = w;
            s.name = s.name + " + trace " + trace_file;
        }
        if (!app.count("--policies")) policies = gpuplace::applicable_heuristic_names(s);  // with the type-aware ones where GPUs differ
        run_eval<gpuplace::env>(s, policies, queues, seeds, threads, outs, episode_jobs > 0);
    } catch (const std::exception& e) {
        return gpuplace::apps::failure(app, e.what());
    }
    return 0;
}
