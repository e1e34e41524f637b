#pragma once
/// \file workload.hpp
/// Workloads: the jobs an episode submits. A seeded synthetic generator (Poisson arrivals at a
/// target load, GPU-count and duration distributions, a model mix), Proximity-DRL's workload,
/// trace replay (trace.hpp) and fixed job lists. Same seed, same workload.

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

#include "compiled.hpp"
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

/// Makes each episode's jobs from a workload_config. Traces are read once, at construction, and
/// shared by copies; reset-time generation is deterministic in the seed.
class workload_source {
public:
    workload_source() = default;
    /// Loads the traces of a "trace" workload (and of a mixture's): TraceError / ConfigError on bad
    /// input; a TraceError too when no job is left to replay, saying what removed the rows.
    /// `fields`: the scenario's declared job fields, read from traces and job lists; their
    /// categories go into `dict` (shared with a mixture's components; made when null).
    workload_source(const workload_config& c, const ModelZoo& zoo, std::size_t cluster_gpus, std::vector<job_field> fields = {},
                    std::shared_ptr<field_dictionary> dict = nullptr)
        : cfg_(c), fields_(std::move(fields)) {
        kind_ = resolve_kind(c);
        dict_ = dict ? std::move(dict) : std::make_shared<field_dictionary>(fields_);
        resolve_job_list(zoo);
        if (kind_ == workload_kind_id::mixture) {
            for (const auto& comp : c.components) parts_.emplace_back(comp.workload, zoo, cluster_gpus, fields_, dict_);
            return;
        }
        if (kind_ != workload_kind_id::trace) return;
        auto opts = c.trace_opts;
        opts.fields = fields_;
        if (c.target_load_max > 0) opts.target_load = 0;  // compressed per episode instead
        const auto reader = c.format == trace_format::registered ? require_trace_format(c.format_name) : nullptr;  // looked up once
        if (!c.merge_as.empty()) opts.fields[merge_field()].default_value = std::nan("");  // set from the file, not read from it
        if (!c.merge_as.empty() && opts.target_load > 0) {  // the merged trace is compressed, per episode
            cfg_.target_load_max = std::max(cfg_.target_load_max, opts.target_load);
            cfg_.trace_opts.target_load = opts.target_load;
            opts.target_load = 0;
        }
        for (const auto& f : c.trace_paths()) {
            auto t = std::make_shared<const trace>(reader ? load_trace(reader->reader, f, zoo, opts, cluster_gpus)
                                                          : load_trace(c.format, f, zoo, opts, cluster_gpus));
            if (t->jobs.empty()) throw TraceError(t->empty_reason());
            raw_load_.push_back(t->offered_load(zoo, cluster_gpus));
            if (!fields_.empty()) trace_fields_.push_back(intern_trace_fields(*t));
            traces_.push_back(std::move(t));
        }
        if (!c.merge_as.empty()) merge_traces(zoo, cluster_gpus);
    }

    /// The loaded trace of a "trace" workload of one file, else nullptr.
    [[nodiscard]] const trace* loaded() const noexcept { return traces_.size() == 1 ? traces_[0].get() : nullptr; }

    /// Why episodes are shorter than asked, or "": per trace file with fewer jobs than episode_jobs,
    /// "the trace F has N jobs (after the trace options), fewer than the M jobs per episode asked
    /// (episode_jobs): each of its episodes replays all N" (a mixture's components too).
    [[nodiscard]] std::string short_episodes() const {
        std::string out;
        for (const auto& t : traces_)
            if (cfg_.episode_jobs > t->jobs.size())
                out += (out.empty() ? "" : "; ") + std::string("the trace ") + t->source + " has " + std::to_string(t->jobs.size()) +
                       " jobs (after the trace options), fewer than the " + std::to_string(cfg_.episode_jobs) +
                       " jobs per episode asked (episode_jobs): each of its episodes replays all " + std::to_string(t->jobs.size());
        for (const auto& p : parts_)
            if (auto s = p.short_episodes(); !s.empty()) out += (out.empty() ? "" : "; ") + s;
        return out;
    }

    /// The declared job fields, and the categories of those that are categories.
    [[nodiscard]] const std::vector<job_field>& fields() const noexcept { return fields_; }
    [[nodiscard]] const field_dictionary& dictionary() const noexcept { return *dict_; }

    /// generate(), and what the episode's jobs carry into `extras` (fields, models assigned).
    GPUPLACE_INLINE void generate(const ModelZoo& zoo, std::size_t cluster_gpus, std::uint64_t seed, std::vector<TrainingJob>& out,
                                  episode_extras& extras) const;

    /// Fills `out` with the jobs of the episode of `seed`, sorted by submit time.
    void generate(const ModelZoo& zoo, std::size_t cluster_gpus, std::uint64_t seed, std::vector<TrainingJob>& out) const {
        if (kind_ == workload_kind_id::synthetic) {
            generate_synthetic(cfg_.synthetic, zoo, cluster_gpus, seed, out);
        } else if (kind_ == workload_kind_id::proximity_drl) {
            generate_proximity_drl(cfg_.proximity_drl, zoo, seed, out);
        } else if (kind_ == workload_kind_id::trace) {
            const std::size_t f = trace_file(seed);
            const auto& v = traces_[f]->jobs;
            std::size_t first = 0, n = v.size();
            if (cfg_.episode_jobs > 0 && cfg_.episode_jobs < v.size()) {
                detail::rng r(detail::mix_seed(seed, 0x657069736f6465ULL));
                n = cfg_.episode_jobs;
                first = r.below(v.size() - n + 1);
            }
            out.assign(v.begin() + std::ptrdiff_t(first), v.begin() + std::ptrdiff_t(first + n));
            double scale = 1.0;
            if (cfg_.target_load_max > 0 && raw_load_[f] > 0) {  // the file compressed to a load drawn for this episode
                detail::rng r(detail::mix_seed(seed, 0x6c6f6164ULL));  // "load"
                scale = raw_load_[f] / r.uniform(cfg_.trace_opts.target_load, cfg_.target_load_max);
            }
            const double t0 = out.empty() ? 0.0 : out.front().submit_time;
            for (std::size_t i = 0; i < out.size(); ++i) {
                out[i].id = static_cast<job_id>(i);
                out[i].submit_time -= t0;
                if (scale != 1.0) out[i].submit_time *= scale;
            }
        } else if (kind_ == workload_kind_id::mixture) {
            parts_[pick_component(seed)].generate(zoo, cluster_gpus, seed, out);
        } else if (kind_ == workload_kind_id::registered) {
            generate_registered(zoo, cluster_gpus, seed, out);
        } else {
            out.assign(cfg_.jobs.begin(), cfg_.jobs.end());
            std::stable_sort(out.begin(), out.end(), detail::by_submit_time{});
        }
    }

    /// An upper bound on the GPUs all jobs of one episode request on a cluster of G GPUs (0 for a
    /// fixed job list, whose first episode sizes the buffers for all).
    [[nodiscard]] std::size_t max_episode_gpus(std::size_t G) const {
        if (kind_ == workload_kind_id::registered) return cfg_.generator->max_episode_gpus(G);
        if (kind_ == workload_kind_id::synthetic) {
            std::size_t k = 0;
            for (std::size_t c = 0; c < cfg_.synthetic.gpu_counts.size(); ++c) {
                const double hi = c < cfg_.synthetic.gpu_counts_max.size() ? cfg_.synthetic.gpu_counts_max[c] : 0.0;
                if (cfg_.synthetic.gpu_counts[c].second > 0 || hi > 0)
                    k = std::max<std::size_t>(k, cfg_.synthetic.gpu_counts[c].first);
            }
            return cfg_.synthetic.num_jobs * std::min(k, G);
        }
        if (kind_ == workload_kind_id::proximity_drl) return cfg_.proximity_drl.num_jobs * std::min<std::size_t>(cfg_.proximity_drl.max_request, G);
        std::size_t best = 0;
        for (const auto& t : traces_) {
            std::size_t total = 0;
            for (const auto& j : t->jobs) total += std::min<std::size_t>(j.num_gpus, G);
            best = std::max(best, total);
        }
        for (const auto& p : parts_) best = std::max(best, p.max_episode_gpus(G));
        return best;
    }

    /// An upper bound on the distinct (model, GPU share, memory) kinds of job in one episode, for
    /// a zoo of `zoo_models` models: the zoo's models for generated workloads, the distinct
    /// (model, share) pairs of a trace, the jobs of a fixed list.
    [[nodiscard]] std::size_t max_job_kinds(std::size_t zoo_models) const {
        std::size_t n = zoo_models;
        for (const auto& t : traces_) {
            std::vector<std::pair<model_id, double>> keys;
            keys.reserve(t->jobs.size());
            for (const auto& j : t->jobs) keys.emplace_back(j.model, double(j.gpu_fraction));
            std::sort(keys.begin(), keys.end());
            n = std::max<std::size_t>(n, std::size_t(std::unique(keys.begin(), keys.end()) - keys.begin()));
        }
        if (kind_ == workload_kind_id::jobs) n = std::max(n, cfg_.jobs.size());
        for (const auto& p : parts_) n = std::max(n, p.max_job_kinds(zoo_models));
        return n;
    }

    /// A job that can never run on G GPUs, or a model the zoo does not have, is a ConfigError naming
    /// its JSON path (checked when the env is built, not at the first reset()).
    void validate(const ModelZoo& zoo, std::size_t G, const std::string& path = "config /workload") const {
        if (kind_ == workload_kind_id::jobs)
            for (std::size_t i = 0; i < cfg_.jobs.size(); ++i) {
                const auto p = path + "/jobs/" + std::to_string(i);
                if (cfg_.jobs[i].num_gpus > G)
                    throw ConfigError(p + "/num_gpus: job " + std::to_string(i) + " requests " + std::to_string(cfg_.jobs[i].num_gpus) +
                                      " GPUs, which can never fit in a cluster of " + std::to_string(G) + " GPUs");
                if (cfg_.jobs[i].model >= zoo.size())
                    throw ConfigError(p + "/model: model id " + std::to_string(cfg_.jobs[i].model) + " is not in the zoo (" +
                                      std::to_string(zoo.size()) + " models)");
            }
        if (kind_ == workload_kind_id::synthetic) {
            for (std::size_t c = 0; c < cfg_.synthetic.gpu_counts.size(); ++c) {
                const auto [k, p] = cfg_.synthetic.gpu_counts[c];
                const double hi = c < cfg_.synthetic.gpu_counts_max.size() ? cfg_.synthetic.gpu_counts_max[c] : 0.0;
                if ((p > 0 || hi > 0) && k > G)
                    throw ConfigError(path + "/gpu_counts/" + std::to_string(k) + ": jobs of " + std::to_string(k) +
                                      " GPUs can never fit in a cluster of " + std::to_string(G) + " GPUs");
            }
            for (const auto& m : cfg_.synthetic.models) {
                try {
                    (void)zoo.find(m.first);
                } catch (const ConfigError& e) {
                    throw ConfigError(path + "/models/" + m.first + ": " + e.what());
                }
            }
        }
        for (std::size_t i = 0; i < parts_.size(); ++i) parts_[i].validate(zoo, G, path + "/components/" + std::to_string(i) + "/workload");
    }

private:
    /// The kind of `c`: a built-in one by name, or one of one's own (its generator); ConfigError
    /// for a name that is neither.
    [[nodiscard]] GPUPLACE_INLINE static workload_kind_id resolve_kind(const workload_config& c);
    /// A kind of one's own: its generator's jobs, sorted and numbered, each checked.
    GPUPLACE_INLINE void generate_registered(const ModelZoo& zoo, std::size_t cluster_gpus, std::uint64_t seed,
                                             std::vector<TrainingJob>& out) const;
    /// A mixture's component for the episode of `seed`, drawn by weight.
    [[nodiscard]] std::size_t pick_component(std::uint64_t seed) const noexcept {
        double total = 0;
        for (const auto& c : cfg_.components) total += c.weight;
        detail::rng r(detail::mix_seed(seed, 0x6d6978747572ULL));  // "mixtur"
        double u = r.uniform() * total;
        for (std::size_t i = 0; i < cfg_.components.size(); ++i) {
            if (u < cfg_.components[i].weight) return i;
            u -= cfg_.components[i].weight;
        }
        return cfg_.components.size() - 1;
    }

    /// Kind "jobs": the models given by name, and the fields' table in list order (job_table_).
    GPUPLACE_INLINE void resolve_job_list(const ModelZoo& zoo);
    /// A trace's fields with its categories' indices into the dictionary's.
    [[nodiscard]] GPUPLACE_INLINE std::vector<double> intern_trace_fields(const trace& t);
    /// merge_as: its declared category field (ConfigError naming it otherwise).
    [[nodiscard]] GPUPLACE_INLINE std::size_t merge_field() const;
    /// merge_as: the loaded files merged into one trace, the field merge_as set to each job's file.
    GPUPLACE_INLINE void merge_traces(const ModelZoo& zoo, std::size_t cluster_gpus);
    /// The trace file an episode of `seed` replays.
    [[nodiscard]] std::size_t trace_file(std::uint64_t seed) const noexcept {
        if (traces_.size() <= 1) return 0;
        detail::rng r(detail::mix_seed(seed, 0x7472616365ULL));  // "trace": which file
        return r.below(traces_.size());
    }

    workload_config cfg_;
    workload_kind_id kind_ = workload_kind_id::synthetic;
    std::vector<job_field> fields_;
    std::shared_ptr<field_dictionary> dict_;
    std::vector<double> job_table_;                     ///< kind "jobs": jobs x fields, in list order
    std::vector<std::vector<double>> trace_fields_;     ///< kind "trace": per file, its jobs x fields (dictionary indices)
    std::vector<std::shared_ptr<const trace>> traces_;  ///< kind "trace": one per file
    std::vector<double> raw_load_;                      ///< per file: its offered load as loaded
    std::vector<workload_source> parts_;                ///< kind "mixture": one per component
};

}  // namespace gpuplace

#ifndef GPUPLACE_COMPILED
#include "impl/workload_inl.hpp"  // workload_source's job fields and extras (compiled once in gpuplace::compiled otherwise)
#endif
