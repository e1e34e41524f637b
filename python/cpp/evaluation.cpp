// gpuplace._core: the heuristics (Heuristic), one episode run entirely in C++ (run_episode, the
// reference for Python runs), the evaluation harness (evaluate, EvalReport) and comm_cost().

#include <cstring>
#include <algorithm>
#include <functional>
#include <limits>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include <gpuplace/calibration.hpp>
#include <gpuplace/policy_registry.hpp>

#include "bindings.hpp"
#include "objects.hpp"

namespace gpuplace_py {

namespace {

/// A heuristic policy or a rollout planner over one, by name (policy_registry.hpp).
struct PyHeuristic {
    std::string name;
    gp::any_policy<gp::env> p;
    std::function<std::int64_t(const gp::env&)> f;
    explicit PyHeuristic(const std::string& n) : name(n), p(gp::named_policy<gp::env>(n)) { reset(0); }
    void reset(std::uint64_t seed) { f = p.make(seed); }
};

std::int64_t heuristic_act(PyHeuristic& h, const PyEnv<gp::env>& p) {
    const auto& e = idle(p);
    if (e.done()) throw gp::StateError("Heuristic.act: the episode is over; reset the env");
    if (!e.has_current()) throw gp::StateError("Heuristic.act: no job is being placed; call reset() first");
    return h.f(e);
}

std::string names_text(const std::vector<std::string>& names) {
    std::string out;
    for (const auto& n : names) out += (out.empty() ? "" : ", ") + n;
    return out;
}

/// How run_episode records the observations and masks: always (record=True), never (False), or
/// when they fit in the limit (None, the default).
enum class record_mode { never, always, if_fits };

/// The observations and masks of `rows` steps, in bytes.
double record_bytes(double rows, std::size_t obs_size, std::size_t num_actions) {
    return rows * (static_cast<double>(obs_size) * sizeof(float) + static_cast<double>(num_actions));
}

/// Why the observations are not kept: "the observations and masks of at least N steps (...) take X,
/// more than record_limit Y (...)".
std::string record_overflow(std::size_t rows, bool at_least, std::size_t obs_size, std::size_t num_actions,
                            std::size_t limit, const std::string& why) {
    return "the observations and masks of " + std::string(at_least ? "at least " : "") + std::to_string(rows) +
           " steps (" + why + ") take " + bytes_text(record_bytes(static_cast<double>(rows), obs_size, num_actions)) +
           ", more than record_limit " + bytes_text(static_cast<double>(limit)) + " (" + std::to_string(obs_size) +
           " floats of observation and " + std::to_string(num_actions) + " bytes of mask per step)";
}

/// One episode run entirely in C++: by a heuristic (policy name) or by replaying `actions`.
template <class E>
py::dict run_episode_impl(const gp::scenario& sc, const std::string& policy, const std::vector<std::int64_t>* replay,
                          std::uint64_t seed, record_mode mode, std::size_t limit) {
    // a heuristic named with a queue policy ("pack+sjf") runs under it, as in evaluate()
    gp::any_policy<E> named;
    gp::scenario run_sc = sc;
    if (!replay) {
        named = gp::named_policy<E>(policy);
        gp::apply_queue(run_sc, named.queue);
    }
    E e(run_sc);
    std::vector<std::int64_t> actions;
    std::vector<double> rewards;
    std::vector<float> obs;
    std::vector<std::uint8_t> masks;
    bool record = mode != record_mode::never;
    std::string dropped;  // why the observations were not kept (mode if_fits)
    bool ran_out = false;
    {
        py::gil_scoped_release nogil;
        std::function<std::int64_t(const E&)> act;
        if (!replay) act = named.make(seed);
        e.reset(seed);
        const std::size_t O = e.observation_size(), A = e.num_actions();
        const auto fits = [&](std::size_t rows) { return record_bytes(static_cast<double>(rows), O, A) <= static_cast<double>(limit); };
        // before any step: every job takes at least one step, and a replay at most its length
        const std::size_t jobs = e.info().jobs_total;
        const std::size_t least = 1 + (replay ? std::min(jobs, replay->size()) : jobs);
        if (record && !fits(least)) {
            const auto why = replay && replay->size() < jobs ? "the " + std::to_string(replay->size()) + " actions given"
                                                             : "one per job of the episode's " + std::to_string(jobs);
            const auto msg = record_overflow(least, true, O, A, limit, why);
            if (mode == record_mode::always)
                throw gp::ConfigError("run_episode: record=True: " + msg + "; pass record=False, or a larger record_limit");
            record = false;
            dropped = msg;
        }
        if (record) {
            obs.reserve(least * O);
            masks.reserve(least * A);
        }
        auto snap = [&] {
            if (!record) return;
            const std::size_t rows = obs.size() / std::max<std::size_t>(O, 1) + 1;
            if (!fits(rows)) {
                const auto msg = record_overflow(rows, false, O, A, limit, "the steps so far");
                if (mode == record_mode::always)
                    throw gp::ConfigError("run_episode: record=True: " + msg + "; pass record=False, or a larger record_limit");
                record = false;
                dropped = msg;
                std::vector<float>().swap(obs);
                std::vector<std::uint8_t>().swap(masks);
                return;
            }
            obs.insert(obs.end(), e.observation().begin(), e.observation().end());
            masks.insert(masks.end(), e.action_mask().begin(), e.action_mask().end());
        };
        snap();
        for (std::size_t t = 0; !e.done(); ++t) {
            std::int64_t a;
            if (replay) {
                if (t >= replay->size()) {
                    ran_out = true;
                    break;
                }
                a = (*replay)[t];
            } else {
                a = act(e);
            }
            try {
                const auto r = e.step(a);
                rewards.push_back(r.reward);
            } catch (const gp::InvalidAction& ex) {
                throw gp::InvalidAction("run_episode: step " + std::to_string(t) + ": " + ex.what());
            }
            actions.push_back(a);
            snap();
        }
    }
    const auto T = static_cast<py::ssize_t>(actions.size());
    py::dict d;
    d["actions"] = copy_array(actions);
    d["rewards"] = copy_array(rewards);
    if (record) {
        py::array_t<float> o({T + 1, static_cast<py::ssize_t>(e.observation_size())});
        std::memcpy(o.mutable_data(), obs.data(), obs.size() * sizeof(float));
        py::array_t<std::uint8_t> mk({T + 1, static_cast<py::ssize_t>(e.num_actions())});
        std::memcpy(mk.mutable_data(), masks.data(), masks.size());
        d["observations"] = o;
        d["masks"] = mk;
    }
    d["recorded"] = record;
    d["terminated"] = e.terminated();
    d["truncated"] = e.truncated();
    d["actions_ran_out"] = ran_out;
    d["episode_return"] = e.episode_return();
    d["steps"] = e.steps();
    d["metrics"] = metrics_dict(e.episode_metrics());
    d["jobs"] = finished_jobs(e);
    d["seed"] = seed;
    const auto warn = [](const std::string& msg) {
        // stack level 1: the warning points at the Python line that called run_episode
        if (PyErr_WarnEx(PyExc_UserWarning, msg.c_str(), 1) < 0) throw py::error_already_set();
    };
    if (!dropped.empty())
        warn("run_episode: observations and masks not recorded: " + dropped +
             "; pass record=False to skip them, or a larger record_limit to keep them");
    if (ran_out) {
        const auto info = e.info();
        warn("run_episode: the " + std::to_string(replay->size()) + " actions ran out before the episode ended (" +
             std::to_string(info.jobs_done) + " of " + std::to_string(info.jobs_total) +
             " jobs finished); the result is the unfinished episode (actions_ran_out True, terminated and truncated "
             "False) and its metrics cover only the finished jobs");
    }
    return d;
}

py::dict run_episode(py::object scenario, py::object policy, py::object seed, py::object actions, py::object record,
                     py::object record_limit) {
    const auto sc = to_scenario(scenario);
    const auto s = to_seed(seed);
    record_mode mode = record_mode::if_fits;
    if (!record.is_none()) {
        if (!py::isinstance<py::bool_>(record))
            throw py::type_error("run_episode: record must be True, False or None (record when it fits in record_limit), "
                                 "got " + type_name(record) + " " + py::repr(record).cast<std::string>());
        mode = record.cast<bool>() ? record_mode::always : record_mode::never;
    }
    const auto limit = to_count(record_limit, "run_episode: record_limit (bytes)", 0, std::numeric_limits<std::int64_t>::max());
    std::vector<std::int64_t> replay;
    const bool has_replay = !actions.is_none();
    std::string pol;
    if (has_replay) {
        if (!policy.is_none()) throw py::value_error("run_episode: pass either policy or actions, not both");
        if (py::isinstance<py::str>(actions) || !py::hasattr(actions, "__iter__"))
            throw py::type_error("run_episode: actions must be a sequence of integers, got " + type_name(actions));
        for (auto a : actions) replay.push_back(to_action(a));
    } else {
        if (policy.is_none()) throw py::value_error("run_episode: pass a policy name or an action sequence");
        if (!py::isinstance<py::str>(policy))
            throw py::type_error("run_episode: policy must be a heuristic name (" + names_text(gp::heuristic_names()) +
                                 "), got " + type_name(policy) + " " + py::repr(policy).cast<std::string>());
        pol = policy.cast<std::string>();
        (void)gp::named_policy<gp::env>(pol);  // unknown names fail here, before any work
    }
    const auto* rp = has_replay ? &replay : nullptr;
    return run_episode_impl<gp::env>(sc, pol, rp, s, mode, limit);
}


/// A report's results for one policy; KeyError when it has none of that name.
const gp::policy_eval& report_policy(const gp::eval_report& r, const std::string& policy) {
    for (const auto& p : r.policies)
        if (p.policy == policy) return p;
    throw py::key_error("no policy \"" + policy + "\" in the report");
}

template <class E>
gp::eval_report evaluate_impl(const gp::scenario& sc, const std::vector<std::string>& names,
                              const std::vector<std::uint64_t>& seeds, std::size_t threads) {
    std::vector<gp::any_policy<E>> pols;
    for (const auto& n : names) pols.push_back(gp::named_policy<E>(n));
    py::gil_scoped_release nogil;
    return gp::evaluate<E>(sc, pols, seeds, threads);
}

/// One episode of `scenario` under round policy `policy` (round_policy_names()), the scenario's
/// env.placer placing: the finished jobs' records with what rounds did to each (docs/rounds.md).
py::list run_rounds(py::object scenario, const std::string& policy, std::uint64_t seed) {
    auto sc = to_scenario(scenario);
    if (!gp::is_round_policy(policy)) (void)gp::round_policy(policy, sc);  // ConfigError listing them
    gp::apply_queue(sc, policy);
    const auto allocate_for = gp::round_policy(policy, sc);
    std::vector<gp::job_record> done;
    std::vector<gp::round_record> rounds;
    {
        py::gil_scoped_release nogil;
        gp::round_env e(sc);
        auto allocate = allocate_for.make(seed);
        gp::round_allocation a;
        e.reset(seed);
        while (!e.done()) {
            a.clear();
            allocate(e.view(), a);
            e.step(a);
        }
        done.assign(e.simulator().finished().begin(), e.simulator().finished().end());
        rounds.assign(e.round_records().begin(), e.round_records().end());
    }
    py::list out;
    for (const auto& r : done) {
        const auto& rr = rounds[r.id];
        py::dict d;
        d["id"] = r.id, d["model"] = r.model, d["num_gpus"] = r.num_gpus, d["submit"] = r.submit, d["start"] = r.start;
        d["end"] = r.end, d["jct"] = r.jct(), d["run_time"] = r.run_time, d["lost_gpu_time"] = r.lost_gpu_time;
        d["moves"] = rr.moves, d["resizes"] = rr.resizes, d["suspensions"] = rr.suspensions, d["restores"] = rr.restores;
        d["restore_time"] = rr.restore_time, d["suspended_time"] = rr.suspended_time;
        out.append(d);
    }
    return out;
}

gp::eval_report evaluate(py::object scenario, py::object policies, py::object seeds, py::object threads_arg) {
    const auto threads = to_count(threads_arg, "evaluate: threads", 0, 4096);
    const auto sc = to_scenario(scenario);
    std::vector<std::string> names;
    if (policies.is_none()) names = gp::heuristic_names();
    else if (py::isinstance<py::str>(policies)) names = {policies.cast<std::string>()};
    else names = policies.cast<std::vector<std::string>>();
    const auto sd = to_seeds(seeds);
    return evaluate_impl<gp::env>(sc, names, sd, threads);
}

py::dict comm_cost(py::object gpus, py::object topology, py::object comm, py::object model) {
    auto to_json = [](py::handle o, const char* what) -> json {
        if (py::isinstance<py::str>(o)) {
            const auto s = o.cast<std::string>();
            if (!s.empty() && s.front() == '{') return gp::parse_json(s, what);
            return json::object();
        }
        if (py::isinstance<py::dict>(o)) return py_to_json(o, "");
        throw py::type_error(std::string(what) + " must be a name, JSON text or a dict, got " + type_name(o));
    };
    json tj = to_json(topology, "topology");
    if (py::isinstance<py::str>(topology) && tj.empty()) tj = {{"preset", topology.cast<std::string>()}};
    json cj = to_json(comm, "comm");
    if (py::isinstance<py::str>(comm) && cj.empty()) cj = {{"model", comm.cast<std::string>()}};
    const auto topo = gp::topology_from_json(tj, "/topology");
    const auto zoo = gp::ModelZoo::builtin();
    const auto g = to_gpus(gpus, topo.num_gpus());
    const auto mid = to_model(model, zoo);
    const auto c = gp::comm_model::from_config(gp::comm_config_from_json(cj, "/comm"), "/comm");
    c.check(topo);
    return comm_dict(c.evaluate(topo, zoo, mid, g));
}


}  // namespace

void bind_evaluation(py::module_& m) {
    m.def("heuristic_names", &gp::heuristic_names, "Names of the heuristic policies.");
    m.def("eval_metric_names", &gp::eval_metric_names, "Metrics of the harness table, in order.");
    m.def("round_policy_names", &gp::round_policy_names,
          "Gavel's round policies, queue policies of their own (\"pack+max_min_fairness_perf\"; docs/rounds.md).");
    m.def("run_rounds", &run_rounds, py::arg("scenario"), py::arg("policy"), py::arg("seed") = 0,
          "One episode under a round policy (e.g. \"max_min_fairness_perf\"), the scenario's env.placer placing: the "
          "finished jobs' records (id, submit, start, end, jct, ..., moves, suspensions, restores, restore_time, "
          "suspended_time), in order of completion (docs/rounds.md).");
    m.def("have_lp_solver", &gp::have_lp_solver,
          "Whether this core has the LP solver (COIN-OR CLP) the round policies other than fifo_perf need.");

    py::class_<PyHeuristic>(m, "Heuristic", "A heuristic policy by name (see heuristic_names()), optionally under a queue policy (\"pack+sjf\"), or a rollout planner over one (\"rollout:pack+sjf\", \"rollout16:...\", \"hindsight:...\" (not causal); the placement or job action mode; docs/planning.md).")
        .def(py::init<const std::string&>(), py::arg("name"))
        .def_readonly("name", &PyHeuristic::name)
        .def("reset", [](PyHeuristic& h, py::object seed) { h.reset(to_seed(seed)); }, py::arg("seed") = 0,
             "Starts an episode (seeds the random policy).")
        .def("act", &heuristic_act, py::arg("env"), "The policy's action in env's current state.");

    m.def("run_episode", &run_episode, py::arg("scenario"), py::arg("policy") = py::none(), py::arg("seed") = 0,
          py::arg("actions") = py::none(), py::arg("record") = py::none(),
          py::arg("record_limit") = std::int64_t{1} << 30,
          "Runs one episode entirely in C++ (the reference for Python runs): with a heuristic by name (with a "
          "queue policy suffix, e.g. \"pack+sjf\", under that queue policy, as evaluate() runs it), or by "
          "replaying an action sequence (stops when it runs out, with a warning and actions_ran_out True, or when "
          "the episode ends). Returns actions, rewards, observations and masks (T + 1 rows, when recorded), "
          "recorded, terminated, truncated, actions_ran_out, episode_return, steps, metrics and the finished jobs. "
          "record: True keeps the observations and masks (a ConfigError before the first step when they cannot fit "
          "in record_limit bytes, default 1 GiB), False never, None (the default) when they fit (else a warning).");

    py::class_<gp::eval_report>(m, "EvalReport", "Results of evaluate(): per policy, metrics on every seed.")
        .def(py::init([](std::string scenario, py::object seeds) {
                 gp::eval_report r;
                 r.scenario = std::move(scenario);
                 r.seeds = to_seeds(seeds);
                 return r;
             }),
             py::arg("scenario"), py::arg("seeds"))
        .def_readonly("scenario", &gp::eval_report::scenario)
        .def_readonly("seeds", &gp::eval_report::seeds)
        .def_property_readonly("policies", [](const gp::eval_report& r) {
            std::vector<std::string> v;
            for (const auto& p : r.policies) v.push_back(p.policy);
            return v;
        })
        .def("table", &gp::eval_report::table, "The harness table (mean +- standard error, times in hours).")
        .def("csv", &gp::eval_report::csv)
        .def("to_json", [](const gp::eval_report& r) { return to_py(gp::to_json(r)); })
        .def("summary", [](const gp::eval_report& r, const std::string& policy, const std::string& metric) {
                 const auto s = report_policy(r, policy).get(metric);
                 return py::make_tuple(s.mean, s.sem);
             }, py::arg("policy"), py::arg("metric"), "(mean, standard error) of a metric.")
        .def("per_seed", [](const gp::eval_report& r, const std::string& policy) {
                 py::list l;
                 for (const auto& x : report_policy(r, policy).per_seed) l.append(metrics_dict(x));
                 return l;
             }, py::arg("policy"))
        .def("paired", [](const gp::eval_report& r, const std::string& policy, const std::string& metric) {
                 (void)report_policy(r, policy);  // KeyError, like summary()
                 py::list l;
                 for (const auto& ps : r.paired(policy, metric))
                     l.append(py::dict(py::arg("other") = ps.other, py::arg("mean") = ps.diff.mean,
                                       py::arg("sem") = ps.diff.sem, py::arg("lower") = ps.lower,
                                       py::arg("seeds") = ps.seeds));
                 return l;
             }, py::arg("policy"), py::arg("metric") = "avg_jct",
             "`policy` against every other policy on the same seeds: per other policy, the mean and standard "
             "error of the per-seed difference (policy minus other; seconds for times) and on how many seeds "
             "`policy` is lower.")
        .def("paired_table", [](const gp::eval_report& r, const std::string& policy, const std::string& metric) {
                 (void)report_policy(r, policy);
                 return r.paired_table(policy, metric);
             }, py::arg("policy"), py::arg("metric") = "avg_jct", "paired() as text (times in hours).")
        .def("returns", [](const gp::eval_report& r, const std::string& policy) {
                 return report_policy(r, policy).returns;
             }, py::arg("policy"))
        .def("add", [](gp::eval_report& r, const std::string& name, py::list metrics, std::vector<double> returns) {
                 if (static_cast<std::size_t>(py::len(metrics)) != r.seeds.size() || returns.size() != r.seeds.size())
                     throw py::value_error("EvalReport.add: need one metrics dict and one return per seed (" +
                                           std::to_string(r.seeds.size()) + "), got " + std::to_string(py::len(metrics)) +
                                           " and " + std::to_string(returns.size()));
                 for (const auto& p : r.policies)
                     if (p.policy == name) throw py::value_error("EvalReport.add: policy \"" + name + "\" is already in the report");
                 gp::policy_eval pe;
                 pe.policy = name;
                 for (auto x : metrics) pe.per_seed.push_back(metrics_from_dict(x));
                 pe.returns = std::move(returns);
                 r.policies.push_back(std::move(pe));
             }, py::arg("policy"), py::arg("metrics"), py::arg("returns"),
             "Adds a policy evaluated elsewhere (e.g. a Python agent) on the report's seeds, in seed order.");

    m.def(
        "calibration",
        [](py::object scenario) {
            const auto sc = to_scenario(scenario);
            std::vector<gp::calibration_row> rows;
            {
                py::gil_scoped_release nogil;
                rows = gp::calibration_rows(sc.zoo.make());
            }
            py::list out;
            for (const auto& r : rows) {
                py::dict d;
                d["model"] = r.model, d["gpus"] = r.gpus, d["measured_consolidated"] = r.measured_consolidated;
                d["model_consolidated"] = r.model_consolidated, d["measured_spread"] = r.measured_spread;
                d["model_spread"] = r.model_spread, d["max_error_percent"] = r.max_error_percent;
                out.append(d);
            }
            return out;
        },
        py::arg("scenario") = "default",
        "Per model of the scenario's zoo and measured GPU count: the measured throughputs (steps/s, consolidated and "
        "spread one GPU per node) and the ones the ring all-reduce model gives on the measurement cluster, with the "
        "larger relative error in percent (gpuplace-eval --calibration's table; calibration.hpp).");
    m.def("evaluate", &evaluate, py::arg("scenario"), py::arg("policies") = py::none(), py::arg("seeds") = 20,
          py::arg("threads") = 1,
          "Runs heuristics (names; default all) on seeds (a count of held-out seeds or a list) in C++ with the GIL "
          "released; returns an EvalReport.");
    m.def("comm_cost", &comm_cost, py::arg("gpus"), py::arg("topology") = "proximity_drl", py::arg("comm") = "tree_route",
          py::arg("model") = 0,
          "Communication cost and slowdown of a job of `model` (index or name in the built-in zoo) on `gpus` of a "
          "topology (preset name, JSON text or dict) under a comm model (name, JSON text or dict).");
}

}  // namespace gpuplace_py
