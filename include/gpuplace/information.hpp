#pragma once
/// \file information.hpp
/// What the scheduler knows and may do (docs/information.md): whether it sees each job's true
/// duration (durations: oracle), none (hidden: only model, GPU count, submit time, attained
/// service and preemptions) or an estimate (predicted); and whether it may preempt running jobs,
/// at what cost, under which preemptive discipline: LAS, Tiresias' 2D-LAS, the Gittins index or
/// SRTF. The Gittins index table is computed here from a sample of job sizes.

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "detail/enum_names.hpp"
#include "error.hpp"

namespace gpuplace {

/// What the scheduler knows of a job's duration (scenario key durations.mode).
enum class duration_info : std::uint8_t {
    oracle,     ///< the true ideal duration (and remaining time) of every job
    hidden,     ///< none: observation, queue orders and heuristics see no duration or remaining time
    predicted,  ///< an estimate (durations.error): log-normal error around the truth, or the model's mean
};

template <>
struct detail::enum_names<duration_info> {
    static constexpr std::array<std::pair<duration_info, std::string_view>, 3> values{
        {{duration_info::oracle, "oracle"}, {duration_info::hidden, "hidden"}, {duration_info::predicted, "predicted"}}};
};
[[nodiscard]] constexpr std::string_view to_string(duration_info d) noexcept { return detail::enum_name(d); }
/// The duration information of a name ("oracle", "hidden", "predicted"); ConfigError naming
/// `path` otherwise.
[[nodiscard]] inline duration_info parse_duration_info(std::string_view name, std::string_view path = "/durations/mode") {
    if (const auto d = detail::enum_from_name<duration_info>(name)) return *d;
    throw ConfigError("config " + std::string(path) + ": unknown durations mode \"" + std::string(name) + "\" (allowed: " +
                      detail::enum_name_list<duration_info>() + ")");
}

/// How a predicted duration is made.
enum class duration_error : std::uint8_t {
    lognormal,  ///< truth x exp(sigma z), z standard normal per job (median-unbiased)
    model_mean, ///< the mean ideal duration of the job's model (at its GPU count) over a sample of episodes
};

template <>
struct detail::enum_names<duration_error> {
    static constexpr std::array<std::pair<duration_error, std::string_view>, 2> values{
        {{duration_error::lognormal, "lognormal"}, {duration_error::model_mean, "model_mean"}}};
};
[[nodiscard]] constexpr std::string_view to_string(duration_error d) noexcept { return detail::enum_name(d); }

/// A scenario's durations (key "durations").
struct durations_config {
    duration_info mode = duration_info::oracle;
    duration_error error = duration_error::lognormal;
    double sigma = 0.5;  ///< lognormal: the standard deviation of log(estimate / truth)
    /// Where the duration distribution comes from (model_mean estimates, the Gittins index): trace
    /// files (e.g. the training files); empty: episodes of the scenario's own workload.
    std::vector<std::string> sample_files;
    friend bool operator==(const durations_config&, const durations_config&) = default;
};

/// A scenario's preemption (key "preemption"): off by default. On, a discipline of
/// env.queue_policy (las, 2d_las, gittins, srtf) chooses at every decision point which jobs run:
/// all active jobs in its priority order, each admitted while its GPUs fit, the running jobs left
/// out suspended.
struct preemption_config {
    bool enabled = false;
    /// Seconds a resumed job holds its GPUs before it makes progress again (checkpoint load and
    /// warm-up; docs/information.md gives the measurements behind the default).
    double restart_overhead = 30.0;
    double checkpoint_interval = 0;  ///< seconds of progress between checkpoints (0: checkpoint at suspension)
    double round = 0;                ///< > 0: a decision point every this many seconds too (Gavel's lease; e.g. 360)
    /// 2D-LAS: queue thresholds in attained GPU-seconds (Tiresias: 3250 and 7200, three queues).
    std::vector<double> thresholds = {3250.0, 7200.0};
    /// 2D-LAS: a job waiting longer than this x its service since its last promotion returns to the
    /// first queue (Tiresias' STARVELIMIT; 0: never).
    double starvation = 0;
    /// Gittins: the service quantum of the index (GPU-seconds; Tiresias: 3250).
    double gittins_quantum = 3250.0;
    friend bool operator==(const preemption_config&, const preemption_config&) = default;
};

/// The Gittins index of a job that has attained `a` GPU-seconds of service, for job sizes
/// distributed as a sample: P(S <= a + q | S > a) / E[min(S, a + q) - a | S > a] with quantum q
/// (Gittins, "Multi-armed bandit allocation indices", 1989; as Tiresias uses it, NSDI 2019).
/// Precomputed at the sample's points: a job gets the index at the largest sample point at or
/// below its attained service (0 at or past the largest point). Higher runs first.
class gittins_table {
public:
    gittins_table() = default;
    /// O(n log n) for n sizes (prefix sums; index_at() is the O(n) definition).
    gittins_table(std::vector<double> sizes, double quantum) : q_(quantum) {
        if (!(quantum > 0)) throw ConfigError("preemption: gittins_quantum must be > 0 (got " + std::to_string(quantum) + ")");
        std::sort(sizes.begin(), sizes.end());
        s_ = std::move(sizes);
        const std::size_t n = s_.size();
        std::vector<double> prefix(n + 1, 0.0);
        for (std::size_t i = 0; i < n; ++i) prefix[i + 1] = prefix[i] + s_[i];
        idx_.resize(n);
        for (std::size_t i = 0; i < n; ++i) {
            const double a = i == 0 ? 0.0 : s_[i - 1];
            // the points above a start at i (sorted; equal points share i's anchor, as index_at's a)
            const auto lo = std::size_t(std::upper_bound(s_.begin(), s_.end(), a) - s_.begin());
            const auto hi = std::size_t(std::upper_bound(s_.begin(), s_.end(), a + q_) - s_.begin());
            const double above = double(n - lo), done = double(hi - lo);
            const double e = (prefix[hi] - prefix[lo]) - a * done + double(n - hi) * q_;
            idx_[i] = above == 0 || e <= 0 ? 0.0 : (done / above) / (e / above);
        }
    }
    [[nodiscard]] bool empty() const noexcept { return s_.empty(); }
    [[nodiscard]] double index(double attained) const noexcept {
        const auto it = std::upper_bound(s_.begin(), s_.end(), attained);
        return it == s_.end() ? 0.0 : idx_[std::size_t(it - s_.begin())];
    }
    /// The index computed directly (for tests): O(n).
    [[nodiscard]] double index_at(double a) const noexcept {
        std::size_t above = 0, done = 0;
        double e = 0;
        for (double s : s_) {
            if (s <= a) continue;
            ++above;
            if (s <= a + q_) ++done;
            e += std::min(s, a + q_) - a;
        }
        return above == 0 || e <= 0 ? 0.0 : (double(done) / double(above)) / (e / double(above));
    }

private:
    double q_ = 1;
    std::vector<double> s_, idx_;
};

}  // namespace gpuplace
