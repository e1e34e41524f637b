#pragma once
/// \file workload.hpp
/// Workloads: the jobs an episode submits. A seeded synthetic generator (Poisson arrivals at a
/// target load, GPU-count and duration distributions, a model mix) and fixed job lists.

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "detail/json_util.hpp"
#include "detail/rng.hpp"
#include "job.hpp"
#include "model_zoo.hpp"

namespace gpuplace {

/// Options of the synthetic generator. Durations are the jobs' consolidated run times in seconds.
struct synthetic_workload {
    std::size_t num_jobs = 160;
    double load = 1.0;  ///< offered load: arrival rate x mean(GPUs x duration) / cluster GPUs
    std::vector<std::pair<std::uint32_t, double>> gpu_counts = {{1, 0.4}, {2, 0.2}, {4, 0.2}, {8, 0.2}};
    double duration_min = 600.0;    ///< log-uniform between min and max (seconds)
    double duration_max = 14400.0;
    std::vector<std::pair<std::string, double>> models;  ///< names and weights; empty = every zoo model
};

/// How an episode's jobs are made.
struct workload_config {
    std::string kind = "synthetic";  ///< "synthetic" or "jobs" (a fixed list, the same every episode)
    synthetic_workload synthetic;
    std::vector<TrainingJob> jobs;  ///< kind "jobs": submit order is by submit_time, then list order

    [[nodiscard]] static workload_config from_json(const detail::json& j, std::string_view path = "/workload");
    [[nodiscard]] detail::json to_json() const;
};

/// Samples a synthetic workload into `out` (cleared first; no allocation when its capacity
/// suffices). Jobs are numbered 0..n-1 in submit order. Same seed, same jobs.
inline void generate_synthetic(const synthetic_workload& w, const ModelZoo& zoo, std::size_t num_gpus,
                               std::uint64_t seed, std::vector<TrainingJob>& out) {
    detail::rng r(detail::mix_seed(seed, 0x776f726b6c6f6164ULL));
    out.clear();
    double total_p = 0;
    for (auto& [k, p] : w.gpu_counts) total_p += p;
    double total_m = 0;
    for (auto& [name, p] : w.models) total_m += p;
    const double lmin = std::log(w.duration_min), lmax = std::log(w.duration_max);
    double gpu_seconds = 0;
    for (std::size_t i = 0; i < w.num_jobs; ++i) {
        // GPU count
        double u = r.uniform() * total_p;
        std::uint32_t k = w.gpu_counts.back().first;
        for (auto& [kk, p] : w.gpu_counts) {
            if (u < p) { k = kk; break; }
            u -= p;
        }
        // model: weighted list, or uniform over zoo models measured at >= k GPUs (all if none)
        model_id m = 0;
        if (!w.models.empty()) {
            double v = r.uniform() * total_m;
            m = zoo.find(w.models.back().first);
            for (auto& [name, p] : w.models) {
                if (v < p) { m = zoo.find(name); break; }
                v -= p;
            }
        } else {
            std::size_t eligible = 0;
            for (std::size_t z = 0; z < zoo.size(); ++z) eligible += zoo[model_id(z)].max_measured_gpus() >= k;
            if (eligible == 0) m = static_cast<model_id>(r.below(zoo.size()));
            else {
                auto pick = r.below(eligible);
                for (std::size_t z = 0; z < zoo.size(); ++z)
                    if (zoo[model_id(z)].max_measured_gpus() >= k && pick-- == 0) { m = model_id(z); break; }
            }
        }
        const double d = std::exp(r.uniform(lmin, lmax));
        TrainingJob j;
        j.id = static_cast<job_id>(i);
        j.num_gpus = k;
        j.model = m;
        j.work = d * zoo[m].at(k).consolidated;
        j.submit_time = d;  // temporarily the duration
        gpu_seconds += d * k;
        out.push_back(j);
    }
    const double mean = w.num_jobs ? gpu_seconds / double(w.num_jobs) : 1.0;
    const double rate = w.load * double(num_gpus) / mean;  // jobs per second
    double t = 0;
    for (std::size_t i = 0; i < out.size(); ++i) {
        if (i > 0) t += r.exponential(rate);
        out[i].submit_time = t;
    }
}

inline workload_config workload_config::from_json(const detail::json& j, std::string_view path) {
    using namespace detail;
    check_keys(j, path, {"kind", "num_jobs", "load", "gpu_counts", "duration_min", "duration_max", "models", "jobs"});
    workload_config c;
    read_string(j, path, "kind", c.kind);
    if (c.kind != "synthetic" && c.kind != "jobs")
        config_fail(join_path(path, "kind"), "unknown workload kind \"" + c.kind + "\" (allowed: synthetic, jobs)");
    auto& s = c.synthetic;
    read_int(j, path, "num_jobs", s.num_jobs, 1, 10'000'000);
    read_number(j, path, "load", s.load, 1e-6, 1e6);
    read_number(j, path, "duration_min", s.duration_min, 1e-9, 1e12);
    read_number(j, path, "duration_max", s.duration_max, 1e-9, 1e12);
    if (s.duration_max < s.duration_min)
        config_fail(join_path(path, "duration_max"), "value " + std::to_string(s.duration_max) +
                                                         " is below duration_min " + std::to_string(s.duration_min));
    if (auto it = j.find("gpu_counts"); it != j.end()) {
        const auto p = join_path(path, "gpu_counts");
        if (!it->is_object() || it->empty()) config_fail(p, "expected an object {\"<gpus>\": probability}, got " + short_dump(*it));
        s.gpu_counts.clear();
        for (auto e = it->begin(); e != it->end(); ++e) {
            const auto ep = join_path(p, e.key());
            long k = 0;
            try {
                std::size_t pos = 0;
                k = std::stol(e.key(), &pos);
                if (pos != e.key().size()) k = 0;
            } catch (const std::exception&) { k = 0; }
            if (k < 1 || k > (1 << 24)) config_fail(ep, "GPU count \"" + e.key() + "\" is not an integer >= 1");
            if (!e->is_number() || e->get<double>() < 0)
                config_fail(ep, "expected a probability >= 0, got " + short_dump(*e));
            s.gpu_counts.emplace_back(static_cast<std::uint32_t>(k), e->get<double>());
        }
        std::sort(s.gpu_counts.begin(), s.gpu_counts.end());
        double tot = 0;
        for (auto& [k, pr] : s.gpu_counts) tot += pr;
        if (!(tot > 0)) config_fail(p, "probabilities sum to 0");
    }
    if (auto it = j.find("models"); it != j.end()) {
        const auto p = join_path(path, "models");
        if (!it->is_object()) config_fail(p, "expected an object {\"<model name>\": weight}, got " + short_dump(*it));
        for (auto e = it->begin(); e != it->end(); ++e) {
            if (!e->is_number() || e->get<double>() < 0)
                config_fail(join_path(p, e.key()), "expected a weight >= 0, got " + short_dump(*e));
            s.models.emplace_back(e.key(), e->get<double>());
        }
    }
    if (auto it = j.find("jobs"); it != j.end()) {
        const auto p = join_path(path, "jobs");
        if (!it->is_array() || it->empty()) config_fail(p, "expected a non-empty array of jobs");
        for (std::size_t i = 0; i < it->size(); ++i) {
            const auto& jj = (*it)[i];
            const auto jp = join_path(p, std::to_string(i));
            check_keys(jj, jp, {"submit_time", "num_gpus", "model", "work"});
            TrainingJob job;
            job.id = static_cast<job_id>(i);
            for (const char* req : {"submit_time", "num_gpus", "model", "work"})
                if (!jj.contains(req)) config_fail(jp, std::string("missing key \"") + req + "\"");
            read_number(jj, jp, "submit_time", job.submit_time, 0.0, 1e15);
            read_int(jj, jp, "num_gpus", job.num_gpus, 1, 1 << 24);
            read_int(jj, jp, "model", job.model, 0, 65535);
            read_number(jj, jp, "work", job.work, 1e-12, 1e18);
            c.jobs.push_back(job);
        }
    }
    if (c.kind == "jobs" && c.jobs.empty()) config_fail(join_path(path, "jobs"), "kind \"jobs\" needs a job list");
    return c;
}

inline detail::json workload_config::to_json() const {
    detail::json j;
    j["kind"] = kind;
    if (kind == "synthetic") {
        j["num_jobs"] = synthetic.num_jobs;
        j["load"] = synthetic.load;
        j["duration_min"] = synthetic.duration_min;
        j["duration_max"] = synthetic.duration_max;
        detail::json g = detail::json::object();
        for (auto& [k, p] : synthetic.gpu_counts) g[std::to_string(k)] = p;
        j["gpu_counts"] = g;
        if (!synthetic.models.empty()) {
            detail::json m = detail::json::object();
            for (auto& [n, p] : synthetic.models) m[n] = p;
            j["models"] = m;
        }
    } else {
        detail::json arr = detail::json::array();
        for (auto& jb : jobs)
            arr.push_back({{"submit_time", jb.submit_time}, {"num_gpus", jb.num_gpus}, {"model", jb.model}, {"work", jb.work}});
        j["jobs"] = arr;
    }
    return j;
}

}  // namespace gpuplace
