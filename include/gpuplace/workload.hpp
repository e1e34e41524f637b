#pragma once
/// \file workload.hpp
/// Workloads: the jobs an episode submits. A seeded synthetic generator (Poisson arrivals at a
/// target load, GPU-count and duration distributions, a model mix), Proximity-DRL's workload,
/// trace replay (trace.hpp) and fixed job lists. Same seed, same workload. workload_source.hpp
/// makes an env's episodes from a workload_config.

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <iterator>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "data.hpp"
#include "detail/rng.hpp"
#include "job.hpp"
#include "job_fields.hpp"
#include "model_zoo.hpp"
#include "trace.hpp"
#include "trace_registry.hpp"

namespace gpuplace {

/// Options of the synthetic generator. Durations are the jobs' consolidated run times in seconds.
struct synthetic_workload {
    std::size_t num_jobs = 160;
    double load = 1.0;  ///< offered load: arrival rate x mean(GPUs x duration) / cluster GPUs
    double load_max = 0;  ///< > 0: each episode's load is drawn uniformly from [load, load_max] (JSON: [lo, hi])
    std::vector<std::pair<std::uint32_t, double>> gpu_counts = {{1, 0.4}, {2, 0.2}, {4, 0.2}, {8, 0.2}};
    /// Empty, or per entry of gpu_counts the top of a range: each episode draws the weight of GPU
    /// count k uniformly from [gpu_counts[i].second, gpu_counts_max[i]] (JSON: {"<k>": [lo, hi]}).
    std::vector<double> gpu_counts_max;
    double duration_min = 600.0;    ///< log-uniform between min and max (seconds)
    double duration_max = 14400.0;
    std::vector<std::pair<std::string, double>> models;  ///< names and weights; empty = every zoo model
};

/// Proximity-DRL's workload (djjbxxz/Proximity-DRL, DataGenerating.data_gen_with_p): num_jobs
/// jobs in four categories (short, medium, long, extreme) with shares 0.5/0.1/0.2/0.2 (fixed
/// counts floor(n x share), the rest extreme). Lengths are drawn uniformly in bands cut at
/// 0.3/0.4/0.8/1.0 of (max_length + 1), GPU requests in bands cut at 0.2/0.3/0.6/1.0 of
/// (max_request + 1); lengths and requests are shuffled independently, as in the reference.
struct proximity_drl_workload {
    std::size_t num_jobs = 30;
    std::uint32_t max_length = 20;   ///< in time steps
    std::uint32_t max_request = 8;   ///< GPUs
    double time_step = 60.0;         ///< seconds per time step (a job's consolidated duration = length x time_step)
    double arrival_rate = 0.0;       ///< jobs per second (Poisson); 0 = every job arrives at time 0
    std::vector<std::pair<std::string, double>> models;  ///< names and weights; empty = every zoo model
};

struct workload_component;

/// A built-in workload kind: its name and what it is (the registry lists them under kind
/// "workload"; json/workload_registry.hpp reads and registers kinds of one's own).
struct builtin_workload_kind {
    std::string_view name, about;
};

/// The built-in workload kinds, in the order of workload_kind_id.
inline constexpr builtin_workload_kind builtin_workload_kinds[] = {
    {"synthetic", "Poisson arrivals at a target load, GPU counts and log-uniform durations, a model mix"},
    {"proximity_drl", "Proximity-DRL's generator"},
    {"trace", "trace files replayed (one, or each episode one of a list)"},
    {"jobs", "a fixed job list"},
    {"mixture", "each episode one of several workloads, drawn by weight"}};

/// Which kind a workload is: a built-in one (builtin_workload_kinds' order) or one of one's own.
enum class workload_kind_id : std::uint8_t { synthetic, proximity_drl, trace, jobs, mixture, registered };

/// The index of built-in kind `name` in builtin_workload_kinds, or its size when there is none.
[[nodiscard]] constexpr std::size_t builtin_workload_kind_index(std::string_view name) noexcept {
    std::size_t i = 0;
    while (i < std::size(builtin_workload_kinds) && builtin_workload_kinds[i].name != name) ++i;
    return i;
}

/// A workload kind of one's own (registered by name, json/workload_registry.hpp): makes each
/// episode's jobs. generate() appends the jobs of the episode of `seed` to `out` (empty) in any
/// order, each requesting 1 to `cluster_gpus` GPUs of a model of `zoo`, with work > 0 and a
/// submit time >= 0; the workload sorts them by submit time (stably) and numbers them 0, 1, ...
/// in that order. The same seed must give the same jobs; it is called from one thread per env.
class workload_generator {
public:
    virtual ~workload_generator() = default;
    virtual void generate(const ModelZoo& zoo, std::size_t cluster_gpus, std::uint64_t seed, std::vector<TrainingJob>& out) const = 0;
    /// An upper bound on the GPUs all jobs of one episode request on `cluster_gpus` GPUs, for the
    /// buffers an env reserves once; 0 (unknown): later episodes may allocate at reset().
    [[nodiscard]] virtual std::size_t max_episode_gpus(std::size_t /*cluster_gpus*/) const { return 0; }
};

/// A declared job field's value as a `jobs` entry gives it (workload_config::job_values).
struct job_field_value {
    std::string field;
    double number = 0;     ///< a number field's value
    std::string category;  ///< a category field's value
    friend bool operator==(const job_field_value&, const job_field_value&) = default;
};


/// How an episode's jobs are made.
struct workload_config {
    /// "synthetic", "proximity_drl", "trace" (replayed every episode), "jobs" (a fixed list),
    /// "mixture" (each episode one of several workloads, drawn by weight; builtin_workload_kinds),
    /// or a kind of one's own (json/workload_registry.hpp; `generator` then makes the jobs).
    std::string kind = "synthetic";
    synthetic_workload synthetic;
    proximity_drl_workload proximity_drl;
    std::vector<TrainingJob> jobs;  ///< kind "jobs": submit order is by submit_time, then list order
    std::vector<std::string> job_models;  ///< kind "jobs": per job, its model's zoo name when given by name ("" or none: the id)
    std::vector<std::vector<job_field_value>> job_values;  ///< kind "jobs": per job, the declared fields it gives
    trace_format format = trace_format::philly;  ///< kind "trace"
    std::string format_name;                     ///< kind "trace", format registered: the registered format's name (trace_registry.hpp)
    std::string path;                            ///< kind "trace": the file ("$GPUPLACE_DATA/..." allowed, data.hpp)
    std::vector<std::string> more_paths;         ///< kind "trace": further files (JSON "path": [...]); each episode replays one
    trace_options trace_opts;                    ///< kind "trace": window, scaling, cap, bad rows
    double target_load_max = 0;  ///< kind "trace": > 0: each episode compresses its file to a load drawn from
                                 ///< [target_load, target_load_max] (JSON "target_load": [lo, hi])
    std::size_t episode_jobs = 0;  ///< kind "trace": > 0 replays a seed-chosen run of this many consecutive jobs
    /// kind "trace" of several files: a declared category field (JSON "merge_as"): every episode
    /// replays all the files merged into one by submit time (each file's first job at 0), each
    /// job's field the name of its file (its stem, e.g. a Philly virtual cluster); the trace
    /// options apply to each file, target_load and episode_jobs to the merged trace. Empty: each
    /// episode replays one file.
    std::string merge_as;
    std::vector<workload_component> components;  ///< kind "mixture"
    /// A kind of one's own: the generator its factory made from the workload's JSON, and that JSON
    /// (written back as it was read).
    std::shared_ptr<const workload_generator> generator;
    std::string options;

    /// Every trace file of a "trace" workload: path, then more_paths.
    [[nodiscard]] std::vector<std::string> trace_paths() const {
        std::vector<std::string> v{path};
        v.insert(v.end(), more_paths.begin(), more_paths.end());
        return v;
    }

    /// Makes the relative trace paths relative to base_dir (a mixture's components too; data.hpp).
    void resolve_paths(std::string_view base_dir);
};

/// One workload of a mixture and its weight.
struct workload_component {
    double weight = 1.0;
    workload_config workload;
};

inline void workload_config::resolve_paths(std::string_view base_dir) {
    if (!path.empty()) path = relative_to(path, base_dir);
    for (auto& p : more_paths) p = relative_to(p, base_dir);
    for (auto& c : components) c.workload.resolve_paths(base_dir);
}

/// Samples a synthetic workload into `out` (cleared first; no allocation when its capacity
/// suffices). Jobs are numbered 0..n-1 in submit order. Same seed, same jobs.
inline void generate_synthetic(const synthetic_workload& w, const ModelZoo& zoo, std::size_t num_gpus,
                               std::uint64_t seed, std::vector<TrainingJob>& out) {
    detail::rng r(detail::mix_seed(seed, 0x776f726b6c6f6164ULL));
    out.clear();
    // this episode's load and GPU-count weights: drawn from their ranges (a stream of their own, so
    // that a workload without ranges draws exactly what it always did)
    double load = w.load;
    constexpr std::size_t max_ranged = 64;
    std::array<double, max_ranged> drawn{};
    const bool ranged = !w.gpu_counts_max.empty() && w.gpu_counts.size() <= max_ranged;
    if (w.load_max > 0 || ranged) {
        detail::rng d(detail::mix_seed(seed, 0x72616e676573ULL));  // "ranges"
        if (w.load_max > 0) load = d.uniform(w.load, w.load_max);
        if (ranged)
            for (std::size_t c = 0; c < w.gpu_counts.size(); ++c)
                drawn[c] = d.uniform(w.gpu_counts[c].second, std::max(w.gpu_counts[c].second, w.gpu_counts_max[c]));
    }
    auto weight = [&](std::size_t c) { return ranged ? drawn[c] : w.gpu_counts[c].second; };
    double total_p = 0;
    for (std::size_t c = 0; c < w.gpu_counts.size(); ++c) total_p += weight(c);
    double total_m = 0;
    for (auto& [name, p] : w.models) total_m += p;
    const double lmin = std::log(w.duration_min), lmax = std::log(w.duration_max);
    // The models measured at >= k GPUs, per GPU count, listed once (on the stack: an autoreset
    // allocates nothing) instead of scanning the zoo twice per job; the draws are the same.
    constexpr std::size_t max_counts = 16, max_models = 64;
    const bool listed = w.models.empty() && w.gpu_counts.size() <= max_counts && zoo.size() <= max_models;
    std::array<std::array<model_id, max_models>, max_counts> eligible_of;  // filled below when listed
    std::array<std::uint32_t, max_counts> num_eligible{};
    if (listed)
        for (std::size_t c = 0; c < w.gpu_counts.size(); ++c)
            for (std::size_t z = 0; z < zoo.size(); ++z)
                if (zoo[model_id(z)].max_measured_gpus() >= w.gpu_counts[c].first)
                    eligible_of[c][num_eligible[c]++] = model_id(z);
    double gpu_seconds = 0;
    for (std::size_t i = 0; i < w.num_jobs; ++i) {
        // GPU count
        double u = r.uniform() * total_p;
        std::uint32_t k = w.gpu_counts.back().first;
        std::size_t kc = w.gpu_counts.size() - 1;
        for (std::size_t c = 0; c < w.gpu_counts.size(); ++c) {
            const auto p = weight(c);
            if (u < p) {
                k = w.gpu_counts[c].first;
                kc = c;
                break;
            }
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
        } else if (listed) {
            const auto n = num_eligible[kc];
            m = n == 0 ? static_cast<model_id>(r.below(zoo.size())) : eligible_of[kc][r.below(n)];
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
    const double rate = load * double(num_gpus) / mean;  // jobs per second
    double t = 0;
    for (std::size_t i = 0; i < out.size(); ++i) {
        if (i > 0) t += r.exponential(rate);
        out[i].submit_time = t;
    }
}

namespace detail {
/// Draws a model: weighted by name, or uniform over zoo models measured at >= k GPUs (all if none).
[[nodiscard]] inline model_id draw_model(rng& r, const ModelZoo& zoo, std::uint32_t k,
                                         const std::vector<std::pair<std::string, double>>& weights) {
    if (!weights.empty()) {
        double total = 0;
        for (auto& [name, p] : weights) total += p;
        double v = r.uniform() * total;
        for (auto& [name, p] : weights) {
            if (v < p) return zoo.find(name);
            v -= p;
        }
        return zoo.find(weights.back().first);
    }
    return draw_model_measured_at(zoo, k, [&r](std::uint64_t n) { return r.below(n); });
}
/// Uniform integer in [lo, hi) with the reference's guards (lo >= 1; hi = lo + 1 when empty).
[[nodiscard]] inline std::uint32_t band_draw(rng& r, long lo, long hi) {
    if (lo >= hi) hi = lo + 1;
    lo = std::max(1L, lo);
    if (hi <= lo) hi = lo + 1;
    return static_cast<std::uint32_t>(lo + long(r.below(std::uint64_t(hi - lo))));
}
}  // namespace detail

/// Samples Proximity-DRL's workload into `out` (cleared first). Jobs are numbered in submit order;
/// a job's work is length x time_step seconds at its model's consolidated throughput. Same seed,
/// same jobs.
inline void generate_proximity_drl(const proximity_drl_workload& w, const ModelZoo& zoo, std::uint64_t seed,
                                   std::vector<TrainingJob>& out) {
    detail::rng r(detail::mix_seed(seed, 0x70726f78696d6974ULL));
    out.clear();
    const std::size_t n = w.num_jobs;
    const std::size_t counts[4] = {n * 5 / 10, n * 1 / 10, n * 2 / 10, n - n * 5 / 10 - n * 1 / 10 - n * 2 / 10};
    const double len_cut[4] = {0.3, 0.4, 0.8, 1.0}, gpu_cut[4] = {0.2, 0.3, 0.6, 1.0};
    const long L = long(w.max_length) + 1, Gm = long(w.max_request) + 1;  // exclusive upper bounds
    auto bands = [](const double* cut, long up) {
        std::array<std::pair<long, long>, 4> b{};
        b[0] = {1, std::max(2L, long(std::ceil(cut[0] * double(up))))};
        b[1] = {std::max(2L, long(cut[0] * double(up))), long(cut[1] * double(up))};
        b[2] = {long(cut[1] * double(up)), long(cut[2] * double(up))};
        b[3] = {long(cut[2] * double(up)), up};
        return b;
    };
    const auto lb = bands(len_cut, L), gb = bands(gpu_cut, Gm);
    std::vector<std::uint32_t> len, gpus;
    for (int c = 0; c < 4; ++c)
        for (std::size_t i = 0; i < counts[c]; ++i) len.push_back(detail::band_draw(r, lb[c].first, lb[c].second));
    for (int c = 0; c < 4; ++c)
        for (std::size_t i = 0; i < counts[c]; ++i) gpus.push_back(detail::band_draw(r, gb[c].first, gb[c].second));
    auto shuffle = [&r](std::vector<std::uint32_t>& v) {
        for (std::size_t i = v.size(); i > 1; --i) std::swap(v[i - 1], v[r.below(i)]);
    };
    shuffle(len);
    shuffle(gpus);
    double t = 0;
    for (std::size_t i = 0; i < n; ++i) {
        TrainingJob j;
        j.id = static_cast<job_id>(i);
        j.num_gpus = std::min(gpus[i], w.max_request);
        j.model = detail::draw_model(r, zoo, j.num_gpus, w.models);
        j.work = double(len[i]) * w.time_step * zoo[j.model].at(j.num_gpus).consolidated;
        if (w.arrival_rate > 0 && i > 0) t += r.exponential(w.arrival_rate);
        j.submit_time = t;
        out.push_back(j);
    }
}

}  // namespace gpuplace
